//! Submission racing shutdown: no request is left behind un-completed.
//!
//! One atomic word holds the number of submissions in progress and a
//! `CLOSED` bit.
//!
//! # Protocol
//!
//! 1. A submitter adds one to the word. If the value it replaced has
//!    `CLOSED`, it takes its one back and fails its request with
//!    [`Error::Shutdown`](crate::Error::Shutdown). Otherwise it queues its
//!    submission, then subtracts its one (`Release`).
//! 2. Shutdown sets `CLOSED`, then waits for the count to reach zero
//!    (`Acquire`) before draining the worklist one last time.
//!
//! Every step is a read-modify-write of the same word, so they are totally
//! ordered: a submitter's addition comes either after the `CLOSED` bit (it
//! sees it and refuses) or before (shutdown sees it counted and waits for
//! it). The `Release` subtraction that ends a submission publishes its
//! queued task to the shutdown's `Acquire` load of zero. No fence is needed
//! on the submission path. Model-checked in `loom_tests`.
//!
//! # Memory ordering
//!
//! The addition is `Acquire` only to order the refusal check; the ending
//! subtraction is `Release` and the shutdown's wait is `Acquire` (above).

use crate::sync::{yield_now, AtomicUsize, Ordering};

const CLOSED: usize = 1 << (usize::BITS - 1);

/// The submission/shutdown handshake of the module docs.
#[derive(Debug, Default)]
pub(crate) struct SubmitGate {
    state: AtomicUsize,
}

/// Proof of an admitted submission; dropping it ends the submission.
pub(crate) struct Pass<'a>(&'a SubmitGate);

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        // Release: the closer's Acquire load of zero sees the queued task.
        self.0.state.fetch_sub(1, Ordering::Release);
    }
}

impl SubmitGate {
    /// Admits a submission unless the gate is closed (step 1).
    pub(crate) fn enter(&self) -> Option<Pass<'_>> {
        if self.state.fetch_add(1, Ordering::Acquire) & CLOSED != 0 {
            self.state.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        Some(Pass(self))
    }

    /// Closes the gate and waits until every admitted submission is done
    /// (they are short: a queue push) (step 2).
    pub(crate) fn close(&self) {
        self.state.fetch_or(CLOSED, Ordering::AcqRel);
        while self.state.load(Ordering::Acquire) & !CLOSED != 0 {
            yield_now();
        }
    }
}
