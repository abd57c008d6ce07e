//! Phasers and accumulators within one process: a double-buffered stencil
//! whose steps are separated by a tree phaser with a phase action; a
//! SIGNAL_ONLY producer feeding WAIT_ONLY readers through a flat phaser;
//! a MAX accumulator read after its finish; where the creator's
//! registration goes; and the errors that replace hangs.
//!
//! No MPI is involved: this is a plain hc-runtime program.
//!
//! Run: `target/release/examples/phasers_local`.

// sample-run: ranks=0

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use hc_runtime::{Ddf, Runtime};
use hcmpi_phasers::{spawn_phased, AccumOp, Mode, Phaser, PhaserError};

/// Phased tasks of the stencil and the accumulator.
const TASKS: usize = 4;
/// Cells per task.
const CHUNK: usize = 8;
/// Stencil steps (phases).
const STEPS: u64 = 6;

/// One step of cell `i`: `left + 2·self + right` on a ring (wrapping).
fn smooth(old: &[u64], i: usize) -> u64 {
    let n = old.len();
    old[(i + n - 1) % n]
        .wrapping_add(old[i].wrapping_mul(2))
        .wrapping_add(old[(i + 1) % n])
}

fn initial(i: usize) -> u64 {
    (i as u64 * 7919) % 101
}

/// The stencil run sequentially: the final cells and each step's checksum.
fn sequential() -> (Vec<u64>, Vec<u64>) {
    let mut cells: Vec<u64> = (0..TASKS * CHUNK).map(initial).collect();
    let mut sums = Vec::new();
    for _ in 0..STEPS {
        cells = (0..cells.len()).map(|i| smooth(&cells, i)).collect();
        sums.push(cells.iter().fold(0u64, |a, &c| a.wrapping_add(c)));
    }
    (cells, sums)
}

fn load(cells: &[AtomicU64]) -> Vec<u64> {
    cells.iter().map(|c| c.load(Relaxed)).collect()
}

fn main() {
    let rt = Runtime::new(); // HC_WORKERS computation workers
    let (want_cells, want_sums) = sequential();

    // ANCHOR: barrier
    // Two buffers: step t reads grids[t % 2] and writes grids[(t + 1) % 2].
    let grids: Arc<[Vec<AtomicU64>; 2]> = Arc::new([
        (0..TASKS * CHUNK)
            .map(|i| AtomicU64::new(initial(i)))
            .collect(),
        (0..TASKS * CHUNK).map(|_| AtomicU64::new(0)).collect(),
    ]);
    let sums = Arc::new(Mutex::new(Vec::new()));
    rt.finish(|s| {
        let (written, sums) = (Arc::clone(&grids), Arc::clone(&sums));
        let ph = Phaser::builder()
            .tree(2, 2) // two leaf sub-phasers under the root
            // Runs once per phase, after every signal of it, before anyone leaves it.
            .phase_action(move |phase| {
                let cells = load(&written[(phase as usize + 1) % 2]);
                sums.lock()
                    .unwrap()
                    .push(cells.iter().fold(0u64, |a, &c| a.wrapping_add(c)));
            })
            .build(s, Mode::SignalWait)
            .expect("a valid shape");
        for t in 0..TASKS {
            let grids = &*grids;
            let reg = ph.register(Mode::SignalWait).unwrap(); // before the spawn
            spawn_phased(s, reg, move |_, mut reg| async move {
                for step in 0..STEPS as usize {
                    let (old, new) = (load(&grids[step % 2]), &grids[(step + 1) % 2]);
                    for (i, cell) in new.iter().enumerate().skip(t * CHUNK).take(CHUNK) {
                        cell.store(smooth(&old, i), Relaxed); // my chunk only
                    }
                    // Nobody reads `new` (or overwrites `old`) before every task is here.
                    reg.next().await.unwrap();
                }
            });
        }
        // `ph`, the creator's registration, is dropped here, as the body ends.
    });
    assert_eq!(load(&grids[STEPS as usize % 2]), want_cells);
    assert_eq!(*sums.lock().unwrap(), want_sums);
    // ANCHOR_END: barrier

    // ANCHOR: modes
    const ITEMS: usize = 5;
    let items = Mutex::new(Vec::new());
    rt.finish(|s| {
        let items = &items;
        let ph = Phaser::builder().flat().build(s, Mode::SignalWait).unwrap(); // one counter
        let producer = ph.register(Mode::SignalOnly).unwrap();
        // A child may do only what its parent may do.
        assert!(matches!(
            producer.register(Mode::WaitOnly),
            Err(PhaserError::StrongerChild {
                parent: Mode::SignalOnly,
                child: Mode::WaitOnly
            })
        ));
        spawn_phased(s, producer, move |_, mut producer| async move {
            for k in 0..ITEMS {
                items.lock().unwrap().push(k * k);
                producer.signal().await.unwrap(); // never waits for the readers
            }
        });
        for _ in 0..3 {
            let reader = ph.register(Mode::WaitOnly).unwrap();
            spawn_phased(s, reader, move |_, mut reader| async move {
                for k in 0..ITEMS {
                    reader.wait().await.unwrap(); // phase k is complete: item k is in
                    assert_eq!(items.lock().unwrap()[k], k * k);
                }
                // The producer has left and so has the creator: no phase can complete.
                let last = reader.wait().await;
                assert_eq!(
                    last,
                    Err(PhaserError::NoSignalers {
                        phase: ITEMS as u64
                    })
                );
            });
        }
    });
    // ANCHOR_END: modes

    // ANCHOR: accum
    const ROUNDS: i64 = 3;
    let value = |t: i64, round: i64| (t * 37 + round * 11) % 23 - 5;
    let results = rt.finish(|s| {
        let acc = Phaser::builder()
            .build_accum::<i64>(s, AccumOp::Max, Mode::SignalWait)
            .unwrap();
        for t in 0..TASKS as i64 {
            let reg = acc.register(Mode::SignalWait).unwrap();
            spawn_phased(s, reg, move |_, mut reg| async move {
                for round in 0..ROUNDS {
                    reg.accum_next(value(t, round)).await?; // contribute, then wait
                    let max = (0..TASKS as i64).map(|u| value(u, round)).max();
                    assert_eq!(Some(reg.accum_get()?), max);
                }
                Ok::<(), PhaserError>(()) // an Err would fail the task and the finish
            });
        }
        acc.handle() // a handle, unlike a registration, may leave the finish
    });
    assert_eq!(results.completed_phases(), ROUNDS as u64);
    let last = (0..TASKS as i64).map(|u| value(u, ROUNDS - 1)).max();
    assert_eq!(results.last_result(), last);
    // ANCHOR_END: accum

    // ANCHOR: creator
    let (arrived, total) = (AtomicU64::new(0), Ddf::new());
    let seen = rt.finish(|s| {
        let ph = Phaser::new(s, Mode::SignalWait);
        for _ in 0..TASKS {
            let (arrived, total) = (&arrived, &total);
            spawn_phased(
                s,
                ph.register(Mode::SignalWait).unwrap(),
                move |_, mut reg| async move {
                    arrived.fetch_add(1, Relaxed);
                    reg.next().await.unwrap();
                    // After phase 0 every task has arrived; one of them reports it.
                    let _ = total.put(arrived.load(Relaxed));
                },
            );
        }
        // The body waits below for something produced after phase 0, so the
        // creator leaves first: still registered, it would hold phase 0 open
        // and the wait would never end.
        ph.deregister();
        *total.wait()
    });
    assert_eq!(seen, TASKS as u64);
    // ANCHOR_END: creator

    // ANCHOR: errors
    rt.finish(|s| {
        let mut ph = Phaser::new(s, Mode::SignalWait);
        let mut reader = ph.register(Mode::WaitOnly).unwrap();
        s.spawn_future(async move {
            assert_eq!(
                reader.signal().await,
                Err(PhaserError::ModeViolation {
                    op: "signal",
                    mode: Mode::WaitOnly
                })
            );
            assert_eq!(
                ph.wait().await,
                Err(PhaserError::WaitBeforeSignal { phase: 0 })
            );
            ph.signal().await.unwrap();
            assert_eq!(
                ph.signal().await,
                Err(PhaserError::AlreadySignaled { phase: 0 })
            );
            ph.wait().await.unwrap(); // the split-phase pair completes phase 0
            reader.next().await.unwrap(); // WAIT_ONLY: next is wait
            ph.deregister(); // the last signaler leaves
            assert_eq!(
                reader.next().await,
                Err(PhaserError::NoSignalers { phase: 1 })
            );
        });
    });
    // ANCHOR_END: errors

    println!(
        "phasers_local OK: {STEPS} stencil steps on {TASKS} tasks, checksum {:#x}",
        want_sums[STEPS as usize - 1]
    );
}
