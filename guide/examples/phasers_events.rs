//! Counting events: a local `Event` (post, `wait(n).await`, `query`,
//! `when(n)` triggers for data-driven tasks, first-come-first-served
//! consumers, errors), then a `DistEvents` set whose events every rank
//! posts to: a trigger released by posts from every rank, a ring of
//! awaited waits, and `close`.
//!
//! Run: `mpiexec -n 3 target/release/examples/phasers_events`.

// sample-run: ranks=1,2,3,4

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};

use hc_mpi::Hcmpi;
use hcmpi_phasers::{DistEvents, Event, EventError};

/// Posting tasks per rank.
const TASKS: u64 = 4;
/// Rounds of the ring.
const ROUNDS: u64 = 10;

fn main() -> ExitCode {
    // An error on one rank ends the whole job with its message.
    Hcmpi::run(body)
}

fn body(hc: &Hcmpi) -> Result<(), Box<dyn std::error::Error>> {
    let (rank, size) = (hc.rank(), hc.size());

    // ANCHOR: local
    let ev = Event::new();
    let (by_trigger, by_wait) = (AtomicBool::new(false), AtomicU64::new(0));
    hc.finish(|s| {
        let (ev, by_trigger, by_wait) = (&ev, &by_trigger, &by_wait);
        // A trigger is armed now and takes 3 when it fires; the task runs then.
        s.spawn_await(&[&ev.when(3).unwrap()], move |_| {
            by_trigger.store(true, SeqCst)
        });
        // A future task takes 2 more; waiting, it holds no worker.
        s.spawn_future(async move {
            ev.wait(2).await.unwrap();
            by_wait.store(2, SeqCst);
        });
        for _ in 0..6 {
            s.spawn(move |_| ev.post().unwrap());
        }
    });
    assert!(by_trigger.into_inner() && by_wait.into_inner() == 2);
    assert_eq!(ev.query(), 1); // 6 posted, 3 + 2 taken
                               // ANCHOR_END: local

    // ANCHOR: fifo
    let ev = Event::new();
    let big = ev.when(3)?; // first in line
    let small = ev.when(1)?; // behind it
    ev.post()?; // enough for `small`, but `big` is first: nobody fires
    assert!(!big.has_fired() && !small.has_fired() && ev.query() == 1);
    ev.post_n(2)?; // `big` takes 3
    assert!(big.has_fired() && !small.has_fired() && ev.query() == 0);
    ev.post()?;
    assert!(small.has_fired());
    // ANCHOR_END: fifo

    // ANCHOR: errors
    assert_eq!(ev.post_n(0), Err(EventError::ZeroCount { op: "post" }));
    ev.post_n(u64::MAX)?;
    assert!(matches!(ev.post(), Err(EventError::Overflow { .. }))); // nothing changed
    assert_eq!(ev.query(), u64::MAX);
    hc.finish(|s| {
        // A blocking wait would hold a computation worker: refused.
        s.spawn(|_| assert_eq!(ev.wait_blocking(1), Err(EventError::BlockingOnWorker)));
    });
    ev.wait_blocking(1)?; // on the main thread, which is no worker
                          // ANCHOR_END: errors

    // ANCHOR: dist
    let set = DistEvents::create(hc.world(), 2)?; // collective: 2 events per rank
    let right = (rank + 1) % size;
    let n = size as u64;
    // Event 0: every task of rank r posts r + 1 to every rank.
    let from_everyone = TASKS * n * (n + 1) / 2;
    let released = AtomicBool::new(false);
    hc.finish(|s| {
        let (set, released) = (&set, &released);
        let all_in = set.when(0, from_everyone).expect("event 0 exists");
        s.spawn_await(&[&all_in], move |_| released.store(true, SeqCst));
        for _ in 0..TASKS {
            s.spawn(move |_| {
                for dest in 0..size {
                    set.post(dest, 0, rank as u64 + 1).unwrap(); // local or remote
                }
            });
        }
    });
    assert!(released.into_inner());
    // Event 1: a ring; each round waits for the left neighbour's post.
    hc.block_on(async {
        for _ in 0..ROUNDS {
            set.post(right, 1, 1)?;
            set.wait(1, 1).await?; // only the owner waits on its events
        }
        Ok::<(), EventError>(())
    })?;
    let (ev0, ev1) = (set.local(0)?.clone(), set.local(1)?.clone());
    hc.block_on(set.close())?; // collective: every post addressed here is applied
    assert_eq!((ev0.query(), ev1.query()), (0, 0));
    // ANCHOR_END: dist

    println!("rank {rank}/{size}: events OK (event 0 reached {from_everyone})");
    Ok(())
}
