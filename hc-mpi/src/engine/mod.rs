//! The communication engine: the one owner of every MPI call of a process.
//!
//! Operations are built on the caller's thread and handed over as
//! [`Submission`]s through a lock-free worklist. Whoever holds the engine
//! role (see `holder`) — the communication thread in dedicated placement, a
//! computation worker or a waiting thread in shared placement — steps it:
//!
//! 1. apply every submission: start operations (`Operation::start`), cancel,
//!    free communicators, add or remove message services;
//! 2. complete posted requests with one `MPI_Testsome` over all of them
//!    (`table`), and poll the polled operations (probes);
//! 3. poll the message services (`MPI_Improbe`/`MPI_Imrecv`);
//! 4. deliver each completion: the operation completes its request's
//!    promise, which makes the awaiting tasks runnable.
//!
//! A step runs with no enclosing finish: message handlers and completion
//! callbacks run on whichever thread holds the role, and the operations
//! they start must not join the finish of a task that happens to be
//! stepping the engine while it waits.
//!
//! Between steps the dedicated thread backs off with the runtime's one
//! policy ([`BackoffPolicy::POLLING`](hc_runtime::BackoffPolicy::POLLING));
//! with nothing in flight it parks until a submission unparks it. In shared
//! placement the computation workers poll the engine as the runtime's
//! [`Poller`]. In both, a submitter posts its own operation at once when
//! the role is free, instead of handing it over.
//!
//! # Shutdown protocol
//!
//! 1. [`Hcmpi`](crate::Hcmpi) is dropped: it sets `stopping`. In dedicated
//!    placement it unparks the communication thread, which leaves its loop
//!    and runs steps 2–5 itself; in shared placement the dropping thread
//!    takes the engine role (waiting for the current holder) and runs them.
//! 2. The submission gate closes (see `gate`): later submissions fail with
//!    `Error::Shutdown`; the ones already queued are applied.
//! 3. Operations still in flight are reported on stderr by description.
//!    Polled operations (probes) and services fail. Posted receives are
//!    cancelled (`MPI_Cancel`): no peer waits for them. Sends are not (a
//!    peer may be waiting for the message), nor are nonblocking collectives
//!    and communicator creations (cancelling them is erroneous, MPI 4.0
//!    §6.12): all get `shutdown_grace` to complete. What is still posted
//!    after it is reported by name and fails with `Error::Shutdown`, its
//!    buffers leaked rather than freed under MPI; its request is freed,
//!    except a collective's, which MPI forbids freeing.
//! 4. Communicators created for users and user reduction operations are
//!    freed; the world duplicate too.
//! 5. `finalized` is set: a later step does nothing, so no thread calls MPI
//!    again. `Hcmpi` then finalizes MPI on the thread that initialized it,
//!    and only then stops the computation workers.
//!
//! A panic while stepping the engine aborts the whole MPI job
//! (`MPI_Abort`): peers would otherwise wait forever for a process that can
//! no longer talk.

mod dedicated;
mod gate;
mod holder;
mod metrics;
mod stall;
mod table;

use std::cell::{Cell, UnsafeCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crossbeam_queue::SegQueue;
use crossbeam_utils::sync::Unparker;
use hc_runtime::{Completer, Handle, Polled, Poller};
use mpi::ffi;

pub(crate) use self::dedicated::run_dedicated;
pub(crate) use self::gate::SubmitGate;
pub(crate) use self::holder::Holder;

use self::metrics::OpCounters;
pub use self::metrics::{EngineMetrics, OperationMetrics};
use self::stall::StallWatch;
pub(crate) use self::stall::DEFAULT_STALL;
pub use self::stall::STALL_ENV;
use self::table::RequestTable;
use crate::op::{Buffers, Done, OpId, Operation, Start};
use crate::raw::RawComm;
use crate::service::{ServiceId, Services, ServingDyn};
use crate::user_op::UserOps;
use crate::{Error, Placement};

/// Tunables of the engine.
#[derive(Debug, Clone)]
pub(crate) struct EngineConfig {
    /// The longest park of the dedicated thread or of a polling worker
    /// while operations are in flight.
    pub(crate) max_poll_interval: Duration,
    /// How long shutdown waits for cancelled in-flight operations.
    pub(crate) shutdown_grace: Duration,
    /// How long pending operations may make no progress before this rank
    /// reports what it waits on (`None`: never; see `stall`).
    pub(crate) stall_report: Option<Duration>,
    /// This process's rank in the world, for reports.
    pub(crate) rank: i32,
    /// The node has fewer cores than the ranks' threads (see
    /// `BackoffPolicy::POLLING_OVERSUBSCRIBED`).
    pub(crate) oversubscribed: bool,
}

/// What a caller hands to the engine.
pub(crate) enum Submission {
    /// Start an operation.
    Start(Box<dyn Operation>),
    /// `MPI_Cancel` the operation with this id, if it is still in flight.
    Cancel(OpId),
    /// `MPI_Comm_free` a communicator created for a user (its last handle
    /// was dropped).
    FreeComm(RawComm),
    /// Start serving messages.
    Serve(Box<dyn ServingDyn>),
    /// Stop serving; the completer learns how the service ended.
    StopServing(ServiceId, Completer<Result<(), Error>>),
}

impl Submission {
    /// Fails a submission the engine will never apply (shutdown).
    fn refuse(self) {
        match self {
            Submission::Start(op) => {
                let name = op.name();
                op.fail(Error::Shutdown { op: name }, Buffers::Free);
            }
            Submission::Serve(service) => drop(service),
            Submission::StopServing(_, stopped) => stopped.complete(Ok(())),
            Submission::Cancel(_) | Submission::FreeComm(_) => {}
        }
    }
}

/// How the engine wakes whoever steps it after a submission.
enum Wakeup {
    /// Unpark the communication thread.
    Thread(Unparker),
    /// Make an idle computation worker poll (set once the runtime exists;
    /// cleared at shutdown, which breaks the runtime ↔ engine cycle).
    Workers(Mutex<Option<Handle>>),
}

/// The engine's state, touched only by the holder of the engine role.
pub(crate) struct EngineState {
    table: RequestTable,
    /// Polled operations and when each was started.
    polled: Vec<(Box<dyn Operation>, Instant)>,
    services: Services,
    /// Communicators created for users and not yet freed.
    comms: Vec<RawComm>,
    /// `MPI_Op`s created for user reductions.
    pub(crate) user_ops: UserOps,
    /// Set once shutdown cancelled the operations in flight: a cancellation
    /// reported after that was hc-mpi's, not the user's.
    pub(crate) shutting_down: bool,
    /// The runtime, for message services that release tasks.
    pub(crate) handle: Option<Handle>,
    /// Operations completed during the current step, with their starts.
    completions: Vec<(Box<dyn Operation>, Done, Instant)>,
    /// Whether pending operations stopped making progress (see `stall`).
    stall: StallWatch,
    /// The clock of the current step (operations' start and completion
    /// times for metrics: one reading per step).
    now: Instant,
}

impl EngineState {
    /// Records a communicator created for a user, freed at shutdown unless
    /// its handles are all dropped before.
    pub(crate) fn adopt_communicator(&mut self, comm: RawComm) {
        self.comms.push(comm);
    }
}

/// The engine (see the module docs).
pub(crate) struct Engine {
    worklist: SegQueue<Submission>,
    holder: Holder,
    gate: SubmitGate,
    /// Submissions queued or in flight, plus active services: while it is
    /// non-zero, somebody must keep polling.
    work: AtomicUsize,
    wakeup: Wakeup,
    placement: Placement,
    config: EngineConfig,
    stopping: AtomicBool,
    finalized: AtomicBool,
    world: RawComm,
    /// What the engine did (see `metrics`).
    counters: OpCounters,
    state: UnsafeCell<EngineState>,
}

// SAFETY: `state` is only touched by the holder of the engine role, one
// thread at a time (see `holder`), which hands it from holder to holder with
// acquire/release; every other field is thread-safe. The MPI handles in it
// are plain identifiers.
unsafe impl Sync for Engine {}
// SAFETY: as above.
unsafe impl Send for Engine {}

thread_local! {
    /// Whether this thread is stepping the engine (a message handler may be
    /// running on it).
    static STEPPING: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread is stepping the engine: a blocking wait here
/// would wait for the engine itself.
pub(crate) fn is_stepping() -> bool {
    STEPPING.with(Cell::get)
}

struct SteppingGuard;

impl SteppingGuard {
    fn enter() -> SteppingGuard {
        STEPPING.with(|s| s.set(true));
        SteppingGuard
    }
}

impl Drop for SteppingGuard {
    fn drop(&mut self) {
        STEPPING.with(|s| s.set(false));
    }
}

impl Engine {
    /// A new engine; `thread` is the communication thread's unparker in
    /// dedicated placement.
    pub(crate) fn new(
        placement: Placement,
        thread: Option<Unparker>,
        world: RawComm,
        config: EngineConfig,
    ) -> Engine {
        let wakeup = match thread {
            Some(unparker) => Wakeup::Thread(unparker),
            None => Wakeup::Workers(Mutex::new(None)),
        };
        Engine {
            worklist: SegQueue::new(),
            holder: Holder::default(),
            gate: SubmitGate::default(),
            work: AtomicUsize::new(0),
            wakeup,
            placement,
            stopping: AtomicBool::new(false),
            finalized: AtomicBool::new(false),
            world,
            counters: OpCounters::default(),
            state: UnsafeCell::new(EngineState {
                table: RequestTable::default(),
                polled: Vec::new(),
                services: Services::default(),
                comms: Vec::new(),
                user_ops: UserOps::default(),
                shutting_down: false,
                handle: None,
                completions: Vec::new(),
                stall: StallWatch::new(config.stall_report),
                now: Instant::now(),
            }),
            config,
        }
    }

    /// Connects the engine to the runtime whose workers it serves.
    pub(crate) fn attach_runtime(&self, handle: Handle) {
        if let Wakeup::Workers(slot) = &self.wakeup {
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle.clone());
        }
        let stored = self.holder.run(
            || false,
            || {
                // SAFETY: we hold the engine role.
                unsafe { self.state() }.handle = Some(handle.clone());
                false
            },
        );
        assert!(stored.is_some(), "engine busy while attaching the runtime");
    }

    /// A snapshot of the engine's counters.
    pub(crate) fn metrics(&self) -> EngineMetrics {
        self.counters.snapshot()
    }

    /// A message service took a message of `bytes`.
    pub(crate) fn record_served(&self, bytes: usize) {
        self.counters.served(bytes);
    }

    /// The placement in effect.
    pub(crate) fn placement(&self) -> Placement {
        self.placement
    }

    pub(crate) fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// A fresh operation id.
    pub(crate) fn next_id(&self) -> OpId {
        OpId::fresh()
    }

    /// # Safety
    /// The caller holds the engine role.
    #[allow(clippy::mut_from_ref)]
    unsafe fn state(&self) -> &mut EngineState {
        // SAFETY: the caller holds the role: nobody else touches the state.
        unsafe { &mut *self.state.get() }
    }

    /// Hands `submission` to the engine.
    ///
    /// If the engine role is free, the submitter takes it and applies its
    /// own submission at once, after any queued before it: no hand-off, no
    /// queue, no gate (shutdown holds the role from its start to its end, so
    /// a holder runs either wholly before it or after it, and then refuses).
    /// Otherwise the submission is queued through the gate for the holder.
    pub(crate) fn submit(&self, submission: Submission) {
        if let Err(submission) = self.try_apply(submission) {
            self.submit_queued(submission);
        }
    }

    /// The fast path of [`submit`](Self::submit): applies `submission` as
    /// the holder of the role, or hands it back if another thread holds it.
    fn try_apply(&self, submission: Submission) -> Result<(), Submission> {
        let mut own = Some(submission);
        let held = self.holder.run(
            || !self.worklist.is_empty(),
            || {
                let Some(submission) = own.take() else {
                    // Submissions queued as we let go (holder step 3).
                    return self.with_state(|state| self.step(state, false));
                };
                if self.finalized.load(Ordering::Acquire) {
                    submission.refuse();
                    return self.with_state(|_| false);
                }
                let was_idle = self.work.fetch_add(1, Ordering::SeqCst) == 0;
                self.with_state(|state| {
                    self.step(state, false);
                    self.apply(state, submission);
                    if self.has_work() {
                        self.wake_poller(state.handle.as_ref(), was_idle);
                    }
                    true
                })
            },
        );
        match (held, own) {
            (None, Some(submission)) => Err(submission),
            _ => Ok(()),
        }
    }

    /// The slow path of [`submit`](Self::submit): another thread holds the
    /// role; queue the submission for it (gate protocol step 1).
    fn submit_queued(&self, submission: Submission) {
        let Some(pass) = self.gate.enter() else {
            submission.refuse();
            return;
        };
        let was_idle = self.work.fetch_add(1, Ordering::SeqCst) == 0;
        self.worklist.push(submission);
        // Holder protocol step 1: the fence orders the push before the try
        // to take the role; the holder takes the submission over otherwise.
        std::sync::atomic::fence(Ordering::SeqCst);
        self.try_step(false);
        if self.has_work() {
            match &self.wakeup {
                Wakeup::Workers(slot) if was_idle => {
                    let handle = slot.lock().unwrap_or_else(|e| e.into_inner());
                    self.wake_poller(handle.as_ref(), true);
                }
                _ => self.wake_poller(None, false),
            }
        }
        // The pass ends last: once shutdown has closed the gate and waited
        // for the passes, no submitter touches the engine any more.
        drop(pass);
    }

    /// Makes sure somebody polls the work in flight: the communication
    /// thread, or (shared placement, when the engine just went from idle to
    /// busy) an idle worker parked without a timeout — the submitter may be
    /// a plain thread, or a task that computes for long. No system call
    /// when nobody is parked.
    fn wake_poller(&self, runtime: Option<&Handle>, was_idle: bool) {
        match &self.wakeup {
            Wakeup::Thread(unparker) => unparker.unpark(),
            Wakeup::Workers(_) if was_idle => {
                if let Some(handle) = runtime {
                    handle.wake_poller();
                }
            }
            Wakeup::Workers(_) => {}
        }
    }

    /// Whether work is in flight.
    pub(crate) fn has_work(&self) -> bool {
        self.work.load(Ordering::SeqCst) > 0
    }

    /// Steps the engine if the role is free: `full` also polls MPI for
    /// completions; otherwise only submissions are applied (an eager post).
    /// Returns whether anything happened, or `None` if another thread holds
    /// the role.
    pub(crate) fn try_step(&self, full: bool) -> Option<bool> {
        self.holder.run(
            || !self.worklist.is_empty(),
            || self.with_state(|state| self.step(state, full)),
        )
    }

    /// Runs `body` on the engine's state, as the holder of the role: after
    /// shutdown it refuses what is queued instead (no MPI call any more); a
    /// panic aborts the job.
    fn with_state(&self, body: impl FnOnce(&mut EngineState) -> bool) -> bool {
        if self.finalized.load(Ordering::Acquire) {
            while let Some(submission) = self.worklist.pop() {
                self.work.fetch_sub(1, Ordering::Release);
                submission.refuse();
            }
            return false;
        }
        let _stepping = SteppingGuard::enter();
        // SAFETY: called only by the holder of the role.
        let state = unsafe { self.state() };
        // Whoever steps the engine may be a worker inside some task's
        // finish (shared placement). What the step runs on behalf of the
        // engine — message handlers, completion callbacks — is not part of
        // that task: operations it starts must not hold up that finish.
        let body = || hc_runtime::outside_finish(|| body(state));
        match panic::catch_unwind(AssertUnwindSafe(body)) {
            Ok(progress) => progress,
            Err(_) => abort_job("a panic while stepping the communication engine"),
        }
    }

    /// One step (module docs, steps 1–4).
    fn step(&self, state: &mut EngineState, full: bool) -> bool {
        state.now = Instant::now();
        let mut progress = self.apply_queued(state);
        if full {
            progress |= self.complete_posted(state);
            progress |= self.poll_polled(state);
            let EngineState {
                services, handle, ..
            } = state;
            let (progressed, ended) = services.poll(&mut EngineCtx {
                handle: handle.as_ref(),
            });
            progress |= progressed;
            if ended > 0 {
                self.work.fetch_sub(ended, Ordering::Release);
            }
            if progressed {
                // What the handlers started (a reply) is posted in this
                // step, not after another full one.
                self.apply_queued(state);
            }
            let EngineState {
                stall,
                table,
                polled,
                handle,
                ..
            } = state;
            let waiting = !table.is_empty() || !polled.is_empty();
            stall.after_step(progress, waiting, self.config.rank, || {
                let pending = table
                    .describe()
                    .chain(polled.iter().map(|(op, _)| op.describe()))
                    .collect();
                (pending, handle.as_ref().map(Handle::finishes_waiting))
            });
        }
        progress
    }

    /// Applies every queued submission; whether there was any.
    fn apply_queued(&self, state: &mut EngineState) -> bool {
        let mut applied = false;
        // `is_empty` first: a pop of an empty queue costs a `SeqCst` fence,
        // and most steps find nothing queued. A submission that races past
        // the check is seen by the let-go check (holder protocol step 3).
        while !self.worklist.is_empty() {
            let Some(submission) = self.worklist.pop() else {
                break;
            };
            self.apply(state, submission);
            applied = true;
        }
        applied
    }

    fn apply(&self, state: &mut EngineState, submission: Submission) {
        match submission {
            Submission::Start(op) => self.start(state, op),
            Submission::Cancel(id) => {
                self.cancel(state, id);
                self.work.fetch_sub(1, Ordering::Release);
            }
            Submission::FreeComm(comm) => {
                if let Some(index) = state.comms.iter().position(|c| *c == comm) {
                    let mut comm = state.comms.swap_remove(index);
                    // SAFETY: created for a user, freed once; pending
                    // operations on it complete normally (MPI 4.0 §7.4.3).
                    unsafe { ffi::MPI_Comm_free(&mut comm.0) };
                }
                self.work.fetch_sub(1, Ordering::Release);
            }
            // A service stays counted as work while it serves.
            Submission::Serve(service) => state.services.add(service),
            Submission::StopServing(id, stopped) => {
                let EngineState {
                    services, handle, ..
                } = state;
                let mut ctx = EngineCtx {
                    handle: handle.as_ref(),
                };
                if services.remove(id, stopped, &mut ctx) {
                    self.work.fetch_sub(1, Ordering::Release);
                }
                self.work.fetch_sub(1, Ordering::Release);
            }
        }
    }

    fn start(&self, state: &mut EngineState, mut op: Box<dyn Operation>) {
        let started = state.now;
        self.counters.started(op.name(), op.bytes());
        if hc_runtime::trace::is_enabled() {
            trace_posted(&*op);
        }
        match op.start(state) {
            Start::Posted(mut request) => match table::test_posted(&mut request) {
                Some(done) => self.complete(state, op, done, started),
                None => state.table.insert(request, op, started),
            },
            Start::Polled => state.polled.push((op, started)),
            Start::Completed(done) => self.complete(state, op, done, started),
            Start::Failed(code) => {
                let name = op.name();
                let error = crate::op::mpi_error(name, code, None);
                self.finish(state, op, error, Buffers::Free, started);
            }
        }
    }

    /// Counts an operation started at `started` as ended, in the metrics
    /// and the trace.
    fn record_end(&self, state: &EngineState, op: &dyn Operation, started: Instant, ok: bool) {
        self.counters
            .completed(op.name(), state.now.saturating_duration_since(started));
        hc_runtime::trace::async_end(
            "mpi",
            op.name(),
            op.id().0,
            hc_runtime::trace::Args::new().with("ok", i64::from(ok)),
        );
    }

    /// Delivers a completion and counts the operation out.
    fn complete(
        &self,
        state: &mut EngineState,
        op: Box<dyn Operation>,
        done: Done,
        started: Instant,
    ) {
        self.record_end(state, &*op, started, done.is_ok());
        op.complete(done, state);
        self.work.fetch_sub(1, Ordering::Release);
    }

    /// Fails a started operation and counts it out.
    fn finish(
        &self,
        state: &EngineState,
        op: Box<dyn Operation>,
        error: Error,
        buffers: Buffers,
        started: Instant,
    ) {
        self.record_end(state, &*op, started, false);
        op.fail(error, buffers);
        self.work.fetch_sub(1, Ordering::Release);
    }

    fn complete_posted(&self, state: &mut EngineState) -> bool {
        let mut completions = std::mem::take(&mut state.completions);
        let progress = state
            .table
            .test_some(|op, done, started| completions.push((op, done, started)));
        for (op, done, started) in completions.drain(..) {
            self.complete(state, op, done, started);
        }
        state.completions = completions;
        progress
    }

    fn poll_polled(&self, state: &mut EngineState) -> bool {
        let mut progress = false;
        let mut i = 0;
        while i < state.polled.len() {
            let (mut op, started) = state.polled.swap_remove(i);
            match op.poll(state) {
                Some(done) => {
                    progress = true;
                    self.complete(state, op, done, started);
                }
                None => {
                    // Put it back where it was.
                    state.polled.push((op, started));
                    let last = state.polled.len() - 1;
                    state.polled.swap(i, last);
                    i += 1;
                }
            }
        }
        progress
    }

    fn cancel(&self, state: &mut EngineState, id: OpId) {
        if state.table.cancel(id) {
            return;
        }
        if let Some(index) = state.polled.iter().position(|(op, _)| op.id() == id) {
            let (op, started) = state.polled.swap_remove(index);
            self.record_end(state, &*op, started, false);
            op.cancel_polled();
            self.work.fetch_sub(1, Ordering::Release);
        }
        // Otherwise it already completed: cancel is a no-op, as in MPI.
    }

    /// Shutdown protocol step 1 (the caller then runs the rest with
    /// [`shut_down`](Self::shut_down) or lets the thread do it).
    pub(crate) fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
        if let Wakeup::Thread(unparker) = &self.wakeup {
            unparker.unpark();
        }
    }

    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Shutdown protocol steps 2–5, as the holder of the engine role: the
    /// dedicated thread, or (shared placement) the caller, which waits for
    /// the current holder to let go.
    pub(crate) fn shut_down(&self) {
        self.holder.take_blocking();
        // SAFETY: we hold the role, and keep it: after this, no step runs.
        let state = unsafe { self.state() };
        self.gate.close();
        self.step(state, true);
        self.report_and_cancel(state);
        for mut comm in state.comms.drain(..) {
            // SAFETY: created for a user, freed once, before finalize.
            unsafe { ffi::MPI_Comm_free(&mut comm.0) };
        }
        state.user_ops.free_all();
        let mut world = self.world;
        // SAFETY: the world duplicate, freed once, before finalize.
        unsafe { ffi::MPI_Comm_free(&mut world.0) };
        state.handle = None;
        if let Wakeup::Workers(handle) = &self.wakeup {
            handle.lock().unwrap_or_else(|e| e.into_inner()).take();
        }
        self.finalized.store(true, Ordering::Release);
        self.holder.release();
    }

    /// Shutdown step 3.
    fn report_and_cancel(&self, state: &mut EngineState) {
        let pending: Vec<String> = state
            .table
            .describe()
            .chain(state.polled.iter().map(|(op, _)| op.describe()))
            .chain(state.services.describe())
            .collect();
        if pending.is_empty() {
            return;
        }
        eprintln!(
            "hc-mpi: rank {}: shutting down with {} operation(s) still pending: {}",
            self.config.rank,
            pending.len(),
            pending.join(", ")
        );
        state.now = Instant::now();
        for (op, started) in std::mem::take(&mut state.polled) {
            let name = op.name();
            self.finish(
                state,
                op,
                Error::Shutdown { op: name },
                Buffers::Free,
                started,
            );
        }
        let EngineState {
            services, handle, ..
        } = state;
        let ended = services.end_all(&mut EngineCtx {
            handle: handle.as_ref(),
        });
        self.work.fetch_sub(ended, Ordering::Release);
        state.shutting_down = true;
        // Receives nobody will match end now; sends (a peer may wait for
        // them) and collectives (which MPI cannot cancel) get the grace
        // period to complete.
        state.table.cancel_receives();
        let deadline = Instant::now() + self.config.shutdown_grace;
        let mut backoff = hc_runtime::Backoff::new(hc_runtime::BackoffPolicy::WAIT);
        while !state.table.is_empty() && Instant::now() < deadline {
            state.now = Instant::now();
            if self.complete_posted(state) {
                backoff.reset();
            } else if let hc_runtime::Snooze::Park(timeout) = backoff.snooze() {
                std::thread::park_timeout(timeout);
            }
        }
        let unfinished: Vec<String> = state.table.describe().collect();
        if !unfinished.is_empty() {
            eprintln!(
                "hc-mpi: {} operation(s) did not complete within the shutdown grace of {:?} \
                 and fail with Error::Shutdown: {}",
                unfinished.len(),
                self.config.shutdown_grace,
                unfinished.join(", ")
            );
        }
        state.now = Instant::now();
        for (op, started) in state.table.abandon_all() {
            let name = op.name();
            self.finish(
                state,
                op,
                Error::Shutdown { op: name },
                Buffers::Leak,
                started,
            );
        }
    }

    /// Blocks the calling thread (not a computation worker) until `done` is
    /// settled (a dropped completer settles a promise too), stepping the
    /// engine meanwhile in shared placement; a worker that completes it
    /// first unparks the thread.
    pub(crate) fn block_until(&self, done: &dyn hc_runtime::Awaitable) {
        hc_runtime::wait_polling(
            done,
            hc_runtime::BackoffPolicy::WAIT.with_max_park(self.config.max_poll_interval),
            || self.try_step(true) == Some(true),
        );
    }
}

/// Opens the trace's asynchronous span of an operation being started.
fn trace_posted(op: &dyn Operation) {
    let mut args = hc_runtime::trace::Args::new().with("bytes", op.bytes() as i64);
    if let Some((peer, tag)) = op.peer() {
        args = args
            .with("peer", i64::from(peer))
            .with("tag", i64::from(tag));
    }
    hc_runtime::trace::async_begin("mpi", op.name(), op.id().0, args);
}

/// Ends the whole MPI job: peers would otherwise wait forever for a process
/// whose engine can no longer talk.
pub(crate) fn abort_job(what: &str) -> ! {
    crate::abort::abort_job(1, &format!("hc-mpi: {what}; aborting the MPI job"))
}

/// What a message service may use while the engine steps it.
pub(crate) struct EngineCtx<'a> {
    /// The runtime, to release tasks.
    pub(crate) handle: Option<&'a Handle>,
}

/// Shared placement: the computation workers poll the engine.
impl Poller for Engine {
    fn poll(&self) -> Polled {
        if !self.has_work() {
            return Polled::Idle;
        }
        match self.try_step(true) {
            Some(true) => Polled::Progress,
            Some(false) | None if self.has_work() => Polled::Waiting,
            _ => Polled::Idle,
        }
    }

    fn has_work(&self) -> bool {
        Engine::has_work(self)
    }
}
