//! loom models of the runtime's concurrency protocols.
//!
//! Run with `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p
//! hc-runtime --release --lib loom`. Each model uses the real protocol code
//! (latch, DDF core, AND/OR task records) with the scheduler replaced by an
//! inline release that runs a released task on the releasing thread.

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

use crate::ddf::{spawn_await_all, spawn_await_any, AllOutcome, AnyOutcome, Ddf, Release};
use crate::job::JobRef;
use crate::latch::CountLatch;

/// Runs released tasks immediately, on the thread that released them.
struct InlineRelease;

impl Release for InlineRelease {
    fn release(&self, job: JobRef) {
        job.execute();
    }
}

static INLINE: InlineRelease = InlineRelease;

fn inline() -> *const dyn Release {
    &INLINE as &dyn Release as *const dyn Release
}

/// Finish counter, the other way round: a task the thief runs spawns a
/// child there, which the owner steals back and runs.
#[test]
fn loom_finish_counter_remote_give_local_take() {
    loom::model(|| {
        let latch = Arc::new(CountLatch::new());
        let owner = thread::current();
        // SAFETY (all `local` calls): on the owner's thread.
        unsafe { latch.give_local() }; // the task the thief runs
        let (child_tx, child_rx) = loom::sync::mpsc::channel();
        let thief = {
            let (latch, owner) = (latch.clone(), owner.clone());
            thread::spawn(move || {
                latch.give_shared(); // its child
                child_tx.send(()).unwrap();
                if latch.take_shared() {
                    owner.unpark();
                }
            })
        };
        unsafe { latch.take_local() }; // the body's unit
        child_rx.recv().unwrap();
        unsafe { latch.take_local() }; // the child, run by the owner
        while !unsafe { latch.is_complete() } {
            unsafe { latch.fold() };
            if unsafe { latch.is_complete() } {
                break;
            }
            thread::park();
        }
        thief.join().unwrap();
    });
}

/// Finish counter: the owner spawns two tasks, a thief runs one, the owner
/// the other; then the owner folds and parks. It sees completion only after all task effects, and is never left
/// parked (loom reports a deadlock if the last take's wake-up is lost).
#[test]
fn loom_finish_counter_split_count_and_fold() {
    loom::model(|| {
        let latch = Arc::new(CountLatch::new());
        let effects = Arc::new(AtomicUsize::new(0));
        let owner = thread::current();

        // SAFETY (all `local` calls): on the owner's thread, this one.
        unsafe { latch.give_local() }; // the stolen task, spawned by the body
        unsafe { latch.give_local() }; // a task the owner runs itself
        let thief = {
            let (latch, effects, owner) = (latch.clone(), effects.clone(), owner.clone());
            thread::spawn(move || {
                effects.fetch_add(1, Ordering::Relaxed); // the stolen task
                if latch.take_shared() {
                    owner.unpark();
                }
            })
        };
        effects.fetch_add(1, Ordering::Relaxed); // the owner's own task
        unsafe { latch.take_local() };
        unsafe { latch.take_local() }; // the body's unit
                                       // The owner's wait: check, fold, check, park.
        while !unsafe { latch.is_complete() } {
            unsafe { latch.fold() };
            if unsafe { latch.is_complete() } {
                break;
            }
            thread::park();
        }
        assert_eq!(
            effects.load(Ordering::Relaxed),
            2,
            "completion seen before a task's effects"
        );
        thief.join().unwrap();
    });
}

/// DDF put racing a task registering on it: the task runs exactly once and
/// sees the value, whichever side wins.
#[test]
fn loom_ddf_put_races_registration() {
    loom::model(|| {
        let ddf: Ddf<usize> = Ddf::new();
        let runs = Arc::new(AtomicUsize::new(0));

        let putter = {
            let ddf = ddf.clone();
            thread::spawn(move || ddf.put(42).unwrap())
        };
        {
            let (ddf2, runs) = (ddf.clone(), runs.clone());
            let body = move |outcome: AllOutcome| {
                assert_eq!(outcome, AllOutcome::Ready);
                assert_eq!(
                    ddf2.get(),
                    Ok(&42),
                    "task released before the value was visible"
                );
                runs.fetch_add(1, Ordering::Relaxed);
            };
            // SAFETY: the inline releaser is static and the body owns its data.
            unsafe { spawn_await_all(&[ddf.ddf_core_for_tests()], inline(), body) };
        }
        putter.join().unwrap();
        assert_eq!(runs.load(Ordering::Relaxed), 1);
    });
}

/// Two DDFs put concurrently: an AND task over both runs once, after both.
#[test]
fn loom_and_list_with_concurrent_puts() {
    loom::model(|| {
        let (a, b): (Ddf<u8>, Ddf<u8>) = (Ddf::new(), Ddf::new());
        let runs = Arc::new(AtomicUsize::new(0));
        {
            let (a2, b2, runs) = (a.clone(), b.clone(), runs.clone());
            let body = move |_| {
                assert_eq!((a2.get(), b2.get()), (Ok(&1), Ok(&2)));
                runs.fetch_add(1, Ordering::Relaxed);
            };
            // SAFETY: as above.
            unsafe {
                spawn_await_all(
                    &[a.ddf_core_for_tests(), b.ddf_core_for_tests()],
                    inline(),
                    body,
                )
            };
        }
        let ta = {
            let a = a.clone();
            thread::spawn(move || a.put(1).unwrap())
        };
        b.put(2).unwrap();
        ta.join().unwrap();
        assert_eq!(runs.load(Ordering::Relaxed), 1);
    });
}

/// Await-any: concurrent puts on both dependencies while the task is still
/// registering; the token releases it exactly once, with a put index.
#[test]
fn loom_await_any_releases_exactly_once() {
    loom::model(|| {
        let (a, b): (Ddf<u8>, Ddf<u8>) = (Ddf::new(), Ddf::new());
        let runs = Arc::new(AtomicUsize::new(0));
        let ta = {
            let a = a.clone();
            thread::spawn(move || a.put(1).unwrap())
        };
        let tb = {
            let b = b.clone();
            thread::spawn(move || b.put(2).unwrap())
        };
        {
            let (a2, b2, runs) = (a.clone(), b.clone(), runs.clone());
            let body = move |outcome: AnyOutcome| {
                match outcome {
                    AnyOutcome::Ready(0) => assert_eq!(a2.get(), Ok(&1)),
                    AnyOutcome::Ready(1) => assert_eq!(b2.get(), Ok(&2)),
                    other => panic!("unexpected release {other:?}"),
                }
                runs.fetch_add(1, Ordering::Relaxed);
            };
            // SAFETY: as above.
            unsafe {
                spawn_await_any(
                    &[a.ddf_core_for_tests(), b.ddf_core_for_tests()],
                    inline(),
                    body,
                )
            };
        }
        ta.join().unwrap();
        tb.join().unwrap();
        assert_eq!(runs.load(Ordering::Relaxed), 1);
    });
}

/// A DDF dropped without a put while a task awaits it releases the task as
/// abandoned instead of leaking it.
#[test]
fn loom_dropped_ddf_abandons_its_waiters() {
    loom::model(|| {
        let ddf: Ddf<u8> = Ddf::new();
        let abandoned = Arc::new(AtomicUsize::new(0));
        {
            let abandoned = abandoned.clone();
            let body = move |outcome: AllOutcome| {
                assert_eq!(outcome, AllOutcome::Abandoned);
                abandoned.fetch_add(1, Ordering::Relaxed);
            };
            // SAFETY: as above.
            unsafe { spawn_await_all(&[ddf.ddf_core_for_tests()], inline(), body) };
        }
        let other = ddf.clone();
        let dropper = thread::spawn(move || drop(other));
        drop(ddf);
        dropper.join().unwrap();
        assert_eq!(abandoned.load(Ordering::Relaxed), 1);
    });
}

/// A waker that counts its wakes (loom-visible).
struct CountingWaker {
    woken: AtomicUsize,
}

impl std::task::Wake for CountingWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.woken.fetch_add(1, Ordering::Release);
    }
}

fn counting_waker() -> (std::sync::Arc<CountingWaker>, std::task::Waker) {
    let counter = std::sync::Arc::new(CountingWaker {
        woken: AtomicUsize::new(0),
    });
    let waker = std::task::Waker::from(counter.clone());
    (counter, waker)
}

/// Waker registration racing a put (the `ddf::wake` protocol): a future
/// polled before, during and after the put — with a different waker on its
/// second poll — either sees the value or has its latest waker woken.
#[test]
fn loom_waker_registration_races_put() {
    use std::future::{Future, IntoFuture};
    use std::task::{Context, Poll};

    loom::model(|| {
        let ddf: Ddf<usize> = Ddf::new();
        let putter = {
            let ddf = ddf.clone();
            thread::spawn(move || ddf.put(42).unwrap())
        };
        let mut future = Box::pin((&ddf).into_future());
        let (_first_counter, first) = counting_waker();
        let (second_counter, second) = counting_waker();
        let mut result = future.as_mut().poll(&mut Context::from_waker(&first));
        if result.is_pending() {
            result = future.as_mut().poll(&mut Context::from_waker(&second));
        }
        if result.is_pending() {
            // The put must wake the waker of the last poll.
            while second_counter.woken.load(Ordering::Acquire) == 0 {
                thread::yield_now();
            }
            result = future.as_mut().poll(&mut Context::from_waker(&second));
        }
        assert_eq!(result, Poll::Ready(&42));
        putter.join().unwrap();
    });
}

/// A future task woken by another thread while it is being polled, or
/// after: it is polled again exactly once more, completes once, and its
/// record is freed (the `future_task` protocol).
#[test]
fn loom_future_task_wake_races_its_poll() {
    use std::collections::VecDeque;
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};

    use loom::sync::Mutex;

    use crate::finish::ScopeBase;
    use crate::future_task::{FutureTask, TaskEnd, TaskOwner};

    type Queue = Arc<Mutex<VecDeque<JobRef>>>;

    struct Owner {
        queue: Queue,
        completions: Arc<AtomicUsize>,
    }

    impl TaskOwner<()> for Owner {
        fn schedule(&self, job: JobRef) {
            self.queue.lock().unwrap().push_back(job);
        }
        fn enclosing(&self) -> *const ScopeBase {
            std::ptr::null()
        }
        fn completed(&self, end: TaskEnd<()>) {
            assert!(matches!(end, TaskEnd::Output(())));
            self.completions.fetch_add(1, Ordering::Release);
        }
    }

    /// Pending on its first poll (handing its waker out), ready on the next.
    struct TwoPolls {
        polls: Arc<AtomicUsize>,
        waker_out: Arc<Mutex<Option<Waker>>>,
    }

    impl Future for TwoPolls {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.polls.fetch_add(1, Ordering::Relaxed) == 0 {
                *self.waker_out.lock().unwrap() = Some(cx.waker().clone());
                Poll::Pending
            } else {
                Poll::Ready(())
            }
        }
    }

    loom::model(|| {
        let queue: Queue = Arc::new(Mutex::new(VecDeque::new()));
        let completions = Arc::new(AtomicUsize::new(0));
        let polls = Arc::new(AtomicUsize::new(0));
        let waker_out = Arc::new(Mutex::new(None));
        let future = TwoPolls {
            polls: polls.clone(),
            waker_out: waker_out.clone(),
        };
        let owner = Owner {
            queue: queue.clone(),
            completions: completions.clone(),
        };
        // SAFETY: the future and owner are 'static.
        unsafe { FutureTask::spawn(future, owner) };
        let waker_thread = {
            let waker_out = waker_out.clone();
            thread::spawn(move || loop {
                if let Some(waker) = waker_out.lock().unwrap().take() {
                    waker.wake();
                    return;
                }
                thread::yield_now();
            })
        };
        // The worker: run jobs until the task completed.
        while completions.load(Ordering::Acquire) == 0 {
            let job = queue.lock().unwrap().pop_front();
            match job {
                Some(job) => job.execute(),
                None => thread::yield_now(),
            }
        }
        waker_thread.join().unwrap();
        assert_eq!(polls.load(Ordering::Relaxed), 2);
        assert_eq!(completions.load(Ordering::Acquire), 1);
        assert!(
            queue.lock().unwrap().is_empty(),
            "a completed task was rescheduled"
        );
    });
}
