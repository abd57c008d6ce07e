//! `join`: run two closures, potentially in parallel, and return both
//! results — fork-join with the work-first fast path.
//!
//! `b` becomes a job on the caller's stack ([`StackJob`]) that other workers
//! may steal while the caller runs `a`. Nothing is allocated and, when no
//! worker steals `b`, nothing is synchronized beyond the deque itself.
//!
//! # Protocol
//!
//! 1. The caller writes `b`, its enclosing finish and a clear latch into a
//!    `StackJob` on its stack and pushes a reference to it on its own deque
//!    (waking an idle worker, as for any push).
//! 2. It runs `a` inline, catching a panic.
//! 3. It pops its deque. The job of `b` is found again unless a thief took
//!    it: then `b` runs inline, and the latch is never touched. Jobs above
//!    it (left there by `a`: detached tasks, released DDF tasks) are run on
//!    the way down.
//! 4. If the deque runs dry first, a thief is running `b`: the caller runs
//!    other work until the latch is set (`WorkerThread::wait_until`).
//! 5. The thief runs `b` under the caller's enclosing finish (what `b`
//!    starts belongs to the same finish as if the caller ran it), stores the
//!    result, reads the caller's index and registry, sets the latch, and
//!    wakes the caller by index. It does not touch the job afterwards: the
//!    caller may return as soon as the latch is set.
//! 6. The caller re-raises `a`'s panic if any, else `b`'s, only after `b`
//!    has finished: `b` may borrow the caller's stack. A `b` run inline
//!    after `a` returned is not wrapped at all: its panic unwinds straight
//!    out of `join`, with nothing left that refers to the frame.
//!
//! The enclosing finish stays alive throughout: the caller holds a unit of
//! it (it runs that finish's body or one of its tasks) and does not return
//! from `join` before `b` has ended.
//!
//! # Memory ordering
//!
//! The thief stores the result before setting the latch with `Release`;
//! the caller's `Acquire` load that sees the latch set therefore sees the
//! result. In the inline case, program order does.

use std::any::Any;
use std::mem::MaybeUninit;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;

use crate::finish::{enclosing, Enclosing, ScopeBase};
use crate::job::JobRef;
use crate::registry::{Registry, WorkerThread};
use crate::sync::{AtomicBool, Ordering, UnsafeCell};

enum JobResult<R> {
    Pending,
    Ok(R),
    Panicked(Box<dyn Any + Send>),
}

/// The set-once flag a stolen `b` reports its end through (step 5).
struct JoinLatch {
    set: AtomicBool,
    /// The waiting worker's index and pool, read by the thief before it
    /// sets the latch.
    owner: usize,
    registry: *const Registry,
}

/// `b` as it waits on the caller's deque (step 1).
struct StackJob<B, RB> {
    body: UnsafeCell<Option<B>>,
    result: UnsafeCell<JobResult<RB>>,
    enclosing: *const ScopeBase,
    latch: JoinLatch,
}

impl<B, RB> StackJob<B, RB>
where
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    /// Writes the job into `slot`, field by field, and returns it.
    ///
    /// Built in place rather than returned by value: a struct returned by
    /// value is assembled in a temporary with word stores and then moved
    /// with vector loads, which stalls store-to-load forwarding on every
    /// `join` (a third of its cost in `fib`).
    #[inline]
    fn init<'a>(slot: &'a mut MaybeUninit<Self>, body: B, worker: &WorkerThread) -> &'a Self {
        let job = slot.as_mut_ptr();
        // SAFETY: every field of `*job` is written exactly once before the
        // reference is formed; `slot` is valid for writes.
        unsafe {
            ptr::addr_of_mut!((*job).body).write(UnsafeCell::new(Some(body)));
            ptr::addr_of_mut!((*job).result).write(UnsafeCell::new(JobResult::Pending));
            ptr::addr_of_mut!((*job).enclosing).write(enclosing());
            ptr::addr_of_mut!((*job).latch).write(JoinLatch {
                set: AtomicBool::new(false),
                owner: worker.index(),
                registry: &**worker.registry(),
            });
            &*job
        }
    }

    /// # Safety
    /// The job must stay in place until it has run: inline, or by a thief
    /// whose latch the caller waits for.
    unsafe fn as_job_ref(&self) -> JobRef {
        // SAFETY: forwarded contract; `B` and `RB` are `Send`.
        unsafe { JobRef::new(self as *const Self as *const (), Self::execute) }
    }

    fn take_body(&self) -> B {
        // SAFETY: the body is taken once: by the thief that executes the
        // job, or by the caller after popping the job back (never both).
        self.body
            .with_mut(|body| unsafe { (*body).take() })
            .expect("join job ran twice")
    }

    /// Step 5: a thief runs `b`.
    unsafe fn execute(this: *const ()) {
        // SAFETY: the caller keeps the job alive until the latch is set.
        let this = unsafe { &*(this as *const Self) };
        let body = this.take_body();
        let result = {
            let _enclosing = Enclosing::enter(this.enclosing);
            match panic::catch_unwind(AssertUnwindSafe(body)) {
                Ok(value) => JobResult::Ok(value),
                Err(payload) => JobResult::Panicked(payload),
            }
        };
        // SAFETY: only the thief writes the result, and the caller reads it
        // only after the latch.
        this.result.with_mut(|slot| unsafe { *slot = result });
        let (owner, registry) = (this.latch.owner, this.latch.registry);
        this.latch.set.store(true, Ordering::Release);
        // SAFETY: the thief is a worker of this registry (it stole from one
        // of its deques) and holds an `Arc` of it.
        unsafe { (*registry).wake_finish_owner(owner) };
    }

    fn is_done(&self) -> bool {
        self.latch.set.load(Ordering::Acquire)
    }

    /// The result of a `b` that has run (its latch is set).
    fn take_result(&self) -> std::thread::Result<RB> {
        let result = self.result.with_mut(|slot| {
            // SAFETY: the thief wrote the result before setting the latch,
            // and no longer touches the job.
            unsafe { std::mem::replace(&mut *slot, JobResult::Pending) }
        });
        match result {
            JobResult::Ok(value) => Ok(value),
            JobResult::Panicked(payload) => Err(payload),
            JobResult::Pending => unreachable!("join returned before its second half ran"),
        }
    }
}

/// Runs `a` and `b`, potentially in parallel, and returns both results
/// (fork-join; `rayon::join`'s contract).
///
/// On a computation worker, `b` is offered to other workers while the
/// caller runs `a`; if nobody took it by then, the caller runs `b` too, at
/// the cost of a push and a pop. Outside the workers, the pair runs on the
/// process-wide default runtime.
///
/// Work started by `a` or `b` (communication, finish tokens) belongs to the
/// caller's enclosing finish, whichever worker runs it. Both halves always
/// run; a panic in either is re-raised after both have ended (`a`'s first).
///
/// ```
/// fn fib(n: u64) -> u64 {
///     if n < 2 {
///         return n;
///     }
///     let (a, b) = hc_runtime::join(|| fib(n - 1), || fib(n - 2));
///     a + b
/// }
/// assert_eq!(fib(20), 6765);
/// ```
///
/// Both halves may borrow from the caller, mutably where they do not
/// overlap:
///
/// ```
/// let mut v = vec![1, 2, 3, 4];
/// let (left, right) = v.split_at_mut(2);
/// hc_runtime::join(|| left.iter_mut().for_each(|x| *x *= 10), || right.reverse());
/// assert_eq!(v, [10, 20, 4, 3]);
/// ```
///
/// but not both mutably:
///
/// ```compile_fail
/// let mut total = 0;
/// hc_runtime::join(|| total += 1, || total += 2);
/// ```
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    match WorkerThread::current() {
        Some(worker) => join_on_worker(worker, a, b),
        None => crate::runtime::default_runtime().join(a, b),
    }
}

/// [`join`] on `worker`, which is the calling thread's.
#[inline]
pub(crate) fn join_on_worker<A, B, RA, RB>(worker: &WorkerThread, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let mut job_b = MaybeUninit::uninit();
    // Not dropped as a whole: its body is always taken (inline or by a
    // thief) and its result taken below, so nothing is left to drop.
    let job_b = StackJob::init(&mut job_b, b, worker);
    // SAFETY: `job_b` stays on this frame until it has run: inline below,
    // or by a thief whose latch we wait for before returning (step 4), also
    // when `a` panics.
    let job_b_ref = unsafe { job_b.as_job_ref() };
    let job_b_id = job_b_ref.id();
    worker.push(job_b_ref);

    let result_a = panic::catch_unwind(AssertUnwindSafe(a));

    let result_b = loop {
        match worker.pop_local() {
            Some(job) if job.id() == job_b_id => {
                // Step 3: not stolen. The popped reference is dropped
                // unexecuted; the body is taken from the job instead.
                let body = job_b.take_body();
                match result_a {
                    // `a` has ended and nothing else refers to `job_b`:
                    // a panic of `b` may unwind straight out of `join`.
                    Ok(ra) => return (ra, body()),
                    Err(_) => break panic::catch_unwind(AssertUnwindSafe(body)),
                }
            }
            Some(job) => worker.execute(job),
            None => {
                // Step 4.
                worker.wait_until(|| job_b.is_done());
                break job_b.take_result();
            }
        }
    };
    match (result_a, result_b) {
        (Ok(ra), Ok(rb)) => (ra, rb),
        (Err(payload), _) | (Ok(_), Err(payload)) => panic::resume_unwind(payload),
    }
}
