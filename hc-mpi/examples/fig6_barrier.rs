//! Fig. 6 of the HCMPI paper: an inter-node barrier.
//!
//! ```text
//! async A();
//! B();
//! HCMPI_Barrier();
//! C();
//! ```
//!
//! `A` may run in parallel with the barrier; `B` completes before this rank
//! enters the barrier; `C` starts only after *every* rank has entered it, so
//! every rank's `B` happened before any rank's `C`. The check, repeated for
//! several rounds with a different slow rank each round:
//!
//! * each rank sets a flag in `B`; in `C`, an allreduce(SUM) of the flags is
//!   the communicator size (the brief's check);
//! * `B` records when it finished and `C` when it started (wall clock: all
//!   ranks of a test run share one machine); the latest `B` of all ranks is
//!   no later than the earliest `C` (allreduce MAX / MIN). One rank per
//!   round makes its `B` slow, so a barrier that let ranks through early
//!   would be caught;
//! * `A` tasks all ran once the enclosing finish returned.
//!
//! The barrier is called from a task (the HCMPI way: the worker runs other
//! tasks, possibly `A`, while it waits) and, in the last round, from the main
//! thread.
//!
//! Run: `mpiexec -n 2 target/release/examples/fig6_barrier`.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hc_mpi::{Comm, Error, Hcmpi, ReduceOp};

const ROUNDS: i32 = 4;
const A_TASKS: usize = 16;

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_nanos() as u64
}

/// `B(); barrier(); C()` with the checks of the module docs.
fn b_barrier_c(world: &Comm, round: i32) -> Result<(), Error> {
    let (rank, size) = (world.rank(), world.size());
    // B: slow on one rank per round.
    if rank == round % size {
        std::thread::sleep(Duration::from_millis(30));
    }
    let b_flag = 1u64;
    let b_done = now_ns();
    world.barrier()?;
    // C.
    let c_start = now_ns();
    let flags = world.allreduce(vec![b_flag], ReduceOp::Sum)?;
    assert_eq!(
        flags[0], size as u64,
        "round {round}: rank {rank} saw {} of {size} B flags after the barrier",
        flags[0]
    );
    let latest_b = world.allreduce(vec![b_done], ReduceOp::Max)?[0];
    let earliest_c = world.allreduce(vec![c_start], ReduceOp::Min)?[0];
    assert!(
        latest_b <= earliest_c,
        "round {round}: some rank's C started {} ns before the last B finished",
        latest_b - earliest_c
    );
    Ok(())
}

fn main() -> Result<(), Error> {
    let hc = Hcmpi::init()?;
    let world = hc.world();
    let (rank, size) = (hc.rank(), hc.size());

    let a_done = AtomicUsize::new(0);
    let a_sum = AtomicU64::new(0);
    for round in 0..ROUNDS - 1 {
        hc.finish(|s| -> Result<(), Error> {
            // async A();
            for k in 0..A_TASKS as u64 {
                let (a_done, a_sum) = (&a_done, &a_sum);
                s.spawn(move |_| {
                    a_sum.fetch_add((0..20_000u64).map(|i| i ^ k).sum(), Ordering::Relaxed);
                    a_done.fetch_add(1, Ordering::Relaxed);
                });
            }
            // B(); HCMPI_Barrier(); C(); — on a computation worker.
            b_barrier_c(world, round)
        })?;
        assert_eq!(
            a_done.load(Ordering::Relaxed),
            A_TASKS * (round as usize + 1),
            "A tasks missing after the finish"
        );
    }
    let expected_a: u64 = (0..A_TASKS as u64)
        .map(|k| (0..20_000u64).map(|i| i ^ k).sum::<u64>())
        .sum::<u64>()
        * (ROUNDS as u64 - 1);
    assert_eq!(a_sum.load(Ordering::Relaxed), expected_a);

    // The same from the main thread, which parks in the barrier.
    b_barrier_c(world, ROUNDS - 1)?;

    // The request form: ibarrier completes only once every rank called it.
    let barrier = world.ibarrier();
    barrier.wait()?;

    println!("rank {rank}/{size}: fig6 barrier OK ({ROUNDS} rounds)");
    Ok(())
}
