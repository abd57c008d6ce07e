//! Panics in tasks and finish bodies: captured, re-raised from the enclosing
//! finish once the scope is complete, and harmless to the workers.
//!
//! Most tests panic with `std::panic::resume_unwind`, which unwinds exactly
//! like `panic!` but does not call the panic hook: that keeps the output quiet
//! without touching the (process-global) hook. A few use `panic!` itself.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Barrier};
use std::thread::ThreadId;

use hc_runtime::{finish, Ddf, Runtime, Scope};

fn runtime(workers: usize) -> Runtime {
    Runtime::builder().num_workers(workers).build().unwrap()
}

/// Panics with `message` as a `String` payload, without the panic hook.
fn quiet_panic(message: impl Into<String>) -> ! {
    panic::resume_unwind(Box::new(message.into()))
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

/// Runs `op` in a finish on `rt` and returns the payload of the panic it must
/// raise.
fn finish_panic<'scope, OP, R>(rt: &Runtime, op: OP) -> Box<dyn Any + Send>
where
    OP: for<'s> FnOnce(&'s Scope<'s, 'scope>) -> R + Send,
    R: Send,
{
    match panic::catch_unwind(AssertUnwindSafe(|| rt.finish(op))) {
        Ok(_) => panic!("the finish was expected to panic"),
        Err(payload) => payload,
    }
}

fn finish_panic_message<'scope, OP, R>(rt: &Runtime, op: OP) -> String
where
    OP: for<'s> FnOnce(&'s Scope<'s, 'scope>) -> R + Send,
    R: Send,
{
    panic_message(&*finish_panic(rt, op))
}

/// The threads of `rt`'s workers, sorted: one task per worker, each held at
/// a barrier until every worker runs one, so all of them are seen.
fn worker_threads(rt: &Runtime) -> Vec<ThreadId> {
    let workers = rt.num_workers();
    let barrier = Barrier::new(workers);
    let (tx, rx) = mpsc::channel();
    rt.finish(|s| {
        for _ in 0..workers {
            let (tx, barrier) = (tx.clone(), &barrier);
            s.spawn(move |_| {
                barrier.wait();
                tx.send(std::thread::current().id()).unwrap();
            });
        }
    });
    drop(tx);
    let mut ids: Vec<ThreadId> = rx.iter().collect();
    ids.sort_by_key(|id| format!("{id:?}"));
    ids.dedup();
    assert_eq!(
        ids.len(),
        workers,
        "one task per worker, each on its own thread"
    );
    ids
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (mut a, mut b) = (0, 0);
    finish(|s| {
        s.spawn(|_| a = fib(n - 1));
        b = fib(n - 2);
    });
    a + b
}

#[test]
fn panicking_task_does_not_kill_its_worker() {
    let rt = runtime(1);
    let before = worker_threads(&rt);
    for i in 0..10 {
        let message = finish_panic_message(&rt, |s| {
            s.spawn(move |_| quiet_panic(format!("task panic {i}")));
        });
        assert_eq!(message, format!("task panic {i}"));
    }
    // With `panic!` and the default hook too.
    let message = finish_panic_message(&rt, |s| s.spawn(|_| panic!("loud task panic")));
    assert_eq!(message, "loud task panic");
    // Still the same single worker thread, and it still runs tasks.
    assert_eq!(worker_threads(&rt), before);
    assert_eq!(rt.finish(|_| fib(15)), 610);
}

#[test]
fn panic_is_raised_only_after_the_sibling_tasks_completed() {
    const SIBLINGS: usize = 200;
    for workers in [1, 2, 4] {
        let rt = runtime(workers);
        let done = AtomicUsize::new(0);
        let late = AtomicBool::new(false);
        let gate = Ddf::new();
        let (tx, rx) = mpsc::channel::<()>();
        std::thread::scope(|threads| {
            let gate = &gate;
            // Puts the gate only after the panicking task is about to panic.
            threads.spawn(move || {
                rx.recv().unwrap();
                gate.put(()).unwrap();
            });
            let message = finish_panic_message(&rt, |s| {
                for _ in 0..SIBLINGS / 2 {
                    s.spawn(|_| {
                        done.fetch_add(1, Ordering::SeqCst);
                    });
                }
                s.spawn(|s| {
                    // Siblings spawned by the panicking task itself: still
                    // queued when it panics.
                    for _ in 0..SIBLINGS / 2 {
                        s.spawn(|_| {
                            done.fetch_add(1, Ordering::SeqCst);
                        });
                    }
                    // A sibling that can only run after the panic started.
                    s.spawn_await(&[gate], |_| {
                        // A nested finish inside a sibling completes too.
                        finish(|inner| {
                            for _ in 0..10 {
                                inner.spawn(|_| {
                                    done.fetch_add(1, Ordering::SeqCst);
                                });
                            }
                        });
                        late.store(true, Ordering::SeqCst);
                    });
                    tx.send(()).unwrap();
                    quiet_panic("the one panicking task");
                });
            });
            assert_eq!(message, "the one panicking task");
            assert_eq!(
                done.load(Ordering::SeqCst),
                SIBLINGS + 10,
                "workers = {workers}"
            );
            assert!(late.load(Ordering::SeqCst), "workers = {workers}");
        });
    }
}

#[test]
fn panic_in_the_finish_body() {
    for workers in [1, 2] {
        let rt = runtime(workers);
        let done = AtomicUsize::new(0);
        // Tasks spawned before the body panicked still run to completion.
        let message = finish_panic_message(&rt, |s| {
            for _ in 0..50 {
                s.spawn(|_| {
                    done.fetch_add(1, Ordering::SeqCst);
                });
            }
            quiet_panic("body panic");
        });
        assert_eq!(message, "body panic");
        assert_eq!(done.load(Ordering::SeqCst), 50);

        // A body panic and a task panic: the finish raises one of them.
        let message = finish_panic_message(&rt, |s| {
            s.spawn(|_| quiet_panic("task"));
            quiet_panic("body");
        });
        assert!(message == "task" || message == "body", "{message}");

        // The body of a nested finish inside a task, caught by the task.
        let caught = AtomicBool::new(false);
        rt.finish(|s| {
            s.spawn(|_| {
                let result = panic::catch_unwind(AssertUnwindSafe(|| {
                    finish(|inner| {
                        inner.spawn(|_| {
                            done.fetch_add(1, Ordering::SeqCst);
                        });
                        quiet_panic("nested body panic");
                    })
                }));
                let payload = result.unwrap_err();
                assert_eq!(panic_message(&*payload), "nested body panic");
                caught.store(true, Ordering::SeqCst);
            });
        });
        assert!(caught.load(Ordering::SeqCst));
        assert_eq!(done.load(Ordering::SeqCst), 51);
    }
}

#[test]
fn nested_finish_panic_propagates_to_the_outer_finish() {
    let rt = runtime(2);
    let after_inner = AtomicBool::new(false);
    let message = finish_panic_message(&rt, |s| {
        s.spawn(|_| {
            finish(|inner| {
                inner.spawn(|_| {
                    finish(|innermost| {
                        innermost.spawn(|_| quiet_panic("three levels down"));
                    });
                });
            });
            // Not reached: the nested finish re-raised the panic.
            after_inner.store(true, Ordering::SeqCst);
        });
    });
    assert_eq!(message, "three levels down");
    assert!(!after_inner.load(Ordering::SeqCst));

    // In a data-driven task and an await-any task as well.
    let d = Ddf::new();
    let message = finish_panic_message(&rt, |s| {
        s.spawn_await(&[&d], |_| {
            finish(|inner| inner.spawn(|_| quiet_panic("in await")))
        });
        s.spawn(|_| d.put(1u8).unwrap());
    });
    assert_eq!(message, "in await");
    let e = Ddf::new();
    let message = finish_panic_message(&rt, |s| {
        s.spawn_await_any(&[&e], |_, _| quiet_panic("in await-any"));
        e.put(1u8).unwrap();
    });
    assert_eq!(message, "in await-any");

    // From the default runtime through the free `finish`.
    let payload = panic::catch_unwind(|| {
        finish(|s| s.spawn(|_| finish(|inner| inner.spawn(|_| quiet_panic("default runtime")))))
    })
    .unwrap_err();
    assert_eq!(panic_message(&*payload), "default runtime");
}

#[test]
fn runtime_stays_usable_after_many_panicking_finishes() {
    let iterations = if cfg!(miri) {
        10
    } else if cfg!(debug_assertions) {
        100
    } else {
        500
    };
    for workers in [1, 2] {
        let rt = runtime(workers);
        let threads = worker_threads(&rt);
        for i in 0..iterations {
            let done = AtomicUsize::new(0);
            let message = finish_panic_message(&rt, |s| {
                let done = &done;
                for j in 0..8 {
                    s.spawn(move |s| {
                        done.fetch_add(1, Ordering::Relaxed);
                        if j == i % 8 {
                            s.spawn(move |_| quiet_panic(format!("iteration {i}")));
                        }
                    });
                }
            });
            assert_eq!(message, format!("iteration {i}"), "workers = {workers}");
            assert_eq!(done.load(Ordering::Relaxed), 8);
            if i % 50 == 0 {
                assert_eq!(rt.finish(|_| fib(12)), 144);
            }
        }
        assert_eq!(rt.finish(|_| fib(12)), 144);
        // No worker thread was lost or replaced.
        assert_eq!(worker_threads(&rt), threads, "workers = {workers}");
    }
}

#[test]
fn the_first_panic_payload_is_the_one_raised() {
    let rt = runtime(1);
    // A single panicking task: the very payload comes back.
    let payload = finish_panic(&rt, |s| s.spawn(|_| quiet_panic("exactly this")));
    assert_eq!(
        payload.downcast_ref::<String>().map(String::as_str),
        Some("exactly this")
    );
    let payload = finish_panic(&rt, |s| {
        s.spawn(|_| panic::resume_unwind(Box::new(0xC0FFEE_u32)))
    });
    assert_eq!(payload.downcast_ref::<u32>(), Some(&0xC0FFEE));

    // Two panics in order: on one worker the second task cannot start before
    // the first one has finished (and recorded its panic).
    for _ in 0..20 {
        let message = finish_panic_message(&rt, |s| {
            s.spawn(|s| {
                s.spawn(|_| quiet_panic("second"));
                quiet_panic("first");
            });
        });
        assert_eq!(message, "first");
    }
}
