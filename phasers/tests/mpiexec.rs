//! Multi-rank tests: the hcmpi-phaser examples under `mpiexec` at 1 to 4
//! ranks (each example checks its own results and prints one `OK` line per
//! rank). Build the examples first (`cargo build --release -p phasers
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
