//! The completion pipeline: how a locally complete phase becomes globally
//! complete and releases its waiters, with no thread of its own.
//!
//! # Protocol (phase completion)
//!
//! Phases complete in order, one at a time, under the `completing` flag (a
//! try-lock that nobody ever waits for):
//!
//! 1. **Arrival.** The member whose signal or drop completes a phase at the
//!    root — the last local arrival, decided by the root's compare-and-swap
//!    (see `tree`) — raises `local_done`, then tries to take the flag. If
//!    it is taken, the arrival is done: the holder will see the new
//!    `local_done` (step 6).
//! 2. **Local part.** For the next phase `k = done` below `local_done` the
//!    holder takes the root's value and runs the phase action, if any.
//! 3. **Collective.** An intra-node phaser goes straight to step 5. An
//!    hcmpi phaser starts the phase's collective (strict), or takes the one
//!    its first local arrival started (fuzzy), and polls it with the
//!    pipeline's waker.
//! 4. **Hand-off.** If the collective is still in flight, the holder parks
//!    it in the `parked` slot and leaves, *keeping the flag*: it now
//!    belongs to the collective. When the collective completes, the code
//!    that completes it (the communication engine's step, on whatever
//!    thread runs it) wakes the pipeline's waker, which becomes the holder
//!    and continues at step 5 right there — no thread, no task and no
//!    master in between (see the hand-off protocol below).
//! 5. **Publish.** The holder records the result, stores `done = k + 1`
//!    and wakes every waiter's waker (see `wakers`), then goes on with the
//!    next locally complete phase (step 2).
//! 6. **Release.** Caught up, the holder clears the flag (`SeqCst`) and
//!    reads `local_done` again (`SeqCst`); if a phase completed locally in
//!    between, it takes the flag again. With step 1 this is a
//!    store-buffering (Dekker) pattern: either the arrival's try sees the
//!    flag clear, or the holder's re-read sees the arrival. No completion
//!    is lost.
//!
//! # Protocol (collective hand-off)
//!
//! The `hand` word says where a polled collective stands: `IDLE` (none),
//! `POLLING` (the holder is polling it), `PARKED` (it sits in `parked`,
//! nobody holds the pipeline but the collective) and `NOTIFIED` (its waker
//! fired while it was being polled).
//!
//! 1. The holder sets `POLLING` and polls the collective. `Ready`: it sets
//!    `IDLE` and publishes (step 5 above).
//! 2. `Pending`: it stores the collective in `parked`, then
//!    compare-and-swaps `POLLING → PARKED` and leaves.
//! 3. If that CAS fails, the waker fired during the poll (`NOTIFIED`): the
//!    holder takes the collective back and polls again (1).
//! 4. The waker: `PARKED → POLLING` makes the waking thread the holder (it
//!    takes the collective from `parked` and continues at 1);
//!    `POLLING → NOTIFIED` leaves the re-poll to the holder (3); `IDLE`
//!    and `NOTIFIED` need nothing (a stale or repeated wake-up).
//!
//! Exactly one thread continues after a completion: whoever's CAS on
//! `hand` succeeds. A completion is never missed: the collective registers
//! the waker inside the poll, so its wake-up finds `POLLING` (3) or
//! `PARKED` (4). Modelled in `loom_tests`.
//!
//! # Strict and fuzzy barriers
//!
//! Strict: the holder starts the collective of phase `k` after the phase
//! is locally complete. Fuzzy: the first local signal of phase `k` starts
//! it, as soon as phase `k - 1` is complete; the holder then finds it in
//! flight. Collectives are started in phase order under the `posts` lock.
//!
//! # Phase action
//!
//! It runs in step 2, on the thread of the last local arrival (a task's
//! worker), once per phase and before anyone leaves the phase. For an
//! hcmpi phaser that is before the collective completes: the action sees
//! every local signal of the phase, not the other ranks'.
//!
//! # Memory ordering
//!
//! The flag is taken with a `SeqCst` swap and cleared with a `SeqCst` store,
//! so each holder sees what the previous one did (the tree's takes, the
//! results). The hand-off passes the same guarantee along: the parking
//! holder's `POLLING → PARKED` CAS is a release, the waking thread's
//! `PARKED → POLLING` CAS an acquire, and `parked` itself is behind a
//! mutex. `done` is published as described in the parent module.

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Wake, Waker};

use super::Core;
use crate::global::{GlobalStage, PendingPhase};
use crate::mode::PhaseFailure;
use crate::sync::{lock, AtomicBool, AtomicU64, AtomicU8, Mutex, Ordering};

/// Phase action: run once per phase, before anyone leaves it.
pub(crate) type Action = Box<dyn FnMut(u64) + Send>;

/// `hand`: no collective polled or parked.
const IDLE: u8 = 0;
/// `hand`: the holder is polling the collective.
const POLLING: u8 = 1;
/// `hand`: the collective is parked; its completion continues the pipeline.
const PARKED: u8 = 2;
/// `hand`: woken while being polled; the holder polls again.
const NOTIFIED: u8 = 3;

/// Collectives started ahead of their completion (fuzzy barriers).
#[derive(Debug, Default)]
struct Posts {
    /// Phases below this have their collective started.
    posted: u64,
    queue: VecDeque<(u64, Box<dyn PendingPhase>)>,
}

/// The pipeline's part of a phaser's state.
pub(super) struct Pipeline {
    /// The try-lock of steps 1 and 6.
    completing: AtomicBool,
    /// Where the polled collective stands (`IDLE` … `NOTIFIED`).
    hand: AtomicU8,
    /// The collective in flight, with its phase, while `PARKED`.
    parked: Mutex<Option<(u64, Box<dyn PendingPhase>)>>,
    /// Wakes the pipeline when a parked collective completes.
    waker: Waker,
    action: Option<Mutex<Action>>,
    global: Option<Box<dyn GlobalStage>>,
    posts: Mutex<Posts>,
    /// Fuzzy barriers: one past the highest phase any local task signaled.
    arrived: AtomicU64,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("hand", &self.hand.load(Ordering::Relaxed))
            .field("global", &self.global)
            .finish_non_exhaustive()
    }
}

/// How the pipeline left the `completing` flag.
enum Flow {
    /// Caught up with `local_done`; the caller releases the flag.
    CaughtUp,
    /// The flag went with a parked collective (hand-off step 2).
    Parked,
}

/// The pipeline's waker: a parked collective's completion continues the
/// pipeline on the completing thread (hand-off step 4).
struct CollectiveWaker {
    core: Weak<Core>,
}

impl Wake for CollectiveWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if let Some(core) = self.core.upgrade() {
            core.collective_woken();
        }
    }
}

impl Pipeline {
    pub(super) fn new(
        core: Weak<Core>,
        action: Option<Action>,
        global: Option<Box<dyn GlobalStage>>,
    ) -> Pipeline {
        Pipeline {
            completing: AtomicBool::new(false),
            hand: AtomicU8::new(IDLE),
            parked: Mutex::new(None),
            waker: Waker::from(Arc::new(CollectiveWaker { core })),
            action: action.map(Mutex::new),
            global,
            posts: Mutex::new(Posts::default()),
            arrived: AtomicU64::new(0),
        }
    }

    fn fuzzy(&self) -> bool {
        self.global.as_ref().is_some_and(|g| g.fuzzy())
    }

    /// Hand-off step 4: whether this wake-up makes the caller the holder.
    fn try_resume(&self) -> bool {
        let mut state = self.hand.load(Ordering::Acquire);
        loop {
            let next = match state {
                PARKED => POLLING,
                POLLING => NOTIFIED,
                _ => return false,
            };
            match self
                .hand
                .compare_exchange(state, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return next == POLLING,
                Err(actual) => state = actual,
            }
        }
    }
}

impl Core {
    /// A signal of phase `c` arrived here: a fuzzy barrier starts the
    /// collectives that now may start.
    pub(super) fn arrive(&self, c: u64) {
        let pipeline = &self.pipeline;
        if pipeline.fuzzy() && pipeline.arrived.fetch_max(c + 1, Ordering::SeqCst) <= c {
            self.post_ready();
        }
    }

    /// Steps 1 and 6: runs the pipeline if no one else is.
    pub(super) fn drive(&self) {
        loop {
            if self.pipeline.completing.swap(true, Ordering::SeqCst) {
                return;
            }
            if let Flow::Parked = self.run_locked(None) {
                return;
            }
            if self.release_and_recheck() {
                return;
            }
        }
    }

    /// Step 6: releases the flag; whether there is nothing left to do.
    fn release_and_recheck(&self) -> bool {
        self.pipeline.completing.store(false, Ordering::SeqCst);
        self.failed.load(Ordering::SeqCst)
            || self.done.load(Ordering::SeqCst) >= self.local_done.load(Ordering::SeqCst)
    }

    /// The pipeline's waker fired (hand-off step 4).
    fn collective_woken(&self) {
        if !self.pipeline.try_resume() {
            return;
        }
        let parked = lock(&self.pipeline.parked).take();
        if let Flow::CaughtUp = self.run_locked(parked) {
            if !self.release_and_recheck() {
                self.drive();
            }
        }
    }

    /// Steps 2–5; the caller holds the flag, and brings the collective it
    /// took from `parked` if it resumes one.
    fn run_locked(&self, mut parked: Option<(u64, Box<dyn PendingPhase>)>) -> Flow {
        loop {
            if self.failed.load(Ordering::Acquire) {
                return Flow::CaughtUp;
            }
            // Only the holder of the flag writes `done`.
            let phase = self.done.load(Ordering::Relaxed);
            let collective = match parked.take() {
                Some((parked_phase, collective)) => {
                    debug_assert_eq!(parked_phase, phase);
                    collective
                }
                None => {
                    if phase >= self.local_done.load(Ordering::SeqCst) {
                        return Flow::CaughtUp;
                    }
                    let local = self.tree.take_root(phase);
                    if let Err(message) = self.run_action(phase) {
                        self.fail(message);
                        return Flow::CaughtUp;
                    }
                    match self.start_global(phase, local) {
                        Ok(Some(collective)) => collective,
                        Ok(None) => {
                            self.publish_phase(phase, local);
                            continue;
                        }
                        Err(message) => {
                            self.fail(message);
                            return Flow::CaughtUp;
                        }
                    }
                }
            };
            match self.poll_collective(phase, collective) {
                Some(Ok(global)) => self.publish_phase(phase, global),
                Some(Err(message)) => {
                    self.fail(message);
                    return Flow::CaughtUp;
                }
                None => return Flow::Parked,
            }
        }
    }

    /// Hand-off steps 1–3: the collective's result, or `None` once parked.
    fn poll_collective(
        &self,
        phase: u64,
        mut collective: Box<dyn PendingPhase>,
    ) -> Option<Result<u64, PhaseFailure>> {
        let pipeline = &self.pipeline;
        let mut cx = Context::from_waker(&pipeline.waker);
        loop {
            pipeline.hand.store(POLLING, Ordering::Release);
            if let Poll::Ready(outcome) = collective.poll(&mut cx) {
                pipeline.hand.store(IDLE, Ordering::Release);
                return Some(outcome);
            }
            *lock(&pipeline.parked) = Some((phase, collective));
            match pipeline.hand.compare_exchange(
                POLLING,
                PARKED,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return None,
                Err(_notified) => {
                    collective = lock(&pipeline.parked)
                        .take()
                        .expect("the holder parked the collective")
                        .1;
                }
            }
        }
    }

    /// Runs the phase action of `phase`, if any.
    fn run_action(&self, phase: u64) -> Result<(), PhaseFailure> {
        let Some(action) = &self.pipeline.action else {
            return Ok(());
        };
        let mut action = lock(action);
        panic::catch_unwind(AssertUnwindSafe(|| (*action)(phase))).map_err(|payload| {
            PhaseFailure::ActionPanicked {
                phase,
                message: hc_runtime::panic_message(&*payload).to_owned(),
            }
        })
    }

    /// Step 5, and the fuzzy collectives that may start now.
    fn publish_phase(&self, phase: u64, value: u64) {
        hc_runtime::trace::instant(
            "phaser",
            "phase complete",
            hc_runtime::trace::Args::new().with("phase", phase as i64),
        );
        self.publish(phase, value);
        if self.pipeline.fuzzy() {
            self.post_ready();
        }
    }

    /// Starts (strict) or collects (fuzzy) the collective of `phase`;
    /// `None` without an inter-node stage.
    fn start_global(
        &self,
        phase: u64,
        local: u64,
    ) -> Result<Option<Box<dyn PendingPhase>>, PhaseFailure> {
        let Some(global) = &self.pipeline.global else {
            return Ok(None);
        };
        if !global.fuzzy() {
            return global.start(phase, local).map(Some);
        }
        self.post_ready();
        let mut posts = lock(&self.pipeline.posts);
        match posts.queue.pop_front() {
            Some((p, collective)) if p == phase => Ok(Some(collective)),
            other => Err(PhaseFailure::CollectiveOutOfOrder {
                phase,
                found: other.map(|(p, _)| p),
            }),
        }
    }

    /// Fuzzy barriers: starts, in order, every collective whose phase has a
    /// local arrival and whose previous phase is complete.
    fn post_ready(&self) {
        let pipeline = &self.pipeline;
        let Some(global) = &pipeline.global else {
            return;
        };
        let mut posts = lock(&pipeline.posts);
        let limit = pipeline
            .arrived
            .load(Ordering::SeqCst)
            .min(self.done.load(Ordering::SeqCst) + 1);
        while posts.posted < limit {
            let phase = posts.posted;
            match global.start(phase, 0) {
                Ok(collective) => posts.queue.push_back((phase, collective)),
                Err(message) => {
                    drop(posts);
                    self.fail(message);
                    return;
                }
            }
            posts.posted += 1;
        }
    }
}
