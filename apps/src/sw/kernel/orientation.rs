//! Which way a tile runs: its rows as the engines' rows, or transposed.
//!
//! The striped engine's vectors run along a row. A vertical gap costs it
//! nothing beyond the main loop; a horizontal one that crosses a whole
//! lane costs the row a prefix scan over the lanes (see
//! [`super::striped`]). On related sequences, right of the best path
//! nearly every cell's `H` comes from a horizontal gap that started on the
//! path, so a tile there pays the scan on every row, while below the path
//! the gaps are vertical and free. On 2 ranks of one worker (related DNA
//! 20000², 3/1 gaps, tiles of 1024 x 3360), tiles right of the path took
//! 140 ps a cell and tiles below it 65, when each such row also took
//! Farrar's lazy passes; with the scan alone, transposing still made the
//! sequential pass over that pair 1.05x faster, and 2 ranks of one worker
//! 1.05x (paired medians of 9 runs).
//!
//! Transposed, the tile's horizontal gaps become the engine's vertical
//! ones. [`choose`] reads the tile's edges: a row whose left-edge `H` is
//! its gap `E` carries a gap in from the left, and where that gap is worth
//! more than what it loses across one lane's columns, it crosses a lane
//! boundary; columns of the top edge whose `H` is `F` carry gaps down in
//! the same way. With those counts it estimates what each way costs, in
//! vectors ([`cost`]), and transposes where that saves more than an eighth.
//! Both ways compute the same cells: only the speed differs.

use super::{Gaps, TileIo};

/// Lanes of the vectors the cost counts in (16-bit AVX-512 and 8-bit AVX2).
const COST_LANES: usize = 32;

/// What an engine row costs besides its segments (the edges, the gaps
/// carried into the next row, the row maximum), in segments.
const ROW_COST: usize = 10;

/// The widest engine row a transposed tile may have, so that its rows of
/// `H` and `F` stay in the L1 cache (the width of the sequential pass's
/// column blocks, [`crate::sw::seq::BLOCK_COLS`]). Taller tiles run in
/// bands of at most this many rows, each choosing its own way.
pub(crate) const MAX_TRANSPOSED_ROW: usize = 4096;

/// Fewest rows and columns of a tile that may be transposed: smaller ones
/// cost more to look at than they could save.
const MIN_SIDE: usize = 256;

/// How a tile's rows map onto the engines' rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Orientation {
    /// The tile's rows are the engines' rows.
    Rows,
    /// The tile's columns are the engines' rows.
    Columns,
}

/// The engine's cost, in vectors, of a tile of `rows` x `cols` whose edge
/// brings `crossing` gaps along its rows that cross a lane boundary.
fn cost(rows: usize, cols: usize, crossing: usize) -> usize {
    let segs = cols.div_ceil(COST_LANES);
    rows * (segs + ROW_COST) + crossing * segs
}

/// Gaps entering along an edge that cross a lane boundary of a row of
/// `width` columns: cells whose `H` is the gap state `g` and whose gap is
/// worth more than `width / COST_LANES` extensions.
fn crossing(h: &[i32], g: &[i32], extend: i32, width: usize) -> usize {
    let lane_loss = i32::try_from(width.div_ceil(COST_LANES))
        .unwrap_or(i32::MAX)
        .saturating_mul(extend);
    h.iter()
        .zip(g)
        .filter(|&(&h, &g)| g > lane_loss && g == h)
        .count()
}

/// The cheaper way to run `io` (see the module docs).
pub(crate) fn choose(io: &TileIo<'_>, gaps: Gaps) -> Orientation {
    let (rows, cols) = (io.a.len(), io.b.len());
    if rows < MIN_SIDE || cols < MIN_SIDE || rows > MAX_TRANSPOSED_ROW {
        return Orientation::Rows;
    }
    // Gaps along the rows, from the left edge; along the columns, from the
    // top edge.
    let along_rows = crossing(&io.left_h[..rows], &io.left_e[..rows], gaps.extend, cols);
    let along_cols = crossing(&io.top_h[..cols], &io.top_f[..cols], gaps.extend, rows);
    let as_rows = cost(rows, cols, along_rows);
    let as_columns = cost(cols, rows, along_cols);
    if as_columns * 8 < as_rows * 7 {
        Orientation::Columns
    } else {
        Orientation::Rows
    }
}

impl<'a> TileIo<'a> {
    /// The same tile with rows and columns exchanged: B's letters are its
    /// rows, the left edge (`H`, and `E`, a gap along the rows) is the row
    /// above (`H`, and `F`, a gap down the columns), and the row above is
    /// the left edge. The engines overwrite them with the transposed
    /// tile's bottom row and right column: the tile's right column and
    /// bottom row.
    pub(crate) fn transposed(self) -> TileIo<'a> {
        TileIo {
            a: self.b,
            b: self.a,
            top_h: self.left_h,
            top_f: self.left_e,
            left_h: self.top_h,
            left_e: self.top_f,
            corner: self.corner,
            row0: self.col0,
            col0: self.row0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tile_choice(
        (rows, cols): (usize, usize),
        left: (i32, i32),
        top: (i32, i32),
        extend: i32,
    ) -> Orientation {
        let (a, b) = (vec![0u8; rows], vec![0u8; cols]);
        let (mut top_h, mut top_f) = (vec![top.0; cols], vec![top.1; cols]);
        let (mut left_h, mut left_e) = (vec![left.0; rows], vec![left.1; rows]);
        let io = TileIo {
            a: &a,
            b: &b,
            top_h: &mut top_h,
            top_f: &mut top_f,
            left_h: &mut left_h,
            left_e: &mut left_e,
            corner: 0,
            row0: 0,
            col0: 0,
        };
        choose(&io, Gaps { open: 3, extend })
    }

    #[test]
    fn tiles_whose_gaps_enter_from_the_left_are_transposed() {
        // Every row's H is a gap from the left, worth more than the 105
        // columns of a lane: right of a best path.
        assert_eq!(
            tile_choice((1024, 3360), (900, 900), (900, 0), 1),
            Orientation::Columns
        );
        // The same gaps, too weak to cross a lane.
        assert_eq!(
            tile_choice((1024, 3360), (100, 100), (100, 0), 1),
            Orientation::Rows
        );
        // Gaps coming down from the top edge: below a best path.
        assert_eq!(
            tile_choice((1024, 3360), (900, 0), (900, 900), 1),
            Orientation::Rows
        );
        // No gaps at all.
        assert_eq!(
            tile_choice((1024, 3360), (5, 0), (5, 0), 1),
            Orientation::Rows
        );
    }

    #[test]
    fn small_and_tall_tiles_keep_their_rows() {
        for shape in [(100, 3360), (1024, 100), (MAX_TRANSPOSED_ROW + 1, 3360)] {
            assert_eq!(
                tile_choice(shape, (900, 900), (900, 0), 1),
                Orientation::Rows,
                "{shape:?}"
            );
        }
    }

    #[test]
    fn free_gaps_cross_every_lane() {
        assert_eq!(
            tile_choice((1024, 3360), (1, 1), (1, 0), 0),
            Orientation::Columns
        );
    }
}
