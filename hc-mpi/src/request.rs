//! Requests: the handle of an in-flight communication task, which is also a
//! data-driven future (§II-B, §III of the HCMPI paper).
//!
//! A [`Request<T>`] can be awaited like a `Ddf` (`spawn_await`,
//! `spawn_await_any`, `finish`), tested, waited on, and finally turned back
//! into the buffer it owns (`T`, e.g. the `Vec<E>` that was sent or received)
//! together with its [`Status`]. The communication worker is the only writer:
//! it stores the outcome, then publishes the request's [`DdfCore`], which
//! releases every task awaiting it.

use std::any::Any;
use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use hc_runtime::{Awaitable, Completer, Ddf, Readiness};

use crate::error::Error;

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
}

/// What the communication worker delivers.
pub(crate) struct Outcome {
    pub(crate) result: Result<Status, Error>,
    /// The buffer the operation owned, handed back.
    pub(crate) owned: Option<Box<dyn Any + Send>>,
}

/// The shared, untyped part of a request.
///
/// The communication worker writes `outcome` once, then publishes `core`
/// (release); readers look at `outcome` only after observing `core` full
/// (acquire), exactly as a `Ddf` guards its value. Only the owning
/// [`Request`] (not `Clone`) reads or takes it afterwards.
pub(crate) struct RequestCell {
    done: Ddf<()>,
    outcome: UnsafeCell<Option<Outcome>>,
    /// Ties the enclosing finish of the submitter until completion.
    finish: std::sync::Mutex<Option<Completer<()>>>,
}

// SAFETY: `outcome` is written once by the communication worker before the
// core is published and only read after; its contents are `Send`.
unsafe impl Sync for RequestCell {}

impl fmt::Debug for RequestCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestCell")
            .field("complete", &self.is_complete())
            .finish()
    }
}

impl RequestCell {
    pub(crate) fn new() -> Arc<RequestCell> {
        Arc::new(RequestCell {
            done: Ddf::new(),
            outcome: UnsafeCell::new(None),
            finish: std::sync::Mutex::new(None),
        })
    }

    /// HC semantics: the finish enclosing the submitter waits for this
    /// request (Fig. 3 of the paper).
    pub(crate) fn join_enclosing_finish(&self) {
        let (mut completer, _) = hc_runtime::promise();
        if completer.join_enclosing_finish() {
            *self.finish.lock().unwrap_or_else(|e| e.into_inner()) = Some(completer);
        }
    }

    /// Stores the outcome and releases every waiter. Called once, by the
    /// communication worker.
    pub(crate) fn complete(&self, outcome: Outcome) {
        assert!(!self.done.is_put(), "hc-mpi: request completed twice");
        // SAFETY: the one writer (the communication worker, or a submitter
        // failing a request that never reached it) writes before publishing;
        // nobody reads before `done` is put.
        unsafe { *self.outcome.get() = Some(outcome) };
        self.done
            .put(())
            .unwrap_or_else(|_| panic!("hc-mpi: request completed twice"));
        let tie = self.finish.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(completer) = tie {
            completer.complete(());
        }
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.done.is_put()
    }

    /// The outcome, once complete.
    fn outcome(&self) -> Option<&Outcome> {
        if !self.is_complete() {
            return None;
        }
        // SAFETY: complete ⇒ written and published; only taken through an
        // owned `Request`, which cannot coexist with this borrow.
        unsafe { (*self.outcome.get()).as_ref() }
    }
}

/// A pending (or completed) communication: a data-driven future over the
/// buffer `T` it owns and its [`Status`].
///
/// Awaitable: `scope.spawn_await(&[&request], ...)` runs a task once the
/// communication completed (Fig. 4 of the paper).
pub struct Request<T> {
    pub(crate) cell: Arc<RequestCell>,
    pub(crate) op: &'static str,
    marker: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for Request<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("op", &self.op)
            .field("complete", &self.cell.is_complete())
            .finish()
    }
}

impl Awaitable for RequestCell {
    fn readiness(&self) -> Readiness<'_> {
        self.done.readiness()
    }
}

impl<T> Awaitable for Request<T> {
    fn readiness(&self) -> Readiness<'_> {
        self.cell.done.readiness()
    }
}

impl<T: Any + Send> Request<T> {
    pub(crate) fn new(cell: Arc<RequestCell>, op: &'static str) -> Self {
        Request {
            cell,
            op,
            marker: PhantomData,
        }
    }

    /// `MPI_Test`: whether the communication has completed. Never blocks.
    pub fn test(&self) -> bool {
        self.cell.is_complete()
    }

    /// `HCMPI_GET_STATUS`: the status once completed, `None` before.
    ///
    /// # Errors
    /// The operation's error, if it failed.
    pub fn status(&self) -> Option<Result<Status, Error>> {
        if !self.test() {
            return None;
        }
        self.cell.outcome().map(|outcome| outcome.result.clone())
    }

    /// `MPI_Wait`: waits for completion and returns the buffer with the
    /// status.
    ///
    /// Inside a task the wait runs other tasks (the computation worker never
    /// blocks in MPI); on other threads it parks.
    ///
    /// # Errors
    /// The operation's error (MPI error, truncation, shutdown).
    pub fn wait(self) -> Result<(T, Status), Error> {
        hc_runtime::wait(&self);
        self.take_completed()
    }

    /// The buffer and status if completed, or the request back if not.
    ///
    /// # Errors
    /// `Err(self)` while pending; `Ok(Err(e))` if the operation failed.
    #[allow(clippy::type_complexity)]
    pub fn try_wait(self) -> Result<Result<(T, Status), Error>, Self> {
        if self.test() {
            Ok(self.take_completed())
        } else {
            Err(self)
        }
    }

    /// Runs `callback` on a computation worker of `runtime` once the request
    /// completes, handing it the buffer and status (completion callbacks
    /// after "MPI detach", Protze et al. 2022). The callback is a detached
    /// task: no finish waits for it, and it must own what it uses.
    pub fn on_complete<F>(self, runtime: &hc_runtime::Runtime, callback: F)
    where
        F: FnOnce(Result<(T, Status), Error>) + Send + 'static,
    {
        let cell = Arc::clone(&self.cell);
        runtime.spawn_await_detached(&[&*cell], move |_| callback(self.take_completed()));
    }

    /// The buffer and status of a completed request, borrowed: a task
    /// awaiting the request reads the received data in place (Fig. 4).
    ///
    /// # Errors
    /// [`Error::Pending`] before completion; the operation's error if it
    /// failed.
    pub fn get(&self) -> Result<(&T, Status), Error> {
        let outcome = self.cell.outcome().ok_or(Error::Pending { op: self.op })?;
        let status = outcome.result.clone()?;
        let owned = outcome
            .owned
            .as_ref()
            .and_then(|b| b.downcast_ref::<T>())
            .expect("hc-mpi: completed request without its buffer");
        Ok((owned, status))
    }

    fn take_completed(self) -> Result<(T, Status), Error> {
        assert!(self.cell.is_complete(), "hc-mpi: taking a pending request");
        // SAFETY: complete ⇒ published, and the communication worker no
        // longer touches it; we own the only handle that reads it (`Request`
        // is not `Clone`, and `self` is owned, so no `get` borrow exists).
        let outcome = unsafe { (*self.cell.outcome.get()).take() }
            .expect("hc-mpi: request outcome taken twice");
        let status = outcome.result?;
        let owned = outcome
            .owned
            .expect("hc-mpi: completed request without its buffer")
            .downcast::<T>()
            .unwrap_or_else(|_| {
                panic!(
                    "hc-mpi: {} completed with a buffer of another type",
                    self.op
                )
            });
        Ok((*owned, status))
    }
}

/// `MPI_Waitall`: waits for every request (an AND list of DDFs).
pub fn wait_all(requests: &[&dyn Awaitable]) {
    for request in requests {
        hc_runtime::wait(*request);
    }
}

/// `MPI_Waitany`: waits until one request completes and returns its index
/// (an OR list of DDFs, released once).
///
/// # Panics
/// If `requests` is empty.
pub fn wait_any(requests: &[&dyn Awaitable]) -> usize {
    assert!(
        !requests.is_empty(),
        "hc-mpi: wait_any on an empty list of requests"
    );
    if let Some(index) = test_any(requests) {
        return index;
    }
    let mut fired = usize::MAX;
    hc_runtime::finish(|s| s.spawn_await_any(requests, |_, index| fired = index));
    fired
}

/// `MPI_Testall`: whether every request has completed.
pub fn test_all(requests: &[&dyn Awaitable]) -> bool {
    requests.iter().all(|r| r.is_ready())
}

/// `MPI_Testany`: the index of a completed request, if any.
pub fn test_any(requests: &[&dyn Awaitable]) -> Option<usize> {
    requests.iter().position(|r| r.is_ready())
}
