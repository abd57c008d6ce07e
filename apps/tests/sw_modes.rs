//! The distributed Smith-Waterman drivers under `mpiexec`: every mode, at
//! 1 to 4 ranks, must report exactly the score and end cell of the plain
//! O(n·m) reference DP on the same input.
//!
//! Each run starts the `smith-waterman` binary through [`hcmpi_testkit`]
//! (killed with all its ranks if it outlives
//! [`hcmpi_testkit::test_timeout`]) with 2 threads per rank and `--json`,
//! and checks the one line rank 0 prints. Jobs run one at a time.

use std::path::Path;

use apps::report::SwReport;
use apps::sw::alignment::{parse_cigar, rescore};
use apps::sw::alphabet::Alphabet;
use apps::sw::auto_tiling::{
    auto_tiles_up_to, max_tile_rows, tapers, PIPELINE_BLOCKS, TAPER_MIN_BANDS,
};
use apps::sw::random::{mutated, random_dna, random_protein};
use apps::sw::{reference, Best, Scoring};
use hcmpi_testkit::{one_job_at_a_time, shared_launcher, test_timeout, RunOutput};

const SW: &str = env!("CARGO_BIN_EXE_smith-waterman");

/// Runs `smith-waterman args...` on `ranks` ranks, with `env` beside the
/// worker counts.
fn mpirun_with(ranks: usize, args: &[&str], env: &[(&str, &str)]) -> RunOutput {
    let _one_at_a_time = one_job_at_a_time();
    let launcher = shared_launcher();
    let mut cmd = launcher.command(ranks, Path::new(SW), args);
    cmd.env("HC_WORKERS", "2").env("RAYON_NUM_THREADS", "2");
    cmd.envs(env.iter().copied());
    match launcher.run_command(cmd, ranks, Path::new(SW), test_timeout()) {
        Ok(out) => out,
        Err(err) => panic!("smith-waterman {args:?} on {ranks} ranks: {err}"),
    }
}

/// Runs one alignment, checks it against `expected`, returns the report.
fn check(
    ranks: usize,
    mode: &str,
    args: &[&str],
    expected: Best,
    lens: (usize, usize),
) -> SwReport {
    check_with(ranks, mode, args, &[], expected, lens)
}

/// [`check`] with more environment variables.
fn check_with(
    ranks: usize,
    mode: &str,
    args: &[&str],
    env: &[(&str, &str)],
    expected: Best,
    lens: (usize, usize),
) -> SwReport {
    let mut all = vec!["--mode", mode, "--json"];
    all.extend_from_slice(args);
    let out = mpirun_with(ranks, &all, env);
    assert!(
        out.status.success(),
        "{mode} x{ranks} {args:?} failed:\n{}\n{}",
        out.stdout,
        out.stderr
    );
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{mode} x{ranks} {args:?}: {:?}", out.stdout);
    let line = lines[0];
    let report =
        SwReport::from_json_line(line).unwrap_or_else(|e| panic!("bad report {line:?}: {e}"));
    let got = (report.score, report.end_a, report.end_b);
    let want = (expected.score, expected.row, expected.col);
    assert_eq!(got, want, "{mode} x{ranks} {args:?}: {line}");
    assert_eq!(report.len_a, lens.0, "{line}");
    assert_eq!(report.len_b, lens.1, "{line}");
    assert_eq!(report.cells, (lens.0 * lens.1) as u64, "{line}");
    assert_eq!(report.ranks, ranks, "{line}");
    assert_eq!(report.mode, mode, "{line}");
    assert!(
        !out.stderr.contains("dddf") && !out.stderr.contains("pending"),
        "{mode} x{ranks} {args:?}: diagnostics on stderr:\n{}",
        out.stderr
    );
    report
}

/// The reference result for `--random len_a len_b --seed seed` (DNA).
fn reference_dna(len_a: usize, len_b: usize, seed: u64, scoring: &Scoring) -> Best {
    let a = random_dna(len_a, seed);
    let b = random_dna(len_b, seed.wrapping_add(1));
    reference::align(&a, &b, scoring)
}

fn random_args(len_a: usize, len_b: usize, seed: u64) -> Vec<String> {
    vec![
        "--random".into(),
        len_a.to_string(),
        len_b.to_string(),
        "--seed".into(),
        seed.to_string(),
    ]
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[test]
fn every_mode_at_1_to_4_ranks_with_non_dividing_tiles() {
    let scoring = Scoring::dna_default();
    for ranks in 1..=4 {
        let seed = 10 + ranks as u64;
        let (len_a, len_b) = (301, 257);
        let expected = reference_dna(len_a, len_b, seed, &scoring);
        assert!(expected.score > 0);
        let mut args = random_args(len_a, len_b, seed);
        args.extend(["--outer-tile", "64x48", "--inner-tile", "17x13"].map(String::from));
        for mode in ["hcmpi", "hybrid"] {
            check(ranks, mode, &strs(&args), expected, (len_a, len_b));
        }
        for dist in ["col-cyclic", "col-snake"] {
            let mut dealt = args.clone();
            dealt.extend(["--dist", dist].map(String::from));
            check(ranks, "hcmpi", &strs(&dealt), expected, (len_a, len_b));
        }
    }
    let args = random_args(301, 257, 11);
    check(
        1,
        "seq",
        &strs(&args),
        reference_dna(301, 257, 11, &scoring),
        (301, 257),
    );
}

/// Bound to CPUs or not (`HCMPI_BIND`), every mode finds the same cell,
/// and its report says which it was.
#[test]
fn the_report_tells_whether_threads_were_bound() {
    let scoring = Scoring::dna_default();
    let (len_a, len_b) = (200, 180);
    let expected = reference_dna(len_a, len_b, 5, &scoring);
    let args = random_args(len_a, len_b, 5);
    for mode in ["hcmpi", "hybrid"] {
        for (binding, bound) in [("cores", true), ("none", false)] {
            let env = [("HCMPI_BIND", binding)];
            let report = check_with(2, mode, &strs(&args), &env, expected, (len_a, len_b));
            assert_eq!(report.bound, Some(bound), "{mode} under {binding}");
        }
    }
    let seq = check(1, "seq", &strs(&args), expected, (len_a, len_b));
    assert_eq!(seq.bound, None, "seq binds nothing");
    // The summary says it too.
    for mode in ["hcmpi", "hybrid"] {
        let all = [&["--mode", mode][..], &strs(&args)].concat();
        let out = mpirun_with(2, &all, &[("HCMPI_BIND", "cores")]);
        let header = format!("({mode}, 2 rank(s) x 2 worker(s), bound to CPUs)");
        assert!(out.stdout.contains(&header), "{header}: {}", out.stdout);
    }
}

#[test]
fn more_ranks_than_tiles_on_a_diagonal() {
    let scoring = Scoring::dna_default();
    // 2 x 2 and 1 x 3 outer grids on 4 ranks: some ranks own nothing.
    for (len_a, len_b, outer) in [(120, 110, "64x64"), (40, 150, "64x50")] {
        let expected = reference_dna(len_a, len_b, 3, &scoring);
        let mut args = random_args(len_a, len_b, 3);
        args.extend(["--outer-tile", outer, "--inner-tile", "16x16"].map(String::from));
        for mode in ["hcmpi", "hybrid"] {
            check(4, mode, &strs(&args), expected, (len_a, len_b));
        }
        // Dealt back and forth: some ranks own nothing there too.
        let snake = [&strs(&args)[..], &["--dist", "col-snake"]].concat();
        check(4, "hcmpi", &snake, expected, (len_a, len_b));
    }
}

#[test]
fn length_one_sequences() {
    let scoring = Scoring::dna_default();
    for (len_a, len_b) in [(1, 1), (1, 40), (40, 1)] {
        for seed in [1, 2] {
            let expected = reference_dna(len_a, len_b, seed, &scoring);
            let mut args = random_args(len_a, len_b, seed);
            args.extend(["--outer-tile", "8x8", "--inner-tile", "3x3"].map(String::from));
            for (ranks, mode) in [(3, "hcmpi"), (2, "hybrid"), (1, "seq")] {
                check(ranks, mode, &strs(&args), expected, (len_a, len_b));
            }
        }
    }
}

#[test]
fn affine_gaps_and_blosum62() {
    let affine = Scoring::match_mismatch(3, -2, 5, 1).unwrap();
    let expected = reference_dna(200, 230, 7, &affine);
    let mut args = random_args(200, 230, 7);
    args.extend(
        [
            "--match",
            "3",
            "--mismatch",
            "-2",
            "--gap-open",
            "5",
            "--gap-extend",
            "1",
            "--outer-tile",
            "50x40",
            "--inner-tile",
            "20x16",
        ]
        .map(String::from),
    );
    for mode in ["hcmpi", "hybrid"] {
        check(3, mode, &strs(&args), expected, (200, 230));
    }

    let blosum = Scoring::blosum62(11, 1).unwrap();
    let (a, b) = (random_protein(150, 9), random_protein(170, 10));
    let expected = reference::align(&a, &b, &blosum);
    let mut args = random_args(150, 170, 9);
    args.extend(
        [
            "--matrix",
            "blosum62",
            "--gap-open",
            "11",
            "--gap-extend",
            "1",
            "--outer-tile",
            "40x40",
            "--inner-tile",
            "16x16",
        ]
        .map(String::from),
    );
    for mode in ["hcmpi", "hybrid"] {
        check(2, mode, &strs(&args), expected, (150, 170));
    }
}

/// Writes `a` and `b` as FASTA files in a fresh directory.
fn write_fasta(name: &str, a: &[u8], b: &[u8]) -> (std::path::PathBuf, String, String) {
    let dir = std::env::temp_dir().join(format!("sw-modes-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let decode = |codes: &[u8]| String::from_utf8(Alphabet::Dna.decode(codes)).unwrap();
    let (path_a, path_b) = (dir.join("a.fa"), dir.join("b.fa"));
    std::fs::write(&path_a, format!(">a\n{}\n", decode(a))).unwrap();
    std::fs::write(&path_b, format!(">b\n{}\n", decode(b))).unwrap();
    let path = |p: &std::path::Path| p.to_str().unwrap().to_owned();
    (dir.clone(), path(&path_a), path(&path_b))
}

/// A tall matrix whose scores reach `MAX_SCORE` only at the end of its
/// square part, in tiles below it: every mode and rank count gives the
/// score, where a tile used to refuse its edges and the job hung.
#[test]
fn tall_matrix_at_the_score_limit() {
    let (a, b) = (vec![0u8; 1024], vec![0u8; 512]);
    let args = ["--match", "1048576", "--mismatch", "-1"];
    let scoring = Scoring::match_mismatch(1 << 20, -1, 2, 2).unwrap();
    let expected = reference::align(&a, &b, &scoring);
    let (dir, path_a, path_b) = write_fasta("tall", &a, &b);
    let mut all = vec!["--a", &path_a, "--b", &path_b];
    all.extend_from_slice(&args);
    for (ranks, mode) in [(1, "hcmpi"), (2, "hcmpi"), (3, "hcmpi"), (2, "hybrid")] {
        check(ranks, mode, &all, expected, (1024, 512));
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// A related pair whose scores pass 65535 about halfway down: the
/// tiles below run 16-bit passes relative to a base, on edges that other
/// ranks computed. Every mode and rank count gives the reference result.
#[test]
fn scores_past_16_bits_at_1_to_4_ranks() {
    let a = random_dna(3000, 41);
    let b = mutated(&a, 4, 0.05, 42);
    let scoring = Scoring::match_mismatch(50, -3, 7, 2).unwrap();
    let expected = reference::align(&a, &b, &scoring);
    assert!(expected.score > 100_000, "score {}", expected.score);
    let (dir, path_a, path_b) = write_fasta("past-16-bits", &a, &b);
    let args = [
        "--a",
        &path_a,
        "--b",
        &path_b,
        "--match",
        "50",
        "--mismatch",
        "-3",
        "--gap-open",
        "7",
        "--gap-extend",
        "2",
        "--inner-tile",
        "256x512",
    ];
    let lens = (a.len(), b.len());
    check(1, "seq", &args[..12], expected, lens);
    for ranks in 1..=4 {
        for mode in ["hcmpi", "hybrid"] {
            check(ranks, mode, &args, expected, lens);
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Nearly identical sequences: the best alignment runs along the diagonal
/// through the corners and across the edges of many tiles, with gaps that
/// cross tile boundaries, so every edge value and every corner matters.
#[test]
fn similar_sequences_cross_every_tile_boundary() {
    let a = random_dna(260, 31);
    let mut b = a.clone();
    for k in (7..b.len()).step_by(23) {
        b[k] = (b[k] + 1) % 4;
    }
    // A 5-letter insertion and a 3-letter deletion, both across boundaries.
    b.splice(64..64, [0, 1, 2, 3, 0]);
    b.drain(190..193);
    let scoring = Scoring::match_mismatch(2, -3, 5, 1).unwrap();
    let expected = reference::align(&a, &b, &scoring);
    let (dir, path_a, path_b) = write_fasta("similar", &a, &b);
    for (outer, inner) in [("32x32", "8x8"), ("40x24", "16x8"), ("24x16", "8x8")] {
        let args = [
            "--a",
            &path_a,
            "--b",
            &path_b,
            "--match",
            "2",
            "--mismatch",
            "-3",
            "--gap-open",
            "5",
            "--gap-extend",
            "1",
            "--outer-tile",
            outer,
            "--inner-tile",
            inner,
        ];
        for ranks in [2, 3, 4] {
            check(ranks, "hcmpi", &args, expected, (a.len(), b.len()));
            check(ranks, "hybrid", &args, expected, (a.len(), b.len()));
        }
        for dist in ["col-cyclic", "col-snake"] {
            let mut dealt = args.to_vec();
            dealt.extend(["--dist", dist]);
            check(3, "hcmpi", &dealt, expected, (a.len(), b.len()));
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fasta_input_distributed() {
    let dir = std::env::temp_dir().join(format!("sw-modes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let decode = |codes: &[u8]| String::from_utf8(Alphabet::Dna.decode(codes)).unwrap();
    let (a, b) = (random_dna(180, 21), random_dna(160, 22));
    let (path_a, path_b) = (dir.join("a.fa"), dir.join("b.fa"));
    std::fs::write(&path_a, format!(">a\n{}\n", decode(&a).to_lowercase())).unwrap();
    std::fs::write(
        &path_b,
        format!(">b test\n{}\n{}\n", decode(&b[..80]), decode(&b[80..])),
    )
    .unwrap();
    let expected = reference::align(&a, &b, &Scoring::dna_default());
    let args = [
        "--a",
        path_a.to_str().unwrap(),
        "--b",
        path_b.to_str().unwrap(),
        "--outer-tile",
        "45x45",
        "--inner-tile",
        "10x10",
    ];
    check(2, "hcmpi", &args, expected, (180, 160));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Checks the alignment `report` prints for `(a, b)`: its CIGAR parses,
/// and rescored from its start it has the expected score and ends at the
/// expected cell. Returns the CIGAR, the start and A's aligned range.
fn check_alignment<'r>(
    report: &'r SwReport,
    (a, b): (&[u8], &[u8]),
    scoring: &Scoring,
    expected: Best,
    what: &str,
) -> (&'r str, (usize, usize), std::ops::Range<usize>) {
    let cigar = report.cigar.as_deref().expect("--align reports a CIGAR");
    let runs = parse_cigar(cigar).unwrap_or_else(|e| panic!("{what}: {e}"));
    let start = (report.start_a.unwrap(), report.start_b.unwrap());
    let (score, ra, rb) =
        rescore(a, b, scoring, start, &runs).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(score, expected.score, "{what}: {cigar}");
    assert_eq!(
        (ra.end, rb.end),
        (expected.row + 1, expected.col + 1),
        "{what}"
    );
    (cigar, start, ra)
}

/// `--align` in every mode at 1 to 4 ranks: the alignment ends at the
/// reference's end cell, and its CIGAR, rescored from `start_a`/`start_b`
/// against the sequences, gives the reference's score and consumes exactly
/// up to that cell. Every mode and rank count prints the same alignment,
/// though each keeps other rows for the traceback.
#[test]
fn the_alignment_at_1_to_4_ranks() {
    let a = random_dna(700, 61);
    let b = mutated(&a, 4, 0.08, 62);
    let (dir, path_a, path_b) = write_fasta("align", &a, &b);
    let scoring = Scoring::match_mismatch(2, -1, 3, 1).unwrap();
    let expected = reference::align(&a, &b, &scoring);
    let scores = ["--gap-open", "3", "--gap-extend", "1"];
    let tiles = ["--outer-tile", "128x96", "--inner-tile", "32x40"];
    let files = ["--a", &path_a, "--b", &path_b];
    let mut first: Option<(String, (usize, usize))> = None;
    for ranks in 1..=4 {
        for mode in ["seq", "hcmpi", "hybrid"] {
            if mode == "seq" && ranks > 1 {
                continue;
            }
            let args = [&["--align"][..], &files, &scores, &tiles].concat();
            let report = check(ranks, mode, &args, expected, (a.len(), b.len()));
            let what = format!("{mode} x{ranks}");
            let (cigar, start, ra) = check_alignment(&report, (&a, &b), &scoring, expected, &what);
            let first = first.get_or_insert_with(|| (cigar.to_string(), start));
            assert_eq!(
                (cigar, start),
                (first.0.as_str(), first.1),
                "{what} against seq"
            );
            // The mutated copy aligns over most of its length.
            assert!(
                ra.len() > 500 && report.identity.unwrap() > 0.8,
                "{what}: {cigar}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The auto tiles on several ranks of one worker, and on one rank of two,
/// on a matrix tall enough for their bands (outer, or inner on one rank)
/// to taper towards its top and bottom (`Grid::tapered`): the score, the
/// end cell and the traced alignment stay exact.
#[test]
fn tapered_auto_bands_at_1_to_4_ranks() {
    // Just taller than the fewest bands that taper, at the tile height of
    // this CPU's kernel; the columns need not grow with it (the reference
    // DP holds three matrices of n x m values).
    let max_rows = max_tile_rows();
    let a = random_dna(TAPER_MIN_BANDS * max_rows + 16, 71);
    let b = mutated(&a[..8_200], 4, 0.1, 72);
    let (dir, path_a, path_b) = write_fasta("tapered", &a, &b);
    let scoring = Scoring::match_mismatch(2, -1, 3, 1).unwrap();
    let expected = reference::align(&a, &b, &scoring);
    let scores = ["--gap-open", "3", "--gap-extend", "1"];
    let files = ["--a", &path_a, "--b", &path_b];
    for (ranks, workers) in [(1, 2), (2, 1), (3, 1), (4, 1)] {
        let tiles = auto_tiles_up_to(a.len(), b.len(), ranks, workers, PIPELINE_BLOCKS, max_rows);
        assert!(
            tapers(a.len(), tiles, ranks, workers),
            "{ranks}x{workers}: no taper"
        );
        let workers = workers.to_string();
        let args = [&["--align", "--workers", &workers][..], &files, &scores].concat();
        let report = check(ranks, "hcmpi", &args, expected, (a.len(), b.len()));
        check_alignment(
            &report,
            (&a, &b),
            &scoring,
            expected,
            &format!("hcmpi {ranks}x{workers}"),
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// After an hcmpi pass with `--align`'s kept rows, rank 0 holds them, each
/// equal to the reference DP's row, and the other ranks none (the
/// `sw_kept_rows` example checks; the printed alignment would be the same
/// without them).
#[test]
fn rank_0_holds_rows_kept_by_every_rank() {
    let exe = hcmpi_testkit::example_path("sw_kept_rows");
    for ranks in 1..=4 {
        let _one_at_a_time = one_job_at_a_time();
        let launcher = shared_launcher();
        let mut cmd = launcher.command(ranks, &exe, &[] as &[&str]);
        cmd.env("HC_WORKERS", "2");
        let out = launcher
            .run_command(cmd, ranks, &exe, test_timeout())
            .unwrap_or_else(|err| panic!("sw_kept_rows on {ranks} ranks: {err}"));
        assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
        for rank in 0..ranks {
            let prefix = format!("rank {rank}/{ranks}: kept rows OK");
            assert!(
                out.stdout.lines().any(|l| l.starts_with(&prefix)),
                "no {prefix:?} in:\n{}",
                out.stdout
            );
        }
    }
}

/// A rank that cannot read its FASTA file ends the whole job with its
/// message and status 2, instead of leaving the others waiting for it.
#[test]
fn one_rank_missing_its_input_ends_the_job() {
    let dir = std::env::temp_dir().join(format!("sw-missing-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let present = dir.join("a.fa");
    std::fs::write(&present, ">a\nACGTACGTTGCA\n").expect("FASTA file");
    let present = present.to_str().expect("UTF-8 path");
    let missing = dir.join("missing.fa");
    let missing = missing.to_str().expect("UTF-8 path");
    let launcher = shared_launcher();
    for mode in ["hcmpi", "hybrid"] {
        for ranks in 2..=4 {
            let good = ["--mode", mode, "--a", present, "--b", present, "--json"];
            let bad = ["--mode", mode, "--a", present, "--b", missing, "--json"];
            let mut cmd = launcher.command_mpmd(Path::new(SW), &[(ranks - 1, &good), (1, &bad)]);
            cmd.env("HC_WORKERS", "2").env("RAYON_NUM_THREADS", "2");
            let _one_at_a_time = one_job_at_a_time();
            let out = launcher
                .run_command(cmd, ranks, Path::new(SW), test_timeout())
                .unwrap_or_else(|err| panic!("{mode}, {ranks} ranks: {err}"));
            out.expect_job_failure(
                Some(2),
                "missing.fa",
                "\"score\"",
                &format!("{mode}, {ranks} ranks"),
            );
        }
    }
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

/// Ranks given different problems (an MPMD launch, or files that differ
/// between nodes) would compute tiles that do not fit together: the rank
/// that differs from rank 0 ends the whole job with status 2 and a message
/// naming what differs, before any tile is computed.
#[test]
fn ranks_given_different_problems_end_the_job() {
    let dir = std::env::temp_dir().join(format!("sw-different-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let write = |name: &str, letters: &str| {
        let path = dir.join(name);
        std::fs::write(&path, format!(">{name}\n{letters}\n")).expect("FASTA file");
        path.to_str().expect("UTF-8 path").to_owned()
    };
    let a = write("a.fa", "ACGTACGTTGCAACGTTTGA");
    let shorter = write("shorter.fa", "ACGTACGTTGCAACGTTTG");
    let one_letter_off = write("one-letter-off.fa", "ACGTACGTTGCATCGTTTGA");
    let cases: [(&[&str], &str); 4] = [
        (
            &["--b", &shorter],
            "a sequence B of 19 letters, rank 0 one of 20",
        ),
        (
            &["--b", &one_letter_off],
            "another sequence B than rank 0 (both of 20 letters)",
        ),
        (
            &["--b", &a, "--gap-open", "5"],
            "other scoring options than rank 0",
        ),
        (
            &["--b", &a, "--align"],
            "other alignment options (--align) than rank 0",
        ),
    ];
    let launcher = shared_launcher();
    for mode in ["hcmpi", "hybrid"] {
        for (ranks, (other, message)) in (2..=4).cycle().zip(cases) {
            let good = ["--mode", mode, "--a", &a, "--b", &a, "--json"];
            let mut bad = vec!["--mode", mode, "--a", &a, "--json"];
            bad.extend_from_slice(other);
            let mut cmd = launcher.command_mpmd(Path::new(SW), &[(ranks - 1, &good), (1, &bad)]);
            cmd.env("HC_WORKERS", "2").env("RAYON_NUM_THREADS", "2");
            let _one_at_a_time = one_job_at_a_time();
            let context = format!("{mode}, {ranks} ranks, {other:?}");
            let out = launcher
                .run_command(cmd, ranks, Path::new(SW), test_timeout())
                .unwrap_or_else(|err| panic!("{context}: {err}"));
            let message = format!("rank {} was given {message}", ranks - 1);
            out.expect_job_failure(Some(2), &message, "\"score\"", &context);
        }
    }
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

/// Ranks that start different numbers of workers (nodes of different
/// sizes) still cut the matrix alike: the tiles are sized for the most
/// workers any rank has, so the edges and the rows kept for `--align`
/// match across the ranks.
#[test]
fn ranks_with_different_worker_counts_agree_on_the_tiles() {
    let scoring = Scoring::dna_default();
    let (len_a, len_b, seed) = (3000, 2000, 5);
    let expected = reference_dna(len_a, len_b, seed, &scoring);
    let random = random_args(len_a, len_b, seed);
    let launcher = shared_launcher();
    for mode in ["hcmpi", "hybrid"] {
        for (first, second) in [("1", "2"), ("3", "1")] {
            let mut args = vec!["--mode", mode, "--json", "--align", "--align-width", "0"];
            args.extend(random.iter().map(String::as_str));
            let one = [&args[..], &["--workers", first]].concat();
            let other = [&args[..], &["--workers", second]].concat();
            let what = format!("{mode}, workers {first} and {second}");
            let cmd = launcher.command_mpmd(Path::new(SW), &[(1, &one), (1, &other)]);
            let _one_at_a_time = one_job_at_a_time();
            let out = launcher
                .run_command(cmd, 2, Path::new(SW), test_timeout())
                .unwrap_or_else(|err| panic!("{what}: {err}"));
            assert!(
                out.status.success(),
                "{what}:\n{}\n{}",
                out.stdout,
                out.stderr
            );
            let line = out.stdout.lines().last().unwrap_or_default();
            let report = SwReport::from_json_line(line)
                .unwrap_or_else(|e| panic!("{what}: bad report {line:?}: {e}"));
            let got = (report.score, report.end_a, report.end_b);
            assert_eq!(got, (expected.score, expected.row, expected.col), "{what}");
            assert!(report.cigar.is_some(), "{what}: {line}");
        }
    }
}
