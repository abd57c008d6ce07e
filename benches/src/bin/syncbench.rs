//! `syncbench`: the EPCC-style synchronization benchmark of the HCMPI paper
//! (§IV-A, Table II): barrier and reduction cost per operation.
//!
//! Variants, for R ranks × T tasks (T = 2, 4 by default, R = 1, 2):
//!
//! * `hcmpi-strict`, `hcmpi-fuzzy`: an hcmpi-phaser (tree of `ceil(T/2)`
//!   leaves, fan-in 2) with T phased tasks per rank on T workers, each
//!   looping `next().await`;
//!   `-flat` variants use the one-counter phaser. Reduction: an hcmpi-accum
//!   (f64 SUM; accumulators are strict) with `accum_next` + `accum_get`.
//! * `hybrid`: MPI_THREAD_MULTIPLE, a rayon pool of T threads; a thread
//!   barrier, `MPI_Barrier` by one thread, a thread barrier (`hybrid-fuzzy`:
//!   without the first one). Reduction: the thread values summed by one
//!   thread, `MPI_Allreduce` by it, a thread barrier.
//! * `mpi-everywhere`: one rank per task (R × T ranks, MPI_THREAD_SINGLE),
//!   `MPI_Barrier` / `MPI_Allreduce` in a loop. Its rows say
//!   `ranks: R*T, tasks: 1`.
//!
//! EPCC method: a loop of N synchronizations, minus the same loop without
//! them, divided by N; µs per operation; median of the repetitions after
//! one warm-up.
//!
//! Run plainly, the binary is the driver: it re-executes itself under
//! `mpiexec` once per (runtime, R, T) and prints one markdown table, or with
//! `--json` one row per line:
//! `{"bench":"barrier"|"reduction","variant":..,"ranks":R,"tasks":T,"value":V,"unit":"us"}`.

#[path = "../syncbench_child.rs"]
mod child;

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use apps::progress::Progress;
use benches::cli::positive;
use benches::error::{DriverError, JobError};
use benches::report::{format_value, markdown_table, null_as_nan};
use clap::{Parser, ValueEnum};
use hc_mpi::ErrorChain;
use hcmpi_testkit::{Launcher, RunOutput};
use serde::{Deserialize, Serialize};

/// A benchmark; in JSON its [`Bench::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bench {
    /// Barrier, µs per barrier.
    Barrier,
    /// Global sum, µs per reduction.
    Reduction,
}

impl Bench {
    fn name(self) -> &'static str {
        match self {
            Bench::Barrier => "barrier",
            Bench::Reduction => "reduction",
        }
    }
}

/// Which runtime a child job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// hc-mpi with phasers (every hcmpi variant).
    Hcmpi,
    /// MPI + rayon.
    Hybrid,
    /// One rank per task.
    MpiEverywhere,
}

/// One result row; in JSON a [`RowLine`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "RowLine", from = "RowLine")]
pub struct Row {
    pub bench: Bench,
    pub variant: String,
    pub ranks: usize,
    pub tasks: usize,
    pub value: f64,
}

impl Row {
    fn new(bench: Bench, variant: &str, ranks: usize, tasks: usize, value: f64) -> Row {
        Row {
            bench,
            variant: variant.to_owned(),
            ranks,
            tasks,
            value,
        }
    }

    /// `{"bench","variant","ranks","tasks","value","unit"}`; a non-finite
    /// value is written as `null`.
    pub fn to_json(&self) -> String {
        // Strings and numbers only: serde_json fails on non-string map keys
        // and on failing `Serialize` impls, neither of which a row has.
        serde_json::to_string(self).expect("a row of strings and numbers serializes")
    }

    /// Reads a line written by [`Row::to_json`]; `None` for any other line.
    fn parse(line: &str) -> Option<Row> {
        serde_json::from_str(line).ok()
    }
}

/// A [`Row`] as written, fields in output order.
#[derive(Debug, Serialize, Deserialize)]
struct RowLine {
    bench: Bench,
    variant: String,
    ranks: usize,
    tasks: usize,
    /// `null` when not finite, read back as NaN.
    #[serde(deserialize_with = "null_as_nan")]
    value: f64,
    /// Always `us`.
    unit: String,
}

impl From<Row> for RowLine {
    fn from(row: Row) -> RowLine {
        RowLine {
            bench: row.bench,
            variant: row.variant,
            ranks: row.ranks,
            tasks: row.tasks,
            value: row.value,
            unit: "us".into(),
        }
    }
}

impl From<RowLine> for Row {
    fn from(line: RowLine) -> Row {
        Row {
            bench: line.bench,
            variant: line.variant,
            ranks: line.ranks,
            tasks: line.tasks,
            value: line.value,
        }
    }
}

/// Barrier and reduction cost of hcmpi phasers/accumulators against
/// MPI-everywhere and MPI+rayon (EPCC method, §IV-A of the HCMPI paper).
#[derive(Debug, Parser)]
#[command(name = "syncbench")]
struct Cli {
    /// Tasks (threads) per rank.
    #[arg(long, value_delimiter = ',', default_value = "2,4", value_parser = positive)]
    tasks: Vec<usize>,
    /// Rank counts of the hcmpi and hybrid runs.
    #[arg(long, value_delimiter = ',', default_value = "1,2", value_parser = positive)]
    ranks: Vec<usize>,
    /// Synchronizations per timed loop.
    #[arg(long, default_value_t = 1000, value_parser = positive)]
    iters: usize,
    /// Timed repetitions (median reported), after one warm-up.
    #[arg(long, default_value_t = 5, value_parser = positive)]
    reps: usize,
    /// Tiny loops (a smoke test): 20 iterations, 1 repetition.
    #[arg(long)]
    quick: bool,
    /// One JSON row per line instead of the markdown table.
    #[arg(long)]
    json: bool,
    /// Time limit of each mpiexec run, in seconds.
    #[arg(long, default_value_t = 300, value_parser = positive)]
    timeout: usize,
    /// Run one job inside mpiexec (used by the driver).
    #[arg(long, hide = true, value_enum)]
    child: Option<Kind>,
}

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    if cli.quick {
        cli.iters = 20;
        cli.reps = 1;
    }
    cli.tasks.sort_unstable();
    cli.tasks.dedup();
    cli.ranks.sort_unstable();
    cli.ranks.dedup();
    let plan = child::Plan {
        iters: cli.iters,
        reps: cli.reps,
    };
    if let Some(kind) = cli.child {
        let [tasks] = cli.tasks.as_slice() else {
            eprintln!("syncbench --child needs one --tasks");
            return ExitCode::from(2);
        };
        return match child::run(kind, *tasks, plan) {
            Ok(()) => ExitCode::SUCCESS,
            // A child is one rank of an MPI job: its peers would wait for it.
            Err(error) => hc_mpi::abort_job(1, &format!("syncbench child: {}", ErrorChain(&error))),
        };
    }
    match drive(&cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("syncbench: {}", ErrorChain(&error));
            ExitCode::FAILURE
        }
    }
}

/// One mpiexec job.
#[derive(Debug, Clone, Copy)]
struct Job {
    kind: Kind,
    ranks: usize,
    tasks: usize,
}

fn plan(cli: &Cli) -> Vec<Job> {
    let mut jobs = Vec::new();
    for &tasks in &cli.tasks {
        for &ranks in &cli.ranks {
            for kind in [Kind::Hcmpi, Kind::Hybrid] {
                jobs.push(Job { kind, ranks, tasks });
            }
            let everywhere = Job {
                kind: Kind::MpiEverywhere,
                ranks: ranks * tasks,
                tasks: 1,
            };
            // 2 ranks × 2 tasks and 1 rank × 4 tasks share one such job.
            if !jobs
                .iter()
                .any(|j: &Job| j.kind == Kind::MpiEverywhere && j.ranks == everywhere.ranks)
            {
                jobs.push(everywhere);
            }
        }
    }
    jobs
}

fn drive(cli: &Cli) -> Result<bool, DriverError> {
    let launcher = Launcher::detect().map_err(DriverError::Launcher)?;
    let exe = std::env::current_exe().map_err(DriverError::OwnExecutable)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut rows = Vec::new();
    let mut ok = true;
    let jobs = plan(cli);
    let progress = Progress::new("syncbench", Some(jobs.len() as u64), "runs");
    for job in jobs {
        let iters = job_iters(cli, job, cores);
        let t0 = Instant::now();
        let label = format!("{:?} ranks={} tasks={}", job.kind, job.ranks, job.tasks);
        progress.set_message(label.clone());
        let mut args = vec![
            "--child".to_owned(),
            match job.kind {
                Kind::Hcmpi => "hcmpi",
                Kind::Hybrid => "hybrid",
                Kind::MpiEverywhere => "mpi-everywhere",
            }
            .to_owned(),
            format!("--tasks={}", job.tasks),
            format!("--iters={iters}"),
            format!("--reps={}", cli.reps),
        ];
        if cli.quick {
            args.push("--quick".into());
        }
        let mut cmd = launcher.command(job.ranks, &exe, &args);
        cmd.env("HC_WORKERS", job.tasks.to_string());
        let result = launcher
            .run_command(
                cmd,
                job.ranks,
                &exe,
                Duration::from_secs(cli.timeout as u64),
            )
            .and_then(RunOutput::success_or_err)
            .map_err(JobError::from);
        match result {
            Ok(output) => {
                let found: Vec<Row> = output.stdout.lines().filter_map(Row::parse).collect();
                if found.is_empty() {
                    ok = false;
                    progress.println(format!(
                        "syncbench: {label}: no result rows\n{}",
                        output.stderr
                    ));
                }
                progress.println(format!(
                    "syncbench: {label} {:6.1} s",
                    t0.elapsed().as_secs_f64()
                ));
                rows.extend(found);
            }
            Err(error) => {
                ok = false;
                progress.println(format!("syncbench: {label} FAILED: {}", ErrorChain(&error)));
            }
        }
        progress.inc(1);
    }
    progress.finish();
    apps::output::to_stdout(|out| {
        if !cli.json {
            return write!(out, "{}", report(cli, &rows));
        }
        rows.iter()
            .try_for_each(|row| writeln!(out, "{}", row.to_json()))
    })?;
    Ok(ok)
}

/// Iterations of one job: the full count, or a tenth (at least 20) for
/// MPI-everywhere runs with more ranks than cores, where every operation
/// costs milliseconds of busy-polling ranks taking turns on the cores (the
/// EPCC method fixes a target time rather than a count).
fn job_iters(cli: &Cli, job: Job, cores: usize) -> usize {
    if job.kind == Kind::MpiEverywhere && job.ranks > cores {
        (cli.iters / 10).max(20).min(cli.iters)
    } else {
        cli.iters
    }
}

fn report(cli: &Cli, rows: &[Row]) -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let find = |bench: Bench, variant: &str, ranks: usize, tasks: usize| {
        rows.iter()
            .find(|r| {
                r.bench == bench && r.variant == variant && r.ranks == ranks && r.tasks == tasks
            })
            .map(|r| r.value)
    };
    let cell = |v: Option<f64>| v.map_or_else(|| "–".into(), format_value);
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "–".into(),
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# syncbench: barrier and reduction cost (EPCC method, §IV-A / Table II)\n\n\
         µs per operation, median of {} repetition(s) of {} operations after one warm-up, on \
         this node ({cores} cores; every configuration is oversubscribed when ranks × (T + 1) > \
         {cores}). hcmpi tree: ceil(T/2) leaves of fan-in 2. mpi-everywhere runs R×T ranks of \
         one task (with more ranks than cores: {} operations per loop). Ratios compare \
         hcmpi-strict (tree) with the others at equal total tasks (goal ≤ 0.8). {}={}.\n",
        cli.reps,
        cli.iters,
        (cli.iters / 10).max(20).min(cli.iters),
        hc_mpi::MAX_POLL_ENV,
        std::env::var(hc_mpi::MAX_POLL_ENV).unwrap_or_else(|_| "unset".into())
    );
    let mut table = Vec::new();
    for bench in [Bench::Barrier, Bench::Reduction] {
        for &tasks in &cli.tasks {
            for &ranks in &cli.ranks {
                let v = |variant: &str| find(bench, variant, ranks, tasks);
                let everywhere = find(bench, "mpi-everywhere", ranks * tasks, 1);
                let strict = v("hcmpi-strict");
                let (fuzzy, fuzzy_flat, hybrid_fuzzy) = if bench == Bench::Barrier {
                    (
                        cell(v("hcmpi-fuzzy")),
                        cell(v("hcmpi-fuzzy-flat")),
                        cell(v("hybrid-fuzzy")),
                    )
                } else {
                    ("".into(), "".into(), "".into())
                };
                table.push(vec![
                    bench.name().to_owned(),
                    format!("{ranks}×{tasks}"),
                    cell(strict),
                    fuzzy,
                    cell(v("hcmpi-strict-flat")),
                    fuzzy_flat,
                    cell(v("hybrid")),
                    hybrid_fuzzy,
                    cell(everywhere),
                    ratio(strict, everywhere),
                    ratio(strict, v("hybrid")),
                ]);
            }
        }
    }
    out.push_str(&markdown_table(
        &[
            "bench",
            "R×T",
            "hcmpi-strict",
            "hcmpi-fuzzy",
            "strict-flat",
            "fuzzy-flat",
            "hybrid",
            "hybrid-fuzzy",
            "mpi-everywhere",
            "strict/mpi",
            "strict/hybrid",
        ],
        &table,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_names_are_the_bench_names() {
        for bench in [Bench::Barrier, Bench::Reduction] {
            let json = serde_json::to_string(&bench).unwrap();
            assert_eq!(json, format!("\"{}\"", bench.name()));
        }
    }

    #[test]
    fn rows_round_trip() {
        let row = Row::new(Bench::Reduction, "hcmpi-strict", 2, 4, 1.25);
        let line = row.to_json();
        assert_eq!(
            line,
            r#"{"bench":"reduction","variant":"hcmpi-strict","ranks":2,"tasks":4,"value":1.25,"unit":"us"}"#
        );
        assert_eq!(Row::parse(&line), Some(row));
        let nan = Row::new(Bench::Barrier, "hybrid", 1, 2, f64::NAN).to_json();
        assert!(nan.contains(r#""value":null,"#), "{nan}");
        assert!(Row::parse(&nan).is_some_and(|r| r.value.is_nan()));
        assert_eq!(Row::parse("syncbench: not a row"), None);
        assert_eq!(Row::parse(&line.replace("reduction", "gather")), None);
    }
}
