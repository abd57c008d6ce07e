//! Errors of the HCMPI API.

use std::sync::Arc;

/// What went wrong with an HCMPI call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// MPI reported an error (communicators use `MPI_ERRORS_RETURN`).
    #[error("hc-mpi: {op} failed: MPI error class {class}: {message}")]
    Mpi {
        /// The operation, e.g. `"irecv"`.
        op: &'static str,
        /// The MPI error class (`MPI_Error_class`).
        class: i32,
        /// MPI's own description (`MPI_Error_string`).
        message: String,
    },
    /// A receive's message was longer than its buffer (`MPI_ERR_TRUNCATE`);
    /// the buffer content is undefined and is not handed back.
    #[error(
        "hc-mpi: {op}: message truncated: it is longer than the receive buffer of \
         {capacity} elements ({message})"
    )]
    Truncated {
        /// The operation.
        op: &'static str,
        /// Elements the receive buffer could hold.
        capacity: usize,
        /// MPI's description.
        message: String,
    },
    /// A rank outside `0..size` of the communicator (checked before MPI).
    #[error("hc-mpi: {op}: rank {rank} is not in the communicator (valid ranks are 0..{size})")]
    InvalidRank {
        /// The operation.
        op: &'static str,
        /// The rank given.
        rank: i32,
        /// The communicator size.
        size: i32,
    },
    /// A tag outside `0..=MPI_TAG_UB` (checked before MPI).
    #[error("hc-mpi: {op}: tag {tag} is out of range (valid tags are 0..={max})")]
    InvalidTag {
        /// The operation.
        op: &'static str,
        /// The tag given.
        tag: i32,
        /// The largest valid tag.
        max: i32,
    },
    /// A buffer longer than an MPI count (`i32::MAX` elements) can describe.
    #[error("hc-mpi: {op}: buffer of {len} elements exceeds the largest MPI count ({max})", max = i32::MAX)]
    BufferTooLarge {
        /// The operation.
        op: &'static str,
        /// Its length in elements.
        len: usize,
    },
    /// A collective's buffers do not fit the communicator.
    #[error("hc-mpi: {op}: {problem}")]
    BadCollectiveBuffer {
        /// The operation.
        op: &'static str,
        /// What does not fit.
        problem: BufferProblem,
    },
    /// A user reduction applied to elements of another type.
    #[error(
        "hc-mpi: {op}: user reduction {reduction} does not combine elements of type {element}"
    )]
    ReductionType {
        /// The operation.
        op: &'static str,
        /// The reduction's type name.
        reduction: &'static str,
        /// The element type given.
        element: &'static str,
    },
    /// `Comm::split` with a negative color.
    #[error("hc-mpi: comm_split: color {color} is negative (use None to leave a rank out)")]
    NegativeColor {
        /// The color given.
        color: i32,
    },
    /// `cancel` of an operation MPI cannot cancel (a nonblocking collective
    /// or communicator creation).
    #[error("hc-mpi: {op} cannot be cancelled (MPI 4.0 §6.12): it can only complete")]
    NotCancellable {
        /// The operation.
        op: &'static str,
    },
    /// The engine shut down before the operation completed.
    #[error("hc-mpi: {op} was still pending when the communication engine shut down")]
    Shutdown {
        /// The operation.
        op: &'static str,
    },
    /// The request has not completed yet (e.g. `Request::get` too early).
    #[error("hc-mpi: {op} has not completed yet (await the request or wait on it first)")]
    Pending {
        /// The operation.
        op: &'static str,
    },
    /// A blocking wait inside a message handler that runs on the engine:
    /// the engine would wait for itself.
    #[error(
        "hc-mpi: {op}: blocking wait inside a message handler running on the engine \
         (serve with `serve_tasks`, or await the request in a task instead)"
    )]
    WaitInHandler {
        /// The operation waited for.
        op: &'static str,
    },
    /// A message handler panicked; its service stopped.
    #[error("hc-mpi: the handler of the service on tag {tag} panicked: {message}")]
    HandlerPanicked {
        /// The service's tag.
        tag: i32,
        /// The panic's message.
        message: String,
    },
    /// hc-mpi could not start.
    #[error("hc-mpi: cannot initialize")]
    Init(#[from] InitError),
}

/// How a collective's buffers fail to fit the communicator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BufferProblem {
    /// The buffer must hold exactly `expected` elements.
    #[error("buffer has {len} elements, expected {expected} (chunk {chunk} x {ranks} ranks)")]
    WrongLength {
        /// Its length.
        len: usize,
        /// The length expected.
        expected: usize,
        /// The per-rank chunk.
        chunk: usize,
        /// The communicator size.
        ranks: usize,
    },
    /// A v-collective needs one count per rank.
    #[error("{given} counts given for {ranks} ranks")]
    CountsPerRank {
        /// Counts given.
        given: usize,
        /// The communicator size.
        ranks: usize,
    },
    /// The counts do not add up to the buffer's length.
    #[error("counts add up to {total} but the root buffer has {len} elements")]
    CountsTotal {
        /// Their sum.
        total: usize,
        /// The buffer's length.
        len: usize,
    },
}

/// Why hc-mpi could not start.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum InitError {
    /// `Hcmpi` was created before in this process.
    #[error("an Hcmpi was already created in this process (MPI can be initialized once)")]
    AlreadyCreated,
    /// Some ranks asked for a trace and others did not: the ranks must
    /// agree, since writing the job's one trace file is a collective step
    /// of shutdown.
    #[error(
        "{} is set on some ranks and not on others: trace all ranks or none",
        hc_runtime::trace::TRACE_ENV
    )]
    TraceMismatch,
    /// Something else initialized MPI first.
    #[error("MPI is already initialized in this process (create one Hcmpi per process)")]
    AlreadyInitialized,
    /// The MPI library cannot serialize calls from several threads.
    #[error(
        "the MPI library provides thread level {provided}; hc-mpi needs at least \
         MPI_THREAD_SERIALIZED"
    )]
    ThreadLevel {
        /// The level it provides.
        provided: &'static str,
    },
    /// An environment variable has a value hc-mpi does not understand.
    #[error("{name} must be {expected}, got {value:?}")]
    InvalidEnv {
        /// The variable.
        name: &'static str,
        /// What it must be.
        expected: &'static str,
        /// Its value.
        value: String,
    },
    /// An MPI call of the start-up failed.
    #[error("{call} failed: {message}")]
    Mpi {
        /// The call.
        call: &'static str,
        /// MPI's description.
        message: String,
    },
    /// The computation workers could not start.
    #[error("cannot start the computation workers")]
    Runtime(#[source] Arc<hc_runtime::BuildError>),
    /// The communication thread could not start.
    #[error("cannot start the communication thread")]
    Spawn(#[source] Arc<std::io::Error>),
    /// A thread could not be bound to the rank's CPUs
    /// ([`Binding::Cores`](crate::Binding::Cores)).
    #[error("cannot bind to the rank's CPUs")]
    Bind(#[source] hc_runtime::affinity::AffinityError),
    /// [`Binding::Cores`](crate::Binding::Cores) was asked for, but this
    /// rank has no share of the node's CPUs (see [`Binding`](crate::Binding)).
    #[error(
        "binding `cores` was asked for, but this rank's share of the node's CPUs is unknown: \
         its CPU set could not be read, or overlaps another rank's on the node without being \
         equal to it"
    )]
    CpuShareUnknown,
}

/// Two start-up errors are equal when they say the same thing (the
/// underlying I/O and runtime errors have no equality of their own).
impl PartialEq for InitError {
    fn eq(&self, other: &InitError) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl Eq for InitError {}

/// Shows an error followed by each error in its `source()` chain:
/// `outer: inner: innermost`. [`Hcmpi::run`](crate::Hcmpi::run) reports a
/// failing body this way. A cause whose text its error's message already
/// ends with (errors that both show their source and return it, as
/// `std::io` wrappers often do) is not shown again.
///
/// ```
/// use std::error::Error;
/// use std::fmt;
///
/// #[derive(Debug)]
/// struct BadCount(std::num::ParseIntError);
///
/// impl fmt::Display for BadCount {
///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
///         f.write_str("--count")
///     }
/// }
///
/// impl Error for BadCount {
///     fn source(&self) -> Option<&(dyn Error + 'static)> {
///         Some(&self.0)
///     }
/// }
///
/// let error = BadCount("x".parse::<u32>().unwrap_err());
/// assert_eq!(
///     hc_mpi::ErrorChain(&error).to_string(),
///     "--count: invalid digit found in string"
/// );
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ErrorChain<'a>(pub &'a (dyn std::error::Error + 'static));

impl std::fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut shown = self.0.to_string();
        f.write_str(&shown)?;
        let mut source = self.0.source();
        while let Some(error) = source {
            let text = error.to_string();
            if !shown.ends_with(&text) {
                write!(f, ": {text}")?;
            }
            shown = text;
            source = error.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::ErrorChain;

    /// Shows its source in its own message, and returns it as its source.
    #[derive(Debug, thiserror::Error)]
    #[error("cannot read the trace: {0}")]
    struct ShowsItsSource(#[source] io::Error);

    /// Only returns its source.
    #[derive(Debug, thiserror::Error)]
    #[error("cannot read the trace")]
    struct ReturnsItsSource(#[source] io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("the job failed")]
    struct Outer<E: std::error::Error + 'static>(#[source] E);

    #[test]
    fn a_cause_its_error_already_shows_is_shown_once() {
        let error = Outer(ShowsItsSource(io::Error::other("disk gone")));
        assert_eq!(
            ErrorChain(&error).to_string(),
            "the job failed: cannot read the trace: disk gone"
        );
    }

    #[test]
    fn every_other_cause_is_shown() {
        let error = Outer(ReturnsItsSource(io::Error::other("disk gone")));
        assert_eq!(
            ErrorChain(&error).to_string(),
            "the job failed: cannot read the trace: disk gone"
        );
        // A cause that only starts the message is no repetition.
        let error = Outer(ReturnsItsSource(io::Error::other("cannot read")));
        assert_eq!(
            ErrorChain(&error).to_string(),
            "the job failed: cannot read the trace: cannot read"
        );
    }
}
