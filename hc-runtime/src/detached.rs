//! Detached tasks: tasks that belong to no finish scope.
//!
//! They serve callbacks whose lifetime no caller's stack can bound, e.g. a
//! closure run when an MPI request completes. A detached task owns all it
//! uses (`'static`), holds its pool alive (an `Arc` of the registry) until it
//! has run, and, having no finish to report to, prints its panic to stderr —
//! as a panicking `std::thread` does — instead of propagating it.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use crate::ddf::{self, AllOutcome, Awaitable, Release, ABANDONED_MESSAGE};
use crate::job::HeapJob;
use crate::registry::Registry;

fn run_reporting_panic(body: impl FnOnce()) {
    // A detached task has no enclosing finish, whatever the worker was
    // waiting on when it picked the task up.
    let _enclosing = crate::scope::no_enclosing_finish();
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(body)) {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic payload".to_owned());
        eprintln!("hc-runtime: a detached task panicked: {message}");
    }
}

pub(crate) fn spawn(registry: &Arc<Registry>, body: impl FnOnce() + Send + 'static) {
    let keep_alive = Arc::clone(registry);
    let task = move || {
        run_reporting_panic(body);
        drop(keep_alive);
    };
    // SAFETY: the task is 'static and owns a handle on its registry.
    let job = unsafe { HeapJob::into_job_ref(task) };
    registry.push(job);
}

pub(crate) fn spawn_await(
    registry: &Arc<Registry>,
    deps: &[&dyn Awaitable],
    body: impl FnOnce() + Send + 'static,
) {
    let keep_alive = Arc::clone(registry);
    let releaser = &*keep_alive as &dyn Release as *const dyn Release;
    let task = move |outcome: AllOutcome| {
        match outcome {
            AllOutcome::Ready => run_reporting_panic(body),
            AllOutcome::Abandoned => {
                drop(body);
                eprintln!("{ABANDONED_MESSAGE} (detached task)");
            }
        }
        drop(keep_alive);
    };
    let cores: Vec<_> = deps.iter().map(|d| d.ddf_core()).collect();
    // SAFETY: the releaser points into the registry that `task` keeps alive
    // until it has run, and `task` is 'static.
    unsafe { ddf::spawn_await_all(&cores, releaser, task) };
}
