//! Timeline traces in the Chrome / Perfetto JSON format.
//!
//! Set `HCMPI_TRACE=<dir>` (or [`Builder::trace`](crate::Builder::trace))
//! and the process records, per thread: `run` spans while a worker runs
//! tasks back to back (with how many; nested where a waiting task runs
//! others on its stack), `search` and `park` spans while it looks for work
//! or sleeps, `steal` instants, the spans tasks open themselves with
//! [`span`] (how a task is named in the timeline), and whatever the layers
//! above record — the
//! communication engine's operations from posted to completed, phaser
//! phases, DDDF puts and gets, the drivers' phases ([`span`],
//! [`instant`], [`async_begin`]/[`async_end`]). A runtime that traces
//! writes `<dir>/trace.json` when it is dropped; hc-mpi writes one file for
//! the whole job, ranks as processes and threads as tracks, which opens as
//! one timeline in <https://ui.perfetto.dev>.
//!
//! ```
//! let dir = std::env::temp_dir().join(format!("hc-trace-doc-{}", std::process::id()));
//! let rt = hc_runtime::Runtime::builder().num_workers(2).trace(Some(dir.clone())).build()?;
//! rt.finish(|s| {
//!     let _phase = hc_runtime::trace::span("app", "fill");
//!     for _ in 0..4 {
//!         s.spawn(|_| {});
//!     }
//! });
//! drop(rt);
//! let text = std::fs::read_to_string(dir.join("trace.json"))?;
//! let trace: hc_runtime::trace::ChromeTrace = serde_json::from_str(&text)?;
//! assert!(trace.trace_events.iter().any(|e| e.name == "fill"));
//! assert!(trace.trace_events.iter().any(|e| e.name == "run"));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Cost
//!
//! Off (the default), every hook is one relaxed load of a global flag and a
//! branch, and none is on the path of every task: a worker records when it
//! starts or stops running tasks, not per task (a per-task check cost the
//! finest-grained benchmarks 5–10 % even with tracing off). On, an event is
//! a clock read and a push onto the recording thread's own buffer, behind
//! a lock only the collector ever contends (once, at the end). Each thread keeps at most [`EVENTS_PER_THREAD`]
//! events; later ones are counted as dropped, and the trace says how many.
//!
//! Why not the `tracing` crate: a span there goes through the subscriber's
//! registry (span ids, a thread-local stack, an allocation per span for
//! the Chrome layer's fields), several times the cost of a task of the
//! fine-grained benchmarks, on the path of every task.
//!
//! # Clocks
//!
//! Timestamps are nanoseconds of the monotonic clock since the process
//! started tracing. Each file also records the wall-clock time of that
//! start, and merging aligns processes by it: exact on one node, as good
//! as the nodes' clock synchronization across nodes.

mod buffer;
mod check;
mod chrome;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

pub use buffer::EVENTS_PER_THREAD;
pub(crate) use buffer::{collect, now, record};
pub use check::{check, Summary, TraceCheckError};
pub use chrome::{merge_files, ChromeEvent, ChromeTrace, TraceMeta};

/// Environment variable: the directory traces are written to (unset: no
/// trace).
pub const TRACE_ENV: &str = "HCMPI_TRACE";

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Whether this process records trace events.
///
/// ```
/// // Nothing asked for a trace in this process.
/// assert!(!hc_runtime::trace::is_enabled() || std::env::var_os("HCMPI_TRACE").is_some());
/// ```
#[inline]
pub fn is_enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Starts recording in this process (idempotent). Recording is per process:
/// every runtime and thread of it records from now on. Layers above the
/// runtime (hc-mpi) call this and write the trace themselves with
/// [`write_process`]; a [`Runtime`](crate::Runtime) built with
/// [`Builder::trace`](crate::Builder::trace) does both on its own.
///
/// ```
/// hc_runtime::trace::enable();
/// assert!(hc_runtime::trace::is_enabled());
/// ```
pub fn enable() {
    buffer::start_clock();
    ENABLED.store(true, Ordering::Relaxed);
}

/// The trace directory named by [`TRACE_ENV`], if set and not empty.
///
/// ```
/// std::env::remove_var("HCMPI_TRACE");
/// assert_eq!(hc_runtime::trace::dir_from_env(), None);
/// ```
pub fn dir_from_env() -> Option<PathBuf> {
    std::env::var_os(TRACE_ENV)
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
}

/// Up to four named integer arguments of an event (shown in the viewer's
/// details pane). Copy, no allocation.
///
/// ```
/// let args = hc_runtime::trace::Args::new().with("peer", 1).with("bytes", 64);
/// assert_eq!(args.iter().collect::<Vec<_>>(), [("peer", 1), ("bytes", 64)]);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Args {
    fields: [(&'static str, i64); 4],
    len: u8,
}

impl Args {
    /// No arguments.
    pub const fn new() -> Args {
        Args {
            fields: [("", 0); 4],
            len: 0,
        }
    }

    /// Adds `name = value`; a fifth argument is ignored.
    ///
    /// ```
    /// let args = hc_runtime::trace::Args::new().with("a", 1).with("b", 2).with("c", 3).with("d", 4).with("e", 5);
    /// assert_eq!(args.iter().count(), 4);
    /// ```
    #[must_use]
    pub const fn with(mut self, name: &'static str, value: i64) -> Args {
        if (self.len as usize) < self.fields.len() {
            self.fields[self.len as usize] = (name, value);
            self.len += 1;
        }
        self
    }

    /// The arguments in the order they were added.
    ///
    /// ```
    /// assert_eq!(hc_runtime::trace::Args::new().iter().count(), 0);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, i64)> + '_ {
        self.fields[..self.len as usize].iter().copied()
    }
}

/// What an event is, in Chrome trace terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A complete span (`X`) of `dur` nanoseconds.
    Span { dur: u64 },
    /// An instant (`i`, thread scope).
    Instant,
    /// The start (`b`) of an asynchronous span with this id.
    AsyncBegin { id: u64 },
    /// The end (`e`) of an asynchronous span with this id.
    AsyncEnd { id: u64 },
}

/// One recorded event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Event {
    pub(crate) kind: Kind,
    pub(crate) category: &'static str,
    pub(crate) name: &'static str,
    /// Nanoseconds since the trace clock started.
    pub(crate) ts: u64,
    pub(crate) args: Args,
}

/// A span on the current thread, recorded when dropped (see [`span`]).
#[derive(Debug)]
#[must_use = "the span ends when this guard is dropped"]
pub struct Span {
    /// `None` when tracing was off at the start.
    start: Option<u64>,
    category: &'static str,
    name: &'static str,
    args: Args,
}

impl Span {
    /// Sets the span's arguments (recorded with it at its end).
    ///
    /// ```
    /// let mut span = hc_runtime::trace::span("app", "phase");
    /// span.set_args(hc_runtime::trace::Args::new().with("nodes", 42));
    /// ```
    pub fn set_args(&mut self, args: Args) {
        self.args = args;
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        if let Some(start) = self.start {
            record(Event {
                kind: Kind::Span {
                    dur: now().saturating_sub(start),
                },
                category: self.category,
                name: self.name,
                ts: start,
                args: self.args,
            });
        }
    }
}

/// Opens a span named `name` (in `category`) on the current thread; it ends
/// when the guard is dropped. Spans of one thread must nest: drop guards in
/// the reverse order of their creation.
///
/// ```
/// let _outer = hc_runtime::trace::span("app", "solve");
/// {
///     let _inner = hc_runtime::trace::span("app", "sweep");
/// }
/// ```
#[inline]
pub fn span(category: &'static str, name: &'static str) -> Span {
    Span {
        start: is_enabled().then(now),
        category,
        name,
        args: Args::new(),
    }
}

/// Records an instant event on the current thread.
///
/// ```
/// hc_runtime::trace::instant("app", "converged", hc_runtime::trace::Args::new().with("iteration", 12));
/// ```
#[inline]
pub fn instant(category: &'static str, name: &'static str, args: Args) {
    record_now(Kind::Instant, category, name, args);
}

/// Starts an asynchronous span `id` (unique among the process's open spans
/// of `category`): an operation that may end on another thread and overlap
/// others, such as a message in flight. [`async_end`] with the same
/// category, name and id ends it.
///
/// ```
/// use hc_runtime::trace::{async_begin, async_end, Args};
/// async_begin("mpi", "isend", 7, Args::new().with("peer", 1));
/// async_end("mpi", "isend", 7, Args::new());
/// ```
#[inline]
pub fn async_begin(category: &'static str, name: &'static str, id: u64, args: Args) {
    record_now(Kind::AsyncBegin { id }, category, name, args);
}

/// Ends the asynchronous span `id` begun by [`async_begin`].
///
/// ```
/// hc_runtime::trace::async_end("mpi", "irecv", 3, hc_runtime::trace::Args::new().with("bytes", 8));
/// ```
#[inline]
pub fn async_end(category: &'static str, name: &'static str, id: u64, args: Args) {
    record_now(Kind::AsyncEnd { id }, category, name, args);
}

/// Records an event stamped now, if tracing.
#[inline]
fn record_now(kind: Kind, category: &'static str, name: &'static str, args: Args) {
    if is_enabled() {
        record(Event {
            kind,
            category,
            name,
            ts: now(),
            args,
        });
    }
}

/// Records a span that started at `start` (a [`now`] reading) and ends now.
#[inline]
pub(crate) fn span_since(category: &'static str, name: &'static str, start: u64, args: Args) {
    record(Event {
        kind: Kind::Span {
            dur: now().saturating_sub(start),
        },
        category,
        name,
        ts: start,
        args,
    });
}

/// Everything this process recorded so far (the buffers are emptied) as a
/// Chrome trace: process `pid` named `process_name`, one track per thread.
///
/// ```
/// hc_runtime::trace::enable();
/// hc_runtime::trace::instant("app", "mark", hc_runtime::trace::Args::new());
/// let trace = hc_runtime::trace::take_process(0, "example");
/// assert!(trace.trace_events.iter().any(|e| e.name == "mark"));
/// ```
pub fn take_process(pid: u32, process_name: &str) -> ChromeTrace {
    chrome::to_chrome(collect(), pid, process_name)
}

/// Writes what this process recorded (see [`take_process`]) to `path`,
/// creating its directory.
///
/// # Errors
/// If the directory or file cannot be created or written.
///
/// ```
/// let path = std::env::temp_dir().join(format!("hc-trace-write-{}.json", std::process::id()));
/// hc_runtime::trace::enable();
/// hc_runtime::trace::write_process(&path, 0, "example")?;
/// assert!(std::fs::metadata(&path)?.len() > 0);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_process(path: &Path, pid: u32, process_name: &str) -> Result<(), TraceError> {
    take_process(pid, process_name).write(path)
}

/// Why a trace could not be written or merged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// A file or directory could not be created, read or written.
    #[error("trace file {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A file to merge is not a trace this module wrote.
    #[error("trace file {path} is not a Chrome trace: {source}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        #[source]
        source: serde_json::Error,
    },
    /// Nothing to merge.
    #[error("no trace files to merge")]
    NothingToMerge,
}
