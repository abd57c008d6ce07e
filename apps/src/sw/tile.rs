//! The tile kernel: compute one rectangular block of the DP matrix from its
//! boundary, for tiled / distributed wavefront drivers.
//!
//! A tile covers rows `row0 .. row0 + h` of A and columns `col0 .. col0 + w`
//! of B (0-based, global). Its inputs are
//!
//! * [`EdgeRow`] `top`: `H` and `F` (vertical-gap state) of the row just above
//!   the tile (`row0 - 1`), for each of the tile's `w` columns;
//! * [`EdgeCol`] `left`: `H` and `E` (horizontal-gap state) of the column just
//!   left of the tile (`col0 - 1`), for each of its `h` rows, plus `corner`:
//!   `H[row0 - 1][col0 - 1]`, the cell diagonally above-left.
//!
//! Its outputs are the same kinds of edges on the far sides: the bottom row
//! (`H`, `F` of row `row0 + h - 1`) which is the `top` of the tile below, and
//! the right column (`H`, `E` of column `col0 + w - 1`) with
//! `corner = H[row0 - 1][col0 + w - 1]` (= the input `top.h[w - 1]`), which is
//! the `left` of the tile to the right. So each edge travels along exactly
//! one grid link: down for rows, right for columns (the corner rides along
//! with the column edge). Matrix borders are [`EdgeRow::border`] and
//! [`EdgeCol::border`].
//!
//! Gap states travel clamped at 0: an output edge holds `max(F, 0)` and
//! `max(E, 0)`, not the textbook values, which may be negative. No `H`
//! changes, because a gap state below 0 never wins against `H >= 0` and
//! `max(E, 0)` obeys the recurrence with the same clamp. It is the form in
//! which the saturating SIMD kernels keep them. Input edges may hold any
//! value down to [`NEG_INF`].
//!
//! The tile also returns its best cell ([`Best`], global coordinates,
//! `Best::zero_at(row0, col0)` if no cell is positive). Merging the tiles'
//! results with [`Best::merge`] gives exactly the whole-matrix result,
//! tie-break included, because `merge` implements the same total order
//! (score desc, row asc, col asc) that every kernel uses inside a tile.

use crate::sw::kernel::{self, reduce, Kernel, TileIo};
use crate::sw::{Best, Scoring, MAX_SCORE, NEG_INF};

/// A row edge: `H` and `F` values of one matrix row over a column range.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct EdgeRow {
    /// `H` values.
    pub h: Vec<i32>,
    /// `F` (vertical gap) values.
    pub f: Vec<i32>,
}

impl EdgeRow {
    /// The matrix's top border (row -1): `H = 0` and no gap (`F = 0`, see
    /// the module docs on clamped gap states).
    pub fn border(len: usize) -> Self {
        EdgeRow {
            h: vec![0; len],
            f: vec![0; len],
        }
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.h.len()
    }

    /// `true` if it spans no column.
    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }
}

/// A column edge: `H` and `E` values of one matrix column over a row range,
/// plus the `H` value of the cell just above the range.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct EdgeCol {
    /// `H` of the cell above the first row of the range (same column).
    pub corner: i32,
    /// `H` values.
    pub h: Vec<i32>,
    /// `E` (horizontal gap) values.
    pub e: Vec<i32>,
}

impl EdgeCol {
    /// The matrix's left border (column -1): `H = 0`, no gap (`E = 0`),
    /// corner 0.
    pub fn border(len: usize) -> Self {
        EdgeCol {
            corner: 0,
            h: vec![0; len],
            e: vec![0; len],
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.h.len()
    }

    /// `true` if it spans no row.
    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }
}

/// Global coordinates of a tile's first (top-left) cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Origin {
    /// Row in A.
    pub row: usize,
    /// Column in B.
    pub col: usize,
}

/// All inputs of a tile besides the sequences.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Boundary {
    /// Row above the tile.
    pub top: EdgeRow,
    /// Column left of the tile, with the corner.
    pub left: EdgeCol,
}

/// Outputs of a tile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileResult {
    /// Bottom row (`top` of the tile below).
    pub bottom: EdgeRow,
    /// Right column (`left` of the tile to the right).
    pub right: EdgeCol,
    /// Best cell of the tile, global coordinates.
    pub best: Best,
}

/// Computes a tile from a borrowed boundary; see the module docs.
/// `a` and `b` are the tile's own slices of the sequences.
///
/// # Panics
///
/// As [`tile_in_place`].
pub fn compute_tile(
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    origin: Origin,
    boundary: &Boundary,
) -> TileResult {
    let mut bottom = boundary.top.clone();
    let mut right = boundary.left.clone();
    let best = tile_in_place(a, b, scoring, origin, &mut bottom, &mut right);
    TileResult {
        bottom,
        right,
        best,
    }
}

/// Computes a tile in place with the fastest kernel: `top` becomes the
/// bottom row and `left` the right column (with its corner); returns the
/// tile's best cell. Allocates only `O(w)` scratch: the striped kernel's
/// row buffers and its profile (one row of `w` scores per distinct code in
/// `a`), which the thread keeps for later tiles over the same columns
/// (at most 16 MiB of them).
///
/// # Panics
///
/// If `top.len() != b.len()`, `left.len() != a.len()` (or `f`/`e` lengths
/// differ from `h`), if a code is out of range for a matrix scoring, or if
/// the boundary values are outside `[0, MAX_SCORE]` (`H`) /
/// `[NEG_INF, MAX_SCORE]` (`E`, `F`) or could let a score exceed
/// [`MAX_SCORE`] inside the tile.
pub fn tile_in_place(
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    origin: Origin,
    top: &mut EdgeRow,
    left: &mut EdgeCol,
) -> Best {
    tile_in_place_with(Kernel::Auto, a, b, scoring, origin, top, left)
}

/// [`tile_in_place`] with an explicit kernel choice.
pub fn tile_in_place_with(
    kernel: Kernel,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    origin: Origin,
    top: &mut EdgeRow,
    left: &mut EdgeCol,
) -> Best {
    check_tile(a, b, scoring, origin, top, left);
    let (h, w) = (a.len(), b.len());
    // H[row0 - 1][col0 + w - 1], the corner of the right column.
    let right_corner = top.h.last().copied().unwrap_or(left.corner);
    if h == 0 || w == 0 {
        left.corner = right_corner;
        return Best::zero_at(origin.row, origin.col);
    }
    let best = kernel::run_tile(
        kernel,
        scoring,
        TileIo {
            a,
            b,
            top_h: &mut top.h,
            top_f: &mut top.f,
            left_h: &mut left.h,
            left_e: &mut left.e,
            corner: left.corner,
            row0: origin.row,
            col0: origin.col,
        },
    );
    left.corner = right_corner;
    best
}

/// Checks what [`tile_in_place`] documents under *Panics*: edge lengths,
/// codes, and that no score inside the tile at `origin` can exceed
/// [`MAX_SCORE`].
pub(crate) fn check_tile(
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    origin: Origin,
    top: &EdgeRow,
    left: &EdgeCol,
) {
    let (h, w) = (a.len(), b.len());
    assert!(
        top.h.len() == w && top.f.len() == w,
        "top edge has {} / {} values for a tile of width {w}",
        top.h.len(),
        top.f.len()
    );
    assert!(
        left.h.len() == h && left.e.len() == h,
        "left edge has {} / {} values for a tile of height {h}",
        left.h.len(),
        left.e.len()
    );
    scoring.check_codes(a, "A");
    scoring.check_codes(b, "B");
    check_bounds(scoring, origin, top, left);
}

fn check_bounds(scoring: &Scoring, origin: Origin, top: &EdgeRow, left: &EdgeCol) {
    let (min_h, max_h) = reduce::range([&top.h, &left.h], left.corner);
    assert!(
        0 <= min_h && max_h <= MAX_SCORE,
        "boundary H values must lie in [0, MAX_SCORE]"
    );
    let (min_gap, max_gap) = reduce::range([&top.f, &left.e], 0);
    assert!(
        NEG_INF <= min_gap && max_gap <= MAX_SCORE,
        "boundary E/F values must lie in [NEG_INF, MAX_SCORE]"
    );
    // Any H inside the tile is a boundary H plus at most min(h, w) positive
    // substitution steps (gaps only lower it).
    let growth = i64::from(scoring.max_gain()) * top.h.len().min(left.h.len()) as i64;
    assert!(
        i64::from(max_h) + growth <= i64::from(MAX_SCORE)
            || within_reach(scoring, origin, top, left),
        "scores could exceed MAX_SCORE ({MAX_SCORE}) in this tile"
    );
}

/// Whether the edges hold no more than a local alignment can reach at
/// their place in the matrix, and so nothing inside the tile can exceed
/// [`MAX_SCORE`] either: the bound [`check_bounds`] falls back on.
///
/// A local alignment ending at row `r`, column `c` (counted from 1) has at
/// most `min(r, c)` substitutions, so no `H`, `E` or `F` there exceeds
/// `gain * min(r, c)`, and the recurrence keeps that true cell by cell
/// from edges that satisfy it. Below the matrix's square part the edges
/// already carry about `gain * min(n, m)`, which the sum of the first
/// check counts twice: on a 1024 x 512 matrix whose scores reach
/// [`MAX_SCORE`] only at the end, a tile in the lower half failed it.
fn within_reach(scoring: &Scoring, origin: Origin, top: &EdgeRow, left: &EdgeCol) -> bool {
    let gain = i64::from(scoring.max_gain());
    let reach = |row: usize, col: usize| gain * row.min(col) as i64;
    let (row0, col0) = (origin.row, origin.col);
    let (h, w) = (left.h.len(), top.h.len());
    let top_ok = (0..w).all(|k| {
        let most = reach(row0, col0 + k + 1);
        i64::from(top.h[k]) <= most && i64::from(top.f[k]) <= most
    });
    let left_ok = (0..h).all(|i| {
        let most = reach(row0 + i + 1, col0);
        i64::from(left.h[i]) <= most && i64::from(left.e[i]) <= most
    });
    top_ok
        && left_ok
        && i64::from(left.corner) <= reach(row0, col0)
        && reach(row0 + h, col0 + w) <= i64::from(MAX_SCORE)
}

/// Whole-matrix alignment by tiles of `tile_rows x tile_cols`, computed one at
/// a time in wavefront (anti-diagonal) order, exactly as a parallel driver
/// would schedule them. Equals [`crate::sw::reference::align`].
///
/// # Panics
///
/// If a tile dimension is 0, or as [`tile_in_place`].
pub fn align_tiled(
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    tile_rows: usize,
    tile_cols: usize,
) -> Best {
    align_tiled_with(Kernel::Auto, a, b, scoring, tile_rows, tile_cols)
}

/// [`align_tiled`] with an explicit kernel choice.
pub fn align_tiled_with(
    kernel: Kernel,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    tile_rows: usize,
    tile_cols: usize,
) -> Best {
    assert!(
        tile_rows > 0 && tile_cols > 0,
        "tile dimensions must be positive"
    );
    let (n, m) = (a.len(), b.len());
    let ti = n.div_ceil(tile_rows);
    let tj = m.div_ceil(tile_cols);
    let rows = |i: usize| i * tile_rows..((i + 1) * tile_rows).min(n);
    let cols = |j: usize| j * tile_cols..((j + 1) * tile_cols).min(m);
    // Edge travelling down column block j / right along row block i.
    let mut row_edges: Vec<EdgeRow> = (0..tj).map(|j| EdgeRow::border(cols(j).len())).collect();
    let mut col_edges: Vec<EdgeCol> = (0..ti).map(|i| EdgeCol::border(rows(i).len())).collect();
    let mut best = Best::zero_at(0, 0);
    #[allow(clippy::needless_range_loop)] // i and j index two edge vectors
    for d in 0..(ti + tj).saturating_sub(1) {
        for i in d.saturating_sub(tj - 1)..=d.min(ti - 1) {
            let j = d - i;
            let (r, c) = (rows(i), cols(j));
            let origin = Origin {
                row: r.start,
                col: c.start,
            };
            let tile_best = tile_in_place_with(
                kernel,
                &a[r],
                &b[c],
                scoring,
                origin,
                &mut row_edges[j],
                &mut col_edges[i],
            );
            best = best.merge(tile_best);
        }
    }
    best
}
