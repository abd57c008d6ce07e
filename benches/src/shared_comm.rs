//! A raw rsmpi communicator that the baselines' threads may share.
//!
//! rsmpi's `SimpleCommunicator` wraps the library's handle type: an integer
//! in MPICH (so the wrapper is `Sync`), a pointer in Open MPI (so it is
//! not). The thread-based baselines (`mpi-multiple` in threadbench, the
//! MPI+rayon hybrid in syncbench) share one communicator between threads;
//! [`SharedComm`] makes that compile against both libraries and checks, at
//! run time, the condition under which it is sound.

use std::thread::ThreadId;

use mpi::topology::SimpleCommunicator;
use mpi::Threading;

use crate::error::ChildError;

/// A communicator shared by threads: either the library provides
/// `MPI_THREAD_MULTIPLE`, or only the thread that created the wrapper may
/// use it.
pub struct SharedComm<'a> {
    comm: &'a SimpleCommunicator,
    /// `None`: any thread (`MPI_THREAD_MULTIPLE`); `Some(t)`: thread `t` only.
    owner: Option<ThreadId>,
}

impl std::fmt::Debug for SharedComm<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedComm")
            .field("owner", &self.owner)
            .finish_non_exhaustive()
    }
}

// SAFETY: a `SharedComm` hands out `&SimpleCommunicator` to other threads
// only through `get`, which enforces one of two conditions:
// - `owner` is `None`: `multiple` checked that the library provides
//   `MPI_THREAD_MULTIPLE`, under which any thread may call MPI on the same
//   communicator concurrently (MPI-3.1 §12.4.3); the handle itself is an
//   immutable reference to an object the library owns and synchronizes;
// - `owner` is `Some(t)`: `get` panics on every thread but `t`, so the
//   handle is never used off the creating thread.
unsafe impl Sync for SharedComm<'_> {}

impl<'a> SharedComm<'a> {
    /// For any thread; an error unless `provided` is `MPI_THREAD_MULTIPLE`.
    pub fn multiple(comm: &'a SimpleCommunicator, provided: Threading) -> Result<Self, ChildError> {
        if provided == Threading::Multiple {
            Ok(SharedComm { comm, owner: None })
        } else {
            Err(ChildError::ThreadLevel {
                what: "a communicator shared between threads",
                provided: hc_mpi::threading_name(provided),
                needed: "MPI_THREAD_MULTIPLE",
            })
        }
    }

    /// For the calling thread only.
    pub fn this_thread(comm: &'a SimpleCommunicator) -> Self {
        SharedComm {
            comm,
            owner: Some(std::thread::current().id()),
        }
    }

    /// The communicator.
    ///
    /// # Panics
    /// On a thread other than the creator's, unless built by
    /// [`multiple`](Self::multiple).
    pub fn get(&self) -> &'a SimpleCommunicator {
        if let Some(owner) = self.owner {
            assert_eq!(
                std::thread::current().id(),
                owner,
                "this communicator belongs to one thread (no MPI_THREAD_MULTIPLE)"
            );
        }
        self.comm
    }
}
