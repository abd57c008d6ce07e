//! Sequential whole-matrix kernel in linear memory.
//!
//! It is the tile kernel applied to one tile covering the whole matrix: one
//! row of `H`/`F` (`m` values each, updated in place strip by strip) and one
//! column of `H`/`E` (`n` values), so memory is `O(n + m)`. The inner loop is
//! the strip engine shared with [`crate::sw::tile`] (AVX2 when available).

use crate::sw::tile::{tile_in_place_with, EdgeCol, EdgeRow, Origin};
use crate::sw::{Best, Kernel, Scoring};

/// Best local alignment score of `a` (rows) against `b` (columns) and its end
/// cell; see the crate docs for the tie-break. Equals
/// [`crate::sw::reference::align`].
///
/// # Panics
///
/// If a code is out of range for a matrix scoring, or if
/// `min(n, m) * max_substitution` could exceed [`crate::sw::MAX_SCORE`].
pub fn align(a: &[u8], b: &[u8], scoring: &Scoring) -> Best {
    align_with(Kernel::Auto, a, b, scoring)
}

/// [`align`] with an explicit kernel choice.
pub fn align_with(kernel: Kernel, a: &[u8], b: &[u8], scoring: &Scoring) -> Best {
    let mut top = EdgeRow::border(b.len());
    let mut left = EdgeCol::border(a.len());
    tile_in_place_with(
        kernel,
        a,
        b,
        scoring,
        Origin::default(),
        &mut top,
        &mut left,
    )
}
