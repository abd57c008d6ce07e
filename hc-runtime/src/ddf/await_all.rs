//! Data-driven tasks with an AND list: run once every dependency is put.
//!
//! # Protocol
//!
//! The task record holds `pending`, initialized to `deps + 1`: one unit per
//! dependency plus one held by the creator while it registers. Each
//! dependency gives its unit back exactly once — at registration if it was
//! already full, or later from its put (or its drop, for a DDF that can never
//! be put). The creator gives its own unit back after registering on all of
//! them, so the task cannot be released while registration is still going on.
//! Whoever takes `pending` to zero releases the task: it is pushed to the
//! scheduler through [`Release`].
//!
//! # Memory ordering
//!
//! `pending` is decremented with `AcqRel`, so the thread that reaches zero has
//! acquired every earlier decrement, and with it each putter's value; the
//! scheduler hand-off then publishes the record to the executing worker.

use super::core::{DdfCore, Registration, Waiter};
use super::Release;
use crate::job::JobRef;
use crate::sync::{AtomicBool, AtomicUsize, Ordering};

/// How an AND-list task was released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AllOutcome {
    /// Every dependency was put.
    Ready,
    /// At least one dependency was dropped without a put.
    Abandoned,
}

struct AllJob<F> {
    pending: AtomicUsize,
    abandoned: AtomicBool,
    releaser: *const dyn Release,
    body: F,
}

/// Creates a task that runs `body` once every core in `deps` is full.
///
/// # Safety
/// `releaser` must stay valid until the task has been released, and `body`'s
/// borrows until it has run (a finish scope guarantees both).
pub(crate) unsafe fn spawn_await_all<F>(deps: &[&DdfCore], releaser: *const dyn Release, body: F)
where
    F: FnOnce(AllOutcome) + Send,
{
    let job = Box::into_raw(Box::new(AllJob {
        pending: AtomicUsize::new(deps.len() + 1),
        abandoned: AtomicBool::new(false),
        releaser,
        body,
    }));
    for (index, dep) in deps.iter().enumerate() {
        let waiter = Waiter {
            data: job as *const (),
            index,
            notify: AllJob::<F>::dependency_put,
            abandon: AllJob::<F>::dependency_abandoned,
        };
        if let Registration::AlreadyFull = dep.register(waiter) {
            // SAFETY: the creator's unit keeps the record alive.
            unsafe { AllJob::<F>::arrive(job) };
        }
    }
    // SAFETY: gives back the creator's unit; the record is ours until then.
    unsafe { AllJob::<F>::arrive(job) };
}

impl<F: FnOnce(AllOutcome) + Send> AllJob<F> {
    /// Gives back one unit of `pending`; releases the task on the last one.
    ///
    /// # Safety
    /// `this` is a live record and the caller owns one unit of it.
    unsafe fn arrive(this: *mut Self) {
        // SAFETY: the caller's unit keeps the record alive until this RMW.
        let last = unsafe { (*this).pending.fetch_sub(1, Ordering::AcqRel) } == 1;
        if last {
            // SAFETY: all units are back; only we can reach the record now.
            // The releaser outlives the release (spawn contract).
            unsafe {
                let releaser = &*(*this).releaser;
                releaser.release(JobRef::new(this as *const (), Self::execute));
            }
        }
    }

    unsafe fn dependency_put(data: *const (), _index: usize) {
        // SAFETY: registered waiters hold one unit each.
        unsafe { Self::arrive(data as *mut Self) }
    }

    unsafe fn dependency_abandoned(data: *const (), _index: usize) {
        let this = data as *mut Self;
        // SAFETY: as in `dependency_put`; the flag is read after `pending`
        // reaches zero, which the AcqRel decrement below orders after this.
        unsafe {
            (*this).abandoned.store(true, Ordering::Relaxed);
            Self::arrive(this);
        }
    }

    unsafe fn execute(data: *const ()) {
        // SAFETY: released records are executed exactly once and own
        // themselves from then on.
        let job = unsafe { Box::from_raw(data as *mut Self) };
        let outcome = if job.abandoned.load(Ordering::Relaxed) {
            AllOutcome::Abandoned
        } else {
            AllOutcome::Ready
        };
        (job.body)(outcome);
    }
}
