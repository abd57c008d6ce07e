//! Why a benchmark run failed: in a child (one rank of a measured job), in
//! one job as its driver saw it, or in the driver itself.

use std::io;

use hcmpi_dddf::{DddfError, Pending};
use hcmpi_testkit::LaunchError;

/// A benchmark child, one rank of a measured job, failed; the driver
/// reports the job as failed and goes on with the others.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChildError {
    /// MPI was started before the child, which must start it itself.
    #[error("MPI is already initialized")]
    MpiAlreadyInitialized,
    /// The MPI library does not give the thread level a variant needs.
    #[error("the MPI library provides {provided}; {what} needs {needed}")]
    ThreadLevel {
        /// What needs it (a variant, a shared communicator).
        what: &'static str,
        /// What MPI provides ([`hc_mpi::threading_name`]).
        provided: &'static str,
        /// What the variant needs.
        needed: &'static str,
    },
    /// The job has the wrong number of ranks.
    #[error("the benchmark needs exactly {needed} ranks, got {got}")]
    RankCount {
        /// How many it needs.
        needed: i32,
        /// How many it got.
        got: i32,
    },
    /// A benchmark that this variant does not run.
    #[error("{bench} does not run with the {variant} variant (only with {runs_with})")]
    Unsupported {
        /// The benchmark.
        bench: &'static str,
        /// The variant.
        variant: &'static str,
        /// The variants it runs with.
        runs_with: &'static str,
    },
    /// A variant that runs with one thread only was given more.
    #[error("{variant} runs with one thread only (--threads 1), got {threads}")]
    OneThreadOnly {
        /// The variant.
        variant: &'static str,
        /// The threads asked for.
        threads: usize,
    },
    /// hc-mpi could not start, or one of its operations failed (its
    /// messages say which).
    #[error(transparent)]
    Hcmpi(#[from] hc_mpi::Error),
    /// A DDDF operation failed (its messages say which).
    #[error(transparent)]
    Dddf(#[from] DddfError),
    /// The DDDF space closed with guids still awaited.
    #[error("the DDDF space closed with guids pending: {0:?}")]
    PendingGuids(Vec<Pending>),
    /// The rayon pool of a baseline could not start.
    #[error("cannot start the rayon pool")]
    RayonPool(#[from] rayon::ThreadPoolBuildError),
}

/// One measured job failed, as its driver saw it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// It could not start, timed out or ended with a failure (its message
    /// says which, with the tail of its output).
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// It ended well but printed no result row.
    #[error("no result rows in the output\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}")]
    NoRows {
        /// What it printed on stdout.
        stdout: String,
        /// What it printed on stderr.
        stderr: String,
    },
}

/// A benchmark driver could not run its jobs or print their report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriverError {
    /// No launcher to run the jobs with.
    #[error("cannot run MPI jobs")]
    Launcher(#[source] LaunchError),
    /// The driver runs its own executable as the jobs' ranks.
    #[error("cannot find this program's own executable")]
    OwnExecutable(#[source] io::Error),
    /// The report could not be written.
    #[error(transparent)]
    Output(#[from] apps::output::OutputError),
}
