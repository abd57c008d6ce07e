//! `hybrid`: MPI + rayon, the paper's MPI+OpenMP comparison (§IV-B): rayon
//! threads explore the tree with rayon's own work stealing inside a rank,
//! and one thread — the main thread, the only one that calls MPI
//! (`MPI_THREAD_FUNNELED`) — steals between ranks with the reference's
//! protocol and runs the termination token ring.
//!
//! # Structure
//!
//! The main thread initializes MPI, builds the rayon pool (`--workers`, else
//! `RAYON_NUM_THREADS`, else one thread per core) and enters
//! `ThreadPool::in_place_scope`: rayon tasks run on the pool while the main
//! thread, inside the scope, runs the MPI loop and can spawn into the scope.
//! An *exploration task* explores one chunk with a [`LocalStack`]; shared
//! state: a crossbeam [`Injector`] of chunks kept for other ranks, and
//! `active`, the number of exploration tasks spawned and not finished.
//!
//! # Protocols
//!
//! 1. **Surplus** (every `-i` nodes): a task whose stack holds more than two
//!    chunks releases a chunk from the bottom of its stack: into the
//!    injector if there are other ranks and the injector is empty (so that a
//!    steal request can be answered at once), otherwise as a new rayon task
//!    if fewer tasks than threads are queued (spawned and not started), so
//!    that rayon's thieves find work inside the rank without the surplus
//!    being chopped into more tasks than the pool can use. `active` is incremented before a
//!    spawn and decremented as a task's last action.
//! 2. **Requests** (MPI thread): matched probes for steal requests from any
//!    rank; each is answered with a chunk from the injector, or "no work".
//!    The rank that receives a chunk is tainted for the token ring.
//! 3. **Hunger** (MPI thread): when the pool has fewer tasks than threads
//!    and the injector is empty, the rank sends a global steal request to
//!    the next rank in round-robin order (one at a time, none once
//!    termination is detected) — even while other threads still work, the
//!    overlap the paper's improved MPI+OpenMP version has. A chunk that
//!    comes back is spawned into the scope. When the pool has no task at all
//!    but the injector has chunks, they are spawned back into the pool.
//! 4. **Termination** (MPI thread): `active == 0` and an empty injector,
//!    read in that order, mean the rank is passive (work lives only in tasks
//!    and in the injector, tasks feed the injector only while active, and
//!    only the MPI thread itself can start work on an idle pool). A passive
//!    rank passes the token ([`TokenRing::passive`]); RED ends the MPI loop,
//!    and the scope then returns.
//! 5. **Polling**: the MPI thread backs off with hc-runtime's back-off
//!    ([`polling_backoff`]) when a pass of its loop found nothing to do
//!    (spin, yield, then parks of at most 100 µs), so it does not take a
//!    core from the rayon threads.
//!
//! Times: each rayon thread's work and overhead are measured inside its
//! tasks; the rest of its wall time was spent in rayon looking for tasks —
//! search — or, once the token ring has detected termination, idle.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crossbeam_deque::{Injector, Steal};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Threading;

use crate::binding::{self, bind_pool_like_hcmpi};
use crate::uts::chunk::{
    decode, encode, Chunk, RunError, StealParams, TAG_TOKEN, TAG_WORK_REQUEST, TAG_WORK_RESPONSE,
};
use crate::uts::local::LocalStack;
use crate::uts::mpi_ws::{reduce_totals, take_steal_answer};
use crate::uts::seq::SearchStats;
use crate::uts::stats::{
    polling_backoff, snooze, Breakdown, Phase, PhaseTimer, RankTotals, RunReport, StealCounts,
    WorkerReport,
};
use crate::uts::termination::{Token, TokenRing};
use crate::uts::tree::Tree;

/// Runs the search on every rank (initializes and finalizes MPI). `threads`
/// overrides `RAYON_NUM_THREADS`; the rayon threads are bound to CPUs as
/// hcmpi mode binds its workers (`HCMPI_BIND`, see [`crate::binding`]).
/// The report is complete on rank 0.
///
/// # Errors
/// If `HCMPI_BIND` is bad or a thread cannot be bound, MPI cannot provide
/// `MPI_THREAD_FUNNELED`, the pool cannot start, or a malformed message
/// arrives.
pub fn run(
    tree: &Tree,
    params: StealParams,
    threads: Option<usize>,
) -> Result<RunReport, RunError> {
    let bind_error = |source| RunError::Bind {
        mode: "hybrid",
        source,
    };
    // Read before MPI starts: a bad value is this rank's error alone.
    let binding = binding::requested().map_err(bind_error)?;
    let (universe, provided) = mpi::initialize_with_threading(Threading::Funneled)
        .ok_or(RunError::MpiAlreadyInitialized)?;
    let world = universe.world();
    // A panic here would leave the other ranks waiting for this one.
    let _guard = hc_mpi::AbortJobOnPanic::new("uts");
    super::fingerprint(tree, &params).agree_on_world("uts", &world);
    // Every failure below ends the job while MPI is still up: a rank that
    // returned alone would leave the others waiting for it forever.
    let end_job = |error: RunError| crate::job::abort_world_on_error(&world, "uts", Err(error));
    if provided < Threading::Funneled {
        return end_job(RunError::ThreadLevel {
            mode: "hybrid",
            provided: hc_mpi::threading_name(provided),
            needed: "MPI_THREAD_FUNNELED",
        });
    }
    let (rank, size) = (world.rank(), world.size());
    let mut builder = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("uts-rayon-{i}"));
    if let Some(n) = threads {
        builder = builder.num_threads(n);
    }
    let pool = match builder.build() {
        Ok(pool) => pool,
        Err(source) => return end_job(RunError::RayonPool(source)),
    };
    // On the same terms as hcmpi mode's workers.
    let bound = match bind_pool_like_hcmpi(&world, &pool, binding) {
        Ok(bound) => bound,
        Err(error) => return end_job(bind_error(error)),
    };
    let nthreads = pool.current_num_threads();
    world.barrier();

    let start = Instant::now();
    let shared = Shared {
        tree,
        params,
        multi_rank: size > 1,
        injector: Injector::new(),
        active: AtomicUsize::new(0),
        queued: AtomicUsize::new(0),
        queue_cap: nthreads,
        threads: (0..nthreads)
            .map(|_| Mutex::new(ThreadTotals::default()))
            .collect(),
    };
    let mut side = MpiSide::new(&world, params);
    let outcome = pool.in_place_scope(|scope| {
        let sh = &shared;
        if rank == 0 {
            spawn(sh, scope, vec![tree.root()]);
        }
        if size > 1 {
            side.run(sh, scope, nthreads)
        } else {
            Ok(())
        }
    });
    let wall = start.elapsed();
    if let Err(error) = outcome {
        return end_job(error);
    }

    let idle = side
        .pink_since
        .map_or(Duration::ZERO, |t| t.elapsed().min(wall));
    let workers: Vec<WorkerReport> = shared
        .threads
        .iter()
        .enumerate()
        .map(|(i, slot)| {
            let t = *slot.lock().unwrap_or_else(|p| p.into_inner());
            let outside = (wall.as_secs_f64() - t.work - t.overhead).max(0.0);
            let idle = outside.min(idle.as_secs_f64());
            let mut steals = StealCounts {
                released: t.released,
                ..StealCounts::default()
            };
            if i == 0 {
                // global steals are the MPI thread's; book them on thread 0
                steals.steals_ok = side.steals.steals_ok;
                steals.steals_failed = side.steals.steals_failed;
            }
            WorkerReport {
                counts: t.counts,
                times: Breakdown {
                    work: t.work,
                    overhead: t.overhead,
                    search: outside - idle,
                    idle,
                },
                steals,
            }
        })
        .collect();
    let totals = reduce_totals(&world, RankTotals::of(&workers));
    let mut report =
        totals.into_report(size as u32, nthreads as u32, rank == 0, wall.as_secs_f64());
    report.bound = Some(bound);
    Ok(report)
}

/// What a rayon thread accumulated over the tasks it ran.
#[derive(Debug, Clone, Copy, Default)]
struct ThreadTotals {
    counts: SearchStats,
    work: f64,
    overhead: f64,
    released: u64,
}

/// State shared by the exploration tasks and the MPI thread.
struct Shared<'t> {
    tree: &'t Tree,
    params: StealParams,
    multi_rank: bool,
    /// Chunks kept for steal requests from other ranks.
    injector: Injector<Chunk>,
    /// Exploration tasks spawned and not finished.
    active: AtomicUsize,
    /// Exploration tasks spawned and not started.
    queued: AtomicUsize,
    /// Most queued tasks before surplus stays on the stacks.
    queue_cap: usize,
    /// Per rayon thread totals.
    threads: Vec<Mutex<ThreadTotals>>,
}

/// An exploration task (protocol step 1).
fn explore<'scope>(sh: &'scope Shared<'scope>, chunk: Chunk, scope: &rayon::Scope<'scope>) {
    sh.queued.fetch_sub(1, Ordering::Relaxed);
    let mut timer = PhaseTimer::new(Phase::Overhead);
    let mut stack = LocalStack::new(sh.tree);
    stack.push_all(&chunk);
    drop(chunk);
    timer.switch(Phase::Work);
    let interval = sh.params.threaded_interval();
    let threshold = sh.params.surplus_threshold();
    let mut released = 0u64;
    while !stack.is_empty() {
        stack.explore(interval);
        if stack.local_work() <= threshold {
            continue;
        }
        if sh.multi_rank && sh.injector.is_empty() {
            timer.switch(Phase::Overhead);
            let mut surplus = Vec::with_capacity(sh.params.chunk);
            stack.release(sh.params.chunk, &mut surplus);
            sh.injector.push(surplus);
            released += 1;
            timer.switch(Phase::Work);
        } else if sh.queued.load(Ordering::Relaxed) < sh.queue_cap {
            timer.switch(Phase::Overhead);
            let mut surplus = Vec::with_capacity(sh.params.chunk);
            stack.release(sh.params.chunk, &mut surplus);
            spawn(sh, scope, surplus);
            released += 1;
            timer.switch(Phase::Work);
        }
    }
    let times = timer.finish();
    let index = rayon::current_thread_index().unwrap_or(0);
    {
        let mut t = sh.threads[index].lock().unwrap_or_else(|p| p.into_inner());
        t.counts.merge(&stack.stats());
        t.work += times.work;
        t.overhead += times.overhead;
        t.released += released;
    }
    sh.active.fetch_sub(1, Ordering::SeqCst);
}

/// Spawns an exploration task for `chunk` (counted in `active` first).
fn spawn<'scope>(sh: &'scope Shared<'scope>, scope: &rayon::Scope<'scope>, chunk: Chunk) {
    sh.active.fetch_add(1, Ordering::SeqCst);
    sh.queued.fetch_add(1, Ordering::Relaxed);
    scope.spawn(move |s| explore(sh, chunk, s));
}

fn take_injected(injector: &Injector<Chunk>) -> Option<Chunk> {
    loop {
        match injector.steal() {
            Steal::Success(chunk) => return Some(chunk),
            Steal::Empty => return None,
            Steal::Retry => continue,
        }
    }
}

/// The MPI thread's side of the protocols (steps 2–5).
struct MpiSide<'a> {
    world: &'a SimpleCommunicator,
    rank: i32,
    size: i32,
    ring: TokenRing,
    params: StealParams,
    last_steal: i32,
    outstanding: Option<i32>,
    steals: StealCounts,
    pink_since: Option<Instant>,
}

impl<'a> MpiSide<'a> {
    fn new(world: &'a SimpleCommunicator, params: StealParams) -> Self {
        let (rank, size) = (world.rank(), world.size());
        MpiSide {
            world,
            rank,
            size,
            ring: TokenRing::new(rank, size),
            params,
            last_steal: rank,
            outstanding: None,
            steals: StealCounts::default(),
            pink_since: None,
        }
    }

    fn run<'scope>(
        &mut self,
        sh: &'scope Shared<'scope>,
        scope: &rayon::Scope<'scope>,
        nthreads: usize,
    ) -> Result<(), RunError> {
        let mut backoff = polling_backoff();
        while !self.ring.is_terminated() {
            let mut progress = false;
            // step 2
            while let Some(probed) = self
                .world
                .any_process()
                .immediate_matched_probe_with_tag(TAG_WORK_REQUEST)
            {
                let thief = probed.1.source_rank();
                let _request: (Vec<u32>, _) = probed.matched_receive_vec();
                self.ring.ctrl_received();
                let to = self.world.process_at_rank(thief);
                match take_injected(&sh.injector) {
                    Some(chunk) => {
                        to.send_with_tag(&encode(&chunk)[..], TAG_WORK_RESPONSE);
                        self.ring.chunk_sent();
                    }
                    None => {
                        to.send_with_tag(&[0u32; 0][..], TAG_WORK_RESPONSE);
                        self.ring.ctrl_sent();
                    }
                }
                progress = true;
            }
            // step 3: the answer to our steal
            if let Some(words) = take_steal_answer(
                self.world,
                &mut self.outstanding,
                &mut self.ring,
                &mut self.steals,
            ) {
                progress = true;
                if !words.is_empty() {
                    spawn(sh, scope, decode(&words)?);
                }
            }
            // step 3: refill an idle pool from the injector, or steal
            let active = sh.active.load(Ordering::SeqCst);
            if active == 0 {
                if let Some(chunk) = take_injected(&sh.injector) {
                    spawn(sh, scope, chunk);
                    continue;
                }
            }
            if active < nthreads
                && sh.injector.is_empty()
                && self.outstanding.is_none()
                && !self.ring.stop_stealing()
            {
                self.last_steal = (self.last_steal + 1) % self.size;
                if self.last_steal == self.rank {
                    self.last_steal = (self.last_steal + 1) % self.size;
                }
                self.world
                    .process_at_rank(self.last_steal)
                    .send_with_tag(&[self.params.chunk as u32][..], TAG_WORK_REQUEST);
                self.ring.ctrl_sent();
                self.outstanding = Some(self.last_steal);
                progress = true;
            }
            // step 4
            if self.ring.wants_token() {
                if let Some(probed) = self
                    .world
                    .process_at_rank(self.ring.left())
                    .immediate_matched_probe_with_tag(TAG_TOKEN)
                {
                    let (words, _): (Vec<u64>, _) = probed.matched_receive_vec();
                    let token = Token::decode(&words).ok_or(RunError::Malformed {
                        what: "a termination token",
                        rank: self.ring.left(),
                        words: words.len(),
                    })?;
                    self.ring.token_arrived(token);
                    progress = true;
                }
            }
            if self.ring.holds_token()
                && sh.active.load(Ordering::SeqCst) == 0
                && sh.injector.is_empty()
            {
                if let Some(token) = self.ring.passive() {
                    self.world
                        .process_at_rank(self.ring.right())
                        .send_with_tag(&token.encode()[..], TAG_TOKEN);
                }
                if self.ring.stop_stealing() && self.pink_since.is_none() {
                    self.pink_since = Some(Instant::now());
                }
                progress = true;
            }
            // step 5
            if progress {
                backoff.reset();
            } else {
                snooze(&mut backoff);
            }
        }
        // Termination proved that no control message is in flight.
        if let Some(victim) = self.outstanding {
            return Err(RunError::UnansweredSteal { victim });
        }
        Ok(())
    }
}
