//! The first program of the guide (and of the top-level README): tasks on
//! every rank, then one collective through the communication engine.
//!
//! Run: `mpiexec -n 2 target/release/examples/hello`.

// sample-run: ranks=0
// sample-run: ranks=1,2,3,4

// ANCHOR: all
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use hc_mpi::{Hcmpi, ReduceOp};

fn main() -> ExitCode {
    // MPI, computation workers, communication engine; an error on any rank ends the job
    Hcmpi::run(|hc| -> Result<(), hc_mpi::Error> {
        let world = hc.world();
        let (rank, size, n) = (hc.rank() as u64, hc.size() as u64, 1_000_000);
        let (lo, hi) = (n * rank / size, n * (rank + 1) / size); // this rank's share
        let partial = AtomicU64::new(0);
        hc.finish(|s| {
            // returns once every task spawned below has run; tasks borrow from the stack
            for start in (lo..hi).step_by(10_000) {
                let partial = &partial;
                s.spawn(move |_| {
                    let sum = (start..hi.min(start + 10_000)).map(|i| i * i).sum();
                    partial.fetch_add(sum, Relaxed);
                });
            }
        });
        let total = world.allreduce(vec![partial.into_inner()], ReduceOp::Sum)?[0];
        assert_eq!(total, (0..n).map(|i| i * i).sum::<u64>());
        println!("rank {rank}/{size}: sum of squares below {n} = {total}");
        Ok(())
    })
}
// ANCHOR_END: all
