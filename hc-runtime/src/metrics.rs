//! Counters of what the workers did: [`Runtime::metrics`](crate::Runtime::metrics).
//!
//! Each worker writes only its own counters (a load and a store, no
//! read-modify-write: it is their one writer), on a cache line of their
//! own; a snapshot reads them from any thread. Tasks are counted in the
//! worker's own plain cell and published every 256 tasks and whenever the
//! worker runs out of work, so a snapshot may miss up to 255 tasks per
//! worker that is busy at that moment. Time is split by state:
//! *searching* runs from the moment a worker finds no task until it finds
//! one or parks (stealing, polling the communication engine when it has
//! the poll duty, backing off), *parked* is time asleep, and *working* is
//! the rest of the worker's life — running tasks, including the runtime's
//! own bookkeeping between them. The clock is read only on those
//! transitions, never per task, and it is the cheapest one there is: the
//! CPU's time-stamp counter on x86-64 (a few nanoseconds, against tens for
//! `Instant::now`), converted to time at snapshot by the ratio of the
//! monotonic clock to the counter over the pool's life.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A reading of the cheap clock (see the module docs), in ticks.
#[inline]
pub(crate) fn ticks() -> u64 {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        // SAFETY: `rdtsc` exists on every x86-64 CPU and has no
        // preconditions; it only reads the time-stamp counter.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    {
        static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// The pool's start on both clocks, to convert ticks to time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Epoch {
    instant: Instant,
    ticks: u64,
}

impl Epoch {
    pub(crate) fn now() -> Epoch {
        Epoch {
            instant: Instant::now(),
            ticks: ticks(),
        }
    }

    /// The time since the epoch, and nanoseconds per tick over it.
    fn scale(&self) -> (Duration, f64) {
        let uptime = self.instant.elapsed();
        let elapsed_ticks = ticks().saturating_sub(self.ticks).max(1);
        (uptime, uptime.as_nanos() as f64 / elapsed_ticks as f64)
    }
}

use serde::Serialize;

/// One worker's counters (written by that worker only).
#[derive(Debug, Default)]
pub(crate) struct WorkerCounters {
    tasks_run: AtomicU64,
    steals: AtomicU64,
    failed_steals: AtomicU64,
    searching_ticks: AtomicU64,
    parked_ticks: AtomicU64,
}

/// Adds `n` to a counter with one writer.
#[inline]
fn bump(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
}

impl WorkerCounters {
    /// The worker has run `total` tasks so far (it counts them in a
    /// plain cell and publishes the total now and then: see `registry`).
    pub(crate) fn publish_tasks_run(&self, total: u64) {
        self.tasks_run.store(total, Ordering::Relaxed);
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

    /// A search took `elapsed` ticks.
    pub(crate) fn searched(&self, elapsed: u64) {
        bump(&self.searching_ticks, elapsed);
    }

    /// A park took `elapsed` ticks.
    pub(crate) fn parked(&self, elapsed: u64) {
        bump(&self.parked_ticks, elapsed);
    }

    fn snapshot(&self, alive: Duration, ns_per_tick: f64) -> WorkerMetrics {
        let time = |counter: &AtomicU64| {
            Duration::from_nanos((counter.load(Ordering::Relaxed) as f64 * ns_per_tick) as u64)
        };
        let searching = time(&self.searching_ticks);
        let parked = time(&self.parked_ticks);
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
    /// Tasks (and other jobs: joins, futures' polls) it ran; a worker busy
    /// at the snapshot may have run up to 255 more.
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
    /// A snapshot of the counters of a pool started at `epoch`.
    pub(crate) fn of<'c>(
        epoch: &Epoch,
        counters: impl Iterator<Item = &'c WorkerCounters>,
    ) -> RuntimeMetrics {
        let (uptime, ns_per_tick) = epoch.scale();
        RuntimeMetrics {
            uptime,
            workers: counters
                .map(|worker| worker.snapshot(uptime, ns_per_tick))
                .collect(),
        }
    }

    /// Every worker's counters added up.
    ///
    /// ```
    /// let rt = hc_runtime::Runtime::builder().num_workers(1).build().unwrap();
    /// rt.finish(|s| for _ in 0..100 { s.spawn(|_| {}) });
    /// // The 100 tasks, plus the finish body handed to the worker.
    /// assert_eq!(rt.metrics().total().tasks_run, 101);
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
    /// assert_eq!(rt.metrics().since(&before).total().tasks_run, 6);
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
