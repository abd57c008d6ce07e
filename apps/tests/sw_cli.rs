//! The `smith-waterman` command line: sequential runs and bad input.
//! Bad input must be a clear message on stderr and exit status 2.

use std::process::{Command, Output};

use apps::report::SwReport;
use hcmpi_testkit::{assert_refused, assert_stdout_failures_handled};

const SW: &str = env!("CARGO_BIN_EXE_smith-waterman");

fn sw(args: &[&str]) -> Output {
    Command::new(SW)
        .args(args)
        .env("HC_WORKERS", "2")
        .output()
        .expect("run smith-waterman")
}

fn assert_input_error(args: &[&str], message: &str) {
    assert_refused(&sw(args), 2, &[message], &format!("{args:?}"));
}

#[test]
fn human_readable_and_json_output() {
    let dir = std::env::temp_dir().join(format!("sw-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.fa"), dir.join("b.fa"));
    std::fs::write(&a, ">a\nACGTTTTACGT\n").unwrap();
    std::fs::write(&b, ">b\nacgt\nACGT\n").unwrap();
    let args = [
        "--a",
        a.to_str().unwrap(),
        "--b",
        b.to_str().unwrap(),
        "--match",
        "2",
        "--mismatch",
        "-3",
        "--gap-open",
        "3",
        "--gap-extend",
        "1",
    ];
    // 8 matches * 2 - (3 + 2 * 1) = 11, ending at the last letters.
    let out = sw(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("score 11 ending at A[10], B[7]"), "{text}");
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let out = sw(&json_args);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.trim_end();
    let report =
        SwReport::from_json_line(line).unwrap_or_else(|e| panic!("bad report {line:?}: {e}"));
    // Exactly what the report type writes: every field, in order.
    assert_eq!(report.json_line(), line);
    assert_eq!(
        (report.score, report.end_a, report.end_b),
        (11, 10, 7),
        "{line}"
    );
    assert_eq!(
        (report.len_a, report.len_b, report.cells),
        (11, 8, 88),
        "{line}"
    );
    assert!(report.seconds >= 0.0 && report.gcups >= 0.0, "{line}");
    assert_eq!(report.mode, "seq", "{line}");
    assert_eq!((report.ranks, report.workers), (1, 1), "{line}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--align` prints the alignment: its ranges, CIGAR and a pairwise view
/// wrapped at `--align-width`; with `--json`, its fields.
#[test]
fn the_alignment_itself() {
    let dir = std::env::temp_dir().join(format!("sw-cli-align-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.fa"), dir.join("b.fa"));
    std::fs::write(&a, ">a\nTTTACGTACGTTT\n").unwrap();
    std::fs::write(&b, ">b\nGGACGTCACGTGG\n").unwrap();
    let files = ["--a", a.to_str().unwrap(), "--b", b.to_str().unwrap()];
    let scores = ["--gap-open", "3", "--gap-extend", "1", "--align"];
    let args = [&files[..], &scores[..], &["--align-width", "5"]].concat();
    let out = sw(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // ACGT-ACGT over ACGTCACGT: 8 matches * 2 - 3.
    assert!(text.contains("score 13 ending at A[10], B[10]"), "{text}");
    assert!(
        text.contains("alignment A[3..=10], B[2..=10] (0-based): 9 columns, 8 identical"),
        "{text}"
    );
    assert!(text.contains("cigar 4=1I4=\n"), "{text}");
    let view = [
        "A  3 ACGT- 6",
        "     ||||",
        "B  2 ACGTC 6",
        "",
        "A  7 ACGT 10",
        "     ||||",
        "B  7 ACGT 10",
    ];
    // The view stands between blank lines, after the CIGAR, before the time.
    let layout = format!("cigar 4=1I4=\n\n{}\n\ntime ", view.join("\n"));
    assert!(text.contains(&layout), "{text}");
    assert!(text.contains("s traceback)"), "{text}");

    let quiet = [&files[..], &scores[..], &["--align-width", "0"]].concat();
    let text = String::from_utf8_lossy(&sw(&quiet).stdout).into_owned();
    assert!(
        text.contains("cigar 4=1I4=") && !text.contains("ACGT"),
        "{text}"
    );

    let json = [&files[..], &scores[..], &["--json"]].concat();
    let out = sw(&json);
    let line = String::from_utf8_lossy(&out.stdout).trim_end().to_owned();
    let report = SwReport::from_json_line(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    assert_eq!(report.json_line(), line);
    assert_eq!(
        (
            report.start_a,
            report.start_b,
            report.cigar.as_deref(),
            report.identity
        ),
        (Some(3), Some(2), Some("4=1I4="), Some(0.8889)),
        "{line}"
    );
    assert!(
        report.trace_seconds.is_some_and(|t| t <= report.seconds),
        "{line}"
    );
    // Without --align, none of these fields.
    let out = sw(&[&files[..], &["--json"]].concat());
    let line = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !line.contains("cigar") && !line.contains("start_a"),
        "{line}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_exits_with_status_2() {
    let dir = std::env::temp_dir().join(format!("sw-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.fa");
    let bad_char = dir.join("bad.fa");
    let empty = dir.join("empty.fa");
    std::fs::write(&good, ">g\nACGT\n").unwrap();
    std::fs::write(&bad_char, ">b\nACGU\n").unwrap();
    std::fs::write(&empty, "\n").unwrap();
    let path = |p: &std::path::Path| p.to_str().unwrap().to_owned();
    let (good, bad_char, empty) = (path(&good), path(&bad_char), path(&empty));
    let missing = format!("{}/missing.fa", dir.display());

    assert_input_error(&["--a", &good, "--b", &bad_char], "bad.fa");
    assert_input_error(&["--a", &empty, "--b", &good], "empty.fa");
    assert_input_error(&["--a", &missing, "--b", &good], "missing.fa");
    assert_input_error(&["--a", &good], "give the sequences");
    assert_input_error(&[], "give the sequences");
    assert_input_error(
        &["--random", "5", "5", "--a", &good, "--b", &good],
        "not both",
    );
    assert_input_error(&["--random", "0", "5"], "positive length");
    assert_input_error(&["--random", "-3", "5"], "positive length");
    assert_input_error(
        &["--random", "5", "5", "--mismatch", "1"],
        "--mismatch must be negative",
    );
    assert_input_error(
        &["--random", "5", "5", "--match", "0"],
        "--match must be positive",
    );
    assert_input_error(
        &["--random", "5", "5", "--gap", "2", "--gap-open", "3"],
        "--gap sets both",
    );
    assert_input_error(
        &["--random", "5", "5", "--gap-open", "-1"],
        "positive numbers",
    );
    assert_input_error(
        &["--random", "5", "5", "--gap-open", "1", "--gap-extend", "3"],
        "extend <= open",
    );
    assert_input_error(
        &["--random", "5", "5", "--matrix", "pam250"],
        "unknown substitution matrix",
    );
    assert_input_error(
        &["--random", "5", "5", "--matrix", "blosum62", "--match", "3"],
        "--matrix replaces",
    );
    assert_input_error(
        &["--random", "5", "5", "--outer-tile", "0x4"],
        "--outer-tile",
    );
    assert_input_error(&["--random", "5", "5", "--inner-tile", "4"], "--inner-tile");
    assert_input_error(&["--random", "5", "5", "--dist", "diag"], "--dist");
    assert_input_error(
        &["--random", "5", "5", "--mode", "hcmpi", "--workers", "0"],
        "--workers",
    );
    assert_input_error(
        &["--random", "5", "5", "--mode", "seq", "--workers", "2"],
        "--mode seq runs on one core",
    );
    assert_input_error(&["--random", "5", "5", "--mode", "nope"], "invalid value");
    assert_input_error(
        &["--random", "5", "5", "--align-width", "30"],
        "add --align",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A bad `HCMPI_BIND` ends both parallel modes with a message that names
/// it: hybrid mode binds its rayon threads as hcmpi mode its workers.
#[test]
fn a_bad_binding_is_an_error_in_both_parallel_modes() {
    for mode in ["hcmpi", "hybrid"] {
        let out = Command::new(SW)
            .args(["--random", "50", "50", "--mode", mode])
            .env("HCMPI_BIND", "loosely")
            .output()
            .expect("run smith-waterman");
        assert_refused(&out, 1, &["HCMPI_BIND", "loosely"], mode);
    }
}

/// A reader that stops early (`| head -1`) ends the report quietly, in every
/// form of it; any other failure to write is an error that says so.
#[test]
#[cfg(target_os = "linux")]
fn a_gone_reader_ends_the_report_quietly_and_a_full_disk_is_an_error() {
    let base = ["--random", "300", "200", "--seed", "5"];
    for extra in [&[][..], &["--json"], &["--align"], &["--mode", "hcmpi"]] {
        let args = [&base[..], extra].concat();
        let context = format!("smith-waterman {args:?}");
        let mut command = Command::new(SW);
        command.args(&args).env("HC_WORKERS", "2");
        assert_stdout_failures_handled(&mut command, &context);
    }
}
