//! `hcmpi`: the paper's UTS (§IV-B of Chatterjee et al., IPDPS 2013) — one
//! rank per node, `--workers` computation workers exploring the tree as
//! ordinary runtime tasks, and hc-mpi's communication engine carrying the
//! reference's inter-rank steal protocol and termination token as message
//! services.
//!
//! # Structure
//!
//! The search of a rank is a set of *chunk tasks* (detached hc-runtime
//! tasks). A chunk task takes one chunk from the rank's *pool* (a
//! crossbeam [`Injector`]) and explores it depth-first with a
//! [`LocalStack`] — the small, unsynchronized local stack of the paper.
//! Intra-rank load balance is the runtime's own work stealing of tasks; the
//! pool only holds the chunks those tasks will take, and the chunks a thief
//! from another rank may be given.
//!
//! The inter-rank protocol runs in three inline handlers of
//! [`Comm::serve`] on the communication engine (steal requests, steal
//! answers, the token). Their state — the [`TokenRing`], the global steal in
//! flight — lives in one `RankState` behind a mutex held only for short,
//! non-blocking critical sections: nothing under it calls into hc-mpi or
//! spawns (an `isend` may step the engine and run a handler, which takes
//! the mutex). What must be sent or spawned is collected in an `Outbox`
//! and done after the mutex is released.
//!
//! # Protocols
//!
//! 1. **Accounting**: `active` counts the chunk tasks spawned and not
//!    finished. Every chunk put into the pool is accompanied by one more
//!    chunk task, counted *before* the chunk is pushed, so `active == 0`
//!    means the pool is empty and no task runs: the rank is *passive*. A
//!    task may find the pool empty when it starts (a thief from another
//!    rank took the chunk); it just ends.
//! 2. **Surplus** (every `-i` nodes): a task whose stack holds more than two
//!    chunks (`2 × -c` nodes) releases a chunk from the bottom of its stack
//!    into the pool and spawns a chunk task for it, as long as the pool
//!    holds fewer than [`POOL_CAP_PER_WORKER`] chunks per worker. When
//!    the computation workers step the engine (shared placement, more than
//!    one rank), a task also steps it every [`PROGRESS_NODES`] nodes, so
//!    that steal requests and the token are handled while every worker is
//!    busy.
//! 3. **Steal request** (`TAG_WORK_REQUEST`): the handler answers at once
//!    with the oldest chunk of the pool, or an empty "no work" answer.
//! 4. **Global steal**: when fewer chunk tasks are active than there are
//!    workers and the pool is empty, with no global steal in flight and
//!    termination not detected, the rank sends a request to the next rank
//!    in round-robin order. This is checked under the mutex whenever
//!    `active` drops below the number of workers, and by the answer handler
//!    (`TAG_WORK_RESPONSE`): a chunk is counted in `active`, pushed and
//!    given a task; a "no work" answer lets the check run again.
//! 5. **Token** (`TAG_TOKEN`): the rank passes the token on
//!    ([`TokenRing::passive`]) when it holds it and `active == 0`, read
//!    under the mutex — by the handler when the token arrives, or by the
//!    task that brought `active` to 0. Safra's colouring on receipt makes
//!    it safe that a chunk answer may arrive right after (see
//!    [`termination`](crate::uts::termination)). With one rank,
//!    `active == 0` is termination itself.
//! 6. **Termination**: when the ring turns RED, the rank completes the
//!    promise the main thread waits on. Termination proved that no message
//!    is in flight, so any steal request, answer or token that still arrives
//!    — and a global steal still unanswered — is a [`RunError`], never
//!    dropped (a chunk would carry nodes that were never counted). The main
//!    thread stops the services and waits for every send.
//!
//! Times: each chunk task measures its work (exploring) and overhead
//! (taking, releasing and spawning chunks) and adds them, with its counts,
//! to the slot of the worker that ran it. The rest of a worker's wall time
//! was spent looking for work — search — until the rank saw termination
//! detected (PINK), and idle after.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use crossbeam_deque::{Injector, Steal};
use hc_mpi::{Comm, Hcmpi, Message, Placement, ReduceOp, Request, Service};
use hc_runtime::{Completer, Handle};

use crate::uts::chunk::{
    decode, encode, Chunk, RunError, StealParams, TAG_TOKEN, TAG_WORK_REQUEST, TAG_WORK_RESPONSE,
};
use crate::uts::local::LocalStack;
use crate::uts::stats::{
    Breakdown, Phase, PhaseTimer, RankTotals, RunReport, StealCounts, WorkerReport,
};
use crate::uts::termination::{Token, TokenRing};
use crate::uts::tree::Tree;

/// Most chunks the pool holds per computation worker (protocol step 2).
pub const POOL_CAP_PER_WORKER: usize = 2;

/// Nodes a chunk task explores between two steps of the communication
/// engine when the computation workers step it (shared placement, more
/// than one rank). A busy worker steps the engine only between tasks, and
/// a chunk task may explore a large subtree: with [`Comm::progress`] every
/// 256 nodes a steal request or the token waits about 256 × 40 ns ≈ 10 µs
/// for its handler, at a cost of about 1% (one engine step, a few
/// `MPI_Improbe` calls).
pub const PROGRESS_NODES: u32 = 256;

/// Runs the search on every rank (starts hc-mpi, which initializes MPI, and
/// shuts it down). `workers` overrides `HC_WORKERS`. The report is complete
/// on rank 0.
///
/// # Errors
/// If hc-mpi cannot start, an MPI operation fails, a malformed message
/// arrives or the protocol is violated (a message after termination).
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
    crate::job::abort_job_on_error(&hc, "uts", search(&hc, tree, params))
}

/// The search itself, on a started hc-mpi.
fn search(hc: &Hcmpi, tree: &Tree, params: StealParams) -> Result<RunReport, RunError> {
    let world = hc.world().clone();
    super::fingerprint(tree, &params).agree_on("uts", &world)?;
    let (rank, size) = (world.rank(), world.size());
    let nworkers = hc.runtime().num_workers();
    world.barrier()?;

    let start = Instant::now();
    let (done, finished) = hc_runtime::promise();
    let shared = Arc::new(Rank {
        tree: tree.clone(),
        params,
        // With the shared placement, a busy worker steps the engine only
        // between tasks; chunk tasks run long, so they step it themselves
        // (see `PROGRESS_NODES`).
        steps_engine: size > 1 && hc.placement() == Placement::Shared,
        rank,
        size,
        nworkers,
        world: world.clone(),
        pool: Injector::new(),
        active: AtomicUsize::new(0),
        state: Mutex::new(RankState {
            ring: TokenRing::new(rank, size),
            steal: None,
            last_steal: rank,
            pink_at: None,
            finished: false,
            error: None,
            done: Some(done),
            steals: StealCounts::default(),
        }),
        sends: Mutex::new(Vec::new()),
        token_sends: Mutex::new(Vec::new()),
        slots: (0..nworkers)
            .map(|_| Mutex::new(WorkerReport::default()))
            .collect(),
    });
    let services = if size > 1 {
        start_services(&shared, hc.handle())?
    } else {
        Vec::new()
    };
    if rank == 0 {
        shared.add_chunk(hc.handle(), vec![tree.root()]);
    } else {
        // Passive from the start: look for work.
        let mut out = Outbox::default();
        shared.settle(&mut shared.lock(), &mut out);
        shared.flush(out, hc.handle());
    }

    let search_span = hc_runtime::trace::span("uts", "search");
    let waited = hc.block_on(finished);
    drop(search_span);
    let end = Instant::now();
    let seconds = (end - start).as_secs_f64();
    if waited.is_err() {
        return Err(RunError::NoResult);
    }
    let mut stopped = Ok(());
    for service in services {
        if let Err(e) = service.stop() {
            stopped = stopped.and(Err(RunError::from(e)));
        }
    }
    let (pink_at, steals) = {
        let mut st = shared.lock();
        if let Some(e) = st.error.take() {
            return Err(e);
        }
        if let Some(victim) = st.steal {
            return Err(RunError::UnansweredSteal { victim });
        }
        (st.pink_at.unwrap_or(end), st.steals)
    };
    stopped?;
    let sends = std::mem::take(&mut *shared.sends.lock().unwrap_or_else(|p| p.into_inner()));
    for send in sends {
        send.wait()?;
    }
    let token_sends =
        std::mem::take(&mut *shared.token_sends.lock().unwrap_or_else(|p| p.into_inner()));
    for send in token_sends {
        send.wait()?;
    }

    let searching = (pink_at.max(start) - start).as_secs_f64().min(seconds);
    let mut reports: Vec<WorkerReport> = shared
        .slots
        .iter()
        .map(|slot| *slot.lock().unwrap_or_else(|p| p.into_inner()))
        .collect();
    for report in &mut reports {
        let busy = report.times.work + report.times.overhead;
        report.times = Breakdown {
            search: (searching - busy).max(0.0),
            idle: seconds - searching,
            ..report.times
        };
    }
    reports[0].steals += steals;
    drop(shared);

    let _reduce_span = hc_runtime::trace::span("uts", "reduce counts");
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
    let mut report = totals.into_report(size as u32, nworkers as u32, rank == 0, seconds);
    report.metrics = Some(hc.metrics());
    report.bound = Some(hc.binding() == hc_mpi::Binding::Cores);
    Ok(report)
}

/// Starts the three message services of the inter-rank protocol.
fn start_services(shared: &Arc<Rank>, handle: &Handle) -> Result<Vec<Service>, RunError> {
    let world = &shared.world;
    let requests = {
        let (shared, handle) = (Arc::clone(shared), handle.clone());
        world.serve(TAG_WORK_REQUEST, move |m: Message<u32>| {
            shared.handle_message(&handle, |rank, st, out| {
                rank.steal_request(st, out, m.source)
            })
        })?
    };
    let answers = {
        let (shared, handle) = (Arc::clone(shared), handle.clone());
        world.serve(TAG_WORK_RESPONSE, move |m: Message<u32>| {
            shared.handle_message(&handle, |rank, st, out| rank.steal_answer(st, out, m))
        })?
    };
    let tokens = {
        let (shared, handle) = (Arc::clone(shared), handle.clone());
        world.serve(TAG_TOKEN, move |m: Message<u64>| {
            shared.handle_message(&handle, |rank, st, out| rank.token(st, out, m))
        })?
    };
    Ok(vec![requests, answers, tokens])
}

/// What the chunk tasks and handlers of one rank share.
struct Rank {
    tree: Tree,
    params: StealParams,
    /// Chunk tasks step the communication engine (shared placement, more
    /// than one rank).
    steps_engine: bool,
    rank: i32,
    size: i32,
    nworkers: usize,
    world: Comm,
    /// Chunks waiting for a chunk task (or a thief).
    pool: Injector<Chunk>,
    /// Chunk tasks spawned and not finished (protocol step 1).
    active: AtomicUsize,
    state: Mutex<RankState>,
    /// Sends not yet waited for (the main thread waits at the end).
    sends: Mutex<Vec<Request<Vec<u32>>>>,
    token_sends: Mutex<Vec<Request<Vec<u64>>>>,
    /// Per-worker counts and times, indexed by worker.
    slots: Vec<Mutex<WorkerReport>>,
}

/// The inter-rank state of a rank (protocol steps 3–6).
struct RankState {
    ring: TokenRing,
    /// Victim of the global steal in flight.
    steal: Option<i32>,
    last_steal: i32,
    /// When this rank saw termination detected (PINK or RED).
    pink_at: Option<Instant>,
    /// Terminated or failed: every message from now on is an error.
    finished: bool,
    /// The first error.
    error: Option<RunError>,
    /// Completed once finished.
    done: Option<Completer<()>>,
    /// Global steal counts.
    steals: StealCounts,
}

/// What to do once the state's mutex is released.
#[derive(Default)]
struct Outbox {
    /// `(destination, tag, words)`.
    messages: Vec<(i32, i32, Vec<u32>)>,
    token: Option<(i32, Token)>,
    /// Chunk tasks to spawn (their chunks are already in the pool).
    spawn: usize,
    done: Option<Completer<()>>,
}

impl Rank {
    fn lock(&self) -> MutexGuard<'_, RankState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records the first error and ends the search on this rank.
    fn fail(st: &mut RankState, out: &mut Outbox, e: RunError) {
        st.error.get_or_insert(e);
        st.finished = true;
        out.done = st.done.take();
    }

    /// A message after termination: a protocol error (the first error of
    /// the run is kept), never dropped silently.
    fn arrived_late(st: &mut RankState, out: &mut Outbox, what: &'static str, source: i32) {
        if st.error.is_none() {
            let error = RunError::Protocol {
                what,
                rank: source,
                problem: "arrived after termination",
            };
            Rank::fail(st, out, error);
        }
    }

    /// Runs a handler under the mutex, then does what it asked for.
    fn handle_message(
        self: &Arc<Self>,
        handle: &Handle,
        f: impl FnOnce(&Arc<Self>, &mut RankState, &mut Outbox),
    ) {
        let mut out = Outbox::default();
        // A panic would stop the service and leave the main thread waiting
        // for a result: it fails the search instead.
        let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            f(self, &mut self.lock(), &mut out)
        }));
        if let Err(payload) = handled {
            let message = hc_runtime::panic_message(&*payload);
            let error = RunError::Panicked {
                context: "message handler",
                message: message.to_owned(),
            };
            Self::fail(&mut self.lock(), &mut out, error);
        }
        self.flush(out, handle);
    }

    /// Protocol steps 4 and 5, under the mutex: pass the token if passive,
    /// start a global steal if one is wanted, detect termination.
    fn settle(&self, st: &mut RankState, out: &mut Outbox) {
        if st.finished {
            return;
        }
        let active = self.active.load(Ordering::SeqCst);
        if active == 0 && (self.size == 1 || st.ring.holds_token()) {
            if let Some(token) = st.ring.passive() {
                out.token = Some((st.ring.right(), token));
            }
            if st.ring.stop_stealing() && st.pink_at.is_none() {
                st.pink_at = Some(Instant::now());
            }
            if st.ring.is_terminated() {
                st.finished = true;
                out.done = st.done.take();
                return;
            }
        }
        if self.size > 1
            && st.steal.is_none()
            && !st.ring.stop_stealing()
            && active < self.nworkers
            && self.pool.is_empty()
        {
            st.last_steal = (st.last_steal + 1) % self.size;
            if st.last_steal == self.rank {
                st.last_steal = (st.last_steal + 1) % self.size;
            }
            let victim = st.last_steal;
            st.steal = Some(victim);
            st.ring.ctrl_sent();
            out.messages
                .push((victim, TAG_WORK_REQUEST, vec![self.params.chunk as u32]));
        }
    }

    /// Protocol step 3.
    fn steal_request(&self, st: &mut RankState, out: &mut Outbox, thief: i32) {
        if st.finished {
            return Rank::arrived_late(st, out, "a steal request", thief);
        }
        st.ring.ctrl_received();
        match take(&self.pool) {
            Some(_) if st.ring.stop_stealing() => {
                Rank::fail(st, out, RunError::WorkAfterTermination { thief })
            }
            Some(chunk) => {
                st.ring.chunk_sent();
                out.messages
                    .push((thief, TAG_WORK_RESPONSE, encode(&chunk)));
            }
            None => {
                st.ring.ctrl_sent();
                out.messages.push((thief, TAG_WORK_RESPONSE, Vec::new()));
            }
        }
    }

    /// Protocol step 4: the answer to the global steal.
    fn steal_answer(&self, st: &mut RankState, out: &mut Outbox, m: Message<u32>) {
        let what = if m.data.is_empty() {
            "a \"no work\" answer"
        } else {
            "a chunk"
        };
        if st.finished {
            return Rank::arrived_late(st, out, what, m.source);
        }
        if st.steal != Some(m.source) {
            return Rank::fail(
                st,
                out,
                RunError::Protocol {
                    what,
                    rank: m.source,
                    problem: "that was not asked",
                },
            );
        }
        st.steal = None;
        if m.data.is_empty() {
            st.ring.ctrl_received();
            st.steals.steals_failed += 1;
        } else {
            let chunk = match decode(&m.data) {
                Ok(chunk) => chunk,
                Err(e) => return Rank::fail(st, out, e.into()),
            };
            if st.ring.stop_stealing() {
                // The search round proved no chunk in flight and every pool
                // empty: a chunk now is a protocol error, not work.
                return Rank::fail(
                    st,
                    out,
                    RunError::Protocol {
                        what: "a chunk",
                        rank: m.source,
                        problem: "arrived after termination was detected",
                    },
                );
            }
            st.ring.chunk_received();
            st.steals.steals_ok += 1;
            self.active.fetch_add(1, Ordering::SeqCst);
            self.pool.push(chunk);
            out.spawn += 1;
        }
        self.settle(st, out);
    }

    /// Protocol step 5: the token arrived.
    fn token(&self, st: &mut RankState, out: &mut Outbox, m: Message<u64>) {
        if st.finished {
            return Rank::arrived_late(st, out, "a termination token", m.source);
        }
        match Token::decode(&m.data) {
            Some(token) if !st.ring.holds_token() => st.ring.token_arrived(token),
            _ => {
                return Rank::fail(
                    st,
                    out,
                    RunError::Malformed {
                        what: "a termination token",
                        rank: m.source,
                        words: m.data.len(),
                    },
                )
            }
        }
        self.settle(st, out);
    }

    /// Sends, spawns and completes what `out` holds (no mutex held).
    fn flush(self: &Arc<Self>, out: Outbox, handle: &Handle) {
        for _ in 0..out.spawn {
            self.spawn_chunk_task(handle);
        }
        let mut failed = None;
        if !out.messages.is_empty() {
            let mut started = Vec::with_capacity(out.messages.len());
            for (dest, tag, words) in out.messages {
                match hc_runtime::outside_finish(|| self.world.isend(words, dest, tag)) {
                    Ok(request) => started.push(request),
                    Err(e) => {
                        failed.get_or_insert(RunError::from(e));
                    }
                }
            }
            let mut sends = self.sends.lock().unwrap_or_else(|p| p.into_inner());
            // A passive rank steals back to back: keep only the sends still
            // in flight (reading a status costs no MPI call), or the list
            // grows with every "no work" answer of the run.
            prune_completed(&mut sends, &mut failed);
            sends.extend(started);
        }
        if let Some((right, token)) = out.token {
            match hc_runtime::outside_finish(|| self.world.isend(token.encode(), right, TAG_TOKEN))
            {
                Ok(request) => {
                    let mut sends = self.token_sends.lock().unwrap_or_else(|p| p.into_inner());
                    prune_completed(&mut sends, &mut failed);
                    sends.push(request);
                }
                Err(e) => {
                    failed.get_or_insert(RunError::from(e));
                }
            }
        }
        let mut done = out.done;
        if let Some(e) = failed {
            // Recorded before the main thread can be released to read it.
            let mut out = Outbox::default();
            Rank::fail(&mut self.lock(), &mut out, e);
            done = done.or(out.done);
        }
        if let Some(done) = done {
            done.complete(());
        }
    }

    /// Puts `chunk` into the pool with a chunk task for it (protocol steps
    /// 1 and 2).
    fn add_chunk(self: &Arc<Self>, handle: &Handle, chunk: Chunk) {
        self.active.fetch_add(1, Ordering::SeqCst);
        self.pool.push(chunk);
        self.spawn_chunk_task(handle);
    }

    /// Spawns a chunk task for a chunk of the pool; the caller has counted
    /// it in `active`.
    fn spawn_chunk_task(self: &Arc<Self>, handle: &Handle) {
        let shared = Arc::clone(self);
        let spawner = hc_runtime::current_worker_index();
        handle.spawn_detached(move |handle| {
            let explored = panic::catch_unwind(AssertUnwindSafe(|| {
                shared.chunk_task(handle, spawner);
            }));
            if let Err(payload) = explored {
                // Its nodes are lost and `active` never drops to 0 again:
                // end the search with the error rather than hang.
                let message = hc_runtime::panic_message(&*payload).to_owned();
                let mut out = Outbox::default();
                Rank::fail(
                    &mut shared.lock(),
                    &mut out,
                    RunError::Panicked {
                        context: "chunk task",
                        message: message.to_owned(),
                    },
                );
                shared.flush(out, handle);
            }
        });
    }

    /// One chunk task: explore a chunk of the pool, releasing surplus
    /// (protocol step 2).
    fn chunk_task(self: &Arc<Self>, handle: &Handle, spawner: Option<usize>) {
        if let Some(chunk) = take(&self.pool) {
            let mut span = hc_runtime::trace::span("uts", "chunk");
            let mut timer = PhaseTimer::new(Phase::Overhead);
            let mut stack = LocalStack::new(&self.tree);
            stack.push_all(&chunk);
            drop(chunk);
            let interval = self.params.threaded_interval();
            let threshold = self.params.surplus_threshold();
            let cap = POOL_CAP_PER_WORKER * self.nworkers;
            let progress_nodes = if self.steps_engine {
                PROGRESS_NODES
            } else {
                u32::MAX
            };
            let mut since_progress = 0u32;
            let mut steals = StealCounts::default();
            timer.switch(Phase::Work);
            while !stack.is_empty() {
                since_progress += stack.explore(interval);
                if since_progress >= progress_nodes {
                    since_progress = 0;
                    self.world.progress();
                }
                if stack.local_work() > threshold && self.pool.len() < cap {
                    timer.switch(Phase::Overhead);
                    let mut surplus = Vec::with_capacity(self.params.chunk);
                    stack.release(self.params.chunk, &mut surplus);
                    self.add_chunk(handle, surplus);
                    steals.released += 1;
                    timer.switch(Phase::Work);
                }
            }
            let worker = hc_runtime::current_worker_index();
            if spawner.is_some() && worker != spawner {
                steals.steals_ok += 1;
            }
            let times = timer.finish();
            span.set_args(hc_runtime::trace::Args::new().with("nodes", stack.stats().nodes as i64));
            drop(span);
            let slot = &self.slots[worker.unwrap_or(0) % self.slots.len()];
            let mut report = slot.lock().unwrap_or_else(|p| p.into_inner());
            report.counts.merge(&stack.stats());
            report.times += times;
            report.steals += steals;
        }
        let left = self.active.fetch_sub(1, Ordering::SeqCst) - 1;
        if left < self.nworkers && (self.size > 1 || left == 0) {
            let mut out = Outbox::default();
            self.settle(&mut self.lock(), &mut out);
            self.flush(out, handle);
        }
    }
}

/// The oldest chunk of `pool`, if any.
fn take(pool: &Injector<Chunk>) -> Option<Chunk> {
    loop {
        match pool.steal() {
            Steal::Success(chunk) => return Some(chunk),
            Steal::Empty => return None,
            Steal::Retry => continue,
        }
    }
}

/// Drops the completed requests of `sends`, keeping the first error.
fn prune_completed<T: Send>(sends: &mut Vec<Request<T>>, failed: &mut Option<RunError>) {
    sends.retain(|request| match request.status() {
        None => true,
        Some(Ok(_)) => false,
        Some(Err(e)) => {
            failed.get_or_insert(e.into());
            false
        }
    });
}
