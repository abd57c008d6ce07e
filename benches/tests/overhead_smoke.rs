//! Runs the `overhead` binary in its quick mode and checks the shape of its
//! JSON output: every expected (bench, variant) row, with a finite value.
//! Timing values are never compared with anything.

use std::collections::BTreeSet;
use std::process::Command;

use benches::report::MeasurementRow;

const EXPECTED: [(&str, &str); 8] = [
    ("spawn", "hc"),
    ("spawn", "rayon"),
    ("fib", "hc"),
    ("fib", "rayon"),
    ("fib", "seq"),
    ("ddf-chain", "hc"),
    ("idle", "hc"),
    ("idle", "rayon"),
];

/// The row of one output line, which must be exactly what the row type
/// writes (its fields in order); `null` values read as NaN.
fn parse(line: &str) -> MeasurementRow {
    let row = MeasurementRow::from_json_line(line)
        .unwrap_or_else(|e| panic!("bad JSON line {line:?}: {e}"));
    assert_eq!(row.json_line(), line, "not in the row format");
    row
}

fn string<'a>(value: &'a str, key: &str, line: &str) -> &'a str {
    assert!(!value.is_empty(), "{key:?} should be non-empty in {line}");
    value
}

#[test]
fn quick_json_run_has_every_row() {
    let output = Command::new(env!("CARGO_BIN_EXE_overhead"))
        .args(["--quick", "--json", "--workers", "2"])
        .output()
        .expect("run the overhead binary");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "overhead failed: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );

    let mut seen = BTreeSet::new();
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        let row = parse(line);
        let bench = string(&row.bench, "bench", line);
        let variant = string(&row.variant, "variant", line);
        string(&row.param, "param", line);
        string(&row.unit, "unit", line);
        let value = row.value;
        // `null` (a non-finite value) reads as NaN.
        assert!(value.is_finite(), "non-finite value in {line}");
        if bench == "idle" {
            // An idle pool may legitimately measure as using no CPU at all.
            assert!(value >= 0.0, "negative CPU fraction in {line}");
        } else {
            assert!(value > 0.0, "non-positive value in {line}");
        }
        seen.insert((bench.to_owned(), variant.to_owned()));
    }
    for (bench, variant) in EXPECTED {
        assert!(
            seen.contains(&(bench.to_owned(), variant.to_owned())),
            "no ({bench}, {variant}) row in:\n{stdout}"
        );
    }
}

#[test]
fn one_bench_can_be_selected() {
    let output = Command::new(env!("CARGO_BIN_EXE_overhead"))
        .args([
            "--quick",
            "--json",
            "--workers",
            "1",
            "--bench",
            "ddf-chain",
        ])
        .output()
        .expect("run the overhead binary");
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let benches: BTreeSet<String> = stdout
        .lines()
        .map(|line| string(&parse(line).bench, "bench", line).to_owned())
        .collect();
    assert_eq!(benches, BTreeSet::from(["ddf-chain".to_owned()]));
}

/// A reader that stops early ends the report quietly, in both forms; any
/// other failure to write it is an error that says so.
#[test]
#[cfg(target_os = "linux")]
fn a_gone_reader_ends_the_report_quietly_and_a_full_disk_is_an_error() {
    let quick = ["--quick", "--workers", "1", "--bench", "ddf-chain"];
    for extra in [&[][..], &["--json"]] {
        let args = [&quick[..], extra].concat();
        let mut command = Command::new(env!("CARGO_BIN_EXE_overhead"));
        command.args(&args);
        hcmpi_testkit::assert_stdout_failures_handled(&mut command, &format!("overhead {args:?}"));
    }
}
