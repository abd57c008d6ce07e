//! Waiting for a DDF with a [`std::task::Waker`]: what makes a `Ddf`, a
//! request or any [`Awaitable`](crate::Awaitable) usable with `.await`.
//!
//! A future registers one waiter node on the DDF's core, the first time it
//! is polled while the core is empty. The node carries a reference to a
//! [`WakerSlot`] the future shares; later polls only update the waker in the
//! slot, so a future polled many times still costs one node.
//!
//! # Protocol (waker registration racing a put)
//!
//! 1. **First poll.** If the core is full, the future is ready. Otherwise it
//!    stores its waker in a new slot and registers the slot on the core; a
//!    registration that finds the core full is ready at once.
//! 2. **Put.** The putter swaps the core to full, then notifies each node:
//!    it marks the slot `NOTIFIED`, then takes the waker under the slot's
//!    lock and wakes it (outside the lock).
//! 3. **Later polls.** A slot marked `NOTIFIED` means ready. Otherwise the
//!    future replaces the stored waker under the lock if the task's waker
//!    changed, then checks the core again.
//!
//! No wake-up is lost: if step 3's lock comes after the putter's, the future
//! sees the core full in its re-check; if it comes before, the putter takes
//! the new waker. This race is model-checked in `loom_tests`.
//!
//! # Memory ordering
//!
//! The core's `AcqRel` swap publishes the value; `NOTIFIED` is stored with
//! `Release` after that swap and read with `Acquire`, so a future that sees
//! it also sees the value. The slot's mutex orders a waker update against
//! the putter's take.

use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::core::{DdfCore, Registration, Waiter};
use crate::sync::{Arc, AtomicU8, Mutex, Ordering};

const WAITING: u8 = 0;
const NOTIFIED: u8 = 1;
const ABANDONED: u8 = 2;

/// The waker of one awaiting future, shared with its node on the core.
pub(crate) struct WakerSlot {
    state: AtomicU8,
    waker: Mutex<Option<Waker>>,
}

impl WakerSlot {
    fn finish(data: *const (), state: u8) {
        // SAFETY: the node owns one strong reference, given at registration
        // and consumed here, once (notify or abandon, never both).
        let slot = unsafe { Arc::from_raw(data as *const WakerSlot) };
        slot.state.store(state, Ordering::Release);
        let waker = slot.waker.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    unsafe fn notify(data: *const (), _index: usize) {
        Self::finish(data, NOTIFIED);
    }

    unsafe fn abandon(data: *const (), _index: usize) {
        Self::finish(data, ABANDONED);
    }
}

/// The state a future keeps to wait for one core: at most one registration.
#[derive(Default)]
pub(crate) struct WaitRegistration {
    slot: Option<Arc<WakerSlot>>,
}

/// Why a registration stopped waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woken {
    /// The core is full.
    Full,
    /// The core was dropped without becoming full.
    Abandoned,
}

impl WaitRegistration {
    /// Polls for `core` to become full, registering `cx`'s waker (steps 1
    /// and 3 of the protocol).
    pub(crate) fn poll(&mut self, core: &DdfCore, cx: &mut Context<'_>) -> Poll<Woken> {
        if core.is_full() {
            return Poll::Ready(Woken::Full);
        }
        match &self.slot {
            None => {
                let slot = Arc::new(WakerSlot {
                    state: AtomicU8::new(WAITING),
                    waker: Mutex::new(Some(cx.waker().clone())),
                });
                let waiter = Waiter {
                    data: Arc::into_raw(Arc::clone(&slot)) as *const (),
                    index: 0,
                    notify: WakerSlot::notify,
                    abandon: WakerSlot::abandon,
                };
                match core.register(waiter) {
                    Registration::Pending => {
                        self.slot = Some(slot);
                        Poll::Pending
                    }
                    Registration::AlreadyFull => {
                        // SAFETY: the node was not published; its reference
                        // is ours to drop.
                        drop(unsafe { Arc::from_raw(waiter.data as *const WakerSlot) });
                        Poll::Ready(Woken::Full)
                    }
                }
            }
            Some(slot) => {
                match slot.state.load(Ordering::Acquire) {
                    NOTIFIED => return Poll::Ready(Woken::Full),
                    ABANDONED => return Poll::Ready(Woken::Abandoned),
                    _ => {}
                }
                {
                    let mut stored = slot.waker.lock().unwrap_or_else(|e| e.into_inner());
                    match &*stored {
                        Some(waker) if waker.will_wake(cx.waker()) => {}
                        _ => *stored = Some(cx.waker().clone()),
                    }
                }
                if core.is_full() {
                    Poll::Ready(Woken::Full)
                } else {
                    Poll::Pending
                }
            }
        }
    }
}

impl Drop for WaitRegistration {
    fn drop(&mut self) {
        // The node stays on the core until it is put; drop our waker now so
        // that a put long after this future is gone wakes nobody.
        if let Some(slot) = &self.slot {
            slot.waker.lock().unwrap_or_else(|e| e.into_inner()).take();
        }
    }
}

/// A future that completes when an [`Awaitable`](crate::Awaitable) is ready:
/// see [`ready`](crate::ready).
#[must_use = "futures do nothing unless awaited"]
pub struct Ready<'a> {
    core: &'a DdfCore,
    registration: WaitRegistration,
}

impl<'a> Ready<'a> {
    pub(crate) fn new(core: &'a DdfCore) -> Self {
        Ready {
            core,
            registration: WaitRegistration::default(),
        }
    }
}

impl std::fmt::Debug for Ready<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ready")
            .field("ready", &self.core.is_full())
            .finish()
    }
}

impl std::future::Future for Ready<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        match this.registration.poll(this.core, cx) {
            Poll::Ready(Woken::Full) => Poll::Ready(()),
            // A borrowed core cannot be dropped while this future exists;
            // reaching this is a bug in an `Awaitable` implementation.
            Poll::Ready(Woken::Abandoned) => panic!("{}", super::ABANDONED_MESSAGE),
            Poll::Pending => Poll::Pending,
        }
    }
}
