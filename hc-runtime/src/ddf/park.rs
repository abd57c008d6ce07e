//! Waiting for a DDF from a thread that is not a computation worker.
//!
//! The thread registers a waiter whose notification sets `state` and unparks
//! it. As in `foreign`, the notifier clones the [`Unparker`] *before*
//! publishing the state: once the state is visible the waiting thread may
//! return and free the waiter, so the notifier must not touch it afterwards.

use std::sync::atomic::{AtomicU8, Ordering};

use crossbeam_utils::sync::{Parker, Unparker};

use super::core::{DdfCore, Registration, Waiter};

const WAITING: u8 = 0;
const PUT: u8 = 1;
const ABANDONED: u8 = 2;

struct ThreadWaiter {
    state: AtomicU8,
    unparker: Unparker,
}

impl ThreadWaiter {
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

/// Parks the calling thread until `core` is full.
///
/// # Errors
/// `Err(())` if the DDF was dropped without being put.
pub(crate) fn park_until_full(core: &DdfCore) -> Result<(), ()> {
    thread_local! {
        static PARKER: Parker = Parker::new();
    }
    PARKER.with(|parker| {
        let waiter = ThreadWaiter {
            state: AtomicU8::new(WAITING),
            unparker: parker.unparker().clone(),
        };
        let registration = core.register(Waiter {
            data: &waiter as *const ThreadWaiter as *const (),
            index: 0,
            notify: ThreadWaiter::put,
            abandon: ThreadWaiter::abandoned,
        });
        if let Registration::AlreadyFull = registration {
            return Ok(());
        }
        loop {
            match waiter.state.load(Ordering::Acquire) {
                WAITING => parker.park(),
                PUT => return Ok(()),
                _ => return Err(()),
            }
        }
    })
}
