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
//! zero before draining the worklist one last time. Each side writes its own
//! flag, issues a `SeqCst` fence, then reads the other's (a store-buffering
//! pattern): either the submitter sees `closed` and fails its request with
//! [`Error::Shutdown`](crate::Error::Shutdown), or the worker sees the
//! submission in flight and drains it afterwards. The `Release` decrement
//! that ends a submission publishes its queued task to the worker's
//! `Acquire` load. No request is left behind un-completed.

use crossbeam_queue::{ArrayQueue, SegQueue};
use crossbeam_utils::sync::Unparker;

use crate::op::Operation;
use crate::request::Outcome;
use crate::sync::{fence, AtomicBool, AtomicUsize, Ordering};
use crate::task::CommTask;
use crate::Error;

/// Records kept for reuse; beyond this, finished records are freed.
const POOL_CAPACITY: usize = 4096;

pub(crate) struct Shared {
    worklist: SegQueue<Box<CommTask>>,
    pool: ArrayQueue<Box<CommTask>>,
    unparker: Unparker,
    gate: SubmitGate,
}

impl Shared {
    pub(crate) fn new(unparker: Unparker) -> Shared {
        Shared {
            worklist: SegQueue::new(),
            pool: ArrayQueue::new(POOL_CAPACITY),
            unparker,
            gate: SubmitGate::new(),
        }
    }

    /// Hands `op` to the communication worker (ALLOCATED → PRESCRIBED).
    pub(crate) fn submit(&self, op: Operation, name: &'static str) {
        let Some(pass) = self.gate.enter() else {
            fail_shutdown(op, name);
            return;
        };
        if let Some(request) = op.request() {
            // HC semantics: a communication task belongs to the finish that
            // encloses the task creating it, so `finish { irecv(..) }`
            // returns only once the message is in (Fig. 3 of the paper).
            request.join_enclosing_finish();
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
        drop(pass);
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
        self.gate.close();
    }

    /// Wakes the communication worker (shutdown request).
    pub(crate) fn wake_worker(&self) {
        self.unparker.unpark();
    }
}

/// The submission/shutdown handshake of the module docs, on its own so the
/// loom model checks exactly this code.
pub(crate) struct SubmitGate {
    submitting: AtomicUsize,
    closed: AtomicBool,
}

/// Proof of an admitted submission; dropping it ends the submission.
pub(crate) struct Pass<'a>(&'a SubmitGate);

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        // Release: the closer's Acquire load of zero sees the queued task.
        self.0.submitting.fetch_sub(1, Ordering::Release);
    }
}

impl SubmitGate {
    pub(crate) fn new() -> Self {
        SubmitGate {
            submitting: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
        }
    }

    /// Admits a submission unless the gate is closed.
    pub(crate) fn enter(&self) -> Option<Pass<'_>> {
        self.submitting.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if self.closed.load(Ordering::Relaxed) {
            self.submitting.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        Some(Pass(self))
    }

    /// Closes the gate and waits until every admitted submission is done
    /// (they are short: a queue push).
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        while self.submitting.load(Ordering::Acquire) != 0 {
            crate::sync::yield_now();
        }
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
