//! The pool of computation workers: deques, stealing, the injector, and the
//! worker main loop.
//!
//! Each worker owns a LIFO [`Worker`] deque; others steal from it FIFO through
//! its [`Stealer`]. Work submitted from threads that are not workers of this
//! pool (the communication worker, a DDF put from a plain thread, a `finish`
//! called from `main`) goes through the shared [`Injector`].
//!
//! Work is looked for in this order: own deque, injector, then the other
//! workers' deques starting from a random victim. A worker that finds none
//! polls the runtime's [`Poller`], if it has one and no other idle worker
//! is polling it (see "Poll duty"), then backs off and parks.
//!
//! # Poll duty
//!
//! While the poller has work in flight, one idle worker at a time polls it;
//! the others park. On a core shared by several workers, idle workers that
//! all polled would hand the core back and forth with `yield` for nothing.
//!
//! 1. An idle worker takes the duty if it is free (a CAS on `poll_duty`).
//!    The duty holder polls; without progress it backs off with
//!    [`BackoffPolicy::POLLING`] (`POLLING_OVERSUBSCRIBED` when the workers
//!    share their cores with other processes) and parks with a timeout,
//!    keeping the duty.
//! 2. An idle worker that finds the duty taken backs off with
//!    [`BackoffPolicy::STANDBY`] (barely yielding: the holder, or a task it
//!    releases, wakes it) and parks without a timeout.
//! 3. The holder gives the duty up when it finds a task to run, when its
//!    wait ends, or when the poller has no work left: it clears the flag
//!    (`Release`) and, if the poller still has work, wakes an idle worker
//!    (`Sleep::wake_one`: the light barrier, then a look at the idle count).
//! 4. A worker about to park without a timeout checks, after announcing
//!    itself idle and the heavy barrier (the sleep protocol's step 2),
//!    whether the duty is free while the poller has work; if so it stays
//!    awake and takes the duty.
//!
//! Steps 3 and 4 are a store-buffering pair: either the releaser sees the
//! parking worker idle and wakes it, or the parking worker sees the duty
//! free. So while work is in flight, the duty is never free with every idle
//! worker parked for good. Busy workers still poll between tasks.
//!
//! # Shutdown protocol
//!
//! 1. The owning [`Runtime`](crate::Runtime) is dropped (no finish can be
//!    running on it: every finish borrows the runtime).
//! 2. `terminate` is set (`Release`) and every worker is unparked.
//! 3. Each worker leaves its main loop the next time it finds no work and
//!    sees `terminate` (`Acquire`). Deques are empty by then: every task
//!    belongs to a finish scope, and all scopes have completed.
//! 4. The runtime joins the worker threads, unless the drop happens on one of
//!    them (a runtime dropped inside its own task), in which case they are
//!    detached and exit on their own.

use std::cell::Cell;

use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use crossbeam_utils::sync::{Parker, Unparker};
use crossbeam_utils::CachePadded;

use crate::affinity::AffinityError;
use crate::backoff::{Backoff, BackoffPolicy, Snooze};
use crate::job::{Block, BlockPool, JobRef, TaskCache};
use crate::metrics::{self, Epoch, RuntimeMetrics, WorkerCounters};
use crate::poller::{Polled, Poller};
use crate::runtime::BuildError;
use crate::sleep::Sleep;
use crate::trace::{self, Args};
use crate::unwind;

/// How often a busy worker publishes its task count (see `metrics`); a
/// power of two, so the check is a mask.
const TASKS_PER_PUBLISH: u64 = 256;

/// Shared state of one pool of computation workers.
pub(crate) struct Registry {
    stealers: Vec<Stealer<JobRef>>,
    injector: Injector<JobRef>,
    sleep: Sleep,
    terminate: AtomicBool,
    poller: Option<Arc<dyn Poller>>,
    poll_interval: Duration,
    /// How the worker with the poll duty backs off without progress.
    polling: BackoffPolicy,
    /// Held by the one idle worker that polls the poller (see "Poll duty").
    poll_duty: AtomicBool,
    /// Free task blocks between workers (see `job`).
    block_pool: BlockPool,
    /// Finish scopes whose owners wait for their tasks right now: a
    /// diagnostic for reports of what a stalled process waits on.
    finishes_waiting: AtomicUsize,
    /// Each worker's counters, by index (see `metrics`).
    counters: Box<[CachePadded<WorkerCounters>]>,
    /// When the workers started.
    started: Epoch,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("num_workers", &self.stealers.len())
            .field("has_poller", &self.poller.is_some())
            .finish_non_exhaustive()
    }
}

/// A finish owner waiting for its tasks (see [`Registry::finish_wait`]).
pub(crate) struct FinishWait<'r> {
    registry: &'r Registry,
}

impl Drop for FinishWait<'_> {
    fn drop(&mut self) {
        self.registry
            .finishes_waiting
            .fetch_sub(1, Ordering::Relaxed);
    }
}

/// Per-thread state of a computation worker; lives on the worker's stack.
pub(crate) struct WorkerThread {
    /// Read by other threads through the finish scopes this worker owns (a
    /// thief spawning into one, or completing one of its tasks): on a cache
    /// line of its own, apart from the cells this worker writes on every
    /// spawn, so those reads do not miss.
    identity: CachePadded<Identity>,
    deque: Worker<JobRef>,
    parker: Parker,
    rng: Cell<u64>,
    /// When this worker last polled the poller between tasks.
    last_poll: Cell<Instant>,
    /// Whether this worker holds the poll duty.
    polls: Cell<bool>,
    /// Free task blocks (see `job`).
    task_cache: TaskCache,
    /// Tasks this worker ran; published to its counters (see `metrics`)
    /// every [`TASKS_PER_PUBLISH`] tasks and whenever it runs out of work.
    tasks_run: Cell<u64>,
    /// Tasks released onto this deque by a DDF put without waking anyone
    /// (see `Registry::push_released`), not yet accounted for.
    deferred_wakes: Cell<usize>,
}

/// What a worker is: its index and its pool. Never written after start.
struct Identity {
    index: usize,
    registry: Arc<Registry>,
}

thread_local! {
    static WORKER_THREAD: Cell<*const WorkerThread> = const { Cell::new(std::ptr::null()) };
}

/// What a new pool is built from (see [`Builder`](crate::Builder)).
pub(crate) struct PoolConfig {
    pub(crate) num_workers: usize,
    pub(crate) stack_size: usize,
    pub(crate) thread_name_prefix: String,
    pub(crate) poller: Option<Arc<dyn Poller>>,
    pub(crate) poll_interval: Duration,
    /// The workers share their cores with other busy threads.
    pub(crate) oversubscribed: bool,
    /// Worker `k` is bound to `worker_cpus[k % len]`; empty: unbound.
    pub(crate) worker_cpus: Vec<usize>,
}

impl Registry {
    /// Starts `config.num_workers` threads; returns the registry and their
    /// handles.
    pub(crate) fn start(
        config: PoolConfig,
    ) -> Result<(Arc<Registry>, Vec<JoinHandle<()>>), BuildError> {
        // Before any worker exists: every sleeper must see the final mode.
        crate::barrier::init();
        let n = config.num_workers.max(1);
        let deques: Vec<Worker<JobRef>> = (0..n).map(|_| Worker::new_lifo()).collect();
        let parkers: Vec<Parker> = (0..n).map(|_| Parker::new()).collect();
        let unparkers: Vec<Unparker> = parkers.iter().map(|p| p.unparker().clone()).collect();
        let registry = Arc::new(Registry {
            stealers: deques.iter().map(Worker::stealer).collect(),
            injector: Injector::new(),
            sleep: Sleep::new(unparkers),
            terminate: AtomicBool::new(false),
            poller: config.poller,
            poll_interval: config.poll_interval,
            polling: if config.oversubscribed {
                BackoffPolicy::POLLING_OVERSUBSCRIBED
            } else {
                BackoffPolicy::POLLING
            },
            poll_duty: AtomicBool::new(false),
            block_pool: BlockPool::new(),
            finishes_waiting: AtomicUsize::new(0),
            counters: (0..n).map(|_| CachePadded::default()).collect(),
            started: Epoch::now(),
        });
        let mut handles = Vec::with_capacity(n);
        // `start` returns once every worker runs (named, its thread-local
        // set): a runtime that exists is fully there.
        let (started, all_started) = std::sync::mpsc::channel();
        for (index, (deque, parker)) in deques.into_iter().zip(parkers).enumerate() {
            let worker_registry = Arc::clone(&registry);
            let started = started.clone();
            let cpu = (!config.worker_cpus.is_empty())
                .then(|| config.worker_cpus[index % config.worker_cpus.len()]);
            let spawned = thread::Builder::new()
                .name(format!("{}{}", config.thread_name_prefix, index))
                .stack_size(config.stack_size)
                .spawn(move || {
                    if config.oversubscribed {
                        crate::backoff::precise_timers();
                    }
                    if let Some(cpu) = cpu {
                        if let Err(error) = crate::affinity::bind_current_thread(&[cpu]) {
                            let _ = started.send(Err(error));
                            return;
                        }
                    }
                    let worker = WorkerThread {
                        identity: CachePadded::new(Identity {
                            index,
                            registry: worker_registry,
                        }),
                        deque,
                        parker,
                        rng: Cell::new(
                            0x9E37_79B9_7F4A_7C15
                                ^ (index as u64 + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9),
                        ),
                        last_poll: Cell::new(Instant::now()),
                        polls: Cell::new(false),
                        task_cache: TaskCache::new(),
                        deferred_wakes: Cell::new(0),
                        tasks_run: Cell::new(0),
                    };
                    worker.main_loop(started);
                });
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(error) => {
                    registry.terminate();
                    for handle in handles {
                        let _ = handle.join();
                    }
                    return Err(BuildError::Spawn(error));
                }
            }
        }
        drop(started);
        // Each worker sends once; a worker that died before sending closes
        // its sender, which ends the wait too. One that could not be bound
        // sends its error and exits without running.
        let failed = all_started.iter().take(n).find_map(Result::err);
        if let Some(error) = failed {
            registry.terminate();
            for handle in handles {
                let _ = handle.join();
            }
            return Err(BuildError::Bind(error));
        }
        Ok((registry, handles))
    }

    pub(crate) fn block_pool(&self) -> &BlockPool {
        &self.block_pool
    }

    pub(crate) fn num_workers(&self) -> usize {
        self.stealers.len()
    }

    /// How many finish scopes of this pool wait for their tasks now.
    pub(crate) fn finishes_waiting(&self) -> usize {
        self.finishes_waiting.load(Ordering::Relaxed)
    }

    /// A snapshot of every worker's counters.
    pub(crate) fn metrics(&self) -> RuntimeMetrics {
        RuntimeMetrics::of(&self.started, self.counters.iter().map(|c| &**c))
    }

    /// Counts a finish owner as waiting for as long as the guard lives.
    pub(crate) fn finish_wait(&self) -> FinishWait<'_> {
        self.finishes_waiting.fetch_add(1, Ordering::Relaxed);
        FinishWait { registry: self }
    }

    /// Step 2 of the shutdown protocol.
    pub(crate) fn terminate(&self) {
        self.terminate.store(true, Ordering::Release);
        self.sleep.wake_all();
    }

    /// Whether the pool has been shut down (nothing pushed now would run).
    pub(crate) fn is_terminated(&self) -> bool {
        self.terminate.load(Ordering::Acquire)
    }

    /// Makes sure a worker comes back to poll the poller (see `poller`):
    /// wakes an idle worker, if any.
    pub(crate) fn wake_poller(&self) {
        self.sleep.wake_one();
    }

    /// Polls the poller, if any; `None` without one.
    pub(crate) fn poll(&self) -> Option<Polled> {
        self.poller.as_ref().map(|poller| poller.poll())
    }

    fn poller_has_work(&self) -> bool {
        self.poller.as_ref().is_some_and(|poller| poller.has_work())
    }

    /// Whether an idle worker should take the free poll duty (step 4).
    fn poll_duty_is_vacant(&self) -> bool {
        !self.poll_duty.load(Ordering::Acquire) && self.poller_has_work()
    }

    /// Makes `job` runnable: on the current worker's deque when called from a
    /// worker of this pool, through the injector otherwise.
    pub(crate) fn push(&self, job: JobRef) {
        match WorkerThread::current() {
            Some(worker) if std::ptr::eq(&*worker.identity.registry, self) => worker.push(job),
            _ => {
                self.injector.push(job);
                self.sleep.wake_one();
            }
        }
    }

    /// Makes a task released by a DDF put runnable.
    ///
    /// On a worker of this pool the task goes on the worker's own deque
    /// (LIFO) and no sleeper is woken yet: the put is usually the releasing
    /// task's last act, and the worker then runs the released task next,
    /// warm in its cache, while a woken sleeper would only race it for the
    /// task (a chain of DDF tasks would bounce between workers). The wake
    /// is owed, not dropped: when the worker next takes a job from its deque
    /// (the putting job returned, or its code waits), it wakes one sleeper
    /// per released task beyond the one it runs next
    /// (`WorkerThread::settle_deferred_wakes`). Until then the tasks sit on a
    /// running worker's deque, which that worker pops before it could park,
    /// and which other awake workers steal from; nothing waits on them
    /// forever.
    pub(crate) fn push_released(&self, job: JobRef) {
        match WorkerThread::current() {
            Some(worker) if std::ptr::eq(&*worker.identity.registry, self) => {
                worker.deque.push(job);
                worker.deferred_wakes.set(worker.deferred_wakes.get() + 1);
            }
            _ => self.push(job),
        }
    }

    /// The unparker of worker `index`.
    pub(crate) fn unparker(&self, index: usize) -> Unparker {
        self.sleep.unparker(index)
    }

    /// Wakes worker `index`, which owns a finish whose latch just completed.
    pub(crate) fn wake_finish_owner(&self, index: usize) {
        self.sleep.wake_worker(index);
    }

    fn has_visible_work(&self) -> bool {
        !self.injector.is_empty() || self.stealers.iter().any(|s| !s.is_empty())
    }

    /// Runs `op` on a worker of this pool and returns its result.
    ///
    /// On a worker of this pool it runs in place. Elsewhere the calling thread
    /// injects it as a job and parks until a worker has run it; a panic in
    /// `op` is re-raised on the calling thread.
    pub(crate) fn in_worker<OP, R>(self: &Arc<Self>, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread) -> R + Send,
        R: Send,
    {
        if let Some(worker) = WorkerThread::current() {
            if Arc::ptr_eq(&worker.identity.registry, self) {
                return op(worker);
            }
        }
        self.in_worker_cold(op)
    }

    #[cold]
    fn in_worker_cold<OP, R>(self: &Arc<Self>, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread) -> R + Send,
        R: Send,
    {
        thread_local! {
            static FOREIGN_PARKER: Parker = Parker::new();
        }
        FOREIGN_PARKER.with(|parker| {
            let job = crate::foreign::ForeignJob::new(op, parker.unparker().clone());
            // SAFETY: `job` lives on this stack frame, which does not return
            // until `job.is_done()`, i.e. until the job has run and will not be
            // touched again (see `ForeignJob`).
            let job_ref = unsafe { job.as_job_ref() };
            self.injector.push(job_ref);
            self.sleep.wake_one();
            while !job.is_done() {
                parker.park();
            }
            job.into_result()
        })
    }
}

impl WorkerThread {
    /// The worker running on this thread, if this thread is a worker.
    #[inline]
    pub(crate) fn current<'a>() -> Option<&'a WorkerThread> {
        let ptr = WORKER_THREAD.with(Cell::get);
        // SAFETY: the pointer is set by `main_loop` to a `WorkerThread` on that
        // same thread's stack and cleared before it is dropped; only this
        // thread reads its own thread-local, so the reference cannot outlive it
        // while in use (every use is within a call made from `main_loop`).
        unsafe { ptr.as_ref() }
    }

    pub(crate) fn index(&self) -> usize {
        self.identity.index
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.identity.registry
    }

    #[inline]
    fn counters(&self) -> &WorkerCounters {
        &self.identity.registry.counters[self.identity.index]
    }

    /// A free task block (see `job`).
    #[inline]
    pub(crate) fn allocate_block(&self) -> NonNull<Block> {
        self.task_cache
            .allocate(self.identity.registry.block_pool())
    }

    /// Recycles a task block that is no longer used.
    ///
    /// # Safety
    /// `block` came from some worker's `allocate_block` and is free.
    #[inline]
    pub(crate) unsafe fn release_block(&self, block: NonNull<Block>) {
        // SAFETY: forwarded contract.
        unsafe {
            self.task_cache
                .release(block, self.identity.registry.block_pool())
        }
    }

    /// The job on top of this worker's own deque, if any: the one this
    /// worker runs next. Tasks released onto the deque without a wake-up
    /// are accounted for here (see `Registry::push_released`).
    #[inline]
    pub(crate) fn pop_local(&self) -> Option<JobRef> {
        if self.deferred_wakes.get() != 0 {
            self.settle_deferred_wakes();
        }
        self.deque.pop()
    }

    /// Makes `job` runnable on this worker's own deque (LIFO) and wakes an
    /// idle worker to steal it.
    #[inline]
    pub(crate) fn push(&self, job: JobRef) {
        self.deque.push(job);
        self.identity.registry.sleep.wake_one();
    }

    fn main_loop(&self, started: std::sync::mpsc::Sender<Result<(), AffinityError>>) {
        WORKER_THREAD.with(|cell| cell.set(self as *const WorkerThread));
        let _ = started.send(Ok(()));
        drop(started);
        let registry = Arc::clone(&self.identity.registry);
        self.wait_until(|| registry.terminate.load(Ordering::Acquire));
        WORKER_THREAD.with(|cell| cell.set(std::ptr::null()));
    }

    /// Runs jobs from this worker's own deque until `done()` holds; `false`
    /// if the deque ran dry first. The fast path of a wait whose work is
    /// local (a finish whose tasks nobody stole): no back-off state, no
    /// stealing.
    #[inline]
    pub(crate) fn run_local_until(&self, done: impl Fn() -> bool) -> bool {
        loop {
            if done() {
                // A finish completed: its owner's count is up to date, as
                // a reader of the finish's results would expect.
                self.publish_tasks_run();
                return true;
            }
            match self.pop_local() {
                Some(job) => {
                    self.execute(job);
                    self.poll_between_tasks();
                }
                None => return false,
            }
        }
    }

    /// Executes available work until `done()` holds; with none, polls the
    /// poller if it holds (or takes) the poll duty, backs off, and parks —
    /// for a bounded time while it polls work in flight. `done` must be
    /// cheap; whoever makes it true must wake this worker
    /// (`Registry::wake_finish_owner`) or terminate the pool.
    pub(crate) fn wait_until(&self, done: impl Fn() -> bool) {
        self.wait_until_folding(done, || {});
    }

    /// [`wait_until`](Self::wait_until), calling `before_park` before each
    /// park (a finish owner folds its latch there: see `latch`).
    pub(crate) fn wait_until_folding(&self, done: impl Fn() -> bool, before_park: impl Fn()) {
        let registry = &*self.identity.registry;
        let mut idle = Backoff::new(BackoffPolicy::IDLE_WORKER);
        let mut polling = Backoff::new(registry.polling);
        let mut standby = Backoff::new(BackoffPolicy::STANDBY);
        // Woken by a publisher and not yet looked for work (`sleep`, step 5).
        let mut owes_wake = false;
        let mut search = SearchClock::new(self);
        while !done() {
            if let Some(job) = self.find_work() {
                search.work_found();
                owes_wake = false;
                self.give_up_poll_duty();
                self.execute(job);
                self.poll_between_tasks();
                idle.reset();
                polling.reset();
                standby.reset();
                continue;
            }
            search.begin();
            if self.take_poll_duty() {
                match registry.poll() {
                    Some(Polled::Progress) => {
                        self.last_poll.set(Instant::now());
                        idle.reset();
                        polling.reset();
                        standby.reset();
                        continue;
                    }
                    Some(Polled::Waiting) => {
                        if let Snooze::Park(timeout) = polling.snooze() {
                            before_park();
                            owes_wake = search.park(|| {
                                registry.sleep.sleep(
                                    self.identity.index,
                                    &self.parker,
                                    || done() || registry.has_visible_work(),
                                    || Some(timeout),
                                )
                            });
                        }
                        continue;
                    }
                    _ => self.give_up_poll_duty(),
                }
            }
            // Another worker polls: it, or a task it releases, wakes us.
            let backoff = if registry.poller_has_work() {
                &mut standby
            } else {
                &mut idle
            };
            if let Snooze::Park(_) = backoff.snooze() {
                before_park();
                owes_wake = search.park(|| {
                    registry.sleep.sleep(
                        self.identity.index,
                        &self.parker,
                        || done() || registry.has_visible_work() || registry.poll_duty_is_vacant(),
                        || None,
                    )
                });
            }
        }
        search.leave();
        if owes_wake && (registry.has_visible_work() || registry.poll_duty_is_vacant()) {
            // Step 5 of `sleep`: leaving without the work (or the poll duty
            // handed over) a publisher woke this worker for; hand its
            // wake-up on.
            registry.sleep.wake_one();
        }
        self.give_up_poll_duty();
    }

    /// Holds or takes the poll duty (step 1); `false` without a poller.
    fn take_poll_duty(&self) -> bool {
        if self.polls.get() {
            return true;
        }
        let registry = &*self.identity.registry;
        let taken = registry.poller.is_some()
            && !registry.poll_duty.load(Ordering::Relaxed)
            && registry
                .poll_duty
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok();
        self.polls.set(taken);
        taken
    }

    /// Step 3: gives the poll duty up, handing it to an idle worker while
    /// the poller has work.
    #[inline]
    fn give_up_poll_duty(&self) {
        if self.polls.get() {
            self.hand_over_poll_duty();
        }
    }

    #[cold]
    fn hand_over_poll_duty(&self) {
        self.polls.set(false);
        let registry = &*self.identity.registry;
        registry.poll_duty.store(false, Ordering::Release);
        if registry.poller_has_work() {
            registry.sleep.wake_one();
        }
    }

    /// A busy worker polls between tasks once the poll interval has passed
    /// with work in flight, so that communication progresses during a
    /// computation made of many tasks.
    #[inline]
    fn poll_between_tasks(&self) {
        if self.identity.registry.poller.is_some() {
            self.poll_if_due();
        }
    }

    fn poll_if_due(&self) {
        let registry = &*self.identity.registry;
        if !registry.poller_has_work() {
            return;
        }
        let now = Instant::now();
        if now.duration_since(self.last_poll.get()) >= registry.poll_interval {
            self.last_poll.set(now);
            registry.poll();
        }
    }

    #[inline]
    pub(crate) fn execute(&self, job: JobRef) {
        // Jobs catch their own panics (tasks record them in their scope);
        // anything escaping is a runtime bug, and unwinding through the
        // scheduler would strand every scope this worker is waiting on.
        let guard = unwind::AbortOnUnwind;
        let run = self.tasks_run.get() + 1;
        self.tasks_run.set(run);
        if run.is_multiple_of(TASKS_PER_PUBLISH) {
            self.publish_tasks_run();
        }
        job.execute();
        guard.disarm();
    }

    /// Makes this worker's task count visible to metrics snapshots.
    fn publish_tasks_run(&self) {
        self.counters().publish_tasks_run(self.tasks_run.get());
    }

    /// This worker is about to take its next job, the top of its deque:
    /// wake a sleeper for each other task released without a wake-up that
    /// is still on the deque.
    #[cold]
    fn settle_deferred_wakes(&self) {
        let released = self.deferred_wakes.replace(0);
        let others = released.min(self.deque.len().saturating_sub(1));
        for _ in 0..others {
            self.identity.registry.sleep.wake_one();
        }
    }

    fn find_work(&self) -> Option<JobRef> {
        if let Some(job) = self.pop_local() {
            return Some(job);
        }
        let stolen = self.steal();
        self.counters().steal(stolen.is_some());
        stolen
    }

    /// One sweep over the injector and the other workers' deques.
    fn steal(&self) -> Option<JobRef> {
        let registry = &*self.identity.registry;
        loop {
            let mut retry = false;
            match registry.injector.steal_batch_and_pop(&self.deque) {
                Steal::Success(job) => {
                    trace::instant("sched", "steal", Args::new().with("victim", -1));
                    return Some(job);
                }
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            let n = registry.stealers.len();
            if n > 1 {
                let start = self.next_random() % n;
                for offset in 0..n {
                    let victim = (start + offset) % n;
                    if victim == self.identity.index {
                        continue;
                    }
                    match registry.stealers[victim].steal() {
                        Steal::Success(job) => {
                            trace::instant(
                                "sched",
                                "steal",
                                Args::new().with("victim", victim as i64),
                            );
                            return Some(job);
                        }
                        Steal::Retry => retry = true,
                        Steal::Empty => {}
                    }
                }
            }
            if !retry {
                return None;
            }
        }
    }

    fn next_random(&self) -> usize {
        // xorshift64*: victim selection needs speed, not quality.
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as usize
    }
}

/// The time accounting and tracing of one wait loop (see `metrics`,
/// `trace`): when the current search for work began, and, when tracing,
/// when the current run of tasks began. The clock is read only when a
/// search begins or ends, or around a park — never per task: a trace shows
/// each worker's runs of tasks (`run`, with how many tasks it ran), its
/// searches and parks, and the spans tasks record themselves.
struct SearchClock<'w> {
    worker: &'w WorkerThread,
    /// The search's start in ticks, and its trace timestamp when tracing.
    since: Option<(u64, u64)>,
    /// When tracing: the current run's trace timestamp and the worker's
    /// task count at its start.
    running: Option<(u64, u64)>,
}

impl<'w> SearchClock<'w> {
    fn new(worker: &'w WorkerThread) -> SearchClock<'w> {
        SearchClock {
            worker,
            since: None,
            running: None,
        }
    }

    /// The loop found a task: the search under way, if any, ends, and a
    /// run of tasks begins unless one is under way.
    #[inline]
    fn work_found(&mut self) {
        if self.since.is_some() {
            self.end();
        }
        if self.running.is_none() && trace::is_enabled() {
            self.running = Some((trace::now(), self.worker.tasks_run.get()));
        }
    }

    /// The run of tasks under way, if any, ends (traced).
    fn end_run(&mut self) {
        if let Some((ts, first)) = self.running.take() {
            let tasks = self.worker.tasks_run.get().saturating_sub(first);
            trace::span_since("sched", "run", ts, Args::new().with("tasks", tasks as i64));
        }
    }

    /// A search starts, unless one is under way; the worker's task count
    /// is published then.
    #[inline]
    fn begin(&mut self) {
        if self.since.is_none() {
            self.end_run();
            self.worker.publish_tasks_run();
            let ts = if trace::is_enabled() { trace::now() } else { 0 };
            self.since = Some((metrics::ticks(), ts));
        }
    }

    /// The search under way, if any, ends.
    #[inline]
    fn end(&mut self) {
        if let Some((start, ts)) = self.since.take() {
            self.worker
                .counters()
                .searched(metrics::ticks().saturating_sub(start));
            if trace::is_enabled() {
                trace::span_since("sched", "search", ts, Args::new());
            }
        }
    }

    /// The wait is over (what it waited for happened).
    fn leave(&mut self) {
        self.end();
        self.end_run();
        self.worker.publish_tasks_run();
    }

    /// Parks with `park`, counting the time asleep apart from the search,
    /// which goes on after it.
    fn park<R>(&mut self, park: impl FnOnce() -> R) -> R {
        self.end();
        let ts = if trace::is_enabled() { trace::now() } else { 0 };
        let start = metrics::ticks();
        let result = park();
        self.worker
            .counters()
            .parked(metrics::ticks().saturating_sub(start));
        if trace::is_enabled() {
            trace::span_since("sched", "park", ts, Args::new());
        }
        self.begin();
        result
    }
}
