//! loom models of the space's local protocols.
//!
//! Run with `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p
//! dddf --release --lib loom`. The lock, flags and counters are the real
//! code; MPI sends are modelled by recording the destination.

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

use crate::entry::Once;
use crate::home::{HomeInterest, RequestOutcome};
use crate::termination::Counters;

/// A put racing requests from two ranks: each rank is sent the value exactly
/// once, and only after it was published.
#[test]
fn loom_put_racing_requests_serves_each_rank_once() {
    put_racing_requests(None);
}

/// The same put pushing to rank 2, which asks too (its `reader` function
/// disagrees): still one copy each.
#[test]
fn loom_pushing_put_racing_requests_serves_each_rank_once() {
    put_racing_requests(Some(2));
}

/// The same put pushing to rank 3, which never asks (the reader functions
/// agree): the put alone serves it, and a late request of its own would
/// not bring a second copy.
#[test]
fn loom_pushing_put_serves_its_reader_unasked() {
    put_racing_requests(Some(3));
}

/// Ranks 1 and 2 ask while the home puts, pushing to `pushed`.
fn put_racing_requests(pushed: Option<i32>) {
    loom::model(move || {
        let interest = Arc::new(HomeInterest::new());
        let published = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(Mutex::new(Vec::new()));
        let requesters: Vec<_> = [1, 2]
            .into_iter()
            .map(|rank| {
                let (interest, published, sent) =
                    (interest.clone(), published.clone(), sent.clone());
                thread::spawn(move || match interest.request(rank) {
                    RequestOutcome::SendNow => {
                        assert!(published.load(Ordering::Acquire), "sent before published");
                        sent.lock().unwrap().push(rank);
                    }
                    RequestOutcome::Deferred => {}
                    // The put served the pushed rank already.
                    RequestOutcome::Duplicate => assert_eq!(Some(rank), pushed),
                })
            })
            .collect();
        let send = interest
            .put(pushed, || published.store(true, Ordering::Release))
            .expect("first put");
        sent.lock().unwrap().extend(send);
        for requester in requesters {
            requester.join().unwrap();
        }
        let mut sent = sent.lock().unwrap().clone();
        sent.sort_unstable();
        let mut expected: Vec<i32> = [1, 2].into_iter().chain(pushed).collect();
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(sent, expected, "each rank served once");
        assert!(interest.put(pushed, || panic!("second publish")).is_none());
        assert_eq!(interest.request(1), RequestOutcome::Duplicate);
        if let Some(reader) = pushed {
            assert_eq!(interest.request(reader), RequestOutcome::Duplicate);
        }
    });
}

/// Two puts racing: exactly one publishes.
#[test]
fn loom_racing_puts_publish_once() {
    loom::model(|| {
        let interest = Arc::new(HomeInterest::new());
        let publishes = Arc::new(Mutex::new(0));
        let other = {
            let (interest, publishes) = (interest.clone(), publishes.clone());
            thread::spawn(move || {
                interest
                    .put(None, || *publishes.lock().unwrap() += 1)
                    .is_some()
            })
        };
        let mine = interest
            .put(None, || *publishes.lock().unwrap() += 1)
            .is_some();
        let theirs = other.join().unwrap();
        assert!(mine != theirs, "exactly one put wins");
        assert_eq!(*publishes.lock().unwrap(), 1);
    });
}

/// Concurrent first awaits on a non-home rank register interest once.
#[test]
fn loom_first_await_registers_once() {
    loom::model(|| {
        let once = Arc::new(Once::default());
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let once = once.clone();
                thread::spawn(move || once.first())
            })
            .collect();
        let mine = once.first();
        let firsts = threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .chain([mine])
            .filter(|&first| first)
            .count();
        assert_eq!(firsts, 1);
        assert!(once.is_done());
    });
}

/// The listener answers a request (counting the reply as sent) before it
/// counts the request as handled, so a termination snapshot never sees a
/// handled request whose reply is missing from the sent count.
#[test]
fn loom_reply_is_counted_before_its_request() {
    loom::model(|| {
        let counters = Arc::new(Counters::default());
        let listener = {
            let counters = counters.clone();
            thread::spawn(move || {
                counters.message_sent();
                counters.message_handled();
            })
        };
        let snapshot = counters.snapshot();
        assert!(snapshot.received <= snapshot.sent, "{snapshot:?}");
        listener.join().unwrap();
        let last = counters.snapshot();
        assert_eq!((last.sent, last.received), (1, 1));
    });
}
