//! Futures as tasks: `spawn_future`, `block_on`, detached futures and join
//! handles, `.await` on every handle, promises, and the poller the workers
//! drive.

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use hc_runtime::{promise, ready, Ddf, Handle, JoinError, Polled, Poller, PromiseError, Runtime};

fn runtime(workers: usize) -> Runtime {
    Runtime::builder().num_workers(workers).build().unwrap()
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// A future that is pending once (waking itself), then ready: exercises
/// the wake-while-running path.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

#[test]
fn twenty_thousand_waiting_futures_on_one_worker_hold_no_stack() {
    // Every future awaits the previous one's DDF; they are spawned in an
    // order that makes each one wait. A blocking wait would nest 20,000
    // frames on the worker's stack; futures hold none.
    const N: usize = if cfg!(miri) { 200 } else { 20_000 };
    let rt = runtime(1);
    let ddfs: Vec<Ddf<u64>> = (0..N).map(|_| Ddf::new()).collect();
    let finished = AtomicUsize::new(0);
    rt.finish(|s| {
        for i in (1..N).rev() {
            let (ddfs, finished) = (&ddfs, &finished);
            s.spawn_future(async move {
                let previous = *(&ddfs[i - 1]).await;
                ddfs[i].put(previous + i as u64).unwrap();
                finished.fetch_add(1, Ordering::Relaxed);
            });
        }
        ddfs[0].put(0).unwrap();
    });
    assert_eq!(finished.load(Ordering::Relaxed), N - 1);
    assert_eq!(ddfs[N - 1].get(), Ok(&((N as u64 - 1) * N as u64 / 2)));
}

#[test]
fn futures_borrow_the_environment_and_spawn_into_their_scope() {
    let rt = runtime(2);
    let mut results = vec![0u64; 64];
    let gate = Ddf::new();
    rt.finish(|s| {
        for (i, slot) in results.iter_mut().enumerate() {
            let gate = &gate;
            s.spawn_future(async move {
                let base: &u64 = gate.await;
                // The future captured the scope: spawn a plain task into it.
                s.spawn(move |_| *slot = base + i as u64);
            });
        }
        s.spawn(|_| gate.put(100).unwrap());
    });
    assert!(results
        .iter()
        .enumerate()
        .all(|(i, &v)| v == 100 + i as u64));
}

#[test]
fn owned_ddf_await_clones_the_value_and_ready_waits_for_any_awaitable() {
    let rt = runtime(2);
    let text = Ddf::new();
    let (completer, promise) = promise::<u32>();
    let got = rt.block_on(async {
        let producer = text.clone();
        Handle::current().spawn_detached(move |_| producer.put("hello".to_owned()).unwrap());
        std::thread::spawn(move || completer.complete(3));
        ready(&promise).await;
        (text.clone().await, promise.get().copied())
    });
    assert_eq!(got, ("hello".to_owned(), Ok(3)));
}

#[test]
fn a_future_woken_while_running_is_polled_again() {
    const FUTURES: usize = if cfg!(miri) { 20 } else { 1000 };
    let rt = runtime(2);
    let polls = AtomicUsize::new(0);
    rt.finish(|s| {
        for _ in 0..FUTURES {
            let polls = &polls;
            s.spawn_future(async move {
                YieldOnce(false).await;
                polls.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    assert_eq!(polls.load(Ordering::Relaxed), FUTURES);
}

#[test]
fn wakes_racing_puts_from_many_threads_lose_no_task() {
    // Futures await DDFs put by plain threads at the same time: every
    // future must complete (a lost wake-up hangs the finish).
    const ROUNDS: usize = if cfg!(miri) { 3 } else { 20 };
    const PER_THREAD: usize = if cfg!(miri) { 10 } else { 50 };
    let rt = runtime(2);
    for _ in 0..ROUNDS {
        let ddfs: Vec<Ddf<usize>> = (0..4 * PER_THREAD).map(|_| Ddf::new()).collect();
        let sum = AtomicUsize::new(0);
        rt.finish(|s| {
            for ddf in &ddfs {
                let sum = &sum;
                s.spawn_future(async move {
                    sum.fetch_add(*ddf.await, Ordering::Relaxed);
                });
            }
            std::thread::scope(|threads| {
                for chunk in ddfs.chunks(PER_THREAD) {
                    threads.spawn(move || {
                        for (i, ddf) in chunk.iter().enumerate() {
                            ddf.put(i + 1).unwrap();
                        }
                    });
                }
            });
        });
        assert_eq!(
            sum.load(Ordering::Relaxed),
            4 * (PER_THREAD * (PER_THREAD + 1) / 2)
        );
    }
}

#[test]
fn a_panicking_future_panics_its_finish_after_the_others_complete() {
    let rt = runtime(2);
    let others = AtomicUsize::new(0);
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        rt.finish(|s| {
            s.spawn_future(async {
                YieldOnce(false).await;
                panic::resume_unwind(Box::new("future failed"));
            });
            for _ in 0..10 {
                s.spawn_future(async {
                    YieldOnce(false).await;
                    others.fetch_add(1, Ordering::SeqCst);
                });
            }
        })
    }));
    let payload = result.expect_err("the finish must re-raise the panic");
    assert_eq!(panic_message(&*payload), "future failed");
    assert_eq!(others.load(Ordering::SeqCst), 10);
    // The runtime is still usable.
    assert_eq!(rt.block_on(async { 1 + 1 }), 2);
}

/// A future that returns Pending and drops its waker: it can never be
/// woken again.
struct ForgetsItsWaker;

impl Future for ForgetsItsWaker {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

#[test]
fn a_future_that_can_never_be_woken_fails_its_finish_instead_of_hanging() {
    let rt = runtime(1);
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        rt.finish(|s| s.spawn_future(ForgetsItsWaker));
    }));
    let message = panic_message(&*result.expect_err("the finish must fail"));
    assert!(message.contains("can never complete"), "{message}");
    let detached = rt.spawn(ForgetsItsWaker);
    assert!(matches!(detached.join(), Err(JoinError::NeverWoken)));
}

#[test]
fn detached_futures_give_their_output_or_their_panic_to_the_join_handle() {
    let rt = runtime(2);
    let input = Ddf::new();
    let doubled = rt.spawn({
        let input = input.clone();
        async move { input.await * 2 }
    });
    assert!(!doubled.is_finished());
    input.put(21u64).unwrap();
    assert_eq!(doubled.join().unwrap(), 42);

    let failing = rt.spawn(async {
        YieldOnce(false).await;
        panic::resume_unwind(Box::new("detached failure"));
    });
    let error = failing.join().unwrap_err();
    assert!(error.to_string().contains("detached failure"), "{error}");

    // A join handle is itself awaitable.
    let chained = rt.block_on(async {
        let first = Handle::current().spawn(async { 5 });
        first.await.unwrap() + 1
    });
    assert_eq!(chained, 6);
}

#[test]
fn block_on_from_a_worker_and_from_threads() {
    let rt = runtime(2);
    let from_threads: Vec<u32> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4u32)
            .map(|i| {
                let rt = &rt;
                s.spawn(move || rt.block_on(async move { i * 10 }))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(from_threads, [0, 10, 20, 30]);
    let nested = rt.finish(|_| Handle::current().block_on(async { 7 }));
    assert_eq!(nested, 7);
}

#[test]
fn handle_current_off_a_worker_panics_with_a_clear_message() {
    let payload = panic::catch_unwind(Handle::current).unwrap_err();
    assert!(panic_message(&*payload).contains("outside a computation worker"));
}

#[test]
fn spawning_on_a_shut_down_runtime_panics_instead_of_losing_the_task() {
    let rt = runtime(1);
    let handle = rt.handle().clone();
    drop(rt);
    let payload =
        panic::catch_unwind(AssertUnwindSafe(|| handle.spawn_detached(|_| {}))).unwrap_err();
    assert!(panic_message(&*payload).contains("shut down"));
}

#[test]
fn promises_hand_over_one_value_and_report_abandonment() {
    let rt = runtime(2);
    let (completer, promise_a) = promise::<Vec<u8>>();
    let taken = rt.block_on(async move {
        Handle::current().spawn_detached(move |_| completer.complete(vec![1, 2]));
        promise_a.await
    });
    assert_eq!(taken, Ok(vec![1, 2]));

    let (completer, promise_b) = promise::<u8>();
    drop(completer);
    assert_eq!(rt.block_on(promise_b), Err(PromiseError::Abandoned));

    // A data-driven task awaiting an abandoned promise runs and sees why.
    let (completer, promise_c) = promise::<u8>();
    let seen = Mutex::new(None);
    rt.finish(|s| {
        s.spawn_await(&[&promise_c], |_| {
            *seen.lock().unwrap() = Some(promise_c.get().err())
        });
        drop(completer);
    });
    assert_eq!(*seen.lock().unwrap(), Some(Some(PromiseError::Abandoned)));
}

/// A poller with `pending` operations, each completing after a few polls;
/// completing one completes a promise.
struct CountdownPoller {
    polls: AtomicUsize,
    remaining: Mutex<Vec<(usize, hc_runtime::Completer<usize>)>>,
    busy: AtomicBool,
}

impl CountdownPoller {
    fn new() -> Arc<Self> {
        Arc::new(CountdownPoller {
            polls: AtomicUsize::new(0),
            remaining: Mutex::new(Vec::new()),
            busy: AtomicBool::new(false),
        })
    }

    fn start(&self, polls_needed: usize) -> hc_runtime::Promise<usize> {
        let (completer, promise) = promise();
        self.remaining
            .lock()
            .unwrap()
            .push((polls_needed, completer));
        self.busy.store(true, Ordering::SeqCst);
        promise
    }
}

impl Poller for CountdownPoller {
    fn poll(&self) -> Polled {
        let mut remaining = self.remaining.lock().unwrap();
        if remaining.is_empty() {
            return Polled::Idle;
        }
        let polls = self.polls.fetch_add(1, Ordering::SeqCst) + 1;
        let mut progress = false;
        let mut i = 0;
        while i < remaining.len() {
            remaining[i].0 -= 1;
            if remaining[i].0 == 0 {
                let (_, completer) = remaining.swap_remove(i);
                completer.complete(polls);
                progress = true;
            } else {
                i += 1;
            }
        }
        if remaining.is_empty() {
            self.busy.store(false, Ordering::SeqCst);
        }
        if progress {
            Polled::Progress
        } else {
            Polled::Waiting
        }
    }

    fn has_work(&self) -> bool {
        self.busy.load(Ordering::SeqCst)
    }
}

#[test]
fn idle_workers_drive_the_poller_until_its_work_completes() {
    let poller = CountdownPoller::new();
    let rt = Runtime::builder()
        .num_workers(2)
        .poller(poller.clone())
        .build()
        .unwrap();
    // Operations started from a plain thread: the workers are idle and
    // must come back to poll (the starter wakes one).
    // The last count keeps the duty holder polling through its back-off
    // (smaller under Miri, which interprets every poll).
    for needed in [1, 50, if cfg!(miri) { 200 } else { 2000 }] {
        let promise = poller.start(needed);
        rt.handle().wake_poller();
        assert!(promise.wait().unwrap() >= needed);
    }
    // From futures: awaiting holds no worker, the same worker polls.
    let total = rt.block_on(async {
        let (a, b) = (poller.start(10), poller.start(30));
        a.await.unwrap() + b.await.unwrap()
    });
    assert!(total > 0);
}

#[test]
fn busy_workers_poll_between_tasks() {
    // One worker, busy with a long chain of short tasks: the poller's work
    // completes during the computation, not only once the worker is idle.
    let poller = CountdownPoller::new();
    let rt = Runtime::builder()
        .num_workers(1)
        .poller(poller.clone())
        .poll_interval(Duration::from_micros(1))
        .build()
        .unwrap();
    let promise = poller.start(3);
    let completed_during_compute = AtomicBool::new(false);
    rt.finish(|s| {
        fn step<'s>(
            s: &'s hc_runtime::Scope<'s, '_>,
            left: u32,
            promise: &'s hc_runtime::Promise<usize>,
            seen: &'s AtomicBool,
        ) {
            if promise.is_complete() {
                seen.store(true, Ordering::SeqCst);
                return;
            }
            if left > 0 {
                let spin_until = std::time::Instant::now() + Duration::from_micros(5);
                while std::time::Instant::now() < spin_until {}
                s.spawn(move |s| step(s, left - 1, promise, seen));
            }
        }
        step(
            s,
            if cfg!(miri) { 200 } else { 100_000 },
            &promise,
            &completed_during_compute,
        );
    });
    assert!(completed_during_compute.load(Ordering::SeqCst));
}

#[test]
fn a_waker_from_another_executor_still_completes_a_ddf_future() {
    // The DDF futures are plain Rust futures: poll one by hand with a
    // thread-unparking waker, and swap wakers between polls.
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let ddf = Ddf::new();
    let mut future = Box::pin(std::future::IntoFuture::into_future(ddf.clone()));
    let first = Waker::from(Arc::new(Unpark(std::thread::current())));
    assert!(future
        .as_mut()
        .poll(&mut Context::from_waker(&first))
        .is_pending());
    let producer = ddf.clone();
    let putter = std::thread::spawn(move || producer.put(11).unwrap());
    let second = Waker::from(Arc::new(Unpark(std::thread::current())));
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut Context::from_waker(&second)) {
            assert_eq!(value, 11);
            break;
        }
        std::thread::park_timeout(Duration::from_millis(10));
    }
    putter.join().unwrap();
}
