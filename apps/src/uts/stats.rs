//! The time breakdown of Table III of the HCMPI paper, and run reports.
//!
//! Every computation worker (a rank in `mpi-ws`, a computation worker in
//! `hcmpi`, a rayon thread in `hybrid`) is always in one of four
//! [`Phase`]s, as in the reference's `ss_setState`:
//!
//! * **work** — exploring nodes;
//! * **overhead** — moving work around for others: releasing chunks to the
//!   deque or to a thief, answering steal requests while busy, deque and
//!   stack management;
//! * **search** — looking for work: local steal attempts, global steal
//!   requests and waiting for their answers;
//! * **idle** — no work and none to look for: the termination phase (the
//!   reference's `PINK`/`RED` colors, after the token ring has detected
//!   that the search is over).
//!
//! [`PhaseTimer`] reads the clock only when the phase changes. Reports
//! average the seconds over all workers of all ranks and add up the steal
//! counts (`steals_ok`: chunks obtained by stealing, locally or from another
//! rank; `steals_failed`: steal requests to other ranks answered with "no
//! work" — the paper's *Fails*, the redundant two-sided communication).

use std::ops::AddAssign;
use std::time::{Duration, Instant};

use hc_runtime::{Backoff, BackoffPolicy, Snooze};

use crate::uts::seq::SearchStats;

/// What a worker is doing (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Exploring nodes.
    Work = 0,
    /// Moving work for others, deque and stack management.
    Overhead = 1,
    /// Looking for work.
    Search = 2,
    /// Waiting for the end of the search.
    Idle = 3,
}

/// Seconds spent in each phase.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Breakdown {
    /// Seconds exploring nodes.
    pub work: f64,
    /// Seconds of overhead.
    pub overhead: f64,
    /// Seconds looking for work.
    pub search: f64,
    /// Seconds idle.
    pub idle: f64,
}

impl Breakdown {
    /// As an array in [`Phase`] order.
    pub fn to_array(self) -> [f64; 4] {
        [self.work, self.overhead, self.search, self.idle]
    }

    /// From an array in [`Phase`] order.
    pub fn from_array(a: [f64; 4]) -> Self {
        Breakdown {
            work: a[0],
            overhead: a[1],
            search: a[2],
            idle: a[3],
        }
    }

    /// Every component divided by `n` (for averages; `n == 0` gives zeros).
    pub fn divided_by(self, n: f64) -> Self {
        if n <= 0.0 {
            return Breakdown::default();
        }
        Breakdown::from_array(self.to_array().map(|x| x / n))
    }

    /// Sum of the components.
    pub fn total(&self) -> f64 {
        self.work + self.overhead + self.search + self.idle
    }
}

impl AddAssign for Breakdown {
    fn add_assign(&mut self, rhs: Breakdown) {
        self.work += rhs.work;
        self.overhead += rhs.overhead;
        self.search += rhs.search;
        self.idle += rhs.idle;
    }
}

/// Accumulates the time a worker spends in each [`Phase`].
#[derive(Debug, Clone)]
pub struct PhaseTimer {
    current: Phase,
    since: Instant,
    seconds: [f64; 4],
}

impl PhaseTimer {
    /// Starts timing in `phase`.
    pub fn new(phase: Phase) -> Self {
        PhaseTimer {
            current: phase,
            since: Instant::now(),
            seconds: [0.0; 4],
        }
    }

    /// The current phase.
    #[inline(always)]
    pub fn phase(&self) -> Phase {
        self.current
    }

    /// Enters `phase` (reads the clock only if the phase changes).
    #[inline]
    pub fn switch(&mut self, phase: Phase) {
        if phase != self.current {
            let now = Instant::now();
            self.seconds[self.current as usize] += (now - self.since).as_secs_f64();
            self.since = now;
            self.current = phase;
        }
    }

    /// Stops timing and returns the totals.
    pub fn finish(mut self) -> Breakdown {
        let now = Instant::now();
        self.seconds[self.current as usize] += (now - self.since).as_secs_f64();
        Breakdown::from_array(self.seconds)
    }
}

/// Counters of one worker besides its times.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StealCounts {
    /// Chunks obtained by stealing (locally or from another rank).
    pub steals_ok: u64,
    /// Steal requests to other ranks answered with "no work".
    pub steals_failed: u64,
    /// Chunks released (to a deque, a shared queue or a thief).
    pub released: u64,
}

impl AddAssign for StealCounts {
    fn add_assign(&mut self, rhs: StealCounts) {
        self.steals_ok += rhs.steals_ok;
        self.steals_failed += rhs.steals_failed;
        self.released += rhs.released;
    }
}

/// Everything one worker reports at the end of a parallel search.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WorkerReport {
    /// Nodes, leaves and depth it explored.
    pub counts: SearchStats,
    /// Its time breakdown.
    pub times: Breakdown,
    /// Its steal counters.
    pub steals: StealCounts,
}

/// The outcome of a search, reduced over all ranks (valid on rank 0).
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    /// Nodes, leaves and depth of the whole tree.
    pub counts: SearchStats,
    /// Number of ranks.
    pub ranks: u32,
    /// Computation workers per rank.
    pub workers: u32,
    /// Whether this process is rank 0 (the one that prints).
    pub is_root: bool,
    /// Wall-clock seconds of the search on rank 0.
    pub seconds: f64,
    /// Time breakdown averaged over all workers of all ranks.
    pub times: Breakdown,
    /// Steal counters summed over all workers of all ranks.
    pub steals: StealCounts,
    /// What this rank's workers and engine did (hcmpi mode).
    pub metrics: Option<hc_mpi::Metrics>,
    /// Whether this rank's threads were bound to CPUs (`HCMPI_BIND`, see
    /// [`crate::binding`]); `None` for the sequential search.
    pub bound: Option<bool>,
}

impl RunReport {
    /// The report of a single-threaded search that took `seconds`.
    pub fn sequential(counts: SearchStats, seconds: f64) -> Self {
        RunReport {
            counts,
            ranks: 1,
            workers: 1,
            is_root: true,
            seconds,
            times: Breakdown {
                work: seconds,
                ..Breakdown::default()
            },
            steals: StealCounts::default(),
            metrics: None,
            bound: None,
        }
    }

    /// Nodes per second of wall-clock time (the time taken as at least
    /// 1 ns).
    pub fn nodes_per_sec(&self) -> f64 {
        self.counts.nodes as f64 / self.seconds.max(1e-9)
    }
}

/// Per-rank totals in the flat form the reductions use.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RankTotals {
    /// Sums: nodes, leaves, steals_ok, steals_failed, released.
    pub sums: [u64; 5],
    /// Maximum: depth.
    pub max_depth: u64,
    /// Sums of the four phase times over this rank's workers.
    pub times: [f64; 4],
}

impl RankTotals {
    /// Totals of this rank's workers.
    pub fn of(workers: &[WorkerReport]) -> Self {
        let mut t = RankTotals::default();
        let mut times = Breakdown::default();
        for w in workers {
            t.sums[0] += w.counts.nodes;
            t.sums[1] += w.counts.leaves;
            t.sums[2] += w.steals.steals_ok;
            t.sums[3] += w.steals.steals_failed;
            t.sums[4] += w.steals.released;
            t.max_depth = t.max_depth.max(w.counts.max_depth);
            times += w.times;
        }
        t.times = times.to_array();
        t
    }

    /// The run report from totals already reduced over all ranks.
    pub fn into_report(self, ranks: u32, workers: u32, is_root: bool, seconds: f64) -> RunReport {
        let all = f64::from(ranks) * f64::from(workers);
        RunReport {
            counts: SearchStats {
                nodes: self.sums[0],
                leaves: self.sums[1],
                max_depth: self.max_depth,
            },
            ranks,
            workers,
            is_root,
            seconds,
            times: Breakdown::from_array(self.times).divided_by(all),
            steals: StealCounts {
                steals_ok: self.sums[2],
                steals_failed: self.sums[3],
                released: self.sums[4],
            },
            metrics: None,
            bound: None,
        }
    }
}

/// The longest park of a polling loop of `mpi_ws` and `hybrid`: a message
/// is noticed only by polling, so a parked poller adds at most this much
/// latency to an answer or a token.
pub const POLL_MAX_PARK: Duration = Duration::from_micros(100);

/// The back-off of a loop that polls MPI for messages (`mpi_ws`, the MPI
/// thread of `hybrid`): hc-runtime's [`BackoffPolicy::WAIT`] — spin, yield,
/// then park — parking at most [`POLL_MAX_PARK`] at a time.
pub fn polling_backoff() -> Backoff {
    Backoff::new(BackoffPolicy::WAIT.with_max_park(POLL_MAX_PARK))
}

/// One fruitless poll: spins or yields, or sleeps for the park timeout the
/// back-off asks for (nothing wakes a poller; the timeout is bounded, so
/// the sleep only delays noticing a message, it never orders anything).
pub fn snooze(backoff: &mut Backoff) {
    if let Snooze::Park(timeout) = backoff.snooze() {
        std::thread::sleep(timeout);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_accumulates_per_phase() {
        let mut t = PhaseTimer::new(Phase::Work);
        t.switch(Phase::Overhead);
        t.switch(Phase::Overhead);
        assert_eq!(t.phase(), Phase::Overhead);
        t.switch(Phase::Idle);
        let b = t.finish();
        assert!(b.work >= 0.0 && b.overhead >= 0.0 && b.idle >= 0.0);
        assert_eq!(b.search, 0.0);
    }

    #[test]
    fn totals_average_over_all_workers() {
        let w = WorkerReport {
            counts: SearchStats {
                nodes: 10,
                leaves: 6,
                max_depth: 3,
            },
            times: Breakdown {
                work: 2.0,
                overhead: 0.5,
                search: 1.0,
                idle: 0.0,
            },
            steals: StealCounts {
                steals_ok: 1,
                steals_failed: 2,
                released: 3,
            },
        };
        let t = RankTotals::of(&[w, w]);
        let r = t.into_report(1, 2, true, 3.0);
        assert_eq!(r.counts.nodes, 20);
        assert_eq!(r.counts.max_depth, 3);
        assert_eq!(r.times.work, 2.0);
        assert_eq!(r.steals.steals_failed, 4);
    }
}
