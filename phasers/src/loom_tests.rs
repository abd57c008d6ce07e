//! loom models of the phaser protocols: the signal hand-off between members
//! of a leaf and up the tree, drops racing with signals, a child
//! registration racing with a phase, a waiter's waker registration racing
//! with the phase's completion, the hand-off of a phase to its collective's
//! completion, and counting events (a post racing an awaited wait, a
//! withdrawal or a trigger registration).
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p hcmpi-phasers --release --lib loom`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Wake, Waker};

use hc_runtime::Promise;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

use crate::builder::PhaserBuilder;
use crate::global::{GlobalStage, PendingPhase};
use crate::mode::Mode;
use crate::registration::Registration;
use crate::tree::{Combiner, Tree};
use crate::word::Op;

/// Runs `future` on the calling loom thread, parking it while pending: a
/// wake-up unparks it (and a lost one leaves the model deadlocked, which
/// loom reports).
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(thread::Thread);

    impl Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }

    let waker = Waker::from(std::sync::Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        thread::park();
    }
}

fn sum() -> Option<Combiner> {
    Some(Combiner {
        identity: 0,
        combine: |a, b| a + b,
    })
}

/// A phaser outside any finish (the models have no runtime).
fn phaser(builder: PhaserBuilder, mode: Mode) -> Registration<'static, ()> {
    builder.create(None, None, mode).unwrap()
}

/// Two members of one leaf signal at once: exactly one of them completes
/// the phase (becomes the master), and it sees both values.
#[test]
fn loom_leaf_signal_hand_off() {
    loom::model(|| {
        let tree = Arc::new(Tree::new(1, 2, sum()));
        let a = tree.join(0, None).unwrap();
        let b = tree.join(0, Some(a)).unwrap();
        let t = {
            let tree = Arc::clone(&tree);
            thread::spawn(move || tree.report(b, Op::Signal(0), 2).completed_up_to)
        };
        let mine = tree.report(a, Op::Signal(0), 1).completed_up_to;
        let theirs = t.join().unwrap();
        assert_eq!(mine.is_some() as u8 + theirs.is_some() as u8, 1);
        assert_eq!(mine.or(theirs), Some(1));
        assert_eq!(tree.take_root(0), 3);
    });
}

/// Members of two leaves: the last arriver at each leaf is its
/// sub-master and carries the signal to the root; one root completion.
#[test]
fn loom_sub_master_carries_signal_up() {
    loom::model(|| {
        let tree = Arc::new(Tree::new(2, 2, sum()));
        let a = tree.join(0, None).unwrap();
        let b = tree.join(0, Some(a)).unwrap();
        assert_ne!(a, b);
        let t = {
            let tree = Arc::clone(&tree);
            thread::spawn(move || tree.report(b, Op::Signal(0), 20).completed_up_to)
        };
        let mine = tree.report(a, Op::Signal(0), 1).completed_up_to;
        let theirs = t.join().unwrap();
        assert_eq!(mine.is_some() as u8 + theirs.is_some() as u8, 1);
        assert_eq!(tree.take_root(0), 21);
    });
}

/// A drop that vacates a leaf races with a signal on the other leaf: the
/// phase completes exactly once and keeps the dropped leaf's earlier value.
#[test]
fn loom_drop_vacates_while_other_leaf_signals() {
    loom::model(|| {
        let tree = Arc::new(Tree::new(2, 2, sum()));
        let a = tree.join(0, None).unwrap();
        let b = tree.join(0, Some(a)).unwrap();
        let c = tree.join(0, Some(b)).unwrap();
        // Leaf of `a` holds a and c; b is alone. b signals 0 with 5 first.
        assert_eq!(c, a);
        assert_eq!(tree.report(b, Op::Signal(0), 5).completed_up_to, None);
        let t = {
            let tree = Arc::clone(&tree);
            // b leaves at cursor 1: its leaf vacates.
            thread::spawn(move || tree.report(b, Op::Drop(1), 0).completed_up_to)
        };
        let first = tree.report(a, Op::Signal(0), 1).completed_up_to;
        let second = tree.report(c, Op::Signal(0), 1).completed_up_to;
        let dropped = t.join().unwrap();
        let completions = [first, second, dropped]
            .iter()
            .filter(|x| x.is_some())
            .count();
        assert_eq!(completions, 1);
        assert_eq!(tree.take_root(0), 7);
    });
}

/// A registered task creates a child (activating a vacant leaf) while the
/// other member signals: the phase must wait for the child's signal.
#[test]
fn loom_child_registration_races_with_phase() {
    loom::model(|| {
        let parent = phaser(PhaserBuilder::default().tree(2, 2), Mode::SignalWait);
        let mut other = parent.register(Mode::SignalWait).unwrap();
        let child_signaled = Arc::new(AtomicBool::new(false));
        let t = {
            let child_signaled = Arc::clone(&child_signaled);
            thread::spawn(move || {
                let mut parent = parent;
                let mut child = parent.register(Mode::SignalOnly).unwrap();
                block_on(parent.signal()).unwrap();
                child_signaled.store(true, Ordering::SeqCst);
                block_on(child.signal()).unwrap();
                drop(child);
                block_on(parent.wait()).unwrap();
            })
        };
        block_on(other.next()).unwrap();
        assert!(
            child_signaled.load(Ordering::SeqCst),
            "phase 0 completed without the child"
        );
        t.join().unwrap();
    });
}

/// A waiter registers its waker while the last signaler completes the
/// phase: the wake-up is not lost (the waiter's future completes, and
/// loom checks that the model terminates), and nothing stays registered.
#[test]
fn loom_waiter_is_woken() {
    loom::model(|| {
        let mut waiter = phaser(PhaserBuilder::default().flat(), Mode::SignalWait);
        let mut signaler = waiter.register(Mode::SignalOnly).unwrap();
        let t = thread::spawn(move || block_on(signaler.signal()).unwrap());
        block_on(waiter.next()).unwrap();
        assert_eq!(waiter.phase(), 1);
        t.join().unwrap();
        assert_eq!(waiter.core().parked_waiters(), 0);
    });
}

/// A collective whose completion happens on a thread of its own, as the
/// communication engine's would.
#[derive(Debug)]
struct ThreadedCollective {
    completions: Arc<Mutex<Vec<thread::JoinHandle<()>>>>,
}

impl GlobalStage for ThreadedCollective {
    fn fuzzy(&self) -> bool {
        false
    }

    fn start(&self, _phase: u64, local: u64) -> Result<Box<dyn PendingPhase>, crate::PhaseFailure> {
        let (completer, promise) = hc_runtime::promise();
        let completion = thread::spawn(move || completer.complete(local * 10));
        self.completions.lock().unwrap().push(completion);
        Ok(Box::new(PromisedPhase(promise)))
    }
}

#[derive(Debug)]
struct PromisedPhase(Promise<u64>);

impl PendingPhase for PromisedPhase {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Result<u64, crate::PhaseFailure>> {
        Pin::new(&mut self.0)
            .poll(cx)
            // An abandoned promise: the model's collective gave no value.
            .map(|outcome| outcome.map_err(|_| crate::PhaseFailure::NoValue { op: "collective" }))
    }
}

/// The phase goes to its collective (started by the last local arrival)
/// and the collective's completion, on another thread, publishes it and
/// wakes the waiters — whether it completes before the pipeline polls it,
/// during the poll (the re-poll), or after it parked. Exactly one result
/// is published and both waiters read it.
#[test]
fn loom_collective_completion_releases_the_waiters() {
    loom::model(|| {
        let completions = Arc::new(Mutex::new(Vec::new()));
        let stage = ThreadedCollective {
            completions: Arc::clone(&completions),
        };
        let mut first: Registration<'static, u64> = PhaserBuilder::default()
            .flat()
            .create(sum(), Some(Box::new(stage)), Mode::SignalWait)
            .unwrap();
        let mut second = first.register(Mode::SignalWait).unwrap();
        let t = thread::spawn(move || {
            block_on(second.accum_next(2)).unwrap();
            second.accum_get().unwrap()
        });
        block_on(first.accum_next(1)).unwrap();
        assert_eq!(first.accum_get(), Ok(30));
        assert_eq!(t.join().unwrap(), 30);
        assert_eq!(first.handle().completed_phases(), 1);
        for completion in completions.lock().unwrap().drain(..) {
            completion.join().unwrap();
        }
    });
}

/// A post races an awaited `wait(2)` that must register and park: the
/// waiter is released exactly when both posts are in, takes both, and
/// its wake-up is not lost.
#[test]
fn loom_event_post_races_awaited_wait() {
    loom::model(|| {
        let ev = crate::event::Event::new();
        ev.post().unwrap();
        let t = {
            let ev = ev.clone();
            thread::spawn(move || ev.post().unwrap())
        };
        block_on(ev.wait(2)).unwrap();
        assert_eq!(ev.query(), 0);
        t.join().unwrap();
        assert_eq!(ev.query(), 0);
    });
}

/// A wait withdrawn (its future dropped) while a post arrives: either the
/// wait took the post before it was dropped, or the trigger queued behind
/// it gets it — never both, never neither.
#[test]
fn loom_event_withdrawal_races_post() {
    loom::model(|| {
        let ev = crate::event::Event::new();
        let wait = ev.wait(1);
        let behind = ev.when(1).unwrap();
        let t = {
            let ev = ev.clone();
            thread::spawn(move || ev.post().unwrap())
        };
        drop(wait);
        t.join().unwrap();
        // One post, one consumer served: the wait or the trigger.
        let taken_by_trigger = behind.has_fired();
        assert_eq!(ev.query(), 0);
        ev.post().unwrap();
        assert!(behind.has_fired());
        assert_eq!(ev.query(), u64::from(taken_by_trigger));
    });
}

/// Posts race a trigger's registration: whichever comes first, the
/// trigger fires exactly once, exactly when the count reaches its `n`, and
/// takes exactly `n`.
#[test]
fn loom_event_post_races_trigger_registration() {
    loom::model(|| {
        let ev = crate::event::Event::new();
        let t = {
            let ev = ev.clone();
            thread::spawn(move || {
                ev.post().unwrap();
                ev.post_n(2).unwrap();
            })
        };
        let trigger = ev.when(2).unwrap();
        let seen = ev.query();
        t.join().unwrap();
        assert!(trigger.has_fired());
        assert!(hc_runtime::Awaitable::is_ready(&trigger));
        assert_eq!(ev.query(), 1);
        // Never more than the posts made so far, minus what was taken.
        assert!(seen <= 3);
    });
}

/// Two members of a strict stale accumulator, on two threads: whichever
/// contributes last publishes the phase and wakes the other (or the other
/// sees it before parking); both read the whole sum of the phase.
#[test]
fn loom_stale_members_meet_at_a_phase() {
    use crate::ssp::{Reduction, Snapshot, StaleAccum, Staleness};
    use crate::AccumOp;

    loom::model(|| {
        // Members borrow the accumulator; a model's threads need 'static.
        let acc: &'static StaleAccum<u64> = Box::leak(Box::new(StaleAccum::local(
            Reduction::op(AccumOp::Sum).unwrap(),
            Staleness::Bounded(0),
        )));
        let (mut a, mut b) = (acc.join(), acc.join());
        let t = thread::spawn(move || block_on(a.advance(1)).unwrap());
        let mine = block_on(b.advance(2)).unwrap();
        let theirs = t.join().unwrap();
        let whole = Some(Snapshot { phase: 0, value: 3 });
        assert_eq!((mine, theirs), (whole, whole));
    });
}
