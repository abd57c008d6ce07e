//! The one back-off policy of hcmpi: spin, then yield, then park.
//!
//! Every loop that waits for something another thread will do — an idle
//! computation worker, the communication engine with requests in flight, a
//! blocking `wait` — backs off the same way, so the trade-off between
//! latency and wasted CPU is made once, here:
//!
//! 1. **Spin** a few rounds, each twice as long as the last (`spin_loop`
//!    hints) up to a cap: the event is often a few hundred nanoseconds away.
//!    A loop that *polls* for its event (a request, a poller) keeps the cap
//!    small, so that it polls every ~100 ns rather than every few µs (a
//!    spin hint costs 10–140 cycles, depending on the CPU).
//! 2. **Yield** the core (`std::thread::yield_now`) until `yield_for` has
//!    passed since the first yield. On a machine with more threads than
//!    cores this hands the CPU to the thread that will produce the event.
//! 3. **Park**, for the caller to do with its own parker: indefinitely if
//!    nothing can happen without a wake-up, otherwise for a timeout that
//!    doubles from `first_park` up to `max_park` (a message that arrives is
//!    noticed only by polling, and a poller that never sleeps burns a core).
//!
//! ```
//! use hc_runtime::{Backoff, BackoffPolicy, Snooze};
//! use std::sync::atomic::{AtomicBool, Ordering};
//!
//! let flag = AtomicBool::new(false);
//! std::thread::scope(|s| {
//!     s.spawn(|| flag.store(true, Ordering::Release));
//!     let mut backoff = Backoff::new(BackoffPolicy::WAIT);
//!     while !flag.load(Ordering::Acquire) {
//!         if let Snooze::Park(timeout) = backoff.snooze() {
//!             std::thread::park_timeout(timeout);
//!         }
//!     }
//! });
//! ```

use std::time::{Duration, Instant};

/// The parameters of a [`Backoff`]. The presets are the policies hcmpi's
/// own loops use; a custom policy is for measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackoffPolicy {
    /// Spin rounds before the first yield; round `k` spins
    /// `min(2^k, max_spin)` times.
    pub spin_rounds: u32,
    /// The most spin hints in one round.
    pub max_spin: u32,
    /// How long to keep yielding before parking.
    pub yield_for: Duration,
    /// The first park timeout.
    pub first_park: Duration,
    /// The longest park timeout (later timeouts double up to it).
    pub max_park: Duration,
}

impl BackoffPolicy {
    /// A thread or task waiting for a result that is usually microseconds
    /// away (a reply, a short task): spin, yield for 20 µs, then park.
    /// It polls between rounds: ~64 polls a few spin hints apart first.
    pub const WAIT: BackoffPolicy = BackoffPolicy {
        spin_rounds: 128,
        max_spin: 1,
        yield_for: Duration::from_micros(20),
        first_park: Duration::from_micros(20),
        max_park: Duration::from_millis(1),
    };

    /// A computation worker that found no task: spin and yield for 50 µs
    /// (work often follows a completion within that window), then park.
    pub const IDLE_WORKER: BackoffPolicy = BackoffPolicy {
        spin_rounds: 7,
        max_spin: 64,
        yield_for: Duration::from_micros(50),
        first_park: Duration::from_micros(20),
        max_park: Duration::from_millis(1),
    };

    /// A computation worker with nothing to do while another thread polls
    /// for the work in flight, and will wake it: spin, yield for 2 µs (to
    /// the threads it waits for), then park. Yielding longer on a shared
    /// core only hands it back and forth between idle threads.
    pub const STANDBY: BackoffPolicy = BackoffPolicy {
        spin_rounds: 7,
        max_spin: 64,
        yield_for: Duration::from_micros(2),
        first_park: Duration::from_micros(20),
        max_park: Duration::from_millis(1),
    };

    /// A poller with operations in flight but no progress (the
    /// communication engine): it polls ~64 times a few spin hints apart,
    /// yields for 2 ms, because right after traffic more traffic is likely,
    /// then sleeps up to 1 ms at a time.
    pub const POLLING: BackoffPolicy = BackoffPolicy {
        spin_rounds: 64,
        max_spin: 4,
        yield_for: Duration::from_millis(2),
        first_park: Duration::from_micros(20),
        max_park: Duration::from_millis(1),
    };

    /// [`POLLING`](Self::POLLING) on an oversubscribed node, where the
    /// poller shares its core with busy threads (several ranks per core):
    /// it polls ~64 times, yields for only 100 µs, then naps from 10 µs
    /// up to 100 µs at a time.
    ///
    /// A thread that yields to a busy neighbour gets the core back only
    /// when the neighbour's time slice ends, milliseconds later: a message
    /// waits that long to be received or forwarded. A thread woken from a
    /// nap preempts a busy neighbour at once, so napping keeps the latency
    /// near the nap's length (make the naps precise with
    /// [`precise_timers`]) and leaves the core to the work meanwhile.
    pub const POLLING_OVERSUBSCRIBED: BackoffPolicy = BackoffPolicy {
        spin_rounds: 64,
        max_spin: 4,
        yield_for: Duration::from_micros(100),
        first_park: Duration::from_micros(10),
        max_park: Duration::from_micros(100),
    };

    /// This policy with another longest park timeout.
    #[must_use]
    pub const fn with_max_park(self, max_park: Duration) -> BackoffPolicy {
        BackoffPolicy { max_park, ..self }
    }
}

/// Asks the operating system to end the calling thread's timed parks on
/// time. Linux lets a sleep overrun by the thread's timer slack (50 µs by
/// default) to batch wake-ups; a poller that naps for 10 µs would sleep six
/// times longer. This sets the slack to 1 µs (Linux only; elsewhere it
/// does nothing). The runtime's workers do it on an
/// [oversubscribed](crate::runtime::Builder::oversubscribed) node.
///
/// ```
/// hc_runtime::precise_timers();
/// std::thread::park_timeout(std::time::Duration::from_micros(10));
/// ```
pub fn precise_timers() {
    #[cfg(target_os = "linux")]
    {
        const SLACK_NS: libc::c_ulong = 1_000;
        // SAFETY: PR_SET_TIMERSLACK takes one integer argument and changes
        // only the calling thread's timer slack; no memory is passed. A
        // refusal (a kernel without it) only leaves the default slack.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, SLACK_NS) };
    }
}

/// What [`Backoff::snooze`] did, or asks the caller to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Snooze {
    /// It spun or yielded; check the condition again.
    Retry,
    /// Spinning and yielding are over: park now, for at most this long if
    /// the caller's event can arrive without a wake-up (a poller), or until
    /// woken otherwise.
    Park(Duration),
}

impl Snooze {
    /// Whether the caller should park.
    ///
    /// ```
    /// use hc_runtime::Snooze;
    /// use std::time::Duration;
    ///
    /// assert!(Snooze::Park(Duration::from_micros(20)).is_park());
    /// assert!(!Snooze::Retry.is_park());
    /// ```
    pub fn is_park(self) -> bool {
        matches!(self, Snooze::Park(_))
    }
}

/// The state of one waiting loop under a [`BackoffPolicy`].
#[derive(Debug, Clone)]
pub struct Backoff {
    policy: BackoffPolicy,
    round: u32,
    yielding_since: Option<Instant>,
    next_park: Duration,
}

impl Backoff {
    /// A fresh back-off (it starts by spinning).
    ///
    /// ```
    /// use hc_runtime::{Backoff, BackoffPolicy, Snooze};
    ///
    /// let mut backoff = Backoff::new(BackoffPolicy::WAIT);
    /// assert_eq!(backoff.snooze(), Snooze::Retry);
    /// ```
    pub fn new(policy: BackoffPolicy) -> Backoff {
        Backoff {
            policy,
            round: 0,
            yielding_since: None,
            next_park: policy.first_park,
        }
    }

    /// Starts over with spinning: call it after progress.
    ///
    /// ```
    /// use hc_runtime::{Backoff, BackoffPolicy, Snooze};
    /// use std::time::Duration;
    ///
    /// let policy = BackoffPolicy { spin_rounds: 0, yield_for: Duration::ZERO, ..BackoffPolicy::WAIT };
    /// let mut backoff = Backoff::new(policy);
    /// assert_eq!(backoff.snooze(), Snooze::Retry); // one yield
    /// assert!(backoff.snooze().is_park());
    /// backoff.reset();
    /// assert!(!backoff.is_parking());
    /// ```
    pub fn reset(&mut self) {
        self.round = 0;
        self.yielding_since = None;
        self.next_park = self.policy.first_park;
    }

    /// Whether spinning and yielding are over (the next [`snooze`] says
    /// [`Snooze::Park`]).
    ///
    /// [`snooze`]: Backoff::snooze
    ///
    /// ```
    /// use hc_runtime::{Backoff, BackoffPolicy};
    /// use std::time::Duration;
    ///
    /// let policy = BackoffPolicy { spin_rounds: 1, yield_for: Duration::ZERO, ..BackoffPolicy::WAIT };
    /// let mut backoff = Backoff::new(policy);
    /// assert!(!backoff.is_parking());
    /// backoff.snooze(); // spins
    /// backoff.snooze(); // yields once; the yield phase is over at once
    /// assert!(backoff.is_parking());
    /// ```
    pub fn is_parking(&self) -> bool {
        self.yielding_since
            .is_some_and(|since| since.elapsed() >= self.policy.yield_for)
    }

    /// One step of the policy: spins or yields and returns
    /// [`Snooze::Retry`], or returns [`Snooze::Park`] with the timeout for
    /// this park (each later park doubles it, up to the policy's maximum).
    ///
    /// ```
    /// use hc_runtime::{Backoff, BackoffPolicy, Snooze};
    /// use std::time::Duration;
    ///
    /// let policy = BackoffPolicy {
    ///     spin_rounds: 0,
    ///     max_spin: 1,
    ///     yield_for: Duration::ZERO,
    ///     first_park: Duration::from_micros(10),
    ///     max_park: Duration::from_micros(25),
    /// };
    /// let mut backoff = Backoff::new(policy);
    /// assert_eq!(backoff.snooze(), Snooze::Retry); // the one yield
    /// assert_eq!(backoff.snooze(), Snooze::Park(Duration::from_micros(10)));
    /// assert_eq!(backoff.snooze(), Snooze::Park(Duration::from_micros(20)));
    /// assert_eq!(backoff.snooze(), Snooze::Park(Duration::from_micros(25)));
    /// ```
    pub fn snooze(&mut self) -> Snooze {
        if self.round < self.policy.spin_rounds {
            for _ in 0..(1u32 << self.round.min(16)).min(self.policy.max_spin) {
                std::hint::spin_loop();
            }
            self.round += 1;
            return Snooze::Retry;
        }
        match self.yielding_since {
            None => {
                self.yielding_since = Some(Instant::now());
                std::thread::yield_now();
                Snooze::Retry
            }
            Some(since) if since.elapsed() < self.policy.yield_for => {
                std::thread::yield_now();
                Snooze::Retry
            }
            Some(_) => {
                let timeout = self.next_park;
                self.next_park = self.next_park.saturating_mul(2).min(self.policy.max_park);
                Snooze::Park(timeout)
            }
        }
    }
}
