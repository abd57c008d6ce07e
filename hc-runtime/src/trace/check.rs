//! Checks a timeline trace: spans nest on every thread, and every
//! asynchronous span that began also ended (`hcmpi-trace check`, and the
//! tests of traced runs).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{ChromeEvent, ChromeTrace};

/// Slack for comparing timestamps: they are microseconds with nanosecond
/// digits, so sums of them may differ in the last bits.
const SLACK_US: f64 = 1e-3;

/// What a well-formed trace holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Summary {
    /// Events, metadata excluded.
    pub events: usize,
    /// Processes (ranks) with events.
    pub processes: usize,
    /// Threads with events.
    pub threads: usize,
    /// Events by name.
    pub by_name: HashMap<String, usize>,
    /// Asynchronous spans (`b`) of category `mpi`, by process.
    pub mpi_operations: BTreeMap<u32, usize>,
}

/// Why a trace is not well formed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceCheckError {
    /// Two spans of one thread overlap without one containing the other.
    #[error(
        "process {pid}, thread {tid}: span {inner:?} at {inner_start} µs overlaps \
         span {outer:?} ending at {outer_end} µs without nesting in it"
    )]
    Overlap {
        /// The process.
        pid: u32,
        /// The thread.
        tid: u64,
        /// The enclosing span.
        outer: String,
        /// Where it ends.
        outer_end: f64,
        /// The span that sticks out of it.
        inner: String,
        /// Where that one starts.
        inner_start: f64,
    },
    /// A span has a negative or missing length.
    #[error("process {pid}, thread {tid}: span {name:?} has no valid length")]
    BadSpan {
        /// The process.
        pid: u32,
        /// The thread.
        tid: u64,
        /// The span.
        name: String,
    },
    /// An asynchronous span began and did not end, or ended without
    /// beginning.
    #[error("process {pid}: asynchronous span {name:?} (id {id}) has {begins} begin(s) and {ends} end(s)")]
    UnmatchedAsync {
        /// The process.
        pid: u32,
        /// The span's name.
        name: String,
        /// Its id.
        id: String,
        /// How many times it began.
        begins: usize,
        /// How many times it ended.
        ends: usize,
    },
}

/// Checks `trace` and summarizes it.
///
/// ```
/// let mut trace = hc_runtime::trace::ChromeTrace::default();
/// trace.trace_events.push(serde_json::from_str(
///     r#"{"name":"task","cat":"task","ph":"X","ts":1.0,"dur":2.0,"pid":0,"tid":1}"#,
/// )?);
/// let summary = hc_runtime::trace::check(&trace)?;
/// assert_eq!(summary.by_name["task"], 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// The first problem found (see [`TraceCheckError`]).
pub fn check(trace: &ChromeTrace) -> Result<Summary, TraceCheckError> {
    let mut summary = Summary::default();
    let mut spans: BTreeMap<(u32, u64), Vec<&ChromeEvent>> = BTreeMap::new();
    type AsyncKey<'a> = (u32, &'a str, &'a str, &'a str);
    let mut asyncs: BTreeMap<AsyncKey<'_>, (usize, usize)> = BTreeMap::new();
    let mut processes = BTreeSet::new();
    let mut threads = BTreeSet::new();
    for event in &trace.trace_events {
        if event.ph == "M" {
            continue;
        }
        summary.events += 1;
        processes.insert(event.pid);
        threads.insert((event.pid, event.tid));
        *summary.by_name.entry(event.name.clone()).or_default() += 1;
        match event.ph.as_str() {
            "X" => spans.entry((event.pid, event.tid)).or_default().push(event),
            "b" | "e" => {
                let id = event.id.as_deref().unwrap_or("");
                let counts = asyncs
                    .entry((event.pid, &event.cat, &event.name, id))
                    .or_default();
                if event.ph == "b" {
                    counts.0 += 1;
                    if event.cat == "mpi" {
                        *summary.mpi_operations.entry(event.pid).or_default() += 1;
                    }
                } else {
                    counts.1 += 1;
                }
            }
            _ => {}
        }
    }
    summary.processes = processes.len();
    summary.threads = threads.len();
    for ((pid, tid), mut events) in spans {
        check_nesting(pid, tid, &mut events)?;
    }
    for ((pid, _, name, id), (begins, ends)) in asyncs {
        if begins != ends {
            return Err(TraceCheckError::UnmatchedAsync {
                pid,
                name: name.to_owned(),
                id: id.to_owned(),
                begins,
                ends,
            });
        }
    }
    Ok(summary)
}

/// Spans of one thread, checked with a stack: each must end before the
/// one it starts in ends.
fn check_nesting(pid: u32, tid: u64, events: &mut [&ChromeEvent]) -> Result<(), TraceCheckError> {
    for event in events.iter() {
        if !event.dur.is_some_and(|d| d >= 0.0) {
            return Err(TraceCheckError::BadSpan {
                pid,
                tid,
                name: event.name.clone(),
            });
        }
    }
    let end = |e: &ChromeEvent| e.ts + e.dur.unwrap_or(0.0);
    // Outer spans first: by start, then the longer one.
    events.sort_by(|a, b| a.ts.total_cmp(&b.ts).then(end(b).total_cmp(&end(a))));
    let mut open: Vec<&ChromeEvent> = Vec::new();
    for &event in events.iter() {
        while let Some(&top) = open.last() {
            if end(top) <= event.ts + SLACK_US {
                open.pop();
            } else {
                break;
            }
        }
        if let Some(&top) = open.last() {
            if end(event) > end(top) + SLACK_US {
                return Err(TraceCheckError::Overlap {
                    pid,
                    tid,
                    outer: top.name.clone(),
                    outer_end: end(top),
                    inner: event.name.clone(),
                    inner_start: event.ts,
                });
            }
        }
        open.push(event);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(name: &str, tid: u64, ts: f64, dur: f64) -> ChromeEvent {
        serde_json::from_value(serde_json::json!({
            "name": name, "cat": "t", "ph": "X", "ts": ts, "dur": dur, "pid": 0, "tid": tid
        }))
        .unwrap()
    }

    fn trace(events: Vec<ChromeEvent>) -> ChromeTrace {
        ChromeTrace {
            trace_events: events,
            ..ChromeTrace::default()
        }
    }

    #[test]
    fn nested_and_disjoint_spans_pass() {
        let t = trace(vec![
            span("outer", 1, 0.0, 10.0),
            span("inner", 1, 2.0, 3.0),
            span("next", 1, 10.0, 1.0),
            span("other thread", 2, 5.0, 100.0),
        ]);
        let summary = check(&t).unwrap();
        assert_eq!(summary.events, 4);
        assert_eq!(summary.threads, 2);
    }

    #[test]
    fn overlapping_spans_fail() {
        let t = trace(vec![span("a", 1, 0.0, 10.0), span("b", 1, 5.0, 10.0)]);
        assert!(matches!(
            check(&t),
            Err(TraceCheckError::Overlap { ref inner, .. }) if inner == "b"
        ));
    }

    #[test]
    fn unmatched_async_spans_fail() {
        let begin: ChromeEvent = serde_json::from_value(serde_json::json!({
            "name": "isend", "cat": "mpi", "ph": "b", "ts": 1.0, "pid": 3, "tid": 1, "id": "0x1"
        }))
        .unwrap();
        let t = trace(vec![begin]);
        assert!(matches!(
            check(&t),
            Err(TraceCheckError::UnmatchedAsync {
                pid: 3,
                begins: 1,
                ends: 0,
                ..
            })
        ));
    }
}
