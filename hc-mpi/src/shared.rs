//! The hand-off between computation tasks and the communication worker.
//!
//! Computation tasks (and any other thread) submit communication tasks into
//! a lock-free worklist and unpark the communication worker; finished records
//! come back through a bounded pool for reuse.
//!
//! # Submission and shutdown
//!
//! A submitter increments `submitting`, then checks `closed`; the worker, when
//! it shuts down, sets `closed` and then waits for `submitting` to drop to
//! zero before draining the worklist one last time. Both sides use `SeqCst`
//! (a store-buffering pattern): either the submitter sees `closed` and fails
//! its request with [`Error::Shutdown`](crate::Error::Shutdown), or the worker
//! sees the submission in flight and drains it afterwards. No request is left
//! behind un-completed.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crossbeam_queue::{ArrayQueue, SegQueue};
use crossbeam_utils::sync::Unparker;
use crossbeam_utils::Backoff;

use crate::op::Operation;
use crate::request::Outcome;
use crate::task::CommTask;
use crate::Error;

/// Records kept for reuse; beyond this, finished records are freed.
const POOL_CAPACITY: usize = 4096;

pub(crate) struct Shared {
    worklist: SegQueue<Box<CommTask>>,
    pool: ArrayQueue<Box<CommTask>>,
    unparker: Unparker,
    submitting: AtomicUsize,
    closed: AtomicBool,
}

impl Shared {
    pub(crate) fn new(unparker: Unparker) -> Shared {
        Shared {
            worklist: SegQueue::new(),
            pool: ArrayQueue::new(POOL_CAPACITY),
            unparker,
            submitting: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
        }
    }

    /// Hands `op` to the communication worker (ALLOCATED → PRESCRIBED).
    pub(crate) fn submit(&self, op: Operation, name: &'static str) {
        self.submitting.fetch_add(1, Ordering::SeqCst);
        if self.closed.load(Ordering::SeqCst) {
            self.submitting.fetch_sub(1, Ordering::SeqCst);
            fail_shutdown(op, name);
            return;
        }
        let mut task = match self.pool.pop() {
            Some(task) => {
                task.transition_to_allocated();
                task
            }
            None => CommTask::new_allocated(),
        };
        task.op = Some(op);
        task.transition_to_prescribed();
        self.worklist.push(task);
        self.submitting.fetch_sub(1, Ordering::SeqCst);
        self.unparker.unpark();
    }

    /// Next prescribed task, on the communication worker.
    pub(crate) fn pop(&self) -> Option<Box<CommTask>> {
        self.worklist.pop()
    }

    /// Returns a finished record to the pool (COMPLETED → AVAILABLE).
    pub(crate) fn recycle(&self, mut task: Box<CommTask>) {
        task.transition_to_available();
        let _ = self.pool.push(task);
    }

    /// Stops accepting submissions and waits out the ones in progress.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let backoff = Backoff::new();
        while self.submitting.load(Ordering::SeqCst) != 0 {
            backoff.snooze();
        }
    }

    /// Wakes the communication worker (shutdown request).
    pub(crate) fn wake_worker(&self) {
        self.unparker.unpark();
    }
}

/// Completes `op`'s request with [`Error::Shutdown`].
pub(crate) fn fail_shutdown(op: Operation, name: &'static str) {
    if let Some(request) = op.request().cloned() {
        request.complete(Outcome {
            result: Err(Error::Shutdown { op: name }),
            owned: None,
        });
    }
}
