//! The communication worker: the one thread per process that calls MPI.
//!
//! It initializes MPI itself (`MPI_THREAD_FUNNELED`: only the initializing
//! thread makes MPI calls), duplicates `MPI_COMM_WORLD` with
//! `MPI_ERRORS_RETURN` so hc-mpi traffic and errors are its own, and then
//! loops:
//!
//! 1. post every PRESCRIBED task from the worklist (non-blocking MPI call,
//!    task becomes ACTIVE; a call that fails to post completes at once);
//! 2. complete ACTIVE requests with one `MPI_Testsome` over all of them, and
//!    poll pending probes with `MPI_Iprobe`;
//! 3. deliver each completion: store the outcome in the request and publish
//!    its DDF, which releases awaiting tasks into the computation workers;
//!    recycle the record;
//! 4. if nothing happened: with nothing in flight, keep watching the
//!    worklist for 50 µs after the last progress (spin, then yield), then
//!    park until a submission unparks it; with requests in flight, back off (`QuietSpell`) — spin
//!    briefly, yield the core for up to 2 ms since the last progress, then
//!    sleep in growing steps up to `max_poll_interval` (a submission still
//!    wakes it at once). On a machine with fewer cores than threads, a
//!    polling thread that never yields would starve the computation it waits
//!    for, and one that never sleeps would burn a core while a receive waits
//!    for a message that is minutes away.
//!
//! # Shutdown protocol
//!
//! 1. [`Hcmpi`](crate::Hcmpi) is dropped: it sets the stop flag and unparks
//!    the worker.
//! 2. The worker closes the worklist (see `shared`): later submissions fail
//!    with `Error::Shutdown`; those already queued are posted.
//! 3. Operations still in flight are reported on stderr by description,
//!    cancelled (`MPI_Cancel`), and given `shutdown_grace` to complete; any
//!    that remain complete with `Error::Shutdown`, and their buffers are
//!    leaked rather than freed under MPI.
//! 4. Communicators are freed and MPI is finalized on this thread.
//!
//! A panic on the worker aborts the whole MPI job (`MPI_Abort`): peers
//! would otherwise wait forever for a process that can no longer talk.

use std::os::raw::c_int;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::user_op::UserOps;
use crossbeam_utils::sync::Parker;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::Communicator;

use crate::op::{Buffer, Operation};
use crate::raw::{self, empty_status, Handle, RawComm};
use crate::request::{Outcome, Status};
use crate::shared::Shared;
use crate::task::CommTask;
use crate::Error;

/// Tunables of the communication worker.
#[derive(Debug, Clone)]
pub(crate) struct WorkerConfig {
    pub(crate) max_poll_interval: Duration,
    pub(crate) shutdown_grace: Duration,
}

/// What the worker reports once MPI is up.
pub(crate) struct InitInfo {
    pub(crate) world: RawComm,
    pub(crate) rank: i32,
    pub(crate) size: i32,
    pub(crate) tag_ub: i32,
}

/// Control shared between the [`Hcmpi`](crate::Hcmpi) handle and the worker.
pub(crate) struct Control {
    pub(crate) stop: AtomicBool,
}

/// Body of the communication worker thread.
pub(crate) fn run(
    shared: Arc<Shared>,
    control: Arc<Control>,
    parker: Parker,
    config: WorkerConfig,
    init_reply: mpsc::Sender<Result<InitInfo, Error>>,
) {
    let Some((universe, provided)) = mpi::initialize_with_threading(mpi::Threading::Funneled)
    else {
        let _ = init_reply.send(Err(Error::Init(
            "MPI is already initialized in this process (create one Hcmpi per process)".into(),
        )));
        return;
    };
    if provided < mpi::Threading::Funneled {
        let _ = init_reply.send(Err(Error::Init(format!(
            "the MPI library provides thread level {provided:?}; hc-mpi needs at least \
             MPI_THREAD_FUNNELED"
        ))));
        return;
    }
    let world = universe.world();
    // SAFETY: valid communicator handle and predefined error handler.
    unsafe { ffi::MPI_Comm_set_errhandler(world.as_raw(), ffi::RSMPI_ERRORS_RETURN) };
    // Inherits MPI_ERRORS_RETURN; keeps hc-mpi traffic apart from any other
    // user of MPI_COMM_WORLD.
    let comm = world.duplicate();
    let info = InitInfo {
        world: Handle(comm.as_raw()),
        rank: comm.rank(),
        size: comm.size(),
        tag_ub: tag_upper_bound(comm.as_raw()),
    };
    let abort_comm = comm.as_raw();
    if init_reply.send(Ok(info)).is_err() {
        return;
    }
    let mut worker = CommWorker::new(shared, config);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        worker.main_loop(&control, &parker);
        worker.shut_down();
        worker.free_communicators();
    }));
    if outcome.is_err() {
        eprintln!("hc-mpi: the communication worker panicked; aborting the MPI job");
        // SAFETY: valid communicator; MPI_Abort does not return.
        unsafe { ffi::MPI_Abort(abort_comm, 1) };
    }
    drop(comm);
    drop(universe);
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

/// Step 4 with requests in flight but no progress: how long the worker has
/// been polling in vain decides how it waits before the next poll.
///
/// Messages that arrive are only noticed when the worker polls, so right
/// after progress (when more traffic is likely) it polls eagerly: a few spins,
/// then `yield_now`, which on an oversubscribed machine hands the core to the
/// computation it is waiting for. After `YIELD_FOR` without progress it
/// sleeps, doubling from `FIRST_SLEEP` up to `max_poll_interval`. A
/// submission unparks it at once in every phase.
struct QuietSpell {
    since: Instant,
    rounds: u32,
    sleep: Duration,
}

impl QuietSpell {
    const SPIN_ROUNDS: u32 = 16;
    const YIELD_FOR: Duration = Duration::from_millis(2);
    const FIRST_SLEEP: Duration = Duration::from_micros(20);
    const LINGER: Duration = Duration::from_micros(50);

    fn new() -> Self {
        QuietSpell {
            since: Instant::now(),
            rounds: 0,
            sleep: Self::FIRST_SLEEP,
        }
    }

    /// With nothing in flight: whether to keep watching the worklist a
    /// little longer (spinning, then yielding) rather than park. In
    /// request/reply traffic the next submission typically follows within
    /// microseconds of a completion; catching it here saves the unpark (a
    /// system call on both sides) on the critical path.
    fn linger(&mut self) -> bool {
        if self.since.elapsed() >= Self::LINGER {
            return false;
        }
        self.rounds = self.rounds.saturating_add(1);
        if self.rounds <= Self::SPIN_ROUNDS {
            for _ in 0..(1u32 << self.rounds.min(6)) {
                std::hint::spin_loop();
            }
        } else {
            std::thread::yield_now();
        }
        true
    }

    fn back_off(&mut self, parker: &Parker, max_sleep: Duration) {
        self.rounds = self.rounds.saturating_add(1);
        if self.rounds <= Self::SPIN_ROUNDS {
            for _ in 0..(1u32 << self.rounds.min(6)) {
                std::hint::spin_loop();
            }
        } else if self.since.elapsed() < Self::YIELD_FOR {
            std::thread::yield_now();
        } else {
            parker.park_timeout(self.sleep.min(max_sleep));
            self.sleep = (self.sleep * 2).min(max_sleep);
        }
    }
}

/// The worker's private state: everything in flight.
///
/// Records stay boxed: the same allocation travels pool → task → worklist →
/// here → pool, which is what makes recycling allocation-free.
#[allow(clippy::vec_box)]
struct CommWorker {
    shared: Arc<Shared>,
    config: WorkerConfig,
    /// Dense array handed to `MPI_Testsome`; `active[i]` owns `requests[i]`.
    requests: Vec<ffi::MPI_Request>,
    active: Vec<Box<CommTask>>,
    indices: Vec<c_int>,
    statuses: Vec<ffi::MPI_Status>,
    probes: Vec<Box<CommTask>>,
    /// Communicators created for users, freed at shutdown.
    created: Vec<RawComm>,
    /// Operations created for user reductions, freed at shutdown.
    user_ops: UserOps,
    /// Set once shutdown has cancelled the operations still in flight: a
    /// cancellation reported after that was hc-mpi's, not the user's.
    cancelled_by_shutdown: bool,
}

/// A communicator the worker created, as handed to the API layer.
pub(crate) struct CreatedComm {
    pub(crate) raw: RawComm,
    pub(crate) rank: i32,
    pub(crate) size: i32,
}

impl CommWorker {
    fn new(shared: Arc<Shared>, config: WorkerConfig) -> Self {
        CommWorker {
            shared,
            config,
            requests: Vec::new(),
            active: Vec::new(),
            indices: Vec::new(),
            statuses: Vec::new(),
            probes: Vec::new(),
            created: Vec::new(),
            user_ops: UserOps::default(),
            cancelled_by_shutdown: false,
        }
    }

    fn in_flight(&self) -> bool {
        !self.active.is_empty() || !self.probes.is_empty()
    }

    fn main_loop(&mut self, control: &Control, parker: &Parker) {
        let mut quiet = QuietSpell::new();
        loop {
            let mut progress = self.post_submitted();
            progress |= self.test_active();
            progress |= self.poll_probes();
            if control.stop.load(Ordering::Acquire) {
                return;
            }
            if progress {
                quiet = QuietSpell::new();
                continue;
            }
            if !self.in_flight() {
                if quiet.linger() {
                    continue;
                }
                parker.park();
                quiet = QuietSpell::new();
                continue;
            }
            quiet.back_off(parker, self.config.max_poll_interval);
        }
    }

    /// Step 1: posts every prescribed task.
    fn post_submitted(&mut self) -> bool {
        let mut progress = false;
        while let Some(task) = self.shared.pop() {
            progress = true;
            self.post(task);
        }
        progress
    }

    fn post(&mut self, mut task: Box<CommTask>) {
        match task.op.as_ref() {
            Some(Operation::Probe { .. }) => {
                task.transition_to_active();
                self.probes.push(task);
                return;
            }
            Some(Operation::Cancel { target }) => {
                let target = Arc::clone(target);
                self.cancel(&target);
                task.transition_to_completed();
                self.shared.recycle(task);
                return;
            }
            _ => {}
        }
        // SAFETY: reading an immutable MPI constant.
        let mut request = unsafe { ffi::RSMPI_REQUEST_NULL };
        let (code, name) = match task
            .op
            .as_mut()
            .expect("prescribed task without an operation")
        {
            Operation::Send {
                buffer,
                dest,
                tag,
                comm,
                synchronous,
                ..
            } => {
                // SAFETY: the buffer is owned by the task until completion;
                // handles are valid; `request` is an out-parameter.
                let code = unsafe {
                    if *synchronous {
                        ffi::MPI_Issend(
                            buffer.ptr,
                            buffer.count,
                            buffer.datatype.resolve().0,
                            *dest,
                            *tag,
                            comm.0,
                            &mut request,
                        )
                    } else {
                        ffi::MPI_Isend(
                            buffer.ptr,
                            buffer.count,
                            buffer.datatype.resolve().0,
                            *dest,
                            *tag,
                            comm.0,
                            &mut request,
                        )
                    }
                };
                (code, "isend")
            }
            Operation::Recv {
                buffer,
                source,
                tag,
                comm,
                ..
            } => {
                // SAFETY: as above; MPI writes at most `count` elements.
                let code = unsafe {
                    ffi::MPI_Irecv(
                        buffer.ptr,
                        buffer.count,
                        buffer.datatype.resolve().0,
                        *source,
                        *tag,
                        comm.0,
                        &mut request,
                    )
                };
                (code, "irecv")
            }
            Operation::Collective {
                kind,
                send,
                recv,
                op,
                comm,
                ..
            } => {
                let code = match op.map(|spec| self.user_ops.resolve(spec)).transpose() {
                    // SAFETY: buffers owned by the task until completion; the
                    // collective module checked their sizes (and a user
                    // reduction's element type) against the communicator.
                    Ok(op) => unsafe {
                        crate::collective::post(
                            kind,
                            send.as_ref(),
                            recv.as_ref(),
                            op,
                            *comm,
                            &mut request,
                        )
                    },
                    Err(code) => code,
                };
                (code, kind.name())
            }
            Operation::CommCreate {
                split: None,
                comm,
                new,
                ..
            } => {
                // SAFETY: `new` is a heap slot owned by the task until the
                // request completes; valid communicator.
                let code = unsafe { ffi::MPI_Comm_idup(comm.0, &mut new.0, &mut request) };
                (code, "comm_idup")
            }
            Operation::CommCreate {
                split: Some((color, key)),
                comm,
                new,
                ..
            } => {
                // MPI has no non-blocking split: this one call blocks the
                // communication worker until every rank of `comm` joins it.
                // SAFETY: valid communicator; `new` is an out-parameter.
                let code = unsafe { ffi::MPI_Comm_split(comm.0, *color, *key, &mut new.0) };
                if code == ffi::MPI_SUCCESS as c_int {
                    let op = task.op.take().expect("checked above");
                    let Operation::CommCreate { new, request, .. } = op else {
                        unreachable!()
                    };
                    let created = self.adopt_communicator(*new);
                    self.deliver(
                        task,
                        Some(request),
                        Ok(Status {
                            source: -1,
                            tag: -1,
                            count: 0,
                            cancelled: false,
                        }),
                        Some(Box::new(created)),
                    );
                    return;
                }
                (code, "comm_split")
            }
            Operation::Probe { .. } | Operation::Cancel { .. } => unreachable!("handled above"),
        };
        if code != ffi::MPI_SUCCESS as c_int {
            let op = task.op.take().expect("checked above");
            let request = op.request().cloned();
            self.deliver(task, request, Err(mpi_error(name, code, None)), None);
            return;
        }
        task.transition_to_active();
        self.requests.push(request);
        self.active.push(task);
        self.indices.push(0);
        self.statuses.push(empty_status());
    }

    fn cancel(&mut self, target: &Arc<crate::request::RequestCell>) {
        let is_target = |task: &CommTask| {
            task.op
                .as_ref()
                .and_then(Operation::request)
                .is_some_and(|r| Arc::ptr_eq(r, target))
        };
        if let Some(i) = self.active.iter().position(|t| is_target(t)) {
            // SAFETY: an active request handle owned by this worker.
            unsafe { ffi::MPI_Cancel(&mut self.requests[i]) };
        } else if let Some(i) = self.probes.iter().position(|t| is_target(t)) {
            let mut task = self.probes.swap_remove(i);
            let request = task.op.take().and_then(|op| op.request().cloned());
            let status = Status {
                source: -1,
                tag: -1,
                count: 0,
                cancelled: true,
            };
            self.deliver(task, request, Ok(status), Some(Box::new(())));
        }
        // Otherwise the target already completed: cancel is a no-op, as in MPI.
    }

    /// Step 2: one `MPI_Testsome` over every active request.
    fn test_active(&mut self) -> bool {
        if self.requests.is_empty() {
            return false;
        }
        let mut outcount: c_int = 0;
        // SAFETY: the arrays have one entry per active request, as required.
        let code = unsafe {
            ffi::MPI_Testsome(
                self.requests.len() as c_int,
                self.requests.as_mut_ptr(),
                &mut outcount,
                self.indices.as_mut_ptr(),
                self.statuses.as_mut_ptr(),
            )
        };
        // SAFETY: reading an immutable MPI constant.
        if outcount == unsafe { ffi::RSMPI_UNDEFINED } || outcount <= 0 {
            return false;
        }
        // statuses[k] belongs to indices[k]; remove from the highest index
        // down so swap_remove does not move an entry still to be handled.
        let mut done: Vec<(usize, ffi::MPI_Status)> = (0..outcount as usize)
            .map(|k| (self.indices[k] as usize, self.statuses[k]))
            .collect();
        done.sort_unstable_by_key(|entry| std::cmp::Reverse(entry.0));
        for (index, status) in done {
            self.requests.swap_remove(index);
            self.indices.pop();
            self.statuses.pop();
            let task = self.active.swap_remove(index);
            let error_code = if code == ffi::MPI_ERR_IN_STATUS as c_int {
                status.MPI_ERROR
            } else {
                code
            };
            self.complete_request(task, status, error_code);
        }
        true
    }

    fn complete_request(&mut self, mut task: Box<CommTask>, status: ffi::MPI_Status, code: c_int) {
        let op = task.op.take().expect("active task without an operation");
        let cancelled = raw::test_cancelled(&status);
        let name = op.name();
        let (request, result, owned) = match op {
            Operation::Send {
                buffer,
                dest,
                tag,
                request,
                ..
            } => {
                let result = checked(code, "isend", &buffer).map(|()| Status {
                    source: dest,
                    tag,
                    count: buffer.count as usize,
                    cancelled,
                });
                (request, result, Some(buffer.owner))
            }
            Operation::Recv {
                mut buffer,
                request,
                ..
            } => {
                let result = checked(code, "irecv", &buffer).map(|()| Status {
                    source: status.MPI_SOURCE,
                    tag: status.MPI_TAG,
                    count: if cancelled {
                        0
                    } else {
                        raw::get_count(&status, buffer.datatype.resolve()).unwrap_or(0)
                    },
                    cancelled,
                });
                if let (Ok(status), Some(truncate)) = (&result, buffer.truncate) {
                    truncate(&mut *buffer.owner, status.count);
                }
                (request, result, Some(buffer.owner))
            }
            Operation::Collective {
                kind,
                send,
                recv,
                request,
                ..
            } => {
                let name = kind.name();
                let result = if code == ffi::MPI_SUCCESS as c_int {
                    Ok(Status {
                        source: -1,
                        tag: -1,
                        count: recv.as_ref().map_or(0, |b| b.count as usize),
                        cancelled,
                    })
                } else {
                    Err(mpi_error(name, code, None))
                };
                drop(send);
                let owned: Box<dyn std::any::Any + Send> = match recv {
                    Some(buffer) => buffer.owner,
                    None => Box::new(()),
                };
                (request, result, Some(owned))
            }
            Operation::CommCreate { new, request, .. } => {
                let result = if code == ffi::MPI_SUCCESS as c_int {
                    Ok(Status {
                        source: -1,
                        tag: -1,
                        count: 0,
                        cancelled,
                    })
                } else {
                    Err(mpi_error("comm_idup", code, None))
                };
                let created = self.adopt_communicator(*new);
                (
                    request,
                    result,
                    Some(Box::new(created) as Box<dyn std::any::Any + Send>),
                )
            }
            Operation::Probe { .. } | Operation::Cancel { .. } => {
                unreachable!("probes and cancels are not MPI requests")
            }
        };
        let result = match result {
            Ok(status) if status.cancelled && self.cancelled_by_shutdown => {
                Err(Error::Shutdown { op: name })
            }
            other => other,
        };
        self.deliver(task, Some(request), result, owned);
    }

    /// Records a communicator created for the user so that it is freed
    /// before `MPI_Finalize`, and reads its rank and size.
    fn adopt_communicator(&mut self, comm: RawComm) -> Option<CreatedComm> {
        // SAFETY: reading an immutable predefined handle.
        if comm.0 == unsafe { ffi::RSMPI_COMM_NULL } {
            return None;
        }
        let (mut rank, mut size) = (0, 0);
        // SAFETY: a valid communicator just created by MPI; out-parameters.
        unsafe {
            ffi::MPI_Comm_rank(comm.0, &mut rank);
            ffi::MPI_Comm_size(comm.0, &mut size);
        }
        self.created.push(comm);
        Some(CreatedComm {
            raw: comm,
            rank,
            size,
        })
    }

    /// Probes are polled with `MPI_Iprobe` (MPI 4.0 §3.8.1).
    fn poll_probes(&mut self) -> bool {
        let mut progress = false;
        let mut i = 0;
        while i < self.probes.len() {
            let Some(Operation::Probe {
                source,
                tag,
                comm,
                datatype,
                ..
            }) = &self.probes[i].op
            else {
                unreachable!("non-probe task in the probe list");
            };
            let (source, tag, comm, datatype) = (*source, *tag, *comm, *datatype);
            let mut flag: c_int = 0;
            let mut status = empty_status();
            // SAFETY: valid handles; out-parameters.
            let code = unsafe { ffi::MPI_Iprobe(source, tag, comm.0, &mut flag, &mut status) };
            if code != ffi::MPI_SUCCESS as c_int || flag != 0 {
                progress = true;
                let mut task = self.probes.swap_remove(i);
                let request = task.op.take().and_then(|op| op.request().cloned());
                let result = if code == ffi::MPI_SUCCESS as c_int {
                    Ok(Status {
                        source: status.MPI_SOURCE,
                        tag: status.MPI_TAG,
                        count: raw::get_count(&status, datatype.resolve()).unwrap_or(0),
                        cancelled: false,
                    })
                } else {
                    Err(mpi_error("probe", code, None))
                };
                self.deliver(task, request, result, Some(Box::new(())));
            } else {
                i += 1;
            }
        }
        progress
    }

    /// Step 3: publishes the outcome, then recycles the record.
    fn deliver(
        &mut self,
        mut task: Box<CommTask>,
        request: Option<Arc<crate::request::RequestCell>>,
        result: Result<Status, Error>,
        owned: Option<Box<dyn std::any::Any + Send>>,
    ) {
        task.transition_to_completed();
        task.op = None;
        if let Some(request) = request {
            request.complete(Outcome { result, owned });
        }
        self.shared.recycle(task);
    }

    /// Shutdown steps 2–3.
    fn shut_down(&mut self) {
        self.shared.close();
        self.post_submitted();
        self.test_active();
        self.poll_probes();
        if !self.in_flight() {
            return;
        }
        let pending: Vec<String> = self
            .active
            .iter()
            .chain(&self.probes)
            .filter_map(|t| t.op.as_ref().map(Operation::describe))
            .collect();
        eprintln!(
            "hc-mpi: shutting down with {} operation(s) still pending: {}",
            pending.len(),
            pending.join(", ")
        );
        for mut task in std::mem::take(&mut self.probes) {
            let request = task.op.take().and_then(|op| op.request().cloned());
            self.deliver(task, request, Err(Error::Shutdown { op: "probe" }), None);
        }
        self.cancelled_by_shutdown = true;
        for request in &mut self.requests {
            // SAFETY: active request handles owned by this worker.
            unsafe { ffi::MPI_Cancel(request) };
        }
        let deadline = Instant::now() + self.config.shutdown_grace;
        while !self.active.is_empty() && Instant::now() < deadline {
            if !self.test_active() {
                std::thread::yield_now();
            }
        }
        for (mut request, mut task) in self.requests.drain(..).zip(self.active.drain(..)) {
            // SAFETY: frees the handle; MPI may still complete the transfer in
            // the background, so the buffer below is leaked, not freed.
            unsafe { ffi::MPI_Request_free(&mut request) };
            let op = task.op.take().expect("active task without an operation");
            let name = op.name();
            if let Some(cell) = op.request().cloned() {
                std::mem::forget(op);
                cell.complete(Outcome {
                    result: Err(Error::Shutdown { op: name }),
                    owned: None,
                });
            }
        }
        self.indices.clear();
        self.statuses.clear();
    }

    /// Shutdown step 4 (first half): frees user communicators and user
    /// reduction operations.
    fn free_communicators(&mut self) {
        self.user_ops.free_all();
        for mut comm in self.created.drain(..) {
            // SAFETY: created by this worker, freed once, before finalize.
            unsafe { ffi::MPI_Comm_free(&mut comm.0) };
        }
    }
}

/// Maps a completion code to the request's result.
fn checked(code: c_int, op: &'static str, buffer: &Buffer) -> Result<(), Error> {
    if code == ffi::MPI_SUCCESS as c_int {
        Ok(())
    } else {
        Err(mpi_error(op, code, Some(buffer.count as usize)))
    }
}

fn mpi_error(op: &'static str, code: c_int, capacity: Option<usize>) -> Error {
    let class = raw::error_class(code);
    let message = raw::error_string(code);
    match capacity {
        Some(capacity) if class == ffi::MPI_ERR_TRUNCATE as c_int => Error::Truncated {
            op,
            capacity,
            message,
        },
        _ => Error::Mpi { op, class, message },
    }
}
