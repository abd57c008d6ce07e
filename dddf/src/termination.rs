//! Global termination of a space's listeners.
//!
//! Each rank's listener must keep answering requests until no rank can send
//! it another message, and no rank may finalize MPI while a value it homes
//! is still owed to someone. [`DddfSpace::close`](crate::DddfSpace::close),
//! called by every rank once its own work with the space is done, decides
//! this with Mattern's counting method:
//!
//! 1. The rank marks the space closed: new handles, puts and requests are
//!    refused. From then on it only *reacts*: its listener answers requests.
//! 2. Every message of the protocol is counted: `sent` is incremented
//!    *before* the message is handed to MPI, `received` *after* the listener
//!    has fully handled it, including any reply it sent (so a reply is
//!    always counted before the request that caused it).
//! 3. Waves: the rank takes a snapshot of its two counters and all ranks sum
//!    them with a non-blocking allreduce. The space is quiescent when two
//!    consecutive waves give the same totals with `sent == received`. A
//!    wave whose totals did not move backs off (the runtime's one policy)
//!    before the next.
//! 4. Each wave also sums a "listener failed" flag: a listener that stopped
//!    on an error (an MPI error, a panicking `home`, `size` or `reader`) can never
//!    balance the counts, so every rank leaves the loop in the same wave
//!    and `close` returns the error — the failing rank's own, or
//!    [`PeerListenerFailed`](crate::DddfError::PeerListenerFailed).
//!
//! Why that is enough: an allreduce completes only after every rank has
//! contributed, so every wave-2 snapshot is taken after every wave-1
//! snapshot, and after every rank entered `close`. Equal totals in both
//! waves mean (counters only grow) that no rank's counters changed between
//! its two snapshots; so at any instant between the last wave-1 snapshot
//! and the first wave-2 snapshot every message ever sent had been handled,
//! and no rank could still produce one on its own. Nothing can then be sent
//! again. Each rank then stops its listener with a message to itself,
//! waits for its own sends to complete, and returns — no request lost, no
//! value owed, no hang while every rank calls `close`.
//!
//! A request for a guid that was never put stays unanswered: `close` lists
//! it in its [`CloseReport`](crate::CloseReport) rather than waiting for it.

use crate::sync::{lock, Mutex};

/// A rank's protocol message counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) sent: u64,
    pub(crate) received: u64,
}

/// The two counters, read together.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    counts: Mutex<Counts>,
}

impl Counters {
    /// Before a message is handed to MPI.
    pub(crate) fn message_sent(&self) {
        lock(&self.counts).sent += 1;
    }

    /// A message counted by `message_sent` could not be handed to MPI.
    pub(crate) fn message_not_sent(&self) {
        lock(&self.counts).sent -= 1;
    }

    /// After the listener has handled a message, replies included.
    pub(crate) fn message_handled(&self) {
        lock(&self.counts).received += 1;
    }

    /// Both counters at one instant.
    pub(crate) fn snapshot(&self) -> Counts {
        *lock(&self.counts)
    }
}

/// The decision over successive global sums.
#[derive(Debug, Default)]
pub(crate) struct Waves {
    previous: Option<Counts>,
}

/// What one wave showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wave {
    /// Two equal, balanced waves: done.
    Quiescent,
    /// The totals moved since the last wave: traffic is flowing.
    Changed,
    /// The same totals, not balanced: a message is in flight.
    Unchanged,
}

impl Waves {
    /// Feeds one wave's totals.
    pub(crate) fn step(&mut self, totals: Counts) -> Wave {
        let same = self.previous == Some(totals);
        self.previous = Some(totals);
        match (same, totals.sent == totals.received) {
            (true, true) => Wave::Quiescent,
            (true, false) => Wave::Unchanged,
            (false, _) => Wave::Changed,
        }
    }

    /// Feeds one wave's totals; `true` once the space is quiescent.
    #[cfg(all(test, not(loom)))]
    fn quiescent_after(&mut self, totals: Counts) -> bool {
        self.step(totals) == Wave::Quiescent
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn counts(sent: u64, received: u64) -> Counts {
        Counts { sent, received }
    }

    #[test]
    fn needs_two_equal_balanced_waves() {
        let mut waves = Waves::default();
        assert!(!waves.quiescent_after(counts(3, 3)));
        assert!(waves.quiescent_after(counts(3, 3)));

        let mut waves = Waves::default();
        assert!(!waves.quiescent_after(counts(3, 2)));
        assert!(!waves.quiescent_after(counts(4, 4)), "totals changed");
        assert!(waves.quiescent_after(counts(4, 4)));

        let mut waves = Waves::default();
        assert!(!waves.quiescent_after(counts(5, 4)));
        assert!(!waves.quiescent_after(counts(5, 4)), "a message in flight");
    }
}
