//! Phasers across ranks: an hcmpi-phaser (strict, then fuzzy with split
//! phases), an hcmpi-accumulator driving a convergence loop, the same loop
//! with a stale-synchronous accumulator of staleness `K`, and an
//! eventually-consistent one.
//!
//! Every task contributes a "residual" that halves each iteration; the loop
//! stops at the first iteration whose global sum is below `TOL`. Every rank
//! checks that all its tasks stopped where a sequential computation says.
//!
//! Run: `mpiexec -n 3 target/release/examples/phasers_mpi`.

// sample-run: ranks=1,2,3,4

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Mutex;

use hc_mpi::Hcmpi;
use hcmpi_phasers::{
    hcmpi_accum_create, hcmpi_phaser_create, spawn_phased, AccumOp, BarrierMode, Mode, Phaser,
    PhaserError, Reduction, StaleAccum, Staleness,
};

/// Phased tasks per rank.
const TASKS: u64 = 3;
/// Barrier rounds.
const ROUNDS: u64 = 4;
/// The loops stop once the global residual is below this.
const TOL: u64 = 50;
/// Staleness of the stale-synchronous loop.
const K: u64 = 2;

/// Task `t` of rank `r` at iteration `it`: halves every iteration.
fn residual(r: u64, t: u64, it: u64) -> u64 {
    ((r + 1) * (t + 2) * 1000) >> it
}

/// The global residual of iteration `it`, computed sequentially.
fn global(ranks: u64, it: u64) -> u64 {
    (0..ranks)
        .flat_map(|r| (0..TASKS).map(move |t| residual(r, t, it)))
        .sum()
}

fn main() -> ExitCode {
    // An error on one rank ends the whole job with its message.
    Hcmpi::run(body)
}

fn body(hc: &Hcmpi) -> Result<(), Box<dyn std::error::Error>> {
    let (rank, ranks) = (hc.rank() as u64, hc.size() as u64);
    let converged = (0..).find(|&it| global(ranks, it) < TOL).unwrap();

    // ANCHOR: barrier
    let arrived = AtomicU64::new(0);
    let phases = hc.finish(|s| {
        // Collective: every rank creates it, in the same order as its other collectives.
        let ph = hcmpi_phaser_create(s, hc, Mode::SignalWait, BarrierMode::Strict)?;
        for _ in 0..TASKS {
            let arrived = &arrived;
            spawn_phased(
                s,
                ph.register(Mode::SignalWait)?,
                move |_, mut reg| async move {
                    for round in 0..ROUNDS {
                        arrived.fetch_add(1, SeqCst);
                        // Leaves once every task on every rank has signaled this phase.
                        reg.next().await?;
                        assert!(arrived.load(SeqCst) >= (round + 1) * TASKS);
                    }
                    Ok::<(), PhaserError>(())
                },
            );
        }
        Ok::<_, PhaserError>(ph.handle())
    })?;
    assert_eq!(phases.completed_phases(), ROUNDS);
    // ANCHOR_END: barrier

    // ANCHOR: fuzzy
    let overlapped = AtomicU64::new(0);
    hc.finish(|s| {
        let ph = Phaser::builder().tree(2, 2).build_hcmpi(
            s,
            hc.world(),
            BarrierMode::Fuzzy,
            Mode::SignalWait,
        )?;
        for _ in 0..TASKS {
            let overlapped = &overlapped;
            spawn_phased(
                s,
                ph.register(Mode::SignalWait)?,
                move |_, mut reg| async move {
                    for _ in 0..ROUNDS {
                        reg.signal().await?; // my part of this phase is done...
                        overlapped.fetch_add(1, SeqCst); // ...work that needs no one else's
                        reg.wait().await?;
                    }
                    Ok::<(), PhaserError>(())
                },
            );
        }
        Ok::<(), PhaserError>(())
    })?;
    assert_eq!(overlapped.into_inner(), ROUNDS * TASKS);
    // ANCHOR_END: fuzzy

    // ANCHOR: accum
    let stops = Mutex::new(Vec::new());
    hc.finish(|s| {
        let acc = hcmpi_accum_create::<u64>(s, hc, AccumOp::Sum, Mode::SignalWait)?;
        for t in 0..TASKS {
            let stops = &stops;
            spawn_phased(
                s,
                acc.register(Mode::SignalWait)?,
                move |_, mut reg| async move {
                    for it in 0.. {
                        // Local tree, then one MPI_Iallreduce; every task reads the same sum.
                        reg.accum_next(residual(rank, t, it)).await?;
                        if reg.accum_get()? < TOL {
                            stops.lock().unwrap().push(it);
                            break;
                        }
                    }
                    Ok::<(), PhaserError>(())
                },
            );
        }
        Ok::<(), PhaserError>(())
    })?;
    assert_eq!(stops.into_inner().unwrap(), [converged; TASKS as usize]);
    // ANCHOR_END: accum

    // ANCHOR: ssp
    let sum = Reduction::op(AccumOp::Sum)?;
    let acc = StaleAccum::create(hc.world(), sum, Staleness::Bounded(K))?; // collective
    let stops = Mutex::new(Vec::new());
    hc.finish(|s| {
        let first = acc.join(); // at the oldest open phase: 0
        let others: Vec<_> = (1..TASKS).map(|_| first.register()).collect(); // at first's phase
        for (t, mut member) in std::iter::once(first).chain(others).enumerate() {
            let stops = &stops;
            s.spawn_future(async move {
                for it in 0.. {
                    // Contributes to phase `it`; goes on once phase it - K is complete.
                    let seen = member.advance(residual(rank, t as u64, it)).await.unwrap();
                    if let Some(seen) = seen {
                        // The newest complete result: at most K phases old, and exact.
                        assert!(seen.phase <= it && seen.phase + K >= it);
                        assert_eq!(seen.value, global(ranks, seen.phase));
                    }
                    // Stop on the residual of it - K: the same bits on every rank.
                    if it >= K && member.result(it - K).unwrap().value < TOL {
                        stops.lock().unwrap().push(it);
                        break;
                    }
                }
            });
        }
    });
    hc.block_on(acc.close())?; // collective; the members are gone
    assert_eq!(stops.into_inner().unwrap(), [converged + K; TASKS as usize]);
    // ANCHOR_END: ssp

    // ANCHOR: eventual
    let acc = StaleAccum::create(
        hc.world(),
        Reduction::op(AccumOp::Max)?,
        Staleness::Eventual,
    )?;
    hc.finish(|s| {
        let mut member = acc.join();
        s.spawn_future(async move {
            for it in 0..2 * converged {
                // Never waits: whatever phase is complete by now, if any.
                if let Some(seen) = member.advance(residual(rank, 0, it)).await.unwrap() {
                    assert!(seen.phase <= it);
                    assert_eq!(seen.value, residual(ranks - 1, 0, seen.phase));
                }
            }
        });
    });
    hc.block_on(acc.close())?;
    // ANCHOR_END: eventual

    if rank == 0 {
        println!(
            "{ranks} rank(s) x {TASKS} tasks: strict loop stopped at {converged}, \
             staleness {K} at {}",
            converged + K
        );
    }
    Ok(())
}
