//! Every point-to-point call of hc-mpi, across ranks, with its results
//! checked (rsmpi style: the example is also a multi-rank test).
//!
//! Sections (separated by barriers; each uses its own tags):
//!
//! 1. blocking `send`/`recv` from the main thread (to itself, then a ring);
//! 2. blocking `send`/`recv`/`probe` inside tasks, many tasks per finish;
//! 3. `isend`/`irecv` with `ANY_SOURCE` and `ANY_TAG` (on a duplicated
//!    communicator, so wildcards cannot catch another section's traffic);
//! 4. `issend`: cannot complete before the matching receive is posted;
//! 5. `test`, `status`, `get` (→ `Error::Pending`), `try_wait`, `test_all`,
//!    `test_any`, `wait_any`, `wait_all`, `on_complete`;
//! 6. requests awaited by `spawn_await` and `spawn_await_any`;
//! 7. `probe`/`iprobe`, then a receive sized by the probed count; cancelled
//!    probe;
//! 8. `cancel` of an unmatched `irecv` (`status.cancelled`), cancel of a
//!    completed request (no effect);
//! 9. truncation: 10 elements into a 4-element receive → `Error::Truncated`;
//! 10. argument errors caught before MPI: `Error::InvalidRank`,
//!     `Error::InvalidTag`; the largest valid tag works;
//! 11. a `Vec` of a `#[derive(Equivalence)]` struct, and of a struct whose
//!     hand-written `Equivalence` returns an owned `UserDatatype`.
//!
//! Options: `--no-derived` skips section 11, `--only-derived` runs only it.
//!
//! Run: `mpiexec -n 3 target/release/examples/p2p_suite`.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use hc_mpi::{
    test_all, test_any, wait_all, wait_any, Comm, Error, Hcmpi, Request, Source, TagMatch,
    ANY_SOURCE, ANY_TAG,
};
use hc_runtime::Awaitable;
// The derive macro lives in `mpi::traits`; the trait it implements is the
// one hc-mpi re-exports as `hc_mpi::Equivalence`.
use mpi::traits::Equivalence;

type Result<T = ()> = std::result::Result<T, Error>;

/// Ranks around the ring.
#[derive(Clone, Copy)]
struct Ring {
    rank: i32,
    size: i32,
    next: i32,
    prev: i32,
}

fn values(rank: i32, tag: i32, n: usize) -> Vec<i64> {
    (0..n as i64)
        .map(|i| rank as i64 * 1_000_000 + tag as i64 * 1_000 + i)
        .collect()
}

fn as_deps<T: Send + Sync>(requests: &[Request<T>]) -> Vec<&dyn Awaitable> {
    requests.iter().map(|r| r as &dyn Awaitable).collect()
}

/// 1. Blocking calls from the main thread. Ordered so that it is also safe
///    with one rank (MPICH does not complete a send to self before its
///    receive is posted): every blocking call has its partner already posted
///    as a non-blocking call.
fn blocking_main(world: &Comm, ring: Ring) -> Result {
    // The first message on the world communicator, to this rank itself
    // with tag 0: start-up posts and cancels receives of that kind (to grow
    // MPI's request pool), and none may be left to take it.
    let to_self = world.isend(values(ring.rank, 0, 4), ring.rank, 0)?;
    let (data, status) = world.recv(vec![0i64; 4], ring.rank, 0)?;
    assert_eq!((data, status.count), (values(ring.rank, 0, 4), 4));
    to_self.wait()?;
    // Blocking receive, the send posted first.
    let isend = world.isend(values(ring.rank, 1, 16), ring.next, 1)?;
    let (data, status) = world.recv(vec![0i64; 16], ring.prev, 1)?;
    assert_eq!(data, values(ring.prev, 1, 16));
    assert_eq!(
        (status.source, status.tag, status.count),
        (ring.prev, 1, 16)
    );
    assert!(!status.cancelled);
    // Blocking send, the receive posted first.
    let irecv = world.irecv(vec![0i64; 16], ring.prev, 2)?;
    let sent = world.send(values(ring.rank, 2, 16), ring.next, 2)?;
    assert_eq!(sent, values(ring.rank, 2, 16), "send hands the buffer back");
    let (data, status) = irecv.wait()?;
    assert_eq!((data, status.source), (values(ring.prev, 2, 16), ring.prev));
    let (buffer, status) = isend.wait()?;
    assert_eq!((buffer.len(), status.count, status.tag), (16, 16, 1));
    Ok(())
}

/// 2. Blocking calls inside tasks: each task receives (plain `recv`, or
///    `probe` then `recv`) while sibling tasks send; with one worker, the
///    waits must run the senders.
///
///    A blocking call inside a task runs other tasks *on top of* the waiting
///    one, and the waiting task cannot resume before they return. So every
///    task here posts what its partner waits for before it blocks itself,
///    except the probing receivers, which post their receive only after the
///    probe: their senders therefore must not block (a blocking send of one
///    rank to itself completes only once the receive is posted — MPICH does
///    not buffer self-sends — and if it ran on top of its probing receiver,
///    neither would ever return). Those sends are `isend`s, completed after
///    the finish.
fn blocking_in_tasks(hc: &Hcmpi, ring: Ring) -> Result {
    const K: i32 = 8;
    let world = hc.world();
    let checked = AtomicUsize::new(0);
    let unblocked_sends = Mutex::new(Vec::new());
    hc.finish(|s| {
        for k in 0..K {
            let tag = 10 + k;
            let probing = k % 2 == 1;
            let checked = &checked;
            s.spawn(move |_| {
                let (data, status) = if probing {
                    let probed = world.probe::<i64>(ring.prev, tag).expect("probe");
                    assert_eq!(probed.count, 4 + k as usize);
                    world
                        .recv(vec![0i64; probed.count], probed.source, probed.tag)
                        .expect("recv after probe")
                } else {
                    world.recv(vec![0i64; 32], ring.prev, tag).expect("recv")
                };
                assert_eq!(data, values(ring.prev, tag, 4 + k as usize));
                assert_eq!((status.source, status.tag), (ring.prev, tag));
                checked.fetch_add(1, Ordering::Relaxed);
            });
            let unblocked_sends = &unblocked_sends;
            s.spawn(move |_| {
                let data = values(ring.rank, tag, 4 + k as usize);
                if probing {
                    let request = world.isend(data, ring.next, tag).expect("isend in a task");
                    unblocked_sends.lock().unwrap().push(request);
                } else {
                    let sent = world.send(data, ring.next, tag).expect("send in a task");
                    assert_eq!(sent.len(), 4 + k as usize);
                }
            });
        }
    });
    assert_eq!(checked.load(Ordering::Relaxed), K as usize);
    for request in unblocked_sends.into_inner().unwrap() {
        request.wait()?;
    }
    Ok(())
}

/// 3. Wildcards, on a communicator of their own.
fn wildcards(world: &Comm, ring: Ring) -> Result {
    let dup = world.duplicate()?;
    assert_eq!((dup.rank(), dup.size()), (ring.rank, ring.size));
    // Everybody sends to everybody (itself included); receives match any
    // source and any tag.
    let receives = (0..ring.size)
        .map(|_| dup.irecv(vec![0i32; 8], ANY_SOURCE, ANY_TAG))
        .collect::<Result<Vec<_>>>()?;
    let sends = (0..ring.size)
        .map(|dest| {
            dup.isend(
                vec![ring.rank, 100 + ring.rank, dest],
                dest,
                100 + ring.rank,
            )
        })
        .collect::<Result<Vec<_>>>()?;
    let mut sources = BTreeSet::new();
    for request in receives {
        let (data, status) = request.wait()?;
        assert_eq!(status.tag, 100 + status.source, "tag of {status:?}");
        assert_eq!(status.count, 3);
        assert_eq!(data, vec![status.source, status.tag, ring.rank]);
        assert!(sources.insert(status.source), "two messages from one rank");
    }
    assert_eq!(sources, (0..ring.size).collect::<BTreeSet<_>>());
    for send in sends {
        assert_eq!(send.wait()?.1.count, 3);
    }
    // Mixed: any source with a given tag, a given source with any tag. The
    // barrier keeps these messages away from the any/any receives above,
    // which a rank that got there first could otherwise feed.
    dup.barrier()?;
    let by_tag = dup.irecv(vec![0i32; 2], Source::Any, TagMatch::Tag(160 + ring.prev))?;
    let by_source = dup.irecv(vec![0i32; 2], Source::Rank(ring.prev), TagMatch::Any)?;
    dup.send(vec![150, ring.rank], ring.next, 150 + ring.rank)?;
    dup.send(vec![160, ring.rank], ring.next, 160 + ring.rank)?;
    let (data, status) = by_tag.wait()?;
    assert_eq!(
        (data, status.source, status.tag),
        (vec![160, ring.prev], ring.prev, 160 + ring.prev)
    );
    let (data, status) = by_source.wait()?;
    assert_eq!(
        (data, status.source, status.tag),
        (vec![150, ring.prev], ring.prev, 150 + ring.prev)
    );
    Ok(())
}

/// 4. A synchronous send completes only once its receive has been posted;
///    here the receive is posted after a barrier the sender has not passed.
fn synchronous_send(world: &Comm, ring: Ring) -> Result {
    let send = world.issend(values(ring.rank, 20, 8), ring.next, 20)?;
    std::thread::sleep(Duration::from_millis(20));
    assert!(
        !send.test(),
        "issend completed before its receive was posted"
    );
    assert!(send.status().is_none());
    world.barrier()?;
    let (data, status) = world.recv(vec![0i64; 8], ring.prev, 20)?;
    assert_eq!(data, values(ring.prev, 20, 8));
    assert_eq!(status.source, ring.prev);
    let (buffer, status) = send.wait()?;
    assert_eq!((buffer.len(), status.count, status.tag), (8, 8, 20));
    Ok(())
}

/// 5. The test and wait families.
fn test_and_wait(hc: &Hcmpi, ring: Ring) -> Result {
    let world = hc.world();
    let receives = (0..4)
        .map(|k| world.irecv(vec![0i64; 8], ring.prev, 30 + k))
        .collect::<Result<Vec<_>>>()?;
    // Nothing can match before the barrier: the sender sends after it.
    assert!(test_any(&as_deps(&receives)).is_none());
    assert!(!test_all(&as_deps(&receives)));
    assert!(receives.iter().all(|r| !r.test() && r.status().is_none()));
    assert_eq!(
        receives[0].get().err(),
        Some(Error::Pending { op: "irecv" }),
        "get before completion"
    );
    let mut receives = receives;
    let first = receives.remove(0);
    let first = first.try_wait().expect_err("try_wait on a pending request");
    receives.insert(0, first);
    let late = world.irecv(vec![0i64; 8], ring.prev, 35)?;

    world.barrier()?;
    let sends = (0..4)
        .map(|k| world.isend(values(ring.rank, 30 + k, 1 + k as usize), ring.next, 30 + k))
        .collect::<Result<Vec<_>>>()?;
    let deps = as_deps(&receives);
    let index = wait_any(&deps)?;
    assert!(
        index < 4 && receives[index].test(),
        "wait_any index {index}"
    );
    assert!(test_any(&deps).is_some());
    wait_all(&deps)?;
    assert!(test_all(&deps));
    assert_eq!(test_any(&deps), Some(0));
    wait_all(&as_deps(&sends))?;
    assert!(test_all(&as_deps(&sends)));
    for (k, request) in receives.into_iter().enumerate() {
        let status = request.status().expect("complete")?;
        let (data, _) = request.get()?;
        assert_eq!(*data, values(ring.prev, 30 + k as i32, 1 + k));
        let (data, status2) = request.try_wait().expect("complete")?;
        assert_eq!((data.len(), status), (1 + k, status2));
    }
    for send in sends {
        send.wait()?;
    }

    // A completion callback on a computation worker.
    let (tx, rx) = mpsc::channel();
    hc.on_complete(late, move |outcome| {
        tx.send(outcome).expect("main thread listens");
    });
    world.send(values(ring.rank, 35, 3), ring.next, 35)?;
    let (data, status) = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("on_complete callback ran")?;
    assert_eq!((data, status.tag), (values(ring.prev, 35, 3), 35));
    Ok(())
}

/// 6. Data-driven tasks on requests: an OR list fires on the one that
///    completed; an AND list after both.
fn awaiting(hc: &Hcmpi, ring: Ring) -> Result {
    let world = hc.world();
    let ra = world.irecv(vec![0i64; 4], ring.prev, 40)?;
    let rb = world.irecv(vec![0i64; 4], ring.prev, 41)?;
    world.isend(values(ring.rank, 41, 4), ring.next, 41)?;
    let fired = Mutex::new(None);
    hc.finish(|s| {
        s.spawn_await_any(&[&ra, &rb], |_, index| {
            *fired.lock().unwrap() = Some((index, ra.test(), rb.test()));
        });
    });
    // Tag 40 is sent only after the barrier, so only `rb` can have fired.
    assert_eq!(fired.into_inner().unwrap(), Some((1, false, true)));
    world.barrier()?;
    world.isend(values(ring.rank, 40, 4), ring.next, 40)?;
    let both = Mutex::new(None);
    hc.finish(|s| {
        s.spawn_await(&[&ra, &rb], |_| {
            let (a, _) = ra.get().expect("ra");
            let (b, _) = rb.get().expect("rb");
            *both.lock().unwrap() = Some((a.clone(), b.clone()));
        });
    });
    let (a, b) = both.into_inner().unwrap().expect("AND task ran");
    assert_eq!(a, values(ring.prev, 40, 4));
    assert_eq!(b, values(ring.prev, 41, 4));
    Ok(())
}

/// 7. Probing, then receiving exactly the probed count.
fn probing(hc: &Hcmpi, ring: Ring) -> Result {
    let world = hc.world();
    let n = 3 + 2 * ring.rank as usize;
    let expected = 3 + 2 * ring.prev as usize;
    world.isend(values(ring.rank, 50, n), ring.next, 50)?;
    world.isend(vec![ring.rank as u16; 6], ring.next, 51)?;
    // Blocking probe from the main thread.
    let status = world.probe::<i64>(ring.prev, 50)?;
    assert_eq!(
        (status.source, status.tag, status.count),
        (ring.prev, 50, expected)
    );
    let (data, _) = world.recv(vec![0i64; status.count], status.source, status.tag)?;
    assert_eq!(data, values(ring.prev, 50, expected));
    // Request form with a wildcard source, awaited by a task that receives.
    let probe = world.iprobe::<u16>(ANY_SOURCE, 51)?;
    let got = Mutex::new(None);
    hc.finish(|s| {
        s.spawn_await(&[&probe], |_| {
            let (_, status) = probe.get().expect("probe");
            let received = world
                .recv(vec![0u16; status.count], status.source, status.tag)
                .expect("recv after iprobe");
            *got.lock().unwrap() = Some((status, received));
        });
    });
    let (status, (data, rstatus)) = got.into_inner().unwrap().expect("task ran");
    assert_eq!((status.source, status.count), (ring.prev, 6));
    assert_eq!(data, vec![ring.prev as u16; 6]);
    assert_eq!(rstatus, status);
    // A probe nothing matches, cancelled.
    let never = world.iprobe::<u8>(ring.prev, 52)?;
    world.cancel(&never)?;
    let (_, status) = never.wait()?;
    assert!(status.cancelled, "cancelled probe");
    Ok(())
}

/// 8. Cancel.
fn cancelling(world: &Comm, ring: Ring) -> Result {
    let unmatched = world.irecv(vec![7u8; 16], ring.prev, 60)?;
    world.cancel(&unmatched)?;
    let (data, status) = unmatched.wait()?;
    assert!(status.cancelled, "cancelled irecv: {status:?}");
    assert_eq!(status.count, 0);
    assert_eq!(data.len(), status.count);
    // A wildcard receive on a communicator nobody sends on (on `world`, a
    // faster neighbour's next message could match it).
    let quiet = world.duplicate()?;
    let wildcard = quiet.irecv(vec![0u8; 4], ANY_SOURCE, ANY_TAG)?;
    quiet.cancel(&wildcard)?;
    assert!(wildcard.wait()?.1.cancelled);
    // Cancelling a completed request changes nothing.
    let done = world.irecv(vec![0u8; 4], ring.prev, 61)?;
    world.send(vec![1u8, 2, 3], ring.next, 61)?;
    hc_runtime::wait(&done);
    let before = done.status().expect("complete")?;
    world.cancel(&done)?;
    // A round trip through the communication worker after the cancel.
    world.barrier()?;
    assert_eq!(done.status().expect("complete")?, before);
    assert!(!before.cancelled);
    assert_eq!(done.wait()?.0, vec![1, 2, 3]);
    // A nonblocking collective cannot be cancelled: refused, and it still
    // completes.
    let barrier = world.ibarrier();
    assert_eq!(
        world.cancel(&barrier),
        Err(Error::NotCancellable { op: "ibarrier" })
    );
    barrier.wait()?;
    Ok(())
}

/// 9. Truncation.
fn truncation(world: &Comm, ring: Ring) -> Result {
    world.isend(values(ring.rank, 70, 10), ring.next, 70)?;
    world.isend(values(ring.rank, 71, 10), ring.next, 71)?;
    let short = world.irecv(vec![0i64; 4], ring.prev, 70)?;
    match short.wait() {
        Err(Error::Truncated { op, capacity, .. }) => {
            assert_eq!((op, capacity), ("irecv", 4));
        }
        other => panic!("10 elements into 4: expected Error::Truncated, got {other:?}"),
    }
    match world.recv(vec![0i64; 4], ring.prev, 71) {
        Err(e @ Error::Truncated { .. }) => {
            assert!(e.to_string().contains("truncated"), "{e}");
        }
        other => panic!("blocking recv: expected Error::Truncated, got {other:?}"),
    }
    // The communicator still works afterwards.
    world.isend(values(ring.rank, 72, 4), ring.next, 72)?;
    assert_eq!(
        world.recv(vec![0i64; 4], ring.prev, 72)?.0,
        values(ring.prev, 72, 4)
    );
    Ok(())
}

/// 10. Argument errors, reported by the call itself (no request, no MPI).
fn argument_errors(world: &Comm, ring: Ring) -> Result {
    let size = ring.size;
    let ub = world.tag_upper_bound();
    assert!(ub >= 32767, "MPI_TAG_UB {ub} below the standard's minimum");
    let rank_err = |op, rank| Error::InvalidRank { op, rank, size };
    let tag_err = |op, tag| Error::InvalidTag { op, tag, max: ub };

    assert_eq!(
        world.isend(vec![1u8], size, 0).unwrap_err(),
        rank_err("isend", size)
    );
    assert_eq!(
        world.isend(vec![1u8], -1, 0).unwrap_err(),
        rank_err("isend", -1)
    );
    assert_eq!(
        world.issend(vec![1u8], size, 0).unwrap_err(),
        rank_err("issend", size)
    );
    assert_eq!(
        world.send(vec![1u8], size + 3, 0).unwrap_err(),
        rank_err("isend", size + 3)
    );
    assert_eq!(
        world.irecv(vec![0u8], size, 0).unwrap_err(),
        rank_err("irecv", size)
    );
    // MPICH's MPI_ANY_SOURCE is -2: a raw -2 must not become a wildcard.
    assert_eq!(
        world.irecv(vec![0u8], -2, 0).unwrap_err(),
        rank_err("irecv", -2)
    );
    assert_eq!(
        world.recv(vec![0u8], size, 0).unwrap_err(),
        rank_err("irecv", size)
    );
    assert_eq!(
        world.iprobe::<u8>(size, 0).unwrap_err(),
        rank_err("probe", size)
    );
    assert_eq!(world.probe::<u8>(-7, 0).unwrap_err(), rank_err("probe", -7));

    assert_eq!(
        world.isend(vec![1u8], ring.next, -5).unwrap_err(),
        tag_err("isend", -5)
    );
    assert_eq!(
        world.issend(vec![1u8], ring.next, -5).unwrap_err(),
        tag_err("issend", -5)
    );
    // MPI_ANY_TAG is -1: a raw -1 must not become a wildcard.
    assert_eq!(
        world.irecv(vec![0u8], ring.prev, -1).unwrap_err(),
        tag_err("irecv", -1)
    );
    assert_eq!(
        world.probe::<u8>(ring.prev, -5).unwrap_err(),
        tag_err("probe", -5)
    );
    if ub < i32::MAX {
        assert_eq!(
            world.isend(vec![1u8], ring.next, ub + 1).unwrap_err(),
            tag_err("isend", ub + 1)
        );
        assert_eq!(
            world.irecv(vec![0u8], ring.prev, ub + 1).unwrap_err(),
            tag_err("irecv", ub + 1)
        );
    }
    let message = world.isend(vec![1u8], size, 0).unwrap_err().to_string();
    assert!(
        message.contains("rank") && message.contains(&size.to_string()),
        "{message}"
    );

    // The largest valid tag works.
    let r = world.irecv(vec![0u8; 2], ring.prev, ub)?;
    world.send(vec![9u8, ring.rank as u8], ring.next, ub)?;
    let (data, status) = r.wait()?;
    assert_eq!((data, status.tag), (vec![9u8, ring.prev as u8], ub));
    Ok(())
}

/// A small struct with a derived MPI datatype.
#[derive(Equivalence, Debug, Clone, Copy, PartialEq, Default)]
struct Particle {
    id: u32,
    position: [f64; 3],
    charge: i16,
}

fn particles(rank: i32, n: usize) -> Vec<Particle> {
    (0..n)
        .map(|i| Particle {
            id: rank as u32 * 100 + i as u32,
            position: [rank as f64, i as f64 * 0.5, -(i as f64)],
            charge: if i % 2 == 0 { 1 } else { -1 },
        })
        .collect()
}

/// A pair whose `Equivalence` is written by hand, as in rsmpi's own
/// examples: its datatype is an owned `UserDatatype`, freed when dropped.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C)]
struct Pair {
    a: i32,
    b: i32,
}

// SAFETY: `Pair` is `repr(C)` with two `i32` fields and no padding: exactly
// two contiguous `MPI_INT`s.
unsafe impl Equivalence for Pair {
    type Out = mpi::datatype::UserDatatype;

    fn equivalent_datatype() -> Self::Out {
        mpi::datatype::UserDatatype::contiguous(2, &i32::equivalent_datatype())
    }
}

/// Section 11: a `Vec` of a derived type, in a ring, with a short receive;
/// then one of a type whose datatype handle lives only as long as the
/// value that owns it (the engine must keep it alive across the call that
/// posts).
fn derived(world: &Comm, ring: Ring) -> Result {
    let r = world.irecv(vec![Particle::default(); 8], ring.prev, 80)?;
    world.isend(particles(ring.rank, 5), ring.next, 80)?;
    let (data, status) = r.wait()?;
    assert_eq!(status.count, 5, "count in elements of the derived type");
    assert_eq!(data, particles(ring.prev, 5));

    let pairs = |rank: i32| (0..4).map(|i| Pair { a: rank, b: i }).collect::<Vec<_>>();
    let r = world.irecv(vec![Pair::default(); 6], ring.prev, 81)?;
    world.isend(pairs(ring.rank), ring.next, 81)?;
    let (data, status) = r.wait()?;
    assert_eq!(
        status.count, 4,
        "count in elements of the hand-written type"
    );
    assert_eq!(data[..4], pairs(ring.prev)[..]);
    let mine = if ring.rank == 0 {
        pairs(7)
    } else {
        vec![Pair::default(); 4]
    };
    assert_eq!(world.bcast(mine, 0)?, pairs(7), "a collective of the type");
    Ok(())
}

fn main() -> Result {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only_derived = args.iter().any(|a| a == "--only-derived");
    let no_derived = args.iter().any(|a| a == "--no-derived");
    let hc = Hcmpi::init()?;
    let world = hc.world();
    let (rank, size) = (hc.rank(), hc.size());
    let ring = Ring {
        rank,
        size,
        next: (rank + 1) % size,
        prev: (rank + size - 1) % size,
    };
    let trace = std::env::var_os("P2P_TRACE").is_some();
    let step = |name: &str| {
        if trace {
            eprintln!("rank {rank}: {name}");
        }
    };
    let mut sections = 0;
    if !only_derived {
        step("blocking_main");
        blocking_main(world, ring)?;
        world.barrier()?;
        step("blocking_in_tasks");
        blocking_in_tasks(&hc, ring)?;
        world.barrier()?;
        step("wildcards");
        wildcards(world, ring)?;
        world.barrier()?;
        step("synchronous_send");
        synchronous_send(world, ring)?;
        world.barrier()?;
        step("test_and_wait");
        test_and_wait(&hc, ring)?;
        world.barrier()?;
        step("awaiting");
        awaiting(&hc, ring)?;
        world.barrier()?;
        step("probing");
        probing(&hc, ring)?;
        world.barrier()?;
        step("cancelling");
        cancelling(world, ring)?;
        world.barrier()?;
        step("truncation");
        truncation(world, ring)?;
        world.barrier()?;
        step("argument_errors");
        argument_errors(world, ring)?;
        world.barrier()?;
        sections += 10;
    }
    if !no_derived {
        step("derived");
        derived(world, ring)?;
        world.barrier()?;
        sections += 1;
    }
    println!("rank {rank}/{size}: p2p suite OK ({sections} sections)");
    Ok(())
}
