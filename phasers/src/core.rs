//! The shared state of one phaser: its tree, the completion pipeline that
//! turns local completions into global ones, and the waiters.
//!
//! # Phases
//!
//! * *Locally complete*: the root of the tree completed the phase (every
//!   registration with a signal capability on this rank signaled it or
//!   left). `local_done` counts these.
//! * *Complete*: for an intra-node phaser, the same; for an hcmpi phaser,
//!   also the phase's collective completed. `done` counts these; `wait`
//!   returns once `done` is past the phase.
//!
//! # Completion pipeline
//!
//! Phases complete one at a time, in order, under the `completing` flag, a
//! try-lock. The thread whose signal completed a phase at the root (the
//! phaser master) takes it and runs, for each locally complete phase in
//! turn: take the root's accumulated value, start and finish the phase's
//! collective (if any), record the result, run the phase action (if any),
//! publish `done`, wake the waiters. A thread that finds the flag taken
//! leaves: the holder re-checks `local_done` after releasing the flag
//! (`SeqCst` on both sides, a Dekker pattern), so no completion is lost.
//!
//! The master blocks on the collective only if it is about to wait anyway
//! and is not a computation worker (where `hc_runtime::wait` would run other
//! tasks on top of the phased one). Otherwise — a `SIGNAL_ONLY` signal, a
//! drop, a registration used on a worker — it hands the flag, with the
//! collective in flight, to a short-lived completion thread.
//!
//! # Bounded run-ahead
//!
//! A registration signals phase `k` (or joins at cursor `k`) only once
//! phase `k - 2` is complete. `SIGNAL_WAIT` registrations never notice (they
//! waited for `k - 1`); a `SIGNAL_ONLY` one may run at most one phase ahead
//! of the slowest signaler and otherwise blocks in `signal`. The bound keeps
//! every member within two phases of its node (see `word`) and lets each
//! node keep values of only two phases (see `tree`).
//!
//! # Strict and fuzzy barriers
//!
//! Strict: the master starts the collective of phase `k` after the phase
//! is locally complete. Fuzzy: the first local signal of phase `k` starts
//! it, as soon as phase `k - 1` is complete; the master then finds it in
//! flight. Collectives are started in phase order under the `posts` lock.
//!
//! # Memory ordering
//!
//! `local_done` is raised (`fetch_max`, `SeqCst`) after the root CAS that
//! completed the phase, so the pipeline, loading it with `SeqCst`, has
//! acquired every signal of the phase. `done` is published with `SeqCst`
//! after the results are recorded; waiters load it with `Acquire` (and
//! `SeqCst` in the parking protocol of `waiters`).

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};

use crate::global::{GlobalStage, PendingPhase};
use crate::mode::PhaserError;
use std::sync::Arc;

use crate::sync::{lock, AtomicBool, AtomicU64, Mutex, Ordering};
use crate::tree::{Combiner, RootEvent, Tree};
use crate::waiters::Waiters;
use crate::word::Op;

/// Phase action: run once per phase by the master, before anyone leaves it.
pub(crate) type Action = Box<dyn FnMut(u64) + Send>;

/// Configuration of a [`Core`].
pub(crate) struct CoreConfig {
    pub(crate) leaves: usize,
    pub(crate) degree: usize,
    pub(crate) combiner: Option<Combiner>,
    pub(crate) action: Option<Action>,
    pub(crate) global: Option<Box<dyn GlobalStage>>,
}

/// Collectives started ahead of their completion (fuzzy barriers).
#[derive(Debug, Default)]
struct Posts {
    /// Phases below this have their collective started.
    posted: u64,
    queue: VecDeque<(u64, Box<dyn PendingPhase>)>,
}

/// The shared state of a phaser.
pub(crate) struct Core {
    pub(crate) tree: Tree,
    combiner: Option<Combiner>,
    /// Globally complete phases.
    done: AtomicU64,
    /// Locally complete phases.
    local_done: AtomicU64,
    /// The root died while collecting this phase (`u64::MAX`: alive).
    died_at: AtomicU64,
    /// The completion pipeline's try-lock.
    completing: AtomicBool,
    /// A phase whose collective is in flight, handed to a completion thread.
    inflight: Mutex<Option<(u64, Box<dyn PendingPhase>)>>,
    /// Results of the last two phases: (phase, value bits).
    results: Mutex<[(u64, u64); 2]>,
    action: Option<Mutex<Action>>,
    global: Option<Box<dyn GlobalStage>>,
    posts: Mutex<Posts>,
    /// Fuzzy barriers: one past the highest phase any local task signaled.
    arrived: AtomicU64,
    failed: AtomicBool,
    failure: Mutex<Option<String>>,
    waiters: Waiters,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core")
            .field("sub_phasers", &self.tree.len())
            .field("done", &self.done.load(Ordering::Relaxed))
            .field("global", &self.global)
            .finish_non_exhaustive()
    }
}

/// How the pipeline left the `completing` flag.
enum Flow {
    /// Caught up with `local_done`; the caller releases the flag.
    CaughtUp,
    /// The flag went to a completion thread with the collective in flight.
    HandedOff,
}

impl Core {
    pub(crate) fn new(config: CoreConfig) -> Core {
        let identity = config.combiner.map_or(0, |c| c.identity);
        Core {
            tree: Tree::new(config.leaves, config.degree, config.combiner),
            combiner: config.combiner,
            done: AtomicU64::new(0),
            local_done: AtomicU64::new(0),
            died_at: AtomicU64::new(u64::MAX),
            completing: AtomicBool::new(false),
            inflight: Mutex::new(None),
            results: Mutex::new([(u64::MAX, identity); 2]),
            action: config.action.map(Mutex::new),
            global: config.global,
            posts: Mutex::new(Posts::default()),
            arrived: AtomicU64::new(0),
            failed: AtomicBool::new(false),
            failure: Mutex::new(None),
            waiters: Waiters::new(),
        }
    }

    /// The bits of the accumulator's identity (0 for a barrier).
    pub(crate) fn identity(&self) -> u64 {
        self.combiner.map_or(0, |c| c.identity)
    }

    /// Number of globally complete phases.
    pub(crate) fn completed(&self) -> u64 {
        self.done.load(Ordering::Acquire)
    }

    fn failure(&self) -> Option<PhaserError> {
        if self.failed.load(Ordering::Acquire) {
            let message = lock(&self.failure).clone().unwrap_or_default();
            Some(PhaserError::Failed(message))
        } else {
            None
        }
    }

    /// Records the first failure and releases every waiter.
    fn fail(&self, message: String) {
        {
            let mut failure = lock(&self.failure);
            failure.get_or_insert(message);
        }
        self.failed.store(true, Ordering::SeqCst);
        self.waiters.wake_all();
    }

    /// Blocks until phase `phase` is complete.
    ///
    /// # Errors
    /// [`PhaserError::NoSignalers`] if it never can be, or the failure that
    /// stopped the phaser.
    pub(crate) fn wait_for(&self, phase: u64) -> Result<(), PhaserError> {
        let ready = || {
            self.done.load(Ordering::SeqCst) > phase
                || self.failed.load(Ordering::SeqCst)
                || self.died_at.load(Ordering::SeqCst) <= phase
        };
        if !ready() {
            self.waiters.wait_until(ready);
        }
        if self.done.load(Ordering::Acquire) > phase {
            return Ok(());
        }
        if let Some(error) = self.failure() {
            return Err(error);
        }
        Err(PhaserError::NoSignalers { phase })
    }

    /// Waits until a member may act at cursor `c` (bounded run-ahead).
    fn wait_run_ahead(&self, c: u64) -> Result<(), PhaserError> {
        match c.checked_sub(2) {
            Some(phase) => self.wait_for(phase),
            None => self.failure().map_or(Ok(()), Err),
        }
    }

    /// Adds a member with cursor `c` to the tree (see `Tree::join`).
    pub(crate) fn join(&self, c: u64, fallback: Option<usize>) -> Result<usize, PhaserError> {
        self.wait_run_ahead(c)?;
        self.tree.join(c, fallback).map_err(|_| PhaserError::Full)
    }

    /// Signals phase `c` from `leaf` with `value` bits. `can_block`: the
    /// caller will wait next and may block on a collective.
    pub(crate) fn signal(
        self: &Arc<Self>,
        leaf: usize,
        c: u64,
        value: u64,
        can_block: bool,
    ) -> Result<(), PhaserError> {
        self.wait_run_ahead(c)?;
        if self.global.as_ref().is_some_and(|g| g.fuzzy())
            && self.arrived.fetch_max(c + 1, Ordering::SeqCst) <= c
        {
            self.post_ready();
        }
        let event = self.tree.report(leaf, Op::Signal(c), value);
        self.handle(event, can_block);
        Ok(())
    }

    /// Removes the member at `leaf` with cursor `c`.
    pub(crate) fn drop_member(self: &Arc<Self>, leaf: usize, c: u64) {
        let event = self.tree.report(leaf, Op::Drop(c), 0);
        self.handle(event, false);
    }

    fn handle(self: &Arc<Self>, event: RootEvent, can_block: bool) {
        if let Some(up_to) = event.completed_up_to {
            self.local_done.fetch_max(up_to, Ordering::SeqCst);
            self.drive(can_block);
        }
        if let Some(phase) = event.died_at {
            self.died_at.store(phase, Ordering::SeqCst);
            self.waiters.wake_all();
        }
    }

    /// Runs the completion pipeline if no one else is (see the module docs).
    pub(crate) fn drive(self: &Arc<Self>, can_block: bool) {
        loop {
            if self.completing.swap(true, Ordering::SeqCst) {
                return;
            }
            if let Flow::HandedOff = self.run_locked(can_block) {
                return;
            }
            if self.release_and_recheck() {
                return;
            }
        }
    }

    /// Releases the flag; whether there is nothing left to do.
    fn release_and_recheck(&self) -> bool {
        self.completing.store(false, Ordering::SeqCst);
        self.failed.load(Ordering::SeqCst)
            || self.done.load(Ordering::SeqCst) >= self.local_done.load(Ordering::SeqCst)
    }

    /// The pipeline proper; the caller holds `completing`.
    fn run_locked(self: &Arc<Self>, can_block: bool) -> Flow {
        loop {
            if self.failed.load(Ordering::Acquire) {
                return Flow::CaughtUp;
            }
            let phase = self.done.load(Ordering::Relaxed);
            let inflight = lock(&self.inflight).take();
            let pending = match inflight {
                Some((p, pending)) => {
                    debug_assert_eq!(p, phase);
                    Some(pending)
                }
                None => {
                    if phase >= self.local_done.load(Ordering::SeqCst) {
                        return Flow::CaughtUp;
                    }
                    let local = self.tree.take_root(phase);
                    match self.start_global(phase, local) {
                        Ok(Some(pending)) => Some(pending),
                        Ok(None) => {
                            self.publish(phase, local);
                            continue;
                        }
                        Err(message) => {
                            self.fail(message);
                            return Flow::CaughtUp;
                        }
                    }
                }
            };
            let Some(pending) = pending else { continue };
            let ready = pending.awaitable().is_none_or(|a| a.is_ready());
            if !ready && !can_block {
                *lock(&self.inflight) = Some((phase, pending));
                return self.hand_off();
            }
            if let Some(awaitable) = pending.awaitable() {
                hc_runtime::wait(awaitable);
            }
            match pending.finish() {
                Ok(global) => self.publish(phase, global),
                Err(message) => {
                    self.fail(message);
                    return Flow::CaughtUp;
                }
            }
        }
    }

    /// Continues the pipeline on a new thread that may block.
    fn hand_off(self: &Arc<Self>) -> Flow {
        let core = Arc::clone(self);
        let started = std::thread::Builder::new()
            .name("phaser-completion".into())
            .spawn(move || {
                if let Flow::CaughtUp = core.run_locked(true) {
                    if !core.release_and_recheck() {
                        core.drive(true);
                    }
                }
            });
        match started {
            Ok(_) => Flow::HandedOff,
            Err(error) => {
                self.fail(format!("cannot start a phase completion thread: {error}"));
                Flow::CaughtUp
            }
        }
    }

    /// Starts (strict) or collects (fuzzy) the collective of `phase`;
    /// `None` without an inter-node stage.
    fn start_global(
        &self,
        phase: u64,
        local: u64,
    ) -> Result<Option<Box<dyn PendingPhase>>, String> {
        let Some(global) = &self.global else {
            return Ok(None);
        };
        if !global.fuzzy() {
            return global.start(phase, local).map(Some);
        }
        self.post_ready();
        let mut posts = lock(&self.posts);
        match posts.queue.pop_front() {
            Some((p, pending)) if p == phase => Ok(Some(pending)),
            other => Err(format!(
                "internal error: fuzzy collective of phase {phase} not in flight (found {:?})",
                other.map(|(p, _)| p)
            )),
        }
    }

    /// Fuzzy barriers: starts, in order, every collective whose phase has a
    /// local arrival and whose previous phase is complete.
    fn post_ready(&self) {
        let Some(global) = &self.global else { return };
        let mut posts = lock(&self.posts);
        let limit = self
            .arrived
            .load(Ordering::SeqCst)
            .min(self.done.load(Ordering::SeqCst) + 1);
        while posts.posted < limit {
            let phase = posts.posted;
            match global.start(phase, 0) {
                Ok(pending) => posts.queue.push_back((phase, pending)),
                Err(message) => {
                    drop(posts);
                    self.fail(message);
                    return;
                }
            }
            posts.posted += 1;
        }
    }

    /// Records phase `phase`'s result, runs the action, publishes the phase.
    fn publish(&self, phase: u64, value: u64) {
        if self.combiner.is_some() {
            lock(&self.results)[(phase % 2) as usize] = (phase, value);
        }
        if let Some(action) = &self.action {
            let mut action = lock(action);
            if panic::catch_unwind(AssertUnwindSafe(|| (*action)(phase))).is_err() {
                drop(action);
                self.fail(format!("the phase action of phase {phase} panicked"));
                return;
            }
        }
        self.done.store(phase + 1, Ordering::SeqCst);
        self.waiters.wake_all();
        if self.global.as_ref().is_some_and(|g| g.fuzzy()) {
            self.post_ready();
        }
    }

    /// The result bits of complete phase `phase`.
    pub(crate) fn result(&self, phase: u64) -> Result<u64, PhaserError> {
        let (p, value) = lock(&self.results)[(phase % 2) as usize];
        if p == phase {
            Ok(value)
        } else {
            Err(PhaserError::ResultOverwritten { phase })
        }
    }
}
