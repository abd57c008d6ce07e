//! The user's handles: the accumulator of a rank ([`StaleAccum`]), its
//! members ([`Member`]), and the future a member waits with.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::reduction::Reduction;
use super::window::{Effects, TreePos, Window};
use super::SspError;
use crate::accum::AccumValue;
use crate::sync::{lock, AtomicBool, AtomicU64, Mutex, Ordering};
use crate::wakers::{WaitKey, WakerList};

#[cfg(feature = "mpi")]
use super::links::Links;

/// How far a member may run ahead of the slowest contributor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Staleness {
    /// Stale-synchronous: after contributing to phase `p`, a member goes on
    /// once phase `p - k` is complete everywhere, so it reads a result at
    /// most `k` phases old and runs at most `k` phases ahead of anyone.
    /// `Bounded(0)` is the strict accumulator.
    Bounded(u64),
    /// Eventually consistent: a member never waits; it reads the newest
    /// complete result. A rank keeps every phase it has not reduced yet, so
    /// memory grows with how far the fastest member runs ahead.
    Eventual,
}

impl Staleness {
    /// Results each rank keeps for [`StaleAccum::result`]: enough that a
    /// member can read phase `p - k` at phase `p` while the slowest member
    /// of its rank may still read it too.
    ///
    /// ```
    /// use hcmpi_phasers::Staleness;
    ///
    /// assert_eq!(Staleness::Bounded(2).kept(), 6);
    /// assert_eq!(Staleness::Eventual.kept(), 64);
    /// ```
    pub fn kept(self) -> usize {
        match self {
            Staleness::Bounded(k) => usize::try_from(k)
                .ok()
                .and_then(|k| k.checked_mul(2))
                .and_then(|k| k.checked_add(2))
                .unwrap_or(usize::MAX)
                .min(1 << 16),
            Staleness::Eventual => 64,
        }
    }

    /// The bound `k`, if any.
    ///
    /// ```
    /// assert_eq!(hcmpi_phasers::Staleness::Bounded(3).bound(), Some(3));
    /// ```
    pub fn bound(self) -> Option<u64> {
        match self {
            Staleness::Bounded(k) => Some(k),
            Staleness::Eventual => None,
        }
    }

    #[cfg(feature = "mpi")]
    fn fingerprint(self) -> u64 {
        self.bound().unwrap_or(u64::MAX)
    }
}

/// A result that says which phase it reflects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot<V> {
    /// The phase whose contributions it reduces.
    pub phase: u64,
    /// The reduction of every contribution to that phase, on every rank.
    pub value: V,
}

/// One rank's state, shared by its handle, its members and the engine's
/// handler of its messages.
#[derive(Debug)]
struct Shared<V> {
    window: Mutex<Window<V>>,
    /// `window.published`, for waiters that do not take the lock.
    published: AtomicU64,
    /// `window.ended` (`u64::MAX`: not ended).
    ended: AtomicU64,
    failed: AtomicBool,
    failure: Mutex<Option<SspError>>,
    /// The [`StaleAccum`] was dropped without `close`: after a failure
    /// nobody else stops the service.
    abandoned: AtomicBool,
    wakers: WakerList,
    #[cfg(feature = "mpi")]
    links: Option<Links>,
}

impl<V: AccumValue> Shared<V> {
    fn new(window: Window<V>) -> Shared<V> {
        Shared {
            window: Mutex::new(window),
            published: AtomicU64::new(0),
            ended: AtomicU64::new(u64::MAX),
            failed: AtomicBool::new(false),
            failure: Mutex::new(None),
            abandoned: AtomicBool::new(false),
            wakers: WakerList::new(),
            #[cfg(feature = "mpi")]
            links: None,
        }
    }

    /// Runs `change` on the window and carries out its effects (protocol
    /// steps 3–5): the sends, in order and under the lock; then the new
    /// conditions, stored before the waiters are woken.
    fn update<R>(&self, change: impl FnOnce(&mut Window<V>, &mut Effects) -> R) -> R {
        let mut fx = Effects::default();
        let (result, published, ended, send_failure) = {
            let mut window = lock(&self.window);
            let result = change(&mut window, &mut fx);
            let send_failure = self.send_all(&mut fx).err();
            if send_failure.is_some() {
                // The protocol cannot go on here: tell the other ranks
                // (best effort: the link may be what failed).
                window.fail(&mut fx);
                let _ = self.send_all(&mut fx);
            }
            (result, window.published(), window.ended(), send_failure)
        };
        if let Some(error) = send_failure {
            self.record(error);
        }
        if let Some(origin) = fx.peer_failed {
            self.record(SspError::PeerFailed { rank: origin });
        }
        if self.failed.load(Ordering::Acquire) && self.abandoned.load(Ordering::Acquire) {
            let _ = self.stop_serving();
        }
        if fx.published {
            // Two updates may leave the lock in one order and get here in
            // the other: the mirror only grows.
            self.published.fetch_max(published, Ordering::SeqCst);
        }
        if let (true, Some(end)) = (fx.ended, ended) {
            self.ended.store(end, Ordering::SeqCst);
            if let Err(error) = self.stop_serving() {
                // Ended: nobody to tell.
                self.record(error);
            }
        }
        if fx.published || fx.ended {
            self.wakers.wake_all();
        }
        #[cfg(feature = "mpi")]
        if let Some(Err(error)) = self.links.as_ref().map(Links::prune) {
            self.fail(error);
        }
        result
    }

    /// [`update`](Self::update) with a change that may run the user's
    /// reduction on a member's task: if it panics, the accumulator fails
    /// on every rank (the window may be half changed) before the panic
    /// goes on.
    fn update_combining<R>(&self, change: impl FnOnce(&mut Window<V>, &mut Effects) -> R) -> R {
        match std::panic::catch_unwind(AssertUnwindSafe(|| self.update(change))) {
            Ok(result) => result,
            Err(panic) => {
                self.fail(SspError::ReductionPanicked);
                std::panic::resume_unwind(panic)
            }
        }
    }

    /// Starts `fx`'s sends in order; the first failure, after trying all.
    fn send_all(&self, fx: &mut Effects) -> Result<(), SspError> {
        let mut failure = Ok(());
        for (dest, wire) in fx.sends.drain(..) {
            if let Err(error) = self.send(dest, wire) {
                failure = failure.and(Err(error));
            }
        }
        failure
    }

    /// The accumulator failed on this rank with `error`: records it and
    /// fails it on every rank (protocol step 8).
    fn fail(&self, error: SspError) {
        self.record(error);
        self.update(|w, fx| w.fail(fx));
    }

    /// Leaked members (step 8): they can never contribute, so every rank
    /// would wait for them forever.
    fn fail_if_leaked(&self) {
        let leaked = lock(&self.window).live();
        if leaked > 0 {
            self.fail(SspError::MembersLeaked { count: leaked });
        }
    }

    #[cfg(feature = "mpi")]
    fn send(&self, dest: i32, wire: super::window::Wire) -> Result<(), SspError> {
        match &self.links {
            Some(links) => links.send(dest, wire),
            None => unreachable!("a rank without links has no parent and no children"),
        }
    }

    #[cfg(not(feature = "mpi"))]
    fn send(&self, _dest: i32, _wire: super::window::Wire) -> Result<(), SspError> {
        unreachable!("a rank without links has no parent and no children")
    }

    fn stop_serving(&self) -> Result<(), SspError> {
        #[cfg(feature = "mpi")]
        if let Some(links) = &self.links {
            return links.stop_serving();
        }
        Ok(())
    }

    /// Records the first failure and releases every waiter.
    fn record(&self, error: SspError) {
        lock(&self.failure).get_or_insert(error);
        self.failed.store(true, Ordering::SeqCst);
        self.wakers.wake_all();
    }

    fn failure(&self) -> Option<SspError> {
        if self.failed.load(Ordering::Acquire) {
            lock(&self.failure).clone()
        } else {
            None
        }
    }

    /// How a wait for `phase` to be complete ends, if it can end now.
    fn outcome(&self, phase: u64) -> Option<Result<(), SspError>> {
        if self.published.load(Ordering::Acquire) > phase {
            return Some(Ok(()));
        }
        if let Some(error) = self.failure() {
            return Some(Err(error));
        }
        let end = self.ended.load(Ordering::Acquire);
        (end <= phase).then_some(Err(SspError::Closed { phase, end }))
    }

    fn latest(&self) -> Option<Snapshot<V>> {
        lock(&self.window)
            .latest()
            .map(|(phase, value)| Snapshot { phase, value })
    }

    fn result(&self, phase: u64) -> Result<Snapshot<V>, SspError> {
        let value = lock(&self.window).result(phase)?;
        Ok(Snapshot { phase, value })
    }
}

/// A stale-synchronous or eventually-consistent accumulator: one per rank,
/// reducing the contributions of its members (tasks) on every rank, phase
/// by phase. See [the module docs](crate::ssp) for the semantics and the
/// protocol.
///
/// Members borrow it, so [`close`](Self::close) — which takes it by value —
/// can only be called once every member of the rank is gone:
///
/// ```compile_fail
/// use hcmpi_phasers::{AccumOp, Reduction, StaleAccum, Staleness};
///
/// let acc = StaleAccum::local(Reduction::<i64>::op(AccumOp::Sum).unwrap(), Staleness::Bounded(1));
/// let member = acc.join();
/// hc_runtime::Runtime::new().block_on(acc.close()); // `member` still borrows `acc`
/// drop(member);
/// ```
#[derive(Debug)]
pub struct StaleAccum<V: AccumValue> {
    shared: Arc<Shared<V>>,
    staleness: Staleness,
    closed: bool,
}

impl<V: AccumValue> StaleAccum<V> {
    /// An accumulator within this rank: its members are this process's
    /// tasks.
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Reduction, Snapshot, StaleAccum, Staleness};
    ///
    /// let acc = StaleAccum::local(Reduction::op(AccumOp::Sum).unwrap(), Staleness::Bounded(0));
    /// hc_runtime::finish(|s| {
    ///     // Join both before either contributes: both count in phase 0.
    ///     let (mut a, mut b) = (acc.join(), acc.join());
    ///     s.spawn_future(async move {
    ///         assert_eq!(a.advance(1i64).await.unwrap().unwrap().value, 3);
    ///     });
    ///     s.spawn_future(async move {
    ///         assert_eq!(b.advance(2).await.unwrap().unwrap().value, 3);
    ///     });
    /// });
    /// assert_eq!(acc.latest(), Some(Snapshot { phase: 0, value: 3 }));
    /// hc_runtime::Runtime::new().block_on(acc.close()).unwrap();
    /// ```
    pub fn local(reduction: Reduction<V>, staleness: Staleness) -> StaleAccum<V> {
        let window = Window::new(reduction, TreePos::binomial(0, 1), staleness.kept());
        StaleAccum {
            shared: Arc::new(Shared::new(window)),
            staleness,
            closed: false,
        }
    }

    /// An accumulator over every rank of `comm`: collective, every rank
    /// passes the same reduction and staleness. The staleness, the
    /// operation (for a user reduction: its name and identity; functions
    /// cannot be compared) and the value size are checked. Blocks for the
    /// communicator's duplication and the check: call it where a blocking
    /// collective belongs (set-up code, the main thread).
    ///
    /// ```no_run
    /// use hcmpi_phasers::{AccumOp, Reduction, StaleAccum, Staleness};
    ///
    /// let hc = hc_mpi::Hcmpi::init().unwrap();
    /// let acc = StaleAccum::create(hc.world(), Reduction::op(AccumOp::Max).unwrap(), Staleness::Bounded(2))
    ///     .unwrap();
    /// hc.block_on(async {
    ///     let mut member = acc.join();
    ///     for step in 0..10u64 {
    ///         // Goes on once phase step - 2 is complete on every rank.
    ///         let seen = member.advance(step * hc.rank() as u64).await.unwrap();
    ///         assert!(seen.is_some_and(|s| s.phase + 2 >= step));
    ///     }
    /// });
    /// hc.block_on(acc.close()).unwrap();
    /// ```
    ///
    /// # Errors
    /// [`SspError::Mismatch`] if the ranks' settings differ;
    /// [`SspError::Mpi`] if the duplication, the check or the service
    /// fails.
    #[cfg(feature = "mpi")]
    pub fn create(
        comm: &hc_mpi::Comm,
        reduction: Reduction<V>,
        staleness: Staleness,
    ) -> Result<StaleAccum<V>, SspError> {
        if comm.size() == 1 {
            return Ok(StaleAccum::local(reduction, staleness));
        }
        let links = Links::connect(
            comm,
            [
                ("staleness", staleness.fingerprint()),
                ("reduction", reduction.fingerprint()),
                ("value size", std::mem::size_of::<V>() as u64),
            ],
        )?;
        let tree = TreePos::binomial(comm.rank(), comm.size());
        let mut shared = Shared::new(Window::new(reduction, tree, staleness.kept()));
        shared.links = Some(links);
        let shared = Arc::new(shared);
        let handler_state = Arc::clone(&shared);
        // The handler keeps the state alive until the accumulator ends on
        // every rank (protocol step 7), even if this handle is dropped.
        shared
            .links
            .as_ref()
            .expect("set above")
            .serve(move |message: hc_mpi::Message<u64>| {
                let source = message.source;
                match super::window::Wire::decode(&message.data) {
                    Some(wire) => {
                        // A panic of a user reduction here would stop the
                        // service silently and leave the waiters waiting:
                        // it fails the accumulator instead.
                        let applied = std::panic::catch_unwind(AssertUnwindSafe(|| {
                            handler_state.update(|w, fx| w.receive(source, wire, fx))
                        }));
                        match applied {
                            Ok(Ok(())) => {}
                            Ok(Err(error)) => handler_state.fail(error),
                            Err(_) => handler_state.fail(SspError::HandlerPanicked {
                                source_rank: source,
                            }),
                        }
                    }
                    None => handler_state.fail(SspError::Protocol {
                        source_rank: source,
                        what: "a message that is not three words of a known kind",
                    }),
                }
            })?;
        Ok(StaleAccum {
            shared,
            staleness,
            closed: false,
        })
    }

    /// A new member of this rank, starting at the oldest phase the rank has
    /// not reduced yet (phase 0 before anyone contributed). To start a
    /// member at another member's phase, use [`Member::register`].
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Reduction, StaleAccum, Staleness};
    ///
    /// let acc = StaleAccum::local(Reduction::<u8>::op(AccumOp::Max).unwrap(), Staleness::Eventual);
    /// assert_eq!(acc.join().phase(), 0);
    /// ```
    pub fn join(&self) -> Member<'_, V> {
        let clock = self.shared.update(|w, _| {
            let clock = w.oldest_open();
            w.join(clock);
            clock
        });
        Member { acc: self, clock }
    }

    /// The newest result complete on this rank.
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Reduction, StaleAccum, Staleness};
    ///
    /// let acc = StaleAccum::local(Reduction::<u8>::op(AccumOp::Max).unwrap(), Staleness::Eventual);
    /// assert_eq!(acc.latest(), None);
    /// ```
    pub fn latest(&self) -> Option<Snapshot<V>> {
        self.shared.latest()
    }

    /// The result of `phase`, if complete here and still kept (the last
    /// [`Staleness::kept`] results are).
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Reduction, SspError, StaleAccum, Staleness};
    ///
    /// let acc = StaleAccum::local(Reduction::<u8>::op(AccumOp::Max).unwrap(), Staleness::Eventual);
    /// assert!(matches!(acc.result(0), Err(SspError::NotComplete { phase: 0, .. })));
    /// ```
    ///
    /// # Errors
    /// [`SspError::NotComplete`] or [`SspError::Evicted`].
    pub fn result(&self, phase: u64) -> Result<Snapshot<V>, SspError> {
        self.shared.result(phase)
    }

    /// Phases complete on this rank.
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Reduction, StaleAccum, Staleness};
    ///
    /// let acc = StaleAccum::local(Reduction::<u8>::op(AccumOp::Max).unwrap(), Staleness::Eventual);
    /// assert_eq!(acc.completed(), 0);
    /// ```
    pub fn completed(&self) -> u64 {
        self.shared.published.load(Ordering::Acquire)
    }

    /// Its staleness.
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Reduction, StaleAccum, Staleness};
    ///
    /// let acc = StaleAccum::local(Reduction::<u8>::op(AccumOp::Max).unwrap(), Staleness::Bounded(4));
    /// assert_eq!(acc.staleness(), Staleness::Bounded(4));
    /// ```
    pub fn staleness(&self) -> Staleness {
        self.staleness
    }

    /// Closes this rank's part (collective): no member joins any more and
    /// the rank contributes the identity to later phases. Completes once
    /// every rank has closed, every message of this rank is delivered, and
    /// the accumulator stopped serving messages. Dropping the accumulator
    /// instead closes its part without waiting.
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Reduction, StaleAccum, Staleness};
    ///
    /// let acc = StaleAccum::local(Reduction::<i32>::op(AccumOp::Sum).unwrap(), Staleness::Bounded(1));
    /// hc_runtime::Runtime::new().block_on(acc.close()).unwrap();
    /// ```
    ///
    /// # Errors
    /// The first failure of the accumulator on this rank: a protocol
    /// violation, a failed MPI operation, a reduction that panicked,
    /// [`SspError::MembersLeaked`] if members of this rank were leaked
    /// instead of dropped, [`SspError::PeerFailed`] if it failed on another
    /// rank. Then it returns without waiting for the other ranks.
    pub async fn close(mut self) -> Result<(), SspError> {
        self.closed = true;
        let shared = Arc::clone(&self.shared);
        shared.fail_if_leaked();
        shared.update_combining(|w, fx| w.close(fx));
        let ended = SharedWait::new(&shared, Until::End).await;
        if ended.is_err() {
            // Failed: no end comes; what peers still send is moot.
            let _ = shared.stop_serving();
        }
        #[cfg(feature = "mpi")]
        let drained = match &shared.links {
            Some(links) => links.drain().await,
            None => Ok(()),
        };
        #[cfg(not(feature = "mpi"))]
        let drained = Ok(());
        ended.and(drained)?;
        shared.failure().map_or(Ok(()), Err)
    }
}

impl<V: AccumValue> Drop for StaleAccum<V> {
    fn drop(&mut self) {
        if !self.closed {
            self.shared.abandoned.store(true, Ordering::Release);
            self.shared.fail_if_leaked();
            self.shared.update_combining(|w, fx| w.close(fx));
            if self.shared.failure().is_some() {
                let _ = self.shared.stop_serving();
            }
        }
    }
}

/// A member of a [`StaleAccum`]: a task that contributes one value per
/// phase. Dropping it leaves the accumulator: later phases no longer wait
/// for it.
#[derive(Debug)]
pub struct Member<'a, V: AccumValue> {
    acc: &'a StaleAccum<V>,
    /// The next phase it contributes to.
    clock: u64,
}

impl<'a, V: AccumValue> Member<'a, V> {
    /// The next phase it contributes to.
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Reduction, StaleAccum, Staleness};
    ///
    /// let acc = StaleAccum::local(Reduction::op(AccumOp::Sum).unwrap(), Staleness::Eventual);
    /// let mut m = acc.join();
    /// hc_runtime::Runtime::new().block_on(m.advance(5u32)).unwrap();
    /// assert_eq!(m.phase(), 1);
    /// ```
    pub fn phase(&self) -> u64 {
        self.clock
    }

    /// A new member at this member's phase: it contributes to every phase
    /// from there on (HC's registration of a spawned task).
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Reduction, StaleAccum, Staleness};
    ///
    /// let acc = StaleAccum::local(Reduction::op(AccumOp::Sum).unwrap(), Staleness::Eventual);
    /// let mut parent = acc.join();
    /// hc_runtime::Runtime::new().block_on(parent.advance(5u32)).unwrap();
    /// assert_eq!(parent.register().phase(), 1);
    /// ```
    pub fn register(&self) -> Member<'a, V> {
        let clock = self.clock;
        self.acc.shared.update(|w, _| w.join(clock));
        Member {
            acc: self.acc,
            clock,
        }
    }

    /// Contributes `value` to its phase and moves to the next one. With
    /// staleness `k`, it then waits until phase `phase - k` is complete on
    /// every rank (never, eventually consistent), holding no worker while
    /// it waits. Returns the newest complete result: for `k = 0` always the
    /// phase just contributed to, otherwise one at most `k` phases old, or
    /// `None` before any phase completed.
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Reduction, Snapshot, StaleAccum, Staleness};
    ///
    /// let acc = StaleAccum::local(Reduction::op(AccumOp::Sum).unwrap(), Staleness::Bounded(0));
    /// let mut m = acc.join();
    /// let seen = hc_runtime::Runtime::new().block_on(m.advance(7i64)).unwrap();
    /// assert_eq!(seen, Some(Snapshot { phase: 0, value: 7 }));
    /// ```
    ///
    /// # Errors
    /// The accumulator's failure; [`SspError::Closed`] if the phase waited
    /// for can never complete.
    pub async fn advance(&mut self, value: V) -> Result<Option<Snapshot<V>>, SspError> {
        let shared = &*self.acc.shared;
        if let Some(error) = shared.failure() {
            return Err(error);
        }
        let phase = self.clock;
        shared.update_combining(|w, fx| w.contribute(phase, value, fx));
        self.clock += 1;
        if let Some(wait_for) = self
            .acc
            .staleness
            .bound()
            .and_then(|k| phase.checked_sub(k))
        {
            SharedWait::new(shared, Until::Complete(wait_for)).await?;
        }
        Ok(shared.latest())
    }

    /// The newest result complete on this rank.
    pub fn latest(&self) -> Option<Snapshot<V>> {
        self.acc.latest()
    }

    /// The result of `phase`, as [`StaleAccum::result`]. With staleness
    /// `k`, once `advance` of phase `p` returned, phase `p - k` is complete
    /// and kept.
    ///
    /// # Errors
    /// As [`StaleAccum::result`].
    pub fn result(&self, phase: u64) -> Result<Snapshot<V>, SspError> {
        self.acc.result(phase)
    }
}

impl<V: AccumValue> Drop for Member<'_, V> {
    fn drop(&mut self) {
        let clock = self.clock;
        self.acc.shared.update_combining(|w, fx| w.leave(clock, fx));
    }
}

/// What a [`SharedWait`] waits for.
#[derive(Debug, Clone, Copy)]
enum Until {
    /// The phase is complete on this rank.
    Complete(u64),
    /// The accumulator ended on every rank.
    End,
}

/// Completes once its condition holds, or with the accumulator's failure.
/// Holds no worker while pending: it follows the registration protocol of
/// `wakers` on the accumulator's waker list.
struct SharedWait<'a, V> {
    shared: &'a Shared<V>,
    until: Until,
    key: Option<WaitKey>,
}

impl<'a, V> SharedWait<'a, V> {
    fn new(shared: &'a Shared<V>, until: Until) -> SharedWait<'a, V> {
        SharedWait {
            shared,
            until,
            key: None,
        }
    }
}

impl<V: AccumValue> SharedWait<'_, V> {
    fn outcome(&self) -> Option<Result<(), SspError>> {
        match self.until {
            Until::Complete(phase) => self.shared.outcome(phase),
            Until::End if self.shared.ended.load(Ordering::Acquire) != u64::MAX => Some(Ok(())),
            Until::End => self.shared.failure().map(Err),
        }
    }
}

impl<V: AccumValue> Future for SharedWait<'_, V> {
    type Output = Result<(), SspError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        // Step 1 of the waker protocol: the fast path.
        if let Some(done) = this.outcome() {
            if let Some(key) = this.key.take() {
                this.shared.wakers.cancel(key);
            }
            return Poll::Ready(done);
        }
        // Step 2: check again under the list's lock, or park.
        let mut key = this.key.take();
        let ready = this
            .shared
            .wakers
            .register_unless(&mut key, cx.waker(), || this.outcome().is_some());
        this.key = key;
        if ready {
            Poll::Ready(this.outcome().expect("a ready wait has an outcome"))
        } else {
            Poll::Pending
        }
    }
}

impl<V> Drop for SharedWait<'_, V> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            self.shared.wakers.cancel(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore)] // a runtime's worker threads
    fn a_reduction_that_panics_in_a_member_fails_the_accumulator() {
        let picky = Reduction::custom("PICKY", 0i64, |a, b| {
            assert_ne!(a + b, 13, "unlucky");
            a + b
        });
        let acc = StaleAccum::local(picky, Staleness::Eventual);
        let rt = hc_runtime::Runtime::builder()
            .num_workers(1)
            .build()
            .unwrap();
        let (mut a, mut b) = (acc.join(), acc.join());
        rt.block_on(a.advance(6)).unwrap();
        let panicked = std::panic::catch_unwind(AssertUnwindSafe(|| rt.block_on(b.advance(7))));
        assert!(panicked.is_err(), "the reduction's panic goes on");
        drop(b);
        assert_eq!(rt.block_on(a.advance(1)), Err(SspError::ReductionPanicked));
        drop(a);
        assert_eq!(rt.block_on(acc.close()), Err(SspError::ReductionPanicked));
    }
}
