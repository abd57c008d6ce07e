//! [`Lanes`] on x86: 8- and 16-bit lanes with SSE4.1 (128-bit vectors),
//! AVX2 (256) and AVX-512BW (512), and the entry points that compile the
//! striped engine for each.
//!
//! # Representation
//!
//! A lane holds the value `x` (`0..=MAX`) as the signed integer
//! `x - 2^(bits - 1)`: `x` with its top bit flipped. Signed saturating
//! arithmetic then clamps at both ends of the value range, so adding a
//! signed substitution score is one instruction that also applies
//! Smith-Waterman's clamp at 0, and a subtraction stops at 0 as well.
//! Signed comparisons order the values.
//!
//! # Soundness
//!
//! An instruction-set token ([`Sse41`], [`Avx2`], [`Avx512`]) can only be
//! made by its `detect`, after `is_x86_feature_detected!` said the CPU has
//! the instructions, and a lane type can only be made from its token. So a
//! method of a lane type runs only where its intrinsics are available,
//! which is the one precondition of those intrinsics when they touch no
//! memory (all of them here but the whole-vector transmutes, the
//! gathers and masked stores of the edges on AVX-512, and the unaligned
//! loads and stores of the transposes in `transpose.rs`, whose bounds the
//! next section and their `SAFETY` comments argue). The methods
//! are `#[inline(always)]`; the `run_*` entry points have the matching
//! `#[target_feature]`, so once inlined into them every intrinsic is one
//! instruction.

//!
//! # Edges by transposes and gathers
//!
//! A tile's edges go into and out of the lane layout ([`Lanes::stripe`],
//! [`Lanes::unstripe`]) by 16 x 16 transposes of 16-bit words on AVX2
//! (see `transpose`) and by gathers on AVX-512: there each vector of the
//! striped edge is one gather per 16 columns, each run of one lane's
//! columns in the linear edge one gather of words of the striped vectors
//! (shifted and masked to the lane). A one-row tile of 2528 columns on
//! 16-bit AVX-512 lanes, which costs little besides its edges, took 7.4 µs
//! with them converted lane by lane (two of its four conversions alone,
//! 2.4 µs) and 4.0 µs by gathers. On AVX2 a Zen 3 core ran the gathers
//! and their masked stores slowly: an edge of 4000 columns went in (out)
//! in 1.8–1.9 (3.6–4.4) µs by gathers and in 1.0 by transposes, on 8- and
//! 16-bit lanes alike. These methods use no closures: a closure is a
//! function of its own, without the `target_feature` of the `run_*` it is
//! called from, so the intrinsics in it do not inline (with the vectors
//! built in a `map`, that tile took 21 µs).

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::{Lanes, Scores, TileIo, LOOKUP_CODES};
use crate::sw::kernel::best_so_far::BestSoFar;
use crate::sw::kernel::{Bits, Gaps};
use lookup::ShuffleLookup;

mod lookup;
mod transpose;

/// Proof that the CPU has SSE4.1.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sse41(());
/// Proof that the CPU has AVX2.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(());
/// Proof that the CPU has AVX-512F and AVX-512BW.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx512(());

impl Sse41 {
    /// `Some` iff the CPU has SSE4.1.
    pub(crate) fn detect() -> Option<Self> {
        is_x86_feature_detected!("sse4.1").then_some(Sse41(()))
    }
}

impl Avx2 {
    /// `Some` iff the CPU has AVX2.
    pub(crate) fn detect() -> Option<Self> {
        is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }
}

impl Avx512 {
    /// `Some` iff the CPU has AVX-512F and AVX-512BW.
    pub(crate) fn detect() -> Option<Self> {
        (is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw"))
            .then_some(Avx512(()))
    }
}

/// Columns below which [`eight_bit_tokens`] moves an 8-bit pass from
/// AVX-512 to AVX2 on a CPU that runs 512-bit operations in two halves:
/// 64 vectors of 64 lanes.
pub(crate) const NARROW_EIGHT_BIT_COLS: usize = 4096;

/// The instruction set of an 8-bit pass of `Kernel::Auto` over `cols`
/// columns: `tokens`, except AVX2 for fewer than
/// [`NARROW_EIGHT_BIT_COLS`] columns where AVX-512 runs on 256-bit
/// halves ([`avx512_in_halves`]).
///
/// This was measured when each row of a striped pass also paid Farrar's
/// lazy gap pass besides its vectors: on 8-bit lanes about 13 segments a
/// row at any width (the gaps leaving the lanes lose `extend` a segment
/// until the main loop's dominate), 40% more work on a row of 2016
/// columns in 32 vectors of 64 lanes. AVX2's 32 lanes make rows of twice
/// the vectors, whose gaps cross fewer lane boundaries, and where a
/// 512-bit operation costs two 256-bit ones they compute as fast. The
/// rows now carry those gaps into the next row at a fixed cost a segment
/// (`Carry` in [`super`]), and the choice has not been measured
/// again on a Zen 4. On a 2-core Zen 4, random proteins (BLOSUM62 11/1)
/// ran in hcmpi's 2016- and 2528-column tiles 1.02–1.12x faster at 1x2
/// and 1.05–1.15x at 2x1 (paired medians of 15 and 21 runs, 5000² and
/// 10000²), related proteins and DNA within 1%. Where 512-bit operations are whole, AVX-512
/// computes a row's vectors in half the time and keeps them.
pub(crate) fn eight_bit_tokens(tokens: Tokens, cols: usize) -> Tokens {
    match tokens {
        Tokens::Avx512(_) if cols < NARROW_EIGHT_BIT_COLS && avx512_in_halves() => {
            Avx2::detect().map_or(tokens, Tokens::Avx2)
        }
        _ => tokens,
    }
}

/// Whether this CPU executes 512-bit operations as two 256-bit halves:
/// AMD's family 19h (Zen 4, the first of its cores with AVX-512; Zen 3,
/// the same family, has none). Read once, from CPUID leaves 0 and 1
/// (AMD64 Architecture Programmer's Manual, vol. 3, appendix E.3.1: the
/// family is the base family plus the extended one when the base is
/// 0Fh).
fn avx512_in_halves() -> bool {
    static IN_HALVES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *IN_HALVES.get_or_init(|| {
        let vendor = __cpuid(0);
        let amd = (vendor.ebx, vendor.edx, vendor.ecx) == (0x6874_7541, 0x6974_6e65, 0x444d_4163);
        let signature = __cpuid(1).eax;
        let base = (signature >> 8) & 0xF;
        let family = if base == 0xF {
            base + ((signature >> 20) & 0xFF)
        } else {
            base
        };
        amd && family == 0x19
    })
}

/// Defines a lane type over a token; the operations common to all
/// instruction sets come from the intrinsics named here, the three that
/// differ (`shift_in`, `any_gt`, `first_eq`) from `$isa_ops`. `$elem` is
/// a lane's storage type, `$signed` the signed integer of the same width.
macro_rules! lanes {
    (
        $(#[$doc:meta])*
        $name:ident($token:ty): $vec:ty, $elem:ty, $signed:ty, $n:literal;
        set1 $set1:ident, adds $adds:ident, subs $subs:ident, max $max:ident,
        min $min:ident, $isa_ops:ident
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub(crate) struct $name(#[allow(dead_code)] pub(crate) $token);

        impl $name {
            /// The top bit of a lane: value `x` is stored as `x ^ SIGN`.
            const SIGN: $elem = <$signed>::MIN as $elem;
        }

        impl Lanes for $name {
            type V = $vec;
            type E = $elem;
            const N: usize = $n;
            const MAX: i32 = <$elem>::MAX as i32;
            const AMOUNT_MAX: i32 = <$signed>::MAX as i32;

            #[inline(always)]
            fn splat(self, x: i32) -> $vec {
                // SAFETY: the token proves the instruction set (module docs);
                // register-only. The cast keeps the lane's bit pattern.
                unsafe { $set1(Self::elem(x) as _) }
            }
            #[inline(always)]
            fn amount(self, x: i32) -> $vec {
                debug_assert!((0..=Self::AMOUNT_MAX).contains(&x));
                // SAFETY: as in `splat`.
                unsafe { $set1(x as $elem as _) }
            }
            #[inline(always)]
            fn build(self, mut f: impl FnMut(usize) -> i32) -> $vec {
                let lanes: [$elem; $n] = std::array::from_fn(|k| Self::elem(f(k)));
                // SAFETY: same size, and every bit pattern is valid for both.
                unsafe { std::mem::transmute::<[$elem; $n], $vec>(lanes) }
            }
            #[inline(always)]
            fn lane(self, v: $vec, k: usize) -> i32 {
                // SAFETY: same size, and every bit pattern is valid for both.
                let lanes = unsafe { std::mem::transmute::<$vec, [$elem; $n]>(v) };
                Self::value(lanes[k])
            }
            #[inline(always)]
            fn elem(x: i32) -> $elem {
                debug_assert!((0..=Self::MAX).contains(&x));
                x as $elem ^ Self::SIGN
            }
            #[inline(always)]
            fn value(e: $elem) -> i32 {
                i32::from(e ^ Self::SIGN)
            }
            #[inline(always)]
            fn score(s: i32) -> $elem {
                debug_assert!((-Self::AMOUNT_MAX - 1..=Self::AMOUNT_MAX).contains(&s));
                s as $signed as $elem
            }
            #[inline(always)]
            fn load(self, lanes: &[$elem]) -> $vec {
                let lanes: [$elem; $n] = lanes[..$n].try_into().expect("N lanes");
                // SAFETY: same size, and every bit pattern is valid for both.
                unsafe { std::mem::transmute::<[$elem; $n], $vec>(lanes) }
            }
            #[inline(always)]
            fn store(self, v: $vec, out: &mut [$elem]) {
                // SAFETY: same size, and every bit pattern is valid for both.
                let lanes = unsafe { std::mem::transmute::<$vec, [$elem; $n]>(v) };
                out[..$n].copy_from_slice(&lanes);
            }
            #[inline(always)]
            fn hmax(self, v: $vec) -> i32 {
                // SAFETY: same size, and every bit pattern is valid for both.
                let lanes = unsafe { std::mem::transmute::<$vec, [$elem; $n]>(v) };
                lanes.into_iter().map(Self::value).max().unwrap_or(0)
            }
            #[inline(always)]
            fn add_score(self, a: $vec, s: $vec) -> $vec {
                // SAFETY: the token proves the instruction set; register-only.
                unsafe { $adds(a, s) }
            }
            #[inline(always)]
            fn subs(self, a: $vec, b: $vec) -> $vec {
                // SAFETY: the token proves the instruction set; register-only.
                unsafe { $subs(a, b) }
            }
            #[inline(always)]
            fn max(self, a: $vec, b: $vec) -> $vec {
                // SAFETY: the token proves the instruction set; register-only.
                unsafe { $max(a, b) }
            }
            #[inline(always)]
            fn min(self, a: $vec, b: $vec) -> $vec {
                // SAFETY: the token proves the instruction set; register-only.
                unsafe { $min(a, b) }
            }
            $isa_ops!($vec, $elem);
        }
    };
}

/// `shift_in`, `any_gt`, `first_eq` for 128-bit vectors.
macro_rules! sse_ops {
    ($vec:ty, $elem:ty) => {
        #[inline(always)]
        fn shift_in(self, v: $vec, x: i32) -> $vec {
            let fill = self.splat(x);
            // SAFETY: the token proves SSE4.1 (hence SSSE3); register-only.
            // Bytes 16 - size.. of `fill` then bytes ..16 - size of `v`.
            unsafe { _mm_alignr_epi8::<{ 16 - size_of::<$elem>() as i32 }>(v, fill) }
        }
        #[inline(always)]
        fn shift_up(self, v: $vec, lanes: usize) -> $vec {
            let fill = self.splat(0);
            // SAFETY: as in `shift_in`: the bytes of `fill` under those of
            // `v`, moved up by the shift's bytes.
            unsafe {
                match lanes * size_of::<$elem>() {
                    1 => _mm_alignr_epi8::<15>(v, fill),
                    2 => _mm_alignr_epi8::<14>(v, fill),
                    4 => _mm_alignr_epi8::<12>(v, fill),
                    8 => _mm_alignr_epi8::<8>(v, fill),
                    _ => unreachable!("a shift of {lanes} lanes"),
                }
            }
        }
        #[inline(always)]
        fn any_gt(self, a: $vec, b: $vec) -> bool {
            self.gt_mask(a, b) != 0
        }
        #[inline(always)]
        fn first_eq(self, a: $vec, b: $vec) -> Option<usize> {
            let m = self.first_eq_mask(a, b);
            (m != 0).then(|| m.trailing_zeros() as usize / size_of::<$elem>())
        }
        #[inline(always)]
        fn lookup_row(self, codes: &[u8], table: &[$elem; LOOKUP_CODES], out: &mut Vec<$vec>) {
            ShuffleLookup::<$elem>::lookup_row(self.0, codes, table, out);
        }
    };
}

/// `shift_in`, `any_gt`, `first_eq`, `lookup_row` by shuffles, and `stripe`
/// and `unstripe` by transposes, for 256-bit vectors.
macro_rules! avx2_ops {
    ($vec:ty, $elem:ty) => {
        #[inline(always)]
        fn shift_in(self, v: $vec, x: i32) -> $vec {
            let fill = self.splat(x);
            // SAFETY: the token proves AVX2; register-only. `below` holds
            // `fill` in the low half and the low half of `v` in the high
            // half, so the per-half byte shift brings lane N/2 - 1 into lane
            // N/2 and `x` into lane 0.
            unsafe {
                let below = _mm256_permute2x128_si256::<0x02>(v, fill);
                _mm256_alignr_epi8::<{ 16 - size_of::<$elem>() as i32 }>(v, below)
            }
        }
        #[inline(always)]
        fn shift_up(self, v: $vec, lanes: usize) -> $vec {
            let fill = self.splat(0);
            // SAFETY: as in `shift_in`, with the per-half shift by the
            // shift's bytes; 16 bytes are `below` itself.
            unsafe {
                let below = _mm256_permute2x128_si256::<0x02>(v, fill);
                match lanes * size_of::<$elem>() {
                    1 => _mm256_alignr_epi8::<15>(v, below),
                    2 => _mm256_alignr_epi8::<14>(v, below),
                    4 => _mm256_alignr_epi8::<12>(v, below),
                    8 => _mm256_alignr_epi8::<8>(v, below),
                    16 => below,
                    _ => unreachable!("a shift of {lanes} lanes"),
                }
            }
        }
        #[inline(always)]
        fn any_gt(self, a: $vec, b: $vec) -> bool {
            self.gt_mask(a, b) != 0
        }
        #[inline(always)]
        fn first_eq(self, a: $vec, b: $vec) -> Option<usize> {
            let m = self.first_eq_mask(a, b);
            (m != 0).then(|| m.trailing_zeros() as usize / size_of::<$elem>())
        }
        #[inline(always)]
        fn lookup_row(self, codes: &[u8], table: &[$elem; LOOKUP_CODES], out: &mut Vec<$vec>) {
            ShuffleLookup::<$elem>::lookup_row(self.0, codes, table, out);
        }
        #[inline(always)]
        fn stripe(self, edge: &[i32], out: &mut [$vec]) {
            transpose::stripe(self.0, size_of::<$elem>(), edge, out)
        }
        #[inline(always)]
        fn unstripe(self, vectors: &[$vec], edge: &mut [i32]) {
            transpose::unstripe(self.0, size_of::<$elem>(), vectors, edge)
        }
    };
}

/// `shift_in`, `any_gt`, `first_eq`, `lookup_row` by shuffles, and `stripe`
/// and `unstripe` by gathers, for 512-bit vectors.
macro_rules! avx512_ops {
    ($vec:ty, $elem:ty) => {
        #[inline(always)]
        fn shift_in(self, v: $vec, x: i32) -> $vec {
            let fill = self.splat(x);
            // SAFETY: the token proves AVX-512F/BW; register-only. `below`
            // is `v` moved up by one 128-bit block with `fill` under it, so
            // the per-block byte shift brings each block's top lane into the
            // next block and `x` into lane 0.
            unsafe {
                let below = _mm512_alignr_epi64::<6>(v, fill);
                _mm512_alignr_epi8::<{ 16 - size_of::<$elem>() as i32 }>(v, below)
            }
        }
        #[inline(always)]
        fn shift_up(self, v: $vec, lanes: usize) -> $vec {
            let fill = self.splat(0);
            // SAFETY: as in `shift_in`, with the per-block shift by the
            // shift's bytes; whole blocks (16 bytes, 32) move by 64-bit
            // words alone.
            unsafe {
                let below = _mm512_alignr_epi64::<6>(v, fill);
                match lanes * size_of::<$elem>() {
                    1 => _mm512_alignr_epi8::<15>(v, below),
                    2 => _mm512_alignr_epi8::<14>(v, below),
                    4 => _mm512_alignr_epi8::<12>(v, below),
                    8 => _mm512_alignr_epi8::<8>(v, below),
                    16 => below,
                    32 => _mm512_alignr_epi64::<4>(v, fill),
                    _ => unreachable!("a shift of {lanes} lanes"),
                }
            }
        }
        #[inline(always)]
        fn any_gt(self, a: $vec, b: $vec) -> bool {
            self.gt_mask(a, b) != 0
        }
        #[inline(always)]
        fn first_eq(self, a: $vec, b: $vec) -> Option<usize> {
            let m = self.eq_mask(a, b);
            (m != 0).then(|| m.trailing_zeros() as usize)
        }
        #[inline(always)]
        fn lookup_row(self, codes: &[u8], table: &[$elem; LOOKUP_CODES], out: &mut Vec<$vec>) {
            ShuffleLookup::<$elem>::lookup_row(self.0, codes, table, out);
        }
        #[inline(always)]
        fn stripe(self, edge: &[i32], out: &mut [$vec]) {
            stripe_by_gathers(self, self.0, edge, out)
        }
        #[inline(always)]
        fn unstripe(self, vectors: &[$vec], edge: &mut [i32]) {
            unstripe_by_gathers(self, self.0, vectors, edge);
        }
    };
}

/// Whether the gathers of `stripe` and `unstripe` can address an edge of
/// `w` columns in `segs` vectors of `n` lanes (`0 < w <= n * segs`) with
/// 32-bit indices: every index they use, column or 32-bit word, is below
/// `n * segs`, and the `i32` arithmetic on them (one step past the last,
/// too) stays below `n * (segs + 1)`. Every tile fits; the limit is for
/// edges of a billion columns.
#[inline(always)]
fn gathers_fit(w: usize, segs: usize, n: usize) -> bool {
    let all = n.checked_mul(segs + 1);
    w > 0 && w <= n * segs && all.is_some_and(|all| all <= i32::MAX as usize)
}

/// The 32-bit words of AVX-512 vectors, from which `unstripe` gathers one
/// lane of consecutive vectors at a time.
trait LaneGathers: Copy {
    /// Words per vector.
    const WORDS: usize;
    /// A vector of words.
    type Words: Copy;

    /// Column `k * segs + s` of `edge`, clamped at 0, in word `t` for the
    /// lanes `k = part * WORDS + t`; 0 where that column is past the end.
    /// (No closure calls this: the intrinsics would not inline.)
    ///
    /// # Safety
    ///
    /// `s < segs` and `(part + 1) * WORDS * (segs + 1) <= i32::MAX`, as
    /// [`gathers_fit`] ensures for every part of a vector.
    unsafe fn gather_columns(self, edge: &[i32], segs: usize, s: usize, part: usize)
        -> Self::Words;

    /// Vector `s` of `edge` striped over `segs` vectors of lanes `lane_bytes`
    /// wide (1 or 2; see [`super::stripe_by_lanes`]), each value stored with
    /// its top bit flipped.
    ///
    /// # Safety
    ///
    /// `s < segs` and [`gathers_fit`] for the lanes' count; every value
    /// of `edge` fits the lanes.
    unsafe fn striped_vector(
        self,
        edge: &[i32],
        segs: usize,
        s: usize,
        lane_bytes: usize,
    ) -> Self::Words;

    /// `out[t] = (base[first + t * WORDS] >> shift & low_bits) ^ sign`
    /// for `t < count`, where `count <= WORDS`; `out[count..]` untouched.
    ///
    /// # Safety
    ///
    /// Words `first + t * WORDS` for `t < count` lie in one initialized
    /// allocation at `base`, `out[..count]` is writable, and the indices
    /// fit `i32`.
    unsafe fn gather_lane(
        self,
        base: *const i32,
        first: usize,
        count: usize,
        lane: Lane,
        out: *mut i32,
    );
}

/// Where a lane sits in its 32-bit word, and how its value is stored.
#[derive(Clone, Copy)]
struct Lane {
    shift: i32,
    low_bits: i32,
    sign: i32,
}

impl LaneGathers for Avx512 {
    const WORDS: usize = 16;
    type Words = __m512i;

    #[inline(always)]
    unsafe fn gather_columns(self, edge: &[i32], segs: usize, s: usize, part: usize) -> __m512i {
        let first = (part * Self::WORDS * segs + s) as i32;
        // SAFETY: the token proves AVX-512F. Word `t` reads `edge[first +
        // t * segs]` only where that index is below `edge.len()` (`live`);
        // it is not negative, because the caller's `gathers_fit` keeps
        // every such index below `i32::MAX`.
        unsafe {
            let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            let idx = _mm512_add_epi32(
                _mm512_mullo_epi32(iota, _mm512_set1_epi32(segs as i32)),
                _mm512_set1_epi32(first),
            );
            let live = _mm512_cmplt_epi32_mask(idx, _mm512_set1_epi32(edge.len() as i32));
            let zero = _mm512_setzero_si512();
            let g = _mm512_mask_i32gather_epi32::<4>(zero, live, idx, edge.as_ptr().cast());
            _mm512_max_epi32(g, zero)
        }
    }

    #[inline(always)]
    unsafe fn striped_vector(
        self,
        edge: &[i32],
        segs: usize,
        s: usize,
        lane_bytes: usize,
    ) -> __m512i {
        // SAFETY: the caller's contract covers every part of the vector
        // (lanes below `N = 64 / lane_bytes`); the token proves AVX-512BW
        // for the register-only packing. The values fit the lanes:
        // truncation is exact.
        unsafe {
            let v = if lane_bytes == 2 {
                let low = _mm512_castsi256_si512(_mm512_cvtepi32_epi16(
                    self.gather_columns(edge, segs, s, 0),
                ));
                _mm512_inserti64x4::<1>(
                    low,
                    _mm512_cvtepi32_epi16(self.gather_columns(edge, segs, s, 1)),
                )
            } else {
                let v = _mm512_castsi128_si512(_mm512_cvtepi32_epi8(
                    self.gather_columns(edge, segs, s, 0),
                ));
                let v = _mm512_inserti32x4::<1>(
                    v,
                    _mm512_cvtepi32_epi8(self.gather_columns(edge, segs, s, 1)),
                );
                let v = _mm512_inserti32x4::<2>(
                    v,
                    _mm512_cvtepi32_epi8(self.gather_columns(edge, segs, s, 2)),
                );
                _mm512_inserti32x4::<3>(
                    v,
                    _mm512_cvtepi32_epi8(self.gather_columns(edge, segs, s, 3)),
                )
            };
            let sign = if lane_bytes == 2 {
                _mm512_set1_epi16(i16::MIN)
            } else {
                _mm512_set1_epi8(i8::MIN)
            };
            _mm512_xor_si512(v, sign)
        }
    }

    #[inline(always)]
    unsafe fn gather_lane(
        self,
        base: *const i32,
        first: usize,
        count: usize,
        lane: Lane,
        out: *mut i32,
    ) {
        let live: __mmask16 = match count {
            16.. => !0,
            count => (1 << count) - 1,
        };
        // SAFETY: the token proves AVX-512F; the gather reads, and the
        // masked store writes, only the `count` words live in `live`,
        // which the caller guarantees are in bounds.
        unsafe {
            let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            let step = _mm512_mullo_epi32(iota, _mm512_set1_epi32(Self::WORDS as i32));
            let idx = _mm512_add_epi32(step, _mm512_set1_epi32(first as i32));
            let g =
                _mm512_mask_i32gather_epi32::<4>(_mm512_setzero_si512(), live, idx, base.cast());
            let v = _mm512_srl_epi32(g, _mm_cvtsi32_si128(lane.shift));
            let v = _mm512_and_si512(v, _mm512_set1_epi32(lane.low_bits));
            _mm512_mask_storeu_epi32(
                out.cast(),
                live,
                _mm512_xor_si512(v, _mm512_set1_epi32(lane.sign)),
            );
        }
    }
}

/// [`Lanes::stripe`] by gathers of `g`, whose vectors are those of `l`:
/// each part of each striped vector is one gather from the linear edge.
#[inline(always)]
fn stripe_by_gathers<L: Lanes, G: LaneGathers<Words = L::V>>(
    l: L,
    g: G,
    edge: &[i32],
    out: &mut [L::V],
) {
    let (segs, lane_bytes) = (out.len(), size_of::<L::E>());
    if !gathers_fit(edge.len(), segs, L::N) || L::N * lane_bytes != 4 * G::WORDS {
        return super::stripe_by_lanes(l, edge, out);
    }
    for (s, v) in out.iter_mut().enumerate() {
        // SAFETY: `s < segs`, the edge fits the gathers, and its values fit
        // the lanes (`stripe`'s contract).
        *v = unsafe { g.striped_vector(edge, segs, s, lane_bytes) };
    }
}

/// [`Lanes::unstripe`] by gathers of `g`, whose vectors are those of `l`:
/// each run of one lane's columns in `edge` (at most `WORDS` at a time)
/// is one gather of that lane's 32-bit word from consecutive vectors.
#[inline(always)]
fn unstripe_by_gathers<L: Lanes, G: LaneGathers>(l: L, g: G, vectors: &[L::V], edge: &mut [i32]) {
    let segs = vectors.len();
    let (w, size) = (edge.len(), size_of::<L::E>());
    // Lanes per word; a vector is `WORDS` words.
    let per_word = 4 / size;
    if !gathers_fit(w, segs, L::N) || L::N * size != 4 * G::WORDS {
        return super::unstripe_by_lanes(l, vectors, edge);
    }
    let base = vectors.as_ptr().cast::<i32>();
    let low_bits = (1i32 << (8 * size)) - 1;
    for k in 0..L::N {
        let start = k * segs;
        if start >= w {
            break;
        }
        let count = segs.min(w - start);
        let lane = Lane {
            shift: (8 * size * (k % per_word)) as i32,
            low_bits,
            // A lane stores its value with the top bit flipped.
            sign: 1 << (8 * size - 1),
        };
        for s0 in (0..count).step_by(G::WORDS) {
            // SAFETY: `vectors` is `segs * WORDS` initialized words; lane
            // `k` of vector `s` is in word `s * WORDS + k / per_word`, read
            // for `s < s0 + min(WORDS, count - s0) <= segs` only, and
            // `edge[start + s]` is written for the same `s`, below `w`
            // (`start + count <= w`); `gathers_fit` keeps the indices in
            // `i32`.
            unsafe {
                g.gather_lane(
                    base,
                    s0 * G::WORDS + k / per_word,
                    G::WORDS.min(count - s0),
                    lane,
                    edge.as_mut_ptr().add(start + s0),
                );
            }
        }
    }
}

lanes! {
    /// 16 lanes of 8 bits in an SSE register.
    Sse41U8(Sse41): __m128i, u8, i8, 16;
    set1 _mm_set1_epi8, adds _mm_adds_epi8, subs _mm_subs_epi8, max _mm_max_epi8,
    min _mm_min_epi8, sse_ops
}
lanes! {
    /// 8 lanes of 16 bits in an SSE register.
    Sse41U16(Sse41): __m128i, u16, i16, 8;
    set1 _mm_set1_epi16, adds _mm_adds_epi16, subs _mm_subs_epi16, max _mm_max_epi16,
    min _mm_min_epi16, sse_ops
}
lanes! {
    /// 32 lanes of 8 bits in an AVX2 register.
    Avx2U8(Avx2): __m256i, u8, i8, 32;
    set1 _mm256_set1_epi8, adds _mm256_adds_epi8, subs _mm256_subs_epi8,
    max _mm256_max_epi8, min _mm256_min_epi8, avx2_ops
}
lanes! {
    /// 16 lanes of 16 bits in an AVX2 register.
    Avx2U16(Avx2): __m256i, u16, i16, 16;
    set1 _mm256_set1_epi16, adds _mm256_adds_epi16, subs _mm256_subs_epi16,
    max _mm256_max_epi16, min _mm256_min_epi16, avx2_ops
}
lanes! {
    /// 64 lanes of 8 bits in an AVX-512 register.
    Avx512U8(Avx512): __m512i, u8, i8, 64;
    set1 _mm512_set1_epi8, adds _mm512_adds_epi8, subs _mm512_subs_epi8,
    max _mm512_max_epi8, min _mm512_min_epi8, avx512_ops
}
lanes! {
    /// 32 lanes of 16 bits in an AVX-512 register.
    Avx512U16(Avx512): __m512i, u16, i16, 32;
    set1 _mm512_set1_epi16, adds _mm512_adds_epi16, subs _mm512_subs_epi16,
    max _mm512_max_epi16, min _mm512_min_epi16, avx512_ops
}

/// Byte masks of lane comparisons (one bit per byte, so `size` bits per
/// lane): equality, and signed greater-than, which orders the values.
macro_rules! byte_masks {
    ($name:ident, $vec:ty, $ret:ty, $cmpeq:ident, $cmpgt:ident, $movemask:ident) => {
        impl $name {
            #[inline(always)]
            fn first_eq_mask(self, a: $vec, b: $vec) -> $ret {
                // SAFETY: the token proves the instruction set; register-only.
                unsafe { $movemask($cmpeq(a, b)) as $ret }
            }
            #[inline(always)]
            fn gt_mask(self, a: $vec, b: $vec) -> $ret {
                // SAFETY: the token proves the instruction set; register-only.
                unsafe { $movemask($cmpgt(a, b)) as $ret }
            }
        }
    };
}
byte_masks!(
    Sse41U8,
    __m128i,
    u16,
    _mm_cmpeq_epi8,
    _mm_cmpgt_epi8,
    _mm_movemask_epi8
);
byte_masks!(
    Sse41U16,
    __m128i,
    u16,
    _mm_cmpeq_epi16,
    _mm_cmpgt_epi16,
    _mm_movemask_epi8
);
byte_masks!(
    Avx2U8,
    __m256i,
    u32,
    _mm256_cmpeq_epi8,
    _mm256_cmpgt_epi8,
    _mm256_movemask_epi8
);
byte_masks!(
    Avx2U16,
    __m256i,
    u32,
    _mm256_cmpeq_epi16,
    _mm256_cmpgt_epi16,
    _mm256_movemask_epi8
);

/// Lane masks of AVX-512 comparisons (one bit per lane).
macro_rules! lane_masks {
    ($name:ident, $cmpeq:ident, $cmpgt:ident) => {
        impl $name {
            #[inline(always)]
            fn eq_mask(self, a: __m512i, b: __m512i) -> u64 {
                // SAFETY: the token proves AVX-512BW; register-only.
                u64::from(unsafe { $cmpeq(a, b) })
            }
            #[inline(always)]
            fn gt_mask(self, a: __m512i, b: __m512i) -> u64 {
                // SAFETY: the token proves AVX-512BW; register-only.
                u64::from(unsafe { $cmpgt(a, b) })
            }
        }
    };
}
lane_masks!(Avx512U8, _mm512_cmpeq_epi8_mask, _mm512_cmpgt_epi8_mask);
lane_masks!(Avx512U16, _mm512_cmpeq_epi16_mask, _mm512_cmpgt_epi16_mask);

/// The instruction sets of the striped engine, widest first.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Tokens {
    Avx512(Avx512),
    Avx2(Avx2),
    Sse41(Sse41),
}

/// One striped pass at `width` with the instruction set of `tokens`; see
/// [`super::run`], resuming at row `start` below `corner`.
pub(crate) fn run(
    tokens: Tokens,
    width: Bits,
    scores: &Scores,
    gaps: Gaps,
    io: &mut TileIo<'_>,
    (start, corner): (usize, i32),
    best: &mut BestSoFar,
) -> (usize, i32) {
    let args = Args {
        scores,
        gaps,
        io,
        start,
        corner,
        best,
    };
    // SAFETY: each call holds the token of the features it enables, so the
    // CPU has them (module docs), the one requirement of these functions.
    unsafe {
        match (tokens, width) {
            (Tokens::Avx512(t), Bits::Eight) => run_avx512(Avx512U8(t), args),
            (Tokens::Avx512(t), Bits::Sixteen) => run_avx512(Avx512U16(t), args),
            (Tokens::Avx2(t), Bits::Eight) => run_avx2(Avx2U8(t), args),
            (Tokens::Avx2(t), Bits::Sixteen) => run_avx2(Avx2U16(t), args),
            (Tokens::Sse41(t), Bits::Eight) => run_sse41(Sse41U8(t), args),
            (Tokens::Sse41(t), Bits::Sixteen) => run_sse41(Sse41U16(t), args),
        }
    }
}

/// Whether 8-bit lanes take these scores and gap penalties at all (see
/// [`super::fits`]); the same for every instruction set.
pub(crate) fn eight_bits_fit(scores: &Scores, gaps: Gaps) -> bool {
    super::fits::<Sse41U8>(scores, gaps)
}

/// The highest `H` from which no 16-bit lane can saturate in the next row
/// (see [`super::fits`]); the same for every instruction set.
pub(crate) fn sixteen_bit_limit(scores: &Scores) -> i32 {
    scores.limit::<Sse41U16>()
}

/// The arguments of [`super::run`] after the lanes.
struct Args<'s, 'io, 'b> {
    scores: &'s Scores,
    gaps: Gaps,
    io: &'io mut TileIo<'b>,
    start: usize,
    corner: i32,
    best: &'io mut BestSoFar,
}

#[inline(always)]
fn run_args<L: Lanes>(l: L, a: Args<'_, '_, '_>) -> (usize, i32) {
    super::run(l, a.scores, a.gaps, a.io, a.start, a.corner, a.best)
}

/// # Safety
///
/// The CPU must have AVX-512F and AVX-512BW (holding an [`Avx512`] proves it).
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn run_avx512<L: Lanes>(l: L, a: Args<'_, '_, '_>) -> (usize, i32) {
    run_args(l, a)
}

/// # Safety
///
/// The CPU must have AVX2 (holding an [`Avx2`] proves it).
#[target_feature(enable = "avx2")]
unsafe fn run_avx2<L: Lanes>(l: L, a: Args<'_, '_, '_>) -> (usize, i32) {
    run_args(l, a)
}

/// # Safety
///
/// The CPU must have SSE4.1 (holding an [`Sse41`] proves it).
#[target_feature(enable = "sse4.1")]
unsafe fn run_sse41<L: Lanes>(l: L, a: Args<'_, '_, '_>) -> (usize, i32) {
    run_args(l, a)
}

#[cfg(test)]
mod tests {
    use super::super::{stripe_by_lanes, unstripe_by_lanes};
    use super::*;
    use crate::sw::random::SplitMix64;

    /// `stripe` and `unstripe` (transposes on AVX2, gathers on AVX-512) against the
    /// lane-by-lane versions, on edges of every length around the lane
    /// counts and around 16 and 32 vectors (the transposes' blocks), in
    /// as many vectors as the edge needs and in more (whole padding
    /// lanes), with values from 0 to the lanes' maximum and below 0 down
    /// to `i32::MIN`.
    fn check_stripes<L: Lanes>(l: L) {
        let mut rng = SplitMix64::new(L::N as u64);
        let blocks = [15, 16, 17, 31, 32, 33].map(|segs| segs * L::N - L::N / 2);
        let widths = (0..=3 * L::N + 2)
            .chain(blocks)
            .chain([257, 1000, 2528, 4099]);
        for (w, extra) in widths.flat_map(|w| [0, 1, 17].map(|extra| (w, extra))) {
            let segs = w.div_ceil(L::N) + extra;
            let edge: Vec<i32> = (0..w)
                .map(|_| match rng.below(10) {
                    0 => -(rng.below(1000) as i32) - 1,
                    1 => L::MAX,
                    2 => i32::MIN,
                    3 => -(1 << 30),
                    _ => rng.below(L::MAX as u32 + 1) as i32,
                })
                .collect();
            // Different fillings, so that a vector one of the two leaves
            // unwritten shows as a mismatch.
            let (mut fast, mut plain) = (vec![l.splat(0); segs], vec![l.splat(L::MAX); segs]);
            l.stripe(&edge, &mut fast);
            stripe_by_lanes(l, &edge, &mut plain);
            for (s, (&f, &p)) in fast.iter().zip(&plain).enumerate() {
                for k in 0..L::N {
                    assert_eq!(
                        l.lane(f, k),
                        l.lane(p, k),
                        "w {w}, {segs} vectors: vector {s}, lane {k}"
                    );
                }
            }
            let clamped: Vec<i32> = edge.iter().map(|&x| x.max(0)).collect();
            let (mut back, mut plain_back) = (vec![-7; w], vec![-7; w]);
            l.unstripe(&fast, &mut back);
            unstripe_by_lanes(l, &plain, &mut plain_back);
            assert_eq!(back, clamped, "w {w}, {segs} vectors");
            assert_eq!(plain_back, clamped, "w {w}, {segs} vectors");
            // Whatever the padding lanes hold, only the edge's columns
            // come out.
            let noisy: Vec<L::V> = (0..segs)
                .map(|_| l.build(|_| rng.below(L::MAX as u32 + 1) as i32))
                .collect();
            let (mut back, mut plain_back) = (vec![-7; w], vec![-7; w]);
            l.unstripe(&noisy, &mut back);
            unstripe_by_lanes(l, &noisy, &mut plain_back);
            assert_eq!(back, plain_back, "w {w}, {segs} vectors, any padding");
        }
    }

    #[test]
    fn stripes_on_every_instruction_set_equal_the_lane_by_lane_ones() {
        let mut checked = 0;
        if let Some(t) = Sse41::detect() {
            check_stripes(Sse41U8(t));
            check_stripes(Sse41U16(t));
            checked += 1;
        }
        if let Some(t) = Avx2::detect() {
            // SAFETY: the token proves AVX2, the one requirement.
            unsafe { avx2_stripes(t) };
            checked += 1;
        }
        if let Some(t) = Avx512::detect() {
            // SAFETY: the token proves AVX-512F/BW, the one requirement.
            unsafe { avx512_stripes(t) };
            checked += 1;
        }
        eprintln!("{checked} instruction sets checked");
    }

    /// # Safety
    ///
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn avx2_stripes(t: Avx2) {
        check_stripes(Avx2U8(t));
        check_stripes(Avx2U16(t));
    }

    /// # Safety
    ///
    /// The CPU must have AVX-512F and AVX-512BW.
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn avx512_stripes(t: Avx512) {
        check_stripes(Avx512U8(t));
        check_stripes(Avx512U16(t));
    }
}
