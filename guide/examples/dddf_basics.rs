//! Distributed data-driven futures, the basics: a space created on every
//! rank, puts on the home rank, awaits on every rank (data-driven tasks
//! and `.await`), one transfer per (guid, rank), the errors a misuse
//! gets, and `close` with its report.
//!
//! Run: `mpiexec -n 3 target/release/examples/dddf_basics`.

// sample-run: ranks=1,2,3,4

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use hc_mpi::Hcmpi;
use hc_runtime::Ddf;
use hcmpi_dddf::{DddfError, DddfSpace, Pending, SizeCheck};

/// Guids homed on each rank.
const PER_RANK: u64 = 4;
/// Data-driven tasks awaiting each guid on each rank.
const AWAITERS: usize = 3;

/// The value of `guid`: `guid % 3 + 1` numbers, so sizes differ by guid.
fn value_of(guid: u64) -> Vec<u64> {
    (0..guid % 3 + 1).map(|k| guid * 1000 + k).collect()
}

fn main() -> ExitCode {
    // An error on one rank ends the whole job with its message.
    Hcmpi::run(body)
}

fn body(hc: &Hcmpi) -> Result<(), Box<dyn std::error::Error>> {
    let (rank, ranks) = (hc.rank(), hc.size());
    // ANCHOR: space
    let n = ranks as u64;
    // Collective: every rank passes the same two functions.
    let space = DddfSpace::<Vec<u64>>::new(
        hc,
        move |guid| (guid % n) as i32, // home (DDF_HOME): rank guid % n
        |guid| (guid % 3 + 1) as usize * 8, // size (DDF_SIZE): bytes of the value
    )?;
    // ANCHOR_END: space
    let guids = PER_RANK * n;

    // ANCHOR: put_await
    let handles = (0..guids)
        .map(|guid| space.handle(guid)) // DDF_HANDLE: any guid, on any rank
        .collect::<Result<Vec<_>, _>>()?;
    let checked = AtomicUsize::new(0);
    hc.finish(|s| {
        let checked = &checked;
        for h in &handles {
            // Data-driven tasks: each starts once the value is on this rank.
            for _ in 0..AWAITERS {
                s.spawn_await(&[h], move |_| {
                    assert_eq!(h.get().unwrap(), &value_of(h.guid()));
                    checked.fetch_add(1, Relaxed);
                });
            }
            // A future task: `.await` on the handle holds no worker.
            s.spawn_future(async move {
                let value = h.await.expect("the value of a guid");
                assert_eq!(value, &value_of(h.guid()));
                checked.fetch_add(1, Relaxed);
            });
        }
        // Only the home puts; the awaits above may come before or after.
        for h in handles.iter().filter(|h| h.is_home()) {
            s.spawn(move |_| h.put(value_of(h.guid())).unwrap());
        }
    });
    assert_eq!(checked.into_inner(), guids as usize * (AWAITERS + 1));
    // ANCHOR_END: put_await

    // ANCHOR: once
    // One request and one value per remote guid, however many tasks awaited it.
    let remote = guids - PER_RANK;
    let stats = space.stats();
    assert_eq!(
        (stats.requests_sent, stats.values_received),
        (remote, remote)
    );
    // A new handle on a guid already here reads the cached copy.
    let again = space.handle((rank as u64 + 1) % n)?;
    assert!(again.is_available());
    assert_eq!(again.wait()?, &value_of(again.guid()));
    assert_eq!(space.stats().requests_sent, remote);
    // ANCHOR_END: once

    // ANCHOR: errors
    let mine = space.handle(guids + rank as u64)?; // homed here, not put yet
    let (guid, home) = (mine.guid(), mine.home());
    assert_eq!(mine.get(), Err(DddfError::NotPut { guid, home }));
    assert!(matches!(
        mine.put(vec![0; 7]), // 56 bytes, but size(guid) differs
        Err(DddfError::SizeMismatch {
            at: SizeCheck::Put,
            ..
        })
    ));
    mine.put(value_of(guid))?;
    assert_eq!(
        mine.put(value_of(guid)),
        Err(DddfError::AlreadyPut { guid })
    );
    if ranks > 1 {
        let theirs = space.handle(guids + (rank as u64 + 1) % n)?;
        assert!(matches!(
            theirs.put(value_of(theirs.guid())),
            Err(DddfError::PutNotHome { .. })
        ));
    }
    // ANCHOR_END: errors

    // ANCHOR: pending
    // Rank 0 homes `never` and never puts it. An await-any over it and a
    // local DDF runs once the DDF is put, but still asks for `never`.
    let never = space.handle(2 * guids)?;
    let go = Ddf::new();
    hc.finish(|s| {
        s.spawn_await_any(&[&never, &go], |_, index| assert_eq!(index, 1));
        go.put(()).unwrap();
    });
    // ANCHOR_END: pending

    // ANCHOR: close
    // Collective: every rank calls it once its tasks using the space are done.
    let report = space.close()?;
    let requested_by = if rank == 0 {
        (1..ranks).collect()
    } else {
        Vec::new()
    };
    let mut pending = report.pending.clone();
    pending.iter_mut().for_each(|p| p.requested_by.sort());
    assert_eq!(
        pending,
        [Pending {
            guid: 2 * guids,
            home: 0,
            awaited_here: true,
            requested_by
        }]
    );
    // Final counts: this rank, as a home, served each of its guids once to
    // every other rank; `never` was asked for (by everyone but its home).
    let asked = u64::from(rank != 0);
    let stats = report.stats;
    assert_eq!(
        (stats.requests_sent, stats.values_received),
        (remote + asked, remote)
    );
    let asked_here = if rank == 0 { n - 1 } else { 0 };
    assert_eq!(
        (stats.requests_received, stats.values_sent),
        (remote + asked_here, remote)
    );
    // ANCHOR_END: close
    println!(
        "rank {rank}/{ranks}: dddf basics OK ({} values received, guid {} never put)",
        report.stats.values_received,
        never.guid()
    );
    Ok(())
}
