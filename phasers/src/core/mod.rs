//! The shared state of a phaser: the sub-phaser tree, the phases completed
//! locally and globally, the results, the failure, and the waiting tasks.
//!
//! * `wait` — the future a task awaits a phase with, and the bounded
//!   run-ahead of signals;
//! * `pipeline` — how a locally complete phase becomes globally complete
//!   (the inter-node collective, the phase action, publication).
//!
//! # Bounded run-ahead
//!
//! A registration signals phase `k` only once phase `k - 2` is complete.
//! `SIGNAL_WAIT` registrations never notice (they waited for `k - 1`); a
//! `SIGNAL_ONLY` one may run at most one phase ahead of the slowest
//! signaler, and otherwise its `signal` future waits. The bound keeps every
//! member within two phases of its node (see `word`) and lets each node
//! keep values of only two phases (see `tree`). Joining never waits: a
//! child starts at its parent's cursor, which the bound already keeps
//! within two phases of every node.
//!
//! # Memory ordering
//!
//! `local_done` is raised (`fetch_max`, `SeqCst`) after the root CAS that
//! completed the phase, so the pipeline, loading it with `SeqCst`, has
//! acquired every signal of the phase (and every value combined into the
//! tree before it). `done` is stored with `SeqCst` after the result is
//! recorded and before the waiters are woken; waiters load it with
//! `Acquire` (see `wakers` for why no wake-up is lost). `failed` and
//! `died_at` follow the same pattern.

mod pipeline;
mod wait;

use std::sync::{Arc, Weak};

pub(crate) use self::pipeline::Action;
use self::pipeline::Pipeline;
pub(crate) use self::wait::PhaseWait;

use crate::global::GlobalStage;
use crate::mode::{PhaseFailure, PhaserError};
use crate::sync::{lock, AtomicBool, AtomicU64, Mutex, Ordering};
use crate::tree::{Combiner, RootEvent, Tree};
use crate::wakers::WakerList;
use crate::word::Op;

/// Configuration of a [`Core`].
pub(crate) struct CoreConfig {
    pub(crate) leaves: usize,
    pub(crate) degree: usize,
    pub(crate) combiner: Option<Combiner>,
    pub(crate) action: Option<Action>,
    pub(crate) global: Option<Box<dyn GlobalStage>>,
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
    failed: AtomicBool,
    failure: Mutex<Option<PhaseFailure>>,
    /// Results of the last two phases: (phase, value bits).
    results: Mutex<[(u64, u64); 2]>,
    /// Tasks waiting for a phase (or for the phaser to fail or die).
    wakers: WakerList,
    pipeline: Pipeline,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core")
            .field("sub_phasers", &self.tree.len())
            .field("done", &self.done.load(Ordering::Relaxed))
            .field("pipeline", &self.pipeline)
            .finish_non_exhaustive()
    }
}

impl Core {
    pub(crate) fn new(config: CoreConfig) -> Arc<Core> {
        let identity = config.combiner.map_or(0, |c| c.identity);
        Arc::new_cyclic(|core: &Weak<Core>| Core {
            tree: Tree::new(config.leaves, config.degree, config.combiner),
            combiner: config.combiner,
            done: AtomicU64::new(0),
            local_done: AtomicU64::new(0),
            died_at: AtomicU64::new(u64::MAX),
            failed: AtomicBool::new(false),
            failure: Mutex::new(None),
            results: Mutex::new([(u64::MAX, identity); 2]),
            wakers: WakerList::new(),
            pipeline: Pipeline::new(core.clone(), config.action, config.global),
        })
    }

    /// The bits of the accumulator's identity (0 for a barrier).
    pub(crate) fn identity(&self) -> u64 {
        self.combiner.map_or(0, |c| c.identity)
    }

    /// Number of globally complete phases.
    pub(crate) fn completed(&self) -> u64 {
        self.done.load(Ordering::Acquire)
    }

    /// The failure that stopped the phaser, if any.
    pub(crate) fn failure(&self) -> Option<PhaserError> {
        if self.failed.load(Ordering::Acquire) {
            let failure = lock(&self.failure)
                .clone()
                .expect("a failed phaser records why before setting the flag");
            Some(PhaserError::Failed(failure))
        } else {
            None
        }
    }

    /// Records the first failure and releases every waiter.
    fn fail(&self, failure: PhaseFailure) {
        lock(&self.failure).get_or_insert(failure);
        self.failed.store(true, Ordering::SeqCst);
        self.wakers.wake_all();
    }

    /// How a wait for `phase` ends, if it can end now: the phase is
    /// complete, the phaser failed, or it can never complete.
    fn outcome(&self, phase: u64) -> Option<Result<(), PhaserError>> {
        if self.done.load(Ordering::Acquire) > phase {
            return Some(Ok(()));
        }
        if let Some(error) = self.failure() {
            return Some(Err(error));
        }
        if self.died_at.load(Ordering::Acquire) <= phase {
            return Some(Err(PhaserError::NoSignalers { phase }));
        }
        None
    }

    /// A future that completes once phase `phase` is complete.
    ///
    /// # Errors
    /// [`PhaserError::NoSignalers`] if it never can be, or the failure that
    /// stopped the phaser.
    pub(crate) fn wait_for(&self, phase: u64) -> PhaseWait<'_> {
        PhaseWait::new(self, phase)
    }

    /// Adds a member with cursor `c` to the tree (see `Tree::join`). Never
    /// waits (see the module docs).
    pub(crate) fn join(&self, c: u64, fallback: Option<usize>) -> Result<usize, PhaserError> {
        if let Some(error) = self.failure() {
            return Err(error);
        }
        self.tree.join(c, fallback).map_err(|_| PhaserError::Full)
    }

    /// Signals phase `c` from `leaf` with `value` bits, once the bounded
    /// run-ahead allows it.
    pub(crate) async fn signal(&self, leaf: usize, c: u64, value: u64) -> Result<(), PhaserError> {
        match c.checked_sub(2) {
            Some(phase) => self.wait_for(phase).await?,
            None => {
                if let Some(error) = self.failure() {
                    return Err(error);
                }
            }
        }
        self.arrive(c);
        let event = self.tree.report(leaf, Op::Signal(c), value);
        self.handle(event);
        Ok(())
    }

    /// Removes the member at `leaf` with cursor `c`.
    pub(crate) fn drop_member(&self, leaf: usize, c: u64) {
        let event = self.tree.report(leaf, Op::Drop(c), 0);
        self.handle(event);
    }

    fn handle(&self, event: RootEvent) {
        if let Some(up_to) = event.completed_up_to {
            self.local_done.fetch_max(up_to, Ordering::SeqCst);
            self.drive();
        }
        if let Some(phase) = event.died_at {
            self.died_at.store(phase, Ordering::SeqCst);
            self.wakers.wake_all();
        }
    }

    /// Records phase `phase`'s result and publishes the phase: its waiters
    /// leave it.
    fn publish(&self, phase: u64, value: u64) {
        if self.combiner.is_some() {
            lock(&self.results)[(phase % 2) as usize] = (phase, value);
        }
        self.done.store(phase + 1, Ordering::SeqCst);
        self.wakers.wake_all();
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

    /// The number of tasks parked on this phaser (loom models).
    #[cfg(all(test, loom))]
    pub(crate) fn parked_waiters(&self) -> usize {
        self.wakers.registered()
    }
}
