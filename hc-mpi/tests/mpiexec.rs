//! Multi-rank tests: the examples run under `mpiexec` at 1 to 4 ranks (rsmpi
//! style: every example checks its own results, prints one `OK` line per
//! rank and exits non-zero on any mismatch).
//!
//! The example binaries are found next to this test's executable: it lives
//! in `target/<profile>/deps/`, and `cargo test` builds the package's
//! examples into `target/<profile>/examples/` before running integration
//! tests. Runs are serialized (a 2-core machine oversubscribed by 4 ranks ×
//! 3 threads is busy enough), each bounded by
//! [`hcmpi_testkit::test_timeout`]; a hang fails the test with the tail of
//! the output.

use std::process::Command;

use hcmpi_testkit::{
    example_path, one_job_at_a_time, shared_launcher, test_timeout, LaunchError, RunOutput,
};

/// Computation workers per rank for launched programs.
const WORKERS: &str = "2";

fn finish(result: Result<RunOutput, LaunchError>) -> RunOutput {
    match result.and_then(RunOutput::success_or_err) {
        Ok(output) => output,
        Err(err) => panic!("{err}"),
    }
}

/// Runs example `name` on `ranks` ranks with `workers` computation workers
/// each; panics unless it exits with status 0.
fn run_with(ranks: usize, workers: &str, name: &str, args: &[&str]) -> RunOutput {
    let exe = example_path(name);
    let launcher = shared_launcher();
    let mut cmd = launcher.command(ranks, &exe, args);
    cmd.env("HC_WORKERS", workers);
    let _one_at_a_time = one_job_at_a_time();
    finish(launcher.run_command(cmd, ranks, &exe, test_timeout()))
}

fn run(ranks: usize, name: &str, args: &[&str]) -> RunOutput {
    run_with(ranks, WORKERS, name, args)
}

/// Runs example `name` directly, without `mpiexec` (an MPI singleton).
fn run_singleton(name: &str, args: &[&str]) -> RunOutput {
    let exe = example_path(name);
    let mut cmd = Command::new(&exe);
    cmd.args(args).env("HC_WORKERS", WORKERS);
    let _one_at_a_time = one_job_at_a_time();
    finish(shared_launcher().run_command(cmd, 1, &exe, test_timeout()))
}

/// Every rank printed exactly one `rank R/N: <marker>` line.
fn assert_ok_lines(out: &RunOutput, marker: &str) {
    let ranks = out.ranks;
    let lines: Vec<&str> = out.stdout.lines().filter(|l| l.contains(marker)).collect();
    assert_eq!(
        lines.len(),
        ranks,
        "{}: expected {ranks} lines with {marker:?}, got {}\n--- stdout:\n{}\n--- stderr:\n{}",
        out.exe.display(),
        lines.len(),
        out.stdout,
        out.stderr
    );
    for rank in 0..ranks {
        let prefix = format!("rank {rank}/{ranks}: {marker}");
        assert!(
            lines.iter().any(|l| l.starts_with(&prefix)),
            "no {prefix:?} line in:\n{}",
            out.stdout
        );
    }
}

/// Runs `name` at 1, 2, 3 and 4 ranks, checking the OK lines each time.
fn at_1_to_4(name: &str, args: &[&str], marker: &str) {
    for ranks in 1..=4 {
        let out = run(ranks, name, args);
        assert_ok_lines(&out, marker);
    }
}

#[test]
fn fig3_finish_irecv() {
    at_1_to_4("fig3_finish_irecv", &[], "fig3 finish irecv OK");
}

#[test]
fn fig4_await() {
    at_1_to_4("fig4_await", &[], "fig4 await OK");
}

#[test]
fn fig5_wait_status() {
    at_1_to_4("fig5_wait_status", &[], "fig5 wait status OK");
}

#[test]
fn fig6_barrier() {
    at_1_to_4("fig6_barrier", &[], "fig6 barrier OK");
}

#[test]
fn p2p_suite() {
    at_1_to_4("p2p_suite", &["--no-derived"], "p2p suite OK (10 sections)");
}

/// Section 11 of the p2p suite: a `Vec` of a `#[derive(Equivalence)]`
/// struct. Derived datatypes are created by MPI calls on first use, which
/// must happen on the communication worker (it resolves them there).
#[test]
fn p2p_derived_datatype() {
    for ranks in [1, 2] {
        let out = run(ranks, "p2p_suite", &["--only-derived"]);
        assert_ok_lines(&out, "p2p suite OK (1 sections)");
    }
}

#[test]
fn collectives_suite() {
    at_1_to_4("collectives_suite", &[], "collectives suite OK");
}

#[test]
fn ordering_storm() {
    at_1_to_4("ordering_storm", &[], "ordering storm OK");
}

#[test]
fn shutdown_pending() {
    for ranks in 1..=4 {
        let out = run(ranks, "shutdown_pending", &[]);
        assert_ok_lines(&out, "shutdown pending OK");
        assert!(
            out.stderr.contains("pending") && out.stderr.contains("irecv(source="),
            "stderr does not name the pending irecv:\n{}",
            out.stderr
        );
        let expected = format!("irecv(source={}, tag=77", 1 % ranks);
        assert!(
            out.stderr.contains(&expected),
            "stderr lacks {expected:?}:\n{}",
            out.stderr
        );
    }
}

#[test]
fn async_requests_on_one_worker() {
    // One worker: 20,000 pending receives must not stack on it.
    for ranks in 1..=4 {
        let out = run_with(ranks, "1", "async_requests", &[]);
        assert_ok_lines(&out, "async requests OK");
    }
}

#[test]
fn comm_churn() {
    for ranks in [1, 2] {
        let out = run(ranks, "comm_churn", &[]);
        assert_ok_lines(&out, "comm churn OK");
    }
    let out = run(3, "comm_churn", &["--count", "3000"]);
    assert_ok_lines(&out, "comm churn OK");
}

#[test]
fn services() {
    at_1_to_4("services", &[], "services OK");
}

/// Services with one worker in shared placement: the worker waiting in a
/// task steps the engine, so handlers run inside that task's finish
/// (section 5 of the example: their operations must not join it).
#[test]
fn services_one_shared_worker() {
    let exe = example_path("services");
    let launcher = shared_launcher();
    for ranks in [2, 3] {
        let mut cmd = launcher.command(ranks, &exe, &[] as &[&str]);
        cmd.env("HC_WORKERS", "1").env("HCMPI_PLACEMENT", "shared");
        let _one_at_a_time = one_job_at_a_time();
        let out = finish(launcher.run_command(cmd, ranks, &exe, test_timeout()));
        assert_ok_lines(&out, "services OK (shared engine)");
    }
}

/// The placement in effect follows `HCMPI_PLACEMENT`, and `auto` picks
/// shared placement when the ranks have no spare core.
#[test]
fn placement_modes() {
    for (placement, expected) in [
        ("dedicated", "dedicated engine"),
        ("shared", "shared engine"),
    ] {
        let exe = example_path("async_requests");
        let launcher = shared_launcher();
        let mut cmd = launcher.command(2, &exe, &["--waiters", "100"]);
        cmd.env("HC_WORKERS", "1").env("HCMPI_PLACEMENT", placement);
        let _one_at_a_time = one_job_at_a_time();
        let out = finish(launcher.run_command(cmd, 2, &exe, test_timeout()));
        assert_ok_lines(&out, "async requests OK");
        assert_eq!(
            out.stdout.matches(expected).count(),
            2,
            "{placement}: {}",
            out.stdout
        );
    }
    // Auto: with as many workers as the cores a rank gets, no spare core.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let exe = example_path("async_requests");
    let launcher = shared_launcher();
    let mut cmd = launcher.command(1, &exe, &["--waiters", "100"]);
    cmd.env("HC_WORKERS", cores.to_string())
        .env("HCMPI_PLACEMENT", "auto");
    let _one_at_a_time = one_job_at_a_time();
    let out = finish(launcher.run_command(cmd, 1, &exe, test_timeout()));
    assert!(out.stdout.contains("shared engine"), "{}", out.stdout);
    // Oversubscription: one worker always has a core (a launcher may bind
    // the rank to fewer cores than this process sees, as Open MPI does);
    // one worker more than the cores never has.
    for (workers, expected) in [(1, "a core per thread"), (cores + 1, "oversubscribed")] {
        let mut cmd = launcher.command(1, &exe, &["--waiters", "100"]);
        cmd.env("HC_WORKERS", workers.to_string())
            .env("HCMPI_PLACEMENT", "shared");
        let out = finish(launcher.run_command(cmd, 1, &exe, test_timeout()));
        assert!(
            out.stdout.contains(expected),
            "{workers} workers: {}",
            out.stdout
        );
    }
}

/// Runs example `name` as a singleton with `variable=value`, which must
/// end it with an error that names both.
fn assert_bad_env_is_a_clear_error(name: &str, variable: &str, value: &str) {
    let exe = example_path(name);
    let mut cmd = Command::new(&exe);
    cmd.env(variable, value);
    let _one_at_a_time = one_job_at_a_time();
    let out = shared_launcher()
        .run_command(cmd, 1, &exe, test_timeout())
        .expect("the run ends");
    assert!(!out.status.success(), "a bad {variable} must fail");
    assert!(
        out.stderr.contains(variable) && out.stderr.contains(value),
        "{}",
        out.stderr
    );
}

#[test]
fn bad_placement_is_a_clear_error() {
    assert_bad_env_is_a_clear_error("fig4_await", "HCMPI_PLACEMENT", "sometimes");
}

/// With one computation worker per rank, every blocking wait inside a task
/// has to run the other tasks itself.
#[test]
fn single_worker() {
    for (name, args, marker) in [
        ("fig3_finish_irecv", &[][..], "fig3 finish irecv OK"),
        ("fig5_wait_status", &[], "fig5 wait status OK"),
        ("fig6_barrier", &[], "fig6 barrier OK"),
        ("p2p_suite", &["--no-derived"], "p2p suite OK"),
        ("collectives_suite", &[], "collectives suite OK"),
        ("ordering_storm", &["--storm", "20000"], "ordering storm OK"),
    ] {
        let out = run_with(2, "1", name, args);
        assert_ok_lines(&out, marker);
    }
}

/// Singleton MPI runs: the binary started without `mpiexec`.
#[test]
fn singleton() {
    let out = run_singleton("fig4_await", &[]);
    assert_ok_lines(&out, "fig4 await OK");
    let out = run_singleton("p2p_suite", &["--no-derived"]);
    assert_ok_lines(&out, "p2p suite OK (10 sections)");
}

/// One failing rank ends the whole job with its message and a non-zero
/// status, while the others wait for it in a barrier or in start-up (a
/// hang here fails the test at the timeout).
#[test]
fn one_failing_rank_ends_the_job() {
    let exe = example_path("job_abort");
    let launcher = shared_launcher();
    for ranks in 2..=4 {
        for (mode, message) in [
            ("abort", "this rank cannot go on"),
            ("panic", "a bug on the last rank"),
            ("task-panic", "a task failed on the last rank"),
            (
                "error",
                "Error: job_abort: the last rank cannot read its input: no such file",
            ),
            ("reject-input", "this rank rejects its input"),
            // The launcher's report is all there is (MPICH: "Killed (signal
            // 9)", Open MPI: "exited on signal 9 (Killed)").
            ("killed", "signal 9"),
        ] {
            let mut cmd = launcher.command(ranks, &exe, &[mode]);
            cmd.env("HC_WORKERS", WORKERS);
            let _one_at_a_time = one_job_at_a_time();
            let out = match launcher.run_command(cmd, ranks, &exe, test_timeout()) {
                Ok(out) => out,
                Err(err) => panic!("{ranks} ranks, {mode}: {err}"),
            };
            out.expect_job_failure(
                None,
                message,
                "job abort OK",
                &format!("{ranks} ranks, {mode}"),
            );
        }
    }
    // The same program without a failure: every rank passes.
    assert_ok_lines(&run(3, "job_abort", &[]), "job abort OK");
}

/// A panic on one rank of a program that runs MPI through rsmpi directly
/// ends the whole job with its message when it keeps an
/// `AbortJobOnPanic`, instead of leaving the other ranks waiting for it
/// (without the guard this test fails by timeout).
#[test]
fn a_panic_on_one_rank_ends_the_job() {
    let exe = example_path("panic_on_one_rank");
    let launcher = shared_launcher();
    for ranks in 2..=4 {
        let context = format!("{ranks} ranks");
        let _one_at_a_time = one_job_at_a_time();
        let cmd = launcher.command(ranks, &exe, &[] as &[&str]);
        let out = launcher
            .run_command(cmd, ranks, &exe, test_timeout())
            .unwrap_or_else(|err| panic!("{context}: {err}"));
        out.expect_job_failure(
            None,
            "rank 1: panic_on_one_rank: a panic is ending this rank; aborting the MPI job",
            "rank 0 received",
            &context,
        );
        assert!(
            out.stderr.contains("rank 1 fails on purpose"),
            "{context}: the panic's own message is missing\n{}",
            out.stderr
        );
    }
}

/// A rank whose receive waits on a slow peer reports it once
/// (`HCMPI_STALL_SECS=1`) and the job still ends normally; with the report
/// off (`0`) nothing is printed.
#[test]
fn stall_report() {
    let exe = example_path("stall_report");
    let launcher = shared_launcher();
    for (limit, delay, reported) in [("1", "1500", true), ("0", "1200", false)] {
        let mut cmd = launcher.command(2, &exe, &["--delay-ms", delay]);
        cmd.env("HC_WORKERS", WORKERS)
            .env("HCMPI_STALL_SECS", limit);
        let _one_at_a_time = one_job_at_a_time();
        let out = finish(launcher.run_command(cmd, 2, &exe, test_timeout()));
        assert_ok_lines(&out, "stall report OK");
        let reports = out.stderr.matches("no communication progress").count();
        if reported {
            assert_eq!(reports, 1, "one report expected:\n{}", out.stderr);
            assert!(
                out.stderr.contains("rank 0") && out.stderr.contains("irecv(source=1, tag=31"),
                "the report does not name the pending receive:\n{}",
                out.stderr
            );
            // The main thread waits, not a finish.
            assert!(
                out.stderr
                    .contains("0 finish scope(s) waiting for their tasks"),
                "the report does not count waiting finishes:\n{}",
                out.stderr
            );
        } else {
            assert_eq!(reports, 0, "the report is off:\n{}", out.stderr);
        }
    }
}

/// `HCMPI_BIND=cores` puts each worker on a CPU of its own in its rank's
/// share; `none` leaves them where the process may run; either way the
/// starting thread has its CPUs back at the end; a bad value is an error.
#[test]
fn workers_bound_to_cores_run_on_cpus_of_their_own() {
    for (ranks, workers, binding) in [
        (2, "1", "cores"),
        (2, "1", "none"),
        (1, "1", "cores"),
        // One share of several CPUs: an unbound worker would inherit it.
        (1, "2", "cores"),
        (3, "1", "auto"),
    ] {
        let exe = example_path("binding");
        let launcher = shared_launcher();
        let mut cmd = launcher.command(ranks, &exe, &[] as &[&str]);
        cmd.env("HC_WORKERS", workers).env("HCMPI_BIND", binding);
        let _one_at_a_time = one_job_at_a_time();
        let out = finish(launcher.run_command(cmd, ranks, &exe, test_timeout()));
        assert_ok_lines(&out, "binding OK");
        if binding != "auto" {
            assert_ok_lines(&out, &format!("binding OK {binding}"));
        }
    }
    assert_bad_env_is_a_clear_error("binding", "HCMPI_BIND", "tightly");
}
