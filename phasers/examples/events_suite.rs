//! Multi-rank checks of counting events, run by `tests/mpiexec.rs` at 1 to
//! 4 ranks. Every rank, with `T` tasks each:
//!
//! * every task posts 1 to event 0 of every rank `P` times; a data-driven
//!   task awaiting `when(0, N·T·P)` must be released (by posts arriving from
//!   all ranks) and take exactly that much, so a trigger armed behind it for
//!   one more post stays armed and the count ends at 0;
//! * every task of rank `s` posts `s + 1` to event 1 of every rank; the main
//!   thread's blocking `wait_blocking(1, T·N(N+1)/2)` must return and
//!   leave 0;
//! * a ring, in a task: `R` rounds of "post 1 to the right neighbour's
//!   event 2, await 1 on mine";
//! * bad rank, bad index and zero counts are errors; on a second set, two
//!   posts of `u64::MAX` from the left neighbour overflow the event, which
//!   is poisoned and reported by `close`.
//!
//! Usage: `events_suite`; prints `rank R/N: events suite OK`.

use std::sync::atomic::{AtomicBool, Ordering};

use hc_mpi::Hcmpi;
use hcmpi_phasers::{DistEvents, EventError};

const TASKS: u64 = 4;
const POSTS: u64 = 40;
const ROUNDS: u64 = 20;

fn main() {
    let hc = Hcmpi::init().expect("MPI initialization");
    let (rank, size) = (hc.rank(), hc.size());
    let ranks = size as u64;
    let right = (rank + 1) % size;
    let events = DistEvents::create(hc.world(), 3).expect("create the event set");
    assert_eq!(events.len(), 3);

    // Errors, checked before anything is sent.
    assert_eq!(
        events.post(size, 0, 1),
        Err(EventError::InvalidRank { rank: size, size })
    );
    assert!(matches!(
        events.post(-1, 0, 1),
        Err(EventError::InvalidRank { .. })
    ));
    assert_eq!(
        events.post(right, 3, 1),
        Err(EventError::InvalidIndex { index: 3, len: 3 })
    );
    assert_eq!(
        events.post(right, 0, 0),
        Err(EventError::ZeroCount { op: "post" })
    );
    assert_eq!(
        events.wait_blocking(0, 0),
        Err(EventError::ZeroCount { op: "wait" })
    );
    assert!(matches!(
        hc.block_on(events.wait(7, 1)),
        Err(EventError::InvalidIndex { .. })
    ));

    let all_ones = ranks * TASKS * POSTS;
    let weighted = TASKS * ranks * (ranks + 1) / 2;
    let released = AtomicBool::new(false);
    let behind = events.when(0, all_ones).and_then(|first| {
        hc.finish(|s| {
            let (events, released) = (&events, &released);
            s.spawn_await(&[&first], move |_| released.store(true, Ordering::SeqCst));
            for _ in 0..TASKS {
                s.spawn(move |_| {
                    for _ in 0..POSTS {
                        for dest in 0..size {
                            events.post(dest, 0, 1).unwrap();
                        }
                    }
                    for dest in 0..size {
                        events.post(dest, 1, rank as u64 + 1).unwrap();
                    }
                });
            }
        });
        events.when(0, 1)
    });
    let behind = behind.expect("arm the triggers");
    assert!(released.load(Ordering::SeqCst));
    events.wait_blocking(1, weighted).expect("weighted wait");
    assert_eq!(events.query(1), Ok(0));

    hc.block_on(async {
        for round in 0..ROUNDS {
            events.post(right, 2, 1).unwrap();
            events
                .wait(2, 1)
                .await
                .unwrap_or_else(|e| panic!("ring round {round}: {e}"));
        }
    });

    let ev0 = events.local(0).unwrap().clone();
    let ev2 = events.local(2).unwrap().clone();
    hc.block_on(events.close()).expect("close");
    // Every post addressed here has been applied: exactly N·T·P on event 0.
    assert_eq!(ev0.query(), 0);
    assert!(behind.result().is_none(), "more posts than sent arrived");
    assert_eq!(ev2.query(), 0);

    // Overflow from another rank poisons the event and is reported.
    let over = DistEvents::create(hc.world(), 1).expect("create the second set");
    let poisoned = over.local(0).unwrap().clone();
    if size == 1 {
        over.post(0, 0, u64::MAX).unwrap();
        assert!(matches!(
            over.post(0, 0, 1),
            Err(EventError::Overflow { .. })
        ));
        assert_eq!(poisoned.query(), u64::MAX);
        hc.block_on(over.close()).expect("close of the second set");
    } else {
        over.post(right, 0, u64::MAX).unwrap();
        over.post(right, 0, u64::MAX).unwrap();
        assert_eq!(
            hc.block_on(over.close()),
            Err(EventError::Overflow {
                count: u64::MAX,
                added: u64::MAX
            })
        );
        assert_eq!(poisoned.wait_blocking(1), Err(EventError::Poisoned));
    }

    println!("rank {rank}/{size}: events suite OK");
}
