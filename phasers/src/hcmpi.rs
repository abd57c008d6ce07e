//! hcmpi-phaser and hcmpi-accum (§II-C, §III-A of the HCMPI paper): one
//! `next` (or `accum_next`) synchronizes every registered task on every
//! rank.
//!
//! Each rank creates its own phaser (collectively: creation duplicates the
//! communicator, so the phaser's collectives never mix with others). Tasks
//! register and synchronize locally through the tree; each phase then ends
//! with one non-blocking collective on the phaser's communicator, posted
//! through the communication engine:
//!
//! * barrier: `MPI_Ibarrier` (MPI 4.0 §6.12.1);
//! * accumulator: `MPI_Iallreduce` (§6.12.5) of the rank's reduced value,
//!   whose result every task on every rank reads with `accum_get`.
//!
//! The shortest path: the last local arrival starts the collective (the
//! engine posts it at once when no other thread is stepping it), and the
//! collective's completion, wherever the engine completes it, publishes
//! the phase and wakes the waiting tasks itself (`core::pipeline`). No
//! thread waits for the collective, and no task is woken just to pass the
//! news on.
//!
//! # Strict and fuzzy barriers
//!
//! * **Strict**: the phaser master starts the `MPI_Ibarrier` of phase `k`
//!   once all local registrations signaled `k`. When any task leaves phase
//!   `k`, every task on every rank has signaled `k`.
//! * **Fuzzy**: the first local signal of phase `k` starts it (once phase
//!   `k - 1` is complete), overlapping the inter-node barrier with the
//!   local arrivals. When a task on rank `r` leaves phase `k`:
//!   - every task on rank `r` has signaled `k` (the local part is strict);
//!   - on every other rank, at least one task has signaled `k`, and every
//!     task has signaled `k - 1` (that rank had completed `k - 1` before
//!     it started the collective of `k`).
//!
//!   It does **not** guarantee that every task on another rank has
//!   signaled `k`: work a remote task does before its `next` of `k` may
//!   still be running. Use it where one phase of slack across ranks is
//!   enough (the data exchanged in phase `k` is only read after `k + 1`).
//!
//! Accumulators are always strict: the rank's value is known only when
//! the last local task arrived.
//!
//! With one rank the collective is skipped (it would be the identity).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use hc_mpi::{Comm, Equivalence, Hcmpi, ReduceOp, Request};
use hc_runtime::Scope;

use crate::accum::{combiner, AccumOp, AccumValue};
use crate::builder::PhaserBuilder;
use crate::global::{GlobalStage, PendingPhase};
use crate::mode::{Mode, PhaseFailure, PhaserError};
use crate::registration::Registration;

/// When the inter-node barrier of a phase starts (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarrierMode {
    /// After every local signal of the phase.
    Strict,
    /// At the first local signal of the phase.
    Fuzzy,
}

impl BarrierMode {
    /// `strict` or `fuzzy`.
    ///
    /// ```
    /// assert_eq!(hcmpi_phasers::BarrierMode::Fuzzy.name(), "fuzzy");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            BarrierMode::Strict => "strict",
            BarrierMode::Fuzzy => "fuzzy",
        }
    }
}

#[derive(Debug)]
struct MpiBarrier {
    comm: Comm,
    fuzzy: bool,
}

impl GlobalStage for MpiBarrier {
    fn fuzzy(&self) -> bool {
        self.fuzzy
    }

    fn start(&self, _phase: u64, _local: u64) -> Result<Box<dyn PendingPhase>, PhaseFailure> {
        Ok(Box::new(BarrierPending(self.comm.ibarrier())))
    }
}

#[derive(Debug)]
struct BarrierPending(Request<()>);

impl PendingPhase for BarrierPending {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Result<u64, PhaseFailure>> {
        Pin::new(&mut self.0).poll(cx).map(|outcome| {
            outcome
                .map(|_| 0)
                .map_err(|e| collective_failed("MPI_Ibarrier", e))
        })
    }
}

#[derive(Debug)]
struct MpiAllreduce<V> {
    comm: Comm,
    op: ReduceOp,
    marker: std::marker::PhantomData<fn(V) -> V>,
}

impl<V: AccumValue + Equivalence + Default> GlobalStage for MpiAllreduce<V> {
    fn fuzzy(&self) -> bool {
        false
    }

    fn start(&self, _phase: u64, local: u64) -> Result<Box<dyn PendingPhase>, PhaseFailure> {
        let request = self
            .comm
            .iallreduce(vec![V::from_bits(local)], self.op)
            .map_err(|e| collective_failed("MPI_Iallreduce", e))?;
        Ok(Box::new(AllreducePending(request)))
    }
}

#[derive(Debug)]
struct AllreducePending<V>(Request<Vec<V>>);

impl<V: AccumValue + Equivalence> PendingPhase for AllreducePending<V> {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Result<u64, PhaseFailure>> {
        Pin::new(&mut self.0).poll(cx).map(|outcome| {
            let (values, _) = outcome.map_err(|e| collective_failed("MPI_Iallreduce", e))?;
            values
                .first()
                .map(|v| v.to_bits())
                .ok_or(PhaseFailure::NoValue {
                    op: "MPI_Iallreduce",
                })
        })
    }
}

/// A communicator of the phaser's own; `None` for a single rank.
fn phaser_comm(comm: &Comm) -> Result<Option<Comm>, PhaserError> {
    if comm.size() == 1 {
        return Ok(None);
    }
    comm.duplicate()
        .map(Some)
        .map_err(|source| PhaserError::Mpi {
            what: "duplicate the communicator",
            source,
        })
}

impl PhaserBuilder {
    /// Creates an hcmpi-phaser over `comm` (collective: every rank of
    /// `comm` calls it), belonging to the finish of `scope`, and registers
    /// the caller in `mode`.
    ///
    /// ```no_run
    /// use hcmpi_phasers::{spawn_phased, BarrierMode, Mode, Phaser};
    ///
    /// let hc = hc_mpi::Hcmpi::init().unwrap();
    /// hc.finish(|s| {
    ///     let ph = Phaser::builder()
    ///         .build_hcmpi(s, hc.world(), BarrierMode::Fuzzy, Mode::SignalWait)
    ///         .unwrap();
    ///     spawn_phased(s, ph.register(Mode::SignalWait).unwrap(), |_, mut reg| async move {
    ///         reg.next().await.unwrap(); // every task of every rank signaled
    ///     });
    /// });
    /// ```
    ///
    /// # Errors
    /// As [`build`](Self::build), or a failure to duplicate `comm`.
    pub fn build_hcmpi<'scope>(
        self,
        scope: &'scope Scope<'scope, '_>,
        comm: &Comm,
        barrier: BarrierMode,
        mode: Mode,
    ) -> Result<Registration<'scope, ()>, PhaserError> {
        let _ = scope; // binds the lifetime, as in `build`
        let global = phaser_comm(comm)?.map(|comm| {
            Box::new(MpiBarrier {
                comm,
                fuzzy: barrier == BarrierMode::Fuzzy,
            }) as Box<dyn GlobalStage>
        });
        self.create(None, global, mode)
    }

    /// Creates an hcmpi-accum over `comm` reducing `V` with `op`
    /// (collective), belonging to the finish of `scope`, and registers the
    /// caller in `mode`.
    ///
    /// ```no_run
    /// use hcmpi_phasers::{spawn_phased, AccumOp, Mode, Phaser};
    ///
    /// let hc = hc_mpi::Hcmpi::init().unwrap();
    /// let ranks = hc.size() as u64;
    /// hc.finish(|s| {
    ///     let acc = Phaser::builder()
    ///         .build_hcmpi_accum::<u64>(s, hc.world(), AccumOp::Sum, Mode::SignalWait)
    ///         .unwrap();
    ///     spawn_phased(s, acc.register(Mode::SignalWait).unwrap(), move |_, mut reg| async move {
    ///         reg.accum_next(1).await.unwrap();
    ///         assert_eq!(reg.accum_get(), Ok(ranks));
    ///     });
    /// });
    /// ```
    ///
    /// # Errors
    /// As [`build_accum`](Self::build_accum), or a failure to duplicate
    /// `comm`.
    pub fn build_hcmpi_accum<'scope, V>(
        self,
        scope: &'scope Scope<'scope, '_>,
        comm: &Comm,
        op: AccumOp,
        mode: Mode,
    ) -> Result<Registration<'scope, V>, PhaserError>
    where
        V: AccumValue + Equivalence + Default,
    {
        let _ = scope; // binds the lifetime, as in `build`
        let combiner = combiner::<V>(op)?;
        let global = phaser_comm(comm)?.map(|comm| {
            Box::new(MpiAllreduce::<V> {
                comm,
                op: op.mpi(),
                marker: std::marker::PhantomData,
            }) as Box<dyn GlobalStage>
        });
        self.create(Some(combiner), global, mode)
    }
}

/// `HCMPI_PHASER_CREATE`: an hcmpi-phaser over the world with the default
/// tree, belonging to the finish of `scope`; the caller is registered in
/// `mode`. Collective.
///
/// ```no_run
/// use hcmpi_phasers::{hcmpi_phaser_create, BarrierMode, Mode};
///
/// let hc = hc_mpi::Hcmpi::init().unwrap();
/// hc.finish(|s| {
///     let mut ph = hcmpi_phaser_create(s, &hc, Mode::SignalWait, BarrierMode::Strict).unwrap();
///     s.spawn_future(async move { ph.next().await.unwrap() });
/// });
/// ```
///
/// # Errors
/// As [`PhaserBuilder::build_hcmpi`].
pub fn hcmpi_phaser_create<'scope>(
    scope: &'scope Scope<'scope, '_>,
    hc: &Hcmpi,
    mode: Mode,
    barrier: BarrierMode,
) -> Result<Registration<'scope, ()>, PhaserError> {
    PhaserBuilder::default().build_hcmpi(scope, hc.world(), barrier, mode)
}

/// `HCMPI_ACCUM_CREATE`: an hcmpi-accum over the world with the default
/// tree, belonging to the finish of `scope`; the caller is registered in
/// `mode` (the paper's default is `SIGNAL_WAIT`). Collective.
///
/// ```no_run
/// use hcmpi_phasers::{hcmpi_accum_create, AccumOp, Mode};
///
/// let hc = hc_mpi::Hcmpi::init().unwrap();
/// let result = hc.finish(|s| {
///     let mut acc = hcmpi_accum_create::<i32>(s, &hc, AccumOp::Sum, Mode::SignalWait).unwrap();
///     let result = acc.handle();
///     s.spawn_future(async move { acc.accum_next(1).await.unwrap() });
///     result
/// });
/// assert_eq!(result.last_result(), Some(hc.size()));
/// ```
///
/// # Errors
/// As [`PhaserBuilder::build_hcmpi_accum`].
pub fn hcmpi_accum_create<'scope, V>(
    scope: &'scope Scope<'scope, '_>,
    hc: &Hcmpi,
    op: AccumOp,
    mode: Mode,
) -> Result<Registration<'scope, V>, PhaserError>
where
    V: AccumValue + Equivalence + Default,
{
    PhaserBuilder::default().build_hcmpi_accum(scope, hc.world(), op, mode)
}

/// A [`PhaseFailure::Collective`] of `op`.
fn collective_failed(op: &'static str, source: hc_mpi::Error) -> PhaseFailure {
    PhaseFailure::Collective { op, source }
}
