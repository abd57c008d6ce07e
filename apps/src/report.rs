//! The one-line JSON reports of `uts --json` and `smith-waterman --json`.
//!
//! Each is a `#[derive(Serialize, Deserialize)]` struct written and read
//! with `serde_json`. The fields are written in declaration order, which is
//! part of the format: `apps/scripts/uts-compare.sh`, `sw-compare.sh` and
//! `scripts/main` pick fields out of the line with `sed`. Times and rates
//! are [`rounded`] to the resolution the reports have always had
//! (microseconds, a tenth of a node per second, 10⁻⁴ GCUPS); serde_json
//! writes them in their shortest form (`0.5`, `1e-6`, `2.0`).

use serde::{Deserialize, Serialize};

use crate::sw::alignment::Alignment;
use crate::sw::Best;
use crate::uts::stats::RunReport;

/// `x` rounded to `decimals` decimal places (as a float: serde_json then
/// writes the shortest decimal that reads back as it, e.g. `0.123457`).
pub fn rounded(x: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round() / scale
}

/// `uts --json`: the counts, the wall-clock time and rate of rank 0, and
/// the Table III breakdown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UtsReport {
    /// The sample tree's name, or the flags of a custom tree.
    pub tree: String,
    /// The search mode (`seq`, `hcmpi`, `mpi-ws`, `hybrid`).
    pub mode: String,
    /// Number of ranks.
    pub ranks: u32,
    /// Computation workers per rank.
    pub workers: u32,
    /// Whether rank 0's threads were bound to CPUs (`HCMPI_BIND`, see
    /// [`crate::binding`]); absent in seq mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<bool>,
    /// Nodes of the tree, the root included.
    pub nodes: u64,
    /// Leaves of the tree.
    pub leaves: u64,
    /// Greatest node height.
    pub max_depth: u64,
    /// Wall-clock seconds of the search (to the microsecond).
    pub seconds: f64,
    /// Nodes per second (to a tenth).
    pub nodes_per_sec: f64,
    /// Time breakdown and steal counts.
    pub stats: UtsStats,
    /// Rank 0's runtime and engine metrics (`--stats`, hcmpi mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<serde_json::Value>,
}

/// The `stats` object of [`UtsReport`]: seconds per worker in each phase
/// (to the microsecond), averaged over all workers, and the steal counts
/// summed over them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UtsStats {
    /// Seconds exploring nodes.
    pub work: f64,
    /// Seconds of overhead.
    pub overhead: f64,
    /// Seconds looking for work.
    pub search: f64,
    /// Seconds idle.
    pub idle: f64,
    /// Chunks obtained by stealing.
    pub steals_ok: u64,
    /// Steal requests answered with "no work".
    pub steals_failed: u64,
}

impl UtsReport {
    /// The report of a search of `tree` in `mode`.
    pub fn new(tree: String, mode: &str, report: &RunReport) -> UtsReport {
        let t = report.times;
        UtsReport {
            tree,
            mode: mode.to_owned(),
            ranks: report.ranks,
            workers: report.workers,
            bound: report.bound,
            nodes: report.counts.nodes,
            leaves: report.counts.leaves,
            max_depth: report.counts.max_depth,
            seconds: rounded(report.seconds, 6),
            nodes_per_sec: rounded(report.nodes_per_sec(), 1),
            stats: UtsStats {
                work: rounded(t.work, 6),
                overhead: rounded(t.overhead, 6),
                search: rounded(t.search, 6),
                idle: rounded(t.idle, 6),
                steals_ok: report.steals.steals_ok,
                steals_failed: report.steals.steals_failed,
            },
            metrics: None,
        }
    }

    /// The report as one line of JSON.
    pub fn json_line(&self) -> String {
        // Strings and numbers only: serde_json fails on non-string map keys
        // and on failing `Serialize` impls, neither of which a report has.
        serde_json::to_string(self).expect("a report of strings and numbers serializes")
    }

    /// Reads a line written by [`UtsReport::json_line`].
    ///
    /// # Errors
    /// The line is not a JSON object with these fields.
    pub fn from_json_line(line: &str) -> serde_json::Result<UtsReport> {
        serde_json::from_str(line)
    }
}

/// `smith-waterman --json`: the best score and its end cell, the problem
/// size, and the time and rate of rank 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwReport {
    /// Best local-alignment score.
    pub score: i32,
    /// 0-based row (index into A) of the end cell.
    pub end_a: usize,
    /// 0-based column (index into B) of the end cell.
    pub end_b: usize,
    /// Length of A.
    pub len_a: usize,
    /// Length of B.
    pub len_b: usize,
    /// Matrix cells, `len_a * len_b`.
    pub cells: u64,
    /// Wall-clock seconds (to the microsecond).
    pub seconds: f64,
    /// Billions of cell updates per second (to 10⁻⁴).
    pub gcups: f64,
    /// The mode (`seq`, `hcmpi`, `hybrid`).
    pub mode: String,
    /// Number of ranks.
    pub ranks: usize,
    /// Threads per rank.
    pub workers: usize,
    /// Whether rank 0's threads were bound to CPUs (`HCMPI_BIND`, see
    /// [`crate::binding`]); absent in seq mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<bool>,
    /// Rank 0's runtime and engine metrics (`--stats`, hcmpi mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<serde_json::Value>,
    /// `--align`: the alignment's first row (0-based index into A).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_a: Option<usize>,
    /// `--align`: its first column (0-based index into B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_b: Option<usize>,
    /// `--align`: its CIGAR string (`=`, `X`, `I` consumes B, `D`
    /// consumes A; empty when the score is 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cigar: Option<String>,
    /// `--align`: identical pairs over columns, in `[0, 1]` (to 10⁻⁴).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<f64>,
    /// `--align`: seconds of the traceback, included in `seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_seconds: Option<f64>,
}

impl SwReport {
    /// The report of an alignment of A (`len_a`) and B (`len_b`) that found
    /// `best` in `seconds`.
    pub fn new(
        best: Best,
        (len_a, len_b): (usize, usize),
        seconds: f64,
        mode: &str,
        (ranks, workers): (usize, usize),
    ) -> SwReport {
        let cells = len_a as u64 * len_b as u64;
        SwReport {
            score: best.score,
            end_a: best.row,
            end_b: best.col,
            len_a,
            len_b,
            cells,
            seconds: rounded(seconds, 6),
            gcups: rounded(gcups(cells, seconds), 4),
            mode: mode.to_owned(),
            ranks,
            workers,
            bound: None,
            metrics: None,
            start_a: None,
            start_b: None,
            cigar: None,
            identity: None,
            trace_seconds: None,
        }
    }

    /// Adds `--align`'s fields: `alignment`, traced in `trace_seconds`.
    pub fn with_alignment(mut self, alignment: &Alignment, trace_seconds: f64) -> SwReport {
        self.start_a = Some(alignment.a.start);
        self.start_b = Some(alignment.b.start);
        self.cigar = Some(alignment.cigar());
        self.identity = Some(rounded(alignment.identity(), 4));
        self.trace_seconds = Some(rounded(trace_seconds, 6));
        self
    }

    /// The report as one line of JSON.
    pub fn json_line(&self) -> String {
        // Strings and numbers only: serde_json fails on non-string map keys
        // and on failing `Serialize` impls, neither of which a report has.
        serde_json::to_string(self).expect("a report of strings and numbers serializes")
    }

    /// Reads a line written by [`SwReport::json_line`].
    ///
    /// # Errors
    /// The line is not a JSON object with these fields.
    pub fn from_json_line(line: &str) -> serde_json::Result<SwReport> {
        serde_json::from_str(line)
    }
}

/// Billions of cell updates per second (`seconds` taken as at least 1 ns).
pub fn gcups(cells: u64, seconds: f64) -> f64 {
    cells as f64 / seconds.max(1e-9) / 1e9
}

/// `--stats`: a rank's metrics as JSON (durations in seconds).
pub fn metrics_json(metrics: &hc_mpi::Metrics) -> serde_json::Value {
    serde_json::to_value(metrics).expect("metrics are numbers and strings")
}

/// `--stats`: a rank's metrics as the tables people read.
///
/// ```
/// let text = apps::report::metrics_table(0, &Default::default());
/// assert!(text.contains("worker"));
/// ```
pub fn metrics_table(rank: i32, metrics: &hc_mpi::Metrics) -> String {
    use std::fmt::Write as _;
    let (runtime, engine) = (&metrics.runtime, &metrics.engine);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Rank {rank} runtime ({} workers, up {:.3} s):",
        runtime.workers.len(),
        runtime.uptime.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "  {:>6} {:>10} {:>8} {:>12} {:>10} {:>10} {:>10}",
        "worker", "tasks", "steals", "failed", "working s", "search s", "parked s"
    );
    let total = runtime.total();
    let rows = runtime
        .workers
        .iter()
        .enumerate()
        .map(|(i, w)| (i.to_string(), w));
    for (name, w) in rows.chain(std::iter::once(("all".to_owned(), &total))) {
        let _ = writeln!(
            out,
            "  {:>6} {:>10} {:>8} {:>12} {:>10.3} {:>10.3} {:>10.3}",
            name,
            w.tasks_run,
            w.steals,
            w.failed_steals,
            w.working.as_secs_f64(),
            w.searching.as_secs_f64(),
            w.parked.as_secs_f64()
        );
    }
    let _ = writeln!(
        out,
        "Rank {rank} communication engine (at most {} operations in flight):",
        engine.in_flight_max
    );
    let _ = writeln!(
        out,
        "  {:>12} {:>10} {:>10} {:>12} {:>14}",
        "operation", "posted", "completed", "bytes", "mean latency"
    );
    for op in &engine.operations {
        let _ = writeln!(
            out,
            "  {:>12} {:>10} {:>10} {:>12} {:>11.1} us",
            op.kind,
            op.posted,
            op.completed,
            op.bytes,
            op.mean_latency.as_secs_f64() * 1e6
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uts::stats::{Breakdown, StealCounts};
    use crate::uts::SearchStats;

    #[test]
    fn rounding_keeps_the_old_resolution() {
        assert_eq!(rounded(0.1234567, 6), 0.123457);
        assert_eq!(rounded(25382716.66, 1), 25382716.7);
        assert_eq!(rounded(3.39754, 4), 3.3975);
        assert_eq!(rounded(4e-7, 6), 0.0);
    }

    fn uts_report() -> UtsReport {
        let run = RunReport {
            counts: SearchStats {
                nodes: 4130071,
                leaves: 3305118,
                max_depth: 10,
            },
            ranks: 2,
            workers: 1,
            is_root: true,
            seconds: 0.1627124,
            times: Breakdown {
                work: 0.16,
                overhead: 0.000001,
                search: 0.0021,
                idle: 0.0,
            },
            steals: StealCounts {
                steals_ok: 10,
                steals_failed: 9,
                released: 30,
            },
            metrics: None,
            bound: Some(true),
        };
        UtsReport::new("-t 1 \"x\"".into(), "hcmpi", &run)
    }

    #[test]
    fn uts_report_line() {
        let report = uts_report();
        let line = report.json_line();
        assert_eq!(
            line,
            r#"{"tree":"-t 1 \"x\"","mode":"hcmpi","ranks":2,"workers":1,"bound":true,"nodes":4130071,"leaves":3305118,"max_depth":10,"seconds":0.162712,"nodes_per_sec":25382644.5,"stats":{"work":0.16,"overhead":1e-6,"search":0.0021,"idle":0.0,"steals_ok":10,"steals_failed":9}}"#
        );
        assert_eq!(UtsReport::from_json_line(&line).unwrap(), report);
        assert!(UtsReport::from_json_line(&line[1..]).is_err());
    }

    #[test]
    fn sw_report_line() {
        let best = Best {
            score: 11,
            row: 10,
            col: 7,
        };
        let report = SwReport::new(best, (11, 8), 0.5, "seq", (1, 1));
        let line = report.json_line();
        assert_eq!(
            line,
            r#"{"score":11,"end_a":10,"end_b":7,"len_a":11,"len_b":8,"cells":88,"seconds":0.5,"gcups":0.0,"mode":"seq","ranks":1,"workers":1}"#
        );
        assert_eq!(SwReport::from_json_line(&line).unwrap(), report);
        assert!(SwReport::from_json_line(r#"{"score":11}"#).is_err());
    }
}
