//! Intra-node phasers: phase ordering under many tasks and random delays,
//! dynamic registration and drop, modes, split phases, phase actions,
//! panics, tree vs flat shapes, and a thousand phased tasks on one worker.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use hc_runtime::{Runtime, Scope};
use hcmpi_phasers::{
    spawn_phased, AccumOp, Mode, PhaseFailure, Phaser, PhaserBuilder, PhaserError, Shape,
};

fn runtime(workers: usize) -> Runtime {
    Runtime::builder().num_workers(workers).build().unwrap()
}

/// A small deterministic generator for perturbations (xorshift64*).
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

    /// A perturbation: nothing, a yield to the other tasks, or some work.
    async fn delay(&mut self) {
        match self.below(8) {
            0 => {
                for _ in 0..self.below(20_000) {
                    std::hint::spin_loop();
                }
            }
            1 | 2 => hcmpi_testkit::yield_now().await,
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
    let rt = runtime(2);
    for shape in SHAPES {
        let ledger = Ledger::new(PHASES as usize);
        rt.finish(|s| {
            let ph = PhaserBuilder::default()
                .shape(shape)
                .build(s, Mode::SignalWait)
                .unwrap();
            for t in 0..TASKS {
                let ledger = &ledger;
                let reg = ph.register(Mode::SignalWait).unwrap();
                spawn_phased(s, reg, move |_, mut reg| async move {
                    let mut rng = Rng::new(t + 1);
                    for phase in 0..PHASES {
                        rng.delay().await;
                        ledger.arrive(phase);
                        reg.next().await.unwrap();
                        ledger.leave(phase);
                    }
                });
            }
        });
        let leaves = ledger.check();
        assert_eq!(leaves as u64, TASKS * PHASES, "{shape:?}");
        for phase in 0..PHASES as usize {
            assert_eq!(ledger.arrived[phase].load(Ordering::SeqCst) as u64, TASKS);
        }
    }
}

const DYNAMIC_PHASES: u64 = 30;

/// A task runs some phases, may register and spawn a child in the middle
/// of a phase, and leaves at a random phase.
fn dynamic_task<'scope>(
    s: &'scope Scope<'scope, '_>,
    reg: hcmpi_phasers::Registration<'scope>,
    seed: u64,
    depth: u32,
    ledger: &'scope Ledger,
    spawned: &'scope AtomicUsize,
) {
    spawned.fetch_add(1, Ordering::SeqCst);
    spawn_phased(s, reg, move |s, mut reg| async move {
        let mut rng = Rng::new(seed);
        let stop = reg.phase() + 1 + rng.below(12);
        while reg.phase() < stop.min(DYNAMIC_PHASES) {
            let phase = reg.phase();
            rng.delay().await;
            ledger.arrive(phase);
            if depth < 3 && rng.below(4) == 0 {
                // Register mid-phase, before signaling.
                let child = reg.register(Mode::SignalWait).unwrap();
                dynamic_task(s, child, rng.next(), depth + 1, ledger, spawned);
            }
            reg.signal().await.unwrap();
            if depth < 3 && rng.below(6) == 0 {
                // Register after signaling: the child starts in the next
                // phase.
                let child = reg.register(Mode::SignalWait).unwrap();
                dynamic_task(s, child, rng.next(), depth + 1, ledger, spawned);
            }
            reg.wait().await.unwrap();
            ledger.leave(phase);
        }
        // Leaves by dropping `reg`, mid-run for most tasks.
    });
}

#[test]
fn dynamic_registration_and_drop_mid_phase() {
    let rt = runtime(2);
    for shape in SHAPES {
        let ledger = Ledger::new(DYNAMIC_PHASES as usize + 2);
        let spawned = AtomicUsize::new(0);
        rt.finish(|s| {
            let ph = PhaserBuilder::default()
                .shape(shape)
                .build(s, Mode::SignalWait)
                .unwrap();
            for t in 0..6 {
                let reg = ph.register(Mode::SignalWait).unwrap();
                dynamic_task(s, reg, 100 + t, 0, &ledger, &spawned);
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
fn a_thousand_phased_tasks_pass_barriers_on_one_worker() {
    const TASKS: usize = 1000;
    const PHASES: u64 = 5;
    let rt = runtime(1);
    for shape in [
        Shape::Flat,
        Shape::Tree {
            leaves: 16,
            degree: 4,
        },
    ] {
        let ledger = Ledger::new(PHASES as usize);
        rt.finish(|s| {
            let ph = Phaser::builder()
                .shape(shape)
                .build(s, Mode::SignalWait)
                .unwrap();
            for _ in 0..TASKS {
                let ledger = &ledger;
                spawn_phased(
                    s,
                    ph.register(Mode::SignalWait).unwrap(),
                    move |_, mut reg| async move {
                        for phase in 0..PHASES {
                            ledger.arrive(phase);
                            reg.next().await.unwrap();
                            ledger.leave(phase);
                        }
                    },
                );
            }
        });
        assert_eq!(ledger.check(), TASKS * PHASES as usize, "{shape:?}");
        for phase in 0..PHASES as usize {
            assert_eq!(ledger.arrived[phase].load(Ordering::SeqCst), TASKS);
        }
    }
}

#[test]
fn a_thousand_phased_tasks_accumulate_on_one_worker() {
    const TASKS: u64 = 1000;
    const PHASES: u64 = 6;
    let value = |task: u64, phase: u64| (task * 7919 + phase * 104_729) % 1013;
    // Independently computed: the sum and the maximum of every phase.
    let sums: Vec<u64> = (0..PHASES)
        .map(|p| (0..TASKS).map(|t| value(t, p)).sum())
        .collect();
    let maxima: Vec<u64> = (0..PHASES)
        .map(|p| (0..TASKS).map(|t| value(t, p)).max().unwrap())
        .collect();
    let checked = AtomicU64::new(0);
    let rt = runtime(1);
    rt.finish(|s| {
        let sum = Phaser::builder()
            .tree(8, 2)
            .build_accum::<u64>(s, AccumOp::Sum, Mode::SignalWait)
            .unwrap();
        let max = Phaser::builder()
            .flat()
            .build_accum::<u64>(s, AccumOp::Max, Mode::SignalWait)
            .unwrap();
        for task in 0..TASKS {
            let regs = (
                sum.register(Mode::SignalWait).unwrap(),
                max.register(Mode::SignalWait).unwrap(),
            );
            let (sums, maxima, checked) = (&sums, &maxima, &checked);
            spawn_phased(s, regs, move |_, (mut sum, mut max)| async move {
                for phase in 0..PHASES {
                    sum.accum_next(value(task, phase)).await.unwrap();
                    max.accum_next(value(task, phase)).await.unwrap();
                    assert_eq!(sum.accum_get(), Ok(sums[phase as usize]), "phase {phase}");
                    assert_eq!(max.accum_get(), Ok(maxima[phase as usize]), "phase {phase}");
                    checked.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
    });
    assert_eq!(checked.load(Ordering::SeqCst), TASKS * PHASES);
}

#[test]
fn mode_violations_are_errors() {
    let rt = runtime(1);
    rt.finish(|s| {
        let mut sw = Phaser::new(s, Mode::SignalWait);
        let mut so = sw.register(Mode::SignalOnly).unwrap();
        let mut wo = sw.register(Mode::WaitOnly).unwrap();
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
        s.spawn_future(async move {
            assert_eq!(
                so.wait().await,
                Err(PhaserError::ModeViolation {
                    op: "wait",
                    mode: Mode::SignalOnly
                })
            );
            assert_eq!(
                wo.signal().await,
                Err(PhaserError::ModeViolation {
                    op: "signal",
                    mode: Mode::WaitOnly
                })
            );
            assert_eq!(
                sw.wait().await,
                Err(PhaserError::WaitBeforeSignal { phase: 0 })
            );
            sw.signal().await.unwrap();
            assert_eq!(
                sw.signal().await,
                Err(PhaserError::AlreadySignaled { phase: 0 })
            );
            assert_eq!(
                sw.next().await,
                Err(PhaserError::AlreadySignaled { phase: 0 })
            );
            so.signal().await.unwrap();
            sw.wait().await.unwrap();
            wo.wait().await.unwrap();
            // Messages name the operation and the mode.
            let message = so.wait().await.unwrap_err().to_string();
            assert!(
                message.contains("wait") && message.contains("SIGNAL_ONLY"),
                "{message}"
            );
            // A WAIT_ONLY registration left alone: the phase can never
            // complete, and its wait says so instead of hanging.
            drop(so);
            drop(sw);
            assert_eq!(wo.wait().await, Err(PhaserError::NoSignalers { phase: 1 }));
            assert_eq!(wo.next().await, Err(PhaserError::NoSignalers { phase: 1 }));
        });
    });
}

#[test]
fn bad_shapes_are_errors() {
    hc_runtime::finish(|s| {
        assert!(matches!(
            Phaser::builder().tree(0, 2).build(s, Mode::SignalWait),
            Err(PhaserError::BadShape { .. })
        ));
        assert!(matches!(
            Phaser::builder().tree(4, 1).build(s, Mode::SignalWait),
            Err(PhaserError::BadShape { .. })
        ));
    });
}

#[test]
fn signal_only_producers_and_wait_only_consumers() {
    const PHASES: u64 = 25;
    let rt = runtime(2);
    let produced: Vec<AtomicU64> = (0..PHASES).map(|_| AtomicU64::new(0)).collect();
    rt.finish(|s| {
        let ph = Phaser::builder()
            .tree(3, 2)
            .build(s, Mode::SignalWait)
            .unwrap();
        for p in 0..3u64 {
            let produced = &produced;
            spawn_phased(
                s,
                ph.register(Mode::SignalOnly).unwrap(),
                move |_, mut reg| async move {
                    let mut rng = Rng::new(p + 7);
                    for phase in 0..PHASES {
                        rng.delay().await;
                        produced[phase as usize].fetch_add(1, Ordering::SeqCst);
                        reg.next().await.unwrap(); // signal only: may run one phase ahead
                    }
                },
            );
        }
        for c in 0..3u64 {
            let produced = &produced;
            spawn_phased(
                s,
                ph.register(Mode::WaitOnly).unwrap(),
                move |_, mut reg| async move {
                    let mut rng = Rng::new(c + 70);
                    for phase in 0..PHASES {
                        reg.next().await.unwrap();
                        assert_eq!(
                            produced[phase as usize].load(Ordering::SeqCst),
                            3,
                            "phase {phase}"
                        );
                        rng.delay().await;
                    }
                },
            );
        }
    });
}

#[test]
fn a_child_of_a_registration_running_ahead_joins_two_phases_ahead() {
    // A SIGNAL_ONLY producer signals phases 0 and 1 while a SIGNAL_WAIT
    // task still holds phase 0, then registers a child: the child starts
    // at phase 2 (its parent's cursor) without waiting, and phase 2 waits
    // for it.
    let rt = runtime(1);
    let child_signaled = AtomicU64::new(0);
    let gate = hcmpi_phasers::Event::new();
    rt.finish(|s| {
        let ph = Phaser::builder()
            .tree(2, 2)
            .build(s, Mode::SignalWait)
            .unwrap();
        let producer = ph.register(Mode::SignalOnly).unwrap();
        let mut holder = ph.register(Mode::SignalWait).unwrap();
        let (child_signaled, gate) = (&child_signaled, &gate);
        spawn_phased(s, producer, move |s, mut producer| async move {
            producer.signal().await.unwrap(); // phase 0
            producer.signal().await.unwrap(); // phase 1, ahead of the phaser
            let child = producer.register(Mode::SignalOnly).unwrap();
            gate.post().unwrap();
            spawn_phased(s, child, move |_, mut child| async move {
                assert_eq!(child.phase(), 2);
                child_signaled.store(1, Ordering::SeqCst);
                child.signal().await.unwrap(); // phase 2
            });
            // The producer leaves; phase 2 then waits for the child only.
        });
        s.spawn_future(async move {
            gate.wait(1).await.unwrap();
            for phase in 0..3 {
                holder.next().await.unwrap();
                if phase == 2 {
                    assert_eq!(child_signaled.load(Ordering::SeqCst), 1);
                }
            }
        });
        drop(ph);
    });
    assert_eq!(child_signaled.load(Ordering::SeqCst), 1);
}

#[test]
fn split_phase_overlaps_work_with_the_barrier() {
    let rt = runtime(2);
    let before = AtomicUsize::new(0);
    let overlapped = AtomicUsize::new(0);
    rt.finish(|s| {
        let ph = Phaser::new(s, Mode::SignalWait);
        for _ in 0..4 {
            let (before, overlapped) = (&before, &overlapped);
            spawn_phased(
                s,
                ph.register(Mode::SignalWait).unwrap(),
                move |_, mut reg| async move {
                    before.fetch_add(1, Ordering::SeqCst);
                    reg.signal().await.unwrap();
                    overlapped.fetch_add(1, Ordering::SeqCst); // between signal and wait
                    reg.wait().await.unwrap();
                    assert_eq!(before.load(Ordering::SeqCst), 4);
                },
            );
        }
    });
    assert_eq!(overlapped.load(Ordering::SeqCst), 4);
}

#[test]
fn phase_action_runs_once_per_phase_before_release() {
    let rt = runtime(2);
    let actions = std::sync::Arc::new(AtomicU64::new(0));
    rt.finish(|s| {
        let counter = std::sync::Arc::clone(&actions);
        let ph = Phaser::builder()
            .tree(2, 2)
            .phase_action(move |phase| {
                assert_eq!(counter.fetch_add(1, Ordering::SeqCst), phase);
            })
            .build(s, Mode::SignalWait)
            .unwrap();
        for _ in 0..5 {
            let actions = &actions;
            spawn_phased(
                s,
                ph.register(Mode::SignalWait).unwrap(),
                move |_, mut reg| async move {
                    for phase in 0..20 {
                        reg.next().await.unwrap();
                        assert!(actions.load(Ordering::SeqCst) > phase);
                    }
                },
            );
        }
    });
    assert_eq!(actions.load(Ordering::SeqCst), 20);
}

#[test]
fn a_panicking_phase_action_fails_every_waiter() {
    let rt = runtime(1);
    let failures = AtomicUsize::new(0);
    rt.finish(|s| {
        let ph = Phaser::builder()
            .phase_action(|phase| assert_ne!(phase, 1, "no phase 1 here"))
            .build(s, Mode::SignalWait)
            .unwrap();
        for _ in 0..3 {
            let failures = &failures;
            spawn_phased(
                s,
                ph.register(Mode::SignalWait).unwrap(),
                move |_, mut reg| async move {
                    reg.next().await.unwrap();
                    match reg.next().await {
                        Err(PhaserError::Failed(PhaseFailure::ActionPanicked {
                            phase, ..
                        })) => {
                            assert_eq!(phase, 1);
                            failures.fetch_add(1, Ordering::SeqCst);
                        }
                        other => panic!("phase 1 should have failed: {other:?}"),
                    }
                    assert!(matches!(reg.next().await, Err(PhaserError::Failed(_))));
                },
            );
        }
    });
    assert_eq!(failures.load(Ordering::SeqCst), 3);
}

#[test]
fn panicking_phased_task_is_dropped_and_reraised() {
    let rt = runtime(2);
    let finished = AtomicUsize::new(0);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.finish(|s| {
            let ph = Phaser::new(s, Mode::SignalWait);
            for t in 0..3 {
                let finished = &finished;
                spawn_phased(
                    s,
                    ph.register(Mode::SignalWait).unwrap(),
                    move |_, mut reg| async move {
                        reg.next().await.unwrap();
                        if t == 0 {
                            panic!("task 0 fails in phase 1");
                        }
                        // The others go on: the failed task's drop lets phase 1
                        // complete.
                        reg.next().await.unwrap();
                        reg.next().await.unwrap();
                        finished.fetch_add(1, Ordering::SeqCst);
                    },
                );
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
fn a_panic_before_the_first_await_is_reraised_too() {
    let rt = runtime(1);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.finish(|s| {
            let ph = Phaser::new(s, Mode::SignalWait);
            let other = ph.register(Mode::SignalWait).unwrap();
            spawn_phased(s, ph.register(Mode::SignalWait).unwrap(), |_, _reg| {
                panic!("the body panics before making its future");
                #[allow(unreachable_code)]
                async {}
            });
            spawn_phased(s, other, |_, mut reg| async move {
                // Completes: the panicking task's registration was dropped.
                reg.next().await.unwrap();
            });
        });
    }));
    let payload = result.expect_err("the panic must reach the finish");
    assert_eq!(
        payload.downcast_ref::<&str>(),
        Some(&"the body panics before making its future")
    );
}

#[test]
fn multiple_phasers_per_task() {
    let rt = runtime(2);
    let sums = Mutex::new(Vec::new());
    rt.finish(|s| {
        let barrier = Phaser::new(s, Mode::SignalWait);
        let acc = Phaser::builder()
            .build_accum::<u32>(s, AccumOp::Max, Mode::SignalWait)
            .unwrap();
        for t in 0..3u32 {
            let regs = (
                barrier.register(Mode::SignalWait).unwrap(),
                acc.register(Mode::SignalWait).unwrap(),
            );
            let sums = &sums;
            spawn_phased(s, regs, move |_, (mut b, mut a)| async move {
                for phase in 0..4u32 {
                    b.next().await.unwrap();
                    a.accum_next(t * 10 + phase).await.unwrap();
                    sums.lock().unwrap().push((phase, a.accum_get().unwrap()));
                }
            });
        }
    });
    let sums = sums.into_inner().unwrap();
    assert_eq!(sums.len(), 12);
    for (phase, max) in sums {
        assert_eq!(max, 20 + phase);
    }
}

#[test]
fn the_finish_never_waits_for_the_creator() {
    // The creator's registration is dropped when the finish body returns,
    // however long the body keeps it before: here it registers the tasks,
    // spawns them, and they pass five phases after the body is done.
    let rt = runtime(2);
    let passed = AtomicU64::new(0);
    rt.finish(|s| {
        let creator = Phaser::new(s, Mode::SignalWait);
        for _ in 0..8 {
            let passed = &passed;
            spawn_phased(
                s,
                creator.register(Mode::SignalWait).unwrap(),
                move |_, mut reg| async move {
                    for _ in 0..5 {
                        reg.next().await.unwrap();
                    }
                    passed.fetch_add(1, Ordering::SeqCst);
                },
            );
        }
    });
    assert_eq!(passed.load(Ordering::SeqCst), 8);
}

#[test]
fn an_error_returned_by_a_phased_task_is_reraised_after_it_left_the_phaser() {
    let rt = runtime(2);
    let passed = AtomicUsize::new(0);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.finish(|s| {
            let acc = Phaser::builder()
                .build_accum::<u64>(s, AccumOp::Sum, Mode::SignalWait)
                .unwrap();
            for t in 0..4u64 {
                let passed = &passed;
                spawn_phased(
                    s,
                    acc.register(Mode::SignalWait).unwrap(),
                    move |_, mut reg| async move {
                        if t == 0 {
                            // No phase waited for yet: the task ends with
                            // `NoResult`, and its registration leaves.
                            reg.accum_get()?;
                        }
                        for _ in 0..3 {
                            reg.accum_next(t).await?;
                            assert_eq!(reg.accum_get()?, 1 + 2 + 3);
                        }
                        passed.fetch_add(1, Ordering::SeqCst);
                        Ok::<(), PhaserError>(())
                    },
                );
            }
        });
    }));
    let payload = result.expect_err("the error must reach the finish");
    let message = payload.downcast_ref::<String>().expect("a message");
    assert!(message.contains("accum_get before any"), "{message}");
    assert_eq!(passed.load(Ordering::SeqCst), 3);
}
