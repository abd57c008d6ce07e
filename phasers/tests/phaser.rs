//! Intra-node phasers: phase ordering under many tasks and random delays,
//! dynamic registration and drop, modes, split phases, phase actions,
//! panics, and tree vs flat shapes.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use hc_runtime::Runtime;
use phasers::{spawn_phased, Mode, Phaser, PhaserBuilder, PhaserError, Shape};

fn runtime() -> Runtime {
    Runtime::builder().num_workers(2).build().unwrap()
}

/// A small deterministic generator for delays (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A perturbation: nothing, a yield, or a short sleep.
    fn delay(&mut self) {
        match self.below(8) {
            0 => std::thread::sleep(Duration::from_micros(self.below(200))),
            1 | 2 => std::thread::yield_now(),
            _ => {}
        }
    }
}

const SHAPES: [Shape; 4] = [
    Shape::Flat,
    Shape::Tree {
        leaves: 2,
        degree: 2,
    },
    Shape::Tree {
        leaves: 5,
        degree: 2,
    },
    Shape::Tree {
        leaves: 8,
        degree: 4,
    },
];

/// Arrival counts per phase, and what each task saw when it left a phase.
struct Ledger {
    arrived: Vec<AtomicUsize>,
    seen_on_leaving: Mutex<Vec<(u64, usize)>>,
}

impl Ledger {
    fn new(phases: usize) -> Ledger {
        Ledger {
            arrived: (0..phases).map(|_| AtomicUsize::new(0)).collect(),
            seen_on_leaving: Mutex::new(Vec::new()),
        }
    }

    fn arrive(&self, phase: u64) {
        self.arrived[phase as usize].fetch_add(1, Ordering::SeqCst);
    }

    fn leave(&self, phase: u64) {
        let seen = self.arrived[phase as usize].load(Ordering::SeqCst);
        self.seen_on_leaving.lock().unwrap().push((phase, seen));
    }

    /// Phase ordering: whoever left phase k saw every arrival at k that
    /// ever happened.
    fn check(&self) -> usize {
        let seen = self.seen_on_leaving.lock().unwrap();
        for &(phase, count) in seen.iter() {
            let total = self.arrived[phase as usize].load(Ordering::SeqCst);
            assert_eq!(
                count, total,
                "a task left phase {phase} after {count} of {total} arrivals"
            );
        }
        seen.len()
    }
}

#[test]
fn phase_ordering_many_tasks_random_delays() {
    const TASKS: u64 = 24;
    const PHASES: u64 = 40;
    let rt = runtime();
    for shape in SHAPES {
        let ledger = Ledger::new(PHASES as usize);
        rt.finish(|s| {
            let ph = PhaserBuilder::default()
                .shape(shape)
                .build(Mode::SignalWait)
                .unwrap();
            for t in 0..TASKS {
                let ledger = &ledger;
                spawn_phased(
                    s,
                    ph.register(Mode::SignalWait).unwrap(),
                    move |_, mut reg| {
                        let mut rng = Rng::new(t + 1);
                        for phase in 0..PHASES {
                            rng.delay();
                            ledger.arrive(phase);
                            reg.next().unwrap();
                            ledger.leave(phase);
                        }
                    },
                )
                .unwrap();
            }
        });
        let leaves = ledger.check();
        assert_eq!(leaves as u64, TASKS * PHASES, "{shape:?}");
        for phase in 0..PHASES as usize {
            assert_eq!(ledger.arrived[phase].load(Ordering::SeqCst) as u64, TASKS);
        }
    }
}

#[test]
fn dynamic_registration_and_drop_mid_phase() {
    const PHASES: u64 = 30;
    let rt = runtime();
    for shape in SHAPES {
        let ledger = Ledger::new(PHASES as usize + 2);
        let spawned = AtomicUsize::new(0);
        let (ledger_ref, spawned_ref) = (&ledger, &spawned);
        rt.finish(move |s| {
            let ph = PhaserBuilder::default()
                .shape(shape)
                .build(Mode::SignalWait)
                .unwrap();
            // A task runs some phases, may register and spawn a child in
            // the middle of a phase, and leaves at a random phase.
            fn task<'scope>(
                s: &'scope hc_runtime::Scope<'scope, '_>,
                reg: phasers::Registration,
                seed: u64,
                depth: u32,
                ledger: &'scope Ledger,
                spawned: &'scope AtomicUsize,
            ) {
                spawned.fetch_add(1, Ordering::SeqCst);
                spawn_phased(s, reg, move |s, mut reg| {
                    let mut rng = Rng::new(seed);
                    let stop = reg.phase() + 1 + rng.below(12);
                    while reg.phase() < stop.min(PHASES) {
                        let phase = reg.phase();
                        rng.delay();
                        ledger.arrive(phase);
                        if depth < 3 && rng.below(4) == 0 {
                            // Register mid-phase, before signaling.
                            let child = reg.register(Mode::SignalWait).unwrap();
                            task(s, child, rng.next(), depth + 1, ledger, spawned);
                        }
                        reg.signal().unwrap();
                        if depth < 3 && rng.below(6) == 0 {
                            // Register after signaling: the child starts
                            // in the next phase.
                            let child = reg.register(Mode::SignalWait).unwrap();
                            task(s, child, rng.next(), depth + 1, ledger, spawned);
                        }
                        reg.wait().unwrap();
                        ledger.leave(phase);
                    }
                    // Leaves by dropping `reg`, mid-run for most tasks.
                })
                .unwrap();
            }
            for t in 0..6 {
                task(
                    s,
                    ph.register(Mode::SignalWait).unwrap(),
                    100 + t,
                    0,
                    ledger_ref,
                    spawned_ref,
                );
            }
        });
        assert!(ledger.check() > 0);
        assert!(
            spawned.load(Ordering::SeqCst) > 6,
            "{shape:?}: no child was spawned"
        );
    }
}

#[test]
fn more_phased_tasks_than_workers_and_cores() {
    let rt = Runtime::builder().num_workers(1).build().unwrap();
    let ledger = Ledger::new(5);
    rt.finish(|s| {
        let ph = Phaser::new(Mode::SignalWait);
        for _ in 0..64 {
            let ledger = &ledger;
            spawn_phased(
                s,
                ph.register(Mode::SignalWait).unwrap(),
                move |_, mut reg| {
                    for phase in 0..5 {
                        ledger.arrive(phase);
                        reg.next().unwrap();
                        ledger.leave(phase);
                    }
                },
            )
            .unwrap();
        }
    });
    assert_eq!(ledger.check(), 64 * 5);
}

#[test]
fn mode_violations_are_errors() {
    let mut sw = Phaser::new(Mode::SignalWait);
    let mut so = sw.register(Mode::SignalOnly).unwrap();
    let mut wo = sw.register(Mode::WaitOnly).unwrap();

    assert_eq!(
        so.wait(),
        Err(PhaserError::ModeViolation {
            op: "wait",
            mode: Mode::SignalOnly
        })
    );
    assert_eq!(
        wo.signal(),
        Err(PhaserError::ModeViolation {
            op: "signal",
            mode: Mode::WaitOnly
        })
    );
    assert!(matches!(
        wo.register(Mode::SignalWait),
        Err(PhaserError::StrongerChild {
            parent: Mode::WaitOnly,
            child: Mode::SignalWait
        })
    ));
    assert!(matches!(
        so.register(Mode::WaitOnly),
        Err(PhaserError::StrongerChild { .. })
    ));
    assert!(matches!(
        wo.register(Mode::SignalOnly),
        Err(PhaserError::StrongerChild { .. })
    ));
    assert_eq!(sw.wait(), Err(PhaserError::WaitBeforeSignal { phase: 0 }));
    sw.signal().unwrap();
    assert_eq!(sw.signal(), Err(PhaserError::AlreadySignaled { phase: 0 }));
    assert_eq!(sw.next(), Err(PhaserError::AlreadySignaled { phase: 0 }));
    so.signal().unwrap();
    sw.wait().unwrap();
    wo.wait().unwrap();
    // Messages name the operation and the mode.
    let message = so.wait().unwrap_err().to_string();
    assert!(
        message.contains("wait") && message.contains("SIGNAL_ONLY"),
        "{message}"
    );
    // A WAIT_ONLY registration left alone: the phase can never complete.
    drop(so);
    drop(sw);
    assert_eq!(wo.wait(), Err(PhaserError::NoSignalers { phase: 1 }));
    assert_eq!(wo.next(), Err(PhaserError::NoSignalers { phase: 1 }));
}

#[test]
fn bad_shapes_are_errors() {
    assert!(matches!(
        Phaser::builder().tree(0, 2).build(Mode::SignalWait),
        Err(PhaserError::Config(_))
    ));
    assert!(matches!(
        Phaser::builder().tree(4, 1).build(Mode::SignalWait),
        Err(PhaserError::Config(_))
    ));
}

#[test]
fn signal_only_producers_and_wait_only_consumers() {
    const PHASES: u64 = 25;
    let rt = runtime();
    let produced: Vec<AtomicU64> = (0..PHASES).map(|_| AtomicU64::new(0)).collect();
    rt.finish(|s| {
        let ph = Phaser::builder()
            .tree(3, 2)
            .build(Mode::SignalWait)
            .unwrap();
        for p in 0..3u64 {
            let produced = &produced;
            spawn_phased(
                s,
                ph.register(Mode::SignalOnly).unwrap(),
                move |_, mut reg| {
                    let mut rng = Rng::new(p + 7);
                    for phase in 0..PHASES {
                        rng.delay();
                        produced[phase as usize].fetch_add(1, Ordering::SeqCst);
                        reg.next().unwrap(); // signal only: may run one phase ahead
                    }
                },
            )
            .unwrap();
        }
        for c in 0..3u64 {
            let produced = &produced;
            spawn_phased(
                s,
                ph.register(Mode::WaitOnly).unwrap(),
                move |_, mut reg| {
                    let mut rng = Rng::new(c + 70);
                    for phase in 0..PHASES {
                        reg.next().unwrap();
                        assert_eq!(
                            produced[phase as usize].load(Ordering::SeqCst),
                            3,
                            "phase {phase}"
                        );
                        rng.delay();
                    }
                },
            )
            .unwrap();
        }
    });
}

#[test]
fn split_phase_overlaps_work_with_the_barrier() {
    let rt = runtime();
    let before = AtomicUsize::new(0);
    let overlapped = AtomicUsize::new(0);
    rt.finish(|s| {
        let ph = Phaser::new(Mode::SignalWait);
        for _ in 0..4 {
            let (before, overlapped) = (&before, &overlapped);
            spawn_phased(
                s,
                ph.register(Mode::SignalWait).unwrap(),
                move |_, mut reg| {
                    before.fetch_add(1, Ordering::SeqCst);
                    reg.signal().unwrap();
                    overlapped.fetch_add(1, Ordering::SeqCst); // between signal and wait
                    reg.wait().unwrap();
                    assert_eq!(before.load(Ordering::SeqCst), 4);
                },
            )
            .unwrap();
        }
    });
    assert_eq!(overlapped.load(Ordering::SeqCst), 4);
}

#[test]
fn phase_action_runs_once_per_phase_before_release() {
    let rt = runtime();
    let actions = std::sync::Arc::new(AtomicU64::new(0));
    rt.finish(|s| {
        let counter = std::sync::Arc::clone(&actions);
        let ph = Phaser::builder()
            .tree(2, 2)
            .phase_action(move |phase| {
                assert_eq!(counter.fetch_add(1, Ordering::SeqCst), phase);
            })
            .build(Mode::SignalWait)
            .unwrap();
        for _ in 0..5 {
            let actions = &actions;
            spawn_phased(
                s,
                ph.register(Mode::SignalWait).unwrap(),
                move |_, mut reg| {
                    for phase in 0..20 {
                        reg.next().unwrap();
                        assert!(actions.load(Ordering::SeqCst) > phase);
                    }
                },
            )
            .unwrap();
        }
    });
    assert_eq!(actions.load(Ordering::SeqCst), 20);
}

#[test]
fn panicking_phased_task_is_dropped_and_reraised() {
    let rt = runtime();
    let finished = AtomicUsize::new(0);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.finish(|s| {
            let ph = Phaser::new(Mode::SignalWait);
            for t in 0..3 {
                let finished = &finished;
                spawn_phased(
                    s,
                    ph.register(Mode::SignalWait).unwrap(),
                    move |_, mut reg| {
                        reg.next().unwrap();
                        if t == 0 {
                            panic!("task 0 fails in phase 1");
                        }
                        // The others go on: the failed task's drop lets phase 1 complete.
                        reg.next().unwrap();
                        reg.next().unwrap();
                        finished.fetch_add(1, Ordering::SeqCst);
                    },
                )
                .unwrap();
            }
        });
    }));
    let payload = result.expect_err("the panic must reach the finish");
    assert_eq!(
        payload.downcast_ref::<&str>(),
        Some(&"task 0 fails in phase 1")
    );
    assert_eq!(finished.load(Ordering::SeqCst), 2);
}

#[test]
fn multiple_phasers_per_task() {
    let rt = runtime();
    let sums = Mutex::new(Vec::new());
    rt.finish(|s| {
        let barrier = Phaser::new(Mode::SignalWait);
        let acc = Phaser::builder()
            .build_accum::<u32>(phasers::AccumOp::Max, Mode::SignalWait)
            .unwrap();
        for t in 0..3u32 {
            let regs = (
                barrier.register(Mode::SignalWait).unwrap(),
                acc.register(Mode::SignalWait).unwrap(),
            );
            let sums = &sums;
            spawn_phased(s, regs, move |_, (mut b, mut a)| {
                for phase in 0..4u32 {
                    b.next().unwrap();
                    a.accum_next(t * 10 + phase).unwrap();
                    sums.lock().unwrap().push((phase, a.accum_get().unwrap()));
                }
            })
            .unwrap();
        }
    });
    let sums = sums.into_inner().unwrap();
    assert_eq!(sums.len(), 12);
    for (phase, max) in sums {
        assert_eq!(max, 20 + phase);
    }
}
