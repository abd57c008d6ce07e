//! Requests: the handle of an in-flight operation, typed by what it hands
//! back, and awaitable every way a DDF is (§II-B, §III of the HCMPI paper).
//!
//! A [`Request<T>`] completes with its `T` — the `Vec<E>` that was sent or
//! received, a reduced vector, a new communicator — and a [`Status`]. It
//! is a Rust [`Future`] (`request.await` in a future task holds no
//! worker), an [`Awaitable`] for data-driven tasks
//! (`scope.spawn_await(&[&request], ..)`), and can be waited on from leaf
//! code ([`Request::wait`]). It is `Send`: hand it to another task by
//! moving it there, or [`share`](Request::share) it with several.
//!
//! # A request and its finish
//!
//! An operation belongs to the finish enclosing the task that started it:
//! `finish { irecv(..) }` returns only once the message is in (Fig. 3). If
//! that task panics while it still owns the pending request, the request
//! is cancelled (`MPI_Cancel`) and the finish stops waiting for it, so the
//! finish re-raises the panic instead of hanging.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hc_runtime::{Awaitable, Handle, Promise, PromiseError, Readiness};

use crate::engine::{Engine, Submission};
use crate::error::Error;
use crate::op::{Cancel, OpId, Reply};

/// Completion information of a request (HCMPI_Status / MPI_Status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// The rank the message came from (receives and probes).
    pub source: i32,
    /// The message tag (receives and probes).
    pub tag: i32,
    /// Number of elements of the request's element type that were received
    /// (`MPI_Get_count`); for sends, the number sent.
    pub count: usize,
    /// Whether the request was cancelled (`MPI_Test_cancelled`).
    pub cancelled: bool,
}

impl Status {
    /// `MPI_Get_count`: the number of received elements.
    pub fn get_count(&self) -> usize {
        self.count
    }

    /// The status of an operation with no message (collectives,
    /// communicator creation).
    pub(crate) fn empty(count: usize, cancelled: bool) -> Status {
        Status {
            source: -1,
            tag: -1,
            count,
            cancelled,
        }
    }
}

/// What a request completes with.
pub(crate) type Outcome<T> = Result<(T, Status), Error>;

/// A pending (or completed) operation: a future over the `T` it hands back
/// and its [`Status`].
///
/// ```no_run
/// # let hc = hc_mpi::Hcmpi::init()?;
/// let world = hc.world();
/// let peer = (hc.rank() + 1) % hc.size();
/// let request = world.irecv(vec![0u8; 4], hc_mpi::ANY_SOURCE, 1)?;
/// world.isend(vec![hc.rank() as u8; 4], peer, 1)?;
/// // Handed to another task, which awaits it without holding a worker.
/// let (data, status) = hc.runtime().block_on(async move { request.await })?;
/// assert_eq!(data.len(), status.count);
/// # Ok::<(), hc_mpi::Error>(())
/// ```
pub struct Request<T> {
    promise: Promise<Outcome<T>>,
    op: &'static str,
    id: OpId,
    cancel: Cancel,
    engine: Arc<Engine>,
}

impl<T> fmt::Debug for Request<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("op", &self.op)
            .field("promise", &self.promise)
            .finish()
    }
}

/// Creates an operation's reply and its request; the request joins the
/// finish enclosing the caller.
pub(crate) fn request<T: Send>(
    engine: &Arc<Engine>,
    op: &'static str,
    cancel: Cancel,
) -> (Reply<T>, Request<T>, OpId) {
    let (mut reply, promise) = hc_runtime::promise();
    reply.join_enclosing_finish();
    let id = engine.next_id();
    let request = Request {
        promise,
        op,
        id,
        cancel,
        engine: Arc::clone(engine),
    };
    (reply, request, id)
}

impl<T: Send> Request<T> {
    /// The operation's name (as in errors), e.g. `"irecv"`.
    pub fn op(&self) -> &'static str {
        self.op
    }

    pub(crate) fn id(&self) -> OpId {
        self.id
    }

    pub(crate) fn cancel_kind(&self) -> Cancel {
        self.cancel
    }

    /// `MPI_Test`: whether the operation has completed. Never blocks. Like
    /// `MPI_Test`, it drives progress: in shared placement, a test of a
    /// pending request steps the engine if no other thread is stepping it,
    /// so a task that polls its requests in a loop cannot starve them.
    pub fn test(&self) -> bool {
        if self.promise.is_complete() {
            return true;
        }
        if self.engine.placement() == crate::Placement::Shared {
            self.engine.try_step(true);
        }
        self.promise.is_complete()
    }

    /// `HCMPI_GET_STATUS`: the status once completed, `None` before.
    ///
    /// # Errors
    /// The operation's error, if it failed.
    pub fn status(&self) -> Option<Result<Status, Error>> {
        match self.promise.get() {
            Err(PromiseError::Pending) => None,
            Ok(Ok((_, status))) => Some(Ok(*status)),
            Ok(Err(error)) => Some(Err(error.clone())),
            Err(_) => Some(Err(Error::Shutdown { op: self.op })),
        }
    }

    /// The buffer and status of a completed request, borrowed: a task
    /// awaiting the request reads the received data in place (Fig. 4).
    ///
    /// # Errors
    /// [`Error::Pending`] before completion; the operation's error if it
    /// failed.
    pub fn get(&self) -> Result<(&T, Status), Error> {
        match self.promise.get() {
            Ok(Ok((value, status))) => Ok((value, *status)),
            Ok(Err(error)) => Err(error.clone()),
            Err(PromiseError::Pending) => Err(Error::Pending { op: self.op }),
            Err(_) => Err(Error::Shutdown { op: self.op }),
        }
    }

    /// `MPI_Wait`: waits for completion and returns the buffer with the
    /// status. For leaf code: in a future task, `.await` the request.
    ///
    /// On a computation worker the wait runs other tasks on its stack; on
    /// other threads it parks, or steps the engine in shared placement.
    ///
    /// # Errors
    /// The operation's error (MPI error, truncation, shutdown);
    /// [`Error::WaitInHandler`] inside a message handler running on the
    /// engine.
    pub fn wait(mut self) -> Result<(T, Status), Error> {
        if crate::engine::is_stepping() && !self.test() {
            return Err(Error::WaitInHandler { op: self.op });
        }
        if !self.test() {
            let on_worker = hc_runtime::current_worker_index().is_some();
            if on_worker || self.engine.placement() == crate::Placement::Dedicated {
                hc_runtime::wait(&self.promise.readiness());
            } else {
                self.engine.block_until(&self.promise.readiness());
            }
        }
        self.take()
    }

    /// The buffer and status if completed, or the request back if not.
    ///
    /// # Errors
    /// `Err(self)` while pending; `Ok(Err(e))` if the operation failed.
    #[allow(clippy::type_complexity)]
    pub fn try_wait(mut self) -> Result<Result<(T, Status), Error>, Self> {
        if self.test() {
            Ok(self.take())
        } else {
            Err(self)
        }
    }

    /// Runs `callback` on a computation worker with the buffer and status
    /// once the request completes (completion callbacks after "MPI
    /// detach", Protze et al. 2022). The callback is a detached task: no
    /// finish waits for it, and it must own what it uses.
    pub fn on_complete<F>(self, handle: &Handle, callback: F)
    where
        T: 'static,
        F: FnOnce(Result<(T, Status), Error>) + Send + 'static,
    {
        drop(handle.spawn(async move { callback(self.await) }));
    }

    /// Shares the request with several tasks: every clone awaits the same
    /// completion and borrows the same buffer.
    pub fn share(self) -> SharedRequest<T> {
        SharedRequest {
            inner: Arc::new(self),
        }
    }

    fn take(&mut self) -> Result<(T, Status), Error> {
        match self.promise.try_take() {
            Ok(outcome) => outcome,
            Err(PromiseError::Pending) => Err(Error::Pending { op: self.op }),
            Err(_) => Err(Error::Shutdown { op: self.op }),
        }
    }
}

impl<T: Send + Sync> Awaitable for Request<T> {
    fn readiness(&self) -> Readiness<'_> {
        self.promise.readiness()
    }
}

/// `request.await`: the buffer and status, or the operation's error.
impl<T: Send> Future for Request<T> {
    type Output = Result<(T, Status), Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let op = self.op;
        match Pin::new(&mut self.promise).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(outcome)) => Poll::Ready(outcome),
            Poll::Ready(Err(PromiseError::Taken)) => {
                panic!("hc-mpi: {op} request polled after it completed")
            }
            Poll::Ready(Err(_)) => Poll::Ready(Err(Error::Shutdown { op })),
        }
    }
}

impl<T> Drop for Request<T> {
    fn drop(&mut self) {
        if std::thread::panicking() && !self.promise.is_complete() {
            // The task that owns this request is unwinding: its finish must
            // not wait for an operation nobody will look at, and MPI should
            // stop it if it can.
            self.promise.release_finish();
            self.engine.submit(Submission::Cancel(self.id));
        }
    }
}

/// A request shared by several tasks ([`Request::share`]): each clone can
/// await it and borrow its buffer.
///
/// ```no_run
/// # let hc = hc_mpi::Hcmpi::init()?;
/// let world = hc.world();
/// let shared = world.irecv(vec![0u32; 8], hc_mpi::ANY_SOURCE, 2)?.share();
/// world.isend(vec![7u32; 8], hc.rank(), 2)?;
/// hc.finish(|s| {
///     for _ in 0..4 {
///         let shared = shared.clone();
///         s.spawn_future(async move {
///             let (data, _) = (&shared).await.unwrap();
///             assert_eq!(data[0], 7);
///         });
///     }
/// });
/// # Ok::<(), hc_mpi::Error>(())
/// ```
pub struct SharedRequest<T> {
    inner: Arc<Request<T>>,
}

impl<T> Clone for SharedRequest<T> {
    fn clone(&self) -> Self {
        SharedRequest {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> fmt::Debug for SharedRequest<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SharedRequest").field(&self.inner).finish()
    }
}

impl<T: Send> SharedRequest<T> {
    /// Whether the operation has completed.
    pub fn test(&self) -> bool {
        self.inner.test()
    }

    /// The buffer and status, borrowed (see [`Request::get`]).
    ///
    /// # Errors
    /// As [`Request::get`].
    pub fn get(&self) -> Result<(&T, Status), Error> {
        self.inner.get()
    }

    /// The status once completed (see [`Request::status`]).
    pub fn status(&self) -> Option<Result<Status, Error>> {
        self.inner.status()
    }
}

impl<T: Send + Sync> Awaitable for SharedRequest<T> {
    fn readiness(&self) -> Readiness<'_> {
        self.inner.readiness()
    }
}

/// `(&shared).await`: the buffer, borrowed, and the status.
impl<'a, T: Send + Sync> IntoFuture for &'a SharedRequest<T> {
    type Output = Result<(&'a T, Status), Error>;
    type IntoFuture = SharedRequestGet<'a, T>;

    fn into_future(self) -> SharedRequestGet<'a, T> {
        SharedRequestGet {
            shared: self,
            ready: hc_runtime::ready(&*self.inner),
        }
    }
}

/// The future of `(&shared_request).await`.
#[must_use = "futures do nothing unless awaited"]
pub struct SharedRequestGet<'a, T> {
    shared: &'a SharedRequest<T>,
    ready: hc_runtime::Ready<'a>,
}

impl<T> fmt::Debug for SharedRequestGet<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedRequestGet").finish_non_exhaustive()
    }
}

impl<'a, T: Send + Sync> Future for SharedRequestGet<'a, T> {
    type Output = Result<(&'a T, Status), Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let shared = self.shared;
        Pin::new(&mut self.ready)
            .poll(cx)
            .map(|()| shared.inner.get())
    }
}

/// `MPI_Waitall`: waits for every request (an AND list of DDFs).
///
/// # Errors
/// [`Error::WaitInHandler`] inside a message handler running on the engine
/// while a request is still pending: the engine could not progress it.
pub fn wait_all(requests: &[&dyn Awaitable]) -> Result<(), Error> {
    if crate::engine::is_stepping() && !test_all(requests) {
        return Err(Error::WaitInHandler { op: "wait_all" });
    }
    for request in requests {
        hc_runtime::wait(*request);
    }
    Ok(())
}

/// `MPI_Waitany`: waits until one request completes and returns its index
/// (an OR list of DDFs, released once).
///
/// # Errors
/// [`Error::WaitInHandler`] inside a message handler running on the engine
/// while no request has completed: the engine could not progress them.
///
/// # Panics
/// If `requests` is empty.
pub fn wait_any(requests: &[&dyn Awaitable]) -> Result<usize, Error> {
    assert!(
        !requests.is_empty(),
        "hc-mpi: wait_any on an empty list of requests"
    );
    if let Some(index) = test_any(requests) {
        return Ok(index);
    }
    if crate::engine::is_stepping() {
        return Err(Error::WaitInHandler { op: "wait_any" });
    }
    Ok(hc_runtime::wait_any(requests))
}

/// `MPI_Testall`: whether every request has completed.
pub fn test_all(requests: &[&dyn Awaitable]) -> bool {
    requests.iter().all(|r| r.is_ready())
}

/// `MPI_Testany`: the index of a completed request, if any.
pub fn test_any(requests: &[&dyn Awaitable]) -> Option<usize> {
    requests.iter().position(|r| r.is_ready())
}
