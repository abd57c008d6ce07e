//! Data-driven tasks with an OR list: run once any one dependency is put.
//!
//! Several dependencies may be put concurrently; the task must still be
//! released exactly once. As in Fig. 12 of the HCMPI paper, the task record
//! carries a [`ReleaseToken`]: every would-be releaser tries to take it, and
//! only the one that does pushes the task.
//!
//! # Protocol
//!
//! * The record is reference counted (`refs`): one reference for the creator
//!   while it registers, one per successful registration, one for the
//!   released job. The last reference frees it, so a put arriving long after
//!   the task ran still finds a live record.
//! * The creator registers on the dependencies in order. A dependency that is
//!   already full makes the creator try the token itself; once the token is
//!   taken the creator stops registering.
//! * A put on a registered dependency tries the token; success releases the
//!   task with that dependency's index. Either way it drops its reference.
//! * A dependency dropped without a put decrements `remaining`; when none
//!   remains the task can never be satisfied and is released as abandoned
//!   (if the token is still free), so its finish scope reports the error.
//!
//! # Memory ordering
//!
//! The token swap is `AcqRel`: the winner acquires the put it reacts to. The
//! fired index is written before the job is handed to the scheduler, whose
//! queue publishes it. `refs` follows `Arc`: `Release` decrements and an
//! `Acquire` fence before freeing.

use std::cell::Cell;

use super::core::{DdfCore, Registration, Waiter};
use super::Release;
use crate::job::JobRef;
use crate::sync::{acquire_after_release, AtomicBool, AtomicUsize, Ordering, UnsafeCell};

/// How an OR-list task was released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AnyOutcome {
    /// The dependency at this index (in the await list) was put first.
    Ready(usize),
    /// Every dependency was dropped without a put.
    Abandoned,
}

/// The token bit: taken at most once over the lifetime of a task.
#[derive(Debug)]
pub(crate) struct ReleaseToken {
    taken: AtomicBool,
}

impl ReleaseToken {
    pub(crate) fn new() -> Self {
        ReleaseToken {
            taken: AtomicBool::new(false),
        }
    }

    /// `true` for exactly one caller.
    pub(crate) fn try_take(&self) -> bool {
        // The plain load avoids a contended RMW once the token is gone.
        !self.taken.load(Ordering::Relaxed) && !self.taken.swap(true, Ordering::AcqRel)
    }

    pub(crate) fn is_taken(&self) -> bool {
        self.taken.load(Ordering::Acquire)
    }
}

const ABANDONED: usize = usize::MAX;

struct AnyJob<F> {
    refs: AtomicUsize,
    token: ReleaseToken,
    remaining: AtomicUsize,
    /// Written only by the token holder, before the job is published.
    fired: Cell<usize>,
    releaser: *const dyn Release,
    body: UnsafeCell<Option<F>>,
}

/// Creates a task that runs `body` with the index of the first dependency
/// put. `deps` must not be empty.
///
/// # Safety
/// As for [`spawn_await_all`](super::spawn_await_all).
pub(crate) unsafe fn spawn_await_any<F>(deps: &[&DdfCore], releaser: *const dyn Release, body: F)
where
    F: FnOnce(AnyOutcome) + Send,
{
    assert!(!deps.is_empty(), "await-any needs at least one dependency");
    let job = Box::into_raw(Box::new(AnyJob {
        refs: AtomicUsize::new(1),
        token: ReleaseToken::new(),
        remaining: AtomicUsize::new(deps.len()),
        fired: Cell::new(ABANDONED),
        releaser,
        body: UnsafeCell::new(Some(body)),
    }));
    for (index, dep) in deps.iter().enumerate() {
        // SAFETY: the creator's reference keeps the record alive throughout.
        let record = unsafe { &*job };
        if record.token.is_taken() {
            break;
        }
        record.refs.fetch_add(1, Ordering::Relaxed);
        let waiter = Waiter {
            data: job as *const (),
            index,
            notify: AnyJob::<F>::dependency_put,
            abandon: AnyJob::<F>::dependency_abandoned,
        };
        if let Registration::AlreadyFull = dep.register(waiter) {
            // SAFETY: the registration failed, so its reference is ours to
            // drop; the creator's keeps the record alive.
            unsafe {
                AnyJob::<F>::drop_ref(job);
                AnyJob::<F>::try_fire(job, index);
            }
            break;
        }
    }
    // SAFETY: the creator's reference.
    unsafe { AnyJob::<F>::drop_ref(job) };
}

impl<F: FnOnce(AnyOutcome) + Send> AnyJob<F> {
    /// Takes the token if it is free and releases the task with `index`.
    ///
    /// # Safety
    /// The caller holds a reference to the live record.
    unsafe fn try_fire(this: *mut Self, index: usize) {
        // SAFETY: the caller's reference keeps the record alive.
        let record = unsafe { &*this };
        if record.token.try_take() {
            record.fired.set(index);
            record.refs.fetch_add(1, Ordering::Relaxed);
            // SAFETY: the job owns the reference just added; the releaser
            // outlives the release (spawn contract).
            unsafe { (*record.releaser).release(JobRef::new(this as *const (), Self::execute)) };
        }
    }

    /// # Safety
    /// The caller owns one reference, which this consumes.
    unsafe fn drop_ref(this: *mut Self) {
        // SAFETY: the reference being dropped keeps the record alive here.
        if unsafe { (*this).refs.fetch_sub(1, Ordering::Release) } == 1 {
            // SAFETY: not freed yet; only this thread can still reach it.
            acquire_after_release(unsafe { &(*this).refs });
            // SAFETY: that was the last reference.
            drop(unsafe { Box::from_raw(this) });
        }
    }

    unsafe fn dependency_put(data: *const (), index: usize) {
        let this = data as *mut Self;
        // SAFETY: the registration's reference is consumed here.
        unsafe {
            Self::try_fire(this, index);
            Self::drop_ref(this);
        }
    }

    unsafe fn dependency_abandoned(data: *const (), _index: usize) {
        let this = data as *mut Self;
        // SAFETY: the registration's reference is consumed here.
        unsafe {
            if (*this).remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                Self::try_fire(this, ABANDONED);
            }
            Self::drop_ref(this);
        }
    }

    unsafe fn execute(data: *const ()) {
        let this = data as *mut Self;
        // SAFETY: executed once, by the job that holds the token's reference;
        // nobody else touches `body` or `fired` after the token was taken.
        unsafe {
            let body = (*this).body.with_mut(|slot| (*slot).take());
            let fired = (*this).fired.get();
            let outcome = if fired == ABANDONED {
                AnyOutcome::Abandoned
            } else {
                AnyOutcome::Ready(fired)
            };
            if let Some(body) = body {
                body(outcome);
            }
            Self::drop_ref(this);
        }
    }
}

impl<F> Drop for AnyJob<F> {
    fn drop(&mut self) {
        // An unreleased body (the creator stopped early; cannot happen with
        // a taken token) is dropped here with the record.
        self.body.with_mut(|slot| {
            // SAFETY: `&mut self`: exclusive.
            drop(unsafe { (*slot).take() })
        });
    }
}
