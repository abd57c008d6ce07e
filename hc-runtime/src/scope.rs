//! `finish` scopes and the tasks spawned into them.
//!
//! A [`Scope`] is the handle a `finish` body and its tasks use to spawn more
//! tasks. As with [`std::thread::scope`], there are two lifetimes:
//! `'scope`, the life of the scope itself (the `finish` call), and `'env`,
//! the data borrowed from outside it. Tasks may borrow anything that
//! outlives `'scope`, including the scope: `finish` does not return before
//! every task spawned into its scope — directly or by other tasks of the
//! scope — has completed. A `&'scope Scope` cannot escape the `finish`:
//!
//! ```compile_fail
//! let mut escaped = None;
//! hc_runtime::finish(|s| escaped = Some(s));
//! ```
//!
//! and a task cannot borrow what dies before the finish ends:
//!
//! ```compile_fail
//! hc_runtime::finish(|s| {
//!     let local = 1;
//!     s.spawn(|_| println!("{}", local));
//! });
//! ```
//!
//! Tasks must be `Send`, like the data they capture:
//!
//! ```compile_fail
//! let shared = std::rc::Rc::new(1);
//! hc_runtime::finish(|s| s.spawn(move |_| println!("{shared}")));
//! ```
//!
//! two tasks cannot both borrow the same data mutably:
//!
//! ```compile_fail
//! let mut count = 0;
//! hc_runtime::finish(|s| {
//!     s.spawn(|_| count += 1);
//!     s.spawn(|_| count += 1);
//! });
//! ```
//!
//! a task spawned by a task cannot borrow that task's locals (the child may
//! run after its parent returned):
//!
//! ```compile_fail
//! hc_runtime::finish(|s| {
//!     s.spawn(|s| {
//!         let local = vec![1];
//!         s.spawn(|_| println!("{:?}", local));
//!     });
//! });
//! ```
//!
//! and the scope cannot leave its `finish` as its result:
//!
//! ```compile_fail
//! let scope = hc_runtime::finish(|s| s);
//! ```
//!
//! The owner (the worker running `finish`) does not block while it waits: it
//! executes other tasks, and parks only when there are none (see `sleep`).
//!
//! A panic in the body or in any task is caught, the remaining tasks still
//! run to completion, and the first panic is re-raised from `finish`.

use std::future::Future;
use std::marker::PhantomData;
use std::ptr;

use crate::ddf::{self, AllOutcome, AnyOutcome, Awaitable, DdfCore, ABANDONED_MESSAGE};
use crate::finish::{run_finish, Enclosing, ScopeBase};
use crate::future_task::{FutureTask, TaskEnd, TaskOwner, NEVER_WOKEN_MESSAGE};
use crate::job::{move_by_words, BlockTask, CachedJob, HeapJob, JobRef, SendPtr};
use crate::registry::WorkerThread;
use crate::unwind::reported_panic;

/// A finish scope: spawn tasks with [`spawn`](Scope::spawn), data-driven
/// tasks with [`spawn_await`](Scope::spawn_await) /
/// [`spawn_await_any`](Scope::spawn_await_any), and future tasks with
/// [`spawn_future`](Scope::spawn_future).
///
/// Obtained from [`finish`](crate::finish) or
/// [`Runtime::finish`](crate::Runtime::finish).
pub struct Scope<'scope, 'env: 'scope> {
    base: ScopeBase,
    scope: PhantomData<&'scope mut &'scope ()>,
    env: PhantomData<&'env mut &'env ()>,
}

impl std::fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("owner", &self.base.owner_index())
            .finish_non_exhaustive()
    }
}

/// Runs a finish scope on `worker`: the body, then every task of the scope.
///
/// Always inlined, as are `run_finish` and `run_catching`: `op` then stays
/// where its caller built it. Passed by value into a frame of its own, it
/// would be copied with vector loads right after the caller's word stores,
/// a store-forwarding stall that costs a finish as much as its pop.
#[inline(always)]
pub(crate) fn finish_on_worker<'env, OP, R>(worker: &WorkerThread, op: OP) -> R
where
    OP: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R,
{
    let scope = Scope {
        base: ScopeBase::new(worker),
        scope: PhantomData,
        env: PhantomData,
    };
    run_finish(worker, &scope.base, || op(&scope))
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Spawns `body` as a task of this scope (HC's `async`).
    ///
    /// The task may run on any worker, before, after or in parallel with the
    /// rest of the caller. It receives the scope so it can spawn more tasks
    /// into it.
    ///
    /// ```
    /// let mut squares = vec![1, 2, 3];
    /// hc_runtime::finish(|s| {
    ///     for x in squares.iter_mut() {
    ///         s.spawn(move |_| *x *= *x);
    ///     }
    /// });
    /// assert_eq!(squares, [1, 4, 9]);
    /// ```
    pub fn spawn<F>(&'scope self, body: F)
    where
        F: FnOnce(&'scope Scope<'scope, 'env>) + Send + 'scope,
    {
        let worker = WorkerThread::current();
        self.base.give_unit(worker);
        match worker {
            Some(worker) if self.base.is_pool_of(worker) => {
                let body = std::mem::ManuallyDrop::new(body);
                // SAFETY: both fields are written (`body` moved, not used
                // again); the finish owner does not return, and so no borrow
                // of `'scope` ends, before this task has run (its unit is
                // pending).
                let job = unsafe {
                    CachedJob::<SpawnedTask<'scope, 'env, F>>::emplace(worker, |slot| {
                        ptr::addr_of_mut!((*slot).scope).write(self);
                        move_by_words(&*body, ptr::addr_of_mut!((*slot).body));
                    })
                };
                worker.push(job);
            }
            _ => {
                let task = SpawnedTask { scope: self, body };
                // SAFETY: as above.
                let job = unsafe { HeapJob::into_job_ref(move || task.run()) };
                self.base.registry().push(job);
            }
        }
    }

    /// Spawns `body` as a data-driven task (HC's `async await(deps…)`): it
    /// becomes runnable once every one of `deps` is ready.
    ///
    /// An empty list makes it runnable at once. If a dependency is dropped
    /// without ever being put, the task cannot run: the scope records a panic
    /// saying so, which `finish` raises, instead of waiting forever.
    ///
    /// ```
    /// use hc_runtime::Ddf;
    ///
    /// let (a, b) = (Ddf::new(), Ddf::new());
    /// let mut sum = 0;
    /// hc_runtime::finish(|s| {
    ///     s.spawn_await(&[&a, &b], |_| sum = a.get().unwrap() + b.get().unwrap());
    ///     s.spawn(|_| a.put(1).unwrap());
    ///     s.spawn(|_| b.put(2).unwrap());
    /// });
    /// assert_eq!(sum, 3);
    /// ```
    pub fn spawn_await<F>(&'scope self, deps: &[&dyn Awaitable], body: F)
    where
        F: FnOnce(&'scope Scope<'scope, 'env>) + Send + 'scope,
    {
        self.base.give_unit(WorkerThread::current());
        let scope = SendPtr::new(self as *const Scope<'scope, 'env>);
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
                    scope.base.panic.record(reported_panic(ABANDONED_MESSAGE));
                }
            }
            // SAFETY: gives back the unit this task owns.
            unsafe { ScopeBase::task_completed(&scope.base) };
        };
        let cores = dep_list::DepCores::new(deps);
        // SAFETY: the registry (held by the scope) and the borrows of `body`
        // outlive the task, whose unit the finish owner waits for.
        unsafe { ddf::spawn_await_all(&cores, self.base.releaser(), task) };
    }

    /// Spawns `body` as a data-driven task on an OR list: it becomes runnable
    /// once any one of `deps` is ready, and runs exactly once even if
    /// several become ready concurrently. It receives the index (in `deps`)
    /// of the dependency that released it.
    ///
    /// ```
    /// use hc_runtime::Ddf;
    ///
    /// let (a, b) = (Ddf::<u8>::new(), Ddf::new());
    /// let mut first = None;
    /// hc_runtime::finish(|s| {
    ///     s.spawn_await_any(&[&a, &b], |_, index| first = Some(index));
    ///     b.put(2).unwrap();
    /// });
    /// assert_eq!(first, Some(1));
    /// ```
    ///
    /// # Panics
    /// If `deps` is empty (such a task could never run).
    pub fn spawn_await_any<F>(&'scope self, deps: &[&dyn Awaitable], body: F)
    where
        F: FnOnce(&'scope Scope<'scope, 'env>, usize) + Send + 'scope,
    {
        assert!(
            !deps.is_empty(),
            "spawn_await_any needs at least one dependency: an empty OR list can never be satisfied"
        );
        self.base.give_unit(WorkerThread::current());
        let scope = SendPtr::new(self as *const Scope<'scope, 'env>);
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
                    scope.base.panic.record(reported_panic(ABANDONED_MESSAGE));
                }
            }
            // SAFETY: gives back the unit this task owns.
            unsafe { ScopeBase::task_completed(&scope.base) };
        };
        let cores = dep_list::DepCores::new(deps);
        // SAFETY: as in `spawn_await`.
        unsafe { ddf::spawn_await_any(&cores, self.base.releaser(), task) };
    }

    /// Spawns `future` as a task of this scope: the workers poll it, and
    /// while it waits (`.await` on a [`Ddf`](crate::Ddf), a
    /// [`Promise`](crate::Promise), an MPI request, anything
    /// [`Awaitable`] through [`ready`](crate::ready)) it holds no worker and
    /// no thread; a wake puts it back on a deque. The finish waits for it,
    /// and re-raises its panic.
    ///
    /// Inside the future, the scope (captured by reference) spawns more
    /// tasks into the same finish, and communication started while it is
    /// polled joins this finish.
    ///
    /// ```
    /// use hc_runtime::Ddf;
    ///
    /// let rt = hc_runtime::Runtime::builder().num_workers(1).build().unwrap();
    /// let stages: Vec<Ddf<u64>> = (0..1000).map(|_| Ddf::new()).collect();
    /// rt.finish(|s| {
    ///     // A thousand tasks wait at once on one worker: none holds it.
    ///     for i in 1..stages.len() {
    ///         let stages = &stages;
    ///         s.spawn_future(async move {
    ///             let previous = *(&stages[i - 1]).await;
    ///             stages[i].put(previous + 1).unwrap();
    ///         });
    ///     }
    ///     stages[0].put(0).unwrap();
    /// });
    /// assert_eq!(stages[999].get(), Ok(&999));
    /// ```
    pub fn spawn_future<F>(&'scope self, future: F)
    where
        F: Future<Output = ()> + Send + 'scope,
    {
        self.base.give_unit(WorkerThread::current());
        let owner = ScopedTask(&self.base as *const ScopeBase);
        // SAFETY: the unit added above keeps the finish, and so every borrow
        // of `'scope`, alive until the task completes.
        unsafe { FutureTask::spawn(future, owner) };
    }

    /// Number of computation workers in the pool this scope runs on.
    pub fn num_workers(&self) -> usize {
        self.base.registry().num_workers()
    }
}

/// A task spawned into a finish scope, as stored in its job.
#[repr(C)]
struct SpawnedTask<'scope, 'env, F> {
    scope: *const Scope<'scope, 'env>,
    body: F,
}

// SAFETY: the scope is `Sync` (shared by reference) and `F: Send`.
unsafe impl<F: Send> Send for SpawnedTask<'_, '_, F> {}

impl<'scope, 'env, F> BlockTask for SpawnedTask<'scope, 'env, F>
where
    F: FnOnce(&'scope Scope<'scope, 'env>) + Send + 'scope,
{
    #[inline]
    fn run(self) {
        // SAFETY: the unit the spawner gave keeps the scope alive until
        // `task_completed`.
        let scope = unsafe { &*self.scope };
        {
            let _enclosing = Enclosing::enter(&scope.base);
            let body = self.body;
            scope.base.run_catching(|| body(scope));
        }
        // SAFETY: gives back the unit this task owns.
        unsafe { ScopeBase::task_completed(&scope.base) };
    }
}

/// The owner of a future task of a finish scope: it holds one unit of the
/// scope's latch until the task ends.
struct ScopedTask(*const ScopeBase);

// SAFETY: the scope is `Sync` and, while the task holds its unit, alive.
unsafe impl Send for ScopedTask {}
// SAFETY: as above.
unsafe impl Sync for ScopedTask {}

impl TaskOwner<()> for ScopedTask {
    fn schedule(&self, job: JobRef) {
        // SAFETY: only called while the task holds its unit (see
        // `future_task`'s protocol), which keeps the scope alive.
        unsafe { (*self.0).registry() }.push(job);
    }

    fn enclosing(&self) -> *const ScopeBase {
        self.0
    }

    fn completed(&self, end: TaskEnd<()>) {
        // SAFETY: called once, while the task still holds its unit.
        let base = unsafe { &*self.0 };
        match end {
            TaskEnd::Output(()) => {}
            TaskEnd::Panicked(payload) => base.panic.record(payload),
            TaskEnd::NeverWoken => base.panic.record(reported_panic(NEVER_WOKEN_MESSAGE)),
        }
        // SAFETY: gives back the task's unit.
        unsafe { ScopeBase::task_completed(self.0) };
    }
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
                let first = match deps.first() {
                    Some(first) => first.readiness().core(),
                    None => return DepCores::Heap(Vec::new()),
                };
                let mut inline = [first; INLINE];
                for (slot, dep) in inline.iter_mut().zip(deps).skip(1) {
                    *slot = dep.readiness().core();
                }
                DepCores::Inline(inline, deps.len())
            } else {
                DepCores::Heap(deps.iter().map(|d| d.readiness().core()).collect())
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
