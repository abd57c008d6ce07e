//! The stall report: a rank whose posted operations make no progress for a
//! long time says once what it is waiting on, without ending the job.
//!
//! A distributed program that waits forever is the hardest failure to
//! diagnose from the outside: every rank looks busy or idle and nothing is
//! printed. The engine is the one place that sees every operation in
//! flight, and it keeps being stepped while operations are pending (the
//! dedicated thread and polling workers park with a timeout then), so it
//! can notice.
//!
//! 1. Every step that makes progress (a submission applied, an operation
//!    completed, a service message handled) restarts the watch.
//! 2. A step without progress, while operations are posted or polled,
//!    compares the time since the last progress with the limit
//!    (`HCMPI_STALL_SECS`, 60 s by default, `0` disables it).
//! 3. Past the limit it prints, once, the rank, how long, and the pending
//!    operations by description (kind, peer, tag, size) and how many finish
//!    scopes wait for tasks; the next progress re-arms it.
//!
//! Message services waiting for messages are not a stall by themselves: a
//! rank whose only pending work is its services is idle.

use std::time::{Duration, Instant};

/// Environment variable: seconds without communication progress, while
/// operations are pending, before a rank reports what it waits on (default
/// 60; `0` turns the report off).
pub const STALL_ENV: &str = "HCMPI_STALL_SECS";

/// The default limit of [`STALL_ENV`].
pub(crate) const DEFAULT_STALL: Duration = Duration::from_secs(60);

/// Steps 1–3 of the module docs; owned by the engine state (only the
/// engine holder touches it).
#[derive(Debug)]
pub(crate) struct StallWatch {
    limit: Option<Duration>,
    last_progress: Instant,
    reported: bool,
}

impl StallWatch {
    pub(crate) fn new(limit: Option<Duration>) -> StallWatch {
        StallWatch {
            limit,
            last_progress: Instant::now(),
            reported: false,
        }
    }

    /// Accounts for one step. `waiting` says whether operations are
    /// pending; `describe` lists them, and how many finish scopes wait for
    /// tasks when the runtime is known (called only for a report).
    pub(crate) fn after_step(
        &mut self,
        progress: bool,
        waiting: bool,
        rank: i32,
        describe: impl FnOnce() -> (Vec<String>, Option<usize>),
    ) {
        let Some(limit) = self.limit else {
            return;
        };
        if progress || !waiting {
            // Step 1 (and an idle rank is not stalled: its clock restarts
            // when it next posts something).
            self.last_progress = Instant::now();
            self.reported = false;
            return;
        }
        let stalled_for = self.last_progress.elapsed();
        if self.reported || stalled_for < limit {
            return;
        }
        self.reported = true;
        let (pending, finishes) = describe();
        let finishes = match finishes {
            Some(count) => format!("; {count} finish scope(s) waiting for their tasks"),
            None => String::new(),
        };
        crate::abort::report(&format!(
            "hc-mpi: rank {rank}: no communication progress for {} s ({STALL_ENV}); \
             waiting on {} operation(s): {}{finishes}",
            stalled_for.as_secs(),
            pending.len(),
            pending.join(", ")
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::StallWatch;
    use std::time::Duration;

    #[test]
    fn reports_once_per_stall_and_never_when_disabled_or_idle() {
        let mut reports = 0;
        let mut watch = StallWatch::new(Some(Duration::ZERO));
        // Idle: nothing pending, no report.
        watch.after_step(false, false, 0, || unreachable!("idle is no stall"));
        // Waiting past the (zero) limit: one report, then silence.
        watch.after_step(false, true, 0, || {
            reports += 1;
            (vec!["irecv(source=1, tag=5)".into()], Some(1))
        });
        watch.after_step(false, true, 0, || unreachable!("reported once"));
        // Progress re-arms it.
        watch.after_step(true, true, 0, || unreachable!("progress is no stall"));
        watch.after_step(false, true, 0, || {
            reports += 1;
            (Vec::new(), None)
        });
        assert_eq!(reports, 2);
        let mut off = StallWatch::new(None);
        off.after_step(false, true, 0, || unreachable!("disabled"));
    }
}
