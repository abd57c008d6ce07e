//! Message services (`Comm::serve`, `Comm::serve_tasks`) at any rank count.
//!
//! 1. **Ordered delivery.** Every rank sends 200 numbered messages to every
//!    rank (itself included) on one tag; each rank's inline handler checks
//!    that each source's messages arrive in the order they were sent.
//! 2. **Replies from a handler.** Each rank pings the next; the next one's
//!    handler answers with an `isend` started on the engine; the pinger
//!    awaits the answer.
//! 3. **Handlers as tasks.** Messages released as tasks, which compute on
//!    the workers and may block.
//! 4. **Misuse.** A handler that panics stops its service, and `stop`
//!    reports it; a blocking wait inside a handler is an error, not a
//!    deadlock.
//! 5. **Handler operations belong to no finish.** A handler that runs while
//!    a task inside a finish steps the engine (shared placement) starts a
//!    receive whose message is sent only after that finish has returned on
//!    every rank: the finish must not wait for it.
//!
//! Every rank prints `rank R/N: services OK` when all checks pass.
//! Run: `mpiexec -n 3 target/release/examples/services`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use hc_mpi::{Error, Hcmpi, Message};
use hc_runtime::Ddf;

const ORDERED: i32 = 10;
const PING: i32 = 11;
const PONG: i32 = 12;
const TASKS: i32 = 13;
const PANICS: i32 = 14;
const BLOCKS: i32 = 15;
const GO: i32 = 17;
const INSIDE: i32 = 18;
const LATER: i32 = 19;
const PER_PEER: u64 = 200;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let hc = Hcmpi::init()?;
    let world = hc.world().clone();
    let (rank, size) = (hc.rank(), hc.size());
    let next = (rank + 1) % size;

    // 1. Ordered delivery.
    let expected = PER_PEER * size as u64;
    let all_in = Ddf::new();
    let service = {
        let all_in = all_in.clone();
        let mut next_seq: HashMap<i32, u64> = HashMap::new();
        let mut count = 0;
        world.serve(ORDERED, move |message: Message<u64>| {
            let seq = next_seq.entry(message.source).or_insert(0);
            assert_eq!(
                message.data,
                vec![message.source as u64, *seq],
                "out of order"
            );
            *seq += 1;
            count += 1;
            if count == expected {
                all_in.put(()).unwrap();
            }
        })?
    };
    for seq in 0..PER_PEER {
        for dest in 0..size {
            world.isend(vec![rank as u64, seq], dest, ORDERED)?;
        }
    }
    hc_runtime::wait(&all_in);
    service.stop()?;

    // 2. Replies from a handler.
    let pong_world = world.clone();
    let ping_service = world.serve(PING, move |message: Message<i32>| {
        let reply = vec![message.data[0] * 10];
        pong_world
            .isend(reply, message.source, PONG)
            .expect("reply from the handler");
    })?;
    let answer = world.irecv(vec![0i32; 1], next, PONG)?;
    world.isend(vec![rank + 1], next, PING)?;
    let answered = hc.block_on(answer)?.0;
    assert_eq!(answered, vec![(rank + 1) * 10]);
    world.barrier()?;
    ping_service.stop()?;

    // 3. Handlers as tasks.
    let total = Arc::new(AtomicU64::new(0));
    let done = Ddf::new();
    let tasks = {
        let (total, done) = (Arc::clone(&total), done.clone());
        let want: u64 = (0..size as u64).map(|r| r * 1000).sum::<u64>() + 100 * size as u64;
        world.serve_tasks(TASKS, move |_, message: Message<u64>| {
            // Work that would be too long for the engine.
            let value: u64 = (0..100).map(|_| 1).sum::<u64>() + message.data[0];
            if total.fetch_add(value, Ordering::SeqCst) + value == want {
                done.put(()).unwrap();
            }
        })?
    };
    for dest in 0..size {
        world.isend(vec![rank as u64 * 1000], dest, TASKS)?;
    }
    hc_runtime::wait(&done);
    world.barrier()?;
    tasks.stop()?;

    // 4. Misuse: a panicking handler, a blocking wait in a handler.
    let panicking = world.serve(PANICS, |_: Message<u8>| panic!("handler bug"))?;
    let waited = Arc::new(Mutex::new(None));
    let blocking = {
        let (inner, waited) = (world.clone(), Arc::clone(&waited));
        world.serve(BLOCKS, move |message: Message<u8>| {
            let outcome = inner.recv(vec![0u8; 1], message.source, BLOCKS + 1);
            // `wait_any` refuses the same way while nothing has completed;
            // the message to self that completes the request afterwards is
            // only sent once the handler has returned.
            let pending = inner
                .irecv(vec![0u8; 1], inner.rank(), BLOCKS + 2)
                .expect("irecv from self");
            assert_eq!(
                hc_mpi::wait_any(&[&pending]),
                Err(Error::WaitInHandler { op: "wait_any" })
            );
            drop(inner.isend(vec![1u8], inner.rank(), BLOCKS + 2));
            *waited.lock().unwrap() = Some(outcome.map(|_| ()));
        })?
    };
    world.send(vec![1u8], rank, PANICS)?;
    world.send(vec![1u8], rank, BLOCKS)?;
    // Both handlers run when the engine matches the messages, which a
    // barrier does not imply (a send to self may complete before the
    // service sees it): drive the engine until both have run.
    let mut backoff = hc_runtime::Backoff::new(hc_runtime::BackoffPolicy::WAIT);
    while panicking.failure().is_none() || waited.lock().unwrap().is_none() {
        if !world.progress() {
            if let hc_runtime::Snooze::Park(timeout) = backoff.snooze() {
                std::thread::park_timeout(timeout);
            }
        }
    }
    match panicking.stop() {
        Err(Error::HandlerPanicked {
            tag: PANICS,
            message,
        }) => {
            assert!(message.contains("handler bug"), "{message}")
        }
        other => panic!("a panicking handler must stop its service: {other:?}"),
    }
    blocking.stop()?;
    match waited.lock().unwrap().take() {
        Some(Err(Error::WaitInHandler { op: "irecv" })) => {}
        other => panic!("a blocking wait in a handler must fail: {other:?}"),
    }
    // 5. Operations started by a handler join no finish.
    let prev = (rank + size - 1) % size;
    let (started, later) = hc_runtime::promise();
    let go = {
        let inner = world.clone();
        let mut started = Some(started);
        world.serve(GO, move |message: Message<u8>| {
            let request = inner
                .irecv(vec![0u8; 1], message.source, LATER)
                .expect("irecv from a handler");
            if let Some(started) = started.take() {
                started.complete(request);
            }
        })?
    };
    hc.finish(|s| {
        let world = &world;
        s.spawn(move |_| {
            world.isend(vec![1u8], next, GO).unwrap();
            world.isend(vec![2u8], next, INSIDE).unwrap();
            // With one worker and shared placement, this worker steps the
            // engine while it waits, so the GO handler runs here, inside
            // this finish.
            let (data, _) = world.recv(vec![0u8; 1], prev, INSIDE).unwrap();
            assert_eq!(data, vec![2u8]);
        });
    });
    // Every rank's finish has returned: only now is LATER sent.
    world.barrier()?;
    world.isend(vec![3u8], next, LATER)?;
    let (data, status) = later.wait().expect("the GO handler ran").wait()?;
    assert_eq!((data, status.source), (vec![3u8], prev));
    world.barrier()?;
    go.stop()?;

    println!(
        "rank {rank}/{size}: services OK ({} engine)",
        hc.placement()
    );
    Ok(())
}
