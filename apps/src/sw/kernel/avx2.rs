//! The strip engine of [`super::strip`] written with explicit AVX2
//! intrinsics: `8 * K` rows per strip, `K` vectors of 8 `i32` lanes.
//!
//! Layout and invariants are exactly those of [`super::strip`] (read its
//! module docs first): lane `g = 8 * j + k` (vector `j`, element `k`) computes
//! row `r + g`; at step `t` it works on column `t - g`. The cross-lane "up"
//! shift is a lane rotation (`vpermd`) plus a one-lane blend that brings in
//! the previous vector's last lane, or for vector 0 the row above the strip.
//!
//! # Soundness
//!
//! Every intrinsic is wrapped in a small safe method. The wrappers are sound
//! because a [`V`] can only be created through an [`Avx2`] token, and an
//! `Avx2` token can only be created by [`Avx2::detect`] after
//! `is_x86_feature_detected!("avx2")` succeeded. Holding a `V` therefore
//! proves that the CPU supports AVX2. The wrappers are `#[inline(always)]`, so
//! once inlined into [`strips_avx2`] (which has `target_feature(enable =
//! "avx2")`) the intrinsics compile to single instructions.

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::best_so_far::BestSoFar;
pub(crate) use super::striped::x86::Avx2;
use super::{Gaps, MatchMismatch, Matrix, Subst, TileIo};
use crate::sw::best::Best;
use crate::sw::scoring::{MATRIX_DIM, NEG_INF};

/// The 32-bit lane operations, on the striped kernel's AVX2 token.
impl Avx2 {
    #[inline(always)]
    fn splat(self, x: i32) -> V {
        // SAFETY: the token proves AVX2 (hence AVX) support; no memory access.
        V(unsafe { _mm256_set1_epi32(x) })
    }

    #[inline(always)]
    fn array(self, a: [i32; 8]) -> V {
        // SAFETY: the token proves AVX support; no memory access.
        V(unsafe { _mm256_setr_epi32(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]) })
    }

    /// Zero-extends 8 byte codes to 8 `i32` lanes.
    #[inline(always)]
    fn codes(self, c: &[u8; 8]) -> V {
        // SAFETY: the token proves AVX2 support. `_mm_loadl_epi64` reads
        // exactly 8 bytes with no alignment requirement, and `c` is a valid
        // reference to 8 bytes.
        V(unsafe { _mm256_cvtepu8_epi32(_mm_loadl_epi64(c.as_ptr().cast::<__m128i>())) })
    }

    /// `table[idx & 1023]` lane-wise.
    #[inline(always)]
    fn gather(self, table: &[i32; MATRIX_DIM * MATRIX_DIM], idx: V) -> V {
        // SAFETY: the token proves AVX2 support. Every index is masked to
        // 0..1024 = table.len(), so all 8 loads (4-byte scale) stay inside
        // `table`, which is a valid, aligned `[i32; 1024]`.
        V(unsafe {
            let idx = _mm256_and_si256(idx.0, _mm256_set1_epi32(1023));
            _mm256_i32gather_epi32::<4>(table.as_ptr(), idx)
        })
    }
}

/// Eight `i32` lanes; existence implies AVX2 support (see module docs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct V(__m256i);

impl V {
    #[inline(always)]
    fn add(self, o: V) -> V {
        // SAFETY: a `V` exists only if AVX2 is supported; register-only op.
        V(unsafe { _mm256_add_epi32(self.0, o.0) })
    }
    #[inline(always)]
    fn sub(self, o: V) -> V {
        // SAFETY: a `V` exists only if AVX2 is supported; register-only op.
        V(unsafe { _mm256_sub_epi32(self.0, o.0) })
    }
    #[inline(always)]
    fn max(self, o: V) -> V {
        // SAFETY: a `V` exists only if AVX2 is supported; register-only op.
        V(unsafe { _mm256_max_epi32(self.0, o.0) })
    }
    /// All-ones lanes where `self > o`.
    #[inline(always)]
    fn gt(self, o: V) -> V {
        // SAFETY: a `V` exists only if AVX2 is supported; register-only op.
        V(unsafe { _mm256_cmpgt_epi32(self.0, o.0) })
    }
    /// All-ones lanes where `self == o`.
    #[inline(always)]
    fn eq(self, o: V) -> V {
        // SAFETY: a `V` exists only if AVX2 is supported; register-only op.
        V(unsafe { _mm256_cmpeq_epi32(self.0, o.0) })
    }
    /// `self & o`.
    #[inline(always)]
    fn and(self, o: V) -> V {
        // SAFETY: a `V` exists only if AVX2 is supported; register-only op.
        V(unsafe { _mm256_and_si256(self.0, o.0) })
    }
    /// `!self & o`.
    #[inline(always)]
    fn andnot(self, o: V) -> V {
        // SAFETY: a `V` exists only if AVX2 is supported; register-only op.
        V(unsafe { _mm256_andnot_si256(self.0, o.0) })
    }
    /// Lane-wise `if mask { yes } else { self }` (mask lanes all-ones/zero).
    #[inline(always)]
    fn select(self, mask: V, yes: V) -> V {
        // SAFETY: a `V` exists only if AVX2 is supported; register-only op.
        V(unsafe { _mm256_blendv_epi8(self.0, yes.0, mask.0) })
    }
    /// `[self[7], self[0], ..., self[6]]`.
    #[inline(always)]
    fn rotate_up(self) -> V {
        // SAFETY: a `V` exists only if AVX2 is supported; register-only op.
        V(
            unsafe {
                _mm256_permutevar8x32_epi32(self.0, _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6))
            },
        )
    }
    /// `self` with lane 0 replaced by lane 0 of `o`.
    #[inline(always)]
    fn with_lane0_of(self, o: V) -> V {
        // SAFETY: a `V` exists only if AVX2 is supported; register-only op.
        V(unsafe { _mm256_blend_epi32::<1>(self.0, o.0) })
    }
    #[inline(always)]
    fn lane7(self) -> i32 {
        // SAFETY: a `V` exists only if AVX2 is supported; register-only op.
        unsafe { _mm256_extract_epi32::<7>(self.0) }
    }
    #[inline(always)]
    fn lane0(self) -> i32 {
        // SAFETY: a `V` exists only if AVX2 is supported; register-only op.
        unsafe { _mm256_cvtsi256_si32(self.0) }
    }
    #[inline(always)]
    fn to_array(self) -> [i32; 8] {
        let mut out = [0i32; 8];
        // SAFETY: a `V` exists only if AVX2 is supported; `out` is 32
        // writable bytes and `storeu` has no alignment requirement.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast::<__m256i>(), self.0) };
        out
    }
}

/// Vector form of a [`Subst`]: per-step scores of 8 lanes from their row
/// keys (see [`Subst::key`]) and column codes.
pub(crate) trait VecSubst: Subst {
    type Ready: Copy;
    fn ready(self, t: Avx2) -> Self::Ready;
    fn vscore(r: Self::Ready, t: Avx2, key: V, codes: V) -> V;
}

impl VecSubst for MatchMismatch {
    type Ready = (V, V);
    #[inline(always)]
    fn ready(self, t: Avx2) -> (V, V) {
        (t.splat(self.matched), t.splat(self.mismatched))
    }
    #[inline(always)]
    fn vscore(r: (V, V), _t: Avx2, key: V, codes: V) -> V {
        r.1.select(key.eq(codes), r.0)
    }
}

impl<'a> VecSubst for Matrix<'a> {
    type Ready = &'a [i32; MATRIX_DIM * MATRIX_DIM];
    #[inline(always)]
    fn ready(self, _t: Avx2) -> Self::Ready {
        self.table
    }
    #[inline(always)]
    fn vscore(r: Self::Ready, t: Avx2, key: V, codes: V) -> V {
        // key = a << 5, codes < 32: key + codes = a * 32 + b.
        t.gather(r, key.add(codes))
    }
}

/// Vector state of one strip.
struct State<const K: usize> {
    h: [V; K],
    e: [V; K],
    f: [V; K],
    diag: [V; K],
    best: [V; K],
    best_t: [V; K],
}

/// Per-strip constants.
struct Ctx<'a, const K: usize, S: VecSubst> {
    t: Avx2,
    ready: S::Ready,
    gaps: Gaps,
    open: V,
    extend: V,
    zero: V,
    key: [V; K],
    lh: [V; K],
    le: [V; K],
    lane: [V; K],
    buf: &'a [u8],
    w: usize,
}

impl<const K: usize, S: VecSubst> Ctx<'_, K, S> {
    /// One step of all lanes (see [`super::strip`]). Returns `H` of lane
    /// `L - 1` at the previous step (in lane 0 of the returned vector).
    ///
    /// Uses `F_new = shift_up(max(H - open, F - extend))`: the lane-wise max
    /// commutes with the lane shift, so `H - open` is shared with `E` and
    /// only one vector per step is rotated for the gap state.
    #[inline(always)]
    fn step(&self, st: &mut State<K>, t: usize, top_h: i32, top_f: i32) -> V {
        // Codes of the columns of all 8K lanes: buf[q..q + 8K].
        let q = 8 * K + self.w - 1 - t;
        let win = &self.buf[q..q + 8 * K];
        let top_g = (top_h - self.gaps.open).max(top_f - self.gaps.extend);
        let mut carry_h = self.t.splat(top_h);
        let mut carry_g = self.t.splat(top_g);
        for j in 0..K {
            let h_open = st.h[j].sub(self.open);
            let g = h_open.max(st.f[j].sub(self.extend));
            let rot_h = st.h[j].rotate_up();
            let rot_g = g.rotate_up();
            let up_h = rot_h.with_lane0_of(carry_h);
            let f = rot_g.with_lane0_of(carry_g);
            carry_h = rot_h;
            carry_g = rot_g;
            let e = h_open.max(st.e[j].sub(self.extend));
            let codes: &[u8; 8] = win[8 * j..8 * j + 8].try_into().expect("8 codes");
            let sc = S::vscore(self.ready, self.t, self.key[j], self.t.codes(codes));
            // `f` last: it is on the longest dependency chain.
            let h = st.diag[j].add(sc).max(e).max(self.zero).max(f);
            st.diag[j] = up_h;
            st.h[j] = h;
            st.e[j] = e;
            st.f[j] = f;
        }
        carry_h
    }

    /// All lanes inside the tile (`L - 1 <= t < w - 1`). Writes `F` of the
    /// bottom row at column `t + 1 - L` and `H` at column `t - L` (one step
    /// late, taken for free from the rotation; the caller writes the last
    /// one).
    #[inline(always)]
    fn main_step(&self, st: &mut State<K>, t: usize, top_h: &mut [i32], top_f: &mut [i32]) {
        let prev_bottom = self.step(st, t, top_h[t], top_f[t]);
        let tv = self.t.splat(t as i32);
        for j in 0..K {
            let gt = st.h[j].gt(st.best[j]);
            st.best_t[j] = st.best_t[j].select(gt, tv);
            st.best[j] = st.best[j].max(st.h[j]);
        }
        let l = 8 * K;
        if t >= l {
            top_h[t - l] = prev_bottom.lane0();
        }
        top_f[t + 1 - l] = st.f[K - 1].lane7();
    }

    /// Steps with lanes not started (`t < L - 1`) or finished (`t >= w`).
    #[inline(always)]
    fn edge_step(
        &self,
        st: &mut State<K>,
        t: usize,
        top_h: &mut [i32],
        top_f: &mut [i32],
        right_h: &mut [i32],
        right_e: &mut [i32],
    ) {
        let (l, w) = (8 * K, self.w);
        let (th, tf) = if t < w {
            (top_h[t], top_f[t])
        } else {
            (0, NEG_INF)
        };
        self.step(st, t, th, tf);
        let tv = self.t.splat(t as i32);
        // Lane g is valid iff t - w < g <= t.
        let tw = self.t.splat(t as i32 - w as i32);
        for j in 0..K {
            let waiting = self.lane[j].gt(tv);
            st.h[j] = st.h[j].select(waiting, self.lh[j]);
            st.e[j] = st.e[j].select(waiting, self.le[j]);
            let valid = waiting.andnot(self.lane[j].gt(tw));
            let gt = valid.and(st.h[j].gt(st.best[j]));
            st.best_t[j] = st.best_t[j].select(gt, tv);
            st.best[j] = st.best[j].select(gt, st.h[j]);
        }
        if t + 1 >= l && t + 1 - l < w {
            top_h[t + 1 - l] = st.h[K - 1].lane7();
            top_f[t + 1 - l] = st.f[K - 1].lane7();
        }
        if t + 1 >= w && t + 1 - w < l {
            let g = t + 1 - w;
            right_h[g] = st.h[g / 8].to_array()[g % 8];
            right_e[g] = st.e[g / 8].to_array()[g % 8];
        }
    }
}

/// Vector of `f(base), ..., f(base + 7)`.
#[inline(always)]
fn lanes(t: Avx2, base: usize, f: impl Fn(usize) -> i32) -> V {
    t.array(std::array::from_fn(|k| f(base + k)))
}

/// AVX2 version of [`super::strip::strips`] with `L = 8 * K` rows per strip.
#[inline(always)]
fn strips_impl<const K: usize, S: VecSubst>(
    t: Avx2,
    s: S,
    g: Gaps,
    io: &mut TileIo<'_>,
    best: &mut BestSoFar,
) -> (usize, i32) {
    let l = 8 * K;
    let h = io.a.len();
    let w = io.b.len();
    let nstrips = h / l;
    if nstrips == 0 || w == 0 {
        return (0, io.corner);
    }
    assert!(w + l < i32::MAX as usize / 2, "tile too wide");
    let mut buf = vec![0u8; w + 2 * l];
    for (c, &x) in io.b.iter().enumerate() {
        buf[l + w - 1 - c] = x;
    }
    let top_h = &mut io.top_h[..w];
    let top_f = &mut io.top_f[..w];
    let steps = w + l - 1;
    let mut corner = io.corner;

    for strip in 0..nstrips {
        let r = strip * l;
        let left_h = &io.left_h[r..r + l];
        let left_e = &io.left_e[r..r + l];
        let rows = &io.a[r..r + l];
        let ctx = Ctx::<K, S> {
            t,
            ready: s.ready(t),
            gaps: g,
            open: t.splat(g.open),
            extend: t.splat(g.extend),
            zero: t.splat(0),
            key: std::array::from_fn(|j| lanes(t, 8 * j, |x| s.key(rows[x]))),
            lh: std::array::from_fn(|j| lanes(t, 8 * j, |x| left_h[x])),
            le: std::array::from_fn(|j| lanes(t, 8 * j, |x| left_e[x])),
            lane: std::array::from_fn(|j| lanes(t, 8 * j, |x| x as i32)),
            buf: &buf,
            w,
        };
        let mut diag0 = [0i32; 8];
        diag0[0] = corner;
        let mut st = State::<K> {
            h: ctx.lh,
            e: ctx.le,
            f: [t.splat(NEG_INF); K],
            diag: [t.array(diag0); K],
            best: [t.splat(0); K],
            best_t: [t.splat(0); K],
        };
        corner = left_h[l - 1];
        let right_h = &mut io.left_h[r..r + l];
        let right_e = &mut io.left_e[r..r + l];

        let prologue_end = l - 1; // < steps because w >= 1
        let main_end = (w - 1).max(prologue_end);
        for t in 0..prologue_end {
            ctx.edge_step(&mut st, t, top_h, top_f, right_h, right_e);
        }
        for t in prologue_end..main_end {
            ctx.main_step(&mut st, t, top_h, top_f);
        }
        if main_end > prologue_end {
            // `main_step` writes bottom-row H one column late.
            top_h[main_end - l] = st.h[K - 1].lane7();
        }
        for t in main_end..steps {
            ctx.edge_step(&mut st, t, top_h, top_f, right_h, right_e);
        }

        for j in 0..K {
            let bs = st.best[j].to_array();
            let bt = st.best_t[j].to_array();
            for k in 0..8 {
                let g = 8 * j + k;
                if bs[k] > 0 {
                    best.offer(Best {
                        score: bs[k],
                        row: io.row0 + r + g,
                        col: io.col0 + bt[k] as usize - g,
                    });
                }
            }
        }
    }
    (nstrips * l, corner)
}

/// Rows per strip of the AVX2 engine is `8 * AVX2_VECTORS`.
pub(crate) const AVX2_VECTORS: usize = 2;

/// Runs the AVX2 strip engine.
///
/// # Safety
///
/// None beyond holding `t`: the token proves AVX2 support, which is the only
/// requirement of `target_feature(enable = "avx2")`. (The function is
/// `unsafe` only because `#[target_feature]` requires it on Rust < 1.86.)
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn strips_avx2<S: VecSubst>(
    t: Avx2,
    s: S,
    g: Gaps,
    io: &mut TileIo<'_>,
    best: &mut BestSoFar,
) -> (usize, i32) {
    strips_impl::<AVX2_VECTORS, S>(t, s, g, io, best)
}
