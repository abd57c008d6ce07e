//! The one place this crate takes its synchronization primitives from.
//! (`Arc` around a whole phaser is `std`'s: it is not part of any model.)
//!
//! Under `--cfg loom` the atomics and mutexes come from [loom] so that the
//! sub-phaser protocol (`word`, `tree`), the waker list (`wakers`), the
//! completion hand-off (`core::pipeline`) and counting events can be
//! model-checked; otherwise they are the `std` ones.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};

/// Locks `mutex`, ignoring poisoning: every critical section in this crate
/// leaves its data consistent before anything in it can panic.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
