//! Tilings of the DP matrix and the distributions of outer tiles over
//! ranks used by the distributed drivers.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use std::sync::Arc;

/// A tiling of an `n x m` matrix (A along rows, B along columns) into
/// rows of tiles (bands) and columns of `tile_cols`; the last column of
/// tiles may be narrower when the sizes do not divide. Bands are
/// `tile_rows` high ([`Grid::new`]; the last may be lower), or taper
/// towards both ends of the matrix ([`Grid::tapered`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grid {
    m: usize,
    tile_cols: usize,
    /// The first row of each band, then `n`.
    row_cuts: Arc<[usize]>,
}

impl Grid {
    /// A tiling of an `n x m` matrix into `tile_rows x tile_cols` tiles.
    ///
    /// # Panics
    /// If a tile dimension is 0.
    pub fn new(n: usize, m: usize, tile_rows: usize, tile_cols: usize) -> Self {
        assert!(
            tile_rows > 0 && tile_cols > 0,
            "tile dimensions must be positive"
        );
        let starts = (0..n).step_by(tile_rows);
        Grid {
            m,
            tile_cols,
            row_cuts: starts.chain([n]).collect(),
        }
    }

    /// [`Grid::tapered`] where `taper`, else [`Grid::new`].
    ///
    /// ```
    /// use apps::sw::grid::Grid;
    ///
    /// assert_eq!(Grid::cut(20_000, 100, 1024, 100, true).rows(0), 0..128);
    /// assert_eq!(Grid::cut(20_000, 100, 1024, 100, false).rows(0), 0..1024);
    /// ```
    ///
    /// # Panics
    /// If a tile dimension is 0.
    pub fn cut(n: usize, m: usize, tile_rows: usize, tile_cols: usize, taper: bool) -> Self {
        match taper {
            true => Grid::tapered(n, m, tile_rows, tile_cols),
            false => Grid::new(n, m, tile_rows, tile_cols),
        }
    }

    /// A tiling whose bands are `tile_rows` high in the middle of the
    /// matrix and lower towards its top and bottom edges: the first is an
    /// eighth of `tile_rows` (at least [`MIN_TAPER_ROWS`]), each next one
    /// half as high again (rounded down), up to the first that would reach
    /// `tile_rows`; the last bands are the same in reverse. The bands in
    /// between share their rows evenly, none higher than `tile_rows`. A
    /// matrix too short for the whole taper and a band of `tile_rows`
    /// between its ends keeps its lowest bands only, and one too short for
    /// any is cut as by [`Grid::new`].
    ///
    /// For ranks (or the threads of one rank) that form a pipeline down
    /// the bands. Every other rank
    /// waits for the first band of the first column block before it can
    /// start, and the last block's rank computes the last band after the
    /// others are done: low bands there shorten the pipeline's fill and
    /// drain, while the bands in between stay high, because a tile costs
    /// something besides its cells. Each band at most half as high again
    /// as the one above lets the first rank keep ahead of the next: a band
    /// twice as high as the one above took it longer than the next rank
    /// took for the band above, and that rank waited for it.
    ///
    /// ```
    /// use apps::sw::grid::Grid;
    ///
    /// let grid = Grid::tapered(20_000, 100, 1024, 100);
    /// let heights: Vec<_> = (0..grid.tile_rows_count()).map(|i| grid.rows(i).len()).collect();
    /// assert_eq!(heights[..7], [128, 192, 288, 432, 648, 972, 978]);
    /// assert_eq!(heights[heights.len() - 3..], [288, 192, 128]);
    /// assert!(heights.iter().all(|&h| h <= 1024));
    /// assert_eq!(heights.iter().sum::<usize>(), 20_000);
    /// ```
    ///
    /// # Panics
    /// If a tile dimension is 0.
    pub fn tapered(n: usize, m: usize, tile_rows: usize, tile_cols: usize) -> Self {
        assert!(
            tile_rows > 0 && tile_cols > 0,
            "tile dimensions must be positive"
        );
        let mut taper = Vec::new();
        let mut height = (tile_rows / 8).max(MIN_TAPER_ROWS);
        while height < tile_rows {
            taper.push(height);
            height += height / 2;
        }
        // Each end keeps its lowest bands that leave the middle at least
        // `tile_rows`, in bands higher than the taper's.
        let middle_band = |middle: usize| middle / middle.div_ceil(tile_rows);
        let fits = |taper: &[usize]| {
            let ends = 2 * taper.iter().sum::<usize>();
            n >= ends + tile_rows
                && taper
                    .last()
                    .is_some_and(|&last| middle_band(n - ends) > last)
        };
        while !taper.is_empty() && !fits(&taper) {
            taper.pop();
        }
        if taper.is_empty() {
            return Grid::new(n, m, tile_rows, tile_cols);
        }
        let middle = n - 2 * taper.iter().sum::<usize>();
        let bands = middle.div_ceil(tile_rows);
        let middle_heights = (0..bands).map(|k| middle * (k + 1) / bands - middle * k / bands);
        let heights = taper
            .iter()
            .copied()
            .chain(middle_heights)
            .chain(taper.iter().rev().copied());
        let cuts = std::iter::once(0).chain(heights.scan(0, |row, height| {
            *row += height;
            Some(*row)
        }));
        Grid {
            m,
            tile_cols,
            row_cuts: cuts.collect(),
        }
    }

    /// The matrix's rows and columns.
    pub fn size(&self) -> (usize, usize) {
        (self.n(), self.m)
    }

    fn n(&self) -> usize {
        self.row_cuts[self.row_cuts.len() - 1]
    }

    /// Number of tile rows (bands).
    pub fn tile_rows_count(&self) -> usize {
        self.row_cuts.len() - 1
    }

    /// Number of tile columns.
    pub fn tile_cols_count(&self) -> usize {
        self.m.div_ceil(self.tile_cols)
    }

    /// Rows of A covered by tile row `i`.
    ///
    /// # Panics
    /// If there is no tile row `i`.
    pub fn rows(&self, i: usize) -> Range<usize> {
        self.row_cuts[i]..self.row_cuts[i + 1]
    }

    /// Columns of B covered by tile column `j`.
    pub fn cols(&self, j: usize) -> Range<usize> {
        j * self.tile_cols..((j + 1) * self.tile_cols).min(self.m)
    }

    /// Number of anti-diagonals of tiles.
    pub fn diagonals(&self) -> usize {
        (self.tile_rows_count() + self.tile_cols_count()).saturating_sub(1)
    }

    /// Tile rows `i` of the tiles `(i, d - i)` on anti-diagonal `d`.
    pub fn diagonal(&self, d: usize) -> Range<usize> {
        let (ti, tj) = (self.tile_rows_count(), self.tile_cols_count());
        if ti == 0 || tj == 0 || d >= ti + tj - 1 {
            return 0..0;
        }
        d.saturating_sub(tj - 1)..d.min(ti - 1) + 1
    }

    /// Every tile in wavefront order: by anti-diagonal, then by row.
    pub fn wavefront(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.diagonals()).flat_map(move |d| self.diagonal(d).map(move |i| (i, d - i)))
    }
}

/// The lowest first band of [`Grid::tapered`], where that is more than an
/// eighth of its bands' height: a tile of fewer rows would spend about as
/// long on what it costs besides its cells as on them.
pub const MIN_TAPER_ROWS: usize = 64;

/// How outer tiles are assigned to ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Distribution {
    /// Each anti-diagonal is cut into `ranks` contiguous blocks, block `k`
    /// on rank `k` (§IV-C: bands perpendicular to the wavefront; the
    /// paper's best for DDDFs).
    DiagBlock,
    /// Tile column `j` on rank `j mod ranks`.
    ColCyclic,
    /// Tile columns dealt back and forth, as in a snake draft: ranks `0,
    /// 1, .., r - 1, r - 1, .., 1, 0`, then again. Each rank's columns
    /// then sit at about the same average position across the matrix
    /// (exactly when there are a multiple of `2r` columns), so a cost that
    /// rises from left to right (right of a best path on related
    /// sequences) is shared evenly. At each turn one rank holds two
    /// adjacent columns, between which the edges stay local.
    ColSnake,
}

impl Distribution {
    /// The rank that owns tile `(i, j)` of `grid` among `ranks` ranks.
    pub fn owner(self, grid: &Grid, i: usize, j: usize, ranks: usize) -> usize {
        match self {
            Distribution::ColCyclic => j % ranks,
            Distribution::ColSnake => {
                let k = j % (2 * ranks);
                if k < ranks {
                    k
                } else {
                    2 * ranks - 1 - k
                }
            }
            Distribution::DiagBlock => {
                let diagonal = grid.diagonal(i + j);
                let position = i - diagonal.start;
                position * ranks / diagonal.len()
            }
        }
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Distribution::DiagBlock => "diag-block",
            Distribution::ColCyclic => "col-cyclic",
            Distribution::ColSnake => "col-snake",
        }
    }

    /// The tiles that tile `(i, j)` starts after, all owned by its rank:
    /// none but for [`Distribution::ColSnake`], which orders a rank's
    /// columns by two rules.
    ///
    /// A worker runs the task released last first, whatever the tile.
    ///
    /// 1. **Adjacent columns row by row.** A rank with adjacent columns
    ///    `j` and `j + 1` would run down column `j` as fast as the edges it
    ///    receives release its tiles, while column `j + 1`, whose right
    ///    edges the next column's rank may wait for, waits: in a 2-rank
    ///    trace, the rank owning columns 1 and 2 ran column 1 to the end
    ///    first and left the other rank idle for 6 ms. So `(i, j)` starts
    ///    after `(i - 1, j + 1)`: that rank takes its tiles row by row.
    /// 2. **Upstream first.** A rank whose previous column `k` is not
    ///    adjacent (`k < j - 1`) feeds another rank from column `k` (the
    ///    wavefront runs left to right), and column `j` waits on others.
    ///    Taking its tiles in release order, rank 0 of 2 interleaved them,
    ///    fell behind in column 0, and left rank 1 waiting for it: 3.8 and
    ///    3.0 ms in one trace of the related DNA 20000² pair. So `(i, j)`
    ///    starts after `(i + UPSTREAM_LEAD, k)` (or column `k`'s last
    ///    tile): the upstream column stays that many tiles ahead. In 8
    ///    traces each, rank 1's waits summed to 2.4–3.7 ms instead of
    ///    3.1–20 ms; the run time changed by less than the noise of the
    ///    2-core machine (paired medians 0.97–1.03x over three runs).
    ///
    /// Neither rule can deadlock (a unit test checks the wait graph for
    /// cycles on many grids). A cycle of waits would have to come back to
    /// its column. Only rule 1 moves right, by one column, and only from
    /// the left column of a pair; with two or more ranks the column it
    /// reaches has no rule 1 of its own, so a move left comes before the
    /// next. Rule 2 moves at least two columns left. So a cycle could hold
    /// no rule 2 and one single-column move left per rule 1; but then
    /// nothing in it moves down (rule 1 moves up a row, the data
    /// dependences up or left), so it could not come back to its row. With
    /// one rank rule 2 never applies, and every step moves up, or left in
    /// the same row.
    ///
    /// ```
    /// use apps::sw::grid::{Distribution, Grid};
    ///
    /// let grid = Grid::new(40, 40, 10, 10); // 4 x 4 tiles
    /// let after = |i, j| -> Vec<_> { Distribution::ColSnake.run_after(&grid, i, j, 2).collect() };
    /// // Columns 0, 1, 1, 0: columns 1 and 2 are both on rank 1 of 2.
    /// assert_eq!(after(2, 1), [(1, 2)]);
    /// assert_eq!(after(0, 1), []);
    /// // Rank 0's column 3 follows its column 0, two tiles behind.
    /// assert_eq!(after(0, 3), [(2, 0)]);
    /// assert_eq!(after(2, 3), [(3, 0)]);
    /// assert_eq!(after(2, 0), []);
    /// assert_eq!(Distribution::ColCyclic.run_after(&grid, 2, 1, 2).count(), 0);
    /// ```
    pub fn run_after(
        self,
        grid: &Grid,
        i: usize,
        j: usize,
        ranks: usize,
    ) -> impl Iterator<Item = (usize, usize)> {
        // Col-snake deals whole columns: a tile has its column's owner in
        // every row, so the tiles returned, in other rows, are this rank's
        // whenever their columns are.
        let owner = |column| self.owner(grid, 0, column, ranks);
        let mine = (self == Distribution::ColSnake).then(|| owner(j));
        let row_by_row = mine
            .filter(|&me| i > 0 && j + 1 < grid.tile_cols_count() && owner(j + 1) == me)
            .map(|_| (i - 1, j + 1));
        let last_row = grid.tile_rows_count().saturating_sub(1);
        let upstream = mine
            .and_then(|me| (0..j).rev().find(|&k| owner(k) == me))
            .filter(|&k| k + 1 < j)
            .map(|k| ((i + UPSTREAM_LEAD).min(last_row), k));
        row_by_row.into_iter().chain(upstream)
    }
}

/// How many tiles a rank's upstream column stays ahead of a later column
/// of the same rank under [`Distribution::ColSnake`] (rule 2 of
/// [`Distribution::run_after`]).
pub const UPSTREAM_LEAD: usize = 2;

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Distribution {
    type Err = OptionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "diag-block" => Ok(Distribution::DiagBlock),
            "col-cyclic" => Ok(Distribution::ColCyclic),
            "col-snake" => Ok(Distribution::ColSnake),
            _ => Err(OptionError::UnknownDistribution {
                given: s.to_owned(),
            }),
        }
    }
}

/// A rejected tiling option.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OptionError {
    /// Not the name of a [`Distribution`].
    #[error("unknown distribution {given:?} (expected diag-block, col-cyclic or col-snake)")]
    UnknownDistribution {
        /// The text given.
        given: String,
    },
    /// Not `ROWSxCOLS` with two positive integers.
    #[error("tile size {given:?} must be ROWSxCOLS with positive integers, e.g. 512x512")]
    BadTileSize {
        /// The text given.
        given: String,
    },
}

/// Parses a tile size `RxC` (rows x columns, both positive).
///
/// # Errors
/// [`OptionError::BadTileSize`] for anything else.
pub fn parse_tile(text: &str) -> Result<(usize, usize), OptionError> {
    let bad = || OptionError::BadTileSize {
        given: text.to_owned(),
    };
    let (rows, cols) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let rows: usize = rows.trim().parse().map_err(|_| bad())?;
    let cols: usize = cols.trim().parse().map_err(|_| bad())?;
    if rows == 0 || cols == 0 {
        return Err(bad());
    }
    Ok((rows, cols))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_dividing_tiles_cover_the_matrix() {
        let grid = Grid::new(10, 7, 4, 3);
        assert_eq!((grid.tile_rows_count(), grid.tile_cols_count()), (3, 3));
        assert_eq!(grid.rows(2), 8..10);
        assert_eq!(grid.cols(2), 6..7);
        let tiles: Vec<_> = grid.wavefront().collect();
        assert_eq!(tiles.len(), 9);
        assert_eq!(&tiles[..4], &[(0, 0), (0, 1), (1, 0), (0, 2)]);
    }

    fn heights(grid: &Grid) -> Vec<usize> {
        (0..grid.tile_rows_count())
            .map(|i| grid.rows(i).len())
            .collect()
    }

    #[test]
    fn tapered_bands_rise_by_half_to_the_middle_and_fall_back() {
        for tile_rows in [1, 63, 64, 100, 256, 576, 1024, 2048] {
            // The lowest bands the taper may have.
            let mut ramp = vec![(tile_rows / 8).max(MIN_TAPER_ROWS)];
            while let Some(&h) = ramp.last().filter(|&&h| h + h / 2 < tile_rows) {
                ramp.push(h + h / 2);
            }
            ramp.retain(|&h| h < tile_rows);
            for n in (0..12 * tile_rows).step_by(tile_rows / 7 + 1) {
                let grid = Grid::tapered(n, 10, tile_rows, 10);
                let bands = heights(&grid);
                let what = format!("{n} rows in bands of {tile_rows}: {bands:?}");
                assert_eq!(bands.iter().sum::<usize>(), n, "{what}");
                assert!(bands.iter().all(|&h| 0 < h && h <= tile_rows), "{what}");
                assert_eq!(grid.size(), (n, 10));
                // The most bands that match the ramp at both ends, below
                // middle bands higher than theirs (a middle band may equal
                // the ramp's next).
                let matched = bands.iter().zip(&ramp).take_while(|(b, r)| b == r).count();
                let tapered = (1..=matched.min(bands.len() / 2))
                    .rev()
                    .find(|&t| {
                        let bottom = bands[bands.len() - t..].iter().rev();
                        let middle = &bands[t..bands.len() - t];
                        bottom.eq(&ramp[..t]) && middle.iter().all(|&h| h > ramp[t - 1])
                    })
                    .unwrap_or(0);
                if tapered == 0 || bands.len() < 3 {
                    // No taper: the cut of `Grid::new`.
                    assert_eq!(grid, Grid::new(n, 10, tile_rows, 10), "{what}");
                    continue;
                }
                // The bottom mirrors the top; the middle bands are higher
                // than the taper's and differ by at most a row.
                let bottom: Vec<_> = bands[bands.len() - tapered..]
                    .iter()
                    .rev()
                    .copied()
                    .collect();
                assert_eq!(bottom, ramp[..tapered], "{what}");
                let middle = &bands[tapered..bands.len() - tapered];
                let (lo, hi) = (middle.iter().min().unwrap(), middle.iter().max().unwrap());
                assert!(hi - lo <= 1 && *lo > ramp[tapered - 1], "{what}");
                assert!(middle.iter().sum::<usize>() >= tile_rows, "{what}");
                // With the next band of the ramp too, the middle would be
                // shorter than a band or lower than the taper.
                if let Some(&next) = ramp.get(tapered) {
                    let rest = n.checked_sub(2 * (ramp[..tapered].iter().sum::<usize>() + next));
                    assert!(
                        rest.is_none_or(
                            |rest| rest < tile_rows || rest / rest.div_ceil(tile_rows) <= next
                        ),
                        "{what}: room for {next} rows more"
                    );
                }
            }
        }
        // 20000 rows in bands of 1024: the whole taper, up to 972 rows.
        let bands = heights(&Grid::tapered(20_000, 1, 1024, 1));
        assert_eq!(bands[..6], [128, 192, 288, 432, 648, 972]);
        assert_eq!(bands.len(), 6 + 15 + 6);
        // Too short for the whole taper: its lowest bands only.
        assert_eq!(
            heights(&Grid::tapered(1500, 1, 1024, 1)),
            [128, 622, 622, 128]
        );
        assert_eq!(heights(&Grid::tapered(1279, 1, 1024, 1)), [1024, 255]);
    }

    #[test]
    fn diag_block_cuts_each_diagonal_into_contiguous_blocks() {
        let grid = Grid::new(40, 40, 10, 10);
        // Diagonal 3 holds 4 tiles: two ranks get two each.
        let owners: Vec<_> = grid
            .diagonal(3)
            .map(|i| Distribution::DiagBlock.owner(&grid, i, 3 - i, 2))
            .collect();
        assert_eq!(owners, [0, 0, 1, 1]);
        // More ranks than tiles: distinct owners, all valid.
        assert_eq!(Distribution::DiagBlock.owner(&grid, 0, 0, 4), 0);
        let owners: Vec<_> = grid
            .diagonal(1)
            .map(|i| Distribution::DiagBlock.owner(&grid, i, 1 - i, 4))
            .collect();
        assert_eq!(owners, [0, 2]);
        assert_eq!(Distribution::ColCyclic.owner(&grid, 3, 5, 4), 1);
    }

    #[test]
    fn col_snake_deals_back_and_forth_and_orders_a_ranks_columns() {
        let grid = Grid::new(40, 80, 10, 10); // 4 x 8 tiles
        let owners = |ranks| -> Vec<_> {
            (0..8)
                .map(|j| Distribution::ColSnake.owner(&grid, 0, j, ranks))
                .collect()
        };
        assert_eq!(owners(3), [0, 1, 2, 2, 1, 0, 0, 1]);
        assert_eq!(owners(1), [0; 8]);
        let after = |i, j, ranks| -> Vec<_> {
            Distribution::ColSnake
                .run_after(&grid, i, j, ranks)
                .collect()
        };
        // 2 ranks: 0, 1, 1, 0, 0, 1, 1, 0. Rank 0's pair across the turn
        // (columns 3 and 4) is ordered like rank 1's (1 and 2), and its
        // column 3 follows its column 0 two tiles behind.
        assert_eq!(after(1, 3, 2), [(0, 4), (3, 0)]);
        assert_eq!(after(0, 3, 2), [(2, 0)]);
        assert_eq!(after(1, 1, 2), [(0, 2)]);
        assert_eq!(after(1, 2, 2), []);
        // Column 7 follows rank 0's column 4 (its last tile near the end);
        // column 5, the left one of rank 1's second pair, follows its
        // column 2 as well.
        assert_eq!(after(3, 7, 2), [(3, 4)]);
        assert_eq!(after(0, 7, 2), [(2, 4)]);
        assert_eq!(after(1, 5, 2), [(0, 6), (3, 2)]);
        // One rank: every tile follows the previous row's tile to its
        // right, and every column is adjacent to the previous one.
        assert_eq!(after(2, 5, 1), [(1, 6)]);
        assert_eq!(after(0, 5, 1), []);
        // Other distributions order nothing.
        for dist in [Distribution::ColCyclic, Distribution::DiagBlock] {
            assert_eq!(dist.run_after(&grid, 2, 3, 2).count(), 0);
        }
    }

    /// Every tile waits on its data (above, left) and on what
    /// `run_after` names; no grid, rank count or distribution makes that a
    /// cycle, which would hang the wavefront.
    #[test]
    fn run_after_never_closes_a_cycle_of_waits() {
        let distributions = [
            Distribution::ColSnake,
            Distribution::ColCyclic,
            Distribution::DiagBlock,
        ];
        for dist in distributions {
            for ranks in 1..=6 {
                for (rows, cols) in (1..=8).flat_map(|r| (1..=20).map(move |c| (r, c))) {
                    let grid = Grid::new(rows, cols, 1, 1);
                    let index = |i: usize, j: usize| i * cols + j;
                    let mut waits_on: Vec<Vec<usize>> = vec![Vec::new(); rows * cols];
                    for (i, j) in grid.wavefront() {
                        let waits = &mut waits_on[index(i, j)];
                        if i > 0 {
                            waits.push(index(i - 1, j));
                        }
                        if j > 0 {
                            waits.push(index(i, j - 1));
                        }
                        for (bi, bj) in dist.run_after(&grid, i, j, ranks) {
                            assert_eq!(
                                dist.owner(&grid, bi, bj, ranks),
                                dist.owner(&grid, i, j, ranks),
                                "{dist} {ranks} ranks {rows}x{cols}: ({i}, {j}) after another rank's tile"
                            );
                            waits.push(index(bi, bj));
                        }
                    }
                    // Kahn's algorithm: every tile must become ready.
                    let mut pending: Vec<usize> = waits_on.iter().map(Vec::len).collect();
                    let mut released: Vec<Vec<usize>> = vec![Vec::new(); rows * cols];
                    for (tile, waits) in waits_on.iter().enumerate() {
                        for &w in waits {
                            released[w].push(tile);
                        }
                    }
                    let mut ready: Vec<usize> =
                        (0..rows * cols).filter(|&t| pending[t] == 0).collect();
                    let mut ran = 0;
                    while let Some(tile) = ready.pop() {
                        ran += 1;
                        for &next in &released[tile] {
                            pending[next] -= 1;
                            if pending[next] == 0 {
                                ready.push(next);
                            }
                        }
                    }
                    assert_eq!(
                        ran,
                        rows * cols,
                        "{dist} {ranks} ranks {rows}x{cols}: a cycle of waits"
                    );
                }
            }
        }
    }

    #[test]
    fn tile_sizes_parse() {
        assert_eq!(parse_tile("512x256"), Ok((512, 256)));
        assert!(parse_tile("0x4").is_err());
        assert!(parse_tile("12").is_err());
        assert!(parse_tile("ax4").is_err());
    }
}
