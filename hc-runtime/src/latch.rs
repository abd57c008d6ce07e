//! The finish counter.
//!
//! Every finish scope owns one [`CountLatch`]: one unit for the scope's body,
//! one per pending task, one per finish token. The scope is complete when no
//! unit is left.
//!
//! Most units of a scope are given and taken on the thread of its owner (the
//! worker running the `finish`): in divide-and-conquer code the body spawns
//! a task and, unless a thief took it, runs it itself. An atomic
//! read-modify-write per unit would make every such spawn pay two locked
//! instructions for nothing. So the count is split in two parts:
//!
//! - `local`, a plain cell only the owner's thread touches;
//! - `shared`, an atomic for every other thread.
//!
//! Both wrap: a unit given on the owner's thread and taken by a thief makes
//! `local` one higher and `shared` one lower. The number of pending units is
//! `local + shared` (mod 2^64), and only the owner can compute it.
//!
//! # Protocol
//!
//! 1. **Give** a unit: the owner's thread adds 1 to `local`; any other
//!    thread adds 1 to `shared` (`Relaxed`). The giver holds a unit itself
//!    (it runs the body or a task of the scope), so the total cannot be zero
//!    in between, and the new task is published to its executor through the
//!    deque, which carries its own synchronization.
//! 2. **Take** a unit: the owner's thread subtracts 1 from `local`; any
//!    other thread subtracts 1 from `shared` (`Release`) and, if `shared`
//!    went from 1 to 0, wakes the owner. That wake is spurious unless
//!    `local` was 0 (step 4), which costs one more look.
//! 3. **Check** (owner only): complete when `local + shared == 0`, reading
//!    `shared` with `Acquire`.
//! 4. **Fold** (owner only), before it parks: `shared += local` (one RMW),
//!    `local = 0`. From then on `shared` alone is the total, so the remote
//!    take that completes the scope is the one that brings `shared` to 0,
//!    and it wakes the owner (step 2). The owner's parker keeps the wake-up
//!    if it comes before the park.
//!
//! The total never rises from zero: a unit is only given by a holder of
//! another. So completion happens once, and the owner sees it either in a
//! check (3) or by a wake after a fold (4): the fold and the remote takes
//! are RMWs on one atomic, so whichever comes last sees the total reach 0.
//!
//! # Memory ordering
//!
//! Every remote take is a `Release` RMW, and all RMWs on `shared` (takes,
//! gives and folds) form one release sequence; the owner's `Acquire` load
//! in step 3 therefore sees every write made by every task that ran on
//! another thread. Tasks the owner ran itself are ordered by program order.
//!
//! A thread whose take may have completed the scope must not touch it
//! afterwards (the owner may already have returned and freed it); see
//! `ScopeBase::task_completed`, which reads what it needs beforehand.

use std::cell::Cell;

use crate::sync::{AtomicUsize, Ordering};

#[derive(Debug)]
pub(crate) struct CountLatch {
    /// Units given minus units taken on the owner's thread (wrapping).
    local: Cell<usize>,
    /// Units given minus units taken on other threads (wrapping).
    shared: AtomicUsize,
}

// SAFETY: `local` is only touched on the owner's thread (every method that
// does says so in its contract); `shared` is atomic.
unsafe impl Sync for CountLatch {}

impl CountLatch {
    /// A latch holding the unit of the scope's body, given on the owner's
    /// thread.
    pub(crate) fn new() -> CountLatch {
        CountLatch {
            local: Cell::new(1),
            shared: AtomicUsize::new(0),
        }
    }

    /// Step 1 on the owner's thread.
    ///
    /// # Safety
    /// The caller runs on the owner's thread.
    #[inline]
    pub(crate) unsafe fn give_local(&self) {
        self.local.set(self.local.get().wrapping_add(1));
    }

    /// Step 1 on any other thread. The caller must hold a unit itself.
    #[inline]
    pub(crate) fn give_shared(&self) {
        self.shared.fetch_add(1, Ordering::Relaxed);
    }

    /// Step 2 on the owner's thread.
    ///
    /// # Safety
    /// The caller runs on the owner's thread and owns a unit.
    #[inline]
    pub(crate) unsafe fn take_local(&self) {
        self.local.set(self.local.get().wrapping_sub(1));
    }

    /// Step 2 on any other thread; `true` if the owner may be waiting for
    /// this take and must be woken. After it, the caller must not touch the
    /// latch again.
    #[inline]
    pub(crate) fn take_shared(&self) -> bool {
        self.shared.fetch_sub(1, Ordering::Release) == 1
    }

    /// Step 3: whether no unit is left.
    ///
    /// # Safety
    /// The caller runs on the owner's thread.
    #[inline]
    pub(crate) unsafe fn is_complete(&self) -> bool {
        self.local
            .get()
            .wrapping_add(self.shared.load(Ordering::Acquire))
            == 0
    }

    /// Step 4: moves the owner's part into `shared`, so that a remote take
    /// that completes the scope wakes the owner. Call before parking.
    ///
    /// # Safety
    /// The caller runs on the owner's thread.
    #[inline]
    pub(crate) unsafe fn fold(&self) {
        let local = self.local.replace(0);
        if local != 0 {
            self.shared.fetch_add(local, Ordering::Acquire);
        }
    }
}
