//! Which columns of a block can hold the path, strip of rows by strip of
//! rows, so that the kernel passes over a block (the forward pass that cuts
//! it, the backward pass that finds its crossing) compute a band around the
//! path instead of the whole rectangle of step 1 of the module docs of
//! [`super::super`].
//!
//! The path reaches `cell = (i, j)` with value `v`. A cell `(x, y)` of the
//! block can lie on it only if the best score of a path reaching `(x, y)`
//! plus the best score of one from `(x, y)` to the cell is at least `v`.
//! Both have cheap upper bounds:
//!
//! - **Reaching `(x, y)`**: from a cell `(r, c)` of the kept row `r` above
//!   the block, at most `H[r][c] + gain * (y - c)`, and from anywhere at
//!   most `max H[r][..=y] + gain * (x - r)`: one letter of `A` at most per
//!   row, and a fresh start is a path from a cell of the row whose `H` is
//!   at least 0. Both maxima are prefix maxima over the row, computed once.
//! - **From `(x, y)` to the cell**: `min(i - x, j - y)` columns at most
//!   score `gain` each and at least `|(i - x) - (j - y)|` are gaps, each
//!   costing at least `min(open, extend)`.
//!
//! The path's columns never decrease going down, so its cells in a strip
//! of rows `x_a ..= x_b` lie between the first column allowed on the row
//! above the strip and the last one allowed on its last row; if the path
//! may start inside the strip (a start needs `gain * (i - x) >= v - gain`),
//! the strip begins at the block's first column instead.
//!
//! Every value computed in a band is the score of a real path that stays
//! in it, so at most the full matrix's; the path lies in the band, so
//! along it the values are the full matrix's, as in the rectangle.

use super::{Cell, Edge};
use crate::sw::Scoring;

/// The columns a block's strips can hold the path in.
pub(super) struct Band {
    /// The kept row above the block.
    top_row: usize,
    /// The block's first column; `first - 1` is the first one scanned.
    first: usize,
    cell: Cell,
    gain: i64,
    gap: i64,
    /// Over columns `first - 1 ..= cell.col`: `max(H[r][c] - gain * c)`
    /// and `max H[r][c]` over `c <= y`.
    reach_by_column: Vec<i64>,
    reach_by_row: Vec<i64>,
}

impl Band {
    /// The band of the block of columns `first ..= cell.col` under `top`,
    /// whose bottom path cell is `cell`.
    pub(super) fn new(scoring: &Scoring, top: &Edge, first: usize, cell: Cell) -> Band {
        let gain = i64::from(scoring.max_gain());
        let gap = i64::from(scoring.gap_open().min(scoring.gap_extend()));
        let (mut by_column, mut by_row) = (i64::MIN, i64::MIN);
        let (mut reach_by_column, mut reach_by_row) = (Vec::new(), Vec::new());
        for c in first - 1..=cell.col {
            let kept = i64::from(top.h_at(c));
            by_column = by_column.max(kept - gain * c as i64);
            by_row = by_row.max(kept);
            reach_by_column.push(by_column);
            reach_by_row.push(by_row);
        }
        Band {
            top_row: top.row,
            first,
            cell,
            gain,
            gap,
            reach_by_column,
            reach_by_row,
        }
    }

    /// The columns of the path's cells in rows `x_a ..= x_b` (at most
    /// `first ..= cell.col`), or `None` if it has none there: it starts
    /// below them.
    pub(super) fn columns(&self, x_a: usize, x_b: usize) -> Option<(usize, usize)> {
        let (_, last) = self.allowed(x_b)?;
        let v = i64::from(self.cell.value);
        let may_start = self.gain * (self.cell.row - x_a) as i64 >= v - self.gain;
        let from = match x_a.checked_sub(1) {
            Some(above) if above >= self.top_row && !may_start => {
                self.allowed(above).map_or(self.first, |(from, _)| from)
            }
            _ => self.first,
        };
        Some((from.max(self.first), last.max(self.first)))
    }

    /// The first and last columns of row `x` whose cells pass the bound.
    fn allowed(&self, x: usize) -> Option<(usize, usize)> {
        let passes = |y: usize| self.passes(x, y);
        let from = self.first - 1;
        let first = (from..=self.cell.col).find(|&y| passes(y))?;
        let last = (first..=self.cell.col).rev().find(|&y| passes(y))?;
        Some((first, last))
    }

    fn passes(&self, x: usize, y: usize) -> bool {
        let k = y + 1 - self.first;
        let rows = (x - self.top_row) as i64;
        let reach = (self.reach_by_column[k] + self.gain * y as i64)
            .min(self.reach_by_row[k] + self.gain * rows);
        let (di, dj) = ((self.cell.row - x) as i64, (self.cell.col - y) as i64);
        let onward = self.gain * di.min(dj) - self.gap * (di - dj).abs();
        reach + onward >= i64::from(self.cell.value)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{path_cells, Cell, Limits, State, Tracer};
    use super::*;
    use crate::progress::Progress;
    use crate::sw::random::{mutated, random_dna};
    use crate::sw::seq;

    /// A path may start inside a strip to the left of every column the
    /// row above the strip allows: the strip then begins at the block's
    /// first column. Here the kept row 100 has `H` = 200 from column 41
    /// on, and a run of 64 matches goes from `(237, 1)` to the path's cell
    /// `(300, 64)`: row 200 allows columns from 41 on only, while the run
    /// crosses the strip of rows 201..=264 in columns 1..=28.
    #[test]
    fn a_start_inside_a_strip_opens_it_to_the_first_column() {
        let scoring = Scoring::match_mismatch(2, -1, 3, 1).unwrap();
        let top = Edge {
            row: 100,
            col0: 1,
            h: (1..=64).map(|c| if c > 40 { 200 } else { 0 }).collect(),
            f: vec![0; 64],
        };
        let cell = Cell {
            row: 300,
            col: 64,
            state: State::H,
            value: 128,
        };
        let band = Band::new(&scoring, &top, 1, cell);
        assert_eq!(band.allowed(200).map(|(from, _)| from), Some(41));
        assert_eq!(band.columns(201, 264).map(|(from, _)| from), Some(1));
        // Below row 237 no path can start and still reach the cell's
        // value: the strip of rows 265..=299 keeps the bound of row 264,
        // left of the run's cell (265, 29).
        let (from, _) = band.columns(265, 299).expect("the run crosses it");
        assert!((2..=29).contains(&from), "{from}");
    }

    /// On a related pair, the columns of every strip of a block hold the
    /// traced path's cells in its rows, and far fewer than the block's.
    #[test]
    fn strips_hold_the_path_in_a_narrow_band() {
        let scoring = Scoring::match_mismatch(2, -1, 3, 1).unwrap();
        let a = random_dna(3000, 91);
        let b = mutated(&a, 4, 0.1, 92);
        let (best, kept) =
            seq::align_with_checkpoints_in(1000, &a, &b, &scoring, &Progress::hidden());
        let alignment = crate::sw::alignment::trace(&a, &b, &scoring, best, &kept);
        // The path's first and last column on each row (1-based).
        let mut on_row = std::collections::BTreeMap::new();
        for (row, col) in path_cells(&alignment) {
            let span = on_row.entry(row).or_insert((col, col));
            *span = (span.0.min(col), span.1.max(col));
        }
        let (top, bottom_row) = (&kept.edges[0], kept.edges[1].row);
        let cell = Cell {
            row: bottom_row,
            col: on_row[&bottom_row].1,
            state: State::H,
            value: kept.edges[1].h_at(on_row[&bottom_row].1),
        };
        let tracer = Tracer::new(Limits::DEFAULT, &a, &b, &scoring);
        let lo = tracer.first_column(top, cell);
        let band = Band::new(&scoring, top, lo, cell);
        let mut widths = Vec::new();
        for x_a in (top.row + 1..cell.row).step_by(64) {
            let x_b = (x_a + 63).min(cell.row - 1);
            let (from, to) = band.columns(x_a, x_b).expect("the path crosses the block");
            for x in x_a..=x_b {
                let (first, last) = on_row[&x];
                assert!(
                    from <= first && last <= to,
                    "row {x}: path {first}..={last}, strip {from}..={to}"
                );
            }
            widths.push(to + 1 - from);
        }
        let block = cell.col + 1 - lo;
        assert!(
            widths.iter().all(|&w| 2 * w < block),
            "strips {widths:?} of a block {block} wide"
        );
    }
}
