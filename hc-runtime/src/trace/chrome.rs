//! The Chrome trace event format (the JSON object form), as read by
//! Perfetto and `chrome://tracing`: writing one process's events and
//! merging the files of several processes into one timeline.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::buffer::Collected;
use super::{Kind, TraceError};

/// A trace file: events plus what merging needs to align processes.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ChromeTrace {
    /// Every event, metadata (thread and process names) included.
    pub trace_events: Vec<ChromeEvent>,
    /// Always `"ns"`: the viewer shows nanoseconds.
    #[serde(default)]
    pub display_time_unit: String,
    /// Clock and loss information.
    #[serde(default)]
    pub other_data: TraceMeta,
}

/// What a trace says about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TraceMeta {
    /// Wall-clock time (ns since the Unix epoch) of timestamp 0 of the
    /// earliest process in the file.
    pub epoch_unix_ns: u64,
    /// Events not recorded because a thread's buffer was full.
    pub dropped_events: u64,
    /// The processes (ranks) in the file.
    pub processes: Vec<u32>,
}

/// One event. `ts` and `dur` are in microseconds, as the format wants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ChromeEvent {
    /// The event's name.
    pub name: String,
    /// Its category (`task`, `sched`, `mpi`, …); empty for metadata.
    #[serde(default)]
    pub cat: String,
    /// The phase: `X` span, `i` instant, `b`/`e` async begin/end, `M`
    /// metadata.
    pub ph: String,
    /// Start, µs.
    #[serde(default)]
    pub ts: f64,
    /// Length of an `X` span, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dur: Option<f64>,
    /// Process: the rank.
    pub pid: u32,
    /// Thread.
    pub tid: u64,
    /// Id pairing `b` with `e`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Scope of an instant (`t`: thread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s: Option<String>,
    /// Named arguments.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, serde_json::Value>,
}

impl ChromeEvent {
    fn metadata(name: &str, pid: u32, tid: u64, value: serde_json::Value) -> ChromeEvent {
        ChromeEvent {
            name: name.to_owned(),
            cat: String::new(),
            ph: "M".to_owned(),
            ts: 0.0,
            dur: None,
            pid,
            tid,
            id: None,
            s: None,
            args: BTreeMap::from([("name".to_owned(), value)]),
        }
    }
}

fn micros(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// One process's events as a Chrome trace.
pub(crate) fn to_chrome(collected: Collected, pid: u32, process_name: &str) -> ChromeTrace {
    let mut events = vec![ChromeEvent::metadata(
        "process_name",
        pid,
        0,
        process_name.into(),
    )];
    let mut dropped = 0;
    for thread in collected.threads {
        dropped += thread.dropped;
        events.push(ChromeEvent::metadata(
            "thread_name",
            pid,
            thread.tid,
            thread.name.clone().into(),
        ));
        events.extend(thread.events.iter().map(|event| {
            let (ph, dur, id, s) = match event.kind {
                Kind::Span { dur } => ("X", Some(micros(dur)), None, None),
                Kind::Instant => ("i", None, None, Some("t".to_owned())),
                Kind::AsyncBegin { id } => ("b", None, Some(format!("{id:#x}")), None),
                Kind::AsyncEnd { id } => ("e", None, Some(format!("{id:#x}")), None),
            };
            ChromeEvent {
                name: event.name.to_owned(),
                cat: event.category.to_owned(),
                ph: ph.to_owned(),
                ts: micros(event.ts),
                dur,
                pid,
                tid: thread.tid,
                id,
                s,
                args: event
                    .args
                    .iter()
                    .map(|(name, value)| (name.to_owned(), value.into()))
                    .collect(),
            }
        }));
    }
    if dropped > 0 {
        eprintln!(
            "hc-runtime: trace of {process_name}: {dropped} event(s) dropped \
             (more than {} on one thread)",
            super::EVENTS_PER_THREAD
        );
    }
    ChromeTrace {
        trace_events: events,
        display_time_unit: "ns".to_owned(),
        other_data: TraceMeta {
            epoch_unix_ns: collected.unix_ns,
            dropped_events: dropped,
            processes: vec![pid],
        },
    }
}

impl ChromeTrace {
    /// Writes the trace to `path`, creating its directory.
    ///
    /// # Errors
    /// If the directory or file cannot be created or written.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("hc-trace-empty-{}.json", std::process::id()));
    /// hc_runtime::trace::ChromeTrace::default().write(&path)?;
    /// let back = hc_runtime::trace::ChromeTrace::read(&path)?;
    /// assert!(back.trace_events.is_empty());
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), hc_runtime::trace::TraceError>(())
    /// ```
    pub fn write(&self, path: &Path) -> Result<(), TraceError> {
        let io = |source| TraceError::Io {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| TraceError::Io {
                path: dir.to_owned(),
                source,
            })?;
        }
        let mut out = BufWriter::new(std::fs::File::create(path).map_err(io)?);
        serde_json::to_writer(&mut out, self).map_err(|e| io(e.into()))?;
        out.flush().map_err(io)
    }

    /// Reads a trace file.
    ///
    /// # Errors
    /// If the file cannot be read or is not a Chrome trace in the object
    /// form.
    pub fn read(path: &Path) -> Result<ChromeTrace, TraceError> {
        let file = std::fs::File::open(path).map_err(|source| TraceError::Io {
            path: path.to_owned(),
            source,
        })?;
        serde_json::from_reader(std::io::BufReader::new(file)).map_err(|source| {
            TraceError::Format {
                path: path.to_owned(),
                source,
            }
        })
    }

    /// Merges traces of different processes into one timeline: timestamps
    /// are shifted so that every process is on the clock of the earliest
    /// one (by the wall-clock start each recorded).
    ///
    /// ```
    /// use hc_runtime::trace::ChromeTrace;
    /// let merged = ChromeTrace::merge(vec![ChromeTrace::default(), ChromeTrace::default()])?;
    /// assert!(merged.trace_events.is_empty());
    /// # Ok::<(), hc_runtime::trace::TraceError>(())
    /// ```
    ///
    /// # Errors
    /// [`TraceError::NothingToMerge`] for an empty list.
    pub fn merge(traces: Vec<ChromeTrace>) -> Result<ChromeTrace, TraceError> {
        let epoch = traces
            .iter()
            .map(|trace| trace.other_data.epoch_unix_ns)
            .min()
            .ok_or(TraceError::NothingToMerge)?;
        let mut merged = ChromeTrace {
            trace_events: Vec::with_capacity(traces.iter().map(|t| t.trace_events.len()).sum()),
            display_time_unit: "ns".to_owned(),
            other_data: TraceMeta {
                epoch_unix_ns: epoch,
                ..TraceMeta::default()
            },
        };
        for trace in traces {
            let shift = micros(trace.other_data.epoch_unix_ns - epoch);
            merged.other_data.dropped_events += trace.other_data.dropped_events;
            merged
                .other_data
                .processes
                .extend(trace.other_data.processes);
            merged
                .trace_events
                .extend(trace.trace_events.into_iter().map(|mut event| {
                    if event.ph != "M" {
                        event.ts += shift;
                    }
                    event
                }));
        }
        merged.other_data.processes.sort_unstable();
        Ok(merged)
    }
}

/// Reads the trace files `inputs`, merges them ([`ChromeTrace::merge`]) and
/// writes the result to `output`.
///
/// # Errors
/// If a file cannot be read or written, or is not a trace.
pub fn merge_files(inputs: &[PathBuf], output: &Path) -> Result<ChromeTrace, TraceError> {
    let traces = inputs
        .iter()
        .map(|path| ChromeTrace::read(path))
        .collect::<Result<Vec<_>, _>>()?;
    let merged = ChromeTrace::merge(traces)?;
    merged.write(output)?;
    Ok(merged)
}
