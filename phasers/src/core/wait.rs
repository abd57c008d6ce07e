//! The future a task awaits a phase with: it checks, registers its waker
//! on the phaser's list, and is woken by whoever completes the phase,
//! fails the phaser or takes its last signaler away (see `wakers` for the
//! protocol). While pending it holds no worker and no thread.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::Core;
use crate::mode::PhaserError;
use crate::wakers::WaitKey;

/// Completes once a phase is complete (see [`Core::wait_for`]).
#[must_use = "futures do nothing unless awaited"]
pub(crate) struct PhaseWait<'a> {
    core: &'a Core,
    phase: u64,
    /// The slot of this future's waker, once registered.
    key: Option<WaitKey>,
}

impl std::fmt::Debug for PhaseWait<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PhaseWait")
            .field("phase", &self.phase)
            .field("registered", &self.key.is_some())
            .finish()
    }
}

impl<'a> PhaseWait<'a> {
    pub(super) fn new(core: &'a Core, phase: u64) -> PhaseWait<'a> {
        PhaseWait {
            core,
            phase,
            key: None,
        }
    }
}

impl Future for PhaseWait<'_> {
    type Output = Result<(), PhaserError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let (core, phase) = (this.core, this.phase);
        // Step 1 of the waker protocol: the fast path.
        if let Some(outcome) = core.outcome(phase) {
            if let Some(key) = this.key.take() {
                core.wakers.cancel(key);
            }
            return Poll::Ready(outcome);
        }
        // Step 2: check again under the lock, or park.
        let ready = core
            .wakers
            .register_unless(&mut this.key, cx.waker(), || core.outcome(phase).is_some());
        if ready {
            Poll::Ready(core.outcome(phase).expect("a ready wait has an outcome"))
        } else {
            Poll::Pending
        }
    }
}

impl Drop for PhaseWait<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            self.core.wakers.cancel(key);
        }
    }
}
