//! The user-facing owner of a pool of computation workers.

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle as ThreadHandle;
use std::time::Duration;

use crate::backoff::{Backoff, BackoffPolicy, Snooze};
use crate::ddf::{Awaitable, Readiness};
use crate::detached::JoinHandle;
use crate::handle::Handle;
use crate::poller::{Polled, Poller};
use crate::registry::{PoolConfig, Registry, WorkerThread};
use crate::scope::{finish_on_worker, Scope};

/// Environment variable that sets the default number of computation workers.
pub const WORKERS_ENV: &str = "HC_WORKERS";

const DEFAULT_STACK_SIZE: usize = 8 << 20;

/// How often a busy worker polls the runtime's poller between tasks, by
/// default, while the poller has work in flight.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_micros(20);

/// A pool of computation workers that run `finish` scopes and their tasks.
///
/// Dropping the runtime stops its workers (they finish nothing: every finish
/// scope has completed by then, since each borrows the runtime) and joins them.
pub struct Runtime {
    handle: Handle,
    threads: Vec<ThreadHandle<()>>,
    /// Where this runtime writes the process's trace when dropped.
    trace_dir: Option<PathBuf>,
}

/// Configures a [`Runtime`].
///
/// The number of workers is, in order of precedence: [`Builder::num_workers`],
/// the `HC_WORKERS` environment variable, the number of available cores.
#[derive(Clone)]
pub struct Builder {
    num_workers: Option<usize>,
    stack_size: usize,
    thread_name_prefix: String,
    poller: Option<Arc<dyn Poller>>,
    poll_interval: Duration,
    oversubscribed: bool,
    /// Worker `k` is bound to `worker_cpus[k % len]`; empty: unbound.
    worker_cpus: Vec<usize>,
    /// `None`: from [`TRACE_ENV`](crate::trace::TRACE_ENV).
    trace: Option<Option<PathBuf>>,
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("num_workers", &self.num_workers)
            .field("stack_size", &self.stack_size)
            .field("thread_name_prefix", &self.thread_name_prefix)
            .field("poller", &self.poller.is_some())
            .field("poll_interval", &self.poll_interval)
            .field("oversubscribed", &self.oversubscribed)
            .field("worker_cpus", &self.worker_cpus)
            .field("trace", &self.trace)
            .finish()
    }
}

/// Why a [`Runtime`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// `HC_WORKERS` is set but is not a positive integer.
    #[error("{WORKERS_ENV} must be a positive integer number of computation workers, got {0:?}")]
    InvalidWorkersEnv(String),
    /// `num_workers(0)` was requested.
    #[error("a runtime needs at least one computation worker")]
    ZeroWorkers,
    /// The operating system refused to start a worker thread.
    #[error("could not start a computation worker thread")]
    Spawn(#[source] std::io::Error),
    /// A worker could not be bound to its CPU
    /// ([`Builder::bind_workers`]).
    #[error("could not bind a computation worker to its CPU")]
    Bind(#[source] crate::affinity::AffinityError),
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            num_workers: None,
            stack_size: DEFAULT_STACK_SIZE,
            thread_name_prefix: "hc-worker-".to_owned(),
            poller: None,
            poll_interval: DEFAULT_POLL_INTERVAL,
            oversubscribed: false,
            worker_cpus: Vec::new(),
            trace: None,
        }
    }
}

impl Builder {
    /// A builder with the defaults described on [`Builder`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the number of computation workers (overrides `HC_WORKERS`).
    pub fn num_workers(mut self, n: usize) -> Self {
        self.num_workers = Some(n);
        self
    }

    /// Sets each worker's stack size in bytes (default 8 MiB; deep recursion
    /// through `finish` uses the stack of the worker that runs it).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = bytes;
        self
    }

    /// Sets the worker thread name prefix (followed by the worker index).
    pub fn thread_name_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.thread_name_prefix = prefix.into();
        self
    }

    /// Attaches a [`Poller`] that the workers drive (see
    /// [`Poller`](crate::Poller)'s module docs): idle and waiting workers
    /// poll it, busy ones every `poll_interval`.
    pub fn poller(mut self, poller: Arc<dyn Poller>) -> Self {
        self.poller = Some(poller);
        self
    }

    /// How often a busy worker polls the poller between tasks while it has
    /// work in flight (default [`DEFAULT_POLL_INTERVAL`]).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// Whether these workers share their cores with other busy threads
    /// (several processes per core, default `false`). If so, the worker
    /// that polls the poller naps between polls instead of yielding
    /// ([`BackoffPolicy::POLLING_OVERSUBSCRIBED`](crate::BackoffPolicy::POLLING_OVERSUBSCRIBED)),
    /// and the workers ask for [`precise_timers`](crate::precise_timers).
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(1).oversubscribed(true).build().unwrap();
    /// assert_eq!(rt.block_on(async { 2 + 2 }), 4);
    /// ```
    pub fn oversubscribed(mut self, oversubscribed: bool) -> Self {
        self.oversubscribed = oversubscribed;
        self
    }

    /// Binds worker `k` to CPU `cpus[k % cpus.len()]` (see
    /// [`affinity`](crate::affinity)); an empty list (the default) leaves
    /// the workers to the operating system. Give each worker a CPU of its
    /// own where the node has them: two bound to one CPU share it for good.
    ///
    /// ```
    /// # #[cfg(target_os = "linux")] {
    /// let cpus = hc_runtime::affinity::current_cpus().unwrap();
    /// let rt = hc_runtime::Runtime::builder()
    ///     .num_workers(1)
    ///     .bind_workers(vec![cpus[0]])
    ///     .build()
    ///     .unwrap();
    /// let seen = rt.block_on(async { hc_runtime::affinity::current_cpus().unwrap() });
    /// assert_eq!(seen, [cpus[0]]);
    /// # }
    /// ```
    pub fn bind_workers(mut self, cpus: Vec<usize>) -> Self {
        self.worker_cpus = cpus;
        self
    }

    /// Records a timeline trace of the process and writes it to
    /// `<dir>/trace.json` when the runtime is dropped (see [`trace`](crate::trace));
    /// `None` records none even if [`TRACE_ENV`](crate::trace::TRACE_ENV)
    /// is set. Default: the directory `HCMPI_TRACE` names, if any.
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(1).trace(None).build().unwrap();
    /// rt.finish(|_| {});
    /// ```
    pub fn trace(mut self, dir: Option<PathBuf>) -> Self {
        self.trace = Some(dir);
        self
    }

    /// The number of workers `build` would start.
    ///
    /// # Errors
    /// If `HC_WORKERS` is consulted and is not a positive integer, or zero
    /// workers were requested.
    pub fn resolved_num_workers(&self) -> Result<usize, BuildError> {
        match self.num_workers {
            Some(0) => Err(BuildError::ZeroWorkers),
            Some(n) => Ok(n),
            None => match std::env::var(WORKERS_ENV) {
                Ok(value) => match value.trim().parse::<usize>() {
                    Ok(n) if n > 0 => Ok(n),
                    _ => Err(BuildError::InvalidWorkersEnv(value)),
                },
                Err(_) => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
            },
        }
    }

    /// Starts the workers.
    ///
    /// # Errors
    /// See [`BuildError`].
    pub fn build(self) -> Result<Runtime, BuildError> {
        let num_workers = self.resolved_num_workers()?;
        let trace_dir = match self.trace {
            Some(dir) => dir,
            None => crate::trace::dir_from_env(),
        };
        if trace_dir.is_some() {
            crate::trace::enable();
        }
        let (registry, threads) = Registry::start(PoolConfig {
            num_workers,
            stack_size: self.stack_size,
            thread_name_prefix: self.thread_name_prefix,
            poller: self.poller,
            poll_interval: self.poll_interval,
            oversubscribed: self.oversubscribed,
            worker_cpus: self.worker_cpus,
        })?;
        Ok(Runtime {
            handle: Handle::from_registry(registry),
            threads,
            trace_dir,
        })
    }
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("num_workers", &self.num_workers())
            .finish()
    }
}

impl Runtime {
    /// A runtime configured from the environment ([`Builder::new`]).
    ///
    /// # Panics
    /// If the runtime cannot be built; use [`Builder::build`] to handle that.
    pub fn new() -> Runtime {
        Builder::new()
            .build()
            .unwrap_or_else(|e| panic!("hc-runtime: {e}"))
    }

    /// A [`Builder`].
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// Number of computation workers.
    pub fn num_workers(&self) -> usize {
        self.handle.num_workers()
    }

    /// A snapshot of what each worker did so far: tasks run, steals, time
    /// working, searching and parked (see [`RuntimeMetrics`](crate::RuntimeMetrics)).
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(1).build().unwrap();
    /// rt.finish(|s| for _ in 0..1000 { s.spawn(|_| {}) });
    /// let metrics = rt.metrics();
    /// assert_eq!(metrics.workers.len(), 1);
    /// // The tasks and the finish body; with several workers, one still busy
    /// // may not have published its last few (see `WorkerMetrics::tasks_run`).
    /// assert_eq!(metrics.total().tasks_run, 1001);
    /// ```
    pub fn metrics(&self) -> crate::RuntimeMetrics {
        self.handle.metrics()
    }

    /// A clonable [`Handle`] on these workers.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    fn registry(&self) -> &Arc<Registry> {
        self.handle.registry()
    }

    /// Runs `op` in a new finish scope on this runtime and returns its
    /// result once every task spawned in the scope has completed.
    ///
    /// Called from a worker of this runtime, the calling worker runs the body
    /// and then executes tasks until the scope is complete. Called from any
    /// other thread, the body is handed to the workers and the caller parks.
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(2).build().unwrap();
    /// let mut halves = [0u64; 2];
    /// let [low, high] = &mut halves;
    /// rt.finish(|s| {
    ///     s.spawn(|_| *low = (0..500).sum());
    ///     s.spawn(|_| *high = (500..1000).sum());
    /// });
    /// assert_eq!(halves[0] + halves[1], 499_500);
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
        self.handle.finish(op)
    }

    /// Runs `a` and `b` on this runtime, potentially in parallel, and
    /// returns both results ([`join`](crate::join)).
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(2).build().unwrap();
    /// let data = [3u64, 1, 4, 1, 5, 9, 2, 6];
    /// let (low, high) = data.split_at(4);
    /// let (a, b) = rt.join(|| low.iter().sum::<u64>(), || high.iter().sum::<u64>());
    /// assert_eq!(a + b, 31);
    /// ```
    ///
    /// # Panics
    /// Re-raises a panic of either half, after both have ended.
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.registry()
            .in_worker(|worker| crate::join::join_on_worker(worker, a, b))
    }

    /// Runs `future` to completion as a task of this runtime and returns
    /// its output ([`Handle::block_on`]).
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(1).build().unwrap();
    /// let (completer, promise) = hc_runtime::promise();
    /// std::thread::spawn(move || completer.complete(5));
    /// assert_eq!(rt.block_on(promise), Ok(5));
    /// ```
    ///
    /// # Panics
    /// Re-raises a panic of the future.
    pub fn block_on<F>(&self, future: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        self.handle.block_on(future)
    }

    /// Spawns `future` as a detached task and returns its [`JoinHandle`]
    /// ([`Handle::spawn`]).
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(1).build().unwrap();
    /// let task = rt.spawn(async { "done" });
    /// assert_eq!(task.join().unwrap(), "done");
    /// ```
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
    }

    /// Spawns a detached closure task ([`Handle::spawn_detached`]).
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(1).build().unwrap();
    /// let (completer, promise) = hc_runtime::promise();
    /// rt.spawn_detached(move |_| completer.complete("ran"));
    /// assert_eq!(promise.wait(), Ok("ran"));
    /// ```
    pub fn spawn_detached<F>(&self, body: F)
    where
        F: FnOnce(&Handle) + Send + 'static,
    {
        self.handle.spawn_detached(body);
    }

    /// Spawns a detached data-driven task ([`Handle::spawn_await_detached`]).
    ///
    /// ```
    /// use hc_runtime::Ddf;
    ///
    /// let rt = hc_runtime::Runtime::builder().num_workers(1).build().unwrap();
    /// let ready = Ddf::new();
    /// let (completer, promise) = hc_runtime::promise();
    /// rt.spawn_await_detached(&[&ready], move |_| completer.complete(()));
    /// ready.put(()).unwrap();
    /// assert_eq!(promise.wait(), Ok(()));
    /// ```
    pub fn spawn_await_detached<F>(&self, deps: &[&dyn Awaitable], body: F)
    where
        F: FnOnce(&Handle) + Send + 'static,
    {
        self.handle.spawn_await_detached(deps, body);
    }
}

impl Default for Runtime {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.registry().terminate();
        let on_own_worker = WorkerThread::current()
            .is_some_and(|worker| Arc::ptr_eq(worker.registry(), self.registry()));
        if !on_own_worker {
            for thread in self.threads.drain(..) {
                // A worker never unwinds (jobs catch their panics), so a join
                // error would be a bug already reported on stderr.
                let _ = thread.join();
            }
        }
        if let Some(dir) = self.trace_dir.take() {
            let path = dir.join("trace.json");
            if let Err(error) = crate::trace::write_process(&path, 0, "hc-runtime") {
                eprintln!("hc-runtime: cannot write the trace: {error}");
            }
        }
    }
}

/// Runs `op` in a new finish scope and returns once it and every task it
/// spawned have completed.
///
/// On a computation worker this uses the worker's own runtime; elsewhere it
/// uses the process-wide default runtime, started on first use with
/// [`Builder::new`]'s settings.
///
/// ```
/// let mut data = vec![1, 2, 3, 4];
/// hc_runtime::finish(|s| {
///     for x in data.iter_mut() {
///         s.spawn(move |_| *x *= 10);
///     }
/// });
/// assert_eq!(data, [10, 20, 30, 40]);
/// ```
///
/// # Panics
/// As [`Runtime::finish`]; also if the default runtime cannot be started.
#[inline(always)]
pub fn finish<'env, OP, R>(op: OP) -> R
where
    OP: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R + Send,
    R: Send,
{
    match WorkerThread::current() {
        Some(worker) => finish_on_worker(worker, op),
        None => default_runtime().finish(op),
    }
}

/// The process-wide runtime used by [`finish`] outside any worker.
pub fn default_runtime() -> &'static Runtime {
    static DEFAULT: OnceLock<Runtime> = OnceLock::new();
    DEFAULT.get_or_init(Runtime::new)
}

/// The index of the computation worker running the caller, if any.
pub fn current_worker_index() -> Option<usize> {
    WorkerThread::current().map(WorkerThread::index)
}

/// Waits until `dep` is ready (HCMPI's `wait`: `finish async await(dep)`),
/// blocking the caller. In a future task, `.await` instead (see [`ready`](crate::ready)):
/// that holds no worker.
///
/// On a computation worker the wait executes other tasks; on any other
/// thread (the main thread, a communication thread) the caller parks until
/// the dependency is put. Either first polls `dep` for a few microseconds
/// ([`BackoffPolicy::WAIT`]: spinning, then yielding the core; on a worker,
/// also polling the runtime's poller): a message reply or a short task often
/// lands within that window, and catching it there saves the wake-up of a
/// parked thread (a system call on each side) that dominates short waits.
///
/// ```
/// use hc_runtime::Ddf;
///
/// let d = Ddf::new();
/// let producer = d.clone();
/// std::thread::spawn(move || producer.put(9).unwrap());
/// hc_runtime::wait(&d);
/// assert_eq!(d.get(), Ok(&9));
/// ```
///
/// # Panics
/// If `dep` can never become ready (dropped without a value).
pub fn wait(dep: &dyn Awaitable) {
    // `readiness` first: it is what starts a fetch (a remote DDDF asks its
    // home), which `is_ready` never does.
    let readiness = dep.readiness();
    if linger_until_ready(readiness) {
        return;
    }
    let core = readiness.core();
    let outcome = match WorkerThread::current() {
        Some(worker) => {
            // Run other tasks until the put unparks this worker directly.
            let waiter = crate::ddf::ThreadWaiter::new(worker.registry().unparker(worker.index()));
            // SAFETY: `waiter` stays on this frame until its outcome is
            // known: `wait_until` returns only then.
            if unsafe { waiter.register(core) } {
                worker.wait_until(|| waiter.outcome().is_some());
                waiter.outcome().expect("released waiter")
            } else {
                Ok(())
            }
        }
        None => crate::ddf::park_until_full(core),
    };
    if outcome.is_err() {
        panic!("{}", crate::ddf::ABANDONED_MESSAGE);
    }
}

/// Waits until `dep` is ready on a thread that is not a computation worker
/// and drives a [`Poller`](crate::Poller) itself meanwhile (a thread
/// blocked on a message it must also make progress on): calls `poll`
/// between the snoozes of `policy`, where `poll` returns whether it made
/// progress (which starts the back-off again), and parks with the
/// policy's timeouts. Whoever makes `dep` ready unparks the thread at once,
/// so a completion by another thread is not left to the next timeout.
///
/// ```
/// use hc_runtime::{BackoffPolicy, Ddf};
///
/// let d = Ddf::new();
/// let producer = d.clone();
/// std::thread::spawn(move || producer.put(3).unwrap());
/// let mut polls = 0;
/// hc_runtime::wait_polling(&d, BackoffPolicy::WAIT, || {
///     polls += 1;
///     false
/// });
/// assert_eq!(d.get(), Ok(&3));
/// ```
///
/// A promise whose completer is dropped counts as settled, as in [`wait`]:
/// the caller finds out from the promise.
///
/// # Panics
/// As [`wait`], if `dep` can never become ready; if called on a
/// computation worker (which runs tasks while it waits: use [`wait`]). A
/// panic in `poll` aborts the process: the waiter this registered lives on
/// this frame.
pub fn wait_polling(dep: &dyn Awaitable, policy: BackoffPolicy, poll: impl FnMut() -> bool) {
    assert!(
        WorkerThread::current().is_none(),
        "hc-runtime: wait_polling on a computation worker (use wait)"
    );
    // `readiness` first: it is what starts a fetch (see `wait`).
    let readiness = dep.readiness();
    if crate::ddf::park_polling(readiness.core(), policy, poll).is_err() {
        panic!("{}", crate::ddf::ABANDONED_MESSAGE);
    }
}

/// Waits until one of `deps` is ready and returns its index (an OR list,
/// HCMPI's `MPI_Waitany`); the lowest index if several already are.
///
/// On a computation worker the wait executes other tasks of that worker's
/// pool; on any other thread the caller parks until a dependency is put.
/// Either way no other runtime is involved (outside the workers, nothing
/// starts the default runtime).
///
/// ```
/// use hc_runtime::Ddf;
///
/// let (slow, fast) = (Ddf::<u8>::new(), Ddf::new());
/// let producer = fast.clone();
/// std::thread::spawn(move || producer.put(1).unwrap());
/// assert_eq!(hc_runtime::wait_any(&[&slow, &fast]), 1);
/// ```
///
/// # Panics
/// If `deps` is empty, or every dependency is dropped without a value.
pub fn wait_any(deps: &[&dyn Awaitable]) -> usize {
    assert!(
        !deps.is_empty(),
        "hc-runtime: wait_any on an empty list can never return"
    );
    // `readiness` first: it is what starts a fetch (see `wait`).
    let cores: Vec<_> = deps.iter().map(|dep| dep.readiness().core()).collect();
    if let Some(index) = deps.iter().position(|dep| dep.is_ready()) {
        return index;
    }
    match WorkerThread::current() {
        Some(worker) => {
            let mut fired = None;
            finish_on_worker(worker, |s| {
                s.spawn_await_any(deps, |_, index| fired = Some(index));
            });
            fired.expect("an await-any task ran once its finish returned")
        }
        None => park_until_any(&cores),
    }
}

/// [`wait_any`] on a thread that is not a worker: a one-shot OR waiter,
/// released inline by whichever put comes first, unparks the caller.
fn park_until_any(cores: &[&crate::ddf::DdfCore]) -> usize {
    use crossbeam_utils::sync::{Parker, Unparker};
    use std::sync::atomic::{AtomicUsize, Ordering};

    const PENDING: usize = usize::MAX;
    const ABANDONED: usize = usize::MAX - 1;

    /// Runs a released waiter on the putting thread: all it does is store
    /// an index and unpark a thread.
    struct InlineRelease;

    impl crate::ddf::Release for InlineRelease {
        fn release(&self, job: crate::job::JobRef) {
            job.execute();
        }
    }

    static INLINE: InlineRelease = InlineRelease;

    struct Outcome {
        fired: AtomicUsize,
        waiter: Unparker,
    }

    let parker = Parker::new();
    let outcome = Arc::new(Outcome {
        fired: AtomicUsize::new(PENDING),
        waiter: parker.unparker().clone(),
    });
    let released = Arc::clone(&outcome);
    let task = move |end: crate::ddf::AnyOutcome| {
        let fired = match end {
            crate::ddf::AnyOutcome::Ready(index) => index,
            crate::ddf::AnyOutcome::Abandoned => ABANDONED,
        };
        // Release: the caller's Acquire load below sees the index.
        released.fired.store(fired, Ordering::Release);
        released.waiter.unpark();
    };
    let releaser: *const dyn crate::ddf::Release = &INLINE;
    // SAFETY: the releaser is a static; the task owns everything it uses
    // (an `Arc`), so it may run on any thread at any time.
    unsafe { crate::ddf::spawn_await_any(cores, releaser, task) };
    loop {
        match outcome.fired.load(Ordering::Acquire) {
            PENDING => parker.park(),
            ABANDONED => panic!("{}", crate::ddf::ABANDONED_MESSAGE),
            index => return index,
        }
    }
}

/// Polls `dep` for the spin and yield phases of [`BackoffPolicy::WAIT`];
/// whether it became ready.
fn linger_until_ready(dep: Readiness<'_>) -> bool {
    let worker = WorkerThread::current();
    let mut backoff = Backoff::new(BackoffPolicy::WAIT);
    loop {
        if dep.is_ready() {
            return true;
        }
        if let Some(worker) = worker {
            if worker.registry().poll() == Some(Polled::Progress) {
                continue;
            }
        }
        if let Snooze::Park(_) = backoff.snooze() {
            return false;
        }
    }
}

/// Runs `f` as if the calling task had no enclosing finish: asynchronous
/// operations it starts (communication tasks, promises tied with
/// [`Completer::join_enclosing_finish`](crate::Completer::join_enclosing_finish))
/// join no finish scope. Tasks spawned through a [`Scope`] still belong to
/// that scope.
///
/// This is for long-lived operations that outlive the finish they are
/// started in — a standing receive re-posted by a task, for instance, which
/// would otherwise keep that finish from ever completing. Whoever starts
/// such an operation must complete or cancel it and wait for it.
pub fn outside_finish<R>(f: impl FnOnce() -> R) -> R {
    let _guard = crate::finish::no_enclosing_finish();
    f()
}
