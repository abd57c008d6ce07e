//! Inner loops shared by the tile kernel and the sequential kernel.
//!
//! Everything here works *in place* on one tile: the row above the tile
//! (`top_h`/`top_f`) is overwritten with the tile's bottom row, and the column
//! to its left (`left_h`/`left_e`) with its right column. Engines:
//!
//! * [`scalar`]: row by row, one cell at a time (the [`Kernel::Scalar`]
//!   fallback, and the `h mod L` rows left over by the strip engines).
//! * [`strip`]: `L` rows at a time in a skewed ("wavefront within a strip")
//!   layout: lane `k` handles row `r + k` and, at step `t`, column `t - k`,
//!   so all lanes of a step are independent. Plain array code, left to the
//!   compiler's auto-vectorizer ([`Kernel::Portable`], any target).
//! * `avx2` (x86 only): the same layout with explicit AVX2 intrinsics, 16
//!   rows (two vectors of 8 `i32`) per strip ([`Kernel::Avx2`], chosen by
//!   [`Kernel::Auto`] after runtime detection).

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx2;
mod scalar;
mod strip;

/// Bound on substitution types usable by every compiled engine.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use avx2::VecSubst as EngineSubst;
#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
use Subst as EngineSubst;

use crate::sw::best::Best;
use crate::sw::scoring::{Scoring, Substitution, MATRIX_DIM};

/// Rows per strip in the portable strip engine.
pub(crate) const LANES: usize = 16;

/// Which implementation computes the cells. All give identical results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Kernel {
    /// The fastest one available on this CPU ([`Kernel::Avx2`] if supported,
    /// else [`Kernel::Portable`]).
    #[default]
    Auto,
    /// Row-by-row scalar loop (simplest, slowest).
    Scalar,
    /// Auto-vectorized strip engine for the baseline target (SSE2 on x86-64).
    Portable,
    /// Strip engine with explicit AVX2 intrinsics; falls back to
    /// [`Kernel::Portable`] if the CPU (or target) lacks AVX2.
    Avx2,
}

impl Kernel {
    /// Whether AVX2 is usable on this machine.
    pub fn avx2_available() -> bool {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            is_x86_feature_detected!("avx2")
        }
        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
        {
            false
        }
    }

    /// The kernel that will actually run for this request.
    pub fn resolve(self) -> Kernel {
        match self {
            Kernel::Auto | Kernel::Avx2 => {
                if Kernel::avx2_available() {
                    Kernel::Avx2
                } else {
                    Kernel::Portable
                }
            }
            k => k,
        }
    }
}

/// Gap penalties (positive).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gaps {
    pub open: i32,
    pub extend: i32,
}

/// Substitution scores as seen by the inner loops. `key` is computed once per
/// row of A; `score` once per cell.
pub(crate) trait Subst: Copy {
    fn key(self, a: u8) -> i32;
    fn score(self, key: i32, b: u8) -> i32;
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct MatchMismatch {
    matched: i32,
    mismatched: i32,
}

impl Subst for MatchMismatch {
    #[inline(always)]
    fn key(self, a: u8) -> i32 {
        i32::from(a)
    }
    #[inline(always)]
    fn score(self, key: i32, b: u8) -> i32 {
        if key == i32::from(b) {
            self.matched
        } else {
            self.mismatched
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Matrix<'a> {
    table: &'a [i32; MATRIX_DIM * MATRIX_DIM],
}

impl Subst for Matrix<'_> {
    #[inline(always)]
    fn key(self, a: u8) -> i32 {
        i32::from(a & 31) << 5
    }
    #[inline(always)]
    fn score(self, key: i32, b: u8) -> i32 {
        // The mask is a no-op for valid codes (< 32) and removes the bounds
        // check, which lets the loop vectorize.
        self.table[((key | i32::from(b & 31)) & 1023) as usize]
    }
}

/// In-place state of one tile (see the module docs).
#[derive(Debug)]
pub(crate) struct TileIo<'a> {
    pub a: &'a [u8],
    pub b: &'a [u8],
    pub top_h: &'a mut [i32],
    pub top_f: &'a mut [i32],
    pub left_h: &'a mut [i32],
    pub left_e: &'a mut [i32],
    /// `H` of the cell above `left_h[0]` (diagonal neighbour of the tile's
    /// first cell).
    pub corner: i32,
    /// Global coordinates of the tile's first cell.
    pub row0: usize,
    pub col0: usize,
}

/// Computes the tile in place and returns its best cell (global
/// coordinates; `Best::zero_at(row0, col0)` if no cell is positive). The
/// caller has validated lengths, codes and overflow bounds.
pub(crate) fn run_tile(kernel: Kernel, scoring: &Scoring, io: TileIo<'_>) -> Best {
    let gaps = Gaps {
        open: scoring.gap_open(),
        extend: scoring.gap_extend(),
    };
    match scoring.substitution() {
        Substitution::MatchMismatch {
            matched,
            mismatched,
        } => {
            let s = MatchMismatch {
                matched: *matched,
                mismatched: *mismatched,
            };
            run_with(kernel, s, gaps, io)
        }
        Substitution::Matrix(m) => run_with(kernel, Matrix { table: m.table() }, gaps, io),
    }
}

fn run_with<S: EngineSubst>(kernel: Kernel, s: S, gaps: Gaps, mut io: TileIo<'_>) -> Best {
    let mut best = Best::zero_at(io.row0, io.col0);
    let (done, corner) = match kernel.resolve() {
        Kernel::Scalar => (0, io.corner),
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        Kernel::Avx2 => match avx2::Avx2::detect() {
            // SAFETY: the token `t` exists only because
            // `is_x86_feature_detected!("avx2")` returned true, and AVX2
            // support is the sole precondition of `strips_avx2`.
            Some(t) => unsafe { avx2::strips_avx2(t, s, gaps, &mut io, &mut best) },
            None => strip::strips::<LANES, S>(s, gaps, &mut io, &mut best),
        },
        _ => strip::strips::<LANES, S>(s, gaps, &mut io, &mut best),
    };
    // Rows not covered by full strips (and everything for `Scalar`).
    scalar::rows(
        s,
        gaps,
        &io.a[done..],
        io.b,
        io.top_h,
        io.top_f,
        &mut io.left_h[done..],
        &mut io.left_e[done..],
        corner,
        io.row0 + done,
        io.col0,
        &mut best,
    );
    best
}
