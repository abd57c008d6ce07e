//! `hc_runtime::join`: results, the stolen path, panics, and the enclosing
//! finish of the second half.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use hc_runtime::{join, panic_message, Backoff, BackoffPolicy, Runtime, Snooze};

fn runtime(workers: usize) -> Runtime {
    Runtime::builder().num_workers(workers).build().unwrap()
}

fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// Spins (with the runtime's back-off, never parking) until `flag` is set.
fn spin_until(flag: &AtomicBool) {
    let mut backoff = Backoff::new(BackoffPolicy::WAIT);
    while !flag.load(Ordering::Acquire) {
        if let Snooze::Park(_) = backoff.snooze() {
            std::thread::yield_now();
        }
    }
}

#[test]
fn fib_by_join_is_right_on_every_pool_size() {
    for workers in [1, 2, 3, 4] {
        let rt = runtime(workers);
        let n = if cfg!(miri) { 10 } else { 22 };
        assert_eq!(
            rt.join(|| fib(n), || fib(n - 1)),
            (fib_seq(n), fib_seq(n - 1))
        );
        assert_eq!(
            rt.finish(|_| fib(n + 2)),
            fib_seq(n + 2),
            "{workers} workers"
        );
    }
}

#[test]
fn join_outside_the_workers_uses_the_default_runtime() {
    assert_eq!(join(|| fib(15), || 7), (610, 7));
}

#[test]
fn a_stolen_second_half_runs_on_another_worker() {
    let rt = runtime(2);
    let b_started = AtomicBool::new(false);
    let (a_worker, b_worker) = rt
        .join(
            || {
                // `a` cannot end before `b` has started, so `b` must have been
                // stolen: the caller is busy here.
                join(
                    || {
                        spin_until(&b_started);
                        hc_runtime::current_worker_index()
                    },
                    || {
                        b_started.store(true, Ordering::Release);
                        hc_runtime::current_worker_index()
                    },
                )
            },
            || (),
        )
        .0;
    assert!(a_worker.is_some() && b_worker.is_some());
    assert_ne!(a_worker, b_worker, "the second half ran on the caller");
}

#[test]
fn both_halves_may_borrow_the_callers_data() {
    let rt = runtime(2);
    let mut data: Vec<u64> = (0..10_000).collect();
    rt.join(
        || {
            let (left, right) = data.split_at_mut(5_000);
            join(
                || left.iter_mut().for_each(|x| *x *= 2),
                || right.iter_mut().for_each(|x| *x += 1),
            )
        },
        || (),
    );
    assert_eq!(data[4_999], 9_998);
    assert_eq!(data[5_000], 5_001);
}

#[test]
fn a_panic_in_either_half_is_raised_after_both_ran() {
    let rt = runtime(2);
    for panicking in ["a", "b", "both"] {
        let ran = AtomicUsize::new(0);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            rt.join(
                || {
                    ran.fetch_add(1, Ordering::Relaxed);
                    if panicking != "b" {
                        panic!("a failed");
                    }
                },
                || {
                    ran.fetch_add(1, Ordering::Relaxed);
                    if panicking != "a" {
                        panic!("b failed");
                    }
                },
            )
        }));
        let payload = outcome.expect_err("the panic was lost");
        let expected = if panicking == "b" {
            "b failed"
        } else {
            "a failed"
        };
        assert_eq!(panic_message(&*payload), expected, "{panicking}");
        assert_eq!(
            ran.load(Ordering::Relaxed),
            2,
            "{panicking}: a half did not run"
        );
    }
}

#[test]
fn a_stolen_second_half_reports_its_panic() {
    let rt = runtime(2);
    let b_started = AtomicBool::new(false);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        rt.join(
            || spin_until(&b_started),
            || {
                b_started.store(true, Ordering::Release);
                panic!("stolen half failed")
            },
        )
    }));
    let payload = outcome.expect_err("the panic was lost");
    assert_eq!(panic_message(&*payload), "stolen half failed");
}

#[test]
fn a_stolen_second_half_runs_under_the_callers_finish() {
    let rt = runtime(2);
    let b_started = AtomicBool::new(false);
    let (completed, promise) = rt.finish(|_| {
        join(
            || spin_until(&b_started),
            || {
                b_started.store(true, Ordering::Release);
                // The thief was idle, outside any finish, when it took this
                // half: it must run it under the caller's finish.
                let (mut completer, promise) = hc_runtime::promise::<u32>();
                let joined = completer.join_enclosing_finish();
                completer.complete(1);
                (joined, promise)
            },
        )
        .1
    });
    assert!(completed, "the stolen half ran outside the caller's finish");
    assert_eq!(promise.wait(), Ok(1));
}

#[test]
fn join_nests_inside_finish_tasks_and_future_tasks() {
    let first = if cfg!(miri) { 8 } else { 15 };
    let rt = runtime(2);
    let mut results = [0u64; 4];
    rt.finish(|s| {
        for (i, slot) in results.iter_mut().enumerate() {
            s.spawn(move |_| *slot = fib(first + i as u64));
        }
    });
    assert_eq!(results, [0, 1, 2, 3].map(|i| fib_seq(first + i)));
    let from_future = rt.block_on(async { join(|| fib(first + 1), || fib(first + 2)) });
    assert_eq!(from_future, (fib_seq(first + 1), fib_seq(first + 2)));
}
