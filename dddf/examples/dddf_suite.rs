//! Multi-rank checks of distributed data-driven futures; run under
//! `mpiexec -n N` (N = 1..4). Every rank checks its own results, prints one
//! `rank R/N: dddf suite OK` line, and exits non-zero on any mismatch.
//!
//! Sections:
//! 1. all-to-all: every rank puts the guids it homes and awaits every guid,
//!    several data-driven tasks and one future task (`.await`) per guid;
//!    values, and one transfer per (guid, rank);
//! 2. early puts: values put before anyone asks (served from the listener);
//! 3. mixed await lists: a DDDF with a local DDF and an MPI request, and
//!    an await-any over a remote DDDF and a local DDF;
//! 4. errors: `is_ready` asks nothing, bad home, put off the home, double put, get before put, size
//!    mismatch at the put and on arrival, a home function that disagrees
//!    between ranks;
//! 5. threads: eight more spaces, each with a remote exchange in flight,
//!    start no thread: the process runs exactly its computation workers,
//!    the communication worker in dedicated placement, the main thread and
//!    whatever MPI itself started (counted before);
//! 6. close: a clean report on every rank;
//! 7. pushed values: a space whose homes push each guid to the next rank
//!    (`with_reader`), which never asks for it, whether it awaits before
//!    the value arrives or after, does not await it at all, makes its
//!    first handle on it only after it arrived, or awaits it only after
//!    the close (a value never put then fails with `Closed` instead of
//!    hanging), while the rank after it still asks; a `reader` that is not
//!    a rank is refused, by `handle` or, where only the home's `reader`
//!    fails, by the home's answer to a request.
//!
//! `--never-put` instead awaits a guid nobody puts, for the watchdog test.
//! `--listener-panic` makes rank 0's `home` function panic in its listener
//! when another rank asks for guid 99: `close` must fail on every rank
//! (rank 0 with the panic, the others with the peer's failure) instead of
//! hanging; each rank prints `rank R/N: close failed: <error>`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use hc_mpi::{Hcmpi, ReduceOp, ANY_SOURCE};
use hc_runtime::{Backoff, BackoffPolicy, Ddf, Snooze};
use hcmpi_dddf::{DddfError, DddfSpace, SizeCheck};

const GUIDS_PER_RANK: u64 = 5;
const AWAITERS_PER_GUID: usize = 3;

fn value_of(guid: u64) -> Vec<i64> {
    (0..(guid % 4 + 1) as i64)
        .map(|k| guid as i64 * 100 + k)
        .collect()
}

fn size_of(guid: u64) -> usize {
    (guid % 4 + 1) as usize * 8
}

fn check(condition: bool, what: impl FnOnce() -> String) {
    if !condition {
        eprintln!("dddf suite FAILED: {}", what());
        std::process::exit(1);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let hc = Hcmpi::init()?;
    let (rank, ranks) = (hc.rank(), hc.size());
    if std::env::args().any(|a| a == "--never-put") {
        return never_put(&hc);
    }
    if std::env::args().any(|a| a == "--listener-panic") {
        return listener_panic(&hc);
    }
    let nranks = ranks as u64;
    let space = DddfSpace::<Vec<i64>>::new(&hc, move |g| (g % nranks) as i32, size_of)?;
    let total = GUIDS_PER_RANK * nranks;

    // 1. all-to-all, awaits first then puts.
    let handles: Vec<_> = (0..total)
        .map(|g| space.handle(g))
        .collect::<Result<_, _>>()?;
    let checked = AtomicUsize::new(0);
    hc.finish(|s| {
        for h in &handles {
            for _ in 0..AWAITERS_PER_GUID {
                s.spawn_await(&[h], |_| {
                    let value = h.get().expect("awaited value");
                    check(*value == value_of(h.guid()), || {
                        format!("rank {rank}: guid {} = {value:?}", h.guid())
                    });
                    checked.fetch_add(1, Ordering::Relaxed);
                });
            }
            let checked = &checked;
            s.spawn_future(async move {
                let value = h.await.expect("awaited value");
                check(*value == value_of(h.guid()), || {
                    format!("rank {rank}: awaited guid {} = {value:?}", h.guid())
                });
                checked.fetch_add(1, Ordering::Relaxed);
            });
        }
        for h in handles.iter().filter(|h| h.is_home()) {
            s.spawn(|_| h.put(value_of(h.guid())).expect("put on the home"));
        }
    });
    check(
        checked.load(Ordering::Relaxed) == total as usize * (AWAITERS_PER_GUID + 1),
        || "not every awaiting task ran".into(),
    );
    let remote = total - GUIDS_PER_RANK;
    let stats = space.stats();
    check(
        stats.requests_sent == remote && stats.values_received == remote,
        || format!("rank {rank}: one transfer per remote guid expected ({remote}), got {stats:?}"),
    );

    // 2. early puts: the homes put before anyone asks; a barrier orders it.
    let early: Vec<_> = (total..2 * total)
        .map(|g| space.handle(g))
        .collect::<Result<_, _>>()?;
    for h in early.iter().filter(|h| h.is_home()) {
        h.put(value_of(h.guid()))?;
    }
    hc.world().barrier()?;
    for h in &early {
        check(h.wait()? == &value_of(h.guid()), || {
            format!("early guid {}", h.guid())
        });
    }
    // A second handle on a received guid reads the cached copy.
    let again = space.handle(total)?;
    check(again.is_available(), || {
        "cached copy not visible through a new handle".into()
    });
    check(space.stats().requests_sent == 2 * remote, || {
        format!("rank {rank}: extra requests: {:?}", space.stats())
    });

    // 3. mixed await lists.
    let world = hc.world();
    let next = (rank + 1) % ranks;
    let from_next = space.handle(2 * total + next as u64)?;
    let local = Ddf::new();
    let message = world.irecv(vec![0i32; 1], ANY_SOURCE, 11)?;
    let mixed_ok = Mutex::new(false);
    let any_index = Mutex::new(usize::MAX);
    let never_local: Ddf<i32> = Ddf::new();
    hc.finish(
        |s| -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
            s.spawn_await(&[&from_next, &local, &message], |_| {
                let (data, _) = message.get().expect("message");
                *mixed_ok.lock().unwrap() = *from_next.get().unwrap() == value_of(from_next.guid())
                    && *local.get().unwrap() == 7
                    && data[0] == (rank + ranks - 1) % ranks;
            });
            s.spawn_await_any(&[&never_local, &from_next], |_, index| {
                *any_index.lock().unwrap() = index;
            });
            world.isend(vec![rank], next, 11)?;
            local.put(7).unwrap();
            let mine = space.handle(2 * total + rank as u64)?;
            mine.put(value_of(mine.guid()))?;
            Ok(())
        },
    )
    .map_err(|e| e.to_string())?;
    check(*mixed_ok.lock().unwrap(), || "mixed await list".into());
    check(*any_index.lock().unwrap() == 1, || "await-any index".into());
    never_local.put(0).unwrap();

    // 4. errors.
    errors(&hc, &space, total)?;

    // 5. threads.
    threads(&hc)?;

    // 7. pushed values (in a space of their own, closed there).
    pushed(&hc)?;

    // 6. close.
    let report = space.close()?;
    check(report.is_clean(), || {
        format!("rank {rank}: close report {report:?}")
    });
    println!(
        "rank {rank}/{ranks}: dddf suite OK ({} values received)",
        report.stats.values_received
    );
    Ok(())
}

/// Section 7: guid `g` is homed on `g % ranks` and pushed to the rank
/// after its home; every rank awaits the guids pushed to it and, with 3
/// ranks or more, those homed two ranks back, which it must ask for.
fn pushed(hc: &Hcmpi) -> Result<(), Box<dyn std::error::Error>> {
    let (rank, ranks) = (hc.rank(), hc.size());
    let nranks = ranks as u64;
    let home = move |g: u64| (g % nranks) as i32;
    let next = move |r: i32| (r + 1) % ranks;
    const BAD_READER: u64 = 999;
    const BAD_READER_ON_HOME: u64 = 998;
    let space = DddfSpace::<Vec<i64>>::with_reader(hc, home, size_of, move |g| match g {
        BAD_READER => Some(ranks),
        // Only on its home a reader that is not a rank, elsewhere none:
        // the others ask for it, and the home refuses.
        BAD_READER_ON_HOME => (rank == home(g)).then_some(ranks),
        _ => Some(next(home(g))),
    })?;
    let total = GUIDS_PER_RANK * nranks;
    let pushed_here = |g: u64| ranks > 1 && next(home(g)) == rank;
    let pulled_here = |g: u64| ranks > 2 && next(next(home(g))) == rank;
    let range = |k: u64| k * total..(k + 1) * total;
    // a. awaits first (a barrier orders them before every put), then the
    // puts; b. the puts first, then the awaits once the pushed values are
    // here; c. guids pushed here that nobody awaits; d. guids pushed here
    // before this rank has a handle on them; e. guids awaited here only
    // after the close, half of them never put.
    let (first, second, unawaited, late, after) =
        (range(0), range(1), range(2), range(3), range(4));
    let awaited = |g: &u64| pushed_here(*g) || pulled_here(*g);
    let handles = |guids: std::ops::Range<u64>| -> Result<Vec<_>, DddfError> {
        guids.map(|g| space.handle(g)).collect()
    };
    let (first, second, unawaited) = (handles(first)?, handles(second)?, handles(unawaited)?);
    let checked = AtomicUsize::new(0);
    let check_value = |h: &hcmpi_dddf::Dddf<Vec<i64>>, value: &Vec<i64>| {
        check(*value == value_of(h.guid()), || {
            format!("rank {rank}: pushed guid {} = {value:?}", h.guid())
        });
        checked.fetch_add(1, Ordering::Relaxed);
    };
    // Allreduces until `ready` holds on every rank; between them every rank
    // backs off alike (they all see the same result), leaving the core to
    // the engine that receives the values.
    let everywhere = |ready: &dyn Fn() -> bool| -> Result<(), hc_mpi::Error> {
        let mut backoff = Backoff::new(BackoffPolicy::WAIT);
        while hc
            .world()
            .allreduce(vec![u64::from(ready())], ReduceOp::Min)?[0]
            == 0
        {
            if let Snooze::Park(timeout) = backoff.snooze() {
                std::thread::park_timeout(timeout);
            }
        }
        Ok(())
    };
    hc.finish(|s| {
        for h in first.iter().filter(|h| awaited(&h.guid())) {
            s.spawn_await(&[h], |_| check_value(h, h.get().expect("awaited value")));
        }
        hc.world()
            .barrier()
            .expect("barrier between the awaits and the puts");
        for h in first.iter().chain(&unawaited).filter(|h| h.is_home()) {
            s.spawn(|_| h.put(value_of(h.guid())).expect("put on the home"));
        }
    });
    for h in second.iter().filter(|h| h.is_home()) {
        h.put(value_of(h.guid()))?;
    }
    everywhere(&|| {
        second
            .iter()
            .filter(|h| pushed_here(h.guid()))
            .all(|h| h.is_available())
    })?;
    for h in second.iter().filter(|h| awaited(&h.guid())) {
        check_value(h, h.wait()?);
    }
    let count = |guids: &[hcmpi_dddf::Dddf<Vec<i64>>], here: &dyn Fn(u64) -> bool| {
        guids.iter().filter(|h| here(h.guid())).count() as u64
    };
    let all: Vec<_> = first.into_iter().chain(second).collect();
    let (pushed, pulled) = (count(&all, &pushed_here), count(&all, &pulled_here));
    let pushed_unawaited = count(&unawaited, &pushed_here);
    check(
        checked.load(Ordering::Relaxed) as u64 == pushed + pulled,
        || format!("rank {rank}: pushed: not every awaiting task ran"),
    );
    // d: every value this rank is pushed so far, these included, is here
    // before it makes a handle on any of them.
    let homed_here = |guids: std::ops::Range<u64>| -> Result<Vec<_>, DddfError> {
        guids
            .filter(|&g| home(g) == rank)
            .map(|g| space.handle(g))
            .collect()
    };
    for h in homed_here(late.clone())? {
        h.put(value_of(h.guid()))?;
    }
    let pushed_late = late.clone().filter(|&g| pushed_here(g)).count() as u64;
    let expected = pushed + pushed_unawaited + pulled + pushed_late;
    everywhere(&|| space.stats().values_received >= expected)?;
    for g in late.filter(|&g| pushed_here(g)) {
        let h = space.handle(g)?;
        check(h.is_available(), || {
            format!("rank {rank}: guid {g} arrived before its handle, but the handle lacks it")
        });
        check_value(&h, h.get()?);
    }
    // e: handles made before the close, awaited after it.
    let after: Vec<_> = handles(after)?;
    let put_before_close = |g: u64| g.is_multiple_of(2);
    for h in after
        .iter()
        .filter(|h| h.is_home() && put_before_close(h.guid()))
    {
        h.put(value_of(h.guid()))?;
    }
    let bad = space.handle(BAD_READER).map(|_| ());
    check(
        bad == Err(DddfError::BadReader {
            guid: BAD_READER,
            reader: ranks,
            ranks,
        }),
        || format!("rank {rank}: reader out of range: {bad:?}"),
    );
    let bad_home = home(BAD_READER_ON_HOME);
    let asks_bad_home = ranks > 1 && rank == next(bad_home);
    if asks_bad_home {
        let refused = space.handle(BAD_READER_ON_HOME)?.wait().map(|_| ());
        check(
            refused
                == Err(DddfError::Refused {
                    guid: BAD_READER_ON_HOME,
                    asked: bad_home,
                    its_home: -1,
                }),
            || format!("rank {rank}: a request its home cannot track: {refused:?}"),
        );
    }
    let report = space.close()?;
    let pushed_after = count(&after, &|g| pushed_here(g) && put_before_close(g));
    for h in after.iter().filter(|h| pushed_here(h.guid())) {
        let got = h.wait().map(|_| ());
        let want = if put_before_close(h.guid()) {
            Ok(())
        } else {
            Err(DddfError::Closed)
        };
        check(got == want, || {
            format!(
                "rank {rank}: guid {} awaited after the close: {got:?}",
                h.guid()
            )
        });
    }
    // Every guid pushed here arrived unasked, awaited or not; only the
    // guids homed two ranks back were asked for, by this rank and (as
    // their home) of this one.
    let stats = report.stats;
    check(
        report.is_clean()
            && stats.requests_sent == pulled + u64::from(asks_bad_home)
            && stats.requests_received == pulled + u64::from(ranks > 1 && rank == bad_home)
            && stats.values_received == expected + pushed_after,
        || {
            format!(
                "rank {rank}: pushed {pushed} (+{pushed_unawaited} not awaited, {pushed_late} \
                 late, {pushed_after} before the close), pulled {pulled}, got {report:?}"
            )
        },
    );
    Ok(())
}

fn threads(hc: &Hcmpi) -> Result<(), Box<dyn std::error::Error>> {
    let (rank, ranks) = (hc.rank(), hc.size());
    let runtime_threads = |names: &[String]| {
        names
            .iter()
            .filter(|n| n.starts_with("hc-worker") || n.as_str() == "hcmpi-comm")
            .count()
    };
    let before = hcmpi_testkit::thread_names()?;
    let nranks = ranks as u64;
    let spaces: Vec<DddfSpace<u64>> = (0..8)
        .map(|_| DddfSpace::new(hc, move |g| (g % nranks) as i32, |_| 8))
        .collect::<Result<_, _>>()?;
    let during = Mutex::new(Vec::new());
    let mine = rank as u64;
    let next = ((rank + 1) % ranks) as u64;
    let handles: Vec<_> = spaces
        .iter()
        .map(|space| Ok((space.handle(mine)?, space.handle(next)?)))
        .collect::<Result<_, DddfError>>()?;
    hc.finish(|s| {
        // Every space awaits a remote guid (a request in flight) while the
        // threads are counted; the puts come after.
        for (_, theirs) in &handles {
            s.spawn_await(&[theirs], move |_| {
                check(theirs.get() == Ok(&next), || {
                    "threads: exchanged value".into()
                });
            });
        }
        *during.lock().unwrap() = hcmpi_testkit::thread_names().expect("read /proc/self/task");
        for (own, _) in &handles {
            own.put(mine).unwrap();
        }
    });
    let during = during.into_inner().unwrap();
    let expected =
        hc.runtime().num_workers() + usize::from(hc.placement() == hc_mpi::Placement::Dedicated);
    check(
        during.len() == before.len() && runtime_threads(&during) == expected,
        || {
            format!(
                "rank {rank}: threads before the spaces {before:?}, with 8 more spaces \
                 {during:?}; expected {expected} runtime threads ({:?} placement)",
                hc.placement()
            )
        },
    );
    for space in spaces {
        let report = space.close()?;
        check(report.is_clean(), || {
            format!("rank {rank}: threads: {report:?}")
        });
    }
    Ok(())
}

fn errors(
    hc: &Hcmpi,
    space: &DddfSpace<Vec<i64>>,
    total: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let (rank, ranks) = (hc.rank(), hc.size());
    let base = 3 * total;
    // `is_ready` looks at the local copy only: it never asks the home.
    let unasked = space.handle(base + 10 * total + ((rank + 1) % ranks) as u64)?;
    let asked_before = space.stats().requests_sent;
    check(!hc_runtime::Awaitable::is_ready(&unasked), || {
        "is_ready of a guid nobody put".into()
    });
    check(space.stats().requests_sent == asked_before, || {
        "is_ready sent a request".into()
    });
    let mine = space.handle(base + rank as u64)?;
    check(
        mine.get()
            == Err(DddfError::NotPut {
                guid: mine.guid(),
                home: rank,
            }),
        || "get before put".into(),
    );
    check(
        matches!(
            mine.put(vec![1; 9]),
            Err(DddfError::SizeMismatch {
                at: SizeCheck::Put,
                ..
            })
        ),
        || "size mismatch at put".into(),
    );
    mine.put(value_of(mine.guid()))?;
    check(
        mine.put(value_of(mine.guid())) == Err(DddfError::AlreadyPut { guid: mine.guid() }),
        || "double put".into(),
    );
    if ranks > 1 {
        let other = space.handle(base + ((rank + 1) % ranks) as u64)?;
        check(
            matches!(other.put(vec![0]), Err(DddfError::PutNotHome { .. })),
            || "put off the home".into(),
        );
    }
    // A home function that returns a rank outside the communicator.
    let bad = DddfSpace::<u64>::new(hc, move |g| if g == 7 { ranks } else { 0 }, |_| 8)?;
    check(
        bad.handle(7).err()
            == Some(DddfError::BadHome {
                guid: 7,
                home: ranks,
                ranks,
            }),
        || "bad home".into(),
    );
    bad.close()?;
    if ranks > 1 {
        // Rank 0 thinks guid 1 is 8 bytes, the others 16; rank 0 is its home.
        let sizes = DddfSpace::<Vec<u8>>::new(hc, |_| 0, move |_| if rank == 0 { 8 } else { 16 })?;
        let h = sizes.handle(1)?;
        if rank == 0 {
            h.put(vec![5; 8])?;
        } else {
            check(
                matches!(
                    h.wait(),
                    Err(DddfError::SizeMismatch {
                        at: SizeCheck::Receive,
                        expected: 16,
                        actual: 8,
                        ..
                    })
                ),
                || "size mismatch on arrival".into(),
            );
        }
        sizes.close()?;
        // Every rank but 0 thinks guid 3 lives on rank 0; rank 0 thinks rank 1.
        let homes = DddfSpace::<u64>::new(hc, move |_| if rank == 0 { 1 } else { 0 }, |_| 8)?;
        let h = homes.handle(3)?;
        if rank >= 1 {
            check(
                matches!(
                    h.wait(),
                    Err(DddfError::Refused {
                        asked: 0,
                        its_home: 1,
                        ..
                    })
                ),
                || "refused by a rank that is not the home".into(),
            );
        }
        let report = homes.close()?;
        check(report.is_clean(), || format!("{report:?}"));
    }
    Ok(())
}

/// Awaits guid 4242 (homed on rank 0), which nobody puts: the watchdog
/// must report it.
fn listener_panic(hc: &Hcmpi) -> Result<(), Box<dyn std::error::Error>> {
    const POISONED: u64 = 99;
    let (rank, ranks) = (hc.rank(), hc.size());
    let space = DddfSpace::<u64>::new(
        hc,
        move |guid| {
            if rank == 0 && guid == POISONED {
                panic!("home({guid}) is poisoned on rank 0");
            }
            0
        },
        |_| 8,
    )?;
    if rank != 0 {
        // Ask the home (rank 0) without waiting for the answer.
        let poisoned = space.handle(POISONED)?;
        let _ = hc_runtime::Awaitable::readiness(&poisoned);
    }
    match space.close() {
        Ok(_) => {
            eprintln!("rank {rank}: close succeeded despite the failed listener");
            std::process::exit(1);
        }
        Err(error) => {
            let expected = if rank == 0 {
                matches!(error, DddfError::ListenerPanicked { .. })
            } else {
                matches!(error, DddfError::PeerListenerFailed { ranks: 1 })
            };
            check(expected, || {
                format!("rank {rank}: unexpected error {error:?}")
            });
            println!("rank {rank}/{ranks}: close failed: {error}");
        }
    }
    Ok(())
}

fn never_put(hc: &Hcmpi) -> Result<(), Box<dyn std::error::Error>> {
    let space = DddfSpace::<u64>::new(hc, |_| 0, |_| 8)?;
    let missing = space.handle(4242)?;
    hc.finish(|s| s.spawn_await(&[&missing], |_| {}));
    eprintln!("never-put: the finish returned without the value");
    std::process::exit(1);
}
