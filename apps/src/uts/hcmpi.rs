//! `hcmpi`: the paper's UTS (§IV-B of Chatterjee et al., IPDPS 2013) — one
//! rank per node, `--workers` computation workers exploring the tree with
//! shared-memory work stealing, and hc-mpi's communication worker carrying
//! the reference's inter-rank steal protocol and termination token.
//!
//! # Structure
//!
//! [`run`] starts [`Hcmpi`] and, inside one `finish`, spawns one long-running
//! *search task* per computation worker. Each task owns
//!
//! * a [`LocalStack`] — the small, unsynchronized local stack of the paper;
//! * a crossbeam-deque [`Worker<Chunk>`] for its surplus, and sees every
//!   task's [`Stealer`].
//!
//! The inter-rank state — the standing receives, the global steal in flight,
//! the token ring — lives in one `RankComm` behind a mutex that tasks only
//! ever `try_lock`: whoever holds it *is* the paper's listener / global
//! stealer for the moment. No task ever blocks on a request (a
//! `Request::wait` inside a search task would let the worker run another,
//! never-ending search task nested inside it); requests are polled with
//! `Request::test`, an atomic load.
//!
//! # Protocols
//!
//! 1. **Surplus** (every `-i` nodes): a task whose stack holds more than two
//!    chunks (`2 × -c` nodes) releases a chunk from the bottom of its stack
//!    into its deque, as long as the deque holds fewer than
//!    [`DEQUE_CAP`] chunks. A task whose stack runs dry pops its own deque
//!    (LIFO) before it counts itself idle.
//! 2. **Local steal**: an idle task steals (FIFO: the oldest, largest work)
//!    from the other tasks' deques, round robin from its right neighbour. It
//!    leaves the idle count *before* it steals and re-enters it if the steal
//!    fails, so that `idle == workers` proves the rank passive (step 6).
//! 3. **Listener**: a standing `irecv(ANY_SOURCE, TAG_WORK_REQUEST)`. It is
//!    tested by idle tasks (under the lock) in their idle loop, and by
//!    task 0 about every [`BUSY_VISIT_NODES`] nodes when no task is idle. The holder takes a chunk
//!    from the deques (FIFO end; task 0 may also release one from its own
//!    stack) and isends it back, or an empty "no work" answer, then re-posts
//!    the receive. The rank that receives a chunk is tainted for the
//!    token ring (Safra's rule, see [`termination`](crate::uts::termination)).
//! 4. **Global steal**: an idle task that finds every deque empty, holding
//!    the lock, with no global steal in flight and no termination detected,
//!    posts `irecv(victim, TAG_WORK_RESPONSE)` and isends a request to the
//!    next rank in round-robin order. Other tasks keep working or stealing
//!    locally meanwhile (the paper's overlap of search with computation).
//!    Whoever holds the lock when the answer has arrived takes it: an idle
//!    task leaves the idle count (still under the lock) and explores the
//!    chunk; task 0 while busy pushes it onto its deque.
//! 5. **Token**: a standing `irecv(left, TAG_TOKEN)`, re-posted after each
//!    token is passed on, tested by the lock holder.
//! 6. **Termination**: an idle lock holder that sees `idle == workers`
//!    knows the rank is passive — every task went idle only after finding
//!    its own deque empty, only a deque's owner pushes to it, and a task
//!    leaves the idle count before it takes any work — and hands the held
//!    token to [`TokenRing::passive`], isending what it returns. When the
//!    rank turns RED it raises the `done` flag, and every task returns. With
//!    one rank, `idle == workers` is termination itself.
//! 7. **Clean-up**: the inter-rank operations are started
//!    [`hc_runtime::outside_finish`], so the search `finish` does not wait
//!    for the standing receives; after it, the standing request receive is
//!    cancelled and every send is waited for, so hc-mpi shuts down with no
//!    pending operation (the PINK wave has already received every request
//!    and answer; no token receive is re-posted once RED).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crossbeam_deque::{Steal, Stealer, Worker};
use hc_mpi::{Comm, Hcmpi, ReduceOp, Request, ANY_SOURCE};

use crate::uts::chunk::{
    decode, encode, Chunk, RunError, StealParams, TAG_TOKEN, TAG_WORK_REQUEST, TAG_WORK_RESPONSE,
    WORDS_PER_NODE,
};
use crate::uts::local::LocalStack;
use crate::uts::stats::{
    polling_backoff, snooze, Phase, PhaseTimer, RankTotals, RunReport, StealCounts, WorkerReport,
};
use crate::uts::termination::{Token, TokenRing, TOKEN_WORDS};
use crate::uts::tree::Tree;

/// Most chunks a task keeps in its deque (protocol step 1).
pub const DEQUE_CAP: usize = 2;

/// Task 0 visits the inter-rank state while busy about once per this many
/// nodes (protocol step 3): a `try_lock` and a few atomic loads, a few
/// microseconds apart — far more often than the reference's adaptive
/// interval (up to 1024 nodes) lets an MPI rank answer.
pub const BUSY_VISIT_NODES: u32 = 64;

/// Runs the search on every rank (starts hc-mpi, which initializes MPI, and
/// shuts it down). `workers` overrides `HC_WORKERS`. The report is complete
/// on rank 0.
///
/// # Errors
/// If hc-mpi cannot start, an MPI operation fails or a malformed message
/// arrives.
pub fn run(
    tree: &Tree,
    params: StealParams,
    workers: Option<usize>,
) -> Result<RunReport, RunError> {
    let mut builder = Hcmpi::builder();
    if let Some(n) = workers {
        builder = builder.workers(n);
    }
    let hc = builder.build()?;
    let world = hc.world().clone();
    let (rank, size) = (world.rank(), world.size());
    let nworkers = hc.runtime().num_workers();
    world.barrier()?;

    let start = Instant::now();
    let deques: Vec<Worker<Chunk>> = (0..nworkers).map(|_| Worker::new_lifo()).collect();
    let comm = if size > 1 {
        Some(RankComm::new(world.clone(), params)?)
    } else {
        None
    };
    let shared = RankShared {
        tree,
        params,
        rank,
        size,
        nworkers,
        stealers: deques.iter().map(Worker::stealer).collect(),
        idle: AtomicUsize::new(0),
        pink: AtomicBool::new(false),
        done: AtomicBool::new(false),
        comm: Mutex::new(comm),
        error: Mutex::new(None),
    };
    let mut reports = vec![WorkerReport::default(); nworkers];
    hc.finish(|s| {
        for ((index, deque), slot) in deques.into_iter().enumerate().zip(reports.iter_mut()) {
            let shared = &shared;
            s.spawn(move |_| *slot = SearchTask::new(shared, index, deque).run());
        }
    });
    let seconds = start.elapsed().as_secs_f64();

    let RankShared { comm, error, .. } = shared;
    if let Some(e) = error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    if let Some(comm) = comm.into_inner().unwrap_or_else(|p| p.into_inner()) {
        comm.shut_down()?;
    }

    let mine = RankTotals::of(&reports);
    let sums = world.reduce(mine.sums.to_vec(), ReduceOp::Sum, 0)?;
    let max_depth = world.reduce(vec![mine.max_depth], ReduceOp::Max, 0)?;
    let times = world.reduce(mine.times.to_vec(), ReduceOp::Sum, 0)?;
    let totals = if rank == 0 {
        RankTotals {
            sums: sums.try_into().expect("reduce keeps the length"),
            max_depth: max_depth[0],
            times: times.try_into().expect("reduce keeps the length"),
        }
    } else {
        mine
    };
    drop(hc);
    Ok(totals.into_report(size as u32, nworkers as u32, rank == 0, seconds))
}

/// What the search tasks of one rank share.
struct RankShared<'t> {
    tree: &'t Tree,
    params: StealParams,
    rank: i32,
    size: i32,
    nworkers: usize,
    stealers: Vec<Stealer<Chunk>>,
    /// Tasks in their idle loop (protocol steps 2 and 6).
    idle: AtomicUsize,
    /// Termination has been detected (idle time is no longer search time).
    pink: AtomicBool,
    /// The search is over.
    done: AtomicBool,
    /// Inter-rank state; `None` with one rank.
    comm: Mutex<Option<RankComm>>,
    /// The first error; it also ends the search on this rank.
    error: Mutex<Option<RunError>>,
}

impl RankShared<'_> {
    fn fail(&self, e: RunError) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(e);
        self.done.store(true, Ordering::Release);
    }

    /// A chunk from any deque, oldest first.
    fn steal_any(&self, from: usize) -> Option<Chunk> {
        let n = self.stealers.len();
        for k in 0..n {
            let stealer = &self.stealers[(from + k) % n];
            loop {
                match stealer.steal() {
                    Steal::Success(chunk) => return Some(chunk),
                    Steal::Empty => break,
                    Steal::Retry => continue,
                }
            }
        }
        None
    }
}

/// The inter-rank state of a rank (protocol steps 3–7).
struct RankComm {
    world: Comm,
    ring: TokenRing,
    params: StealParams,
    /// Standing receive for steal requests.
    listener: Option<Request<Vec<u32>>>,
    /// Standing receive for the token.
    token_rx: Option<Request<Vec<u64>>>,
    /// The global steal in flight: victim and the receive for its answer.
    steal: Option<(i32, Request<Vec<u32>>)>,
    /// Sends not yet known to be complete.
    sends: Vec<Request<Vec<u32>>>,
    token_sends: Vec<Request<Vec<u64>>>,
    last_steal: i32,
}

/// Outcome of one visit of the lock holder.
#[derive(Debug, Default)]
struct Visit {
    /// Something happened (for the back-off).
    progress: bool,
    /// A chunk from another rank, for the caller.
    chunk: Option<Chunk>,
}

impl RankComm {
    fn new(world: Comm, params: StealParams) -> Result<Self, RunError> {
        let ring = TokenRing::new(world.rank(), world.size());
        let mut comm = RankComm {
            last_steal: world.rank(),
            world,
            ring,
            params,
            listener: None,
            token_rx: None,
            steal: None,
            sends: Vec::new(),
            token_sends: Vec::new(),
        };
        comm.post_listener()?;
        comm.post_token_rx()?;
        Ok(comm)
    }

    fn post_listener(&mut self) -> Result<(), RunError> {
        self.listener = Some(
            self.world
                .irecv(vec![0u32; 1], ANY_SOURCE, TAG_WORK_REQUEST)?,
        );
        Ok(())
    }

    fn post_token_rx(&mut self) -> Result<(), RunError> {
        if self.ring.wants_token() && self.token_rx.is_none() {
            let left = self.ring.left();
            self.token_rx = Some(self.world.irecv(vec![0u64; TOKEN_WORDS], left, TAG_TOKEN)?);
        }
        Ok(())
    }

    /// Protocol step 3: answer a steal request if one has arrived, with a
    /// chunk from `supply` or "no work".
    fn serve_listener(&mut self, supply: impl FnOnce() -> Option<Chunk>) -> Result<bool, RunError> {
        if !self.listener.as_ref().is_some_and(Request::test) {
            return Ok(false);
        }
        let request = self.listener.take().expect("tested above");
        let (_, status) = request
            .try_wait()
            .map_err(|_| RunError("listener: completed request not ready".into()))??;
        self.ring.ctrl_received();
        self.post_listener()?;
        let thief = status.source;
        match supply() {
            Some(chunk) => {
                self.sends
                    .push(self.world.isend(encode(&chunk), thief, TAG_WORK_RESPONSE)?);
                self.ring.chunk_sent();
            }
            None => {
                self.sends
                    .push(self.world.isend(Vec::new(), thief, TAG_WORK_RESPONSE)?);
                self.ring.ctrl_sent();
            }
        }
        Ok(true)
    }

    /// Protocol step 4, second half: the answer to our global steal.
    fn poll_steal(&mut self, counts: &mut StealCounts) -> Result<Option<Option<Chunk>>, RunError> {
        if !self.steal.as_ref().is_some_and(|(_, r)| r.test()) {
            return Ok(None);
        }
        let (_, request) = self.steal.take().expect("tested above");
        let (words, _) = request
            .try_wait()
            .map_err(|_| RunError("steal: completed request not ready".into()))??;
        if words.is_empty() {
            self.ring.ctrl_received();
            counts.steals_failed += 1;
            Ok(Some(None))
        } else {
            self.ring.chunk_received();
            counts.steals_ok += 1;
            Ok(Some(Some(decode(&words)?)))
        }
    }

    /// Protocol step 4, first half.
    fn start_steal(&mut self) -> Result<(), RunError> {
        let size = self.world.size();
        self.last_steal = (self.last_steal + 1) % size;
        if self.last_steal == self.world.rank() {
            self.last_steal = (self.last_steal + 1) % size;
        }
        let victim = self.last_steal;
        let answer = self.world.irecv(
            vec![0u32; self.params.chunk * WORDS_PER_NODE],
            victim,
            TAG_WORK_RESPONSE,
        )?;
        self.steal = Some((victim, answer));
        self.sends.push(self.world.isend(
            vec![self.params.chunk as u32],
            victim,
            TAG_WORK_REQUEST,
        )?);
        self.ring.ctrl_sent();
        Ok(())
    }

    /// Protocol step 5: take the token if it has arrived.
    fn poll_token(&mut self) -> Result<bool, RunError> {
        if !self.token_rx.as_ref().is_some_and(Request::test) {
            return Ok(false);
        }
        let request = self.token_rx.take().expect("tested above");
        let (words, _) = request
            .try_wait()
            .map_err(|_| RunError("token: completed request not ready".into()))??;
        let token =
            Token::decode(&words).ok_or_else(|| RunError(format!("malformed token {words:?}")))?;
        self.ring.token_arrived(token);
        Ok(true)
    }

    /// Protocol step 6: the rank is passive.
    fn pass_token(&mut self) -> Result<bool, RunError> {
        if !self.ring.holds_token() {
            return Ok(false);
        }
        if let Some(token) = self.ring.passive() {
            let right = self.ring.right();
            self.token_sends
                .push(self.world.isend(token.encode(), right, TAG_TOKEN)?);
        }
        self.post_token_rx()?;
        Ok(true)
    }

    /// Forget completed sends, surfacing their errors.
    fn reap_sends(&mut self) -> Result<(), RunError> {
        fn reap<T: std::any::Any + Send>(list: &mut Vec<Request<T>>) -> Result<(), RunError> {
            let mut i = 0;
            while i < list.len() {
                if list[i].test() {
                    if let Some(Err(e)) = list[i].status() {
                        return Err(e.into());
                    }
                    list.swap_remove(i);
                } else {
                    i += 1;
                }
            }
            Ok(())
        }
        reap(&mut self.sends)?;
        reap(&mut self.token_sends)
    }

    /// Protocol step 7 (called from the main thread after the `finish`).
    fn shut_down(mut self) -> Result<(), RunError> {
        if let Some(listener) = self.listener.take() {
            self.world.cancel(&listener);
            match listener.wait() {
                Ok((_, status)) if status.cancelled => {}
                Ok((_, status)) => {
                    return Err(RunError(format!(
                        "a steal request from rank {} arrived after termination",
                        status.source
                    )))
                }
                Err(e) => return Err(e.into()),
            }
        }
        // Termination proved that no message is in flight: a token or a
        // steal answer that still arrives is a protocol error, never
        // dropped (a chunk would carry nodes that were never counted).
        if let Some(token_rx) = self.token_rx.take() {
            self.world.cancel(&token_rx);
            let (_, status) = token_rx.wait()?;
            if !status.cancelled {
                return Err(RunError(format!(
                    "a termination token from rank {} arrived after termination",
                    status.source
                )));
            }
        }
        if let Some((victim, steal)) = self.steal.take() {
            self.world.cancel(&steal);
            let (words, status) = steal.wait()?;
            if !status.cancelled {
                let what = if words.is_empty() {
                    "a \"no work\" answer"
                } else {
                    "a chunk"
                };
                return Err(RunError(format!(
                    "{what} from rank {} arrived after termination",
                    status.source
                )));
            }
            return Err(RunError(format!(
                "the search ended with a steal request to rank {victim} unanswered"
            )));
        }
        for send in self.sends.drain(..) {
            send.wait()?;
        }
        for send in self.token_sends.drain(..) {
            send.wait()?;
        }
        Ok(())
    }
}

/// One computation worker's search (protocol steps 1, 2 and its visits of
/// the `RankComm`).
struct SearchTask<'s, 't> {
    shared: &'s RankShared<'t>,
    index: usize,
    stack: LocalStack<'t>,
    deque: Worker<Chunk>,
    timer: PhaseTimer,
    steals: StealCounts,
}

impl<'s, 't> SearchTask<'s, 't> {
    fn new(shared: &'s RankShared<'t>, index: usize, deque: Worker<Chunk>) -> Self {
        SearchTask {
            shared,
            index,
            stack: LocalStack::new(shared.tree),
            deque,
            timer: PhaseTimer::new(Phase::Work),
            steals: StealCounts::default(),
        }
    }

    fn run(mut self) -> WorkerReport {
        let sh = self.shared;
        if sh.rank == 0 && self.index == 0 {
            self.stack.push(&sh.tree.root());
        }
        let interval = sh.params.threaded_interval();
        let threshold = sh.params.surplus_threshold();
        let listens = self.index == 0 && sh.size > 1;
        let mut since_visit = 0u32;
        loop {
            while !self.stack.is_empty() {
                since_visit += self.stack.explore(interval);
                if self.stack.local_work() > threshold && self.deque.len() < DEQUE_CAP {
                    self.timer.switch(Phase::Overhead);
                    let mut chunk = Vec::with_capacity(sh.params.chunk);
                    self.stack.release(sh.params.chunk, &mut chunk);
                    self.deque.push(chunk);
                    self.steals.released += 1;
                    self.timer.switch(Phase::Work);
                }
                if listens && since_visit >= BUSY_VISIT_NODES {
                    since_visit = 0;
                    if sh.idle.load(Ordering::Relaxed) == 0 {
                        self.busy_visit();
                    }
                }
            }
            self.timer.switch(Phase::Overhead);
            if let Some(chunk) = self.deque.pop() {
                self.stack.push_all(&chunk);
                self.timer.switch(Phase::Work);
                continue;
            }
            match self.idle_loop() {
                Some(chunk) => {
                    self.timer.switch(Phase::Overhead);
                    self.stack.push_all(&chunk);
                    self.timer.switch(Phase::Work);
                }
                None => break,
            }
        }
        WorkerReport {
            counts: self.stack.stats(),
            times: self.timer.finish(),
            steals: self.steals,
        }
    }

    /// Task 0's listener duty while busy and nobody is idle (step 3).
    fn busy_visit(&mut self) {
        let sh = self.shared;
        let Ok(mut guard) = sh.comm.try_lock() else {
            return;
        };
        let Some(comm) = guard.as_mut() else {
            return;
        };
        let threshold = sh.params.surplus_threshold();
        // Standing receives outlive the search `finish` (step 7).
        let result = hc_runtime::outside_finish(|| -> Result<(), RunError> {
            let stack = &mut self.stack;
            let timer = &mut self.timer;
            let released = &mut self.steals.released;
            comm.serve_listener(|| {
                timer.switch(Phase::Overhead);
                sh.steal_any(0).or_else(|| {
                    (stack.local_work() > threshold).then(|| {
                        let mut chunk = Vec::with_capacity(sh.params.chunk);
                        stack.release(sh.params.chunk, &mut chunk);
                        *released += 1;
                        chunk
                    })
                })
            })?;
            if let Some(Some(chunk)) = comm.poll_steal(&mut self.steals)? {
                self.timer.switch(Phase::Overhead);
                self.deque.push(chunk);
            }
            comm.poll_token()?;
            comm.reap_sends()
        });
        self.timer.switch(Phase::Work);
        if let Err(e) = result {
            sh.fail(e);
        }
    }

    /// Steps 2, 4 and 6: find work, or return `None` when the search is over.
    fn idle_loop(&mut self) -> Option<Chunk> {
        let sh = self.shared;
        let n = sh.nworkers;
        sh.idle.fetch_add(1, Ordering::SeqCst);
        let mut backoff = polling_backoff();
        loop {
            if sh.done.load(Ordering::Acquire) {
                return None;
            }
            self.timer.switch(if sh.pink.load(Ordering::Relaxed) {
                Phase::Idle
            } else {
                Phase::Search
            });
            for k in 1..n {
                let victim = &sh.stealers[(self.index + k) % n];
                if victim.is_empty() {
                    continue;
                }
                sh.idle.fetch_sub(1, Ordering::SeqCst);
                loop {
                    match victim.steal() {
                        Steal::Success(chunk) => {
                            self.steals.steals_ok += 1;
                            return Some(chunk);
                        }
                        Steal::Empty => break,
                        Steal::Retry => continue,
                    }
                }
                sh.idle.fetch_add(1, Ordering::SeqCst);
            }
            if sh.size == 1 {
                if sh.idle.load(Ordering::SeqCst) == n {
                    sh.done.store(true, Ordering::Release);
                    return None;
                }
            } else if let Ok(mut guard) = sh.comm.try_lock() {
                if let Some(comm) = guard.as_mut() {
                    // Standing receives outlive the search `finish` (step 7).
                    match hc_runtime::outside_finish(|| self.idle_visit(comm)) {
                        Ok(Visit {
                            chunk: Some(chunk), ..
                        }) => return Some(chunk),
                        Ok(Visit { progress: true, .. }) => backoff.reset(),
                        Ok(_) => {}
                        Err(e) => {
                            sh.fail(e);
                            return None;
                        }
                    }
                }
            }
            snooze(&mut backoff);
        }
    }

    /// One visit of the inter-rank state by an idle task (holding the lock).
    fn idle_visit(&mut self, comm: &mut RankComm) -> Result<Visit, RunError> {
        let sh = self.shared;
        let mut visit = Visit::default();
        visit.progress |= comm.serve_listener(|| sh.steal_any(self.index))?;
        match comm.poll_steal(&mut self.steals)? {
            Some(Some(chunk)) => {
                // Leave the idle count while still holding the lock, so no
                // other task can see this rank passive with work in hand.
                sh.idle.fetch_sub(1, Ordering::SeqCst);
                visit.chunk = Some(chunk);
                return Ok(visit);
            }
            Some(None) => visit.progress = true,
            None => {}
        }
        visit.progress |= comm.poll_token()?;
        if sh.idle.load(Ordering::SeqCst) == sh.nworkers {
            visit.progress |= comm.pass_token()?;
            if comm.ring.stop_stealing() {
                sh.pink.store(true, Ordering::Relaxed);
            }
            if comm.ring.is_terminated() {
                sh.done.store(true, Ordering::Release);
                return Ok(visit);
            }
        }
        if comm.steal.is_none()
            && !comm.ring.stop_stealing()
            && sh.stealers.iter().all(Stealer::is_empty)
        {
            comm.start_steal()?;
            visit.progress = true;
        }
        comm.reap_sends()?;
        Ok(visit)
    }
}
