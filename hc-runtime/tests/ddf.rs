//! Data-driven futures: single assignment, AND and OR await lists, puts and
//! waits from threads that are not workers, and DDFs that are never put.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Barrier};

use hc_runtime::{finish, AlreadyPut, Awaitable, Backoff, BackoffPolicy, Ddf, NotPut, Runtime};

fn runtime(workers: usize) -> Runtime {
    Runtime::builder().num_workers(workers).build().unwrap()
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_owned()
    }
}

/// Runs `op` in a finish on `rt` and returns the message of the panic it must
/// raise.
fn finish_panic_message<'scope, OP>(rt: &Runtime, op: OP) -> String
where
    OP: for<'s> FnOnce(&'s hc_runtime::Scope<'s, 'scope>) + Send,
{
    match panic::catch_unwind(AssertUnwindSafe(|| rt.finish(op))) {
        Ok(()) => panic!("the finish was expected to panic"),
        Err(payload) => panic_message(&*payload),
    }
}

/// A finish that exercises tasks and a DDF, to show a runtime still works.
fn assert_runtime_usable(rt: &Runtime) {
    let d = Ddf::new();
    let hits = AtomicUsize::new(0);
    rt.finish(|s| {
        s.spawn_await(&[&d], |_| {
            assert_eq!(d.get(), Ok(&11));
            hits.fetch_add(1, Ordering::Relaxed);
        });
        for _ in 0..100 {
            s.spawn(|_| {
                hits.fetch_add(1, Ordering::Relaxed);
            });
        }
        s.spawn(|_| d.put(11).unwrap());
    });
    assert_eq!(hits.load(Ordering::Relaxed), 101);
}

#[test]
fn put_get_and_single_assignment() {
    let d: Ddf<String> = Ddf::new();
    assert!(!d.is_put());
    assert_eq!(d.get(), Err(NotPut));
    assert!(!NotPut.to_string().is_empty());

    d.put("first".to_owned()).unwrap();
    assert!(d.is_put());
    assert_eq!(d.get().map(String::as_str), Ok("first"));

    // The rejected value is handed back, and the stored one is untouched.
    let AlreadyPut(back) = d.put("second".to_owned()).unwrap_err();
    assert_eq!(back, "second");
    assert_eq!(d.get().map(String::as_str), Ok("first"));
    let err = d.put("third".to_owned()).unwrap_err();
    assert!(err.to_string().contains("already put"), "{err}");
    assert_eq!(err.0, "third");

    // Clones are handles on the same container.
    let clone = d.clone();
    assert!(clone.is_put());
    assert_eq!(clone.get().map(String::as_str), Ok("first"));
    assert_eq!(
        clone.put("fourth".to_owned()),
        Err(AlreadyPut("fourth".to_owned()))
    );

    // A put through a clone is seen through the original.
    let e: Ddf<u32> = Ddf::default();
    let e2 = e.clone();
    assert_eq!(e.get(), Err(NotPut));
    e2.put(5).unwrap();
    assert_eq!(e.get(), Ok(&5));
    assert_eq!(*e.wait(), 5);
}

#[test]
fn concurrent_puts_exactly_one_wins() {
    for _ in 0..if cfg!(miri) { 5 } else { 200 } {
        let d: Ddf<usize> = Ddf::new();
        let barrier = Barrier::new(4);
        let winners = AtomicUsize::new(0);
        let rejected_ok = AtomicUsize::new(0);
        std::thread::scope(|threads| {
            for t in 0..4 {
                let (d, barrier, winners, rejected_ok) = (&d, &barrier, &winners, &rejected_ok);
                threads.spawn(move || {
                    barrier.wait();
                    match d.put(t) {
                        Ok(()) => {
                            winners.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(AlreadyPut(v)) => {
                            if v == t {
                                rejected_ok.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                });
            }
        });
        assert_eq!(winners.load(Ordering::Relaxed), 1);
        assert_eq!(rejected_ok.load(Ordering::Relaxed), 3);
        assert!(*d.get().unwrap() < 4);
    }
}

#[test]
fn chain_of_ten_thousand_tasks() {
    const N: usize = if cfg!(miri) { 100 } else { 10_000 };
    for workers in [1, 2, 4] {
        let rt = runtime(workers);
        let ddfs: Vec<Ddf<u64>> = (0..=N).map(|_| Ddf::new()).collect();
        let ddfs = &ddfs;
        let ran = AtomicUsize::new(0);
        let ran = &ran;
        rt.finish(|s| {
            // Registered last link first, so every link is released by the
            // put of its predecessor rather than found already full.
            for i in (0..N).rev() {
                s.spawn_await(&[&ddfs[i]], move |_| {
                    assert!(!ddfs[i + 1].is_put());
                    let v = *ddfs[i].get().unwrap();
                    ddfs[i + 1].put(v + i as u64).unwrap();
                    ran.fetch_add(1, Ordering::Relaxed);
                });
            }
            assert!(!ddfs[N].is_put());
            ddfs[0].put(7).unwrap();
        });
        let expected = 7 + (N as u64 - 1) * N as u64 / 2;
        assert_eq!(ddfs[N].get(), Ok(&expected), "workers = {workers}");
        assert_eq!(ran.load(Ordering::Relaxed), N);
    }
}

#[test]
fn chain_built_by_the_tasks_themselves() {
    // Each link spawns the next one from inside the chain, awaiting the DDF
    // it is about to put (sometimes already full at registration).
    const N: usize = if cfg!(miri) { 100 } else { 10_000 };
    fn link<'s>(s: &'s hc_runtime::Scope<'s, '_>, ddfs: &'s [Ddf<u64>], i: usize) {
        if i + 1 < ddfs.len() {
            s.spawn_await(&[&ddfs[i]], move |s| {
                link(s, ddfs, i + 1);
                ddfs[i + 1]
                    .put(ddfs[i].get().unwrap() * 3 % 1_000_003)
                    .unwrap();
            });
        }
    }
    let rt = runtime(2);
    let ddfs: Vec<Ddf<u64>> = (0..=N).map(|_| Ddf::new()).collect();
    rt.finish(|s| {
        link(s, &ddfs, 0);
        ddfs[0].put(1).unwrap();
    });
    let expected = (0..N).fold(1u64, |v, _| v * 3 % 1_000_003);
    assert_eq!(ddfs[N].get(), Ok(&expected));
}

#[test]
fn diamond() {
    let rt = runtime(2);
    for round in 0..if cfg!(miri) { 10 } else { 500u64 } {
        let (a, b, c, d) = (Ddf::new(), Ddf::new(), Ddf::new(), Ddf::new());
        let result = rt.finish(|s| {
            // Vary the order in which the nodes are created and put.
            let spawn_d = || {
                s.spawn_await(&[&b, &c], |_| {
                    let (b, c) = (*b.get().unwrap(), *c.get().unwrap());
                    d.put(b * c).unwrap();
                })
            };
            if round % 2 == 0 {
                spawn_d();
            }
            s.spawn_await(&[&a], |_| b.put(a.get().unwrap() * 2).unwrap());
            s.spawn_await(&[&a], |_| c.put(a.get().unwrap() + 7).unwrap());
            if round % 3 == 0 {
                a.put(round).unwrap();
            } else {
                s.spawn(|_| a.put(round).unwrap());
            }
            if round % 2 == 1 {
                spawn_d();
            }
            d.wait();
            *d.get().unwrap()
        });
        assert_eq!(result, round * 2 * (round + 7));
        assert_eq!(d.get(), Ok(&(round * 2 * (round + 7))));
    }
}

#[test]
fn one_ddf_awaited_by_a_thousand_tasks() {
    const TASKS: usize = if cfg!(miri) { 20 } else { 1000 };
    for workers in [1, 2, 4] {
        let rt = runtime(workers);
        let d = Ddf::new();
        let sum = AtomicUsize::new(0);
        let ran = AtomicUsize::new(0);
        rt.finish(|s| {
            for _ in 0..TASKS {
                s.spawn_await(&[&d], |_| {
                    sum.fetch_add(*d.get().unwrap(), Ordering::Relaxed);
                    ran.fetch_add(1, Ordering::Relaxed);
                });
            }
            s.spawn(|_| {
                // Nothing awaiting `d` may have run before its put.
                assert_eq!(ran.load(Ordering::Relaxed), 0);
                d.put(3).unwrap();
            });
        });
        assert_eq!(ran.load(Ordering::Relaxed), TASKS, "workers = {workers}");
        assert_eq!(sum.load(Ordering::Relaxed), 3 * TASKS);
    }
}

/// Waits (polling the threads' states in `/proc`) until the `count`
/// threads named `prefix…` all sleep in the kernel.
fn wait_until_parked(prefix: &str, count: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let mut parked = 0;
        for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
            let path = task.path();
            let name = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
            let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
            // The state follows the parenthesised name.
            let state = stat
                .rsplit(") ")
                .next()
                .and_then(|rest| rest.chars().next());
            if name.starts_with(prefix) && state == Some('S') {
                parked += 1;
            }
        }
        if parked == count {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the idle workers never parked"
        );
        std::thread::yield_now();
    }
}

/// Tasks released together by one put run in parallel: the putting worker
/// may keep the first for itself, but must wake another worker for the
/// second once it goes back for work, also when the put came from a finish
/// body. Each task here waits for the other to have started, so running
/// them one after the other on the putting worker would never end.
#[test]
#[cfg_attr(miri, ignore = "reads thread states in /proc")]
fn tasks_released_by_one_put_run_in_parallel() {
    const PREFIX: &str = "hc-relpar-";
    let rt = Runtime::builder()
        .num_workers(2)
        .thread_name_prefix(PREFIX)
        .build()
        .unwrap();
    for put_in_body in [true, false] {
        // With every worker parked, the worker that takes the finish is
        // the only one awake: nobody steals a released task unless woken.
        wait_until_parked(PREFIX, 2);
        let d = Ddf::new();
        let started = [AtomicBool::new(false), AtomicBool::new(false)];
        rt.finish(|s| {
            for (me, other) in [(0, 1), (1, 0)] {
                let (d, started) = (&d, &started);
                s.spawn_await(&[d], move |_| {
                    started[me].store(true, Ordering::Release);
                    // A generous bound turns a hang into a failure.
                    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
                    let mut backoff = Backoff::new(BackoffPolicy::WAIT);
                    while !started[other].load(Ordering::Acquire) {
                        assert!(
                            std::time::Instant::now() < deadline,
                            "released tasks ran one after the other"
                        );
                        if backoff.snooze().is_park() {
                            std::thread::yield_now();
                        }
                    }
                });
            }
            if put_in_body {
                d.put(()).unwrap();
            } else {
                s.spawn(|_| d.put(()).unwrap());
            }
        });
    }
}

#[test]
fn and_list_with_duplicates_runs_once_after_all_are_put() {
    let rt = runtime(2);
    for round in 0..if cfg!(miri) { 10 } else { 200 } {
        let (a, b) = (Ddf::new(), Ddf::new());
        let short = AtomicUsize::new(0);
        let long = AtomicUsize::new(0);
        rt.finish(|s| {
            if round % 2 == 0 {
                a.put(1u32).unwrap();
            }
            // At most four entries (inline list) and more (heap list).
            s.spawn_await(&[&a, &a, &b, &a], |_| {
                assert!(a.is_put() && b.is_put());
                short.fetch_add(1, Ordering::SeqCst);
            });
            s.spawn_await(&[&b, &a, &b, &b, &a, &a, &b], |_| {
                assert!(a.is_put() && b.is_put());
                long.fetch_add(1, Ordering::SeqCst);
            });
            s.spawn(|_| {
                b.put(2u32).unwrap();
            });
            if round % 2 == 1 {
                s.spawn(|_| a.put(1u32).unwrap());
            }
        });
        assert_eq!(short.load(Ordering::SeqCst), 1);
        assert_eq!(long.load(Ordering::SeqCst), 1);
    }
}

#[test]
fn and_list_of_one_ddf_repeated_waits_for_its_put() {
    let rt = runtime(2);
    let a = Ddf::new();
    let ran = AtomicUsize::new(0);
    rt.finish(|s| {
        s.spawn_await(&[&a, &a, &a, &a, &a, &a], |_| {
            assert_eq!(a.get(), Ok(&9));
            ran.fetch_add(1, Ordering::SeqCst);
        });
        s.spawn(|_| {
            assert_eq!(ran.load(Ordering::SeqCst), 0);
            a.put(9).unwrap();
        });
    });
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[test]
fn empty_and_list_runs_at_once() {
    // One worker: if the empty-list task were not runnable at once, the body's
    // wait for `gate` (which executes other tasks meanwhile) could not finish.
    let rt = runtime(1);
    let gate = Ddf::new();
    let ran = AtomicUsize::new(0);
    rt.finish(|s| {
        s.spawn_await(&[], |_| {
            ran.fetch_add(1, Ordering::SeqCst);
            gate.put(()).unwrap();
        });
        gate.wait();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    });
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[test]
fn await_any_released_exactly_once_by_racing_thread_puts() {
    const DEPS: usize = 4;
    let iterations = if cfg!(miri) {
        8
    } else if cfg!(debug_assertions) {
        50
    } else {
        400
    };
    let rt = runtime(2);
    for iter in 0..iterations {
        let ddfs: Vec<Ddf<usize>> = (0..DEPS).map(|_| Ddf::new()).collect();
        // One dependency is never put; the others are put concurrently by
        // plain threads.
        let skipped = iter % DEPS;
        let runs = AtomicUsize::new(0);
        let fired = AtomicUsize::new(usize::MAX);
        let barrier = Barrier::new(DEPS); // DEPS - 1 putters + the finish body
        std::thread::scope(|threads| {
            for (i, d) in ddfs.iter().enumerate() {
                if i != skipped {
                    let barrier = &barrier;
                    threads.spawn(move || {
                        barrier.wait();
                        d.put(i).unwrap();
                    });
                }
            }
            rt.finish(|s| {
                let deps: Vec<&dyn Awaitable> = ddfs.iter().map(|d| d as &dyn Awaitable).collect();
                s.spawn_await_any(&deps, |_, index| {
                    runs.fetch_add(1, Ordering::SeqCst);
                    fired.store(index, Ordering::SeqCst);
                    assert!(ddfs[index].is_put(), "released by a DDF that is not put");
                    assert_eq!(ddfs[index].get(), Ok(&index));
                });
                // Let the putters go only once the task is registered.
                barrier.wait();
            });
        });
        assert_eq!(runs.load(Ordering::SeqCst), 1, "iteration {iter}");
        let index = fired.load(Ordering::SeqCst);
        assert!(
            index < DEPS && index != skipped,
            "iteration {iter}: index {index}"
        );
        // `ddfs[skipped]` is dropped here without a put: the task already ran,
        // so that is no error.
    }
}

#[test]
fn await_any_with_a_dependency_already_put() {
    let rt = runtime(2);
    for round in 0..if cfg!(miri) { 10 } else { 100 } {
        let (a, b, c) = (Ddf::new(), Ddf::new(), Ddf::new());
        b.put(20u32).unwrap();
        let runs = AtomicUsize::new(0);
        let fired = AtomicUsize::new(usize::MAX);
        rt.finish(|s| {
            s.spawn_await_any(&[&a, &b, &c], |_, index| {
                runs.fetch_add(1, Ordering::SeqCst);
                fired.store(index, Ordering::SeqCst);
            });
            // Puts racing with (or following) the release by `b`.
            s.spawn(|_| a.put(10).unwrap());
            if round % 2 == 0 {
                c.put(30).unwrap();
            }
        });
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        // `a` and `c` were empty when the task registered, `b` was full.
        assert_eq!(fired.load(Ordering::SeqCst), 1);
    }
}

#[test]
fn await_any_with_duplicates_and_a_single_dependency() {
    let rt = runtime(2);
    let (a, b) = (Ddf::new(), Ddf::new());
    let runs = AtomicUsize::new(0);
    let fired = AtomicUsize::new(usize::MAX);
    let single = AtomicUsize::new(0);
    rt.finish(|s| {
        s.spawn_await_any(&[&a, &a, &a, &a, &a, &a], |_, index| {
            assert_eq!(a.get(), Ok(&1));
            runs.fetch_add(1, Ordering::SeqCst);
            fired.store(index, Ordering::SeqCst);
        });
        s.spawn_await_any(&[&b], |_, index| {
            assert_eq!(index, 0);
            assert_eq!(b.get(), Ok(&2));
            single.fetch_add(1, Ordering::SeqCst);
        });
        s.spawn(|_| a.put(1).unwrap());
        s.spawn(|_| b.put(2).unwrap());
    });
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert!(fired.load(Ordering::SeqCst) < 6);
    assert_eq!(single.load(Ordering::SeqCst), 1);
}

#[test]
fn puts_from_plain_threads_release_tasks() {
    const N: usize = 16;
    for workers in [1, 2] {
        let rt = runtime(workers);
        for _ in 0..if cfg!(miri) { 3 } else { 50 } {
            let ddfs: Vec<Ddf<usize>> = (0..N).map(|_| Ddf::new()).collect();
            let sum = AtomicUsize::new(0);
            let (go_tx, go_rx) = mpsc::channel::<()>();
            std::thread::scope(|threads| {
                let ddfs = &ddfs;
                threads.spawn(move || {
                    // Puts only once every task is registered, so each put
                    // has to release a waiting task and wake the pool.
                    go_rx.recv().unwrap();
                    for (i, d) in ddfs.iter().enumerate() {
                        d.put(i + 1).unwrap();
                    }
                });
                rt.finish(|s| {
                    for d in ddfs {
                        s.spawn_await(&[d], |_| {
                            sum.fetch_add(*d.get().unwrap(), Ordering::Relaxed);
                        });
                    }
                    go_tx.send(()).unwrap();
                });
            });
            assert_eq!(
                sum.load(Ordering::Relaxed),
                N * (N + 1) / 2,
                "workers = {workers}"
            );
        }
    }
}

#[test]
fn put_from_a_plain_thread_releases_a_task_of_a_nested_finish() {
    let rt = runtime(1);
    let d = Ddf::new();
    let ran = AtomicBool::new(false);
    std::thread::scope(|threads| {
        let (tx, rx) = mpsc::channel::<()>();
        let d = &d;
        threads.spawn(move || {
            rx.recv().unwrap();
            d.put(5u8).unwrap();
        });
        rt.finish(|s| {
            s.spawn(|_| {
                finish(|inner| {
                    inner.spawn_await(&[d], |_| {
                        assert_eq!(d.get(), Ok(&5));
                        ran.store(true, Ordering::SeqCst);
                    });
                    tx.send(()).unwrap();
                });
                assert!(ran.load(Ordering::SeqCst));
            });
        });
    });
    assert!(ran.load(Ordering::SeqCst));
}

#[test]
fn ddf_wait_from_a_task() {
    for workers in [1, 2] {
        let rt = runtime(workers);
        // Put by a sibling task: on one worker the waiting task has to run
        // the putter itself while it waits.
        let d = Ddf::new();
        let seen = AtomicUsize::new(0);
        rt.finish(|s| {
            s.spawn(|s| {
                s.spawn(|_| d.put(7usize).unwrap());
                seen.store(*d.wait(), Ordering::SeqCst);
            });
        });
        assert_eq!(seen.load(Ordering::SeqCst), 7);

        // Put by a plain thread once the task announced it is waiting.
        let e = Ddf::new();
        let (tx, rx) = mpsc::channel::<()>();
        std::thread::scope(|threads| {
            let e = &e;
            threads.spawn(move || {
                rx.recv().unwrap();
                e.put(8usize).unwrap();
            });
            rt.finish(|s| {
                s.spawn(|_| {
                    tx.send(()).unwrap();
                    seen.store(*e.wait(), Ordering::SeqCst);
                });
            });
        });
        assert_eq!(seen.load(Ordering::SeqCst), 8);

        // Already put: returns at once.
        rt.finish(|_| assert_eq!(*e.wait(), 8));
    }
}

#[test]
fn ddf_wait_from_plain_threads() {
    let rt = runtime(2);
    // Put by a task of the runtime, waited for by plain threads.
    let d = Ddf::new();
    std::thread::scope(|threads| {
        let waiters: Vec<_> = (0..4).map(|_| threads.spawn(|| *d.wait())).collect();
        rt.finish(|s| s.spawn(|_| d.put(42u64).unwrap()));
        for waiter in waiters {
            assert_eq!(waiter.join().unwrap(), 42);
        }
    });

    // Put by another plain thread after the waiter is (probably) parked.
    let e = Ddf::new();
    let (tx, rx) = mpsc::channel::<()>();
    std::thread::scope(|threads| {
        let e = &e;
        threads.spawn(move || {
            rx.recv().unwrap();
            e.put(String::from("from a thread")).unwrap();
        });
        tx.send(()).unwrap();
        assert_eq!(e.wait(), "from a thread");
        // The free function accepts any awaitable.
        hc_runtime::wait(e);
    });

    // Already put.
    assert_eq!(*d.wait(), 42);
}

#[test]
fn dropped_without_put_panics_the_finish_and_the_runtime_stays_usable() {
    let abandoned = "dropped without ever being put";
    for workers in [1, 2] {
        let rt = runtime(workers);
        let ran = AtomicBool::new(false);

        // Dropped at the end of the finish body.
        let message = finish_panic_message(&rt, |s| {
            let never: Ddf<u32> = Ddf::new();
            s.spawn_await(&[&never], |_| ran.store(true, Ordering::SeqCst));
        });
        assert!(message.contains(abandoned), "{message}");

        // Dropped on a plain thread while a task awaits it, in an AND list
        // whose other dependency is put.
        let put = Ddf::new();
        let message = finish_panic_message(&rt, |s| {
            let never: Ddf<u32> = Ddf::new();
            s.spawn_await(&[&put, &never], |_| ran.store(true, Ordering::SeqCst));
            put.put(1u32).unwrap();
            std::thread::spawn(move || drop(never)).join().unwrap();
        });
        assert!(message.contains(abandoned), "{message}");

        // An OR list all of whose dependencies are dropped.
        let message = finish_panic_message(&rt, |s| {
            let (x, y): (Ddf<u8>, Ddf<u8>) = (Ddf::new(), Ddf::new());
            s.spawn_await_any(&[&x, &y, &x], |_, _| ran.store(true, Ordering::SeqCst));
            drop(x);
            s.spawn(move |_| drop(y));
        });
        assert!(message.contains(abandoned), "{message}");

        assert!(!ran.load(Ordering::SeqCst), "a task ran without its DDF");
        for _ in 0..3 {
            assert_runtime_usable(&rt);
        }
    }
}

#[test]
fn spawn_await_any_with_an_empty_list_panics_clearly() {
    let rt = runtime(2);
    let message = finish_panic_message(&rt, |s| s.spawn_await_any(&[], |_, _| {}));
    assert!(message.contains("spawn_await_any"), "{message}");
    assert!(message.contains("at least one dependency"), "{message}");

    // From inside a task: the panic is recorded for the scope like any other.
    let message = finish_panic_message(&rt, |s| {
        s.spawn(|s| s.spawn_await_any(&[], |_, _| {}));
    });
    assert!(message.contains("at least one dependency"), "{message}");

    assert_runtime_usable(&rt);
}

/// A program whose finish fails because a dependency was dropped unput
/// says so on stderr (the panic hook reports it where it was found), not
/// only through the status. Runs itself as a child process so that the
/// panic really ends a program.
#[test]
#[cfg_attr(miri, ignore = "runs itself as a child process")]
fn an_abandoned_dependency_is_reported_on_stderr() {
    const CHILD: &str = "HC_TEST_ABANDONED_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let rt = runtime(2);
        rt.finish(|s| {
            let never: Ddf<u32> = Ddf::new();
            s.spawn_await(&[&never], |_| unreachable!("ran without its DDF"));
        });
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "an_abandoned_dependency_is_reported_on_stderr",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("the child runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the child's finish must fail");
    assert!(
        stderr.contains("dropped without ever being put") && stderr.contains("panicked"),
        "stderr does not report the abandoned dependency:\n{stderr}"
    );
}
