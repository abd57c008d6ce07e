//! Message services: the engine receives every message of one tag on one
//! communicator and hands each to a handler — what a DDDF space's listener,
//! distributed events and work-stealing requests are built on.
//!
//! A service is owned by the engine: every engine step probes for its
//! messages with `MPI_Improbe` (MPI 4.0 §3.8.2), which matches a message
//! and removes it from the queue in one call, so no other receive can take
//! it in between; it then receives exactly that message with `MPI_Imrecv`
//! into a buffer of the probed size. Messages from one source are delivered
//! in the order they were sent (MPI's non-overtaking rule), because a
//! service delivers its matched messages first-in, first-out.
//!
//! Handlers come in two kinds:
//!
//! * [`Comm::serve`]: the handler runs on the engine, in order. It must be
//!   short and must not block: while it runs, no communication progresses.
//!   It may start operations (a reply `isend`). They belong to no finish,
//!   as if started in [`hc_runtime::outside_finish`]: the thread stepping
//!   the engine may be a worker inside some task's finish, which is not
//!   the handler's to hold up. A blocking wait in it fails
//!   with [`Error::WaitInHandler`](crate::Error::WaitInHandler). A panic
//!   stops the service with [`Error::HandlerPanicked`](crate::Error::HandlerPanicked).
//! * [`Comm::serve_tasks`]: each message is released as a detached task on
//!   the computation workers, which may run them in parallel and in any
//!   order, and may block or compute as long as they like.
//!
//! The service runs until [`Service::stop`] (which reports whether it
//! failed) or until its handle is dropped.

use std::collections::VecDeque;
use std::os::raw::{c_int, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use hc_runtime::{Completer, Handle};
use mpi::datatype::Equivalence;
use mpi::ffi;

use crate::comm::Comm;
use crate::engine::{Engine, EngineCtx, Submission};
use crate::op::mpi_error;
use crate::raw::{empty_status, null_request, DatatypeOf, Handle as RawHandle};
use crate::Error;

/// Messages a service probes for in one engine step at most, so that one
/// busy service cannot starve the rest of the engine.
const MAX_PER_STEP: usize = 64;

/// How long removing a service waits for the messages it already matched.
const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// One received message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message<E> {
    /// The sender's rank.
    pub source: i32,
    /// The message's tag.
    pub tag: i32,
    /// Its contents.
    pub data: Vec<E>,
}

/// Identifies a service on its engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ServiceId(u64);

/// A running message service ([`Comm::serve`], [`Comm::serve_tasks`]).
/// Dropping it stops the service without waiting.
pub struct Service {
    id: ServiceId,
    tag: i32,
    engine: Arc<Engine>,
    failure: Arc<OnceLock<Error>>,
    stopped: bool,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service").field("tag", &self.tag).finish()
    }
}

impl Service {
    /// The tag it serves.
    pub fn tag(&self) -> i32 {
        self.tag
    }

    /// The error that stopped the service, once it has: lets its owner
    /// notice a failed service without stopping it (no MPI call).
    ///
    /// ```no_run
    /// # let hc = hc_mpi::Hcmpi::init()?;
    /// let service = hc.world().serve(7, |_: hc_mpi::Message<u8>| {})?;
    /// assert!(service.failure().is_none());
    /// # Ok::<(), hc_mpi::Error>(())
    /// ```
    pub fn failure(&self) -> Option<Error> {
        self.failure.get().cloned()
    }

    /// Stops the service once the messages it already matched are
    /// delivered, and says how it ended.
    ///
    /// # Errors
    /// The error that stopped it earlier ([`Error::HandlerPanicked`], an
    /// MPI error), or [`Error::Shutdown`] if the engine shut down first.
    pub fn stop(mut self) -> Result<(), Error> {
        self.stopped = true;
        let (completer, promise) = hc_runtime::promise();
        self.engine
            .submit(Submission::StopServing(self.id, completer));
        if crate::engine::is_stepping() {
            // Inside a handler the engine applies the stop after this step.
            return Ok(());
        }
        if hc_runtime::current_worker_index().is_none()
            && self.engine.placement() == crate::Placement::Shared
        {
            self.engine.block_until(&promise.readiness());
        }
        promise
            .wait()
            .unwrap_or(Err(Error::Shutdown { op: "serve" }))
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if !self.stopped {
            let (completer, _) = hc_runtime::promise();
            self.engine
                .submit(Submission::StopServing(self.id, completer));
        }
    }
}

/// A handler that runs on the engine.
type InlineHandler<E> = Box<dyn FnMut(Message<E>) + Send>;

/// A handler released as a task per message.
type TaskHandler<E> = Arc<dyn Fn(&Handle, Message<E>) + Send + Sync>;

/// A handler of one of the two kinds (see the module docs).
enum Dispatch<E> {
    Inline(InlineHandler<E>),
    Tasks(TaskHandler<E>),
}

/// A message matched and being received.
struct Receiving<E> {
    /// A `Handle`: with Open MPI a request is a pointer, which is not
    /// `Send` by itself.
    request: RawHandle<ffi::MPI_Request>,
    data: Vec<E>,
    source: i32,
    tag: i32,
}

/// A service as the engine holds it.
struct Serving<E> {
    id: ServiceId,
    tag: i32,
    comm: Comm,
    dispatch: Dispatch<E>,
    receiving: VecDeque<Receiving<E>>,
    /// Shared with the [`Service`] handle.
    failure: Arc<OnceLock<Error>>,
}

/// What the engine needs from a service, whatever its element type.
pub(crate) trait ServingDyn: Send {
    fn id(&self) -> ServiceId;
    fn describe(&self) -> String;
    /// Matches, receives and delivers what has arrived. `Ok(progress)`, or
    /// the error that stops the service.
    fn poll(&mut self, ctx: &mut EngineCtx<'_>) -> Result<bool, Error>;
    /// Delivers the messages already matched (removal, shutdown); frees and
    /// leaks the ones that do not complete in time.
    fn drain(&mut self, ctx: &mut EngineCtx<'_>);
    /// Makes the error that stopped the service visible to its handle.
    fn record_failure(&self, error: &Error);
}

impl<E: Equivalence + Default + Clone + Send + 'static> Serving<E> {
    fn deliver(&mut self, message: Message<E>, ctx: &EngineCtx<'_>) -> Result<(), Error> {
        match &mut self.dispatch {
            Dispatch::Inline(handler) => panic::catch_unwind(AssertUnwindSafe(|| handler(message)))
                .map_err(|payload| Error::HandlerPanicked {
                    tag: self.tag,
                    message: hc_runtime::panic_message(&*payload).to_owned(),
                }),
            Dispatch::Tasks(handler) => {
                let handle = ctx.handle.ok_or(Error::Shutdown { op: "serve_tasks" })?;
                let handler = Arc::clone(handler);
                handle.spawn_detached(move |handle| handler(handle, message));
                Ok(())
            }
        }
    }

    /// Delivers the received messages at the front of the queue, in order.
    fn deliver_received(&mut self, ctx: &EngineCtx<'_>) -> Result<bool, Error> {
        let mut progress = false;
        while let Some(front) = self.receiving.front_mut() {
            let mut flag: c_int = 0;
            let mut status = empty_status();
            // SAFETY: a request this service posted and owns.
            let code = unsafe { ffi::MPI_Test(&mut front.request.0, &mut flag, &mut status) };
            if code != ffi::MPI_SUCCESS as c_int {
                return Err(mpi_error("serve", code, None));
            }
            if flag == 0 {
                break;
            }
            let received = self.receiving.pop_front().expect("front exists");
            progress = true;
            let bytes = std::mem::size_of_val(received.data.as_slice());
            self.comm.engine().record_served(bytes);
            hc_runtime::trace::instant(
                "mpi",
                "served",
                hc_runtime::trace::Args::new()
                    .with("source", i64::from(received.source))
                    .with("tag", i64::from(received.tag))
                    .with("bytes", bytes as i64),
            );
            self.deliver(
                Message {
                    source: received.source,
                    tag: received.tag,
                    data: received.data,
                },
                ctx,
            )?;
        }
        Ok(progress)
    }
}

impl<E: Equivalence + Default + Clone + Send + 'static> ServingDyn for Serving<E> {
    fn id(&self) -> ServiceId {
        self.id
    }

    fn describe(&self) -> String {
        format!("serve(tag={})", self.tag)
    }

    fn poll(&mut self, ctx: &mut EngineCtx<'_>) -> Result<bool, Error> {
        let mut progress = false;
        for _ in 0..MAX_PER_STEP {
            let mut flag: c_int = 0;
            // SAFETY: reading an immutable MPI constant.
            let mut message = unsafe { ffi::RSMPI_MESSAGE_NULL };
            let mut status = empty_status();
            // SAFETY: valid communicator; out-parameters (MPI 4.0 §3.8.2).
            let code = unsafe {
                ffi::MPI_Improbe(
                    ffi::RSMPI_ANY_SOURCE,
                    self.tag,
                    self.comm.raw().0,
                    &mut flag,
                    &mut message,
                    &mut status,
                )
            };
            if code != ffi::MPI_SUCCESS as c_int {
                return Err(mpi_error("serve", code, None));
            }
            if flag == 0 {
                break;
            }
            progress = true;
            // A message that is not a whole number of elements is received
            // as far as it goes (MPI truncates the count).
            let count = crate::raw::get_count::<E>(&status).unwrap_or(0);
            let mut data = vec![E::default(); count];
            let mut request = null_request();
            let datatype = DatatypeOf::<E>::new();
            // SAFETY: `message` was matched by the probe above and is
            // received once; the buffer holds `count` elements and stays
            // owned by this service until the request completes.
            let code = unsafe {
                ffi::MPI_Imrecv(
                    data.as_mut_ptr() as *mut c_void,
                    count as c_int,
                    datatype.raw(),
                    &mut message,
                    &mut request,
                )
            };
            if code != ffi::MPI_SUCCESS as c_int {
                return Err(mpi_error("serve", code, Some(count)));
            }
            self.receiving.push_back(Receiving {
                request: RawHandle(request),
                data,
                source: status.MPI_SOURCE,
                tag: status.MPI_TAG,
            });
        }
        Ok(self.deliver_received(ctx)? | progress)
    }

    fn record_failure(&self, error: &Error) {
        let _ = self.failure.set(error.clone());
    }

    fn drain(&mut self, ctx: &mut EngineCtx<'_>) {
        let deadline = Instant::now() + DRAIN_GRACE;
        while !self.receiving.is_empty() && Instant::now() < deadline {
            if self.deliver_received(ctx).is_err() {
                break;
            }
        }
        for mut receiving in self.receiving.drain(..) {
            // SAFETY: a request this service owns, freed once; MPI may still
            // write the buffer, so it is leaked.
            unsafe { ffi::MPI_Request_free(&mut receiving.request.0) };
            std::mem::forget(receiving.data);
        }
    }
}

/// The services of an engine: running ones, and failed ones kept until
/// their handle asks how they ended.
#[derive(Default)]
pub(crate) struct Services {
    running: Vec<Box<dyn ServingDyn>>,
    failed: Vec<(ServiceId, Error)>,
}

impl Services {
    pub(crate) fn add(&mut self, service: Box<dyn ServingDyn>) {
        self.running.push(service);
    }

    /// Polls every running service: `(progress, services that failed)`.
    pub(crate) fn poll(&mut self, ctx: &mut EngineCtx<'_>) -> (bool, usize) {
        let mut progress = false;
        let mut failed = 0;
        let mut i = 0;
        while i < self.running.len() {
            match self.running[i].poll(ctx) {
                Ok(progressed) => {
                    progress |= progressed;
                    i += 1;
                }
                Err(error) => {
                    let mut service = self.running.swap_remove(i);
                    service.drain(ctx);
                    service.record_failure(&error);
                    self.failed.push((service.id(), error));
                    failed += 1;
                    progress = true;
                }
            }
        }
        (progress, failed)
    }

    /// Removes service `id`, telling `stopped` how it ended; whether it was
    /// still running.
    pub(crate) fn remove(
        &mut self,
        id: ServiceId,
        stopped: Completer<Result<(), Error>>,
        ctx: &mut EngineCtx<'_>,
    ) -> bool {
        if let Some(index) = self.running.iter().position(|s| s.id() == id) {
            let mut service = self.running.swap_remove(index);
            service.drain(ctx);
            stopped.complete(Ok(()));
            return true;
        }
        match self.failed.iter().position(|(failed, _)| *failed == id) {
            Some(index) => stopped.complete(Err(self.failed.swap_remove(index).1)),
            None => stopped.complete(Ok(())),
        }
        false
    }

    pub(crate) fn describe(&self) -> impl Iterator<Item = String> + '_ {
        self.running.iter().map(|s| s.describe())
    }

    /// Ends every running service (shutdown); how many there were.
    pub(crate) fn end_all(&mut self, ctx: &mut EngineCtx<'_>) -> usize {
        let count = self.running.len();
        for mut service in self.running.drain(..) {
            service.drain(ctx);
            service.record_failure(&Error::Shutdown { op: "serve" });
        }
        count
    }
}

impl Comm {
    fn start_service<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        tag: i32,
        dispatch: Dispatch<E>,
    ) -> Result<Service, Error> {
        self.check_tag("serve", tag)?;
        let engine = Arc::clone(self.engine());
        let id = ServiceId(engine.next_id().0);
        let failure = Arc::new(OnceLock::new());
        engine.submit(Submission::Serve(Box::new(Serving {
            id,
            tag,
            comm: self.clone(),
            dispatch,
            receiving: VecDeque::new(),
            failure: Arc::clone(&failure),
        })));
        Ok(Service {
            id,
            tag,
            engine,
            failure,
            stopped: false,
        })
    }

    /// Serves every message with `tag` on this communicator: `handler`
    /// runs on the engine for each, in the order they arrive (see the
    /// module docs for what a handler may do). Elements are `E`; a message
    /// is received whole, whatever its length.
    ///
    /// ```no_run
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::sync::Arc;
    ///
    /// # let hc = hc_mpi::Hcmpi::init()?;
    /// let world = hc.world().clone();
    /// let total = Arc::new(AtomicU64::new(0));
    /// let sum = Arc::clone(&total);
    /// let service = world.serve(5, move |message: hc_mpi::Message<u64>| {
    ///     sum.fetch_add(message.data.iter().sum(), Ordering::Relaxed);
    /// })?;
    /// world.send(vec![1u64, 2, 3], hc.rank(), 5)?;
    /// world.barrier()?;
    /// service.stop()?;
    /// # Ok::<(), hc_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    /// A bad tag.
    pub fn serve<E, F>(&self, tag: i32, handler: F) -> Result<Service, Error>
    where
        E: Equivalence + Default + Clone + Send + 'static,
        F: FnMut(Message<E>) + Send + 'static,
    {
        self.start_service(tag, Dispatch::Inline(Box::new(handler)))
    }

    /// Serves every message with `tag` on this communicator by releasing
    /// `handler` as a detached task for each, on the computation workers
    /// (in parallel, in any order).
    ///
    /// # Errors
    /// A bad tag.
    pub fn serve_tasks<E, F>(&self, tag: i32, handler: F) -> Result<Service, Error>
    where
        E: Equivalence + Default + Clone + Send + 'static,
        F: Fn(&Handle, Message<E>) + Send + Sync + 'static,
    {
        self.start_service(tag, Dispatch::Tasks(Arc::new(handler)))
    }
}
