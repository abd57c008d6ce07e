//! The state of a space shared by its handles, its listener and its
//! watchdog: the user's `home`/`size`/`reader` functions, the guid table, the
//! message counters, and the sends still in flight.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hasher};

use hc_mpi::{Comm, Request};

use crate::entry::Entry;
use crate::home::RequestOutcome;
use crate::payload::Payload;
use crate::sync::{lock, Arc, AtomicBool, AtomicU64, Mutex, Ordering};
use crate::termination::Counters;
use crate::{wire, DddfError, SizeCheck, Stats};

/// Hashes a guid with one multiplication (Fibonacci hashing): guids are
/// not attacker-chosen, and SipHash is a measurable part of a remote get.
#[derive(Debug, Default)]
struct GuidHasher(u64);

impl Hasher for GuidHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, guid: u64) {
        self.0 = (self.0 ^ guid).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type GuidMap<V> = HashMap<u64, V, BuildHasherDefault<GuidHasher>>;

pub(crate) type HomeFn = Box<dyn Fn(u64) -> i32 + Send + Sync>;
pub(crate) type SizeFn = Box<dyn Fn(u64) -> usize + Send + Sync>;
pub(crate) type ReaderFn = Box<dyn Fn(u64) -> Option<i32> + Send + Sync>;

/// Counters behind [`Stats`].
#[derive(Debug, Default)]
struct StatCounters {
    requests_sent: AtomicU64,
    requests_received: AtomicU64,
    values_sent: AtomicU64,
    values_received: AtomicU64,
}

pub(crate) struct Shared<T> {
    pub(crate) comm: Comm,
    home_fn: HomeFn,
    size_fn: SizeFn,
    reader_fn: ReaderFn,
    entries: Mutex<GuidMap<Arc<Entry<T>>>>,
    pub(crate) counters: Counters,
    /// Sends not yet known to be complete; `close` waits for them so that
    /// MPI is never finalized under one.
    sends: Mutex<Vec<Request<Vec<u8>>>>,
    closed: AtomicBool,
    /// The first failure of the listener.
    failure: Mutex<Option<DddfError>>,
    /// `failure` is set (read on every message, without the lock).
    failed: AtomicBool,
    stats: StatCounters,
    /// Bumped by every event that moves the computation forward (watchdog).
    progress: AtomicU64,
}

impl<T: Payload> Shared<T> {
    pub(crate) fn new(comm: Comm, home_fn: HomeFn, size_fn: SizeFn, reader_fn: ReaderFn) -> Self {
        Shared {
            comm,
            home_fn,
            size_fn,
            reader_fn,
            entries: Mutex::new(GuidMap::default()),
            counters: Counters::default(),
            sends: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
            failure: Mutex::new(None),
            failed: AtomicBool::new(false),
            stats: StatCounters::default(),
            progress: AtomicU64::new(0),
        }
    }

    pub(crate) fn rank(&self) -> i32 {
        self.comm.rank()
    }

    /// `home(guid)`, checked against the communicator.
    pub(crate) fn home_of(&self, guid: u64) -> Result<i32, DddfError> {
        let home = (self.home_fn)(guid);
        let ranks = self.comm.size();
        if (0..ranks).contains(&home) {
            Ok(home)
        } else {
            Err(DddfError::BadHome { guid, home, ranks })
        }
    }

    /// `reader(guid)`, checked against the communicator.
    fn reader_of(&self, guid: u64) -> Result<Option<i32>, DddfError> {
        match (self.reader_fn)(guid) {
            Some(reader) if !(0..self.comm.size()).contains(&reader) => Err(DddfError::BadReader {
                guid,
                reader,
                ranks: self.comm.size(),
            }),
            reader => Ok(reader),
        }
    }

    pub(crate) fn size_of(&self, guid: u64) -> usize {
        (self.size_fn)(guid)
    }

    /// The entry of `guid`, created on first use.
    pub(crate) fn entry(&self, guid: u64) -> Result<Arc<Entry<T>>, DddfError> {
        if let Some(entry) = lock(&self.entries).get(&guid) {
            return Ok(Arc::clone(entry));
        }
        // `home` and `reader` are user code: call them outside the table's
        // lock.
        let home = self.home_of(guid)?;
        let reader = self.reader_of(guid)?;
        let mut entries = lock(&self.entries);
        let entry = entries
            .entry(guid)
            .or_insert_with(|| Arc::new(Entry::new(guid, home, reader)));
        Ok(Arc::clone(entry))
    }

    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    pub(crate) fn bump_progress(&self) {
        self.progress.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn progress(&self) -> u64 {
        self.progress.load(Ordering::Relaxed)
    }

    pub(crate) fn stats(&self) -> Stats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Stats {
            requests_sent: get(&self.stats.requests_sent),
            requests_received: get(&self.stats.requests_received),
            values_sent: get(&self.stats.values_sent),
            values_received: get(&self.stats.values_received),
        }
    }

    pub(crate) fn record_failure(&self, error: DddfError) {
        eprintln!(
            "dddf (rank {}): the space stopped answering: {error}",
            self.rank()
        );
        lock(&self.failure).get_or_insert(error);
        self.failed.store(true, Ordering::Release);
    }

    pub(crate) fn has_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    pub(crate) fn failure(&self) -> Option<DddfError> {
        lock(&self.failure).clone()
    }

    /// Counts and sends one protocol message.
    fn send(&self, dest: i32, message: Vec<u8>) -> Result<(), DddfError> {
        self.counters.message_sent();
        match self.comm.isend(message, dest, wire::TAG) {
            Ok(request) => {
                let mut failed = None;
                let mut sends = lock(&self.sends);
                // Reading a status costs no MPI call (`test` would step the
                // engine once per pending send); a send that failed leaves
                // a peer without its message, which `close` must report.
                sends.retain(|r| match r.status() {
                    None => true,
                    Some(Ok(_)) => false,
                    Some(Err(error)) => {
                        failed.get_or_insert(error);
                        false
                    }
                });
                sends.push(request);
                drop(sends);
                if let Some(error) = failed {
                    self.record_failure(error.into());
                }
                Ok(())
            }
            Err(error) => {
                self.counters.message_not_sent();
                Err(error.into())
            }
        }
    }

    /// Waits until every send this rank started has completed.
    pub(crate) fn wait_for_sends(&self) -> Result<(), DddfError> {
        let sends = std::mem::take(&mut *lock(&self.sends));
        let mut result = Ok(());
        for request in sends {
            if let Err(error) = request.wait() {
                result = result.and(Err(error.into()));
            }
        }
        result
    }

    /// `put` of a handle: checks, publishes, and serves the ranks that asked.
    pub(crate) fn put(&self, entry: &Entry<T>, value: T) -> Result<(), DddfError> {
        hc_runtime::trace::instant(
            "dddf",
            "put",
            hc_runtime::trace::Args::new().with("guid", entry.guid as i64),
        );
        let guid = entry.guid;
        if self.is_closed() {
            return Err(DddfError::Closed);
        }
        let rank = self.rank();
        if entry.home != rank {
            return Err(DddfError::PutNotHome {
                guid,
                home: entry.home,
                rank,
            });
        }
        let expected = self.size_of(guid);
        let actual = value.byte_len();
        if actual != expected {
            return Err(DddfError::SizeMismatch {
                guid,
                expected,
                actual,
                at: SizeCheck::Put,
            });
        }
        let publish = || {
            if entry.value.put(Ok(value)).is_err() {
                unreachable!("dddf: the home's value is only put under its interest lock");
            }
        };
        let waiting = entry
            .interest
            .put(entry.pushed_to, publish)
            .ok_or(DddfError::AlreadyPut { guid })?;
        self.bump_progress();
        for dest in waiting {
            self.send_value(entry, dest)?;
        }
        Ok(())
    }

    /// Sends the (published) value of `entry` to `dest`.
    fn send_value(&self, entry: &Entry<T>, dest: i32) -> Result<(), DddfError> {
        let value = match entry.value.get() {
            Ok(Ok(value)) => value,
            _ => unreachable!("dddf: a value is sent only once it is published"),
        };
        let mut message = wire::message(entry.guid, wire::Kind::Data, value.byte_len());
        value.write_bytes(&mut message);
        self.send(dest, message)?;
        self.stats.values_sent.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// A task is about to await `entry`: on a non-home rank, the first one
    /// registers interest with the home, unless the home pushes the value
    /// here unasked.
    pub(crate) fn register_interest(&self, entry: &Entry<T>) {
        entry.awaited.store(true, Ordering::Relaxed);
        let rank = self.rank();
        if entry.home == rank || !entry.requested.first() {
            return;
        }
        if self.is_closed() {
            // Nothing arrives after the close: a value pushed here is here
            // already (and the failure leaves it be) or never comes, and a
            // request would go unanswered.
            entry.fail(DddfError::Closed);
            return;
        }
        if entry.pushed_to == Some(rank) {
            return;
        }
        hc_runtime::trace::instant(
            "dddf",
            "get request",
            hc_runtime::trace::Args::new()
                .with("guid", entry.guid as i64)
                .with("home", i64::from(entry.home)),
        );
        let request = wire::message(entry.guid, wire::Kind::Request, 0);
        match self.send(entry.home, request) {
            Ok(()) => {
                self.stats.requests_sent.fetch_add(1, Ordering::Relaxed);
            }
            Err(error) => entry.fail(error),
        }
    }

    /// Handles one message received by the listener.
    pub(crate) fn handle_message(&self, source: i32, message: &[u8]) {
        match wire::split(message) {
            Ok((guid, wire::Kind::Request, _)) => self.on_request(source, guid),
            Ok((guid, wire::Kind::Data, body)) => self.on_data(source, guid, body),
            Ok((guid, wire::Kind::Refused, body)) => self.on_refused(source, guid, body),
            Err(malformed) => eprintln!(
                "dddf (rank {}): ignored a malformed message from rank {source}: {malformed:?}",
                self.rank()
            ),
        }
        self.bump_progress();
    }

    fn on_request(&self, source: i32, guid: u64) {
        self.stats.requests_received.fetch_add(1, Ordering::Relaxed);
        let rank = self.rank();
        let reply = match self.home_of(guid) {
            Ok(home) if home == rank => match self.entry(guid) {
                Ok(entry) => self.answer_request(&entry, source),
                // This rank's `reader` fails on the guid where the asking
                // rank's did not: it cannot track the guid, and the asker
                // learns so rather than waiting for good.
                Err(error) => {
                    eprintln!(
                        "dddf (rank {rank}): refused rank {source}'s request for guid {guid}: \
                         {error}"
                    );
                    self.send_refused(source, guid, -1)
                }
            },
            Ok(home) => self.send_refused(source, guid, home),
            Err(error) => {
                let its_home = match error {
                    DddfError::BadHome { home, .. } => home,
                    _ => -1,
                };
                self.send_refused(source, guid, its_home)
            }
        };
        if let Err(error) = reply {
            eprintln!("dddf (rank {rank}): cannot answer rank {source} about guid {guid}: {error}");
        }
    }

    /// Answers `source`'s request for the guid of `entry`, homed here: at
    /// once if it was put, at the put otherwise.
    fn answer_request(&self, entry: &Entry<T>, source: i32) -> Result<(), DddfError> {
        let outcome = entry.interest.request(source);
        let pushed_there = entry.pushed_to == Some(source);
        if pushed_there {
            eprintln!(
                "dddf (rank {}): rank {source} asked for guid {}, which this rank pushes to it \
                 unasked: the reader function must give the same rank on every rank; it is \
                 sent once",
                self.rank(),
                entry.guid
            );
        }
        match outcome {
            RequestOutcome::SendNow => self.send_value(entry, source),
            RequestOutcome::Deferred => Ok(()),
            RequestOutcome::Duplicate => {
                if !pushed_there {
                    eprintln!(
                        "dddf (rank {}): rank {source} asked twice for guid {}; it is sent once",
                        self.rank(),
                        entry.guid
                    );
                }
                Ok(())
            }
        }
    }

    fn send_refused(&self, dest: i32, guid: u64, its_home: i32) -> Result<(), DddfError> {
        let mut message = wire::message(guid, wire::Kind::Refused, 4);
        message.extend_from_slice(&wire::refused_body(its_home));
        self.send(dest, message)
    }

    fn on_data(&self, source: i32, guid: u64, body: &[u8]) {
        hc_runtime::trace::instant(
            "dddf",
            "get arrived",
            hc_runtime::trace::Args::new()
                .with("guid", guid as i64)
                .with("source", i64::from(source)),
        );
        self.stats.values_received.fetch_add(1, Ordering::Relaxed);
        let entry = match self.entry(guid) {
            Ok(entry) => entry,
            Err(error) => {
                eprintln!(
                    "dddf (rank {}): value of guid {guid} from rank {source} dropped: {error}",
                    self.rank()
                );
                return;
            }
        };
        if entry.home == self.rank() {
            eprintln!(
                "dddf (rank {}): rank {source} sent a value of guid {guid}, which is homed here; \
                 ignored",
                self.rank()
            );
            return;
        }
        let expected = self.size_of(guid);
        let size_error = DddfError::SizeMismatch {
            guid,
            expected,
            actual: body.len(),
            at: SizeCheck::Receive,
        };
        let value = if body.len() != expected {
            Err(size_error)
        } else {
            T::read_bytes(body).ok_or(size_error)
        };
        if entry.value.put(value).is_err() {
            eprintln!(
                "dddf (rank {}): a second value of guid {guid} arrived from rank {source}; \
                 the first is kept",
                self.rank()
            );
        }
    }

    fn on_refused(&self, source: i32, guid: u64, body: &[u8]) {
        let its_home = wire::read_refused(body).unwrap_or(-1);
        if let Ok(entry) = self.entry(guid).map_err(drop).and_then(|e| {
            if e.home == self.rank() {
                Err(())
            } else {
                Ok(e)
            }
        }) {
            entry.fail(DddfError::Refused {
                guid,
                asked: source,
                its_home,
            });
        }
    }

    /// One line per guid this rank is still waiting for or still owes.
    pub(crate) fn pending_report(&self) -> Vec<Pending> {
        let rank = self.rank();
        let entries: Vec<_> = lock(&self.entries).values().cloned().collect();
        let mut pending = Vec::new();
        for entry in entries {
            let available = entry.is_available();
            let awaited = entry.awaited.load(Ordering::Relaxed);
            if entry.home == rank {
                let waiting = entry.interest.waiting();
                if !available && (awaited || !waiting.is_empty()) {
                    pending.push(Pending {
                        guid: entry.guid,
                        home: entry.home,
                        awaited_here: awaited,
                        requested_by: waiting,
                    });
                }
            } else if !available && (awaited || entry.requested.is_done()) {
                pending.push(Pending {
                    guid: entry.guid,
                    home: entry.home,
                    awaited_here: awaited,
                    requested_by: Vec::new(),
                });
            }
        }
        pending.sort_by_key(|p| p.guid);
        pending
    }
}

/// A guid whose value a rank is waiting for (or owes) that has not come.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The guid.
    pub guid: u64,
    /// Its home rank.
    pub home: i32,
    /// A task on this rank awaited it.
    pub awaited_here: bool,
    /// On the home: ranks that asked for it (it was never put).
    pub requested_by: Vec<i32>,
}

/// Formats a pending list for a diagnostic.
pub(crate) fn describe(rank: i32, pending: &[Pending]) -> String {
    let mut text = String::new();
    for p in pending {
        let _ = write!(text, "\n  guid {} (home rank {}): ", p.guid, p.home);
        if p.home == rank {
            let _ = write!(text, "never put");
            if p.awaited_here {
                let _ = write!(text, "; awaited on this rank");
            }
            if !p.requested_by.is_empty() {
                let _ = write!(text, "; requested by ranks {:?}", p.requested_by);
            }
        } else {
            let _ = write!(
                text,
                "awaited here, value not received from rank {}",
                p.home
            );
        }
    }
    text
}
