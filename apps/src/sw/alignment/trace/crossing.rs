//! Where the path probably crosses a kept row, found by a backward pass
//! over the block below it: what lets [`trace_on`](super::trace_on) trace
//! the segments between kept rows at the same time.
//!
//! The path reaches `cell` with value `v`. For each cell `(r, c)` of the
//! kept row `r` above it, a pass over the block from `cell` up to row `r`,
//! on the reversed sequences, gives the best score of a path from `(r, c)`
//! to `cell` ending in `cell`'s state. Adding the kept `H` (or `F`) of
//! `(r, c)` gives the best path to `cell` through `(r, c)`: it is `v` where
//! an optimal path to `cell` crosses the row, and less elsewhere.
//!
//! # The pass
//!
//! The SIMD kernel computes local scores: it starts afresh (`max(0, ..)`)
//! wherever that is better, while the pass wants scores anchored at
//! `cell`. The anchor's diagonal input is set to `K` instead of 0, and the
//! borders to `K` minus a gap to it, with `K` above any fresh start
//! (`gain * min(rows, cols)`) plus `loss = 2 * open + extend * (rows +
//! cols)`, the cost of the gaps that reach the anchor from any cell. When
//! the path must reach `cell` in state `F` (its last column a gap in B),
//! only the border of `cell`'s column holds values: the diagonal input and
//! the border along `cell`'s row stay 0.
//!
//! The kernel runs [`STRIP_ROWS`] rows at a time, each strip over the
//! columns that can hold the path in its rows ([`Band`]); outside them a
//! row holds 0, "no path". A value that does not come from the anchor, by
//! a fresh start or through a left-out column, stays below `K - loss`;
//! one that does is `K` plus a real anchored score. So no sum exceeds `v`,
//! and on the cells of optimal paths, whose paths to the anchor stay in
//! the band, the sum is exactly `v`.
//!
//! # Which cell, among equals
//!
//! Several cells of the row can lie on optimal paths to `cell`. The
//! traceback follows one of them, chosen cell by cell as it walks up,
//! which this pass cannot see; it takes the leftmost, in state `H` before
//! `F`, as its guess (a cell whose kept value is 0 does not count: a path
//! through it starts below the row). Where the guess is wrong, the segment
//! above is traced again from the cell the walk reached ([`super::join`]).

use super::band::Band;
use super::{Cell, Edge, State, Tracer};
use crate::sw::kernel::{self, TileIo, LANES};
use crate::sw::{Kernel, MAX_SCORE};

/// Rows per run of the kernel: each run covers only the columns that can
/// hold the path in its rows ([`Band`]).
const STRIP_ROWS: usize = 8 * LANES;

/// What the backward pass found on the kept row above a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Crossing {
    /// An optimal path to the cell crosses the row at this cell (state `H`
    /// or `F`, value the kept one, above 0): the guess.
    At(Cell),
    /// Every path of the cell's value starts below the row.
    Below,
    /// The block is too large for the anchored scores to fit the kernel's
    /// widest lanes: it is left to the sequential trace.
    TooLarge,
}

impl Tracer<'_> {
    /// Where an optimal path to `cell` crosses the row of `top` (see the
    /// module docs).
    ///
    /// # Panics
    /// If a cell of the row lies on a path better than `cell.value`: the
    /// value is not the matrix's.
    pub(super) fn crossing(&self, top: &Edge, cell: Cell) -> Crossing {
        if top.row == 0 {
            return Crossing::Below;
        }
        let lo = self.first_column(top, cell);
        let rows = cell.row - top.row;
        let cols = cell.col - lo;
        let open = i64::from(self.scoring.gap_open());
        let extend = i64::from(self.scoring.gap_extend());
        let gain = i64::from(self.scoring.max_gain());
        let loss = 2 * open + extend * (rows + cols) as i64;
        let k = gain * rows.min(cols) as i64 + loss + 1;
        if k + gain * rows.min(cols) as i64 > i64::from(MAX_SCORE) {
            return Crossing::TooLarge;
        }
        let k = k as i32;
        let (open, extend) = (open as i32, extend as i32);
        let gap = |len: usize| open + extend * (len as i32 - 1);
        let anchored_h = cell.state == State::H;
        // Reversed row `x` is row `cell.row - x`, reversed column `y`
        // column `cell.col - y`; both from 0, the anchor's.
        let a: Vec<u8> = self.a[top.row..cell.row].iter().rev().copied().collect();
        let b: Vec<u8> = self.b[lo..cell.col].iter().rev().copied().collect();
        // The last reversed row computed, over every reversed column: row
        // `cell.row` first, a gap in A from the anchor unless the path must
        // end with a gap in B (state F). 0 stands for "no path": `K` is
        // above any score that counts.
        let mut h: Vec<i32> = (0..=cols)
            .map(|len| match (len, anchored_h) {
                (0, true) => k,
                (len, true) => k - gap(len),
                (_, false) => 0,
            })
            .collect();
        let mut f = vec![0; cols + 1];
        let region = Band::new(self.scoring, top, lo, cell);
        let mut done = 0;
        while done < rows {
            let x = (done + 1)..=(done + STRIP_ROWS).min(rows);
            let (x_a, x_b) = (cell.row - x.end(), cell.row - x.start());
            let Some((from, to)) = region.columns(x_a, x_b) else {
                // The path starts below these rows.
                return Crossing::Below;
            };
            let y = (cell.col - to).max(1)..=(cell.col - from);
            let height = x.end() + 1 - x.start();
            // Column `cell.col` (reversed column 0): a gap in B up from it.
            let mut left_h: Vec<i32> = match *y.start() {
                1 => x.clone().map(|len| k - gap(len)).collect(),
                _ => vec![0; height],
            };
            let mut left_e = vec![0; height];
            if y.start() <= y.end() {
                let corner = h[y.start() - 1];
                kernel::run_tile(
                    Kernel::Auto,
                    self.scoring,
                    TileIo {
                        a: &a[x.start() - 1..*x.end()],
                        b: &b[y.start() - 1..*y.end()],
                        top_h: &mut h[y.clone()],
                        top_f: &mut f[y.clone()],
                        left_h: &mut left_h,
                        left_e: &mut left_e,
                        corner,
                        row0: 0,
                        col0: 0,
                    },
                );
            }
            // Outside the strip's columns nothing is known on its last row.
            for c in (1..*y.start()).chain(y.end() + 1..=cols) {
                (h[c], f[c]) = (0, 0);
            }
            h[0] = k - gap(*x.end());
            done = *x.end();
        }
        // From `(top.row, c)` to the cell: in state H (any first column),
        // or going on with a gap in B that is already open there.
        let after_h = |y: usize| match y {
            0 => -gap(rows),
            y => h[y] - k,
        };
        let after_f = |y: usize| match y {
            0 => -extend * rows as i32,
            y => f[y] - k + open - extend,
        };
        let mut found = None;
        for col in lo..=cell.col {
            let y = cell.col - col;
            for (state, kept, after) in [
                (State::H, top.h_at(col), after_h(y)),
                (State::F, top.f_at(col), after_f(y)),
            ] {
                let through = kept + after;
                assert!(
                    kept == 0 || through <= cell.value,
                    "a path through ({}, {col}) is better than {cell:?}",
                    top.row
                );
                if found.is_none() && kept > 0 && through == cell.value {
                    found = Some(Cell {
                        row: top.row,
                        col,
                        state,
                        value: kept,
                    });
                }
            }
        }
        found.map_or(Crossing::Below, Crossing::At)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::super::{end_cell, path_cells, Edge, Limits, Tracer};
    use super::*;
    use crate::progress::Progress;
    use crate::sw::random::{mutated, random_dna};
    use crate::sw::{reference, seq, Scoring};

    /// On a related pair the path crosses nearly every kept row: each
    /// crossing holds the plain DP's value there, and on this pair every
    /// guess is the cell the traced alignment (rescored to the best score)
    /// passes through.
    #[test]
    fn related_pair_is_cut_at_every_kept_row_it_crosses() {
        let scoring = Scoring::match_mismatch(2, -1, 3, 1).unwrap();
        let a = random_dna(400, 3);
        let b = mutated(&a, 4, 0.1, 4);
        let (best, kept) =
            seq::align_with_checkpoints_in(16, &a, &b, &scoring, &Progress::hidden());
        let tracer = Tracer::new(Limits::DEFAULT, &a, &b, &scoring);
        let end = end_cell(&a, &b, best).expect("a positive score");
        let mut crossings = Vec::new();
        tracer.segments(&kept.edges, end, |index, segment| {
            if index > 0 {
                crossings.push(segment.bottom);
            }
        });
        assert!(crossings.len() >= 20, "{} crossings", crossings.len());
        let alignment = super::super::trace(&a, &b, &scoring, best, &kept);
        alignment.check(&a, &b, &scoring).unwrap();
        let path: HashSet<(usize, usize)> = path_cells(&alignment).into_iter().collect();
        let full = reference::matrices(&a, &b, &scoring);
        for cell in crossings {
            let value = match cell.state {
                State::H => full.h[cell.row][cell.col],
                _ => full.f[cell.row][cell.col],
            };
            assert_eq!(value, cell.value, "{cell:?}");
            assert!(
                path.contains(&(cell.row, cell.col)),
                "{cell:?} off the path"
            );
        }
    }

    /// A block whose anchored scores cannot fit is left to the sequential
    /// trace instead of being misread.
    #[test]
    fn huge_penalties_leave_the_block_to_the_sequential_trace() {
        let scoring = Scoring::match_mismatch(1 << 19, -(1 << 20), 1 << 20, 1 << 20).unwrap();
        let a = random_dna(600, 5);
        let (best, kept) =
            seq::align_with_checkpoints_in(400, &a, &a, &scoring, &Progress::hidden());
        let tracer = Tracer::new(Limits::DEFAULT, &a, &a, &scoring);
        let end = end_cell(&a, &a, best).expect("a positive score");
        let top: &Edge = kept.edges.last().unwrap();
        assert!(end.row - top.row >= 150, "{end:?} below row {}", top.row);
        assert_eq!(tracer.crossing(top, end), Crossing::TooLarge);
        let alignment = super::super::trace(&a, &a, &scoring, best, &kept);
        assert_eq!(alignment.cigar(), "600=");
        let runtime = hc_runtime::Runtime::builder()
            .num_workers(2)
            .build()
            .unwrap();
        let as_tasks = super::super::trace_on(&runtime, &a, &a, &scoring, best, &kept);
        assert_eq!(as_tasks, alignment);
    }
}
