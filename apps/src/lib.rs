//! Application drivers of hcmpi.
//!
//! * [`uts`]: the Unbalanced Tree Search benchmark — tree generator matching
//!   the public UTS reference, and its searches.
//! * [`sw`]: Smith-Waterman local alignment with affine gaps — reference DP,
//!   SIMD sequential kernel, and the tile kernel for tiled drivers.
//! * [`job`]: how a driver ends when one rank fails (the whole job ends).

pub mod job;
pub mod sw;
pub mod uts;
