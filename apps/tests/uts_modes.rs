//! The parallel UTS searches under `mpiexec`: every mode must find the same
//! tree as the sequential search, at every rank count.
//!
//! Each run starts the `uts` binary through [`hcmpi_testkit`] (MPICH or
//! Open MPI, oversubscription allowed, killed with all its ranks if it
//! outlives [`hcmpi_testkit::test_timeout`]) with 2 threads per rank
//! (`HC_WORKERS=2`, `RAYON_NUM_THREADS=2`) and `--json`, and checks the one
//! line rank 0 prints. Jobs run one at a time: 4 ranks × 3 threads already
//! oversubscribe a 2-core machine.

use std::path::Path;
use std::process::Command;

use apps::report::UtsReport;
use hcmpi_testkit::{assert_refused, one_job_at_a_time, shared_launcher, test_timeout, RunOutput};

const UTS: &str = env!("CARGO_BIN_EXE_uts");
const MODES: [&str; 3] = ["hcmpi", "mpi-ws", "hybrid"];

/// Runs `uts args...` on `ranks` ranks, with `env` beside the worker
/// counts, and returns its output.
fn mpirun_with(ranks: usize, args: &[&str], env: &[(&str, &str)]) -> RunOutput {
    let _one_at_a_time = one_job_at_a_time();
    let launcher = shared_launcher();
    let mut cmd = launcher.command(ranks, Path::new(UTS), args);
    cmd.env("HC_WORKERS", "2").env("RAYON_NUM_THREADS", "2");
    cmd.envs(env.iter().copied());
    match launcher
        .run_command(cmd, ranks, Path::new(UTS), test_timeout())
        .and_then(RunOutput::success_or_err)
    {
        Ok(out) => out,
        Err(err) => panic!("uts {args:?} on {ranks} ranks: {err}"),
    }
}

/// One JSON report and the line it was read from.
#[derive(Debug)]
struct Report {
    line: String,
    json: UtsReport,
}

impl Report {
    fn parse(line: &str) -> Report {
        let json =
            UtsReport::from_json_line(line).unwrap_or_else(|e| panic!("bad report {line:?}: {e}"));
        Report {
            line: line.to_owned(),
            json,
        }
    }

    fn counts(&self) -> (u64, u64, u64) {
        (self.json.nodes, self.json.leaves, self.json.max_depth)
    }
}

/// Runs a JSON search and checks the output: exactly one line (rank 0
/// only), the expected mode and rank count, a sane time breakdown, and no
/// complaint from hc-mpi about operations left pending.
fn search(mode: &str, ranks: usize, args: &[&str]) -> Report {
    search_with(mode, ranks, args, &[])
}

/// [`search`] with more environment variables.
fn search_with(mode: &str, ranks: usize, args: &[&str], env: &[(&str, &str)]) -> Report {
    let mut all = vec!["--mode", mode, "--json"];
    all.extend_from_slice(args);
    let out = mpirun_with(ranks, &all, env);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{mode} x{ranks} {args:?}: stdout {:?}",
        out.stdout
    );
    assert!(
        !out.stderr.contains("pending") && !out.stderr.contains("error"),
        "{mode} x{ranks} {args:?}: stderr {}",
        out.stderr
    );
    let report = Report::parse(lines[0]);
    assert_eq!(report.json.mode, mode, "{}", report.line);
    assert_eq!(report.json.ranks, ranks as u32, "{}", report.line);
    let workers = if mode == "mpi-ws" { 1 } else { 2 };
    assert_eq!(report.json.workers, workers, "{}", report.line);
    let seconds = report.json.seconds;
    let times = &report.json.stats;
    let phases = [times.work, times.overhead, times.search, times.idle];
    assert!(phases.iter().all(|&t| t >= 0.0), "{}", report.line);
    if report.json.nodes > 100_000 {
        assert!(phases[0] > 0.0, "no work time: {}", report.line);
    }
    let total: f64 = phases.iter().sum();
    // each worker's phases cover its share of the search, which rank 0 times
    assert!(
        total <= seconds * 1.5 + 0.1 && total >= seconds * 0.5 - 0.1,
        "phases {phases:?} do not add up to about {seconds} s: {}",
        report.line
    );
    report
}

/// The sequential search's report of a custom tree.
fn seq_report(args: &[&str]) -> Report {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = Command::new(UTS).args(&all).output().expect("run uts");
    assert!(out.status.success(), "uts {all:?}: {out:?}");
    Report::parse(String::from_utf8(out.stdout).unwrap().trim())
}

/// The sequential counts of a custom tree.
fn seq_counts(args: &[&str]) -> (u64, u64, u64) {
    seq_report(args).counts()
}

const T1: (u64, u64, u64) = (4_130_071, 3_305_118, 10);
const T3: (u64, u64, u64) = (4_112_897, 3_599_034, 1572);

fn t1_at_1_to_4_ranks(mode: &str) {
    for ranks in 1..=4 {
        let r = search(mode, ranks, &["--tree", "T1"]);
        assert_eq!(r.counts(), T1, "{mode} x{ranks}: {}", r.line);
    }
}

#[test]
fn hcmpi_t1_at_1_to_4_ranks() {
    t1_at_1_to_4_ranks("hcmpi");
}

#[test]
fn mpi_ws_t1_at_1_to_4_ranks() {
    t1_at_1_to_4_ranks("mpi-ws");
}

#[test]
fn hybrid_t1_at_1_to_4_ranks() {
    t1_at_1_to_4_ranks("hybrid");
}

/// Every mode with its threads bound to CPUs as hcmpi binds its workers
/// (`HCMPI_BIND=cores`: hcmpi's workers, the baselines' rayon threads or
/// plain ranks, each rank on its share of the node, where `auto` would
/// leave a node with fewer CPUs than the ranks' threads unbound) finds the
/// same tree, and says it was bound; unbound (`none`), it says so.
#[test]
fn bound_threads_find_t1_in_every_mode() {
    let tree = ["-t", "1", "-a", "2", "-d", "6", "-b", "4", "-r", "7"];
    let seq = seq_report(&tree);
    assert_eq!(seq.json.bound, None, "seq binds nothing: {}", seq.line);
    for mode in MODES {
        let r = search_with(mode, 2, &["--tree", "T1"], &[("HCMPI_BIND", "cores")]);
        assert_eq!(r.counts(), T1, "{mode}: {}", r.line);
        assert_eq!(r.json.bound, Some(true), "{mode}: {}", r.line);
        let r = search_with(mode, 2, &tree, &[("HCMPI_BIND", "none")]);
        assert_eq!(r.counts(), seq.counts(), "{mode}: {}", r.line);
        assert_eq!(r.json.bound, Some(false), "{mode}: {}", r.line);
    }
}

/// T3: binomial, 1572 levels deep, root with 2000 children.
#[test]
fn binomial_t3_at_2_ranks() {
    for mode in MODES {
        let r = search(mode, 2, &["--tree", "T3"]);
        assert_eq!(r.counts(), T3, "{mode}: {}", r.line);
    }
}

/// Small custom trees of every type, with tiny chunks and polling
/// intervals that stress the steal and termination protocols.
#[test]
fn custom_trees_match_seq_at_3_ranks() {
    let trees: [&[&str]; 5] = [
        &["-t", "1", "-a", "2", "-d", "6", "-b", "4", "-r", "7"],
        &["-t", "0", "-b", "200", "-q", "0.2", "-m", "4", "-r", "3"],
        &[
            "-t", "2", "-a", "0", "-d", "8", "-b", "4", "-q", "0.2", "-m", "4", "-r", "5",
        ],
        &["-t", "3", "-d", "6", "-b", "4", "-r", "2"],
        &[
            "-t", "1", "-a", "1", "-d", "8", "-b", "3", "-r", "11", "-g", "2",
        ],
    ];
    for tree in trees {
        let want = seq_counts(tree);
        for mode in MODES {
            for extra in [
                &[][..],
                &["-c", "1", "-i", "1"][..],
                &["-c", "3", "-i", "2"][..],
            ] {
                let mut args = tree.to_vec();
                args.extend_from_slice(extra);
                let r = search(mode, 3, &args);
                assert_eq!(r.counts(), want, "{mode} {args:?}: {}", r.line);
            }
        }
    }
}

/// A tree smaller than one chunk, and a lone leaf: termination with (almost)
/// nothing to steal.
#[test]
fn tiny_trees() {
    for mode in MODES {
        let r = search(
            mode,
            4,
            &["-t", "1", "-a", "3", "-d", "2", "-b", "2", "-r", "1"],
        );
        assert_eq!(
            r.counts(),
            seq_counts(&["-t", "1", "-a", "3", "-d", "2", "-b", "2", "-r", "1"])
        );
        let r = search(mode, 2, &["-b", "0"]);
        assert_eq!(r.counts(), (1, 1, 0), "{mode}: {}", r.line);
    }
}

/// The human-readable summary is printed once, by rank 0, and says
/// whether the threads were bound.
#[test]
fn summary_is_printed_once() {
    for mode in MODES {
        let args = ["--mode", mode, "--tree", "T1"];
        let out = mpirun_with(3, &args, &[("HCMPI_BIND", "none")]);
        let text = &out.stdout;
        assert_eq!(
            text.matches("Tree size = 4130071").count(),
            1,
            "{mode}: {text}"
        );
        assert_eq!(
            text.matches("UTS - Unbalanced Tree Search").count(),
            1,
            "{mode}: {text}"
        );
        assert!(
            text.contains("Avg time per worker: Work = "),
            "{mode}: {text}"
        );
        assert!(
            text.contains("counts match the published statistics"),
            "{mode}: {text}"
        );
        assert!(text.contains("chunk size = 20 nodes"), "{mode}: {text}");
        assert!(
            text.contains("Threads not bound to CPUs (HCMPI_BIND)"),
            "{mode}: {text}"
        );
    }
}

fn assert_bad(args: &[&str], needle: &str) {
    let out = Command::new(UTS).args(args).output().expect("run uts");
    assert_refused(&out, 2, &[needle], &format!("{args:?}"));
}

/// Bad parallel parameters are rejected before MPI starts.
#[test]
fn bad_parallel_parameters() {
    for mode in MODES {
        assert_bad(&["--mode", mode, "-c", "0"], "-c (chunk size)");
        assert_bad(&["--mode", mode, "-c", "-5"], "-c");
        assert_bad(&["--mode", mode, "-i", "-1"], "-i (polling interval)");
        assert_bad(&["--mode", mode, "--workers", "0"], "--workers");
        assert_bad(&["--mode", mode, "-c", "abc"], "invalid value");
    }
    // Modes with one thread per rank refuse a thread count they would ignore.
    for mode in ["seq", "mpi-ws"] {
        assert_bad(&["--mode", mode, "--workers", "2"], "--mode seq or mpi-ws");
    }
}

/// Ranks started with different trees (an MPMD launch) would each count a
/// mix of nodes from both: the rank that differs from rank 0 ends the
/// whole job with status 2 and a message naming what differs, in every
/// parallel mode.
#[test]
fn ranks_given_different_trees_end_the_job() {
    let launcher = shared_launcher();
    let cases: [(&[&str], &str); 2] = [
        (&["--tree", "T3"], "other tree parameters than rank 0"),
        (
            &["--tree", "T1", "-c", "4"],
            "other work-stealing options than rank 0",
        ),
    ];
    for mode in ["hcmpi", "mpi-ws", "hybrid"] {
        for (ranks, (other, message)) in (2..=4).zip(cases.iter().cycle()) {
            let good = ["--tree", "T1", "--mode", mode, "--json"];
            let mut bad = vec!["--mode", mode, "--json"];
            bad.extend_from_slice(other);
            let mut cmd = launcher.command_mpmd(Path::new(UTS), &[(ranks - 1, &good), (1, &bad)]);
            cmd.env("HC_WORKERS", "2").env("RAYON_NUM_THREADS", "2");
            let _one_at_a_time = one_job_at_a_time();
            let context = format!("{mode}, {ranks} ranks, last {other:?}");
            let out = launcher
                .run_command(cmd, ranks, Path::new(UTS), test_timeout())
                .unwrap_or_else(|err| panic!("{context}: {err}"));
            let message = format!("rank {} was given {message}", ranks - 1);
            out.expect_job_failure(Some(2), &message, "\"nodes\"", &context);
        }
    }
}

/// A job in which one rank rejects its parameters ends with that rank's
/// message and status 2, instead of leaving the others waiting for it (in
/// MPI start-up or in the search).
#[test]
fn one_rank_rejecting_its_parameters_ends_the_job() {
    let launcher = shared_launcher();
    for ranks in 2..=4 {
        for (bad, message) in [
            (&["-t", "9", "--mode", "hcmpi"][..], "unknown tree type '9'"),
            (&["--tree", "T1L", "--mode", "hcmpi", "--bogus"], "--bogus"),
        ] {
            let good = ["--tree", "T1L", "--mode", "hcmpi", "--json"];
            let mut cmd = launcher.command_mpmd(Path::new(UTS), &[(ranks - 1, &good), (1, bad)]);
            cmd.env("HC_WORKERS", "2");
            let _one_at_a_time = one_job_at_a_time();
            let out = launcher
                .run_command(cmd, ranks, Path::new(UTS), test_timeout())
                .unwrap_or_else(|err| panic!("{ranks} ranks, last {bad:?}: {err}"));
            out.expect_job_failure(
                Some(2),
                message,
                "\"nodes\"",
                &format!("{ranks} ranks, last {bad:?}"),
            );
        }
    }
}
