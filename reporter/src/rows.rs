//! The measurements a report is drawn from: one JSON Lines file per
//! benchmark in the data directory, as the benchmarks write them.
//!
//! | file                | written by                        | row                 |
//! |---------------------|-----------------------------------|---------------------|
//! | `run.json`          | `hcmpi-report run`                | [`RunInfo`]         |
//! | `overhead.jsonl`    | `overhead --json`                 | [`MeasurementRow`]  |
//! | `threadbench.jsonl` | `threadbench --json`              | [`ThreadRow`]       |
//! | `syncbench.jsonl`   | `syncbench --json`                | [`SyncRow`]         |
//! | `uts.jsonl`         | `uts-compare.sh` with `ROWS=`     | [`Configured`] of [`UtsReport`] |
//! | `sw.jsonl`          | `sw-compare.sh` with `ROWS=`      | [`Configured`] of [`SwReport`]  |
//!
//! `uts.md` and `sw.md` hold the compare scripts' own tables and ratios.
//! A missing file is an empty data set (its charts are left out of the
//! page); a file that does not parse is an error that names it and the
//! line.

use std::path::{Path, PathBuf};

use apps::report::{SwReport, UtsReport};
use benches::report::{null_as_nan, MeasurementRow};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::ReportError;
use crate::machine::RunInfo;

/// A `threadbench --json` row, the fields the report uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadRow {
    /// `bandwidth`, `msgrate`, `latency`, `get` or `idle`.
    pub bench: String,
    /// `hcmpi`, `hcmpi-dedicated`, `hcmpi-shared`, `mpi-multiple`, `mpi-single`.
    pub variant: String,
    /// Threads per rank.
    pub threads: usize,
    /// Message size.
    pub bytes: usize,
    /// The median (NaN when the run failed).
    #[serde(deserialize_with = "null_as_nan")]
    pub value: f64,
    /// Unit of `value`.
    pub unit: String,
}

/// A `syncbench --json` row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncRow {
    /// `barrier` or `reduction`.
    pub bench: String,
    /// e.g. `hcmpi-strict`, `hybrid`, `mpi-everywhere`.
    pub variant: String,
    /// Ranks of the job.
    pub ranks: usize,
    /// Tasks (threads) per rank.
    pub tasks: usize,
    /// Microseconds per synchronization (NaN when the run failed).
    #[serde(deserialize_with = "null_as_nan")]
    pub value: f64,
}

/// A compare script's median run of one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Configured<T> {
    /// The configuration's name in the script's table, e.g. `hcmpi 2x1`.
    pub configuration: String,
    /// The program's own `--json` line.
    pub report: T,
}

/// Everything one report shows.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    /// Where and how the numbers were taken (`None`: unknown).
    pub run: Option<RunInfo>,
    /// `overhead` rows.
    pub overhead: Vec<MeasurementRow>,
    /// `threadbench` rows.
    pub threadbench: Vec<ThreadRow>,
    /// `syncbench` rows.
    pub syncbench: Vec<SyncRow>,
    /// `uts-compare.sh` medians.
    pub uts: Vec<Configured<UtsReport>>,
    /// `uts-compare.sh`'s table and ratios (markdown).
    pub uts_table: Option<String>,
    /// `sw-compare.sh` medians, parasail included when it ran.
    pub sw: Vec<Configured<SwReport>>,
    /// `sw-compare.sh`'s table and ratios (markdown).
    pub sw_table: Option<String>,
}

impl Dataset {
    /// Reads the data directory `dir` (see the module docs).
    ///
    /// # Errors
    /// A file exists but cannot be read or a line of it does not parse.
    pub fn load(dir: &Path) -> Result<Dataset, ReportError> {
        if !dir.is_dir() {
            return Err(ReportError::NoData(dir.to_owned()));
        }
        let run_file = dir.join("run.json");
        let run = match read_optional(&run_file)? {
            Some(text) => {
                Some(
                    serde_json::from_str(&text).map_err(|source| ReportError::Parse {
                        file: run_file,
                        line: source.line(),
                        source,
                    })?,
                )
            }
            None => None,
        };
        Ok(Dataset {
            run,
            overhead: json_lines(&dir.join("overhead.jsonl"))?,
            threadbench: json_lines(&dir.join("threadbench.jsonl"))?,
            syncbench: json_lines(&dir.join("syncbench.jsonl"))?,
            uts: json_lines(&dir.join("uts.jsonl"))?,
            uts_table: read_optional(&dir.join("uts.md"))?,
            sw: json_lines(&dir.join("sw.jsonl"))?,
            sw_table: read_optional(&dir.join("sw.md"))?,
        })
    }
}

fn read_optional(file: &Path) -> Result<Option<String>, ReportError> {
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ReportError::Read {
            file: file.to_owned(),
            source,
        }),
    }
}

/// The rows of a JSON Lines file; blank lines are skipped.
fn json_lines<T: DeserializeOwned>(file: &Path) -> Result<Vec<T>, ReportError> {
    let Some(text) = read_optional(file)? else {
        return Ok(Vec::new());
    };
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|source| ReportError::Parse {
                file: PathBuf::from(file),
                line: i + 1,
                source,
            })
        })
        .collect()
}
