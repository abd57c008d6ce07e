//! The engine role: exactly one holder at a time steps the engine, and a
//! submission that arrives while the holder lets go is never stranded.
//!
//! In shared placement any computation worker (or a thread waiting for a
//! request) may step the engine, and MPI is initialized with
//! `MPI_THREAD_SERIALIZED`: MPI calls must never overlap. The role is a
//! flag taken with a compare-and-swap; nobody ever blocks on it — a thread
//! that finds it taken leaves the work to the holder.
//!
//! # Protocol
//!
//! 1. **Submit.** A submitter pushes its submission on the worklist, issues
//!    a `SeqCst` fence, then tries to take the role ([`Holder::run`]).
//! 2. **Hold.** The thread that takes the role steps the engine: it drains
//!    the worklist and polls MPI. Nobody else touches the engine's state.
//! 3. **Let go.** The holder clears the flag (`Release`), issues a `SeqCst`
//!    fence, then looks at the worklist again. If it is not empty, it tries
//!    to take the role again and, if it gets it, steps again (2).
//!
//! Steps 1 and 3 are the two halves of a store-buffering (Dekker) pattern:
//! either the submitter's try in step 1 sees the flag clear and takes the
//! role itself, or the holder's look in step 3 sees the submission. A
//! submission is therefore never left in the worklist with nobody about to
//! take it. Both properties — one holder, nothing stranded — are
//! model-checked in `loom_tests`.
//!
//! # Memory ordering
//!
//! Taking the role is an `Acquire` CAS and letting go a `Release` store, so
//! each holder sees everything the previous one did to the engine's state
//! (a mutex's guarantee). The `SeqCst` fences order each side's write before
//! its read of the other's.

use crate::sync::{fence, AtomicBool, Ordering};

/// The engine role (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Holder {
    held: AtomicBool,
}

impl Holder {
    /// Runs `step` as the holder if the role is free, and again while
    /// `has_submissions` says a submission arrived as it let go (step 3).
    /// Returns whether any step made progress, or `None` if another thread
    /// holds the role.
    pub(crate) fn run(
        &self,
        has_submissions: impl Fn() -> bool,
        mut step: impl FnMut() -> bool,
    ) -> Option<bool> {
        if !self.try_take() {
            return None;
        }
        let mut progress = false;
        loop {
            progress |= step();
            self.held.store(false, Ordering::Release);
            fence(Ordering::SeqCst);
            if !has_submissions() || !self.try_take() {
                return Some(progress);
            }
        }
    }

    /// Takes the role, waiting for the holder to let go (shutdown only).
    pub(crate) fn take_blocking(&self) {
        let mut backoff = hc_runtime::Backoff::new(hc_runtime::BackoffPolicy::WAIT);
        while !self.try_take() {
            if let hc_runtime::Snooze::Park(timeout) = backoff.snooze() {
                std::thread::park_timeout(timeout);
            }
        }
    }

    /// Lets go of a role taken with [`take_blocking`](Self::take_blocking).
    pub(crate) fn release(&self) {
        self.held.store(false, Ordering::Release);
        fence(Ordering::SeqCst);
    }

    fn try_take(&self) -> bool {
        // The plain load keeps a contended flag's cache line shared.
        !self.held.load(Ordering::Relaxed)
            && self
                .held
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }
}
