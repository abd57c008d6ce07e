//! Phased tasks: tasks of a finish scope that run on threads of their own.
//!
//! # Why not on the computation workers
//!
//! Every task registered on a phaser in a mode that signals must be able to
//! run at the same time as the others: a phase completes only when all of
//! them signal. A computation worker that blocks by running other tasks
//! (hc-runtime's help-first `wait`) could pick up a second phased task on
//! top of the first; the first then cannot signal until the second returns,
//! and the second cannot pass the phase without the first: a deadlock. And
//! with more phased tasks than workers, the tasks still queued could never
//! signal while the running ones park.
//!
//! So a phased task gets a thread of its own ([`spawn_phased`]): its `next`
//! parks that thread (spin, yield, park; never running other tasks), any
//! number of phased tasks can be live at once, and none is ever stacked on
//! another. The task still belongs to the finish it was spawned in — the
//! finish waits for it, and re-raises its panic — and it can spawn ordinary
//! tasks into that finish through the [`Scope`] it captures; a blocking
//! `wait` on a DDF or request inside it parks its thread too.
//!
//! The cost is a thread start per phased task (tens of microseconds) and
//! its stack: phased tasks suit SPMD-style loops over many phases, which is
//! what phasers are for. Limits: the operating system's thread limit
//! (reported as [`PhaserError::Spawn`], not a hang). Communication started
//! inside a phased task joins no finish (there is no enclosing finish on
//! its thread); wait for its requests in the task.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;

use hc_runtime::{Ddf, Scope};

use crate::mode::PhaserError;

/// Stack size of a phased task's thread.
pub const PHASED_STACK_SIZE: usize = 2 << 20;

/// The spawning scope, sent to the phased task's thread.
struct ScopePtr<'scope, 'env>(*const Scope<'scope, 'env>);

// SAFETY: `Scope` is `Sync` (tasks on any worker share it); the pointer is
// only dereferenced while the scope is alive (see `spawn_phased`).
unsafe impl Send for ScopePtr<'_, '_> {}

type PanicSlot = std::sync::Arc<Mutex<Option<Box<dyn Any + Send>>>>;

/// Spawns `body` as a phased task of `scope` (HC's `async phased`): it runs
/// on a thread of its own with the scope (to spawn more tasks into the same
/// finish) and `registrations` — one [`Registration`]
/// (from [`Registration::register`]), or a tuple or vector of them for
/// several phasers — which it drops when it ends.
///
/// The registrations must be created by the spawning task *before* the
/// call, so that the phase they start in waits for the new task.
///
/// ```
/// use phasers::{spawn_phased, Mode, Phaser};
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// let arrived = AtomicUsize::new(0);
/// hc_runtime::finish(|s| {
///     let ph = Phaser::new(Mode::SignalWait);
///     for _ in 0..3 {
///         let reg = ph.register(Mode::SignalWait).unwrap();
///         spawn_phased(s, reg, |_, mut reg| {
///             arrived.fetch_add(1, Ordering::SeqCst);
///             reg.next().unwrap();
///             // Everyone has arrived before anyone leaves the phase.
///             assert_eq!(arrived.load(Ordering::SeqCst), 3);
///         })
///         .unwrap();
///     }
///     // The creator leaves when `ph` is dropped at the end of the body.
/// });
/// ```
///
/// [`Registration`]: crate::Registration
/// [`Registration::register`]: crate::Registration::register
///
/// # Errors
/// [`PhaserError::Spawn`] if no thread could be started; the registrations
/// are dropped then (the phases stop waiting for them).
pub fn spawn_phased<'scope, 'env, R, F>(
    scope: &'scope Scope<'scope, 'env>,
    registrations: R,
    body: F,
) -> Result<(), PhaserError>
where
    R: Send + 'scope,
    F: FnOnce(&'scope Scope<'scope, 'env>, R) + Send + 'scope,
{
    let scope_ptr = ScopePtr(scope as *const Scope<'scope, 'env>);
    let done: Ddf<()> = Ddf::new();
    let panicked: PanicSlot = Default::default();
    let task: Box<dyn FnOnce() + Send + 'scope> = {
        let (done, panicked) = (done.clone(), panicked.clone());
        Box::new(move || {
            let scope_ptr = scope_ptr;
            // SAFETY: the scope lives until its finish completes, which
            // waits for `done` (see below), put only after this call.
            let scope = unsafe { &*scope_ptr.0 };
            let run = move || body(scope, registrations);
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(run)) {
                *panicked.lock().unwrap_or_else(|e| e.into_inner()) = Some(payload);
            }
            // `body` and the registrations were dropped above, before the
            // finish can learn that the task is over.
            let _ = done.put(());
        })
    };
    // SAFETY: the task borrows data that outlives `'scope`. The finish of
    // `scope` cannot complete, and so no such borrow can end, before the
    // awaiting task spawned below has run; that happens only after
    // `done.put`, which the thread calls after `task` (and everything it
    // captured) has been consumed. If the thread cannot be started, the
    // task is dropped by `spawn` on this thread before we return.
    let task: Box<dyn FnOnce() + Send + 'static> = unsafe { std::mem::transmute(task) };
    {
        // The thread's clone of `done` keeps it alive until it is put.
        let panicked = panicked.clone();
        scope.spawn_await(&[&done], move |_| {
            let payload = panicked.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(payload) = payload {
                panic::resume_unwind(payload);
            }
        });
    }
    let started = std::thread::Builder::new()
        .name("hc-phased".into())
        .stack_size(PHASED_STACK_SIZE)
        .spawn(task);
    match started {
        Ok(_) => Ok(()),
        Err(error) => {
            let _ = done.put(());
            Err(PhaserError::Spawn(error.to_string()))
        }
    }
}
