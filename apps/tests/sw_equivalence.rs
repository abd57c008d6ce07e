//! Every kernel this machine runs (scalar, the 32-bit strip kernels, the
//! striped kernels from 8 and 16 bits on each instruction set; whole-matrix
//! and tiled) must equal the reference oracle exactly: score *and* end cell,
//! and the tile oracle's edges.

use apps::sw::random::{mutated, random_codes, random_dna, random_protein, SplitMix64};
use apps::sw::tile::{
    align_tiled_with, compute_tile, tile_in_place_with, Boundary, EdgeCol, EdgeRow, Origin,
};
use apps::sw::{reference, seq, Best, Bits, Isa, Kernel, Scoring, NEG_INF};
use std::ops::Range;

/// Every kernel this machine runs as itself, and `Auto`.
fn kernels() -> Vec<Kernel> {
    let mut all = Kernel::available();
    all.push(Kernel::Auto);
    all
}

/// Match/mismatch scorings: what each tests, then match, mismatch, gap
/// open and gap extend.
const MATCH_MISMATCH: [(&str, [i32; 4]); 11] = [
    ("linear", [2, -3, 3, 3]),
    ("affine", [2, -3, 5, 2]),
    ("affine", [5, -4, 10, 1]),
    ("free gaps", [1, -1, 0, 0]),
    ("harsh", [1, -9, 20, 20]),
    // Gap penalties above what an 8-bit lane subtracts (127) and above
    // its values' range.
    ("gaps beyond 8 bits", [2, -1, 300, 300]),
    // The edges of what 8-bit lanes take: scores -128..=127 and gaps up
    // to 127; then one past each.
    ("8-bit amounts at their limits", [127, -128, 127, 127]),
    ("8-bit amounts one past", [2, -129, 128, 1]),
    ("8-bit match one past", [128, -1, 3, 1]),
    // And past what 16-bit lanes take: the 32-bit kernels do it all.
    ("16-bit gaps one past", [2, -1, 32768, 1]),
    ("16-bit mismatch one past", [2, -32769, 3, 1]),
];

fn dna_schemes() -> Vec<(String, Scoring)> {
    let mut all = vec![("default 2/-1/2/2".to_owned(), Scoring::dna_default())];
    all.extend(MATCH_MISMATCH.iter().map(|&(what, [m, x, open, extend])| {
        let scoring = Scoring::match_mismatch(m, x, open, extend).unwrap();
        (format!("{what} {m}/{x}/{open}/{extend}"), scoring)
    }));
    all
}

fn protein_schemes() -> Vec<(&'static str, Scoring)> {
    vec![
        ("BLOSUM62 11/1", Scoring::blosum62(11, 1).unwrap()),
        ("BLOSUM62 10/10", Scoring::blosum62(10, 10).unwrap()),
        ("BLOSUM62 5/2", Scoring::blosum62(5, 2).unwrap()),
    ]
}

const TILES: [(usize, usize); 9] = [
    (1, 1),
    (1, 7),
    (5, 3),
    (8, 8),
    (16, 16),
    (17, 33),
    (64, 8),
    (40, 1),
    (1000, 1000),
];

/// Checks all kernels and tilings on one input.
fn check_all(
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    what: &str,
    tilings: &[(usize, usize)],
) -> Best {
    let want = reference::align(a, b, scoring);
    for k in kernels() {
        let got = seq::align_with(k, a, b, scoring);
        assert_eq!(got, want, "seq {k:?} {what} n={} m={}", a.len(), b.len());
    }
    for &(tr, tc) in tilings {
        for k in [Kernel::Scalar, Kernel::Auto] {
            let got = align_tiled_with(k, a, b, scoring, tr, tc);
            assert_eq!(
                got,
                want,
                "tiled {tr}x{tc} {k:?} {what} n={} m={}",
                a.len(),
                b.len()
            );
        }
    }
    want
}

#[test]
fn random_dna_all_kernels() {
    let mut rng = SplitMix64::new(42);
    for (name, sc) in dna_schemes() {
        for case in 0..25 {
            let n = 1 + rng.below(300) as usize;
            let m = 1 + rng.below(300) as usize;
            let a = random_dna(n, rng.next_u64());
            let b = random_dna(m, rng.next_u64());
            // Tiled runs with 1x1 tiles are slow-ish: only for a few cases.
            let tilings: &[(usize, usize)] = if case % 5 == 0 { &TILES } else { &TILES[2..] };
            check_all(&a, &b, &sc, &name, tilings);
        }
    }
}

#[test]
fn random_protein_blosum62() {
    let mut rng = SplitMix64::new(7);
    for (name, sc) in protein_schemes() {
        for case in 0..20 {
            let n = 1 + rng.below(300) as usize;
            let m = 1 + rng.below(300) as usize;
            // Mostly the 20 standard residues; every 4th case also B Z X *.
            let (a, b) = if case % 4 == 0 {
                (
                    random_codes(n, 24, rng.next_u64()),
                    random_codes(m, 24, rng.next_u64()),
                )
            } else {
                (
                    random_protein(n, rng.next_u64()),
                    random_protein(m, rng.next_u64()),
                )
            };
            let tilings: &[(usize, usize)] = if case % 5 == 0 { &TILES } else { &TILES[2..] };
            check_all(&a, &b, &sc, name, tilings);
        }
    }
}

#[test]
fn related_sequences_with_indels() {
    // A mutated copy gives long, high-scoring alignments through gaps.
    let mut rng = SplitMix64::new(99);
    for (name, sc) in dna_schemes() {
        for _ in 0..6 {
            let a = random_dna(150 + rng.below(150) as usize, rng.next_u64());
            let mut b = Vec::new();
            for &c in &a {
                match rng.below(20) {
                    0 => {}                                 // deletion
                    1 => b.extend([c, rng.below(4) as u8]), // insertion
                    2 => b.push(rng.below(4) as u8),        // substitution
                    _ => b.push(c),
                }
            }
            let best = check_all(&a, &b, &sc, &name, &TILES[2..]);
            assert!(best.score > 0);
        }
    }
}

#[test]
fn low_entropy_inputs_have_many_ties() {
    // Alphabets of 1 and 2 letters produce many equal-score cells, which
    // exercises the tie-break in every kernel and across tiles.
    let mut rng = SplitMix64::new(5);
    for (name, sc) in dna_schemes() {
        for size in [1u8, 2] {
            for _ in 0..8 {
                let n = 1 + rng.below(120) as usize;
                let m = 1 + rng.below(120) as usize;
                let a = random_codes(n, size, rng.next_u64());
                let b = random_codes(m, size, rng.next_u64());
                check_all(&a, &b, &sc, &name, &TILES);
            }
        }
    }
    // Periodic sequences: the same best score on many diagonals.
    let sc = Scoring::match_mismatch(1, -5, 7, 7).unwrap();
    let a: Vec<u8> = (0..97).map(|i| (i % 3) as u8).collect();
    let b: Vec<u8> = (0..131).map(|i| (i % 3) as u8).collect();
    let want = check_all(&a, &b, &sc, "periodic", &TILES);
    assert_eq!(
        want,
        Best {
            score: 97,
            row: 96,
            col: 96
        }
    );
}

#[test]
fn zero_score_reports_origin() {
    // All mismatches: every H is 0, so every kernel reports (0, 0).
    for (n, m) in [(1, 1), (1, 300), (300, 1), (17, 16), (160, 97)] {
        let a = vec![0u8; n];
        let b = vec![1u8; m];
        for (name, sc) in dna_schemes() {
            let best = check_all(&a, &b, &sc, &name, &TILES);
            assert_eq!(best, Best::zero_at(0, 0));
        }
    }
}

#[test]
fn hand_made_ties() {
    let sc = Scoring::dna_default();
    let harsh = Scoring::match_mismatch(1, -9, 20, 20).unwrap();
    let cases: [(&[u8], &[u8], &Scoring, Best); 4] = [
        // "A" matches columns 1 and 3: smallest column.
        (
            &[0],
            &[1, 0, 1, 0],
            &sc,
            Best {
                score: 2,
                row: 0,
                col: 1,
            },
        ),
        // "A" in rows 1 and 3 vs "A": smallest row.
        (
            &[1, 0, 1, 0],
            &[0],
            &sc,
            Best {
                score: 2,
                row: 1,
                col: 0,
            },
        ),
        // ACGTT vs TTGAC: "AC" ends at (1, 4), "TT" at (4, 1), both 2: the
        // smaller row wins although its column is larger.
        (
            &[0, 1, 2, 3, 3],
            &[3, 3, 2, 0, 1],
            &harsh,
            Best {
                score: 2,
                row: 1,
                col: 4,
            },
        ),
        (
            &[2],
            &[2],
            &sc,
            Best {
                score: 2,
                row: 0,
                col: 0,
            },
        ),
    ];
    for (a, b, s, want) in cases {
        assert_eq!(check_all(a, b, s, "hand", &TILES), want);
    }
}

#[test]
fn lengths_one_and_empty() {
    let sc = Scoring::dna_default();
    for k in kernels() {
        assert_eq!(seq::align_with(k, &[], &[], &sc), Best::zero_at(0, 0));
        assert_eq!(seq::align_with(k, &[1, 2], &[], &sc), Best::zero_at(0, 0));
        assert_eq!(seq::align_with(k, &[], &[1, 2], &sc), Best::zero_at(0, 0));
        assert_eq!(
            align_tiled_with(k, &[], &[3], &sc, 4, 4),
            Best::zero_at(0, 0)
        );
    }
    for a in 0..4u8 {
        for b in 0..4u8 {
            check_all(&[a], &[b], &sc, "1x1", &TILES);
        }
    }
}

/// The boundary of the tile of rows `rows` and columns `cols` (0-based),
/// read from the reference matrices (whose index is one more).
fn boundary_of(mats: &reference::Matrices, rows: Range<usize>, cols: Range<usize>) -> Boundary {
    let (r0, c0) = (rows.start, cols.start);
    Boundary {
        top: EdgeRow {
            h: cols.clone().map(|j| mats.h[r0][j + 1]).collect(),
            f: cols.map(|j| mats.f[r0][j + 1]).collect(),
        },
        left: EdgeCol {
            corner: mats.h[r0][c0],
            h: rows.clone().map(|i| mats.h[i + 1][c0]).collect(),
            e: rows.map(|i| mats.e[i + 1][c0]).collect(),
        },
    }
}

/// The tile kernel's edge semantics checked directly against the reference
/// matrices: feed an interior tile its true boundary, compare its bottom
/// row, right column (and corner) and best cell.
#[test]
fn tile_edges_match_reference_matrices() {
    let mut rng = SplitMix64::new(2024);
    let schemes: Vec<Scoring> = dna_schemes().into_iter().map(|(_, s)| s).collect();
    for (case, sc) in schemes.iter().cycle().take(40).enumerate() {
        let n = 2 + rng.below(120) as usize;
        let m = 2 + rng.below(120) as usize;
        let a = random_dna(n, rng.next_u64());
        let b = random_dna(m, rng.next_u64());
        let mats = reference::matrices(&a, &b, sc);
        // Tile rows r0..r1, cols c0..c1 (0-based); matrix index = +1.
        let r0 = rng.below(n as u32) as usize;
        let c0 = rng.below(m as u32) as usize;
        let r1 = r0 + 1 + rng.below((n - r0) as u32) as usize;
        let c1 = c0 + 1 + rng.below((m - c0) as u32) as usize;
        let boundary = boundary_of(&mats, r0..r1, c0..c1);
        let origin = Origin { row: r0, col: c0 };
        let res = compute_tile(&a[r0..r1], &b[c0..c1], sc, origin, &boundary);
        let want_bottom = EdgeRow {
            h: (c0..c1).map(|j| mats.h[r1][j + 1]).collect(),
            f: (c0..c1).map(|j| mats.f[r1][j + 1].max(0)).collect(),
        };
        let want_right = EdgeCol {
            corner: mats.h[r0][c1],
            h: (r0..r1).map(|i| mats.h[i + 1][c1]).collect(),
            e: (r0..r1).map(|i| mats.e[i + 1][c1].max(0)).collect(),
        };
        assert_eq!(res.bottom, want_bottom, "case {case}");
        assert_eq!(res.right, want_right, "case {case}");
        let mut want_best = Best::zero_at(r0, c0);
        for i in r0..r1 {
            for j in c0..c1 {
                if mats.h[i + 1][j + 1] > want_best.score {
                    want_best = Best {
                        score: mats.h[i + 1][j + 1],
                        row: i,
                        col: j,
                    };
                }
            }
        }
        assert_eq!(res.best, want_best, "case {case}");
    }
}

/// Plain DP of one tile from an arbitrary boundary (test oracle).
fn tile_oracle(
    a: &[u8],
    b: &[u8],
    sc: &Scoring,
    origin: Origin,
    bd: &Boundary,
) -> (EdgeRow, EdgeCol, Best) {
    let (h, w) = (a.len(), b.len());
    let (o, x) = (sc.gap_open(), sc.gap_extend());
    // Matrices with the boundary in row 0 / column 0.
    let mut hm = vec![vec![0i32; w + 1]; h + 1];
    let mut em = vec![vec![NEG_INF; w + 1]; h + 1];
    let mut fm = vec![vec![NEG_INF; w + 1]; h + 1];
    hm[0][0] = bd.left.corner;
    for j in 0..w {
        hm[0][j + 1] = bd.top.h[j];
        fm[0][j + 1] = bd.top.f[j];
    }
    for i in 0..h {
        hm[i + 1][0] = bd.left.h[i];
        em[i + 1][0] = bd.left.e[i];
    }
    let mut best = Best::zero_at(origin.row, origin.col);
    for i in 1..=h {
        for j in 1..=w {
            em[i][j] = (hm[i][j - 1] - o).max(em[i][j - 1] - x);
            fm[i][j] = (hm[i - 1][j] - o).max(fm[i - 1][j] - x);
            hm[i][j] = 0
                .max(hm[i - 1][j - 1] + sc.score(a[i - 1], b[j - 1]))
                .max(em[i][j])
                .max(fm[i][j]);
            if hm[i][j] > best.score {
                best = Best {
                    score: hm[i][j],
                    row: origin.row + i - 1,
                    col: origin.col + j - 1,
                };
            }
        }
    }
    let bottom = EdgeRow {
        h: hm[h][1..].to_vec(),
        f: fm[h][1..].iter().map(|&f| f.max(0)).collect(),
    };
    let right = EdgeCol {
        corner: hm[0][w],
        h: (1..=h).map(|i| hm[i][w]).collect(),
        e: (1..=h).map(|i| em[i][w].max(0)).collect(),
    };
    (bottom, right, best)
}

/// Every kernel on the tile of `a` x `b` from boundary `bd` equals the
/// tile oracle's bottom row, right column and best cell.
fn every_kernel_equals_the_tile_oracle(
    a: &[u8],
    b: &[u8],
    sc: &Scoring,
    origin: Origin,
    bd: &Boundary,
    what: &str,
) {
    let (h, w) = (a.len(), b.len());
    let (wb, wr, wbest) = tile_oracle(a, b, sc, origin, bd);
    for k in kernels() {
        let mut top = bd.top.clone();
        let mut left = bd.left.clone();
        let best = tile_in_place_with(k, a, b, sc, origin, &mut top, &mut left);
        assert_eq!(top, wb, "bottom, {what} {k:?} h={h} w={w}");
        assert_eq!(left, wr, "right, {what} {k:?} h={h} w={w}");
        assert_eq!(best, wbest, "best, {what} {k:?} h={h} w={w}");
    }
}

/// Arbitrary (not necessarily reachable) boundaries: all kernels agree with
/// the tile oracle. This covers strip edges for every (h mod 16, w) shape.
#[test]
fn tile_kernels_on_random_boundaries() {
    let mut rng = SplitMix64::new(77);
    let mut schemes: Vec<Scoring> = dna_schemes().into_iter().map(|(_, s)| s).collect();
    schemes.extend(protein_schemes().into_iter().map(|(_, s)| s));
    for case in 0..300 {
        let sc = &schemes[case % schemes.len()];
        let protein = case % schemes.len() >= dna_schemes().len();
        let h = 1 + rng.below(70) as usize;
        let w = 1 + rng.below(70) as usize;
        let (a, b) = if protein {
            (
                random_protein(h, rng.next_u64()),
                random_protein(w, rng.next_u64()),
            )
        } else {
            (random_dna(h, rng.next_u64()), random_dna(w, rng.next_u64()))
        };
        // Every third case, boundary values around the 8-bit limit (~250),
        // so a striped kernel may stop after its first row.
        let span = if case % 3 == 0 { 300 } else { 60 };
        let hv = |rng: &mut SplitMix64| rng.below(span) as i32;
        let gv = |rng: &mut SplitMix64| {
            if rng.below(4) == 0 {
                NEG_INF
            } else {
                rng.below(span) as i32 - 20
            }
        };
        let bd = Boundary {
            top: EdgeRow {
                h: (0..w).map(|_| hv(&mut rng)).collect(),
                f: (0..w).map(|_| gv(&mut rng)).collect(),
            },
            left: EdgeCol {
                corner: hv(&mut rng),
                h: (0..h).map(|_| hv(&mut rng)).collect(),
                e: (0..h).map(|_| gv(&mut rng)).collect(),
            },
        };
        let origin = Origin {
            row: rng.below(1000) as usize,
            col: rng.below(1000) as usize,
        };
        every_kernel_equals_the_tile_oracle(&a, &b, sc, origin, &bd, &format!("case {case}"));
    }
}

/// Scores that outgrow 8-bit lanes (~250) and 16-bit lanes (~65,000)
/// part-way through a tile: the striped kernels hand the remaining rows to
/// wider lanes, and every kernel still equals the reference, tiled or not.
#[test]
fn scores_outgrow_narrow_lanes() {
    let dna = random_dna(700, 11);
    let protein = random_protein(500, 12);
    let cases = [
        // All-match: 2 per row along the diagonal, past 255 at row ~128.
        (dna.clone(), dna.clone(), Scoring::dna_default()),
        // 150 per match: past 65,535 at row ~437.
        (
            dna.clone(),
            dna.clone(),
            Scoring::match_mismatch(150, -1, 3, 1).unwrap(),
        ),
        // Protein self-alignment with BLOSUM62 (4 to 11 per residue).
        (
            protein.clone(),
            protein.clone(),
            Scoring::blosum62(11, 1).unwrap(),
        ),
        // Profile entries spanning exactly 255: 8-bit lanes run only
        // while every H is 0.
        (
            dna[..300].to_vec(),
            dna[..250].to_vec(),
            Scoring::match_mismatch(200, -55, 60, 5).unwrap(),
        ),
        // Scores that never fit 8-bit lanes (a match is worth 300).
        (
            dna[..300].to_vec(),
            dna[..200].to_vec(),
            Scoring::match_mismatch(300, -200, 400, 10).unwrap(),
        ),
    ];
    for (a, b, sc) in &cases {
        check_all(a, b, sc, "outgrow", &[(64, 64), (333, 333), (1000, 1000)]);
    }
}

/// Long gaps cross many lane boundaries of the striped layout in one row:
/// the gap entering a lane must come from every lane below it.
#[test]
fn long_gaps_cross_many_lanes() {
    let flank_a = random_dna(300, 21);
    let flank_b = random_dna(300, 22);
    let insert = random_dna(260, 23);
    let joined: Vec<u8> = [flank_a.clone(), flank_b.clone()].concat();
    let with_insert: Vec<u8> = [flank_a, insert, flank_b].concat();
    for sc in [
        Scoring::match_mismatch(2, -3, 5, 1).unwrap(),
        Scoring::match_mismatch(3, -2, 4, 0).unwrap(),
        Scoring::dna_default(),
    ] {
        // The insertion in B (a horizontal gap, across lanes) and in A
        // (a vertical one).
        check_all(&joined, &with_insert, &sc, "gap in B", &[(64, 100)]);
        check_all(&with_insert, &joined, &sc, "gap in A", &[(100, 64)]);
    }
}

/// Gaps entering a wide tile from its left edge, worth enough to cross
/// many lanes of the striped layout (tens of columns each) and still be
/// better there than the lanes' own: the gap entering each lane comes
/// from a scan over the lanes below, is carried into the next row, and
/// leaves through the right edge. Every kernel, from 8-bit lanes (edges
/// around 200) and from 16-bit ones (edges in the thousands, losses
/// across a lane above what one 8-bit step subtracts), equals the tile
/// oracle's edges and best cell.
#[test]
fn wide_tiles_with_gaps_across_many_lanes_equal_the_tile_oracle() {
    let mut rng = SplitMix64::new(91);
    let scorings = [
        Scoring::match_mismatch(2, -3, 5, 1).unwrap(),
        Scoring::match_mismatch(3, -2, 4, 0).unwrap(),
        Scoring::match_mismatch(2, -3, 12, 6).unwrap(),
        Scoring::blosum62(11, 1).unwrap(),
    ];
    for (case, sc) in scorings.iter().enumerate() {
        let protein = case == 3;
        for (w, high) in [(1000, 200), (1500, 230), (2000, 3000), (1999, 9000)] {
            let h = 24;
            let (a, b) = if protein {
                (
                    random_protein(h, rng.next_u64()),
                    random_protein(w, rng.next_u64()),
                )
            } else {
                (random_dna(h, rng.next_u64()), random_dna(w, rng.next_u64()))
            };
            // Every third row enters with a high H and its gap just below
            // it; the top edge is low, so those gaps run far to the right.
            let left_h: Vec<i32> = (0..h)
                .map(|i| {
                    if i % 3 == 0 {
                        high - rng.below(20) as i32
                    } else {
                        rng.below(10) as i32
                    }
                })
                .collect();
            let bd = Boundary {
                top: EdgeRow {
                    h: (0..w).map(|_| rng.below(8) as i32).collect(),
                    f: (0..w).map(|_| NEG_INF).collect(),
                },
                left: EdgeCol {
                    corner: rng.below(8) as i32,
                    e: left_h.iter().map(|&x| x - 1).collect(),
                    h: left_h,
                },
            };
            let origin = Origin { row: 5, col: 7 };
            every_kernel_equals_the_tile_oracle(
                &a,
                &b,
                sc,
                origin,
                &bd,
                &format!("scoring {case}"),
            );
        }
    }
}

/// On x86-64 every CPU has SSE4.1 or better these days; the striped
/// kernels must be among those tested, else the tests above prove little.
#[test]
#[cfg(target_arch = "x86_64")]
fn striped_kernels_are_tested_here() {
    let here = Kernel::available();
    eprintln!("kernels tested on this machine: {here:?}");
    if std::is_x86_feature_detected!("sse4.1") {
        assert!(here.contains(&Kernel::Striped(Isa::Sse41, Bits::Sixteen)));
        assert!(matches!(Kernel::Auto.resolve(), Kernel::Striped(..)));
    }
}

/// Tiles of 4096 columns and more go on in halves where their 8-bit pass
/// stops (`kernel::SPLIT_COLS`): B repeats A, mutated, across 5000 columns,
/// so scores outgrow 8 bits on some copies and not on others. The
/// sequential pass (one block of 5000 columns) and the tiled one (tiles of
/// 5000 and 4200 columns) on every kernel, Scalar and Auto, equal the
/// reference's score and end cell; one tile of 4300 columns, whose 8-bit
/// pass stops part-way, equals the tile oracle's edges and best cell on
/// every kernel.
#[test]
fn wide_tiles_split_where_scores_outgrow_8_bits() {
    let a = random_dna(260, 31);
    let copies: Vec<u8> = (0..25).flat_map(|_| a.iter().copied()).collect();
    let b = mutated(&copies, 4, 0.15, 32);
    let b = &b[..5000];
    for sc in [
        Scoring::dna_default(),
        Scoring::match_mismatch(3, -2, 5, 1).unwrap(),
    ] {
        check_all(&a, b, &sc, "wide", &[(100, 5000), (260, 4200)]);
        let mats = reference::matrices(&a, b, &sc);
        // Its boundary is low enough for 8 bits (at most 151 and 235), and
        // its scores outgrow them part-way (after 158 and 107 of its 220
        // rows).
        let (r0, c0) = (40, 680);
        let (r1, c1) = (a.len(), 4980);
        let boundary = boundary_of(&mats, r0..r1, c0..c1);
        let origin = Origin { row: r0, col: c0 };
        let (want_bottom, want_right, want_best) =
            tile_oracle(&a[r0..r1], &b[c0..c1], &sc, origin, &boundary);
        for k in kernels() {
            let (mut top, mut left) = (boundary.top.clone(), boundary.left.clone());
            let best =
                tile_in_place_with(k, &a[r0..r1], &b[c0..c1], &sc, origin, &mut top, &mut left);
            assert_eq!(top, want_bottom, "bottom, {k:?}");
            assert_eq!(left, want_right, "right, {k:?}");
            assert_eq!(best, want_best, "best, {k:?}");
        }
    }
}

#[test]
fn larger_inputs_seq_vs_tiled() {
    // Too big for the reference in a quick test run: kernels vs each other.
    let a = random_dna(3000, 1);
    let b = random_dna(2500, 2);
    for sc in [
        Scoring::dna_default(),
        Scoring::match_mismatch(2, -3, 5, 2).unwrap(),
    ] {
        let want = seq::align_with(Kernel::Scalar, &a, &b, &sc);
        assert_eq!(seq::align(&a, &b, &sc), want);
        assert_eq!(seq::align_with(Kernel::Portable, &a, &b, &sc), want);
        for (tr, tc) in [(512, 512), (100, 300), (333, 17)] {
            assert_eq!(align_tiled_with(Kernel::Auto, &a, &b, &sc, tr, tc), want);
        }
    }
}

#[test]
#[should_panic(expected = "exceed MAX_SCORE")]
fn overflow_is_refused() {
    let sc = Scoring::match_mismatch(1 << 20, -1, 1, 1).unwrap();
    let a = vec![0u8; 600];
    seq::align(&a, &a, &sc);
}

/// Below the square part of a tall matrix (beside it in a wide one) the
/// edges already carry about `gain * min(n, m)`: a tile there must not
/// count them twice. Scores reach `MAX_SCORE` here, exactly.
#[test]
fn tall_and_wide_matrices_reach_max_score_by_tiles() {
    let sc = Scoring::match_mismatch(1 << 20, -1, 1, 1).unwrap();
    let (tall, short) = (vec![0u8; 1024], vec![0u8; 512]);
    for (a, b, tiles) in [(&tall, &short, (256, 512)), (&short, &tall, (512, 256))] {
        let want = seq::align(a, b, &sc);
        assert_eq!(want.score, apps::sw::MAX_SCORE);
        assert_eq!(want, reference::align(a, b, &sc));
        let got = align_tiled_with(Kernel::Auto, a, b, &sc, tiles.0, tiles.1);
        assert_eq!(got, want, "{} x {} in {tiles:?} tiles", a.len(), b.len());
    }
}

/// Edges no alignment can reach at their place are still refused when
/// the scores they would lead to exceed `MAX_SCORE`.
#[test]
#[should_panic(expected = "exceed MAX_SCORE")]
fn unreachable_edges_that_could_overflow_are_refused() {
    let sc = Scoring::match_mismatch(1 << 20, -1, 1, 1).unwrap();
    let a = vec![0u8; 8];
    let mut top = EdgeRow {
        h: vec![apps::sw::MAX_SCORE - 1; 8],
        f: vec![0; 8],
    };
    let mut left = EdgeCol::border(8);
    let origin = Origin { row: 0, col: 0 };
    tile_in_place_with(Kernel::Auto, &a, &a, &sc, origin, &mut top, &mut left);
}

#[test]
#[should_panic(expected = "out of range for matrix")]
fn matrix_codes_are_checked() {
    let sc = Scoring::blosum62(11, 1).unwrap();
    seq::align(&[0, 1, 24], &[0, 1], &sc);
}

/// Each thread keeps the query profiles of its last tiles. A profile must
/// be reused only for the same columns, scores and lanes: here the same
/// buffer of B changes in place between tiles, the scores change over the
/// same B, and the rows change which codes occur, and every kernel still
/// equals the reference.
#[test]
fn kept_profiles_follow_columns_and_scores() {
    let mut rng = SplitMix64::new(4242);
    let dna = [
        Scoring::match_mismatch(2, -1, 3, 1).unwrap(),
        Scoring::match_mismatch(3, -1, 3, 1).unwrap(),
        Scoring::match_mismatch(3, -2, 3, 1).unwrap(),
    ];
    let protein = Scoring::blosum62(11, 1).unwrap();
    for k in kernels() {
        let a = random_dna(300, rng.next_u64());
        let mut b = random_dna(500, rng.next_u64());
        for round in 0..4 {
            for sc in &dna {
                let want = reference::align(&a, &b, sc);
                assert_eq!(seq::align_with(k, &a, &b, sc), want, "{k:?} round {round}");
            }
            // Same buffer, same length, other columns.
            for x in b.iter_mut().step_by(3 + round) {
                *x = (*x + 1) % 4;
            }
        }
        let b = random_protein(400, rng.next_u64());
        // Rows over fewer and fewer codes: another set of profile rows.
        for codes in [20u8, 7, 2] {
            let a = random_codes(250, codes, rng.next_u64());
            let want = reference::align(&a, &b, &protein);
            assert_eq!(
                seq::align_with(k, &a, &b, &protein),
                want,
                "{k:?} {codes} codes"
            );
        }
    }
}
