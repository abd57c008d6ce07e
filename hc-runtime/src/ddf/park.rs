//! Blocking waits for a DDF: a waiter on the waiting thread's stack.
//!
//! The thread registers a waiter whose notification sets `state` and unparks
//! it: a plain thread parks on a parker of its own; a computation worker
//! keeps running other tasks and parks on its worker parker (see
//! `runtime::wait`), which the notification unparks directly. As in
//! `foreign`, the notifier clones the [`Unparker`] *before* publishing the
//! state: once the state is visible the waiting thread may return and free
//! the waiter, so the notifier must not touch it afterwards.

use std::sync::atomic::{AtomicU8, Ordering};

use crossbeam_utils::sync::{Parker, Unparker};

use super::core::{DdfCore, Registration, Waiter};
use crate::backoff::{Backoff, BackoffPolicy, Snooze};

const WAITING: u8 = 0;
const PUT: u8 = 1;
const ABANDONED: u8 = 2;

pub(crate) struct ThreadWaiter {
    state: AtomicU8,
    unparker: Unparker,
}

impl ThreadWaiter {
    pub(crate) fn new(unparker: Unparker) -> ThreadWaiter {
        ThreadWaiter {
            state: AtomicU8::new(WAITING),
            unparker,
        }
    }

    /// Registers on `core`; `false` if it was already full.
    ///
    /// # Safety
    /// If it returns `true`, `self` must stay where it is until
    /// [`outcome`](Self::outcome) is `Some`.
    pub(crate) unsafe fn register(&self, core: &DdfCore) -> bool {
        let registration = core.register(Waiter {
            data: self as *const ThreadWaiter as *const (),
            index: 0,
            notify: ThreadWaiter::put,
            abandon: ThreadWaiter::abandoned,
        });
        matches!(registration, Registration::Pending)
    }

    /// `None` while waiting; `Some(Err(()))` if the DDF was dropped
    /// without being put.
    pub(crate) fn outcome(&self) -> Option<Result<(), ()>> {
        match self.state.load(Ordering::Acquire) {
            WAITING => None,
            PUT => Some(Ok(())),
            _ => Some(Err(())),
        }
    }

    unsafe fn finish(data: *const (), state: u8) {
        // SAFETY: the waiting thread keeps the waiter alive until `state`
        // leaves WAITING, which happens below, after our last read.
        let this = unsafe { &*(data as *const ThreadWaiter) };
        let unparker = this.unparker.clone();
        this.state.store(state, Ordering::Release);
        unparker.unpark();
    }

    unsafe fn put(data: *const (), _index: usize) {
        // SAFETY: forwarded.
        unsafe { Self::finish(data, PUT) }
    }

    unsafe fn abandoned(data: *const (), _index: usize) {
        // SAFETY: forwarded.
        unsafe { Self::finish(data, ABANDONED) }
    }
}

thread_local! {
    /// The parker of a thread that is not a worker, for its blocking waits.
    /// A wake-up left over from an earlier wait only makes a later one look
    /// again: every wait re-checks its waiter before parking.
    static PARKER: Parker = Parker::new();
}

/// Parks the calling thread until `core` is full.
///
/// # Errors
/// `Err(())` if the DDF was dropped without being put.
pub(crate) fn park_until_full(core: &DdfCore) -> Result<(), ()> {
    PARKER.with(|parker| {
        let waiter = ThreadWaiter::new(parker.unparker().clone());
        // SAFETY: `waiter` stays on this frame until its outcome is known.
        if !unsafe { waiter.register(core) } {
            return Ok(());
        }
        loop {
            match waiter.outcome() {
                None => parker.park(),
                Some(outcome) => return outcome,
            }
        }
    })
}

/// Aborts the process if dropped during an unwind: armed while a polling
/// wait's waiter is registered on the waiting thread's stack, where a
/// panic in the poll must not unwind past it.
struct AbortIfPollUnwinds;

impl AbortIfPollUnwinds {
    fn disarm(self) {
        std::mem::forget(self);
    }
}

impl Drop for AbortIfPollUnwinds {
    #[cold]
    fn drop(&mut self) {
        eprintln!(
            "hc-runtime: the poll of a blocking wait panicked while the wait's waiter was \
             registered; aborting"
        );
        std::process::abort()
    }
}

/// Waits on the calling thread until `core` is full, calling `poll` between
/// the snoozes of `policy` (`poll` returns whether it made progress, which
/// starts the back-off again). Parks with the policy's timeouts; the put
/// unparks the thread at once.
///
/// # Errors
/// `Err(())` if the DDF was dropped without being put.
pub(crate) fn park_polling(
    core: &DdfCore,
    policy: BackoffPolicy,
    mut poll: impl FnMut() -> bool,
) -> Result<(), ()> {
    PARKER.with(|parker| {
        let waiter = ThreadWaiter::new(parker.unparker().clone());
        // SAFETY: `waiter` stays on this frame until its outcome is known:
        // the loop returns only then, and `guard` aborts the process rather
        // than let a panic in `poll` unwind past a registered waiter.
        if !unsafe { waiter.register(core) } {
            return Ok(());
        }
        let guard = AbortIfPollUnwinds;
        let mut backoff = Backoff::new(policy);
        let outcome = loop {
            if let Some(outcome) = waiter.outcome() {
                break outcome;
            }
            if poll() {
                backoff.reset();
                continue;
            }
            if let Snooze::Park(timeout) = backoff.snooze() {
                parker.park_timeout(timeout);
            }
        };
        guard.disarm();
        outcome
    })
}
