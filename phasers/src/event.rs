//! Counting events, after Fortran 2018 `EVENT POST` / `EVENT WAIT` /
//! `EVENT_QUERY` and their implementation on MPI-3 (CAF events): an event
//! is a counter that posts add to and waits consume from.
//!
//! * [`Event::post`] / [`Event::post_n`] add to the count;
//! * [`Event::wait`]`(n)` is a future that completes once `n` could be
//!   taken, and takes it (`event wait (ev, until_count=n)`); a waiting task
//!   holds no worker. [`Event::wait_blocking`] is the same for a thread
//!   that is not a computation worker;
//! * [`Event::query`] reads the current count (`event_query`);
//! * [`Event::when`]`(n)` arms an [`EventTrigger`]: an
//!   [`Awaitable`](hc_runtime::Awaitable) that takes `n` and becomes ready
//!   when the count allows it, so `scope.spawn_await(&[&ev.when(n)?], …)`
//!   releases a data-driven task once `n` posts have arrived.
//!
//! Events on other ranks are reached through a `DistEvents` set (feature
//! `mpi`).
//!
//! # Semantics
//!
//! * The count never goes below zero: a consumer of `n` takes `n` at once,
//!   never part of it.
//! * Consumers — waits and triggers alike — are served **first come, first
//!   served**, in the order they were registered (the order their
//!   `wait`/`when` calls took the event's lock). A consumer asking for more
//!   than the count blocks the ones behind it, even ones the count could
//!   satisfy: no consumer is overtaken, so none starves.
//! * A wait takes its place when [`Event::wait`] is called, not when its
//!   future is first polled. Dropping the future before it completes
//!   withdraws it (the consumers behind it move up); once it has taken its
//!   `n`, dropping it does not give the `n` back.
//! * A trigger is armed when `when` returns, whether or not a task awaits
//!   it, and consumes its `n` when it fires. Dropping the trigger handle
//!   does **not** disarm it (so `spawn_await(&[&ev.when(n)?], …)` with a
//!   temporary works); it still takes its `n` when it comes to its turn.
//! * A post that would take the count past `u64::MAX` fails with
//!   [`EventError::Overflow`] and changes nothing. (A remote post cannot
//!   report to its sender; see `DistEvents` for what happens then.)
//! * `n == 0` in `post_n`, `wait` or `when` is an error ([`EventError::ZeroCount`]).
//! * An event dropped while triggers are still armed completes them with
//!   [`EventError::Dropped`] (their tasks are released; `result()` says
//!   why) rather than leaving a task waiting forever.
//!
//! # Concurrency protocol
//!
//! Each event is a mutex-protected `(count, FIFO of armed consumers)`; each
//! consumer has a state word and a `Ddf<()>` put once it leaves the armed
//! state, which is what waiting tasks and blocked threads wait on.
//!
//! 1. **Post** (under the lock): add to `count` (checked), then, while the
//!    first armed consumer's `n` ≤ `count`, take `n` off `count` and pop
//!    the consumer; then store the `query` mirror of the count and mark the
//!    popped consumers fired (`SeqCst` store of their state). After
//!    unlocking, the poster puts each popped consumer's DDF, which wakes the
//!    futures awaiting it (their wakers), releases the data-driven tasks on
//!    it and unparks blocked threads.
//! 2. **Register** (`wait` / `when`, under the lock): if no consumer is
//!    queued and `count ≥ n`, take `n` and fire at once; otherwise append.
//!    Because post and register serialize on the lock, a registration sees
//!    every post before it, and every post after it sees the registration:
//!    no count is lost or taken twice, and a consumer is fired exactly once,
//!    by whoever popped it.
//! 3. **Withdraw** (a wait future dropped while armed, under the lock):
//!    remove the consumer from the queue, then fire the consumers now at
//!    the front that the count satisfies, as a post of nothing would.
//! 4. **Wait**: a future polls the consumer's DDF — the DDF's own protocol
//!    (hc-runtime's waker registration against a put) makes sure the
//!    put of step 1 is not missed — and then reads the consumer's state,
//!    stored before the put.
//!
//! `query` reads a mirror of `count` written under the lock (no lock on the
//! read). Modelled in `loom_tests` (a post racing an awaited wait, a
//! withdrawal racing a post, posts racing a trigger registration).
//!
//! # Memory ordering
//!
//! The event's mutex orders posts, registrations and withdrawals. A
//! consumer's state is stored (`SeqCst`) under the lock, before its DDF is
//! put; the put's `AcqRel` publication and the reader's `Acquire` (inside
//! hc-runtime's DDF) make the state visible to whoever sees the DDF full.
//! The `query` mirror is stored with `Release` under the lock and read
//! with `Acquire`, before the DDFs are put, so a released consumer's
//! `query` includes its own consumption.

mod error;
mod wait;

#[cfg(feature = "mpi")]
mod dist;

use std::collections::VecDeque;
use std::sync::Arc;

use hc_runtime::Ddf;

use crate::sync::{lock, AtomicU64, AtomicUsize, Mutex, Ordering};

#[cfg(feature = "mpi")]
pub use dist::DistEvents;
pub use error::EventError;
pub use wait::{EventTrigger, EventWait};

const ARMED: usize = 0;
const FIRED: usize = 1;
const POISONED: usize = 2;
const DROPPED: usize = 3;
const WITHDRAWN: usize = 4;

/// One consumer of `n`: a wait or a trigger.
#[derive(Debug)]
struct Consumer {
    n: u64,
    state: AtomicUsize,
    /// Put once the state has left `ARMED`.
    released: Ddf<()>,
}

impl Consumer {
    fn new(n: u64) -> Consumer {
        Consumer {
            n,
            state: AtomicUsize::new(ARMED),
            released: Ddf::new(),
        }
    }

    fn state(&self) -> usize {
        self.state.load(Ordering::SeqCst)
    }

    fn result(&self) -> Option<Result<(), EventError>> {
        match self.state() {
            ARMED | WITHDRAWN => None,
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

impl State {
    /// Pops the consumers at the front that the count satisfies, taking
    /// their `n` and marking them fired (steps 1 and 3).
    fn fire_ready(&mut self, fired: &mut Vec<Arc<Consumer>>) {
        while let Some(first) = self.queue.front() {
            if first.n > self.count {
                break;
            }
            self.count -= first.n;
            let consumer = self.queue.pop_front().expect("front exists");
            consumer.state.store(FIRED, Ordering::SeqCst);
            fired.push(consumer);
        }
    }
}

#[derive(Debug)]
struct Inner {
    state: Mutex<State>,
    /// Mirror of `state.count`, written under the lock, for `query`.
    count: AtomicU64,
}

impl Inner {
    /// Step 3 of the protocol: takes an armed consumer out of the queue.
    fn withdraw(&self, consumer: &Arc<Consumer>) {
        let mut fired = Vec::new();
        {
            let mut state = lock(&self.state);
            let Some(position) = state.queue.iter().position(|c| Arc::ptr_eq(c, consumer)) else {
                return; // fired, poisoned or dropped meanwhile
            };
            state.queue.remove(position);
            consumer.state.store(WITHDRAWN, Ordering::SeqCst);
            state.fire_ready(&mut fired);
            self.count.store(state.count, Ordering::Release);
        }
        release(&fired);
    }
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
/// use hcmpi_phasers::Event;
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
    ///
    /// ```
    /// assert_eq!(hcmpi_phasers::Event::new().query(), 0);
    /// ```
    pub fn new() -> Event {
        Event {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    count: 0,
                    queue: VecDeque::new(),
                    poisoned: false,
                }),
                count: AtomicU64::new(0),
            }),
        }
    }

    /// `EVENT POST`: adds one to the count.
    ///
    /// ```
    /// let ev = hcmpi_phasers::Event::new();
    /// ev.post().unwrap();
    /// assert_eq!(ev.query(), 1);
    /// ```
    ///
    /// # Errors
    /// As [`post_n`](Self::post_n).
    pub fn post(&self) -> Result<(), EventError> {
        self.post_n(1)
    }

    /// Adds `k` to the count and fires the armed consumers it satisfies,
    /// first come, first served.
    ///
    /// ```
    /// use hcmpi_phasers::{Event, EventError};
    ///
    /// let ev = Event::new();
    /// ev.post_n(3).unwrap();
    /// assert_eq!(ev.query(), 3);
    /// assert!(matches!(ev.post_n(u64::MAX), Err(EventError::Overflow { .. })));
    /// ```
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
            state.fire_ready(&mut fired);
            // A waiter that sees itself fired reads a `query` that includes
            // its consumption: the mirror is stored before the DDFs are put.
            self.inner.count.store(state.count, Ordering::Release);
        }
        release(&fired);
        Ok(())
    }

    /// A remote post whose amount overflowed: poisons the event and fails
    /// every armed consumer (see [`EventError::Poisoned`]).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
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
    }

    /// `EVENT_QUERY`: the current count (posted and not yet consumed).
    ///
    /// ```
    /// let ev = hcmpi_phasers::Event::new();
    /// ev.post_n(5).unwrap();
    /// let _taken = ev.when(2).unwrap();
    /// assert_eq!(ev.query(), 3);
    /// ```
    pub fn query(&self) -> u64 {
        self.inner.count.load(Ordering::Acquire)
    }

    /// Step 2 of the protocol: queues a consumer of `n` (or fires it at
    /// once).
    fn register(&self, op: &'static str, n: u64) -> Result<Arc<Consumer>, EventError> {
        if n == 0 {
            return Err(EventError::ZeroCount { op });
        }
        let consumer = Arc::new(Consumer::new(n));
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

    /// `EVENT WAIT (ev, UNTIL_COUNT=n)`: a future that completes once `n`
    /// could be taken (in turn, see the module docs) and was. The wait
    /// takes its place in the queue now; a task awaiting it holds no
    /// worker.
    ///
    /// ```
    /// use hcmpi_phasers::Event;
    ///
    /// let ev = Event::new();
    /// hc_runtime::finish(|s| {
    ///     let ev = &ev;
    ///     s.spawn_future(async move { ev.wait(3).await.unwrap() });
    ///     for _ in 0..4 {
    ///         s.spawn(move |_| ev.post().unwrap());
    ///     }
    /// });
    /// assert_eq!(ev.query(), 1);
    /// ```
    ///
    /// # Errors
    /// (From the future.) [`EventError::ZeroCount`] for `n == 0`;
    /// [`EventError::Poisoned`] if a remote overflow poisoned the event
    /// before or during the wait.
    pub fn wait(&self, n: u64) -> EventWait {
        match self.register("wait", n) {
            Ok(consumer) => EventWait::queued(Arc::clone(&self.inner), consumer),
            Err(error) => EventWait::refused(error),
        }
    }

    /// [`wait`](Self::wait) for a thread that is not a computation worker
    /// (the main thread, a thread of its own): it blocks until the wait
    /// completes (spinning, yielding, then parking, after hc-runtime's
    /// back-off policy).
    ///
    /// ```
    /// let ev = hcmpi_phasers::Event::new();
    /// let poster = ev.clone();
    /// std::thread::spawn(move || poster.post_n(2).unwrap());
    /// ev.wait_blocking(2).unwrap();
    /// assert_eq!(ev.query(), 0);
    /// ```
    ///
    /// # Errors
    /// [`EventError::BlockingOnWorker`] on a computation worker (nothing is
    /// taken), or as [`wait`](Self::wait).
    pub fn wait_blocking(&self, n: u64) -> Result<(), EventError> {
        #[cfg(not(loom))]
        if hc_runtime::current_worker_index().is_some() {
            return Err(EventError::BlockingOnWorker);
        }
        let trigger = EventTrigger::new(self.register("wait", n)?);
        hc_runtime::wait(&trigger);
        trigger.result().expect("a released consumer has a result")
    }

    /// Arms a trigger that takes `n` from the count, in turn (see the
    /// module docs), and then becomes ready: a data-driven task awaiting it
    /// (`Scope::spawn_await`) runs once `n` posts have been taken for it.
    ///
    /// ```
    /// let ev = hcmpi_phasers::Event::new();
    /// let trigger = ev.when(2).unwrap();
    /// ev.post().unwrap();
    /// assert!(!trigger.has_fired());
    /// ev.post().unwrap();
    /// assert!(trigger.has_fired());
    /// ```
    ///
    /// # Errors
    /// [`EventError::ZeroCount`] for `n == 0`; [`EventError::Poisoned`].
    pub fn when(&self, n: u64) -> Result<EventTrigger, EventError> {
        Ok(EventTrigger::new(self.register("when", n)?))
    }
}

/// Publishes consumers popped by this thread (after the event's lock).
fn release(fired: &[Arc<Consumer>]) {
    for consumer in fired {
        consumer.publish();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use hc_runtime::Awaitable;

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
        assert_eq!(ev.wait_blocking(1), Err(EventError::Poisoned));
        assert_eq!(ev.post(), Err(EventError::Poisoned));
    }

    #[test]
    fn a_withdrawn_wait_lets_the_consumers_behind_it_move_up() {
        let ev = Event::new();
        ev.post().unwrap();
        let big = ev.wait(5);
        let small = ev.when(1).unwrap();
        assert!(!small.has_fired(), "queued behind the wait");
        drop(big);
        assert!(small.has_fired());
        assert_eq!(ev.query(), 0);
    }
}
