//! The full/empty state and waiter list shared by every kind of DDF.
//!
//! A [`DdfCore`] is either *empty*, holding a lock-free (Treiber) stack of
//! waiters, or *full*, marked by the sentinel [`FULL`]. It is the part of a
//! DDF that tasks register on; the value lives beside it in [`Ddf`](super::Ddf)
//! (or in an MPI request, or a distributed DDF).
//!
//! # Put / register race
//!
//! * **register** (a task awaiting the DDF): load `head`; if it is `FULL` the
//!   DDF is already satisfied and the waiter is handed back; otherwise link the
//!   waiter in front of `head` and CAS it in (`AcqRel`), retrying on conflict.
//! * **put**: the value is written first, then `head` is swapped with `FULL`
//!   (`AcqRel`). The swap returns the complete list of waiters that registered
//!   before it; each is notified exactly once, by the putter. A register whose
//!   CAS comes after the swap fails on `FULL` and sees the value.
//!
//! Every waiter is therefore either notified by the put or told at
//! registration that the DDF is full — never both, never neither. This is
//! model-checked in `loom_tests`.
//!
//! # Memory ordering
//!
//! The `Release` half of the swap publishes the value; a reader that observes
//! `FULL` with an `Acquire` load (`is_full`, a failed register) sees it. The
//! CAS of a register is `Release` so that the putter, which `Acquire`s the
//! list with its swap, sees each node's `next` link and contents.
//!
//! # Abandonment
//!
//! A DDF dropped while still empty can never be put. Its waiters are told so
//! (`abandon`) instead of being leaked, which lets the finish scope holding
//! them report the error rather than hang.

use std::ptr::{self, NonNull};

use crate::sync::{AtomicPtr, Ordering};

/// One registration of a waiting task on one DDF.
pub(crate) struct WaiterNode {
    next: *mut WaiterNode,
    waiter: Waiter,
}

/// A type-erased waiting task and the index of this DDF in its await list.
#[derive(Clone, Copy)]
pub(crate) struct Waiter {
    pub(crate) data: *const (),
    pub(crate) index: usize,
    /// Called once if the DDF is put.
    pub(crate) notify: unsafe fn(*const (), usize),
    /// Called once if the DDF is dropped without a put.
    pub(crate) abandon: unsafe fn(*const (), usize),
}

fn full_sentinel() -> *mut WaiterNode {
    // A well-aligned non-null address that no allocation of a `WaiterNode` can
    // have; only ever compared, never dereferenced.
    NonNull::<WaiterNode>::dangling().as_ptr()
}

/// The non-generic part of a data-driven future: empty with waiters, or full.
///
/// Private to the runtime: other crates see it only through the opaque
/// [`Readiness`](crate::Readiness) view, and complete one only through a safe
/// [`Ddf::put`](crate::Ddf::put) or [`Completer`](crate::Completer).
pub(crate) struct DdfCore {
    head: AtomicPtr<WaiterNode>,
}

impl std::fmt::Debug for DdfCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DdfCore")
            .field("full", &self.is_full())
            .finish()
    }
}

impl Default for DdfCore {
    fn default() -> Self {
        Self::new()
    }
}

/// Outcome of [`DdfCore::register`].
pub(crate) enum Registration {
    /// The waiter will be notified (or abandoned) later, exactly once.
    Pending,
    /// The DDF was already full; the waiter was not registered.
    AlreadyFull,
}

impl DdfCore {
    /// An empty core with no waiters.
    pub(crate) fn new() -> Self {
        DdfCore {
            head: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Whether the value has been published.
    pub(crate) fn is_full(&self) -> bool {
        self.head.load(Ordering::Acquire) == full_sentinel()
    }

    /// Registers `waiter`, unless the core is already full.
    pub(crate) fn register(&self, waiter: Waiter) -> Registration {
        let node = Box::into_raw(Box::new(WaiterNode {
            next: ptr::null_mut(),
            waiter,
        }));
        let mut head = self.head.load(Ordering::Acquire);
        loop {
            if head == full_sentinel() {
                // SAFETY: `node` was never published; we still own it.
                drop(unsafe { Box::from_raw(node) });
                return Registration::AlreadyFull;
            }
            // SAFETY: `node` is not yet shared; we are its only user.
            unsafe { (*node).next = head };
            match self
                .head
                .compare_exchange_weak(head, node, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Registration::Pending,
                Err(current) => head = current,
            }
        }
    }

    /// Marks the core full and notifies every registered waiter, oldest first.
    ///
    /// # Safety
    /// Must be called at most once per core (the owner of the value enforces
    /// single assignment before calling), after the value is written.
    pub(crate) unsafe fn set_full(&self) {
        let list = self.head.swap(full_sentinel(), Ordering::AcqRel);
        debug_assert_ne!(list, full_sentinel(), "DdfCore::set_full called twice");
        let notify = |waiter: Waiter| {
            // SAFETY: each registered waiter is notified exactly once.
            unsafe { (waiter.notify)(waiter.data, waiter.index) }
        };
        // SAFETY: the swap detached the list; its nodes are ours alone.
        unsafe { drain_oldest_first(list, notify) };
    }
}

/// Frees the nodes of a detached list, handing each waiter to `each` in the
/// order they registered (the list is a stack, so it is reversed in place).
///
/// # Safety
/// `list` is null or a list of nodes created by `register` that nobody else
/// can reach any more.
unsafe fn drain_oldest_first(list: *mut WaiterNode, mut each: impl FnMut(Waiter)) {
    let mut reversed: *mut WaiterNode = ptr::null_mut();
    let mut rest = list;
    while !rest.is_null() {
        // SAFETY: per the contract, every node of the list is ours alone.
        let next = unsafe { (*rest).next };
        // SAFETY: as above.
        unsafe { (*rest).next = reversed };
        reversed = rest;
        rest = next;
    }
    while !reversed.is_null() {
        // SAFETY: as above; each node is freed exactly once.
        let node = unsafe { Box::from_raw(reversed) };
        reversed = node.next;
        each(node.waiter);
    }
}

impl Drop for DdfCore {
    fn drop(&mut self) {
        let list = self.head.swap(full_sentinel(), Ordering::AcqRel);
        if list == full_sentinel() {
            return;
        }
        let abandon = |waiter: Waiter| {
            // SAFETY: each waiter is told exactly once; it was not notified
            // because the core was never full.
            unsafe { (waiter.abandon)(waiter.data, waiter.index) }
        };
        // SAFETY: `&mut self`: no register or put can run concurrently, and
        // the swap detached the list.
        unsafe { drain_oldest_first(list, abandon) };
    }
}

// SAFETY: the waiter pointers are only handed to their own notify/abandon
// functions, which are written for calls from any thread.
unsafe impl Send for DdfCore {}
// SAFETY: all shared access goes through the atomic `head`.
unsafe impl Sync for DdfCore {}
