//! Smith-Waterman local alignment with affine gaps (Gotoh): score kernels
//! and the traceback of the alignment itself.
//!
//! # Semantics
//!
//! Sequence `A` (length `n`) indexes the rows, sequence `B` (length `m`) the
//! columns. With substitution score `s(x, y)`, gap-open penalty `O` and
//! gap-extend penalty `E` (a gap of length `L` costs `O + (L - 1) * E`), the
//! kernels evaluate, for `1 <= i <= n`, `1 <= j <= m`:
//!
//! ```text
//! E[i][j] = max(H[i][j-1] - O, E[i][j-1] - E)      horizontal gap (consumes B)
//! F[i][j] = max(H[i-1][j] - O, F[i-1][j] - E)      vertical gap   (consumes A)
//! H[i][j] = max(0, H[i-1][j-1] + s(a_i, b_j), E[i][j], F[i][j])
//! ```
//!
//! with `H[0][*] = H[*][0] = 0` and `E[*][0] = F[0][*] = -inf`
//! ([`NEG_INF`]).
//!
//! The result is a [`Best`]: the maximal `H` and the 0-based coordinates
//! (`row` in `A`, `col` in `B`) of one cell reaching it. **Tie-break:** among
//! all cells with the maximal score, the one with the smallest row, then the
//! smallest column. Since every `H >= 0`, a maximal score of 0 reports cell
//! `(0, 0)`; empty inputs also report `Best { score: 0, row: 0, col: 0 }`.
//! Every kernel in this crate ([`reference`](mod@reference), [`seq`], [`tile`]) follows this
//! rule exactly, so their results are equal, not merely equal in score.
//!
//! # Modules
//!
//! * [`alphabet`]: byte <-> small-code mapping (DNA `ACGT`, protein).
//! * [`fasta`]: parsing of the first FASTA record, typed errors.
//! * [`random`]: deterministic SplitMix64 and random sequences.
//! * [`scoring`]: scoring schemes, the BLOSUM62 table.
//! * [`reference`](mod@reference): the obviously-correct `O(n*m)` memory oracle.
//! * [`tile`]: the boundary-in/boundary-out tile kernel and a sequential
//!   wavefront driver [`tile::align_tiled`].
//! * [`seq`]: the whole-matrix linear-memory kernel (same inner loop as the
//!   tile kernel).
//! * [`alignment`]: the alignment itself (start, CIGAR, identity, pairwise
//!   view) in linear memory, traced back from the end cell by blocks
//!   between rows the score pass kept.
//! * [`grid`]: tilings and the distributions of outer tiles over ranks.
//! * [`auto_tiling`]: the tile sizes `--inner-tile auto` and
//!   `--outer-tile auto` choose.
//! * [`edges`]: tile edges packed as flat vectors for transfer.
//! * [`hcmpi`]: the distributed driver on DDDFs (between outer tiles on
//!   different ranks) and local DDFs (inner tiles), §IV-C of the HCMPI
//!   paper.
//! * [`hybrid`]: the MPI + rayon fork-join driver (the MPI+OpenMP
//!   baseline).
//! * [`Kernel`]: choice of implementation: the striped kernel on 8- and
//!   16-bit saturating lanes with the widest instruction set the CPU has
//!   (AVX-512BW, AVX2, SSE4.1; detected at run time), which hands rows
//!   whose scores outgrow its lanes to 32-bit lanes; the 32-bit strip
//!   kernels alone; plain scalar.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod alignment;
pub mod alphabet;
pub mod auto_tiling;
mod best;
pub mod edges;
pub mod fasta;
pub mod grid;
pub mod hcmpi;
pub mod hybrid;
mod kept;
mod kernel;
pub mod random;
pub mod reference;
pub mod scoring;
pub mod seq;
pub mod tile;

pub use best::Best;
pub use kernel::{Bits, Isa, Kernel};
pub use scoring::{Scoring, ScoringError, SubstMatrix, Substitution, MAX_SCORE, NEG_INF};
