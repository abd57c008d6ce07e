//! Tile edges into and out of AVX2 lanes by 16 x 16 transposes
//! ([`Lanes::stripe`](crate::sw::kernel::striped::Lanes::stripe) and
//! [`Lanes::unstripe`](crate::sw::kernel::striped::Lanes::unstripe)).
//!
//! Lane `k` of striped vector `s` is column `k * segs + s`, so 16
//! consecutive vectors `s0..s0 + 16` hold, in each lane `k`, the 16
//! consecutive columns from `k * segs + s0`: one 16 x 16 transpose of
//! 16-bit words turns those vectors into 16 runs of the linear edge and
//! back. 8-bit lanes go as two groups of 16, each lane widened to a word.
//! The transpose is 64 register shuffles per 256 values, and the runs are
//! whole-vector loads and stores. On a 2-core Zen 3, where the gathers and
//! masked stores this replaced run slowly, an edge of 4000 columns went
//! into the lanes in 1.0 µs instead of 1.8–1.9 and out of them in 1.0
//! instead of 3.6–4.4, on 8- and 16-bit lanes alike. A tile puts two edges
//! in and two out: a 1024 x 4000 tile of related DNA (about 330 µs) spent
//! 3.5 µs instead of 10.5 on them, a 9-tile rank of a 5000² protein
//! alignment (tiles of about 130 µs) 3.4–5.7 instead of 7–12.
//!
//! As in the rest of [`super`], these functions use no closures: a closure
//! lacks the `target_feature` of the `run_*` it is inlined into, so the
//! intrinsics in it would not inline.

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::Avx2;

/// Words per vector, and vectors per transposed block.
const N: usize = 16;

/// `out[j]` word `i` = `rows[i]` word `j`: the 16 x 16 transpose of
/// 16-bit words.
///
/// Three rounds of interleaves (16-, 32- then 64-bit) transpose each
/// 128-bit half as an 8 x 8 block; a last round of half swaps puts the
/// blocks in place.
#[inline(always)]
fn transpose(_: Avx2, rows: &[__m256i; N]) -> [__m256i; N] {
    // SAFETY: the token proves AVX2; register-only.
    unsafe {
        // Pairs of rows interleaved: `a[2i]` holds rows 2i, 2i + 1 at
        // columns 0..4 of each half, `a[2i + 1]` at columns 4..8.
        let mut a = [_mm256_setzero_si256(); N];
        for i in 0..N / 2 {
            a[2 * i] = _mm256_unpacklo_epi16(rows[2 * i], rows[2 * i + 1]);
            a[2 * i + 1] = _mm256_unpackhi_epi16(rows[2 * i], rows[2 * i + 1]);
        }
        // Quads: `b[4i + m]` holds rows 4i..4i + 4 at columns 2m, 2m + 1
        // of each half.
        let mut b = [_mm256_setzero_si256(); N];
        for i in 0..N / 4 {
            let (lo, hi) = (a[4 * i], a[4 * i + 1]);
            let (lo2, hi2) = (a[4 * i + 2], a[4 * i + 3]);
            b[4 * i] = _mm256_unpacklo_epi32(lo, lo2);
            b[4 * i + 1] = _mm256_unpackhi_epi32(lo, lo2);
            b[4 * i + 2] = _mm256_unpacklo_epi32(hi, hi2);
            b[4 * i + 3] = _mm256_unpackhi_epi32(hi, hi2);
        }
        // Octets: `c[8g + j]` holds rows 8g..8g + 8 at column j of the low
        // half and column 8 + j of the high half.
        let mut c = [_mm256_setzero_si256(); N];
        for g in 0..2 {
            for m in 0..4 {
                let (upper, lower) = (b[8 * g + m], b[8 * g + 4 + m]);
                c[8 * g + 2 * m] = _mm256_unpacklo_epi64(upper, lower);
                c[8 * g + 2 * m + 1] = _mm256_unpackhi_epi64(upper, lower);
            }
        }
        let mut out = [_mm256_setzero_si256(); N];
        for j in 0..N / 2 {
            out[j] = _mm256_permute2x128_si256::<0x20>(c[j], c[8 + j]);
            out[8 + j] = _mm256_permute2x128_si256::<0x31>(c[j], c[8 + j]);
        }
        out
    }
}

/// [`Lanes::stripe`](crate::sw::kernel::striped::Lanes::stripe) for lanes
/// of `lane_bytes` bytes (1 or 2): `edge` (at most `32 / lane_bytes *
/// out.len()` values, each fitting the lanes), clamped at 0, into `out` in
/// vector order, each value stored with its top bit flipped; lanes past
/// the end hold 0. 8-bit lanes go as two groups of 16 in 16-bit words,
/// packed into bytes at the end.
#[inline(always)]
pub(super) fn stripe(t: Avx2, lane_bytes: usize, edge: &[i32], out: &mut [__m256i]) {
    // SAFETY: the token proves AVX2, the one requirement.
    unsafe {
        if lane_bytes == 2 {
            stripe_avx2::<2>(t, edge, out)
        } else {
            stripe_avx2::<1>(t, edge, out)
        }
    }
}

/// [`stripe`] for lanes of `LANE_BYTES` bytes, compiled apart from the
/// striped engine that calls it once per tile: inlined there, it changed
/// how the engine's row loop was compiled, which then ran 3% slower.
///
/// # Safety
///
/// The CPU must have AVX2 (holding an [`Avx2`] proves it).
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn stripe_avx2<const LANE_BYTES: usize>(t: Avx2, edge: &[i32], out: &mut [__m256i]) {
    let lane_bytes = LANE_BYTES;
    let (segs, w) = (out.len(), edge.len());
    let groups = 2 / lane_bytes;
    debug_assert!(w <= groups * N * segs);
    // Larger values would saturate here where the lane-by-lane version
    // truncates; the engines never pass them (they check the boundary
    // against their limit first).
    debug_assert!(edge.iter().all(|&x| x < 1 << (8 * lane_bytes)));
    let flip = flip(lane_bytes);
    let zeros = _mm256_set1_epi16(flip);
    for s0 in (0..segs).step_by(N) {
        let rows = (segs - s0).min(N);
        let mut vectors = [[zeros; N]; 2];
        for (g, group) in vectors.iter_mut().enumerate().take(groups) {
            if g * N * segs + s0 >= w {
                // Every lane of the group is padding: its zeros stay.
                break;
            }
            let mut runs = [zeros; N];
            for (k, run) in runs.iter_mut().enumerate() {
                let start = (g * N + k) * segs + s0;
                if start >= w {
                    break;
                }
                // Columns of the lane from `s0`: `rows` of them, cut at
                // the end.
                let n = rows.min(w - start);
                let mut padded = [0i32; N];
                let from = if n == N {
                    edge[start..].as_ptr()
                } else {
                    padded[..n].copy_from_slice(&edge[start..start + n]);
                    padded.as_ptr()
                };
                // SAFETY: the token proves AVX2; `from` is `edge[start..start
                // + N]`, in bounds as `n == N`, or the local `padded`.
                *run = unsafe { words_of(from, flip) };
            }
            *group = transpose(t, &runs);
        }
        for (i, v) in out[s0..s0 + rows].iter_mut().enumerate() {
            *v = if lane_bytes == 2 {
                vectors[0][i]
            } else {
                // Every word is below 256, so the packing is exact, and
                // works within 128-bit halves: the permute puts lanes 0..16
                // (group 0) before lanes 16..32 (group 1).
                _mm256_permute4x64_epi64::<0xD8>(_mm256_packus_epi16(vectors[0][i], vectors[1][i]))
            };
        }
    }
}

/// [`Lanes::unstripe`](crate::sw::kernel::striped::Lanes::unstripe) for
/// lanes of `lane_bytes` bytes (1 or 2): the first `edge.len()` columns of
/// `vectors` (at most `32 / lane_bytes * vectors.len()`) into `edge`.
#[inline(always)]
pub(super) fn unstripe(t: Avx2, lane_bytes: usize, vectors: &[__m256i], edge: &mut [i32]) {
    // SAFETY: the token proves AVX2, the one requirement.
    unsafe {
        if lane_bytes == 2 {
            unstripe_avx2::<2>(t, vectors, edge)
        } else {
            unstripe_avx2::<1>(t, vectors, edge)
        }
    }
}

/// [`unstripe`] for lanes of `LANE_BYTES` bytes, compiled apart as
/// [`stripe_avx2`] is.
///
/// # Safety
///
/// The CPU must have AVX2 (holding an [`Avx2`] proves it).
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn unstripe_avx2<const LANE_BYTES: usize>(t: Avx2, vectors: &[__m256i], edge: &mut [i32]) {
    let lane_bytes = LANE_BYTES;
    let (segs, w) = (vectors.len(), edge.len());
    let groups = 2 / lane_bytes;
    debug_assert!(w <= groups * N * segs);
    // Larger values would saturate here where the lane-by-lane version
    // truncates; the engines never pass them (they check the boundary
    // against their limit first).
    debug_assert!(edge.iter().all(|&x| x < 1 << (8 * lane_bytes)));
    let flip = flip(lane_bytes);
    for s0 in (0..segs).step_by(N) {
        let rows = (segs - s0).min(N);
        let mut block = [vectors[s0]; N];
        block[..rows].copy_from_slice(&vectors[s0..s0 + rows]);
        for g in 0..groups {
            let words = if lane_bytes == 2 {
                block
            } else {
                // Lanes `16 g..16 g + 16` of each vector, one word each.
                let mut words = block;
                for v in &mut words {
                    let half = if g == 0 {
                        _mm256_castsi256_si128(*v)
                    } else {
                        _mm256_extracti128_si256::<1>(*v)
                    };
                    *v = _mm256_cvtepu8_epi16(half);
                }
                words
            };
            let runs = transpose(t, &words);
            for (k, &run) in runs.iter().enumerate() {
                let start = (g * N + k) * segs + s0;
                if start >= w {
                    break;
                }
                let n = rows.min(w - start);
                if n == N {
                    // SAFETY: the token proves AVX2; `edge[start..start +
                    // N]` is in bounds.
                    unsafe { store_values(run, flip, edge[start..].as_mut_ptr()) };
                } else {
                    let mut values = [0i32; N];
                    // SAFETY: as above, into a local array of `N` values.
                    unsafe { store_values(run, flip, values.as_mut_ptr()) };
                    edge[start..start + n].copy_from_slice(&values[..n]);
                }
            }
        }
    }
}

/// The top bit of a lane of `lane_bytes` bytes, in a 16-bit word.
#[inline(always)]
fn flip(lane_bytes: usize) -> i16 {
    if lane_bytes == 2 {
        i16::MIN
    } else {
        0x80
    }
}

/// The 16 values at `from`, clamped at 0, as words with `flip` (their
/// lanes' top bit) flipped; values above `u16::MAX` saturate to it.
///
/// # Safety
///
/// The CPU has AVX2, and `from` points to 16 readable `i32`.
#[inline(always)]
unsafe fn words_of(from: *const i32, flip: i16) -> __m256i {
    // SAFETY: the caller's contract.
    unsafe {
        let zero = _mm256_setzero_si256();
        let low = _mm256_max_epi32(_mm256_loadu_si256(from.cast()), zero);
        let high = _mm256_max_epi32(_mm256_loadu_si256(from.add(8).cast()), zero);
        // `packus` works within 128-bit halves: the permute puts the four
        // groups of words back in order.
        let packed = _mm256_permute4x64_epi64::<0xD8>(_mm256_packus_epi32(low, high));
        _mm256_xor_si256(packed, _mm256_set1_epi16(flip))
    }
}

/// Stores the 16 values of `run` (words with `flip` flipped) at `to`.
///
/// # Safety
///
/// The CPU has AVX2, and `to` points to 16 writable `i32`.
#[inline(always)]
unsafe fn store_values(run: __m256i, flip: i16, to: *mut i32) {
    // SAFETY: the caller's contract.
    unsafe {
        let words = _mm256_xor_si256(run, _mm256_set1_epi16(flip));
        let low = _mm256_cvtepu16_epi32(_mm256_castsi256_si128(words));
        let high = _mm256_cvtepu16_epi32(_mm256_extracti128_si256::<1>(words));
        _mm256_storeu_si256(to.cast(), low);
        _mm256_storeu_si256(to.add(8).cast(), high);
    }
}
