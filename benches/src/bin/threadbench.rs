//! `threadbench`: the thread micro-benchmarks of the HCMPI paper (§IV-A),
//! after Thakur & Gropp, "Test suite for evaluating performance of
//! multithreaded MPI communication" (Parallel Computing 35(12), 2009).
//!
//! With T threads on each of 2 ranks, thread `t` of rank 0 talks only to
//! thread `t` of rank 1 (tags by thread id):
//!
//! * `bandwidth`: 8 MiB messages, windows of 4 non-blocking sends (receives
//!   on rank 1), each window acknowledged by rank 1; aggregate MB/s (10^6 B/s).
//! * `msgrate`: the same with 0-byte messages in windows of 64; aggregate
//!   messages/s.
//! * `latency`: blocking ping-pong at 0, 8, 64, 256 and 1024 B, 1000 round
//!   trips per thread; µs per one-way message (half a round trip), the mean
//!   over threads.
//! * `get`: request/reply of 8 bytes, rank 1 asking and rank 0 answering,
//!   1000 round trips per thread; µs per round trip, the mean over threads.
//!   The hcmpi variants fetch DDDFs (a fresh guid homed on rank 0, already
//!   put there, per round trip: `handle(guid).wait()`); the MPI variants
//!   send an 8-byte request and receive an 8-byte reply.
//! * `idle` (hcmpi only): CPU used by an idle hcmpi process after one
//!   barrier, `RUSAGE_SELF` over a 1 s window, % of one core (the larger of
//!   the two ranks).
//!
//! Variants:
//!
//! * `hcmpi`, `hcmpi-dedicated`, `hcmpi-shared`: an `Hcmpi` with T
//!   computation workers and its engine in `auto` placement (the default:
//!   the JSON rows and the table say what it resolved to), forced
//!   dedicated, or forced shared; T tasks in one finish, each doing the
//!   pattern through `Comm::send`/`recv` (windows: `isend`/`irecv`, then a
//!   wait on every request). Every MPI call goes through the engine.
//! * `mpi-multiple`: raw rsmpi initialized with `MPI_THREAD_MULTIPLE`, T
//!   `std::thread`s each making blocking calls (windows: immediate calls in
//!   an rsmpi scope, then a wait on each).
//! * `mpi-single`: raw rsmpi with `MPI_THREAD_SINGLE` and one thread, the
//!   single-threaded limit. It only exists at T = 1: it runs once, its JSON
//!   rows say `threads: 1`, and the markdown table repeats it in every T row
//!   of its benchmark as the reference (marked `¹` where T > 1).
//!
//! Run plainly, the binary is the driver: it re-executes itself under
//! `mpiexec -n 2` once per (benchmark, variant, T) with hidden `--child`
//! arguments, collects the JSON rows rank 0 prints, and prints one markdown
//! table, or with `--json` one row per line:
//! `{"bench":..,"variant":..,"threads":T,"bytes":B,"value":V,"unit":U}`.
//! With `--rounds R` the whole plan runs R times, configurations interleaved,
//! and every value is the median over the rounds.
//! Each child first runs one warm-up repetition (excluded), then `--reps`
//! timed ones, and reports their median; barriers align the ranks before
//! every repetition, and a start gate makes the T threads (tasks) of a rank
//! begin together.

#[path = "../threadbench_child.rs"]
mod child;

use std::fmt::Write as _;
use std::path::Path;
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bench {
    /// 8 MiB messages, aggregate MB/s.
    Bandwidth,
    /// 0-byte messages in windows of 64, aggregate messages/s.
    Msgrate,
    /// Ping-pong, µs per one-way message.
    Latency,
    /// Request/reply of 8 bytes (DDDF get for hcmpi), µs per round trip.
    Get,
    /// CPU of an idle hcmpi process, % of one core.
    Idle,
}

impl Bench {
    const ALL: [Bench; 5] = [
        Bench::Bandwidth,
        Bench::Msgrate,
        Bench::Latency,
        Bench::Get,
        Bench::Idle,
    ];

    fn name(self) -> &'static str {
        match self {
            Bench::Bandwidth => "bandwidth",
            Bench::Msgrate => "msgrate",
            Bench::Latency => "latency",
            Bench::Get => "get",
            Bench::Idle => "idle",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Bench::Bandwidth => "MB/s",
            Bench::Msgrate => "msg/s",
            Bench::Latency | Bench::Get => "us",
            Bench::Idle => "% core",
        }
    }
}

/// A way of driving MPI from T threads; in JSON its [`Variant::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// hc-mpi: T computation workers, engine placement `auto`.
    Hcmpi,
    /// hc-mpi with a dedicated communication thread.
    HcmpiDedicated,
    /// hc-mpi with the engine stepped by the computation workers.
    HcmpiShared,
    /// Raw MPI, `MPI_THREAD_MULTIPLE`, T threads.
    MpiMultiple,
    /// Raw MPI, `MPI_THREAD_SINGLE`, one thread.
    MpiSingle,
}

impl Variant {
    const ALL: [Variant; 5] = [
        Variant::Hcmpi,
        Variant::HcmpiDedicated,
        Variant::HcmpiShared,
        Variant::MpiMultiple,
        Variant::MpiSingle,
    ];
    const HCMPI: [Variant; 3] = [
        Variant::Hcmpi,
        Variant::HcmpiDedicated,
        Variant::HcmpiShared,
    ];

    fn name(self) -> &'static str {
        match self {
            Variant::Hcmpi => "hcmpi",
            Variant::HcmpiDedicated => "hcmpi-dedicated",
            Variant::HcmpiShared => "hcmpi-shared",
            Variant::MpiMultiple => "mpi-multiple",
            Variant::MpiSingle => "mpi-single",
        }
    }

    /// The engine placement an hcmpi variant asks for.
    pub fn placement(self) -> Option<hc_mpi::Placement> {
        match self {
            Variant::Hcmpi => Some(hc_mpi::Placement::Auto),
            Variant::HcmpiDedicated => Some(hc_mpi::Placement::Dedicated),
            Variant::HcmpiShared => Some(hc_mpi::Placement::Shared),
            Variant::MpiMultiple | Variant::MpiSingle => None,
        }
    }
}

/// One result row; in JSON a [`RowLine`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "RowLine", from = "RowLine")]
pub struct Row {
    pub bench: Bench,
    pub variant: Variant,
    /// The engine placement in effect (`none` for raw MPI).
    pub placement: String,
    pub threads: usize,
    pub bytes: usize,
    pub value: f64,
}

impl Row {
    /// `{"bench":..,"variant":..,"placement":..,"threads":T,"bytes":B,"value":V,"unit":U}`;
    /// a non-finite value is written as `null`.
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
    variant: Variant,
    /// `none` when absent.
    #[serde(default = "no_placement")]
    placement: String,
    threads: usize,
    bytes: usize,
    /// `null` when not finite, read back as NaN.
    #[serde(deserialize_with = "null_as_nan")]
    value: f64,
    /// The bench's unit; not checked when read.
    unit: String,
}

fn no_placement() -> String {
    "none".into()
}

impl From<Row> for RowLine {
    fn from(row: Row) -> RowLine {
        RowLine {
            bench: row.bench,
            variant: row.variant,
            placement: row.placement,
            threads: row.threads,
            bytes: row.bytes,
            value: row.value,
            unit: row.bench.unit().into(),
        }
    }
}

impl From<RowLine> for Row {
    fn from(line: RowLine) -> Row {
        Row {
            bench: line.bench,
            variant: line.variant,
            placement: line.placement,
            threads: line.threads,
            bytes: line.bytes,
            value: line.value,
        }
    }
}

/// Sizes and iteration counts, the same in the driver and its children.
#[derive(Debug, Clone)]
pub struct Params {
    pub bw_bytes: usize,
    pub bw_window: usize,
    pub bw_windows: usize,
    pub rate_window: usize,
    pub rate_windows: usize,
    pub lat_sizes: Vec<usize>,
    pub lat_iters: usize,
    pub reps: usize,
    pub idle_secs: f64,
}

impl Params {
    fn from_cli(cli: &Cli) -> Params {
        let mut p = if cli.quick {
            Params {
                bw_bytes: 64 << 10,
                bw_window: 2,
                bw_windows: 2,
                rate_window: 8,
                rate_windows: 4,
                lat_sizes: vec![0, 8, 64, 256, 1024],
                lat_iters: 20,
                reps: 1,
                idle_secs: 0.2,
            }
        } else {
            Params {
                bw_bytes: 8 << 20,
                bw_window: 4,
                bw_windows: 4,
                rate_window: 64,
                rate_windows: 1000,
                lat_sizes: vec![0, 8, 64, 256, 1024],
                lat_iters: 1000,
                reps: 5,
                idle_secs: 1.0,
            }
        };
        p.reps = cli.reps.unwrap_or(p.reps);
        p.lat_iters = cli.lat_iters.unwrap_or(p.lat_iters);
        p.rate_windows = cli.rate_windows.unwrap_or(p.rate_windows);
        p.bw_windows = cli.bw_windows.unwrap_or(p.bw_windows);
        p
    }
}

/// Thread micro-benchmarks of HCMPI (§IV-A): bandwidth, message rate and
/// latency of hcmpi against raw MPI with T threads per rank on 2 ranks.
///
/// Each configuration runs under `mpiexec -n 2`, started by this program.
/// HCMPI_MAX_POLL_US in the environment reaches the hcmpi runs.
#[derive(Debug, Parser)]
#[command(name = "threadbench")]
struct Cli {
    /// Thread counts per rank.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8", value_parser = positive)]
    threads: Vec<usize>,
    /// Timed repetitions per configuration, median reported (default 5,
    /// with --quick 1); one more warm-up repetition is excluded.
    #[arg(long, value_parser = positive)]
    reps: Option<usize>,
    /// Tiny sizes and iteration counts (a smoke test).
    #[arg(long)]
    quick: bool,
    /// Benchmarks to run (default: all).
    #[arg(long, value_delimiter = ',', value_enum)]
    bench: Vec<Bench>,
    /// Variants to run (default: all).
    #[arg(long, value_delimiter = ',', value_enum)]
    variants: Vec<Variant>,
    /// Rounds of the whole plan: each round runs every configuration once,
    /// in turn, so that load changes hit all of them alike; each value
    /// reported is the median over the rounds of the per-run medians.
    #[arg(long, default_value_t = 1, value_parser = positive)]
    rounds: usize,
    /// One JSON row per line instead of the markdown table.
    #[arg(long)]
    json: bool,
    /// Time limit of each mpiexec run, in seconds.
    #[arg(long, default_value_t = 300, value_parser = positive)]
    timeout: usize,
    /// Latency round trips per thread and size (default 1000).
    #[arg(long, value_parser = positive)]
    lat_iters: Option<usize>,
    /// Message-rate windows (of 64 messages) per thread (default 1000).
    #[arg(long, value_parser = positive)]
    rate_windows: Option<usize>,
    /// Bandwidth windows (of 4 × 8 MiB) per thread (default 4).
    #[arg(long, value_parser = positive)]
    bw_windows: Option<usize>,
    /// Run one configuration inside mpiexec (used by the driver).
    #[arg(long, hide = true)]
    child: bool,
    /// The child's variant.
    #[arg(long, hide = true, value_enum)]
    variant: Option<Variant>,
}

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    if cli.bench.is_empty() {
        cli.bench = Bench::ALL.to_vec();
    }
    if cli.variants.is_empty() {
        cli.variants = Variant::ALL.to_vec();
    }
    cli.bench.sort();
    cli.bench.dedup();
    cli.threads.sort_unstable();
    cli.threads.dedup();
    let params = Params::from_cli(&cli);
    if cli.child {
        return run_child(&cli, &params);
    }
    match drive(&cli, &params) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("threadbench: {}", ErrorChain(&error));
            ExitCode::FAILURE
        }
    }
}

fn run_child(cli: &Cli, params: &Params) -> ExitCode {
    let (Some(variant), [threads], [bench]) =
        (cli.variant, cli.threads.as_slice(), cli.bench.as_slice())
    else {
        eprintln!("threadbench --child needs --variant, one --threads and one --bench");
        return ExitCode::from(2);
    };
    match child::run(variant, *threads, *bench, params) {
        Ok(()) => ExitCode::SUCCESS,
        // A child is one rank of an MPI job: its peers would wait for it.
        Err(error) => hc_mpi::abort_job(1, &format!("threadbench child: {}", ErrorChain(&error))),
    }
}

/// One `mpiexec -n 2` run.
#[derive(Debug, Clone, Copy)]
struct Config {
    bench: Bench,
    variant: Variant,
    threads: usize,
}

/// Every configuration: the hcmpi variants and mpi-multiple at each T,
/// mpi-single once (T = 1), idle for the hcmpi variants only; each variant
/// only if asked for.
fn plan(cli: &Cli) -> Vec<Config> {
    let mut configs = Vec::new();
    for &bench in &cli.bench {
        let variants: Vec<Variant> = Variant::HCMPI
            .into_iter()
            .chain((bench != Bench::Idle).then_some(Variant::MpiMultiple))
            .filter(|v| cli.variants.contains(v))
            .collect();
        for variant in variants {
            for &threads in &cli.threads {
                configs.push(Config {
                    bench,
                    variant,
                    threads,
                });
            }
        }
        if bench != Bench::Idle && cli.variants.contains(&Variant::MpiSingle) {
            configs.push(Config {
                bench,
                variant: Variant::MpiSingle,
                threads: 1,
            });
        }
    }
    configs
}

/// Runs the plan and prints the results; `Ok(false)` if a configuration
/// failed (its rows are missing, the others are still printed).
fn drive(cli: &Cli, params: &Params) -> Result<bool, DriverError> {
    let launcher = Launcher::detect().map_err(DriverError::Launcher)?;
    let exe = std::env::current_exe().map_err(DriverError::OwnExecutable)?;
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut ok = true;
    let configs = plan(cli);
    let progress = Progress::new(
        "threadbench",
        Some((cli.rounds * configs.len()) as u64),
        "runs",
    );
    for config in (0..cli.rounds).flat_map(|_| configs.iter().copied()) {
        let t0 = Instant::now();
        let label = format!(
            "{:<9} {:<15} T={:<2}",
            config.bench.name(),
            config.variant.name(),
            config.threads
        );
        progress.set_message(format!(
            "{} {} T={}",
            config.bench.name(),
            config.variant.name(),
            config.threads
        ));
        match run_config(&launcher, &exe, cli, params, config) {
            Ok(mut found) => {
                progress.println(format!(
                    "threadbench: {label} {:6.1} s",
                    t0.elapsed().as_secs_f64()
                ));
                rows.append(&mut found);
            }
            Err(error) => {
                ok = false;
                progress.println(format!(
                    "threadbench: {label} FAILED: {}",
                    ErrorChain(&error)
                ));
            }
        }
        progress.inc(1);
    }
    progress.finish();
    eprintln!(
        "threadbench: all runs done in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let rows = median_over_rounds(rows);
    apps::output::to_stdout(|out| {
        if !cli.json {
            return write!(out, "{}", report(cli, params, &launcher, &rows));
        }
        rows.iter()
            .try_for_each(|row| writeln!(out, "{}", row.to_json()))
    })?;
    Ok(ok)
}

/// One row per (bench, variant, threads, bytes): the median value over the
/// rounds that produced it.
fn median_over_rounds(rows: Vec<Row>) -> Vec<Row> {
    let mut merged: Vec<(Row, Vec<f64>)> = Vec::new();
    for row in rows {
        let key = (row.bench, row.variant, row.threads, row.bytes);
        match merged
            .iter_mut()
            .find(|(r, _)| (r.bench, r.variant, r.threads, r.bytes) == key)
        {
            Some((_, values)) => values.push(row.value),
            None => {
                let value = row.value;
                merged.push((row, vec![value]));
            }
        }
    }
    merged
        .into_iter()
        .map(|(mut row, values)| {
            row.value = benches::stats::median(&values);
            row
        })
        .collect()
}

fn run_config(
    launcher: &Launcher,
    exe: &Path,
    cli: &Cli,
    params: &Params,
    config: Config,
) -> Result<Vec<Row>, JobError> {
    let mut args: Vec<String> = [
        "--child",
        "--variant",
        config.variant.name(),
        "--bench",
        config.bench.name(),
    ]
    .map(String::from)
    .to_vec();
    args.extend([
        format!("--threads={}", config.threads),
        format!("--reps={}", params.reps),
        format!("--lat-iters={}", params.lat_iters),
        format!("--rate-windows={}", params.rate_windows),
        format!("--bw-windows={}", params.bw_windows),
    ]);
    if cli.quick {
        args.push("--quick".into());
    }
    let cmd = launcher.command(2, exe, &args);
    let output = launcher
        .run_command(cmd, 2, exe, Duration::from_secs(cli.timeout as u64))
        .and_then(RunOutput::success_or_err)?;
    let rows: Vec<Row> = output.stdout.lines().filter_map(Row::parse).collect();
    if rows.is_empty() {
        return Err(JobError::NoRows {
            stdout: output.stdout,
            stderr: output.stderr,
        });
    }
    Ok(rows)
}

/// The header describing the run, the combined table, and the goal ratios.
fn report(cli: &Cli, p: &Params, launcher: &Launcher, rows: &[Row]) -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let max_t = cli.threads.iter().copied().max().unwrap_or(1);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# threadbench: HCMPI thread micro-benchmarks (§IV-A, after Thakur & Gropp)\n"
    );
    let _ = writeln!(
        out,
        "2 ranks on this node ({cores} cores), launcher {}{}.\n",
        launcher.flavor(),
        if cli.quick { ", --quick sizes" } else { "" }
    );
    if 2 * (max_t + 1) > cores {
        let _ = writeln!(
            out,
            "**Note: oversubscribed.** With a dedicated communication thread, hcmpi runs \
             2 × (T + 1) threads, {} at T={max_t}, and mpi-multiple 2 × T, {} at T={max_t}, on \
             {cores} cores: every hand-off between threads may be a context switch. `auto` \
             placement picks shared (no extra thread) when a rank has no spare core.\n",
            2 * (max_t + 1),
            2 * max_t
        );
    }
    let _ = writeln!(
        out,
        "bandwidth: {} B messages, {} windows of {} per thread; msgrate: 0 B, {} windows of \
         {} per thread; every window acknowledged by rank 1. latency: {} round trips per \
         thread and size, one-way = round trip / 2, mean over threads. Median of {} \
         repetition(s) after one warm-up, then median over {} round(s). {}={}. mpi-single \
         runs once (T=1) and is repeated in every T row as the reference (¹).\n",
        p.bw_bytes,
        p.bw_windows,
        p.bw_window,
        p.rate_windows,
        p.rate_window,
        p.lat_iters,
        p.reps,
        cli.rounds,
        hc_mpi::MAX_POLL_ENV,
        std::env::var(hc_mpi::MAX_POLL_ENV).unwrap_or_else(|_| "unset".into())
    );
    let find = |bench: Bench, variant: Variant, threads: usize, bytes: usize| {
        rows.iter()
            .find(|r| (r.bench, r.variant, r.threads, r.bytes) == (bench, variant, threads, bytes))
    };
    let value =
        |bench, variant, threads, bytes| find(bench, variant, threads, bytes).map(|r| r.value);
    let cell = |v: Option<f64>| v.map_or_else(|| "–".into(), format_value);
    let mut table = Vec::new();
    for &bench in &cli.bench {
        let sizes = match bench {
            Bench::Bandwidth => vec![p.bw_bytes],
            Bench::Latency => p.lat_sizes.clone(),
            Bench::Get => vec![8],
            Bench::Msgrate | Bench::Idle => vec![0],
        };
        for &bytes in &sizes {
            for &t in &cli.threads {
                let auto = find(bench, Variant::Hcmpi, t, bytes);
                let mut row = vec![
                    bench.name().to_owned(),
                    bytes.to_string(),
                    t.to_string(),
                    auto.map_or_else(
                        || "–".into(),
                        |r| format!("{} ({})", format_value(r.value), r.placement),
                    ),
                    cell(value(bench, Variant::HcmpiDedicated, t, bytes)),
                    cell(value(bench, Variant::HcmpiShared, t, bytes)),
                ];
                if bench == Bench::Idle {
                    row.extend([String::new(), String::new(), String::new()]);
                } else {
                    let multi = value(bench, Variant::MpiMultiple, t, bytes);
                    let single = value(bench, Variant::MpiSingle, 1, bytes);
                    let reference = if matches!(bench, Bench::Latency | Bench::Get) {
                        single
                    } else {
                        multi
                    };
                    let ratio = match (auto.map(|r| r.value), reference) {
                        (Some(h), Some(m)) if m > 0.0 => format!("{:.2}", h / m),
                        _ => "–".into(),
                    };
                    let mark = if t > 1 && single.is_some() { "¹" } else { "" };
                    row.extend([cell(multi), format!("{}{mark}", cell(single)), ratio]);
                }
                row.push(bench.unit().to_owned());
                table.push(row);
            }
        }
    }
    out.push_str(&markdown_table(
        &[
            "bench",
            "bytes",
            "T",
            "hcmpi (auto →)",
            "hcmpi-dedicated",
            "hcmpi-shared",
            "mpi-multiple",
            "mpi-single",
            "auto/reference",
            "unit",
        ],
        &table,
    ));
    let _ = writeln!(
        out,
        "\nauto/reference: hcmpi (auto) over mpi-single for latency and get (below 1 favours \
         hcmpi), \
         over mpi-multiple for bandwidth and msgrate (above 1 favours hcmpi).\n\n\
         Goals (reported, not asserted):\n"
    );
    for variant in Variant::HCMPI {
        let _ = writeln!(
            out,
            "- {}: latency 8 B at T=1 / mpi-single: {} (goal ≤ 2.0); message rate / \
             mpi-multiple at T=4: {} (goal ≥ 1.5); DDDF get round trip at T=1 / raw MPI \
             request/reply: {} (goal ≤ 3.0)",
            variant.name(),
            goal(
                value(Bench::Latency, variant, 1, 8),
                value(Bench::Latency, Variant::MpiSingle, 1, 8),
                |r| r <= 2.0
            ),
            goal(
                value(Bench::Msgrate, variant, 4, 0),
                value(Bench::Msgrate, Variant::MpiMultiple, 4, 0),
                |r| r >= 1.5
            ),
            goal(
                value(Bench::Get, variant, 1, 8),
                value(Bench::Get, Variant::MpiSingle, 1, 8),
                |r| r <= 3.0
            )
        );
    }
    out
}

fn goal(num: Option<f64>, den: Option<f64>, met: impl Fn(f64) -> bool) -> String {
    match (num, den) {
        (Some(n), Some(d)) if d > 0.0 && n.is_finite() => {
            let ratio = n / d;
            let verdict = if met(ratio) { "met" } else { "not met" };
            format!("{ratio:.2}, {verdict}")
        }
        _ => "n/a (not measured)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_names_are_the_cli_names() {
        for bench in Bench::ALL {
            let json = serde_json::to_string(&bench).unwrap();
            assert_eq!(json, format!("\"{}\"", bench.name()));
        }
        for variant in Variant::ALL {
            let json = serde_json::to_string(&variant).unwrap();
            assert_eq!(json, format!("\"{}\"", variant.name()));
        }
    }

    #[test]
    fn rows_round_trip() {
        let row = Row {
            bench: Bench::Latency,
            variant: Variant::HcmpiDedicated,
            placement: "dedicated".into(),
            threads: 2,
            bytes: 64,
            value: 18.5,
        };
        let line = row.to_json();
        assert_eq!(
            line,
            r#"{"bench":"latency","variant":"hcmpi-dedicated","placement":"dedicated","threads":2,"bytes":64,"value":18.5,"unit":"us"}"#
        );
        assert_eq!(Row::parse(&line), Some(row.clone()));
        let without = line.replace(r#""placement":"dedicated","#, "");
        assert_eq!(
            Row::parse(&without).map(|r| r.placement),
            Some("none".into())
        );
        let nan = Row {
            value: f64::INFINITY,
            ..row
        }
        .to_json();
        assert!(nan.contains(r#""value":null,"#), "{nan}");
        assert!(Row::parse(&nan).is_some_and(|r| r.value.is_nan()));
        assert_eq!(Row::parse("threadbench: not a row"), None);
        assert_eq!(Row::parse(&line.replace("latency", "jitter")), None);
    }
}
