//! Running the benchmark suite into a data directory.
//!
//! Each [`Step`] is one program of the suite with its arguments for a full
//! or a `--quick` report; its standard output becomes one data file (see
//! [`crate::rows`]) and its standard error a `.log` beside it. A step that
//! fails is reported and the others still run, so one broken benchmark
//! does not cost the rest of the report.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::ReportError;
use crate::machine::RunInfo;

/// Where the programs are.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The workspace root (`apps/scripts/` lives there).
    pub root: PathBuf,
    /// The directory of the release binaries (`target/release`).
    pub bin: PathBuf,
    /// Smaller problems and fewer repetitions.
    pub quick: bool,
}

/// One program of the suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Short name, also the stem of its log file.
    pub name: &'static str,
    /// Program and arguments.
    pub command: Vec<String>,
    /// The file its standard output goes to.
    pub stdout: &'static str,
    /// A file the program writes itself through the `ROWS` variable.
    pub rows: Option<&'static str>,
}

impl Suite {
    /// The steps of a report, in the order they run.
    ///
    /// ```
    /// let suite = report::Suite { root: "/src".into(), bin: "/src/target/release".into(), quick: true };
    /// let names: Vec<_> = suite.steps().iter().map(|s| s.name).collect();
    /// assert_eq!(names, ["overhead", "threadbench", "syncbench", "uts", "sw"]);
    /// ```
    pub fn steps(&self) -> Vec<Step> {
        let bin = |name: &str| self.bin.join(name).display().to_string();
        let script = |name: &str| {
            self.root
                .join("apps/scripts")
                .join(name)
                .display()
                .to_string()
        };
        let reps = |quick: &str, full: &str| if self.quick { quick } else { full }.to_owned();
        let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        let with = |mut head: Vec<String>, tail: &[&str]| {
            head.extend(args(tail));
            head
        };
        vec![
            Step {
                name: "overhead",
                command: with(
                    vec![bin("overhead"), "--reps".into(), reps("3", "7")],
                    &["--json"],
                ),
                stdout: "overhead.jsonl",
                rows: None,
            },
            Step {
                name: "threadbench",
                command: with(
                    vec![bin("threadbench"), "--reps".into(), reps("1", "5")],
                    &["--json"],
                ),
                stdout: "threadbench.jsonl",
                rows: None,
            },
            Step {
                name: "syncbench",
                command: with(
                    vec![bin("syncbench"), "--reps".into(), reps("1", "5")],
                    &["--json"],
                ),
                stdout: "syncbench.jsonl",
                rows: None,
            },
            Step {
                name: "uts",
                command: vec![script("uts-compare.sh"), "T1L".into(), reps("1", "5")],
                stdout: "uts.md",
                rows: Some("uts.jsonl"),
            },
            Step {
                name: "sw",
                command: vec![
                    script("sw-compare.sh"),
                    reps("20000", "30000"),
                    reps("1", "5"),
                ],
                stdout: "sw.md",
                rows: Some("sw.jsonl"),
            },
        ]
    }
}

/// Runs `step`, its output into `data`.
///
/// # Errors
/// The program cannot be started or exits with failure; the error holds
/// the end of its standard error.
pub fn run_step(step: &Step, data: &Path) -> Result<(), ReportError> {
    let program = step.command.join(" ");
    let out_file = data.join(step.stdout);
    let log_file = data.join(format!("{}.log", step.name));
    let create = |file: &Path| {
        File::create(file).map_err(|source| ReportError::Write {
            file: file.to_owned(),
            source,
        })
    };
    let mut command = Command::new(&step.command[0]);
    command
        .args(&step.command[1..])
        .stdin(Stdio::null())
        .stdout(create(&out_file)?)
        .stderr(create(&log_file)?);
    if let Some(rows) = step.rows {
        command.env("ROWS", data.join(rows));
    }
    if std::env::var_os("CORES").is_none() {
        // The compare scripts size their configurations to the machine.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        command.env("CORES", cores.to_string());
    }
    let status = command.status().map_err(|source| ReportError::Spawn {
        program: program.clone(),
        source,
    })?;
    if status.success() {
        return Ok(());
    }
    let log = std::fs::read_to_string(&log_file).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    Err(ReportError::Benchmark {
        program,
        status,
        stderr_tail: lines[lines.len().saturating_sub(12)..].join("\n"),
    })
}

/// Writes `run.json` into `data`.
///
/// # Errors
/// The file cannot be written.
pub fn write_run_info(run: &RunInfo, data: &Path) -> Result<(), ReportError> {
    let file = data.join("run.json");
    let text = serde_json::to_string_pretty(run).expect("strings and numbers serialize");
    std::fs::write(&file, text + "\n").map_err(|source| ReportError::Write { file, source })
}
