//! Errors of the DDDF API. Every misuse is reported here rather than left to
//! hang or corrupt data.

use std::fmt;

/// Where a size mismatch was detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeCheck {
    /// At `put`, on the home rank.
    Put,
    /// When the value arrived from the home rank.
    Receive,
}

/// What went wrong with a DDDF operation.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DddfError {
    /// `home(guid)` returned a rank outside the communicator.
    BadHome {
        /// The guid.
        guid: u64,
        /// What `home` returned.
        home: i32,
        /// Number of ranks (valid homes are `0..ranks`).
        ranks: i32,
    },
    /// `reader(guid)` of a space that pushes values
    /// ([`DddfSpace::with_reader`](crate::DddfSpace::with_reader)) returned
    /// a rank outside the communicator.
    BadReader {
        /// The guid.
        guid: u64,
        /// What `reader` returned.
        reader: i32,
        /// Number of ranks (valid readers are `0..ranks`).
        ranks: i32,
    },
    /// `put` on a rank that is not the guid's home.
    PutNotHome {
        /// The guid.
        guid: u64,
        /// Its home rank.
        home: i32,
        /// The rank that tried to put.
        rank: i32,
    },
    /// A second `put` of the same guid (DDDFs are single-assignment).
    AlreadyPut {
        /// The guid.
        guid: u64,
    },
    /// `get` before the value was put (on the home) or arrived (elsewhere).
    NotPut {
        /// The guid.
        guid: u64,
        /// Its home rank.
        home: i32,
    },
    /// A value whose encoding does not have `size(guid)` bytes.
    SizeMismatch {
        /// The guid.
        guid: u64,
        /// `size(guid)`.
        expected: usize,
        /// The length of the value's encoding (or of the received message).
        actual: usize,
        /// Where it was detected.
        at: SizeCheck,
    },
    /// The rank asked for the value says it is not the guid's home: the
    /// `home` functions differ between ranks.
    Refused {
        /// The guid.
        guid: u64,
        /// The rank that was asked.
        asked: i32,
        /// The home according to that rank's `home` function; -1 where
        /// that rank's `home` or `reader` function fails on the guid.
        its_home: i32,
    },
    /// The space was closed (or is closing): no more handles, puts or
    /// requests.
    Closed,
    /// The underlying communication failed.
    Mpi(hc_mpi::Error),
    /// `HC_WATCHDOG_SECS` is set but is not a positive number of seconds.
    BadWatchdogEnv {
        /// The value found.
        value: String,
    },
    /// A helper thread of the space could not be started.
    Thread {
        /// The thread's name.
        thread: &'static str,
        /// Why the system refused it.
        source: IoError,
    },
    /// A user `home` or `size` function panicked while this rank's listener
    /// handled a message from `source`; the listener stops answering.
    ListenerPanicked {
        /// The rank whose message was being handled.
        source: i32,
        /// The panic message.
        message: String,
    },
    /// The listener of another rank stopped on an error (reported there):
    /// `close` cannot prove termination, and fails on every rank.
    PeerListenerFailed {
        /// How many ranks' listeners failed.
        ranks: u64,
    },
}

impl fmt::Display for DddfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DddfError::BadHome { guid, home, ranks } => write!(
                f,
                "dddf: home({guid}) = {home}, which is not a rank of the space's communicator \
                 (valid ranks are 0..{ranks})"
            ),
            DddfError::BadReader {
                guid,
                reader,
                ranks,
            } => write!(
                f,
                "dddf: reader({guid}) = {reader}, which is not a rank of the space's \
                 communicator (valid ranks are 0..{ranks})"
            ),
            DddfError::PutNotHome { guid, home, rank } => write!(
                f,
                "dddf: put of guid {guid} on rank {rank}, but its home is rank {home} \
                 (puts happen on the home rank)"
            ),
            DddfError::AlreadyPut { guid } => write!(
                f,
                "dddf: guid {guid} was already put (DDDFs are single-assignment)"
            ),
            DddfError::NotPut { guid, home } => write!(
                f,
                "dddf: get of guid {guid} (home rank {home}) before its value is available \
                 (await the handle first)"
            ),
            DddfError::SizeMismatch {
                guid,
                expected,
                actual,
                at,
            } => {
                let when = match at {
                    SizeCheck::Put => "put",
                    SizeCheck::Receive => "received",
                };
                write!(
                    f,
                    "dddf: {when} value of guid {guid} has {actual} bytes, but size({guid}) = \
                     {expected}"
                )
            }
            DddfError::Refused {
                guid,
                asked,
                its_home: -1,
            } => write!(
                f,
                "dddf: rank {asked} was asked for guid {guid} but cannot serve it: its home or \
                 reader function fails on it (its stderr names the error); they must agree on \
                 every rank"
            ),
            DddfError::Refused {
                guid,
                asked,
                its_home,
            } => write!(
                f,
                "dddf: rank {asked} was asked for guid {guid} but its home({guid}) = {its_home}: \
                 the home function must give the same rank on every rank"
            ),
            DddfError::Closed => f.write_str("dddf: the DDDF space is closed"),
            DddfError::Mpi(error) => write!(f, "dddf: communication failed: {error}"),
            DddfError::BadWatchdogEnv { value } => write!(
                f,
                "dddf: {} must be a positive number of seconds, got {value:?}",
                crate::WATCHDOG_ENV
            ),
            DddfError::Thread { thread, .. } => {
                write!(f, "dddf: cannot start the {thread} thread")
            }
            DddfError::ListenerPanicked { source, message } => write!(
                f,
                "dddf: a home or size function panicked while handling a message from rank \
                 {source}: {message}; the listener stopped answering"
            ),
            DddfError::PeerListenerFailed { ranks } => write!(
                f,
                "dddf: the listener of {ranks} other rank(s) stopped on an error (see their \
                 message); the space cannot be closed cleanly"
            ),
        }
    }
}

impl std::error::Error for DddfError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DddfError::Mpi(error) => Some(error),
            DddfError::Thread { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<hc_mpi::Error> for DddfError {
    fn from(error: hc_mpi::Error) -> Self {
        DddfError::Mpi(error)
    }
}

/// An I/O error that can sit in a `Clone + Eq` error enum: shared, and
/// equal to another when both say the same (`std::io::Error` has neither
/// property).
#[derive(Debug, Clone)]
pub struct IoError(std::sync::Arc<std::io::Error>);

impl From<std::io::Error> for IoError {
    fn from(error: std::io::Error) -> Self {
        IoError(std::sync::Arc::new(error))
    }
}

impl PartialEq for IoError {
    fn eq(&self, other: &IoError) -> bool {
        self.0.kind() == other.0.kind() && self.0.to_string() == other.0.to_string()
    }
}

impl Eq for IoError {}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for IoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}
