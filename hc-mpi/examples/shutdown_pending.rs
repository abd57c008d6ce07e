//! Shutting down with communication still pending (the shutdown protocol of
//! hc-mpi's `worker` module).
//!
//! Rank 0 posts a receive and a probe that nothing will ever match, keeps
//! their requests, and drops [`Hcmpi`]. The program must still exit, and the
//! communication worker must name the pending operations on stderr
//! (`irecv(source=..., tag=...)`, `probe(...)`). The requests outlive the
//! runtime and have completed by the time the drop returns:
//!
//! * the probe with `Error::Shutdown`;
//! * the receive with `Error::Shutdown` too: shutdown cancels it with
//!   `MPI_Cancel`, and a receive cancelled by shutdown reports that error,
//!   never data (one a user cancels completes with its status's `cancelled`
//!   flag set instead).
//!
//! Rank 0 also sends rank 1 two fire-and-forget messages that rank 1 takes
//! only after rank 0 has (typically) begun to shut down: they must arrive
//! whole, since shutdown lets sends complete instead of cancelling them.
//!
//! Every rank also hands a receive that nothing will match to
//! [`Hcmpi::on_complete`]: its callback must have run, with
//! `Error::Shutdown`, by the time the drop returns.
//!
//! A communicator handle kept past the drop still works as an object:
//! operations submitted through it fail with `Error::Shutdown` instead of
//! reaching a finalized MPI.
//!
//! Run: `mpiexec -n 2 target/release/examples/shutdown_pending`.

use std::time::{Duration, Instant};

use hc_mpi::{Error, Hcmpi};

const NEVER_TAG: i32 = 77;
/// Tags and size of the sends that complete during the sender's shutdown.
const LATE_TAG: i32 = 90;
const LATE_LEN: usize = 1 << 20;

fn main() -> Result<(), Error> {
    let hc = Hcmpi::builder()
        .shutdown_grace(Duration::from_millis(500))
        .build()?;
    let world = hc.world().clone();
    let (rank, size) = (hc.rank(), hc.size());
    let source = 1 % size;

    // Traffic that does complete before the drop, so the drop only sees what
    // is meant to be pending.
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    let r = world.irecv(vec![0u8; 4], prev, 1)?;
    world.send(vec![rank as u8; 4], next, 1)?;
    assert_eq!(r.wait()?.0, vec![prev as u8; 4]);

    let pending = if rank == 0 {
        let recv = world.irecv(vec![0u32; 8], source, NEVER_TAG)?;
        let probe = world.iprobe::<u32>(source, NEVER_TAG + 1)?;
        Some((recv, probe))
    } else {
        None
    };
    // A completion callback of an operation still pending at shutdown runs
    // (with the operation's end) before the drop returns.
    let (callback_tx, callback_rx) = std::sync::mpsc::channel();
    hc.on_complete(
        world.irecv(vec![0u8; 2], rank, NEVER_TAG + 2)?,
        move |outcome| {
            let shut_down = matches!(outcome, Err(Error::Shutdown { op: "irecv" }));
            callback_tx.send(shut_down).unwrap();
        },
    );
    // Every rank has posted what it will post before anyone shuts down.
    world.barrier()?;

    // Fire-and-forget sends from rank 0 that rank 1 receives only after
    // taking a later message, so typically while rank 0 is already shutting
    // down: shutdown must let them complete, not cancel them (rank 1 would
    // then wait forever). The large one needs the receiver (rendezvous).
    if size > 1 {
        if rank == 0 {
            drop(world.isend(vec![7u8; LATE_LEN], 1, LATE_TAG)?);
            drop(world.isend(vec![1u8], 1, LATE_TAG + 1)?);
        } else if rank == 1 {
            world.recv(vec![0u8; 1], 0, LATE_TAG + 1)?;
            let (late, _) = world.recv(vec![0u8; LATE_LEN], 0, LATE_TAG)?;
            assert!(
                late.len() == LATE_LEN && late.iter().all(|&b| b == 7),
                "a send posted before the sender's shutdown arrived damaged"
            );
        }
    }

    let started = Instant::now();
    drop(hc);
    let shutdown = started.elapsed();
    assert!(
        shutdown < Duration::from_secs(30),
        "shutdown took {shutdown:?}"
    );

    assert_eq!(
        callback_rx.try_recv(),
        Ok(true),
        "the completion callback of a pending irecv did not run with Error::Shutdown by the end of the shutdown"
    );

    let mut irecv_outcome = "none pending";
    if let Some((recv, probe)) = pending {
        assert!(recv.test(), "pending irecv not completed by the shutdown");
        assert!(probe.test(), "pending probe not completed by the shutdown");
        match recv.wait() {
            Err(Error::Shutdown { op: "irecv" }) => {
                irecv_outcome = "irecv failed with Error::Shutdown";
            }
            other => panic!("pending irecv at shutdown: expected Error::Shutdown, got {other:?}"),
        }
        assert_eq!(probe.wait().unwrap_err(), Error::Shutdown { op: "probe" });
    }

    // After the drop: submissions fail with Shutdown (and do not hang).
    let late = world.isend(vec![1u8], next, 2)?;
    assert_eq!(late.wait().unwrap_err(), Error::Shutdown { op: "isend" });
    let late = world.irecv(vec![0u8], prev, 2)?;
    assert_eq!(late.wait().unwrap_err(), Error::Shutdown { op: "irecv" });
    assert_eq!(
        world.ibarrier().wait().unwrap_err(),
        Error::Shutdown { op: "ibarrier" }
    );
    // Argument checks still come first.
    assert!(matches!(
        world.isend(vec![1u8], size, 2),
        Err(Error::InvalidRank { .. })
    ));

    println!(
        "rank {rank}/{size}: shutdown pending OK ({irecv_outcome}; shutdown took {:.3} s)",
        shutdown.as_secs_f64()
    );
    Ok(())
}
