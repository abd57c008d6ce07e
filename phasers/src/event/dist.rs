//! Distributed event sets: `len` events on every rank of a communicator,
//! each reachable from every rank (CAF `event post (ev[image])`).
//!
//! # Protocol
//!
//! 1. **Creation** (collective): the communicator is duplicated
//!    (`MPI_Comm_idup`, MPI 4.0 §7.4.2), so the set's messages match nothing
//!    else, and the ranks check that they asked for the same `len`
//!    (`MPI_Allreduce`, §6.9.6, of `len` and its complement under MAX).
//!    Then the set asks the communication engine to serve its messages
//!    (`Comm::serve`).
//! 2. **Remote post** of `k` to event `i` on rank `r`: one `MPI_Isend`
//!    (§3.7.2) of the pair `(i, k)` to `r`. The sender counts the messages
//!    it sent to each rank. A post to the caller's own rank is a local post.
//! 3. **Owner**: the engine matches each incoming message
//!    (`MPI_Improbe`/`MPI_Imrecv`, §3.8.2) and runs the set's handler on
//!    the spot: it adds the pair to its event — which fires the consumers
//!    now satisfied and wakes their tasks — and counts the message as
//!    received by posting to the set's `received` event. No thread and no
//!    task stands by for messages.
//! 4. **close** (collective): each rank awaits its own sends and exchanges
//!    its per-destination send counts with `MPI_Ialltoall` (§6.9.7); each
//!    rank then knows exactly how many messages it must receive, and awaits
//!    a `wait(expected)` on `received`. Only then does it stop the service.
//!    When `close` completes on a rank, every post addressed to that rank
//!    from any rank has been applied. Posts and `close` cannot overlap on a
//!    rank: `close` takes the set by value.
//!
//! A remote post that would overflow its event cannot fail at its sender.
//! The owner then *poisons* that event: every armed and later consumer of
//! it fails with [`EventError::Poisoned`], and the owner's `close` reports
//! the overflow.
//!
//! With one rank no communicator is duplicated, nothing is served, and
//! every post is local.

use std::sync::Arc;

use hc_mpi::{Comm, Message, ReduceOp, Request, Service};

use super::{Event, EventError, EventTrigger, EventWait};
use crate::sync::{lock, AtomicU64, Mutex, Ordering};

/// The tag of every message of a set (on its own communicator).
const TAG: i32 = 0;
/// Completed sends are pruned once this many are pending.
const PRUNE_AT: usize = 256;

#[derive(Debug)]
struct Shared {
    events: Vec<Event>,
    /// One post per message applied (step 3), awaited by `close`.
    received: Event,
    /// The first error the handler met (an overflow, a bad message).
    error: Mutex<Option<EventError>>,
}

impl Shared {
    fn record(&self, error: EventError) {
        lock(&self.error).get_or_insert(error);
    }

    /// Step 3: applies one incoming post. Runs on the engine: short, and
    /// never blocks (a post only takes the event's lock).
    fn apply(&self, message: Message<u64>) {
        match message.data[..] {
            [index, k] => match usize::try_from(index).ok().and_then(|i| self.events.get(i)) {
                Some(event) => match event.post_n(k) {
                    Ok(()) | Err(EventError::Poisoned) => {}
                    Err(error) => {
                        // An overflow: the sender cannot be told.
                        event.poison();
                        self.record(error);
                    }
                },
                None => self.record(EventError::InvalidIndex {
                    index: usize::try_from(index).unwrap_or(usize::MAX),
                    len: self.events.len(),
                }),
            },
            _ => self.record(EventError::MalformedPost {
                source: message.source,
                words: message.data.len(),
            }),
        }
        // Counted whatever it held: `close` waits for messages, not posts.
        let _ = self.received.post();
    }
}

/// A distributed set of [`Event`]s: `len` on every rank, each reachable
/// from every rank. Created and closed collectively (see the module docs).
///
/// ```no_run
/// use hcmpi_phasers::DistEvents;
///
/// let hc = hc_mpi::Hcmpi::init().unwrap();
/// let events = DistEvents::create(hc.world(), 1).unwrap();
/// let next = (hc.rank() + 1) % hc.size();
/// events.post(next, 0, 1).unwrap(); // event post (ev[next])
/// hc.block_on(async {
///     events.wait(0, 1).await.unwrap(); // event wait (ev): one post arrived
///     events.close().await.unwrap();
/// });
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
    /// The engine's service of the set's messages; `None` with one rank.
    service: Option<Service>,
}

impl DistEvents {
    /// Creates `len` events on every rank of `comm`. Collective: every
    /// rank calls it with the same `len`. It blocks for the communicator's
    /// duplication and the size check: call it where a blocking
    /// collective belongs (set-up code, the main thread).
    ///
    /// # Errors
    /// [`EventError::SizeMismatch`] if the ranks' `len`s differ;
    /// [`EventError::Mpi`] if duplicating the communicator, the check or
    /// starting the service fails.
    pub fn create(comm: &Comm, len: usize) -> Result<DistEvents, EventError> {
        let shared = Arc::new(Shared {
            events: (0..len).map(|_| Event::new()).collect(),
            received: Event::new(),
            error: Mutex::new(None),
        });
        let (rank, size) = (comm.rank(), comm.size());
        let mut set = DistEvents {
            shared,
            rank,
            size,
            comm: None,
            sent: (0..size).map(|_| AtomicU64::new(0)).collect(),
            sends: Mutex::new(Vec::new()),
            service: None,
        };
        if size == 1 {
            return Ok(set);
        }
        let own = comm
            .duplicate()
            .map_err(|e| mpi_error("duplicate the communicator", None, e))?;
        let len64 = len as u64;
        let max = own
            .allreduce(vec![len64, !len64], ReduceOp::Max)
            .map_err(|e| mpi_error("MPI_Allreduce of the set sizes", None, e))?;
        if max != [len64, !len64] {
            return Err(EventError::SizeMismatch {
                len: len64,
                largest: max[0],
                smallest: !max[1],
            });
        }
        let shared = Arc::clone(&set.shared);
        let service = own
            .serve(TAG, move |message: Message<u64>| shared.apply(message))
            .map_err(|e| mpi_error("serve the set's messages", None, e))?;
        set.comm = Some(own);
        set.service = Some(service);
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
            .map_err(|e| mpi_error("MPI_Isend", Some(rank), e))?;
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
            self.shared.record(mpi_error("MPI_Isend", Some(dest), e));
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
    /// (From the future.) [`EventError::InvalidIndex`], or as
    /// [`Event::wait`].
    pub fn wait(&self, index: usize, n: u64) -> EventWait {
        match self.local(index) {
            Ok(event) => event.wait(n),
            Err(error) => EventWait::refused(error),
        }
    }

    /// [`Event::wait_blocking`] on this rank's event `index`, for a thread
    /// that is not a computation worker.
    ///
    /// # Errors
    /// [`EventError::InvalidIndex`], or as [`Event::wait_blocking`].
    pub fn wait_blocking(&self, index: usize, n: u64) -> Result<(), EventError> {
        self.local(index)?.wait_blocking(n)
    }

    /// [`Event::when`] on this rank's event `index`.
    ///
    /// # Errors
    /// [`EventError::InvalidIndex`], or as [`Event::when`].
    pub fn when(&self, index: usize, n: u64) -> Result<EventTrigger, EventError> {
        self.local(index)?.when(n)
    }

    /// Closes the set (collective): completes once every post addressed to
    /// this rank, from any rank, has been applied, then stops serving the
    /// set's messages. The local events stay readable through clones taken
    /// with [`local`](Self::local).
    ///
    /// # Errors
    /// The first error met: a failed send or exchange, or a remote post
    /// that overflowed an event of this rank.
    pub async fn close(mut self) -> Result<(), EventError> {
        let result = self.drain().await;
        // Dropping the service stops it without waiting (`Service::stop`
        // blocks); every message it was to serve has been applied. An
        // engine failure that stopped it is reported here.
        let stopped = self
            .service
            .take()
            .and_then(|service| service.failure())
            .map_or(Ok(()), |e| Err(mpi_error("serve", None, e)));
        let result = result.and(stopped);
        let recorded = lock(&self.shared.error).take();
        result.and(recorded.map_or(Ok(()), Err))
    }

    /// Step 4: awaits the sends, exchanges the counts, awaits the posts.
    async fn drain(&self) -> Result<(), EventError> {
        let Some(comm) = &self.comm else {
            return Ok(());
        };
        let pending = std::mem::take(&mut *lock(&self.sends));
        for (dest, request) in pending {
            let outcome = request.await.map(|_| ());
            self.sent_outcome(dest, outcome);
        }
        let counts: Vec<u64> = self
            .sent
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        let (incoming, _) = comm
            .ialltoall(counts, 1)
            .map_err(|e| mpi_error("MPI_Ialltoall of the post counts", None, e))?
            .await
            .map_err(|e| mpi_error("MPI_Ialltoall of the post counts", None, e))?;
        let expected: u64 = incoming.iter().sum();
        if expected > 0 {
            self.shared.received.wait(expected).await?;
        }
        Ok(())
    }
}

/// An [`EventError::Mpi`] for `what` (with `peer`), caused by `source`.
fn mpi_error(what: &'static str, peer: Option<i32>, source: hc_mpi::Error) -> EventError {
    EventError::Mpi { what, peer, source }
}
