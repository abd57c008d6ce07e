//! `smith-waterman`: best local alignment score (affine gaps) of two
//! sequences, sequentially or distributed under `mpiexec`.
//!
//! `--mode seq` runs the SIMD kernel on one core. `--mode hcmpi` runs the
//! hierarchical tiling of §IV-C of the HCMPI paper on DDDFs (between
//! outer tiles on different ranks) and DDFs (inner tiles); `--mode hybrid` the MPI + rayon fork-join
//! baseline. Every mode gives the same score and end cell. Bad input
//! (unreadable or malformed FASTA, invalid scores or tile sizes) is
//! reported on stderr with exit status 2, before MPI starts. A reader of
//! the report that stops early (`| head -1`) ends it quietly.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use apps::agreement::Fingerprint;
use apps::progress::Progress;
use apps::report::SwReport;
use apps::sw::alignment::{self, Alignment, Checkpoints, Op, RescoreError};
use apps::sw::alphabet::Alphabet;
use apps::sw::auto_tiling::{
    auto_tiles_up_to, max_tile_rows, tapers, FORK_JOIN_BLOCKS, PIPELINE_BLOCKS,
};
use apps::sw::fasta::FastaError;
use apps::sw::grid::{parse_tile, Distribution, OptionError};
use apps::sw::scoring::ScoringError;
use apps::sw::{fasta, hcmpi, hybrid, random, seq, Best, Kernel, Scoring, MAX_SCORE};
use clap::{Parser, ValueEnum};
use hcmpi_dddf::DddfError;
use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// The sequential SIMD kernel on one core (no MPI).
    Seq,
    /// DDDFs between outer tiles on different ranks, DDFs between inner
    /// tiles (HCMPI).
    Hcmpi,
    /// MPI between outer tile columns, rayon fork-join inside (MPI+OpenMP
    /// style).
    Hybrid,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Seq => "seq",
            Mode::Hcmpi => "hcmpi",
            Mode::Hybrid => "hybrid",
        }
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "smith-waterman",
    version,
    about = "Smith-Waterman local alignment score with affine gaps (Gotoh)"
)]
struct Cli {
    /// How the matrix is computed
    #[arg(long, value_enum, default_value_t = Mode::Seq)]
    mode: Mode,
    /// FASTA file of sequence A (first record; rows of the matrix)
    #[arg(long, value_name = "FILE")]
    a: Option<PathBuf>,
    /// FASTA file of sequence B (first record; columns of the matrix)
    #[arg(long, value_name = "FILE")]
    b: Option<PathBuf>,
    /// Random sequences of these lengths instead of files (ACGT, or the
    /// protein alphabet with --matrix)
    #[arg(long, num_args = 2, value_names = ["LEN_A", "LEN_B"], allow_negative_numbers = true)]
    random: Option<Vec<i64>>,
    /// Seed of --random
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Score of a match (default 2)
    #[arg(long = "match", value_name = "M", allow_negative_numbers = true)]
    match_score: Option<i32>,
    /// Score of a mismatch, negative (default -1)
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    mismatch: Option<i32>,
    /// Penalty of opening a gap, i.e. of its first position (default 2)
    #[arg(long, value_name = "O", allow_negative_numbers = true)]
    gap_open: Option<i32>,
    /// Penalty of each further gap position (default 2)
    #[arg(long, value_name = "E", allow_negative_numbers = true)]
    gap_extend: Option<i32>,
    /// Linear gaps: --gap-open G --gap-extend G
    #[arg(long, value_name = "G", allow_negative_numbers = true)]
    gap: Option<i32>,
    /// Substitution matrix for protein sequences (blosum62)
    #[arg(long, value_name = "NAME")]
    matrix: Option<String>,
    /// Outer tile ROWSxCOLS (hcmpi, hybrid): the unit of distribution;
    /// "auto": the whole matrix on one rank, else three column blocks per
    /// rank in hcmpi mode, two in hybrid mode (fewer on a narrow matrix)
    /// in bands of one inner tile row per thread, lower towards the top
    /// and bottom of a tall matrix (hcmpi mode; on one rank of several
    /// workers, its inner bands)
    #[arg(long, value_name = "RxC", default_value = "auto")]
    outer_tile: String,
    /// Inner tile ROWSxCOLS (hcmpi, hybrid): the unit of one task; "auto":
    /// about 4 tiles per thread (over all ranks) across B, 1024 to 4096
    /// columns wide, but at least 2048, or one per thread, while every
    /// thread gets one; and 4 down A, 256 to 1024 rows high (to 2048 with
    /// AVX-512)
    #[arg(long, value_name = "RxC", default_value = "auto")]
    inner_tile: String,
    /// Outer tile distribution (hcmpi): diag-block, col-cyclic or
    /// col-snake (hybrid always deals columns cyclically); "auto" is
    /// col-snake with the auto outer tiles (column blocks per rank),
    /// diag-block otherwise
    #[arg(long, value_name = "NAME", default_value = "auto")]
    dist: String,
    /// Threads per rank (hcmpi: computation workers, default HC_WORKERS,
    /// else the node's cores divided among its ranks; hybrid: rayon
    /// threads, default RAYON_NUM_THREADS, else one per core)
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
    /// Print one JSON object instead of the summary
    #[arg(long)]
    json: bool,
    /// Also find the alignment itself (rank 0, linear memory): its start,
    /// CIGAR string, identity and, unless --align-width 0, a pairwise view
    #[arg(long)]
    align: bool,
    /// Columns per line of --align's pairwise view; 0 prints none
    #[arg(long, value_name = "N")]
    align_width: Option<usize>,
    /// Also print rank 0's runtime and engine metrics (hcmpi mode): per
    /// worker tasks, steals and time working/searching/parked; operations
    /// by kind with bytes and mean latency
    #[arg(long)]
    stats: bool,
}

/// Everything a run needs, validated before MPI starts.
struct Problem {
    a: Vec<u8>,
    b: Vec<u8>,
    scoring: Scoring,
    inner: Option<(usize, usize)>,
    outer: Option<(usize, usize)>,
    distribution: Distribution,
    alphabet: Alphabet,
    /// `--align`: the width of the pairwise view (0: none).
    align: Option<usize>,
}

/// Why a run failed: bad input (exit status 2), or a failed run or report
/// (1).
#[derive(Debug, thiserror::Error)]
enum AppError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Output(#[from] apps::output::OutputError),
}

/// Rejected input, found before MPI starts.
#[derive(Debug, thiserror::Error)]
enum InputError {
    #[error("--gap sets both penalties; do not combine it with --gap-open/--gap-extend")]
    GapWithOpenOrExtend,
    #[error(
        "gap penalties are positive numbers (a gap of length L scores -(O + (L-1)*E)); \
         got --gap-open {open} --gap-extend {extend}"
    )]
    NegativeGap { open: i32, extend: i32 },
    #[error("--matrix replaces --match/--mismatch; give one or the other")]
    MatrixWithMatchScores,
    #[error("unknown substitution matrix {0:?} (supported: blosum62)")]
    UnknownMatrix(String),
    #[error("--match must be positive, got {0}")]
    NonPositiveMatch(i32),
    #[error("--mismatch must be negative, got {0}")]
    NonNegativeMismatch(i32),
    #[error(transparent)]
    Scoring(#[from] ScoringError),
    #[error("{}", path.display())]
    Fasta {
        path: PathBuf,
        #[source]
        source: FastaError,
    },
    #[error("--random {name} must be a positive length, got {value}")]
    RandomLength { name: &'static str, value: i64 },
    #[error("give either --a/--b or --random, not both")]
    FilesAndRandom,
    #[error("give the sequences: --a FILE --b FILE (FASTA), or --random LEN_A LEN_B")]
    NoSequences,
    #[error("scores could exceed {MAX_SCORE} for sequences this long with these scores")]
    ScoreOverflow,
    #[error("--{option}")]
    Tiling {
        option: &'static str,
        #[source]
        source: OptionError,
    },
    #[error("--workers must be at least 1")]
    NoWorkers,
    #[error(
        "--workers sets the threads per rank of --mode hcmpi or hybrid; \
         --mode {0} runs on one core"
    )]
    WorkersNeedThreads(&'static str),
    #[error("--stats reports the runtime's metrics: it needs --mode hcmpi, got --mode {0}")]
    StatsNeedHcmpi(&'static str),
    #[error("--align-width sets the pairwise view of --align; add --align")]
    AlignWidthWithoutAlign,
}

/// A run that started and failed.
#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error("cannot start hc-mpi")]
    Start(#[source] hc_mpi::Error),
    #[error("the barrier before the timed run failed")]
    Barrier(#[source] hc_mpi::Error),
    #[error("the ranks could not agree on the tiles")]
    Tiling(#[source] hc_mpi::Error),
    #[error("the ranks could not compare their problems")]
    Agreement(#[source] hc_mpi::Error),
    #[error("the distributed alignment failed")]
    Align(#[source] DddfError),
    #[error("MPI is already initialized")]
    MpiAlreadyInitialized,
    #[error("cannot start the rayon pool")]
    RayonPool(#[source] rayon::ThreadPoolBuildError),
    #[error("cannot bind the rayon threads")]
    Bind(#[source] apps::binding::BindError),
    #[error("internal error: the traced alignment {cigar} does not check out")]
    AlignmentCheck {
        cigar: String,
        #[source]
        source: RescoreError,
    },
}

fn scoring_from(cli: &Cli) -> Result<(Scoring, Alphabet), InputError> {
    if cli.gap.is_some() && (cli.gap_open.is_some() || cli.gap_extend.is_some()) {
        return Err(InputError::GapWithOpenOrExtend);
    }
    let open = cli.gap.or(cli.gap_open).unwrap_or(2);
    let extend = cli.gap.or(cli.gap_extend).unwrap_or(2);
    if open < 0 || extend < 0 {
        return Err(InputError::NegativeGap { open, extend });
    }
    let scoring = match cli.matrix.as_deref() {
        Some(name) if name.eq_ignore_ascii_case("blosum62") => {
            if cli.match_score.is_some() || cli.mismatch.is_some() {
                return Err(InputError::MatrixWithMatchScores);
            }
            return Ok((Scoring::blosum62(open, extend)?, Alphabet::Protein));
        }
        Some(name) => return Err(InputError::UnknownMatrix(name.to_owned())),
        None => {
            let matched = cli.match_score.unwrap_or(2);
            let mismatched = cli.mismatch.unwrap_or(-1);
            if matched <= 0 {
                return Err(InputError::NonPositiveMatch(matched));
            }
            if mismatched >= 0 {
                return Err(InputError::NonNegativeMismatch(mismatched));
            }
            Scoring::match_mismatch(matched, mismatched, open, extend)?
        }
    };
    Ok((scoring, Alphabet::Dna))
}

fn sequences(cli: &Cli, alphabet: Alphabet) -> Result<(Vec<u8>, Vec<u8>), InputError> {
    match (&cli.a, &cli.b, &cli.random) {
        (Some(a), Some(b), None) => {
            let read = |path: &PathBuf| {
                fasta::read_first(path, alphabet)
                    .map(|record| record.seq)
                    .map_err(|source| InputError::Fasta {
                        path: path.clone(),
                        source,
                    })
            };
            Ok((read(a)?, read(b)?))
        }
        (None, None, Some(lengths)) => {
            let len = |value: i64, name: &'static str| {
                usize::try_from(value)
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or(InputError::RandomLength { name, value })
            };
            let (len_a, len_b) = (len(lengths[0], "LEN_A")?, len(lengths[1], "LEN_B")?);
            let make = |n, seed| match alphabet {
                Alphabet::Dna => random::random_dna(n, seed),
                Alphabet::Protein => random::random_protein(n, seed),
            };
            Ok((make(len_a, cli.seed), make(len_b, cli.seed.wrapping_add(1))))
        }
        (_, _, Some(_)) => Err(InputError::FilesAndRandom),
        _ => Err(InputError::NoSequences),
    }
}

fn problem_from(cli: &Cli) -> Result<Problem, InputError> {
    if cli.stats && cli.mode != Mode::Hcmpi {
        return Err(InputError::StatsNeedHcmpi(cli.mode.name()));
    }
    if cli.align_width.is_some() && !cli.align {
        return Err(InputError::AlignWidthWithoutAlign);
    }
    let (scoring, alphabet) = scoring_from(cli)?;
    let (a, b) = sequences(cli, alphabet)?;
    let growth = i64::from(scoring.max_gain()) * a.len().min(b.len()) as i64;
    if growth > i64::from(MAX_SCORE) {
        return Err(InputError::ScoreOverflow);
    }
    let inner = match cli.inner_tile.as_str() {
        "auto" => None,
        text => Some(parse_tile(text).map_err(|source| InputError::Tiling {
            option: "inner-tile",
            source,
        })?),
    };
    let outer = match cli.outer_tile.as_str() {
        "auto" => None,
        text => Some(parse_tile(text).map_err(|source| InputError::Tiling {
            option: "outer-tile",
            source,
        })?),
    };
    let distribution = match cli.dist.as_str() {
        "auto" if outer.is_none() => Distribution::ColSnake,
        "auto" => Distribution::DiagBlock,
        name => name.parse().map_err(|source| InputError::Tiling {
            option: "dist",
            source,
        })?,
    };
    if cli.workers == Some(0) {
        return Err(InputError::NoWorkers);
    }
    if cli.workers.is_some() && cli.mode == Mode::Seq {
        return Err(InputError::WorkersNeedThreads(cli.mode.name()));
    }
    Ok(Problem {
        a,
        b,
        scoring,
        inner,
        outer,
        distribution,
        alphabet,
        align: cli.align.then(|| cli.align_width.unwrap_or(60)),
    })
}

/// What every rank of a job must be given alike (`apps::agreement`): the
/// sequences, the scoring, the tiles, and whether the ranks keep rows for
/// `--align`.
fn fingerprint(problem: &Problem) -> Fingerprint {
    Fingerprint::new()
        .sequence("sequence A", &problem.a)
        .sequence("sequence B", &problem.b)
        .options(
            "scoring options",
            &format!("{} {:?}", problem.scoring.parameters(), problem.alphabet),
        )
        .options(
            "tiling options",
            &format!(
                "{:?} {:?} {:?}",
                problem.inner, problem.outer, problem.distribution
            ),
        )
        .options(
            "alignment options (--align)",
            &problem.align.is_some().to_string(),
        )
}

/// The inner and outer tiles for `ranks` ranks of `threads` threads each,
/// the "auto" ones in up to `blocks_per_rank` column blocks per rank, of at
/// most `max_rows` rows (see [`auto_tiles_up_to`]).
fn tiles(
    problem: &Problem,
    (ranks, threads): (usize, usize),
    blocks_per_rank: usize,
    max_rows: usize,
) -> ((usize, usize), (usize, usize)) {
    let (auto_inner, auto_outer) = auto_tiles_up_to(
        problem.a.len(),
        problem.b.len(),
        ranks,
        threads,
        blocks_per_rank,
        max_rows,
    );
    let inner = problem.inner.unwrap_or(auto_inner);
    let outer = problem.outer.unwrap_or(match problem.inner {
        // One rank's auto outer tile is the whole matrix, whatever the
        // inner tiles (and however high this CPU's auto ones are).
        Some(_) if ranks == 1 => auto_outer,
        // Whole inner tiles: as many along each side as auto puts there.
        Some(inner) => (
            auto_outer.0.div_ceil(auto_inner.0) * inner.0,
            auto_outer.1.div_ceil(auto_inner.1) * inner.1,
        ),
        None => auto_outer,
    });
    (inner, outer)
}

/// The result as rank 0 reports it.
struct Outcome {
    best: Best,
    seconds: f64,
    ranks: usize,
    workers: usize,
    is_root: bool,
    /// This rank's runtime and engine metrics (hcmpi mode).
    metrics: Option<hc_mpi::Metrics>,
    /// Whether this rank's threads were bound to CPUs (`HCMPI_BIND`); `None`
    /// in seq mode.
    bound: Option<bool>,
    /// With `--align`, on the root: the alignment and the traceback's
    /// seconds.
    traced: Option<(Alignment, f64)>,
}

/// The bar over the cells this rank computes: only the root's shows, so a
/// run started from a terminal without a launcher (one rank) shows one.
fn progress(mode: Mode, is_root: bool) -> Progress {
    if is_root {
        Progress::new(format!("smith-waterman {}", mode.name()), None, "cells")
    } else {
        Progress::hidden()
    }
}

fn run_seq(problem: &Problem) -> Result<Outcome, RunError> {
    let progress = progress(Mode::Seq, true);
    let (a, b, scoring) = (&problem.a, &problem.b, &problem.scoring);
    let start = Instant::now();
    let (best, checkpoints) = match problem.align {
        Some(_) => seq::align_with_checkpoints(a, b, scoring, &progress),
        None => (
            seq::align_with_progress(a, b, scoring, &progress),
            Checkpoints::none(),
        ),
    };
    let seconds = start.elapsed().as_secs_f64();
    progress.finish();
    let traced = match problem.align {
        Some(_) => Some(traced_alignment(problem, best, &checkpoints, None)?),
        None => None,
    };
    Ok(Outcome {
        best,
        seconds,
        ranks: 1,
        workers: 1,
        is_root: true,
        metrics: None,
        bound: None,
        traced,
    })
}

fn run_hcmpi(problem: &Problem, workers: Option<usize>) -> Result<Outcome, RunError> {
    let mut builder = hc_mpi::Hcmpi::builder();
    if let Some(n) = workers {
        builder = builder.workers(n);
    }
    let hc = builder.build().map_err(RunError::Start)?;
    apps::job::abort_job_on_error(&hc, "smith-waterman", align_hcmpi(&hc, problem))
}

/// The hcmpi alignment on a started hc-mpi.
fn align_hcmpi(hc: &hc_mpi::Hcmpi, problem: &Problem) -> Result<Outcome, RunError> {
    let ranks = hc.size() as usize;
    fingerprint(problem)
        .agree_on("smith-waterman", hc.world())
        .map_err(RunError::Agreement)?;
    // Every rank must cut the matrix alike, and ranks on different nodes
    // may start different numbers of workers and run different kernels:
    // the tiles are sized for the most workers any rank has, and no taller
    // than the lowest cap of any rank's kernel (negated for one `Max`).
    let agreed = hc
        .world()
        .allreduce(
            vec![hc.runtime().num_workers() as i64, -(max_tile_rows() as i64)],
            hc_mpi::ReduceOp::Max,
        )
        .map_err(RunError::Tiling)?;
    let (threads, max_rows) = (agreed[0] as usize, agreed[1].unsigned_abs() as usize);
    let (inner, outer) = tiles(problem, (ranks, threads), PIPELINE_BLOCKS, max_rows);
    let tiling = hcmpi::Tiling {
        outer,
        inner,
        distribution: problem.distribution,
        // Auto tiles form a pipeline down the bands: of the outer tiles on
        // several ranks, of the inner ones on one rank of several threads.
        taper: problem.outer.is_none() && tapers(problem.a.len(), (inner, outer), ranks, threads),
    };
    let progress = progress(Mode::Hcmpi, hc.rank() == 0);
    hc.world().barrier().map_err(RunError::Barrier)?;
    let start = Instant::now();
    let (a, b, scoring) = (&problem.a, &problem.b, &problem.scoring);
    let (best, checkpoints) = match problem.align {
        Some(_) => hcmpi::align_with_checkpoints(hc, a, b, scoring, &tiling, &progress),
        None => hcmpi::align(hc, a, b, scoring, &tiling, &progress)
            .map(|best| (best, Checkpoints::none())),
    }
    .map_err(RunError::Align)?;
    let seconds = start.elapsed().as_secs_f64();
    progress.finish();
    // The root traces on this rank's workers, the segments of the path
    // between kept rows as tasks when it has more than one.
    let traced = match (&problem.align, hc.rank()) {
        (Some(_), 0) => Some(traced_alignment(
            problem,
            best,
            &checkpoints,
            Some(hc.runtime()),
        )?),
        _ => None,
    };
    Ok(Outcome {
        best,
        seconds,
        ranks,
        workers: hc.runtime().num_workers(),
        is_root: hc.rank() == 0,
        metrics: Some(hc.metrics()),
        bound: Some(hc.binding() == hc_mpi::Binding::Cores),
        traced,
    })
}

fn run_hybrid(problem: &Problem, workers: Option<usize>) -> Result<Outcome, RunError> {
    // Read before MPI starts: a bad value is this rank's error alone.
    let binding = apps::binding::requested().map_err(RunError::Bind)?;
    let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
        .ok_or(RunError::MpiAlreadyInitialized)?;
    let world = universe.world();
    // A panic here would leave the other ranks waiting in a receive.
    let _guard = hc_mpi::AbortJobOnPanic::new("smith-waterman");
    fingerprint(problem).agree_on_world("smith-waterman", &world);
    let mut builder = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("sw-rayon-{i}"));
    if let Some(n) = workers {
        builder = builder.num_threads(n);
    }
    let pool = builder.build().map_err(RunError::RayonPool)?;
    // On the same terms as hcmpi mode's workers. A failure ends the whole
    // job here, while MPI runs: the other ranks would wait for this one.
    let bound = match apps::binding::bind_pool_like_hcmpi(&world, &pool, binding) {
        Ok(bound) => bound,
        Err(error) => {
            let error = RunError::Bind(error);
            if hc_mpi::launched_with_peers() {
                apps::job::fail("smith-waterman", 1, &hc_mpi::ErrorChain(&error));
            }
            return Err(error);
        }
    };
    let ranks = world.size() as usize;
    // As in hcmpi mode: tiles sized for the most threads any rank has, no
    // taller than the lowest cap of any rank's kernel.
    let mut agreed = [0i64; 2];
    world.all_reduce_into(
        &[pool.current_num_threads() as i64, -(max_tile_rows() as i64)][..],
        &mut agreed[..],
        SystemOperation::max(),
    );
    let (threads, max_rows) = (agreed[0] as usize, agreed[1].unsigned_abs() as usize);
    let (inner, outer) = tiles(problem, (ranks, threads), FORK_JOIN_BLOCKS, max_rows);
    let progress = progress(Mode::Hybrid, world.rank() == 0);
    world.barrier();
    let start = Instant::now();
    let best = hybrid::align(
        &world,
        &pool,
        &problem.a,
        &problem.b,
        &problem.scoring,
        outer,
        inner,
        &progress,
    );
    let seconds = start.elapsed().as_secs_f64();
    progress.finish();
    // No rows kept: the root's traceback recomputes the rows above the end.
    let traced = match (&problem.align, world.rank()) {
        (Some(_), 0) => Some(traced_alignment(problem, best, &Checkpoints::none(), None)?),
        _ => None,
    };
    Ok(Outcome {
        best,
        seconds,
        ranks,
        workers: pool.current_num_threads(),
        is_root: world.rank() == 0,
        metrics: None,
        bound: Some(bound),
        traced,
    })
}

fn run(cli: &Cli) -> Result<(), AppError> {
    let problem = problem_from(cli)?;
    // Detects the CPU's instruction sets now, not in the first tile, inside
    // the timed run and (several ranks) at the head of their pipeline: in a
    // virtual machine, which traps each `cpuid`, it took about 60 µs.
    Kernel::Auto.resolve();
    let outcome = match cli.mode {
        Mode::Seq => run_seq(&problem)?,
        Mode::Hcmpi => run_hcmpi(&problem, cli.workers)?,
        Mode::Hybrid => run_hybrid(&problem, cli.workers)?,
    };
    if !outcome.is_root {
        return Ok(());
    }
    apps::output::to_stdout(|out| print_report(out, cli, &problem, outcome))?;
    Ok(())
}

/// Rank 0's report of `outcome`: one JSON line with `--json`, a summary
/// otherwise.
fn print_report(
    out: &mut dyn Write,
    cli: &Cli,
    problem: &Problem,
    outcome: Outcome,
) -> io::Result<()> {
    let traced = outcome.traced;
    let trace_seconds = traced.as_ref().map_or(0.0, |(_, seconds)| *seconds);
    let seconds = outcome.seconds + trace_seconds;
    let (len_a, len_b) = (problem.a.len(), problem.b.len());
    let cells = len_a as u64 * len_b as u64;
    let gcups = apps::report::gcups(cells, seconds);
    let best = outcome.best;
    if cli.json {
        let mut report = SwReport::new(
            best,
            (len_a, len_b),
            seconds,
            cli.mode.name(),
            (outcome.ranks, outcome.workers),
        );
        report.bound = outcome.bound;
        if cli.stats {
            report.metrics = outcome.metrics.as_ref().map(apps::report::metrics_json);
        }
        if let Some((alignment, trace_seconds)) = &traced {
            report = report.with_alignment(alignment, *trace_seconds);
        }
        return writeln!(out, "{}", report.json_line());
    }
    let bound = match outcome.bound {
        Some(true) => ", bound to CPUs",
        Some(false) => ", not bound to CPUs",
        None => "",
    };
    writeln!(
        out,
        "Smith-Waterman ({}, {} rank(s) x {} worker(s){bound}): A {len_a} x B {len_b} = {cells} cells",
        cli.mode.name(),
        outcome.ranks,
        outcome.workers
    )?;
    writeln!(
        out,
        "score {} ending at A[{}], B[{}] (0-based)",
        best.score, best.row, best.col
    )?;
    match &traced {
        Some((alignment, trace_seconds)) => {
            print_alignment(out, problem, alignment)?;
            writeln!(
                out,
                "time {seconds:.6} s ({trace_seconds:.6} s traceback), {gcups:.3} GCUPS"
            )?;
        }
        None => writeln!(out, "time {seconds:.6} s, {gcups:.3} GCUPS")?,
    }
    if let (true, Some(metrics)) = (cli.stats, &outcome.metrics) {
        write!(out, "{}", apps::report::metrics_table(0, metrics))?;
    }
    Ok(())
}

/// `--align` on rank 0: the traceback from the score pass's result (its
/// segments as tasks of `runtime` if given), timed, and checked by rescoring
/// its columns.
fn traced_alignment(
    problem: &Problem,
    best: Best,
    checkpoints: &Checkpoints,
    runtime: Option<&hc_runtime::Runtime>,
) -> Result<(Alignment, f64), RunError> {
    let (a, b, scoring) = (&problem.a, &problem.b, &problem.scoring);
    let start = Instant::now();
    let alignment = match runtime {
        Some(runtime) => alignment::trace_on(runtime, a, b, scoring, best, checkpoints),
        None => alignment::trace(a, b, scoring, best, checkpoints),
    };
    let seconds = start.elapsed().as_secs_f64();
    match alignment.check(a, b, scoring) {
        Ok(()) => Ok((alignment, seconds)),
        Err(source) => Err(RunError::AlignmentCheck {
            cigar: alignment.cigar(),
            source,
        }),
    }
}

/// The summary lines of `--align`.
fn print_alignment(
    out: &mut dyn Write,
    problem: &Problem,
    alignment: &Alignment,
) -> io::Result<()> {
    if alignment.score == 0 {
        return writeln!(out, "no alignment: the best score is 0");
    }
    let (ra, rb) = (&alignment.a, &alignment.b);
    let gaps = alignment.count(Op::Insertion) + alignment.count(Op::Deletion);
    writeln!(
        out,
        "alignment A[{}..={}], B[{}..={}] (0-based): {} columns, {} identical ({:.2}%), \
         {} mismatched, {gaps} in gaps",
        ra.start,
        ra.end - 1,
        rb.start,
        rb.end - 1,
        alignment.columns(),
        alignment.count(Op::Match),
        100.0 * alignment.identity(),
        alignment.count(Op::Mismatch),
    )?;
    writeln!(out, "cigar {}", alignment.cigar())?;
    if let Some(width @ 1..) = problem.align {
        let pairwise = alignment.pairwise(
            &problem.a,
            &problem.b,
            problem.alphabet,
            &problem.scoring,
            width,
        );
        write!(out, "\n{pairwise}\n")?;
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
        Err(error) => {
            let code = match error {
                AppError::Input(_) => 2,
                AppError::Run(_) | AppError::Output(_) => 1,
            };
            apps::job::fail("smith-waterman", code, &hc_mpi::ErrorChain(&error))
        }
    }
}
