//! Growing the MPI library's pool of requests at start-up, before any
//! rank's work begins.
//!
//! MPICH 4.0 (ch4:ucx) makes its request objects in blocks: the first time
//! a process has more than about eight requests live at once, it maps a
//! fresh block (one 276 KB `mmap`) and fills it, which took 110–150 µs on
//! a 2-core virtual machine; after that, a burst of twenty requests takes
//! under 20 µs. An hcmpi process gets there in its first burst of traffic
//! (a DDDF space's first requests and replies, a wavefront's first edges),
//! on every rank at once and on the critical path: in a 2-rank
//! Smith-Waterman run the first tile started 0.15 ms late, on a run of
//! 1.3–3.5 ms for 5000² proteins. Start-up posts [`WARM_REQUESTS`]
//! receives and cancels them, so the pool grows here instead, next to
//! `MPI_Init`'s own tens of milliseconds. On a library that keeps no such
//! pool it costs a few microseconds.
//!
//! The receives name this rank as their only source, on hc-mpi's world
//! duplicate, before the engine or any user code exists: only a message
//! this process sent itself could match one, and none is sent before they
//! are cancelled.

use std::os::raw::c_int;

use mpi::ffi;

use crate::raw::{empty_status, error_string, null_request};
use crate::InitError;

/// Receives posted (and cancelled) at start-up: enough for MPICH's first
/// block of requests, which holds more than a hundred.
pub(crate) const WARM_REQUESTS: usize = 64;

/// The tag of those receives: the one user code most likely sends itself,
/// so that a receive left posted by mistake would show at once (the
/// point-to-point suite's first check).
const WARM_TAG: c_int = 0;

/// Posts [`WARM_REQUESTS`] one-byte receives from `rank` (this process) on
/// `comm` (`MPI_Irecv`, MPI 4.0 §3.7.2), then cancels each and completes
/// it (`MPI_Cancel`, §3.8.4; `MPI_Wait`, §3.7.3). Start-up thread only:
/// no other thread calls MPI yet.
pub(crate) fn warm_request_pool(comm: ffi::MPI_Comm, rank: c_int) -> Result<(), InitError> {
    let mut buffers = [0u8; WARM_REQUESTS];
    let mut requests = [null_request(); WARM_REQUESTS];
    let mut posted = 0;
    let mut failure = None;
    for (buffer, request) in buffers.iter_mut().zip(requests.iter_mut()) {
        // SAFETY: MPI is initialized and only this thread calls it; `buffer`
        // is one byte that outlives the request (it is completed below,
        // before `buffers` goes out of scope); `comm` is a valid
        // communicator and `rank` a rank of it.
        let code = unsafe {
            ffi::MPI_Irecv(
                (buffer as *mut u8).cast(),
                1,
                ffi::RSMPI_UINT8_T,
                rank,
                WARM_TAG,
                comm,
                request,
            )
        };
        if code != ffi::MPI_SUCCESS as c_int {
            failure = Some(("MPI_Irecv", code));
            break;
        }
        posted += 1;
    }
    for request in &mut requests[..posted] {
        let mut status = empty_status();
        // SAFETY: a receive posted above and not yet completed; cancelling
        // an unmatched receive always succeeds, and `MPI_Wait` then
        // completes and frees it (MPI 4.0 §3.8.4).
        let code = unsafe {
            let cancelled = ffi::MPI_Cancel(request);
            if cancelled == ffi::MPI_SUCCESS as c_int {
                ffi::MPI_Wait(request, &mut status)
            } else {
                cancelled
            }
        };
        if code != ffi::MPI_SUCCESS as c_int && failure.is_none() {
            failure = Some(("MPI_Cancel", code));
        }
    }
    match failure {
        None => Ok(()),
        Some((call, code)) => Err(InitError::Mpi {
            call,
            message: error_string(code),
        }),
    }
}
