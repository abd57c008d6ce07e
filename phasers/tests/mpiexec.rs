//! Multi-rank tests: the hcmpi-phaser examples under `mpiexec` at 1 to 4
//! ranks (each example checks its own results and prints one `OK` line per
//! rank). Build the examples first (`cargo build --release -p hcmpi-phasers
//! --examples`): this test does not. Runs are serialized and bounded by `hcmpi_testkit::test_timeout`,
//! so a hang fails the test with the tail of the output.

use std::path::PathBuf;

use hcmpi_testkit::{example_path, one_job_at_a_time, shared_launcher, test_timeout, RunOutput};

fn run(ranks: usize, name: &str, args: &[&str]) -> RunOutput {
    let _guard = one_job_at_a_time();
    let exe = example_path(name);
    let launcher = shared_launcher();
    let mut cmd = launcher.command(ranks, &exe, args);
    cmd.env("HC_WORKERS", "2");
    launcher
        .run_command(cmd, ranks, &exe, test_timeout())
        .and_then(RunOutput::success_or_err)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn assert_ok(out: &RunOutput, marker: &str) {
    for rank in 0..out.ranks {
        let prefix = format!("rank {rank}/{}: {marker}", out.ranks);
        assert!(
            out.stdout
                .lines()
                .any(|l| l.starts_with(&prefix) && l.ends_with("OK")),
            "no {prefix:?} line\n--- stdout:\n{}\n--- stderr:\n{}",
            out.stdout,
            out.stderr
        );
    }
}

fn scratch(label: &str, ranks: usize) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phasers-{label}-{}-{ranks}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a scratch dir");
    dir
}

#[test]
fn hcmpi_phaser_suite_1_to_4_ranks() {
    for ranks in 1..=4 {
        let dir = scratch("suite", ranks);
        let out = run(ranks, "hcmpi_phaser_suite", &[dir.to_str().unwrap()]);
        assert_ok(&out, "hcmpi phaser suite");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn fig7_phaser_barrier() {
    for ranks in [1, 2, 4] {
        assert_ok(&run(ranks, "fig7_phaser_barrier", &[]), "fig7");
    }
}

#[test]
fn fig8_accumulator() {
    for ranks in [1, 2, 3] {
        let out = run(ranks, "fig8_accum", &[]);
        assert_ok(&out, "fig8 sum=");
        let all = ranks * 4;
        assert!(
            out.stdout
                .contains(&format!("sum={} OK", all * (all - 1) / 2)),
            "{}",
            out.stdout
        );
    }
}

#[test]
fn events_suite_1_to_4_ranks() {
    for ranks in 1..=4 {
        assert_ok(&run(ranks, "events_suite", &[]), "events suite");
    }
}

#[test]
fn thread_census_1_to_4_ranks_both_placements() {
    for placement in ["dedicated", "shared"] {
        for ranks in 1..=4 {
            assert_ok(&run(ranks, "thread_census", &[placement]), "thread census");
        }
    }
}

#[test]
fn ssp_suite_1_to_4_ranks() {
    for ranks in 1..=4 {
        assert_ok(&run(ranks, "ssp_suite", &[]), "ssp suite");
    }
}

#[test]
fn ssp_ranks_that_disagree_on_the_staleness_all_fail_to_create() {
    for ranks in [1, 3] {
        assert_ok(&run(ranks, "ssp_suite", &["mismatch"]), "ssp mismatch");
    }
}

#[test]
fn ssp_a_leaked_member_fails_every_rank_instead_of_hanging() {
    for ranks in 1..=4 {
        assert_ok(&run(ranks, "ssp_suite", &["leak"]), "ssp leak");
    }
}

/// Runs `ssp_jacobi --json` and returns rank 0's line.
fn jacobi(ranks: usize, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--json", "--n", "2000"];
    all.extend_from_slice(args);
    let out = run(ranks, "ssp_jacobi", &all);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one line from rank 0:\n{}", out.stdout);
    serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("{e}: {}", lines[0]))
}

#[test]
fn ssp_jacobi_converges_for_every_staleness_at_1_to_4_ranks() {
    for ranks in 1..=4 {
        for k in [0u64, 1, 4] {
            let line = jacobi(ranks, &["--staleness", &k.to_string(), "--tol", "1e-7"]);
            assert_eq!(line["staleness"], k);
            assert_eq!(line["ranks"], ranks);
            let residual = line["residual"].as_f64().unwrap();
            assert!(residual <= 1e-7, "{ranks} ranks, k = {k}: {line}");
            // Contraction 2 / 2.05 per iteration: about 650 to reach 1e-7,
            // and a stale check costs k more.
            let iterations = line["iterations"].as_u64().unwrap();
            assert!((600..800).contains(&iterations), "{line}");
            assert!(line["seconds"].as_f64().unwrap() > 0.0);
        }
    }
}

#[test]
fn ssp_jacobi_with_a_slow_rank_and_jitter_converges() {
    let line = jacobi(
        3,
        &[
            "--staleness",
            "2",
            "--slow-rank",
            "1",
            "--delay-us",
            "20",
            "--jitter-us",
            "10",
        ],
    );
    assert!(line["residual"].as_f64().unwrap() <= 1e-8, "{line}");
}

#[test]
fn ssp_jacobi_refuses_a_slow_rank_outside_the_job() {
    let _guard = one_job_at_a_time();
    let exe = example_path("ssp_jacobi");
    let out = shared_launcher()
        .run(2, &exe, &["--slow-rank", "5", "--json"], test_timeout())
        .unwrap_or_else(|e| panic!("{e}"));
    out.expect_job_failure(
        None,
        "--slow-rank 5 is not a rank",
        "\"iterations\"",
        "2 ranks",
    );
}
