//! Running the benchmark suite into a data directory.
//!
//! Each [`Step`] is one program of the suite with its arguments for a full
//! or a `--quick` report; its standard output becomes one data file (see
//! [`crate::rows`]) and its standard error a `.log` beside it. A step that
//! fails is reported and the others still run, so one broken benchmark
//! does not cost the rest of the report. A step's data files are removed
//! before it runs and again when it fails: its figure then leaves the page
//! rather than show numbers of an earlier run under this run's date.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::error::ReportError;
use crate::machine::RunInfo;

/// The longest a step may run: ten times the slowest step of a full run on
/// 2 cores. A hung benchmark (a rank waiting forever) then ends the step,
/// not the report.
pub const STEP_LIMIT: Duration = Duration::from_secs(30 * 60);

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
    /// Environment the program needs beyond ours (the binaries a compare
    /// script runs).
    pub env: Vec<(&'static str, String)>,
    /// The longest it may run ([`STEP_LIMIT`] in a report).
    pub limit: Duration,
}

impl Suite {
    /// Checks that `root` is the workspace, whose compare scripts the
    /// steps run, and that the binaries are built.
    ///
    /// # Errors
    /// [`ReportError::NotWorkspace`] or [`ReportError::NotBuilt`].
    pub fn check(&self) -> Result<(), ReportError> {
        if !self.root.join("apps/scripts/uts-compare.sh").is_file() {
            return Err(ReportError::NotWorkspace(self.root.clone()));
        }
        for program in [
            "overhead",
            "threadbench",
            "syncbench",
            "uts",
            "smith-waterman",
        ] {
            if !self.bin.join(program).is_file() {
                return Err(ReportError::NotBuilt(self.bin.join(program)));
            }
        }
        Ok(())
    }

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
                env: Vec::new(),
                limit: STEP_LIMIT,
            },
            Step {
                name: "threadbench",
                command: with(
                    vec![bin("threadbench"), "--reps".into(), reps("1", "5")],
                    &["--json"],
                ),
                stdout: "threadbench.jsonl",
                rows: None,
                env: Vec::new(),
                limit: STEP_LIMIT,
            },
            Step {
                name: "syncbench",
                command: with(
                    vec![bin("syncbench"), "--reps".into(), reps("1", "5")],
                    &["--json"],
                ),
                stdout: "syncbench.jsonl",
                rows: None,
                env: Vec::new(),
                limit: STEP_LIMIT,
            },
            Step {
                name: "uts",
                command: vec![script("uts-compare.sh"), "T1L".into(), reps("1", "5")],
                stdout: "uts.md",
                rows: Some("uts.jsonl"),
                env: vec![("UTS_BIN", bin("uts"))],
                limit: STEP_LIMIT,
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
                env: vec![("SW_BIN", bin("smith-waterman"))],
                limit: STEP_LIMIT,
            },
        ]
    }
}

/// Runs `step`, its output into `data`.
///
/// # Errors
/// The program cannot be started or exits with failure; the error holds
/// the end of its standard error. Either way the step's data files are
/// gone (its log stays).
pub fn run_step(step: &Step, data: &Path) -> Result<(), ReportError> {
    let outputs: Vec<PathBuf> = std::iter::once(step.stdout)
        .chain(step.rows)
        .map(|file| data.join(file))
        .collect();
    remove_all(&outputs)?;
    let result = spawn_and_wait(step, data);
    if result.is_err() {
        remove_all(&outputs)?;
    }
    result
}

fn remove_all(files: &[PathBuf]) -> Result<(), ReportError> {
    for file in files {
        match std::fs::remove_file(file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(ReportError::Write {
                    file: file.clone(),
                    source: e,
                })
            }
            _ => {}
        }
    }
    Ok(())
}

fn spawn_and_wait(step: &Step, data: &Path) -> Result<(), ReportError> {
    let program = step.command.join(" ");
    let log_file = data.join(format!("{}.log", step.name));
    let create = |file: &Path| {
        File::create(file).map_err(|source| ReportError::Write {
            file: file.to_owned(),
            source,
        })
    };
    // coreutils `timeout` signals its whole process group, so the ranks
    // that mpiexec started under a compare script end with it.
    let mut command = Command::new("timeout");
    command
        .arg("--kill-after=10")
        .arg(format!("{}s", step.limit.as_secs_f64()))
        .args(&step.command)
        .stdin(Stdio::null())
        .stdout(create(&data.join(step.stdout))?)
        .stderr(create(&log_file)?)
        .envs(step.env.iter().map(|(k, v)| (k, v)));
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
    // 124: `timeout` sent SIGTERM; 137: it had to send SIGKILL.
    if matches!(status.code(), Some(124 | 137)) {
        return Err(ReportError::TimedOut {
            program,
            limit: step.limit,
        });
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
