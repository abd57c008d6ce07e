//! The user-facing handle on a pool of computation workers.

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::registry::{PoolConfig, Registry, WorkerThread};
use crate::scope::{finish_on_worker, Scope};

/// Environment variable that sets the default number of computation workers.
pub const WORKERS_ENV: &str = "HC_WORKERS";

const DEFAULT_STACK_SIZE: usize = 8 << 20;

/// A pool of computation workers that run `finish` scopes and their tasks.
///
/// Dropping the runtime stops its workers (they finish nothing: every finish
/// scope has completed by then, since each borrows the runtime) and joins them.
pub struct Runtime {
    registry: Arc<Registry>,
    threads: Vec<JoinHandle<()>>,
}

/// Configures a [`Runtime`].
///
/// The number of workers is, in order of precedence: [`Builder::num_workers`],
/// the `HC_WORKERS` environment variable, the number of available cores.
#[derive(Debug, Clone)]
pub struct Builder {
    num_workers: Option<usize>,
    stack_size: usize,
    thread_name_prefix: String,
}

/// Why a [`Runtime`] could not be built.
#[derive(Debug)]
pub enum BuildError {
    /// `HC_WORKERS` is set but is not a positive integer.
    InvalidWorkersEnv(String),
    /// `num_workers(0)` was requested.
    ZeroWorkers,
    /// The operating system refused to start a worker thread.
    Spawn(std::io::Error),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::InvalidWorkersEnv(value) => write!(
                f,
                "{WORKERS_ENV} must be a positive integer number of computation workers, got {value:?}"
            ),
            BuildError::ZeroWorkers => f.write_str("a runtime needs at least one computation worker"),
            BuildError::Spawn(error) => write!(f, "could not start a computation worker thread: {error}"),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Spawn(error) => Some(error),
            _ => None,
        }
    }
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            num_workers: None,
            stack_size: DEFAULT_STACK_SIZE,
            thread_name_prefix: "hc-worker-".to_owned(),
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
        let (registry, threads) = Registry::start(PoolConfig {
            num_workers,
            stack_size: self.stack_size,
            thread_name_prefix: self.thread_name_prefix,
        })
        .map_err(BuildError::Spawn)?;
        Ok(Runtime { registry, threads })
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
        self.registry.num_workers()
    }

    /// Runs `op` in a new finish scope on this runtime and returns its
    /// result once every task spawned in the scope has completed.
    ///
    /// Called from a worker of this runtime, the calling worker runs the body
    /// and then executes tasks until the scope is complete. Called from any
    /// other thread, the body is handed to the workers and the caller parks.
    ///
    /// # Panics
    /// Re-raises the first panic of the body or of any of the scope's tasks,
    /// after all of them have completed.
    pub fn finish<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.registry
            .in_worker(|worker| finish_on_worker(worker, op))
    }
}

impl Runtime {
    /// Spawns a detached task: one that belongs to no finish scope.
    ///
    /// Nothing waits for it; it owns everything it uses. A panic in it is
    /// printed to stderr and does not propagate. Prefer [`Scope::spawn`]
    /// wherever a finish can bound the task's lifetime.
    pub fn spawn_detached<F>(&self, body: F)
    where
        F: FnOnce() + Send + 'static,
    {
        crate::detached::spawn(&self.registry, body);
    }

    /// Spawns a detached data-driven task that runs `body` once every one of
    /// `deps` is ready (see [`spawn_detached`](Self::spawn_detached)).
    ///
    /// The dependencies are only borrowed while the task registers on them;
    /// `body` must own whatever keeps them alive if it needs their values.
    pub fn spawn_await_detached<F>(&self, deps: &[&dyn crate::Awaitable], body: F)
    where
        F: FnOnce() + Send + 'static,
    {
        crate::detached::spawn_await(&self.registry, deps, body);
    }
}

impl Default for Runtime {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.registry.terminate();
        let on_own_worker = WorkerThread::current()
            .is_some_and(|worker| Arc::ptr_eq(worker.registry(), &self.registry));
        if !on_own_worker {
            for thread in self.threads.drain(..) {
                // A worker never unwinds (jobs catch their panics), so a join
                // error would be a bug already reported on stderr.
                let _ = thread.join();
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
pub fn finish<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
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

/// Waits until `dep` is ready (HCMPI's `wait`: `finish async await(dep)`).
///
/// On a computation worker the wait executes other tasks; on any other
/// thread (the main thread, a communication thread) the caller parks until
/// the dependency is put. Either first polls `dep` for a few microseconds
/// ([`WAIT_LINGER`]): a message reply or a short task often lands within
/// that window, and catching it there saves the wake-up of a parked thread
/// (a system call on each side) that dominates short waits.
///
/// # Panics
/// If `dep` can never become ready (dropped without a value).
pub fn wait(dep: &dyn crate::Awaitable) {
    if linger_until_ready(dep) {
        return;
    }
    if WorkerThread::current().is_some() {
        finish(|s| s.spawn_await(&[dep], |_| {}));
    } else if crate::ddf::park_until_full(dep.ddf_core()).is_err() {
        panic!("{}", crate::ddf::ABANDONED_MESSAGE);
    }
}

/// How long [`wait`] polls its dependency (spinning, then yielding the
/// core) before it falls back to running other tasks or parking.
pub const WAIT_LINGER: Duration = Duration::from_micros(20);

/// Polls `dep` for up to [`WAIT_LINGER`]; whether it became ready.
fn linger_until_ready(dep: &dyn crate::Awaitable) -> bool {
    let backoff = crossbeam_utils::Backoff::new();
    let mut since: Option<Instant> = None;
    loop {
        if dep.is_ready() {
            return true;
        }
        if backoff.is_completed() {
            // Yield phase, bounded in time: on an oversubscribed core the
            // yield hands the CPU to the thread that will put `dep`.
            let start = *since.get_or_insert_with(Instant::now);
            if start.elapsed() >= WAIT_LINGER {
                return false;
            }
            std::thread::yield_now();
        } else {
            backoff.snooze();
        }
    }
}

/// Makes the immediately enclosing finish of the calling task also wait
/// until `dep` is ready, as if a task awaiting `dep` had been spawned into
/// it. `keep_alive` is dropped once `dep` is ready; it should own whatever
/// keeps `dep` alive (the dependency is only borrowed here).
///
/// This is how asynchronous operations that are not tasks (an MPI request,
/// say) join HC's finish semantics: a `finish` around an `irecv` returns
/// only once the message has arrived. Returns `false`, doing nothing, when
/// the caller is not inside a finish (e.g. on the main thread).
pub fn join_enclosing_finish(dep: &dyn crate::Awaitable, keep_alive: impl Send + 'static) -> bool {
    crate::scope::join_enclosing(dep, keep_alive)
}

/// Runs `f` as if the calling task had no enclosing finish: asynchronous
/// operations it starts (communication tasks, [`join_enclosing_finish`])
/// join no finish scope. Tasks spawned through a [`Scope`] still belong to
/// that scope.
///
/// This is for long-lived operations that outlive the finish they are
/// started in — a standing receive re-posted by a task, for instance, which
/// would otherwise keep that finish from ever completing. Whoever starts
/// such an operation must complete or cancel it and wait for it.
pub fn outside_finish<R>(f: impl FnOnce() -> R) -> R {
    let _guard = crate::scope::no_enclosing_finish();
    f()
}
