//! Distributed event sets: `len` events on every rank of a communicator,
//! each reachable from every rank (CAF `event post (ev[image])`).
//!
//! # Protocol
//!
//! * **Creation** (collective): the communicator is duplicated
//!   (`MPI_Comm_idup`, MPI 4.0 §7.4.2), so the set's messages match nothing
//!   else, and the ranks check that they asked for the same `len`
//!   (`MPI_Allreduce`, §6.9.6, of `len` and its complement under MAX).
//! * **Remote post** of `k` to event `i` on rank `r`: one `MPI_Isend`
//!   (§3.7.2) of the pair `(i, k)` to `r`. The sender counts the messages
//!   it sent to each rank. A post to the caller's own rank is a local post.
//! * **Owner**: a listener thread of the set keeps one standing
//!   `MPI_Irecv` (§3.7.2, any source) posted. It waits for it by parking
//!   (it is no computation worker and belongs to no finish), adds each
//!   pair to its event — which fires the consumers now satisfied and
//!   releases their tasks — counts the message as received, and re-posts
//!   the receive.
//! * **close** (collective): each rank waits for its own sends to complete
//!   and exchanges its per-destination send counts with `MPI_Alltoall`
//!   (§6.9.7); each rank then knows exactly how many messages it must still
//!   receive, waits (spin, yield, park) until its listener has applied
//!   them all, and stops the listener with a message to itself. When
//!   `close` returns on a rank, every post addressed to that rank from any
//!   rank has been applied. Posts and `close` cannot overlap on a rank:
//!   `close` takes the set by value.
//!
//! A remote post that would overflow its event cannot fail at its sender.
//! The owner then *poisons* that event: every armed and later consumer of
//! it fails with [`EventError::Poisoned`], and the owner's `close` reports
//! the overflow.
//!
//! With one rank no communicator is duplicated, no listener is started,
//! and every post is local.

use std::sync::Arc;
use std::thread::JoinHandle;

use hc_mpi::{Comm, ReduceOp, Request, ANY_SOURCE};

use super::{Event, EventError};
use crate::sync::{lock, AtomicBool, AtomicU64, Mutex, Ordering};
use crate::waiters::Waiters;

/// The tag of every message of a set (on its own communicator).
const TAG: i32 = 0;
/// The event index of the message that stops a listener.
const STOP: u64 = u64::MAX;
/// Completed sends are pruned once this many are pending.
const PRUNE_AT: usize = 256;

#[derive(Debug)]
struct Shared {
    events: Vec<Event>,
    /// Messages applied by the listener.
    received: AtomicU64,
    /// Set when the listener has exited.
    listener_done: AtomicBool,
    /// The first error the listener met (an overflow, an MPI failure).
    error: Mutex<Option<EventError>>,
    /// Where `close` waits for the listener.
    waiters: Waiters,
}

impl Shared {
    fn record(&self, error: EventError) {
        lock(&self.error).get_or_insert(error);
    }
}

/// A distributed set of [`Event`]s: `len` on every rank, each reachable
/// from every rank. Created and closed collectively (see the module docs).
///
/// ```no_run
/// use phasers::DistEvents;
///
/// let hc = hc_mpi::Hcmpi::init().unwrap();
/// let events = DistEvents::create(hc.world(), 1).unwrap();
/// let next = (hc.rank() + 1) % hc.size();
/// events.post(next, 0, 1).unwrap(); // event post (ev[next])
/// events.wait(0, 1).unwrap();       // event wait (ev): one post arrived
/// events.close().unwrap();
/// ```
#[derive(Debug)]
pub struct DistEvents {
    shared: Arc<Shared>,
    rank: i32,
    size: i32,
    /// The set's own communicator; `None` with one rank.
    comm: Option<Comm>,
    /// Messages sent to each rank.
    sent: Vec<AtomicU64>,
    /// Sends not known to be complete, with their destination.
    sends: Mutex<Vec<(i32, Request<Vec<u64>>)>>,
    listener: Option<JoinHandle<()>>,
}

impl DistEvents {
    /// Creates `len` events on every rank of `comm`. Collective: every
    /// rank calls it with the same `len`.
    ///
    /// # Errors
    /// [`EventError::Config`] if the ranks' `len`s differ;
    /// [`EventError::Mpi`] if duplicating the communicator or the check
    /// fails, or the listener thread cannot start.
    pub fn create(comm: &Comm, len: usize) -> Result<DistEvents, EventError> {
        let shared = Arc::new(Shared {
            events: (0..len).map(|_| Event::new()).collect(),
            received: AtomicU64::new(0),
            listener_done: AtomicBool::new(false),
            error: Mutex::new(None),
            waiters: Waiters::new(),
        });
        let (rank, size) = (comm.rank(), comm.size());
        let mut set = DistEvents {
            shared,
            rank,
            size,
            comm: None,
            sent: (0..size).map(|_| AtomicU64::new(0)).collect(),
            sends: Mutex::new(Vec::new()),
            listener: None,
        };
        if size == 1 {
            return Ok(set);
        }
        let own = comm
            .duplicate()
            .map_err(|e| EventError::Mpi(format!("cannot duplicate the communicator: {e}")))?;
        let len64 = len as u64;
        let max = own
            .allreduce(vec![len64, !len64], ReduceOp::Max)
            .map_err(|e| EventError::Mpi(format!("MPI_Allreduce: {e}")))?;
        if max != [len64, !len64] {
            return Err(EventError::Config(format!(
                "ranks created sets of different sizes (this rank: {len}, largest: {}, smallest: {})",
                max[0], !max[1]
            )));
        }
        let listener = {
            let shared = Arc::clone(&set.shared);
            let comm = own.clone();
            std::thread::Builder::new()
                .name("hc-events".into())
                .spawn(move || listen(&shared, &comm, rank))
                .map_err(|e| EventError::Mpi(format!("cannot start the listener: {e}")))?
        };
        set.comm = Some(own);
        set.listener = Some(listener);
        Ok(set)
    }

    /// Events per rank.
    pub fn len(&self) -> usize {
        self.shared.events.len()
    }

    /// Whether the set has no events.
    pub fn is_empty(&self) -> bool {
        self.shared.events.is_empty()
    }

    /// This rank's event `index`.
    ///
    /// # Errors
    /// [`EventError::InvalidIndex`].
    pub fn local(&self, index: usize) -> Result<&Event, EventError> {
        self.shared
            .events
            .get(index)
            .ok_or(EventError::InvalidIndex {
                index,
                len: self.len(),
            })
    }

    /// Adds `k` to event `index` on rank `rank` (`event post (ev[rank])`).
    /// A remote post returns once the message is queued; the owner applies
    /// it when it arrives.
    ///
    /// # Errors
    /// [`EventError::InvalidRank`], [`EventError::InvalidIndex`],
    /// [`EventError::ZeroCount`]; for a local post, as [`Event::post_n`];
    /// for a remote one, [`EventError::Mpi`] if the send cannot be started.
    pub fn post(&self, rank: i32, index: usize, k: u64) -> Result<(), EventError> {
        if rank < 0 || rank >= self.size {
            return Err(EventError::InvalidRank {
                rank,
                size: self.size,
            });
        }
        let event = self.local(index)?;
        if k == 0 {
            return Err(EventError::ZeroCount { op: "post" });
        }
        let comm = match &self.comm {
            Some(comm) if rank != self.rank => comm,
            _ => return event.post_n(k),
        };
        // A standing operation of the set, not of the poster's finish:
        // `close` waits for it.
        let request = hc_runtime::outside_finish(|| comm.isend(vec![index as u64, k], rank, TAG))
            .map_err(|e| EventError::Mpi(format!("MPI_Isend: {e}")))?;
        self.sent[rank as usize].fetch_add(1, Ordering::Relaxed);
        let mut sends = lock(&self.sends);
        sends.push((rank, request));
        if sends.len() >= PRUNE_AT {
            let pending = std::mem::take(&mut *sends);
            for (dest, request) in pending {
                match request.try_wait() {
                    Err(request) => sends.push((dest, request)),
                    Ok(outcome) => self.sent_outcome(dest, outcome.map(|_| ())),
                }
            }
        }
        Ok(())
    }

    /// Accounts for a completed send: a failed one was never delivered.
    fn sent_outcome(&self, dest: i32, outcome: Result<(), hc_mpi::Error>) {
        if let Err(e) = outcome {
            self.sent[dest as usize].fetch_sub(1, Ordering::Relaxed);
            self.shared
                .record(EventError::Mpi(format!("MPI_Isend to rank {dest}: {e}")));
        }
    }

    /// [`Event::query`] of this rank's event `index`.
    ///
    /// # Errors
    /// [`EventError::InvalidIndex`].
    pub fn query(&self, index: usize) -> Result<u64, EventError> {
        Ok(self.local(index)?.query())
    }

    /// [`Event::wait`] on this rank's event `index` (CAF events are waited
    /// on only by their owner).
    ///
    /// # Errors
    /// [`EventError::InvalidIndex`], or as [`Event::wait`].
    pub fn wait(&self, index: usize, n: u64) -> Result<(), EventError> {
        self.local(index)?.wait(n)
    }

    /// [`Event::when`] on this rank's event `index`.
    ///
    /// # Errors
    /// [`EventError::InvalidIndex`], or as [`Event::when`].
    pub fn when(&self, index: usize, n: u64) -> Result<super::EventTrigger, EventError> {
        self.local(index)?.when(n)
    }

    /// Closes the set (collective): returns once every post addressed to
    /// this rank, from any rank, has been applied, then stops the listener.
    /// The local events stay readable through clones taken with
    /// [`local`](Self::local).
    ///
    /// # Errors
    /// The first error met: a failed send or receive, or a remote post that
    /// overflowed an event of this rank.
    pub fn close(mut self) -> Result<(), EventError> {
        let result = self.drain();
        self.stop_listener();
        let recorded = lock(&self.shared.error).take();
        result.and(recorded.map_or(Ok(()), Err))
    }

    fn drain(&self) -> Result<(), EventError> {
        let Some(comm) = &self.comm else {
            return Ok(());
        };
        let pending = std::mem::take(&mut *lock(&self.sends));
        for (dest, request) in pending {
            self.sent_outcome(dest, request.wait().map(|_| ()));
        }
        let counts: Vec<u64> = self
            .sent
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        let incoming = comm
            .alltoall(counts, 1)
            .map_err(|e| EventError::Mpi(format!("MPI_Alltoall: {e}")))?;
        let expected: u64 = incoming.iter().sum();
        let shared = &self.shared;
        shared.waiters.wait_until(|| {
            shared.received.load(Ordering::SeqCst) >= expected
                || shared.listener_done.load(Ordering::SeqCst)
        });
        let received = shared.received.load(Ordering::SeqCst);
        if received != expected {
            return Err(EventError::Mpi(format!(
                "the listener stopped after {received} of {expected} posts"
            )));
        }
        Ok(())
    }

    /// Stops the listener with a message to this rank and joins it.
    fn stop_listener(&mut self) {
        let Some(listener) = self.listener.take() else {
            return;
        };
        if let Some(comm) = &self.comm {
            if !self.shared.listener_done.load(Ordering::SeqCst) {
                let stop = hc_runtime::outside_finish(|| comm.isend(vec![STOP, 0], self.rank, TAG));
                match stop.map(|r| r.wait()) {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) | Err(e) => {
                        self.shared
                            .record(EventError::Mpi(format!("stopping the listener: {e}")));
                        // The listener cannot be told to stop; leave it
                        // parked rather than wait forever.
                        return;
                    }
                }
            }
        }
        if listener.join().is_err() {
            self.shared
                .record(EventError::Mpi("the listener panicked".into()));
        }
    }
}

impl Drop for DistEvents {
    /// Without [`close`](DistEvents::close), posts still in flight to this
    /// rank are lost; the listener is stopped all the same.
    fn drop(&mut self) {
        self.stop_listener();
    }
}

/// The owner's side: apply every incoming post until told to stop.
fn listen(shared: &Shared, comm: &Comm, rank: i32) {
    loop {
        let message = comm
            .irecv(vec![0u64; 2], ANY_SOURCE, TAG)
            .and_then(|request| request.wait());
        let (pair, status) = match message {
            Ok(received) => received,
            Err(e) => {
                shared.record(EventError::Mpi(format!("MPI_Irecv: {e}")));
                break;
            }
        };
        let (index, k) = match pair[..] {
            [index, k] => (index, k),
            _ => {
                shared.record(EventError::Mpi(format!(
                    "malformed post of {} words from rank {}",
                    pair.len(),
                    status.source
                )));
                break;
            }
        };
        if index == STOP && status.source == rank {
            break;
        }
        match usize::try_from(index)
            .ok()
            .and_then(|i| shared.events.get(i))
        {
            Some(event) => match event.post_n(k) {
                Ok(()) | Err(EventError::Poisoned) => {}
                Err(e) => {
                    // An overflow: the sender cannot be told.
                    event.poison();
                    shared.record(e);
                }
            },
            None => shared.record(EventError::InvalidIndex {
                index: index as usize,
                len: shared.events.len(),
            }),
        }
        shared.received.fetch_add(1, Ordering::SeqCst);
        shared.waiters.wake_all();
    }
    shared.listener_done.store(true, Ordering::SeqCst);
    shared.waiters.wake_all();
}
