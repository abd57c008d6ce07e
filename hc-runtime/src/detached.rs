//! Detached tasks: tasks that belong to no finish scope.
//!
//! They serve work whose lifetime no caller's stack can bound: a callback
//! run when an MPI request completes, a server loop, a future spawned with
//! [`Handle::spawn`](crate::Handle::spawn). A detached task owns all it uses
//! (`'static`) and holds its pool alive (an `Arc` of the registry) until it
//! has run. A detached closure has no finish to report a panic to, so it
//! prints it to stderr — as a panicking `std::thread` does; a detached
//! future hands its panic to its [`JoinHandle`] instead.

use std::any::Any;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::ddf::{self, AllOutcome, Awaitable, Release, ABANDONED_MESSAGE};
use crate::finish::{no_enclosing_finish, ScopeBase};
use crate::future_task::{FutureTask, TaskEnd, TaskOwner};
use crate::handle::Handle;
use crate::job::{HeapJob, JobRef};
use crate::promise::{promise, Completer, Promise, PromiseError};
use crate::registry::Registry;
use crate::sync::UnsafeCell;
use crate::unwind::panic_message;

fn run_reporting_panic(handle: &Handle, body: impl FnOnce(&Handle)) {
    // A detached task has no enclosing finish, whatever the worker was
    // waiting on when it picked the task up.
    let _enclosing = no_enclosing_finish();
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| body(handle))) {
        eprintln!(
            "hc-runtime: a detached task panicked: {}",
            panic_message(&*payload)
        );
    }
}

pub(crate) fn spawn(registry: &Arc<Registry>, body: impl FnOnce(&Handle) + Send + 'static) {
    let handle = Handle::from_registry(Arc::clone(registry));
    let task = move || run_reporting_panic(&handle, body);
    // SAFETY: the task is 'static and owns a handle on its registry.
    let job = unsafe { HeapJob::into_job_ref(task) };
    registry.push(job);
}

pub(crate) fn spawn_await(
    registry: &Arc<Registry>,
    deps: &[&dyn Awaitable],
    body: impl FnOnce(&Handle) + Send + 'static,
) {
    let handle = Handle::from_registry(Arc::clone(registry));
    let releaser = &**registry as &dyn Release as *const dyn Release;
    let task = move |outcome: AllOutcome| match outcome {
        AllOutcome::Ready => run_reporting_panic(&handle, body),
        AllOutcome::Abandoned => {
            drop(body);
            eprintln!("{ABANDONED_MESSAGE} (detached task)");
        }
    };
    let cores: Vec<_> = deps.iter().map(|d| d.readiness().core()).collect();
    // SAFETY: the releaser points into the registry that `task` keeps alive
    // (through its handle) until it has run, and `task` is 'static.
    unsafe { ddf::spawn_await_all(&cores, releaser, task) };
}

/// Why a detached future task gave no output.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JoinError {
    /// It panicked; the payload is the panic's.
    #[error("the task panicked: {}", panic_message(&**.0))]
    Panicked(Box<dyn Any + Send>),
    /// It returned `Pending` and nothing held its waker any more, so it
    /// could never complete.
    #[error("the task returned Pending with nothing left to wake it; it can never complete")]
    NeverWoken,
}

impl JoinError {
    /// The panic payload, if the task panicked (to re-raise it with
    /// [`std::panic::resume_unwind`]).
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(1).build().unwrap();
    /// let handle = rt.spawn(async { std::panic::resume_unwind(Box::new("boom")) });
    /// let payload = handle.join().unwrap_err().into_panic().unwrap();
    /// assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
    /// ```
    pub fn into_panic(self) -> Option<Box<dyn Any + Send>> {
        match self {
            JoinError::Panicked(payload) => Some(payload),
            JoinError::NeverWoken => None,
        }
    }
}

/// The output of a detached future task ([`Handle::spawn`],
/// [`Runtime::spawn`](crate::Runtime::spawn)): awaitable, or
/// [`join`](JoinHandle::join)ed from any thread. Dropping it detaches the
/// task, which still runs to completion.
pub struct JoinHandle<T> {
    promise: Promise<Result<T, JoinError>>,
}

impl<T> std::fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinHandle")
            .field("promise", &self.promise)
            .finish()
    }
}

impl<T: Send> JoinHandle<T> {
    /// Whether the task has ended.
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(1).build().unwrap();
    /// let (completer, promise) = hc_runtime::promise::<u8>();
    /// let task = rt.spawn(async move { promise.await.unwrap() });
    /// assert!(!task.is_finished());
    /// completer.complete(3);
    /// assert_eq!(task.join().unwrap(), 3);
    /// ```
    pub fn is_finished(&self) -> bool {
        self.promise.is_complete()
    }

    /// Waits for the task (other tasks run meanwhile on a computation
    /// worker; other threads park) and returns its output.
    ///
    /// # Errors
    /// [`JoinError`] if it panicked or can never complete.
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(1).build().unwrap();
    /// assert_eq!(rt.spawn(async { 6 * 7 }).join().unwrap(), 42);
    /// ```
    pub fn join(self) -> Result<T, JoinError> {
        Self::output(self.promise.wait())
    }

    fn output(taken: Result<Result<T, JoinError>, PromiseError>) -> Result<T, JoinError> {
        // The owner always completes the promise before dropping it.
        taken.expect("a detached task ended without an outcome")
    }
}

impl<T: Send> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.promise).poll(cx).map(Self::output)
    }
}

/// The owner of a detached future task: it keeps the pool alive and hands
/// the outcome to the [`JoinHandle`].
struct DetachedTask<T> {
    registry: Arc<Registry>,
    /// Taken once, by `completed`.
    completer: UnsafeCell<Option<Completer<Result<T, JoinError>>>>,
}

// SAFETY: the completer moves to whichever thread ends the task (`T: Send`)
// and is touched once, by `completed` (see `TaskOwner`).
unsafe impl<T: Send> Send for DetachedTask<T> {}
// SAFETY: as above; the registry is `Sync`.
unsafe impl<T: Send> Sync for DetachedTask<T> {}

impl<T: Send> TaskOwner<T> for DetachedTask<T> {
    fn schedule(&self, job: JobRef) {
        self.registry.push(job);
    }

    fn enclosing(&self) -> *const ScopeBase {
        std::ptr::null()
    }

    fn completed(&self, end: TaskEnd<T>) {
        // SAFETY: `completed` is called exactly once.
        let completer = self
            .completer
            .with_mut(|slot| unsafe { (*slot).take() })
            .expect("detached task completed twice");
        let outcome = match end {
            TaskEnd::Output(value) => Ok(value),
            TaskEnd::Panicked(payload) => {
                if completer.is_closed() {
                    eprintln!(
                        "hc-runtime: a detached task panicked: {}",
                        panic_message(&*payload)
                    );
                }
                Err(JoinError::Panicked(payload))
            }
            TaskEnd::NeverWoken => Err(JoinError::NeverWoken),
        };
        completer.complete(outcome);
    }
}

pub(crate) fn spawn_future<F>(registry: &Arc<Registry>, future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (completer, promise) = promise();
    let owner = DetachedTask {
        registry: Arc::clone(registry),
        completer: UnsafeCell::new(Some(completer)),
    };
    // SAFETY: the future is 'static.
    unsafe { FutureTask::spawn(future, owner) };
    JoinHandle { promise }
}
