//! Row-by-row scalar engine.

use super::best_so_far::BestSoFar;
use super::{Gaps, Subst};
use crate::sw::best::Best;

/// Processes all rows of `a` against `b`, in place (see [`super::TileIo`]).
/// `corner` is the `H` value above `left_h[0]`; `row0`/`col0` are the global
/// coordinates of the first cell. Offers `best` each row's first cell
/// reaching the row's maximum.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rows<S: Subst>(
    s: S,
    g: Gaps,
    a: &[u8],
    b: &[u8],
    top_h: &mut [i32],
    top_f: &mut [i32],
    left_h: &mut [i32],
    left_e: &mut [i32],
    mut corner: i32,
    row0: usize,
    col0: usize,
    best: &mut BestSoFar,
) {
    let w = b.len();
    let (top_h, top_f) = (&mut top_h[..w], &mut top_f[..w]);
    for (i, &ai) in a.iter().enumerate() {
        let key = s.key(ai);
        let old_left = left_h[i];
        let mut diag = corner;
        let mut h_left = old_left;
        let mut e = left_e[i];
        let mut row_best = 0;
        let mut row_best_col = 0;
        for (j, ((&bj, th), tf)) in b
            .iter()
            .zip(top_h.iter_mut())
            .zip(top_f.iter_mut())
            .enumerate()
        {
            e = (h_left - g.open).max(e - g.extend);
            let up = *th;
            let f = (up - g.open).max(*tf - g.extend);
            let h = (diag + s.score(key, bj)).max(e).max(f.max(0));
            diag = up;
            *th = h;
            *tf = f;
            h_left = h;
            if h > row_best {
                row_best = h;
                row_best_col = j;
            }
        }
        left_h[i] = h_left;
        left_e[i] = e;
        corner = old_left;
        if row_best > 0 {
            best.offer(Best {
                score: row_best,
                row: row0 + i,
                col: col0 + row_best_col,
            });
        }
    }
}
