//! The finish frame: the counter a `finish` waits on, the enclosing-finish
//! thread-local, and the counted tokens that let work which is not a task
//! (an MPI request, a promise) join a finish.
//!
//! A finish frame ([`ScopeBase`]) lives on the stack of the worker running
//! `finish`. It holds a [`CountLatch`] (see `latch`): one unit for the body,
//! one per pending task, one per [`FinishToken`]. The owner does not return,
//! and the frame is not freed, before the count reaches zero.
//!
//! # Joining a finish without a task
//!
//! 1. [`FinishToken::join_enclosing`] adds a unit to the finish whose body or
//!    task is running on this thread (HC's "immediately enclosing finish"),
//!    if any. The caller holds a unit itself, so the total cannot be zero.
//! 2. The token travels with the operation (it is `Send`).
//! 3. Dropping the token gives the unit back, on any thread, and wakes the
//!    owner if it was the last. A [`FinishTie`] holds a token that two
//!    parties may release — whichever comes first (an atomic swap).
//!
//! # Memory ordering
//!
//! As for tasks (see `latch`): a unit given back on another thread is a
//! `Release` RMW that publishes everything the operation did before dropping
//! its token to the owner's `Acquire` check; on the owner's own thread,
//! program order does.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::ddf::Release;
use crate::latch::CountLatch;
use crate::registry::{Registry, WorkerThread};
use crate::sync::{AtomicPtr, Ordering};
use crate::unwind::PanicSlot;

/// The lifetime-free part of a finish scope that tasks and tokens point at.
pub(crate) struct ScopeBase {
    /// Not padded to a cache line of its own: a thread other than the owner
    /// touches the scope only around a stolen task (it reads `owner` and
    /// updates the shared count, both here), while padding would double the
    /// frame of every `finish` and realign the owner's stack for each.
    pub(crate) latch: CachePadded<CountLatch>,
    pub(crate) panic: PanicSlot,
    /// The owner: the worker running `finish`, the one thread that may touch
    /// the latch's local part, and through it the pool. A scope lives on its
    /// owner's stack, below the owner's `WorkerThread` (which lives as long
    /// as the worker's thread), so the pointer is valid for the whole life
    /// of the scope.
    owner: *const WorkerThread,
}

// SAFETY: the owner pointer is valid for the scope's life (see the field);
// through it other threads read only the immutable index and registry (an
// `Arc` of a `Sync` registry); the latch confines its local part to the
// owner's thread.
unsafe impl Sync for ScopeBase {}
// SAFETY: as above.
unsafe impl Send for ScopeBase {}

thread_local! {
    /// The finish scope whose body or task this thread is running (HC's
    /// "immediately enclosing finish"), or null.
    static ENCLOSING: Cell<*const ScopeBase> = const { Cell::new(ptr::null()) };
}

/// Marks `scope` as the enclosing finish while alive; restores the previous
/// one on drop (tasks and finishes nest on a worker's stack).
pub(crate) struct Enclosing(*const ScopeBase);

impl Enclosing {
    #[inline]
    pub(crate) fn enter(scope: *const ScopeBase) -> Enclosing {
        Enclosing(ENCLOSING.with(|cell| cell.replace(scope)))
    }
}

impl Drop for Enclosing {
    #[inline]
    fn drop(&mut self) {
        ENCLOSING.with(|cell| cell.set(self.0));
    }
}

/// The enclosing finish of the caller (null outside any), for work that
/// runs later on behalf of the caller (the second half of a `join`).
#[inline]
pub(crate) fn enclosing() -> *const ScopeBase {
    ENCLOSING.with(Cell::get)
}

/// Clears the enclosing finish while the guard lives (detached tasks,
/// [`outside_finish`](crate::outside_finish)).
pub(crate) fn no_enclosing_finish() -> impl Drop {
    Enclosing::enter(ptr::null())
}

impl ScopeBase {
    pub(crate) fn new(worker: &WorkerThread) -> ScopeBase {
        ScopeBase {
            latch: CachePadded::new(CountLatch::new()),
            panic: PanicSlot::new(),
            owner: worker,
        }
    }

    /// The owner's thread state.
    #[inline]
    fn owner(&self) -> &WorkerThread {
        // SAFETY: valid for the scope's life (see the field).
        unsafe { &*self.owner }
    }

    /// Index of the worker waiting for this scope.
    pub(crate) fn owner_index(&self) -> usize {
        self.owner().index()
    }

    /// Whether `worker` is the owner's: the one thread that may touch the
    /// latch's local part.
    #[inline]
    fn is_owner(&self, worker: Option<&WorkerThread>) -> bool {
        worker.is_some_and(|worker| ptr::eq(worker, self.owner))
    }

    /// Whether `worker` belongs to this scope's pool.
    #[inline]
    pub(crate) fn is_pool_of(&self, worker: &WorkerThread) -> bool {
        ptr::eq(worker, self.owner) || Arc::ptr_eq(worker.registry(), self.owner().registry())
    }

    /// Adds a unit for a new task or token (the latch's step 1). `worker` is
    /// the calling thread's worker, if it is one; the caller holds a unit.
    #[inline]
    pub(crate) fn give_unit(&self, worker: Option<&WorkerThread>) {
        if self.is_owner(worker) {
            // SAFETY: we are on the owner's thread.
            unsafe { self.latch.give_local() }
        } else {
            self.latch.give_shared()
        }
    }

    /// Runs `f`, recording its panic (if any) for the owner.
    #[inline(always)]
    pub(crate) fn run_catching<R>(&self, f: impl FnOnce() -> R) -> Option<R> {
        match panic::catch_unwind(AssertUnwindSafe(f)) {
            Ok(value) => Some(value),
            Err(payload) => {
                self.panic.record(payload);
                None
            }
        }
    }

    /// Gives back a finished task's (or token's) unit, waking the owner if
    /// it may be waiting for it (the latch's step 2).
    ///
    /// # Safety
    /// `this` points to a live scope and the caller owns one unit of its
    /// latch. The scope may be freed as soon as the unit is given back, so
    /// everything needed afterwards is read first.
    #[inline]
    pub(crate) unsafe fn task_completed(this: *const ScopeBase) {
        // SAFETY: the caller's unit keeps the scope alive up to the take.
        let base = unsafe { &*this };
        let worker = WorkerThread::current();
        if base.is_owner(worker) {
            // The owner re-checks the latch in its wait loop: it needs no
            // wake-up for a task it ran itself.
            // SAFETY: we are on the owner's thread and own a unit.
            unsafe { base.latch.take_local() };
        } else {
            // SAFETY: forwarded contract.
            unsafe { Self::remote_task_completed(this, worker) };
        }
    }

    /// `task_completed` on a thread other than the owner's.
    ///
    /// The scope arrives as a raw pointer, and only the latch is borrowed
    /// across the take: a reference argument would assert that the whole
    /// scope stays allocated until this function returns, but the owner
    /// may free it the moment the take completes it. The latch is all
    /// interior mutability (a `Cell` and an atomic), which makes no such
    /// assertion.
    ///
    /// # Safety
    /// As `task_completed`.
    #[cold]
    unsafe fn remote_task_completed(this: *const ScopeBase, worker: Option<&WorkerThread>) {
        // SAFETY: the caller's unit keeps the scope alive up to the take;
        // `base` is not used after it.
        let (owner, registry, same_pool, latch) = unsafe {
            let base = &*this;
            (
                base.owner_index(),
                Arc::as_ptr(base.owner().registry()),
                worker.is_some_and(|worker| base.is_pool_of(worker)),
                &*(*this).latch,
            )
        };
        if same_pool {
            if latch.take_shared() {
                // SAFETY: `worker` holds an Arc of this registry, so it
                // outlives the scope that may be gone by now.
                unsafe { (*registry).wake_finish_owner(owner) };
            }
        } else {
            // Off the pool (a DDF put or a request completed on another
            // thread): hold the registry ourselves across the take.
            // SAFETY: the scope, and through its owner the registry, is
            // alive until the take below.
            let registry = unsafe {
                Arc::increment_strong_count(registry);
                Arc::from_raw(registry)
            };
            if latch.take_shared() {
                registry.wake_finish_owner(owner);
            }
        }
    }

    pub(crate) fn registry(&self) -> &Registry {
        self.owner().registry()
    }

    pub(crate) fn releaser(&self) -> *const dyn Release {
        self.registry() as &dyn Release as *const dyn Release
    }
}

/// Runs a finish scope's body on `worker` (the scope's owner), then every
/// task of the scope; re-raises the first panic.
#[inline(always)]
pub(crate) fn run_finish<R>(
    worker: &WorkerThread,
    base: &ScopeBase,
    body: impl FnOnce() -> R,
) -> R {
    debug_assert!(
        base.is_owner(Some(worker)),
        "a finish waited on by another worker"
    );
    let result = {
        let _enclosing = Enclosing::enter(base);
        base.run_catching(body)
    };
    // SAFETY: `worker` is the owner, on its own thread; this gives back
    // the body's unit.
    unsafe { base.latch.take_local() };
    // SAFETY: both closures run on this thread, the owner's.
    let complete = || unsafe { base.latch.is_complete() };
    if !worker.run_local_until(complete) {
        let _waiting = worker.registry().finish_wait();
        // SAFETY: as above.
        let fold = || unsafe { base.latch.fold() };
        worker.wait_until_folding(complete, fold);
    }
    if let Some(payload) = base.panic.take() {
        panic::resume_unwind(payload);
    }
    result.expect("finish body failed without recording a panic")
}

/// One unit of a finish counter, held by an operation that is not a task
/// (steps 1–3 of the module docs). The finish does not complete while the
/// token exists.
pub(crate) struct FinishToken {
    scope: *const ScopeBase,
}

// SAFETY: the token only gives back a unit of a `Sync` latch, which
// `task_completed` may do from any thread.
unsafe impl Send for FinishToken {}

impl FinishToken {
    /// A unit of the enclosing finish, or `None` outside any finish.
    pub(crate) fn join_enclosing() -> Option<FinishToken> {
        let scope = ENCLOSING.with(Cell::get);
        if scope.is_null() {
            return None;
        }
        // SAFETY: the pointer is set only while this thread runs the scope's
        // body or one of its tasks, each of which holds a unit of its latch.
        unsafe { (*scope).give_unit(WorkerThread::current()) };
        Some(FinishToken { scope })
    }

    fn into_raw(self) -> *const ScopeBase {
        let scope = self.scope;
        std::mem::forget(self);
        scope
    }
}

impl Drop for FinishToken {
    fn drop(&mut self) {
        // SAFETY: the token owns a unit, which keeps the scope alive.
        unsafe { ScopeBase::task_completed(self.scope) };
    }
}

/// A [`FinishToken`] that either of two parties may release, once.
pub(crate) struct FinishTie {
    scope: AtomicPtr<ScopeBase>,
}

impl FinishTie {
    pub(crate) fn new() -> FinishTie {
        FinishTie {
            scope: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Ties the enclosing finish; `false` outside any finish. Called once,
    /// before the tie is shared.
    pub(crate) fn join_enclosing(&self) -> bool {
        match FinishToken::join_enclosing() {
            Some(token) => {
                let previous = self
                    .scope
                    .swap(token.into_raw() as *mut ScopeBase, Ordering::AcqRel);
                debug_assert!(previous.is_null(), "finish tie joined twice");
                true
            }
            None => false,
        }
    }

    /// Gives the unit back if nobody has yet.
    pub(crate) fn release(&self) {
        let scope = self.scope.swap(ptr::null_mut(), Ordering::AcqRel);
        if !scope.is_null() {
            drop(FinishToken { scope });
        }
    }
}

impl Drop for FinishTie {
    fn drop(&mut self) {
        self.release();
    }
}
