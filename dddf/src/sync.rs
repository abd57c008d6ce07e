//! The one place this crate takes its modelled synchronization primitives
//! from: loom's under `--cfg loom`, std's otherwise.
//!
//! The protocols built on them — the home's put/request race, the
//! register-interest-once flag, the termination counters — are checked by
//! the models in `loom_tests`. Threads, channels and MPI requests stay
//! outside the models and import their primitives directly.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Mutex, MutexGuard};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Mutex, MutexGuard};

/// Locks `mutex`, ignoring poisoning: every critical section in this crate
/// leaves its data consistent before anything that can panic runs.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
