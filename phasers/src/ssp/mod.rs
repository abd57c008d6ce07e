//! Stale-synchronous and eventually-consistent accumulators (after the
//! `allreduce_SSP` and eventually consistent collectives of the GASPI work,
//! EPEEC D4.3 §3.3): a reduction per phase over every member on every
//! rank, which a member may read a bounded number of phases late instead
//! of waiting for the slowest contributor.
//!
//! # Semantics
//!
//! Members contribute one value per phase, in phase order
//! ([`Member::advance`]); the result of phase `p` reduces every
//! contribution to `p` on every rank and is the same bits on every rank.
//! With [`Staleness::Bounded(k)`](Staleness::Bounded):
//!
//! * after contributing to phase `p`, a member goes on as soon as phase
//!   `p - k` is complete on its rank: it reads a result at most `k` phases
//!   old ([`Snapshot::phase`] says which), and since phase `p - k` needs
//!   everyone's contribution, no member runs more than `k` phases ahead of
//!   the slowest one;
//! * `k = 0` is the strict accumulator: `advance` returns phase `p` itself.
//!
//! With [`Staleness::Eventual`] a member never waits: contributions are
//! combined as they arrive, and the newest complete result is what it
//! reads.
//!
//! A member that leaves (drops) no longer counts from its phase on, and a
//! rank that [`close`](StaleAccum::close)s contributes the identity from
//! then on (as a phaser's dropped registration). A rank is a participant
//! from creation to `close`: while it has no member (before the first
//! joins, or after all left) its phases wait for a member to join or for
//! the rank to close.
//!
//! # Protocol
//!
//! Each rank holds a `Window` (`window`): the phases it has not reduced
//! yet, each with its local contributions and its children's partial
//! results, and the results it has published. The ranks form a binomial
//! tree (rank 0 at the root); all messages travel on the accumulator's own
//! communicator, through the communication engine's message service, whose
//! handler runs the same state machine — no thread and no task stands by.
//!
//! 1. **Contribute.** A member combines its value into its rank's slot of
//!    phase `p` (opening the phases up to `p` if needed).
//! 2. **Reduce.** The oldest open phase is *reduced* once every local
//!    member counted in it contributed (and it counts at least one, or the
//!    rank is closed) and every child sent its partial for it (or retired
//!    before it): its value is the rank's own, then
//!    each child's in a fixed order. A non-root sends it to its parent
//!    (`Partial`); the root publishes it. Phases reduce in order, so a
//!    fast subtree's partials wait in their slots.
//! 3. **Send.** The messages a change produces are started (`MPI_Isend`,
//!    MPI 4.0 §3.7.2) while the rank's lock is held, so they are posted in
//!    the order they were produced; MPI's non-overtaking rule then delivers
//!    them in that order (a `Retire` after the last `Partial`, a `Result`
//!    of `p` before that of `p + 1`).
//! 4. **Publish.** The root, or a rank receiving `Result(p)` from its
//!    parent, records the result, raises `published` to `p + 1` and passes
//!    the result to each child that may still have members waiting.
//! 5. **Wake.** After the lock is released the waiters are woken (the
//!    protocol of `wakers`). A member that contributed to `p` waits for
//!    `published > p - k` (or a failure, or the end).
//! 6. **Retire.** A closed rank whose children all retired, once it has
//!    reduced every phase below `end` (one past the highest phase any
//!    member of its subtree contributed to), sends `Retire(end)` to its
//!    parent: the parent counts the identity for that subtree from `end`
//!    on.
//! 7. **End.** When the root has retired, every rank is closed: it sends
//!    `End(end)` down the tree, the last message on every link. Each rank
//!    passes it on, then stops serving, and its `close` completes once its
//!    own sends are delivered. No message arrives after a rank's service
//!    stopped (unless the accumulator failed, step 8).
//! 8. **Fail.** A rank whose part cannot go on — a protocol violation, a
//!    reduction that panicked in the engine's handler, a failed MPI
//!    operation, members leaked (`mem::forget`) when it closes — records
//!    its error, stops the protocol (it reduces, publishes and sends
//!    nothing more) and sends `Failed(origin)` to its
//!    parent and children. A rank that learns of a failure for the first
//!    time records `SspError::PeerFailed`, stops, and forwards it to its
//!    other neighbours: over a tree, every rank learns of some failure
//!    (a neighbour that knows of one either told it or heard of it from
//!    it), so every waiter on every rank ends with an error instead of
//!    waiting for phases that never complete. A failed rank's `close`
//!    returns its error without waiting for the end and stops serving (a
//!    dropped accumulator stops at the failure); messages still in flight
//!    to it are left unreceived. A reduction that panics in a member's
//!    task fails the accumulator (`ReductionPanicked`) before the panic
//!    goes on. Failures after the end are not spread: nobody listens any
//!    more.
//!
//! A member joins at an open phase, so joins only touch phases that are not
//! reduced, and a phase opened later counts every live member.
//!
//! # Memory ordering
//!
//! The window is behind one mutex per rank, so contributions, messages and
//! joins are totally ordered on a rank and each sees the previous ones.
//! `published`, `ended` and `failed` mirror it for waiters that do not
//! lock it: they are stored (`SeqCst`) after the change and before
//! `WakerList::wake_all`, and loaded with `Acquire`; the waker list's own
//! lock makes a registration either see the new value or be woken
//! (see `wakers`).

mod accum;
mod error;
#[cfg(feature = "mpi")]
mod links;
mod reduction;
mod window;

#[cfg(test)]
mod sim_tests;

pub use accum::{Member, Snapshot, StaleAccum, Staleness};
pub use error::SspError;
pub use reduction::Reduction;
