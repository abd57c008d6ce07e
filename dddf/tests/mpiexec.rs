//! Multi-rank tests of the DDDF space: the `dddf_suite` example under
//! `mpiexec` at 1 to 4 ranks (it checks its own results and prints one OK
//! line per rank), the watchdog's report of a guid nobody puts, and
//! `close` failing on every rank when one listener fails.
//!
//! Runs are serialized and bounded by [`hcmpi_testkit::test_timeout`]: a
//! hang fails the test with the tail of the output instead of hanging it.

use hcmpi_testkit::{
    example_path, one_job_at_a_time, shared_launcher, test_timeout, LaunchError, RunOutput,
};

fn run(ranks: usize, args: &[&str], env: &[(&str, &str)]) -> Result<RunOutput, LaunchError> {
    let exe = example_path("dddf_suite");
    let launcher = shared_launcher();
    let mut cmd = launcher.command(ranks, &exe, args);
    cmd.env("HC_WORKERS", "2");
    for (key, value) in env {
        cmd.env(key, value);
    }
    let _one_at_a_time = one_job_at_a_time();
    launcher.run_command(cmd, ranks, &exe, test_timeout())
}

/// Every rank printed a line starting `rank R/N: <marker>`.
fn assert_rank_lines(out: &RunOutput, ranks: usize, marker: &str) {
    for rank in 0..ranks {
        let prefix = format!("rank {rank}/{ranks}: {marker}");
        assert!(
            out.stdout.lines().any(|l| l.starts_with(&prefix)),
            "no {prefix:?} line:\n{}\n--- stderr:\n{}",
            out.stdout,
            out.stderr
        );
    }
}

#[test]
fn suite_at_1_to_4_ranks() {
    for ranks in 1..=4 {
        let out = match run(ranks, &[], &[]).and_then(RunOutput::success_or_err) {
            Ok(out) => out,
            Err(err) => panic!("{err}"),
        };
        assert_rank_lines(&out, ranks, "dddf suite OK");
        // The one diagnostic the suite provokes: the home of guid 998,
        // whose `reader` fails there only, refuses the rank that asks.
        let refusal = "request for guid 998: dddf: reader(998) = ";
        let (refusals, others): (Vec<&str>, Vec<&str>) =
            out.stderr.lines().partition(|l| l.contains(refusal));
        assert_eq!(
            refusals.len(),
            usize::from(ranks > 1),
            "refusals at {ranks} ranks:\n{}",
            out.stderr
        );
        let others = others.join("\n");
        assert!(
            !others.contains("pending") && !others.contains("dddf ("),
            "unexpected diagnostics at {ranks} ranks:\n{others}"
        );
    }
}

#[test]
fn watchdog_reports_a_guid_nobody_puts() {
    for ranks in [1, 2] {
        let out = match run(ranks, &["--never-put"], &[("HC_WATCHDOG_SECS", "1")]) {
            Ok(out) => out,
            Err(err) => panic!("{err}"),
        };
        assert!(
            !out.status.success(),
            "the run should have been ended by the watchdog:\n{}",
            out.stderr
        );
        assert!(
            out.stderr.contains("dddf watchdog") && out.stderr.contains("guid 4242 (home rank 0)"),
            "no watchdog report at {ranks} ranks:\n{}",
            out.stderr
        );
    }
}

#[test]
fn a_failed_listener_fails_close_on_every_rank() {
    for ranks in [2, 3] {
        let out = match run(ranks, &["--listener-panic"], &[]).and_then(RunOutput::success_or_err) {
            Ok(out) => out,
            Err(err) => panic!("{err}"),
        };
        assert_rank_lines(&out, ranks, "close failed: ");
        assert!(
            out.stdout.contains("poisoned on rank 0"),
            "rank 0 does not name the panic:\n{}",
            out.stdout
        );
    }
}
