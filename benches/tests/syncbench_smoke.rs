//! Smoke test of the `syncbench` driver: a `--quick` run at T = 2 on 1 and
//! 2 ranks must produce every (bench, variant, ranks, tasks) row with a
//! finite, non-negative value. Nothing about the timings is checked.

use std::collections::BTreeSet;
use std::process::Command;

use benches::report::{parse_json_object, JsonValue};

#[test]
fn quick_run_reports_every_configuration() {
    let output = Command::new(env!("CARGO_BIN_EXE_syncbench"))
        .args([
            "--quick",
            "--tasks",
            "2",
            "--ranks",
            "1,2",
            "--json",
            "--timeout",
            "120",
        ])
        .output()
        .expect("start syncbench");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "syncbench failed\n{stdout}\n{stderr}"
    );
    let mut seen = BTreeSet::new();
    for line in stdout.lines() {
        let fields = parse_json_object(line).unwrap_or_else(|e| panic!("bad row {line:?}: {e}"));
        let keys: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            ["bench", "variant", "ranks", "tasks", "value", "unit"],
            "{line}"
        );
        let text = |i: usize| match &fields[i].1 {
            JsonValue::Str(s) => s.clone(),
            other => panic!("{line}: field {i} is {other:?}"),
        };
        let number = |i: usize| match fields[i].1 {
            JsonValue::Num(x) => x,
            ref other => panic!("{line}: field {i} is {other:?}"),
        };
        assert_eq!(text(5), "us");
        let value = number(4);
        assert!(value.is_finite() && value >= 0.0, "{line}");
        seen.insert((text(0), text(1), number(2) as u64, number(3) as u64));
    }
    let mut expected = BTreeSet::new();
    for ranks in [1u64, 2] {
        for variant in [
            "hcmpi-strict",
            "hcmpi-fuzzy",
            "hcmpi-strict-flat",
            "hcmpi-fuzzy-flat",
            "hybrid",
            "hybrid-fuzzy",
        ] {
            expected.insert(("barrier".to_owned(), variant.to_owned(), ranks, 2));
        }
        for variant in ["hcmpi-strict", "hcmpi-strict-flat", "hybrid"] {
            expected.insert(("reduction".to_owned(), variant.to_owned(), ranks, 2));
        }
        for bench in ["barrier", "reduction"] {
            expected.insert((bench.to_owned(), "mpi-everywhere".to_owned(), 2 * ranks, 1));
        }
    }
    assert_eq!(seen, expected, "\n{stdout}\n{stderr}");
}
