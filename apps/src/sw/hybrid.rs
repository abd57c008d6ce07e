//! The MPI + rayon driver: the paper's MPI+OpenMP baseline (Fig. 25).
//!
//! Outer tile columns are dealt to ranks cyclically (tile column `j` on
//! rank `j mod ranks`, the column distribution the paper found best for
//! MPI+OpenMP). Every rank walks its outer tiles row by row. For each it
//! receives the left edge from the owner of the column to its left
//! (blocking `MPI_Recv`), computes the tile fork-join — rayon runs the
//! inner tiles of one anti-diagonal in parallel, and the next diagonal
//! starts only when all of them are done (the implicit barrier of an
//! OpenMP parallel loop) — and then sends its right edge on (blocking
//! `MPI_Send`, after the computation, with no overlap).
//!
//! Deadlock freedom: every rank handles its tiles in row-major order, and
//! a tile only waits for tiles earlier in that order. The earliest
//! unfinished tile has received its input already (its left neighbour is
//! earlier, so it is done, send included) and its right neighbour's owner
//! has finished every earlier tile, so it is waiting in exactly the
//! matching receive.

use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Source};
use rayon::prelude::*;

use crate::progress::Progress;
use crate::sw::edges::{pack_col, unpack_col};
use crate::sw::grid::Grid;
use crate::sw::tile::{tile_in_place, EdgeCol, EdgeRow, Origin};
use crate::sw::{Best, Scoring};

/// Best local alignment of `a` against `b`, computed by all ranks of
/// `world`, each with the threads of `pool`; every rank returns the same
/// result, equal to [`crate::sw::reference::align`]. Collective.
///
/// `progress` gets this rank's share of the cells as its length and
/// advances by each diagonal of inner tiles computed here
/// ([`Progress::hidden`] for none).
///
/// # Panics
/// If a tile dimension is 0, or a received edge has the wrong length.
#[allow(clippy::too_many_arguments)] // one call site; a struct would only rename them
pub fn align(
    world: &SimpleCommunicator,
    pool: &rayon::ThreadPool,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    outer: (usize, usize),
    inner: (usize, usize),
    progress: &Progress,
) -> Best {
    let grid = Grid::new(a.len(), b.len(), outer.0, outer.1);
    let ranks = world.size() as usize;
    let rank = world.rank() as usize;
    let tile_cols = grid.tile_cols_count();
    let my_cols: Vec<usize> = (rank..tile_cols).step_by(ranks).collect();
    progress.set_length(
        my_cols
            .iter()
            .map(|&j| (a.len() * grid.cols(j).len()) as u64)
            .sum(),
    );
    let mut tops: Vec<EdgeRow> = my_cols
        .iter()
        .map(|&j| EdgeRow::border(grid.cols(j).len()))
        .collect();
    // With one rank the right edge stays here for the next column.
    let mut carried: Option<EdgeCol> = None;
    let mut best = Best::default();
    for i in 0..grid.tile_rows_count() {
        let rows = grid.rows(i);
        for (k, &j) in my_cols.iter().enumerate() {
            let left = if j == 0 {
                EdgeCol::border(rows.len())
            } else if ranks == 1 {
                carried.take().expect("the previous column's edge")
            } else {
                let source = ((j - 1) % ranks) as i32;
                let (flat, _) = world.process_at_rank(source).receive_vec::<i32>();
                assert_eq!(
                    flat.len(),
                    1 + 2 * rows.len(),
                    "left edge of tile ({i}, {j})"
                );
                unpack_col(&flat)
            };
            let origin = Origin {
                row: rows.start,
                col: grid.cols(j).start,
            };
            let top = std::mem::take(&mut tops[k]);
            let (bottom, right, tile_best) =
                fork_join_tile(pool, a, b, scoring, origin, top, left, inner, progress);
            tops[k] = bottom;
            best = best.merge(tile_best);
            if j + 1 < tile_cols {
                if ranks == 1 {
                    carried = Some(right);
                } else {
                    let dest = ((j + 1) % ranks) as i32;
                    world.process_at_rank(dest).send(&pack_col(&right)[..]);
                }
            }
        }
    }
    let mine = [i64::from(best.score), best.row as i64, best.col as i64];
    let mut all = vec![0i64; 3 * ranks];
    world.all_gather_into(&mine[..], &mut all[..]);
    all.chunks_exact(3)
        .map(|c| Best {
            score: c[0] as i32,
            row: c[1] as usize,
            col: c[2] as usize,
        })
        .fold(Best::default(), Best::merge)
}

/// One inner tile's work on a diagonal: its coordinates and the edges it
/// updates in place.
struct Work {
    p: usize,
    q: usize,
    top: EdgeRow,
    left: EdgeCol,
}

/// Computes one outer tile, diagonal by diagonal of inner tiles, each
/// diagonal a rayon parallel loop. Returns its bottom row, its right
/// column (with the corner the next tile needs) and its best cell.
#[allow(clippy::too_many_arguments)] // one call site; a struct would only rename them
fn fork_join_tile(
    pool: &rayon::ThreadPool,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    origin: Origin,
    top: EdgeRow,
    left: EdgeCol,
    inner: (usize, usize),
    progress: &Progress,
) -> (EdgeRow, EdgeCol, Best) {
    let grid = Grid::new(left.len(), top.len(), inner.0, inner.1);
    // Edge travelling down inner column q / right along inner row p.
    let mut row_edges: Vec<EdgeRow> = (0..grid.tile_cols_count())
        .map(|q| EdgeRow {
            h: top.h[grid.cols(q)].to_vec(),
            f: top.f[grid.cols(q)].to_vec(),
        })
        .collect();
    let mut col_edges: Vec<EdgeCol> = (0..grid.tile_rows_count())
        .map(|p| {
            let rows = grid.rows(p);
            EdgeCol {
                corner: if p == 0 {
                    left.corner
                } else {
                    left.h[rows.start - 1]
                },
                h: left.h[rows.clone()].to_vec(),
                e: left.e[rows].to_vec(),
            }
        })
        .collect();
    let mut best = Best::zero_at(origin.row, origin.col);
    for d in 0..grid.diagonals() {
        let mut work: Vec<Work> = grid
            .diagonal(d)
            .map(|p| Work {
                p,
                q: d - p,
                top: std::mem::take(&mut row_edges[d - p]),
                left: std::mem::take(&mut col_edges[p]),
            })
            .collect();
        let diagonal_best = pool.install(|| {
            work.par_iter_mut()
                .map(|w| {
                    let (rows, cols) = (grid.rows(w.p), grid.cols(w.q));
                    let at = Origin {
                        row: origin.row + rows.start,
                        col: origin.col + cols.start,
                    };
                    tile_in_place(
                        &a[at.row..at.row + rows.len()],
                        &b[at.col..at.col + cols.len()],
                        scoring,
                        at,
                        &mut w.top,
                        &mut w.left,
                    )
                })
                .reduce(|| Best::zero_at(origin.row, origin.col), Best::merge)
        });
        best = best.merge(diagonal_best);
        progress.inc(
            work.iter()
                .map(|w| (grid.rows(w.p).len() * grid.cols(w.q).len()) as u64)
                .sum(),
        );
        for w in work {
            row_edges[w.q] = w.top;
            col_edges[w.p] = w.left;
        }
    }
    let mut bottom = EdgeRow::default();
    for edge in &row_edges {
        bottom.h.extend_from_slice(&edge.h);
        bottom.f.extend_from_slice(&edge.f);
    }
    let mut right = EdgeCol {
        corner: col_edges[0].corner,
        ..EdgeCol::default()
    };
    for edge in &col_edges {
        right.h.extend_from_slice(&edge.h);
        right.e.extend_from_slice(&edge.e);
    }
    (bottom, right, best)
}
