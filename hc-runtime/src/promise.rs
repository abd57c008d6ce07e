//! Promises: a single value handed from one party (the [`Completer`]) to
//! one reader (the [`Promise`]), awaitable like a DDF.
//!
//! A [`Ddf`](crate::Ddf) is shared by any number of readers, who borrow its
//! value. A promise has exactly one reader, who *takes* the value: it is
//! how an operation hands back what it owns (an MPI request returns its
//! buffer). The completer is consumed by [`Completer::complete`]; dropping
//! it without completing breaks the promise ([`PromiseError::Abandoned`])
//! instead of leaving the reader waiting.
//!
//! # Protocol
//!
//! 1. The completer writes the value (or nothing, when abandoned), then
//!    publishes the core: every waiter registered before is released, every
//!    later reader sees it full (the DDF put/register race, see `ddf::core`).
//! 2. After publishing, the completer releases its finish tie, if it has
//!    one (see [`Completer::join_enclosing_finish`]).
//! 3. The reader reads or takes the value only after seeing the core full.
//!    It is the only reader (`Promise` is not `Clone`), so taking needs no
//!    synchronization beyond step 1's.
//!
//! # Memory ordering
//!
//! The core's `AcqRel` swap in step 1 publishes the value; the reader's
//! `Acquire` load of a full core sees it. The tie's release in step 2 comes
//! after the swap, so a finish that completes has seen the value too.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::ddf::{Awaitable, DdfCore, Readiness, WaitRegistration};
use crate::finish::FinishTie;
use crate::sync::{Arc, AtomicBool, Ordering, UnsafeCell};

/// Why a [`Promise`] has no value to give.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PromiseError {
    /// The completer has not completed it yet.
    #[error("the promise has not been completed yet")]
    Pending,
    /// The completer was dropped without completing it.
    #[error("the promise was abandoned: its completer was dropped without a value")]
    Abandoned,
    /// The value was taken already.
    #[error("the promise's value was taken already")]
    Taken,
}

struct Shared<T> {
    core: DdfCore,
    /// Written once by the completer before the core is full; `None` once
    /// full means abandoned (or taken, which the reader tracks itself).
    value: UnsafeCell<Option<T>>,
    tie: FinishTie,
    /// Set when the reader is dropped: nobody will look at the value.
    reader_gone: AtomicBool,
}

// SAFETY: the value moves from the completer's thread to the reader's:
// `T: Send`. The cell is written once before publication and read only after
// (see the module docs); the other fields are atomics.
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: the completer and the reader each hold a reference, but touch the
// value one after the other (the completer before publication, the reader
// after), so `T: Send` suffices; sharing `&T` between threads would need
// `T: Sync`, which `Promise`'s marker requires for `Promise: Sync`.
unsafe impl<T: Send> Sync for Shared<T> {}

/// The writing end of a promise: completes it once.
pub struct Completer<T> {
    shared: Arc<Shared<T>>,
}

/// The reading end of a promise: one value, taken once.
///
/// Awaitable: `.await` it in a future task (it gives the value), await it
/// with [`Scope::spawn_await`](crate::Scope::spawn_await), or block with
/// [`wait`](Promise::wait).
pub struct Promise<T> {
    shared: Arc<Shared<T>>,
    taken: bool,
    registration: WaitRegistration,
    /// `Promise<T>` is `Sync` only if `T` is: `get` lends `&T`.
    _value: PhantomData<T>,
}

/// A new promise: its completer and its reader.
///
/// ```
/// let (completer, promise) = hc_runtime::promise();
/// std::thread::spawn(move || completer.complete(vec![1, 2, 3]));
/// assert_eq!(promise.wait(), Ok(vec![1, 2, 3]));
/// ```
pub fn promise<T: Send>() -> (Completer<T>, Promise<T>) {
    let shared = Arc::new(Shared {
        core: DdfCore::new(),
        value: UnsafeCell::new(None),
        tie: FinishTie::new(),
        reader_gone: AtomicBool::new(false),
    });
    (
        Completer {
            shared: Arc::clone(&shared),
        },
        Promise {
            shared,
            taken: false,
            registration: WaitRegistration::default(),
            _value: PhantomData,
        },
    )
}

impl<T> fmt::Debug for Completer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Completer")
            .field("reader_gone", &self.is_closed())
            .finish()
    }
}

impl<T> fmt::Debug for Promise<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Promise")
            .field("complete", &self.shared.core.is_full())
            .field("taken", &self.taken)
            .finish()
    }
}

impl<T: Send> Completer<T> {
    /// Makes the finish enclosing the caller (if any) wait until this
    /// promise is completed or abandoned, as it waits for a task: a
    /// `finish` around an operation that hands its result back through a
    /// promise returns only once the result is in. Returns whether there
    /// was an enclosing finish.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    ///
    /// let done = AtomicBool::new(false);
    /// hc_runtime::finish(|s| {
    ///     let (mut completer, promise) = hc_runtime::promise();
    ///     assert!(completer.join_enclosing_finish());
    ///     std::thread::spawn(move || completer.complete(()));
    ///     s.spawn_await(&[&promise], |_| done.store(true, Ordering::SeqCst));
    /// });
    /// assert!(done.load(Ordering::SeqCst));
    /// ```
    pub fn join_enclosing_finish(&mut self) -> bool {
        self.shared.tie.join_enclosing()
    }

    /// Stores `value` and releases every task waiting for it.
    pub fn complete(self, value: T) {
        // SAFETY: the completer is unique and consumed here, so this is the
        // only write; nobody reads before the core is full.
        self.shared
            .value
            .with_mut(|slot| unsafe { *slot = Some(value) });
        self.publish();
    }

    fn publish(&self) {
        // SAFETY: called once per promise — by `complete` (which consumes
        // the completer, so its `Drop` does not publish again) or by `Drop`
        // — after the value, if any, was written.
        unsafe { self.shared.core.set_full() };
        self.shared.tie.release();
    }
}

impl<T> Completer<T> {
    /// Whether the reader is gone (dropped): a value would not be looked at.
    ///
    /// ```
    /// let (completer, promise) = hc_runtime::promise::<u8>();
    /// assert!(!completer.is_closed());
    /// drop(promise);
    /// assert!(completer.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.shared.reader_gone.load(Ordering::Acquire)
    }
}

impl<T> Drop for Completer<T> {
    fn drop(&mut self) {
        if !self.shared.core.is_full() {
            // Abandoned: release waiters with no value (protocol step 1).
            // SAFETY: as in `publish`; only the completer publishes, and it
            // has not (the core is not full).
            unsafe { self.shared.core.set_full() };
            self.shared.tie.release();
        }
    }
}

impl<T: Send> Promise<T> {
    /// The value, borrowed, once completed.
    ///
    /// # Errors
    /// [`PromiseError::Pending`] before completion;
    /// [`PromiseError::Abandoned`] if the completer was dropped;
    /// [`PromiseError::Taken`] after [`try_take`](Self::try_take).
    ///
    /// ```
    /// use hc_runtime::PromiseError;
    ///
    /// let (completer, promise) = hc_runtime::promise();
    /// assert_eq!(promise.get(), Err(PromiseError::Pending));
    /// completer.complete(5);
    /// assert_eq!(promise.get(), Ok(&5));
    /// ```
    pub fn get(&self) -> Result<&T, PromiseError> {
        if !self.shared.core.is_full() {
            return Err(PromiseError::Pending);
        }
        if self.taken {
            return Err(PromiseError::Taken);
        }
        // SAFETY: full ⇒ written and published (Acquire in `is_full`); the
        // value is only taken through `&mut self`, which excludes this borrow.
        match self.shared.value.with(|slot| unsafe { &*slot }) {
            Some(value) => Ok(value),
            None => Err(PromiseError::Abandoned),
        }
    }

    /// Takes the value once completed.
    ///
    /// # Errors
    /// As [`get`](Self::get).
    ///
    /// ```
    /// use hc_runtime::PromiseError;
    ///
    /// let (completer, mut promise) = hc_runtime::promise();
    /// completer.complete(String::from("x"));
    /// assert_eq!(promise.try_take().as_deref(), Ok("x"));
    /// assert_eq!(promise.try_take(), Err(PromiseError::Taken));
    /// ```
    pub fn try_take(&mut self) -> Result<T, PromiseError> {
        if !self.shared.core.is_full() {
            return Err(PromiseError::Pending);
        }
        if self.taken {
            return Err(PromiseError::Taken);
        }
        // SAFETY: as in `get`; `&mut self` makes this the only access.
        match self.shared.value.with_mut(|slot| unsafe { (*slot).take() }) {
            Some(value) => {
                self.taken = true;
                Ok(value)
            }
            None => Err(PromiseError::Abandoned),
        }
    }

    /// Waits for the value (other tasks run meanwhile on a computation
    /// worker; other threads park) and takes it.
    ///
    /// # Errors
    /// [`PromiseError::Abandoned`] if the completer was dropped.
    ///
    /// ```
    /// let (completer, promise) = hc_runtime::promise::<u8>();
    /// drop(completer);
    /// assert_eq!(promise.wait(), Err(hc_runtime::PromiseError::Abandoned));
    /// ```
    pub fn wait(mut self) -> Result<T, PromiseError> {
        crate::wait(&self.readiness());
        self.try_take()
    }

    /// The promise's completion state, for awaiting it whatever `T` is
    /// (its [`Awaitable`] impl also lends `&T`, so it needs `T: Sync`).
    ///
    /// ```
    /// let (completer, promise) = hc_runtime::promise::<std::cell::Cell<u8>>();
    /// completer.complete(std::cell::Cell::new(1));
    /// hc_runtime::wait(&promise.readiness());
    /// assert_eq!(promise.wait().unwrap().get(), 1);
    /// ```
    pub fn readiness(&self) -> Readiness<'_> {
        Readiness::new(&self.shared.core)
    }
}

impl<T> Promise<T> {
    /// Whether the promise was completed (or abandoned).
    ///
    /// ```
    /// let (completer, promise) = hc_runtime::promise();
    /// assert!(!promise.is_complete());
    /// completer.complete(1);
    /// assert!(promise.is_complete());
    /// ```
    pub fn is_complete(&self) -> bool {
        self.shared.core.is_full()
    }

    /// Lets an enclosing finish tied by
    /// [`Completer::join_enclosing_finish`] stop waiting for this promise.
    /// For a reader that gives up on the value — a task unwinding from a
    /// panic — so that its finish can re-raise the panic instead of waiting
    /// for a completion that may never come.
    ///
    /// ```
    /// hc_runtime::finish(|_| {
    ///     let (mut completer, promise) = hc_runtime::promise::<u8>();
    ///     completer.join_enclosing_finish();
    ///     promise.release_finish();
    ///     std::mem::forget(completer); // never completed: the finish still returns
    /// });
    /// ```
    pub fn release_finish(&self) {
        self.shared.tie.release();
    }
}

impl<T> Drop for Promise<T> {
    fn drop(&mut self) {
        self.shared.reader_gone.store(true, Ordering::Release);
    }
}

impl<T: Send + Sync> Awaitable for Promise<T> {
    fn readiness(&self) -> Readiness<'_> {
        Promise::readiness(self)
    }
}

// The value lives behind the `Arc`, never pinned in place.
impl<T> Unpin for Promise<T> {}

/// `promise.await` takes the value (see [`Promise::try_take`]); the wait
/// holds no worker.
impl<T: Send> Future for Promise<T> {
    type Output = Result<T, PromiseError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        match this.registration.poll(&this.shared.core, cx) {
            Poll::Ready(_) => Poll::Ready(this.try_take()),
            Poll::Pending => Poll::Pending,
        }
    }
}
