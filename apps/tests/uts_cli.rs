//! The `uts` binary: output formats and bad-input handling.

use std::process::{Command, Output};

use apps::report::UtsReport;
use hcmpi_testkit::{assert_refused, assert_stdout_failures_handled};

fn uts(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_uts"))
        .args(args)
        .output()
        .expect("run uts")
}

fn assert_bad(args: &[&str], needle: &str) {
    assert_refused(&uts(args), 2, &[needle], &format!("{args:?}"));
}

#[test]
fn negative_branching_factor() {
    assert_bad(&["-b", "-1"], "-b (root branching factor)");
    assert_bad(&["-b", "-1.5"], "'-1.5'");
}

#[test]
fn probability_out_of_range() {
    assert_bad(&["-t", "0", "-q", "1.5"], "-q");
    assert_bad(&["-q", "-0.1"], "expected a number in [0, 1]");
}

#[test]
fn unknown_sample_tree() {
    assert_bad(&["--tree", "T9"], "unknown sample tree 'T9'");
}

#[test]
fn unknown_shape_and_type() {
    assert_bad(&["-a", "7"], "unknown geometric shape '7'");
    assert_bad(&["-t", "9"], "unknown tree type '9'");
}

#[test]
fn other_bad_values() {
    assert_bad(&["-m", "-3"], "-m");
    assert_bad(&["-d", "-1"], "-d");
    assert_bad(&["-a", "0", "-d", "0"], "-d");
    assert_bad(&["-g", "0"], "-g");
    assert_bad(&["-r", "9999999999"], "-r");
    assert_bad(&["-f", "-1"], "-f");
}

#[test]
fn unparsable_values_are_usage_errors() {
    // clap's own errors exit with 2 as well
    assert_bad(&["-b", "abc"], "invalid value");
    assert_bad(&["--mode", "nope"], "invalid value");
}

#[test]
fn json_output() {
    let out = uts(&["--tree", "T1", "--json"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.trim();
    assert_eq!(text.lines().count(), 1);
    let report = parse(line);
    assert_eq!(
        (report.tree.as_str(), report.mode.as_str()),
        ("T1", "seq"),
        "{line}"
    );
    assert_eq!((report.ranks, report.workers), (1, 1), "{line}");
    assert_eq!(
        (report.nodes, report.leaves, report.max_depth),
        (4130071, 3305118, 10),
        "{line}"
    );
    assert!(
        report.seconds >= 0.0 && report.nodes_per_sec > 0.0,
        "{line}"
    );
}

/// The report of one `--json` line, which must be exactly the line the
/// report type writes: every field, in order (the scripts rely on it).
fn parse(line: &str) -> UtsReport {
    let report =
        UtsReport::from_json_line(line).unwrap_or_else(|e| panic!("bad report {line:?}: {e}"));
    assert_eq!(report.json_line(), line, "fields or their order differ");
    report
}

#[test]
fn json_custom_tree_name_is_its_flags() {
    let out = uts(&[
        "-t", "1", "-a", "3", "-d", "4", "-b", "3", "-r", "2", "--json",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        parse(text.trim()).tree,
        "-t 1 -a 3 -d 4 -b 3 -r 2",
        "{text}"
    );
}

#[test]
fn human_summary_with_flags_and_sample_override() {
    // explicit flags override the sample's parameters
    let out = uts(&["--tree", "T1", "-d", "4"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("gen_mx = 4"), "{text}");
    assert!(text.contains("Tree size = "), "{text}");
    assert!(text.contains("nodes/sec"), "{text}");

    let out = uts(&["-t", "1", "-a", "3", "-d", "10", "-b", "4", "-r", "19"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Tree size = 4130071, tree depth = 10, num leaves = 3305118 (80.03%)"));
    assert!(text.contains("Sample tree T1: counts match"));
}

/// A bad `HCMPI_BIND` ends every parallel mode with a message that names
/// it: the baselines bind their threads as hcmpi mode its workers.
#[test]
fn a_bad_binding_is_an_error_in_every_parallel_mode() {
    for mode in ["hcmpi", "mpi-ws", "hybrid"] {
        let out = Command::new(env!("CARGO_BIN_EXE_uts"))
            .args(["--tree", "T1", "--mode", mode, "--json"])
            .env("HCMPI_BIND", "loosely")
            .output()
            .expect("run uts");
        assert_refused(&out, 1, &["HCMPI_BIND", "loosely"], mode);
    }
}

/// A reader that stops early (`| head -1`) ends the report quietly, in every
/// form of it (the sequential search prints its parameters before it
/// starts); any other failure to write is an error that says so.
#[test]
#[cfg(target_os = "linux")]
fn a_gone_reader_ends_the_report_quietly_and_a_full_disk_is_an_error() {
    let tree = ["-t", "1", "-a", "3", "-d", "4", "-b", "3", "-r", "2"];
    for extra in [&[][..], &["--json"], &["--mode", "hcmpi"]] {
        let args = [&tree[..], extra].concat();
        let context = format!("uts {args:?}");
        let mut command = Command::new(env!("CARGO_BIN_EXE_uts"));
        command.args(&args).env("HC_WORKERS", "2");
        assert_stdout_failures_handled(&mut command, &context);
    }
}

/// With no reader for the parameters it prints first, the sequential
/// search is skipped: a tree of about 4^40 nodes, which no run could
/// search before the tests' timeout, ends at once and successfully.
#[test]
#[cfg(target_os = "linux")]
fn a_sequential_search_nobody_reads_is_skipped() {
    let endless = ["-t", "1", "-a", "3", "-d", "40", "-b", "4", "-r", "5"];
    let mut command = Command::new(env!("CARGO_BIN_EXE_uts"));
    command.args(["--mode", "seq"]).args(endless);
    let out = hcmpi_testkit::output_with_stdout(&mut command, hcmpi_testkit::Stdout::Closed)
        .unwrap_or_else(|e| panic!("uts to a gone reader: {e}"));
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
