//! `mpi-ws`: MPI-only work stealing, one single-threaded rank per core — the
//! reference implementation (`uts_dm.c` + `mpi_workstealing.c`), the
//! baseline of the HCMPI paper.
//!
//! Each rank explores its [`LocalStack`] and, every `-i` nodes (0: adaptive,
//! as in the reference), makes progress on the stealing protocol. MPI is
//! called directly through rsmpi (`MPI_THREAD_SINGLE`).
//!
//! # Steal protocol
//!
//! 1. **Victim side** (every poll, and in the idle loop): a matched probe
//!    (`MPI_Improbe`) for a [`TAG_WORK_REQUEST`] message from any rank. If
//!    one is there it is received; the victim answers with a chunk of `-c`
//!    nodes released from the bottom of its stack if it has more than two
//!    chunks of local work, otherwise with an empty "no work" message
//!    ([`TAG_WORK_RESPONSE`]). The thief that receives a chunk is tainted
//!    for the token ring (Safra's rule, see
//!    [`termination`](crate::uts::termination)).
//! 2. **Adaptive polling** (`-i 0`): the interval starts at 1 node, grows by
//!    4 (up to 1024) after every poll that finds no request while the rank
//!    has work, and drops back to 1 when a request is answered.
//! 3. **Thief side** (the idle loop, entered when the stack is empty): unless
//!    termination has been detected (PINK), a rank with no request in flight
//!    sends one to the next rank in round-robin order (skipping itself),
//!    then polls for that victim's answer with a matched probe while it keeps
//!    serving requests (step 1) and watching for the token. A non-empty
//!    answer is pushed onto the stack and the rank goes back to work.
//! 4. **Termination**: the idle loop receives the token from the left
//!    neighbour (matched probe on [`TAG_TOKEN`]) and, being passive, hands it
//!    to [`TokenRing::passive`] and forwards what it returns. The rank stops
//!    once it turns RED. The PINK wave guarantees that every steal request
//!    and answer has been received by then, so no message is left unmatched.
//!
//! The reference keeps standing `MPI_Irecv`s for requests and tokens; the
//! matched probes used here receive exactly the same messages without any
//! request outliving a loop iteration. Answers and tokens are sent with
//! `MPI_Send`: a rank that sends a chunk has work, so its thief is in its
//! idle loop, probing, and receives it; everything else is small.

use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::binding::{self, bind_rank_like_hcmpi};
use crate::uts::chunk::{
    decode_into, encode_into, RunError, StealParams, TAG_TOKEN, TAG_WORK_REQUEST, TAG_WORK_RESPONSE,
};
use crate::uts::local::LocalStack;
use crate::uts::progress;
use crate::uts::stats::{
    polling_backoff, snooze, Phase, PhaseTimer, RankTotals, RunReport, StealCounts, WorkerReport,
};
use crate::uts::termination::{Token, TokenRing};
use crate::uts::tree::{Node, Tree};

/// Largest adaptive polling interval (the reference's `pollint_max`).
const POLL_MAX: u32 = 1024;
/// Adaptive growth per fruitless poll (the reference's `POLLINT_GROW`).
const POLL_GROW: u32 = 4;

/// Runs the search on every rank of `MPI_COMM_WORLD` (initializes and
/// finalizes MPI). Each rank's thread is bound to CPUs as hcmpi mode binds
/// a rank's worker (`HCMPI_BIND`, see [`crate::binding`]). The report is
/// complete on rank 0.
///
/// # Errors
/// If `HCMPI_BIND` is bad or the thread cannot be bound, MPI is already
/// initialized, or a malformed message arrives.
pub fn run(tree: &Tree, params: StealParams) -> Result<RunReport, RunError> {
    let bind_error = |source| RunError::Bind {
        mode: "mpi-ws",
        source,
    };
    // Read before MPI starts: a bad value is this rank's error alone.
    let binding = binding::requested().map_err(bind_error)?;
    let universe = mpi::initialize().ok_or(RunError::MpiAlreadyInitialized)?;
    let world = universe.world();
    // A panic here would leave the other ranks waiting for this one.
    let _guard = hc_mpi::AbortJobOnPanic::new("uts");
    super::fingerprint(tree, &params).agree_on_world("uts", &world);
    // On the same terms as hcmpi mode's workers; a failure ends the job
    // while MPI is up.
    let bound = crate::job::abort_world_on_error(
        &world,
        "uts",
        bind_rank_like_hcmpi(&world, binding).map_err(bind_error),
    )?;
    let (rank, size) = (world.rank(), world.size());
    world.barrier();
    let start = Instant::now();
    let mut ws = WsRank::new(&world, tree, params);
    if rank == 0 {
        ws.stack.push(&tree.root());
    }
    // A rank that fails ends the job while MPI is still up: the others
    // would wait for it forever.
    let worker = crate::job::abort_world_on_error(&world, "uts", ws.search())?;
    let seconds = start.elapsed().as_secs_f64();
    let totals = reduce_totals(&world, RankTotals::of(&[worker]));
    let mut report = totals.into_report(size as u32, 1, rank == 0, seconds);
    report.bound = Some(bound);
    Ok(report)
}

/// Sums (and maxima) of every rank's totals on rank 0.
/// The thief's side of a steal: takes the answer of the victim in
/// `outstanding` if it has arrived, and counts it in the token ring and in
/// `steals`. An empty answer means "no work".
pub(crate) fn take_steal_answer(
    world: &SimpleCommunicator,
    outstanding: &mut Option<i32>,
    ring: &mut TokenRing,
    steals: &mut StealCounts,
) -> Option<Vec<u32>> {
    let victim = (*outstanding)?;
    let probed = world
        .process_at_rank(victim)
        .immediate_matched_probe_with_tag(TAG_WORK_RESPONSE)?;
    let (words, _): (Vec<u32>, _) = probed.matched_receive_vec();
    *outstanding = None;
    if words.is_empty() {
        ring.ctrl_received();
        steals.steals_failed += 1;
    } else {
        ring.chunk_received();
        steals.steals_ok += 1;
    }
    Some(words)
}

pub(crate) fn reduce_totals(world: &SimpleCommunicator, mine: RankTotals) -> RankTotals {
    let root = world.process_at_rank(0);
    if world.rank() != 0 {
        root.reduce_into(&mine.sums[..], SystemOperation::sum());
        root.reduce_into(&mine.max_depth, SystemOperation::max());
        root.reduce_into(&mine.times[..], SystemOperation::sum());
        return mine;
    }
    let mut all = RankTotals::default();
    root.reduce_into_root(&mine.sums[..], &mut all.sums[..], SystemOperation::sum());
    root.reduce_into_root(&mine.max_depth, &mut all.max_depth, SystemOperation::max());
    root.reduce_into_root(&mine.times[..], &mut all.times[..], SystemOperation::sum());
    all
}

/// One rank of the reference algorithm.
struct WsRank<'a, 't> {
    world: &'a SimpleCommunicator,
    rank: i32,
    size: i32,
    stack: LocalStack<'t>,
    ring: TokenRing,
    params: StealParams,
    interval: u32,
    adaptive: bool,
    /// Rank of the last steal request (round robin).
    last_steal: i32,
    /// Victim of the steal request in flight.
    outstanding: Option<i32>,
    timer: PhaseTimer,
    steals: StealCounts,
    nodes: Vec<Node>,
    words: Vec<u32>,
}

impl<'a, 't> WsRank<'a, 't> {
    fn new(world: &'a SimpleCommunicator, tree: &'t Tree, params: StealParams) -> Self {
        let (rank, size) = (world.rank(), world.size());
        let adaptive = params.poll_interval == 0;
        WsRank {
            world,
            rank,
            size,
            stack: LocalStack::new(tree),
            ring: TokenRing::new(rank, size),
            params,
            interval: if adaptive { 1 } else { params.poll_interval },
            adaptive,
            last_steal: rank,
            outstanding: None,
            timer: PhaseTimer::new(Phase::Work),
            steals: StealCounts::default(),
            nodes: Vec::with_capacity(params.chunk),
            words: Vec::new(),
        }
    }

    /// The reference's `parTreeSearch`.
    fn search(mut self) -> Result<WorkerReport, RunError> {
        loop {
            while !self.stack.is_empty() {
                if self.size == 1 {
                    // Alone: no one to answer, so no polling between
                    // slices; a batch per slice is as good as any size.
                    self.stack.explore(progress::BATCH as u32);
                    continue;
                }
                self.stack.explore(self.interval);
                self.timer.switch(Phase::Overhead);
                self.make_progress();
                self.timer.switch(Phase::Work);
            }
            if !self.ensure_local_work()? {
                break;
            }
        }
        Ok(WorkerReport {
            counts: self.stack.stats(),
            times: self.timer.finish(),
            steals: self.steals,
        })
    }

    /// Protocol steps 1–2: answer one pending steal request, if any.
    fn make_progress(&mut self) -> bool {
        let Some(probed) = self
            .world
            .any_process()
            .immediate_matched_probe_with_tag(TAG_WORK_REQUEST)
        else {
            if self.adaptive && !self.stack.is_empty() {
                self.interval = (self.interval + POLL_GROW).min(POLL_MAX);
            }
            return false;
        };
        let thief = probed.1.source_rank();
        let _request: (Vec<u32>, _) = probed.matched_receive_vec();
        self.ring.ctrl_received();
        let thief_process = self.world.process_at_rank(thief);
        if self.stack.local_work() > self.params.surplus_threshold() {
            self.nodes.clear();
            self.stack.release(self.params.chunk, &mut self.nodes);
            self.words.clear();
            encode_into(&self.nodes, &mut self.words);
            thief_process.send_with_tag(&self.words[..], TAG_WORK_RESPONSE);
            self.ring.chunk_sent();
            self.steals.released += 1;
        } else {
            thief_process.send_with_tag(&[0u32; 0][..], TAG_WORK_RESPONSE);
            self.ring.ctrl_sent();
        }
        if self.adaptive && !self.stack.is_empty() {
            self.interval = 1;
        }
        true
    }

    /// The reference's `ensureLocalWork` (protocol steps 3–4): returns
    /// `true` once the stack has work, `false` when the search is over.
    fn ensure_local_work(&mut self) -> Result<bool, RunError> {
        if self.size == 1 {
            return Ok(false);
        }
        let mut backoff = polling_backoff();
        loop {
            let mut progress = false;
            self.timer.switch(if self.ring.stop_stealing() {
                Phase::Idle
            } else {
                Phase::Search
            });
            if self.outstanding.is_none() && !self.ring.stop_stealing() {
                self.last_steal = (self.last_steal + 1) % self.size;
                if self.last_steal == self.rank {
                    self.last_steal = (self.last_steal + 1) % self.size;
                }
                self.world
                    .process_at_rank(self.last_steal)
                    .send_with_tag(&[self.params.chunk as u32][..], TAG_WORK_REQUEST);
                self.ring.ctrl_sent();
                self.outstanding = Some(self.last_steal);
            }
            progress |= self.make_progress();
            if let Some(words) = take_steal_answer(
                self.world,
                &mut self.outstanding,
                &mut self.ring,
                &mut self.steals,
            ) {
                progress = true;
                if !words.is_empty() {
                    self.nodes.clear();
                    decode_into(&words, &mut self.nodes)?;
                    self.stack.push_all(&self.nodes);
                }
            }
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
            if !self.stack.is_empty() {
                self.timer.switch(Phase::Work);
                return Ok(true);
            }
            if self.ring.holds_token() {
                if let Some(token) = self.ring.passive() {
                    self.world
                        .process_at_rank(self.ring.right())
                        .send_with_tag(&token.encode()[..], TAG_TOKEN);
                }
                progress = true;
            }
            if self.ring.is_terminated() {
                // Termination proved that no control message is in flight.
                if let Some(victim) = self.outstanding {
                    return Err(RunError::UnansweredSteal { victim });
                }
                return Ok(false);
            }
            if progress {
                backoff.reset();
            } else {
                snooze(&mut backoff);
            }
        }
    }
}
