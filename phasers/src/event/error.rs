//! What can go wrong with an event operation.

use std::fmt;

/// What went wrong with an event operation.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventError {
    /// `post_n`, `wait` or `when` with a count of zero.
    ZeroCount {
        /// The operation.
        op: &'static str,
    },
    /// A post would take the count past `u64::MAX`; nothing was changed.
    Overflow {
        /// The count before the post.
        count: u64,
        /// The amount posted.
        added: u64,
    },
    /// A target rank outside the event set's communicator.
    InvalidRank {
        /// The rank given.
        rank: i32,
        /// The communicator size.
        size: i32,
    },
    /// An event index outside the set.
    InvalidIndex {
        /// The index given.
        index: usize,
        /// Events per rank.
        len: usize,
    },
    /// A post from another rank overflowed this event: the event no longer
    /// holds a meaningful count, and every armed and later consumer fails.
    Poisoned,
    /// The event was dropped while this trigger was armed.
    Dropped,
    /// A blocking wait on a computation worker, which would hold the worker
    /// (and stack the tasks it runs meanwhile); `.await` the wait instead.
    BlockingOnWorker,
    /// The ranks created a distributed set with different sizes.
    SizeMismatch {
        /// This rank's set size.
        len: u64,
        /// The largest size of any rank.
        largest: u64,
        /// The smallest size of any rank.
        smallest: u64,
    },
    /// A post message from another rank was not two words (index, count).
    MalformedPost {
        /// The sending rank.
        source: i32,
        /// The words it held.
        words: usize,
    },
    /// An MPI operation of a distributed set failed.
    #[cfg(feature = "mpi")]
    Mpi {
        /// What the set was doing (`"MPI_Isend"`, `"duplicate the
        /// communicator"`, ...).
        what: &'static str,
        /// The peer rank, for point-to-point operations.
        peer: Option<i32>,
        /// The MPI error.
        source: hc_mpi::Error,
    },
}

impl fmt::Display for EventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventError::ZeroCount { op } => write!(f, "event {op} with a count of 0"),
            EventError::Overflow { count, added } => {
                write!(f, "event count overflow: {count} + {added} > u64::MAX")
            }
            EventError::InvalidRank { rank, size } => {
                write!(f, "event post to rank {rank}, outside 0..{size}")
            }
            EventError::InvalidIndex { index, len } => {
                write!(f, "event index {index} outside 0..{len}")
            }
            EventError::Poisoned => {
                write!(f, "a remote post overflowed this event's count")
            }
            EventError::Dropped => write!(f, "the event was dropped while armed"),
            EventError::BlockingOnWorker => write!(
                f,
                "a blocking event wait on a computation worker; await the wait in a task instead"
            ),
            EventError::SizeMismatch {
                len,
                largest,
                smallest,
            } => write!(
                f,
                "event set: ranks created sets of different sizes \
                 (this rank: {len}, largest: {largest}, smallest: {smallest})"
            ),
            EventError::MalformedPost { source, words } => write!(
                f,
                "event set: malformed post of {words} words from rank {source}"
            ),
            #[cfg(feature = "mpi")]
            EventError::Mpi {
                what,
                peer: Some(peer),
                ..
            } => write!(f, "event set: {what} with rank {peer} failed"),
            #[cfg(feature = "mpi")]
            EventError::Mpi {
                what, peer: None, ..
            } => write!(f, "event set: {what} failed"),
        }
    }
}

impl std::error::Error for EventError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            #[cfg(feature = "mpi")]
            EventError::Mpi { source, .. } => Some(source),
            _ => None,
        }
    }
}
