//! loom models of the engine's hand-off protocols.
//!
//! Run with `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p
//! hc-mpi --release --lib loom`. The worklist is modelled by a loom mutex;
//! the engine role (`engine::holder`) and the submission gate
//! (`engine::gate`) are the real code.

use std::collections::VecDeque;

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

use crate::engine::{Holder, SubmitGate};

/// A submission racing shutdown is either refused (and failed by the
/// submitter) or seen by the final drain — never lost.
#[test]
fn loom_submission_racing_shutdown_is_never_lost() {
    loom::model(|| {
        let gate = Arc::new(SubmitGate::default());
        let queue = Arc::new(Mutex::new(VecDeque::new()));
        let refused = Arc::new(AtomicUsize::new(0));
        let submitters: Vec<_> = (0..2)
            .map(|i| {
                let (gate, queue, refused) = (gate.clone(), queue.clone(), refused.clone());
                thread::spawn(move || match gate.enter() {
                    Some(pass) => {
                        queue.lock().unwrap().push_back(i);
                        drop(pass);
                    }
                    None => {
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        gate.close();
        let drained = queue.lock().unwrap().len();
        for submitter in submitters {
            submitter.join().unwrap();
        }
        assert_eq!(
            drained + refused.load(Ordering::Relaxed),
            2,
            "a submission was neither drained nor refused"
        );
    });
}

/// A lock-free worklist as the engine sees it (a `SegQueue`): pushes and
/// pops are atomic read-modify-writes, emptiness a plain load. A mutex
/// would add ordering the real queue does not give.
#[derive(Default)]
struct Worklist {
    pending: AtomicUsize,
}

impl Worklist {
    fn push(&self) {
        self.pending.fetch_add(1, Ordering::Release);
    }

    fn pop(&self) -> bool {
        let mut current = self.pending.load(Ordering::Acquire);
        while current > 0 {
            match self.pending.compare_exchange(
                current,
                current - 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(actual) => current = actual,
            }
        }
        false
    }

    fn is_empty(&self) -> bool {
        self.pending.load(Ordering::Acquire) == 0
    }
}

/// The engine role in shared placement: two submitters each push a
/// submission and try to step the engine, while a worker steps it. At most
/// one thread holds the role at any time, and every submission is applied
/// by the time all three are done — none is stranded in the worklist.
#[test]
fn loom_engine_role_has_one_holder_and_strands_nothing() {
    loom::model(|| {
        let holder = Arc::new(Holder::default());
        let worklist = Arc::new(Worklist::default());
        let holding = Arc::new(AtomicUsize::new(0));
        let applied = Arc::new(AtomicUsize::new(0));

        let step = {
            let (worklist, holding, applied) = (worklist.clone(), holding.clone(), applied.clone());
            move || {
                assert_eq!(
                    holding.fetch_add(1, Ordering::SeqCst),
                    0,
                    "two holders of the engine role"
                );
                let mut progress = false;
                while worklist.pop() {
                    applied.fetch_add(1, Ordering::SeqCst);
                    progress = true;
                }
                holding.fetch_sub(1, Ordering::SeqCst);
                progress
            }
        };
        let has_submissions = {
            let worklist = worklist.clone();
            move || !worklist.is_empty()
        };

        let submitters: Vec<_> = (0..2)
            .map(|_| {
                let (holder, worklist) = (holder.clone(), worklist.clone());
                let (step, has_submissions) = (step.clone(), has_submissions.clone());
                thread::spawn(move || {
                    worklist.push();
                    // Protocol step 1, as in `Engine::submit`.
                    loom::sync::atomic::fence(Ordering::SeqCst);
                    holder.run(has_submissions, step);
                })
            })
            .collect();
        // An idle worker polling meanwhile.
        holder.run(has_submissions.clone(), step.clone());
        for submitter in submitters {
            submitter.join().unwrap();
        }
        assert_eq!(
            applied.load(Ordering::SeqCst),
            2,
            "a submission was stranded in the worklist"
        );
    });
}
