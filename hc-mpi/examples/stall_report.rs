//! A rank whose operations stop making progress says what it waits on.
//!
//! Rank 0 posts a receive from the last rank, which is slow: it sends only
//! `--delay-ms` (default 2500) after both passed a barrier. With
//! `HCMPI_STALL_SECS=1`, rank 0 prints once, on stderr, that it made no
//! communication progress and waits on `irecv(source=<last>, tag=31…)`;
//! then the message arrives and the job ends normally. The delay is the
//! slow rank the report is about, not a synchronization: the program is
//! correct with any delay.
//!
//! Run: `HCMPI_STALL_SECS=1 mpiexec -n 2 target/release/examples/stall_report`.

use std::time::Duration;

use hc_mpi::{Error, Hcmpi};

const TAG: i32 = 31;

fn main() -> Result<(), Error> {
    let delay = std::env::args()
        .skip_while(|arg| arg != "--delay-ms")
        .nth(1)
        .map_or(2500, |ms| {
            ms.parse().expect("--delay-ms takes milliseconds")
        });
    let hc = Hcmpi::init()?;
    let world = hc.world().clone();
    let (rank, size) = (hc.rank(), hc.size());
    let last = size - 1;
    let incoming = (rank == 0 && size > 1)
        .then(|| world.irecv(vec![0u8; 4], last, TAG))
        .transpose()?;
    world.barrier()?;
    if rank == last && size > 1 {
        std::thread::sleep(Duration::from_millis(delay));
        world.send(vec![9u8; 4], 0, TAG)?;
    }
    if let Some(incoming) = incoming {
        assert_eq!(incoming.wait()?.0, vec![9u8; 4]);
    }
    println!("rank {rank}/{size}: stall report OK");
    Ok(())
}
