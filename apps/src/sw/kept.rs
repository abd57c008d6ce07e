//! The rows of `H` and `F` that the HCMPI driver keeps for the traceback
//! ([`Checkpoints`]), and how they reach rank 0, which traces.
//!
//! Every outer tile of an outer tile row cuts its rows alike, so the rows
//! that end an inner tile row ([`kept_rows`]) are whole once the pieces of
//! every rank's tiles are together:
//!
//! 1. Rank 0 copies each of its own inner tiles' pieces straight into the
//!    whole row, made at the row's first piece, as the tile finishes.
//! 2. Every other rank keeps a copy of each of its pieces, and after the
//!    pass sends them all to rank 0 in one `MPI_Igatherv`.
//! 3. Rank 0 copies the pieces it received into its rows and checks that
//!    the pieces of every kept row cover its columns exactly once.
//!
//! Rank 0 used to keep copies of its pieces too, send them to itself and
//! assemble the rows afterwards: on a 16-core node (1 rank of 16 workers,
//! 78 rows of 20000 columns kept), that added 36 ms to a 15 ms pass; in
//! place it adds about 1 ms.

use std::sync::{Mutex, PoisonError};

use hc_mpi::Hcmpi;
use hcmpi_dddf::DddfError;

use crate::sw::alignment::Checkpoints;
use crate::sw::grid::Grid;
use crate::sw::tile::EdgeRow;

/// The rank that traces, and so assembles the kept rows.
const ROOT: i32 = 0;

/// Where several ranks share the pass, kept rows are at least this many
/// rows apart (or a sixteenth of the matrix's rows, where that is fewer,
/// so that a small matrix keeps rows too). A row's pieces from other ranks
/// are copied, sent and copied again, while its segment of the traceback
/// only gets shorter. On a 16-core node with 2 ranks of 8 workers, whose
/// inner tiles are 256 rows high, keeping every one of their ends made
/// the pass about 1.5 times as long as with rows 1024 apart (38.6 ms
/// against 24.8 on related DNA 20000², 168.7 against 116.4 on random DNA
/// 60000², medians of 7 alternating runs; 512 apart: 29.6 and 132.9),
/// and the whole `--align` run 1.35 and 1.13 times as long.
///
/// On one rank every end is kept: the root copies each piece into its row
/// in place, and the more segments the traceback has, the sooner it ends
/// (1 rank of 16 workers, random DNA 60000²: 138.3 ms in all against
/// 164.7 with rows 1024 apart; related DNA 20000²: 23.9 against 24.1).
/// 1024 rows is the height of the inner tiles on 2 cores with AVX2,
/// where the traceback was tuned (with AVX-512 they are 2048, a multiple).
const ROWS_APART: usize = 1024;

/// The rows (counted as rows done, inside the matrix) that end an inner
/// tile row (bands of `inner_rows`, tapered where `taper_inner`), on
/// several `ranks` at least [`ROWS_APART`] apart (or a sixteenth of the
/// rows), and thinned further to every one of [`Checkpoints::spacing`]:
/// every outer tile of an outer tile row cuts its rows alike, so each
/// such row is whole across the ranks' tiles.
pub(crate) fn kept_rows(
    grid: &Grid,
    inner_rows: usize,
    taper_inner: bool,
    ranks: usize,
) -> Vec<usize> {
    let (n, m) = grid.size();
    if m == 0 {
        // No tile: nothing would make a piece of any row.
        return Vec::new();
    }
    let apart = if ranks > 1 {
        ROWS_APART.min(n / 16).max(1)
    } else {
        1
    };
    let mut last = 0;
    let ends: Vec<usize> = (0..grid.tile_rows_count())
        .flat_map(|i| {
            let rows = grid.rows(i);
            let inner = Grid::cut(rows.len(), 1, inner_rows, 1, taper_inner);
            (0..inner.tile_rows_count()).map(move |p| rows.start + inner.rows(p).end)
        })
        .filter(|&r| r < n)
        .filter(|&r| {
            let far = r - last >= apart;
            if far {
                last = r;
            }
            far
        })
        .collect();
    let every = Checkpoints::spacing(m, ends.len());
    ends.into_iter()
        .enumerate()
        .filter(|(k, _)| (k + 1) % every == 0)
        .map(|(_, r)| r)
        .collect()
}

/// What one rank keeps of the kept rows during the pass.
pub(crate) struct Keeper {
    /// The kept rows, sorted.
    rows: Vec<usize>,
    /// Columns of a whole row.
    len_b: usize,
    store: Store,
}

enum Store {
    /// On the root: each kept row, made at its first piece.
    Rows(Vec<Mutex<Option<Row>>>),
    /// On every other rank: copies of the pieces, to send.
    Pieces(Mutex<Vec<Piece>>),
}

/// A kept row on the root, and the columns its pieces covered so far.
#[derive(Debug)]
struct Row {
    edge: EdgeRow,
    /// `(col, len)` of each piece copied in.
    spans: Vec<(usize, usize)>,
}

/// A piece of a kept row: `H` and `F` of row `rows - 1` (0-based) from
/// column `col` on.
struct Piece {
    rows: usize,
    col: usize,
    edge: EdgeRow,
}

impl Keeper {
    /// A keeper of `rows` (sorted) of `len_b` columns on rank `rank`.
    pub(crate) fn new(rows: Vec<usize>, len_b: usize, rank: i32) -> Keeper {
        let store = if rank == ROOT {
            Store::Rows(rows.iter().map(|_| Mutex::new(None)).collect())
        } else {
            Store::Pieces(Mutex::new(Vec::new()))
        };
        Keeper { rows, len_b, store }
    }

    /// Keeps `edge`, the bottom of an inner tile ending `rows` rows down
    /// from column `col`, if that row is kept.
    ///
    /// # Panics
    /// On the root, if the piece runs past the row's last column.
    pub(crate) fn keep(&self, rows: usize, col: usize, edge: &EdgeRow) {
        let Ok(k) = self.rows.binary_search(&rows) else {
            return;
        };
        match &self.store {
            Store::Rows(whole) => {
                let mut slot = whole[k].lock().unwrap_or_else(PoisonError::into_inner);
                copy_into(&mut slot, self.len_b, rows, col, &edge.h, &edge.f);
            }
            Store::Pieces(pieces) => {
                pieces
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(Piece {
                        rows,
                        col,
                        edge: edge.clone(),
                    })
            }
        }
    }

    /// Collects the kept rows on the root: one `MPI_Gather` of the counts
    /// and one `MPI_Igatherv` of the other ranks' pieces, each as `rows,
    /// col, len` (two 32-bit halves each) and then `len` values of `H` and
    /// of `F`, 32 bits each as they are kept (widened to 64 bits, packing
    /// and sending them made the pass 8% slower: 69.5 ms against 64.6 at 2
    /// ranks on related DNA 20000², median of 11 alternating runs).
    /// Collective; the root returns the rows, every other rank none.
    ///
    /// # Errors
    /// An MPI failure.
    ///
    /// # Panics
    /// On the root, if the pieces of all ranks do not cover every kept row
    /// exactly once (the ranks cut the matrix differently), or a piece
    /// names a row that is not kept.
    pub(crate) fn gather(self, hc: &Hcmpi) -> Result<Checkpoints, DddfError> {
        let Keeper { rows, len_b, store } = self;
        let world = hc.world();
        let data = match &store {
            Store::Rows(_) => Vec::new(),
            Store::Pieces(pieces) => pack(&pieces.lock().unwrap_or_else(PoisonError::into_inner)),
        };
        let counts = world.gather(vec![data.len() as u64], ROOT)?;
        let counts: Vec<usize> = counts.into_iter().map(|c| c as usize).collect();
        let received = world.igatherv(data, &counts, ROOT)?.wait()?.0;
        let Store::Rows(whole) = store else {
            return Ok(Checkpoints::none());
        };
        let mut whole: Vec<Option<Row>> = whole
            .into_iter()
            .map(|slot| slot.into_inner().unwrap_or_else(PoisonError::into_inner))
            .collect();
        unpack_into(&rows, &mut whole, len_b, &received);
        Ok(assemble(&rows, whole, len_b))
    }
}

/// Copies a piece of row `rows` (`h`, `f` from column `col`) into its
/// whole row, made of `len_b` columns at the first piece.
fn copy_into(slot: &mut Option<Row>, len_b: usize, rows: usize, col: usize, h: &[i32], f: &[i32]) {
    let row = slot.get_or_insert_with(|| Row {
        edge: EdgeRow::border(len_b),
        spans: Vec::new(),
    });
    let end = col + h.len();
    assert!(
        end <= len_b,
        "a piece of kept row {rows} at column {col} overruns its {len_b} columns"
    );
    assert_eq!(
        f.len(),
        h.len(),
        "a piece of kept row {rows} has as many F as H"
    );
    row.edge.h[col..end].copy_from_slice(h);
    row.edge.f[col..end].copy_from_slice(f);
    row.spans.push((col, h.len()));
}

/// Copies the pieces of a message made by [`pack`] into the root's rows.
fn unpack_into(rows: &[usize], whole: &mut [Option<Row>], len_b: usize, mut data: &[i32]) {
    while let [r0, r1, c0, c1, l0, l1, tail @ ..] = data {
        let (r, col, len) = (
            whole_of([*r0, *r1]),
            whole_of([*c0, *c1]),
            whole_of([*l0, *l1]),
        );
        let k = rows
            .binary_search(&r)
            .unwrap_or_else(|_| panic!("a piece of row {r} was sent, but the row is not kept"));
        copy_into(
            &mut whole[k],
            len_b,
            r,
            col,
            &tail[..len],
            &tail[len..2 * len],
        );
        data = &tail[2 * len..];
    }
    assert!(
        data.is_empty(),
        "a message of kept rows ends inside a header"
    );
}

/// The root's rows as [`Checkpoints`], once every row's pieces cover its
/// `len_b` columns exactly once.
fn assemble(rows: &[usize], whole: Vec<Option<Row>>, len_b: usize) -> Checkpoints {
    Checkpoints::from_rows(rows.iter().zip(whole).map(|(&r, slot)| {
        let mut row = slot.unwrap_or_else(|| panic!("no rank kept a piece of row {r}"));
        row.spans.sort_unstable();
        let mut next = 0;
        for &(col, len) in &row.spans {
            assert_eq!(
                col, next,
                "the pieces of kept row {r} leave a gap or overlap at column {next}"
            );
            next = col + len;
        }
        assert_eq!(
            next, len_b,
            "the pieces of kept row {r} end at column {next}"
        );
        (r, row.edge)
    }))
}

/// The pieces as one message (see [`Keeper::gather`]).
fn pack(pieces: &[Piece]) -> Vec<i32> {
    let values: usize = pieces.iter().map(|p| 6 + 2 * p.edge.len()).sum();
    let mut data: Vec<i32> = Vec::with_capacity(values);
    for piece in pieces {
        for field in [piece.rows, piece.col, piece.edge.len()] {
            data.extend(halves(field));
        }
        data.extend_from_slice(&piece.edge.h);
        data.extend_from_slice(&piece.edge.f);
    }
    data
}

/// `x` as its high and low 32 bits, for a message of `i32`s.
fn halves(x: usize) -> [i32; 2] {
    let x = x as u64;
    [(x >> 32) as u32 as i32, x as u32 as i32]
}

/// The `usize` that [`halves`] split.
fn whole_of([high, low]: [i32; 2]) -> usize {
    (u64::from(high as u32) << 32 | u64::from(low as u32)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_make_the_whole() {
        for x in [
            0,
            1,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
            1 << 40,
            usize::MAX,
        ] {
            assert_eq!(whole_of(halves(x)), x);
        }
    }

    #[test]
    fn kept_rows_end_inner_tile_rows_inside_the_matrix() {
        // Outer rows 0..40, 40..80, 80..100, each cut into inner rows of
        // 16: they end at 16, 32, 40 (the outer tile's end) and so on;
        // the matrix's last row is no checkpoint.
        let grid = Grid::new(100, 10, 40, 5);
        assert_eq!(kept_rows(&grid, 16, false, 2), [16, 32, 40, 56, 72, 80, 96]);
        assert_eq!(
            kept_rows(&Grid::new(0, 10, 40, 5), 16, false, 2),
            [0usize; 0]
        );
    }

    #[test]
    fn kept_rows_end_tapered_inner_bands() {
        // One outer band (one rank's whole matrix): its inner bands taper.
        let grid = Grid::new(20_000, 100, 20_000, 100);
        let tapered = Grid::tapered(20_000, 1, 1024, 1);
        let ends: Vec<usize> = (0..tapered.tile_rows_count())
            .map(|p| tapered.rows(p).end)
            .filter(|&r| r < 20_000)
            .collect();
        let rows = kept_rows(&grid, 1024, true, 1);
        assert_eq!(rows[..3], [128, 320, 608]);
        assert!(rows.iter().all(|r| ends.contains(r)), "{rows:?}");
        assert_eq!(kept_rows(&grid, 1024, false, 1)[..2], [1024, 2048]);
    }

    #[test]
    fn kept_rows_are_far_enough_apart() {
        // 256-row inner tiles: every fourth end, 1024 rows apart, on
        // several ranks; every end on one.
        let grid = Grid::new(20_000, 10, 20_000, 10);
        let rows = kept_rows(&grid, 256, false, 2);
        assert_eq!(rows, (1..=19).map(|k| k * ROWS_APART).collect::<Vec<_>>());
        let rows = kept_rows(&grid, 256, false, 1);
        assert_eq!(rows, (1..=78).map(|k| k * 256).collect::<Vec<_>>());
        // A sixteenth of 400 rows is 25: every other end of 16-row
        // tiles.
        let grid = Grid::new(400, 10, 400, 10);
        assert_eq!(&kept_rows(&grid, 16, false, 4)[..3], [32, 64, 96]);
        // Uneven ends (outer tiles of 40 rows) are taken greedily.
        let grid = Grid::new(400, 10, 40, 10);
        assert_eq!(&kept_rows(&grid, 16, false, 3)[..4], [32, 72, 112, 152]);
    }

    #[test]
    fn kept_rows_fit_the_memory_cap() {
        // 8 Mi columns: 128 MiB holds two rows, so of the seven ends
        // every fourth is kept.
        let grid = Grid::new(100, 8 << 20, 40, 8 << 20);
        assert_eq!(Checkpoints::spacing(8 << 20, 7), 4);
        assert_eq!(kept_rows(&grid, 16, false, 1), [56]);
    }

    #[test]
    fn no_columns_keep_no_rows() {
        assert_eq!(
            kept_rows(&Grid::new(100, 0, 40, 5), 16, false, 1),
            [0usize; 0]
        );
        assert_eq!(
            kept_rows(&Grid::new(100, 0, 40, 5), 16, false, 3),
            [0usize; 0]
        );
    }

    /// `H` and `F` of columns `col..col + len`, told apart by their values.
    fn piece(col: usize, len: usize) -> EdgeRow {
        EdgeRow {
            h: (col..col + len).map(|c| c as i32).collect(),
            f: (col..col + len).map(|c| -(c as i32)).collect(),
        }
    }

    #[test]
    fn the_root_keeps_whole_rows_and_other_ranks_pieces() {
        let root = Keeper::new(vec![4, 8], 5, ROOT);
        root.keep(8, 2, &piece(2, 3));
        root.keep(6, 0, &piece(0, 5)); // not a kept row
        root.keep(8, 0, &piece(0, 2));
        let Store::Rows(rows) = root.store else {
            panic!("the root keeps rows");
        };
        let mut rows: Vec<Option<Row>> =
            rows.into_iter().map(|m| m.into_inner().unwrap()).collect();
        assert!(rows[0].is_none());
        assert_eq!(rows[1].as_ref().unwrap().edge, piece(0, 5));

        // Another rank's pieces of row 4 travel and complete it.
        let other = Keeper::new(vec![4, 8], 5, ROOT + 1);
        other.keep(4, 1, &piece(1, 4));
        other.keep(5, 0, &piece(0, 5)); // not a kept row
        other.keep(4, 0, &piece(0, 1));
        let Store::Pieces(pieces) = other.store else {
            panic!("another rank keeps pieces");
        };
        let data = pack(&pieces.into_inner().unwrap());
        assert_eq!(data.len(), 2 * 6 + 2 * 5);
        unpack_into(&[4, 8], &mut rows, 5, &data);
        let checkpoints = assemble(&[4, 8], rows, 5);
        assert_eq!(checkpoints.len(), 2);
        for k in 0..2 {
            let (row, h, f) = checkpoints.row(k);
            assert_eq!(
                (row, h, f),
                ([4, 8][k], &piece(0, 5).h[..], &piece(0, 5).f[..])
            );
        }
    }

    #[test]
    #[should_panic(expected = "leave a gap or overlap")]
    fn overlapping_pieces_are_refused() {
        let root = Keeper::new(vec![4], 5, ROOT);
        root.keep(4, 0, &piece(0, 3));
        root.keep(4, 2, &piece(2, 3));
        let Store::Rows(rows) = root.store else {
            panic!("the root keeps rows");
        };
        let rows = rows.into_iter().map(|m| m.into_inner().unwrap()).collect();
        assemble(&[4], rows, 5);
    }

    #[test]
    #[should_panic(expected = "end at column 4")]
    fn a_row_short_of_its_end_is_refused() {
        let mut rows = vec![None];
        unpack_into(
            &[4],
            &mut rows,
            5,
            &pack(&[Piece {
                rows: 4,
                col: 0,
                edge: piece(0, 4),
            }]),
        );
        assemble(&[4], rows, 5);
    }

    #[test]
    #[should_panic(expected = "no rank kept a piece of row 8")]
    fn a_row_without_pieces_is_refused() {
        let mut rows = vec![None, None];
        unpack_into(
            &[4, 8],
            &mut rows,
            2,
            &pack(&[Piece {
                rows: 4,
                col: 0,
                edge: piece(0, 2),
            }]),
        );
        assemble(&[4, 8], rows, 2);
    }

    #[test]
    #[should_panic(expected = "overruns")]
    fn a_piece_past_the_row_is_refused() {
        let root = Keeper::new(vec![4], 5, ROOT);
        root.keep(4, 3, &EdgeRow::border(3));
    }

    #[test]
    #[should_panic(expected = "as many F as H")]
    fn a_piece_with_fewer_f_than_h_is_refused() {
        let root = Keeper::new(vec![4], 5, ROOT);
        let mut edge = piece(0, 3);
        edge.f.pop();
        root.keep(4, 0, &edge);
    }
}
