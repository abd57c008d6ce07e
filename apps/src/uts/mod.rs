//! Unbalanced Tree Search (UTS) benchmark.
//!
//! * [`rng`]: the SHA-1 splittable random number generator of the reference,
//! * [`tree`]: tree parameters, nodes and the number-of-children rules,
//! * [`samples`]: the standard sample trees with their published counts,
//! * [`seq`]: a tuned sequential depth-first search,
//! * [`error`]: typed parameter errors.
//!
//! The parallel searches (one module each, protocols documented there):
//!
//! * [`mpi_ws`]: MPI-only work stealing, one rank per core — the reference
//!   `mpi_workstealing.c` algorithm;
//! * [`hcmpi`]: the HCMPI paper's design — computation workers with local
//!   stacks and work-stealing deques, hc-mpi's communication worker for the
//!   inter-rank steals and the termination token;
//! * [`hybrid`]: MPI + rayon, the paper's MPI+OpenMP comparison;
//!
//! and their building blocks:
//!
//! * [`local`]: the interruptible, splittable depth-first stack of a worker,
//! * [`chunk`]: chunks, their wire format, tags and steal parameters,
//! * [`termination`]: the reference's token-ring termination detection,
//! * [`stats`]: the work/overhead/search/idle breakdown of Table III,
//! * [`progress`]: the node counter of long runs on a terminal.
//!
//! The two baselines bind their threads to CPUs as hcmpi mode binds its
//! workers (`HCMPI_BIND`, [`crate::binding`]), so that a comparison runs
//! every mode on the same terms.
//!
//! The trees are identical to those of the public UTS reference
//! implementation (`uts.c`, `rng/brg_sha1.c`).

pub mod chunk;
pub mod error;
pub mod hcmpi;
pub mod hybrid;
pub mod local;
pub mod mpi_ws;
pub mod progress;
pub mod rng;
pub mod samples;
pub mod seq;
pub mod stats;
pub mod termination;
pub mod tree;

pub use error::UtsError;
pub use samples::{SampleTree, SAMPLE_TREES};
pub use seq::SearchStats;
pub use tree::{GeoShape, Node, Tree, TreeParams, TreeType};

/// What every rank of a parallel search must be given alike
/// ([`crate::agreement`]): the tree, and how work is cut and stolen.
fn fingerprint(tree: &Tree, steal: &chunk::StealParams) -> crate::agreement::Fingerprint {
    crate::agreement::Fingerprint::new()
        .options("tree parameters", &format!("{:?}", tree.params()))
        .options("work-stealing options", &format!("{steal:?}"))
}
