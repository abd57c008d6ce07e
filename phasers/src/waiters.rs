//! How a task waiting for a phase blocks: it spins briefly, then yields the
//! core, then parks its thread; the thread that completes a phase wakes
//! every parked waiter.
//!
//! # Protocol
//!
//! 1. A waiter that has backed off without seeing its condition takes the
//!    list lock, adds its thread handle and increments `parked` (`SeqCst`),
//!    releases the lock, and issues a `SeqCst` fence.
//! 2. It re-checks its condition. If it now holds, it takes itself off the
//!    list and returns.
//! 3. Otherwise it parks. A parked thread keeps one wake-up token, so an
//!    `unpark` between steps 2 and 3 is not lost. After waking it re-checks
//!    and, if the condition still does not hold (a spurious wake-up), starts
//!    again at step 1.
//! 4. A thread that makes a condition true (publishes a phase, records a
//!    failure) issues a `SeqCst` fence and reads `parked`; if non-zero it
//!    takes the whole list under the lock and unparks every thread on it.
//!
//! Steps 1–2 and 4 form a store-buffering (Dekker) pattern with `SeqCst`
//! fences on both sides: either the waker sees the waiter counted in
//! `parked`, or the waiter's re-check sees the condition. Modelled in
//! `loom_tests`.

use crate::sync::{
    current_thread, fence, lock, park, spin_hint, yield_now, AtomicUsize, Mutex, Ordering, Thread,
};

/// Busy-wait rounds before yielding (each a growing run of pause hints).
#[cfg(not(loom))]
const SPIN_ROUNDS: u32 = 6;
/// Yields before parking.
#[cfg(not(loom))]
const YIELDS: u32 = 24;
// The models go straight to the parking protocol.
#[cfg(loom)]
const SPIN_ROUNDS: u32 = 0;
#[cfg(loom)]
const YIELDS: u32 = 0;

/// Threads parked until some condition on a phaser holds.
#[derive(Debug)]
pub(crate) struct Waiters {
    list: Mutex<Vec<Thread>>,
    parked: AtomicUsize,
}

impl Waiters {
    pub(crate) fn new() -> Waiters {
        Waiters {
            list: Mutex::new(Vec::new()),
            parked: AtomicUsize::new(0),
        }
    }

    /// Blocks the calling thread until `ready()` returns true.
    // Under loom both back-off ranges are empty on purpose.
    #[cfg_attr(loom, allow(clippy::reversed_empty_ranges))]
    pub(crate) fn wait_until(&self, ready: impl Fn() -> bool) {
        for round in 0..SPIN_ROUNDS {
            if ready() {
                return;
            }
            for _ in 0..(1u32 << round) {
                spin_hint();
            }
        }
        for _ in 0..YIELDS {
            if ready() {
                return;
            }
            yield_now();
        }
        loop {
            let me = current_thread();
            {
                let mut list = lock(&self.list);
                list.push(me.clone());
                self.parked.fetch_add(1, Ordering::SeqCst);
            }
            fence(Ordering::SeqCst);
            if ready() {
                self.leave(&me);
                return;
            }
            park();
            if ready() {
                // Normally the waker took us off the list; after a spurious
                // wake-up we may still be on it.
                self.leave(&me);
                return;
            }
            self.leave(&me);
        }
    }

    fn leave(&self, me: &Thread) {
        let mut list = lock(&self.list);
        if let Some(position) = list.iter().position(|t| t.id() == me.id()) {
            list.swap_remove(position);
            self.parked.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Wakes every parked waiter (step 4). Call after making a condition true.
    pub(crate) fn wake_all(&self) {
        fence(Ordering::SeqCst);
        if self.parked.load(Ordering::SeqCst) == 0 {
            return;
        }
        let list = {
            let mut list = lock(&self.list);
            self.parked.store(0, Ordering::SeqCst);
            std::mem::take(&mut *list)
        };
        for thread in list {
            thread.unpark();
        }
    }
}
