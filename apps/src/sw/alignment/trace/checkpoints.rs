//! The rows of `H` and `F` a score pass keeps for the traceback, and the
//! row type the traceback passes between its blocks.

use crate::sw::tile::EdgeRow;

/// Most bytes of checkpoint rows one score pass keeps (each row: `H` and
/// `F` of every column, 8 bytes a column).
pub const CHECKPOINT_BYTES: usize = 128 << 20;

/// `H` and `F` of one matrix row over a range of columns; 0 (a fresh
/// start) outside it.
#[derive(Clone, Debug)]
pub(super) struct Edge {
    pub(super) row: usize,
    /// Column of `h[0]`.
    pub(super) col0: usize,
    pub(super) h: Vec<i32>,
    pub(super) f: Vec<i32>,
}

impl Edge {
    /// Row 0, the top border.
    pub(super) fn border() -> Edge {
        Edge {
            row: 0,
            col0: 1,
            h: Vec::new(),
            f: Vec::new(),
        }
    }

    pub(super) fn h_at(&self, col: usize) -> i32 {
        Self::at(&self.h, self.col0, col)
    }

    pub(super) fn f_at(&self, col: usize) -> i32 {
        Self::at(&self.f, self.col0, col)
    }

    fn at(values: &[i32], col0: usize, col: usize) -> i32 {
        col.checked_sub(col0)
            .and_then(|k| values.get(k))
            .copied()
            .unwrap_or(0)
    }
}

/// Rows of `H` and `F` kept by a score pass for [`trace`](super::trace).
#[derive(Clone, Debug, Default)]
pub struct Checkpoints {
    pub(super) edges: Vec<Edge>,
    /// Keep the rows ending every `every`-th band.
    every: usize,
    bands: usize,
}

impl Checkpoints {
    /// No rows, and none kept when offered: [`trace`](super::trace) then recomputes what it needs from the top border
    /// (one more pass over the rows above the end cell).
    pub fn none() -> Checkpoints {
        Checkpoints::default()
    }

    /// Room for a pass over `len_a` rows of `len_b` columns in bands of
    /// `band` rows: as many band ends as [`CHECKPOINT_BYTES`] allows,
    /// evenly spaced.
    pub(crate) fn for_pass(len_a: usize, len_b: usize, band: usize) -> Checkpoints {
        let bands = len_a.div_ceil(band.max(1));
        Checkpoints {
            edges: Vec::new(),
            every: Checkpoints::spacing(len_b, bands),
            bands: 0,
        }
    }

    /// Of `bands` band ends over rows of `len_b` columns, a pass keeps
    /// every `spacing`-th (the `spacing`-th, the `2 * spacing`-th, ...):
    /// as many as [`CHECKPOINT_BYTES`] allows, evenly spaced.
    pub(crate) fn spacing(len_b: usize, bands: usize) -> usize {
        let room = (CHECKPOINT_BYTES / (8 * len_b.max(1))).max(1);
        bands.div_ceil(room).max(1)
    }

    /// Kept rows assembled elsewhere (a distributed pass): `(rows, edge)`
    /// pairs, where `rows` rows are done and `edge` holds the last one's
    /// `H` and `F` (clamped at 0) over every column, in increasing `rows`.
    ///
    /// # Panics
    /// If the rows are not increasing and inside the matrix's rows.
    pub(crate) fn from_rows(rows: impl IntoIterator<Item = (usize, EdgeRow)>) -> Checkpoints {
        let mut edges: Vec<Edge> = Vec::new();
        for (row, edge) in rows {
            assert!(
                row > edges.last().map_or(0, |e| e.row),
                "kept rows must increase from 1"
            );
            edges.push(Edge {
                row,
                col0: 1,
                h: edge.h,
                f: edge.f,
            });
        }
        Checkpoints {
            edges,
            every: 0,
            bands: 0,
        }
    }

    /// Offers the row that ends a band: `rows` rows are done and `top`
    /// holds the last one's `H` and `F` (clamped at 0).
    pub(crate) fn offer(&mut self, rows: usize, top: &EdgeRow) {
        self.bands += 1;
        if self.every > 0 && self.bands.is_multiple_of(self.every) {
            self.edges.push(Edge {
                row: rows,
                col0: 1,
                h: top.h.clone(),
                f: top.f.clone(),
            });
        }
    }

    /// The `k`-th kept row (`k < len()`, in increasing order): how many
    /// rows of A are done, then the last one's `H` and `F` (clamped at 0)
    /// over B's columns.
    ///
    /// # Panics
    /// If `k >= len()`.
    pub fn row(&self, k: usize) -> (usize, &[i32], &[i32]) {
        let edge = &self.edges[k];
        (edge.row, &edge.h, &edge.f)
    }

    /// Number of rows kept.
    pub fn len(&self) -> usize {
        self.edges.len()
    }

    /// `true` if no row is kept.
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }
}
