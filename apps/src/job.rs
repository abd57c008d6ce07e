//! How a driver ends when its rank fails: alone when it runs alone, and the
//! whole MPI job with it when it was launched with peers, which would
//! otherwise wait forever for this rank (in start-up, a barrier, a steal).
//! A failure is an error ([`fail`], [`abort_job_on_error`],
//! [`abort_world_on_error`]) or a panic: an [`hc_mpi::Hcmpi`] ends the job
//! on one itself, and the drivers that run MPI themselves keep an
//! [`hc_mpi::AbortJobOnPanic`] while they do.

use std::fmt::Display;
use std::process::ExitCode;

use hc_mpi::ErrorChain;

/// Ends the driver `program` with `code` after `message`: returns the exit
/// code to hand back from `main` when the process runs alone; ends every
/// rank of the job (`hc_mpi::abort_job`) when it runs with peers.
pub fn fail(program: &str, code: u8, message: &dyn Display) -> ExitCode {
    if hc_mpi::launched_with_peers() {
        hc_mpi::abort_job(i32::from(code), &format!("{program}: error: {message}"));
    }
    eprintln!("{program}: error: {message}");
    ExitCode::from(code)
}

/// Parses the command line as clap would, except that a rejected command
/// line on one rank of a multi-rank job ends the whole job (status 2)
/// instead of this rank alone. `--help` and `--version` print and end
/// with status 0.
///
/// # Errors
/// The exit code `main` should return when the program must not go on.
pub fn parse_args<C: clap::Parser>() -> Result<C, ExitCode> {
    match C::try_parse() {
        Ok(cli) => Ok(cli),
        Err(error) if error.exit_code() == 0 => {
            // A broken stdout is no reason to fail `--help`.
            let _ = error.print();
            Err(ExitCode::SUCCESS)
        }
        Err(error) => {
            if hc_mpi::launched_with_peers() {
                let rendered = error.render().to_string();
                hc_mpi::abort_job(2, rendered.trim_end());
            }
            let _ = error.print();
            Err(ExitCode::from(2))
        }
    }
}

/// Hands `result` back, but first ends the whole job (status 1, with
/// `program`'s error message) if it is an error on a rank with peers: that
/// must happen while `hc` still runs MPI, since once it is dropped MPI is
/// finalized and the other ranks could no longer be ended.
pub fn abort_job_on_error<T, E: std::error::Error + 'static>(
    hc: &hc_mpi::Hcmpi,
    program: &str,
    result: Result<T, E>,
) -> Result<T, E> {
    if let Err(error) = &result {
        if hc.size() > 1 {
            hc.abort(1, &format!("{program}: error: {}", ErrorChain(error)));
        }
    }
    result
}

/// [`abort_job_on_error`] for a driver that runs MPI itself (the plain MPI
/// and MPI + rayon baselines): call it while `world` is alive, before the
/// universe is dropped and MPI finalized.
pub fn abort_world_on_error<T, E: std::error::Error + 'static>(
    world: &impl mpi::traits::Communicator,
    program: &str,
    result: Result<T, E>,
) -> Result<T, E> {
    if let Err(error) = &result {
        if world.size() > 1 {
            hc_mpi::abort_job(1, &format!("{program}: error: {}", ErrorChain(error)));
        }
    }
    result
}
