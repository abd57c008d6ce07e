//! [`Handle`]: a cheap, clonable reference to a pool of computation
//! workers, for code that runs on the pool without owning it (detached
//! tasks, callbacks, the communication engine).

use std::future::Future;
use std::sync::Arc;

use crate::ddf::Awaitable;
use crate::detached::{self, JoinHandle};
use crate::registry::{Registry, WorkerThread};
use crate::scope::{finish_on_worker, Scope};

/// A reference to a [`Runtime`](crate::Runtime)'s workers. It does not keep
/// them running: once the runtime is dropped, spawning through a handle
/// panics.
#[derive(Clone)]
pub struct Handle {
    registry: Arc<Registry>,
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("num_workers", &self.num_workers())
            .finish()
    }
}

impl Handle {
    pub(crate) fn from_registry(registry: Arc<Registry>) -> Handle {
        Handle { registry }
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The handle of the runtime whose worker is running the caller, if
    /// any.
    ///
    /// ```
    /// assert!(hc_runtime::Handle::try_current().is_none());
    /// hc_runtime::finish(|_| assert!(hc_runtime::Handle::try_current().is_some()));
    /// ```
    pub fn try_current() -> Option<Handle> {
        WorkerThread::current().map(|worker| Handle::from_registry(Arc::clone(worker.registry())))
    }

    /// The handle of the runtime whose worker is running the caller.
    ///
    /// # Panics
    /// Off a computation worker.
    ///
    /// ```
    /// hc_runtime::finish(|s| {
    ///     let handle = hc_runtime::Handle::current();
    ///     assert_eq!(handle.num_workers(), s.num_workers());
    /// });
    /// ```
    #[track_caller]
    pub fn current() -> Handle {
        Handle::try_current()
            .expect("hc_runtime::Handle::current called outside a computation worker")
    }

    /// A snapshot of the workers' counters (see [`Runtime::metrics`](crate::Runtime::metrics)).
    ///
    /// ```
    /// hc_runtime::finish(|_| {
    ///     let metrics = hc_runtime::Handle::current().metrics();
    ///     assert_eq!(metrics.workers.len(), hc_runtime::Handle::current().num_workers());
    /// });
    /// ```
    pub fn metrics(&self) -> crate::RuntimeMetrics {
        self.registry.metrics()
    }

    /// Number of computation workers.
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(3).build().unwrap();
    /// assert_eq!(rt.handle().num_workers(), 3);
    /// ```
    pub fn num_workers(&self) -> usize {
        self.registry.num_workers()
    }

    /// How many finish scopes of this pool wait for tasks of theirs that
    /// are not done, at this moment. A diagnostic: a process that makes no
    /// progress while finishes wait has tasks blocked on something (a DDF
    /// never put, a message never sent).
    ///
    /// ```
    /// use hc_runtime::{Backoff, BackoffPolicy, Ddf, Runtime, Snooze};
    ///
    /// let rt = Runtime::builder().num_workers(1).build().unwrap();
    /// let handle = rt.handle().clone();
    /// let gate: Ddf<()> = Ddf::new();
    /// std::thread::scope(|threads| {
    ///     threads.spawn(|| {
    ///         // The finish below cannot complete before the gate is put.
    ///         let mut backoff = Backoff::new(BackoffPolicy::WAIT);
    ///         while handle.finishes_waiting() == 0 {
    ///             if let Snooze::Park(timeout) = backoff.snooze() {
    ///                 std::thread::park_timeout(timeout);
    ///             }
    ///         }
    ///         gate.put(()).unwrap();
    ///     });
    ///     rt.finish(|s| s.spawn_await(&[&gate], |_| {}));
    /// });
    /// assert_eq!(handle.finishes_waiting(), 0);
    /// ```
    pub fn finishes_waiting(&self) -> usize {
        self.registry.finishes_waiting()
    }

    #[track_caller]
    fn check_running(&self) {
        assert!(
            !self.registry.is_terminated(),
            "hc-runtime: spawn on a runtime that has shut down"
        );
    }

    /// Runs `op` in a new finish scope on these workers and returns its
    /// result once every task spawned in the scope has completed (see
    /// [`Runtime::finish`](crate::Runtime::finish)).
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(2).build().unwrap();
    /// let handle = rt.handle().clone();
    /// let sum = std::thread::spawn(move || handle.finish(|_| 1 + 2)).join().unwrap();
    /// assert_eq!(sum, 3);
    /// ```
    ///
    /// # Panics
    /// Re-raises the first panic of the body or of any of the scope's tasks,
    /// after all of them have completed.
    pub fn finish<'env, OP, R>(&self, op: OP) -> R
    where
        OP: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R + Send,
        R: Send,
    {
        self.check_running();
        self.registry
            .in_worker(|worker| finish_on_worker(worker, op))
    }

    /// Runs `future` to completion as a task of these workers and returns
    /// its output. The calling thread parks meanwhile (on a computation
    /// worker it runs other tasks, like [`wait`](crate::wait)).
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(2).build().unwrap();
    /// let data = vec![1, 2, 3];
    /// let total = rt.handle().block_on(async { data.iter().sum::<i32>() });
    /// assert_eq!(total, 6);
    /// ```
    ///
    /// # Panics
    /// Re-raises a panic of the future.
    pub fn block_on<F>(&self, future: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        let mut output = None;
        let slot = &mut output;
        self.finish(move |s| {
            s.spawn_future(async move {
                *slot = Some(future.await);
            })
        });
        output.expect("a completed future task left no output")
    }

    /// Spawns `future` as a detached task — one that belongs to no finish
    /// scope — and returns its [`JoinHandle`]. The future must own what it
    /// uses. While it waits it holds no worker.
    ///
    /// ```
    /// use hc_runtime::{Ddf, Runtime};
    ///
    /// let rt = Runtime::builder().num_workers(1).build().unwrap();
    /// let input = Ddf::new();
    /// let doubled = rt.handle().spawn({
    ///     let input = input.clone();
    ///     async move { input.await * 2 }
    /// });
    /// input.put(21).unwrap();
    /// assert_eq!(doubled.join().unwrap(), 42);
    /// ```
    ///
    /// # Panics
    /// If the runtime has shut down.
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.check_running();
        detached::spawn_future(&self.registry, future)
    }

    /// Spawns a detached closure task: one that belongs to no finish
    /// scope. Nothing waits for it; it owns everything it uses, and gets
    /// the handle to spawn more. A panic in it is printed to stderr and
    /// does not propagate. Prefer [`Scope::spawn`] wherever a finish can
    /// bound the task's lifetime.
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(1).build().unwrap();
    /// let (completer, promise) = hc_runtime::promise();
    /// rt.handle().spawn_detached(move |handle| completer.complete(handle.num_workers()));
    /// assert_eq!(promise.wait(), Ok(1));
    /// ```
    ///
    /// # Panics
    /// If the runtime has shut down.
    #[track_caller]
    pub fn spawn_detached<F>(&self, body: F)
    where
        F: FnOnce(&Handle) + Send + 'static,
    {
        self.check_running();
        detached::spawn(&self.registry, body);
    }

    /// Spawns a detached data-driven task that runs `body` once every one
    /// of `deps` is ready (see [`spawn_detached`](Self::spawn_detached)).
    ///
    /// The dependencies are only borrowed while the task registers on them;
    /// `body` must own whatever keeps them alive if it needs their values.
    ///
    /// ```
    /// use hc_runtime::Ddf;
    ///
    /// let rt = hc_runtime::Runtime::builder().num_workers(1).build().unwrap();
    /// let input = Ddf::new();
    /// let (completer, promise) = hc_runtime::promise();
    /// let reader = input.clone();
    /// rt.handle().spawn_await_detached(&[&input], move |_| {
    ///     completer.complete(*reader.get().unwrap() + 1)
    /// });
    /// input.put(1).unwrap();
    /// assert_eq!(promise.wait(), Ok(2));
    /// ```
    ///
    /// # Panics
    /// If the runtime has shut down.
    #[track_caller]
    pub fn spawn_await_detached<F>(&self, deps: &[&dyn Awaitable], body: F)
    where
        F: FnOnce(&Handle) + Send + 'static,
    {
        self.check_running();
        detached::spawn_await(&self.registry, deps, body);
    }

    /// Makes sure a computation worker comes back to poll the runtime's
    /// [`Poller`](crate::Poller): call it after giving the poller new work
    /// from anywhere (see `poller`). Does nothing when no worker is idle.
    pub fn wake_poller(&self) {
        self.registry.wake_poller();
    }
}
