//! A 1-D Jacobi solver across ranks whose convergence check reads a stale
//! accumulator: a straggling rank no longer holds every other rank at each
//! iteration's residual reduction.
//!
//! It solves `(2 + σ) u_i - u_{i-1} - u_{i+1} = 1` on `n` points per rank
//! (zero outside), split into contiguous blocks. Iteration `p` exchanges
//! the block edges with the neighbours (`MPI_Isend`/`MPI_Irecv`, overlapped
//! with the interior), contributes the squared residual of iterate `p` to
//! an accumulator of staleness `k`, and reads the residual of iteration
//! `p - k`, which is complete on every rank once `advance` returns. It
//! stops at the first iteration whose stale residual, relative to the
//! right-hand side, is below the tolerance: every rank reads the same
//! value for each phase, so every rank stops at the same iteration. With
//! `k = 0` this is the usual synchronous check; with `k > 0` it costs `k`
//! extra iterations and hides the reduction's wait.
//!
//! `--slow-rank R --delay-us D` adds `D` µs of busy work per iteration on
//! rank `R`. `--json` prints one line:
//! `{"staleness":K,"iterations":N,"seconds":S,"residual":R,"ranks":P}`
//! (seconds: the slowest rank's time from a barrier to its last
//! iteration; residual: the relative residual that met the tolerance).
//!
//! ```text
//! mpiexec -n 4 ssp_jacobi --staleness 2 --slow-rank 3 --delay-us 200 --json
//! ```

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use hc_mpi::{Comm, Hcmpi, ReduceOp};
use hcmpi_phasers::{AccumOp, Reduction, StaleAccum, Staleness};

#[derive(Debug, Parser)]
#[command(about = "1-D Jacobi with a stale-synchronous residual check")]
struct Args {
    /// Points per rank.
    #[arg(long, default_value_t = 20_000)]
    n: usize,
    /// The staleness bound k of the residual accumulator.
    #[arg(long, default_value_t = 0)]
    staleness: u64,
    /// Stop once the relative residual is below this.
    #[arg(long, default_value_t = 1e-8)]
    tol: f64,
    /// The diagonal shift σ (> 0): Jacobi contracts by 2 / (2 + σ).
    #[arg(long, default_value_t = 0.05)]
    sigma: f64,
    /// The rank to slow down.
    #[arg(long)]
    slow_rank: Option<i32>,
    /// Busy microseconds added to each iteration of the slow rank.
    #[arg(long, default_value_t = 0)]
    delay_us: u64,
    /// Busy microseconds added to each iteration of every rank, drawn
    /// uniformly from [0, 2·J) per rank and iteration (transient
    /// stragglers: a different rank is the slowest at each iteration).
    #[arg(long, default_value_t = 0)]
    jitter_us: u64,
    /// Give up after this many iterations.
    #[arg(long, default_value_t = 100_000)]
    max_iters: u64,
    /// Print one JSON line instead of text.
    #[arg(long)]
    json: bool,
}

/// The tag of the edge exchange.
const EDGE: i32 = 1;

/// Why a run was refused or failed.
#[derive(Debug, thiserror::Error)]
enum JacobiError {
    #[error("--slow-rank {rank} is not a rank of this {size}-rank job")]
    NoSuchRank { rank: i32, size: i32 },
    #[error("--n must be at least 2 (got {0})")]
    TooFewPoints(usize),
    #[error("--sigma must be positive and finite (got {0})")]
    BadSigma(f64),
    #[error("--tol must be positive and finite (got {0})")]
    BadTolerance(f64),
    #[error("no convergence to {tol} in {iters} iterations (last residual {residual:e})")]
    NoConvergence { tol: f64, iters: u64, residual: f64 },
    #[error(transparent)]
    Ssp(#[from] hcmpi_phasers::SspError),
    #[error(transparent)]
    Mpi(#[from] hc_mpi::Error),
}

struct Outcome {
    iterations: u64,
    seconds: f64,
    residual: f64,
}

/// Rank `rank`'s jitter at iteration `p`: uniform in [0, 2·`mean_us`) µs,
/// the same in every run.
fn jitter(rank: i32, p: u64, mean_us: u64) -> Duration {
    if mean_us == 0 {
        return Duration::ZERO;
    }
    let mut z = (u64::from(rank.unsigned_abs()) << 40) ^ p ^ 0x9e37_79b9_7f4a_7c15;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    Duration::from_micros((z ^ (z >> 31)) % (2 * mean_us))
}

fn spin(delay: Duration) {
    let until = Instant::now() + delay;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// One rank's block, with a ghost cell at each end.
struct Block {
    u: Vec<f64>,
    next: Vec<f64>,
    diagonal: f64,
}

impl Block {
    /// Updates points `range` (indices into the ghosted block) from `u`
    /// into `next`, returning their squared residual.
    fn sweep(&mut self, range: std::ops::Range<usize>) -> f64 {
        let (u, next, d) = (&self.u, &mut self.next, self.diagonal);
        let mut r2 = 0.0;
        for i in range {
            let neighbours = u[i - 1] + u[i + 1];
            let r = 1.0 - (d * u[i] - neighbours);
            r2 += r * r;
            next[i] = (1.0 + neighbours) / d;
        }
        r2
    }

    /// The squared residual of `u`, with the ghosts it holds.
    fn residual2(&self) -> f64 {
        let (u, d) = (&self.u, self.diagonal);
        (1..u.len() - 1)
            .map(|i| 1.0 - (d * u[i] - u[i - 1] - u[i + 1]))
            .map(|r| r * r)
            .sum()
    }
}

/// The edge a neighbour sends at the start of each of its iterations:
/// `[iteration, value]`; `[-1, value]` after its last one, with its final
/// edge.
const LAST: f64 = -1.0;

/// One ghost cell, fed by a neighbour's edges with bounded staleness: at
/// iteration `p` it holds the newest edge of an iteration in `[p - k, p]`,
/// waiting only when the newest one arrived is older than `p - k`. Edges
/// arrive in order (MPI's non-overtaking rule); one receive is always
/// posted until the neighbour's last message.
struct Ghost<'c> {
    comm: &'c Comm,
    neighbour: i32,
    posted: Option<hc_mpi::Request<Vec<f64>>>,
    /// An edge received ahead of the iteration that may use it.
    held: Option<(f64, f64)>,
    /// The iteration of the edge in use.
    iteration: Option<u64>,
}

impl<'c> Ghost<'c> {
    fn new(comm: &'c Comm, neighbour: i32) -> Result<Ghost<'c>, JacobiError> {
        let posted = Some(comm.irecv(vec![0.0; 2], neighbour, EDGE)?);
        Ok(Ghost {
            comm,
            neighbour,
            posted,
            held: None,
            iteration: None,
        })
    }

    /// The ghost value for iteration `p`, or `None` to keep the current one.
    async fn refresh(&mut self, p: u64, k: u64) -> Result<Option<f64>, JacobiError> {
        let mut value = None;
        loop {
            if let Some((i, v)) = self.held {
                if i > p as f64 {
                    return Ok(value); // an edge for a later iteration
                }
                self.held = None;
                self.iteration = Some(i as u64);
                value = Some(v);
            }
            let stale = self.iteration.is_none_or(|i| i + k < p);
            let request = self.posted.take().expect("a receive is posted");
            let buffer = if stale {
                request.await?.0
            } else {
                match request.try_wait() {
                    Ok(outcome) => outcome?.0,
                    Err(request) => {
                        self.posted = Some(request);
                        return Ok(value);
                    }
                }
            };
            if buffer[0] == LAST {
                // The neighbour stopped at this same iteration, but ran
                // ahead within the staleness bound: keep its last edge for
                // `finish`.
                self.held = Some((f64::INFINITY, buffer[1]));
                return Ok(value);
            }
            self.held = Some((buffer[0], buffer[1]));
            self.posted = Some(self.comm.irecv(vec![0.0; 2], self.neighbour, EDGE)?);
        }
    }

    /// After the last iteration: the neighbour's current edge, having
    /// received every message it sent.
    async fn finish(mut self) -> Result<f64, JacobiError> {
        let Some(mut request) = self.posted.take() else {
            let (_, last) = self.held.expect("the last edge arrived");
            return Ok(last);
        };
        loop {
            let buffer = request.await?.0;
            if buffer[0] == LAST {
                return Ok(buffer[1]);
            }
            request = self.comm.irecv(vec![0.0; 2], self.neighbour, EDGE)?;
        }
    }
}

async fn solve(hc: &Hcmpi, args: &Args) -> Result<Outcome, JacobiError> {
    let world: &Comm = hc.world();
    let (rank, size) = (hc.rank(), hc.size());
    let (n, k) = (args.n, args.staleness);
    let left = (rank > 0).then(|| rank - 1);
    let right = (rank + 1 < size).then(|| rank + 1);
    let mut block = Block {
        u: vec![0.0; n + 2],
        next: vec![0.0; n + 2],
        diagonal: 2.0 + args.sigma,
    };
    let b_norm2 = (n as f64) * f64::from(size);
    let delay = match args.slow_rank {
        Some(slow) if slow == rank => Duration::from_micros(args.delay_us),
        _ => Duration::ZERO,
    };
    let acc = StaleAccum::create(world, Reduction::op(AccumOp::Sum)?, Staleness::Bounded(k))?;
    let mut ghost_left = left.map(|l| Ghost::new(world, l)).transpose()?;
    let mut ghost_right = right.map(|r| Ghost::new(world, r)).transpose()?;
    let mut sends = Vec::new();
    let send = |sends: &mut Vec<_>, to: Option<i32>, words: [f64; 2]| {
        if let Some(to) = to {
            sends.push(world.isend(words.to_vec(), to, EDGE)?);
        }
        Ok::<(), JacobiError>(())
    };
    world.ibarrier().await?;
    let start = Instant::now();
    let found = {
        let mut member = acc.join();
        let mut found = None;
        let mut last = f64::INFINITY;
        for p in 0..args.max_iters {
            spin(delay + jitter(rank, p, args.jitter_us));
            send(&mut sends, left, [p as f64, block.u[1]])?;
            send(&mut sends, right, [p as f64, block.u[n]])?;
            let mut r2 = block.sweep(2..n);
            if let Some(ghost) = &mut ghost_left {
                if let Some(v) = ghost.refresh(p, k).await? {
                    block.u[0] = v;
                }
            }
            if let Some(ghost) = &mut ghost_right {
                if let Some(v) = ghost.refresh(p, k).await? {
                    block.u[n + 1] = v;
                }
            }
            r2 += block.sweep(1..2) + block.sweep(n..n + 1);
            std::mem::swap(&mut block.u, &mut block.next);
            // The ghosts stay until a newer edge replaces them.
            block.u[0] = block.next[0];
            block.u[n + 1] = block.next[n + 1];
            if p % 64 == 63 {
                sends = sends
                    .into_iter()
                    .filter_map(|request: hc_mpi::Request<Vec<f64>>| request.try_wait().err())
                    .collect();
            }
            member.advance(r2).await?;
            // Complete on every rank now, and the same bits everywhere, so
            // every rank stops at the same iteration.
            if let Some(checked) = p.checked_sub(k) {
                last = (member.result(checked)?.value / b_norm2).sqrt();
                if last <= args.tol {
                    found = Some(p + 1);
                    break;
                }
            }
        }
        found.ok_or(JacobiError::NoConvergence {
            tol: args.tol,
            iters: args.max_iters,
            residual: last,
        })
    };
    let seconds = start.elapsed().as_secs_f64();
    // The residual of the final iterate, with current ghosts.
    send(&mut sends, left, [LAST, block.u[1]])?;
    send(&mut sends, right, [LAST, block.u[n]])?;
    if let Some(ghost) = ghost_left {
        block.u[0] = ghost.finish().await?;
    }
    if let Some(ghost) = ghost_right {
        block.u[n + 1] = ghost.finish().await?;
    }
    for request in sends {
        request.await?;
    }
    acc.close().await?;
    let iterations = found?;
    let totals = world
        .iallreduce(vec![block.residual2()], ReduceOp::Sum)?
        .await?
        .0;
    let slowest = world.iallreduce(vec![seconds], ReduceOp::Max)?.await?.0;
    Ok(Outcome {
        iterations,
        seconds: slowest[0],
        residual: (totals[0] / b_norm2).sqrt(),
    })
}

fn check(args: &Args, size: i32) -> Result<(), JacobiError> {
    if let Some(rank) = args.slow_rank.filter(|&r| r < 0 || r >= size) {
        return Err(JacobiError::NoSuchRank { rank, size });
    }
    if args.n < 2 {
        return Err(JacobiError::TooFewPoints(args.n));
    }
    if !(args.sigma.is_finite() && args.sigma > 0.0) {
        return Err(JacobiError::BadSigma(args.sigma));
    }
    if !(args.tol.is_finite() && args.tol > 0.0) {
        return Err(JacobiError::BadTolerance(args.tol));
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    let hc = match Hcmpi::init() {
        Ok(hc) => hc,
        Err(e) => {
            eprintln!("ssp_jacobi: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (rank, size) = (hc.rank(), hc.size());
    // Every rank sees the same arguments, so every rank refuses them alike.
    if let Err(e) = check(&args, size) {
        eprintln!("rank {rank}/{size}: ssp_jacobi: {e}");
        return ExitCode::FAILURE;
    }
    match hc.block_on(solve(&hc, &args)) {
        Ok(outcome) if rank == 0 => {
            if args.json {
                let line = serde_json::json!({
                    "staleness": args.staleness,
                    "iterations": outcome.iterations,
                    "seconds": outcome.seconds,
                    "residual": outcome.residual,
                    "ranks": size,
                });
                println!("{line}");
            } else {
                println!(
                    "staleness {}: {} iterations, {:.3} s, residual {:.3e}, {} ranks",
                    args.staleness, outcome.iterations, outcome.seconds, outcome.residual, size
                );
            }
            ExitCode::SUCCESS
        }
        Ok(_) => ExitCode::SUCCESS,
        // The other ranks may be waiting for this one: end them all.
        Err(e) if size > 1 => hc.abort(1, &format!("ssp_jacobi: {e}")),
        Err(e) => {
            eprintln!("rank {rank}/{size}: ssp_jacobi: {e}");
            ExitCode::FAILURE
        }
    }
}
