//! Futures as tasks: a `Future` polled by the computation workers, woken
//! through its [`Waker`], holding no worker and no thread while pending.
//!
//! One heap record per future task ([`FutureTask`]) holds the future, a
//! state word and a reference count. The job in a deque and every waker
//! each own one reference; a wake that finds the task idle pushes it back
//! on a deque.
//!
//! # States
//!
//! | state                 | meaning                                          |
//! |-----------------------|--------------------------------------------------|
//! | `IDLE`                | pending, waiting for a wake; no job exists        |
//! | `SCHEDULED`           | a job is in a deque (or about to be)              |
//! | `RUNNING`             | a worker is polling it                            |
//! | `RUNNING \| NOTIFIED` | woken while being polled: poll again afterwards   |
//! | `COMPLETE`            | returned `Ready` or panicked; wakes do nothing    |
//!
//! # Protocol
//!
//! 1. `spawn`: the record starts `SCHEDULED` with one reference, the job's.
//! 2. The job runs: `transition_to_running` (only the job's holder polls).
//! 3. `Ready` (or a panic): `transition_to_complete`; the future is dropped
//!    and its owner (finish scope or join handle) told, in that order.
//! 4. `Pending`: `transition_to_idle` (`RUNNING → IDLE`). If a wake set
//!    `NOTIFIED` meanwhile, the CAS fails; the task becomes `SCHEDULED` and
//!    the same job (and reference) goes back on the deque. Otherwise the
//!    job's reference is dropped.
//! 5. A wake (`transition_to_scheduled`): `IDLE → SCHEDULED` pushes a new
//!    job with a new reference; `RUNNING → RUNNING | NOTIFIED` leaves the
//!    rescheduling to step 4; `SCHEDULED`, `NOTIFIED` and `COMPLETE` need
//!    nothing.
//! 6. The last reference dropped while not `COMPLETE` means nothing can wake
//!    the task again (a future returned `Pending` without keeping its
//!    waker): the future is dropped and the owner told it can never finish,
//!    so a finish reports it instead of hanging.
//!
//! # Memory ordering
//!
//! The state word's CASes are `AcqRel`: the worker that ends a poll
//! (`RUNNING → IDLE`, `Release`) and the waker that schedules the next
//! (`IDLE → SCHEDULED`, `Acquire`) hand the future's memory from one poll to
//! the next; the deque push/pop carries it on to the next worker. The
//! reference count follows `Arc`: `Release` decrements and an `Acquire`
//! fence before freeing.

use std::future::Future;
use std::mem::ManuallyDrop;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

use crate::finish::{Enclosing, ScopeBase};
use crate::job::JobRef;
use crate::sync::{acquire_after_release, AtomicUsize, Ordering, UnsafeCell};

const IDLE: usize = 0;
const SCHEDULED: usize = 1;
const RUNNING: usize = 2;
const NOTIFIED: usize = 4;
const COMPLETE: usize = 8;

/// The panic message recorded when a future task can never be woken.
pub(crate) const NEVER_WOKEN_MESSAGE: &str =
    "hc-runtime: a future task returned Pending and nothing holds its waker any more; \
     it can never complete";

/// How a future task ended.
pub(crate) enum TaskEnd<T> {
    /// It returned `Ready` with this output.
    Output(T),
    /// It panicked (while polled or dropped).
    Panicked(Box<dyn std::any::Any + Send>),
    /// It returned `Pending` and nothing can wake it any more (step 6).
    NeverWoken,
}

/// Who learns that a future task ended.
pub(crate) trait TaskOwner<T>: Send + Sync {
    /// Makes the task's job runnable on its pool.
    fn schedule(&self, job: JobRef);
    /// The finish whose task this is, entered while polling (null for a
    /// detached task).
    fn enclosing(&self) -> *const ScopeBase;
    /// The future ended. Called exactly once, after the future was dropped.
    fn completed(&self, end: TaskEnd<T>);
}

pub(crate) struct FutureTask<F, O> {
    state: AtomicUsize,
    refs: AtomicUsize,
    /// `None` once complete (step 3) or abandoned (step 6).
    future: UnsafeCell<Option<F>>,
    owner: O,
}

// SAFETY: the future is only touched by the worker holding the job (steps
// 2–4) or by the last reference (step 6), one at a time, so `F: Send`
// suffices; the rest is atomics and the owner, which is `Sync`.
unsafe impl<F: Future + Send, O: TaskOwner<F::Output>> Sync for FutureTask<F, O> {}
// SAFETY: as above.
unsafe impl<F: Future + Send, O: TaskOwner<F::Output>> Send for FutureTask<F, O> {}

impl<F, O> FutureTask<F, O>
where
    F: Future + Send,
    O: TaskOwner<F::Output>,
{
    const VTABLE: RawWakerVTable = RawWakerVTable::new(
        Self::clone_waker,
        Self::wake,
        Self::wake_by_ref,
        Self::drop_waker,
    );

    /// Creates the task and schedules it (step 1).
    ///
    /// # Safety
    /// The future's borrows must outlive the task's completion (the owner
    /// makes sure: a finish waits for its tasks).
    pub(crate) unsafe fn spawn(future: F, owner: O) {
        let task = Box::new(FutureTask {
            state: AtomicUsize::new(SCHEDULED),
            refs: AtomicUsize::new(1),
            future: UnsafeCell::new(Some(future)),
            owner,
        });
        let task = NonNull::from(Box::leak(task));
        // SAFETY: the record is alive (the job's reference).
        unsafe { task.as_ref() }.owner.schedule(Self::job(task));
    }

    fn job(task: NonNull<Self>) -> JobRef {
        // SAFETY: the job owns one reference; `run` consumes it once.
        unsafe { JobRef::new(task.as_ptr() as *const (), Self::run) }
    }

    /// Steps 2–4: one poll.
    unsafe fn run(data: *const ()) {
        let task = NonNull::new(data as *mut Self).expect("null future task");
        // SAFETY: the job's reference keeps the record alive.
        let this = unsafe { task.as_ref() };
        this.transition_to_running();
        // The waker lent to `poll` borrows the job's reference; wakers the
        // future keeps are clones with references of their own.
        // SAFETY: the vtable matches the record; ManuallyDrop skips the drop.
        let waker =
            ManuallyDrop::new(unsafe { Waker::from_raw(RawWaker::new(data, &Self::VTABLE)) });
        let mut cx = Context::from_waker(&waker);
        let polled = {
            let _enclosing = Enclosing::enter(this.owner.enclosing());
            panic::catch_unwind(AssertUnwindSafe(|| {
                this.future.with_mut(|future| {
                    // SAFETY: only the job's holder touches the future, and
                    // the record is never moved (it is boxed and pinned by
                    // never being handed out by value).
                    let future = unsafe { (*future).as_mut() }.expect("polled a finished task");
                    // SAFETY: as above.
                    unsafe { Pin::new_unchecked(future) }.poll(&mut cx)
                })
            }))
        };
        match polled {
            Ok(Poll::Pending) => {
                if this.transition_to_idle() {
                    // SAFETY: the job's reference, no longer needed.
                    unsafe { Self::drop_reference(task) };
                } else {
                    // Woken while running: run again, with the same reference.
                    this.owner.schedule(Self::job(task));
                }
            }
            Ok(Poll::Ready(output)) => {
                this.transition_to_complete();
                this.finish(TaskEnd::Output(output));
                // SAFETY: the job's reference.
                unsafe { Self::drop_reference(task) };
            }
            Err(payload) => {
                this.transition_to_complete();
                this.finish(TaskEnd::Panicked(payload));
                // SAFETY: the job's reference.
                unsafe { Self::drop_reference(task) };
            }
        }
    }

    /// Drops the future, then tells the owner (steps 3 and 6).
    fn finish(&self, end: TaskEnd<F::Output>) {
        // SAFETY: called by the job's holder after the last poll, or by the
        // last reference; either way nobody else touches the future.
        let future = self.future.with_mut(|future| unsafe { (*future).take() });
        let end = match panic::catch_unwind(AssertUnwindSafe(move || drop(future))) {
            Err(payload) if !matches!(end, TaskEnd::Panicked(_)) => TaskEnd::Panicked(payload),
            _ => end,
        };
        self.owner.completed(end);
    }

    fn transition_to_running(&self) {
        let previous = self.state.swap(RUNNING, Ordering::AcqRel);
        debug_assert_eq!(previous, SCHEDULED, "future task ran while not scheduled");
    }

    /// `true` if the task is now idle; `false` if it was woken while running
    /// and is scheduled again (the caller re-pushes its job).
    fn transition_to_idle(&self) -> bool {
        match self
            .state
            .compare_exchange(RUNNING, IDLE, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => true,
            Err(current) => {
                debug_assert_eq!(current, RUNNING | NOTIFIED);
                self.state.store(SCHEDULED, Ordering::Release);
                false
            }
        }
    }

    fn transition_to_complete(&self) {
        self.state.store(COMPLETE, Ordering::Release);
    }

    /// Step 5; returns whether the caller must push a new job.
    fn transition_to_scheduled(&self) -> bool {
        let mut current = self.state.load(Ordering::Acquire);
        loop {
            let next = match current {
                IDLE => SCHEDULED,
                RUNNING => RUNNING | NOTIFIED,
                _ => return false,
            };
            match self
                .state
                .compare_exchange(current, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return current == IDLE,
                Err(actual) => current = actual,
            }
        }
    }

    /// # Safety
    /// The caller owns a reference, which this consumes.
    unsafe fn drop_reference(task: NonNull<Self>) {
        // SAFETY: the reference being dropped keeps the record alive here.
        if unsafe { task.as_ref() }
            .refs
            .fetch_sub(1, Ordering::Release)
            != 1
        {
            return;
        }
        // SAFETY: not freed yet; only this thread can still reach it.
        acquire_after_release(&unsafe { task.as_ref() }.refs);
        // SAFETY: that was the last reference: the record is ours.
        let this = unsafe { Box::from_raw(task.as_ptr()) };
        if this.state.load(Ordering::Relaxed) != COMPLETE {
            // Step 6.
            this.finish(TaskEnd::NeverWoken);
        }
    }

    unsafe fn clone_waker(data: *const ()) -> RawWaker {
        // SAFETY: a waker (or the lent one) holds a reference.
        unsafe { &*(data as *const Self) }
            .refs
            .fetch_add(1, Ordering::Relaxed);
        RawWaker::new(data, &Self::VTABLE)
    }

    unsafe fn wake(data: *const ()) {
        // SAFETY: the waker's reference, consumed after the wake.
        unsafe {
            Self::wake_by_ref(data);
            Self::drop_waker(data);
        }
    }

    unsafe fn wake_by_ref(data: *const ()) {
        let task = NonNull::new(data as *mut Self).expect("null waker");
        // SAFETY: the waker's reference keeps the record alive.
        let this = unsafe { task.as_ref() };
        if this.transition_to_scheduled() {
            this.refs.fetch_add(1, Ordering::Relaxed);
            // A task that is not complete still holds its owner's unit, so
            // the owner's registry is alive.
            this.owner.schedule(Self::job(task));
        }
    }

    unsafe fn drop_waker(data: *const ()) {
        let task = NonNull::new(data as *mut Self).expect("null waker");
        // SAFETY: the waker's reference.
        unsafe { Self::drop_reference(task) };
    }
}
