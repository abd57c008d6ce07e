//! The wakers of the tasks waiting for a phaser: how a `wait`, `next` or
//! `accum_next` that cannot return yet parks its task (it holds no worker
//! and no thread), and how the thread that makes the wait's condition true
//! wakes it.
//!
//! Every condition a phaser's waiters wait for only ever becomes true and
//! stays true (a phase completed, the phaser failed, its last signaler
//! left), and every change of one is followed by [`WakerList::wake_all`].
//! So one list per phaser suffices: a wake-up tells each waiter "look
//! again", and a waiter whose condition still does not hold registers
//! again.
//!
//! # Protocol (waker registration racing a wake-up)
//!
//! 1. **Check.** A waiter evaluates its condition without the lock; if it
//!    holds, it is done (the fast path).
//! 2. **Register.** Otherwise it takes the list's lock, evaluates the
//!    condition *again under the lock*, and only if it still does not hold
//!    stores its waker in a slot and keeps the slot's key (the list's
//!    current epoch and the slot's index). A later poll of the same waiter
//!    with the key of the current epoch replaces the waker in its slot
//!    (only if the task's waker changed) instead of adding one, so a
//!    waiter polled many times costs one slot.
//! 3. **Wake.** Whoever makes a condition true stores it first, then takes
//!    the lock, takes every stored waker, advances the epoch (every key
//!    handed out so far is stale: its slot is gone), releases the lock and
//!    wakes the wakers outside it.
//! 4. **Cancel.** A waiter dropped while registered (a future dropped
//!    before it completed, or one that completes after it registered)
//!    clears its slot under the lock if its key is of the current epoch;
//!    otherwise its slot was already taken in step 3. A mirror of the
//!    epoch, stored under the lock in step 3, lets a waiter whose key is
//!    already stale skip the lock (epochs only grow, so a key older than
//!    the mirror is stale for good).
//!
//! No wake-up is lost: the condition is stored before step 3 takes the
//! lock, and step 2 evaluates it under the same lock. If step 2's lock
//! comes after step 3's, it sees the condition true and does not park; if
//! it comes first, step 3 finds its waker. Modelled in `loom_tests`
//! (`loom_waiter_is_woken`, `loom_child_registration_races_with_phase`).
//!
//! # Memory ordering
//!
//! The lock orders everything: step 3's lock acquisition follows the store
//! of the condition in program order, and step 2's evaluation under a lock
//! acquired after step 3's release sees it (the mutex's release/acquire).
//! The conditions are atomics read with `Acquire` so that a waiter that
//! sees one also sees what was published with it (accumulator results).

use std::task::Waker;

use crate::sync::{lock, AtomicU64, Mutex, Ordering};

/// The identity of a registered waker: its slot in the list of one epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WaitKey {
    epoch: u64,
    index: usize,
}

#[derive(Debug, Default)]
struct Slots {
    /// Advanced by every wake-up: keys of earlier epochs are stale.
    epoch: u64,
    wakers: Vec<Option<Waker>>,
    /// Indices of cleared slots, reused before the list grows.
    free: Vec<usize>,
}

/// The parked waiters of one phaser (see the module docs).
#[derive(Debug)]
pub(crate) struct WakerList {
    slots: Mutex<Slots>,
    /// `slots.epoch`, readable without the lock (step 4).
    epoch: AtomicU64,
}

impl WakerList {
    pub(crate) fn new() -> WakerList {
        WakerList {
            slots: Mutex::new(Slots::default()),
            epoch: AtomicU64::new(0),
        }
    }

    /// Step 2: registers `waker` under `key` unless `ready()`, evaluated
    /// under the lock, holds. Returns whether it held (the waiter is done;
    /// its slot, if any, is cleared).
    pub(crate) fn register_unless(
        &self,
        key: &mut Option<WaitKey>,
        waker: &Waker,
        ready: impl FnOnce() -> bool,
    ) -> bool {
        let mut slots = lock(&self.slots);
        if ready() {
            if let Some(stale) = key.take() {
                slots.clear(stale);
            }
            return true;
        }
        let epoch = slots.epoch;
        match *key {
            Some(current) if current.epoch == epoch => {
                let slot = &mut slots.wakers[current.index];
                if !slot.as_ref().is_some_and(|stored| stored.will_wake(waker)) {
                    *slot = Some(waker.clone());
                }
            }
            _ => {
                let index = match slots.free.pop() {
                    Some(index) => {
                        slots.wakers[index] = Some(waker.clone());
                        index
                    }
                    None => {
                        slots.wakers.push(Some(waker.clone()));
                        slots.wakers.len() - 1
                    }
                };
                *key = Some(WaitKey { epoch, index });
            }
        }
        false
    }

    /// Step 4: forgets the waker registered under `key`, if still there.
    pub(crate) fn cancel(&self, key: WaitKey) {
        if key.epoch == self.epoch.load(Ordering::Acquire) {
            lock(&self.slots).clear(key);
        }
    }

    /// Step 3: wakes every registered waiter. Call after making a
    /// condition true.
    pub(crate) fn wake_all(&self) {
        let wakers = {
            let mut slots = lock(&self.slots);
            if slots.wakers.is_empty() {
                return;
            }
            slots.epoch += 1;
            self.epoch.store(slots.epoch, Ordering::Release);
            slots.free.clear();
            std::mem::take(&mut slots.wakers)
        };
        for waker in wakers.into_iter().flatten() {
            waker.wake();
        }
    }

    /// The number of registered waiters (tests).
    #[cfg(test)]
    pub(crate) fn registered(&self) -> usize {
        lock(&self.slots).wakers.iter().flatten().count()
    }
}

impl Slots {
    fn clear(&mut self, key: WaitKey) {
        if key.epoch == self.epoch && self.wakers[key.index].take().is_some() {
            self.free.push(key.index);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    struct Counter(AtomicUsize);

    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counter() -> (Arc<Counter>, Waker) {
        let counter = Arc::new(Counter(AtomicUsize::new(0)));
        (Arc::clone(&counter), Waker::from(counter))
    }

    #[test]
    fn a_waiter_polled_twice_takes_one_slot_and_is_woken_once() {
        let list = WakerList::new();
        let (count, waker) = counter();
        let mut key = None;
        assert!(!list.register_unless(&mut key, &waker, || false));
        assert!(!list.register_unless(&mut key, &waker, || false));
        assert_eq!(list.registered(), 1);
        list.wake_all();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert_eq!(list.registered(), 0);
        // The old key is stale: a new registration takes a new slot.
        assert!(!list.register_unless(&mut key, &waker, || false));
        assert_eq!(list.registered(), 1);
    }

    #[test]
    fn ready_under_the_lock_means_no_registration() {
        let list = WakerList::new();
        let (count, waker) = counter();
        let mut key = None;
        assert!(!list.register_unless(&mut key, &waker, || false));
        assert!(list.register_unless(&mut key, &waker, || true));
        assert_eq!(key, None);
        assert_eq!(list.registered(), 0);
        list.wake_all();
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_stale_key_never_clears_a_later_waiter() {
        let list = WakerList::new();
        let (count, waker) = counter();
        let (mut old, mut new) = (None, None);
        list.register_unless(&mut old, &waker, || false);
        list.wake_all();
        list.register_unless(&mut new, &waker, || false);
        assert_eq!(old.unwrap().index, new.unwrap().index);
        list.cancel(old.unwrap());
        assert_eq!(list.registered(), 1);
        list.wake_all();
        assert_eq!(count.0.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn cancelled_slots_are_reused() {
        let list = WakerList::new();
        let (_, waker) = counter();
        let (mut a, mut b) = (None, None);
        list.register_unless(&mut a, &waker, || false);
        list.register_unless(&mut b, &waker, || false);
        list.cancel(a.take().unwrap());
        assert_eq!(list.registered(), 1);
        list.register_unless(&mut a, &waker, || false);
        assert_eq!(a.unwrap().index, 0);
        assert_eq!(list.registered(), 2);
    }
}
