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
//!   8 bits, then 16, then the 32-bit strip engine.
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

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx2;
mod scalar;
mod strip;
mod striped;

/// Bound on substitution types usable by every compiled engine.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use avx2::VecSubst as EngineSubst;
#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
use Subst as EngineSubst;

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
pub(crate) fn run_tile(kernel: Kernel, scoring: &Scoring, io: TileIo<'_>) -> Best {
    let gaps = Gaps {
        open: scoring.gap_open(),
        extend: scoring.gap_extend(),
    };
    match scoring.substitution() {
        Substitution::MatchMismatch {
            matched,
            mismatched,
        } => {
            let s = MatchMismatch {
                matched: *matched,
                mismatched: *mismatched,
            };
            run_with(kernel, scoring, s, gaps, io)
        }
        Substitution::Matrix(m) => run_with(kernel, scoring, Matrix { table: m.table() }, gaps, io),
    }
}

fn run_with<S: EngineSubst>(
    kernel: Kernel,
    scoring: &Scoring,
    s: S,
    gaps: Gaps,
    mut io: TileIo<'_>,
) -> Best {
    let mut best = Best::zero_at(io.row0, io.col0);
    let mut narrow = (0, io.corner);
    let wide = match kernel.resolve() {
        Kernel::Scalar => None,
        Kernel::Portable => Some(false),
        Kernel::Avx2Wide => Some(true),
        Kernel::Striped(isa, bits) => {
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            if let Some(tokens) = isa.tokens() {
                let widths: &[Bits] = match bits {
                    Bits::Eight => &[Bits::Eight, Bits::Sixteen],
                    Bits::Sixteen => &[Bits::Sixteen],
                };
                // One table for every width: the codes of all the rows are
                // a superset of those of the rows a wider pass resumes at.
                let scores = striped::Scores::new(scoring, io.a, io.b);
                for &width in widths {
                    narrow =
                        striped::x86::run(tokens, width, &scores, gaps, &mut io, narrow, &mut best);
                }
            }
            #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
            let _ = (isa, bits);
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
