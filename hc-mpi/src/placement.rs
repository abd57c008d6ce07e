//! Where the communication engine runs.
//!
//! * [`Placement::Dedicated`]: a thread of its own steps the engine (the
//!   paper's communication worker). Lowest latency when it has a core to
//!   itself; on a machine with fewer cores than threads it competes with
//!   the very tasks it serves.
//! * [`Placement::Shared`]: no extra thread. Computation workers step the
//!   engine — whichever is idle or waiting, and a busy one between tasks
//!   every poll interval — one holder at a time, under
//!   `MPI_THREAD_SERIALIZED` (see the engine's `holder`).
//! * [`Placement::Auto`] (the default): dedicated when the rank has a spare
//!   core — the node's cores, divided among the ranks on it
//!   (`MPI_Comm_split_type` with `MPI_COMM_TYPE_SHARED`), exceed its
//!   computation workers — shared otherwise. The node's cores are the union
//!   of its ranks' CPU sets: ranks bound to cores (`--bind-to core`,
//!   `srun --cpu-bind`) each see only their own.
//!
//! Whatever the placement, a node with more threads than cores (the ranks
//! on the node times their workers, plus any communication threads,
//! exceed the node's cores; every rank is assumed to start as many) is
//! *oversubscribed*: whoever
//! polls the engine without progress naps in short, precise sleeps instead
//! of yielding ([`BackoffPolicy::POLLING_OVERSUBSCRIBED`](hc_runtime::BackoffPolicy::POLLING_OVERSUBSCRIBED)).
//! A yielding poller that shares its core with a busy rank runs again only
//! when that rank's time slice ends, so every message it should receive or
//! forward waits milliseconds; one woken from a nap preempts the busy rank
//! at once.
//!
//! Set it with [`HcmpiBuilder::placement`](crate::HcmpiBuilder::placement)
//! or the `HCMPI_PLACEMENT` environment variable (`dedicated`, `shared`,
//! `auto`); [`Hcmpi::placement`](crate::Hcmpi::placement) tells the one in
//! effect.

use std::fmt;
use std::str::FromStr;

use crate::error::InitError;

/// Environment variable that chooses the [`Placement`].
pub const PLACEMENT_ENV: &str = "HCMPI_PLACEMENT";

/// Where the communication engine runs (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// A communication thread of its own.
    Dedicated,
    /// Stepped by the computation workers; no extra thread.
    Shared,
    /// Dedicated if the rank has a spare core, shared otherwise.
    #[default]
    Auto,
}

impl Placement {
    /// The name used by `HCMPI_PLACEMENT` and in benchmark reports.
    ///
    /// ```
    /// assert_eq!(hc_mpi::Placement::Shared.name(), "shared");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Placement::Dedicated => "dedicated",
            Placement::Shared => "shared",
            Placement::Auto => "auto",
        }
    }

    /// Resolves `Auto` for a rank with `workers` computation workers and
    /// `cores_per_rank` cores: dedicated only with a core to spare.
    ///
    /// ```
    /// use hc_mpi::Placement;
    ///
    /// assert_eq!(Placement::Auto.resolve(1, 1), Placement::Shared);
    /// assert_eq!(Placement::Auto.resolve(7, 8), Placement::Dedicated);
    /// assert_eq!(Placement::Shared.resolve(1, 16), Placement::Shared);
    /// ```
    pub fn resolve(self, workers: usize, cores_per_rank: usize) -> Placement {
        match self {
            Placement::Auto if cores_per_rank > workers => Placement::Dedicated,
            Placement::Auto => Placement::Shared,
            chosen => chosen,
        }
    }

    /// The placement asked for by `HCMPI_PLACEMENT`, if set.
    pub(crate) fn from_env() -> Result<Option<Placement>, InitError> {
        crate::context::choice_from_env(PLACEMENT_ENV, "dedicated, shared or auto")
    }
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a placement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown placement {0:?} (expected dedicated, shared or auto)")]
pub struct UnknownPlacement(pub String);

impl FromStr for Placement {
    type Err = UnknownPlacement;

    /// ```
    /// use hc_mpi::Placement;
    ///
    /// assert_eq!("dedicated".parse(), Ok(Placement::Dedicated));
    /// assert!("sometimes".parse::<Placement>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Placement, UnknownPlacement> {
        match s.trim() {
            "dedicated" => Ok(Placement::Dedicated),
            "shared" => Ok(Placement::Shared),
            "auto" => Ok(Placement::Auto),
            other => Err(UnknownPlacement(other.to_owned())),
        }
    }
}
