//! The child side of `threadbench`: one configuration (benchmark, variant,
//! thread count) measured inside `mpiexec -n 2`. Rank 0 prints the result
//! rows as JSON lines on stdout; the parent collects them.
//!
//! Every benchmark is written once, against [`Transport`], and run over three
//! transports:
//!
//! * `mpi-multiple`: rsmpi with `MPI_THREAD_MULTIPLE`, T `std::thread`s per
//!   rank, each calling blocking (or windowed immediate) MPI itself;
//! * `mpi-single`: rsmpi with `MPI_THREAD_SINGLE`, the main thread only;
//! * `hcmpi`, `hcmpi-dedicated`, `hcmpi-shared`: an [`Hcmpi`] with T
//!   computation workers and its engine in the variant's placement, T tasks
//!   in one finish, every MPI call made through the engine.
//!
//! Thread `t` of rank 0 talks only to thread `t` of rank 1 (data tag `t`,
//! acknowledgement tag `ACK_TAG + t`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use benches::cpu::cpu_percent_while_sleeping;
use benches::error::ChildError;
use benches::stats::median;

use benches::shared_comm::SharedComm;
use hc_mpi::{Comm, Hcmpi};
use mpi::topology::Communicator;
use mpi::traits::{CommunicatorCollectives, Destination, Source};

use crate::{Bench, Params, Row, Variant};

/// Tag offset of the per-window acknowledgements.
const ACK_TAG: i32 = 10_000;
/// Tag of the idle benchmark's report from rank 1.
const IDLE_TAG: i32 = 20_000;
/// Tag of the get benchmark's report from rank 1.
const GET_TAG: i32 = 20_001;

/// Point-to-point operations and thread control of one variant, as seen by
/// one rank. Buffers are moved in and handed back so that the same code fits
/// hc-mpi's owned-buffer API and rsmpi's borrowed one.
trait Transport: Sync {
    fn rank(&self) -> i32;
    fn barrier(&self);
    /// Runs `body(t)` for `t in 0..threads` concurrently and returns once all
    /// are done.
    fn parallel(&self, threads: usize, body: &(dyn Fn(usize) + Sync));
    /// Blocking send.
    fn send(&self, buf: Vec<u8>, peer: i32, tag: i32) -> Vec<u8>;
    /// Blocking receive of exactly `buf.len()` bytes.
    fn recv(&self, buf: Vec<u8>, peer: i32, tag: i32) -> Vec<u8>;
    /// Starts one send per buffer, then waits for all of them.
    fn send_window(&self, bufs: Vec<Vec<u8>>, peer: i32, tag: i32) -> Vec<Vec<u8>>;
    /// Starts one receive per buffer, then waits for all of them.
    fn recv_window(&self, bufs: Vec<Vec<u8>>, peer: i32, tag: i32) -> Vec<Vec<u8>>;
}

/// Raw rsmpi (`mpi-multiple` spawns T threads; `mpi-single` runs its one
/// thread on the main thread, which `MPI_THREAD_SINGLE` requires).
struct Raw<'a> {
    world: SharedComm<'a>,
    spawn_threads: bool,
}

impl Transport for Raw<'_> {
    fn rank(&self) -> i32 {
        self.world.get().rank()
    }

    fn barrier(&self) {
        self.world.get().barrier();
    }

    fn parallel(&self, threads: usize, body: &(dyn Fn(usize) + Sync)) {
        if !self.spawn_threads {
            assert_eq!(threads, 1, "mpi-single runs one thread");
            body(0);
            return;
        }
        // Start gate, as for hcmpi: no thread starts before all exist, so
        // short runs overlap instead of running one after the other.
        let gate = std::sync::Barrier::new(threads);
        std::thread::scope(|s| {
            for t in 0..threads {
                let gate = &gate;
                s.spawn(move || {
                    gate.wait();
                    body(t);
                });
            }
        });
    }

    fn send(&self, buf: Vec<u8>, peer: i32, tag: i32) -> Vec<u8> {
        self.world
            .get()
            .process_at_rank(peer)
            .send_with_tag(&buf[..], tag);
        buf
    }

    fn recv(&self, mut buf: Vec<u8>, peer: i32, tag: i32) -> Vec<u8> {
        self.world
            .get()
            .process_at_rank(peer)
            .receive_into_with_tag(&mut buf[..], tag);
        buf
    }

    fn send_window(&self, bufs: Vec<Vec<u8>>, peer: i32, tag: i32) -> Vec<Vec<u8>> {
        let dest = self.world.get().process_at_rank(peer);
        mpi::request::scope(|scope| {
            let requests: Vec<_> = bufs
                .iter()
                .map(|b| dest.immediate_send_with_tag(scope, &b[..], tag))
                .collect();
            for request in requests {
                request.wait();
            }
        });
        bufs
    }

    fn recv_window(&self, mut bufs: Vec<Vec<u8>>, peer: i32, tag: i32) -> Vec<Vec<u8>> {
        let source = self.world.get().process_at_rank(peer);
        mpi::request::scope(|scope| {
            let requests: Vec<_> = bufs
                .iter_mut()
                .map(|b| source.immediate_receive_into_with_tag(scope, &mut b[..], tag))
                .collect();
            for request in requests {
                request.wait();
            }
        });
        bufs
    }
}

/// hc-mpi: T tasks on T computation workers; MPI calls go through the
/// engine.
struct Hc<'a> {
    hc: &'a Hcmpi,
    world: Comm,
}

impl Transport for Hc<'_> {
    fn rank(&self) -> i32 {
        self.world.rank()
    }

    fn barrier(&self) {
        self.world.barrier().expect("hcmpi barrier");
    }

    fn parallel(&self, threads: usize, body: &(dyn Fn(usize) + Sync)) {
        // Start gate: a task spins (yielding) until all T tasks have started,
        // so each of the T workers holds exactly one of them. Without it, a
        // worker blocked in `Request::wait` could pick up a second ping-pong
        // task and nest it on its stack, serializing (or deadlocking) the
        // pairs.
        let started = AtomicUsize::new(0);
        self.hc.finish(|s| {
            for t in 0..threads {
                let started = &started;
                s.spawn(move |_| {
                    started.fetch_add(1, Ordering::SeqCst);
                    while started.load(Ordering::SeqCst) < threads {
                        std::thread::yield_now();
                    }
                    body(t);
                });
            }
        });
    }

    fn send(&self, buf: Vec<u8>, peer: i32, tag: i32) -> Vec<u8> {
        self.world.send(buf, peer, tag).expect("hcmpi send")
    }

    fn recv(&self, buf: Vec<u8>, peer: i32, tag: i32) -> Vec<u8> {
        let len = buf.len();
        let (buf, status) = self.world.recv(buf, peer, tag).expect("hcmpi recv");
        assert_eq!(status.count, len, "short message");
        buf
    }

    fn send_window(&self, bufs: Vec<Vec<u8>>, peer: i32, tag: i32) -> Vec<Vec<u8>> {
        let requests: Vec<_> = bufs
            .into_iter()
            .map(|b| self.world.isend(b, peer, tag).expect("hcmpi isend"))
            .collect();
        // `wait_all` is a wait on each request in turn; waiting on each
        // directly also hands the buffers back.
        requests
            .into_iter()
            .map(|r| r.wait().expect("hcmpi isend completion").0)
            .collect()
    }

    fn recv_window(&self, bufs: Vec<Vec<u8>>, peer: i32, tag: i32) -> Vec<Vec<u8>> {
        let requests: Vec<_> = bufs
            .into_iter()
            .map(|b| self.world.irecv(b, peer, tag).expect("hcmpi irecv"))
            .collect();
        requests
            .into_iter()
            .map(|r| r.wait().expect("hcmpi irecv completion").0)
            .collect()
    }
}

/// Runs one configuration and prints rank 0's rows.
pub fn run(
    variant: Variant,
    threads: usize,
    bench: Bench,
    params: &Params,
) -> Result<(), ChildError> {
    let rows = match variant {
        Variant::Hcmpi | Variant::HcmpiDedicated | Variant::HcmpiShared => {
            let placement = variant.placement().expect("an hcmpi variant");
            let hc = Hcmpi::builder()
                .workers(threads)
                .placement(placement)
                .build()?;
            check_size(hc.size())?;
            let transport = Hc {
                hc: &hc,
                world: hc.world().clone(),
            };
            let mut rows = if bench == Bench::Idle {
                idle(&transport, variant, threads, params)
            } else if bench == Bench::Get {
                dddf_get(&transport, variant, threads, params)?
            } else {
                measure(&transport, variant, threads, bench, params)
            };
            for row in &mut rows {
                row.placement = hc.placement().name().to_owned();
            }
            // Nothing may be in flight when the engine shuts down.
            transport.barrier();
            rows
        }
        Variant::MpiMultiple | Variant::MpiSingle => {
            let (level, spawn_threads) = if variant == Variant::MpiMultiple {
                (mpi::Threading::Multiple, true)
            } else {
                (mpi::Threading::Single, false)
            };
            if bench == Bench::Idle {
                return Err(ChildError::Unsupported {
                    bench: bench.name(),
                    variant: variant.name(),
                    runs_with: "the hcmpi variants",
                });
            }
            if !spawn_threads && threads != 1 {
                return Err(ChildError::OneThreadOnly {
                    variant: variant.name(),
                    threads,
                });
            }
            let (universe, provided) =
                mpi::initialize_with_threading(level).ok_or(ChildError::MpiAlreadyInitialized)?;
            if provided < level {
                return Err(ChildError::ThreadLevel {
                    what: variant.name(),
                    provided: hc_mpi::threading_name(provided),
                    needed: hc_mpi::threading_name(level),
                });
            }
            let world = universe.world();
            check_size(world.size())?;
            let world = if spawn_threads {
                SharedComm::multiple(&world, provided)?
            } else {
                SharedComm::this_thread(&world)
            };
            let transport = Raw {
                world,
                spawn_threads,
            };
            let rows = measure(&transport, variant, threads, bench, params);
            transport.barrier();
            rows
        }
    };
    for row in rows {
        println!("{}", row.to_json());
    }
    Ok(())
}

fn check_size(size: i32) -> Result<(), ChildError> {
    if size == 2 {
        Ok(())
    } else {
        Err(ChildError::RankCount {
            needed: 2,
            got: size,
        })
    }
}

/// The rows of one benchmark (empty on rank 1).
fn measure<X: Transport>(
    x: &X,
    variant: Variant,
    threads: usize,
    bench: Bench,
    params: &Params,
) -> Vec<Row> {
    let row = |bytes: usize, value: f64| Row {
        bench,
        variant,
        placement: "none".to_owned(),
        threads,
        bytes,
        value,
    };
    let rows: Vec<Row> = match bench {
        Bench::Latency => latency(x, threads, params)
            .into_iter()
            .map(|(bytes, us)| row(bytes, us))
            .collect(),
        Bench::Bandwidth => {
            let (bytes, window, windows) = (params.bw_bytes, params.bw_window, params.bw_windows);
            let secs = windowed(x, threads, bytes, window, windows, params.reps);
            let total = (threads * window * windows * bytes) as f64;
            vec![row(bytes, total / secs / 1e6)]
        }
        Bench::Msgrate => {
            let (window, windows) = (params.rate_window, params.rate_windows);
            let secs = windowed(x, threads, 0, window, windows, params.reps);
            vec![row(0, (threads * window * windows) as f64 / secs)]
        }
        Bench::Get => vec![row(8, request_reply(x, threads, params))],
        Bench::Idle => unreachable!("handled by `idle`"),
    };
    if x.rank() == 0 {
        rows
    } else {
        Vec::new()
    }
}

/// Ping-pong: µs per one-way message (half a round trip), the mean over
/// threads, median over repetitions, for each size.
fn latency<X: Transport>(x: &X, threads: usize, params: &Params) -> Vec<(usize, f64)> {
    params
        .lat_sizes
        .iter()
        .map(|&size| (size, round_trip_us(x, threads, params, size, 0) / 2.0))
        .collect()
}

/// Request/reply: rank 1 sends 8 bytes, rank 0 answers with 8 bytes; µs
/// per round trip, the mean over threads, median over repetitions.
fn request_reply<X: Transport>(x: &X, threads: usize, params: &Params) -> f64 {
    round_trip_us(x, threads, params, 8, 1)
}

/// `lat_iters` round trips of `size` bytes per thread, started by rank
/// `initiator`: µs per round trip, the mean over threads, median over the
/// repetitions after a warm-up.
fn round_trip_us<X: Transport>(
    x: &X,
    threads: usize,
    params: &Params,
    size: usize,
    initiator: i32,
) -> f64 {
    let rank = x.rank();
    let peer = 1 - rank;
    let iters = params.lat_iters;
    let mut samples = Vec::new();
    // Repetition 0 is the warm-up.
    for rep in 0..=params.reps {
        let per_thread = Mutex::new(Vec::with_capacity(threads));
        x.barrier();
        x.parallel(threads, &|t| {
            let tag = t as i32;
            let (mut out, mut inc) = (vec![1u8; size], vec![0u8; size]);
            let start = Instant::now();
            for _ in 0..iters {
                if rank == initiator {
                    out = x.send(out, peer, tag);
                    inc = x.recv(inc, peer, tag);
                } else {
                    inc = x.recv(inc, peer, tag);
                    out = x.send(out, peer, tag);
                }
            }
            let us = start.elapsed().as_secs_f64() * 1e6 / iters as f64;
            per_thread.lock().unwrap().push(us);
        });
        let per_thread = per_thread.into_inner().unwrap();
        if rep > 0 {
            samples.push(per_thread.iter().sum::<f64>() / per_thread.len() as f64);
        }
    }
    median(&samples)
}

/// DDDF get: rank 0 homes and puts one `u64` per round trip; each of rank
/// 1's T tasks fetches its own fresh guids one after the other
/// (`handle(guid).wait()`: request to the home, value back). Meanwhile rank
/// 0 waits in a task for a "done" guid homed on rank 1, as an application
/// waiting for its peer would, so each rank has one thread at work, as in
/// the MPI variants. µs per round trip, the mean over tasks, median over
/// repetitions; the row is rank 0's.
fn dddf_get(
    x: &Hc<'_>,
    variant: Variant,
    threads: usize,
    params: &Params,
) -> Result<Vec<Row>, ChildError> {
    let rank = x.rank();
    let iters = params.lat_iters;
    let per_rep = threads * iters;
    let values = (per_rep * (params.reps + 1)) as u64;
    // Guids below `values` hold the fetched values (home rank 0); guid
    // `values + rep` says rank 1 is done with repetition `rep` (home rank 1).
    let space =
        hcmpi_dddf::DddfSpace::<u64>::on(&x.world, move |guid| i32::from(guid >= values), |_| 8)?;
    if rank == 0 {
        for guid in 0..values {
            space.handle(guid)?.put(guid)?;
        }
    }
    let mut samples = Vec::new();
    for rep in 0..=params.reps {
        let done = space.handle(values + rep as u64)?;
        x.barrier();
        if rank == 0 {
            x.parallel(1, &|_| {
                done.wait().expect("done guid");
            });
            continue;
        }
        let per_thread = Mutex::new(Vec::with_capacity(threads));
        x.parallel(threads, &|t| {
            let first = (rep * per_rep + t * iters) as u64;
            let start = Instant::now();
            for guid in first..first + iters as u64 {
                let handle = space.handle(guid).expect("dddf handle");
                assert_eq!(handle.wait(), Ok(&guid), "dddf get of guid {guid}");
            }
            let us = start.elapsed().as_secs_f64() * 1e6 / iters as f64;
            per_thread.lock().unwrap().push(us);
        });
        done.put(rep as u64)?;
        let per_thread = per_thread.into_inner().unwrap();
        if rep > 0 {
            samples.push(per_thread.iter().sum::<f64>() / per_thread.len() as f64);
        }
    }
    let report = space.close()?;
    if !report.is_clean() {
        return Err(ChildError::PendingGuids(report.pending));
    }
    if rank == 1 {
        x.world.send(vec![median(&samples)], 0, GET_TAG)?;
        return Ok(Vec::new());
    }
    let (measured, _) = x.world.recv(vec![0f64], 1, GET_TAG)?;
    Ok(vec![Row {
        bench: Bench::Get,
        variant,
        placement: String::new(),
        threads,
        bytes: 8,
        value: measured[0],
    }])
}

/// Windowed streaming from rank 0 to rank 1: per window, each thread starts
/// `window` sends (receives on rank 1), waits for all of them, and rank 1
/// acknowledges the window with a 0-byte message. Returns the median over
/// repetitions of the time from the first thread's start to the last
/// thread's end, in seconds.
fn windowed<X: Transport>(
    x: &X,
    threads: usize,
    bytes: usize,
    window: usize,
    windows: usize,
    reps: usize,
) -> f64 {
    let rank = x.rank();
    let peer = 1 - rank;
    // Buffers are allocated once, outside the timed region; the warm-up
    // touches every page.
    let fill = if rank == 0 { 1u8 } else { 0u8 };
    let pools: Vec<Mutex<Vec<Vec<u8>>>> = (0..threads)
        .map(|_| Mutex::new((0..window).map(|_| vec![fill; bytes]).collect()))
        .collect();
    let mut samples = Vec::new();
    for rep in 0..=reps {
        let spans = Mutex::new(Vec::with_capacity(threads));
        x.barrier();
        x.parallel(threads, &|t| {
            let (tag, ack_tag) = (t as i32, ACK_TAG + t as i32);
            let mut bufs = std::mem::take(&mut *pools[t].lock().unwrap());
            let mut ack = Vec::new();
            let start = Instant::now();
            for _ in 0..windows {
                if rank == 0 {
                    bufs = x.send_window(bufs, peer, tag);
                    ack = x.recv(ack, peer, ack_tag);
                } else {
                    bufs = x.recv_window(bufs, peer, tag);
                    ack = x.send(ack, peer, ack_tag);
                }
            }
            let end = Instant::now();
            *pools[t].lock().unwrap() = bufs;
            spans.lock().unwrap().push((start, end));
        });
        let spans = spans.into_inner().unwrap();
        let first = spans.iter().map(|s| s.0).min().expect("threads > 0");
        let last = spans.iter().map(|s| s.1).max().expect("threads > 0");
        if rep > 0 {
            samples.push((last - first).as_secs_f64());
        }
    }
    median(&samples)
}

/// CPU used by an idle hcmpi process (communication worker parked, every
/// computation worker idle), as percent of one core: `RUSAGE_SELF` user +
/// system time over `idle_secs` of wall time, after one barrier. The row
/// reports the larger of the two ranks.
fn idle(x: &Hc<'_>, variant: Variant, threads: usize, params: &Params) -> Vec<Row> {
    x.barrier();
    let pct = cpu_percent_while_sleeping(Duration::from_secs_f64(params.idle_secs));
    if x.rank() == 1 {
        x.world.send(vec![pct], 0, IDLE_TAG).expect("idle report");
        return Vec::new();
    }
    let (other, _) = x.world.recv(vec![0f64], 1, IDLE_TAG).expect("idle report");
    vec![Row {
        bench: Bench::Idle,
        variant,
        placement: String::new(),
        threads,
        bytes: 0,
        value: pct.max(other[0]),
    }]
}
