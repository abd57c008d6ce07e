//! The reference oracle: a plain full-matrix Gotoh DP, `O(n * m)` time and
//! memory, written for obviousness rather than speed. Use it in tests only.

use crate::sw::{Best, Scoring, NEG_INF};

/// Full `(n + 1) x (m + 1)` matrices of a Gotoh local alignment.
#[derive(Clone, Debug)]
pub struct Matrices {
    /// `h[i][j]`: best local alignment score ending at `(i, j)` (1-based).
    pub h: Vec<Vec<i32>>,
    /// `e[i][j]`: best score ending at `(i, j)` with a horizontal gap.
    pub e: Vec<Vec<i32>>,
    /// `f[i][j]`: best score ending at `(i, j)` with a vertical gap.
    pub f: Vec<Vec<i32>>,
}

/// Fills the three matrices (row 0 and column 0 are the borders).
pub fn matrices(a: &[u8], b: &[u8], scoring: &Scoring) -> Matrices {
    let (n, m) = (a.len(), b.len());
    let open = scoring.gap_open();
    let ext = scoring.gap_extend();
    let mut h = vec![vec![0i32; m + 1]; n + 1];
    let mut e = vec![vec![NEG_INF; m + 1]; n + 1];
    let mut f = vec![vec![NEG_INF; m + 1]; n + 1];
    for i in 1..=n {
        for j in 1..=m {
            e[i][j] = (h[i][j - 1] - open).max(e[i][j - 1] - ext);
            f[i][j] = (h[i - 1][j] - open).max(f[i - 1][j] - ext);
            let diag = h[i - 1][j - 1] + scoring.score(a[i - 1], b[j - 1]);
            h[i][j] = 0.max(diag).max(e[i][j]).max(f[i][j]);
        }
    }
    Matrices { h, e, f }
}

/// Best local alignment score and its end cell (0-based), smallest row then
/// smallest column on ties; `(0, 0, 0)` when the best score is 0 or an input
/// is empty.
pub fn align(a: &[u8], b: &[u8], scoring: &Scoring) -> Best {
    let mats = matrices(a, b, scoring);
    let mut best = Best::zero_at(0, 0);
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            // Row-major scan with strict '>' keeps the smallest (row, col).
            if mats.h[i][j] > best.score {
                best = Best {
                    score: mats.h[i][j],
                    row: i - 1,
                    col: j - 1,
                };
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dna(s: &[u8]) -> Vec<u8> {
        crate::sw::alphabet::Alphabet::Dna.encode(s).unwrap()
    }

    #[test]
    fn hand_checked() {
        let sc = Scoring::dna_default();
        // Identical 4-mers: 4 matches.
        assert_eq!(
            align(&dna(b"ACGT"), &dna(b"ACGT"), &sc),
            Best {
                score: 8,
                row: 3,
                col: 3
            }
        );
        // All mismatches: score 0 at (0, 0).
        assert_eq!(align(&dna(b"AAAA"), &dna(b"CCC"), &sc), Best::zero_at(0, 0));
        // Tie: "A" matches at columns 1 and 3; the smallest column wins.
        assert_eq!(
            align(&dna(b"A"), &dna(b"CACA"), &sc),
            Best {
                score: 2,
                row: 0,
                col: 1
            }
        );
        // Affine gap: ACGTTTTACGT vs ACGTACGT with open 3, extend 1:
        // 8 matches * 2 - (3 + 2 * 1) = 11.
        let sc2 = Scoring::match_mismatch(2, -3, 3, 1).unwrap();
        assert_eq!(
            align(&dna(b"ACGTTTTACGT"), &dna(b"ACGTACGT"), &sc2).score,
            11
        );
        // Empty input.
        assert_eq!(align(&[], &dna(b"ACGT"), &sc), Best::zero_at(0, 0));
    }
}
