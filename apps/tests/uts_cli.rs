//! The `uts` binary: output formats and bad-input handling.

use std::process::{Command, Output};

fn uts(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_uts"))
        .args(args)
        .output()
        .expect("run uts")
}

fn assert_bad(args: &[&str], needle: &str) {
    let out = uts(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: stderr {stderr}");
    assert!(
        stderr.contains(needle),
        "{args:?}: stderr {stderr:?} lacks {needle:?}"
    );
    assert!(out.stdout.is_empty(), "{args:?}: printed to stdout");
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
    assert!(line.starts_with("{\"tree\":\"T1\",\"mode\":\"seq\",\"ranks\":1,\"workers\":1,"));
    assert!(line.contains("\"nodes\":4130071,\"leaves\":3305118,\"max_depth\":10,"));
    assert!(line.contains("\"seconds\":") && line.contains("\"nodes_per_sec\":"));
    assert!(line.ends_with('}'));
}

#[test]
fn json_custom_tree_name_is_its_flags() {
    let out = uts(&[
        "-t", "1", "-a", "3", "-d", "4", "-b", "3", "-r", "2", "--json",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("{\"tree\":\"-t 1 -a 3 -d 4 -b 3 -r 2\""),
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
