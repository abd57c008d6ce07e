//! What can go wrong while measuring, drawing or writing a report.

use std::path::PathBuf;

/// A report could not be made; each variant names the file or program.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// The data directory does not exist.
    #[error("no data directory {0} (run `hcmpi-report run` first)")]
    NoData(PathBuf),
    /// `hcmpi-report run` was pointed at a directory that is not the
    /// workspace.
    #[error("{0} is not the hcmpi workspace (no apps/scripts/uts-compare.sh): pass --root")]
    NotWorkspace(PathBuf),
    /// A benchmark binary is missing.
    #[error("{0} is missing: build with `cargo build --release -p hcmpi-benches -p hcmpi-apps`, or pass --bin")]
    NotBuilt(PathBuf),
    /// `HCMPI_REPORT_FONT` names a file that is not a readable TrueType font.
    #[error("HCMPI_REPORT_FONT={0} is not a readable TrueType font")]
    BadFont(PathBuf),
    /// A data file exists but cannot be read.
    #[error("cannot read {file}")]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A line of a data file is not the row it should be.
    #[error("{file}:{line}: not a row of this file")]
    Parse {
        /// The file.
        file: PathBuf,
        /// 1-based line number.
        line: usize,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// A file of the report cannot be written.
    #[error("cannot write {file}")]
    Write {
        /// The file.
        file: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// No TrueType font to draw the charts' text with.
    #[error(
        "no TrueType font for the charts: set HCMPI_REPORT_FONT to a .ttf file, or install \
         fonts-dejavu-core (looked at {looked})"
    )]
    NoFont {
        /// The paths tried, comma-separated.
        looked: String,
    },
    /// plotters failed to draw or encode a chart.
    #[error("cannot draw {file}")]
    Draw {
        /// The chart's file.
        file: PathBuf,
        /// plotters' error (generic over its drawing backend, so boxed).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A benchmark program could not be started.
    #[error("cannot start {program}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A benchmark program ran past its limit
    /// ([`crate::collect::STEP_LIMIT`]) and was killed.
    #[error("{program} ran longer than {} s and was stopped", limit.as_secs_f64())]
    TimedOut {
        /// The command line.
        program: String,
        /// The limit.
        limit: std::time::Duration,
    },
    /// A benchmark program failed.
    #[error("{program} failed ({status}); its stderr ends with:\n{stderr_tail}")]
    Benchmark {
        /// The command line.
        program: String,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// The last lines of its stderr.
        stderr_tail: String,
    },
}
