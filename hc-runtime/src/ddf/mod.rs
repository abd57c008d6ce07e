//! Data-driven futures (DDFs) and data-driven tasks.
//!
//! A [`Ddf<T>`] is a single-assignment container: one `put`, any number of
//! `get`s after it. A data-driven task (`Scope::spawn_await`) is created with
//! a list of DDFs and becomes runnable once all of them are put (an AND list);
//! `Scope::spawn_await_any` becomes runnable once any one of them is put (an OR
//! list, released exactly once by a token bit, Fig. 12 of the HCMPI paper).
//!
//! Everything awaitable — a `Ddf`, a [`Promise`](crate::Promise), an MPI
//! request, a distributed DDF — is awaited the same three ways: by a
//! data-driven task (`spawn_await`), by `.await` in a future task (wakers,
//! see `wake`), or by a blocking [`wait`](crate::wait).

mod await_all;
mod await_any;
mod core;
mod park;
pub(crate) mod value;
mod wake;

pub(crate) use self::core::DdfCore;
pub use self::value::{AlreadyPut, Ddf, NotPut};
pub use self::wake::Ready;

pub(crate) use self::await_all::{spawn_await_all, AllOutcome};
pub(crate) use self::await_any::{spawn_await_any, AnyOutcome};
pub(crate) use self::park::{park_polling, park_until_full, ThreadWaiter};
pub(crate) use self::wake::WaitRegistration;

use crate::job::JobRef;

/// The full/empty state of something awaitable, borrowed.
///
/// Only hc-runtime's own single-assignment objects ([`Ddf`],
/// [`Promise`](crate::Promise)) hand one out, so an [`Awaitable`] outside
/// this crate is always a view of one of them: no other code can make a
/// waiting task runnable, or publish a value without writing it first.
#[derive(Clone, Copy)]
pub struct Readiness<'a> {
    core: &'a DdfCore,
}

impl<'a> Readiness<'a> {
    pub(crate) fn new(core: &'a DdfCore) -> Self {
        Readiness { core }
    }

    pub(crate) fn core(self) -> &'a DdfCore {
        self.core
    }

    /// Whether the value is available.
    ///
    /// ```
    /// use hc_runtime::{Awaitable, Ddf};
    ///
    /// let d = Ddf::new();
    /// assert!(!d.readiness().is_ready());
    /// d.put(1).unwrap();
    /// assert!(d.readiness().is_ready());
    /// ```
    pub fn is_ready(self) -> bool {
        self.core.is_full()
    }
}

impl std::fmt::Debug for Readiness<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Readiness")
            .field("ready", &self.is_ready())
            .finish()
    }
}

impl<'a> std::future::IntoFuture for Readiness<'a> {
    type Output = ();
    type IntoFuture = Ready<'a>;

    fn into_future(self) -> Ready<'a> {
        Ready::new(self.core)
    }
}

/// Something a task can wait for: a single-assignment value that becomes
/// available once.
///
/// Implemented by [`Ddf<T>`] and [`Promise<T>`](crate::Promise); other
/// crates implement it for their own handles (an MPI request, a distributed
/// DDF) by handing out the [`Readiness`] of a `Ddf` or `Promise` they hold.
/// Anything `Awaitable` can be awaited by a data-driven task
/// ([`Scope::spawn_await`](crate::Scope::spawn_await)), with `.await` through
/// [`ready`], or by a blocking [`wait`](crate::wait).
pub trait Awaitable: Sync {
    /// The state tasks wait on.
    fn readiness(&self) -> Readiness<'_>;

    /// Whether the value is available.
    fn is_ready(&self) -> bool {
        self.readiness().is_ready()
    }
}

/// A readiness view is itself awaitable (by a task, or with [`wait`](crate::wait)).
impl Awaitable for Readiness<'_> {
    fn readiness(&self) -> Readiness<'_> {
        *self
    }
}

impl<A: Awaitable + ?Sized> Awaitable for &A {
    fn readiness(&self) -> Readiness<'_> {
        (**self).readiness()
    }

    fn is_ready(&self) -> bool {
        (**self).is_ready()
    }
}

/// A future that completes once `dep` is ready: `.await` for anything
/// [`Awaitable`], in a future task ([`Scope::spawn_future`](crate::Scope::spawn_future),
/// [`Runtime::spawn`](crate::Runtime::spawn)). A pending wait holds no worker.
///
/// ```
/// use hc_runtime::{ready, Ddf, Runtime};
///
/// let rt = Runtime::builder().num_workers(1).build().unwrap();
/// let d = Ddf::new();
/// let seen = rt.block_on(async {
///     let reader = async { ready(&d).await; *d.get().unwrap() };
///     d.put(5).unwrap();
///     reader.await
/// });
/// assert_eq!(seen, 5);
/// ```
pub fn ready(dep: &dyn Awaitable) -> Ready<'_> {
    Ready::new(dep.readiness().core())
}

/// Where a released data-driven task goes: the pool of its finish scope in
/// the runtime, a plain queue in the loom models.
pub(crate) trait Release: Sync {
    fn release(&self, job: JobRef);
}

impl Release for crate::registry::Registry {
    fn release(&self, job: JobRef) {
        self.push_released(job);
    }
}

/// The panic message recorded when a task's awaited DDFs can never be put.
pub(crate) const ABANDONED_MESSAGE: &str =
    "hc-runtime: a data-driven task awaited a Ddf that was dropped without ever being put; \
     the task can never run";
