//! The inter-node stage of an hcmpi phaser: what the completion pipeline
//! (`core::pipeline`) asks of it.
//!
//! A phaser without one is an intra-node phaser. With one, each phase that
//! completes locally is completed globally by a non-blocking collective
//! that the stage starts (`MPI_Ibarrier` or `MPI_Iallreduce`, see
//! `hcmpi`); the pipeline polls it like a future, with a waker that
//! finishes the phase from wherever the collective completes.

use std::fmt::Debug;
use std::task::{Context, Poll};

use crate::mode::PhaseFailure;

/// Starts the collective of each phase.
pub(crate) trait GlobalStage: Send + Sync + Debug {
    /// Fuzzy barrier: the collective of a phase may start at the first local
    /// arrival rather than after the last.
    fn fuzzy(&self) -> bool;

    /// Starts the collective of `phase` with this rank's local value bits.
    /// Called once per phase, in phase order, on every rank.
    fn start(&self, phase: u64, local: u64) -> Result<Box<dyn PendingPhase>, PhaseFailure>;
}

/// A collective in flight.
pub(crate) trait PendingPhase: Send + Debug {
    /// The global value bits once the collective is complete; otherwise
    /// `Pending`, and `cx`'s waker is woken when it completes.
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Result<u64, PhaseFailure>>;
}
