//! [`Hcmpi`]: one per process — MPI, the computation workers, the
//! communication engine, and the world communicator.

use std::marker::PhantomData;
use std::os::raw::c_int;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_utils::sync::Parker;
use hc_runtime::{Handle, Runtime, Scope};
use mpi::ffi;

use crate::binding::{Binding, CPU_MASK_WORDS as CPU_SET_WORDS};
use crate::comm::Comm;
use crate::engine::{run_dedicated, Engine, EngineConfig};
use crate::error::InitError;
use crate::placement::Placement;
use crate::raw::Handle as RawHandle;
use crate::{Error, ErrorChain};

/// Environment variable: the longest sleep (µs) between two polls of the
/// engine while operations are in flight but idle (default 1000), for the
/// dedicated communication thread and for a thread outside the workers
/// blocked in a wait. Computation workers stepping the engine in shared
/// placement keep the runtime's polling policy (naps of at most 1 ms, or
/// 100 µs on an oversubscribed node).
pub const MAX_POLL_ENV: &str = "HCMPI_MAX_POLL_US";

/// The HCMPI runtime of this process.
///
/// Created once per process ([`Hcmpi::init`] or [`HcmpiBuilder::build`]),
/// on the thread that will also drop it: it initializes MPI there
/// (`MPI_THREAD_MULTIPLE` if the library has it, `MPI_THREAD_SERIALIZED`
/// at least: every MPI call is made by whoever holds the engine role, one
/// thread at a time, but rsmpi builds a `#[derive(Equivalence)]` datatype
/// on a thread other than the initializing one only under
/// `MPI_THREAD_MULTIPLE`), starts the computation workers
/// ([`hc_runtime::Runtime`]) and the communication engine in the
/// [`Placement`] asked for. Dropping it shuts the engine down (see the
/// engine's shutdown protocol), finalizes MPI on that same thread — MPI
/// requires it, which is why `Hcmpi` is not `Send` — and stops the workers.
///
/// ```no_run
/// use hc_mpi::{Hcmpi, Placement};
///
/// let hc = Hcmpi::builder().workers(2).placement(Placement::Auto).build()?;
/// println!("rank {} of {}, engine {}", hc.rank(), hc.size(), hc.placement());
/// # Ok::<(), hc_mpi::Error>(())
/// ```
pub struct Hcmpi {
    engine: Arc<Engine>,
    world: Comm,
    runtime: Runtime,
    thread: Option<JoinHandle<()>>,
    universe: Option<mpi::environment::Universe>,
    cores_per_rank: usize,
    /// The binding in effect (never `Auto`).
    binding: Binding,
    /// The starting thread's CPUs before it was bound, restored on drop.
    starting_cpus: Option<Vec<usize>>,
    /// Where the job's trace goes, when tracing.
    trace_dir: Option<PathBuf>,
    /// `!Send`: MPI is finalized on the thread that initialized it.
    _init_thread: PhantomData<MutexGuard<'static, ()>>,
}

impl std::fmt::Debug for Hcmpi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hcmpi")
            .field("rank", &self.world.rank())
            .field("size", &self.world.size())
            .field("workers", &self.runtime.num_workers())
            .field("placement", &self.engine.placement())
            .finish()
    }
}

/// What a rank's computation workers and communication engine did
/// ([`Hcmpi::metrics`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Metrics {
    /// Per worker: tasks, steals, time working, searching and parked.
    pub runtime: hc_runtime::RuntimeMetrics,
    /// The engine's operations by kind.
    pub engine: crate::EngineMetrics,
}

/// Configures [`Hcmpi`].
#[derive(Debug, Clone, Default)]
pub struct HcmpiBuilder {
    workers: Option<usize>,
    placement: Option<Placement>,
    binding: Option<Binding>,
    max_poll_interval: Option<Duration>,
    poll_interval: Option<Duration>,
    shutdown_grace: Option<Duration>,
    stall_report: Option<Option<Duration>>,
    trace: Option<Option<PathBuf>>,
}

impl HcmpiBuilder {
    /// Number of computation workers (default: `HC_WORKERS`, else the
    /// cores available to this process divided among the ranks on its node).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = Some(n);
        self
    }

    /// Where the communication engine runs (default: `HCMPI_PLACEMENT`,
    /// else [`Placement::Auto`]).
    pub fn placement(mut self, placement: Placement) -> Self {
        self.placement = Some(placement);
        self
    }

    /// Which CPUs the rank's threads run on (default: `HCMPI_BIND`, else
    /// [`Binding::Auto`]).
    pub fn binding(mut self, binding: Binding) -> Self {
        self.binding = Some(binding);
        self
    }

    /// Longest sleep between polls while operations are in flight (default
    /// `HCMPI_MAX_POLL_US`, else 1 ms), for the threads [`MAX_POLL_ENV`]
    /// names.
    pub fn max_poll_interval(mut self, interval: Duration) -> Self {
        self.max_poll_interval = Some(interval);
        self
    }

    /// Shared placement: how often a busy computation worker steps the
    /// engine between tasks while operations are in flight (default
    /// [`hc_runtime::DEFAULT_POLL_INTERVAL`]).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = Some(interval);
        self
    }

    /// How long shutdown waits for in-flight operations to complete.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = Some(grace);
        self
    }

    /// How long this rank's pending operations may make no progress before
    /// it prints, once, what it waits on (the job goes on); `None` turns the
    /// report off. Default: [`STALL_ENV`](crate::STALL_ENV) in seconds
    /// (`0`: off), else 60 s.
    ///
    /// ```no_run
    /// let hc = hc_mpi::Hcmpi::builder()
    ///     .stall_report(Some(std::time::Duration::from_secs(10)))
    ///     .build()?;
    /// # Ok::<(), hc_mpi::Error>(())
    /// ```
    pub fn stall_report(mut self, limit: Option<Duration>) -> Self {
        self.stall_report = Some(limit);
        self
    }

    /// Records a timeline trace of the job (see [`hc_runtime::trace`]):
    /// every rank records; at shutdown rank 0 writes `<dir>/trace.json`,
    /// ranks as processes. `None` records none even if
    /// [`TRACE_ENV`](hc_runtime::trace::TRACE_ENV) is set. Default: the
    /// directory `HCMPI_TRACE` names, if any. All ranks must agree.
    ///
    /// ```no_run
    /// let hc = hc_mpi::Hcmpi::builder().trace(Some("traces".into())).build()?;
    /// # Ok::<(), hc_mpi::Error>(())
    /// ```
    pub fn trace(mut self, dir: Option<PathBuf>) -> Self {
        self.trace = Some(dir);
        self
    }

    /// Initializes MPI and starts the workers and the engine.
    ///
    /// # Errors
    /// [`Error::Init`]: an `Hcmpi` exists already, MPI is already
    /// initialized or cannot serialize calls from several threads, a bad
    /// `HC_WORKERS`/`HCMPI_PLACEMENT`/`HCMPI_BIND`/`HCMPI_MAX_POLL_US`/
    /// `HCMPI_STALL_SECS` (found before MPI starts), a thread could not
    /// start or be bound to its CPUs, or binding `cores` was asked for where
    /// the rank has no share of the node's CPUs. A failure after MPI has
    /// started on a job of several ranks ends the job.
    pub fn build(self) -> Result<Hcmpi, Error> {
        Ok(self.start()?)
    }

    /// Starts hcmpi, runs `body` with it, and ends this rank the way one
    /// rank of an MPI job must end. Return its result from `main`.
    ///
    /// * `Ok`: hcmpi shuts down and MPI is finalized; [`ExitCode::SUCCESS`].
    /// * `Err` on a job of several ranks: the error and its sources
    ///   ([`ErrorChain`]) are printed, prefixed with the rank, and the whole job ends with
    ///   status 1 ([`Hcmpi::abort`]). A rank that simply returned its error
    ///   from `main` would first drop the [`Hcmpi`], whose `MPI_Finalize`
    ///   waits for ranks that may be waiting for this one: the job would
    ///   hang and the error would never be printed.
    /// * `Err` on a single rank, or a start-up error: the error is printed
    ///   and the exit code is [`ExitCode::FAILURE`]. A start-up error in a
    ///   job of several ranks ends the job ([`abort_job`](crate::abort_job)).
    ///
    /// ```no_run
    /// use std::process::ExitCode;
    ///
    /// fn main() -> ExitCode {
    ///     hc_mpi::Hcmpi::builder().workers(4).run(|hc| -> Result<(), hc_mpi::Error> {
    ///         hc.world().barrier()?;
    ///         Ok(())
    ///     })
    /// }
    /// ```
    pub fn run<E, F>(self, body: F) -> ExitCode
    where
        F: FnOnce(&Hcmpi) -> Result<(), E>,
        E: Into<Box<dyn std::error::Error>>,
    {
        let hc = match self.build() {
            Ok(hc) => hc,
            Err(error) => {
                let message = format!("Error: {}", ErrorChain(&error));
                if crate::abort::launched_with_peers() {
                    crate::abort::abort_job(1, &message);
                }
                eprintln!("{message}");
                return ExitCode::FAILURE;
            }
        };
        match body(&hc) {
            Ok(()) => {
                drop(hc);
                ExitCode::SUCCESS
            }
            Err(error) => {
                let message = format!("Error: {}", ErrorChain(&*error.into()));
                if hc.size() > 1 {
                    hc.abort(1, &message);
                }
                drop(hc);
                eprintln!("{message}");
                ExitCode::FAILURE
            }
        }
    }

    fn start(self) -> Result<Hcmpi, InitError> {
        use std::sync::atomic::{AtomicBool, Ordering};
        static CREATED: AtomicBool = AtomicBool::new(false);
        if CREATED.swap(true, Ordering::SeqCst) {
            return Err(InitError::AlreadyCreated);
        }
        let max_poll_interval = match self.max_poll_interval {
            Some(interval) => interval,
            None => max_poll_from_env()?,
        };
        let stall_report = match self.stall_report {
            Some(limit) => limit,
            None => stall_from_env()?,
        };
        let requested = match self.placement {
            Some(placement) => placement,
            None => Placement::from_env()?.unwrap_or_default(),
        };
        let requested_binding = match self.binding {
            Some(binding) => binding,
            None => Binding::from_env()?.unwrap_or_default(),
        };
        // Checked before MPI starts, like the other variables: a bad value
        // is this rank's error, not a failure the job must be aborted for.
        let workers_from_env = match self.workers {
            None if std::env::var_os(hc_runtime::WORKERS_ENV).is_some() => Some(
                Runtime::builder()
                    .resolved_num_workers()
                    .map_err(|e| InitError::Runtime(Arc::new(e)))?,
            ),
            _ => None,
        };
        let (universe, provided) = mpi::initialize_with_threading(mpi::Threading::Multiple)
            .ok_or(InitError::AlreadyInitialized)?;
        let mut universe = Some(universe);
        // Everything from here runs with MPI started: a failure on one rank
        // of several must end the job, before `universe` finalizes MPI
        // (the other ranks would wait for this one in a collective).
        // The starting thread's CPUs before binding restricted them, to
        // restore when the start fails or `Hcmpi` drops.
        let mut starting_cpus: Option<Vec<usize>> = None;
        let started = (|| -> Result<Hcmpi, InitError> {
            if provided < mpi::Threading::Serialized {
                return Err(InitError::ThreadLevel {
                    provided: threading_name(provided),
                });
            }
            let mut world = MpiWorld::duplicate()?;
            crate::warm::warm_request_pool(world.comm.0, world.rank)?;
            let trace_dir = match self.trace {
                Some(dir) => dir,
                None => hc_runtime::trace::dir_from_env(),
            };
            world.agree_on_tracing(trace_dir.is_some())?;
            if trace_dir.is_some() {
                hc_runtime::trace::enable();
            }
            let cores = world.node_cores;
            let cores_per_rank = (cores / world.node_ranks.max(1)).max(1);
            let workers = self.workers.or(workers_from_env).unwrap_or(cores_per_rank);
            let placement = requested.resolve(workers, cores_per_rank);
            // More threads polling or working on this node than it has
            // cores: a poller that yields waits out a busy neighbour's time
            // slice (see `BackoffPolicy::POLLING_OVERSUBSCRIBED`).
            let threads_per_rank = workers + usize::from(placement == Placement::Dedicated);
            let oversubscribed = threads_per_rank * world.node_ranks.max(1) > cores;
            let bound = requested_binding.cpus_to_bind(
                world.cpu_share.take(),
                threads_per_rank,
                oversubscribed,
            )?;
            let binding = if bound.is_some() {
                Binding::Cores
            } else {
                Binding::None
            };
            let share = bound.as_deref().unwrap_or_default();
            if binding == Binding::Cores {
                let before = hc_runtime::affinity::current_cpus().map_err(InitError::Bind)?;
                hc_runtime::affinity::bind_current_thread(share).map_err(InitError::Bind)?;
                starting_cpus = Some(before);
            }
            let parker = Parker::new();
            let engine = Arc::new(Engine::new(
                placement,
                (placement == Placement::Dedicated).then(|| parker.unparker().clone()),
                world.comm,
                EngineConfig {
                    max_poll_interval,
                    shutdown_grace: self.shutdown_grace.unwrap_or(Duration::from_secs(1)),
                    stall_report,
                    rank: world.rank,
                    oversubscribed,
                },
            ));
            // The runtime traces as part of this process; `Hcmpi` writes
            // the job's trace itself.
            let mut runtime = Runtime::builder()
                .num_workers(workers)
                .trace(None)
                .oversubscribed(oversubscribed)
                .poll_interval(
                    self.poll_interval
                        .unwrap_or(hc_runtime::DEFAULT_POLL_INTERVAL),
                );
            if placement == Placement::Shared {
                runtime = runtime.poller(Arc::clone(&engine) as Arc<dyn hc_runtime::Poller>);
            }
            if binding == Binding::Cores {
                runtime = runtime.bind_workers(share.to_vec());
            }
            let runtime = runtime
                .build()
                .map_err(|e| InitError::Runtime(Arc::new(e)))?;
            engine.attach_runtime(runtime.handle().clone());
            let thread = match placement {
                Placement::Dedicated => {
                    let engine = Arc::clone(&engine);
                    let cpus = (binding == Binding::Cores)
                        .then(|| crate::binding::communication_cpus(share, workers));
                    let (bound_tx, bound_rx) = std::sync::mpsc::channel();
                    let thread = std::thread::Builder::new()
                        .name("hcmpi-comm".into())
                        .spawn(move || {
                            let bound = cpus.map_or(Ok(()), |cpus| {
                                hc_runtime::affinity::bind_current_thread(&cpus)
                            });
                            let failed = bound.is_err();
                            let _ = bound_tx.send(bound);
                            if !failed {
                                run_dedicated(engine, parker);
                            }
                        })
                        .map_err(|e| InitError::Spawn(Arc::new(e)))?;
                    // The thread sends before anything else, or dies first.
                    if let Ok(Err(error)) = bound_rx.recv() {
                        let _ = thread.join();
                        return Err(InitError::Bind(error));
                    }
                    Some(thread)
                }
                _ => None,
            };
            let world = Comm::new(
                world.comm,
                world.rank,
                world.size,
                world.tag_ub,
                Arc::clone(&engine),
                false,
            );
            Ok(Hcmpi {
                engine,
                world,
                runtime,
                thread,
                universe: universe.take(),
                cores_per_rank,
                binding,
                starting_cpus: starting_cpus.clone(),
                trace_dir,
                _init_thread: PhantomData,
            })
        })();
        if let Err(error) = &started {
            if world_size() > 1 {
                let error = crate::ErrorChain(error);
                crate::abort::abort_job(1, &format!("hc-mpi: cannot start: {error}"));
            }
            restore_cpus(starting_cpus);
        }
        started
    }
}

/// Gives the calling thread back the CPUs it had before binding, if it was
/// bound. A failure leaves it restricted to its rank's share, where it can
/// still run: nothing to report.
fn restore_cpus(cpus: Option<Vec<usize>>) {
    if let Some(cpus) = cpus {
        let _ = hc_runtime::affinity::bind_current_thread(&cpus);
    }
}

/// The size of `MPI_COMM_WORLD` (MPI is initialized).
fn world_size() -> i32 {
    let mut size = 1;
    // SAFETY: MPI is initialized; a predefined handle; an out-parameter.
    unsafe { ffi::MPI_Comm_size(ffi::RSMPI_COMM_WORLD, &mut size) };
    size
}

/// The value of the environment variable `name`, one of the names
/// `expected` lists, if it is set.
pub(crate) fn choice_from_env<T: std::str::FromStr>(
    name: &'static str,
    expected: &'static str,
) -> Result<Option<T>, InitError> {
    match std::env::var(name) {
        Ok(value) => value.parse().map(Some).map_err(|_| InitError::InvalidEnv {
            name,
            expected,
            value,
        }),
        Err(_) => Ok(None),
    }
}

fn max_poll_from_env() -> Result<Duration, InitError> {
    match std::env::var(MAX_POLL_ENV) {
        Ok(value) => value
            .trim()
            .parse()
            .map(Duration::from_micros)
            .map_err(|_| InitError::InvalidEnv {
                name: MAX_POLL_ENV,
                expected: "a number of microseconds",
                value,
            }),
        Err(_) => Ok(Duration::from_millis(1)),
    }
}

/// The stall report's limit from [`STALL_ENV`](crate::STALL_ENV).
fn stall_from_env() -> Result<Option<Duration>, InitError> {
    match std::env::var(crate::STALL_ENV) {
        Ok(value) => match value.trim().parse::<u64>() {
            Ok(0) => Ok(None),
            Ok(secs) => Ok(Some(Duration::from_secs(secs))),
            Err(_) => Err(InitError::InvalidEnv {
                name: crate::STALL_ENV,
                expected: "a number of seconds (0 turns the stall report off)",
                value,
            }),
        },
        Err(_) => Ok(Some(crate::engine::DEFAULT_STALL)),
    }
}

/// The MPI standard's name of a thread level: the `MPI_THREAD_*` constant
/// that `MPI_Init_thread` returns for it, as error messages name it.
///
/// ```
/// assert_eq!(hc_mpi::threading_name(mpi::Threading::Funneled), "MPI_THREAD_FUNNELED");
/// ```
pub fn threading_name(level: mpi::Threading) -> &'static str {
    match level {
        mpi::Threading::Single => "MPI_THREAD_SINGLE",
        mpi::Threading::Funneled => "MPI_THREAD_FUNNELED",
        mpi::Threading::Serialized => "MPI_THREAD_SERIALIZED",
        mpi::Threading::Multiple => "MPI_THREAD_MULTIPLE",
    }
}

/// hc-mpi's duplicate of `MPI_COMM_WORLD` and what start-up reads from it.
struct MpiWorld {
    comm: crate::raw::RawComm,
    rank: i32,
    size: i32,
    tag_ub: i32,
    /// Ranks sharing this rank's node (`MPI_COMM_TYPE_SHARED`).
    node_ranks: usize,
    /// The CPUs those ranks may run on together
    /// ([`node_cpu_count`](crate::node_cpu_count)).
    node_cores: usize,
    /// This rank's share of them (`binding::share`), if it has one.
    cpu_share: Option<Vec<usize>>,
}

/// The CPUs this process may run on, one bit each; all zero if unknown.
fn own_cpu_set() -> Vec<u64> {
    crate::binding::cpu_mask(&hc_runtime::affinity::current_cpus().unwrap_or_default())
}

impl MpiWorld {
    /// Duplicates `MPI_COMM_WORLD` with `MPI_ERRORS_RETURN`, so hc-mpi's
    /// traffic and errors are its own (MPI 4.0 §7.4.2, §9.3). The handler
    /// is set on `MPI_COMM_WORLD` itself, which the duplicate inherits:
    /// MPICH reports an error of a request completed by `MPI_Testsome` (a
    /// truncated receive) through the world's handler, which must return
    /// it rather than abort. Reads
    /// rank, size, `MPI_TAG_UB`, the node's rank count and its cores (an
    /// `MPI_Allgather` of the CPU sets over the node, §6.7).
    fn duplicate() -> Result<MpiWorld, InitError> {
        let check = |call: &'static str, code: c_int| {
            if code == ffi::MPI_SUCCESS as c_int {
                Ok(())
            } else {
                Err(InitError::Mpi {
                    call,
                    message: crate::raw::error_string(code),
                })
            }
        };
        // SAFETY: MPI is initialized; predefined handles; out-parameters.
        unsafe {
            let world = ffi::RSMPI_COMM_WORLD;
            check(
                "MPI_Comm_set_errhandler",
                ffi::MPI_Comm_set_errhandler(world, ffi::RSMPI_ERRORS_RETURN),
            )?;
            let mut comm = ffi::RSMPI_COMM_NULL;
            check("MPI_Comm_dup", ffi::MPI_Comm_dup(world, &mut comm))?;
            let (mut rank, mut size) = (0, 0);
            ffi::MPI_Comm_rank(comm, &mut rank);
            ffi::MPI_Comm_size(comm, &mut size);
            let mut node = ffi::RSMPI_COMM_NULL;
            check(
                "MPI_Comm_split_type",
                ffi::MPI_Comm_split_type(
                    comm,
                    ffi::MPI_COMM_TYPE_SHARED as c_int,
                    rank,
                    ffi::RSMPI_INFO_NULL,
                    &mut node,
                ),
            )?;
            let (mut node_ranks, mut node_rank) = (1, 0);
            ffi::MPI_Comm_size(node, &mut node_ranks);
            ffi::MPI_Comm_rank(node, &mut node_rank);
            let own = own_cpu_set();
            let mut all = vec![0u64; CPU_SET_WORDS * node_ranks.max(1) as usize];
            check(
                "MPI_Allgather",
                ffi::MPI_Allgather(
                    own.as_ptr().cast(),
                    CPU_SET_WORDS as c_int,
                    ffi::RSMPI_UINT64_T,
                    all.as_mut_ptr().cast(),
                    CPU_SET_WORDS as c_int,
                    ffi::RSMPI_UINT64_T,
                    node,
                ),
            )?;
            ffi::MPI_Comm_free(&mut node);
            let sets: Vec<&[u64]> = all.chunks(CPU_SET_WORDS).collect();
            let node_cores = crate::binding::node_cpu_count(&sets);
            let cpu_share = crate::binding::share(&sets, node_rank.max(0) as usize);
            Ok(MpiWorld {
                comm: RawHandle(comm),
                rank,
                size,
                tag_ub: tag_upper_bound(comm),
                node_ranks: node_ranks.max(1) as usize,
                node_cores,
                cpu_share,
            })
        }
    }
}

impl MpiWorld {
    /// Checks that every rank traces, or none (an `MPI_Allreduce`, MPI 4.0
    /// §6.9.6, of the flag and its negation with `MPI_MAX`).
    fn agree_on_tracing(&self, traced: bool) -> Result<(), InitError> {
        let flag = i32::from(traced);
        let send = [flag, -flag];
        let mut recv = [0i32; 2];
        // SAFETY: MPI is initialized; two ints each way on a valid
        // communicator; only the initializing thread calls MPI now.
        let code = unsafe {
            ffi::MPI_Allreduce(
                send.as_ptr().cast(),
                recv.as_mut_ptr().cast(),
                2,
                ffi::RSMPI_INT32_T,
                ffi::RSMPI_MAX,
                self.comm.0,
            )
        };
        if code != ffi::MPI_SUCCESS as c_int {
            return Err(InitError::Mpi {
                call: "MPI_Allreduce",
                message: crate::raw::error_string(code),
            });
        }
        let (any, all) = (recv[0] == 1, -recv[1] == 1);
        if any != all {
            return Err(InitError::TraceMismatch);
        }
        Ok(())
    }
}

/// Writes this rank's trace, waits for every rank's (`MPI_Barrier` on
/// `MPI_COMM_WORLD`, MPI 4.0 §6.3: the engine has shut down, so this thread
/// is the only one calling MPI), and on rank 0 merges them into
/// `<dir>/trace.json`. Failures are reported, never fatal: the job's
/// results stand without a trace.
fn write_job_trace(dir: &std::path::Path, rank: i32, size: i32) {
    let own = dir.join(format!("rank-{rank}.json"));
    if let Err(error) = hc_runtime::trace::write_process(&own, rank as u32, &format!("rank {rank}"))
    {
        eprintln!("hc-mpi: rank {rank}: cannot write the trace: {error}");
    }
    // SAFETY: MPI is initialized and not finalized; the engine is shut
    // down, so no other thread calls MPI.
    unsafe { ffi::MPI_Barrier(ffi::RSMPI_COMM_WORLD) };
    if rank != 0 {
        return;
    }
    let inputs: Vec<PathBuf> = (0..size)
        .map(|r| dir.join(format!("rank-{r}.json")))
        .collect();
    let output = dir.join("trace.json");
    match hc_runtime::trace::merge_files(&inputs, &output) {
        Ok(_) => {
            for input in &inputs {
                let _ = std::fs::remove_file(input);
            }
        }
        Err(error) => eprintln!(
            "hc-mpi: cannot merge the ranks' traces ({error}); the per-rank files \
             stay in {}: gather them in one directory and run `hcmpi-trace merge`",
            dir.display()
        ),
    }
}

fn tag_upper_bound(comm: ffi::MPI_Comm) -> c_int {
    let mut value: *mut c_int = std::ptr::null_mut();
    let mut flag: c_int = 0;
    // SAFETY: MPI_TAG_UB is a predefined attribute whose value is a pointer
    // to an int owned by MPI (MPI 4.0 §8.1.2).
    unsafe {
        ffi::MPI_Comm_get_attr(
            comm,
            ffi::MPI_TAG_UB as c_int,
            (&mut value as *mut *mut c_int).cast(),
            &mut flag,
        );
        if flag != 0 && !value.is_null() {
            *value
        } else {
            // The smallest upper bound the standard allows.
            32767
        }
    }
}

impl Hcmpi {
    /// Starts hcmpi with default settings ([`HcmpiBuilder`]). A program's
    /// `main` is better served by [`Hcmpi::run`], which also ends the whole
    /// job when one rank's work fails.
    ///
    /// # Errors
    /// As [`HcmpiBuilder::build`].
    pub fn init() -> Result<Hcmpi, Error> {
        HcmpiBuilder::default().build()
    }

    /// A builder.
    pub fn builder() -> HcmpiBuilder {
        HcmpiBuilder::default()
    }

    /// Starts hcmpi with default settings and runs `body` with it: an error
    /// on one rank ends the whole job with its message instead of hanging
    /// it ([`HcmpiBuilder::run`]).
    ///
    /// ```no_run
    /// use std::process::ExitCode;
    ///
    /// fn main() -> ExitCode {
    ///     hc_mpi::Hcmpi::run(|hc| -> Result<(), hc_mpi::Error> {
    ///         let sum = hc.world().allreduce(vec![1u32], hc_mpi::ReduceOp::Sum)?;
    ///         assert_eq!(sum[0], hc.size() as u32);
    ///         Ok(())
    ///     })
    /// }
    /// ```
    pub fn run<E, F>(body: F) -> ExitCode
    where
        F: FnOnce(&Hcmpi) -> Result<(), E>,
        E: Into<Box<dyn std::error::Error>>,
    {
        HcmpiBuilder::default().run(body)
    }

    /// The world communicator (a duplicate of `MPI_COMM_WORLD` reserved for
    /// hcmpi).
    pub fn world(&self) -> &Comm {
        &self.world
    }

    /// This process's rank in the world.
    pub fn rank(&self) -> i32 {
        self.world.rank()
    }

    /// Number of processes.
    pub fn size(&self) -> i32 {
        self.world.size()
    }

    /// The computation workers.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// A handle on the computation workers.
    pub fn handle(&self) -> &Handle {
        self.runtime.handle()
    }

    /// Where the communication engine runs (never [`Placement::Auto`]:
    /// the placement `Auto` resolved to).
    pub fn placement(&self) -> Placement {
        self.engine.placement()
    }

    /// Whether this node runs more threads than it has cores: its ranks'
    /// workers and communication threads exceed the union of their CPU
    /// sets. Then whoever polls the engine without progress naps 10–100 µs
    /// at a time instead of yielding, since a yielding poller waits out a
    /// busy neighbour's time slice.
    ///
    /// ```no_run
    /// let hc = hc_mpi::Hcmpi::init()?;
    /// println!("oversubscribed: {}", hc.oversubscribed());
    /// # Ok::<(), hc_mpi::Error>(())
    /// ```
    pub fn oversubscribed(&self) -> bool {
        self.engine.config().oversubscribed
    }

    /// The cores available to this rank: the process's cores divided among
    /// the ranks on its node (what `Auto` placement decides on).
    pub fn cores_per_rank(&self) -> usize {
        self.cores_per_rank
    }

    /// The binding in effect: [`Binding::Cores`] or [`Binding::None`],
    /// `Auto` resolved (see [`Binding`]).
    ///
    /// ```no_run
    /// let hc = hc_mpi::Hcmpi::init()?;
    /// println!("binding: {}", hc.binding());
    /// # Ok::<(), hc_mpi::Error>(())
    /// ```
    pub fn binding(&self) -> Binding {
        self.binding
    }

    /// A snapshot of what this rank's workers and engine did so far (see
    /// [`Metrics`]).
    ///
    /// ```no_run
    /// let hc = hc_mpi::Hcmpi::init()?;
    /// hc.world().barrier()?;
    /// let metrics = hc.metrics();
    /// assert!(metrics.engine.kind("ibarrier").is_some_and(|b| b.completed == 1));
    /// # Ok::<(), hc_mpi::Error>(())
    /// ```
    pub fn metrics(&self) -> Metrics {
        Metrics {
            runtime: self.runtime.metrics(),
            engine: self.engine.metrics(),
        }
    }

    /// Runs `op` in a finish scope on the computation workers
    /// ([`Runtime::finish`]).
    pub fn finish<'env, OP, R>(&self, op: OP) -> R
    where
        OP: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R + Send,
        R: Send,
    {
        self.runtime.finish(op)
    }

    /// Runs `future` to completion as a task of the computation workers
    /// ([`Runtime::block_on`]).
    pub fn block_on<F>(&self, future: F) -> F::Output
    where
        F: std::future::Future + Send,
        F::Output: Send,
    {
        self.runtime.block_on(future)
    }

    /// Ends every rank of the job with exit status `code` after printing
    /// `message`, prefixed with this rank (`MPI_Abort` on `MPI_COMM_WORLD`,
    /// MPI 4.0 ch. 11). For a failure the other ranks cannot recover from
    /// and would otherwise wait on forever: a corrupt input found by one
    /// rank, a lost peer. Does not return; nothing is finalized.
    ///
    /// ```no_run
    /// let hc = hc_mpi::Hcmpi::init()?;
    /// let path = format!("part-{}.dat", hc.rank());
    /// if std::fs::metadata(&path).is_err() {
    ///     hc.abort(2, &format!("cannot read {path}"));
    /// }
    /// # Ok::<(), hc_mpi::Error>(())
    /// ```
    pub fn abort(&self, code: i32, message: &str) -> ! {
        crate::abort::report(&format!("rank {}: {message}", self.rank()));
        crate::abort::abort_world(code)
    }

    /// Runs `callback` on a computation worker with the buffer and status
    /// once `request` completes ([`Request::on_complete`](crate::Request::on_complete)).
    pub fn on_complete<T, F>(&self, request: crate::Request<T>, callback: F)
    where
        T: Send + 'static,
        F: FnOnce(Result<(T, crate::Status), Error>) + Send + 'static,
    {
        request.on_complete(self.runtime.handle(), callback);
    }
}

impl Drop for Hcmpi {
    fn drop(&mut self) {
        if std::thread::panicking() && self.size() > 1 {
            // A panic is unwinding out of the code that owns the engine:
            // this rank will not take part in anything its peers wait for.
            // The panic hook has printed the panic; end the job instead of
            // leaving the other ranks blocked (see `abort`).
            crate::abort::report(&format!(
                "hc-mpi: rank {}: a panic is ending this rank; aborting the MPI job",
                self.rank()
            ));
            crate::abort::abort_world(crate::abort::PANIC_STATUS);
        }
        self.engine.stop();
        match self.thread.take() {
            Some(thread) => {
                if thread.join().is_err() {
                    eprintln!("hc-mpi: the communication thread exited abnormally");
                }
            }
            None => self.engine.shut_down(),
        }
        if let Some(dir) = self.trace_dir.take() {
            write_job_trace(&dir, self.rank(), self.size());
        }
        // Finalize on this thread, the one that initialized MPI; the
        // workers stop afterwards, when `runtime` drops.
        drop(self.universe.take());
        restore_cpus(self.starting_cpus.take());
    }
}
