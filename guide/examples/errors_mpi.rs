//! Errors of hc-mpi, DDDFs and stale accumulators, caught and checked on
//! every rank: a second `Hcmpi`, arguments refused before MPI, a truncated
//! message, a request read too early, cancelling a collective, collective
//! buffers that do not fit, a blocking wait and a panic in message
//! handlers, DDDF misuse, ranks that disagree on an accumulator, and a
//! receive still pending at shutdown (named on stderr).
//!
//! Run: `mpiexec -n 3 target/release/examples/errors_mpi`.

// sample-run: ranks=0
// sample-run: ranks=1,2,3,4

use std::panic;
use std::process::ExitCode;

use hc_mpi::{BufferProblem, Error, Hcmpi, InitError, Message};
use hc_runtime::{panic_message, Ddf};
use hcmpi_dddf::{DddfError, DddfSpace, SizeCheck};
use hcmpi_phasers::{AccumOp, Reduction, SspError, StaleAccum, Staleness};

// ANCHOR: main
fn main() -> ExitCode {
    hide_panics_on_purpose();
    let mut never_matched = None;
    // An error returned on one rank ends the whole job with its message
    // (status 1), instead of leaving that rank in MPI_Finalize and its
    // peers waiting for it.
    let code = Hcmpi::run(|hc| -> Result<(), Box<dyn std::error::Error>> {
        provoke_errors(hc)?;
        // ANCHOR: shutdown
        // Nothing will match this receive: when `run` shuts hcmpi down,
        // stderr names it and the request fails with `Error::Shutdown`.
        never_matched = Some(hc.world().irecv(vec![0u8; 8], hc.rank(), 99)?);
        // ANCHOR_END: shutdown
        if hc.rank() == 0 {
            println!(
                "errors_mpi, {} rank(s): every error caught was the expected one",
                hc.size()
            );
        }
        Ok(())
    });
    let never = never_matched.expect("the body ran to its end");
    assert_eq!(never.wait().unwrap_err(), Error::Shutdown { op: "irecv" });
    code
}
// ANCHOR_END: main

/// Prints every panic but the ones provoked on purpose (caught and checked).
fn hide_panics_on_purpose() {
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if !panic_message(info.payload()).contains("on purpose") {
            default_hook(info);
        }
    }));
}

/// Provokes each error and checks that it is the expected one.
fn provoke_errors(hc: &Hcmpi) -> Result<(), Box<dyn std::error::Error>> {
    // ANCHOR: init
    // One Hcmpi per process: a second is refused before it touches MPI.
    let again = Hcmpi::init();
    assert!(matches!(again, Err(Error::Init(InitError::AlreadyCreated))));
    // ANCHOR_END: init
    let world = hc.world().clone();
    let (rank, size) = (hc.rank(), hc.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);

    // ANCHOR: p2p
    // Checked before MPI: no request is created.
    let bad_rank = world.isend(vec![1u8], size, 0).unwrap_err();
    assert_eq!(
        bad_rank,
        Error::InvalidRank {
            op: "isend",
            rank: size,
            size
        }
    );
    let max = world.tag_upper_bound();
    let bad_tag = world.irecv(vec![0u8], prev, -1).unwrap_err();
    assert_eq!(
        bad_tag,
        Error::InvalidTag {
            op: "irecv",
            tag: -1,
            max
        }
    );

    // 10 elements into a 4-element receive: the buffer is not handed back.
    world.isend(vec![7i64; 10], next, 70)?;
    let short = world.irecv(vec![0i64; 4], prev, 70)?;
    assert!(matches!(
        short.wait(),
        Err(Error::Truncated {
            op: "irecv",
            capacity: 4,
            ..
        })
    ));

    // Reading a request before it completes (only this rank sends tag 71).
    let early = world.irecv(vec![0u8], rank, 71)?;
    assert_eq!(early.get().unwrap_err(), Error::Pending { op: "irecv" });
    world.isend(vec![5u8], rank, 71)?;
    assert_eq!(early.wait()?.0, [5]);
    // ANCHOR_END: p2p

    // ANCHOR: collective
    let barrier = world.ibarrier(); // MPI cannot cancel a collective
    assert_eq!(
        world.cancel(&barrier),
        Err(Error::NotCancellable { op: "ibarrier" })
    );
    barrier.wait()?;
    // 3 elements where alltoall needs 2 per rank: refused on every rank.
    let ranks = size as usize;
    let wrong = world.ialltoall(vec![0u32; 3], 2).unwrap_err();
    let problem = BufferProblem::WrongLength {
        len: 3,
        expected: 2 * ranks,
        chunk: 2,
        ranks,
    };
    assert_eq!(
        wrong,
        Error::BadCollectiveBuffer {
            op: "ialltoall",
            problem
        }
    );
    assert_eq!(
        world.split(Some(-1), 0).unwrap_err(),
        Error::NegativeColor { color: -1 }
    );
    // ANCHOR_END: collective

    // ANCHOR: handler
    // A handler runs on the engine: a blocking wait there is refused...
    let (gate, outcome) = (Ddf::<()>::new(), Ddf::new());
    let (gate_in, outcome_in) = (gate.clone(), outcome.clone());
    let waiting = world.serve(80, move |_: Message<u8>| {
        outcome_in.put(hc_mpi::wait_all(&[&gate_in])).ok();
    })?;
    world.isend(vec![1u8], rank, 80)?;
    assert_eq!(
        *outcome.wait(),
        Err(Error::WaitInHandler { op: "wait_all" })
    );
    waiting.stop()?;

    // ...and a panic stops the service, which reports it when stopped.
    let ran = Ddf::new();
    let ran_in = ran.clone();
    let panicking = world.serve(81, move |_: Message<u8>| {
        ran_in.put(()).ok();
        panic!("bad message (on purpose)");
    })?;
    world.isend(vec![1u8], rank, 81)?;
    ran.wait();
    let stopped = panicking.stop();
    let Err(Error::HandlerPanicked { tag: 81, message }) = stopped else {
        panic!("{stopped:?}")
    };
    assert_eq!(message, "bad message (on purpose)");
    // ANCHOR_END: handler

    // ANCHOR: dddf
    // Guids below 1000 live on rank guid % size; others have no valid home.
    let space = DddfSpace::<Vec<i64>>::new(
        hc,
        move |g| {
            if g < 1_000 {
                (g % size as u64) as i32
            } else {
                -1
            }
        },
        |_| 16, // two i64 per guid
    )?;
    let bad = space.handle(1_000).unwrap_err();
    assert_eq!(
        bad,
        DddfError::BadHome {
            guid: 1_000,
            home: -1,
            ranks: size
        }
    );
    let (guid, mine) = (rank as u64, space.handle(rank as u64)?);
    assert_eq!(mine.get(), Err(DddfError::NotPut { guid, home: rank }));
    let at = SizeCheck::Put;
    let too_long = mine.put(vec![1, 2, 3]);
    assert_eq!(
        too_long,
        Err(DddfError::SizeMismatch {
            guid,
            expected: 16,
            actual: 24,
            at
        })
    );
    mine.put(vec![1, 2])?;
    assert_eq!(mine.put(vec![3, 4]), Err(DddfError::AlreadyPut { guid }));
    if next != rank {
        let theirs = space.handle(next as u64)?.put(vec![1, 2]);
        let expected = DddfError::PutNotHome {
            guid: next as u64,
            home: next,
            rank,
        };
        assert_eq!(theirs, Err(expected));
    }
    assert!(space.close()?.is_clean());
    // ANCHOR_END: dddf

    // ANCHOR: ssp
    // Every rank passes a different staleness: every rank is told so.
    let sum = Reduction::<i64>::op(AccumOp::Sum)?;
    match StaleAccum::create(&world, sum, Staleness::Bounded(rank as u64)) {
        Err(SspError::Mismatch { what, .. }) => assert!(size > 1 && what == "staleness"),
        Ok(alone) => hc.block_on(alone.close())?, // one rank always agrees
        Err(other) => return Err(other.into()),
    }
    // ANCHOR_END: ssp
    Ok(())
}
