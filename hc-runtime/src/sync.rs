//! The one place the runtime takes its synchronization primitives from.
//!
//! Under `--cfg loom` the atomics and cells come from [loom] so that the
//! protocols built on them (finish counter, DDF put/register race, await-any
//! release token) can be model-checked; otherwise they are the `std` ones.
//! Code that must stay outside the models (the deques, thread parking) imports
//! its primitives directly and says so.

#[cfg(loom)]
#[cfg_attr(hcmpi_sanitize_thread, allow(unused_imports))]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU8, AtomicUsize, Ordering,
};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Mutex};

#[cfg(not(loom))]
#[cfg_attr(hcmpi_sanitize_thread, allow(unused_imports))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU8, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Mutex};

/// The acquire half of dropping the last reference: call it after a
/// `fetch_sub(1, Release)` on `refs` returned 1, before freeing what the
/// count kept alive, so that every other owner's last use happens before.
///
/// It is an acquire fence, as in `Arc`; ThreadSanitizer does not model
/// stand-alone fences, so under TSan it is an acquire load of the counter
/// instead (the same synchronization, visible to TSan).
#[inline]
pub(crate) fn acquire_after_release(refs: &AtomicUsize) {
    #[cfg(hcmpi_sanitize_thread)]
    refs.load(Ordering::Acquire);
    #[cfg(not(hcmpi_sanitize_thread))]
    {
        let _ = refs;
        fence(Ordering::Acquire);
    }
}

/// An `UnsafeCell` whose accesses loom can track.
///
/// The closure-based API is loom's; the `std` variant is a zero-cost wrapper.
#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(data: T) -> Self {
        UnsafeCell(std::cell::UnsafeCell::new(data))
    }

    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
