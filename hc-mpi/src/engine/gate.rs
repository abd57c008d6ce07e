//! Submission racing shutdown: no request is left behind un-completed.
//!
//! # Protocol
//!
//! 1. A submitter increments `submitting`, issues a `SeqCst` fence, then
//!    checks `closed`. Closed: it takes its increment back and fails its
//!    request with [`Error::Shutdown`](crate::Error::Shutdown). Open: it
//!    queues its submission and decrements `submitting` (`Release`).
//! 2. Shutdown sets `closed`, issues a `SeqCst` fence, then waits for
//!    `submitting` to reach zero (`Acquire`) before draining the worklist
//!    one last time.
//!
//! Each side writes its own flag, fences, then reads the other's (a
//! store-buffering pattern): either the submitter sees `closed`, or the
//! shutdown sees the submission in flight and drains it afterwards. The
//! `Release` decrement that ends a submission publishes its queued task to
//! the shutdown's `Acquire` load. Model-checked in `loom_tests`.

use crate::sync::{fence, yield_now, AtomicBool, AtomicUsize, Ordering};

/// The submission/shutdown handshake of the module docs.
#[derive(Debug, Default)]
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
    /// Admits a submission unless the gate is closed (step 1).
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
    /// (they are short: a queue push) (step 2).
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        while self.submitting.load(Ordering::Acquire) != 0 {
            yield_now();
        }
    }
}
