//! Communication task records and their lifecycle (Fig. 11 of the HCMPI
//! paper).
//!
//! A computation task that makes an HCMPI call does not call MPI: it fills in
//! a [`CommTask`] record and hands it to the communication worker. Records
//! are recycled through a pool, so steady-state communication allocates no
//! records.
//!
//! # States
//!
//! ```text
//!  AVAILABLE ──take from pool──▶ ALLOCATED ──fill in, enqueue──▶ PRESCRIBED
//!      ▲                                                            │
//!      │                                              comm worker posts the
//!      │                                              non-blocking MPI call
//!      │                                                            ▼
//!  (recycled) ◀──request DDF put── COMPLETED ◀──Testsome/Iprobe── ACTIVE
//! ```
//!
//! | state        | owner                 | meaning                              |
//! |--------------|-----------------------|--------------------------------------|
//! | `AVAILABLE`  | pool                  | free for reuse                       |
//! | `ALLOCATED`  | computation task      | being filled in                      |
//! | `PRESCRIBED` | worklist / comm worker| complete description, not yet posted |
//! | `ACTIVE`     | comm worker           | MPI call posted, request in flight   |
//! | `COMPLETED`  | comm worker           | finished; outcome being delivered    |
//!
//! Ownership moves with the `Box` (pool → task → worklist → comm worker →
//! pool), so no two threads ever touch a record at once; the state word makes
//! each hand-off explicit and checks it. Every `transition_to_*` swaps in the
//! new state and panics with the record's description if the old state is not
//! the one the protocol allows — a broken hand-off is reported, not ignored.
//!
//! # Memory ordering
//!
//! The hand-offs themselves synchronize (the worklist and pool queues are
//! release/acquire); the state word uses `AcqRel` swaps so that it is also a
//! correct hand-off on its own, which the loom model checks.

use std::fmt;

use crate::op::Operation;
use crate::sync::{AtomicU8, Ordering};

/// Lifecycle states of a communication task (see the module docs).
pub(crate) mod state {
    pub(crate) const AVAILABLE: u8 = 0;
    pub(crate) const ALLOCATED: u8 = 1;
    pub(crate) const PRESCRIBED: u8 = 2;
    pub(crate) const ACTIVE: u8 = 3;
    pub(crate) const COMPLETED: u8 = 4;

    pub(crate) fn name(state: u8) -> &'static str {
        match state {
            AVAILABLE => "AVAILABLE",
            ALLOCATED => "ALLOCATED",
            PRESCRIBED => "PRESCRIBED",
            ACTIVE => "ACTIVE",
            COMPLETED => "COMPLETED",
            _ => "INVALID",
        }
    }
}

/// A communication task record.
pub(crate) struct CommTask {
    state: AtomicU8,
    /// What to do; `None` while `AVAILABLE`.
    pub(crate) op: Option<Operation>,
}

impl fmt::Debug for CommTask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommTask")
            .field("state", &state::name(self.state()))
            .field("op", &self.op)
            .finish()
    }
}

impl CommTask {
    /// A fresh record, as if just taken from the pool.
    pub(crate) fn new_allocated() -> Box<CommTask> {
        Box::new(CommTask {
            state: AtomicU8::new(state::ALLOCATED),
            op: None,
        })
    }

    pub(crate) fn state(&self) -> u8 {
        self.state.load(Ordering::Acquire)
    }

    fn transition(&self, from: u8, to: u8) {
        let previous = self.state.swap(to, Ordering::AcqRel);
        assert_eq!(
            previous,
            from,
            "hc-mpi: communication task went {} -> {} but was {} ({:?})",
            state::name(from),
            state::name(to),
            state::name(previous),
            self.op
        );
    }

    /// Pool → computation task.
    pub(crate) fn transition_to_allocated(&self) {
        self.transition(state::AVAILABLE, state::ALLOCATED);
    }

    /// Computation task → worklist: the description is complete.
    pub(crate) fn transition_to_prescribed(&self) {
        assert!(
            self.op.is_some(),
            "hc-mpi: prescribing an empty communication task"
        );
        self.transition(state::ALLOCATED, state::PRESCRIBED);
    }

    /// The comm worker posted the MPI call.
    pub(crate) fn transition_to_active(&self) {
        self.transition(state::PRESCRIBED, state::ACTIVE);
    }

    /// The MPI call finished (or failed to post, straight from PRESCRIBED).
    pub(crate) fn transition_to_completed(&self) {
        let previous = self.state.swap(state::COMPLETED, Ordering::AcqRel);
        assert!(
            previous == state::ACTIVE || previous == state::PRESCRIBED,
            "hc-mpi: communication task completed from state {}",
            state::name(previous)
        );
    }

    /// Outcome delivered; the record may be reused.
    pub(crate) fn transition_to_available(&mut self) {
        self.op = None;
        self.transition(state::COMPLETED, state::AVAILABLE);
    }
}
