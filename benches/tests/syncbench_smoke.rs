//! Smoke test of the `syncbench` driver: a `--quick` run at T = 2 on 1 and
//! 2 ranks must produce every (bench, variant, ranks, tasks) row with a
//! finite, non-negative value. Nothing about the timings is checked.

use std::collections::BTreeSet;
use std::process::Command;

use serde::{Deserialize, Serialize};

/// One row, fields in the order the driver writes them; every one required,
/// `value` a number (not `null`).
#[derive(Debug, Serialize, Deserialize)]
struct Row {
    bench: String,
    variant: String,
    ranks: u64,
    tasks: u64,
    value: f64,
    unit: String,
}

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
        let row: Row =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("bad row {line:?}: {e}"));
        // Written back, the row is the line: the same keys in the same order.
        assert_eq!(serde_json::to_string(&row).unwrap(), line, "key order");
        assert_eq!(row.unit, "us");
        assert!(row.value.is_finite() && row.value >= 0.0, "{line}");
        seen.insert((row.bench, row.variant, row.ranks, row.tasks));
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
