//! The child side of `syncbench`: one MPI job (one kind of runtime, one
//! rank count, T tasks per rank) measured inside `mpiexec`. Rank 0 prints
//! its rows as JSON lines; the driver collects them.
//!
//! EPCC method: time a loop of `iters` synchronizations, subtract the same
//! loop without them (the loop overhead), divide by `iters`. Each
//! repetition starts with an `MPI_Barrier` of all ranks and a first
//! synchronization as a start gate; the time is task 0 of rank 0's. One
//! warm-up repetition is dropped; the median of `reps` is reported.

use std::hint::black_box;
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use benches::error::ChildError;
use benches::shared_comm::SharedComm;
use benches::stats::median;
use hc_mpi::Hcmpi;
use hcmpi_phasers::{spawn_phased, AccumOp, BarrierMode, Mode, Phaser, Shape};
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::CommunicatorCollectives;

use crate::{Bench, Kind, Row};

/// Iterations and repetitions.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub iters: usize,
    pub reps: usize,
}

/// The loop overhead of `iters` iterations (the EPCC reference loop).
fn reference(iters: usize) -> Duration {
    let start = Instant::now();
    for i in 0..iters {
        black_box(i);
    }
    start.elapsed()
}

fn per_op_us(elapsed: Duration, iters: usize) -> f64 {
    let reference = reference(iters);
    elapsed.saturating_sub(reference).as_secs_f64() * 1e6 / iters as f64
}

pub fn run(kind: Kind, tasks: usize, plan: Plan) -> Result<(), ChildError> {
    match kind {
        Kind::Hcmpi => hcmpi(tasks, plan),
        Kind::Hybrid => hybrid(tasks, plan),
        Kind::MpiEverywhere => everywhere(plan),
    }
}

fn emit(rows: &[Row]) {
    for row in rows {
        println!("{}", row.to_json());
    }
}

/// Median over `reps` timed repetitions after one warm-up.
fn repeat(plan: Plan, mut once: impl FnMut() -> Duration) -> f64 {
    let mut samples = Vec::with_capacity(plan.reps);
    for rep in 0..=plan.reps {
        let elapsed = once();
        if rep > 0 {
            samples.push(per_op_us(elapsed, plan.iters));
        }
    }
    median(&samples)
}

// ---------------------------------------------------------------------------
// hcmpi: T phased tasks on an hcmpi-phaser / hcmpi-accum, on T workers; the
// tasks are future tasks that await `next`, the engine placement is the
// default (auto: dedicated only with a spare core per rank)
// ---------------------------------------------------------------------------

fn hcmpi(tasks: usize, plan: Plan) -> Result<(), ChildError> {
    let hc = Hcmpi::builder().workers(tasks).build()?;
    let world = hc.world().clone();
    let (rank, size) = (hc.rank(), hc.size() as usize);
    let tree = Shape::Tree {
        leaves: tasks.div_ceil(2),
        degree: 2,
    };
    let mut rows = Vec::new();
    let barriers = [
        ("hcmpi-strict", BarrierMode::Strict, tree),
        ("hcmpi-fuzzy", BarrierMode::Fuzzy, tree),
        ("hcmpi-strict-flat", BarrierMode::Strict, Shape::Flat),
        ("hcmpi-fuzzy-flat", BarrierMode::Fuzzy, Shape::Flat),
    ];
    for (variant, mode, shape) in barriers {
        let value = repeat(plan, || {
            world.barrier().expect("align ranks");
            let elapsed = Mutex::new(Duration::ZERO);
            hc.finish(|s| {
                let ph = Phaser::builder()
                    .shape(shape)
                    .build_hcmpi(s, &world, mode, Mode::SignalWait)
                    .expect("hcmpi phaser");
                for t in 0..tasks {
                    let elapsed = &elapsed;
                    let reg = ph.register(Mode::SignalWait).expect("register");
                    spawn_phased(s, reg, move |_, mut reg| async move {
                        reg.next().await.expect("start gate");
                        let start = Instant::now();
                        for _ in 0..plan.iters {
                            reg.next().await.expect("next");
                        }
                        if t == 0 {
                            *elapsed.lock().unwrap() = start.elapsed();
                        }
                    });
                }
                // The creator's registration leaves as the body returns.
            });
            elapsed.into_inner().unwrap()
        });
        rows.push(Row::new(Bench::Barrier, variant, size, tasks, value));
    }
    let reductions = [("hcmpi-strict", tree), ("hcmpi-strict-flat", Shape::Flat)];
    for (variant, shape) in reductions {
        let value = repeat(plan, || {
            world.barrier().expect("align ranks");
            let elapsed = Mutex::new(Duration::ZERO);
            hc.finish(|s| {
                let acc = Phaser::builder()
                    .shape(shape)
                    .build_hcmpi_accum::<f64>(s, &world, AccumOp::Sum, Mode::SignalWait)
                    .expect("hcmpi accumulator");
                for t in 0..tasks {
                    let elapsed = &elapsed;
                    let reg = acc.register(Mode::SignalWait).expect("register");
                    spawn_phased(s, reg, move |_, mut reg| async move {
                        reg.accum_next(1.0).await.expect("start gate");
                        let start = Instant::now();
                        for i in 0..plan.iters {
                            reg.accum_next(i as f64).await.expect("accum_next");
                            black_box(reg.accum_get().expect("accum_get"));
                        }
                        if t == 0 {
                            *elapsed.lock().unwrap() = start.elapsed();
                        }
                    });
                }
            });
            elapsed.into_inner().unwrap()
        });
        rows.push(Row::new(Bench::Reduction, variant, size, tasks, value));
    }
    if rank == 0 {
        emit(&rows);
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// hybrid: MPI_THREAD_MULTIPLE, a rayon pool of T threads, a thread barrier,
// MPI by one thread
// ---------------------------------------------------------------------------

fn hybrid(tasks: usize, plan: Plan) -> Result<(), ChildError> {
    let (universe, provided) = mpi::initialize_with_threading(mpi::Threading::Multiple)
        .ok_or(ChildError::MpiAlreadyInitialized)?;
    let world = universe.world();
    let shared = SharedComm::multiple(&world, provided)?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(tasks).build()?;
    let (rank, size) = (world.rank(), world.size() as usize);
    let mut rows = Vec::new();
    for (variant, strict) in [("hybrid", true), ("hybrid-fuzzy", false)] {
        let value = repeat(plan, || {
            world.barrier();
            hybrid_loop(
                &pool,
                &shared,
                tasks,
                plan.iters,
                |world, threads, leader| {
                    // Strict: a thread barrier, MPI_Barrier by one thread, a
                    // thread barrier; fuzzy: without the first one.
                    if strict {
                        threads.wait();
                    }
                    if leader {
                        world.barrier();
                    }
                    threads.wait();
                },
            )
        });
        rows.push(Row::new(Bench::Barrier, variant, size, tasks, value));
    }
    let slots: Vec<Mutex<f64>> = (0..tasks).map(|_| Mutex::new(0.0)).collect();
    let result = Mutex::new(0.0f64);
    let value = repeat(plan, || {
        world.barrier();
        let iteration = std::sync::atomic::AtomicUsize::new(0);
        hybrid_loop(
            &pool,
            &shared,
            tasks,
            plan.iters,
            |world, threads, leader| {
                let index = rayon::current_thread_index().unwrap_or(0);
                let i = iteration.load(std::sync::atomic::Ordering::Relaxed);
                *slots[index].lock().unwrap() = i as f64;
                threads.wait();
                if leader {
                    // The thread reduction, then MPI_Allreduce by one thread.
                    let local: f64 = slots.iter().map(|s| *s.lock().unwrap()).sum();
                    let mut global = 0.0f64;
                    world.all_reduce_into(&local, &mut global, SystemOperation::sum());
                    *result.lock().unwrap() = global;
                    iteration.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                threads.wait();
                black_box(*result.lock().unwrap());
            },
        )
    });
    rows.push(Row::new(Bench::Reduction, "hybrid", size, tasks, value));
    if rank == 0 {
        emit(&rows);
    }
    Ok(())
}

/// Runs `sync` `iters` times on each of the pool's T threads (after a
/// start gate) and returns thread 0's time.
fn hybrid_loop(
    pool: &rayon::ThreadPool,
    world: &SharedComm<'_>,
    tasks: usize,
    iters: usize,
    sync: impl Fn(&SimpleCommunicator, &Barrier, bool) + Sync,
) -> Duration {
    let threads = Barrier::new(tasks);
    let elapsed = Mutex::new(Duration::ZERO);
    pool.broadcast(|ctx| {
        let leader = ctx.index() == 0;
        threads.wait();
        let start = Instant::now();
        for _ in 0..iters {
            sync(world.get(), &threads, leader);
        }
        if leader {
            *elapsed.lock().unwrap() = start.elapsed();
        }
    });
    elapsed.into_inner().unwrap()
}

// ---------------------------------------------------------------------------
// MPI everywhere: one rank per task, MPI_THREAD_SINGLE
// ---------------------------------------------------------------------------

fn everywhere(plan: Plan) -> Result<(), ChildError> {
    let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Single)
        .ok_or(ChildError::MpiAlreadyInitialized)?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size() as usize);
    let barrier = repeat(plan, || {
        world.barrier();
        world.barrier();
        let start = Instant::now();
        for _ in 0..plan.iters {
            world.barrier();
        }
        start.elapsed()
    });
    let reduction = repeat(plan, || {
        world.barrier();
        world.barrier();
        let start = Instant::now();
        for i in 0..plan.iters {
            let mut global = 0.0f64;
            world.all_reduce_into(&(i as f64), &mut global, SystemOperation::sum());
            black_box(global);
        }
        start.elapsed()
    });
    if rank == 0 {
        emit(&[
            Row::new(Bench::Barrier, "mpi-everywhere", size, 1, barrier),
            Row::new(Bench::Reduction, "mpi-everywhere", size, 1, reduction),
        ]);
    }
    Ok(())
}
