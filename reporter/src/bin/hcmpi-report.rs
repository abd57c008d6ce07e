//! `hcmpi-report`: runs the benchmark suite and writes the report page.
//!
//! `./scripts/report [--quick]` is the usual way in: it builds the release
//! binaries first and then calls `hcmpi-report run`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use apps::progress::Progress;
use clap::{Parser, Subcommand};
use report::machine::RunInfo;
use report::{collect, render, Dataset, Machine, ReportError, Suite};

/// The hcmpi benchmark report: tables and PNG charts in `OUT/index.md`.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    #[command(subcommand)]
    command: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Run the suite (overhead, threadbench, syncbench, uts-compare,
    /// sw-compare) into `OUT/data`, then write the page.
    Run {
        /// Fewer repetitions and smaller problems (a few minutes on 2 cores).
        #[arg(long)]
        quick: bool,
        /// The report directory.
        #[arg(long, default_value = "report")]
        out: PathBuf,
        /// The workspace root (its `apps/scripts/` holds the compare scripts).
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// The directory of the release binaries [default: ROOT/target/release].
        #[arg(long)]
        bin: Option<PathBuf>,
    },
    /// Write the page again from the data of an earlier run.
    Render {
        /// The report directory.
        #[arg(long, default_value = "report")]
        out: PathBuf,
        /// The data directory [default: OUT/data].
        #[arg(long)]
        data: Option<PathBuf>,
    },
}

fn run(
    quick: bool,
    out: PathBuf,
    root: PathBuf,
    bin: Option<PathBuf>,
) -> Result<bool, ReportError> {
    let suite = Suite {
        bin: bin.unwrap_or_else(|| root.join("target/release")),
        root,
        quick,
    };
    suite.check()?;
    let data = out.join("data");
    std::fs::create_dir_all(&data).map_err(|source| ReportError::Write {
        file: data.clone(),
        source,
    })?;
    let mut info = RunInfo {
        machine: Machine::current(),
        quick,
        failed: Vec::new(),
    };
    collect::write_run_info(&info, &data)?;
    let steps = suite.steps();
    let mut failed = Vec::new();
    let start = Instant::now();
    let progress = Progress::new("report", Some(steps.len() as u64), "steps");
    for (i, step) in steps.iter().enumerate() {
        progress.set_message(step.name);
        progress.println(format!(
            "[{}/{}] {} ({:.0} s so far)",
            i + 1,
            steps.len(),
            step.name,
            start.elapsed().as_secs_f64()
        ));
        if let Err(e) = collect::run_step(step, &data) {
            progress.println(format!("hcmpi-report: {}", chain(&e)));
            failed.push(step.name);
        }
        progress.inc(1);
    }
    progress.finish();
    if !failed.is_empty() {
        // Before drawing: a page that cannot be drawn must not hide which
        // benchmarks failed.
        eprintln!(
            "hcmpi-report: these steps failed (see their .log in {}): {}",
            data.display(),
            failed.join(", ")
        );
        info.failed = failed.iter().map(|name| name.to_string()).collect();
        collect::write_run_info(&info, &data)?;
    }
    let rendered = render(&Dataset::load(&data)?, &out)?;
    eprintln!(
        "wrote {} with {} charts in {:.0} s",
        rendered.page.display(),
        rendered.charts.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(failed.is_empty())
}

/// The error and its sources, one per line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!("\n  caused by: {cause}"));
        source = cause.source();
    }
    text
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Action::Run {
            quick,
            out,
            root,
            bin,
        } => run(quick, out, root, bin),
        Action::Render { out, data } => {
            let data = data.unwrap_or_else(|| out.join("data"));
            Dataset::load(&data)
                .and_then(|set| render(&set, &out))
                .map(|rendered| {
                    eprintln!(
                        "wrote {} with {} charts",
                        rendered.page.display(),
                        rendered.charts.len()
                    );
                    true
                })
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("hcmpi-report: {}", chain(&e));
            ExitCode::FAILURE
        }
    }
}
