//! Type-erased units of work as they sit in the deques.
//!
//! A [`JobRef`] is a pointer plus the function that knows how to run (and free)
//! what it points at, after rayon-core's design: it lets heap tasks, tasks
//! released by DDFs and tasks injected from foreign threads share one deque
//! type without a second allocation.

use std::marker::PhantomData;

/// A type-erased job: a data pointer and the function that consumes it.
#[derive(Debug)]
pub(crate) struct JobRef {
    pointer: *const (),
    execute_fn: unsafe fn(*const ()),
}

// SAFETY: a `JobRef` is only created (see `JobRef::new`) for jobs whose data is
// `Send`; moving the pointer to another thread moves ownership of that data.
unsafe impl Send for JobRef {}

impl JobRef {
    /// # Safety
    /// `pointer` must stay valid until `execute_fn(pointer)` is called, which
    /// happens exactly once; the data behind it must be safe to hand to another
    /// thread.
    pub(crate) unsafe fn new(pointer: *const (), execute_fn: unsafe fn(*const ())) -> JobRef {
        JobRef {
            pointer,
            execute_fn,
        }
    }

    /// Runs the job, consuming it.
    pub(crate) fn execute(self) {
        // SAFETY: `JobRef::new`'s contract makes the pointer valid and this the
        // one call; `self` is consumed so it cannot run twice.
        unsafe { (self.execute_fn)(self.pointer) }
    }
}

/// A closure boxed on the heap, run once.
pub(crate) struct HeapJob<F> {
    body: F,
}

impl<F: FnOnce() + Send> HeapJob<F> {
    /// Boxes `body` and returns a job reference that owns the box.
    ///
    /// # Safety
    /// `body` may borrow data; the caller guarantees the job is executed before
    /// any of that data is invalidated (a finish scope waits for it).
    pub(crate) unsafe fn into_job_ref(body: F) -> JobRef {
        let pointer = Box::into_raw(Box::new(HeapJob { body }));
        // SAFETY: the box stays alive until `execute` frees it, exactly once; F
        // is Send so the box may move between threads.
        unsafe { JobRef::new(pointer as *const (), Self::execute) }
    }

    /// # Safety
    /// `this` came from `into_job_ref` and has not been executed.
    unsafe fn execute(this: *const ()) {
        // SAFETY: see the function contract: we own the box now.
        let job = unsafe { Box::from_raw(this as *mut HeapJob<F>) };
        (job.body)();
    }
}

/// Marker giving a raw pointer `Send`/`Sync` so a closure may carry it.
///
/// Closures must call [`SendPtr::get`] rather than read the field, so that the
/// 2021 disjoint-capture rules capture the wrapper and not the bare pointer.
pub(crate) struct SendPtr<T: ?Sized>(*const T, PhantomData<*const T>);

// SAFETY: every use pairs the pointer with a protocol (finish counter, DDF
// release) that keeps the pointee alive and only shares `Sync` data through it.
unsafe impl<T: ?Sized> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized> Sync for SendPtr<T> {}

impl<T: ?Sized> Clone for SendPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: ?Sized> Copy for SendPtr<T> {}

impl<T: ?Sized> SendPtr<T> {
    pub(crate) fn new(ptr: *const T) -> Self {
        SendPtr(ptr, PhantomData)
    }

    pub(crate) fn get(self) -> *const T {
        self.0
    }
}
