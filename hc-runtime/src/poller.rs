//! The one generic poller the computation workers drive.
//!
//! Some work completes only when somebody polls for it: an MPI request
//! progresses only inside MPI calls. A [`Poller`] attached to a runtime
//! ([`Builder::poller`](crate::Builder::poller)) is polled by the workers
//! themselves, so no extra thread competes with them for a core:
//!
//! * an idle worker polls before it backs off, and while the poller has
//!   work in flight it parks only for a bounded time
//!   ([`BackoffPolicy::IDLE_WORKER`](crate::BackoffPolicy::IDLE_WORKER)'s
//!   timeouts), coming back to poll;
//! * a worker waiting in [`wait`](crate::wait) polls while it lingers;
//! * a busy worker polls between tasks once the poll interval has passed,
//!   so a long computation made of many tasks never starves the poller.
//!
//! Whoever gives the poller new work while every worker may be parked
//! calls [`Handle::wake_poller`](crate::Handle::wake_poller), so that a
//! worker comes back to poll.

/// Work that completes only when polled (see the module docs).
///
/// `poll` must not block and must tolerate being called from any worker,
/// concurrently: an implementation that needs one caller at a time (MPI
/// under `MPI_THREAD_SERIALIZED`) returns [`Polled::Waiting`] to the
/// callers that find another one polling.
pub trait Poller: Send + Sync {
    /// Makes what progress it can without blocking.
    fn poll(&self) -> Polled;

    /// Whether work is in flight: a worker that parks must come back.
    fn has_work(&self) -> bool;
}

/// What a [`Poller::poll`] achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Polled {
    /// Something completed: tasks may have become runnable.
    Progress,
    /// Work is in flight but nothing completed (or another thread is
    /// polling).
    Waiting,
    /// Nothing is in flight.
    Idle,
}

impl Polled {
    /// Whether work remains in flight after this poll.
    ///
    /// ```
    /// use hc_runtime::Polled;
    ///
    /// assert!(Polled::Waiting.has_work());
    /// assert!(!Polled::Idle.has_work());
    /// ```
    pub fn has_work(self) -> bool {
        !matches!(self, Polled::Idle)
    }
}
