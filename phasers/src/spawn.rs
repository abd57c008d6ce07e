//! Phased tasks: ordinary future tasks of a finish scope that own
//! registrations.
//!
//! A phased task is spawned with [`Scope::spawn_future`]: it runs on the
//! computation workers, and while it waits for a phase (`reg.next().await`)
//! it holds no worker and no thread — its waker sits on the phaser, and the
//! thread that completes the phase wakes it. So any number of phased tasks
//! can wait at once, on any number of workers (one is enough), and none is
//! ever stacked on another: a blocking wait would run other tasks on top
//! of the waiting one, which could then never resume before them.
//!
//! The task belongs to the finish it was spawned in: the finish waits for
//! it and re-raises its panic; its registrations are dropped when it ends
//! (or unwinds), so the phases stop waiting for it; communication it
//! starts joins that finish. It receives the [`Scope`] to spawn more tasks,
//! phased or not, into the same finish.
//!
//! Registrations are tied to their phaser's finish (`'scope`, see
//! `registration`): [`spawn_phased`] takes them only for that finish, so a
//! phased task never waits for a registration held outside its finish.

use std::future::Future;

use hc_runtime::Scope;

use crate::registration::Registration;

mod sealed {
    pub trait Sealed {}
}

/// What a phased task can own: one [`Registration`] of the finish scope
/// `'scope`, or a tuple, array, vector or option of them (one per phaser
/// the task is registered on). Implemented by this crate only.
pub trait Registrations<'scope>: Send + sealed::Sealed {}

impl<V> sealed::Sealed for Registration<'_, V> {}
impl<'scope, V> Registrations<'scope> for Registration<'scope, V> {}

impl sealed::Sealed for () {}
impl Registrations<'_> for () {}

impl<T: sealed::Sealed> sealed::Sealed for Option<T> {}
impl<'scope, T: Registrations<'scope>> Registrations<'scope> for Option<T> {}

impl<T: sealed::Sealed> sealed::Sealed for Vec<T> {}
impl<'scope, T: Registrations<'scope>> Registrations<'scope> for Vec<T> {}

impl<T: sealed::Sealed, const N: usize> sealed::Sealed for [T; N] {}
impl<'scope, T: Registrations<'scope>, const N: usize> Registrations<'scope> for [T; N] {}

macro_rules! tuple_registrations {
    ($($name:ident),+) => {
        impl<$($name: sealed::Sealed),+> sealed::Sealed for ($($name,)+) {}
        impl<'scope, $($name: Registrations<'scope>),+> Registrations<'scope> for ($($name,)+) {}
    };
}

tuple_registrations!(A);
tuple_registrations!(A, B);
tuple_registrations!(A, B, C);
tuple_registrations!(A, B, C, D);

/// What a phased task's future may return: `()`, or `Result<(), E>` so
/// that its body can use `?`. An `Err` fails the task like a panic whose
/// message is the error: the task's registrations are dropped, and the
/// finish re-raises it. Implemented by this crate only.
pub trait PhasedOutput: Send + sealed::Sealed {
    /// Ends the task with this output.
    #[doc(hidden)]
    fn end(self);
}

impl PhasedOutput for () {
    fn end(self) {}
}

impl<E: std::fmt::Display + Send> sealed::Sealed for Result<(), E> {}
impl<E: std::fmt::Display + Send> PhasedOutput for Result<(), E> {
    fn end(self) {
        if let Err(error) = self {
            panic!("phased task failed: {error}");
        }
    }
}

/// Spawns a phased task of `scope` (HC's `async phased`): `body` receives
/// the scope (to spawn more tasks into the same finish) and
/// `registrations` — one [`Registration`] (from
/// [`Registration::register`]), or a tuple, array or vector of them for
/// several phasers — and returns the task's future, whose output is `()`
/// or a `Result<(), E>` (see [`PhasedOutput`]). The registrations are
/// dropped when the task ends.
///
/// The registrations must be created by the spawning task *before* the
/// call, so that the phase they start in waits for the new task.
///
/// ```
/// use hcmpi_phasers::{spawn_phased, Mode, Phaser};
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// // A thousand phased tasks on one worker, three phases each.
/// let rt = hc_runtime::Runtime::builder().num_workers(1).build().unwrap();
/// let arrived = AtomicUsize::new(0);
/// rt.finish(|s| {
///     let ph = Phaser::new(s, Mode::SignalWait);
///     for _ in 0..1000 {
///         let arrived = &arrived;
///         spawn_phased(s, ph.register(Mode::SignalWait).unwrap(), move |_, mut reg| async move {
///             for phase in 1..=3 {
///                 arrived.fetch_add(1, Ordering::SeqCst);
///                 reg.next().await.unwrap();
///                 // Everyone has arrived before anyone leaves the phase.
///                 assert!(arrived.load(Ordering::SeqCst) >= 1000 * phase);
///             }
///         });
///     }
///     // The creator leaves when `ph` is dropped at the end of the body.
/// });
/// ```
///
/// With `?` in the body, an error ends the task and the finish re-raises
/// it:
///
/// ```
/// use hcmpi_phasers::{spawn_phased, Mode, Phaser, PhaserError};
///
/// let failed = std::panic::catch_unwind(|| {
///     hc_runtime::finish(|s| {
///         let ph = Phaser::new(s, Mode::SignalWait);
///         let observer = ph.register(Mode::WaitOnly).unwrap();
///         spawn_phased(s, observer, |_, mut reg| async move {
///             reg.signal().await?; // a WAIT_ONLY registration cannot signal
///             Ok::<(), PhaserError>(())
///         });
///     })
/// });
/// let message = failed.unwrap_err().downcast::<String>().unwrap();
/// assert!(message.contains("signal is not allowed in WAIT_ONLY mode"), "{message}");
/// ```
///
/// Registrations of another finish are refused at compile time — here,
/// those of an enclosing finish for phased tasks of a nested one (whose
/// body would wait for the enclosing finish's creator):
///
/// ```compile_fail
/// use hcmpi_phasers::{spawn_phased, Mode, Phaser};
///
/// hc_runtime::finish(|outer| {
///     let ph = Phaser::new(outer, Mode::SignalWait);
///     hc_runtime::finish(|inner| {
///         spawn_phased(inner, ph.register(Mode::SignalWait).unwrap(), |_, mut reg| async move {
///             reg.next().await.unwrap();
///         });
///     });
/// });
/// ```
///
/// [`Registration`]: crate::Registration
/// [`Registration::register`]: crate::Registration::register
pub fn spawn_phased<'scope, 'env, R, F, Fut>(
    scope: &'scope Scope<'scope, 'env>,
    registrations: R,
    body: F,
) where
    R: Registrations<'scope> + 'scope,
    F: FnOnce(&'scope Scope<'scope, 'env>, R) -> Fut + Send + 'scope,
    Fut: Future + Send + 'scope,
    Fut::Output: PhasedOutput,
{
    // `body` runs inside the task, so that a panic in it (not only in the
    // future it returns) reaches the finish with the registrations dropped.
    scope.spawn_future(async move {
        // The body's future, and with it the registrations, is gone before
        // an error ends the task.
        let output = body(scope, registrations).await;
        output.end();
    });
}
