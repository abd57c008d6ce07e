//! A task's registration on a phaser: `next`, split-phase `signal`/`wait`,
//! accumulation, child registrations, and the drop when the task ends.
//!
//! # Cursors
//!
//! A registration keeps two phase numbers: `sig`, the next phase it will
//! signal, and `wait`, the next phase it will wait for. A `SIGNAL_WAIT`
//! registration is either *between phases* (`sig == wait`) or *signaled*
//! (`sig == wait + 1`, after a split-phase `signal`); `next` is legal only
//! between phases, `signal` only between phases, `wait` only when signaled.
//!
//! # Children
//!
//! A child registration starts where its parent is: its `sig` is the
//! parent's `sig` and its `wait` the parent's `sig` too for a signaling
//! child (a child of a signaled parent joins the next phase), the parent's
//! `wait` for a `WAIT_ONLY` child. It is registered before the call
//! returns, so the phase it starts in cannot complete without it — this is
//! what makes phased spawning race-free. Its leaf is chosen round-robin; if
//! that leaf cannot take it, the parent's leaf can (the parent has not
//! signaled `sig`, so its leaf is at `sig - 1` or `sig`).
//!
//! # Drop
//!
//! Dropping a registration (explicitly, or when the task that owns it ends
//! or unwinds) removes it at its cursor: phases no longer wait for it. A
//! registration is `Send` (it moves into its task) but not `Sync`.

use std::marker::PhantomData;

use crate::accum::AccumValue;
use crate::core::Core;
use crate::mode::{Mode, PhaserError};
use std::sync::Arc;

/// A task's registration on a phaser (`V` is the accumulator's value type,
/// `()` for a barrier phaser).
///
/// Created by [`Phaser::new`](crate::Phaser::new) or a builder for the
/// creating task, and by [`register`](Registration::register) for a task it
/// is about to spawn ([`spawn_phased`](crate::spawn_phased)).
pub struct Registration<V = ()> {
    core: Arc<Core>,
    mode: Mode,
    /// The leaf of a registration that signals.
    leaf: Option<usize>,
    sig: u64,
    wait: u64,
    /// The last phase this registration waited for.
    waited: Option<u64>,
    marker: PhantomData<fn(V) -> V>,
}

impl<V> std::fmt::Debug for Registration<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("mode", &self.mode)
            .field("leaf", &self.leaf)
            .field("signal_phase", &self.sig)
            .field("wait_phase", &self.wait)
            .finish()
    }
}

/// A handle on a phaser that does not register anyone: it reads the number
/// of completed phases and accumulator results (e.g. after the finish that
/// ran the phased tasks, Fig. 8).
pub struct PhaserHandle<V = ()> {
    core: Arc<Core>,
    marker: PhantomData<fn(V) -> V>,
}

impl<V> Clone for PhaserHandle<V> {
    fn clone(&self) -> Self {
        PhaserHandle {
            core: Arc::clone(&self.core),
            marker: PhantomData,
        }
    }
}

impl<V> std::fmt::Debug for PhaserHandle<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PhaserHandle")
            .field("core", &self.core)
            .finish()
    }
}

impl<V> PhaserHandle<V> {
    /// Number of phases completed (globally, for an hcmpi phaser).
    pub fn completed_phases(&self) -> u64 {
        self.core.completed()
    }
}

impl<V: AccumValue> PhaserHandle<V> {
    /// The accumulated result of the last completed phase, if any.
    pub fn last_result(&self) -> Option<V> {
        let completed = self.core.completed();
        let phase = completed.checked_sub(1)?;
        self.core.result(phase).ok().map(V::from_bits)
    }
}

/// Whether the caller may block on an inter-node collective: not on a
/// computation worker, where a blocking wait runs other tasks.
fn may_block() -> bool {
    #[cfg(loom)]
    return true;
    #[cfg(not(loom))]
    hc_runtime::current_worker_index().is_none()
}

impl<V> Registration<V> {
    /// Registers the creator of a new phaser at phase 0.
    pub(crate) fn create(core: Arc<Core>, mode: Mode) -> Result<Self, PhaserError> {
        let leaf = if mode.can_signal() {
            Some(core.join(0, None)?)
        } else {
            None
        };
        Ok(Registration {
            core,
            mode,
            leaf,
            sig: 0,
            wait: 0,
            waited: None,
            marker: PhantomData,
        })
    }

    /// The registration mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The number of phases this registration has passed: the phase its
    /// next `wait` (or, without a wait capability, `signal`) is for.
    pub fn phase(&self) -> u64 {
        if self.mode.can_wait() {
            self.wait
        } else {
            self.sig
        }
    }

    /// A handle on the phaser that registers no one.
    pub fn handle(&self) -> PhaserHandle<V> {
        PhaserHandle {
            core: Arc::clone(&self.core),
            marker: PhantomData,
        }
    }

    /// Registers a new task in `mode`, which must be no stronger than this
    /// registration's (HC's `async phased(ph<mode>)`); hand the result to
    /// the task ([`spawn_phased`](crate::spawn_phased)).
    ///
    /// # Errors
    /// [`PhaserError::StrongerChild`], [`PhaserError::Full`], or the
    /// failure of the phaser. May wait while this registration runs a phase
    /// ahead (`SIGNAL_ONLY`, see the crate docs on bounded run-ahead).
    pub fn register(&self, mode: Mode) -> Result<Registration<V>, PhaserError> {
        if !self.mode.allows_child(mode) {
            return Err(PhaserError::StrongerChild {
                parent: self.mode,
                child: mode,
            });
        }
        let (sig, wait) = if mode.can_signal() {
            (self.sig, self.sig)
        } else {
            (self.sig, self.wait)
        };
        let leaf = if mode.can_signal() {
            Some(self.core.join(sig, self.leaf)?)
        } else {
            None
        };
        Ok(Registration {
            core: Arc::clone(&self.core),
            mode,
            leaf,
            sig,
            wait,
            waited: None,
            marker: PhantomData,
        })
    }

    /// The same as [`register`](Self::register) in this registration's own
    /// mode (HC's `async phased`, inheriting the registration).
    ///
    /// # Errors
    /// As [`register`](Self::register).
    pub fn inherit(&self) -> Result<Registration<V>, PhaserError> {
        self.register(self.mode)
    }

    fn signal_bits(
        &mut self,
        op: &'static str,
        value: u64,
        will_wait: bool,
    ) -> Result<(), PhaserError> {
        let Some(leaf) = self.leaf.filter(|_| self.mode.can_signal()) else {
            return Err(PhaserError::ModeViolation {
                op,
                mode: self.mode,
            });
        };
        if self.mode.can_wait() && self.sig > self.wait {
            return Err(PhaserError::AlreadySignaled { phase: self.wait });
        }
        self.core
            .signal(leaf, self.sig, value, will_wait && may_block())?;
        self.sig += 1;
        Ok(())
    }

    /// Split-phase signal (`signal` of HC): this task has finished its part
    /// of the current phase; it continues without waiting.
    ///
    /// # Errors
    /// [`PhaserError::ModeViolation`] in `WAIT_ONLY`;
    /// [`PhaserError::AlreadySignaled`] for a second signal before `wait`.
    pub fn signal(&mut self) -> Result<(), PhaserError> {
        let bits = self.neutral();
        self.signal_bits("signal", bits, false)
    }

    /// Split-phase wait: waits until the phase this registration signaled
    /// (or, `WAIT_ONLY`, the next phase) is complete.
    ///
    /// # Errors
    /// [`PhaserError::ModeViolation`] in `SIGNAL_ONLY`;
    /// [`PhaserError::WaitBeforeSignal`] for `SIGNAL_WAIT` without a
    /// signal; [`PhaserError::NoSignalers`] if the phase can never
    /// complete; a phase failure.
    pub fn wait(&mut self) -> Result<(), PhaserError> {
        if !self.mode.can_wait() {
            return Err(PhaserError::ModeViolation {
                op: "wait",
                mode: self.mode,
            });
        }
        if self.mode.can_signal() && self.sig == self.wait {
            return Err(PhaserError::WaitBeforeSignal { phase: self.wait });
        }
        self.core.wait_for(self.wait)?;
        self.waited = Some(self.wait);
        self.wait += 1;
        Ok(())
    }

    /// `next`: signal, then wait (`SIGNAL_WAIT`); only signal
    /// (`SIGNAL_ONLY`); only wait (`WAIT_ONLY`).
    ///
    /// # Errors
    /// As [`signal`](Self::signal) and [`wait`](Self::wait).
    // The paper's name for the operation; a registration is no iterator.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<(), PhaserError> {
        let bits = self.neutral();
        self.next_bits("next", bits)
    }

    fn next_bits(&mut self, op: &'static str, bits: u64) -> Result<(), PhaserError> {
        match self.mode {
            Mode::SignalWait => {
                self.signal_bits(op, bits, true)?;
                self.wait()
            }
            Mode::SignalOnly => self.signal_bits(op, bits, false),
            Mode::WaitOnly => self.wait(),
        }
    }

    /// The value a plain `signal`/`next` contributes: the identity.
    fn neutral(&self) -> u64 {
        self.core.identity()
    }

    /// Leaves the phaser now (the same as dropping the registration).
    pub fn deregister(self) {}
}

impl<V: AccumValue> Registration<V> {
    /// `accum_next(value)`: contributes `value` to the current phase's
    /// reduction and, in `SIGNAL_WAIT`, waits for the phase; afterwards
    /// [`accum_get`](Self::accum_get) returns the global result.
    ///
    /// # Errors
    /// [`PhaserError::ModeViolation`] in `WAIT_ONLY` (a `WAIT_ONLY`
    /// registration reads results with [`next`](Self::next) and
    /// `accum_get`), otherwise as [`next`](Self::next).
    pub fn accum_next(&mut self, value: V) -> Result<(), PhaserError> {
        if !self.mode.can_signal() {
            return Err(PhaserError::ModeViolation {
                op: "accum_next",
                mode: self.mode,
            });
        }
        self.next_bits("accum_next", value.to_bits())
    }

    /// `accum_get`: the reduced value of the last phase this registration
    /// waited for, over every task on every rank.
    ///
    /// # Errors
    /// [`PhaserError::NoResult`] before any wait (and always in
    /// `SIGNAL_ONLY`); [`PhaserError::ResultOverwritten`] for a reader more
    /// than one phase behind.
    pub fn accum_get(&self) -> Result<V, PhaserError> {
        let phase = self.waited.ok_or(PhaserError::NoResult)?;
        self.core.result(phase).map(V::from_bits)
    }
}

impl<V> Drop for Registration<V> {
    fn drop(&mut self) {
        if let Some(leaf) = self.leaf.take() {
            self.core.drop_member(leaf, self.sig);
        }
    }
}
