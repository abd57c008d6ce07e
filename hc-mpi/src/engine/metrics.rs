//! What the engine did: operations posted and completed by kind, bytes,
//! the in-flight high-water mark, mean completion latency, and messages
//! served ([`Hcmpi::metrics`](crate::Hcmpi::metrics)).
//!
//! Only the holder of the engine role records (one thread at a time), so
//! the lock around the counters is contended only by a snapshot. The
//! latency of an operation runs from the engine step that started it to
//! the step that completed it: the clock is read once per step, not per
//! operation.

use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;

/// Counters of one kind of operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct OperationMetrics {
    /// The operation's name (`isend`, `irecv`, `iallreduce`, …; `serve`
    /// for messages taken by a message service).
    pub kind: &'static str,
    /// Started on MPI (or taken, for `serve`).
    pub posted: u64,
    /// Completed, successfully or with an error.
    pub completed: u64,
    /// Payload bytes of the posted operations: a send's data, a receive's
    /// capacity, a collective's send buffer, a served message's length.
    pub bytes: u64,
    /// Mean time from start to completion.
    #[serde(serialize_with = "seconds")]
    pub mean_latency: Duration,
}

/// A snapshot of the engine's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct EngineMetrics {
    /// One entry per kind of operation seen, in order of first use.
    pub operations: Vec<OperationMetrics>,
    /// The most operations in flight at once.
    pub in_flight_max: u64,
}

impl EngineMetrics {
    /// The counters of `kind`, if it was used.
    ///
    /// ```
    /// assert!(hc_mpi::EngineMetrics::default().kind("isend").is_none());
    /// ```
    pub fn kind(&self, kind: &str) -> Option<&OperationMetrics> {
        self.operations.iter().find(|op| op.kind == kind)
    }

    /// Operations posted, all kinds together.
    ///
    /// ```
    /// assert_eq!(hc_mpi::EngineMetrics::default().total_posted(), 0);
    /// ```
    pub fn total_posted(&self) -> u64 {
        self.operations.iter().map(|op| op.posted).sum()
    }
}

/// Per-kind totals as recorded (latency as a sum).
#[derive(Debug, Clone, Copy)]
struct KindTotals {
    kind: &'static str,
    posted: u64,
    completed: u64,
    bytes: u64,
    latency_ns: u128,
}

#[derive(Debug, Default)]
struct Totals {
    kinds: Vec<KindTotals>,
    in_flight: u64,
    in_flight_max: u64,
}

impl Totals {
    fn kind(&mut self, kind: &'static str) -> &mut KindTotals {
        // Few kinds: a linear search.
        let index = match self.kinds.iter().position(|k| k.kind == kind) {
            Some(index) => index,
            None => {
                self.kinds.push(KindTotals {
                    kind,
                    posted: 0,
                    completed: 0,
                    bytes: 0,
                    latency_ns: 0,
                });
                self.kinds.len() - 1
            }
        };
        &mut self.kinds[index]
    }
}

/// The engine's counters (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct OpCounters {
    totals: Mutex<Totals>,
}

impl OpCounters {
    fn totals(&self) -> std::sync::MutexGuard<'_, Totals> {
        self.totals.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An operation of `kind` moving `bytes` was started.
    pub(crate) fn started(&self, kind: &'static str, bytes: usize) {
        let mut totals = self.totals();
        let entry = totals.kind(kind);
        entry.posted += 1;
        entry.bytes += bytes as u64;
        totals.in_flight += 1;
        totals.in_flight_max = totals.in_flight_max.max(totals.in_flight);
    }

    /// An operation of `kind` completed (or failed) after `latency`.
    pub(crate) fn completed(&self, kind: &'static str, latency: Duration) {
        let mut totals = self.totals();
        let entry = totals.kind(kind);
        entry.completed += 1;
        entry.latency_ns += latency.as_nanos();
        totals.in_flight = totals.in_flight.saturating_sub(1);
    }

    /// A message service took a message of `bytes`.
    pub(crate) fn served(&self, bytes: usize) {
        let mut totals = self.totals();
        let entry = totals.kind("serve");
        entry.posted += 1;
        entry.completed += 1;
        entry.bytes += bytes as u64;
    }

    pub(crate) fn snapshot(&self) -> EngineMetrics {
        let totals = self.totals();
        EngineMetrics {
            operations: totals
                .kinds
                .iter()
                .map(|k| OperationMetrics {
                    kind: k.kind,
                    posted: k.posted,
                    completed: k.completed,
                    bytes: k.bytes,
                    mean_latency: match k.completed {
                        0 => Duration::ZERO,
                        n => Duration::from_nanos((k.latency_ns / u128::from(n)) as u64),
                    },
                })
                .collect(),
            in_flight_max: totals.in_flight_max,
        }
    }
}

/// Serializes a duration as seconds (a JSON number).
fn seconds<S: serde::Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(duration.as_secs_f64())
}
