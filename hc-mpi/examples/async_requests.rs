//! Requests as Rust futures, run as tasks that hold no worker while they
//! wait; requests handed to and shared between tasks; a task that panics
//! while it owns a pending request.
//!
//! 1. **20,000 waiting receives on one worker.** Each rank spawns 20,000
//!    future tasks, each awaiting its own receive, before its neighbour
//!    sends anything: with one computation worker, a blocking wait would
//!    stack 20,000 frames on it (and overflow); pending futures hold none.
//! 2. **Handing requests around.** A request posted by one task is moved to
//!    another that awaits it; a shared request is awaited by four tasks,
//!    each borrowing the same buffer; a data-driven task awaits a request
//!    next to a DDF.
//! 3. **A panic with a pending request.** A task posts a receive nobody
//!    will match, then panics: the finish must re-raise the panic (not wait
//!    forever), and the receive is cancelled.
//!
//! Every rank prints `rank R/N: async requests OK` when all checks pass.
//! Run: `mpiexec -n 2 target/release/examples/async_requests`
//! (`--waiters N` changes the count of section 1).

mod common;

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use hc_mpi::{Comm, Error, Hcmpi};
use hc_runtime::Ddf;

const WAIT_TAG: i32 = 1;
const HAND_TAG: i32 = 2;
const SHARE_TAG: i32 = 3;
const NEVER_TAG: i32 = 4;

/// Section 1.
fn many_waiting_receives(hc: &Hcmpi, world: &Comm, waiters: u64) -> Result<(), Error> {
    let (rank, size) = (hc.rank(), hc.size());
    let prev = (rank + size - 1) % size;
    let next = (rank + 1) % size;
    let received = AtomicU64::new(0);
    let completed = AtomicUsize::new(0);
    hc.finish(|s| {
        for _ in 0..waiters {
            let (received, completed) = (&received, &completed);
            let request = world.irecv(vec![0u64; 1], prev, WAIT_TAG).expect("irecv");
            s.spawn_future(async move {
                let (data, status) = request.await.expect("receive");
                assert_eq!(status.source, prev);
                received.fetch_add(data[0], Ordering::Relaxed);
                completed.fetch_add(1, Ordering::Relaxed);
            });
        }
        // The sends come from a task spawned after all the waiters.
        s.spawn(|_| {
            for i in 0..waiters {
                world.isend(vec![i + 1], next, WAIT_TAG).expect("isend");
            }
        });
    });
    assert_eq!(completed.load(Ordering::Relaxed) as u64, waiters);
    assert_eq!(
        received.load(Ordering::Relaxed),
        waiters * (waiters + 1) / 2
    );
    Ok(())
}

/// Section 2.
fn handing_requests_around(hc: &Hcmpi, world: &Comm) -> Result<(), Error> {
    let (rank, size) = (hc.rank(), hc.size());
    let prev = (rank + size - 1) % size;
    let next = (rank + 1) % size;
    let borrowed_by = AtomicUsize::new(0);
    let token = Ddf::new();
    hc.finish(|s| {
        // Posted here, awaited by another task.
        let handed = world.irecv(vec![0i32; 3], prev, HAND_TAG).unwrap();
        s.spawn_future(async move {
            let (data, _) = handed.await.unwrap();
            assert_eq!(data, vec![prev; 3]);
        });
        // Shared by four tasks.
        let shared = world.irecv(vec![0i32; 2], prev, SHARE_TAG).unwrap().share();
        for _ in 0..4 {
            let (shared, borrowed_by) = (shared.clone(), &borrowed_by);
            s.spawn_future(async move {
                let (data, status) = (&shared).await.unwrap();
                assert_eq!((data.as_slice(), status.count), (&[prev, -prev][..], 2));
                borrowed_by.fetch_add(1, Ordering::Relaxed);
            });
        }
        // A data-driven task awaiting the shared request and a DDF.
        let (shared_dd, token_dd) = (shared.clone(), &token);
        s.spawn_await(&[&shared, &token], move |_| {
            assert_eq!(shared_dd.get().unwrap().0[0], prev);
            assert_eq!(token_dd.get(), Ok(&7));
        });
        s.spawn(|_| token.put(7).unwrap());
        world.isend(vec![rank; 3], next, HAND_TAG).unwrap();
        world.isend(vec![rank, -rank], next, SHARE_TAG).unwrap();
    });
    assert_eq!(borrowed_by.load(Ordering::Relaxed), 4);
    Ok(())
}

/// Section 3.
fn panic_with_a_pending_request(hc: &Hcmpi, world: &Comm) -> Result<(), Error> {
    let rank = hc.rank();
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        hc.finish(|s| {
            s.spawn(|_| {
                let _never = world.irecv(vec![0u8; 1], rank, NEVER_TAG).unwrap();
                panic::resume_unwind(Box::new("task failed while receiving"));
            });
        })
    }));
    let payload = outcome.expect_err("the finish must re-raise the panic");
    assert_eq!(
        payload.downcast_ref::<&str>(),
        Some(&"task failed while receiving")
    );
    // The runtime and the engine still work: a message to self.
    let receive = world.irecv(vec![0u8; 1], rank, NEVER_TAG + 1)?;
    world.isend(vec![5u8], rank, NEVER_TAG + 1)?;
    assert_eq!(receive.wait()?.0, vec![5u8]);
    Ok(())
}

/// The runtime starts its computation workers and, in dedicated placement,
/// one communication thread: nothing else, however many requests, tasks
/// and futures it served. (The MPI library may run threads of its own, e.g.
/// UCX's `async`; those are not counted.)
fn check_thread_count(hc: &Hcmpi) {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return; // not Linux: nothing to count
    };
    let names: Vec<String> = tasks
        .filter_map(|t| t.ok())
        .map(|t| {
            let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
            comm.trim().to_owned()
        })
        .collect();
    let ours = names.iter().filter(|n| n.starts_with("hc")).count();
    let expected =
        hc.runtime().num_workers() + usize::from(hc.placement() == hc_mpi::Placement::Dedicated);
    assert_eq!(
        ours,
        expected,
        "hcmpi threads of a {} process with {} workers: {names:?}",
        hc.placement(),
        hc.runtime().num_workers()
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let waiters = common::number_option("--waiters", 20_000u64)?;
    let hc = Hcmpi::init()?;
    let world = hc.world().clone();
    many_waiting_receives(&hc, &world, waiters)?;
    world.barrier()?;
    handing_requests_around(&hc, &world)?;
    world.barrier()?;
    panic_with_a_pending_request(&hc, &world)?;
    world.barrier()?;
    check_thread_count(&hc);
    println!(
        "rank {}/{}: async requests OK ({} engine, {} workers, {})",
        hc.rank(),
        hc.size(),
        hc.placement(),
        hc.runtime().num_workers(),
        if hc.oversubscribed() {
            "oversubscribed"
        } else {
            "a core per thread"
        }
    );
    Ok(())
}
