//! The traceback by checkpointed blocks (see the module docs of
//! [`super`]).
//!
//! Coordinates here are 1-based matrix rows and columns: row 0 and column
//! 0 are the borders, where `H = 0`.

mod band;
mod checkpoints;
mod crossing;
#[cfg(test)]
mod fill_tests;
#[cfg(test)]
mod join_tests;

use std::hint::select_unpredictable;
use std::ops::RangeInclusive;
use std::sync::OnceLock;

use hc_runtime::Runtime;

use self::band::Band;
use self::checkpoints::Edge;
pub use self::checkpoints::{Checkpoints, CHECKPOINT_BYTES};
use self::crossing::Crossing;
use super::{Alignment, Op, Run};
use crate::sw::kernel::{self, TileIo, LANES};
use crate::sw::{Best, Kernel, Scoring, NEG_INF};

/// The cells an alignment's columns end at, first to last (1-based).
#[cfg(test)]
fn path_cells(alignment: &Alignment) -> Vec<(usize, usize)> {
    let (mut row, mut col) = (alignment.a.start, alignment.b.start);
    let mut cells = Vec::new();
    for run in &alignment.runs {
        for _ in 0..run.len {
            let (da, db) = run.op.consumes();
            (row, col) = (row + da, col + db);
            cells.push((row, col));
        }
    }
    cells
}

/// Fewest rows of a strip of a cut block for which the strip computes
/// only the columns that can hold the path ([`Band`]).
const MIN_BANDED_ROWS: usize = 4 * LANES;

/// Most bytes of checkpoint rows one block keeps when it is cut again.
const BLOCK_CHECKPOINT_BYTES: usize = 32 << 20;

/// What the traceback may spend, fixed except in tests.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    /// Blocks of at most this many cells, or of at most `min_rows` rows,
    /// are traced cell by cell; larger ones are cut again.
    pub direct_cells: usize,
    pub min_rows: usize,
    /// Checkpoint rows a cut block keeps (at most).
    pub cuts: usize,
}

impl Limits {
    /// 16 KiB of traceback bytes: larger blocks are cut, since the SIMD
    /// kernel computes them ten times faster than the cell-by-cell loop
    /// (cutting made the traceback of random DNA 60000² about 7× faster).
    pub const DEFAULT: Limits = Limits {
        direct_cells: 1 << 14,
        min_rows: 2 * LANES,
        cuts: 16,
    };
}

/// The path's state at a cell: `H` (any last column) or `F` (its last
/// column a letter of A against a gap); `E` only inside a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    H,
    E,
    F,
}

/// A cell on the path with its state and the path's value there (the
/// matrix's value, since the path is optimal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cell {
    row: usize,
    col: usize,
    state: State,
    value: i32,
}

/// Where the path leaves a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exit {
    /// Up into the block's top row, at this cell.
    Cross(Cell),
    /// It starts here (its first column is the pair at this cell).
    Start { row: usize, col: usize },
}

// Traceback byte: where H, E and F came from.
const FROM_ZERO: u8 = 0;
const FROM_DIAG: u8 = 1;
const FROM_E: u8 = 2;
const FROM_F: u8 = 3;
const H_SOURCE: u8 = 3;
const E_EXTENDS: u8 = 4;
const F_EXTENDS: u8 = 8;

/// The best local alignment whose score and end cell the score pass found:
/// `best` is [`crate::sw::seq::align`]'s result for `a`, `b` and `scoring`
/// (from any mode), `checkpoints` what that pass kept, or
/// [`Checkpoints::none`].
///
/// ```
/// use apps::sw::alignment::{trace, Checkpoints};
/// use apps::sw::alphabet::Alphabet;
/// use apps::sw::{seq, Scoring};
///
/// let a = Alphabet::Dna.encode(b"GATTACAGATTACA").unwrap();
/// let b = Alphabet::Dna.encode(b"CCGATTTACAGG").unwrap();
/// let scoring = Scoring::match_mismatch(2, -1, 3, 1).unwrap();
/// let best = seq::align(&a, &b, &scoring);
/// let alignment = trace(&a, &b, &scoring, best, &Checkpoints::none());
/// // GA-TTACAG over GATTTACAG: 8 matches * 2 - 3 (4=1X3= ties with it).
/// assert_eq!(alignment.cigar(), "2=1I6=");
/// assert_eq!(alignment.score, best.score);
/// alignment.check(&a, &b, &scoring).unwrap();
/// ```
///
/// # Panics
///
/// If `best` is not that result (no path of its score ends at its cell).
pub fn trace(
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    best: Best,
    checkpoints: &Checkpoints,
) -> Alignment {
    trace_with(Limits::DEFAULT, a, b, scoring, best, checkpoints)
}

/// [`trace`] with its segments traced as tasks of `runtime`, as many at
/// once as it has workers: the same alignment, found sooner on several
/// cores (see the module docs of [`super`]).
///
/// ```
/// use apps::sw::alignment::{trace, trace_on, Checkpoints};
/// use apps::sw::alphabet::Alphabet;
/// use apps::progress::Progress;
/// use apps::sw::{seq, Scoring};
///
/// let a = Alphabet::Dna.encode(&b"GATTACA".repeat(300)).unwrap();
/// let b = Alphabet::Dna.encode(&b"GATTTACA".repeat(260)).unwrap();
/// let scoring = Scoring::match_mismatch(2, -1, 3, 1).unwrap();
/// let (best, kept) = seq::align_with_checkpoints(&a, &b, &scoring, &Progress::hidden());
/// let runtime = hc_runtime::Runtime::builder().num_workers(2).build().unwrap();
/// let alignment = trace_on(&runtime, &a, &b, &scoring, best, &kept);
/// assert_eq!(alignment, trace(&a, &b, &scoring, best, &kept));
/// alignment.check(&a, &b, &scoring).unwrap();
/// ```
///
/// # Panics
///
/// As [`trace`].
pub fn trace_on(
    runtime: &Runtime,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    best: Best,
    checkpoints: &Checkpoints,
) -> Alignment {
    trace_on_with(Limits::DEFAULT, runtime, a, b, scoring, best, checkpoints).0
}

/// [`trace_on`] with `limits`, and how many segments it traced again.
pub(super) fn trace_on_with(
    limits: Limits,
    runtime: &Runtime,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    best: Best,
    checkpoints: &Checkpoints,
) -> (Alignment, usize) {
    if runtime.num_workers() == 1 {
        // Nothing would run beside the backward pass.
        return (trace_with(limits, a, b, scoring, best, checkpoints), 0);
    }
    let Some(end) = end_cell(a, b, best) else {
        return (Alignment::empty(), 0);
    };
    let kept = &checkpoints.edges;
    let slots: Vec<OnceLock<(Segment, Traced)>> =
        (0..=kept.len()).map(|_| OnceLock::new()).collect();
    let slots_ref = &slots;
    runtime.finish(|scope| {
        let tracer = Tracer::new(limits, a, b, scoring);
        tracer.segments(kept, end, |index, segment| {
            scope.spawn(move |_| {
                let traced = segment.trace(segment.bottom, kept, limits, a, b, scoring);
                assert!(
                    slots_ref[index].set((segment, traced)).is_ok(),
                    "segment {index} traced twice"
                );
            });
        });
    });
    let traced: Vec<(Segment, Traced)> =
        slots.into_iter().map_while(OnceLock::into_inner).collect();
    let mut again = 0;
    let alignment = join(&traced, end, |segment, from| {
        again += 1;
        segment.trace(from, kept, limits, a, b, scoring)
    });
    (alignment, again)
}

pub(super) fn trace_with(
    limits: Limits,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    best: Best,
    checkpoints: &Checkpoints,
) -> Alignment {
    let Some(end) = end_cell(a, b, best) else {
        return Alignment::empty();
    };
    let mut tracer = Tracer::new(limits, a, b, scoring);
    let exit = tracer.chain(&Edge::border(), &checkpoints.edges, end);
    let Exit::Start { row, col } = exit else {
        unreachable!("a path of positive value crossed the border: {exit:?}")
    };
    alignment_of(tracer.ops, (row, col), end)
}

/// The path's last cell, or `None` if the best score is 0.
fn end_cell(a: &[u8], b: &[u8], best: Best) -> Option<Cell> {
    if best.score <= 0 {
        return None;
    }
    assert!(
        best.row < a.len() && best.col < b.len(),
        "end cell ({}, {}) outside a {} x {} matrix",
        best.row,
        best.col,
        a.len(),
        b.len()
    );
    Some(Cell {
        row: best.row + 1,
        col: best.col + 1,
        state: State::H,
        value: best.score,
    })
}

/// The path from the segments traced from where the backward pass expected
/// them to start, the one ending at `end` first. Where the segment below
/// left its top row elsewhere (the backward pass took another of the
/// cells that tie there), the segment is traced again from there with
/// `retrace`: the path is the one [`trace`] follows.
fn join(
    traced: &[(Segment, Traced)],
    end: Cell,
    mut retrace: impl FnMut(&Segment, Cell) -> Traced,
) -> Alignment {
    let mut ops = Vec::new();
    let mut from = end;
    for (segment, speculated) in traced {
        let again;
        let segment_trace = if segment.bottom == from {
            speculated
        } else {
            again = retrace(segment, from);
            &again
        };
        ops.extend_from_slice(&segment_trace.ops);
        match segment_trace.exit {
            Exit::Start { row, col } => return alignment_of(ops, (row, col), end),
            Exit::Cross(cell) => from = cell,
        }
    }
    unreachable!("the last segment crossed {from:?}, above every kept row it traces")
}

/// The alignment of `ops` (last column first) from `start` to `end`.
fn alignment_of(mut ops: Vec<Op>, (row, col): (usize, usize), end: Cell) -> Alignment {
    ops.reverse();
    let mut runs: Vec<Run> = Vec::new();
    for op in ops {
        match runs.last_mut() {
            Some(run) if run.op == op => run.len += 1,
            _ => runs.push(Run { op, len: 1 }),
        }
    }
    Alignment {
        score: end.value,
        a: row - 1..end.row,
        b: col - 1..end.col,
        runs,
    }
}

/// The part of the path from one of its cells up to the next kept row, or
/// from the highest kept row it crosses to its start, to be traced on its
/// own.
#[derive(Clone, Copy, Debug)]
struct Segment {
    /// Where the backward pass put its bottom: the end cell, or the cell
    /// where the path crosses the kept row below.
    bottom: Cell,
    /// The kept rows it traces through: the first `above`, of which a
    /// segment that ends on a kept row takes only the last.
    above: usize,
    /// Whether it ends on the kept row `above - 1` (else it goes up to the
    /// start).
    crosses: bool,
}

/// What tracing a [`Segment`] gave.
#[derive(Debug)]
struct Traced {
    /// Its columns, last first.
    ops: Vec<Op>,
    exit: Exit,
}

impl Segment {
    /// Traces the segment from `from`, a cell on its bottom row.
    fn trace(
        &self,
        from: Cell,
        kept: &[Edge],
        limits: Limits,
        a: &[u8],
        b: &[u8],
        scoring: &Scoring,
    ) -> Traced {
        let mut tracer = Tracer::new(limits, a, b, scoring);
        let exit = match self.crosses {
            true => tracer.chain(&kept[self.above - 1], &[], from),
            false => tracer.chain(&Edge::border(), &kept[..self.above], from),
        };
        Traced {
            ops: tracer.ops,
            exit,
        }
    }
}

struct Tracer<'a> {
    a: &'a [u8],
    b: &'a [u8],
    scoring: &'a Scoring,
    limits: Limits,
    /// The path's columns, last first.
    ops: Vec<Op>,
    /// Scratch of the cell-by-cell blocks.
    dirs: Vec<u8>,
    h_row: Vec<i32>,
    f_row: Vec<i32>,
    /// Per column of a row: `H` from the diagonal, `H` without `E`, and
    /// `E`.
    d_row: Vec<i32>,
    no_e_row: Vec<i32>,
    e_row: Vec<i32>,
    /// Substitution scores of the current row's letter against the block's
    /// columns.
    scores: Vec<i32>,
}

impl<'a> Tracer<'a> {
    fn new(limits: Limits, a: &'a [u8], b: &'a [u8], scoring: &'a Scoring) -> Self {
        Tracer {
            a,
            b,
            scoring,
            limits,
            ops: Vec::new(),
            dirs: Vec::new(),
            h_row: Vec::new(),
            f_row: Vec::new(),
            d_row: Vec::new(),
            no_e_row: Vec::new(),
            e_row: Vec::new(),
            scores: Vec::new(),
        }
    }

    /// Cuts the path from `end` up into segments at its cells on the
    /// `kept` rows, found by [`Tracer::crossing`], and hands each to
    /// `segment` as soon as it is known, with its index (0 for the one
    /// ending at `end`).
    fn segments(&self, kept: &[Edge], end: Cell, mut segment: impl FnMut(usize, Segment)) {
        let mut bottom = end;
        for index in 0.. {
            let above = kept.partition_point(|edge| edge.row < bottom.row);
            let crossing = match above {
                0 => Crossing::Below,
                k => self.crossing(&kept[k - 1], bottom),
            };
            let crosses = matches!(crossing, Crossing::At(_));
            segment(
                index,
                Segment {
                    bottom,
                    above,
                    crosses,
                },
            );
            match crossing {
                Crossing::At(cell) => bottom = cell,
                Crossing::Below | Crossing::TooLarge => return,
            }
        }
    }
}

impl Tracer<'_> {
    /// Traces the path from `cell` up through the rows `inner` (sorted by
    /// row, all below `top`) until it starts or crosses into `top`.
    fn chain(&mut self, top: &Edge, inner: &[Edge], mut cell: Cell) -> Exit {
        loop {
            // The last kept row above the cell (a binary search: a pass
            // may keep hundreds of rows, and the path visits each).
            let above = match inner.partition_point(|edge| edge.row < cell.row) {
                0 => top,
                k => &inner[k - 1],
            };
            match self.block(above, cell) {
                Exit::Cross(next) if next.row > top.row => cell = next,
                exit => return exit,
            }
        }
    }

    /// The first column of the block under `top` that can hold a path
    /// reaching `cell` with its value (step 1 of the module docs).
    fn first_column(&self, top: &Edge, cell: Cell) -> usize {
        let gain = i64::from(self.scoring.max_gain());
        let gap = i64::from(self.scoring.gap_open().min(self.scoring.gap_extend()));
        let rows = (cell.row - top.row) as i64;
        let reachable = |c: usize| {
            let cols = (cell.col - c) as i64;
            let bound = gain * rows.min(cols) - gap * (cols - rows).max(0);
            i64::from(top.h_at(c)) + bound >= i64::from(cell.value)
        };
        let from = top.col0 - 1;
        let c = (from..=cell.col)
            .find(|&c| reachable(c))
            .unwrap_or_else(|| {
                panic!("no column of row {} can reach {cell:?}", top.row);
            });
        c.max(top.col0)
    }

    /// Traces the path from `cell` to the row of `top` or to its start.
    fn block(&mut self, top: &Edge, cell: Cell) -> Exit {
        let lo = self.first_column(top, cell);
        let (rows, cols) = (cell.row - top.row, cell.col + 1 - lo);
        if rows <= self.limits.min_rows || rows * cols <= self.limits.direct_cells {
            self.cell_by_cell(top, lo, cell)
        } else {
            self.cut(top, lo, cell)
        }
    }

    /// Step 2 for a large block: the kernel computes rows `top.row + 1 ..
    /// cell.row` strip by strip, over columns `lo ..= cell.col` or, for long
    /// strips, the band of them that can hold the path, keeping each
    /// strip's last row; then each sub-block is traced in turn.
    fn cut(&mut self, top: &Edge, lo: usize, cell: Cell) -> Exit {
        let rows = cell.row - top.row;
        let cols = cell.col + 1 - lo;
        let room = (BLOCK_CHECKPOINT_BYTES / (8 * cols)).clamp(1, self.limits.cuts);
        let band = rows.div_ceil(room + 1).next_multiple_of(LANES);
        // Finding a strip's band scans the block's columns a few times:
        // worth it for strips of many rows only (on random DNA 60000², 16-
        // row strips ran 8% slower with it, 64-row ones on related DNA
        // 20000² 18% faster).
        let region = (band >= MIN_BANDED_ROWS).then(|| Band::new(self.scoring, top, lo, cell));
        let mut inner: Vec<Edge> = Vec::new();
        let mut first = top.row + 1;
        // The rows from the last kept one to the cell's are the first
        // sub-block, traced from the kept row: no need to compute them here.
        while first + band <= cell.row {
            let last = first + band - 1;
            let above = inner.last().unwrap_or(top);
            let columns = match &region {
                Some(region) => region.columns(first, last),
                None => Some((lo, cell.col)),
            };
            let edge = match columns {
                Some((from, to)) => self.strip(above, first..=last, lo, from..=to),
                // The path starts below these rows: nothing to keep.
                None => Edge {
                    row: last,
                    col0: lo,
                    h: Vec::new(),
                    f: Vec::new(),
                },
            };
            inner.push(edge);
            first = last + 1;
        }
        if inner.is_empty() {
            // Too few rows to cut (only with test limits).
            return self.cell_by_cell(top, lo, cell);
        }
        self.chain(top, &inner, cell)
    }

    /// Rows `rows` over columns `cols` from the row `above`, with 0 (a
    /// fresh start) left of them: the last row, kept from column `lo` (0
    /// up to `cols`), so that the sub-blocks under it start at `lo`.
    fn strip(
        &self,
        above: &Edge,
        rows: RangeInclusive<usize>,
        lo: usize,
        cols: RangeInclusive<usize>,
    ) -> Edge {
        let (first, last) = (*rows.start(), *rows.end());
        let (from, to) = (*cols.start(), *cols.end());
        let mut h: Vec<i32> = (lo..from).map(|_| 0).collect();
        let mut f = h.clone();
        h.extend(cols.clone().map(|c| above.h_at(c)));
        f.extend(cols.map(|c| above.f_at(c)));
        let height = last + 1 - first;
        let (mut left_h, mut left_e) = (vec![0; height], vec![0; height]);
        kernel::run_tile(
            Kernel::Auto,
            self.scoring,
            TileIo {
                a: &self.a[first - 1..last],
                b: &self.b[from - 1..to],
                top_h: &mut h[from - lo..],
                top_f: &mut f[from - lo..],
                left_h: &mut left_h,
                left_e: &mut left_e,
                corner: above.h_at(from - 1),
                row0: first - 1,
                col0: from - 1,
            },
        );
        Edge {
            row: last,
            col0: lo,
            h,
            f,
        }
    }

    /// Steps 2 and 3 for a small block: every cell with its traceback byte.
    fn cell_by_cell(&mut self, top: &Edge, lo: usize, cell: Cell) -> Exit {
        let cols = cell.col + 1 - lo;
        self.fill(top, lo, cell);
        let value = match cell.state {
            State::H => self.h_row[cols - 1],
            State::F => self.f_row[cols - 1],
            State::E => unreachable!("paths enter a block in state H or F"),
        };
        assert_eq!(
            value, cell.value,
            "recomputed value at {cell:?} from row {} (columns from {lo})",
            top.row
        );
        self.walk(top, lo, cols, cell)
    }

    /// Computes the block under `top` from column `lo` to `cell`: its
    /// traceback bytes in `dirs`, its last row in `h_row` and `f_row`.
    fn fill(&mut self, top: &Edge, lo: usize, cell: Cell) {
        let (rows, cols) = (cell.row - top.row, cell.col + 1 - lo);
        let open = self.scoring.gap_open();
        let extend = self.scoring.gap_extend();
        self.dirs.clear();
        self.dirs.resize(rows * cols, 0);
        self.h_row.clear();
        self.h_row.extend((lo..=cell.col).map(|c| top.h_at(c)));
        self.f_row.clear();
        self.f_row.extend((lo..=cell.col).map(|c| top.f_at(c)));
        let b = &self.b[lo - 1..cell.col];
        let mut corner = top.h_at(lo - 1);
        for scratch in [&mut self.d_row, &mut self.no_e_row, &mut self.e_row] {
            scratch.clear();
            scratch.resize(cols, 0);
        }
        // Only E depends on the cell to the left, so each row takes three
        // passes: everything but E (no dependence along the row), then E
        // alone (a chain of one subtraction and one maximum per cell), then
        // H and the traceback byte. Which source wins at a cell is data, so
        // no pass branches on it.
        for (x, dirs) in self.dirs.chunks_exact_mut(cols).enumerate() {
            let letter = self.a[top.row + x];
            self.scores.clear();
            self.scores
                .extend(b.iter().map(|&code| self.scoring.score(letter, code)));
            // H above-left of the row's first cell: the corner, then the
            // fresh start left of the block.
            let mut diag = std::mem::replace(&mut corner, 0);
            let cells = dirs
                .iter_mut()
                .zip(&self.h_row)
                .zip(&mut self.f_row)
                .zip(&self.scores)
                .zip(self.d_row.iter_mut().zip(&mut self.no_e_row));
            for ((((dir, &h_up), f_up), &score), (d_out, no_e)) in cells {
                let (f_open, f_ext) = (h_up - open, *f_up - extend);
                let f = f_open.max(f_ext);
                let d = diag + score;
                diag = h_up;
                *dir = u8::from(f_ext > f_open) * F_EXTENDS;
                (*f_up, *d_out, *no_e) = (f, d, d.max(f).max(0));
            }
            // E of a cell is max(H - open, E - extend) of the cell to its
            // left, and that H is max(H', E) with H' its H without E. As
            // `extend <= open`, E - open never wins over E - extend, so
            // E = max(H' - open, E - extend): a chain through E alone.
            let (mut no_e_left, mut e) = (0, NEG_INF);
            for (e_out, &no_e) in self.e_row.iter_mut().zip(&self.no_e_row) {
                e = (no_e_left - open).max(e - extend);
                (*e_out, no_e_left) = (e, no_e);
            }
            let (mut h_left, mut e_left) = (0, NEG_INF);
            let cells = dirs
                .iter_mut()
                .zip(&mut self.h_row)
                .zip(&self.f_row)
                .zip(&self.d_row)
                .zip(self.no_e_row.iter().zip(&self.e_row));
            for ((((dir, h_out), &f), &d), (&no_e, &e)) in cells {
                let h = no_e.max(e);
                // Ties prefer a substitution, then F, then E.
                let gap = select_unpredictable(f == h, FROM_F, FROM_E);
                let source = select_unpredictable(d == h, FROM_DIAG, gap);
                let from = select_unpredictable(h == 0, FROM_ZERO, source);
                let e_extends = e_left - extend > h_left - open;
                *dir |= from | (u8::from(e_extends) * E_EXTENDS);
                (*h_out, h_left, e_left) = (h, h, e);
            }
        }
    }

    /// Step 3: follows the traceback bytes of the block from `cell`.
    fn walk(&mut self, top: &Edge, lo: usize, cols: usize, cell: Cell) -> Exit {
        let (mut x, mut y) = (cell.row - top.row - 1, cell.col - lo);
        let mut state = cell.state;
        loop {
            let dir = self.dirs[x * cols + y];
            let (row, col) = (top.row + 1 + x, lo + y);
            match state {
                State::H => match dir & H_SOURCE {
                    FROM_DIAG => {
                        let (ca, cb) = (self.a[row - 1], self.b[col - 1]);
                        self.ops
                            .push(if ca == cb { Op::Match } else { Op::Mismatch });
                        if x == 0 {
                            let value = top.h_at(col - 1);
                            return if value > 0 {
                                Exit::Cross(Cell {
                                    row: top.row,
                                    col: col - 1,
                                    state: State::H,
                                    value,
                                })
                            } else {
                                Exit::Start { row, col }
                            };
                        }
                        if y == 0 || self.dirs[(x - 1) * cols + y - 1] & H_SOURCE == FROM_ZERO {
                            return Exit::Start { row, col };
                        }
                        (x, y) = (x - 1, y - 1);
                    }
                    FROM_E => state = State::E,
                    FROM_F => state = State::F,
                    _ => unreachable!("the path reached a zero cell at ({row}, {col})"),
                },
                State::E => {
                    self.ops.push(Op::Insertion);
                    assert!(y > 0, "a gap of positive value opened left of column {lo}");
                    y -= 1;
                    if dir & E_EXTENDS == 0 {
                        state = State::H;
                    }
                }
                State::F => {
                    self.ops.push(Op::Deletion);
                    let extends = dir & F_EXTENDS != 0;
                    if x == 0 {
                        let (state, value) = if extends {
                            (State::F, top.f_at(col))
                        } else {
                            (State::H, top.h_at(col))
                        };
                        return Exit::Cross(Cell {
                            row: top.row,
                            col,
                            state,
                            value,
                        });
                    }
                    x -= 1;
                    if !extends {
                        state = State::H;
                    }
                }
            }
        }
    }
}
