//! A task's registration on a phaser: `next`, split-phase `signal`/`wait`,
//! accumulation, child registrations, and the drop when the task ends.
//!
//! Every operation that can wait is a future: awaiting it in a task
//! (a phased task of [`spawn_phased`](crate::spawn_phased), or any future
//! task) holds no worker and no thread while the phase is incomplete, and
//! the task is woken by whoever completes the phase (see `wakers` and
//! `core::pipeline`). There is no blocking form.
//!
//! # Cursors
//!
//! A registration keeps two phase numbers: `sig`, the next phase it will
//! signal, and `wait`, the next phase it will wait for. A `SIGNAL_WAIT`
//! registration is either *between phases* (`sig == wait`) or *signaled*
//! (`sig == wait + 1`, after a split-phase `signal`); `next` is legal only
//! between phases, `signal` only between phases, `wait` only when signaled.
//! Each cursor advances as soon as its step happened: a `next` future
//! dropped after it signaled leaves the registration signaled (call
//! `wait`).
//!
//! # Children
//!
//! A child registration starts where its parent is: its `sig` is the
//! parent's `sig` and its `wait` the parent's `sig` too for a signaling
//! child (a child of a signaled parent joins the next phase), the parent's
//! `wait` for a `WAIT_ONLY` child. It is registered before the call
//! returns, so the phase it starts in cannot complete without it — this is
//! what makes phased spawning race-free. Registering never waits. Its leaf
//! is chosen round-robin; if that leaf cannot take it, the parent's leaf
//! can (the parent has not signaled `sig`, so its leaf is at most two
//! phases behind `sig`, see `word`).
//!
//! # Scope
//!
//! A phaser belongs to the finish scope it is created in (its *immediately
//! enclosing finish*, as in Habanero phasers): every registration carries
//! that scope's `'scope` lifetime, so none can outlive the finish, be
//! returned from its body, or be handed to phased tasks of another finish
//! (see [`spawn_phased`](crate::spawn_phased)). The finish therefore never
//! waits for a registration held outside it.
//!
//! # Drop
//!
//! Dropping a registration (explicitly, or when the task that owns it ends
//! or unwinds) removes it at its cursor: phases no longer wait for it. A
//! registration is `Send` (it moves into its task); every operation that
//! advances it takes it by `&mut`, so one task at a time does.

use std::marker::PhantomData;
use std::sync::Arc;

use crate::accum::AccumValue;
use crate::core::Core;
use crate::mode::{Mode, PhaserError};

/// Ties a value to the `'scope` of one finish: invariant, so a registration
/// of one finish is never taken for one of another.
pub(crate) type ScopeMarker<'scope> = PhantomData<fn(&'scope ()) -> &'scope ()>;

/// A task's registration on a phaser of the finish scope `'scope` (`V` is
/// the accumulator's value type, `()` for a barrier phaser).
///
/// Created by [`Phaser::new`](crate::Phaser::new) or a builder for the
/// creating task, and by [`register`](Registration::register) for a task it
/// is about to spawn ([`spawn_phased`](crate::spawn_phased)).
pub struct Registration<'scope, V = ()> {
    core: Arc<Core>,
    mode: Mode,
    /// The leaf of a registration that signals.
    leaf: Option<usize>,
    sig: u64,
    wait: u64,
    /// The last phase this registration waited for.
    waited: Option<u64>,
    value: PhantomData<fn(V) -> V>,
    scope: ScopeMarker<'scope>,
}

impl<V> std::fmt::Debug for Registration<'_, V> {
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
/// of completed phases and accumulator results, also after the finish that
/// ran the phased tasks (Fig. 8).
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
    ///
    /// ```
    /// use hcmpi_phasers::{Mode, Phaser};
    ///
    /// let handle = hc_runtime::finish(|s| {
    ///     let mut ph = Phaser::new(s, Mode::SignalWait);
    ///     let handle = ph.handle();
    ///     s.spawn_future(async move { ph.next().await.unwrap() });
    ///     handle
    /// });
    /// assert_eq!(handle.completed_phases(), 1);
    /// ```
    pub fn completed_phases(&self) -> u64 {
        self.core.completed()
    }
}

impl<V: AccumValue> PhaserHandle<V> {
    /// The accumulated result of the last completed phase, if any.
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Mode, Phaser};
    ///
    /// let sum = hc_runtime::finish(|s| {
    ///     let mut acc = Phaser::builder()
    ///         .build_accum::<u32>(s, AccumOp::Sum, Mode::SignalWait)
    ///         .unwrap();
    ///     let handle = acc.handle();
    ///     s.spawn_future(async move { acc.accum_next(7).await.unwrap() });
    ///     handle
    /// });
    /// assert_eq!(sum.last_result(), Some(7));
    /// ```
    pub fn last_result(&self) -> Option<V> {
        let completed = self.core.completed();
        let phase = completed.checked_sub(1)?;
        self.core.result(phase).ok().map(V::from_bits)
    }
}

impl<'scope, V> Registration<'scope, V> {
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
            value: PhantomData,
            scope: PhantomData,
        })
    }

    /// The phaser's shared state (loom models).
    #[cfg(all(test, loom))]
    pub(crate) fn core(&self) -> &Core {
        &self.core
    }

    /// The registration mode.
    ///
    /// ```
    /// use hcmpi_phasers::{Mode, Phaser};
    ///
    /// hc_runtime::finish(|s| {
    ///     let ph = Phaser::new(s, Mode::SignalWait);
    ///     assert_eq!(ph.register(Mode::WaitOnly).unwrap().mode(), Mode::WaitOnly);
    /// });
    /// ```
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The number of phases this registration has passed: the phase its
    /// next `wait` (or, without a wait capability, `signal`) is for.
    ///
    /// ```
    /// use hcmpi_phasers::{Mode, Phaser};
    ///
    /// hc_runtime::finish(|s| {
    ///     let mut ph = Phaser::new(s, Mode::SignalWait);
    ///     s.spawn_future(async move {
    ///         assert_eq!(ph.phase(), 0);
    ///         ph.next().await.unwrap();
    ///         assert_eq!(ph.phase(), 1);
    ///     });
    /// });
    /// ```
    pub fn phase(&self) -> u64 {
        if self.mode.can_wait() {
            self.wait
        } else {
            self.sig
        }
    }

    /// A handle on the phaser that registers no one.
    ///
    /// ```
    /// use hcmpi_phasers::{Mode, Phaser};
    ///
    /// hc_runtime::finish(|s| {
    ///     let ph = Phaser::new(s, Mode::SignalWait);
    ///     assert_eq!(ph.handle().completed_phases(), 0);
    /// });
    /// ```
    pub fn handle(&self) -> PhaserHandle<V> {
        PhaserHandle {
            core: Arc::clone(&self.core),
            marker: PhantomData,
        }
    }

    /// Registers a new task in `mode`, which must be no stronger than this
    /// registration's (HC's `async phased(ph<mode>)`); hand the result to
    /// the task ([`spawn_phased`](crate::spawn_phased)). Never waits.
    ///
    /// ```
    /// use hcmpi_phasers::{spawn_phased, Mode, Phaser, PhaserError};
    ///
    /// hc_runtime::finish(|s| {
    ///     let ph = Phaser::new(s, Mode::SignalOnly);
    ///     let child = ph.register(Mode::SignalOnly).unwrap();
    ///     spawn_phased(s, child, |_, mut child| async move { child.next().await.unwrap() });
    ///     assert!(matches!(
    ///         ph.register(Mode::SignalWait),
    ///         Err(PhaserError::StrongerChild { .. })
    ///     ));
    /// });
    /// ```
    ///
    /// # Errors
    /// [`PhaserError::StrongerChild`], [`PhaserError::Full`], or the
    /// failure of the phaser.
    pub fn register(&self, mode: Mode) -> Result<Registration<'scope, V>, PhaserError> {
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
            value: PhantomData,
            scope: PhantomData,
        })
    }

    /// The same as [`register`](Self::register) in this registration's own
    /// mode (HC's `async phased`, inheriting the registration).
    ///
    /// ```
    /// use hcmpi_phasers::{Mode, Phaser};
    ///
    /// hc_runtime::finish(|s| {
    ///     let ph = Phaser::new(s, Mode::SignalWait);
    ///     assert_eq!(ph.inherit().unwrap().mode(), Mode::SignalWait);
    /// });
    /// ```
    ///
    /// # Errors
    /// As [`register`](Self::register).
    pub fn inherit(&self) -> Result<Registration<'scope, V>, PhaserError> {
        self.register(self.mode)
    }

    async fn signal_bits(&mut self, op: &'static str, value: u64) -> Result<(), PhaserError> {
        let Some(leaf) = self.leaf.filter(|_| self.mode.can_signal()) else {
            return Err(PhaserError::ModeViolation {
                op,
                mode: self.mode,
            });
        };
        // A failed phaser reports its failure to every later operation,
        // whatever state the failure left the registration in.
        if let Some(error) = self.core.failure() {
            return Err(error);
        }
        if self.mode.can_wait() && self.sig > self.wait {
            return Err(PhaserError::AlreadySignaled { phase: self.wait });
        }
        self.core.signal(leaf, self.sig, value).await?;
        self.sig += 1;
        Ok(())
    }

    /// Split-phase signal (`signal` of HC): this task has finished its part
    /// of the current phase; it continues without waiting for the others.
    /// Completes at once, except for a `SIGNAL_ONLY` registration already a
    /// phase ahead of the phaser, which waits until it may signal again
    /// (the bounded run-ahead of the crate docs).
    ///
    /// ```
    /// use hcmpi_phasers::{Mode, Phaser};
    ///
    /// hc_runtime::finish(|s| {
    ///     let mut ph = Phaser::new(s, Mode::SignalWait);
    ///     s.spawn_future(async move {
    ///         ph.signal().await.unwrap();
    ///         // ... work that overlaps the barrier ...
    ///         ph.wait().await.unwrap();
    ///     });
    /// });
    /// ```
    ///
    /// # Errors
    /// [`PhaserError::ModeViolation`] in `WAIT_ONLY`;
    /// [`PhaserError::AlreadySignaled`] for a second signal before `wait`;
    /// the failure of the phaser.
    pub async fn signal(&mut self) -> Result<(), PhaserError> {
        let bits = self.neutral();
        self.signal_bits("signal", bits).await
    }

    /// Split-phase wait: completes once the phase this registration
    /// signaled (or, `WAIT_ONLY`, the next phase) is complete. While it
    /// waits, the task holds no worker.
    ///
    /// ```
    /// use hcmpi_phasers::{Mode, Phaser};
    ///
    /// hc_runtime::finish(|s| {
    ///     let mut ph = Phaser::new(s, Mode::SignalWait);
    ///     let mut reader = ph.register(Mode::WaitOnly).unwrap();
    ///     s.spawn_future(async move {
    ///         reader.wait().await.unwrap(); // phase 0 is complete
    ///         assert_eq!(reader.phase(), 1);
    ///     });
    ///     s.spawn_future(async move { ph.next().await.unwrap() });
    /// });
    /// ```
    ///
    /// # Errors
    /// [`PhaserError::ModeViolation`] in `SIGNAL_ONLY`;
    /// [`PhaserError::WaitBeforeSignal`] for `SIGNAL_WAIT` without a
    /// signal; [`PhaserError::NoSignalers`] if the phase can never
    /// complete; a phase failure.
    pub async fn wait(&mut self) -> Result<(), PhaserError> {
        if !self.mode.can_wait() {
            return Err(PhaserError::ModeViolation {
                op: "wait",
                mode: self.mode,
            });
        }
        if self.mode.can_signal() && self.sig == self.wait {
            return Err(PhaserError::WaitBeforeSignal { phase: self.wait });
        }
        self.core.wait_for(self.wait).await?;
        self.waited = Some(self.wait);
        self.wait += 1;
        Ok(())
    }

    /// `next`: signal, then wait (`SIGNAL_WAIT`); only signal
    /// (`SIGNAL_ONLY`); only wait (`WAIT_ONLY`).
    ///
    /// ```
    /// use hcmpi_phasers::{spawn_phased, Mode, Phaser};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let arrived = AtomicUsize::new(0);
    /// hc_runtime::finish(|s| {
    ///     let ph = Phaser::new(s, Mode::SignalWait);
    ///     for _ in 0..3 {
    ///         let arrived = &arrived;
    ///         spawn_phased(s, ph.register(Mode::SignalWait).unwrap(), move |_, mut reg| async move {
    ///             arrived.fetch_add(1, Ordering::SeqCst);
    ///             reg.next().await.unwrap();
    ///             assert_eq!(arrived.load(Ordering::SeqCst), 3);
    ///         });
    ///     }
    /// });
    /// ```
    ///
    /// # Errors
    /// As [`signal`](Self::signal) and [`wait`](Self::wait).
    // The paper's name for the operation; a registration is no iterator.
    #[allow(clippy::should_implement_trait)]
    pub async fn next(&mut self) -> Result<(), PhaserError> {
        let bits = self.neutral();
        self.next_bits("next", bits).await
    }

    async fn next_bits(&mut self, op: &'static str, bits: u64) -> Result<(), PhaserError> {
        match self.mode {
            Mode::SignalWait => {
                self.signal_bits(op, bits).await?;
                self.wait().await
            }
            Mode::SignalOnly => self.signal_bits(op, bits).await,
            Mode::WaitOnly => self.wait().await,
        }
    }

    /// The value a plain `signal`/`next` contributes: the identity.
    fn neutral(&self) -> u64 {
        self.core.identity()
    }

    /// Leaves the phaser now (the same as dropping the registration).
    ///
    /// ```
    /// use hcmpi_phasers::{Mode, Phaser};
    ///
    /// hc_runtime::finish(|s| {
    ///     let ph = Phaser::new(s, Mode::SignalWait);
    ///     let mut reader = ph.register(Mode::WaitOnly).unwrap();
    ///     ph.deregister();
    ///     // No registration that signals is left: phase 0 can never complete.
    ///     s.spawn_future(async move { assert!(reader.wait().await.is_err()) });
    /// });
    /// ```
    pub fn deregister(self) {}
}

impl<V: AccumValue> Registration<'_, V> {
    /// `accum_next(value)`: contributes `value` to the current phase's
    /// reduction and, in `SIGNAL_WAIT`, waits for the phase; afterwards
    /// [`accum_get`](Self::accum_get) returns the global result.
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Mode, Phaser};
    ///
    /// hc_runtime::finish(|s| {
    ///     let acc = Phaser::builder().build_accum::<i64>(s, AccumOp::Max, Mode::SignalWait).unwrap();
    ///     for x in [3, -1, 8] {
    ///         let mut reg = acc.register(Mode::SignalWait).unwrap();
    ///         s.spawn_future(async move {
    ///             reg.accum_next(x).await.unwrap();
    ///             assert_eq!(reg.accum_get(), Ok(8));
    ///         });
    ///     }
    /// });
    /// ```
    ///
    /// # Errors
    /// [`PhaserError::ModeViolation`] in `WAIT_ONLY` (a `WAIT_ONLY`
    /// registration reads results with [`next`](Self::next) and
    /// `accum_get`), otherwise as [`next`](Self::next).
    pub async fn accum_next(&mut self, value: V) -> Result<(), PhaserError> {
        if !self.mode.can_signal() {
            return Err(PhaserError::ModeViolation {
                op: "accum_next",
                mode: self.mode,
            });
        }
        self.next_bits("accum_next", value.to_bits()).await
    }

    /// `accum_get`: the reduced value of the last phase this registration
    /// waited for, over every task on every rank.
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Mode, Phaser, PhaserError};
    ///
    /// hc_runtime::finish(|s| {
    ///     let mut acc = Phaser::builder().build_accum::<u8>(s, AccumOp::Sum, Mode::SignalWait).unwrap();
    ///     assert_eq!(acc.accum_get(), Err(PhaserError::NoResult));
    ///     s.spawn_future(async move {
    ///         acc.accum_next(2).await.unwrap();
    ///         assert_eq!(acc.accum_get(), Ok(2));
    ///     });
    /// });
    /// ```
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

impl<V> Drop for Registration<'_, V> {
    fn drop(&mut self) {
        if let Some(leaf) = self.leaf.take() {
            self.core.drop_member(leaf, self.sig);
        }
    }
}
