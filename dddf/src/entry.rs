//! One guid as seen by one rank: the local copy of its value, the home's
//! interest list, and the flag that makes a non-home rank ask only once.

use hc_runtime::Ddf;

use crate::home::HomeInterest;
use crate::sync::{AtomicBool, Ordering};
use crate::DddfError;

/// Makes the first of any number of concurrent callers — and only it — do
/// something (register interest with the home).
#[derive(Debug, Default)]
pub(crate) struct Once {
    done: AtomicBool,
}

impl Once {
    /// `true` for exactly one caller over the flag's lifetime.
    pub(crate) fn first(&self) -> bool {
        // Relaxed: the flag only elects the caller; the request it sends is
        // ordered by the communication worker's hand-off.
        !self.done.load(Ordering::Relaxed) && !self.done.swap(true, Ordering::Relaxed)
    }

    pub(crate) fn is_done(&self) -> bool {
        self.done.load(Ordering::Relaxed)
    }
}

/// The per-rank state of one guid.
pub(crate) struct Entry<T> {
    pub(crate) guid: u64,
    pub(crate) home: i32,
    /// The rank the home sends the value to as soon as it is put, unasked
    /// (never the home itself).
    pub(crate) pushed_to: Option<i32>,
    /// The value: put here on the home, the received copy elsewhere — or the
    /// error that stopped it from arriving, so awaiting tasks still run and
    /// `get` reports it.
    pub(crate) value: Ddf<Result<T, DddfError>>,
    /// Non-home ranks: interest was registered with the home (or, on the
    /// pushed reader, the first await found nothing to register).
    pub(crate) requested: Once,
    /// A task awaited the guid here (for the watchdog's report).
    pub(crate) awaited: AtomicBool,
    /// Home rank: who asked for the value.
    pub(crate) interest: HomeInterest,
}

impl<T: Send + Sync> Entry<T> {
    pub(crate) fn new(guid: u64, home: i32, pushed_to: Option<i32>) -> Self {
        Entry {
            guid,
            home,
            pushed_to: pushed_to.filter(|&reader| reader != home),
            value: Ddf::new(),
            requested: Once::default(),
            awaited: AtomicBool::new(false),
            interest: HomeInterest::new(),
        }
    }

    /// Releases the guid's waiters with `error` instead of a value (no-op if
    /// a value or another error got there first).
    pub(crate) fn fail(&self, error: DddfError) {
        let _ = self.value.put(Err(error));
    }

    pub(crate) fn is_available(&self) -> bool {
        self.value.is_put()
    }
}
