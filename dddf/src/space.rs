//! [`DddfSpace`]: the guid name space of one payload type on one
//! communicator, with its listener and (optionally) its watchdog.

use std::fmt;

use hc_mpi::{Comm, Hcmpi, ReduceOp, Service};
use hc_runtime::{Backoff, BackoffPolicy, Snooze};

use crate::handle::Dddf;
use crate::payload::Payload;
use crate::shared::{describe, HomeFn, Pending, ReaderFn, Shared, SizeFn};
use crate::sync::Arc;
use crate::termination::{Counts, Wave, Waves};
use crate::watchdog::{self, Watchdog};
use crate::{listener, DddfError};

/// Message counts of one rank's space, for tests and tuning.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Interest registrations this rank sent (one per remote guid awaited
    /// that is not pushed here).
    pub requests_sent: u64,
    /// Interest registrations this rank received as a home.
    pub requests_received: u64,
    /// Values this rank sent as a home.
    pub values_sent: u64,
    /// Values this rank received.
    pub values_received: u64,
}

/// What [`DddfSpace::close`] found left over on this rank.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CloseReport {
    /// Guids awaited or requested but never available: on the home, never
    /// put; elsewhere, never received (its home never put it).
    pub pending: Vec<Pending>,
    /// Final message counts.
    pub stats: Stats,
}

impl CloseReport {
    /// Whether every awaited or requested guid got its value.
    pub fn is_clean(&self) -> bool {
        self.pending.is_empty()
    }
}

/// A space of distributed data-driven futures carrying values of type `T`,
/// named by `u64` guids, on the ranks of a communicator (§II-D of the
/// HCMPI paper).
///
/// Every rank creates the space (collectively) with the same two functions:
/// `home(guid)`, the rank that puts the guid (`DDF_HOME`), and `size(guid)`,
/// the byte length of its value's encoding (`DDF_SIZE`). Handles come from
/// [`handle`](Self::handle). When its work with the space is done, every
/// rank calls [`close`](Self::close), which returns once no rank can need
/// anything from another (see the crate docs for the protocol).
pub struct DddfSpace<T: Payload> {
    shared: Arc<Shared<T>>,
    /// The message service answering other ranks; `None` once stopped.
    listener: Option<Service>,
    watchdog: Option<Watchdog>,
}

impl<T: Payload> fmt::Debug for DddfSpace<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DddfSpace")
            .field("rank", &self.shared.comm.rank())
            .field("ranks", &self.shared.comm.size())
            .field("stats", &self.shared.stats())
            .finish_non_exhaustive()
    }
}

impl<T: Payload> DddfSpace<T> {
    /// Creates the space on the world communicator of `hc`. Collective: every
    /// rank calls it, in the same order relative to other collectives.
    ///
    /// # Errors
    /// An MPI error duplicating the communicator, a bad `HC_WATCHDOG_SECS`,
    /// or a watchdog thread that cannot start.
    pub fn new<H, S>(hc: &Hcmpi, home: H, size: S) -> Result<Self, DddfError>
    where
        H: Fn(u64) -> i32 + Send + Sync + 'static,
        S: Fn(u64) -> usize + Send + Sync + 'static,
    {
        Self::on(hc.world(), home, size)
    }

    /// Creates the space on the ranks of `comm` (on a duplicate of it, so
    /// the space's messages never match the application's). Collective.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn on<H, S>(comm: &Comm, home: H, size: S) -> Result<Self, DddfError>
    where
        H: Fn(u64) -> i32 + Send + Sync + 'static,
        S: Fn(u64) -> usize + Send + Sync + 'static,
    {
        Self::start(comm, Box::new(home), Box::new(size), Box::new(|_| None))
    }

    /// Creates a space, on the world communicator of `hc`, whose homes
    /// *push* values: `reader(guid)` names the rank known to read `guid`,
    /// if there is one, and the home sends it the value as soon as it is
    /// put, without waiting to be asked. That rank never sends a request
    /// for the guid, which saves a message each way and, when the put comes
    /// first, a round trip; other ranks still ask as usual. Collective, like
    /// [`new`](Self::new), and every rank must give the same `reader`, as
    /// the same `home` (a rank that asks although its home pushes to it is
    /// sent the value once, and the home warns on stderr).
    ///
    /// A wavefront whose tile `(i, j)` is read by the tile to its right,
    /// which lives on the next rank:
    ///
    /// ```no_run
    /// use hcmpi_dddf::DddfSpace;
    /// use hc_mpi::Hcmpi;
    ///
    /// let hc = Hcmpi::init()?;
    /// let ranks = hc.size();
    /// let owner = move |column: u64| (column % ranks as u64) as i32;
    /// // guid = row * 1024 + column: the edge tile (row, column) puts.
    /// let space = DddfSpace::<Vec<u32>>::with_reader(
    ///     &hc,
    ///     move |g| owner(g % 1024),
    ///     |_| 4 * 256,
    ///     move |g| Some(owner(g % 1024 + 1)),
    /// )?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`new`](Self::new). A handle on a guid whose `reader` is not a
    /// rank is refused with [`DddfError::BadReader`].
    pub fn with_reader<H, S, R>(hc: &Hcmpi, home: H, size: S, reader: R) -> Result<Self, DddfError>
    where
        H: Fn(u64) -> i32 + Send + Sync + 'static,
        S: Fn(u64) -> usize + Send + Sync + 'static,
        R: Fn(u64) -> Option<i32> + Send + Sync + 'static,
    {
        Self::on_with_reader(hc.world(), home, size, reader)
    }

    /// [`with_reader`](Self::with_reader) on the ranks of `comm` (on a
    /// duplicate of it). Collective.
    ///
    /// # Errors
    /// As [`with_reader`](Self::with_reader).
    pub fn on_with_reader<H, S, R>(
        comm: &Comm,
        home: H,
        size: S,
        reader: R,
    ) -> Result<Self, DddfError>
    where
        H: Fn(u64) -> i32 + Send + Sync + 'static,
        S: Fn(u64) -> usize + Send + Sync + 'static,
        R: Fn(u64) -> Option<i32> + Send + Sync + 'static,
    {
        Self::start(comm, Box::new(home), Box::new(size), Box::new(reader))
    }

    fn start(comm: &Comm, home: HomeFn, size: SizeFn, reader: ReaderFn) -> Result<Self, DddfError> {
        let comm = comm.duplicate()?;
        let shared = Arc::new(Shared::new(comm, home, size, reader));
        let listener = listener::start(&shared)?;
        let mut space = DddfSpace {
            shared,
            listener: Some(listener),
            watchdog: None,
        };
        // On error, dropping `space` stops the listener again.
        space.watchdog = watchdog::start(&space.shared)?;
        Ok(space)
    }

    /// This rank in the space's communicator.
    pub fn rank(&self) -> i32 {
        self.shared.comm.rank()
    }

    /// Number of ranks.
    pub fn ranks(&self) -> i32 {
        self.shared.comm.size()
    }

    /// The handle on `guid` (`DDF_HANDLE`). Cheap; handles on the same guid
    /// share its state, so the value crosses the network at most once per
    /// rank however many handles await it.
    ///
    /// # Errors
    /// [`DddfError::BadHome`] if `home(guid)` is not a rank,
    /// [`DddfError::BadReader`] if `reader(guid)` is not one;
    /// [`DddfError::Closed`] after `close`.
    pub fn handle(&self, guid: u64) -> Result<Dddf<T>, DddfError> {
        if self.shared.is_closed() {
            return Err(DddfError::Closed);
        }
        let entry = self.shared.entry(guid)?;
        self.shared.bump_progress();
        Ok(Dddf {
            shared: Arc::clone(&self.shared),
            entry,
        })
    }

    /// This rank's message counts so far.
    pub fn stats(&self) -> Stats {
        self.shared.stats()
    }

    /// Guids awaited or requested here that have not arrived (or, on their
    /// home, were not put) — what the watchdog reports.
    pub fn pending(&self) -> Vec<Pending> {
        self.shared.pending_report()
    }

    /// Ends the space: waits until no rank can need anything more from any
    /// other (global termination, see the crate docs), then stops the
    /// listener. Collective: every rank calls it once its own tasks using
    /// the space have completed. Handles stay readable afterwards.
    ///
    /// # Errors
    /// An MPI error, or the listener's failure if it stopped early.
    pub fn close(mut self) -> Result<CloseReport, DddfError> {
        self.shut_down()
    }

    fn shut_down(&mut self) -> Result<CloseReport, DddfError> {
        let shared = Arc::clone(&self.shared);
        shared.close();
        let mut waves = Waves::default();
        let mut backoff = Backoff::new(BackoffPolicy::WAIT);
        let detected = loop {
            if let Some(error) = self.listener.as_ref().and_then(Service::failure) {
                shared.record_failure(error.into());
            }
            let counts = shared.counters.snapshot();
            // A failed listener can never balance the counts: every rank
            // learns of it in the same wave, and all stop.
            let failed = u64::from(shared.has_failed());
            let totals = match shared
                .comm
                .allreduce(vec![counts.sent, counts.received, failed], ReduceOp::Sum)
            {
                Ok(totals) => totals,
                Err(error) => break Err(DddfError::from(error)),
            };
            if totals[2] > 0 {
                break Err(shared
                    .failure()
                    .unwrap_or(DddfError::PeerListenerFailed { ranks: totals[2] }));
            }
            let totals = Counts {
                sent: totals[0],
                received: totals[1],
            };
            match waves.step(totals) {
                Wave::Quiescent => break Ok(()),
                Wave::Changed => backoff.reset(),
                // Messages are still in flight: back off before the next
                // wave instead of running allreduces back to back.
                Wave::Unchanged => {
                    if let Snooze::Park(timeout) = backoff.snooze() {
                        std::thread::park_timeout(timeout);
                    }
                }
            }
        };
        let stopped = self.stop_listener();
        let sent = shared.wait_for_sends();
        self.watchdog = None;
        detected.and(stopped).and(sent)?;
        if let Some(error) = shared.failure() {
            return Err(error);
        }
        Ok(CloseReport {
            pending: shared.pending_report(),
            stats: shared.stats(),
        })
    }

    /// Stops this rank's listener once the messages it already matched
    /// are handled.
    fn stop_listener(&mut self) -> Result<(), DddfError> {
        match self.listener.take() {
            None => Ok(()),
            // A failure it stopped on is reported through `shared`.
            Some(listener) => match listener.stop() {
                Err(error) if !self.shared.has_failed() => Err(error.into()),
                _ => Ok(()),
            },
        }
    }
}

impl<T: Payload> Drop for DddfSpace<T> {
    /// Dropping a space that was not closed closes it (collectively: every
    /// rank must drop or close it). While panicking, only this rank's
    /// listener is stopped (without waiting) — peers may then wait for this rank in vain, but
    /// a panicking rank ends the job anyway.
    fn drop(&mut self) {
        if self.listener.is_none() {
            return;
        }
        let rank = self.shared.comm.rank();
        if std::thread::panicking() {
            drop(self.listener.take());
            return;
        }
        match self.shut_down() {
            Ok(report) if !report.is_clean() => eprintln!(
                "dddf (rank {rank}): space dropped with guids that never arrived:{}",
                describe(rank, &report.pending)
            ),
            Ok(_) => {}
            Err(error) => eprintln!("dddf (rank {rank}): closing the space failed: {error}"),
        }
    }
}
