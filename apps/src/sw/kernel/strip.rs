//! Strip engine: `L` rows at a time, skewed so that all lanes of a step are
//! independent.
//!
//! Lane `k` of a strip starting at tile row `r` computes row `r + k`; at step
//! `t` it computes column `t - k` (so a strip takes `w + L - 1` steps). The
//! neighbours of lane `k` at step `t` are
//!
//! * left  `H[r+k][t-k-1]`, `E`: lane `k`'s own state from step `t - 1`;
//! * up    `H[r+k-1][t-k]`, `F`: lane `k - 1`'s state from step `t - 1`
//!   (lane 0 reads the row above the strip);
//! * diag  `H[r+k-1][t-k-1]`: lane `k - 1` at step `t - 2`, which is exactly
//!   the previous step's "up" vector.
//!
//! Before lane `k` starts (`t < k`) its state must hold the left boundary
//! `H[r+k][-1]`, `E[r+k][-1]`; the prologue re-imposes it after every step.
//! After lane `k` finishes (`t >= k + w`) its state is garbage, which only
//! flows to lanes below that have finished as well, so it is merely masked
//! out of the best-cell tracking. Lanes are ordered so that lane `L - 1`
//! yields the bottom row and lane `k` at step `k + w - 1` the right column.

use super::best_so_far::BestSoFar;
use super::{Gaps, Subst, TileIo};
use crate::sw::best::Best;
use crate::sw::scoring::NEG_INF;

/// Per-strip vector state (`L` lanes).
struct State<const L: usize> {
    h: [i32; L],
    e: [i32; L],
    f: [i32; L],
    /// `H` of each lane's diagonal neighbour for the next step.
    diag: [i32; L],
    /// Per-lane best score and the step at which it was first reached.
    best: [i32; L],
    best_t: [i32; L],
}

/// One step of all lanes. `top_h`/`top_f` feed lane 0's "up"; `bw[k]` is the
/// code of the column lane `k` works on.
#[inline(always)]
fn step<const L: usize, S: Subst>(
    s: S,
    g: Gaps,
    st: &mut State<L>,
    key: &[i32; L],
    bw: &[u8; L],
    top_h: i32,
    top_f: i32,
) {
    let mut up_h = [0i32; L];
    let mut up_f = [0i32; L];
    up_h[0] = top_h;
    up_f[0] = top_f;
    up_h[1..].copy_from_slice(&st.h[..L - 1]);
    up_f[1..].copy_from_slice(&st.f[..L - 1]);
    for k in 0..L {
        let f = (up_h[k] - g.open).max(up_f[k] - g.extend);
        let e = (st.h[k] - g.open).max(st.e[k] - g.extend);
        let h = (st.diag[k] + s.score(key[k], bw[k])).max(e).max(f.max(0));
        st.h[k] = h;
        st.e[k] = e;
        st.f[k] = f;
    }
    st.diag = up_h;
}

/// Everything a strip needs besides its state.
struct StripCtx<'a, const L: usize, S: Subst> {
    s: S,
    g: Gaps,
    key: [i32; L],
    /// Left boundary of the strip's rows (`H`, `E` of column -1).
    lh: [i32; L],
    le: [i32; L],
    /// Reversed padded column codes (see [`strips`]).
    buf: &'a [u8],
    w: usize,
}

impl<const L: usize, S: Subst> StripCtx<'_, L, S> {
    #[inline(always)]
    fn window(&self, t: usize) -> &[u8; L] {
        let q = L + self.w - 1 - t;
        self.buf[q..q + L].try_into().expect("window of L codes")
    }

    /// A step where some lanes have not started (`t < L - 1`) or have
    /// finished (`t >= w`): everything is masked / guarded. Writes the bottom
    /// row into `top_*` and the right column into `right_*` (strip rows).
    #[inline(always)]
    fn edge_step(
        &self,
        t: usize,
        st: &mut State<L>,
        top_h: &mut [i32],
        top_f: &mut [i32],
        right_h: &mut [i32],
        right_e: &mut [i32],
    ) {
        let w = self.w;
        let (th, tf) = if t < w {
            (top_h[t], top_f[t])
        } else {
            (0, NEG_INF)
        };
        step(self.s, self.g, st, &self.key, self.window(t), th, tf);
        // All lane loops below have constant trip counts and no data-
        // dependent indexing, so the state arrays can stay in registers.
        let ti = t as i32;
        for k in 0..L {
            // Lanes that have not started keep holding the left boundary.
            let waiting = k > t;
            st.h[k] = if waiting { self.lh[k] } else { st.h[k] };
            st.e[k] = if waiting { self.le[k] } else { st.e[k] };
            let valid = k <= t && t < k + w;
            let gt = valid && st.h[k] > st.best[k];
            st.best_t[k] = if gt { ti } else { st.best_t[k] };
            st.best[k] = if gt { st.h[k] } else { st.best[k] };
        }
        if t + 1 >= L && t + 1 - L < w {
            top_h[t + 1 - L] = st.h[L - 1];
            top_f[t + 1 - L] = st.f[L - 1];
        }
        if t + 1 >= w && t + 1 - w < L {
            let lane = t + 1 - w;
            for k in 0..L {
                if k == lane {
                    right_h[k] = st.h[k];
                    right_e[k] = st.e[k];
                }
            }
        }
    }

    /// A step where every lane is inside the tile (`L - 1 <= t < w - 1`).
    #[inline(always)]
    fn main_step(&self, t: usize, st: &mut State<L>, top_h: &mut [i32], top_f: &mut [i32]) {
        step(
            self.s,
            self.g,
            st,
            &self.key,
            self.window(t),
            top_h[t],
            top_f[t],
        );
        let ti = t as i32;
        for k in 0..L {
            // Branch-free so that it vectorizes (compare + blend).
            let gt = st.h[k] > st.best[k];
            st.best_t[k] = if gt { ti } else { st.best_t[k] };
            st.best[k] = st.best[k].max(st.h[k]);
        }
        top_h[t + 1 - L] = st.h[L - 1];
        top_f[t + 1 - L] = st.f[L - 1];
    }
}

/// Processes `floor(h / L)` full strips of the tile in place and returns the
/// number of rows done and the `H` value above the first remaining row (the
/// corner for the remainder). Offers `best` each row's first cell reaching
/// the row's maximum.
#[inline(always)]
pub(crate) fn strips<const L: usize, S: Subst>(
    s: S,
    g: Gaps,
    io: &mut TileIo<'_>,
    best: &mut BestSoFar,
) -> (usize, i32) {
    let h = io.a.len();
    let w = io.b.len();
    let nstrips = h / L;
    if L < 2 || nstrips == 0 || w == 0 {
        return (0, io.corner);
    }
    assert!(w + L < i32::MAX as usize, "tile too wide");
    // Column codes reversed and padded: buf[L + w - 1 - c] = b[c]. At step t,
    // lane k reads buf[L + w - 1 - t + k], i.e. column t - k. The padding
    // (code 0, valid for every scheme) covers the out-of-tile columns read by
    // lanes that have not started or have finished.
    let mut buf = vec![0u8; w + 2 * L];
    for (c, &x) in io.b.iter().enumerate() {
        buf[L + w - 1 - c] = x;
    }
    let top_h = &mut io.top_h[..w];
    let top_f = &mut io.top_f[..w];
    let steps = w + L - 1;
    let mut corner = io.corner;

    for strip in 0..nstrips {
        let r = strip * L;
        let mut ctx = StripCtx::<L, S> {
            s,
            g,
            key: [0; L],
            lh: [0; L],
            le: [0; L],
            buf: &buf,
            w,
        };
        ctx.lh.copy_from_slice(&io.left_h[r..r + L]);
        ctx.le.copy_from_slice(&io.left_e[r..r + L]);
        for (k, &ak) in ctx.key.iter_mut().zip(&io.a[r..r + L]) {
            *k = s.key(ak);
        }
        let mut st = State::<L> {
            h: ctx.lh,
            e: ctx.le,
            f: [NEG_INF; L],
            diag: [0; L],
            best: [0; L],
            best_t: [0; L],
        };
        st.diag[0] = corner;
        let right_h = &mut io.left_h[r..r + L];
        let right_e = &mut io.left_e[r..r + L];

        let prologue_end = L - 1; // < steps because w >= 1
        let main_end = (w - 1).max(prologue_end);
        for t in 0..prologue_end {
            ctx.edge_step(t, &mut st, top_h, top_f, right_h, right_e);
        }
        for t in prologue_end..main_end {
            ctx.main_step(t, &mut st, top_h, top_f);
        }
        for t in main_end..steps {
            ctx.edge_step(t, &mut st, top_h, top_f, right_h, right_e);
        }

        // Within a lane the first (smallest-column) step was kept.
        for k in 0..L {
            if st.best[k] > 0 {
                best.offer(Best {
                    score: st.best[k],
                    row: io.row0 + r + k,
                    col: io.col0 + st.best_t[k] as usize - k,
                });
            }
        }
        corner = ctx.lh[L - 1];
    }
    (nstrips * L, corner)
}
