//! [`Dddf<T>`]: a rank's handle on one distributed data-driven future.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};

use hc_runtime::{Awaitable, Readiness};

use crate::entry::Entry;
use crate::payload::Payload;
use crate::shared::Shared;
use crate::sync::Arc;
use crate::DddfError;

/// A handle on the DDDF named by a guid (the paper's `DDF_HANDLE(guid)`).
///
/// Behaves like a [`hc_runtime::Ddf`]: [`put`](Dddf::put) once (on the home
/// rank), [`get`](Dddf::get) after, and await it with
/// [`Scope::spawn_await`](hc_runtime::Scope::spawn_await) or
/// `spawn_await_any`, mixed freely with local DDFs and MPI requests.
///
/// On a rank that is not the guid's home, the first await registers
/// interest with the home (one message); the home sends the value when it
/// is put, and this rank keeps it: later awaits and gets of the same guid,
/// through any handle, are local. Awaiting is what triggers the request;
/// [`Awaitable::is_ready`] and [`is_available`](Dddf::is_available) only
/// look at the local copy and never communicate.
pub struct Dddf<T: Payload> {
    pub(crate) shared: Arc<Shared<T>>,
    pub(crate) entry: Arc<Entry<T>>,
}

impl<T: Payload> Clone for Dddf<T> {
    fn clone(&self) -> Self {
        Dddf {
            shared: Arc::clone(&self.shared),
            entry: Arc::clone(&self.entry),
        }
    }
}

impl<T: Payload> fmt::Debug for Dddf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dddf")
            .field("guid", &self.entry.guid)
            .field("home", &self.entry.home)
            .field("available", &self.entry.is_available())
            .finish()
    }
}

impl<T: Payload> Dddf<T> {
    /// The guid.
    pub fn guid(&self) -> u64 {
        self.entry.guid
    }

    /// The home rank (`home(guid)`).
    pub fn home(&self) -> i32 {
        self.entry.home
    }

    /// Whether this rank is the home.
    pub fn is_home(&self) -> bool {
        self.entry.home == self.shared.rank()
    }

    /// Stores the value and releases every task awaiting it, here and (by
    /// sending it) on every rank that asked for it and on the guid's reader,
    /// if its space has one ([`DddfSpace::with_reader`](crate::DddfSpace::with_reader)).
    ///
    /// # Errors
    /// [`DddfError::PutNotHome`] off the home rank;
    /// [`DddfError::AlreadyPut`] on a second put;
    /// [`DddfError::SizeMismatch`] if the value's encoding does not have
    /// `size(guid)` bytes; [`DddfError::Closed`] after the space closed;
    /// [`DddfError::Mpi`] if sending it failed.
    pub fn put(&self, value: T) -> Result<(), DddfError> {
        self.shared.put(&self.entry, value)
    }

    /// The value, once put (home) or received (elsewhere).
    ///
    /// # Errors
    /// [`DddfError::NotPut`] before that; the transfer's error if the value
    /// could not arrive (size mismatch, refused by the asked rank, closed).
    pub fn get(&self) -> Result<&T, DddfError> {
        match self.entry.value.get() {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(error.clone()),
            Err(_) => Err(DddfError::NotPut {
                guid: self.entry.guid,
                home: self.entry.home,
            }),
        }
    }

    /// Waits until the value is here (running other tasks meanwhile on a
    /// computation worker, parking elsewhere) and returns it.
    ///
    /// # Errors
    /// As [`get`](Self::get), once released.
    pub fn wait(&self) -> Result<&T, DddfError> {
        hc_runtime::wait(self);
        self.get()
    }

    /// Whether the value (or an error instead of it) is here, without
    /// asking the home for it.
    pub fn is_available(&self) -> bool {
        self.entry.is_available()
    }
}

/// `(&dddf).await`: waits (holding no worker) until the value is here and
/// gives it; on a non-home rank the first await asks the home for it.
impl<'a, T: Payload> IntoFuture for &'a Dddf<T> {
    type Output = Result<&'a T, DddfError>;
    type IntoFuture = DddfGet<'a, T>;

    fn into_future(self) -> DddfGet<'a, T> {
        DddfGet {
            dddf: self,
            ready: hc_runtime::ready(self),
        }
    }
}

/// The future of `(&dddf).await`.
#[must_use = "futures do nothing unless awaited"]
pub struct DddfGet<'a, T: Payload> {
    dddf: &'a Dddf<T>,
    ready: hc_runtime::Ready<'a>,
}

impl<T: Payload> fmt::Debug for DddfGet<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DddfGet").field("dddf", self.dddf).finish()
    }
}

impl<'a, T: Payload> Future for DddfGet<'a, T> {
    type Output = Result<&'a T, DddfError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let dddf = self.dddf;
        Pin::new(&mut self.ready).poll(cx).map(|()| dddf.get())
    }
}

impl<T: Payload> Awaitable for Dddf<T> {
    /// The local copy's state; on a non-home rank the first call registers
    /// interest with the home.
    fn readiness(&self) -> Readiness<'_> {
        self.shared.register_interest(&self.entry);
        self.entry.value.readiness()
    }

    /// Whether the value (or an error instead of it) is here; no network
    /// I/O and no request to the home.
    fn is_ready(&self) -> bool {
        self.entry.is_available()
    }
}
