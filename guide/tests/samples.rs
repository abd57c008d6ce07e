//! The guide's samples: every chapter only includes tested code, and every
//! program under `guide/examples/` runs as its `// sample-run:` lines say
//! (without a launcher for `ranks=0`, else under `mpiexec` at each rank
//! count). Each sample checks its own results and exits non-zero on a
//! mismatch; runs are serialized and bounded by
//! [`hcmpi_testkit::test_timeout`].

use std::path::Path;
use std::process::Command;

use hcmpi_guide::{anchored, check_book, sample_runs};
use hcmpi_testkit::{example_path, one_job_at_a_time, shared_launcher, test_timeout, RunOutput};

fn guide_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_rust_block_of_the_guide_includes_a_tested_sample() {
    match check_book(guide_root()) {
        Ok(book) => assert!(book.rust_blocks > 0, "the guide shows no Rust at all"),
        Err(problems) => panic!(
            "{} problem(s) in the guide:\n{}",
            problems.len(),
            problems
                .iter()
                .map(|p| format!("  {p}\n"))
                .collect::<String>()
        ),
    }
}

/// Runs `exe` as `ranks` ranks (`0`: directly, as an MPI singleton).
fn run_sample(exe: &Path, ranks: usize, env: &[(String, String)], args: &[String]) -> RunOutput {
    let launcher = shared_launcher();
    let mut cmd = if ranks == 0 {
        let mut cmd = Command::new(exe);
        cmd.args(args);
        cmd
    } else {
        launcher.command(ranks, exe, args)
    };
    // Small enough for an oversubscribed 2-core machine; samples that need
    // another count say so with HC_WORKERS= in their sample-run line.
    cmd.env("HC_WORKERS", "2");
    for (key, value) in env {
        cmd.env(key, value);
    }
    let _one_at_a_time = one_job_at_a_time();
    match launcher
        .run_command(cmd, ranks.max(1), exe, test_timeout())
        .and_then(RunOutput::success_or_err)
    {
        Ok(out) => out,
        Err(err) => panic!("sample {} at {ranks} rank(s): {err}", exe.display()),
    }
}

#[test]
fn every_sample_runs_and_checks_its_results() {
    let mut samples: Vec<_> = std::fs::read_dir(guide_root().join("examples"))
        .expect("guide/examples")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    samples.sort();
    assert!(!samples.is_empty(), "no samples under guide/examples");
    for sample in samples {
        let source = std::fs::read_to_string(&sample).expect("sample source");
        let runs = sample_runs(&source).unwrap_or_else(|e| panic!("{}: {e}", sample.display()));
        let name = sample
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("UTF-8 name");
        let exe = example_path(name);
        for run in runs {
            for &ranks in &run.ranks {
                run_sample(&exe, ranks, &run.env, &run.args);
            }
        }
    }
}

#[test]
fn the_readme_example_is_the_first_sample_of_the_guide() {
    let readme = std::fs::read_to_string(guide_root().join("../README.md")).expect("README.md");
    let hello = std::fs::read_to_string(guide_root().join("examples/hello.rs")).expect("hello.rs");
    let sample = anchored(&hello, "all").expect("hello.rs has an `all` anchor");
    assert!(
        readme.contains(&format!("```rust\n{sample}```")),
        "the README's example is not guide/examples/hello.rs (anchor `all`) verbatim:\n{sample}"
    );
}

#[test]
fn the_job_scripts_of_the_cluster_chapter_parse() {
    let mut scripts: Vec<_> = std::fs::read_dir(guide_root().join("scripts"))
        .expect("guide/scripts")
        .map(|e| e.expect("directory entry").path())
        .collect();
    scripts.sort();
    assert!(!scripts.is_empty(), "no job scripts under guide/scripts");
    for script in scripts {
        let status = Command::new("bash")
            .arg("-n")
            .arg(&script)
            .status()
            .expect("bash runs");
        assert!(
            status.success(),
            "{} does not parse: bash -n failed",
            script.display()
        );
    }
}
