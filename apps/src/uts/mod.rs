//! Unbalanced Tree Search (UTS) benchmark.
//!
//! * [`rng`]: the SHA-1 splittable random number generator of the reference,
//! * [`tree`]: tree parameters, nodes and the number-of-children rules,
//! * [`samples`]: the standard sample trees with their published counts,
//! * [`seq`]: a tuned sequential depth-first search,
//! * [`error`]: typed parameter errors.
//!
//! The trees are identical to those of the public UTS reference
//! implementation (`uts.c`, `rng/brg_sha1.c`).

pub mod error;
pub mod rng;
pub mod samples;
pub mod seq;
pub mod tree;

pub use error::UtsError;
pub use samples::{SampleTree, SAMPLE_TREES};
pub use seq::SearchStats;
pub use tree::{GeoShape, Node, Tree, TreeParams, TreeType};
