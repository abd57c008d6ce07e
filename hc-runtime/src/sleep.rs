//! How idle computation workers go to sleep and are woken.
//!
//! A worker that finds no work backs off (spin, then yield: the runtime's
//! [`Backoff`](crate::Backoff)) and then parks on its own
//! [`Parker`](crossbeam_utils::sync::Parker). An idle runtime therefore burns
//! no CPU. While the runtime's poller has work in flight, the park has a
//! timeout, so that the worker comes back to poll.
//!
//! # Protocol
//!
//! 1. The sleeper adds its index to the idle list and increments `num_idle`
//!    (`SeqCst`), then issues the heavy side of an asymmetric barrier
//!    (see `barrier`: `membarrier(2)`, or a `SeqCst` fence without it).
//! 2. It re-checks for work (and for its own wake-up condition, e.g. a finish
//!    latch). If there is any, it takes itself off the idle list and returns.
//! 3. Otherwise it parks — for a bounded time if the poller has work in
//!    flight (read after the fence, so a submission that makes work appear
//!    either is seen here or sees this worker idle in step 4). A parker
//!    keeps one wake-up token, so an `unpark` that lands between steps 2
//!    and 3 is not lost.
//! 4. A thread that publishes work (deque push, injector push, DDF release)
//!    issues the light side of the barrier (a compiler barrier where the
//!    heavy side is a membarrier) and reads `num_idle`; if it is non-zero it
//!    pops one idle index and unparks that worker.
//!
//! Steps 1–2 and 4 are the two halves of a store-buffering (Dekker) pattern
//! with a full barrier on both sides (the light one made full by the heavy
//! one): either the publisher sees the sleeper in `num_idle`, or the
//! sleeper's re-check sees the published work. The asymmetry puts the cost
//! on the rare side: a publication is every spawn, a park is a worker with
//! nothing to do. A finish
//! owner is woken directly by index (`wake_worker`), which needs no fence
//! because the parker token alone prevents the lost wake-up.
//!
//! 5. A sleeper that a publisher woke (it was taken off the idle list in
//!    step 4) owes the publisher a look for work. If it leaves its wait
//!    without taking any (its own condition came true meanwhile: a finish
//!    owner whose latch just completed), it passes the wake-up on to
//!    another idle worker while work is visible or the poll duty is vacant
//!    (a holder handing the duty over wakes a worker the same way);
//!    otherwise the published job, or the poller's progress, could wait
//!    while every other worker stays parked.
//!
//! Spurious wake-ups (a token left by a wake for a worker that had already
//! found work) only cost one more pass through the idle loop.

use std::sync::Mutex;
use std::time::Duration;

use crossbeam_utils::sync::{Parker, Unparker};

// Parking is outside the loom models (crossbeam parkers are not loom-aware),
// so this module takes std atomics directly.
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::barrier;

#[derive(Debug)]
pub(crate) struct Sleep {
    idle: Mutex<Vec<usize>>,
    num_idle: AtomicUsize,
    unparkers: Vec<Unparker>,
}

impl Sleep {
    pub(crate) fn new(unparkers: Vec<Unparker>) -> Sleep {
        Sleep {
            idle: Mutex::new(Vec::with_capacity(unparkers.len())),
            num_idle: AtomicUsize::new(0),
            unparkers,
        }
    }

    /// Parks worker `index` unless `should_stay_awake` says otherwise after it
    /// has announced itself idle (steps 1–3 of the protocol); `timeout`, read
    /// after the announcement, bounds the park. Returns whether a publisher
    /// woke it (step 5: the worker then owes a look for work).
    #[must_use = "a worker woken by a publisher owes it a look for work"]
    pub(crate) fn sleep(
        &self,
        index: usize,
        parker: &Parker,
        should_stay_awake: impl FnOnce() -> bool,
        timeout: impl FnOnce() -> Option<Duration>,
    ) -> bool {
        {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.push(index);
            self.num_idle.fetch_add(1, Ordering::SeqCst);
        }
        barrier::heavy();
        if !should_stay_awake() {
            match timeout() {
                Some(timeout) => parker.park_timeout(timeout),
                None => parker.park(),
            }
        }
        !self.leave_idle_list(index)
    }

    /// Takes worker `index` off the idle list; `false` if a publisher had
    /// already taken it off (step 4).
    fn leave_idle_list(&self, index: usize) -> bool {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        match idle.iter().position(|&i| i == index) {
            Some(position) => {
                idle.swap_remove(position);
                self.num_idle.fetch_sub(1, Ordering::SeqCst);
                true
            }
            None => false,
        }
    }

    /// Wakes one idle worker, if any (step 4). Call after publishing work.
    #[inline]
    pub(crate) fn wake_one(&self) {
        barrier::light();
        if self.num_idle.load(Ordering::Relaxed) != 0 {
            self.wake_one_idle();
        }
    }

    #[cold]
    fn wake_one_idle(&self) {
        let woken = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            let woken = idle.pop();
            if woken.is_some() {
                self.num_idle.fetch_sub(1, Ordering::SeqCst);
            }
            woken
        };
        if let Some(index) = woken {
            self.unparkers[index].unpark();
        }
    }

    /// The unparker of worker `index` (a blocking wait's waiter).
    pub(crate) fn unparker(&self, index: usize) -> Unparker {
        self.unparkers[index].clone()
    }

    /// Wakes a specific worker (a finish owner whose latch completed).
    pub(crate) fn wake_worker(&self, index: usize) {
        self.unparkers[index].unpark();
    }

    /// Wakes every worker (shutdown).
    pub(crate) fn wake_all(&self) {
        for unparker in &self.unparkers {
            unparker.unpark();
        }
    }
}
