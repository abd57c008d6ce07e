//! The home side of one guid: which ranks asked for its value, and whether
//! it has been put.
//!
//! # Put / request race
//!
//! A put (on a computation worker) and a request from another rank (on the
//! listener) can happen at the same time. Both take the same lock:
//!
//! * **put**: under the lock, publish the value, mark the guid put, and take
//!   the list of ranks waiting for it, with the guid's pushed reader (if the
//!   space has one for it and it is not already on the list). After
//!   unlocking, send the value to each of them.
//! * **request** from rank `r`: under the lock, if the guid is put, `r` is
//!   served at once (the value is already published, so the caller can read
//!   and send it); otherwise `r` joins the waiting list, and the put will
//!   serve it.
//!
//! Every request is therefore served exactly once — by the put or by the
//! request itself, never both, never neither — and a rank that asks twice
//! is served once (at most one transfer per guid and rank). The pushed
//! reader is served by the put, and is `served` from then on, so a request
//! of its own (it sends none) would not bring a second copy. Modelled in
//! `loom_tests`.

use crate::sync::{lock, Mutex};

/// What the listener should do about a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RequestOutcome {
    /// The value is published: send it now.
    SendNow,
    /// Not put yet: the put will send it.
    Deferred,
    /// This rank already asked; nothing to send (a protocol violation).
    Duplicate,
}

/// Interest of other ranks in one guid homed here.
#[derive(Debug, Default)]
pub(crate) struct HomeInterest {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    put: bool,
    /// Ranks that asked before the put.
    waiting: Vec<i32>,
    /// Ranks that were (or are about to be) sent the value.
    served: Vec<i32>,
}

impl HomeInterest {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Runs `publish` (which stores and publishes the value) under the lock
    /// and returns the ranks to send the value to: those that asked, and
    /// `pushed`, the rank the value goes to unasked; `None`, without calling
    /// `publish`, if the guid was already put.
    pub(crate) fn put(&self, pushed: Option<i32>, publish: impl FnOnce()) -> Option<Vec<i32>> {
        let mut state = lock(&self.state);
        if state.put {
            return None;
        }
        publish();
        state.put = true;
        let mut send = std::mem::take(&mut state.waiting);
        if let Some(reader) = pushed.filter(|r| !send.contains(r)) {
            send.push(reader);
        }
        state.served.extend_from_slice(&send);
        Some(send)
    }

    /// Records a request from `rank`.
    pub(crate) fn request(&self, rank: i32) -> RequestOutcome {
        let mut state = lock(&self.state);
        if state.served.contains(&rank) || state.waiting.contains(&rank) {
            return RequestOutcome::Duplicate;
        }
        if state.put {
            state.served.push(rank);
            RequestOutcome::SendNow
        } else {
            state.waiting.push(rank);
            RequestOutcome::Deferred
        }
    }

    /// Ranks still waiting for a value that was never put.
    pub(crate) fn waiting(&self) -> Vec<i32> {
        lock(&self.state).waiting.clone()
    }
}
