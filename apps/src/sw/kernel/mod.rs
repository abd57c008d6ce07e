//! Inner loops shared by the tile kernel and the sequential kernel.
//!
//! Everything here works *in place* on one tile: the row above the tile
//! (`top_h`/`top_f`) is overwritten with the tile's bottom row, and the column
//! to its left (`left_h`/`left_e`) with its right column. Gap states leave
//! every engine clamped at 0 (`max(F, 0)`, `max(E, 0)`), the form the
//! saturating engine keeps; it changes no `H` (see [`striped`]). Engines:
//!
//! * [`striped`]: Farrar's striped layout on saturating 8- and 16-bit lanes
//!   (SSE4.1, AVX2, AVX-512BW), the fast path. It runs rows while their
//!   scores fit its lanes and hands the rest of the tile to wider lanes:
//!   8 bits, then 16, then 16 bits again relative to a base below the
//!   tile's scores (`striped::offset`, for scores past 65535 that span less
//!   than half of that within the tile), then the 32-bit strip engine.
//!   A tile of at least [`SPLIT_COLS`] columns whose 8-bit pass stops
//!   early (or cannot start on its boundary), for a scoring that fits 8
//!   bits, goes on in two halves side by side, each from 8 bits again.
//! * [`scalar`]: row by row, one cell at a time (the [`Kernel::Scalar`]
//!   fallback, and the `h mod L` rows left over by the strip engines).
//! * [`strip`]: 32-bit lanes, `L` rows at a time in a skewed ("wavefront
//!   within a strip") layout: lane `k` handles row `r + k` and, at step `t`,
//!   column `t - k`, so all lanes of a step are independent. Plain array
//!   code, left to the compiler's auto-vectorizer ([`Kernel::Portable`]).
//!   Exact for any score up to [`crate::sw::MAX_SCORE`].
//! * `avx2` (x86 only): the same layout with explicit AVX2 intrinsics, 16
//!   rows (two vectors of 8 `i32`) per strip ([`Kernel::Avx2Wide`], and the
//!   32-bit stage of the striped kernels when the CPU has AVX2).
//!
//! Every engine may also run a tile transposed, its columns as the
//! engine's rows, where that is cheaper for the striped engine
//! ([`orientation`]): the edges swap roles, and ties between equal scores
//! are still broken in the matrix's order ([`best_so_far`]).

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx2;
pub(crate) mod best_so_far;
mod orientation;
pub(crate) mod reduce;
mod scalar;
mod strip;
mod striped;

/// Bound on substitution types usable by every compiled engine.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use avx2::VecSubst as EngineSubst;
#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
use Subst as EngineSubst;

use self::best_so_far::{BestSoFar, Order};
pub(crate) use self::orientation::Orientation;
use self::orientation::MAX_TRANSPOSED_ROW;
use crate::sw::best::Best;
use crate::sw::scoring::{Scoring, Substitution, MATRIX_DIM};

/// Rows per strip in the portable strip engine.
pub(crate) const LANES: usize = 16;

/// Which implementation computes the cells. All give identical results:
/// the same scores, end cells and edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Kernel {
    /// The fastest one available on this CPU: [`Kernel::Striped`] with the
    /// widest instruction set it has, from 8-bit lanes; [`Kernel::Portable`]
    /// where it has none of them.
    #[default]
    Auto,
    /// Row-by-row scalar loop (simplest, slowest).
    Scalar,
    /// 32-bit strip engine left to the auto-vectorizer (SSE2 on x86-64).
    Portable,
    /// 32-bit strip engine with explicit AVX2 intrinsics; falls back to
    /// [`Kernel::Portable`] if the CPU (or target) lacks AVX2.
    Avx2Wide,
    /// The striped engine on `Isa`, starting with `Bits`-wide saturating
    /// lanes and moving to wider ones (16, then 32 bits) from the first row
    /// whose scores could overflow them. An instruction set the CPU lacks is
    /// replaced by the widest it has below it.
    Striped(Isa, Bits),
}

/// Instruction sets of [`Kernel::Striped`], narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Isa {
    /// 128-bit vectors (SSE4.1).
    Sse41,
    /// 256-bit vectors (AVX2).
    Avx2,
    /// 512-bit vectors (AVX-512F and AVX-512BW).
    Avx512,
}

/// Lane widths [`Kernel::Striped`] starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bits {
    /// 8-bit lanes first: twice the lanes while every score is below ~250.
    Eight,
    /// 16-bit lanes first.
    Sixteen,
}

impl Isa {
    const ALL: [Isa; 3] = [Isa::Sse41, Isa::Avx2, Isa::Avx512];

    /// Whether this CPU has the instruction set.
    pub fn available(self) -> bool {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            self.tokens().is_some()
        }
        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
        {
            false
        }
    }

    /// The widest instruction set at most `self` that this CPU has.
    fn best_up_to(self) -> Option<Isa> {
        Isa::ALL
            .into_iter()
            .rev()
            .find(|&isa| isa <= self && isa.available())
    }

    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    fn tokens(self) -> Option<striped::x86::Tokens> {
        use striped::x86::{Avx2, Avx512, Sse41, Tokens};
        match self {
            Isa::Sse41 => Sse41::detect().map(Tokens::Sse41),
            Isa::Avx2 => Avx2::detect().map(Tokens::Avx2),
            Isa::Avx512 => Avx512::detect().map(Tokens::Avx512),
        }
    }
}

impl Kernel {
    /// Whether AVX2 is usable on this machine.
    pub fn avx2_available() -> bool {
        Isa::Avx2.available()
    }

    /// The kernel that will actually run for this request.
    pub fn resolve(self) -> Kernel {
        match self {
            Kernel::Auto => Kernel::Striped(Isa::Avx512, Bits::Eight).resolve(),
            Kernel::Striped(isa, bits) => match isa.best_up_to() {
                Some(isa) => Kernel::Striped(isa, bits),
                None => Kernel::Portable,
            },
            Kernel::Avx2Wide if !Kernel::avx2_available() => Kernel::Portable,
            k => k,
        }
    }

    /// Every kernel that runs as itself on this machine (each one's
    /// [`Kernel::resolve`] is itself), [`Kernel::Auto`] excluded.
    pub fn available() -> Vec<Kernel> {
        let mut all = vec![Kernel::Scalar, Kernel::Portable, Kernel::Avx2Wide];
        for isa in Isa::ALL {
            all.extend([
                Kernel::Striped(isa, Bits::Eight),
                Kernel::Striped(isa, Bits::Sixteen),
            ]);
        }
        all.retain(|k| k.resolve() == *k);
        all
    }
}

/// Gap penalties (positive).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gaps {
    pub open: i32,
    pub extend: i32,
}

impl Gaps {
    fn of(scoring: &Scoring) -> Gaps {
        Gaps {
            open: scoring.gap_open(),
            extend: scoring.gap_extend(),
        }
    }
}

/// Substitution scores as seen by the inner loops. `key` is computed once per
/// row of A; `score` once per cell.
pub(crate) trait Subst: Copy {
    fn key(self, a: u8) -> i32;
    fn score(self, key: i32, b: u8) -> i32;
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct MatchMismatch {
    matched: i32,
    mismatched: i32,
}

impl Subst for MatchMismatch {
    #[inline(always)]
    fn key(self, a: u8) -> i32 {
        i32::from(a)
    }
    #[inline(always)]
    fn score(self, key: i32, b: u8) -> i32 {
        if key == i32::from(b) {
            self.matched
        } else {
            self.mismatched
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Matrix<'a> {
    table: &'a [i32; MATRIX_DIM * MATRIX_DIM],
}

impl Subst for Matrix<'_> {
    #[inline(always)]
    fn key(self, a: u8) -> i32 {
        i32::from(a & 31) << 5
    }
    #[inline(always)]
    fn score(self, key: i32, b: u8) -> i32 {
        // The mask is a no-op for valid codes (< 32) and removes the bounds
        // check, which lets the loop vectorize.
        self.table[((key | i32::from(b & 31)) & 1023) as usize]
    }
}

/// In-place state of one tile (see the module docs).
#[derive(Debug)]
pub(crate) struct TileIo<'a> {
    pub a: &'a [u8],
    pub b: &'a [u8],
    pub top_h: &'a mut [i32],
    pub top_f: &'a mut [i32],
    pub left_h: &'a mut [i32],
    pub left_e: &'a mut [i32],
    /// `H` of the cell above `left_h[0]` (diagonal neighbour of the tile's
    /// first cell).
    pub corner: i32,
    /// Global coordinates of the tile's first cell.
    pub row0: usize,
    pub col0: usize,
}

/// Computes the tile in place and returns its best cell (global
/// coordinates; `Best::zero_at(row0, col0)` if no cell is positive). The
/// caller has validated lengths, codes and overflow bounds.
///
/// Each band of at most [`MAX_TRANSPOSED_ROW`] rows runs the way
/// [`orientation::choose`] finds cheaper for it.
pub(crate) fn run_tile(kernel: Kernel, scoring: &Scoring, io: TileIo<'_>) -> Best {
    let gaps = Gaps::of(scoring);
    let rows = io.a.len();
    if rows <= MAX_TRANSPOSED_ROW {
        return run_band(kernel, scoring, io, gaps);
    }
    let height = band_height(rows);
    let TileIo {
        a,
        b,
        top_h,
        top_f,
        left_h,
        left_e,
        mut corner,
        row0,
        col0,
    } = io;
    let mut best = Best::zero_at(row0, col0);
    let left = left_h.chunks_mut(height).zip(left_e.chunks_mut(height));
    for (k, (a, (left_h, left_e))) in a.chunks(height).zip(left).enumerate() {
        // The `H` above-left of the next band, before this band's right
        // column overwrites it.
        let corner_of_next = left_h[a.len() - 1];
        let band = TileIo {
            a,
            b,
            top_h: &mut *top_h,
            top_f: &mut *top_f,
            left_h,
            left_e,
            corner,
            row0: row0 + k * height,
            col0,
        };
        best = best.merge(run_band(kernel, scoring, band, gaps));
        corner = corner_of_next;
    }
    best
}

/// The height of [`run_tile`]'s bands of a tile of `rows` rows, more than
/// [`MAX_TRANSPOSED_ROW`]: equal heights of at most that, whole numbers of
/// 64 rows but the last.
fn band_height(rows: usize) -> usize {
    rows.div_ceil(rows.div_ceil(MAX_TRANSPOSED_ROW))
        .next_multiple_of(64)
}

/// One band of [`run_tile`].
fn run_band(kernel: Kernel, scoring: &Scoring, io: TileIo<'_>, gaps: Gaps) -> Best {
    let way = orientation::choose(&io, gaps);
    run_oriented(kernel, scoring, io, way, SPLIT_COLS)
}

/// [`run_tile`] on one band, the way `way` says, with tiles from `split`
/// columns split in halves where their 8-bit pass stops early (see
/// [`SPLIT_COLS`]; other values in tests).
pub(crate) fn run_oriented(
    kernel: Kernel,
    scoring: &Scoring,
    io: TileIo<'_>,
    way: Orientation,
    split: usize,
) -> Best {
    match way {
        Orientation::Rows => run_split(kernel, scoring, io, Order::Rows, split).best,
        Orientation::Columns => {
            let scoring = scoring.transposed();
            let found = run_split(kernel, &scoring, io.transposed(), Order::Columns, split);
            Best {
                score: found.best.score,
                row: found.best.col,
                col: found.best.row,
            }
        }
    }
}

/// Columns from which a tile whose 8-bit pass stops early (or cannot start
/// on its boundary) goes on in two halves, where the scoring fits 8-bit
/// lanes (see [`run_with`]).
///
/// While every score fits 8-bit lanes a wide tile costs less per cell: a
/// row of the striped engine pays a fixed cost (the edges, the gaps it
/// carries across lanes; in these measurements also Farrar's lazy `E`
/// loop, which it no longer runs) besides its segments. On random
/// proteins (20000², BLOSUM62 11/1, one worker) tiles of 1024 x 5056
/// ran 1.27x faster than tiles of 1024 x 2528. Once scores outgrow 8 bits narrower was faster, by 5% on
/// related DNA and 14% on related proteins: more of the tile stays within
/// 8 bits. Split in halves there, the wide tiles ran within 1% of the
/// narrow ones. The sequential pass, whose column blocks of about 4096
/// columns are this wide on some lengths (one block of 5000; 5024 and
/// 4976 for 10000), ran 6% faster on related DNA 10000² and 5% on related
/// proteins 5000². Halves narrower than about 2000 columns cost more than
/// they keep in 8 bits: splitting from 2048 (1024) columns made the
/// sequential pass on related DNA 20000² 16% (65%) slower.
pub(crate) const SPLIT_COLS: usize = 4096;

/// The tile on `kernel` in the engines' coordinates, ties broken in
/// `order`.
fn run_split(
    kernel: Kernel,
    scoring: &Scoring,
    io: TileIo<'_>,
    order: Order,
    split: usize,
) -> BestSoFar {
    let gaps = Gaps::of(scoring);
    match scoring.substitution() {
        Substitution::MatchMismatch {
            matched,
            mismatched,
        } => {
            let s = MatchMismatch {
                matched: *matched,
                mismatched: *mismatched,
            };
            run_with(kernel, scoring, s, gaps, io, order, split)
        }
        Substitution::Matrix(m) => run_with(
            kernel,
            scoring,
            Matrix { table: m.table() },
            gaps,
            io,
            order,
            split,
        ),
    }
}

/// Computes the tile on `kernel`. On a tile at least `split` columns
/// wide, a striped kernel from 8-bit lanes, for a scoring that fits them,
/// whose 8-bit pass stops before the last row (or cannot start, its
/// boundary being too high) goes on with the rows left in two halves side
/// by side, each from 8-bit lanes again (see [`SPLIT_COLS`]): the left
/// half first, whose right column is the right half's left edge.
fn run_with<S: EngineSubst>(
    kernel: Kernel,
    scoring: &Scoring,
    s: S,
    gaps: Gaps,
    mut io: TileIo<'_>,
    order: Order,
    split: usize,
) -> BestSoFar {
    let mut best = BestSoFar::new(Best::zero_at(io.row0, io.col0), order);
    let mut narrow = (0, io.corner);
    let wide = match kernel.resolve() {
        Kernel::Scalar => None,
        Kernel::Portable => Some(false),
        Kernel::Avx2Wide => Some(true),
        Kernel::Striped(isa, bits) => {
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            if let Some(tokens) = isa.tokens() {
                // One table for every width: the codes of all the rows are
                // a superset of those of the rows a wider pass resumes at.
                let scores = striped::Scores::new(scoring, io.a, io.b);
                if bits == Bits::Eight {
                    // An explicit kernel runs as asked (the tests compare
                    // every one); `Auto` picks the 8-bit lanes by width.
                    let eight = match kernel {
                        Kernel::Auto => striped::x86::eight_bit_tokens(tokens, io.b.len()),
                        _ => tokens,
                    };
                    narrow = striped::x86::run(
                        eight,
                        Bits::Eight,
                        &scores,
                        gaps,
                        &mut io,
                        narrow,
                        &mut best,
                    );
                    let stopped_early = narrow.0 < io.a.len();
                    if stopped_early
                        && io.b.len() >= split.max(2)
                        && striped::x86::eight_bits_fit(&scores, gaps)
                    {
                        let halves = in_halves(kernel, scoring, s, io, narrow, order, split);
                        best.offer(halves.best);
                        return best;
                    }
                }
                narrow = striped::x86::run(
                    tokens,
                    Bits::Sixteen,
                    &scores,
                    gaps,
                    &mut io,
                    narrow,
                    &mut best,
                );
                // Scores past 16 bits, relative to a base of the tile.
                narrow = striped::offset::run(tokens, &scores, gaps, &mut io, narrow, &mut best);
            }
            #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
            let _ = (isa, bits, split);
            Some(Kernel::avx2_available())
        }
        Kernel::Auto => unreachable!("resolve() never returns Auto"),
    };
    let (start, corner) = narrow;
    let mut rest = TileIo {
        a: &io.a[start..],
        b: io.b,
        top_h: &mut *io.top_h,
        top_f: &mut *io.top_f,
        left_h: &mut io.left_h[start..],
        left_e: &mut io.left_e[start..],
        corner,
        row0: io.row0 + start,
        col0: io.col0,
    };
    let (done, corner) = match wide {
        None => (0, corner),
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        Some(true) => match avx2::Avx2::detect() {
            // SAFETY: the token `t` exists only because
            // `is_x86_feature_detected!("avx2")` returned true, and AVX2
            // support is the sole precondition of `strips_avx2`.
            Some(t) => unsafe { avx2::strips_avx2(t, s, gaps, &mut rest, &mut best) },
            None => strip::strips::<LANES, S>(s, gaps, &mut rest, &mut best),
        },
        Some(_) => strip::strips::<LANES, S>(s, gaps, &mut rest, &mut best),
    };
    // Rows not covered by full strips (and everything for `Scalar`).
    scalar::rows(
        s,
        gaps,
        &rest.a[done..],
        rest.b,
        rest.top_h,
        rest.top_f,
        &mut rest.left_h[done..],
        &mut rest.left_e[done..],
        corner,
        rest.row0 + done,
        rest.col0,
        &mut best,
    );
    // The 32-bit engines keep gap states below 0; edges leave clamped.
    // Rows the striped engine finished left theirs clamped already, and
    // when it finished them all, the bottom row too: then there is nothing
    // to do (a pass over both edges cost about 1% of a 1024 x 2528 tile).
    if start < io.a.len() {
        for g in io.top_f.iter_mut() {
            *g = (*g).max(0);
        }
        for g in &mut io.left_e[start..] {
            *g = (*g).max(0);
        }
    }
    best
}

/// The rows `start..` of `io` (`start` and the corner above it as the
/// 8-bit pass left them) as two tiles side by side, each on `kernel` from
/// its first row: the left one's right column, written into the left
/// edge, is the right one's left edge. Each reports its own best cell, so
/// their bests merge under `order`, whatever order they ran in.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn in_halves<S: EngineSubst>(
    kernel: Kernel,
    scoring: &Scoring,
    s: S,
    io: TileIo<'_>,
    (start, corner): (usize, i32),
    order: Order,
    split: usize,
) -> BestSoFar {
    let gaps = Gaps::of(scoring);
    let w = io.b.len();
    // Whole 64-lane vectors on the left, where there are any.
    let cut = match w / 2 / 64 * 64 {
        0 => w / 2,
        cut => cut,
    };
    #[cfg(test)]
    tests::SPLITS.with_borrow_mut(|splits| splits.push((w, start)));
    let (b_left, b_right) = io.b.split_at(cut);
    let (top_h_left, top_h_right) = io.top_h.split_at_mut(cut);
    let (top_f_left, top_f_right) = io.top_f.split_at_mut(cut);
    // The `H` above the right half's first row, before the left half
    // overwrites the row above with its bottom row.
    let corner_right = top_h_left[cut - 1];
    let rows = &io.a[start..];
    let row0 = io.row0 + start;
    let left = TileIo {
        a: rows,
        b: b_left,
        top_h: top_h_left,
        top_f: top_f_left,
        left_h: &mut io.left_h[start..],
        left_e: &mut io.left_e[start..],
        corner,
        row0,
        col0: io.col0,
    };
    let mut best = run_with(kernel, scoring, s, gaps, left, order, split);
    let right = TileIo {
        a: rows,
        b: b_right,
        top_h: top_h_right,
        top_f: top_f_right,
        left_h: &mut io.left_h[start..],
        left_e: &mut io.left_e[start..],
        corner: corner_right,
        row0,
        col0: io.col0 + cut,
    };
    best.offer(run_with(kernel, scoring, s, gaps, right, order, split).best);
    best
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::sw::random::{mutated, random_codes, random_dna, random_protein, SplitMix64};
    use crate::sw::scoring::SubstMatrix;
    use crate::sw::NEG_INF;
    use std::cell::RefCell;

    thread_local! {
        /// The width and first row of every split on this thread.
        pub(in crate::sw::kernel) static SPLITS: RefCell<Vec<(usize, usize)>> =
            const { RefCell::new(Vec::new()) };
    }

    /// One tile on `kernel` with the split at `split` columns: its bottom
    /// row, right column and best cell.
    fn run(
        kernel: Kernel,
        scoring: &Scoring,
        (a, b): (&[u8], &[u8]),
        edges: &[Vec<i32>; 4],
        corner: i32,
        split: usize,
    ) -> ([Vec<i32>; 4], Best) {
        run_way(
            kernel,
            scoring,
            (a, b),
            edges,
            corner,
            Orientation::Rows,
            split,
        )
    }

    /// [`run`] the way `way` says.
    fn run_way(
        kernel: Kernel,
        scoring: &Scoring,
        (a, b): (&[u8], &[u8]),
        edges: &[Vec<i32>; 4],
        corner: i32,
        way: Orientation,
        split: usize,
    ) -> ([Vec<i32>; 4], Best) {
        on_tile((a, b), edges, corner, |io| {
            run_oriented(kernel, scoring, io, way, split)
        })
    }

    /// `f` on the tile of `a` and `b` at row 7, column 11, with a copy of
    /// `edges` (top `H`, `F`, left `H`, `E`): the edges as `f` left them,
    /// and what it returned.
    fn on_tile<R>(
        (a, b): (&[u8], &[u8]),
        edges: &[Vec<i32>; 4],
        corner: i32,
        f: impl FnOnce(TileIo<'_>) -> R,
    ) -> ([Vec<i32>; 4], R) {
        let mut out = edges.clone();
        let [top_h, top_f, left_h, left_e] = &mut out;
        let io = TileIo {
            a,
            b,
            top_h,
            top_f,
            left_h,
            left_e,
            corner,
            row0: 7,
            col0: 11,
        };
        let result = f(io);
        (out, result)
    }

    /// Transposed tiles on every kernel, and on `Auto`: the same edges and
    /// best cell as the scalar kernel on the tile as it is. The inputs:
    /// related sequences, whose scores outgrow 8 bits part-way; sequences
    /// of two letters, whose best score many cells reach (often enough
    /// that breaking ties in the engines' own order would change the cell);
    /// free gaps; a substitution matrix that is not symmetric; edges low
    /// enough for 8 bits and beyond them.
    #[test]
    fn transposed_tiles_equal_the_scalar_kernel() {
        let mut kernels = Kernel::available();
        kernels.push(Kernel::Auto);
        let asymmetric = SubstMatrix::from_rows(
            "asymmetric",
            &[
                [3, -2, -1, 0],
                [-1, 2, -3, -1],
                [1, -2, 4, -2],
                [-3, 0, -1, 1],
            ],
        )
        .unwrap();
        let schemes = [
            Scoring::dna_default(),
            Scoring::match_mismatch(5, -4, 10, 1).unwrap(),
            Scoring::blosum62(11, 1).unwrap(),
            Scoring::new(Substitution::Matrix(asymmetric), 4, 1).unwrap(),
            Scoring::match_mismatch(1, -1, 0, 0).unwrap(),
        ];
        let mut rng = SplitMix64::new(17);
        let mut ties_decided = 0;
        for case in 0..100 {
            let scoring = &schemes[case % schemes.len()];
            let crossed = case % 3 == 0 && case % schemes.len() != 2;
            let (a, b) = if crossed {
                // Long motifs' scores outgrow 8 bits before the tie.
                crossed_motifs(&mut rng, case % 2 == 0)
            } else {
                let (h, w) = (1 + rng.below(120) as usize, 1 + rng.below(300) as usize);
                let letters = if case % schemes.len() == 2 { 20 } else { 4 };
                let a = random_codes(h, letters, rng.next_u64());
                // B like A where they overlap: scores climb along the
                // diagonal.
                let b = mutated(
                    &[a.clone(), a.clone(), a.clone()].concat(),
                    letters,
                    0.1,
                    case as u64,
                );
                let w = w.min(b.len());
                (a, b[..w].to_vec())
            };
            let (h, w, b) = (a.len(), b.len(), &b[..]);
            let high = match (crossed, case % 4) {
                (true, _) => 1,
                (_, 0) => 400,
                _ => 40,
            };
            // High edges of a small spread: passes relative to a base.
            let base = if !crossed && case % 5 == 1 { 1000 } else { 0 };
            let mut value =
                |n: usize| -> Vec<i32> { (0..n).map(|_| base + rng.below(high) as i32).collect() };
            let mut edges = [value(w), value(w), value(h), value(h)];
            if case % 7 == 3 {
                // No gap enters: the matrix's border.
                edges[1].fill(NEG_INF);
                edges[3].fill(NEG_INF);
            }
            let corner = base + rng.below(high) as i32;
            let (want, want_best) =
                run(Kernel::Scalar, scoring, (&a, b), &edges, corner, usize::MAX);
            for &kernel in &kernels {
                for split in [16, SPLIT_COLS] {
                    let columns = Orientation::Columns;
                    let (got, best) =
                        run_way(kernel, scoring, (&a, b), &edges, corner, columns, split);
                    assert_eq!(got, want, "edges, case {case} {kernel:?} split {split}");
                    assert_eq!(
                        best, want_best,
                        "best, case {case} {kernel:?} split {split}"
                    );
                }
            }
            // The engines' own order on the transposed tile: smaller column
            // first, then row.
            let transposed = scoring.transposed();
            let (_, found) = on_tile((&a, b), &edges, corner, |io| {
                run_split(
                    Kernel::Scalar,
                    &transposed,
                    io.transposed(),
                    Order::Rows,
                    16,
                )
            });
            ties_decided +=
                usize::from((found.best.col, found.best.row) != (want_best.row, want_best.col));
        }
        assert!(
            ties_decided > 10,
            "{ties_decided} cases where the order decides a tie"
        );
    }

    /// Two sequences whose best score two cells reach, the first in the
    /// matrix's order having the larger column: a motif, then letters that
    /// match nothing, then the motif reversed, in A; the reversed motif
    /// first in B.
    fn crossed_motifs(rng: &mut SplitMix64, long: bool) -> (Vec<u8>, Vec<u8>) {
        let len = if long {
            130 + rng.below(70)
        } else {
            8 + rng.below(30)
        };
        let motif = random_codes(len as usize, 2, rng.next_u64());
        let reversed: Vec<u8> = motif.iter().rev().copied().collect();
        let filler = |code: u8, rng: &mut SplitMix64| vec![code; 1 + rng.below(60) as usize];
        let a = [motif.clone(), filler(2, rng), reversed.clone()].concat();
        let b = [reversed, filler(3, rng), motif].concat();
        (a, b)
    }

    /// A tile taller than a transposed row runs in bands: the same edges and
    /// best cell as the scalar kernel in one piece, whichever way each band
    /// runs (here transposed: gaps from a best path left of the tile enter
    /// every row).
    #[test]
    fn tall_tiles_in_bands_equal_the_scalar_kernel() {
        let scoring = Scoring::match_mismatch(2, -1, 3, 1).unwrap();
        let h = 2 * MAX_TRANSPOSED_ROW + 100;
        let a = random_dna(h, 3);
        let b = mutated(&a[..1000], 4, 0.05, 4);
        let w = b.len();
        // The left edge: gaps from a best path left of the tile, worth
        // less the further down the path they left.
        let left_h: Vec<i32> = (0..h).map(|i| 4000 + 2 * i as i32).collect();
        let edges = [vec![0; w], vec![0; w], left_h.clone(), left_h];
        let (want, want_best) = run(Kernel::Scalar, &scoring, (&a, &b), &edges, 0, usize::MAX);
        let gaps = Gaps::of(&scoring);
        let got = on_tile((&a, &b), &edges, 0, |io| {
            assert_eq!(orientation::choose(&io, gaps), Orientation::Rows);
            // Three bands, each of which runs transposed.
            let height = band_height(h);
            assert_eq!((height, h.div_ceil(height)), (2816, 3));
            for start in (0..h).step_by(height) {
                let rows = start..(start + height).min(h);
                let band = TileIo {
                    a: &io.a[rows.clone()],
                    b: io.b,
                    top_h: &mut *io.top_h,
                    top_f: &mut *io.top_f,
                    left_h: &mut io.left_h[rows.clone()],
                    left_e: &mut io.left_e[rows],
                    corner: 0,
                    row0: 7 + start,
                    col0: 11,
                };
                let way = orientation::choose(&band, gaps);
                assert_eq!(way, Orientation::Columns, "band from row {start}");
            }
            run_tile(Kernel::Auto, &scoring, io)
        });
        assert_eq!(got, (want, want_best));
    }

    /// Tiles split in halves (and halves of halves) where their 8-bit pass
    /// stops part-way or cannot start on its boundary: the same edges and
    /// best cell as the scalar kernel, from edges low enough for 8 bits and
    /// from edges beyond them, on related sequences whose scores outgrow 8
    /// bits part-way. Every kind of split happens.
    #[test]
    fn halves_after_an_early_8_bit_stop_equal_the_scalar_kernel() {
        let striped: Vec<Kernel> = Kernel::available()
            .into_iter()
            .filter(|k| matches!(k, Kernel::Striped(_, Bits::Eight)))
            .collect();
        let mut rng = SplitMix64::new(5);
        let schemes = [
            Scoring::dna_default(),
            Scoring::match_mismatch(5, -4, 10, 1).unwrap(),
            Scoring::blosum62(11, 1).unwrap(),
        ];
        SPLITS.take();
        let (mut at_first_row, mut part_way, mut nested) = (0, 0, 0);
        for case in 0..60 {
            let scoring = &schemes[case % schemes.len()];
            let (h, w) = (1 + rng.below(90) as usize, 2 + rng.below(300) as usize);
            let a = if case % schemes.len() == 2 {
                random_protein(h, rng.next_u64())
            } else {
                random_dna(h, rng.next_u64())
            };
            // B like A where they overlap: scores climb along the diagonal.
            let b = mutated(
                &[a.clone(), a.clone(), a.clone()].concat(),
                4,
                0.1,
                case as u64,
            );
            let b = &b[..w.min(b.len())];
            let w = b.len();
            let high = if case % 4 == 0 { 400 } else { 40 };
            let mut value =
                |n: usize| -> Vec<i32> { (0..n).map(|_| rng.below(high) as i32).collect() };
            let edges = [value(w), value(w), value(h), value(h)];
            let corner = rng.below(high) as i32;
            let (want, want_best) =
                run(Kernel::Scalar, scoring, (&a, b), &edges, corner, usize::MAX);
            for &kernel in &striped {
                for split in [2, 16, 64, 200] {
                    let (got, best) = run(kernel, scoring, (&a, b), &edges, corner, split);
                    assert_eq!(got, want, "edges, case {case} {kernel:?} split {split}");
                    assert_eq!(
                        best, want_best,
                        "best, case {case} {kernel:?} split {split}"
                    );
                    for (width, start) in SPLITS.take() {
                        at_first_row += usize::from(start == 0);
                        part_way += usize::from(start > 0);
                        nested += usize::from(width < w);
                    }
                }
            }
        }
        if !striped.is_empty() {
            assert!(
                at_first_row > 10 && part_way > 10 && nested > 10,
                "splits at the first row {at_first_row}, part-way {part_way}, nested {nested}"
            );
        }
    }
}
