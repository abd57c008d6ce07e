//! The inter-node stage of an hcmpi phaser: what `core` asks of it.
//!
//! A phaser without one is an intra-node phaser. With one, each phase that
//! completes locally is completed globally by a collective that the stage
//! starts (`MPI_Ibarrier` or `MPI_Iallreduce` on the communication worker,
//! see `hcmpi`).

use std::fmt::Debug;

use hc_runtime::Awaitable;

/// Starts the collective of each phase.
pub(crate) trait GlobalStage: Send + Sync + Debug {
    /// Fuzzy barrier: the collective of a phase may start at the first local
    /// arrival rather than after the last.
    fn fuzzy(&self) -> bool;

    /// Starts the collective of `phase` with this rank's local value bits.
    /// Called once per phase, in phase order, on every rank.
    fn start(&self, phase: u64, local: u64) -> Result<Box<dyn PendingPhase>, String>;
}

/// A collective in flight.
pub(crate) trait PendingPhase: Send + Debug {
    /// What to wait on; `None` when the collective is already complete.
    fn awaitable(&self) -> Option<&dyn Awaitable>;

    /// The global value bits, once complete.
    fn finish(self: Box<Self>) -> Result<u64, String>;
}
