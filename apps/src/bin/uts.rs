//! `uts`: run the Unbalanced Tree Search benchmark.
//!
//! Accepts the reference's tree flags (`-t -a -d -b -r -q -m -f -g`) and
//! `--tree NAME` for the standard sample trees; explicit flags override the
//! sample's values. `--mode` picks the search: `seq`, or one of the
//! parallel searches, run under `mpiexec` (`-c` chunk size, `-i` polling
//! interval, `--workers` threads per rank). Every rank checks the
//! parameters before MPI starts; one that rejects them ends the whole job
//! with its message. Only rank 0 prints results.

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Instant;

use apps::output::{Delivery, OutputError};
use apps::report::UtsReport;
use apps::uts::chunk::{RunError, StealParams, DEFAULT_CHUNK};
use apps::uts::stats::RunReport;
use apps::uts::{
    hcmpi, hybrid, mpi_ws, progress, samples, seq, GeoShape, Tree, TreeParams, TreeType, UtsError,
};
use clap::{Parser, ValueEnum};

/// How the tree is searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Single-threaded iterative depth-first search.
    Seq,
    /// HCMPI: one rank per node, computation workers with work-stealing
    /// deques; inter-rank steals and termination are message services of
    /// the communication engine (placement: HCMPI_PLACEMENT).
    Hcmpi,
    /// MPI-only work stealing (the reference), one rank per core.
    MpiWs,
    /// MPI + rayon: rayon threads explore, one thread steals between ranks.
    Hybrid,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Seq => "seq",
            Mode::Hcmpi => "hcmpi",
            Mode::MpiWs => "mpi-ws",
            Mode::Hybrid => "hybrid",
        }
    }

    fn strategy(self, report: &RunReport, steal: &StealParams) -> String {
        let who = match self {
            Mode::Seq => return "Iterative sequential search".to_string(),
            Mode::Hcmpi => format!(
                "Parallel search using {} ranks x {} computation workers \
                 (and a communication engine each, HCMPI)",
                report.ranks, report.workers
            ),
            Mode::MpiWs => format!(
                "Parallel search using {} MPI ranks (MPI work stealing)",
                report.ranks
            ),
            Mode::Hybrid => format!(
                "Parallel search using {} ranks x {} rayon threads (+1 MPI thread each, MPI+rayon)",
                report.ranks, report.workers
            ),
        };
        let poll = match (self, steal.poll_interval) {
            (Mode::MpiWs, 0) => "adaptive".to_string(),
            (_, 0) => format!("{} (default)", steal.threaded_interval()),
            (_, i) => i.to_string(),
        };
        let bound = match report.bound {
            Some(true) => "\n   Threads bound to CPUs (HCMPI_BIND)",
            Some(false) => "\n   Threads not bound to CPUs (HCMPI_BIND)",
            None => "",
        };
        format!(
            "{who}{bound}\n   Load balance by work stealing, chunk size = {} nodes\n   \
             Polling Interval: {poll}",
            steal.chunk
        )
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "uts",
    version,
    about = "Unbalanced Tree Search benchmark (SHA-1 trees identical to the UTS reference)"
)]
struct Cli {
    /// Tree type (0: binomial, 1: geometric, 2: hybrid, 3: balanced)
    #[arg(short = 't', allow_negative_numbers = true, value_name = "INT")]
    tree_type: Option<i64>,
    /// Geometric shape (0: linear, 1: expdec, 2: cyclic, 3: fixed)
    #[arg(short = 'a', allow_negative_numbers = true, value_name = "INT")]
    shape: Option<i64>,
    /// Geometric/balanced tree depth gen_mx
    #[arg(short = 'd', allow_negative_numbers = true, value_name = "INT")]
    depth: Option<i64>,
    /// Root branching factor b0
    #[arg(short = 'b', allow_negative_numbers = true, value_name = "FLOAT")]
    b0: Option<f64>,
    /// Root seed
    #[arg(short = 'r', allow_negative_numbers = true, value_name = "INT")]
    seed: Option<i64>,
    /// Binomial: probability of a non-leaf node
    #[arg(short = 'q', allow_negative_numbers = true, value_name = "FLOAT")]
    q: Option<f64>,
    /// Binomial: number of children of a non-leaf node
    #[arg(short = 'm', allow_negative_numbers = true, value_name = "INT")]
    m: Option<i64>,
    /// Hybrid: fraction of gen_mx where geometric turns binomial
    #[arg(short = 'f', allow_negative_numbers = true, value_name = "FLOAT")]
    shift: Option<f64>,
    /// Compute granularity: SHA-1 evaluations per child
    #[arg(short = 'g', allow_negative_numbers = true, value_name = "INT")]
    granularity: Option<i64>,
    /// Standard sample tree (T1, T2, T3, T4, T5, T1L, T2L, T3L, T1XL, T1XXL, T3XXL, T2XXL, T1WL, T2WL, T3WL)
    #[arg(long, value_name = "NAME")]
    tree: Option<String>,
    /// Search mode
    #[arg(long, value_enum, default_value_t = Mode::Seq)]
    mode: Mode,
    /// Chunk size: nodes moved per steal (parallel modes)
    #[arg(short = 'c', long = "chunk", allow_negative_numbers = true, value_name = "INT",
          default_value_t = DEFAULT_CHUNK as i64)]
    chunk: i64,
    /// Nodes explored between polls; 0: adaptive (mpi-ws) or 64 (threaded modes)
    #[arg(
        short = 'i',
        long = "poll-interval",
        allow_negative_numbers = true,
        value_name = "INT",
        default_value_t = 0
    )]
    poll_interval: i64,
    /// Threads per rank (hcmpi: computation workers, default HC_WORKERS,
    /// else the node's cores divided among its ranks; hybrid: rayon
    /// threads, default RAYON_NUM_THREADS, else one per core)
    #[arg(long, allow_negative_numbers = true, value_name = "INT")]
    workers: Option<i64>,
    /// Print one JSON object instead of the human-readable summary
    #[arg(long)]
    json: bool,
    /// Also print rank 0's runtime and engine metrics (hcmpi mode): per
    /// worker tasks, steals and time working/searching/parked; operations
    /// by kind with bytes and mean latency
    #[arg(long)]
    stats: bool,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
enum AppError {
    /// Bad parameters (exit status 2).
    #[error(transparent)]
    Params(#[from] UtsError),
    /// A parallel search failed (exit status 1).
    #[error(transparent)]
    Run(#[from] RunError),
    /// The report could not be written (exit status 1).
    #[error(transparent)]
    Output(#[from] OutputError),
}

fn int_param<T: TryFrom<i64>>(
    value: i64,
    flag: &'static str,
    what: &'static str,
    expected: &'static str,
) -> Result<T, UtsError> {
    T::try_from(value).map_err(|_| UtsError::InvalidParam {
        flag,
        what,
        value: value.to_string(),
        expected,
    })
}

/// Build the parameters from a sample tree (if any) and the explicit flags.
fn params_from(cli: &Cli) -> Result<(TreeParams, Option<&'static samples::SampleTree>), UtsError> {
    let base = match &cli.tree {
        Some(name) => Some(samples::lookup(name)?),
        None => None,
    };
    let mut p = base.map(|s| s.params).unwrap_or_default();
    if let Some(t) = cli.tree_type {
        p.tree_type = TreeType::from_code(t)?;
    }
    if let Some(a) = cli.shape {
        p.shape = GeoShape::from_code(a)?;
    }
    if let Some(d) = cli.depth {
        p.gen_mx = int_param(d, "-d", "tree depth gen_mx", "an integer >= 0")?;
    }
    if let Some(b) = cli.b0 {
        p.b0 = b;
    }
    if let Some(r) = cli.seed {
        p.root_seed = int_param(r, "-r", "root seed", "a 32-bit signed integer")?;
    }
    if let Some(q) = cli.q {
        p.q = q;
    }
    if let Some(m) = cli.m {
        p.m = int_param(m, "-m", "children of a non-leaf node", "an integer >= 0")?;
    }
    if let Some(f) = cli.shift {
        p.shift_depth = f;
    }
    if let Some(g) = cli.granularity {
        p.granularity = int_param(g, "-g", "compute granularity", "an integer >= 1")?;
    }
    p.validate()?;
    // the named sample, only if the flags left its parameters untouched
    let sample = samples::find_by_params(&p);
    Ok((p, sample))
}

fn print_params(
    out: &mut dyn Write,
    p: &TreeParams,
    sample: Option<&samples::SampleTree>,
    mode: Mode,
    strategy: &str,
) -> io::Result<()> {
    writeln!(out, "UTS - Unbalanced Tree Search (Rust, {})", mode.name())?;
    match sample {
        Some(s) => writeln!(
            out,
            "Tree type:  {} ({})  sample tree {}",
            p.tree_type.code(),
            p.tree_type.name(),
            s.name
        )?,
        None => writeln!(
            out,
            "Tree type:  {} ({})",
            p.tree_type.code(),
            p.tree_type.name()
        )?,
    }
    writeln!(out, "Tree shape parameters:")?;
    writeln!(
        out,
        "  root branching factor b_0 = {:.1}, root seed = {}",
        p.b0, p.root_seed
    )?;
    if matches!(p.tree_type, TreeType::Geometric | TreeType::Hybrid) {
        writeln!(
            out,
            "  GEO parameters: gen_mx = {}, shape function = {} ({})",
            p.gen_mx,
            p.shape.code(),
            p.shape.name()
        )?;
    }
    if matches!(p.tree_type, TreeType::Binomial | TreeType::Hybrid) {
        let en = p.q * f64::from(p.m);
        writeln!(
            out,
            "  BIN parameters:  q = {:.6}, m = {}, E(n) = {:.6}, E(s) = {:.2}",
            p.q,
            p.m,
            en,
            1.0 / (1.0 - en)
        )?;
    }
    if p.tree_type == TreeType::Hybrid {
        writeln!(
            out,
            "  HYBRID:  GEO from root to depth {}, then BIN",
            (p.shift_depth * f64::from(p.gen_mx)).ceil()
        )?;
    }
    if p.tree_type == TreeType::Balanced {
        writeln!(out, "  BALANCED parameters: gen_mx = {}", p.gen_mx)?;
    }
    writeln!(out, "Random number generator: SHA-1 (state size = 20B)")?;
    writeln!(out, "Compute granularity: {}", p.granularity)?;
    writeln!(out, "Execution strategy:  {strategy}")?;
    writeln!(out)
}

fn run(cli: &Cli) -> Result<(), AppError> {
    if cli.stats && cli.mode != Mode::Hcmpi {
        return Err(UtsError::InvalidParam {
            flag: "--stats",
            what: "runtime metrics",
            value: format!("--mode {}", cli.mode.name()),
            expected: "--mode hcmpi (the other modes do not run on the runtime)",
        }
        .into());
    }
    let (params, sample) = params_from(cli)?;
    let tree = Tree::new(params)?;
    let steal = StealParams::new(cli.chunk, cli.poll_interval)?;
    let workers = match cli.workers {
        Some(w) => Some(
            int_param::<usize>(w, "--workers", "threads per rank", "an integer >= 1").and_then(
                |n| {
                    if n == 0 {
                        Err(UtsError::InvalidParam {
                            flag: "--workers",
                            what: "threads per rank",
                            value: "0".into(),
                            expected: "an integer >= 1",
                        })
                    } else {
                        Ok(n)
                    }
                },
            )?,
        ),
        None => None,
    };
    if let (Some(w), Mode::Seq | Mode::MpiWs) = (workers, cli.mode) {
        // One thread per rank: a thread count here would be ignored.
        return Err(UtsError::InvalidParam {
            flag: "--workers",
            what: "threads per rank",
            value: w.to_string(),
            expected: "no value with --mode seq or mpi-ws, which run one thread per rank",
        }
        .into());
    }

    // Ranks under mpiexec write to a pipe, not a terminal: the counter shows
    // only for runs started without a launcher.
    let progress = progress::start(format!("uts {}", cli.mode.name()));
    let report = match cli.mode {
        Mode::Seq => {
            let probe = RunReport::sequential(Default::default(), 0.0);
            if !cli.json {
                let strategy = cli.mode.strategy(&probe, &steal);
                let delivery = apps::output::to_stdout(|out| {
                    print_params(out, &params, sample, cli.mode, &strategy)
                })?;
                if delivery == Delivery::ReaderGone {
                    // Nobody would read the result: skip the search.
                    return Ok(());
                }
            }
            let start = Instant::now();
            let stats = seq::search(&tree);
            RunReport::sequential(stats, start.elapsed().as_secs_f64())
        }
        Mode::Hcmpi => hcmpi::run(&tree, steal, workers)?,
        Mode::MpiWs => mpi_ws::run(&tree, steal)?,
        Mode::Hybrid => hybrid::run(&tree, steal, workers)?,
    };
    drop(progress);
    if !report.is_root {
        return Ok(());
    }
    apps::output::to_stdout(|out| print_results(out, cli, &params, sample, &steal, &report))?;
    Ok(())
}

/// Rank 0's report of a search: one JSON line with `--json`; otherwise the
/// summary, after the parameters for a parallel search (printed before a
/// sequential one starts).
fn print_results(
    out: &mut dyn Write,
    cli: &Cli,
    params: &TreeParams,
    sample: Option<&samples::SampleTree>,
    steal: &StealParams,
    report: &RunReport,
) -> io::Result<()> {
    if !cli.json && cli.mode != Mode::Seq {
        print_params(
            out,
            params,
            sample,
            cli.mode,
            &cli.mode.strategy(report, steal),
        )?;
    }
    let stats = report.counts;
    let seconds = report.seconds;
    let rate = report.nodes_per_sec();
    let pes = report.ranks * report.workers;

    if cli.json {
        let name = match sample {
            Some(s) => s.name.to_string(),
            None => params.to_args(),
        };
        let mut line = UtsReport::new(name, cli.mode.name(), report);
        if cli.stats {
            line.metrics = report.metrics.as_ref().map(apps::report::metrics_json);
        }
        return writeln!(out, "{}", line.json_line());
    }

    writeln!(
        out,
        "Tree size = {}, tree depth = {}, num leaves = {} ({:.2}%)",
        stats.nodes,
        stats.max_depth,
        stats.leaves,
        stats.leaves as f64 / stats.nodes as f64 * 100.0
    )?;
    writeln!(
        out,
        "Wallclock time = {:.3} sec, performance = {:.0} nodes/sec ({:.0} nodes/sec per PE)",
        seconds,
        rate,
        rate / f64::from(pes)
    )?;
    if cli.mode != Mode::Seq {
        let t = report.times;
        writeln!(
            out,
            "Total chunks released = {}, of which {} stolen; failed steals = {}",
            report.steals.released, report.steals.steals_ok, report.steals.steals_failed
        )?;
        writeln!(
            out,
            "Avg time per worker: Work = {:.6}, Overhead = {:.6}, Search = {:.6}, Idle = {:.6}.",
            t.work, t.overhead, t.search, t.idle
        )?;
    }
    if let Some(s) = sample {
        let ok = s.nodes == stats.nodes
            && s.leaves.is_none_or(|l| l == stats.leaves)
            && s.depth.is_none_or(|d| d == stats.max_depth);
        writeln!(
            out,
            "Sample tree {}: {}",
            s.name,
            if ok {
                "counts match the published statistics"
            } else {
                "counts DIFFER from the published statistics"
            }
        )?;
    }
    if let (true, Some(metrics)) = (cli.stats, &report.metrics) {
        write!(out, "{}", apps::report::metrics_table(0, metrics))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = match apps::job::parse_args::<Cli>() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(AppError::Params(e)) => apps::job::fail("uts", 2, &hc_mpi::ErrorChain(&e)),
        Err(AppError::Run(e)) => apps::job::fail("uts", 1, &hc_mpi::ErrorChain(&e)),
        Err(AppError::Output(e)) => apps::job::fail("uts", 1, &hc_mpi::ErrorChain(&e)),
    }
}
