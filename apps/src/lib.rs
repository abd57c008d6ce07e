//! Application drivers of hcmpi.
//!
//! * [`uts`]: the Unbalanced Tree Search benchmark — tree generator matching
//!   the public UTS reference, and its searches.
//! * [`sw`]: Smith-Waterman local alignment with affine gaps — reference DP,
//!   SIMD sequential kernel, and the tile kernel for tiled drivers.
//! * [`agreement`]: whether every rank of a job was given the same problem.
//! * [`binding`]: the baselines' threads bound to CPUs as hc-mpi binds its
//!   workers.
//! * [`job`]: how a driver ends when one rank fails (the whole job ends).
//! * [`output`]: a driver's report on standard output, ended quietly
//!   when its reader has gone.
//! * [`report`]: the one-line JSON reports of the `uts` and `smith-waterman`
//!   binaries (`--json`).
//! * [`progress`]: progress bars of long runs, on a terminal only (also
//!   used by the benchmark drivers).

#![deny(missing_docs)]

pub mod agreement;
pub mod binding;
pub mod job;
pub mod output;
pub mod progress;
pub mod report;
pub mod sw;
pub mod uts;
