//! [`Hcmpi`]: one per process — the computation workers, the communication
//! worker, and the world communicator.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_utils::sync::Parker;
use hc_runtime::{Runtime, Scope};

use crate::comm::Comm;
use crate::shared::Shared;
use crate::worker::{self, Control, WorkerConfig};
use crate::Error;

/// Environment variable: the longest sleep (µs) of the communication worker
/// between polls while requests are in flight but idle (default 1000).
pub const MAX_POLL_ENV: &str = "HCMPI_MAX_POLL_US";

/// The HCMPI runtime of this process.
///
/// Created once per process; it starts the computation workers
/// ([`hc_runtime::Runtime`], sized by `HC_WORKERS` or [`HcmpiBuilder::workers`])
/// and the communication worker, which initializes MPI. Dropping it shuts the
/// communication worker down (see `worker`'s shutdown protocol) and finalizes
/// MPI.
pub struct Hcmpi {
    runtime: Runtime,
    world: Comm,
    shared: Arc<Shared>,
    control: Arc<Control>,
    worker: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Hcmpi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hcmpi")
            .field("rank", &self.world.rank())
            .field("size", &self.world.size())
            .field("workers", &self.runtime.num_workers())
            .finish()
    }
}

/// Configures [`Hcmpi`].
#[derive(Debug, Clone, Default)]
pub struct HcmpiBuilder {
    workers: Option<usize>,
    max_poll_interval: Option<Duration>,
    shutdown_grace: Option<Duration>,
}

impl HcmpiBuilder {
    /// Number of computation workers (default: `HC_WORKERS`, else cores).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = Some(n);
        self
    }

    /// Longest sleep between polls while requests are in flight.
    pub fn max_poll_interval(mut self, interval: Duration) -> Self {
        self.max_poll_interval = Some(interval);
        self
    }

    /// How long shutdown waits for cancelled in-flight operations.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = Some(grace);
        self
    }

    /// Starts the runtime and initializes MPI.
    ///
    /// # Errors
    /// [`Error::Init`] if MPI is already initialized, cannot provide
    /// `MPI_THREAD_FUNNELED`, or the workers cannot start.
    pub fn build(self) -> Result<Hcmpi, Error> {
        static CREATED: AtomicBool = AtomicBool::new(false);
        if CREATED.swap(true, Ordering::SeqCst) {
            return Err(Error::Init(
                "an Hcmpi was already created in this process (MPI can be initialized once)".into(),
            ));
        }
        let mut runtime = Runtime::builder();
        if let Some(n) = self.workers {
            runtime = runtime.num_workers(n);
        }
        let runtime = runtime.build().map_err(|e| Error::Init(e.to_string()))?;
        let max_poll_interval = match self.max_poll_interval {
            Some(interval) => interval,
            None => match std::env::var(MAX_POLL_ENV) {
                Ok(value) => Duration::from_micros(value.trim().parse().map_err(|_| {
                    Error::Init(format!(
                        "{MAX_POLL_ENV} must be a number of microseconds, got {value:?}"
                    ))
                })?),
                Err(_) => Duration::from_millis(1),
            },
        };
        let config = WorkerConfig {
            max_poll_interval,
            shutdown_grace: self.shutdown_grace.unwrap_or(Duration::from_secs(1)),
        };
        let parker = Parker::new();
        let shared = Arc::new(Shared::new(parker.unparker().clone()));
        let control = Arc::new(Control {
            stop: AtomicBool::new(false),
        });
        let (reply, init) = mpsc::channel();
        let worker = {
            let (shared, control) = (Arc::clone(&shared), Arc::clone(&control));
            std::thread::Builder::new()
                .name("hcmpi-comm".into())
                .spawn(move || worker::run(shared, control, parker, config, reply))
                .map_err(|e| Error::Init(format!("cannot start the communication worker: {e}")))?
        };
        let info = match init.recv() {
            Ok(Ok(info)) => info,
            Ok(Err(error)) => {
                let _ = worker.join();
                return Err(error);
            }
            Err(_) => {
                let _ = worker.join();
                return Err(Error::Init(
                    "the communication worker died during MPI initialization".into(),
                ));
            }
        };
        let world = Comm::new(
            info.world,
            info.rank,
            info.size,
            info.tag_ub,
            Arc::clone(&shared),
        );
        Ok(Hcmpi {
            runtime,
            world,
            shared,
            control,
            worker: Some(worker),
        })
    }
}

impl Hcmpi {
    /// Starts hcmpi with default settings ([`HcmpiBuilder`]).
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

    /// Runs `op` in a finish scope on the computation workers
    /// ([`Runtime::finish`]).
    pub fn finish<'env, OP, R>(&self, op: OP) -> R
    where
        OP: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R + Send,
        R: Send,
    {
        self.runtime.finish(op)
    }
}

impl Hcmpi {
    /// Runs `callback` on a computation worker with the buffer and status
    /// once `request` completes ([`Request::on_complete`]).
    pub fn on_complete<T, F>(&self, request: crate::Request<T>, callback: F)
    where
        T: std::any::Any + Send,
        F: FnOnce(Result<(T, crate::Status), Error>) + Send + 'static,
    {
        request.on_complete(&self.runtime, callback);
    }
}

impl Drop for Hcmpi {
    fn drop(&mut self) {
        self.control.stop.store(true, Ordering::Release);
        self.shared.wake_worker();
        if let Some(worker) = self.worker.take() {
            if worker.join().is_err() {
                eprintln!("hc-mpi: the communication worker exited abnormally");
            }
        }
    }
}
