//! The traceback against the reference DP: every traced alignment ends at
//! the reference's end cell, covers exactly its ranges, and rescores to the
//! reference's score, and it is the same alignment whatever the kept rows
//! and block limits, traced in turn or its segments as tasks.

use std::sync::OnceLock;

use hc_runtime::Runtime;

use super::trace::{trace_on_with, trace_with, Limits};
use super::*;
use crate::progress::Progress;
use crate::sw::random::{mutated, random_dna, random_protein};
use crate::sw::{reference, seq, Best};

/// Limits that cut every block they can: many levels of sub-blocks.
const TINY: Limits = Limits {
    direct_cells: 64,
    min_rows: 2,
    cuts: 3,
};

/// Three workers, for the traces whose segments run as tasks.
fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::builder().num_workers(3).build().unwrap())
}

/// Checks one traced alignment against the reference result `want`.
fn check(a: &[u8], b: &[u8], scoring: &Scoring, want: Best, got: &Alignment, what: &str) {
    assert_eq!(got.score, want.score, "{what}");
    if want.score == 0 {
        assert_eq!(got, &Alignment::empty(), "{what}");
        return;
    }
    assert_eq!(
        (got.a.end - 1, got.b.end - 1),
        (want.row, want.col),
        "{what}: end"
    );
    got.check(a, b, scoring)
        .unwrap_or_else(|e| panic!("{what}: {e} in {got}"));
    // Local alignments start and end on a pair that scores above 0.
    for run in [got.runs.first(), got.runs.last()] {
        let run = run.expect("a positive score has columns");
        assert!(
            matches!(run.op, Op::Match | Op::Mismatch),
            "{what}: {got} starts or ends with a gap"
        );
    }
    assert!(scoring.score(a[got.a.start], b[got.b.start]) > 0, "{what}");
    for pair in got.runs.windows(2) {
        assert_ne!(pair[0].op, pair[1].op, "{what}: runs not maximal");
    }
}

/// Traces `a` x `b` every way there is and checks each result.
fn check_all_ways(a: &[u8], b: &[u8], scoring: &Scoring, what: &str) -> Alignment {
    let want = reference::align(a, b, scoring);
    let hidden = Progress::hidden();
    let (best, kept) = seq::align_with_checkpoints(a, b, scoring, &hidden);
    assert_eq!(best, want, "{what}: score pass");
    let reference_way = trace(a, b, scoring, best, &kept);
    check(a, b, scoring, want, &reference_way, what);
    // Whatever rows are kept and however blocks are cut, in turn or as
    // tasks, the walk makes the same choices: the same alignment.
    for band in [1, 3, 16, 40] {
        let (_, kept) = seq::align_with_checkpoints_in(band, a, b, scoring, &hidden);
        for limits in [Limits::DEFAULT, TINY] {
            let what = format!("{what}, band {band}, {limits:?}");
            let got = trace_with(limits, a, b, scoring, best, &kept);
            check(a, b, scoring, want, &got, &what);
            assert_eq!(got, reference_way, "{what}");
            let (as_tasks, _) = trace_on_with(limits, runtime(), a, b, scoring, best, &kept);
            assert_eq!(as_tasks, reference_way, "{what}, as tasks");
        }
    }
    for limits in [Limits::DEFAULT, TINY] {
        let got = trace_with(limits, a, b, scoring, best, &Checkpoints::none());
        let what = format!("{what}, no checkpoints, {limits:?}");
        check(a, b, scoring, want, &got, &what);
        assert_eq!(got, reference_way, "{what}");
    }
    reference_way
}

fn schemes() -> Vec<Scoring> {
    vec![
        Scoring::dna_default(),
        Scoring::match_mismatch(2, -1, 3, 1).unwrap(),
        Scoring::match_mismatch(1, -3, 5, 2).unwrap(),
        // Free gaps, and gaps free to extend: every tie there is.
        Scoring::match_mismatch(1, -1, 0, 0).unwrap(),
        Scoring::match_mismatch(2, -2, 4, 0).unwrap(),
    ]
}

#[test]
fn random_pairs() {
    for (k, scoring) in schemes().iter().enumerate() {
        for (len_a, len_b, seed) in [(1, 1, 1), (1, 30, 2), (30, 1, 3), (70, 90, 4), (150, 40, 5)] {
            let seed = seed + 10 * k as u64;
            let (a, b) = (random_dna(len_a, seed), random_dna(len_b, seed + 100));
            check_all_ways(
                &a,
                &b,
                scoring,
                &format!("{len_a}x{len_b} seed {seed} {scoring:?}"),
            );
        }
    }
}

#[test]
fn related_pairs_cross_every_checkpoint() {
    for (k, scoring) in schemes().iter().enumerate() {
        for (len, rate) in [(120, 0.05), (260, 0.1), (300, 0.3)] {
            let seed = 7 + k as u64;
            let a = random_dna(len, seed);
            let b = mutated(&a, 4, rate, seed + 1);
            let got = check_all_ways(&a, &b, scoring, &format!("{len} at {rate} {scoring:?}"));
            if k == 1 && rate < 0.2 {
                assert!(got.a.len() > len / 2, "{got}");
            }
        }
    }
}

/// Kept rows hundreds of rows apart: the backward pass and the cut of each
/// block run the kernel strip by strip over the columns that can hold the
/// path, with the path crossing strips inside a long gap and starting in a
/// strip that is not the first.
#[test]
fn long_blocks_run_in_bands() {
    let hidden = Progress::hidden();
    let a = random_dna(1500, 61);
    let mut b = mutated(&a[100..], 4, 0.12, 62);
    b.splice(600..600, random_dna(300, 63));
    let protein = random_protein(1200, 64);
    let related_protein = mutated(&protein[50..], 20, 0.2, 65);
    // The pairs and whether the whole mutated copy aligns.
    for (x, y, scoring, long) in [
        (&a, &b, Scoring::match_mismatch(2, -1, 3, 1).unwrap(), true),
        (&b, &a, Scoring::match_mismatch(2, -1, 3, 1).unwrap(), true),
        (&b, &a, Scoring::match_mismatch(1, -3, 5, 2).unwrap(), false),
        (&a, &b, Scoring::match_mismatch(1, -1, 0, 0).unwrap(), true),
        (
            &protein,
            &related_protein,
            Scoring::blosum62(11, 1).unwrap(),
            true,
        ),
    ] {
        let want = reference::align(x, y, &scoring);
        // No kept rows: one block of the whole matrix, cut into strips of
        // about 90 rows, long enough for the band with the default limits.
        let none = trace(x, y, &scoring, want, &Checkpoints::none());
        check(
            x,
            y,
            &scoring,
            want,
            &none,
            &format!("no rows kept {scoring:?}"),
        );
        assert!(!long || none.a.len() > 900, "{scoring:?}: {none}");
        for band in [300, 700] {
            let (best, kept) = seq::align_with_checkpoints_in(band, x, y, &scoring, &hidden);
            assert_eq!(best, want);
            let what = format!("band {band} {scoring:?}");
            for limits in [Limits::DEFAULT, TINY] {
                let in_turn = trace_with(limits, x, y, &scoring, best, &kept);
                assert_eq!(in_turn, none, "{what}, {limits:?}");
                let (as_tasks, _) = trace_on_with(limits, runtime(), x, y, &scoring, best, &kept);
                assert_eq!(as_tasks, none, "{what}, {limits:?}, as tasks");
            }
        }
    }
}

/// The path starts inside a strip of a cut block, right below unrelated
/// rows, and soon goes down a long gap in B, with linear gaps (whose bound
/// is exact): the strips must still hold its start and its gap, and every
/// choice of kept rows gives the same alignment.
#[test]
fn a_steep_start_inside_a_strip() {
    let shared = random_dna(400, 71);
    let mut a = random_dna(150, 72);
    a.extend(&shared[..100]);
    a.extend(random_dna(40, 73));
    a.extend(&shared[100..]);
    let mut b = random_dna(150, 74);
    b.extend(&shared);
    // Linear gaps: a gap's bound is exact, so a row above the start
    // leaves no room.
    let scoring = Scoring::match_mismatch(1, -3, 2, 2).unwrap();
    let want = reference::align(&a, &b, &scoring);
    // No kept rows and the small limits: strips of 160 rows, banded, the
    // start inside the first.
    let got = trace_with(TINY, &a, &b, &scoring, want, &Checkpoints::none());
    check(&a, &b, &scoring, want, &got, "no rows kept");
    assert_eq!(got.count(Op::Deletion), 40, "{got}");
    assert!(got.a.start >= 150 && got.a.start < 160, "{got}");
    for band in [130, 140, 145] {
        let (best, kept) =
            seq::align_with_checkpoints_in(band, &a, &b, &scoring, &Progress::hidden());
        for limits in [Limits::DEFAULT, TINY] {
            assert_eq!(
                trace_with(limits, &a, &b, &scoring, best, &kept),
                got,
                "band {band}"
            );
            let (as_tasks, _) = trace_on_with(limits, runtime(), &a, &b, &scoring, best, &kept);
            assert_eq!(as_tasks, got, "band {band}, as tasks");
        }
    }
}

/// With free gaps every cell ties with its neighbours, and the backward
/// pass's guess of where the path crosses a kept row is often not where
/// the traceback goes: the segments above are traced again from there, and
/// the alignment is still the one traced in turn.
#[test]
fn guesses_that_miss_are_traced_again() {
    let scoring = Scoring::match_mismatch(1, -1, 0, 0).unwrap();
    let a = random_dna(600, 81);
    let b = mutated(&a, 4, 0.2, 82);
    let (best, kept) = seq::align_with_checkpoints_in(40, &a, &b, &scoring, &Progress::hidden());
    let (as_tasks, again) =
        trace_on_with(Limits::DEFAULT, runtime(), &a, &b, &scoring, best, &kept);
    assert!(again > 0, "every guess was right");
    let in_turn = trace_with(Limits::DEFAULT, &a, &b, &scoring, best, &kept);
    assert_eq!(as_tasks, in_turn);
    check(
        &a,
        &b,
        &scoring,
        reference::align(&a, &b, &scoring),
        &in_turn,
        "free gaps",
    );
}

#[test]
fn long_gaps_in_either_sequence() {
    let a = random_dna(400, 21);
    let mut b = a.clone();
    b.drain(100..260);
    let mut c = a.clone();
    c.splice(200..200, random_dna(180, 22));
    for scoring in [
        Scoring::match_mismatch(2, -3, 5, 1).unwrap(),
        Scoring::match_mismatch(2, -1, 3, 0).unwrap(),
    ] {
        for (x, y) in [(&a, &b), (&b, &a), (&a, &c), (&c, &a)] {
            let got = check_all_ways(x, y, &scoring, &format!("gap {scoring:?}"));
            let gap = got.count(Op::Insertion).max(got.count(Op::Deletion));
            assert!(gap >= 160, "{got}");
        }
    }
}

#[test]
fn protein_with_blosum62() {
    let scoring = Scoring::blosum62(11, 1).unwrap();
    let a = random_protein(200, 31);
    let related = mutated(&a, 20, 0.15, 32);
    check_all_ways(&a, &related, &scoring, "related protein");
    check_all_ways(&a, &random_protein(150, 33), &scoring, "random protein");
}

#[test]
fn identical_and_unrelated() {
    let scoring = Scoring::dna_default();
    let a = random_dna(200, 41);
    let got = check_all_ways(&a, &a, &scoring, "self");
    assert_eq!(got.cigar(), "200=");
    assert_eq!(got.identity(), 1.0);
    let (x, y) = (vec![0u8; 50], vec![1u8; 60]);
    let got = check_all_ways(&x, &y, &scoring, "no match");
    assert_eq!(got, Alignment::empty());
    assert_eq!(
        (got.cigar(), got.identity(), got.columns()),
        (String::new(), 0.0, 0)
    );
}

#[test]
fn cigar_round_trips_and_rejects_bad_input() {
    let a = random_dna(300, 51);
    let b = mutated(&a, 4, 0.1, 52);
    let got = local_alignment(&a, &b, &Scoring::dna_default());
    assert_eq!(parse_cigar(&got.cigar()).unwrap(), got.runs);
    assert_eq!(parse_cigar(""), Ok(vec![]));
    assert_eq!(parse_cigar("3M"), Err(CigarError::UnknownOp('M')));
    assert_eq!(parse_cigar("="), Err(CigarError::MissingLength('=')));
    assert_eq!(parse_cigar("0I"), Err(CigarError::MissingLength('I')));
    assert_eq!(parse_cigar("4=2"), Err(CigarError::TrailingLength));
    assert_eq!(
        parse_cigar("99999999999999999999D"),
        Err(CigarError::LengthTooLarge)
    );
}

#[test]
fn rescore_names_what_is_wrong() {
    let scoring = Scoring::dna_default();
    let (a, b) = (vec![0, 1, 2], vec![0, 1, 3]);
    let run = |op, len| Run { op, len };
    assert_eq!(
        rescore(&a, &b, &scoring, (0, 0), &[run(Op::Match, 3)]),
        Err(RescoreError::WrongPair {
            column: 2,
            op: Op::Match,
            a: 2,
            b: 2
        })
    );
    assert_eq!(
        rescore(&a, &b, &scoring, (1, 0), &[run(Op::Deletion, 3)]),
        Err(RescoreError::PastEnd {
            sequence: "A",
            len: 3
        })
    );
    let huge = [run(Op::Deletion, usize::MAX)];
    assert_eq!(
        rescore(&a, &b, &scoring, (1, 0), &huge),
        Err(RescoreError::PastEnd {
            sequence: "A",
            len: 3
        })
    );
    assert_eq!(
        rescore(&a, &b, &scoring, (0, 0), &[run(Op::Insertion, 0)]),
        Err(RescoreError::EmptyRun { run: 0 })
    );
    let mut wrong = local_alignment(&a, &b, &scoring);
    wrong.score += 1;
    assert!(matches!(
        wrong.check(&a, &b, &scoring),
        Err(RescoreError::Disagrees { .. })
    ));
    // Two runs of the same gap kind are one gap: one open, then extends.
    let split = [
        run(Op::Match, 1),
        run(Op::Insertion, 1),
        run(Op::Insertion, 1),
    ];
    let whole = [run(Op::Match, 1), run(Op::Insertion, 2)];
    let scoring = Scoring::match_mismatch(2, -1, 3, 1).unwrap();
    assert_eq!(
        rescore(&a, &b, &scoring, (0, 0), &split).unwrap(),
        rescore(&a, &b, &scoring, (0, 0), &whole).unwrap()
    );
}

#[test]
fn pairwise_view_wraps_and_numbers_lines() {
    let scoring = Scoring::blosum62(11, 1).unwrap();
    let a = Alphabet::Protein.encode(b"MKVLAWHEAGK").unwrap();
    let b = Alphabet::Protein.encode(b"MKILAHEAGK").unwrap();
    let got = local_alignment(&a, &b, &scoring);
    let view = got.pairwise(&a, &b, Alphabet::Protein, &scoring, 4);
    let lines: Vec<&str> = view.lines().collect();
    // Three lines a block and a blank line between blocks.
    assert_eq!(lines.len(), got.columns().div_ceil(4) * 4 - 1, "{view}");
    let letters = |prefix: &str| -> String {
        lines
            .iter()
            .filter(|line| line.starts_with(prefix))
            .map(|line| line.split_whitespace().nth(2).unwrap_or(""))
            .collect()
    };
    let row_a: String = letters("A ").chars().filter(|&c| c != '-').collect();
    let row_b: String = letters("B ").chars().filter(|&c| c != '-').collect();
    let text = |codes: &[u8]| String::from_utf8(Alphabet::Protein.decode(codes)).unwrap();
    assert_eq!(row_a, text(&a[got.a.clone()]));
    assert_eq!(row_b, text(&b[got.b.clone()]));
    // V/I scores 3 in BLOSUM62: a ':'.
    assert!(view.contains(':'), "{view}");
}
