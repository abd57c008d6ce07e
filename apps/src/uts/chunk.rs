//! Chunks: the unit of work that moves between workers and between ranks.
//!
//! A chunk is a short list of unexplored tree nodes (`-c` of them, 20 by
//! default as in the reference). Within a process it travels as a
//! [`Chunk`] (`Vec<Node>`); between ranks it is encoded as a `Vec<u32>`
//! of [`WORDS_PER_NODE`] words per node — the 20-byte SHA-1 state as five
//! native-endian words, then the height. `u32` is one of MPI's predefined
//! datatypes, so the message needs no derived datatype (a derived one would
//! have to be created on the thread that initialized MPI, which hc-mpi's
//! computation workers are not), and every rank of a run is the same binary
//! on the same kind of machine, so native byte order is shared.
//!
//! Message tags of the inter-rank protocols (the reference's `uts_tags`):
//! [`TAG_WORK_REQUEST`], [`TAG_WORK_RESPONSE`], [`TAG_TOKEN`].

use std::fmt;

use crate::uts::error::UtsError;
use crate::uts::tree::Node;

/// A list of unexplored nodes handed from one worker to another.
pub type Chunk = Vec<Node>;

/// Words of the wire format per node: five for the state, one for the height.
pub const WORDS_PER_NODE: usize = 6;

/// Tag of a steal request (payload: one word, the requested chunk size).
pub const TAG_WORK_REQUEST: i32 = 1;
/// Tag of the answer to a steal request: an encoded chunk, or no words at
/// all for "no work".
pub const TAG_WORK_RESPONSE: i32 = 2;
/// Tag of the termination-detection token (see `termination`).
pub const TAG_TOKEN: i32 = 3;

/// Default chunk size (`-c`), as in the reference.
pub const DEFAULT_CHUNK: usize = 20;

/// A received message that is not a whole number of encoded nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadChunk {
    /// Number of words received.
    pub words: usize,
}

impl fmt::Display for BadChunk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "received a work message of {} words, not a multiple of {WORDS_PER_NODE}",
            self.words
        )
    }
}

impl std::error::Error for BadChunk {}

/// Polling interval used by the threaded modes when `-i` is 0. Their polls
/// are a few loads, so they need no adaptive interval; 64 nodes (a few
/// microseconds) keeps the poll cost near 0.2% of the exploration, while
/// thieves rarely wait for a poll — they steal chunks already in a deque.
pub const DEFAULT_THREADED_INTERVAL: u32 = 64;

/// Work-distribution parameters shared by the parallel searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StealParams {
    /// Nodes per chunk (`-c`).
    pub chunk: usize,
    /// Nodes explored between polls (`-i`); 0 means adaptive in `mpi-ws`
    /// (as in the reference) and [`DEFAULT_THREADED_INTERVAL`] in the
    /// threaded modes.
    pub poll_interval: u32,
}

impl StealParams {
    /// Checked parameters.
    ///
    /// # Errors
    /// A chunk size of 0, or one whose message would not fit an MPI count.
    pub fn new(chunk: i64, poll_interval: i64) -> Result<Self, UtsError> {
        let max_chunk = (i32::MAX as usize / WORDS_PER_NODE) as i64;
        if !(1..=max_chunk).contains(&chunk) {
            return Err(UtsError::InvalidParam {
                flag: "-c",
                what: "chunk size",
                value: chunk.to_string(),
                expected: "an integer from 1 to 357913941",
            });
        }
        let poll_interval = u32::try_from(poll_interval).map_err(|_| UtsError::InvalidParam {
            flag: "-i",
            what: "polling interval",
            value: poll_interval.to_string(),
            expected: "an integer >= 0 (0: adaptive)",
        })?;
        Ok(StealParams {
            chunk: chunk as usize,
            poll_interval,
        })
    }

    /// The interval of the threaded modes (`hcmpi`, `hybrid`).
    pub fn threaded_interval(&self) -> u32 {
        if self.poll_interval == 0 {
            DEFAULT_THREADED_INTERVAL
        } else {
            self.poll_interval
        }
    }

    /// The reference's release threshold: a worker gives work away only
    /// while it keeps more than one chunk for itself.
    pub fn surplus_threshold(&self) -> u64 {
        2 * self.chunk as u64
    }
}

impl Default for StealParams {
    fn default() -> Self {
        StealParams {
            chunk: DEFAULT_CHUNK,
            poll_interval: 0,
        }
    }
}

/// A parallel search failed at run time (MPI, runtime or protocol error).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// MPI was started before the search, which must start it itself.
    #[error("MPI is already initialized")]
    MpiAlreadyInitialized,
    /// The MPI library cannot give the thread level the mode needs.
    #[error("the MPI library provides {provided}; {mode} needs {needed}")]
    ThreadLevel {
        /// The search mode.
        mode: &'static str,
        /// What MPI provides ([`hc_mpi::threading_name`]).
        provided: &'static str,
        /// What the mode needs.
        needed: &'static str,
    },
    /// The rayon pool of the hybrid search could not start.
    #[error("cannot start the rayon pool")]
    RayonPool(#[source] rayon::ThreadPoolBuildError),
    /// The baseline's threads could not be bound to CPUs as hc-mpi binds
    /// its workers (`HCMPI_BIND`, see [`crate::binding`]).
    #[error("cannot bind the {mode} threads")]
    Bind {
        /// The search mode.
        mode: &'static str,
        /// Why.
        #[source]
        source: crate::binding::BindError,
    },
    /// A message did not have the protocol's form.
    #[error("{what} from rank {rank}: malformed ({words} words)")]
    Malformed {
        /// What the message was meant to be.
        what: &'static str,
        /// Its sender.
        rank: i32,
        /// Its length in words.
        words: usize,
    },
    /// A chunk's wire form was corrupt.
    #[error(transparent)]
    BadChunk(#[from] BadChunk),
    /// A message broke the protocol (unasked, after termination, ...).
    #[error("{what} from rank {rank} {problem}")]
    Protocol {
        /// What the message was.
        what: &'static str,
        /// Its sender.
        rank: i32,
        /// What was wrong with it.
        problem: &'static str,
    },
    /// The search ended with a steal request still unanswered.
    #[error("the search ended with a steal request to rank {victim} unanswered")]
    UnansweredSteal {
        /// The rank asked.
        victim: i32,
    },
    /// A thief asked for work after termination while the pool still held
    /// a chunk (termination was detected too early).
    #[error(
        "rank {thief} asked for work after termination was detected, and the pool still held a chunk"
    )]
    WorkAfterTermination {
        /// The thief.
        thief: i32,
    },
    /// The search ended without a result.
    #[error("the search ended without a result")]
    NoResult,
    /// A task or message handler of the search panicked.
    #[error("a {context} panicked: {message}")]
    Panicked {
        /// Where (`"chunk task"`, `"message handler"`).
        context: &'static str,
        /// The panic's message.
        message: String,
    },
    /// A call into hc-mpi failed.
    #[error(transparent)]
    Mpi(#[from] hc_mpi::Error),
}

/// Append the wire form of `nodes` to `out`.
pub fn encode_into(nodes: &[Node], out: &mut Vec<u32>) {
    out.reserve(nodes.len() * WORDS_PER_NODE);
    for node in nodes {
        for word in node.state.chunks_exact(4) {
            out.push(u32::from_ne_bytes([word[0], word[1], word[2], word[3]]));
        }
        out.push(node.height);
    }
}

/// The wire form of `nodes`.
pub fn encode(nodes: &[Node]) -> Vec<u32> {
    let mut out = Vec::with_capacity(nodes.len() * WORDS_PER_NODE);
    encode_into(nodes, &mut out);
    out
}

/// Append the nodes encoded in `words` to `out`.
///
/// # Errors
/// If `words` is not a whole number of encoded nodes.
pub fn decode_into(words: &[u32], out: &mut Vec<Node>) -> Result<(), BadChunk> {
    if !words.len().is_multiple_of(WORDS_PER_NODE) {
        return Err(BadChunk { words: words.len() });
    }
    out.reserve(words.len() / WORDS_PER_NODE);
    for encoded in words.chunks_exact(WORDS_PER_NODE) {
        let mut state = [0u8; 20];
        for (bytes, word) in state.chunks_exact_mut(4).zip(&encoded[..5]) {
            bytes.copy_from_slice(&word.to_ne_bytes());
        }
        out.push(Node {
            state,
            height: encoded[5],
        });
    }
    Ok(())
}

/// The nodes encoded in `words`.
///
/// # Errors
/// If `words` is not a whole number of encoded nodes.
pub fn decode(words: &[u32]) -> Result<Chunk, BadChunk> {
    let mut out = Vec::with_capacity(words.len() / WORDS_PER_NODE);
    decode_into(words, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uts::tree::{Tree, TreeParams};

    #[test]
    fn round_trip() {
        let tree = Tree::new(TreeParams::DEFAULT).unwrap();
        let root = tree.root();
        let mut nodes = vec![root];
        tree.children_into(&root, &mut nodes);
        let words = encode(&nodes);
        assert_eq!(words.len(), nodes.len() * WORDS_PER_NODE);
        assert_eq!(decode(&words).unwrap(), nodes);
        assert_eq!(decode(&[]).unwrap(), Vec::<Node>::new());
    }

    #[test]
    fn rejects_partial_nodes() {
        assert_eq!(decode(&[1, 2, 3]), Err(BadChunk { words: 3 }));
    }
}
