//! Counting events, after Fortran 2018 `EVENT POST` / `EVENT WAIT` /
//! `EVENT_QUERY` and their implementation on MPI-3 (CAF events): an event
//! is a counter that posts add to and waits consume from.
//!
//! * [`Event::post`] / [`Event::post_n`] add to the count;
//! * [`Event::wait`]`(n)` blocks until `n` can be taken, then takes it
//!   (`event wait (ev, until_count=n)`);
//! * [`Event::query`] reads the current count (`event_query`);
//! * [`Event::when`]`(n)` arms an [`EventTrigger`]: an
//!   [`Awaitable`] that takes `n` and becomes ready when the count allows
//!   it, so `scope.spawn_await(&[&ev.when(n)?], …)` releases a data-driven
//!   task once `n` posts have arrived.
//!
//! Events on other ranks are reached through a [`DistEvents`] set.
//!
//! # Semantics
//!
//! * The count never goes below zero: a consumer of `n` takes `n` at once,
//!   never part of it.
//! * Consumers — blocking waits and triggers alike — are served **first
//!   come, first served**, in the order they were registered (the order
//!   their `wait`/`when` calls took the event's lock). A consumer asking for
//!   more than the count blocks the ones behind it, even ones the count
//!   could satisfy: no consumer is overtaken, so none starves.
//! * A trigger is armed when `when` returns, whether or not a task awaits
//!   it, and consumes its `n` when it fires. Dropping the trigger handle
//!   does **not** disarm it (so `spawn_await(&[&ev.when(n)?], …)` with a
//!   temporary works); it still takes its `n` when it comes to its turn.
//! * A post that would take the count past `u64::MAX` fails with
//!   [`EventError::Overflow`] and changes nothing. (A remote post cannot
//!   report to its sender; see [`DistEvents`] for what happens then.)
//! * `n == 0` in `post_n`, `wait` or `when` is an error ([`EventError::ZeroCount`]).
//! * An event dropped while triggers are still armed completes them with
//!   [`EventError::Dropped`] (their tasks are released; `result()` says
//!   why) rather than leaving a task waiting forever.
//!
//! # Concurrency protocol
//!
//! Each event is a mutex-protected `(count, FIFO of armed consumers)`.
//!
//! 1. **Post** (under the lock): add to `count` (checked), then, while the
//!    first armed consumer's `n` ≤ `count`, take `n` off `count`, pop the
//!    consumer; then store the `query` mirror of the count and mark the
//!    popped consumers fired (`SeqCst` store of their state). After
//!    unlocking, the poster publishes each popped trigger's DDF
//!    (releasing the tasks registered on it) and, if it fired any, wakes
//!    the parked blocking waiters.
//! 2. **Register** (`wait` / `when`, under the lock): if no consumer is
//!    queued and `count ≥ n`, take `n` and fire at once; otherwise append.
//!    Because post and register serialize on the lock, a registration sees
//!    every post before it, and every post after it sees the registration:
//!    no count is lost or taken twice, and a consumer is fired exactly once,
//!    by whoever popped it.
//! 3. **Blocking wait**: a thread whose consumer was queued waits for its
//!    fired state with the crate's waiter protocol (spin briefly, yield,
//!    then park; `waiters` module): the waker's `SeqCst` fence and read of
//!    the parked count against the waiter's registration, fence and re-check
//!    form a Dekker pattern, so the wake-up is not lost. On a computation
//!    worker the wait instead runs other tasks (`hc_runtime::wait` on the
//!    trigger), so a worker waiting for a post made by a queued task does
//!    not deadlock the pool.
//!
//! `query` reads a mirror of `count` written under the lock (no lock on the
//! read). Modelled in `loom_tests` (post racing a blocking wait; post
//! racing a trigger registration).

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use hc_runtime::{Awaitable, Ddf, Readiness};

use crate::sync::{lock, AtomicU64, AtomicUsize, Mutex, Ordering};
use crate::waiters::Waiters;

mod dist;

pub use dist::DistEvents;

/// What went wrong with an event operation.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventError {
    /// `post_n`, `wait` or `when` with a count of zero.
    ZeroCount {
        /// The operation.
        op: &'static str,
    },
    /// A post would take the count past `u64::MAX`; nothing was changed.
    Overflow {
        /// The count before the post.
        count: u64,
        /// The amount posted.
        added: u64,
    },
    /// A target rank outside the event set's communicator.
    InvalidRank {
        /// The rank given.
        rank: i32,
        /// The communicator size.
        size: i32,
    },
    /// An event index outside the set.
    InvalidIndex {
        /// The index given.
        index: usize,
        /// Events per rank.
        len: usize,
    },
    /// A post from another rank overflowed this event: the event no longer
    /// holds a meaningful count, and every armed and later consumer fails.
    Poisoned,
    /// The event was dropped while this trigger was armed.
    Dropped,
    /// The ranks created a distributed set with different sizes.
    Config(String),
    /// An MPI operation of a distributed set failed.
    Mpi(String),
}

impl fmt::Display for EventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventError::ZeroCount { op } => write!(f, "event {op} with a count of 0"),
            EventError::Overflow { count, added } => {
                write!(f, "event count overflow: {count} + {added} > u64::MAX")
            }
            EventError::InvalidRank { rank, size } => {
                write!(f, "event post to rank {rank}, outside 0..{size}")
            }
            EventError::InvalidIndex { index, len } => {
                write!(f, "event index {index} outside 0..{len}")
            }
            EventError::Poisoned => {
                write!(f, "a remote post overflowed this event's count")
            }
            EventError::Dropped => write!(f, "the event was dropped while armed"),
            EventError::Config(what) => write!(f, "event set: {what}"),
            EventError::Mpi(what) => write!(f, "event set: {what}"),
        }
    }
}

impl std::error::Error for EventError {}

const ARMED: usize = 0;
const FIRED: usize = 1;
const POISONED: usize = 2;
const DROPPED: usize = 3;

/// One consumer of `n`: a blocking wait or a trigger.
#[derive(Debug)]
struct Consumer {
    n: u64,
    state: AtomicUsize,
    /// Put once the state has left `ARMED`.
    released: Ddf<()>,
}

impl Consumer {
    fn state(&self) -> usize {
        self.state.load(Ordering::SeqCst)
    }

    fn result(&self) -> Option<Result<(), EventError>> {
        match self.state() {
            ARMED => None,
            FIRED => Some(Ok(())),
            POISONED => Some(Err(EventError::Poisoned)),
            _ => Some(Err(EventError::Dropped)),
        }
    }

    /// Releases the consumer's waiters after its state was set (once, by
    /// whoever popped it from the queue or fired it at registration).
    fn publish(&self) {
        // Each consumer leaves the armed state exactly once, under the
        // event's lock, and only that thread publishes.
        let _ = self.released.put(());
    }
}

#[derive(Debug)]
struct State {
    count: u64,
    queue: VecDeque<Arc<Consumer>>,
    poisoned: bool,
}

#[derive(Debug)]
struct Inner {
    state: Mutex<State>,
    /// Mirror of `state.count`, written under the lock, for `query`.
    count: AtomicU64,
    waiters: Waiters,
}

impl Drop for Inner {
    fn drop(&mut self) {
        let queue = std::mem::take(&mut lock(&self.state).queue);
        for consumer in queue {
            consumer.state.store(DROPPED, Ordering::SeqCst);
            consumer.publish();
        }
    }
}

/// A counting event local to this process. Cheap to clone (the clones
/// are the same event) and usable from any task or thread.
///
/// ```
/// use phasers::Event;
///
/// let ev = Event::new();
/// let done = std::sync::atomic::AtomicBool::new(false);
/// hc_runtime::finish(|s| {
///     let done = &done;
///     s.spawn_await(&[&ev.when(4).unwrap()], move |_| done.store(true, std::sync::atomic::Ordering::SeqCst));
///     for _ in 0..6 {
///         let ev = ev.clone();
///         s.spawn(move |_| ev.post().unwrap());
///     }
/// });
/// assert!(done.into_inner());
/// assert_eq!(ev.query(), 2); // 6 posted, 4 taken by the trigger
/// ```
#[derive(Debug, Clone)]
pub struct Event {
    inner: Arc<Inner>,
}

impl Default for Event {
    fn default() -> Self {
        Self::new()
    }
}

impl Event {
    /// A new event with a count of zero.
    pub fn new() -> Event {
        Event {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    count: 0,
                    queue: VecDeque::new(),
                    poisoned: false,
                }),
                count: AtomicU64::new(0),
                waiters: Waiters::new(),
            }),
        }
    }

    /// `EVENT POST`: adds one to the count.
    ///
    /// # Errors
    /// As [`post_n`](Self::post_n).
    pub fn post(&self) -> Result<(), EventError> {
        self.post_n(1)
    }

    /// Adds `k` to the count and fires the armed consumers it satisfies,
    /// first come, first served.
    ///
    /// # Errors
    /// [`EventError::ZeroCount`] for `k == 0`; [`EventError::Overflow`]
    /// (nothing changed) if the count would pass `u64::MAX`;
    /// [`EventError::Poisoned`] after a remote overflow.
    pub fn post_n(&self, k: u64) -> Result<(), EventError> {
        if k == 0 {
            return Err(EventError::ZeroCount { op: "post" });
        }
        let mut fired = Vec::new();
        {
            let mut state = lock(&self.inner.state);
            if state.poisoned {
                return Err(EventError::Poisoned);
            }
            state.count = state.count.checked_add(k).ok_or(EventError::Overflow {
                count: state.count,
                added: k,
            })?;
            while let Some(first) = state.queue.front() {
                if first.n > state.count {
                    break;
                }
                state.count -= first.n;
                fired.push(state.queue.pop_front().expect("front exists"));
            }
            // The count first: a waiter that sees itself fired reads a
            // `query` that includes its consumption.
            self.inner.count.store(state.count, Ordering::Release);
            for consumer in &fired {
                consumer.state.store(FIRED, Ordering::SeqCst);
            }
        }
        self.release(&fired);
        Ok(())
    }

    /// Publishes consumers popped by this thread and wakes blocked waiters.
    fn release(&self, fired: &[Arc<Consumer>]) {
        if fired.is_empty() {
            return;
        }
        for consumer in fired {
            consumer.publish();
        }
        self.inner.waiters.wake_all();
    }

    /// A remote post whose amount overflowed: poisons the event and fails
    /// every armed consumer (see [`EventError::Poisoned`]).
    fn poison(&self) {
        let queue = {
            let mut state = lock(&self.inner.state);
            state.poisoned = true;
            std::mem::take(&mut state.queue)
        };
        for consumer in &queue {
            consumer.state.store(POISONED, Ordering::SeqCst);
            consumer.publish();
        }
        self.inner.waiters.wake_all();
    }

    /// `EVENT_QUERY`: the current count (posted and not yet consumed).
    pub fn query(&self) -> u64 {
        self.inner.count.load(Ordering::Acquire)
    }

    fn register(&self, op: &'static str, n: u64) -> Result<Arc<Consumer>, EventError> {
        if n == 0 {
            return Err(EventError::ZeroCount { op });
        }
        let consumer = Arc::new(Consumer {
            n,
            state: AtomicUsize::new(ARMED),
            released: Ddf::new(),
        });
        {
            let mut state = lock(&self.inner.state);
            if state.poisoned {
                return Err(EventError::Poisoned);
            }
            if state.queue.is_empty() && state.count >= n {
                state.count -= n;
                self.inner.count.store(state.count, Ordering::Release);
                consumer.state.store(FIRED, Ordering::SeqCst);
            } else {
                state.queue.push_back(Arc::clone(&consumer));
                return Ok(consumer);
            }
        }
        consumer.publish();
        Ok(consumer)
    }

    /// `EVENT WAIT (ev, UNTIL_COUNT=n)`: blocks until `n` can be taken (in
    /// turn, see the module docs), then takes it.
    ///
    /// Off the computation workers the thread spins briefly, yields, then
    /// parks; on a worker it runs other tasks meanwhile.
    ///
    /// # Errors
    /// [`EventError::ZeroCount`] for `n == 0`; [`EventError::Poisoned`] if
    /// a remote overflow poisoned the event before or during the wait.
    pub fn wait(&self, n: u64) -> Result<(), EventError> {
        let consumer = self.register("wait", n)?;
        if consumer.state() == ARMED {
            #[cfg(not(loom))]
            let on_worker = hc_runtime::current_worker_index().is_some();
            #[cfg(loom)]
            let on_worker = false;
            if on_worker {
                hc_runtime::wait(&EventTrigger {
                    consumer: Arc::clone(&consumer),
                });
            } else {
                self.inner.waiters.wait_until(|| consumer.state() != ARMED);
            }
        }
        consumer.result().expect("a released consumer has a result")
    }

    /// Arms a trigger that takes `n` from the count, in turn (see the
    /// module docs), and then becomes ready: a data-driven task awaiting it
    /// (`Scope::spawn_await`) runs once `n` posts have been taken for it.
    ///
    /// # Errors
    /// [`EventError::ZeroCount`] for `n == 0`; [`EventError::Poisoned`].
    pub fn when(&self, n: u64) -> Result<EventTrigger, EventError> {
        Ok(EventTrigger {
            consumer: self.register("when", n)?,
        })
    }
}

/// A trigger armed by [`Event::when`]: awaitable, ready once it has taken
/// its count (or failed, see [`result`](Self::result)).
#[derive(Debug)]
pub struct EventTrigger {
    consumer: Arc<Consumer>,
}

impl EventTrigger {
    /// The count this trigger takes.
    pub fn count(&self) -> u64 {
        self.consumer.n
    }

    /// `None` while armed; `Some(Ok(()))` once it took its count;
    /// `Some(Err(_))` if the event was poisoned or dropped first.
    pub fn result(&self) -> Option<Result<(), EventError>> {
        self.consumer.result()
    }

    /// Whether the trigger took its count.
    pub fn has_fired(&self) -> bool {
        self.consumer.state() == FIRED
    }
}

impl Awaitable for EventTrigger {
    fn readiness(&self) -> Readiness<'_> {
        self.consumer.released.readiness()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn fifo_without_overtaking() {
        let ev = Event::new();
        let big = ev.when(3).unwrap();
        let small = ev.when(1).unwrap();
        ev.post().unwrap();
        assert!(big.result().is_none() && small.result().is_none());
        assert_eq!(ev.query(), 1);
        ev.post_n(2).unwrap();
        assert!(big.has_fired() && big.is_ready());
        assert!(small.result().is_none());
        assert_eq!(ev.query(), 0);
        ev.post().unwrap();
        assert!(small.has_fired());
        assert_eq!(ev.query(), 0);
    }

    #[test]
    fn poison_fails_armed_and_later_consumers() {
        let ev = Event::new();
        let t = ev.when(2).unwrap();
        ev.poison();
        assert_eq!(t.result(), Some(Err(EventError::Poisoned)));
        assert!(t.is_ready());
        assert_eq!(ev.wait(1), Err(EventError::Poisoned));
        assert_eq!(ev.post(), Err(EventError::Poisoned));
    }
}
