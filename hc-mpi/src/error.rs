//! Errors of the HCMPI API.

use std::fmt;

/// What went wrong with an HCMPI call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// MPI reported an error (communicators use `MPI_ERRORS_RETURN`).
    Mpi {
        /// The operation, e.g. `"irecv"`.
        op: &'static str,
        /// The MPI error class (`MPI_Error_class`).
        class: i32,
        /// MPI's own description (`MPI_Error_string`).
        message: String,
    },
    /// A receive's message was longer than its buffer (`MPI_ERR_TRUNCATE`);
    /// the buffer content is undefined and is handed back empty.
    Truncated {
        /// The operation.
        op: &'static str,
        /// Elements the receive buffer could hold.
        capacity: usize,
        /// MPI's description.
        message: String,
    },
    /// A rank outside `0..size` of the communicator (checked before MPI).
    InvalidRank {
        /// The operation.
        op: &'static str,
        /// The rank given.
        rank: i32,
        /// The communicator size.
        size: i32,
    },
    /// A tag outside `0..=MPI_TAG_UB` (checked before MPI).
    InvalidTag {
        /// The operation.
        op: &'static str,
        /// The tag given.
        tag: i32,
        /// The largest valid tag.
        max: i32,
    },
    /// A buffer longer than an MPI count (`i32::MAX` elements) can describe.
    BufferTooLarge {
        /// The operation.
        op: &'static str,
        /// Its length in elements.
        len: usize,
    },
    /// A collective's buffers do not fit the communicator (e.g. a scatter
    /// buffer whose length is not a multiple of the size).
    BadCollectiveBuffer {
        /// The operation.
        op: &'static str,
        /// What is wrong.
        what: String,
    },
    /// The communication worker shut down before the operation completed.
    Shutdown {
        /// The operation.
        op: &'static str,
    },
    /// The request has not completed yet (e.g. `Request::get` too early).
    Pending {
        /// The operation.
        op: &'static str,
    },
    /// MPI could not be initialized as hc-mpi needs.
    Init(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Mpi { op, class, message } => {
                write!(f, "hc-mpi: {op} failed: MPI error class {class}: {message}")
            }
            Error::Truncated {
                op,
                capacity,
                message,
            } => write!(
                f,
                "hc-mpi: {op}: message truncated: it is longer than the receive buffer of \
                 {capacity} elements ({message})"
            ),
            Error::InvalidRank { op, rank, size } => write!(
                f,
                "hc-mpi: {op}: rank {rank} is not in the communicator (valid ranks are 0..{size})"
            ),
            Error::InvalidTag { op, tag, max } => {
                write!(
                    f,
                    "hc-mpi: {op}: tag {tag} is out of range (valid tags are 0..={max})"
                )
            }
            Error::BufferTooLarge { op, len } => write!(
                f,
                "hc-mpi: {op}: buffer of {len} elements exceeds the largest MPI count ({})",
                i32::MAX
            ),
            Error::BadCollectiveBuffer { op, what } => write!(f, "hc-mpi: {op}: {what}"),
            Error::Shutdown { op } => write!(
                f,
                "hc-mpi: {op} was still pending when the communication worker shut down"
            ),
            Error::Pending { op } => write!(
                f,
                "hc-mpi: {op} has not completed yet (await the request or wait on it first)"
            ),
            Error::Init(what) => write!(f, "hc-mpi: cannot initialize MPI: {what}"),
        }
    }
}

impl std::error::Error for Error {}
