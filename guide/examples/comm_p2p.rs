//! Point-to-point details: wildcard receives on a duplicated communicator,
//! a probe that sizes the receive, receives shorter and longer than their
//! buffer, cancelling a receive, and the argument checks made before MPI.
//!
//! Run: `mpiexec -n 3 target/release/examples/comm_p2p`.

// sample-run: ranks=0
// sample-run: ranks=1,2,3,4

use hc_mpi::{Error, Hcmpi, ANY_SOURCE, ANY_TAG};
use std::process::ExitCode;

fn main() -> ExitCode {
    // An error on one rank ends the whole job with its message.
    Hcmpi::run(body)
}

fn body(hc: &Hcmpi) -> Result<(), Error> {
    let world = hc.world();
    let (rank, size) = (hc.rank(), hc.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);

    // ANCHOR: wildcards
    // A communicator of its own (MPI_Comm_idup), so the wildcards below can
    // only match this exchange.
    let dup = world.duplicate()?;
    let receives = (0..size)
        .map(|_| dup.irecv(vec![0i32; 2], ANY_SOURCE, ANY_TAG))
        .collect::<Result<Vec<_>, _>>()?;
    let sends = (0..size)
        .map(|dest| dup.isend(vec![rank, dest], dest, 100 + rank))
        .collect::<Result<Vec<_>, _>>()?;
    let mut heard = vec![false; size as usize];
    for request in receives {
        let (data, status) = request.wait()?; // the status names sender and tag
        assert_eq!(status.tag, 100 + status.source);
        assert_eq!(data, vec![status.source, rank]);
        heard[status.source as usize] = true;
    }
    assert!(heard.iter().all(|&h| h), "one message from every rank");
    for send in sends {
        send.wait()?;
    }
    // ANCHOR_END: wildcards

    // ANCHOR: probe
    // Rank r sends r + 1 elements; the receiver sizes its buffer by a probe.
    let send = world.isend(vec![rank as u16; rank as usize + 1], next, 20)?;
    let status = world.probe::<u16>(prev, 20)?; // counts elements of u16
    assert_eq!(status.count, prev as usize + 1);
    let (data, _) = world.recv(vec![0u16; status.count], status.source, status.tag)?;
    assert_eq!(data, vec![prev as u16; prev as usize + 1]);
    send.wait()?;
    // ANCHOR_END: probe

    // ANCHOR: truncation
    // Shorter than the buffer: the vector comes back cut to the count.
    let roomy = world.irecv(vec![0u64; 4], prev, 30)?;
    world.isend(vec![7u64; 3], next, 30)?;
    let (data, status) = roomy.wait()?;
    assert_eq!((data, status.count), (vec![7u64; 3], 3));
    // Longer than the buffer: MPI_ERR_TRUNCATE, and no buffer back. (Sent
    // first: Open MPI over UCX does not report the truncation of a receive
    // posted before a message a process sends to itself.)
    world.isend(vec![7u64; 10], next, 31)?;
    let cramped = world.irecv(vec![0u64; 4], prev, 31)?;
    match cramped.wait() {
        Err(Error::Truncated {
            op: "irecv",
            capacity: 4,
            ..
        }) => {}
        other => panic!("10 elements into 4: {other:?}"),
    }
    // ANCHOR_END: truncation

    // ANCHOR: cancel
    let unmatched = world.irecv(vec![0u8; 8], prev, 40)?; // nobody sends tag 40
    world.cancel(&unmatched)?; // MPI_Cancel, through the engine
    let (data, status) = unmatched.wait()?; // it still completes
    assert!(status.cancelled && data.is_empty());
    // ANCHOR_END: cancel

    // ANCHOR: checked
    // Checked on the caller: no request is made, nothing reaches MPI.
    assert!(matches!(
        world.isend(vec![1u8], size, 0),
        Err(Error::InvalidRank { op: "isend", rank: r, .. }) if r == size
    ));
    assert!(matches!(
        world.irecv(vec![0u8], prev, -1), // -1 is not ANY_TAG here
        Err(Error::InvalidTag {
            op: "irecv",
            tag: -1,
            ..
        })
    ));
    // ANCHOR_END: checked

    world.barrier()?;
    if rank == 0 {
        println!("point-to-point checks passed on {size} rank(s)");
    }
    Ok(())
}
