//! Ending the whole MPI job from one rank.
//!
//! A rank that fails while its peers wait for it (a rejected input, a panic
//! that escapes `main`, an engine that can no longer talk) must not leave
//! them blocked: the job ends with its message and a non-zero exit within
//! seconds. The one mechanism is `MPI_Abort` on `MPI_COMM_WORLD` (MPI 4.0
//! ch. 11, process initialization and management), which every
//! implementation to date turns into the end of every process of the job.
//!
//! 1. The failing rank prints its message on stderr, prefixed with its rank
//!    when it is part of a multi-rank job.
//! 2. If nothing initialized MPI yet (the failure came before start-up), it
//!    initializes MPI first: `MPI_Abort` needs an initialized library, and
//!    the other ranks may be blocked in `MPI_Init` waiting for this one.
//! 3. It calls `MPI_Abort(MPI_COMM_WORLD, code)`; the launcher ends every
//!    rank and reports `code`.

use std::ffi::OsString;
use std::time::{Duration, Instant};

use mpi::ffi;

/// Environment variables through which launchers announce a job's size:
/// MPICH's and Intel MPI's Hydra (`PMI_SIZE`), Open MPI's `mpirun`
/// (`OMPI_COMM_WORLD_SIZE`), Slurm's `srun` (`SLURM_STEP_NUM_TASKS`).
const SIZE_VARIABLES: [&str; 3] = ["PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS"];

/// Whether this process was started by an MPI launcher together with other
/// ranks, judged from the launcher's environment (MPI need not be
/// initialized). Programs use it to decide, before starting MPI, whether an
/// error must end the whole job ([`abort_job`]) or only this process.
///
/// ```
/// // A test binary runs without a launcher.
/// if std::env::var_os("PMI_SIZE").is_none()
///     && std::env::var_os("OMPI_COMM_WORLD_SIZE").is_none()
///     && std::env::var_os("SLURM_STEP_NUM_TASKS").is_none()
/// {
///     assert!(!hc_mpi::launched_with_peers());
/// }
/// ```
pub fn launched_with_peers() -> bool {
    SIZE_VARIABLES
        .iter()
        .any(|name| size_above_one(std::env::var_os(name)))
}

fn size_above_one(value: Option<OsString>) -> bool {
    value
        .and_then(|v| v.to_str().and_then(|s| s.trim().parse::<u64>().ok()))
        .is_some_and(|size| size > 1)
}

/// The rank the launcher gave this process, if it said.
fn launcher_rank() -> Option<String> {
    ["PMI_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"]
        .iter()
        .find_map(|name| std::env::var(name).ok())
}

/// Ends every process of the MPI job with exit status `code` after printing
/// `message` (steps 1–3 of the module docs). Works whether or not MPI (or
/// an [`Hcmpi`](crate::Hcmpi)) was started; a process started without a
/// launcher is a job of one, and only it ends.
///
/// Meant for `main` and for failures that leave peers waiting: a rank whose
/// input was rejected, a panic on one rank. Within a running
/// [`Hcmpi`](crate::Hcmpi), [`Hcmpi::abort`](crate::Hcmpi::abort) says the
/// same with the rank it knows.
pub fn abort_job(code: i32, message: &str) -> ! {
    match launcher_rank() {
        Some(rank) if launched_with_peers() => report(&format!("rank {rank}: {message}")),
        _ => report(message),
    }
    abort_world(code)
}

/// The exit status of a job that a panic on one rank ended: the one Rust
/// gives a process whose `main` panicked.
pub(crate) const PANIC_STATUS: i32 = 101;

/// Ends the whole job if a panic unwinds past it on a rank launched with
/// peers, which would otherwise wait forever in a receive or a collective
/// this rank never reaches. An [`Hcmpi`](crate::Hcmpi) does this itself;
/// the guard is for code that runs MPI through `mpi` (rsmpi) directly.
///
/// Create it once MPI runs and keep it while MPI does: declared after the
/// universe, it is dropped before it, so the job ends before MPI is
/// finalized. The message names `program`, and the rank when the launcher
/// gave one.
///
/// ```
/// let _guard = hc_mpi::AbortJobOnPanic::new("my-driver");
/// // Without a panic, dropping it does nothing.
/// ```
#[derive(Debug)]
#[must_use = "the guard acts when it is dropped, at the end of its scope"]
pub struct AbortJobOnPanic {
    program: &'static str,
}

impl AbortJobOnPanic {
    /// A guard for `program`, named in the message.
    ///
    /// ```
    /// let guard = hc_mpi::AbortJobOnPanic::new("my-driver");
    /// drop(guard);
    /// ```
    pub fn new(program: &'static str) -> AbortJobOnPanic {
        AbortJobOnPanic { program }
    }
}

impl Drop for AbortJobOnPanic {
    fn drop(&mut self) {
        // The panic hook has printed the panic by now.
        if std::thread::panicking() && launched_with_peers() {
            let program = self.program;
            let message = format!("{program}: a panic is ending this rank; aborting the MPI job");
            abort_job(PANIC_STATUS, &message);
        }
    }
}

/// Writes `line` to stderr in one `write` and waits (boundedly) until the
/// launcher has read it (step 1). Launchers forward a rank's output
/// asynchronously and drop what they have not read yet when the job
/// aborts: without the wait, the one message that says why the job ended
/// is sometimes lost.
pub(crate) fn report(line: &str) {
    use std::io::Write;
    {
        let mut stderr = std::io::stderr().lock();
        // Nothing to do if stderr is gone: the abort still happens.
        let _ = stderr.write_all(format!("{line}\n").as_bytes());
        let _ = stderr.flush();
    }
    wait_until_stderr_read(Duration::from_secs(1));
}

/// Waits until nothing written to stderr is left unread in its pipe, or
/// `limit` has passed; returns at once when stderr is not a pipe.
#[cfg(target_os = "linux")]
fn wait_until_stderr_read(limit: Duration) {
    let unread = || {
        let mut bytes: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through the pointer; on a file
        // that is not a pipe or socket it fails and writes nothing.
        let status = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::FIONREAD, &mut bytes) };
        status == 0 && bytes > 0
    };
    let deadline = Instant::now() + limit;
    let mut backoff = hc_runtime::Backoff::new(hc_runtime::BackoffPolicy::WAIT);
    while unread() && Instant::now() < deadline {
        if let hc_runtime::Snooze::Park(timeout) = backoff.snooze() {
            std::thread::park_timeout(timeout);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn wait_until_stderr_read(_limit: Duration) {}

/// `MPI_Abort(MPI_COMM_WORLD, code)`, initializing MPI first if needed
/// (step 2).
pub(crate) fn abort_world(code: i32) -> ! {
    if !mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
        // The universe is leaked on purpose: finalizing would wait for the
        // peers this abort is about.
        std::mem::forget(mpi::initialize());
    }
    if !mpi::environment::is_finalized() {
        // SAFETY: MPI is initialized and not finalized (checked above);
        // `MPI_Abort` does not return when it succeeds.
        unsafe { ffi::MPI_Abort(ffi::RSMPI_COMM_WORLD, code) };
    }
    // MPI could not end the job (finalized already, or `MPI_Abort` failed):
    // end this process at least, with the same status.
    std::process::exit(code)
}

#[cfg(test)]
mod tests {
    use super::size_above_one;

    #[test]
    fn only_sizes_above_one_mean_peers() {
        assert!(size_above_one(Some("4".into())));
        assert!(size_above_one(Some(" 2\n".into())));
        assert!(!size_above_one(Some("1".into())));
        assert!(!size_above_one(Some("0".into())));
        assert!(!size_above_one(Some("many".into())));
        assert!(!size_above_one(None));
    }
}
