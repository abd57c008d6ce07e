//! async/finish semantics: completion, nesting, borrowing, escaping tasks.

use std::sync::atomic::{AtomicUsize, Ordering};

use hc_runtime::{finish, Runtime, Scope};

fn runtime(workers: usize) -> Runtime {
    Runtime::builder().num_workers(workers).build().unwrap()
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

fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

#[test]
fn deep_recursion_fib() {
    for workers in [1, 2, 4] {
        let rt = runtime(workers);
        let n = if cfg!(miri) { 10 } else { 25 };
        assert_eq!(rt.finish(|_| fib(n)), fib_seq(n), "workers = {workers}");
    }
}

#[test]
fn wide_fan_out_runs_every_task_once() {
    const N: usize = if cfg!(miri) { 200 } else { 1_000_000 };
    let rt = runtime(2);
    let hits: Vec<AtomicUsize> = (0..N).map(|_| AtomicUsize::new(0)).collect();
    rt.finish(|s| {
        for hit in &hits {
            s.spawn(move |_| {
                hit.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
}

#[test]
fn transitively_spawned_tasks_complete_before_finish_returns() {
    fn tree<'a>(s: &'a Scope<'a, '_>, depth: u32, count: &'a AtomicUsize) {
        count.fetch_add(1, Ordering::Relaxed);
        if depth > 0 {
            s.spawn(move |s| tree(s, depth - 1, count));
            s.spawn(move |s| tree(s, depth - 1, count));
        }
    }
    // Under Miri the tree of 32767 tasks took nine minutes; one of 511
    // still nests spawns eight deep on three workers.
    let depth = if cfg!(miri) { 8 } else { 14 };
    let rt = runtime(3);
    let count = AtomicUsize::new(0);
    rt.finish(|s| tree(s, depth, &count));
    assert_eq!(count.load(Ordering::Relaxed), (1 << (depth + 1)) - 1);
}

#[test]
fn nested_finish_waits_only_for_its_own_tasks_and_escaping_tasks_join_the_outer() {
    let rt = runtime(2);
    let inner_done = AtomicUsize::new(0);
    let escaped_done = AtomicUsize::new(0);
    let gate = hc_runtime::Ddf::new();
    rt.finish(|outer| {
        outer.spawn(|outer| {
            finish(|inner| {
                for _ in 0..100 {
                    inner.spawn(|_| {
                        inner_done.fetch_add(1, Ordering::SeqCst);
                    });
                }
                // Escapes the inner finish: registered on the outer scope and
                // blocked on a DDF nobody puts until the inner finish is over.
                outer.spawn_await(&[&gate], |_| {
                    escaped_done.fetch_add(1, Ordering::SeqCst);
                });
            });
            assert_eq!(inner_done.load(Ordering::SeqCst), 100);
            assert_eq!(escaped_done.load(Ordering::SeqCst), 0);
            gate.put(()).unwrap();
        });
    });
    assert_eq!(escaped_done.load(Ordering::SeqCst), 1);
}

#[test]
fn tasks_borrow_and_mutate_the_enclosing_stack() {
    let rt = runtime(2);
    let input: Vec<u64> = (0..if cfg!(miri) { 200 } else { 10_000 }).collect();
    let mut output = vec![0u64; input.len()];
    rt.finish(|s| {
        for (src, dst) in input.chunks(100).zip(output.chunks_mut(100)) {
            s.spawn(move |_| {
                for (x, y) in src.iter().zip(dst.iter_mut()) {
                    *y = x * 2;
                }
            });
        }
    });
    assert!(output.iter().zip(&input).all(|(y, x)| *y == 2 * x));
}

#[test]
fn finish_returns_the_body_value_and_works_from_many_threads() {
    let rt = runtime(2);
    std::thread::scope(|threads| {
        for t in 0..4u64 {
            let rt = &rt;
            threads.spawn(move || {
                for i in 0..if cfg!(miri) { 8 } else { 50u64 } {
                    let total = AtomicUsize::new(0);
                    let r = rt.finish(|s| {
                        for _ in 0..10 {
                            s.spawn(|_| {
                                total.fetch_add(1, Ordering::Relaxed);
                            });
                        }
                        t * 1000 + i
                    });
                    assert_eq!(r, t * 1000 + i);
                    assert_eq!(total.load(Ordering::Relaxed), 10);
                }
            });
        }
    });
}

#[test]
fn default_runtime_and_worker_index() {
    assert_eq!(hc_runtime::current_worker_index(), None);
    let seen = finish(|_| hc_runtime::current_worker_index());
    assert!(seen.is_some());
    assert!(seen.unwrap() < hc_runtime::default_runtime().num_workers());
}

#[test]
fn zero_workers_and_bad_env_are_errors() {
    let err = Runtime::builder().num_workers(0).build().unwrap_err();
    assert!(err.to_string().contains("at least one"), "{err}");
}

#[test]
fn finish_waits_for_operations_joined_to_it() {
    let (mut outside, _) = hc_runtime::promise::<u8>();
    assert!(
        !outside.join_enclosing_finish(),
        "no enclosing finish on a plain thread"
    );
    // One worker makes the order deterministic: tasks are popped LIFO, so
    // `joiner` runs first; its inner finish can only complete by running
    // `producer` while it waits — unless the join is ignored, in which case
    // the inner finish returns at once and `producer` sees it finished.
    let rt = runtime(1);
    let (completer, promise) = hc_runtime::promise();
    let completer = std::sync::Mutex::new(Some(completer));
    let inner_returned = AtomicUsize::new(0);
    let completed_while_inner_open = AtomicUsize::new(0);
    rt.finish(|s| {
        s.spawn(|_| {
            if inner_returned.load(Ordering::SeqCst) == 0 {
                completed_while_inner_open.fetch_add(1, Ordering::SeqCst);
            }
            let completer: hc_runtime::Completer<u8> = completer.lock().unwrap().take().unwrap();
            completer.complete(7);
        });
        s.spawn(|_| {
            finish(|_| {
                let mut guard = completer.lock().unwrap();
                assert!(guard.as_mut().unwrap().join_enclosing_finish());
            });
            assert!(
                promise.is_complete(),
                "inner finish returned before the joined promise was completed"
            );
            inner_returned.fetch_add(1, Ordering::SeqCst);
        });
    });
    assert_eq!(completed_while_inner_open.load(Ordering::SeqCst), 1);
    assert_eq!(promise.get(), Ok(&7));
}

#[test]
fn outside_finish_operations_join_no_finish() {
    let rt = runtime(2);
    let (mut never, _never_read) = hc_runtime::promise::<u8>();
    let joined_inside = AtomicUsize::new(0);
    // If the join inside `outside_finish` reached the scope, the finish
    // would wait for `never` forever.
    rt.finish(|s| {
        s.spawn(|_| {
            let joined = hc_runtime::outside_finish(|| never.join_enclosing_finish());
            assert!(!joined, "an operation outside any finish was joined");
            // The enclosing finish is back once the closure returns.
            let (mut back, _) = hc_runtime::promise();
            assert!(back.join_enclosing_finish());
            back.complete(1u8);
            joined_inside.fetch_add(1, Ordering::SeqCst);
        });
    });
    assert_eq!(joined_inside.load(Ordering::SeqCst), 1);
    drop(never);
}

#[test]
fn a_reader_giving_up_releases_the_finish_tie() {
    let rt = runtime(1);
    let (mut completer, promise) = hc_runtime::promise::<u8>();
    // The finish would wait for the completer forever; the reader lets go.
    rt.finish(|_| {
        assert!(completer.join_enclosing_finish());
        promise.release_finish();
    });
    assert!(!promise.is_complete());
    completer.complete(1);
    assert_eq!(promise.get(), Ok(&1));
}
