//! 16-bit passes over scores past the lanes' range, relative to a base.
//!
//! On related sequences the scores grow along the best path by about the
//! match score per row, and the cells beside the path follow them: past
//! row 40000 of a related DNA pair (match 2) every cell near the path is
//! above 65535, and a plain 16-bit pass cannot hold it. But a tile's
//! values span far less than their size: the tile's boundary bounds
//! them from below. So the pass runs on `H - base` instead of `H`:
//!
//! 1. **A window of rows.** A pass takes at most `window` rows from
//!    `start`: as many as scores growing by the highest substitution
//!    score a row can climb in half the lanes' range (16383 for match 2),
//!    so that what a pass sets up (its boundary's range, the shifts, the
//!    edges into the lanes) stays small next to its cells. Where that is
//!    fewer than [`MIN_WINDOW`] rows no pass is worth it.
//! 2. **A floor for the window.** Every cell gains at least the lowest
//!    substitution score over its diagonal neighbour (`H >= diag + s`,
//!    whatever the clamp at 0 and the gaps add), and a chain of
//!    `min(i, j)` diagonal steps back from cell `(i, j)` reaches the
//!    boundary: the row above the window, the left edge of its rows or the
//!    corner. So every `H` of the window is at least `low = min(boundary
//!    H) - loss * min(rows, w)`, with `loss` the most a cell loses, and
//!    every gap state it computes (`E >= H_left - open`, `F >= H_up -
//!    open`) at least `low - open`.
//! 3. **The base.** `base = low - open - 1`, when that is positive: every
//!    `H`, `E` and `F` the window computes is above `base`.
//! 4. **The pass.** The boundary is shifted by `-base` (values below `base`
//!    enter the lanes clamped at 0: only gap states can, since every
//!    boundary `H` is above the base), the 16-bit pass runs as usual, and
//!    the rows it finished are shifted back. The lanes clamp at `base`
//!    where Smith-Waterman clamps at 0. No `H` reaches that clamp (step
//!    3), and a gap state that entered clamped only ever meets, in a
//!    maximum, an `H - open` term that is larger: so every value that
//!    leaves the pass is exact. The pass stops where values outgrow the
//!    lanes above the base, as a plain pass does.
//! 5. **Again.** The next pass starts from the rows done, with a base from
//!    the new boundary, while the boundary's spread above the base leaves
//!    half the lanes' range for the scores to grow into (which is what
//!    step 1 counted on). Otherwise the rows left go to 32-bit lanes.
//!
//! The best cell of a pass is found relative to the base too, from 0: the
//! caller's best is offered it afterwards: the caller's order decides
//! between cells of equal score, as in a single pass.

use super::x86::{self, Tokens};
use super::Scores;
use crate::sw::best::Best;
use crate::sw::kernel::best_so_far::BestSoFar;
use crate::sw::kernel::reduce;
use crate::sw::kernel::{Bits, Gaps, TileIo};

/// Fewest rows worth a pass (step 1 of the module docs).
const MIN_WINDOW: usize = 64;

/// Runs rows `start..` of `io` (below `corner`) by 16-bit passes relative
/// to a base (see the module docs), and returns how many rows of the tile
/// are done and the `H` above the first row not done, like
/// [`super::run`]. Does nothing when no base is worth it.
pub(crate) fn run(
    tokens: Tokens,
    scores: &Scores,
    gaps: Gaps,
    io: &mut TileIo<'_>,
    (mut start, mut corner): (usize, i32),
    best: &mut BestSoFar,
) -> (usize, i32) {
    let room = x86::sixteen_bit_limit(scores);
    let window = usize::try_from(room / 2 / scores.top.max(1)).unwrap_or(0);
    if window < MIN_WINDOW {
        return (start, corner);
    }
    let rows = io.a.len();
    while start < rows {
        let end = rows.min(start + window);
        let mut pass = TileIo {
            a: &io.a[..end],
            b: io.b,
            top_h: &mut *io.top_h,
            top_f: &mut *io.top_f,
            left_h: &mut io.left_h[..end],
            left_e: &mut io.left_e[..end],
            corner,
            row0: io.row0,
            col0: io.col0,
        };
        let Some(base) = base(scores, gaps, &pass, start, corner) else {
            break;
        };
        shift(&mut pass, start, -base);
        let mut pass_best = BestSoFar::new(Best::zero_at(io.row0 + start, io.col0), best.order);
        let (done, pass_corner) = x86::run(
            tokens,
            Bits::Sixteen,
            scores,
            gaps,
            &mut pass,
            (start, corner - base),
            &mut pass_best,
        );
        shift(&mut pass, start, base);
        if pass_best.score() > 0 {
            best.offer(Best {
                score: pass_best.score() + base,
                ..pass_best.best
            });
        }
        if done == start {
            break;
        }
        (start, corner) = (done, pass_corner + base);
    }
    (start, corner)
}

/// The base of a pass over rows `start..` of `io` (steps 2, 3 and 5 of
/// the module docs), or `None` where none is worth it.
fn base(scores: &Scores, gaps: Gaps, io: &TileIo<'_>, start: usize, corner: i32) -> Option<i32> {
    let rows = io.a.len() - start;
    let (lowest, highest) = reduce::range([io.top_h, &io.left_h[start..]], corner);
    let loss = i64::from(-scores.low);
    let steps = rows.min(io.b.len()) as i64;
    let base = i64::from(lowest) - loss * steps - i64::from(gaps.open) - 1;
    let room = i64::from(x86::sixteen_bit_limit(scores));
    let worth_it = base > 0 && i64::from(highest) - base <= room / 2;
    // Below `lowest`, so it fits.
    i32::try_from(base).ok().filter(|_| worth_it)
}

/// Adds `by` to the boundary of rows `start..`: the row above the tile,
/// and the left edge from row `start` (the rows above it already hold the
/// tile's right edge).
fn shift(io: &mut TileIo<'_>, start: usize, by: i32) {
    for edge in [
        &mut *io.top_h,
        &mut *io.top_f,
        &mut io.left_h[start..],
        &mut io.left_e[start..],
    ] {
        for x in edge.iter_mut() {
            *x += by;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sw::kernel::best_so_far::Order;
    use crate::sw::kernel::{run_tile, Isa, Kernel};
    use crate::sw::random::{mutated, random_dna, random_protein};
    use crate::sw::Scoring;

    /// A tile's boundary: `H` and the gap states above it and to its left,
    /// and the corner.
    #[derive(Clone, PartialEq, Debug)]
    struct Boundary {
        top_h: Vec<i32>,
        top_f: Vec<i32>,
        left_h: Vec<i32>,
        left_e: Vec<i32>,
        corner: i32,
    }

    impl Boundary {
        /// Values from `level` to `level + spread`, scattered.
        fn scattered(rows: usize, cols: usize, level: i32, spread: usize) -> Boundary {
            let at = |k: usize| level + ((k * 7919) % spread) as i32;
            Boundary {
                top_h: (0..cols).map(at).collect(),
                top_f: (0..cols).map(|k| at(k + 3) - 3).collect(),
                left_h: (0..rows).map(|k| at(k + 11)).collect(),
                left_e: (0..rows).map(|k| at(k + 5) - 2).collect(),
                corner: level,
            }
        }

        fn io<'a>(&'a mut self, a: &'a [u8], b: &'a [u8]) -> TileIo<'a> {
            TileIo {
                a,
                b,
                top_h: &mut self.top_h,
                top_f: &mut self.top_f,
                left_h: &mut self.left_h,
                left_e: &mut self.left_e,
                corner: self.corner,
                row0: 100,
                col0: 200,
            }
        }
    }

    /// Runs the tile by offset passes alone on every instruction set the
    /// CPU has, checks that they finish it, and that they give the 32-bit
    /// engine's edges and best cell.
    fn check(scoring: &Scoring, a: &[u8], b: &[u8], boundary: &Boundary) {
        let mut want_edges = boundary.clone();
        let want = run_tile(Kernel::Portable, scoring, want_edges.io(a, b));
        let gaps = Gaps {
            open: scoring.gap_open(),
            extend: scoring.gap_extend(),
        };
        let scores = Scores::new(scoring, a, b);
        let mut checked = 0;
        for tokens in Isa::ALL.into_iter().filter_map(Isa::tokens) {
            let mut edges = boundary.clone();
            let mut got = BestSoFar::new(Best::zero_at(100, 200), Order::Rows);
            let corner = edges.corner;
            let mut io = edges.io(a, b);
            let (done, last_left) = run(tokens, &scores, gaps, &mut io, (0, corner), &mut got);
            assert_eq!(done, a.len(), "{tokens:?}: the offset passes stopped");
            // The corner for whoever would go on: the last row's left edge.
            assert_eq!(
                last_left,
                boundary.left_h[a.len() - 1],
                "{tokens:?}: corner"
            );
            assert_eq!(got.best, want, "{tokens:?}: best cell");
            edges.corner = want_edges.corner;
            assert_eq!(edges, want_edges, "{tokens:?}: edges");
            checked += 1;
        }
        assert!(checked > 0 || !Isa::Sse41.available());
    }

    /// Tiles whose boundary lies far above what 16-bit lanes hold.
    #[test]
    fn passes_above_the_lanes_range_equal_the_wide_engine() {
        let dna = Scoring::match_mismatch(2, -1, 3, 1).unwrap();
        let protein = Scoring::blosum62(11, 1).unwrap();
        let a = random_dna(300, 7);
        let related = mutated(&a, 4, 0.1, 8);
        let pairs = [
            (&dna, a.clone(), random_dna(700, 9)),
            (&dna, a, related),
            (&protein, random_protein(300, 10), random_protein(500, 11)),
        ];
        for (scoring, a, b) in &pairs {
            for level in [1 << 17, 1 << 20, 70_000, 30_000] {
                check(
                    scoring,
                    a,
                    b,
                    &Boundary::scattered(a.len(), b.len(), level, 1500),
                );
            }
        }
    }

    /// Identical sequences whose scores grow by 100 a row: each pass
    /// takes a window of 327 rows and the next starts from a new base.
    /// With a left edge above the rows (growing by 50 a row), the
    /// corner each pass starts from decides column 0 where `a` matches
    /// `b[0]`.
    #[test]
    fn fast_growing_scores_take_several_passes() {
        let scoring = Scoring::match_mismatch(100, -1, 3, 1).unwrap();
        let a = random_dna(2500, 12);
        let b: Vec<u8> = a[..150].to_vec();
        let flat = Boundary::scattered(a.len(), b.len(), 80_000, 40);
        check(&scoring, &a, &b, &flat);
        let mut high_left = flat.clone();
        for (i, h) in high_left.left_h.iter_mut().enumerate() {
            *h += 5_000 + 50 * i as i32;
        }
        check(&scoring, &a, &b, &high_left);
    }

    /// Scores growing by more than 511 a row leave windows of fewer than
    /// 64 rows: no pass runs, and the 32-bit engine takes the rows.
    #[test]
    fn no_pass_for_scores_that_outgrow_small_windows() {
        let scoring = Scoring::match_mismatch(600, -1, 3, 1).unwrap();
        let gaps = Gaps { open: 3, extend: 1 };
        let (a, b) = (random_dna(200, 3), random_dna(100, 4));
        let scores = Scores::new(&scoring, &a, &b);
        let mut edges = Boundary::scattered(a.len(), b.len(), 80_000, 40);
        let before = edges.clone();
        if let Some(tokens) = Isa::ALL.into_iter().find_map(Isa::tokens) {
            let mut best = BestSoFar::new(Best::zero_at(100, 200), Order::Rows);
            let mut io = edges.io(&a, &b);
            let done = run(tokens, &scores, gaps, &mut io, (0, 80_000), &mut best);
            assert_eq!(done, (0, 80_000));
            assert_eq!(best.best, Best::zero_at(100, 200));
            assert_eq!(edges, before);
        }
    }

    /// Every pair a mismatch below a flat boundary: the values fall by 1 a
    /// row down the diagonal, to the floor of step 1 at the far corner,
    /// and the gap states leaving it lie 2 below that. The gap states
    /// entering the tile lie far below the base (0), so the pass clamps
    /// them.
    #[test]
    fn the_floor_is_reached_exactly() {
        let scoring = Scoring::match_mismatch(2, -1, 3, 1).unwrap();
        for (rows, cols) in [(200, 200), (90, 300), (300, 90)] {
            let (a, b) = (vec![0u8; rows], vec![1u8; cols]);
            let level = 100_000;
            let boundary = Boundary {
                top_h: vec![level; cols],
                top_f: vec![0; cols],
                left_h: vec![level; rows],
                left_e: vec![0; rows],
                corner: level,
            };
            check(&scoring, &a, &b, &boundary);
        }
    }

    #[test]
    fn no_base_below_the_boundarys_floor() {
        let scoring = Scoring::match_mismatch(2, -1, 3, 1).unwrap();
        let gaps = Gaps { open: 3, extend: 1 };
        let (a, b) = (random_dna(64, 1), random_dna(100, 2));
        let scores = Scores::new(&scoring, &a, &b);
        // Lowest H 70000, at most 64 diagonal steps losing 1, a gap open
        // of 3: every state stays above 70000 - 64 - 3 - 1.
        let mut high = Boundary::scattered(a.len(), b.len(), 70_000, 1000);
        assert_eq!(
            base(&scores, gaps, &high.io(&a, &b), 0, 70_000),
            Some(70_000 - 64 - 4)
        );
        // Rows below `start` hold the right edge, not the boundary.
        let mut low_above = high.clone();
        low_above.left_h[..10].fill(0);
        assert_eq!(
            base(&scores, gaps, &low_above.io(&a, &b), 10, 70_000),
            Some(70_000 - 54 - 4)
        );
        // A boundary that reaches 0 leaves no base.
        let mut low = Boundary::scattered(a.len(), b.len(), 70_000, 1000);
        low.top_h[50] = 5;
        assert_eq!(base(&scores, gaps, &low.io(&a, &b), 0, 70_000), None);
        // A boundary spread over more than half the lanes' range neither.
        let mut wide = Boundary::scattered(a.len(), b.len(), 70_000, 1000);
        wide.left_h[3] = 70_000 + 40_000;
        assert_eq!(base(&scores, gaps, &wide.io(&a, &b), 0, 70_000), None);
    }
}
