//! Creating and dropping many communicators in one process.
//!
//! MPI implementations have a limited number of communicator contexts
//! (MPICH about 2,000); a runtime that never frees them fails after that
//! many creations. Each rank duplicates the world and splits it many times
//! (`--count`, default 10,000 in all), checks each new communicator with a
//! collective, and drops it: dropping the last handle frees it through the
//! engine. A few are kept alive to the end, and are freed at shutdown.
//!
//! Every rank prints `rank R/N: comm churn OK` when all checks pass.
//! Run: `mpiexec -n 2 target/release/examples/comm_churn`.

mod common;

use hc_mpi::{Error, Hcmpi, ReduceOp};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let count = common::number_option("--count", 10_000usize)?;
    let hc = Hcmpi::init()?;
    let world = hc.world();
    let (rank, size) = (hc.rank(), hc.size());
    let mut kept = Vec::new();
    for i in 0..count {
        let comm = if i % 10 == 9 {
            // Even and odd ranks apart.
            world
                .split(Some(rank % 2), rank)?
                .expect("every rank passed a color")
        } else {
            world.duplicate()?
        };
        if i % 1000 == 0 {
            let expected = if i % 10 == 9 {
                (0..size).filter(|r| r % 2 == rank % 2).count() as i32
            } else {
                size
            };
            let members = comm.allreduce(vec![1i32], ReduceOp::Sum)?;
            assert_eq!(members, vec![expected], "communicator {i}");
        }
        if i % 2500 == 0 {
            kept.push(comm);
        }
    }
    // A rank left out of a split gets no communicator.
    let left_out = world.split((rank != 0).then_some(1), 0)?;
    assert_eq!(left_out.is_none(), rank == 0);
    // Clones share one communicator: it is freed with the last of them.
    let dup = world.duplicate()?;
    let clone = dup.clone();
    drop(dup);
    clone.barrier()?;
    drop(clone);
    world.barrier()?;
    assert!(
        matches!(
            world.split(Some(-1), 0),
            Err(Error::NegativeColor { color: -1 })
        ),
        "a negative color is an error"
    );
    println!(
        "rank {rank}/{size}: comm churn OK ({count} communicators, {} kept to shutdown)",
        kept.len()
    );
    Ok(())
}
