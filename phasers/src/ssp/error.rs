//! What can go wrong with a stale accumulator.

/// What went wrong with a [`StaleAccum`](crate::StaleAccum).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SspError {
    /// A bitwise or logical operation on a float type.
    #[error("accumulation operation {op} is not defined for {ty}")]
    UnsupportedOp {
        /// The operation.
        op: &'static str,
        /// The value type.
        ty: &'static str,
    },
    /// The ranks created the accumulator with different settings.
    #[error(
        "the ranks disagree on the accumulator's {what}: this rank has {local}, \
         another {other}"
    )]
    Mismatch {
        /// `staleness`, `reduction` or `value size`.
        what: &'static str,
        /// This rank's setting.
        local: u64,
        /// A different setting of another rank.
        other: u64,
    },
    /// A phase's result was asked for before the phase completed here.
    #[error("phase {phase} has not completed on this rank (completed: {completed})")]
    NotComplete {
        /// The phase asked for.
        phase: u64,
        /// Phases completed so far.
        completed: u64,
    },
    /// A phase's result is older than the ones this rank keeps.
    #[error("the result of phase {phase} is no longer kept (oldest kept: {oldest})")]
    Evicted {
        /// The phase asked for.
        phase: u64,
        /// The oldest phase still kept.
        oldest: u64,
    },
    /// Every rank closed the accumulator before this phase completed, so it
    /// never will.
    #[error("phase {phase} never completes: the accumulator was closed at phase {end}")]
    Closed {
        /// The phase waited for.
        phase: u64,
        /// The first phase nobody contributes to.
        end: u64,
    },
    /// A message that does not belong to the protocol (another program on
    /// the accumulator's communicator, or a protocol bug).
    #[error("unexpected accumulator message from rank {source_rank}: {what}")]
    Protocol {
        /// The sender.
        source_rank: i32,
        /// What was wrong with it.
        what: &'static str,
    },
    /// The reduction panicked while the communication engine applied a
    /// message from another rank; this rank's accumulator stopped.
    #[error("the reduction panicked applying a message from rank {source_rank}")]
    HandlerPanicked {
        /// The sender of the message.
        source_rank: i32,
    },
    /// The reduction panicked in a member's task on this rank; the
    /// accumulator stopped (the panic goes on in that task).
    #[error("the reduction panicked in a member of this rank")]
    ReductionPanicked,
    /// The accumulator failed on another rank (any of these errors there),
    /// so it failed here too: no phase completes any more.
    #[error("the accumulator failed on rank {rank}")]
    PeerFailed {
        /// The rank where it failed first.
        rank: i32,
    },
    /// The accumulator was closed (or dropped) while members of this rank
    /// were still registered: they were leaked (`mem::forget`), and the
    /// phases they would contribute to could never complete on any rank.
    #[error("{count} member(s) of this rank were leaked instead of dropped")]
    MembersLeaked {
        /// How many.
        count: usize,
    },
    /// An MPI operation of the accumulator failed.
    #[cfg(feature = "mpi")]
    #[error("stale accumulator: {what} failed")]
    Mpi {
        /// The operation.
        what: &'static str,
        /// The MPI error.
        #[source]
        source: hc_mpi::Error,
    },
}
