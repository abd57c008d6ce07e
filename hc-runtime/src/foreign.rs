//! Running a closure on the pool on behalf of a thread that is not one of its
//! workers (e.g. `Runtime::finish` called from `main`).
//!
//! The job lives on the foreign thread's stack. The worker that runs it stores
//! the result, then sets `done` (`Release`) and unparks the foreign thread
//! through an [`Unparker`] it cloned *before* setting `done`: once `done` is
//! visible the foreign thread may return and free the job, so the worker must
//! not touch it afterwards. The foreign thread reads `done` with `Acquire`
//! before taking the result.

use std::cell::UnsafeCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_utils::sync::Unparker;

use crate::job::JobRef;
use crate::registry::WorkerThread;

pub(crate) struct ForeignJob<OP, R> {
    op: UnsafeCell<Option<OP>>,
    result: UnsafeCell<Option<std::thread::Result<R>>>,
    done: AtomicBool,
    unparker: Unparker,
}

impl<OP, R> ForeignJob<OP, R>
where
    OP: FnOnce(&WorkerThread) -> R + Send,
    R: Send,
{
    pub(crate) fn new(op: OP, unparker: Unparker) -> Self {
        ForeignJob {
            op: UnsafeCell::new(Some(op)),
            result: UnsafeCell::new(None),
            done: AtomicBool::new(false),
            unparker,
        }
    }

    /// # Safety
    /// `self` must not move or be dropped until [`is_done`](Self::is_done)
    /// returns `true`, and the job reference must be executed exactly once.
    pub(crate) unsafe fn as_job_ref(&self) -> JobRef {
        // SAFETY: forwarded from this function's contract; OP and R are Send.
        unsafe { JobRef::new(self as *const Self as *const (), Self::execute) }
    }

    unsafe fn execute(this: *const ()) {
        // SAFETY: `as_job_ref` guarantees the job is alive until `done` is set.
        let this = unsafe { &*(this as *const Self) };
        // SAFETY: executed once, so nobody else accesses `op` or `result`
        // until `done` is published below.
        let op = unsafe { (*this.op.get()).take() }.expect("foreign job executed twice");
        let worker = WorkerThread::current().expect("foreign job ran outside a worker");
        let result = panic::catch_unwind(AssertUnwindSafe(|| op(worker)));
        // SAFETY: as above; the foreign thread reads it only after `done`.
        unsafe { *this.result.get() = Some(result) };
        let unparker = this.unparker.clone();
        this.done.store(true, Ordering::Release);
        unparker.unpark();
    }

    pub(crate) fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    pub(crate) fn into_result(self) -> R {
        match self.result.into_inner() {
            Some(Ok(value)) => value,
            Some(Err(payload)) => panic::resume_unwind(payload),
            None => unreachable!("foreign job finished without a result"),
        }
    }
}
