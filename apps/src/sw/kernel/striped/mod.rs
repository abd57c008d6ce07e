//! The striped engine (Farrar, 2007) on saturating lanes of 8 or 16 bits,
//! the fast path of every mode.
//!
//! # Layout
//!
//! The vector dimension runs along the tile's columns (sequence B), the outer
//! loop along its rows (sequence A). With `N` lanes and `S = ceil(w / N)`
//! segments, column `p` lives in segment `p % S`, lane `p / S`: lane `k` of
//! every vector covers the contiguous columns `k * S .. (k + 1) * S`. So for
//! one row, segment `s` depends on segment `s - 1` of the same row only
//! through the horizontal gap `E`, and segment 0 on the last segment shifted
//! up by one lane. The main loop computes each segment from the row above
//! (`H`, `F`: no dependency inside the row) and the in-lane `E` chain.
//!
//! The gaps that cross lane boundaries are not corrected in a pass over
//! the row, as in Farrar's "lazy E" loop. That loop runs until the carried
//! gap is no better than what the row already has, a number of segments
//! that depends on the values (on 8-bit lanes about 13 at any width), and
//! the next row waits for its unpredictable exit: on 2528 columns it cost
//! about a third of the time. Instead, the gap entering each lane at
//! segment 0 (the one leaving the lane below, or from a prefix scan over
//! the lanes when a gap crosses a whole lane) is kept beside the stored row,
//! and the next row adds it, decayed by `extend` a segment, as it reads
//! that row (`Carry`): two operations a segment, no branch, and exact for
//! every cell.
//!
//! The query profile is built over B: for each code `c` that occurs in the
//! tile's rows, `S` vectors holding `score(c, b[p])`. Row `i` then reads
//! its substitution scores with plain vector loads.
//!
//! # Exactness
//!
//! Lanes hold values `0..=MAX` and saturate at both ends (the x86 lanes
//! store them offset into signed integers, see [`x86`]):
//!
//! * At 0, which is exact for `H` (Smith-Waterman clamps it at 0) and for the
//!   gap states as well, because the engine keeps `max(E, 0)` and
//!   `max(F, 0)`: a non-positive gap state never wins a maximum against
//!   `H >= 0`, and `max(E, 0)` obeys the same recurrence with the clamp.
//!   Edges leave every kernel in this clamped form (see [`super`]).
//! * At the top (`MAX`, 255 or 65535), which would be wrong. With the
//!   largest score `P = max(0, highest score)`, a row can saturate only if
//!   some `H` of the row above exceeds `limit = MAX - P`. The engine runs
//!   only if every boundary value (`H`, `E`, `F`, the corner) and the best
//!   score so far are at most `limit`, then checks
//!   the row maximum after every row and stops after the first row that
//!   exceeds `limit`: every row it finished is exact, and the caller
//!   continues from there with wider lanes (16 bits, then 16 bits
//!   relative to a base, see [`offset`], then 32). It also
//!   runs only if the scores and gap penalties fit the lanes' signed
//!   amounts (`AMOUNT_MAX`, 127 or 32767).

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub(crate) mod offset;
mod profiles;
mod rows;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub(crate) mod x86;

use super::best_so_far::BestSoFar;
use super::reduce::CodeSet;
use super::{Gaps, TileIo};
use crate::sw::best::Best;
use crate::sw::scoring::Scoring;

/// Saturating lanes of one width on one instruction set, holding values
/// `0..=MAX`. An implementor exists only where its instructions run (see
/// [`x86`], which also says how a lane stores its value).
pub(crate) trait Lanes: Copy + 'static {
    /// One vector.
    type V: Copy + 'static;
    /// One lane's storage (`u8` or `u16`); its default is the score 0.
    type E: Copy + Default;
    /// Lanes per vector.
    const N: usize;
    /// Largest lane value.
    const MAX: i32;
    /// Largest amount [`subs`](Self::subs) subtracts and largest score
    /// magnitude [`add_score`](Self::add_score) adds (the lowest score may
    /// be one less).
    const AMOUNT_MAX: i32;
    /// The value `x` in every lane (`0 <= x <= MAX`).
    fn splat(self, x: i32) -> Self::V;
    /// The amount `x` in every lane, for [`subs`](Self::subs)
    /// (`0 <= x <= AMOUNT_MAX`).
    fn amount(self, x: i32) -> Self::V;
    /// Lane `k` is `f(k)` (`0 <= f(k) <= MAX`).
    fn build(self, f: impl FnMut(usize) -> i32) -> Self::V;
    /// Value of lane `k < N`.
    fn lane(self, v: Self::V, k: usize) -> i32;
    /// The lane holding the value `x` (`0 <= x <= MAX`).
    fn elem(x: i32) -> Self::E;
    /// The value of lane `e`.
    fn value(e: Self::E) -> i32;
    /// The lane holding the score `s` for [`add_score`](Self::add_score)
    /// (`-AMOUNT_MAX - 1 <= s <= AMOUNT_MAX`).
    fn score(s: i32) -> Self::E;
    /// The vector of `lanes[..N]`, from memory (`lanes.len() >= N`).
    fn load(self, lanes: &[Self::E]) -> Self::V;
    /// Writes the lanes of `v` to `out[..N]` (`out.len() >= N`).
    fn store(self, v: Self::V, out: &mut [Self::E]);
    /// Largest lane.
    fn hmax(self, v: Self::V) -> i32;
    /// Lane-wise `min(max(a + s, 0), MAX)`, `s` holding scores.
    fn add_score(self, a: Self::V, s: Self::V) -> Self::V;
    /// Lane-wise `max(a - b, 0)`, `b` holding amounts.
    fn subs(self, a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise maximum.
    fn max(self, a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise minimum.
    fn min(self, a: Self::V, b: Self::V) -> Self::V;
    /// `[x, v[0], ..., v[N - 2]]`.
    fn shift_in(self, v: Self::V, x: i32) -> Self::V;
    /// `v` moved up by `lanes` lanes, a power of two below `N`, over
    /// lanes of value 0: `[0; lanes]` then `v[..N - lanes]`. Callers pass
    /// a constant, which selects the instructions once inlined.
    fn shift_up(self, v: Self::V, lanes: usize) -> Self::V;
    /// Whether some lane of `a` is greater than the same lane of `b`.
    fn any_gt(self, a: Self::V, b: Self::V) -> bool;
    /// The smallest lane where `a == b`, if any.
    fn first_eq(self, a: Self::V, b: Self::V) -> Option<usize>;
    /// `edge` in vector order into `out`, `out.len()` vectors (see
    /// [`stripe_by_lanes`], which this is unless the instruction set
    /// gathers); every value of `edge` is at most `MAX`.
    #[inline(always)]
    fn stripe(self, edge: &[i32], out: &mut [Self::V]) {
        stripe_by_lanes(self, edge, out)
    }
    /// The inverse of [`stripe`](Self::stripe) (see
    /// [`unstripe_by_lanes`]).
    #[inline(always)]
    fn unstripe(self, vectors: &[Self::V], edge: &mut [i32]) {
        unstripe_by_lanes(self, vectors, edge)
    }
    /// Appends to `out` one vector per `N` codes, lane `k` holding
    /// `table[codes[s * N + k]]` (`codes.len()` a multiple of `N`, every
    /// code below [`LOOKUP_CODES`]): one code's row of a query profile
    /// (see [`lookup_row_by_lanes`], which this is unless the instruction
    /// set shuffles).
    #[inline(always)]
    fn lookup_row(self, codes: &[u8], table: &[Self::E; LOOKUP_CODES], out: &mut Vec<Self::V>) {
        lookup_row_by_lanes(self, codes, table, out);
    }
}

/// Entries of a [`Lanes::lookup_row`] table: codes `0..LOOKUP_CODES - 1`
/// of the columns, and [`PADDING_CODE`].
pub(crate) const LOOKUP_CODES: usize = 64;

/// The code of a profile's padding lanes past the last column, in a
/// [`Lanes::lookup_row`] table: its entry is the score 0.
const PADDING_CODE: u8 = LOOKUP_CODES as u8 - 1;

/// [`Lanes::lookup_row`] lane by lane.
#[inline(always)]
pub(crate) fn lookup_row_by_lanes<L: Lanes>(
    l: L,
    codes: &[u8],
    table: &[L::E; LOOKUP_CODES],
    out: &mut Vec<L::V>,
) {
    let mut lanes = [L::E::default(); 64];
    for chunk in codes.chunks_exact(L::N) {
        for (lane, &code) in lanes.iter_mut().zip(chunk) {
            *lane = table[usize::from(code)];
        }
        out.push(l.load(&lanes));
    }
}

/// `b` in vector order (see [`stripe_by_lanes`]) for `segs` vectors of
/// `n` lanes, `padding` past its end: lane `k` of vector `s` holds
/// `b[k * segs + s]`.
#[inline(always)]
fn codes_in_vector_order<T: Copy + From<u8>>(
    b: &[u8],
    segs: usize,
    n: usize,
    padding: T,
) -> Vec<T> {
    let mut codes = vec![padding; segs * n];
    for (k, lane) in b.chunks(segs.max(1)).enumerate() {
        for (s, &x) in lane.iter().enumerate() {
            codes[s * n + k] = T::from(x);
        }
    }
    codes
}

/// Substitution scores of the codes in a tile's rows against the codes in
/// its columns: small tables from which profiles of any width are built.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Scores {
    /// `row_of[code]`: the code's index in `rows`.
    row_of: [u16; 256],
    /// `rows[r][x]`: the score of row code `r` against column code `x`.
    rows: Vec<[i32; 256]>,
    /// `min(0, lowest score)`.
    low: i32,
    /// `max(0, highest score)`: the most a cell adds to its diagonal.
    top: i32,
}

impl Scores {
    pub(crate) fn new(scoring: &Scoring, rows: &[u8], columns: &[u8]) -> Self {
        let column_codes: Vec<u8> = CodeSet::of(columns).iter().collect();
        let mut row_of = [0u16; 256];
        let mut table = Vec::new();
        let (mut lo, mut hi) = (0i32, 0i32);
        for c in CodeSet::of(rows).iter() {
            row_of[usize::from(c)] = table.len() as u16;
            let mut row = [0i32; 256];
            for &x in &column_codes {
                let s = scoring.score(c, x);
                row[usize::from(x)] = s;
                lo = lo.min(s);
                hi = hi.max(s);
            }
            table.push(row);
        }
        Scores {
            row_of,
            rows: table,
            low: lo,
            top: hi,
        }
    }

    /// Largest `H` from which no lane of `L` can saturate in the next row
    /// (`< 0`: the scores do not fit such lanes).
    fn limit<L: Lanes>(&self) -> i32 {
        if self.top > L::AMOUNT_MAX || self.low < -L::AMOUNT_MAX - 1 {
            return -1;
        }
        L::MAX - self.top
    }
}

/// The query profile of one tile: for each code occurring in the rows, `S`
/// vectors of `score(code, b[p])` (the score 0 in padding lanes: their
/// `H` never flows into real columns, and the row maximum masks them).
struct Profile<V> {
    vectors: Vec<V>,
    row_of: [u16; 256],
    segs: usize,
}

impl<V: Copy> Profile<V> {
    /// The profile of columns `b`: by [`Lanes::lookup_row`] where every
    /// code of `b` is below [`PADDING_CODE`] (the alphabets' codes are),
    /// else [lane by lane](Self::build_by_lanes), which takes up to six
    /// times as long (see `x86::lookup`).
    #[inline(always)]
    fn build<L: Lanes<V = V>>(l: L, scores: &Scores, b: &[u8]) -> Self {
        if b.iter().copied().max().unwrap_or(0) >= PADDING_CODE {
            return Self::build_by_lanes(l, scores, b);
        }
        let segs = b.len().div_ceil(L::N);
        let codes = codes_in_vector_order(b, segs, L::N, PADDING_CODE);
        let mut vectors = Vec::with_capacity(scores.rows.len() * segs);
        for row in &scores.rows {
            let mut table = [L::E::default(); LOOKUP_CODES];
            for (e, &score) in table[..usize::from(PADDING_CODE)].iter_mut().zip(row) {
                *e = L::score(score);
            }
            l.lookup_row(&codes, &table, &mut vectors);
        }
        Profile {
            vectors,
            row_of: scores.row_of,
            segs,
        }
    }

    /// [`build`](Self::build) one lane at a time, for any codes.
    #[inline(always)]
    fn build_by_lanes<L: Lanes<V = V>>(l: L, scores: &Scores, b: &[u8]) -> Self {
        let segs = b.len().div_ceil(L::N);
        // `PADDING` past the end, so that each code's vectors are then
        // sequential table look-ups.
        const PADDING: u16 = 256;
        let in_lanes = codes_in_vector_order(b, segs, L::N, PADDING);
        let mut vectors = Vec::with_capacity(scores.rows.len() * segs);
        let mut lanes = Vec::with_capacity(in_lanes.len());
        for row in &scores.rows {
            let mut entry = [L::E::default(); PADDING as usize + 1];
            for (e, &score) in entry.iter_mut().zip(row) {
                *e = L::score(score);
            }
            lanes.clear();
            lanes.extend(in_lanes.iter().map(|&c| entry[usize::from(c)]));
            vectors.extend(lanes.chunks_exact(L::N).map(|c| l.load(c)));
        }
        Profile {
            vectors,
            row_of: scores.row_of,
            segs,
        }
    }

    #[inline(always)]
    fn row(&self, code: u8) -> &[V] {
        let r = usize::from(self.row_of[usize::from(code)]);
        &self.vectors[r * self.segs..(r + 1) * self.segs]
    }
}

/// Whether lanes `L` take these scores and gap penalties at all; the
/// boundary and the scores reached decide, tile by tile, how many rows
/// they run.
pub(crate) fn fits<L: Lanes>(scores: &Scores, gaps: Gaps) -> bool {
    scores.limit::<L>() >= 0 && gaps.open <= L::AMOUNT_MAX && gaps.extend <= L::AMOUNT_MAX
}

/// Runs rows `start..` of the tile on lanes `l` (see the module docs) and
/// returns how many rows of the tile are done and the `H` value above the
/// first row not done (the corner for whoever continues). Does nothing when
/// the boundary, the scores or the gap penalties do not fit the lanes.
/// `scores` must cover the codes of rows `start..`. Offers `best` the
/// first cell of the first row that beats it, and, where its order asks
/// for them, of every later row that ties it; rows `..start` must already
/// be in it.
#[inline(always)]
pub(crate) fn run<L: Lanes>(
    l: L,
    scores: &Scores,
    gaps: Gaps,
    io: &mut TileIo<'_>,
    start: usize,
    corner: i32,
    best: &mut BestSoFar,
) -> (usize, i32) {
    let (h, w) = (io.a.len(), io.b.len());
    if start >= h || w == 0 {
        return (start, corner);
    }
    if !fits::<L>(scores, gaps) {
        return (start, corner);
    }
    let limit = scores.limit::<L>();
    // Where the scores have outgrown the lanes, the boundary's ends
    // usually show it already: a few values spare the reductions.
    let ends = [
        corner,
        best.score(),
        io.top_h[0],
        io.top_h[w - 1],
        io.left_h[start],
        io.left_h[h - 1],
    ];
    if ends.into_iter().any(|x| x > limit) {
        return (start, corner);
    }
    // One reduction per slice: each vectorizes, a chain of them would not.
    let boundary_max = [
        &io.top_h[..w],
        &io.top_f[..w],
        &io.left_h[start..h],
        &io.left_e[start..h],
    ]
    .into_iter()
    .filter_map(|edge| edge.iter().copied().max())
    .fold(corner.max(best.score()), i32::max);
    if boundary_max > limit {
        return (start, corner);
    }
    let prof = profiles::profile(l, scores, io.b);
    let segs = prof.segs;
    // The rows the main loop reads and writes, staggered in one
    // allocation (see `STAGGER`).
    let stride = staggered_stride(segs, size_of::<L::V>());
    let mut rows = rows::take(4 * stride, l.splat(0));
    let (above, rest) = rows.split_at_mut(stride);
    let (f, rest) = rest.split_at_mut(stride);
    let (row, spare) = rest.split_at_mut(stride);
    let (mut h_above, f) = (&mut above[..segs], &mut f[..segs]);
    let (mut h_row, mut spare) = (&mut row[..segs], &mut spare[..segs]);
    l.stripe(&io.top_h[..w], h_above);
    l.stripe(&io.top_f[..w], f);
    // Where column w - 1, the right edge, lives.
    let (last_seg, last_lane) = ((w - 1) % segs, (w - 1) / segs);
    // The main loop's E recurrence relies on extend <= open (Scoring's
    // invariant).
    debug_assert!(gaps.extend <= gaps.open);
    let open = l.amount(gaps.open);
    let extend = l.amount(gaps.extend);
    let zero = l.splat(0);
    // Lanes holding real columns in segments up to / after `last_seg`.
    let low_real = l.build(|k| if k <= last_lane { L::MAX } else { 0 });
    let high_real = l.build(|k| if k < last_lane { L::MAX } else { 0 });
    // Within `limit`, checked above.
    let mut best_score = best.score();
    let mut best_v = l.splat(best_score);
    let offers_ties = best.offers_ties();
    // The row of the best cell so far: its column is looked up once, at
    // the end or where a later row ties it (when ties are offered), rather
    // than at every row that raises the best (most rows, where the scores
    // grow down the matrix). The row is `h_above` until the next row is
    // computed and swapped in; it is then `h_row`, and moves to `spare` by
    // a swap before `h_row` is overwritten.
    let mut best_row: Option<BestRow<L::V>> = None;
    // What a gap loses across one lane's columns, and on its way to the
    // right edge's segment and to the last one.
    let seg_loss = |n: usize| {
        i32::try_from(n)
            .unwrap_or(i32::MAX)
            .saturating_mul(gaps.extend)
    };
    let lane_decay = seg_loss(segs);
    let across_lane = Decay::new(l, lane_decay);
    let lane_scan = LaneScan::new(l, lane_decay);
    let to_right_edge = Decay::new(l, seg_loss(last_seg));
    let to_last_seg = Decay::new(l, seg_loss(segs - 1));
    // The gaps entering each lane of the row above at its segment 0, which
    // its stored `H` does not include yet (see `Carry`).
    let mut carry = zero;
    let mut left_diag = corner;
    let mut done = h;

    for i in start..h {
        let profile = prof.row(io.a[i]);
        let left_h = io.left_h[i];
        // E of column 0 comes from the left edge; other lanes start with no
        // gap and get theirs from the next row (`Carry`).
        let e0 = (left_h - gaps.open).max(io.left_e[i] - gaps.extend).max(0);
        let e = l.shift_in(zero, e0);
        let above_last = l.max(h_above[segs - 1], to_last_seg.apply(l, carry));
        let mut diag = l.shift_in(above_last, left_diag);
        let mut c = Carry { gap: carry };
        // Padding lanes (columns >= w) hold junk that never flows back into
        // real columns: the row maximum masks them out. The segments up to
        // `last_seg` and those after it differ in which lanes are real, so
        // the row runs in three parts: before `last_seg`, `last_seg` (whose
        // entering E is the right edge's), and after it.
        let consts = Consts { open, extend };
        let mut cut = Cut {
            up: &h_above[..],
            f: &mut *f,
            h: &mut *h_row,
            profile,
        };
        let (before_max, e) = cut.take(last_seg).run(l, &consts, &mut diag, e, &mut c);
        // The gap entering `last_seg`, in lane `last_lane`, enters the right
        // edge's column.
        let e_last = e;
        let (mid_max, e) = cut.take(1).run(l, &consts, &mut diag, e, &mut c);
        let (after_max, e) = cut.run(l, &consts, &mut diag, e, &mut c);
        let row_max = l.max(
            l.min(l.max(before_max, mid_max), low_real),
            l.min(after_max, high_real),
        );
        // Gaps across lane boundaries: the main loop started every lane but
        // the first with no gap, so the `H` it stored lacks the gaps that
        // enter each lane from the one below. Rather than a pass over the
        // row now (Farrar's lazy loop, whose length depends on the values
        // and whose exit the next row waits for), the next row adds them
        // as it reads this one (`Carry`). The gap entering lane `k` is the
        // one leaving lane `k - 1`, unless a gap from further down crosses
        // all of lane `k - 1` and is still better there: then (related
        // sequences, right of the best path) it comes from a max-plus
        // prefix scan over the lanes (`LaneScan`).
        //
        // The gaps leave the row maximum as it is: a gap they carry into
        // a cell left some cell of an earlier column of this row (or the
        // left edge, through column 0, which the main loop computed with
        // it), and is worth no more there than that cell's `H`. So every
        // `H` they raise is at most one the main loop counted, further
        // left: neither the maximum nor its first column can change, and
        // the best cell is looked up in the stored rows.
        //
        // Only lanes below `last_lane` pass a gap on into a real lane, so
        // only they can call for the scan.
        let next_lane = l.shift_in(e, 0);
        let across = l.min(across_lane.apply(l, next_lane), high_real);
        carry = if l.any_gt(across, e) {
            lane_scan.apply(l, next_lane)
        } else {
            next_lane
        };
        let at_right_edge = to_right_edge.apply(l, carry);
        io.left_h[i] = l.lane(l.max(h_row[last_seg], at_right_edge), last_lane);
        io.left_e[i] = l.lane(l.max(e_last, at_right_edge), last_lane);
        left_diag = left_h;
        std::mem::swap(&mut h_above, &mut h_row);
        if l.any_gt(row_max, best_v) {
            let top = l.hmax(row_max);
            best_score = top;
            best_v = l.splat(top);
            best_row = Some(BestRow {
                row: i,
                score: top,
                row_max,
                kept: false,
            });
            if top > limit {
                done = i + 1;
                break;
            }
        } else if offers_ties && best_score > 0 && l.first_eq(row_max, best_v).is_some() {
            // A tie, to be offered: the best row first, from `h_row` where
            // the swap left it or the spare buffer, then this one.
            if let Some(found) = best_row.take() {
                let kept: &[L::V] = if found.kept { &*spare } else { &*h_row };
                offer_first_column(l, found, kept, (io.row0, io.col0), best);
            }
            let tie = BestRow {
                row: i,
                score: best_score,
                row_max,
                kept: false,
            };
            offer_first_column(l, tie, &*h_above, (io.row0, io.col0), best);
        } else if let Some(BestRow {
            kept: kept @ false, ..
        }) = &mut best_row
        {
            // The best row is now `h_row`, which the next row overwrites.
            std::mem::swap(&mut h_row, &mut spare);
            *kept = true;
        }
    }
    if let Some(found) = best_row {
        let row: &[L::V] = if found.kept { &*spare } else { &*h_above };
        offer_first_column(l, found, row, (io.row0, io.col0), best);
    }
    // The last row leaves with the gaps the next one would have added.
    Carry { gap: carry }.raise(l, h_above, extend);
    l.unstripe(h_above, &mut io.top_h[..w]);
    l.unstripe(f, &mut io.top_f[..w]);
    rows::give_back(rows);
    (done, left_diag)
}

/// `edge`, one value per column, clamped at 0, in vector order: lane `k`
/// of vector `s` holds column `k * segs + s`, and lanes past the end hold 0.
/// The values go through a buffer in lane order, read and written
/// sequentially on one side, so that each vector is one load: building
/// vectors lane by lane would stall on store forwarding, and every tile
/// pays this for its whole width.
#[inline(always)]
pub(crate) fn stripe_by_lanes<L: Lanes>(l: L, edge: &[i32], out: &mut [L::V]) {
    let segs = out.len();
    let mut lanes = vec![L::elem(0); segs * L::N];
    for (k, lane) in edge.chunks(segs.max(1)).enumerate() {
        for (s, &x) in lane.iter().enumerate() {
            lanes[s * L::N + k] = L::elem(x.max(0));
        }
    }
    for (v, c) in out.iter_mut().zip(lanes.chunks_exact(L::N)) {
        *v = l.load(c);
    }
}

/// The inverse of [`stripe_by_lanes`]: the columns of `vectors` into
/// `edge`.
#[inline(always)]
pub(crate) fn unstripe_by_lanes<L: Lanes>(l: L, vectors: &[L::V], edge: &mut [i32]) {
    let segs = vectors.len();
    let mut lanes = vec![L::E::default(); segs * L::N];
    for (&v, out) in vectors.iter().zip(lanes.chunks_exact_mut(L::N)) {
        l.store(v, out);
    }
    for (k, lane) in edge.chunks_mut(segs.max(1)).enumerate() {
        for (s, x) in lane.iter_mut().enumerate() {
            *x = L::value(lanes[s * L::N + k]);
        }
    }
}

/// Offers `best` the first cell of `found`'s row (`row`, its `H`) that
/// reaches its score; `(row0, col0)` is the tile's first cell.
#[inline(always)]
fn offer_first_column<L: Lanes>(
    l: L,
    found: BestRow<L::V>,
    row: &[L::V],
    (row0, col0): (usize, usize),
    best: &mut BestSoFar,
) {
    if let Some(col) = first_column(l, row, found.row_max, found.score, row.len()) {
        best.offer(Best {
            score: found.score,
            row: row0 + found.row,
            col: col0 + col,
        });
    }
}

/// The row holding the best cell of a pass so far.
#[derive(Clone, Copy)]
struct BestRow<V> {
    /// Its index in the tile.
    row: usize,
    /// The best score, which this row reaches.
    score: i32,
    /// The row's maximum per lane (real columns only).
    row_max: V,
    /// Whether its `H` moved to the spare buffer.
    kept: bool,
}

/// Vector constants of the main loop.
struct Consts<V> {
    open: V,
    extend: V,
}

/// A run of consecutive segments of one row: the row above (`up`), the
/// vertical gaps, the row being computed, and the profile.
struct Cut<'a, V> {
    up: &'a [V],
    f: &'a mut [V],
    h: &'a mut [V],
    profile: &'a [V],
}

impl<'a, V: Copy> Cut<'a, V> {
    /// Splits off the first `n` segments.
    #[inline(always)]
    fn take(&mut self, n: usize) -> Cut<'a, V> {
        let (up, rest_up) = self.up.split_at(n);
        let (f, rest_f) = std::mem::take(&mut self.f).split_at_mut(n);
        let (h, rest_h) = std::mem::take(&mut self.h).split_at_mut(n);
        let (profile, rest_p) = self.profile.split_at(n);
        *self = Cut {
            up: rest_up,
            f: rest_f,
            h: rest_h,
            profile: rest_p,
        };
        Cut { up, f, h, profile }
    }

    /// The main loop over these segments, from the diagonal and the
    /// horizontal gap entering the first one, reading the row above as
    /// `carry` makes it exact (and advancing `carry` past these segments).
    /// Returns the lane-wise maximum of the new `H` and the gap leaving the
    /// last segment; `diag` is left as the last segment's exact `up`.
    #[inline(always)]
    fn run<L: Lanes<V = V>>(
        self,
        l: L,
        c: &Consts<V>,
        diag: &mut V,
        mut e: V,
        carry: &mut Carry<V>,
    ) -> (V, V) {
        let mut max = l.splat(0);
        for (((&stored, fs), hs), &p) in self.up.iter().zip(self.f).zip(self.h).zip(self.profile) {
            let up = carry.next(l, stored, c.extend);
            let vf = l.max(l.subs(up, c.open), l.subs(*fs, c.extend));
            *fs = vf;
            // H = max(t, E) with t = max(diag + s, F). The next E is
            // max(H - open, E - extend) = max(t - open, E - extend), since
            // E - open <= E - extend: E's chain from one segment to the
            // next is two operations, and H is off it.
            let t = l.max(l.add_score(*diag, p), vf);
            let vh = l.max(t, e);
            *hs = vh;
            max = l.max(max, vh);
            e = l.max(l.subs(t, c.open), l.subs(e, c.extend));
            *diag = up;
        }
        (max, e)
    }
}

/// The gaps entering the lanes of a stored row at one segment, which its
/// `H` lacks: the row's exact `H` is the lane-wise maximum of the two.
///
/// The main loop gives lane `k` of a row no entering gap (except lane 0,
/// from the left edge), so it stores `H' = max(T, E')` with `E'` the gaps
/// from inside the lane. With `C` the gap entering the lane at segment 0,
/// the exact gap at segment `s` is `E = max(E', C - s * extend)`: both
/// sides obey `E[s + 1] = max(T[s] - open, E[s] - extend)` (`H - open` is
/// `max(T, E) - open`, and `E - open <= E - extend`). So the exact `H` is
/// `max(H', C - s * extend)`, which the next row forms as it reads the
/// row, segment by segment, in two operations per segment and no branch.
#[derive(Clone, Copy)]
struct Carry<V> {
    /// The gap entering the next segment to read.
    gap: V,
}

impl<V: Copy> Carry<V> {
    /// The exact `H` of the next segment, whose stored `H` is `stored`.
    #[inline(always)]
    fn next<L: Lanes<V = V>>(&mut self, l: L, stored: V, extend: V) -> V {
        let exact = l.max(stored, self.gap);
        self.gap = l.subs(self.gap, extend);
        exact
    }

    /// Makes `row`, a whole stored row from segment 0, exact.
    #[inline(always)]
    fn raise<L: Lanes<V = V>>(mut self, l: L, row: &mut [V], extend: V) {
        for hs in row {
            *hs = self.next(l, *hs, extend);
        }
    }
}

/// Lane-wise `max(v - loss, 0)` for a loss of any size, as saturating
/// subtractions of at most [`Lanes::AMOUNT_MAX`] each.
#[derive(Clone, Copy)]
struct Decay<V> {
    steps: [V; 3],
}

impl<V: Copy> Decay<V> {
    /// The decay by `loss >= 0`.
    #[inline(always)]
    fn new<L: Lanes<V = V>>(l: L, loss: i32) -> Self {
        // A lane holds at most `MAX`: three steps take any value to 0.
        const { assert!(L::MAX <= 3 * L::AMOUNT_MAX) };
        let loss = loss.clamp(0, L::MAX);
        let step = |k: i32| l.amount((loss - k * L::AMOUNT_MAX).clamp(0, L::AMOUNT_MAX));
        Decay {
            steps: [step(0), step(1), step(2)],
        }
    }

    #[inline(always)]
    fn apply<L: Lanes<V = V>>(&self, l: L, v: V) -> V {
        self.steps.iter().fold(v, |v, &step| l.subs(v, step))
    }
}

/// The best gap entering each lane of a row at its first column, from
/// the gaps leaving the lanes below: lane `k` of [`apply`](Self::apply)`(x)`
/// is `max over i <= k of (x[i] - (k - i) * decay)` (at least 0), where
/// `x[i]` is the gap leaving lane `i - 1` after its last column (the main
/// loop's `E` moved up a lane, which covers every source inside that lane)
/// and `decay` what a gap loses across one lane's columns.
///
/// A max-plus prefix scan in `log2(N)` steps (Hillis and Steele): step `t`
/// takes each lane's maximum with the lane `2^t` below it, decayed by
/// `2^t` lanes' loss, so that after it every lane holds the best over the
/// `2^(t + 1)` lanes up to it. Saturating subtraction is monotone, so it
/// distributes over the maximum, and two decays make one of their sum:
/// the steps compose to the exact prefix maximum. Lane by lane, with the
/// lanes written out and read back, the same scan took about a sixth of
/// a striped row's time on related DNA (where a tenth of the rows need
/// it), and its dependence chain was `N` steps long instead of `log2(N)`.
#[derive(Clone, Copy)]
struct LaneScan<V> {
    /// The decay of step `t`: `2^t` lanes' loss.
    steps: [Decay<V>; 6],
}

impl<V: Copy> LaneScan<V> {
    /// The scan for a loss of `decay >= 0` per lane.
    #[inline(always)]
    fn new<L: Lanes<V = V>>(l: L, decay: i32) -> Self {
        const { assert!(L::N.is_power_of_two() && L::N <= 64) };
        LaneScan {
            steps: std::array::from_fn(|t| Decay::new(l, decay.saturating_mul(1 << t))),
        }
    }

    /// The gaps entering the lanes, from `x`, the gaps leaving the lanes
    /// below them (`x[0]`, which no lane feeds, 0).
    #[inline(always)]
    fn apply<L: Lanes<V = V>>(&self, l: L, x: V) -> V {
        let mut best = x;
        // A constant trip count: unrolled, each shift a constant.
        for (t, step) in self.steps.iter().enumerate() {
            if 1 << t >= L::N {
                break;
            }
            best = l.max(best, step.apply(l, l.shift_up(best, 1 << t)));
        }
        best
    }
}

/// The smallest column whose `H` equals `target`: the smallest lane where
/// `row_max` (the row's maximum per lane, real columns only) reaches it,
/// then the first segment of that lane that does.
#[inline(always)]
fn first_column<L: Lanes>(
    l: L,
    row: &[L::V],
    row_max: L::V,
    target: i32,
    segs: usize,
) -> Option<usize> {
    let k = l.first_eq(row_max, l.splat(target))?;
    let s = row.iter().position(|&v| l.lane(v, k) == target)?;
    Some(k * segs + s)
}

/// Bytes, modulo 4 KiB, between the starts of consecutive rows of one
/// pass (`H` above, `F`, the row being computed, the spare).
///
/// The main loop stores `F` and `H` at one segment and loads the row
/// above, `F` and the profile a few segments on. A load whose address
/// matches an older, still pending store's in its low 12 bits waits for
/// that store as if they overlapped, so rows whose starts lie a few
/// vectors apart modulo 4 KiB slow every segment; where separate
/// allocations put them depended on the tile's width and on what the
/// allocator held. Rows 1 KiB apart modulo 4 KiB stay clear of each
/// other's last few stores. On a 2-core Zen 4, staggered rows ran `seq`
/// on random DNA 20000² (3/1 gaps, 4000-column blocks) 1.23x faster than
/// rows allocated one by one, related DNA 20000² 1.07x, related DNA 40000²
/// 1.01x and random DNA 60000² 1.03x, proteins 1.01–1.03x (paired medians
/// of 7 to 15 alternating runs).
const STAGGER: usize = 1024;

/// Vectors of `size` bytes from the start of one row of a pass to the
/// next in their allocation: at least `segs`, and a whole number of
/// vectors whose bytes are [`STAGGER`] modulo 4 KiB.
fn staggered_stride(segs: usize, size: usize) -> usize {
    let size = size.max(1);
    let pad = (STAGGER + 4096 - segs * size % 4096) % 4096 / size;
    segs + pad
}

#[cfg(test)]
mod tests {
    use super::{staggered_stride, Lanes, STAGGER};

    /// `Decay` takes any loss off every value a lane holds, down to 0,
    /// around the amounts one step subtracts and the lanes' range.
    fn check_decay<L: Lanes>(l: L) {
        let a = L::AMOUNT_MAX;
        let values: Vec<i32> = [
            0,
            1,
            2,
            a - 1,
            a,
            a + 1,
            2 * a,
            2 * a + 1,
            L::MAX - 1,
            L::MAX,
        ]
        .into_iter()
        .filter(|&x| x <= L::MAX)
        .collect();
        let losses = [
            0,
            1,
            a - 1,
            a,
            a + 1,
            2 * a,
            2 * a + 1,
            3 * a,
            L::MAX,
            L::MAX + 1,
            i32::MAX,
        ];
        for loss in losses {
            let decay = super::Decay::new(l, loss);
            let v = l.build(|k| values[k % values.len()]);
            let out = decay.apply(l, v);
            for k in 0..L::N {
                let x = values[k % values.len()];
                let want = (i64::from(x) - i64::from(loss)).max(0);
                assert_eq!(
                    i64::from(l.lane(out, k)),
                    want,
                    "{x} - {loss}, {} lanes",
                    L::N
                );
            }
        }
    }

    #[test]
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    fn decay_takes_any_loss_off_every_lane_value() {
        use super::x86::{Sse41, Sse41U16, Sse41U8};
        match Sse41::detect() {
            Some(t) => {
                check_decay(Sse41U8(t));
                check_decay(Sse41U16(t));
            }
            None => eprintln!("no SSE4.1: Decay not checked"),
        }
    }

    /// `LaneScan` gives every lane the best of the lanes up to it, each
    /// less its distance times the decay, as the definition does lane by
    /// lane; `shift_up` (every shift the scan uses) moves lanes up over 0.
    fn check_lane_scan<L: Lanes>(l: L) {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |bound: i32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % (bound as u64 + 1)) as i32
        };
        let decays = [0, 1, 2, 7, L::AMOUNT_MAX, L::MAX / 3, L::MAX, i32::MAX];
        for round in 0..200 {
            let top = [3, 40, L::MAX][round % 3];
            let x: Vec<i32> = (0..L::N)
                .map(|k| if k == 0 { 0 } else { next(top) })
                .collect();
            let v = l.build(|k| x[k]);
            let mut shift = 1;
            while shift < L::N {
                let up = l.shift_up(v, shift);
                for k in 0..L::N {
                    let want = if k < shift { 0 } else { x[k - shift] };
                    assert_eq!(
                        l.lane(up, k),
                        want,
                        "shift {shift}, lane {k}, {} lanes",
                        L::N
                    );
                }
                shift *= 2;
            }
            for decay in decays {
                let scanned = super::LaneScan::new(l, decay).apply(l, v);
                for k in 0..L::N {
                    let want = (0..=k)
                        .map(|i| (i64::from(x[i]) - (k - i) as i64 * i64::from(decay)).max(0))
                        .max()
                        .unwrap_or(0);
                    assert_eq!(
                        i64::from(l.lane(scanned, k)),
                        want,
                        "decay {decay}, lane {k}, {} lanes, {x:?}",
                        L::N
                    );
                }
            }
        }
    }

    #[test]
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    fn lane_scan_is_the_prefix_maximum_on_every_instruction_set() {
        use super::x86::{Avx2, Avx2U16, Avx2U8, Avx512, Avx512U16, Avx512U8};
        use super::x86::{Sse41, Sse41U16, Sse41U8};
        let mut checked = 0;
        if let Some(t) = Sse41::detect() {
            check_lane_scan(Sse41U8(t));
            check_lane_scan(Sse41U16(t));
            checked += 1;
        }
        if let Some(t) = Avx2::detect() {
            check_lane_scan(Avx2U8(t));
            check_lane_scan(Avx2U16(t));
            checked += 1;
        }
        if let Some(t) = Avx512::detect() {
            check_lane_scan(Avx512U8(t));
            check_lane_scan(Avx512U16(t));
            checked += 1;
        }
        if checked < 3 {
            eprintln!("{checked} of 3 instruction sets on this CPU: the others not checked");
        }
    }

    #[test]
    fn staggered_rows_start_a_stagger_apart_in_every_page() {
        for size in [16, 32, 64] {
            for segs in (1..600).chain([4096 / size, 8000 / size, 65_536 / size]) {
                let stride = staggered_stride(segs, size);
                assert!(stride >= segs, "size {size}, segs {segs}");
                assert!(stride < segs + 4096 / size, "size {size}, segs {segs}");
                assert_eq!(stride * size % 4096, STAGGER, "size {size}, segs {segs}");
            }
        }
    }
}
