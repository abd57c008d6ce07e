//! Counting events within one process: exact sums under many posters,
//! waits and triggers released exactly when the count allows, FIFO
//! service, errors.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use hcmpi_phasers::{Event, EventError};

#[test]
fn tasks_times_posts_sum_exactly() {
    const TASKS: u64 = 16;
    const POSTS: u64 = 500;
    let ev = Event::new();
    hc_runtime::finish(|s| {
        for t in 0..TASKS {
            let ev = &ev;
            s.spawn(move |_| {
                for i in 0..POSTS {
                    if (t + i) % 2 == 0 {
                        ev.post().unwrap();
                    } else {
                        ev.post_n(3).unwrap();
                    }
                }
            });
        }
    });
    let ones = (0..TASKS)
        .map(|t| (0..POSTS).filter(|i| (t + i) % 2 == 0).count() as u64)
        .sum::<u64>();
    let threes = TASKS * POSTS - ones;
    assert_eq!(ev.query(), ones + 3 * threes);
}

#[test]
fn blocking_waiters_consume_exactly_what_was_posted() {
    const PRODUCERS: u64 = 3;
    const POSTS: u64 = 2000;
    const CONSUMERS: u64 = 4;
    const CHUNK: u64 = 5;
    // Consumers take everything but a remainder that stays in the count.
    let total = PRODUCERS * POSTS;
    let per_consumer = (total / CONSUMERS / CHUNK) * CHUNK;
    let ev = Event::new();
    let taken = Arc::new(AtomicU64::new(0));
    let consumers: Vec<_> = (0..CONSUMERS)
        .map(|_| {
            let ev = ev.clone();
            let taken = Arc::clone(&taken);
            std::thread::spawn(move || {
                for _ in 0..per_consumer / CHUNK {
                    ev.wait_blocking(CHUNK).unwrap();
                    taken.fetch_add(CHUNK, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|_| {
            let ev = ev.clone();
            std::thread::spawn(move || {
                for _ in 0..POSTS {
                    ev.post().unwrap();
                }
            })
        })
        .collect();
    for t in producers.into_iter().chain(consumers) {
        t.join().unwrap();
    }
    assert_eq!(taken.load(Ordering::SeqCst), CONSUMERS * per_consumer);
    assert_eq!(ev.query(), total - CONSUMERS * per_consumer);
}

#[test]
fn awaited_waits_hold_no_worker() {
    // A hundred waiting tasks on one worker, posters spawned after them:
    // the waits must let the posters run.
    const N: u64 = 100;
    let rt = hc_runtime::Runtime::builder()
        .num_workers(1)
        .build()
        .unwrap();
    let ev = Event::new();
    let done = AtomicU64::new(0);
    rt.finish(|s| {
        for _ in 0..N {
            let (ev, done) = (&ev, &done);
            s.spawn_future(async move {
                ev.wait(2).await.unwrap();
                done.fetch_add(1, Ordering::SeqCst);
            });
        }
        for _ in 0..2 * N {
            let ev = &ev;
            s.spawn(move |_| ev.post().unwrap());
        }
    });
    assert_eq!(done.load(Ordering::SeqCst), N);
    assert_eq!(ev.query(), 0);
}

#[test]
fn trigger_fires_exactly_at_its_count_and_consumes_it() {
    let ev = Event::new();
    let t = ev.when(5).unwrap();
    for posted in 1..=4 {
        ev.post().unwrap();
        assert_eq!(ev.query(), posted);
        assert!(t.result().is_none(), "fired after {posted} of 5 posts");
        assert!(!hc_runtime::Awaitable::is_ready(&t));
    }
    ev.post_n(3).unwrap();
    assert!(t.has_fired());
    assert!(hc_runtime::Awaitable::is_ready(&t));
    assert_eq!(ev.query(), 2);
}

#[test]
fn spawn_await_on_triggers_releases_tasks_in_turn() {
    // Three tasks await 2, 3 and 4 posts; 9 posts release all of them and
    // leave nothing; each task sees the event only once its share is taken.
    let ev = Event::new();
    let released = [
        AtomicBool::new(false),
        AtomicBool::new(false),
        AtomicBool::new(false),
    ];
    let posts_seen = AtomicU64::new(0);
    hc_runtime::finish(|s| {
        for (i, n) in [2u64, 3, 4].into_iter().enumerate() {
            let released = &released;
            // A temporary trigger: dropping the handle does not disarm it.
            s.spawn_await(&[&ev.when(n).unwrap()], move |_| {
                released[i].store(true, Ordering::SeqCst);
            });
        }
        for _ in 0..9 {
            let (ev, posts_seen) = (&ev, &posts_seen);
            s.spawn(move |_| {
                ev.post().unwrap();
                posts_seen.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    assert!(released.iter().all(|r| r.load(Ordering::SeqCst)));
    assert_eq!(posts_seen.load(Ordering::SeqCst), 9);
    assert_eq!(ev.query(), 0);
}

#[test]
fn one_post_short_leaves_the_last_trigger_armed() {
    let ev = Event::new();
    let a = ev.when(2).unwrap();
    let b = ev.when(2).unwrap();
    hc_runtime::finish(|s| {
        for _ in 0..3 {
            let ev = &ev;
            s.spawn(move |_| ev.post().unwrap());
        }
    });
    assert!(a.has_fired());
    assert!(b.result().is_none());
    assert_eq!(ev.query(), 1);
    // A wait for 1 queues behind `b` (first come, first served) even
    // though the count is 1; two more posts serve `b`, then the wait.
    let waiter = {
        let ev = ev.clone();
        std::thread::spawn(move || ev.wait_blocking(1))
    };
    ev.post_n(2).unwrap();
    waiter.join().unwrap().unwrap();
    assert!(b.has_fired());
    assert_eq!(ev.query(), 0);
}

#[test]
fn fast_path_wait_takes_available_count() {
    let ev = Event::new();
    ev.post_n(3).unwrap();
    ev.wait_blocking(2).unwrap();
    assert_eq!(ev.query(), 1);
    hc_runtime::Runtime::builder()
        .num_workers(1)
        .build()
        .unwrap()
        .block_on(ev.wait(1))
        .unwrap();
    assert_eq!(ev.query(), 0);
}

#[test]
fn errors_are_reported_not_hung() {
    let ev = Event::new();
    assert_eq!(
        ev.wait_blocking(0),
        Err(EventError::ZeroCount { op: "wait" })
    );
    assert_eq!(
        ev.when(0).map(|_| ()),
        Err(EventError::ZeroCount { op: "when" })
    );
    assert_eq!(ev.post_n(0), Err(EventError::ZeroCount { op: "post" }));
    ev.post_n(7).unwrap();
    assert_eq!(
        ev.post_n(u64::MAX),
        Err(EventError::Overflow {
            count: 7,
            added: u64::MAX
        })
    );
    assert_eq!(ev.query(), 7, "a failed post changes nothing");
    ev.post_n(u64::MAX - 7).unwrap();
    assert_eq!(ev.query(), u64::MAX);
    assert!(matches!(ev.post(), Err(EventError::Overflow { .. })));
}

#[test]
fn dropping_the_event_completes_armed_triggers_with_an_error() {
    let ev = Event::new();
    let t = ev.when(1).unwrap();
    drop(ev);
    assert_eq!(t.result(), Some(Err(EventError::Dropped)));
    // A task awaiting it is released rather than left waiting forever.
    let ran = AtomicBool::new(false);
    hc_runtime::finish(|s| {
        let ran = &ran;
        s.spawn_await(&[&t], move |_| ran.store(true, Ordering::SeqCst));
    });
    assert!(ran.into_inner());
}

#[test]
fn a_blocking_wait_on_a_worker_is_refused() {
    let ev = Event::new();
    ev.post().unwrap();
    let refused = hc_runtime::finish(|_| ev.wait_blocking(1));
    assert_eq!(refused, Err(EventError::BlockingOnWorker));
    assert_eq!(ev.query(), 1, "a refused wait takes nothing");
}

#[test]
fn a_zero_wait_is_refused_by_its_future() {
    let rt = hc_runtime::Runtime::builder()
        .num_workers(1)
        .build()
        .unwrap();
    assert_eq!(
        rt.block_on(Event::new().wait(0)),
        Err(EventError::ZeroCount { op: "wait" })
    );
}

#[test]
fn a_dropped_wait_withdraws_and_the_next_one_is_served() {
    let rt = hc_runtime::Runtime::builder()
        .num_workers(1)
        .build()
        .unwrap();
    let ev = Event::new();
    let served = rt.block_on(async {
        let abandoned = ev.wait(10);
        let next = ev.wait(1);
        drop(abandoned);
        ev.post().unwrap();
        next.await
    });
    assert_eq!(served, Ok(()));
    assert_eq!(ev.query(), 0);
}
