//! Runs the `overhead` binary in its quick mode and checks the shape of its
//! JSON output: every expected (bench, variant) row, with a finite value.
//! Timing values are never compared with anything.

use std::collections::BTreeSet;
use std::process::Command;

use benches::report::{parse_json_object, JsonValue};

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

fn field<'a>(fields: &'a [(String, JsonValue)], key: &str, line: &str) -> &'a JsonValue {
    &fields
        .iter()
        .find(|(k, _)| k == key)
        .unwrap_or_else(|| panic!("no {key:?} in {line}"))
        .1
}

fn string<'a>(fields: &'a [(String, JsonValue)], key: &str, line: &str) -> &'a str {
    match field(fields, key, line) {
        JsonValue::Str(s) if !s.is_empty() => s,
        other => panic!("{key:?} should be a non-empty string in {line}, is {other:?}"),
    }
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
        let fields =
            parse_json_object(line).unwrap_or_else(|e| panic!("bad JSON line {line:?}: {e}"));
        let bench = string(&fields, "bench", line);
        let variant = string(&fields, "variant", line);
        string(&fields, "param", line);
        string(&fields, "unit", line);
        let value = match field(&fields, "value", line) {
            JsonValue::Num(v) => *v,
            other => panic!("value should be a number in {line}, is {other:?}"),
        };
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
        .map(|line| {
            let fields = parse_json_object(line).unwrap();
            string(&fields, "bench", line).to_owned()
        })
        .collect();
    assert_eq!(benches, BTreeSet::from(["ddf-chain".to_owned()]));
}
