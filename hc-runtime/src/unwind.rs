//! Panic plumbing: capturing a task's panic for its finish scope, and the
//! last resort when the runtime itself is broken.

use std::any::Any;
use std::ptr;

use crate::sync::{AtomicPtr, Ordering};

/// Holds the first panic payload raised by any task of a finish scope; the
/// owner re-raises it once every task of the scope has completed.
#[derive(Debug)]
pub(crate) struct PanicSlot {
    first: AtomicPtr<Box<dyn Any + Send>>,
}

impl PanicSlot {
    pub(crate) fn new() -> Self {
        PanicSlot {
            first: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Records `payload` unless an earlier panic was recorded (later ones are
    /// dropped, as with rayon scopes).
    pub(crate) fn record(&self, payload: Box<dyn Any + Send>) {
        let boxed = Box::into_raw(Box::new(payload));
        if self
            .first
            .compare_exchange(ptr::null_mut(), boxed, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            // SAFETY: `boxed` was never published, we still own it.
            drop(unsafe { Box::from_raw(boxed) });
        }
    }

    /// Takes the recorded panic, if any.
    #[inline]
    pub(crate) fn take(&self) -> Option<Box<dyn Any + Send>> {
        // The common case, no panic, costs a load instead of an RMW.
        if self.first.load(Ordering::Acquire).is_null() {
            return None;
        }
        let boxed = self.first.swap(ptr::null_mut(), Ordering::Acquire);
        if boxed.is_null() {
            None
        } else {
            // SAFETY: non-null values come from `Box::into_raw` in `record` and
            // the swap gives us sole ownership.
            Some(*unsafe { Box::from_raw(boxed) })
        }
    }
}

impl Drop for PanicSlot {
    #[inline]
    fn drop(&mut self) {
        drop(self.take());
    }
}

/// A panic payload carrying `message`, raised (and caught) here so that the
/// panic hook reports it like any other panic, with its message and the
/// thread that found it. For failures the runtime itself detects (a task
/// whose dependency was dropped unput) and records for a finish to
/// re-raise: `resume_unwind` does not call the hook, so without this the
/// program would end with status 101 and nothing on stderr.
#[cold]
pub(crate) fn reported_panic(message: &'static str) -> Box<dyn Any + Send> {
    std::panic::catch_unwind(|| -> () { panic!("{message}") }).expect_err("panic! unwinds")
}

/// Aborts the process: used where unwinding would leave the scheduler in a
/// state no caller can recover from.
pub(crate) fn abort_on_runtime_bug(what: &str) -> ! {
    eprintln!("hc-runtime: fatal internal error: {what}; aborting");
    std::process::abort()
}

/// Aborts the process if dropped during an unwind: armed around the
/// scheduler's call into a job, which must not unwind, then disarmed with
/// [`AbortOnUnwind::disarm`]. Unlike `catch_unwind`, it costs nothing on
/// the path that does not unwind: no landing-pad frame to spill the job's
/// state into, and nothing stored (it is zero-sized).
pub(crate) struct AbortOnUnwind;

impl AbortOnUnwind {
    /// The guarded code returned normally.
    #[inline]
    pub(crate) fn disarm(self) {
        std::mem::forget(self);
    }
}

impl Drop for AbortOnUnwind {
    #[cold]
    fn drop(&mut self) {
        abort_on_runtime_bug("a job unwound into the scheduler");
    }
}

/// The text of a panic payload (a `&str` or `String` message), for error
/// messages that report a caught panic.
///
/// ```
/// let payload = std::panic::catch_unwind(|| panic!("bad guid {}", 7)).unwrap_err();
/// assert_eq!(hc_runtime::panic_message(&*payload), "bad guid 7");
/// ```
pub fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("non-string panic payload")
}
