//! Fig. 3 of the HCMPI paper: a `finish` around a non-blocking receive
//! implements a blocking receive.
//!
//! ```text
//! finish {
//!     HCMPI_Irecv(recv_buf, ...);
//!     ... // do asynchronous work
//! } // Irecv must be complete after finish
//! ```
//!
//! A communication task belongs to the finish enclosing the task that
//! starts it, so the finish waits for the request like for a task. Every
//! rank sends a block to the next rank of a ring and receives the previous
//! rank's block, in three forms:
//!
//! 1. the paper's form: `irecv` inside the finish, asynchronous work
//!    alongside, nothing else;
//! 2. several tasks of one finish, each with its own tag, each receiving
//!    with `irecv` + `wait` while sibling tasks send;
//! 3. a nested finish inside a task.
//!
//! After each finish the receive must be complete (`test()` is true without
//! waiting) and hold the expected data.
//!
//! Run: `mpiexec -n 2 target/release/examples/fig3_finish_irecv`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use hc_mpi::{Error, Hcmpi, Request};

const N: usize = 4096;
const TASKS: i32 = 8;

/// The block rank `rank` sends with tag `tag`.
fn block(rank: i32, tag: i32, n: usize) -> Vec<u64> {
    (0..n as u64)
        .map(|i| ((rank as u64) << 40) ^ ((tag as u64) << 24) ^ i)
        .collect()
}

fn main() -> Result<(), Error> {
    let hc = Hcmpi::init()?;
    let world = hc.world();
    let (rank, size) = (hc.rank(), hc.size());
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;

    // 1. finish { irecv; isend; async work } — the receive is complete after.
    let mut recv_slot: Option<Request<Vec<u64>>> = None;
    let mut send_slot: Option<Request<Vec<u64>>> = None;
    let work = AtomicU64::new(0);
    hc.finish(|s| -> Result<(), Error> {
        let recv = recv_slot.insert(world.irecv(vec![0u64; N], prev, 30)?);
        let send = send_slot.insert(world.isend(block(rank, 30, N), next, 30)?);
        // Nothing awaits them here: the communication tasks belong to this
        // finish, which therefore returns only once both have completed.
        let _ = (&*recv, &*send);
        // ... do asynchronous work.
        for k in 0..16u64 {
            let work = &work;
            s.spawn(move |_| {
                let x: u64 = (0..10_000u64).map(|i| i * k % 7).sum();
                work.fetch_add(x, Ordering::Relaxed);
            });
        }
        Ok(())
    })?;
    let recv = recv_slot.take().expect("irecv was posted");
    let send = send_slot.take().expect("isend was posted");
    assert!(
        recv.test(),
        "rank {rank}: irecv incomplete after its finish"
    );
    assert!(
        send.test(),
        "rank {rank}: isend incomplete after its finish"
    );
    let expected_work: u64 = (0..16u64)
        .map(|k| (0..10_000u64).map(|i| i * k % 7).sum::<u64>())
        .sum();
    assert_eq!(work.load(Ordering::Relaxed), expected_work);
    let (data, status) = recv
        .try_wait()
        .expect("complete after finish")
        .expect("irecv succeeded");
    assert_eq!((status.source, status.tag, status.count), (prev, 30, N));
    assert!(data == block(prev, 30, N), "rank {rank}: wrong ring block");
    let (sent, send_status) = send.try_wait().expect("complete").expect("isend ok");
    assert_eq!(sent.len(), N, "isend hands its buffer back");
    assert_eq!(send_status.count, N);

    // 2. Many tasks of one finish, each receiving a tagged block (irecv +
    //    wait inside the task) while sibling tasks send.
    let received = Mutex::new(Vec::new());
    hc.finish(|s| {
        for tag in 0..TASKS {
            let received = &received;
            s.spawn(move |_| {
                let request = world
                    .irecv(vec![0u64; 64], prev, 100 + tag)
                    .expect("valid irecv");
                let (data, status) = request.wait().expect("tagged receive");
                received.lock().unwrap().push((tag, data, status));
            });
            s.spawn(move |_| {
                world
                    .send(block(rank, 100 + tag, 64), next, 100 + tag)
                    .expect("tagged send");
            });
        }
    });
    let mut received = received.into_inner().unwrap();
    assert_eq!(received.len(), TASKS as usize);
    received.sort_by_key(|(tag, _, _)| *tag);
    for (i, (tag, data, status)) in received.iter().enumerate() {
        assert_eq!(*tag, i as i32);
        assert_eq!(
            (status.source, status.tag, status.count),
            (prev, 100 + tag, 64)
        );
        assert!(
            *data == block(prev, 100 + tag, 64),
            "task {tag}: wrong block"
        );
    }

    // 3. A nested finish inside a task: the inner finish completes the
    //    receive before the task goes on.
    let inner_ok = Mutex::new(false);
    hc.finish(|s| {
        s.spawn(|_| {
            let mut slot = None;
            hc_runtime::finish(|inner| {
                let r = slot.insert(world.irecv(vec![0u64; 16], prev, 200).expect("irecv"));
                world.isend(block(rank, 200, 16), next, 200).expect("isend");
                inner.spawn_await(&[&*r], |_| {});
            });
            let r = slot.take().expect("posted");
            assert!(
                r.test(),
                "nested finish returned before its irecv completed"
            );
            let (data, _) = r.get().expect("received");
            *inner_ok.lock().unwrap() = *data == block(prev, 200, 16);
        });
    });
    assert!(
        inner_ok.into_inner().unwrap(),
        "rank {rank}: nested finish data"
    );

    println!("rank {rank}/{size}: fig3 finish irecv OK");
    Ok(())
}
