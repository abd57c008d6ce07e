//! [`Ddf<T>`]: the value-carrying, single-assignment future.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::core::DdfCore;
use super::{Awaitable, Readiness, WaitRegistration};
use crate::sync::{Arc, AtomicBool, Ordering, UnsafeCell};

/// A data-driven future: a single-assignment container that tasks can await.
///
/// Cloning a `Ddf` clones the handle, not the value: all clones refer to the
/// same container. `put` may be called from any thread, including threads
/// that are not computation workers; the tasks it releases run on the pool of
/// the finish scope they were spawned in.
///
/// ```
/// use hc_runtime::{finish, Ddf};
///
/// let ddf = Ddf::new();
/// let total = finish(|s| {
///     s.spawn_await(&[&ddf], |_| assert_eq!(ddf.get(), Ok(&42)));
///     s.spawn(|_| ddf.put(42).unwrap());
///     1
/// });
/// assert_eq!(total, 1);
/// ```
pub struct Ddf<T> {
    inner: Arc<Inner<T>>,
}

struct Inner<T> {
    core: DdfCore,
    /// Set by the first `put`; enforces single assignment before the value
    /// is written (the core only becomes full after the write).
    claimed: AtomicBool,
    value: UnsafeCell<MaybeUninit<T>>,
}

/// Error of a second [`Ddf::put`]: a DDF is single-assignment. Carries the
/// rejected value back to the caller.
#[derive(PartialEq, Eq)]
pub struct AlreadyPut<T>(pub T);

/// Error of [`Ddf::get`] before the DDF was put.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotPut;

impl<T> fmt::Debug for AlreadyPut<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AlreadyPut(..)")
    }
}

impl<T> fmt::Display for AlreadyPut<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Ddf::put on a DDF that was already put (DDFs are single-assignment)")
    }
}

impl<T> std::error::Error for AlreadyPut<T> {}

impl fmt::Display for NotPut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Ddf::get before the DDF was put (await it with spawn_await or wait first)")
    }
}

impl std::error::Error for NotPut {}

impl<T: Send + Sync> Default for Ddf<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Clone for Ddf<T> {
    fn clone(&self) -> Self {
        Ddf {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> fmt::Debug for Ddf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ddf")
            .field("put", &self.inner.core.is_full())
            .finish()
    }
}

impl<T: Send + Sync> Ddf<T> {
    /// An empty DDF.
    pub fn new() -> Self {
        Ddf {
            inner: Arc::new(Inner {
                core: DdfCore::new(),
                claimed: AtomicBool::new(false),
                value: UnsafeCell::new(MaybeUninit::uninit()),
            }),
        }
    }

    /// Stores `value` and releases every task waiting for it.
    ///
    /// # Errors
    /// [`AlreadyPut`] (with `value` handed back) if the DDF was put before.
    pub fn put(&self, value: T) -> Result<(), AlreadyPut<T>> {
        let inner = &*self.inner;
        // Relaxed: the swap only decides who writes; publication is the
        // core's AcqRel swap in `set_full`.
        if inner.claimed.swap(true, Ordering::Relaxed) {
            return Err(AlreadyPut(value));
        }
        // SAFETY: the claim above makes this the only write, and nobody reads
        // the value before the core is full.
        inner.value.with_mut(|slot| unsafe { (*slot).write(value) });
        // SAFETY: single put (claimed), value written.
        unsafe { inner.core.set_full() };
        Ok(())
    }

    /// The value, if the DDF has been put.
    ///
    /// # Errors
    /// [`NotPut`] if no `put` has completed yet.
    pub fn get(&self) -> Result<&T, NotPut> {
        if !self.inner.core.is_full() {
            return Err(NotPut);
        }
        // SAFETY: full ⇒ the value was written before the core's Release swap,
        // which our Acquire load in `is_full` synchronized with; it is never
        // written again and lives as long as `self.inner`.
        Ok(self
            .inner
            .value
            .with(|slot| unsafe { (*slot).assume_init_ref() }))
    }

    /// Whether the DDF has been put.
    pub fn is_put(&self) -> bool {
        self.inner.core.is_full()
    }

    /// Waits until the DDF is put and returns its value.
    ///
    /// On a computation worker the wait executes other tasks; on any other
    /// thread it parks. A DDF that nobody puts keeps this wait waiting: the
    /// handle it borrows keeps the DDF alive, so unlike a `spawn_await`
    /// list it is never seen as abandoned.
    #[cfg(not(loom))]
    pub fn wait(&self) -> &T {
        crate::wait(self);
        self.get().expect("Ddf was released without a value")
    }
}

impl<T: Send + Sync> Awaitable for Ddf<T> {
    fn readiness(&self) -> Readiness<'_> {
        Readiness::new(&self.inner.core)
    }
}

/// `(&ddf).await`: waits until the DDF is put and gives its value, in a
/// future task; the wait holds no worker.
///
/// ```
/// use hc_runtime::{Ddf, Runtime};
///
/// let rt = Runtime::builder().num_workers(2).build().unwrap();
/// let ddf = Ddf::new();
/// rt.block_on(async {
///     let producer = ddf.clone();
///     hc_runtime::Handle::current().spawn_detached(move |_| producer.put(7).unwrap());
///     assert_eq!(*(&ddf).await, 7);
/// });
/// ```
impl<'a, T: Send + Sync> IntoFuture for &'a Ddf<T> {
    type Output = &'a T;
    type IntoFuture = DdfGet<'a, T>;

    fn into_future(self) -> DdfGet<'a, T> {
        DdfGet {
            ddf: self,
            registration: WaitRegistration::default(),
        }
    }
}

/// `ddf.await` on an owned handle: waits until the DDF is put and gives a
/// clone of its value (await `&ddf` to borrow it instead).
///
/// ```
/// use hc_runtime::{Ddf, Runtime};
///
/// let rt = Runtime::builder().num_workers(1).build().unwrap();
/// let ddf = Ddf::new();
/// ddf.put(String::from("ready")).unwrap();
/// assert_eq!(rt.block_on(async { ddf.await }), "ready");
/// ```
impl<T: Send + Sync + Clone> IntoFuture for Ddf<T> {
    type Output = T;
    type IntoFuture = DdfValue<T>;

    fn into_future(self) -> DdfValue<T> {
        DdfValue {
            ddf: self,
            registration: WaitRegistration::default(),
        }
    }
}

/// The future of `(&ddf).await`.
#[must_use = "futures do nothing unless awaited"]
pub struct DdfGet<'a, T> {
    ddf: &'a Ddf<T>,
    registration: WaitRegistration,
}

/// The future of `ddf.await` on an owned [`Ddf`].
#[must_use = "futures do nothing unless awaited"]
pub struct DdfValue<T> {
    ddf: Ddf<T>,
    registration: WaitRegistration,
}

impl<T> fmt::Debug for DdfGet<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DdfGet").field("ddf", self.ddf).finish()
    }
}

impl<T> fmt::Debug for DdfValue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DdfValue").field("ddf", &self.ddf).finish()
    }
}

impl<'a, T: Send + Sync> Future for DdfGet<'a, T> {
    type Output = &'a T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<&'a T> {
        let ddf = self.ddf;
        match self.registration.poll(&ddf.inner.core, cx) {
            Poll::Ready(_) => Poll::Ready(ddf.get().expect("a full DDF holds its value")),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: Send + Sync + Clone> Future for DdfValue<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let this = &mut *self;
        match this.registration.poll(&this.ddf.inner.core, cx) {
            Poll::Ready(_) => {
                Poll::Ready(this.ddf.get().expect("a full DDF holds its value").clone())
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T> Drop for Inner<T> {
    fn drop(&mut self) {
        if self.core.is_full() {
            // SAFETY: full ⇒ initialized; `&mut self` ⇒ no reader remains.
            self.value
                .with_mut(|slot| unsafe { (*slot).assume_init_drop() });
        }
    }
}

// SAFETY: the value is moved in by `put` on one thread and read (shared) or
// dropped on others: T must be Send + Sync, as for Arc<OnceLock<T>>.
unsafe impl<T: Send + Sync> Send for Inner<T> {}
// SAFETY: shared access is `get` (&T, after publication) and the atomics.
unsafe impl<T: Send + Sync> Sync for Inner<T> {}

#[cfg(all(test, loom))]
impl<T: Send + Sync> Ddf<T> {
    pub(crate) fn ddf_core_for_tests(&self) -> &DdfCore {
        &self.inner.core
    }
}
