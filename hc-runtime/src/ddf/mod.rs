//! Data-driven futures (DDFs) and data-driven tasks.
//!
//! A [`Ddf<T>`] is a single-assignment container: one `put`, any number of
//! `get`s after it. A data-driven task (`Scope::spawn_await`) is created with
//! a list of DDFs and becomes runnable once all of them are put (an AND list);
//! `Scope::spawn_await_any` becomes runnable once any one of them is put (an OR
//! list, released exactly once by a token bit, Fig. 12 of the HCMPI paper).
//!
//! Anything that embeds a [`DdfCore`] and implements [`Awaitable`] can be
//! awaited the same way — MPI requests and distributed DDFs build on this.

mod await_all;
mod await_any;
mod core;
mod park;
mod value;

pub use self::core::DdfCore;
pub use self::value::{AlreadyPut, Ddf, NotPut};

pub(crate) use self::await_all::{spawn_await_all, AllOutcome};
pub(crate) use self::await_any::{spawn_await_any, AnyOutcome};
pub(crate) use self::park::park_until_full;

use crate::job::JobRef;

/// Something a data-driven task can wait for: it exposes the [`DdfCore`]
/// that becomes full when its value is available.
///
/// Implemented by [`Ddf<T>`]; other crates implement it for their own
/// single-assignment objects (an MPI request, a distributed DDF).
pub trait Awaitable: Sync {
    /// The full/empty state tasks register on.
    fn ddf_core(&self) -> &DdfCore;

    /// Whether the awaited value is available.
    fn is_ready(&self) -> bool {
        self.ddf_core().is_full()
    }
}

impl<A: Awaitable + ?Sized> Awaitable for &A {
    fn ddf_core(&self) -> &DdfCore {
        (**self).ddf_core()
    }
}

/// Where a released data-driven task goes: the pool of its finish scope in
/// the runtime, a plain queue in the loom models.
pub(crate) trait Release: Sync {
    fn release(&self, job: JobRef);
}

impl Release for crate::registry::Registry {
    fn release(&self, job: JobRef) {
        self.push(job);
    }
}

/// The panic message recorded when a task's awaited DDFs can never be put.
pub(crate) const ABANDONED_MESSAGE: &str =
    "hc-runtime: a data-driven task awaited a Ddf that was dropped without ever being put; \
     the task can never run";
