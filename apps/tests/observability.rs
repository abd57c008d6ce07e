//! Traced runs and `--stats` under `mpiexec`.
//!
//! A 2-rank UTS search with `HCMPI_TRACE` set must leave exactly one file,
//! `trace.json`, that holds both ranks as processes, whose spans nest on
//! every thread, whose every engine operation that began also ended, with
//! at least one engine operation per rank, one steal, and the driver's
//! chunk spans.

use std::path::{Path, PathBuf};

use apps::report::UtsReport;
use hc_runtime::trace::{check, ChromeTrace};
use hcmpi_testkit::{assert_refused, one_job_at_a_time, shared_launcher, test_timeout, RunOutput};

const UTS: &str = env!("CARGO_BIN_EXE_uts");

/// A fresh directory for one test's trace, removed when dropped.
struct TraceDir(PathBuf);

impl TraceDir {
    fn new(name: &str) -> TraceDir {
        let dir = std::env::temp_dir().join(format!("hcmpi-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TraceDir(dir)
    }
}

impl Drop for TraceDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn traced_uts(ranks: usize, dir: &Path, args: &[&str]) -> RunOutput {
    let _one_at_a_time = one_job_at_a_time();
    let launcher = shared_launcher();
    let mut cmd = launcher.command(ranks, Path::new(UTS), args);
    cmd.env("HC_WORKERS", "2").env("HCMPI_TRACE", dir);
    match launcher
        .run_command(cmd, ranks, Path::new(UTS), test_timeout())
        .and_then(RunOutput::success_or_err)
    {
        Ok(out) => out,
        Err(err) => panic!("uts {args:?} on {ranks} ranks: {err}"),
    }
}

#[test]
fn two_rank_trace_is_one_valid_timeline() {
    let dir = TraceDir::new("trace-uts");
    let out = traced_uts(2, &dir.0, &["--tree", "T1", "--mode", "hcmpi"]);
    assert!(
        out.stdout.contains("counts match"),
        "the traced search must still be right: {}",
        out.stdout
    );
    let files: Vec<String> = std::fs::read_dir(&dir.0)
        .expect("the trace directory exists")
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        files,
        ["trace.json"],
        "one merged file, per-rank files removed"
    );

    let trace = ChromeTrace::read(&dir.0.join("trace.json")).expect("a readable trace");
    assert_eq!(trace.other_data.processes, [0, 1]);
    let summary = check(&trace).unwrap_or_else(|e| panic!("malformed trace: {e}"));
    assert_eq!(summary.processes, 2, "{summary:?}");
    for rank in [0, 1] {
        assert!(
            summary.mpi_operations.get(&rank).is_some_and(|&n| n >= 1),
            "rank {rank} has no engine operation: {summary:?}"
        );
    }
    let count = |name: &str| summary.by_name.get(name).copied().unwrap_or(0);
    assert!(count("steal") >= 1, "no steal: {summary:?}");
    assert!(count("run") >= 1, "no run of tasks: {summary:?}");
    assert!(count("chunk") >= 1, "no driver span: {summary:?}");
    // Every worker, engine and main thread is named.
    let names = trace
        .trace_events
        .iter()
        .filter(|e| e.ph == "M" && e.name == "thread_name")
        .count();
    assert!(
        names >= summary.threads,
        "{names} thread names for {summary:?}"
    );
}

#[test]
fn an_empty_trace_variable_traces_nothing() {
    // Run in an empty directory: a trace written anywhere relative to the
    // working directory (an empty path taken as "here") would show there.
    let dir = TraceDir::new("trace-off");
    std::fs::create_dir_all(&dir.0).unwrap();
    let _one_at_a_time = one_job_at_a_time();
    let launcher = shared_launcher();
    let mut cmd = launcher.command(2, Path::new(UTS), &["--tree", "T1", "--mode", "hcmpi"]);
    cmd.env("HC_WORKERS", "2")
        .env("HCMPI_TRACE", "")
        .current_dir(&dir.0);
    launcher
        .run_command(cmd, 2, Path::new(UTS), test_timeout())
        .and_then(RunOutput::success_or_err)
        .unwrap_or_else(|e| panic!("uts: {e}"));
    let left: Vec<_> = std::fs::read_dir(&dir.0).unwrap().collect();
    assert!(left.is_empty(), "an untraced run wrote {left:?}");
}

#[test]
fn stats_report_what_the_rank_did() {
    let _one_at_a_time = one_job_at_a_time();
    let launcher = shared_launcher();
    let args = ["--tree", "T1", "--mode", "hcmpi", "--json", "--stats"];
    let mut cmd = launcher.command(2, Path::new(UTS), &args);
    cmd.env("HC_WORKERS", "2").env_remove("HCMPI_TRACE");
    let out = launcher
        .run_command(cmd, 2, Path::new(UTS), test_timeout())
        .and_then(RunOutput::success_or_err)
        .unwrap_or_else(|e| panic!("uts: {e}"));
    let report = UtsReport::from_json_line(out.stdout.trim()).expect("one JSON line");
    let metrics = report.metrics.expect("--stats adds the metrics");
    let workers = metrics["runtime"]["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 2, "{metrics}");
    let tasks: u64 = workers
        .iter()
        .map(|w| w["tasks_run"].as_u64().unwrap())
        .sum();
    assert!(tasks >= 1, "{metrics}");
    let operations = metrics["engine"]["operations"].as_array().unwrap();
    let kind = |name: &str| {
        operations
            .iter()
            .find(|op| op["kind"] == name)
            .unwrap_or_else(|| panic!("no {name} in {metrics}"))
    };
    // Two ranks talk: the token at least, and the final reductions.
    for name in ["isend", "ireduce"] {
        let op = kind(name);
        assert!(op["posted"].as_u64().unwrap() >= 1, "{op}");
        assert_eq!(op["posted"], op["completed"], "{op}");
    }
    assert!(metrics["engine"]["in_flight_max"].as_u64().unwrap() >= 1);
}

#[test]
fn stats_need_the_runtime() {
    let out = std::process::Command::new(UTS)
        .args(["--tree", "T1", "--stats"])
        .output()
        .unwrap();
    assert_refused(&out, 2, &["--stats", "--mode hcmpi"], "--stats alone");
}

#[test]
fn ranks_that_disagree_on_tracing_end_the_job() {
    // Rank 0 traces, rank 1 does not: the agreement at start-up must end
    // the job with its message, before any rank writes a trace or waits in
    // the collective merge at shutdown.
    let dir = TraceDir::new("trace-mismatch");
    let traced = format!("HCMPI_TRACE={}", dir.0.display());
    let search = ["--tree", "T1", "--mode", "hcmpi"];
    let with = |head: &[&str]| -> Vec<String> {
        head.iter()
            .chain(&[UTS])
            .chain(&search)
            .map(|a| a.to_string())
            .collect()
    };
    let (rank0, rank1) = (with(&[traced.as_str()]), with(&["-u", "HCMPI_TRACE"]));
    let (rank0, rank1): (Vec<&str>, Vec<&str>) = (
        rank0.iter().map(String::as_str).collect(),
        rank1.iter().map(String::as_str).collect(),
    );
    let env = Path::new("/usr/bin/env");
    let _one_at_a_time = one_job_at_a_time();
    let launcher = shared_launcher();
    let mut cmd = launcher.command_mpmd(env, &[(1, &rank0), (1, &rank1)]);
    cmd.env("HC_WORKERS", "2").env_remove("HCMPI_TRACE");
    let out = launcher
        .run_command(cmd, 2, Path::new(UTS), test_timeout())
        .unwrap_or_else(|e| panic!("uts: {e}"));
    out.expect_job_failure(
        None,
        "HCMPI_TRACE is set on some ranks and not on others",
        "counts match",
        "rank 0 traced, rank 1 not",
    );
    assert!(
        !dir.0.join("trace.json").exists(),
        "a job that refused to start wrote a trace"
    );
}
