//! The finish counter.
//!
//! Every finish scope owns one [`CountLatch`]. It starts at 1 for the scope's
//! own body; every task spawned into the scope adds 1 *before* it becomes
//! visible to any other thread and removes 1 after it has run (or, for a task
//! waiting on DDFs, after it has been released and run). The scope is complete
//! when the count reaches zero, which can happen only once because the count
//! never rises from zero: an increment always comes from the body or from a
//! task of the scope, and each of those still holds its own unit.
//!
//! # States
//!
//! | count | meaning                                                      |
//! |-------|--------------------------------------------------------------|
//! | `n>0` | the body and/or `n` (resp. `n - 1`) tasks are still pending |
//! | `0`   | `COMPLETE`: terminal; the owner may return                   |
//!
//! # Memory ordering
//!
//! Each decrement is a `Release` RMW, so all decrements form one release
//! sequence; the owner observes `COMPLETE` with an `Acquire` load and thereby
//! sees every write made by every task of the scope. The increment may be
//! `Relaxed`: the spawning thread still holds a unit, so the count cannot
//! reach zero in between, and the new task is published to its executor
//! through the deque, which carries its own synchronization.
//!
//! The thread whose decrement brings the count to zero must not touch the
//! scope afterwards (the owner may already have returned and freed it); see
//! `ScopeBase::task_completed`, which reads what it needs beforehand.

use crate::sync::{AtomicUsize, Ordering};

/// Terminal value of a [`CountLatch`].
pub(crate) const COMPLETE: usize = 0;

#[derive(Debug)]
pub(crate) struct CountLatch {
    count: AtomicUsize,
}

impl CountLatch {
    /// A latch holding the unit of the scope's body.
    pub(crate) fn new() -> CountLatch {
        CountLatch {
            count: AtomicUsize::new(1),
        }
    }

    /// Adds one pending task. The caller must hold a unit itself.
    pub(crate) fn increment(&self) {
        let previous = self.count.fetch_add(1, Ordering::Relaxed);
        debug_assert_ne!(previous, COMPLETE, "finish counter rose from zero");
    }

    /// Removes one unit; returns `true` for the one call that completes the
    /// latch. After a `true`, the caller must not touch the latch again.
    pub(crate) fn decrement(&self) -> bool {
        let previous = self.count.fetch_sub(1, Ordering::Release);
        debug_assert_ne!(previous, COMPLETE, "finish counter underflow");
        previous == 1
    }

    /// Whether the latch is complete; `Acquire`, see the module docs.
    pub(crate) fn probe(&self) -> bool {
        self.count.load(Ordering::Acquire) == COMPLETE
    }
}
