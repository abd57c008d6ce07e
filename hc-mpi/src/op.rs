//! The one private interface between operations and the engine.
//!
//! An operation (a send, a receive, a collective, a communicator creation)
//! is built on the caller's thread — arguments checked, buffers owned, its
//! [`Reply`] ready — and handed to the engine as a `Box<dyn Operation>`.
//! The engine only ever calls the four methods below; everything specific
//! to an operation lives in its own type, next to its API method.
//!
//! # Lifecycle (Fig. 11 of the HCMPI paper)
//!
//! ```text
//!  built on the caller ──submit──▶ PRESCRIBED (worklist)
//!                                       │ engine: Operation::start
//!              ┌────────────────────────┼─────────────────────┐
//!              ▼                        ▼                     ▼
//!   ACTIVE (request table)     ACTIVE (polled list)      COMPLETED at once
//!              │ MPI_Testsome           │ Operation::poll     │
//!              ▼                        ▼                     │
//!         Operation::complete ◀─────────┴─────────────────────┘
//!              │ the reply's promise is completed: awaiting tasks run
//!              ▼
//!           dropped
//! ```
//!
//! An operation that cannot complete (start failed, engine shut down) is
//! told so with [`Operation::fail`], which completes its reply with the
//! error; at shutdown its buffers are leaked rather than freed under MPI.

use std::os::raw::c_int;

use hc_runtime::Completer;
use mpi::ffi;

use crate::engine::EngineState;
use crate::request::Status;
use crate::Error;

/// Identifies an operation for `MPI_Cancel` (ids are never reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct OpId(pub(crate) u64);

impl OpId {
    /// Bits of an id that count the operations of one thread.
    const SEQUENCE_BITS: u32 = 40;

    /// A process-unique id: the calling thread's number in the high bits
    /// (taken once per thread from a global counter), the thread's own
    /// count in the low bits — no shared counter on every operation.
    pub(crate) fn fresh() -> OpId {
        use std::cell::Cell;
        use std::sync::atomic::{AtomicU64, Ordering};
        static THREADS: AtomicU64 = AtomicU64::new(1);
        thread_local! {
            static NEXT: Cell<u64> = const { Cell::new(0) };
        }
        NEXT.with(|next| {
            let mut id = next.get();
            if id & ((1 << Self::SEQUENCE_BITS) - 1) == 0 {
                // First use on this thread, or its count wrapped: a new
                // thread number.
                id = THREADS.fetch_add(1, Ordering::Relaxed) << Self::SEQUENCE_BITS;
            }
            next.set(id + 1);
            OpId(id)
        })
    }
}

/// How [`Operation::start`] went.
pub(crate) enum Start {
    /// Posted: complete it when MPI completes this request.
    Posted(ffi::MPI_Request),
    /// Not an MPI request: poll it every engine step.
    Polled,
    /// Completed during the call (blocking MPI calls such as a split).
    Completed(Done),
    /// MPI refused it with this error code.
    Failed(c_int),
}

/// The outcome MPI reported for an operation.
#[derive(Clone, Copy)]
pub(crate) struct Done {
    pub(crate) status: ffi::MPI_Status,
    pub(crate) code: c_int,
}

impl Done {
    /// A successful completion with an empty status.
    pub(crate) fn ok() -> Done {
        Done {
            status: crate::raw::empty_status(),
            code: ffi::MPI_SUCCESS as c_int,
        }
    }

    pub(crate) fn is_ok(&self) -> bool {
        self.code == ffi::MPI_SUCCESS as c_int
    }

    /// `MPI_Test_cancelled` of the status.
    pub(crate) fn cancelled(&self) -> bool {
        crate::raw::test_cancelled(&self.status)
    }
}

/// What happens to an operation's buffers when it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Buffers {
    /// MPI never saw them (or is done with them): free them.
    Free,
    /// MPI may still write them (a request freed at shutdown): leak them.
    Leak,
}

/// What `MPI_Cancel` may do with an operation (MPI 4.0 §3.8.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cancel {
    /// A receive or probe: cancelling it is how one that nothing will match
    /// ends, at a user's request or at shutdown.
    Receive,
    /// A send: MPI can cancel it (deprecated since MPI 4.0), but a peer may
    /// be waiting for the message, so shutdown lets it complete instead.
    Send,
    /// A nonblocking collective or communicator creation: `MPI_Cancel` and
    /// `MPI_Request_free` on its request are erroneous (MPI 4.0 §6.12,
    /// §7.4.2); it can only complete.
    Never,
}

/// What the engine needs from an operation (see the module docs).
pub(crate) trait Operation: Send {
    /// The operation's name, as in [`Error`] values.
    fn name(&self) -> &'static str;

    /// A short description for diagnostics (pending-at-shutdown reports).
    fn describe(&self) -> String;

    /// Its id, for cancellation.
    fn id(&self) -> OpId;

    /// Payload bytes, for metrics and traces: a send's data, a receive's
    /// capacity, a collective's send buffer.
    fn bytes(&self) -> usize {
        0
    }

    /// The peer and tag of a point-to-point operation, for traces.
    fn peer(&self) -> Option<(i32, i32)> {
        None
    }

    /// Whether and how MPI may cancel it.
    fn cancel_kind(&self) -> Cancel;

    /// Starts the MPI call. Runs on the engine holder, the only thread
    /// calling MPI at that moment.
    fn start(&mut self, state: &mut EngineState) -> Start;

    /// One poll of an operation that started as [`Start::Polled`]; `Some`
    /// once it is done.
    fn poll(&mut self, _state: &mut EngineState) -> Option<Done> {
        unreachable!("{} is not a polled operation", self.name())
    }

    /// Cancels a polled operation (`MPI_Cancel` covers posted ones).
    fn cancel_polled(self: Box<Self>) {
        unreachable!("{} is not a polled operation", self.name())
    }

    /// MPI completed it (successfully or not): deliver the outcome.
    fn complete(self: Box<Self>, done: Done, state: &mut EngineState);

    /// It will not complete: fail its reply with `error`.
    fn fail(self: Box<Self>, error: Error, buffers: Buffers);
}

/// Where an operation delivers its outcome: the completer of its
/// [`Request`](crate::Request)'s promise.
pub(crate) type Reply<T> = Completer<Result<(T, Status), Error>>;

/// Leaks `value` when asked to (see [`Buffers::Leak`]), drops it otherwise.
pub(crate) fn dispose<T>(value: T, buffers: Buffers) {
    match buffers {
        Buffers::Free => drop(value),
        Buffers::Leak => std::mem::forget(value),
    }
}

/// Maps a completion code to an error, naming the operation; `capacity`
/// makes `MPI_ERR_TRUNCATE` a [`Error::Truncated`].
pub(crate) fn mpi_error(op: &'static str, code: c_int, capacity: Option<usize>) -> Error {
    let class = crate::raw::error_class(code);
    let message = crate::raw::error_string(code);
    match capacity {
        Some(capacity) if class == ffi::MPI_ERR_TRUNCATE as c_int => Error::Truncated {
            op,
            capacity,
            message,
        },
        _ => Error::Mpi { op, class, message },
    }
}

/// Converts a length to an MPI count.
pub(crate) fn count(op: &'static str, len: usize) -> Result<c_int, Error> {
    c_int::try_from(len).map_err(|_| Error::BufferTooLarge { op, len })
}
