//! loom models of the sub-phaser protocol: the signal hand-off between
//! members of a leaf and up the tree, drops racing with signals, a child
//! registration racing with a phase, the waiter parking protocol, and
//! counting events (a post racing a blocking wait or a trigger registration).
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p phasers --release --lib loom`.

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;

use crate::builder::Phaser;
use crate::mode::Mode;
use crate::tree::{Combiner, Tree};
use crate::word::Op;

fn sum() -> Option<Combiner> {
    Some(Combiner {
        identity: 0,
        combine: |a, b| a + b,
    })
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
        let parent = Phaser::builder()
            .tree(2, 2)
            .build(Mode::SignalWait)
            .unwrap();
        let mut other = parent.register(Mode::SignalWait).unwrap();
        let child_signaled = Arc::new(AtomicBool::new(false));
        let t = {
            let child_signaled = Arc::clone(&child_signaled);
            thread::spawn(move || {
                let mut parent = parent;
                let mut child = parent.register(Mode::SignalOnly).unwrap();
                parent.signal().unwrap();
                child_signaled.store(true, Ordering::SeqCst);
                child.signal().unwrap();
                drop(child);
                parent.wait().unwrap();
            })
        };
        other.next().unwrap();
        assert!(
            child_signaled.load(Ordering::SeqCst),
            "phase 0 completed without the child"
        );
        t.join().unwrap();
    });
}

/// A waiter parks while the last signaler completes the phase: the
/// wake-up is not lost (the waiter returns, loom checks it terminates).
#[test]
fn loom_waiter_is_woken() {
    loom::model(|| {
        let mut waiter = Phaser::builder().flat().build(Mode::SignalWait).unwrap();
        let mut signaler = waiter.register(Mode::SignalOnly).unwrap();
        let t = thread::spawn(move || signaler.signal().unwrap());
        waiter.next().unwrap();
        assert_eq!(waiter.phase(), 1);
        t.join().unwrap();
    });
}

/// A post races a blocking `wait(2)` that must register and park: the
/// waiter is released exactly when both posts are in, takes both, and
/// its wake-up is not lost.
#[test]
fn loom_event_post_races_blocking_wait() {
    loom::model(|| {
        let ev = crate::event::Event::new();
        ev.post().unwrap();
        let t = {
            let ev = ev.clone();
            thread::spawn(move || ev.post().unwrap())
        };
        ev.wait(2).unwrap();
        assert_eq!(ev.query(), 0);
        t.join().unwrap();
        assert_eq!(ev.query(), 0);
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
