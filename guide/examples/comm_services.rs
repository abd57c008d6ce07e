//! Message services: a lookup service answered on the engine
//! (`Comm::serve`), messages released as tasks (`Comm::serve_tasks`), and a
//! blocking wait inside a handler, which is refused instead of deadlocking.
//!
//! Run: `mpiexec -n 3 target/release/examples/comm_services`.

// sample-run: ranks=0
// sample-run: ranks=1,2,3,4
// sample-run: ranks=2 HCMPI_PLACEMENT=dedicated
// sample-run: ranks=3 HCMPI_PLACEMENT=shared

use std::process::ExitCode;
use std::sync::atomic::{
    AtomicU64,
    Ordering::{AcqRel, Relaxed},
};
use std::sync::Arc;

use hc_mpi::{Error, Hcmpi, Message};
use hc_runtime::Ddf;

const LOOKUP: i32 = 50;
const ANSWER: i32 = 51;
const WORK: i32 = 52;
const ASK: i32 = 53;
const LATER: i32 = 54;

/// The value rank `owner` keeps under `key`.
fn value_of(owner: i32, key: u64) -> u64 {
    owner as u64 * 1000 + key * key
}

fn main() -> ExitCode {
    // An error on one rank ends the whole job with its message.
    Hcmpi::run(body)
}

fn body(hc: &Hcmpi) -> Result<(), Error> {
    let world = hc.world();
    let (rank, size) = (hc.rank(), hc.size());
    let next = (rank + 1) % size;

    // ANCHOR: serve
    // Every rank answers lookups of its keys: [key] in, [key, value] out.
    let replier = world.clone();
    let lookups = world.serve(LOOKUP, move |message: Message<u64>| {
        // On the engine, one message at a time: short, and never blocking.
        let key = message.data[0];
        let answer = vec![key, value_of(replier.rank(), key)];
        // The reply joins no finish: not that of whichever task happens to
        // be stepping the engine.
        replier
            .isend(answer, message.source, ANSWER)
            .expect("reply");
    })?;
    let answered = AtomicU64::new(0);
    hc.finish(|s| -> Result<(), Error> {
        for key in 1..=3u64 {
            let answer = world.irecv(vec![0u64; 2], next, ANSWER)?;
            world.isend(vec![key], next, LOOKUP)?;
            let answered = &answered;
            s.spawn_future(async move {
                let (data, _) = answer.await.expect("answer");
                assert_eq!(data[1], value_of(next, data[0]));
                answered.fetch_add(data[0], Relaxed);
            });
        }
        Ok(())
    })?;
    assert_eq!(answered.into_inner(), 1 + 2 + 3);
    world.barrier()?; // every rank has its answers: nothing left to serve

    // `stop` says how the service ended: a handler's panic, an MPI error.
    lookups.stop()?;
    // ANCHOR_END: serve

    // ANCHOR: serve_tasks
    // One message from every rank; each becomes a task on the workers,
    // which may compute (or block) as long as it likes.
    let total = Arc::new(AtomicU64::new(0));
    let counted = Arc::new(AtomicU64::new(0));
    let all_in = Ddf::new();
    let tasks = world.serve_tasks(WORK, {
        let (total, counted, all_in) = (total.clone(), counted.clone(), all_in.clone());
        move |_, message: Message<u64>| {
            let n = message.data[0];
            total.fetch_add((1..=n).map(|i| i * i).sum::<u64>(), Relaxed);
            if counted.fetch_add(1, AcqRel) + 1 == size as u64 {
                all_in.put(()).expect("put once");
            }
        }
    })?;
    for dest in 0..size {
        world.isend(vec![100 + rank as u64], dest, WORK)?;
    }
    all_in.wait();
    tasks.stop()?;
    let expected: u64 = (0..size as u64)
        .map(|r| (1..=100 + r).map(|i| i * i).sum::<u64>())
        .sum();
    assert_eq!(total.load(Relaxed), expected);
    // ANCHOR_END: serve_tasks

    // ANCHOR: no_blocking
    let outcome = Ddf::new();
    let asker = {
        let (comm, outcome) = (world.clone(), outcome.clone());
        world.serve(ASK, move |_: Message<u8>| {
            let started = comm.irecv(vec![0u8; 1], comm.rank(), LATER);
            // Waiting here would wait for the engine itself: refused.
            let waited = started.and_then(|request| request.wait().map(|_| ()));
            outcome.put(waited).expect("put once");
        })?
    };
    world.send(vec![1u8], rank, ASK)?;
    assert_eq!(outcome.wait(), &Err(Error::WaitInHandler { op: "irecv" }));
    world.send(vec![2u8], rank, LATER)?; // completes the receive it started
    asker.stop()?;
    // ANCHOR_END: no_blocking

    if rank == 0 {
        println!(
            "services on {size} rank(s), {} engine: lookups, tasks and a refused wait OK",
            hc.placement()
        );
    }
    Ok(())
}
