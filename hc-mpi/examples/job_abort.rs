//! One failing rank ends the whole job, whatever the others are doing.
//!
//! Every rank but the last waits on its peers (a barrier, or start-up
//! itself); the last rank fails in the way the argument names:
//!
//! * `abort`: it calls [`Hcmpi::abort`] with status 3;
//! * `panic`: a panic unwinds out of `main` while it holds the `Hcmpi`;
//! * `task-panic`: a task panics, and `finish` re-raises it in `main`;
//! * `error`: its body returns an error (with a source) to
//!   [`Hcmpi::run`];
//! * `reject-input`: it rejects its input before starting MPI at all, with
//!   [`hc_mpi::abort_job`] and status 2, while the others are in start-up;
//! * `killed`: the process is killed (`SIGKILL`, as by the out-of-memory
//!   killer or a node failure), with no chance to say anything.
//!
//! In every case the job must end, with the failing rank's message on
//! stderr and a non-zero status, instead of leaving the other ranks blocked.
//! Without a failing mode (or at one rank) every rank prints an `OK` line.
//!
//! Run: `mpiexec -n 2 target/release/examples/job_abort panic`.

use std::process::ExitCode;

use hc_mpi::Hcmpi;

/// The error of the `error` mode, with the I/O error under it as its source.
#[derive(Debug)]
struct InputError(std::io::Error);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("job_abort: the last rank cannot read its input")
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

fn main() -> ExitCode {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let last_rank = std::env::var("PMI_SIZE")
        .or_else(|_| std::env::var("OMPI_COMM_WORLD_SIZE"))
        .ok()
        .and_then(|size| size.parse::<i32>().ok())
        .map(|size| size - 1);
    let my_rank = std::env::var("PMI_RANK")
        .or_else(|_| std::env::var("OMPI_COMM_WORLD_RANK"))
        .ok()
        .and_then(|rank| rank.parse::<i32>().ok());
    if mode == "reject-input" && hc_mpi::launched_with_peers() && my_rank == last_rank {
        hc_mpi::abort_job(2, "job_abort: error: this rank rejects its input");
    }

    Hcmpi::run(|hc| -> Result<(), Box<dyn std::error::Error>> {
        let world = hc.world();
        let failing = hc.size() > 1 && hc.rank() == hc.size() - 1;
        if failing {
            match mode.as_str() {
                "abort" => hc.abort(3, "job_abort: this rank cannot go on"),
                "panic" => panic!("job_abort: a bug on the last rank"),
                "task-panic" => hc.finish(|s| {
                    s.spawn(|_| panic!("job_abort: a task failed on the last rank"));
                }),
                "error" => {
                    let missing = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
                    return Err(InputError(missing).into());
                }
                "killed" => {
                    // SAFETY: sending a signal to this very process; SIGKILL
                    // ends it at once, which is the point.
                    unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
                }
                _ => {}
            }
        }
        // The others wait for the failing rank, which never comes.
        world.barrier()?;
        println!("rank {}/{}: job abort OK", hc.rank(), hc.size());
        Ok(())
    })
}
