//! The 1-D heat stencil of `side_by_side_rsmpi.rs`, written with hcmpi:
//! each step is one finish holding the halo receives and sends, one task per
//! chunk of interior cells, and one future task per edge cell that awaits
//! its halo value without holding a worker. The communication engine
//! progresses the exchange while the tasks compute. Every rank checks the
//! whole result against a sequential computation.
//!
//! Run: `mpiexec -n 3 target/release/examples/side_by_side_hcmpi`.

// sample-run: ranks=0
// sample-run: ranks=1,2,3,4

#[path = "common/heat.rs"]
mod heat;
use heat::{cell, initial, matching_cells, reference, CHUNK, N, STEPS, TO_LEFT, TO_RIGHT};

// ANCHOR: main
use std::process::ExitCode;

use hc_mpi::{Error, Hcmpi, ReduceOp, Request};

/// The value a halo receive brings, or 0 beyond the ends of the rod.
async fn halo_value(receive: Option<Request<Vec<f64>>>) -> f64 {
    match receive {
        Some(request) => request.await.expect("halo receive").0[0],
        None => 0.0,
    }
}

fn main() -> ExitCode {
    // MPI (THREAD_MULTIPLE if the library has it), workers, engine.
    Hcmpi::run(step_all)
}

fn step_all(hc: &Hcmpi) -> Result<(), Error> {
    let world = hc.world();
    let (rank, size) = (hc.rank(), hc.size());
    let (n, lo) = (N / size as usize, N / size as usize * rank as usize);
    let left = (rank > 0).then(|| rank - 1);
    let right = (rank + 1 < size).then_some(rank + 1);
    let mut u: Vec<f64> = (lo..lo + n).map(initial).collect();
    let mut next = vec![0.0; n];
    for _ in 0..STEPS {
        hc.finish(|s| -> Result<(), Error> {
            // Post the halo exchange: requests join this finish.
            let receive = |peer: Option<i32>, tag| peer.map(|p| world.irecv(vec![0.0], p, tag));
            let (from_left, from_right) = (
                receive(left, TO_RIGHT).transpose()?,
                receive(right, TO_LEFT).transpose()?,
            );
            if let Some(p) = left {
                world.isend(vec![u[0]], p, TO_LEFT)?;
            }
            if let Some(p) = right {
                world.isend(vec![u[n - 1]], p, TO_RIGHT)?;
            }
            let u = &u;
            let (first, rest) = next.split_at_mut(1);
            let (interior, last) = rest.split_at_mut(n - 2);
            // One task per chunk of the interior, which needs no halo.
            for (c, out) in interior.chunks_mut(CHUNK).enumerate() {
                s.spawn(move |_| {
                    for (k, x) in out.iter_mut().enumerate() {
                        let i = 1 + c * CHUNK + k;
                        *x = cell(u[i - 1], u[i], u[i + 1]);
                    }
                });
            }
            // The edge cells await their halo value, holding no worker.
            s.spawn_future(async move { first[0] = cell(halo_value(from_left).await, u[0], u[1]) });
            s.spawn_future(async move {
                last[0] = cell(u[n - 2], u[n - 1], halo_value(from_right).await)
            });
            Ok(())
        })?; // returns once every task, receive and send of the step is done
        std::mem::swap(&mut u, &mut next);
    }
    let expected = reference();
    let matched = matching_cells(&u, lo, &expected);
    let total = world.allreduce(vec![matched], ReduceOp::Sum)?[0];
    assert_eq!(total as usize, N, "cells that match the sequential result");
    if rank == 0 {
        let sum: f64 = expected.iter().sum();
        println!("hcmpi, {size} rank(s): all {N} cells match (sum {sum:.6})");
    }
    Ok(())
}
// ANCHOR_END: main
