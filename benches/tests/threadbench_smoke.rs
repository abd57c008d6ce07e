//! Smoke test of the `threadbench` driver: a `--quick` run at T = 1, 2 must
//! produce every (bench, variant, threads) row with a finite positive value
//! and the engine placement in effect, and its stderr (a pipe) only log
//! lines. Nothing about the timings themselves is checked.
//!
//! It starts `mpiexec -n 2` about 35 times (a few seconds in all); each run
//! is bounded by threadbench's own `--timeout`, which kills a hung run and
//! everything it started.

use std::collections::BTreeSet;
use std::process::Command;

use serde::{Deserialize, Serialize};

/// One row, fields in the order the driver writes them; every one required.
#[derive(Debug, Serialize, Deserialize)]
struct Row {
    bench: String,
    variant: String,
    placement: String,
    threads: u64,
    bytes: u64,
    value: Option<f64>,
    unit: String,
}

/// Parses one line; `threads` and `bytes` must be whole non-negative
/// numbers (`u64`), `value` a number or `null` (`None`).
fn parse(line: &str) -> Row {
    let row: Row = serde_json::from_str(line).unwrap_or_else(|e| panic!("bad row {line:?}: {e}"));
    // Written back, the row is the line: the same keys in the same order.
    assert_eq!(serde_json::to_string(&row).unwrap(), line, "key order");
    row
}

#[test]
fn quick_run_reports_every_configuration() {
    let output = Command::new(env!("CARGO_BIN_EXE_threadbench"))
        .args(["--quick", "--threads", "1,2", "--json", "--timeout", "60"])
        .output()
        .expect("start threadbench");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "threadbench failed: {}\n--- stderr ---\n{stderr}\n--- stdout ---\n{stdout}",
        output.status
    );
    let rows: Vec<Row> = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(parse)
        .collect();

    let mut expected = BTreeSet::new();
    let hcmpi = ["hcmpi", "hcmpi-dedicated", "hcmpi-shared"];
    for bench in ["bandwidth", "msgrate", "latency", "get"] {
        for threads in [1, 2] {
            for variant in hcmpi.iter().chain(&["mpi-multiple"]) {
                expected.insert((bench, *variant, threads));
            }
        }
        expected.insert((bench, "mpi-single", 1));
    }
    for variant in hcmpi {
        expected.insert(("idle", variant, 1));
        expected.insert(("idle", variant, 2));
    }

    let found: BTreeSet<(&str, &str, u64)> = rows
        .iter()
        .map(|r| (r.bench.as_str(), r.variant.as_str(), r.threads))
        .collect();
    for key in &expected {
        assert!(found.contains(key), "no row for {key:?}\n{stdout}");
    }
    for key in &found {
        assert!(expected.contains(key), "unexpected row {key:?}\n{stdout}");
    }

    for row in &rows {
        let value = row
            .value
            .unwrap_or_else(|| panic!("no value (null) in {row:?}"));
        // An idle process may really use no measurable CPU.
        let ok = if row.bench == "idle" {
            value.is_finite() && value >= 0.0
        } else {
            value.is_finite() && value > 0.0
        };
        assert!(ok, "bad value in {row:?}");
        let unit = match row.bench.as_str() {
            "bandwidth" => "MB/s",
            "msgrate" => "msg/s",
            "latency" | "get" => "us",
            _ => "% core",
        };
        assert_eq!(row.unit, unit, "{row:?}");
        // The placement in effect: what the variant forces, what `auto`
        // resolved to, or none for raw MPI.
        let placements: &[&str] = match row.variant.as_str() {
            "hcmpi" => &["dedicated", "shared"],
            "hcmpi-dedicated" => &["dedicated"],
            "hcmpi-shared" => &["shared"],
            _ => &["none"],
        };
        assert!(placements.contains(&row.placement.as_str()), "{row:?}");
    }

    // Latency is measured at every size, for every configuration.
    for (bench, variant, threads) in expected.iter().filter(|k| k.0 == "latency") {
        let sizes: BTreeSet<u64> = rows
            .iter()
            .filter(|r| {
                (r.bench.as_str(), r.variant.as_str(), r.threads) == (bench, variant, *threads)
            })
            .map(|r| r.bytes)
            .collect();
        assert_eq!(
            sizes,
            BTreeSet::from([0, 8, 64, 256, 1024]),
            "latency sizes of {variant} T={threads}"
        );
    }

    // The run outlasts the progress bar's delay (a few seconds), but stderr
    // is a pipe: plain log lines only, no bar and no terminal codes.
    assert!(
        !stderr.contains(['\r', '\x1b']),
        "terminal output on a pipe:\n{stderr:?}"
    );
}

/// A child that cannot run its configuration (each one started alone, a
/// rank of a 1-rank job) ends with status 1 and a message naming why.
#[test]
fn a_child_names_what_it_cannot_run() {
    let refused: [(&[&str], &str); 3] = [
        (
            &["--variant", "hcmpi", "--threads", "1", "--bench", "latency"],
            "the benchmark needs exactly 2 ranks, got 1",
        ),
        (
            &[
                "--variant",
                "mpi-single",
                "--threads",
                "2",
                "--bench",
                "latency",
            ],
            "mpi-single runs with one thread only (--threads 1), got 2",
        ),
        (
            &[
                "--variant",
                "mpi-multiple",
                "--threads",
                "1",
                "--bench",
                "idle",
            ],
            "idle does not run with the mpi-multiple variant (only with the hcmpi variants)",
        ),
    ];
    for (args, message) in refused {
        let output = Command::new(env!("CARGO_BIN_EXE_threadbench"))
            .arg("--child")
            .args(args)
            .output()
            .expect("run threadbench");
        let context = format!("threadbench --child {args:?}");
        hcmpi_testkit::assert_refused(&output, 1, &["threadbench child: ", message], &context);
    }
}
