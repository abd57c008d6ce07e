//! `hcmpi-trace`: tools for the timeline traces hcmpi writes
//! (`HCMPI_TRACE=<dir>`).
//!
//! `hcmpi-trace merge rank-0.json rank-1.json … -o trace.json` merges
//! per-rank traces into one timeline — what rank 0 does at the end of a
//! traced job when the ranks share a file system; run it by hand after
//! gathering the files when they do not. `hcmpi-trace check trace.json`
//! validates a trace: spans nest on every thread, every asynchronous span
//! that began ended, and it prints what the trace holds.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hc_mpi::ErrorChain;
use hc_runtime::trace::{check, merge_files, ChromeTrace, Summary};

#[derive(Debug, Parser)]
#[command(name = "hcmpi-trace", about = "Merge and check hcmpi timeline traces")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Merge per-rank trace files into one timeline.
    Merge {
        /// The per-rank files (`rank-N.json`), or directories holding them.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The merged file.
        #[arg(short, long, default_value = "trace.json")]
        output: PathBuf,
    },
    /// Check that a trace is well formed and summarize it.
    Check {
        /// The trace file.
        trace: PathBuf,
    },
}

/// The files named, directories expanded to their `rank-*.json` files.
fn expand(inputs: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut ranks: Vec<PathBuf> = std::fs::read_dir(input)?
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| {
                    path.file_name()
                        .and_then(|name| name.to_str())
                        .is_some_and(|name| name.starts_with("rank-") && name.ends_with(".json"))
                })
                .collect();
            ranks.sort();
            files.extend(ranks);
        } else {
            files.push(input.clone());
        }
    }
    Ok(files)
}

fn print_summary(out: &mut dyn Write, summary: &Summary) -> io::Result<()> {
    writeln!(
        out,
        "{} events, {} process(es), {} thread(s)",
        summary.events, summary.processes, summary.threads
    )?;
    let by_name: BTreeMap<_, _> = summary.by_name.iter().collect();
    for (name, count) in by_name {
        writeln!(out, "  {count:>10}  {name}")?;
    }
    Ok(())
}

/// Ends with success once `write` has printed or found its reader gone
/// (`apps::output`), or with the error that kept it from printing.
fn report(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> ExitCode {
    match apps::output::to_stdout(write) {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => apps::job::fail("hcmpi-trace", 1, &ErrorChain(&error)),
    }
}

fn main() -> ExitCode {
    let cli = match apps::job::parse_args::<Cli>() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match cli.command {
        Command::Merge { inputs, output } => {
            let files = match expand(&inputs) {
                Ok(files) => files,
                Err(error) => return apps::job::fail("hcmpi-trace", 2, &error),
            };
            match merge_files(&files, &output) {
                Ok(merged) => report(|out| {
                    writeln!(
                        out,
                        "merged {} file(s) into {} ({} events)",
                        files.len(),
                        output.display(),
                        merged.trace_events.len()
                    )
                }),
                Err(error) => apps::job::fail("hcmpi-trace", 1, &error),
            }
        }
        Command::Check { trace } => {
            let trace = match ChromeTrace::read(&trace) {
                Ok(trace) => trace,
                Err(error) => return apps::job::fail("hcmpi-trace", 1, &error),
            };
            match check(&trace) {
                Ok(summary) => report(|out| print_summary(out, &summary)),
                Err(error) => apps::job::fail("hcmpi-trace", 1, &error),
            }
        }
    }
}
