//! What a rank's workers and communication engine did, read with
//! `Hcmpi::metrics()` around a ring exchange: the counters `uts --stats`
//! and `smith-waterman --stats` print.
//!
//! Run: `mpiexec -n 2 target/release/examples/perf_metrics`.

// sample-run: ranks=1,2
// sample-run: ranks=2 HCMPI_PLACEMENT=dedicated

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use hc_mpi::{Hcmpi, Metrics, ReduceOp};

const MESSAGES: i32 = 64;
const WORDS: usize = 512; // 4 KiB per message

fn main() -> ExitCode {
    // An error on one rank ends the whole job with its message.
    Hcmpi::run(body)
}

fn body(hc: &Hcmpi) -> Result<(), hc_mpi::Error> {
    // ANCHOR: snapshot
    let world = hc.world();
    let (rank, size) = (hc.rank(), hc.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    let before = hc.metrics();
    let received = AtomicU64::new(0);
    hc.finish(|s| {
        for tag in 0..MESSAGES {
            let received = &received;
            s.spawn_future(async move {
                let request = world.irecv(vec![0u64; WORDS], prev, tag).unwrap();
                let (data, _status) = request.await.unwrap();
                received.fetch_add(data.iter().sum::<u64>(), Relaxed);
            });
            // The send belongs to this finish: it returns once it completed.
            s.spawn(move |_| drop(world.isend(vec![tag as u64; WORDS], next, tag).unwrap()));
        }
    });
    let after = hc.metrics();
    // ANCHOR_END: snapshot

    let per_rank = WORDS as u64 * (0..MESSAGES as u64).sum::<u64>();
    assert_eq!(received.into_inner(), per_rank);

    // ANCHOR: engine
    let messages = MESSAGES as u64;
    let bytes = messages * (WORDS * size_of::<u64>()) as u64;
    for kind in ["isend", "irecv"] {
        let (posted, completed, moved) = delta(&before, &after, kind);
        assert_eq!(posted, messages, "{kind} posted");
        assert_eq!(completed, messages, "{kind} completed");
        // A send counts its data, a receive the capacity of its buffer.
        assert_eq!(moved, bytes, "{kind} bytes");
    }
    assert!(after.engine.in_flight_max >= 1);
    assert!(
        after.engine.kind("serve").is_none(),
        "no message service here"
    );
    let latency = after.engine.kind("irecv").map(|op| op.mean_latency);
    // ANCHOR_END: engine

    // ANCHOR: runtime
    assert_eq!(after.runtime.workers.len(), hc.runtime().num_workers());
    assert!(after.runtime.uptime > before.runtime.uptime);
    let work = after.runtime.since(&before.runtime).total();
    // ANCHOR_END: runtime

    let total = world.allreduce(vec![per_rank], ReduceOp::Sum)?;
    assert_eq!(total[0], per_rank * size as u64);
    if rank == 0 {
        println!(
            "{size} rank(s), {} placement: {} jobs run, {} steals on rank 0; \
             {messages} messages each way, irecv mean latency {:.1?}",
            hc.placement(),
            work.tasks_run,
            work.steals,
            latency.unwrap_or_default()
        );
    }
    Ok(())
}

// ANCHOR: delta
/// Operations of `kind` posted and completed, and their bytes, between two
/// snapshots of the same rank (a kind appears at its first use).
fn delta(before: &Metrics, after: &Metrics, kind: &str) -> (u64, u64, u64) {
    let counts = |m: &Metrics| {
        m.engine
            .kind(kind)
            .map_or((0, 0, 0), |op| (op.posted, op.completed, op.bytes))
    };
    let ((p0, c0, b0), (p1, c1, b1)) = (counts(before), counts(after));
    (p1 - p0, c1 - c0, b1 - b0)
}
// ANCHOR_END: delta
