//! `finish` scopes and the tasks spawned into them.
//!
//! A [`Scope`] is the handle a `finish` body and its tasks use to spawn more
//! tasks. Like [`std::thread::scope`], tasks may borrow anything that outlives
//! the `finish` call: `finish` does not return before every task spawned into
//! its scope — directly or by other tasks of the scope — has completed.
//!
//! The owner (the worker running `finish`) does not block while it waits: it
//! executes other tasks, and parks only when there are none (see `sleep`).
//!
//! A panic in the body or in any task is caught, the remaining tasks still
//! run to completion, and the first panic is re-raised from `finish`.

use std::cell::Cell;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use crate::ddf::{self, AllOutcome, AnyOutcome, Awaitable, DdfCore, Release, ABANDONED_MESSAGE};
use crate::job::{HeapJob, SendPtr};
use crate::latch::CountLatch;
use crate::registry::{Registry, WorkerThread};
use crate::unwind::PanicSlot;
use crossbeam_utils::CachePadded;

/// A finish scope: spawn tasks with [`spawn`](Scope::spawn) and data-driven
/// tasks with [`spawn_await`](Scope::spawn_await) /
/// [`spawn_await_any`](Scope::spawn_await_any).
///
/// Obtained from [`finish`](crate::finish) or
/// [`Runtime::finish`](crate::Runtime::finish).
pub struct Scope<'scope> {
    base: ScopeBase,
    marker: Invariant<'scope>,
}

/// Makes `Scope` invariant in `'scope`, as `std::thread::Scope` and rayon's
/// `Scope` are: a scope must not be usable as one with a longer lifetime.
type Invariant<'scope> = PhantomData<Box<dyn FnOnce(&Scope<'scope>) + Send + Sync + 'scope>>;

/// The lifetime-free part of a scope that tasks point at.
struct ScopeBase {
    /// On its own cache line: every task completion writes it, while the
    /// fields below are only read.
    latch: CachePadded<CountLatch>,
    panic: PanicSlot,
    /// The owner's pool. A scope lives on its owner worker's stack, and that
    /// worker holds an `Arc` of the registry, so the pointer is valid for the
    /// whole life of the scope (no reference count traffic per finish).
    registry: *const Registry,
    /// Index of the worker waiting for this scope.
    owner: usize,
}

// SAFETY: the registry pointer is valid for the scope's life (see the field)
// and `Registry` is `Sync`; the other fields are `Sync` themselves.
unsafe impl Sync for ScopeBase {}
// SAFETY: as above.
unsafe impl Send for ScopeBase {}

impl std::fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("owner", &self.base.owner)
            .field("complete", &self.base.latch.probe())
            .finish_non_exhaustive()
    }
}

thread_local! {
    /// The finish scope whose body or task this thread is running (HC's
    /// "immediately enclosing finish"), or null.
    static ENCLOSING: Cell<*const ScopeBase> = const { Cell::new(std::ptr::null()) };
}

/// Marks `scope` as the enclosing finish while alive; restores the previous
/// one on drop (tasks and finishes nest on a worker's stack).
struct Enclosing(*const ScopeBase);

impl Enclosing {
    fn enter(scope: *const ScopeBase) -> Enclosing {
        Enclosing(ENCLOSING.with(|cell| cell.replace(scope)))
    }
}

impl Drop for Enclosing {
    fn drop(&mut self) {
        ENCLOSING.with(|cell| cell.set(self.0));
    }
}

/// Clears the enclosing finish while the guard lives (detached tasks).
pub(crate) fn no_enclosing_finish() -> impl Drop {
    Enclosing::enter(std::ptr::null())
}

/// Makes the enclosing finish (if any) also wait until `dep` is ready;
/// `keep_alive` is held until then (it should own whatever keeps `dep`'s
/// core alive). Returns whether there was an enclosing finish.
pub(crate) fn join_enclosing(dep: &dyn Awaitable, keep_alive: impl Send + 'static) -> bool {
    let scope = ENCLOSING.with(Cell::get);
    if scope.is_null() {
        return false;
    }
    // SAFETY: the pointer is set only while this thread runs the scope's
    // body or one of its tasks, each of which holds a unit of its latch.
    let base = unsafe { &*scope };
    base.latch.increment();
    let scope = SendPtr::new(scope);
    let task = move |outcome: AllOutcome| {
        drop(keep_alive);
        // SAFETY: the unit added above keeps the scope alive.
        let base = unsafe { &*scope.get() };
        if outcome == AllOutcome::Abandoned {
            base.panic.record(Box::new(ABANDONED_MESSAGE));
        }
        // SAFETY: gives back that unit.
        unsafe { ScopeBase::task_completed(base) };
    };
    // SAFETY: the registry outlives the scope, which waits for this task.
    unsafe { ddf::spawn_await_all(&[dep.ddf_core()], base.releaser(), task) };
    true
}

/// Runs a finish scope on `worker`: the body, then every task of the scope.
pub(crate) fn finish_on_worker<'scope, OP, R>(worker: &WorkerThread, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    let scope = Scope::<'scope> {
        base: ScopeBase {
            latch: CachePadded::new(CountLatch::new()),
            panic: PanicSlot::new(),
            registry: Arc::as_ptr(worker.registry()),
            owner: worker.index(),
        },
        marker: PhantomData,
    };
    let result = {
        let _enclosing = Enclosing::enter(&scope.base);
        scope.base.run_catching(|| op(&scope))
    };
    // The body's unit. The owner needs no wake-up: it checks the latch next.
    scope.base.latch.decrement();
    worker.wait_until(|| scope.base.latch.probe());
    if let Some(payload) = scope.base.panic.take() {
        panic::resume_unwind(payload);
    }
    result.expect("finish body failed without recording a panic")
}

impl ScopeBase {
    /// Runs `f`, recording its panic (if any) for the owner.
    fn run_catching<R>(&self, f: impl FnOnce() -> R) -> Option<R> {
        match panic::catch_unwind(AssertUnwindSafe(f)) {
            Ok(value) => Some(value),
            Err(payload) => {
                self.panic.record(payload);
                None
            }
        }
    }

    /// Gives back a finished task's unit, waking the owner on the last one.
    ///
    /// # Safety
    /// `this` points to a live scope and the caller owns one unit of its
    /// latch. The scope may be freed as soon as the unit is given back, so
    /// everything needed afterwards is read first.
    unsafe fn task_completed(this: *const ScopeBase) {
        // SAFETY: the caller's unit keeps the scope alive up to the decrement.
        let base = unsafe { &*this };
        let owner = base.owner;
        let registry = base.registry;
        match WorkerThread::current() {
            Some(worker) if std::ptr::eq(Arc::as_ptr(worker.registry()), registry) => {
                // The owner re-checks the latch in its wait loop: it needs no
                // wake-up for a task it ran itself.
                let is_owner = worker.index() == owner;
                if base.latch.decrement() && !is_owner {
                    // SAFETY: `worker` holds an Arc of this registry, so it
                    // outlives the scope that may be gone by now.
                    unsafe { (*registry).wake_finish_owner(owner) };
                }
            }
            _ => {
                // Off the pool (a DDF dropped on another thread): hold the
                // registry ourselves across the decrement.
                // SAFETY: the scope, and through its owner the registry, is
                // alive until the decrement below.
                let registry = unsafe {
                    Arc::increment_strong_count(registry);
                    Arc::from_raw(registry)
                };
                if base.latch.decrement() {
                    registry.wake_finish_owner(owner);
                }
            }
        }
    }

    fn registry(&self) -> &Registry {
        // SAFETY: valid for the scope's life (see the field).
        unsafe { &*self.registry }
    }

    fn releaser(&self) -> *const dyn Release {
        self.registry() as &dyn Release as *const dyn Release
    }
}

impl<'scope> Scope<'scope> {
    /// Spawns `body` as a task of this scope (HC's `async`).
    ///
    /// The task may run on any worker, before, after or in parallel with the
    /// rest of the caller. It receives the scope so it can spawn more tasks
    /// into it.
    pub fn spawn<F>(&self, body: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.base.latch.increment();
        let scope = SendPtr::new(self as *const Scope<'scope>);
        let task = move || {
            // SAFETY: the unit added above keeps the scope alive until
            // `task_completed`.
            let scope = unsafe { &*scope.get() };
            {
                let _enclosing = Enclosing::enter(&scope.base);
                scope.base.run_catching(|| body(scope));
            }
            // SAFETY: gives back the unit this task owns.
            unsafe { ScopeBase::task_completed(&scope.base) };
        };
        // SAFETY: the finish owner does not return, and so no borrow of
        // `'scope` ends, before this task has run (its unit is pending).
        let job = unsafe { HeapJob::into_job_ref(task) };
        self.base.registry().push(job);
    }

    /// Spawns `body` as a data-driven task (HC's `async await(deps…)`): it
    /// becomes runnable once every one of `deps` has been put.
    ///
    /// An empty list makes it runnable at once. If a dependency is dropped
    /// without ever being put, the task cannot run: the scope records a panic
    /// saying so, which `finish` raises, instead of waiting forever.
    pub fn spawn_await<F>(&self, deps: &[&dyn Awaitable], body: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.base.latch.increment();
        let scope = SendPtr::new(self as *const Scope<'scope>);
        let task = move |outcome: AllOutcome| {
            // SAFETY: as in `spawn`.
            let scope = unsafe { &*scope.get() };
            match outcome {
                AllOutcome::Ready => {
                    let _enclosing = Enclosing::enter(&scope.base);
                    scope.base.run_catching(|| body(scope));
                }
                AllOutcome::Abandoned => {
                    drop(body);
                    scope.base.panic.record(Box::new(ABANDONED_MESSAGE));
                }
            }
            // SAFETY: gives back the unit this task owns.
            unsafe { ScopeBase::task_completed(&scope.base) };
        };
        let cores = cores_of(deps);
        // SAFETY: the registry (held by the scope) and the borrows of `body`
        // outlive the task, whose unit the finish owner waits for.
        unsafe { ddf::spawn_await_all(&cores, self.base.releaser(), task) };
    }

    /// Spawns `body` as a data-driven task on an OR list: it becomes runnable
    /// once any one of `deps` has been put, and runs exactly once even if
    /// several are put concurrently. It receives the index (in `deps`) of the
    /// dependency that released it.
    ///
    /// # Panics
    /// If `deps` is empty (such a task could never run).
    pub fn spawn_await_any<F>(&self, deps: &[&dyn Awaitable], body: F)
    where
        F: FnOnce(&Scope<'scope>, usize) + Send + 'scope,
    {
        assert!(
            !deps.is_empty(),
            "spawn_await_any needs at least one dependency: an empty OR list can never be satisfied"
        );
        self.base.latch.increment();
        let scope = SendPtr::new(self as *const Scope<'scope>);
        let task = move |outcome: AnyOutcome| {
            // SAFETY: as in `spawn`.
            let scope = unsafe { &*scope.get() };
            match outcome {
                AnyOutcome::Ready(index) => {
                    let _enclosing = Enclosing::enter(&scope.base);
                    scope.base.run_catching(|| body(scope, index));
                }
                AnyOutcome::Abandoned => {
                    drop(body);
                    scope.base.panic.record(Box::new(ABANDONED_MESSAGE));
                }
            }
            // SAFETY: gives back the unit this task owns.
            unsafe { ScopeBase::task_completed(&scope.base) };
        };
        let cores = cores_of(deps);
        // SAFETY: as in `spawn_await`.
        unsafe { ddf::spawn_await_any(&cores, self.base.releaser(), task) };
    }

    /// Number of computation workers in the pool this scope runs on.
    pub fn num_workers(&self) -> usize {
        self.base.registry().num_workers()
    }
}

fn cores_of<'a>(deps: &'a [&'a dyn Awaitable]) -> dep_list::DepCores<'a> {
    dep_list::DepCores::new(deps)
}

/// A tiny inline buffer so the common short await lists need no allocation.
mod dep_list {
    use super::{Awaitable, DdfCore};

    const INLINE: usize = 4;

    pub(super) enum DepCores<'a> {
        Inline([&'a DdfCore; INLINE], usize),
        Heap(Vec<&'a DdfCore>),
    }

    impl<'a> DepCores<'a> {
        pub(super) fn new(deps: &'a [&'a dyn Awaitable]) -> Self {
            if deps.len() <= INLINE {
                let placeholder = match deps.first() {
                    Some(first) => first.ddf_core(),
                    None => return DepCores::Heap(Vec::new()),
                };
                let mut inline = [placeholder; INLINE];
                for (slot, dep) in inline.iter_mut().zip(deps) {
                    *slot = dep.ddf_core();
                }
                DepCores::Inline(inline, deps.len())
            } else {
                DepCores::Heap(deps.iter().map(|d| d.ddf_core()).collect())
            }
        }
    }

    impl<'a> std::ops::Deref for DepCores<'a> {
        type Target = [&'a DdfCore];

        fn deref(&self) -> &Self::Target {
            match self {
                DepCores::Inline(cores, len) => &cores[..*len],
                DepCores::Heap(cores) => cores,
            }
        }
    }
}
