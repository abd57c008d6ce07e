//! Counters of what the workers did: [`Runtime::metrics`](crate::Runtime::metrics).
//!
//! Each worker writes only its own counters (a load and a store, no
//! read-modify-write: it is their one writer), on a cache line of their
//! own; a snapshot reads them from any thread. Time is split by state:
//! *searching* runs from the moment a worker finds no task until it finds
//! one or parks (stealing, polling the communication engine when it has
//! the poll duty, backing off), *parked* is time asleep, and *working* is
//! the rest of the worker's life — running tasks, including the runtime's
//! own bookkeeping between them. The clock is read only on those
//! transitions, never per task.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;

/// One worker's counters (written by that worker only).
#[derive(Debug, Default)]
pub(crate) struct WorkerCounters {
    tasks_run: AtomicU64,
    steals: AtomicU64,
    failed_steals: AtomicU64,
    searching_ns: AtomicU64,
    parked_ns: AtomicU64,
}

/// Adds `n` to a counter with one writer.
#[inline]
fn bump(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
}

impl WorkerCounters {
    #[inline]
    pub(crate) fn task_run(&self) {
        bump(&self.tasks_run, 1);
    }

    pub(crate) fn steal(&self, found: bool) {
        bump(
            if found {
                &self.steals
            } else {
                &self.failed_steals
            },
            1,
        );
    }

    pub(crate) fn searched(&self, time: Duration) {
        bump(&self.searching_ns, time.as_nanos() as u64);
    }

    pub(crate) fn parked(&self, time: Duration) {
        bump(&self.parked_ns, time.as_nanos() as u64);
    }

    pub(crate) fn snapshot(&self, alive: Duration) -> WorkerMetrics {
        let searching = Duration::from_nanos(self.searching_ns.load(Ordering::Relaxed));
        let parked = Duration::from_nanos(self.parked_ns.load(Ordering::Relaxed));
        WorkerMetrics {
            tasks_run: self.tasks_run.load(Ordering::Relaxed),
            steals: self.steals.load(Ordering::Relaxed),
            failed_steals: self.failed_steals.load(Ordering::Relaxed),
            working: alive.saturating_sub(searching + parked),
            searching,
            parked,
        }
    }
}

/// What one worker did since the runtime started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct WorkerMetrics {
    /// Tasks (and other jobs: joins, futures' polls) it ran.
    pub tasks_run: u64,
    /// Jobs it took from another worker's deque or the shared injector.
    pub steals: u64,
    /// Sweeps over the injector and every other deque that found nothing.
    pub failed_steals: u64,
    /// Time running tasks.
    #[serde(serialize_with = "seconds")]
    pub working: Duration,
    /// Time looking for a task (stealing, polling, backing off).
    #[serde(serialize_with = "seconds")]
    pub searching: Duration,
    /// Time asleep.
    #[serde(serialize_with = "seconds")]
    pub parked: Duration,
}

impl WorkerMetrics {
    /// The sum of two workers' counters.
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(2).build().unwrap();
    /// rt.finish(|s| for _ in 0..10 { s.spawn(|_| {}) });
    /// let metrics = rt.metrics();
    /// let total = metrics.workers.iter().fold(Default::default(), |a: hc_runtime::WorkerMetrics, w| a.plus(w));
    /// assert_eq!(total, metrics.total());
    /// ```
    #[must_use]
    pub fn plus(&self, other: &WorkerMetrics) -> WorkerMetrics {
        WorkerMetrics {
            tasks_run: self.tasks_run + other.tasks_run,
            steals: self.steals + other.steals,
            failed_steals: self.failed_steals + other.failed_steals,
            working: self.working + other.working,
            searching: self.searching + other.searching,
            parked: self.parked + other.parked,
        }
    }
}

/// A snapshot of a runtime's counters ([`Runtime::metrics`](crate::Runtime::metrics)).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RuntimeMetrics {
    /// Time since the workers started.
    #[serde(serialize_with = "seconds")]
    pub uptime: Duration,
    /// One entry per worker, by index.
    pub workers: Vec<WorkerMetrics>,
}

impl RuntimeMetrics {
    pub(crate) fn new(uptime: Duration, workers: Vec<WorkerMetrics>) -> RuntimeMetrics {
        RuntimeMetrics { uptime, workers }
    }

    /// Every worker's counters added up.
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(2).build().unwrap();
    /// rt.finish(|s| for _ in 0..100 { s.spawn(|_| {}) });
    /// // The 100 tasks, plus the finish body handed to the workers.
    /// assert!(rt.metrics().total().tasks_run >= 100);
    /// ```
    pub fn total(&self) -> WorkerMetrics {
        self.workers
            .iter()
            .fold(WorkerMetrics::default(), |sum, worker| sum.plus(worker))
    }

    /// The counters accumulated since `earlier`, a snapshot of the same
    /// runtime.
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(1).build().unwrap();
    /// let before = rt.metrics();
    /// rt.finish(|s| for _ in 0..5 { s.spawn(|_| {}) });
    /// assert!(rt.metrics().since(&before).total().tasks_run >= 5);
    /// ```
    #[must_use]
    pub fn since(&self, earlier: &RuntimeMetrics) -> RuntimeMetrics {
        let minus = |now: &WorkerMetrics, then: &WorkerMetrics| WorkerMetrics {
            tasks_run: now.tasks_run.saturating_sub(then.tasks_run),
            steals: now.steals.saturating_sub(then.steals),
            failed_steals: now.failed_steals.saturating_sub(then.failed_steals),
            working: now.working.saturating_sub(then.working),
            searching: now.searching.saturating_sub(then.searching),
            parked: now.parked.saturating_sub(then.parked),
        };
        RuntimeMetrics {
            uptime: self.uptime.saturating_sub(earlier.uptime),
            workers: self
                .workers
                .iter()
                .zip(&earlier.workers)
                .map(|(now, then)| minus(now, then))
                .collect(),
        }
    }
}

/// Serializes a duration as seconds (a JSON number).
pub(crate) fn seconds<S: serde::Serializer>(
    duration: &Duration,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(duration.as_secs_f64())
}
