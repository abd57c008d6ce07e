//! The communication engine and its requests: starting hcmpi, a receive
//! that belongs to its finish (Fig. 3 of the HCMPI paper), the ways to hand
//! a request to another task, a completion callback, an operation that
//! outlives its finish, and the placement the engine runs in.
//!
//! Every rank sends to the next rank of a ring and receives from the
//! previous one; at one rank it talks to itself. An optional argument
//! (`dedicated`, `shared` or `auto`) chooses the placement, ahead of
//! `HCMPI_PLACEMENT`.
//!
//! Run: `mpiexec -n 3 target/release/examples/comm_requests [PLACEMENT]`.

// sample-run: ranks=0
// sample-run: ranks=1,2,3,4
// sample-run: ranks=2 HCMPI_PLACEMENT=dedicated
// sample-run: ranks=2 HCMPI_PLACEMENT=shared
// sample-run: ranks=3 HCMPI_PLACEMENT=dedicated arg=shared

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use hc_mpi::{Error, Hcmpi, Placement, PLACEMENT_ENV};
use hc_runtime::Ddf;

/// The four numbers rank `rank` sends with `tag`.
fn block(rank: i32, tag: i32) -> Vec<u64> {
    (0..4)
        .map(|i| rank as u64 * 100 + tag as u64 * 10 + i)
        .collect()
}

fn main() -> ExitCode {
    // ANCHOR: init
    let mut builder = Hcmpi::builder();
    // A placement named on the command line overrides HCMPI_PLACEMENT.
    match std::env::args().nth(1).map(|a| a.parse::<Placement>()) {
        Some(Ok(placement)) => builder = builder.placement(placement),
        Some(Err(unknown)) => {
            eprintln!("comm_requests: {unknown}");
            return ExitCode::FAILURE;
        }
        None => {}
    }
    // MPI, computation workers, communication engine; then `body` runs, and
    // an error it returns on one rank ends the whole job with its message.
    builder.run(body)
}

fn body(hc: &Hcmpi) -> Result<(), Box<dyn std::error::Error>> {
    let world = hc.world(); // &Comm: hcmpi's own duplicate of MPI_COMM_WORLD
    let (rank, size) = (hc.rank(), hc.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    // ANCHOR_END: init

    // ANCHOR: finish_irecv
    let mut slot = None;
    let side_work = AtomicU64::new(0);
    hc.finish(|s| -> Result<(), Error> {
        // Started inside the finish, so both operations belong to it.
        slot = Some(world.irecv(vec![0u64; 4], prev, 1)?);
        world.isend(block(rank, 1), next, 1)?; // request dropped: fire and forget
        let side_work = &side_work;
        s.spawn(move |_| {
            side_work.fetch_add((1..=100).sum(), Relaxed);
        });
        Ok(())
    })?;
    // The finish returned, so the message is in: nothing left to wait for.
    let received = slot.take().expect("posted in the finish");
    assert!(
        received.test(),
        "finish returned before its irecv completed"
    );
    let (data, status) = received.wait()?;
    assert_eq!((status.source, status.tag, status.count), (prev, 1, 4));
    assert_eq!(data, block(prev, 1));
    assert_eq!(side_work.into_inner(), 5050);
    // ANCHOR_END: finish_irecv

    // ANCHOR: handoff
    let early = world.irecv(vec![0u64; 4], prev, 5)?; // outside any finish
    let sum = AtomicU64::new(0);
    hc.finish(|s| -> Result<(), Error> {
        let (early, sum) = (&early, &sum);
        // 1. Move it into a future task: `.await` holds no worker meanwhile.
        let a = world.irecv(vec![0u64; 4], prev, 2)?;
        s.spawn_future(async move {
            let (data, _status) = a.await.expect("tag 2");
            sum.fetch_add(data.iter().sum(), Relaxed);
        });
        // 2. Move it into a plain task: `wait` runs other tasks meanwhile.
        let b = world.irecv(vec![0u64; 4], prev, 3)?;
        s.spawn(move |_| {
            let (data, _status) = b.wait().expect("tag 3");
            sum.fetch_add(data.iter().sum(), Relaxed);
        });
        // 3. Share it: every clone awaits one completion and borrows one buffer.
        let c = world.irecv(vec![0u64; 4], prev, 4)?.share();
        for _ in 0..3 {
            let c = c.clone();
            s.spawn_future(async move {
                let (data, _status) = (&c).await.expect("tag 4");
                sum.fetch_add(data.iter().sum(), Relaxed);
            });
        }
        // 4. Borrow it in a data-driven task: the request outlives the finish.
        s.spawn_await(&[early], move |_| {
            let (data, _status) = early.get().expect("tag 5");
            sum.fetch_add(data.iter().sum(), Relaxed);
        });
        for tag in 2..=5 {
            world.isend(block(rank, tag), next, tag)?;
        }
        Ok(())
    })?;
    let expected: u64 = [2, 3, 4, 4, 4, 5]
        .iter()
        .map(|&tag| block(prev, tag).iter().sum::<u64>())
        .sum();
    assert_eq!(sum.into_inner(), expected);
    // ANCHOR_END: handoff

    // ANCHOR: on_complete
    let arrived = Ddf::new();
    let late = world.irecv(vec![0u64; 4], prev, 6)?;
    let put = arrived.clone();
    hc.on_complete(late, move |outcome| {
        // A detached task on a computation worker, once the receive is in.
        let (data, status) = outcome.expect("tag 6");
        put.put((data, status.source)).expect("put once");
    });
    world.isend(block(rank, 6), next, 6)?;
    assert_eq!(arrived.wait(), &(block(prev, 6), prev));
    // ANCHOR_END: on_complete

    // ANCHOR: outside_finish
    let standing = hc.finish(|_| {
        // Joins no finish: this one returns without waiting for a message.
        hc_runtime::outside_finish(|| world.irecv(vec![0u64; 4], prev, 7))
    })?;
    assert!(!standing.test(), "nobody sends tag 7 before the barrier");
    world.barrier()?;
    world.isend(block(rank, 7), next, 7)?;
    // Whoever starts it completes (or cancels) it and waits for it.
    assert_eq!(standing.wait()?.0, block(prev, 7));
    // ANCHOR_END: outside_finish

    // ANCHOR: placement
    let workers = hc.runtime().num_workers();
    let from_env = match std::env::var(PLACEMENT_ENV) {
        Ok(name) => Some(name.parse::<Placement>()?),
        Err(_) => None,
    };
    let asked = std::env::args()
        .nth(1)
        .map(|a| a.parse::<Placement>())
        .transpose()?;
    let requested = asked.or(from_env).unwrap_or(Placement::Auto);
    // `Auto` resolves at start-up: dedicated only with a core to spare.
    let expected = requested.resolve(workers, hc.cores_per_rank());
    assert_eq!(hc.placement(), expected);
    assert_ne!(hc.placement(), Placement::Auto);
    if rank == 0 {
        println!(
            "{size} rank(s), {requested} -> {} engine, {workers} worker(s), \
             {} core(s) per rank, oversubscribed: {}",
            hc.placement(),
            hc.cores_per_rank(),
            hc.oversubscribed()
        );
    }
    // ANCHOR_END: placement
    Ok(())
}
