//! Query profile rows by byte shuffles ([`Lanes::lookup_row`](crate::sw::kernel::striped::Lanes::lookup_row)): a profile
//! holds, for each code of a tile's rows, the score against every column
//! in the lane layout, so each of its vectors is a look-up of `N` column
//! codes in a 64-entry table of one row's scores.
//!
//! Built lane by lane, the profile of 2528 random protein columns (24
//! codes, 8- or 16-bit AVX-512 lanes) took about 37 µs, two fifths of the
//! time of a 576-row tile over them, and every thread builds its own for
//! each tile column it computes; by shuffles, 5–7 µs. On AVX2 the same
//! profile took 5 µs instead of 27–30 on 8-bit lanes and 13–14 instead of
//! 23–25 on 16-bit ones; on SSE4.1, 7–12 instead of 33–42 on 8-bit lanes,
//! while 16-bit lanes, two 64-entry look-ups per 8 lanes, gain little
//! (27–34 against 30–40). The shuffles (`pshufb`) take 16 entries, indexed
//! by the low four bits of each byte, so a 64-entry look-up is four of
//! them, chosen among by bits 4 and 5. On AVX-512 a 16-bit look-up is one
//! two-table word permutation (`vpermt2w`), which takes 64 entries.
//! As in the rest of [`super`], these functions use no closures: a
//! closure lacks the `target_feature` of the `run_*` it is inlined into,
//! so the intrinsics in it would not inline.

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::{Avx2, Avx512, Sse41};
use crate::sw::kernel::striped::LOOKUP_CODES;

/// [`Lanes::lookup_row`](crate::sw::kernel::striped::Lanes::lookup_row) by
/// byte shuffles, on the instruction set `Self` for lanes stored as `E`:
/// what a query profile is built from. Each row's table goes into
/// registers once, before its vectors are looked up.
pub(super) trait ShuffleLookup<E> {
    /// One vector.
    type V;
    /// Appends one vector per `N` codes, lane `k` holding
    /// `table[codes[s * N + k]]` (`codes.len()` a multiple of `N`, every
    /// code below [`LOOKUP_CODES`]).
    fn lookup_row(self, codes: &[u8], table: &[E; LOOKUP_CODES], out: &mut Vec<Self::V>);
}

/// The first `B` bytes of `bytes`, as an array.
#[inline(always)]
fn first_bytes<const B: usize>(bytes: &[u8]) -> [u8; B] {
    bytes[..B].try_into().expect("enough bytes")
}

/// Quarter `q` (entries `16 * q..16 * (q + 1)`) of a look-up table.
#[inline(always)]
fn quarter(table: &[u8; LOOKUP_CODES], q: usize) -> __m128i {
    let bytes: [u8; 16] = first_bytes(&table[16 * q..]);
    // SAFETY: same size, and every bit pattern is valid for both.
    unsafe { std::mem::transmute::<[u8; 16], __m128i>(bytes) }
}

/// The four quarters of a look-up table.
#[inline(always)]
fn quarters(table: &[u8; LOOKUP_CODES]) -> [__m128i; 4] {
    [
        quarter(table, 0),
        quarter(table, 1),
        quarter(table, 2),
        quarter(table, 3),
    ]
}

/// The low and the high bytes of 16-bit table entries, as two byte tables.
#[inline(always)]
fn byte_tables(table: &[u16; LOOKUP_CODES]) -> ([u8; LOOKUP_CODES], [u8; LOOKUP_CODES]) {
    let (mut low, mut high) = ([0; LOOKUP_CODES], [0; LOOKUP_CODES]);
    for ((l, h), &e) in low.iter_mut().zip(&mut high).zip(table) {
        [*l, *h] = e.to_le_bytes();
    }
    (low, high)
}

/// Byte `j` is `table[idx[j]]` for bytes below 64, the table given as
/// its [`quarters`]: one 16-entry shuffle per quarter (which reads bits
/// 0–3 of each index), then bit 4 and bit 5 of the index choose among
/// them (`blendv` takes a byte's top bit, where a 16-bit shift by 3 or 2
/// puts them).
#[inline(always)]
fn shuffle64_sse(_: Sse41, idx: __m128i, q: &[__m128i; 4]) -> __m128i {
    // SAFETY: the token proves SSE4.1 (hence SSSE3); register-only.
    unsafe {
        let bit4 = _mm_slli_epi16::<3>(idx);
        let bit5 = _mm_slli_epi16::<2>(idx);
        let low = _mm_blendv_epi8(
            _mm_shuffle_epi8(q[0], idx),
            _mm_shuffle_epi8(q[1], idx),
            bit4,
        );
        let high = _mm_blendv_epi8(
            _mm_shuffle_epi8(q[2], idx),
            _mm_shuffle_epi8(q[3], idx),
            bit4,
        );
        _mm_blendv_epi8(low, high, bit5)
    }
}

/// The [`quarters`] of a table, each in both 128-bit halves of a vector
/// (which `vpshufb` indexes apart).
#[inline(always)]
fn quarters_avx2(_: Avx2, table: &[u8; LOOKUP_CODES]) -> [__m256i; 4] {
    let [q0, q1, q2, q3] = quarters(table);
    // SAFETY: the token proves AVX2; register-only.
    unsafe {
        [
            _mm256_broadcastsi128_si256(q0),
            _mm256_broadcastsi128_si256(q1),
            _mm256_broadcastsi128_si256(q2),
            _mm256_broadcastsi128_si256(q3),
        ]
    }
}

/// [`shuffle64_sse`] on 256-bit vectors, the table as [`quarters_avx2`].
#[inline(always)]
fn shuffle64_avx2(_: Avx2, idx: __m256i, q: &[__m256i; 4]) -> __m256i {
    // SAFETY: the token proves AVX2; register-only.
    unsafe {
        let bit4 = _mm256_slli_epi16::<3>(idx);
        let bit5 = _mm256_slli_epi16::<2>(idx);
        let r0 = _mm256_shuffle_epi8(q[0], idx);
        let r1 = _mm256_shuffle_epi8(q[1], idx);
        let r2 = _mm256_shuffle_epi8(q[2], idx);
        let r3 = _mm256_shuffle_epi8(q[3], idx);
        let low = _mm256_blendv_epi8(r0, r1, bit4);
        let high = _mm256_blendv_epi8(r2, r3, bit4);
        _mm256_blendv_epi8(low, high, bit5)
    }
}

impl ShuffleLookup<u8> for Sse41 {
    type V = __m128i;
    #[inline(always)]
    fn lookup_row(self, codes: &[u8], table: &[u8; LOOKUP_CODES], out: &mut Vec<__m128i>) {
        let q = quarters(table);
        for chunk in codes.chunks_exact(16) {
            // SAFETY: same size, and every bit pattern is valid for both.
            let idx = unsafe { std::mem::transmute::<[u8; 16], __m128i>(first_bytes(chunk)) };
            out.push(shuffle64_sse(self, idx, &q));
        }
    }
}

impl ShuffleLookup<u16> for Sse41 {
    type V = __m128i;
    /// Each 16-bit lane's code in both its bytes, looked up in the table
    /// of low bytes and in that of high bytes.
    #[inline(always)]
    fn lookup_row(self, codes: &[u8], table: &[u16; LOOKUP_CODES], out: &mut Vec<__m128i>) {
        let (low, high) = byte_tables(table);
        let (low, high) = (quarters(&low), quarters(&high));
        for chunk in codes.chunks_exact(8) {
            let mut bytes = [0u8; 16];
            bytes[..8].copy_from_slice(chunk);
            // SAFETY: the token proves SSE4.1; register-only but the
            // transmute, which has the same size, and every bit pattern is
            // valid for both.
            out.push(unsafe {
                let wide = _mm_cvtepu8_epi16(std::mem::transmute::<[u8; 16], __m128i>(bytes));
                let idx = _mm_or_si128(wide, _mm_slli_epi16::<8>(wide));
                _mm_blendv_epi8(
                    shuffle64_sse(self, idx, &low),
                    shuffle64_sse(self, idx, &high),
                    _mm_set1_epi16(0xFF00u16 as i16),
                )
            });
        }
    }
}

impl ShuffleLookup<u8> for Avx2 {
    type V = __m256i;
    #[inline(always)]
    fn lookup_row(self, codes: &[u8], table: &[u8; LOOKUP_CODES], out: &mut Vec<__m256i>) {
        let q = quarters_avx2(self, table);
        for chunk in codes.chunks_exact(32) {
            // SAFETY: same size, and every bit pattern is valid for both.
            let idx = unsafe { std::mem::transmute::<[u8; 32], __m256i>(first_bytes(chunk)) };
            out.push(shuffle64_avx2(self, idx, &q));
        }
    }
}

impl ShuffleLookup<u16> for Avx2 {
    type V = __m256i;
    /// As on SSE4.1.
    #[inline(always)]
    fn lookup_row(self, codes: &[u8], table: &[u16; LOOKUP_CODES], out: &mut Vec<__m256i>) {
        let (low, high) = byte_tables(table);
        let (low, high) = (quarters_avx2(self, &low), quarters_avx2(self, &high));
        for chunk in codes.chunks_exact(16) {
            // SAFETY: the token proves AVX2; register-only but the
            // transmute, which has the same size, and every bit pattern is
            // valid for both.
            out.push(unsafe {
                let narrow = std::mem::transmute::<[u8; 16], __m128i>(first_bytes(chunk));
                let wide = _mm256_cvtepu8_epi16(narrow);
                let idx = _mm256_or_si256(wide, _mm256_slli_epi16::<8>(wide));
                _mm256_blendv_epi8(
                    shuffle64_avx2(self, idx, &low),
                    shuffle64_avx2(self, idx, &high),
                    _mm256_set1_epi16(0xFF00u16 as i16),
                )
            });
        }
    }
}

impl ShuffleLookup<u8> for Avx512 {
    type V = __m512i;
    /// As [`shuffle64_sse`], the choices by byte masks.
    #[inline(always)]
    fn lookup_row(self, codes: &[u8], table: &[u8; LOOKUP_CODES], out: &mut Vec<__m512i>) {
        let [q0, q1, q2, q3] = quarters(table);
        // SAFETY: the token proves AVX-512F/BW; register-only.
        let q = unsafe {
            [
                _mm512_broadcast_i32x4(q0),
                _mm512_broadcast_i32x4(q1),
                _mm512_broadcast_i32x4(q2),
                _mm512_broadcast_i32x4(q3),
            ]
        };
        for chunk in codes.chunks_exact(64) {
            // SAFETY: the token proves AVX-512F/BW; register-only but the
            // transmute, which has the same size, and every bit pattern is
            // valid for both.
            out.push(unsafe {
                let idx = std::mem::transmute::<[u8; 64], __m512i>(first_bytes(chunk));
                let bit4 = _mm512_test_epi8_mask(idx, _mm512_set1_epi8(0x10));
                let bit5 = _mm512_test_epi8_mask(idx, _mm512_set1_epi8(0x20));
                let r0 = _mm512_shuffle_epi8(q[0], idx);
                let r1 = _mm512_shuffle_epi8(q[1], idx);
                let r2 = _mm512_shuffle_epi8(q[2], idx);
                let r3 = _mm512_shuffle_epi8(q[3], idx);
                let low = _mm512_mask_blend_epi8(bit4, r0, r1);
                let high = _mm512_mask_blend_epi8(bit4, r2, r3);
                _mm512_mask_blend_epi8(bit5, low, high)
            });
        }
    }
}

impl ShuffleLookup<u16> for Avx512 {
    type V = __m512i;
    /// One two-table word permutation: bits 0–4 of each index pick a word
    /// of a 32-entry half, bit 5 the half.
    #[inline(always)]
    fn lookup_row(self, codes: &[u8], table: &[u16; LOOKUP_CODES], out: &mut Vec<__m512i>) {
        let (low_half, high_half) = table.split_at(32);
        let low_half: [u16; 32] = low_half.try_into().expect("32 entries");
        let high_half: [u16; 32] = high_half.try_into().expect("32 entries");
        // SAFETY: same sizes, and every bit pattern is valid for both.
        let (low, high) = unsafe {
            (
                std::mem::transmute::<[u16; 32], __m512i>(low_half),
                std::mem::transmute::<[u16; 32], __m512i>(high_half),
            )
        };
        for chunk in codes.chunks_exact(32) {
            // SAFETY: the token proves AVX-512F/BW; register-only but the
            // transmute, which has the same size, and every bit pattern is
            // valid for both.
            out.push(unsafe {
                let narrow = std::mem::transmute::<[u8; 32], __m256i>(first_bytes(chunk));
                _mm512_permutex2var_epi16(low, _mm512_cvtepu8_epi16(narrow), high)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::{lookup_row_by_lanes, Profile};
    use super::super::*;
    use crate::sw::random::SplitMix64;
    use crate::sw::Scoring;

    /// `lookup_row` against [`lookup_row_by_lanes`], on rows of one to
    /// three vectors of random codes (every code, 63 among them) and
    /// tables holding every lane value.
    fn check_lookups<L: Lanes>(l: L) {
        let mut rng = SplitMix64::new(L::N as u64 + 64);
        for round in 0..200 {
            let vectors = 1 + round % 3;
            let codes: Vec<u8> = (0..vectors * L::N)
                .map(|k| match round {
                    0 => k as u8 % LOOKUP_CODES as u8,
                    1 => LOOKUP_CODES as u8 - 1,
                    _ => rng.below(LOOKUP_CODES as u32) as u8,
                })
                .collect();
            let mut table = [L::E::default(); LOOKUP_CODES];
            for e in &mut table {
                *e = L::elem(rng.below(L::MAX as u32 + 1) as i32);
            }
            let (mut fast, mut plain) = (Vec::new(), Vec::new());
            l.lookup_row(&codes, &table, &mut fast);
            lookup_row_by_lanes(l, &codes, &table, &mut plain);
            assert_eq!((fast.len(), plain.len()), (vectors, vectors));
            for (s, (&f, &p)) in fast.iter().zip(&plain).enumerate() {
                for k in 0..L::N {
                    assert_eq!(
                        l.lane(f, k),
                        l.lane(p, k),
                        "round {round}, vector {s}, lane {k}"
                    );
                }
            }
        }
    }

    /// Profiles by look-ups against profiles built lane by lane, over
    /// protein and DNA columns of many widths, and columns with a code
    /// past the look-up tables (built lane by lane either way).
    fn check_profiles<L: Lanes>(l: L) {
        let protein = Scoring::blosum62(11, 1).expect("blosum62");
        let dna = Scoring::dna_default();
        let mut rng = SplitMix64::new(L::N as u64);
        for (scoring, codes) in [(&protein, 24u32), (&dna, 4), (&dna, 200)] {
            for w in (1..=2 * L::N + 1).chain([257, 2528]) {
                let b: Vec<u8> = (0..w).map(|_| rng.below(codes) as u8).collect();
                let rows: Vec<u8> = (0..codes.min(40)).map(|c| c as u8).collect();
                let scores = Scores::new(scoring, &rows, &b);
                let fast = Profile::build(l, &scores, &b);
                let plain = Profile::build_by_lanes(l, &scores, &b);
                assert_eq!(
                    (fast.segs, fast.vectors.len()),
                    (plain.segs, plain.vectors.len())
                );
                for (i, (&f, &p)) in fast.vectors.iter().zip(&plain.vectors).enumerate() {
                    for k in 0..L::N {
                        assert_eq!(l.lane(f, k), l.lane(p, k), "w {w}, vector {i}, lane {k}");
                    }
                }
            }
        }
    }

    #[test]
    fn lookups_on_every_instruction_set_equal_the_lane_by_lane_ones() {
        let mut checked = 0;
        if let Some(t) = Sse41::detect() {
            // SAFETY: the token proves SSE4.1, the one requirement.
            unsafe { sse41_lookups(t) };
            checked += 1;
        }
        if let Some(t) = Avx2::detect() {
            // SAFETY: the token proves AVX2, the one requirement.
            unsafe { avx2_lookups(t) };
            checked += 1;
        }
        if let Some(t) = Avx512::detect() {
            // SAFETY: the token proves AVX-512F/BW, the one requirement.
            unsafe { avx512_lookups(t) };
            checked += 1;
        }
        eprintln!("{checked} instruction sets checked");
    }

    /// # Safety
    ///
    /// The CPU must have SSE4.1.
    #[target_feature(enable = "sse4.1")]
    unsafe fn sse41_lookups(t: Sse41) {
        check_lookups(Sse41U8(t));
        check_lookups(Sse41U16(t));
        check_profiles(Sse41U8(t));
        check_profiles(Sse41U16(t));
    }

    /// # Safety
    ///
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn avx2_lookups(t: Avx2) {
        check_lookups(Avx2U8(t));
        check_lookups(Avx2U16(t));
        check_profiles(Avx2U8(t));
        check_profiles(Avx2U16(t));
    }

    /// # Safety
    ///
    /// The CPU must have AVX-512F and AVX-512BW.
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn avx512_lookups(t: Avx512) {
        check_lookups(Avx512U8(t));
        check_lookups(Avx512U16(t));
        check_profiles(Avx512U8(t));
        check_profiles(Avx512U16(t));
    }
}
