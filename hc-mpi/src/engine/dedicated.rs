//! Dedicated placement: the communication thread's loop.

use std::sync::Arc;

use crossbeam_utils::sync::Parker;
use hc_runtime::{Backoff, BackoffPolicy, Snooze};

use super::Engine;

/// Body of the communication thread: steps the engine until it is asked to
/// stop, then runs the shutdown protocol (steps 2–5) on this thread.
///
/// With operations in flight and no progress it backs off with
/// [`BackoffPolicy::POLLING`] (spin, yield for 2 ms, then sleep in growing
/// steps up to the engine's longest poll interval): messages that arrive
/// are only noticed by polling. On an oversubscribed node it naps instead
/// of yielding ([`BackoffPolicy::POLLING_OVERSUBSCRIBED`]), with precise
/// timers. With nothing in flight it watches the
/// worklist only briefly ([`BackoffPolicy::WAIT`]: in request/reply traffic
/// the next submission often follows within microseconds), then parks until
/// a submission unparks it, so an idle process costs no CPU.
pub(crate) fn run_dedicated(engine: Arc<Engine>, parker: Parker) {
    let body = std::panic::AssertUnwindSafe(|| poll_until_stopped(&engine, &parker));
    if std::panic::catch_unwind(body).is_err() {
        super::abort_job("the communication thread panicked");
    }
}

fn poll_until_stopped(engine: &Engine, parker: &Parker) {
    let config = engine.config();
    let polling_policy = if config.oversubscribed {
        hc_runtime::precise_timers();
        let policy = BackoffPolicy::POLLING_OVERSUBSCRIBED;
        policy.with_max_park(policy.max_park.min(config.max_poll_interval))
    } else {
        BackoffPolicy::POLLING.with_max_park(config.max_poll_interval)
    };
    let mut polling = Backoff::new(polling_policy);
    let mut idle = Backoff::new(BackoffPolicy::WAIT);
    while !engine.is_stopping() {
        if engine.try_step(true) == Some(true) {
            polling.reset();
            idle.reset();
            continue;
        }
        if engine.has_work() {
            if let Snooze::Park(timeout) = polling.snooze() {
                parker.park_timeout(timeout);
            }
        } else if idle.snooze().is_park() {
            // A submission unparks us; one that came after the check
            // above left its token in the parker.
            parker.park();
            polling.reset();
            idle.reset();
        }
    }
    engine.shut_down();
}
