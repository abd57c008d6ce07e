//! The one place this crate takes its synchronization primitives from.
//! (`Arc` around a whole phaser is `std`'s: it is not part of any model.)
//!
//! Under `--cfg loom` the atomics, mutexes and thread parking come from
//! [loom] so that the sub-phaser protocol (`word`, `tree`) and the waiter
//! list (`waiters`) can be model-checked; otherwise they are the `std` ones.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread::{current as current_thread, park, yield_now, Thread};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread::{current as current_thread, park, yield_now, Thread};

/// Locks `mutex`, ignoring poisoning: every critical section in this crate
/// leaves its data consistent before anything in it can panic.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A busy-wait hint: a CPU pause normally, a scheduling point under loom.
pub(crate) fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}
