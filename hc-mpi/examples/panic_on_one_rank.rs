//! A panic on one rank of a program that runs MPI through rsmpi directly
//! ends the whole job: rank 1 panics while rank 0 waits for its message in
//! a blocking receive and the others in a barrier. The guard,
//! [`hc_mpi::AbortJobOnPanic`], turns the unwinding into `MPI_Abort` with a
//! message; without it the job could wait forever.
//!
//! Run: `mpiexec -n 2 target/release/examples/panic_on_one_rank` (the job
//! ends with rank 1's panic message and a non-zero status).

use mpi::traits::{Communicator, CommunicatorCollectives, Source};

fn main() {
    let universe = mpi::initialize().expect("MPI is not initialized yet");
    let world = universe.world();
    let _guard = hc_mpi::AbortJobOnPanic::new("panic_on_one_rank");
    match world.rank() {
        1 => panic!("rank 1 fails on purpose"),
        0 if world.size() > 1 => {
            let (message, _) = world.process_at_rank(1).receive::<i32>();
            println!("rank 0 received {message}");
        }
        _ => world.barrier(),
    }
}
