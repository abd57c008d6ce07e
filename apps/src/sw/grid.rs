//! Tilings of the DP matrix and the distributions of outer tiles over
//! ranks used by the distributed drivers.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

/// A tiling of an `n x m` matrix (A along rows, B along columns) into tiles
/// of `tile_rows x tile_cols`; the last row and column of tiles may be
/// smaller when the sizes do not divide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    n: usize,
    m: usize,
    tile_rows: usize,
    tile_cols: usize,
}

impl Grid {
    /// A tiling of an `n x m` matrix.
    ///
    /// # Panics
    /// If a tile dimension is 0.
    pub fn new(n: usize, m: usize, tile_rows: usize, tile_cols: usize) -> Self {
        assert!(
            tile_rows > 0 && tile_cols > 0,
            "tile dimensions must be positive"
        );
        Grid {
            n,
            m,
            tile_rows,
            tile_cols,
        }
    }

    /// The matrix's rows and columns.
    pub fn size(&self) -> (usize, usize) {
        (self.n, self.m)
    }

    /// Number of tile rows.
    pub fn tile_rows_count(&self) -> usize {
        self.n.div_ceil(self.tile_rows)
    }

    /// Number of tile columns.
    pub fn tile_cols_count(&self) -> usize {
        self.m.div_ceil(self.tile_cols)
    }

    /// Rows of A covered by tile row `i`.
    pub fn rows(&self, i: usize) -> Range<usize> {
        i * self.tile_rows..((i + 1) * self.tile_rows).min(self.n)
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
