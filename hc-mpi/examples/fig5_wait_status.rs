//! Fig. 5 of the HCMPI paper: wait for a receive, then read its status.
//!
//! ```text
//! HCMPI_Irecv(recv_buf, ..., &r);
//! ... // do asynchronous work
//! HCMPI_Wait(r, &s);
//! HCMPI_Get_count(s, HCMPI_INT, &count);
//! if (count > 0) { /* read recv_buf */ }
//! ```
//!
//! Every rank posts receives with room for `CAPACITY` elements, does other
//! asynchronous work, then waits. The previous rank of the ring sends fewer
//! elements than that (a rank-dependent number) and, with a second tag, an
//! empty message. The status must report the received count, and the vector
//! handed back is truncated to it. The wait is done once from the main
//! thread (which parks) and once inside a task (which runs other tasks while
//! it waits).
//!
//! Run: `mpiexec -n 2 target/release/examples/fig5_wait_status`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use hc_mpi::{Error, Hcmpi, Status};

const CAPACITY: usize = 64;

/// How many elements `rank` sends: always in `5..CAPACITY`.
fn length_from(rank: i32) -> usize {
    5 + (rank as usize * 7) % (CAPACITY - 10)
}

fn payload(rank: i32) -> Vec<i32> {
    (0..length_from(rank) as i32)
        .map(|i| rank * 1000 + i)
        .collect()
}

/// The paper's `if (count > 0) { read recv_buf }`.
fn check(rank: i32, prev: i32, tag: i32, data: &[i32], status: Status, expected: &[i32]) {
    let count = status.get_count();
    assert_eq!(status.source, prev, "rank {rank}: source");
    assert_eq!(status.tag, tag, "rank {rank}: tag");
    assert_eq!(count, expected.len(), "rank {rank}: get_count");
    assert_eq!(
        data.len(),
        count,
        "rank {rank}: vector not truncated to count"
    );
    if count > 0 {
        assert_eq!(data, expected, "rank {rank}: data");
    }
}

fn main() -> Result<(), Error> {
    let hc = Hcmpi::init()?;
    let world = hc.world();
    let (rank, size) = (hc.rank(), hc.size());
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;

    // From the main thread.
    let r = world.irecv(vec![-1i32; CAPACITY], prev, 1)?;
    let r_empty = world.irecv(vec![-1i32; CAPACITY], prev, 2)?;
    let send = world.isend(payload(rank), next, 1)?;
    let send_empty = world.isend(Vec::<i32>::new(), next, 2)?;
    // ... do asynchronous work.
    let work = AtomicUsize::new(0);
    hc.finish(|s| {
        for k in 0..32 {
            let work = &work;
            s.spawn(move |_| {
                work.fetch_add(
                    (0..1000).filter(|i| i % (k + 2) == 0).count(),
                    Ordering::Relaxed,
                );
            });
        }
    });
    let expected_work: usize = (0..32)
        .map(|k| (0..1000).filter(|i| i % (k + 2) == 0).count())
        .sum();
    assert_eq!(work.load(Ordering::Relaxed), expected_work);
    let (data, status) = r.wait()?;
    check(rank, prev, 1, &data, status, &payload(prev));
    let (data, status) = r_empty.wait()?;
    check(rank, prev, 2, &data, status, &[]);
    assert_eq!(send.wait()?.1.count, length_from(rank));
    assert_eq!(send_empty.wait()?.1.count, 0);

    // Inside a task: the wait runs other tasks meanwhile.
    let result = Mutex::new(None);
    let side_tasks = AtomicUsize::new(0);
    hc.finish(|s| {
        s.spawn(|s| {
            let r = world.irecv(vec![-1i32; CAPACITY], prev, 3).expect("irecv");
            for _ in 0..8 {
                s.spawn(|_| {
                    side_tasks.fetch_add(1, Ordering::Relaxed);
                });
            }
            // The send comes from another task of the same finish; with one
            // worker this task's wait must run it.
            s.spawn(|_| {
                world.send(payload(rank), next, 3).expect("send");
            });
            let waited = r.wait().expect("wait in a task");
            *result.lock().unwrap() = Some(waited);
        });
    });
    let (data, status) = result.into_inner().unwrap().expect("the task ran");
    check(rank, prev, 3, &data, status, &payload(prev));
    assert_eq!(side_tasks.load(Ordering::Relaxed), 8);

    // HCMPI_GET_STATUS on a completed request, before taking it.
    let r = world.irecv(vec![0i32; CAPACITY], prev, 4)?;
    world.send(payload(rank), next, 4)?;
    hc_runtime::wait(&r);
    let status = r.status().expect("completed")?;
    assert_eq!(status.get_count(), length_from(prev));
    let (data, status2) = r.get()?;
    assert_eq!((data.len(), status2), (length_from(prev), status));

    println!(
        "rank {rank}/{size}: fig5 wait status OK (count {} of {CAPACITY} from rank {prev})",
        length_from(prev)
    );
    Ok(())
}
