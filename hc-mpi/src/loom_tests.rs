//! loom models of the communication worker's hand-off protocols.
//!
//! Run with `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p
//! hc-mpi --release --lib loom`. The queues are modelled by loom mutexes;
//! the state word and the submission gate are the real code.

use std::collections::VecDeque;

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

use crate::shared::SubmitGate;
use crate::task::{state, CommTask};

/// A submission racing shutdown is either refused (and failed by the
/// submitter) or seen by the final drain — never lost.
#[test]
fn loom_submission_racing_shutdown_is_never_lost() {
    loom::model(|| {
        let gate = Arc::new(SubmitGate::new());
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
        // Anything pushed after the drain would be lost: there must be none.
        assert_eq!(
            queue.lock().unwrap().len(),
            drained,
            "a submission slipped past shutdown"
        );
        assert_eq!(drained + refused.load(Ordering::Relaxed), 2);
    });
}

/// A record travels submitter → worker → pool → submitter; every
/// `transition_to_*` sees the state the protocol promises (they panic
/// otherwise).
#[test]
fn loom_task_record_lifecycle_hand_off() {
    loom::model(|| {
        let worklist: Arc<Mutex<VecDeque<Box<CommTask>>>> = Arc::new(Mutex::new(VecDeque::new()));
        let pool: Arc<Mutex<Vec<Box<CommTask>>>> = Arc::new(Mutex::new(Vec::new()));
        let worker = {
            let (worklist, pool) = (worklist.clone(), pool.clone());
            thread::spawn(move || {
                let mut handled = 0;
                while handled < 2 {
                    let next = worklist.lock().unwrap().pop_front();
                    match next {
                        Some(mut task) => {
                            task.transition_to_active();
                            task.transition_to_completed();
                            task.transition_to_available();
                            assert_eq!(task.state(), state::AVAILABLE);
                            pool.lock().unwrap().push(task);
                            handled += 1;
                        }
                        None => thread::yield_now(),
                    }
                }
            })
        };
        for _ in 0..2 {
            let recycled = pool.lock().unwrap().pop();
            let mut task = match recycled {
                Some(task) => {
                    task.transition_to_allocated();
                    task
                }
                None => CommTask::new_allocated(),
            };
            task.op = Some(crate::op::Operation::Cancel {
                target: crate::request::RequestCell::new(),
            });
            task.transition_to_prescribed();
            worklist.lock().unwrap().push_back(task);
        }
        worker.join().unwrap();
        let recycled = pool.lock().unwrap().len();
        assert!(
            (1..=2).contains(&recycled),
            "{recycled} records in the pool"
        );
    });
}
