//! The three-pass fill of a traceback block against the plain recurrence,
//! one cell after the other: the same bytes, the same last row.

use super::{
    Cell, Edge, Limits, State, Tracer, E_EXTENDS, FROM_DIAG, FROM_E, FROM_F, FROM_ZERO, F_EXTENDS,
};
use crate::sw::random::{mutated, random_dna, random_protein, SplitMix64};
use crate::sw::{Scoring, NEG_INF};

/// The block's bytes and last row by the recurrence as written.
fn plain(
    scoring: &Scoring,
    a: &[u8],
    b: &[u8],
    top: &Edge,
    lo: usize,
    cell: Cell,
) -> (Vec<u8>, Vec<i32>, Vec<i32>) {
    let (open, extend) = (scoring.gap_open(), scoring.gap_extend());
    let mut h_row: Vec<i32> = (lo..=cell.col).map(|c| top.h_at(c)).collect();
    let mut f_row: Vec<i32> = (lo..=cell.col).map(|c| top.f_at(c)).collect();
    let mut dirs = Vec::new();
    let mut corner = top.h_at(lo - 1);
    for row in top.row + 1..=cell.row {
        let mut diag = std::mem::replace(&mut corner, 0);
        let (mut h_left, mut e) = (0, NEG_INF);
        for (k, col) in (lo..=cell.col).enumerate() {
            let (e_open, e_ext) = (h_left - open, e - extend);
            let (f_open, f_ext) = (h_row[k] - open, f_row[k] - extend);
            e = e_open.max(e_ext);
            let f = f_open.max(f_ext);
            let d = diag + scoring.score(a[row - 1], b[col - 1]);
            let h = d.max(f).max(e).max(0);
            let from = if h == 0 {
                FROM_ZERO
            } else if d == h {
                FROM_DIAG
            } else if f == h {
                FROM_F
            } else {
                FROM_E
            };
            dirs.push(
                from | (u8::from(e_ext > e_open) * E_EXTENDS)
                    | (u8::from(f_ext > f_open) * F_EXTENDS),
            );
            diag = h_row[k];
            (h_row[k], f_row[k], h_left) = (h, f, h);
        }
    }
    (dirs, h_row, f_row)
}

#[test]
fn three_passes_give_the_plain_recurrence() {
    let schemes = [
        Scoring::match_mismatch(2, -1, 3, 1).unwrap(),
        Scoring::match_mismatch(1, -3, 5, 2).unwrap(),
        // open == extend, and extend == 0: where the E shortcut is tight.
        Scoring::match_mismatch(2, -1, 2, 2).unwrap(),
        Scoring::match_mismatch(2, -2, 4, 0).unwrap(),
        Scoring::match_mismatch(1, -1, 0, 0).unwrap(),
        Scoring::blosum62(11, 1).unwrap(),
    ];
    let mut rng = SplitMix64::new(5);
    for (k, scoring) in schemes.iter().enumerate() {
        let protein = k == schemes.len() - 1;
        for seed in 0..20u64 {
            let (a, b) = match protein {
                true => {
                    let a = random_protein(90, seed);
                    let b = mutated(&a, 20, 0.2, seed + 1);
                    (a, b)
                }
                false => {
                    let a = random_dna(90, seed);
                    let b = mutated(&a, 4, 0.2, seed + 1);
                    (a, b)
                }
            };
            let (rows, lo) = (1 + rng.below(40) as usize, 1 + rng.below(20) as usize);
            let row0 = rng.below(30) as usize;
            let col = (lo + rng.below(50) as usize).min(b.len());
            // A top row with values and gaps in progress, 0 outside.
            let width = col + 2 - lo;
            let top = Edge {
                row: row0,
                col0: lo - 1,
                h: (0..width).map(|_| rng.below(30) as i32).collect(),
                f: (0..width).map(|_| rng.below(20) as i32).collect(),
            };
            let cell = Cell {
                row: row0 + rows,
                col,
                state: State::H,
                value: 0,
            };
            let mut tracer = Tracer::new(Limits::DEFAULT, &a, &b, scoring);
            tracer.fill(&top, lo, cell);
            let (dirs, h_row, f_row) = plain(scoring, &a, &b, &top, lo, cell);
            let what = format!("{scoring:?} seed {seed}");
            assert_eq!(tracer.dirs, dirs, "{what}");
            assert_eq!((tracer.h_row, tracer.f_row), (h_row, f_row), "{what}");
        }
    }
}
