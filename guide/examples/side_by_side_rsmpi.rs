//! A 1-D heat stencil with a halo exchange, written by hand with rayon
//! (the node) and rsmpi (the ranks): the main thread posts the exchange,
//! rayon computes the interior meanwhile, the main thread waits and
//! computes the two edge cells. Its twin, `side_by_side_hcmpi.rs`, computes
//! the same numbers with hcmpi. Every rank checks the whole result against
//! a sequential computation.
//!
//! Run: `mpiexec -n 3 target/release/examples/side_by_side_rsmpi`.

// sample-run: ranks=0
// sample-run: ranks=1,2,3,4

#[path = "common/heat.rs"]
mod heat;
use heat::{cell, initial, matching_cells, reference, CHUNK, N, STEPS, TO_LEFT, TO_RIGHT};

// ANCHOR: main
use mpi::collective::SystemOperation;
use mpi::traits::*;
use rayon::prelude::*;

fn main() {
    // Only this thread calls MPI, never a rayon thread: FUNNELED is enough.
    let (universe, level) = mpi::initialize_with_threading(mpi::Threading::Funneled)
        .expect("MPI is initialized already");
    assert!(
        level >= mpi::Threading::Funneled,
        "MPI provides only {level:?}"
    );
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let (n, lo) = (N / size as usize, N / size as usize * rank as usize);
    let left = (rank > 0).then(|| world.process_at_rank(rank - 1));
    let right = (rank + 1 < size).then(|| world.process_at_rank(rank + 1));
    let mut u: Vec<f64> = (lo..lo + n).map(initial).collect();
    let mut next = vec![0.0; n];
    for _ in 0..STEPS {
        let (mut ghost_left, mut ghost_right) = (0.0, 0.0);
        mpi::request::scope(|scope| {
            // Post the halo exchange...
            let mut requests = Vec::new();
            if let Some(p) = &left {
                requests.push(p.immediate_receive_into_with_tag(scope, &mut ghost_left, TO_RIGHT));
                requests.push(p.immediate_send_with_tag(scope, &u[0], TO_LEFT));
            }
            if let Some(p) = &right {
                requests.push(p.immediate_receive_into_with_tag(scope, &mut ghost_right, TO_LEFT));
                requests.push(p.immediate_send_with_tag(scope, &u[n - 1], TO_RIGHT));
            }
            // ...compute the interior on the rayon pool (this thread blocks
            // in rayon, so MPI progresses only on its own, if at all)...
            next[1..n - 1]
                .par_chunks_mut(CHUNK)
                .enumerate()
                .for_each(|(c, out)| {
                    for (k, x) in out.iter_mut().enumerate() {
                        let i = 1 + c * CHUNK + k;
                        *x = cell(u[i - 1], u[i], u[i + 1]);
                    }
                });
            // ...and wait for the halo before the two edge cells.
            for request in requests {
                request.wait();
            }
        });
        next[0] = cell(ghost_left, u[0], u[1]);
        next[n - 1] = cell(u[n - 2], u[n - 1], ghost_right);
        std::mem::swap(&mut u, &mut next);
    }
    let expected = reference();
    let matched = matching_cells(&u, lo, &expected);
    let mut total = 0u64;
    world.all_reduce_into(&matched, &mut total, SystemOperation::sum());
    assert_eq!(total as usize, N, "cells that match the sequential result");
    if rank == 0 {
        let sum: f64 = expected.iter().sum();
        println!("rayon + rsmpi, {size} rank(s): all {N} cells match (sum {sum:.6})");
    }
}
// ANCHOR_END: main
