//! # hcmpi-testkit
//!
//! Running programs under `mpiexec`: the multi-rank tests and the benchmark
//! drivers use this crate. It is a dev-dependency of the runtime crates,
//! never part of their public API.
//!
//! A multi-rank test is an ordinary `#[test]` that starts a test or example
//! binary under `mpiexec -n N` and checks what the ranks print. The same
//! three problems come up every time, so they are solved here once:
//!
//! * **Oversubscription.** CI machines and containers often have two cores,
//!   and tests ask for more ranks than that. MPICH's Hydra oversubscribes
//!   without complaint. Open MPI refuses unless it is given `--oversubscribe`.
//! * **Root.** Containers usually run as uid 0. Open MPI refuses to start as
//!   root unless it is given `--allow-run-as-root`. MPICH doesn't mind.
//! * **Hangs.** A deadlocked rank (a lost message, a broken shutdown
//!   protocol) would otherwise hang `cargo test`, and so the CI job, until
//!   some outer limit kills the job with no useful output. [`Launcher::run`]
//!   waits for a bounded time. On timeout it kills `mpiexec` and **every
//!   process it started**, then returns [`LaunchError::Timeout`]. That error
//!   names the program that hung and shows the tail of its output, so a hang
//!   becomes an ordinary failed test.
//!
//! [`Launcher::detect`] tells MPICH and Open MPI apart by running
//! `mpiexec --version`. The `MPIEXEC` environment variable overrides which
//! launcher is used. [`Launcher::command`] builds the command line the
//! detected flavor needs. [`run_ranks`] is the short form for tests.
//!
//! ```no_run
//! use hcmpi_testkit::run_ranks;
//! use std::path::Path;
//!
//! // In an integration test, `env!("CARGO_BIN_EXE_<name>")` gives a binary's path.
//! let out = run_ranks(2, Path::new("target/debug/examples/ping"), &["--rounds", "10"]);
//! assert_eq!(out.stdout.lines().filter(|l| l.starts_with("done")).count(), 2);
//! ```
//!
//! # How a timed-out run is killed
//!
//! Killing `mpiexec`'s process group is not enough. Hydra starts each
//! `hydra_pmi_proxy` and each rank with `setsid`, so every one of them leads
//! its own session and process group. Instead, on timeout the launcher walks
//! `/proc` and collects `mpiexec` and all of its descendants. It stops them
//! with `SIGSTOP`, so no new processes can be forked while it looks. It then
//! scans again, repeating until no new descendants turn up, and sends
//! `SIGKILL` to the whole set. This works the same way whatever the launcher
//! does with sessions.
//!
//! The child is deliberately left in the caller's process group. Pressing
//! Ctrl-C on `cargo test` then still reaches `mpiexec`, which shuts its ranks
//! down itself. In a group of its own, an interrupted (possibly hung) run
//! would be left running.
//!
//! Everything runs on the local machine. Remote ranks started through an
//! ssh launcher are not tracked.

#![deny(missing_docs)]

mod tasks;

pub use tasks::{thread_count, thread_names, yield_now, YieldNow};

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Environment variable that names the launcher to use instead of
/// `mpiexec` from `PATH`, for example `/opt/openmpi/bin/mpirun`.
pub const MPIEXEC_ENV: &str = "MPIEXEC";

/// Environment variable that holds the timeout, in whole seconds, that
/// [`run_ranks`] uses (see [`test_timeout`]).
pub const TEST_TIMEOUT_ENV: &str = "HCMPI_TEST_TIMEOUT_SECS";

/// The timeout [`run_ranks`] uses when [`TEST_TIMEOUT_ENV`] is not set.
pub const DEFAULT_TEST_TIMEOUT: Duration = Duration::from_secs(120);

/// The most time `mpiexec --version` may take during [`Launcher::detect`].
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);

/// How long to keep collecting output after a normal exit. A rank may have
/// left a background process holding the pipes open. After this long the
/// output gathered so far is returned.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(5);

/// The same, after a timed-out run has been killed.
const DRAIN_AFTER_KILL: Duration = Duration::from_secs(2);

/// How many lines, and at most how many bytes, of each stream an error's
/// `Display` shows.
const TAIL_LINES: usize = 40;
const TAIL_BYTES: usize = 8 * 1024;

// ---------------------------------------------------------------------------
// Flavor
// ---------------------------------------------------------------------------

/// Which MPI implementation a launcher belongs to. It decides the extra
/// flags [`Launcher::command`] adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MpiFlavor {
    /// MPICH, or another MPI that uses MPICH's Hydra process manager. It
    /// needs no extra flags, either to oversubscribe or to run as root.
    Mpich,
    /// Open MPI. It needs `--oversubscribe`, and also `--allow-run-as-root`
    /// when running as root.
    OpenMpi,
    /// Not recognized. The value is the first non-empty line of
    /// `mpiexec --version`, or an empty string. Only the portable `-n N` is
    /// passed.
    Unknown(String),
}

impl MpiFlavor {
    /// Tells the flavor from the output (stdout and stderr together) of
    /// `mpiexec --version`.
    ///
    /// MPICH's Hydra prints `HYDRA build details:`, and `mpichversion`
    /// prints `MPICH Version:`. Open MPI prints `mpiexec (Open MPI) 5.0.3`,
    /// and older releases print `mpiexec (OpenRTE) 4.1.4`.
    pub fn from_version_output(text: &str) -> MpiFlavor {
        if text.contains("Open MPI") || text.contains("OpenRTE") {
            MpiFlavor::OpenMpi
        } else if text.contains("HYDRA") || text.contains("MPICH") {
            MpiFlavor::Mpich
        } else {
            let first = text.lines().map(str::trim).find(|l| !l.is_empty());
            MpiFlavor::Unknown(first.unwrap_or_default().to_owned())
        }
    }
}

impl fmt::Display for MpiFlavor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MpiFlavor::Mpich => f.write_str("MPICH (Hydra)"),
            MpiFlavor::OpenMpi => f.write_str("Open MPI"),
            MpiFlavor::Unknown(line) if line.is_empty() => f.write_str("unknown MPI"),
            MpiFlavor::Unknown(line) => write!(f, "unknown MPI ({line})"),
        }
    }
}

// ---------------------------------------------------------------------------
// Errors and results
// ---------------------------------------------------------------------------

/// Why a launch failed. `Display` says what to do about it, and for runs
/// that started it includes the tail of their output.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// No usable `mpiexec` was found.
    #[error("{}", Missing { program, from_env: *from_env })]
    NotFound {
        /// What was looked for: `mpiexec`, or the value of `MPIEXEC`.
        program: PathBuf,
        /// Whether `program` came from the `MPIEXEC` environment variable.
        from_env: bool,
    },
    /// `mpiexec --version` did not answer, so the launcher could not be
    /// identified.
    #[error(
        "could not identify the MPI launcher: `{} --version` did not answer within \
         {timeout:?}; check that it runs by hand, or set {} to a launcher that does",
        program.display(),
        MPIEXEC_ENV
    )]
    VersionTimeout {
        /// The launcher that was asked.
        program: PathBuf,
        /// How long it was given.
        timeout: Duration,
    },
    /// A process could not be started or waited for.
    #[error("could not run `{}`: {source}", program.display())]
    Io {
        /// The program involved.
        program: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The run did not finish in time. It was killed, along with every
    /// process it had started.
    #[error(
        "`{}` under `mpiexec -n {ranks}` did not finish within {timeout:?} \
         and was killed with every process it started (hung? for tests, \
         raise {} if it is only slow){}",
        exe.display(),
        TEST_TIMEOUT_ENV,
        Tails { stdout, stderr }
    )]
    Timeout {
        /// Number of ranks requested.
        ranks: usize,
        /// The program that was run under `mpiexec`.
        exe: PathBuf,
        /// The limit that was exceeded.
        timeout: Duration,
        /// Everything it printed on stdout before it was killed.
        stdout: String,
        /// Everything it printed on stderr before it was killed.
        stderr: String,
    },
    /// The run finished with a non-zero status (see
    /// [`RunOutput::success_or_err`]).
    #[error(
        "`{}` under `mpiexec -n {ranks}` failed: {status}{}",
        exe.display(),
        Tails { stdout, stderr }
    )]
    Failed {
        /// Number of ranks requested.
        ranks: usize,
        /// The program that was run under `mpiexec`.
        exe: PathBuf,
        /// Exit status of `mpiexec`.
        status: ExitStatus,
        /// Everything the run printed on stdout.
        stdout: String,
        /// Everything the run printed on stderr.
        stderr: String,
    },
}

/// What to do about a launcher that is not there.
struct Missing<'a> {
    program: &'a Path,
    from_env: bool,
}

impl fmt::Display for Missing<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let program = self.program.display();
        if self.from_env {
            write!(
                f,
                "{MPIEXEC_ENV} is set to `{program}`, which is not an executable file; \
                 point it at an MPI launcher (mpiexec/mpirun) or unset it to use \
                 `mpiexec` from PATH"
            )
        } else {
            write!(
                f,
                "`{program}` was not found on PATH, so multi-rank runs cannot be started; \
                 install MPICH (e.g. `apt-get install mpich libmpich-dev`) or run \
                 ./ci/deps.sh, or set {MPIEXEC_ENV} to the launcher's path"
            )
        }
    }
}

/// The tails of a run's stderr and stdout, each on lines of its own.
struct Tails<'a> {
    stdout: &'a str,
    stderr: &'a str,
}

impl fmt::Display for Tails<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_tail(f, "stderr", self.stderr)?;
        write_tail(f, "stdout", self.stdout)
    }
}

/// Writes `--- name (...) ---` followed by the last lines of `text`.
fn write_tail(f: &mut fmt::Formatter<'_>, name: &str, text: &str) -> fmt::Result {
    let (shown, total) = tail(text, TAIL_LINES, TAIL_BYTES);
    if total == 0 {
        return write!(f, "\n--- {name}: (empty) ---");
    }
    let shown_lines = shown.lines().count();
    if shown_lines < total {
        write!(
            f,
            "\n--- {name}: last {shown_lines} of {total} lines ---\n{shown}"
        )
    } else {
        write!(f, "\n--- {name} ---\n{shown}")
    }
}

/// The end of `text`: at most `max_lines` lines and `max_bytes` bytes, cut on
/// a character boundary. Also returns how many lines `text` has in all.
fn tail(text: &str, max_lines: usize, max_bytes: usize) -> (&str, usize) {
    let text = text.trim_end_matches(['\n', '\r']);
    let total = text.lines().count();
    let mut start = 0;
    if total > max_lines {
        // Start just after the newline that ends line `total - max_lines`.
        let skip = total - max_lines;
        start = text
            .match_indices('\n')
            .nth(skip - 1)
            .map_or(0, |(i, _)| i + 1);
    }
    if text.len() - start > max_bytes {
        start = text.len() - max_bytes;
        while !text.is_char_boundary(start) {
            start += 1;
        }
    }
    (&text[start..], total)
}

/// What a finished run left behind.
#[derive(Debug)]
pub struct RunOutput {
    /// Number of ranks requested.
    pub ranks: usize,
    /// The program that was run under `mpiexec`.
    pub exe: PathBuf,
    /// Exit status of `mpiexec`. It is non-zero if any rank failed.
    pub status: ExitStatus,
    /// All ranks' stdout, interleaved in the order `mpiexec` forwarded it
    /// (lossily decoded as UTF-8).
    pub stdout: String,
    /// All ranks' stderr, together with `mpiexec`'s own messages.
    pub stderr: String,
}

impl RunOutput {
    /// Checks that the run was a job one rank ended: a non-zero status
    /// (`code` exactly, if given), `message` in the output (stderr, or
    /// stdout, where MPICH's launcher reports a killed rank), and no
    /// `success` text on stdout (no rank got as far as reporting). Panics
    /// with `context` and the output otherwise.
    ///
    /// ```
    /// use std::os::unix::process::ExitStatusExt;
    /// use std::process::ExitStatus;
    ///
    /// let out = hcmpi_testkit::RunOutput {
    ///     ranks: 2,
    ///     exe: "app".into(),
    ///     status: ExitStatus::from_raw(2 << 8),
    ///     stdout: String::new(),
    ///     stderr: "rank 1: app: error: bad input\n".into(),
    /// };
    /// out.expect_job_failure(Some(2), "bad input", "OK", "2 ranks");
    /// ```
    #[track_caller]
    pub fn expect_job_failure(
        &self,
        code: Option<i32>,
        message: &str,
        success: &str,
        context: &str,
    ) {
        match code {
            Some(code) => assert_eq!(
                self.status.code(),
                Some(code),
                "{context}: wrong status\n{}",
                self.stderr
            ),
            None => assert!(
                !self.status.success(),
                "{context}: the job succeeded\n{}",
                self.stderr
            ),
        }
        assert!(
            self.stderr.contains(message) || self.stdout.contains(message),
            "{context}: the failing rank's message {message:?} is missing\n--- stderr:\n{}\n--- stdout:\n{}",
            self.stderr,
            self.stdout
        );
        assert!(
            !self.stdout.contains(success),
            "{context}: a rank went on as if nothing failed\n{}",
            self.stdout
        );
    }

    /// Returns `self` if the run exited with status 0. Otherwise returns
    /// [`LaunchError::Failed`], whose `Display` shows the tail of stderr and
    /// stdout.
    pub fn success_or_err(self) -> Result<RunOutput, LaunchError> {
        if self.status.success() {
            Ok(self)
        } else {
            Err(LaunchError::Failed {
                ranks: self.ranks,
                exe: self.exe,
                status: self.status,
                stdout: self.stdout,
                stderr: self.stderr,
            })
        }
    }
}

// ---------------------------------------------------------------------------
// Launcher
// ---------------------------------------------------------------------------

/// An `mpiexec` and its flavor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launcher {
    program: PathBuf,
    flavor: MpiFlavor,
}

impl Launcher {
    /// Finds the launcher and tells its flavor from `mpiexec --version`.
    ///
    /// The launcher is `$MPIEXEC` if that is set and not empty, otherwise
    /// `mpiexec` from `PATH`. If neither is an executable file the result is
    /// [`LaunchError::NotFound`], whose message says how to install MPICH.
    /// A launcher whose `--version` output is not recognized is still
    /// usable, as [`MpiFlavor::Unknown`].
    ///
    /// # Errors
    ///
    /// [`LaunchError::NotFound`] if there is no launcher,
    /// [`LaunchError::Io`] if it cannot be started, and
    /// [`LaunchError::VersionTimeout`] if `--version` hangs.
    pub fn detect() -> Result<Launcher, LaunchError> {
        Self::detect_with(std::env::var_os(MPIEXEC_ENV))
    }

    /// [`Launcher::detect`] with the value of `MPIEXEC` passed in.
    fn detect_with(mpiexec_env: Option<OsString>) -> Result<Launcher, LaunchError> {
        let (requested, from_env) = match mpiexec_env {
            Some(value) if !value.is_empty() => (PathBuf::from(value), true),
            _ => (PathBuf::from("mpiexec"), false),
        };
        let program = resolve_program(&requested).ok_or(LaunchError::NotFound {
            program: requested,
            from_env,
        })?;

        let mut version = Command::new(&program);
        version.arg("--version");
        let io_err = |source| LaunchError::Io {
            program: program.clone(),
            source,
        };
        let captured = supervise(version, VERSION_TIMEOUT).map_err(io_err)?;
        if captured.status.is_none() {
            return Err(LaunchError::VersionTimeout {
                program,
                timeout: VERSION_TIMEOUT,
            });
        }
        let text = format!("{}\n{}", captured.stdout, captured.stderr);
        let flavor = MpiFlavor::from_version_output(&text);
        Ok(Launcher { program, flavor })
    }

    /// A launcher with a known program and flavor, with no detection.
    #[must_use]
    pub fn new(program: impl Into<PathBuf>, flavor: MpiFlavor) -> Launcher {
        Launcher {
            program: program.into(),
            flavor,
        }
    }

    /// The launcher's path. After [`Launcher::detect`] this is resolved
    /// against `PATH`.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The launcher's flavor.
    pub fn flavor(&self) -> &MpiFlavor {
        &self.flavor
    }

    /// `mpiexec [flavor flags] -n <ranks> <exe> <args...>`, not yet spawned.
    ///
    /// For Open MPI the flags are `--oversubscribe`, plus
    /// `--allow-run-as-root` when the effective uid is 0 (or cannot be
    /// determined; the flag is harmless otherwise). MPICH and unknown
    /// launchers get no extra flags.
    ///
    /// The child inherits this process's environment. Settings for one run,
    /// such as `HC_WORKERS`, are the caller's to add with
    /// [`Command::env`]; pass the result to [`Launcher::run_command`] to
    /// keep the timeout.
    ///
    /// `exe` is passed to `mpiexec` as it is. An absolute path such as
    /// `env!("CARGO_BIN_EXE_<name>")` avoids surprises from `PATH` lookups.
    ///
    /// # Panics
    ///
    /// Panics if `ranks` is 0.
    #[must_use = "the command does nothing until it is spawned or passed to `run_command`"]
    pub fn command(&self, ranks: usize, exe: &Path, args: &[impl AsRef<OsStr>]) -> Command {
        self.command_for(ranks, exe, args, running_as_root())
    }

    fn command_for(
        &self,
        ranks: usize,
        exe: &Path,
        args: &[impl AsRef<OsStr>],
        as_root: bool,
    ) -> Command {
        assert!(ranks > 0, "an MPI run needs at least one rank");
        let mut cmd = Command::new(&self.program);
        if self.flavor == MpiFlavor::OpenMpi {
            cmd.arg("--oversubscribe");
            if as_root {
                cmd.arg("--allow-run-as-root");
            }
        }
        cmd.arg("-n").arg(ranks.to_string()).arg(exe);
        cmd.args(args);
        cmd
    }

    /// Like [`Launcher::command`], for a job whose ranks get different
    /// arguments (MPMD, `mpiexec -n 2 exe a : -n 1 exe b`, which MPICH and
    /// Open MPI both accept): `groups` lists how many ranks run with which
    /// arguments, ranks numbered in that order.
    ///
    /// ```
    /// use hcmpi_testkit::{Launcher, MpiFlavor};
    /// use std::path::Path;
    ///
    /// let launcher = Launcher::new("mpiexec", MpiFlavor::Mpich);
    /// let cmd = launcher.command_mpmd(Path::new("/bin/app"), &[(2, &["--ok"][..]), (1, &["--bad"])]);
    /// let args: Vec<_> = cmd.get_args().map(|a| a.to_str().unwrap()).collect();
    /// assert_eq!(args, ["-n", "2", "/bin/app", "--ok", ":", "-n", "1", "/bin/app", "--bad"]);
    /// ```
    ///
    /// # Panics
    ///
    /// Panics if `groups` is empty or any group has 0 ranks.
    #[must_use = "the command does nothing until it is spawned or passed to `run_command`"]
    pub fn command_mpmd(&self, exe: &Path, groups: &[(usize, &[&str])]) -> Command {
        assert!(!groups.is_empty(), "an MPI run needs at least one rank");
        let (first_ranks, first_args) = groups[0];
        let mut cmd = self.command(first_ranks, exe, first_args);
        for &(ranks, args) in &groups[1..] {
            assert!(ranks > 0, "an MPMD group needs at least one rank");
            cmd.arg(":").arg("-n").arg(ranks.to_string()).arg(exe);
            cmd.args(args);
        }
        cmd
    }

    /// Runs `exe` on `ranks` ranks and waits at most `timeout` for it.
    ///
    /// The call returns `Ok` whatever the exit status; use
    /// [`RunOutput::success_or_err`] to make a non-zero status an error. If
    /// the time runs out, `mpiexec` and every process it started are killed,
    /// and the result is [`LaunchError::Timeout`] carrying the output
    /// captured so far.
    ///
    /// # Errors
    ///
    /// [`LaunchError::Timeout`] if the run takes longer than `timeout`, and
    /// [`LaunchError::Io`] if `mpiexec` cannot be started or waited for.
    ///
    /// # Panics
    ///
    /// Panics if `ranks` is 0.
    pub fn run(
        &self,
        ranks: usize,
        exe: &Path,
        args: &[impl AsRef<OsStr>],
        timeout: Duration,
    ) -> Result<RunOutput, LaunchError> {
        self.run_command(self.command(ranks, exe, args), ranks, exe, timeout)
    }

    /// Like [`Launcher::run`], for a command the caller has adjusted, for
    /// example with `.env("HC_WORKERS", "4")`. `cmd` should come from
    /// [`Launcher::command`]. `ranks` and `exe` are used only to describe
    /// the run in [`RunOutput`] and in errors.
    ///
    /// This function sets stdin to null and pipes stdout and stderr, so any
    /// stdio settings already on `cmd` are replaced. Helper threads read the
    /// pipes, so a chatty run cannot fill a pipe and block.
    ///
    /// # Errors
    ///
    /// As for [`Launcher::run`].
    pub fn run_command(
        &self,
        cmd: Command,
        ranks: usize,
        exe: &Path,
        timeout: Duration,
    ) -> Result<RunOutput, LaunchError> {
        let program = PathBuf::from(cmd.get_program());
        let captured =
            supervise(cmd, timeout).map_err(|source| LaunchError::Io { program, source })?;
        match captured.status {
            Some(status) => Ok(RunOutput {
                ranks,
                exe: exe.to_owned(),
                status,
                stdout: captured.stdout,
                stderr: captured.stderr,
            }),
            None => Err(LaunchError::Timeout {
                ranks,
                exe: exe.to_owned(),
                timeout,
                stdout: captured.stdout,
                stderr: captured.stderr,
            }),
        }
    }
}

/// For tests: runs `exe` on `ranks` ranks and returns its output. Panics
/// with a readable message if anything goes wrong: no `mpiexec`, a non-zero
/// exit, or a hang longer than [`test_timeout`].
///
/// The launcher is detected once per process and then reused.
///
/// # Panics
///
/// Panics with the [`LaunchError`]'s message if `mpiexec` is missing, if the
/// run exits with a non-zero status or times out, or if `ranks` is 0.
#[track_caller]
pub fn run_ranks(ranks: usize, exe: &Path, args: &[&str]) -> RunOutput {
    match shared_launcher()
        .run(ranks, exe, args, test_timeout())
        .and_then(RunOutput::success_or_err)
    {
        Ok(output) => output,
        Err(err) => panic!("{err}"),
    }
}

/// For tests: the launcher of this machine, detected once per process.
///
/// # Panics
///
/// Panics with the [`LaunchError`]'s message if no `mpiexec` is found.
#[track_caller]
pub fn shared_launcher() -> &'static Launcher {
    static LAUNCHER: OnceLock<Result<Launcher, String>> = OnceLock::new();
    match LAUNCHER.get_or_init(|| Launcher::detect().map_err(|e| e.to_string())) {
        Ok(launcher) => launcher,
        Err(message) => panic!("{message}"),
    }
}

/// For tests: a guard that runs MPI jobs of this process one at a time (a
/// small machine oversubscribed by one job is busy enough). A test that
/// panicked while holding it does not block the others.
pub fn one_job_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// For integration tests: the path of example `name` of the package under
/// test. The test executable lives in `target/<profile>/deps/`, and `cargo
/// test` builds the package's examples into `target/<profile>/examples/`
/// before it runs integration tests.
///
/// # Panics
///
/// Panics with a hint if the example binary is not there.
#[track_caller]
pub fn example_path(name: &str) -> PathBuf {
    let test_exe = std::env::current_exe().expect("path of the test executable");
    let profile_dir = test_exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("test executable in target/<profile>/deps");
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "example binary {} not found (cargo test builds examples before integration tests; \
         try `cargo build --examples` with the same profile)",
        path.display()
    );
    path
}

/// For tests of a command line: asserts that `output`, of a run described
/// by `context` (its arguments, say), refused its input: it exited with
/// status `code`, printed nothing on stdout (no result that looks valid),
/// and named every one of `needles` on stderr.
///
/// ```
/// # #[cfg(unix)] {
/// use std::process::Command;
///
/// let output = Command::new("sh")
///     .args(["-c", "echo 'error: bad -n: -1' >&2; exit 2"])
///     .output()
///     .unwrap();
/// hcmpi_testkit::assert_refused(&output, 2, &["-n", "-1"], "sh -n -1");
/// # }
/// ```
///
/// # Panics
///
/// If any of the three does not hold, with `context` and stderr in the
/// message.
#[track_caller]
pub fn assert_refused(output: &std::process::Output, code: i32, needles: &[&str], context: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(code),
        "{context}: wrong status\n{stderr}"
    );
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "{context}: {needle:?} is missing from stderr\n{stderr}"
        );
    }
    assert!(
        output.stdout.is_empty(),
        "{context}: printed to stdout\n{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// Where [`output_with_stdout`] points a program's standard output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stdout {
    /// A pipe whose read end is closed before the program starts, as when
    /// the reader has gone (`program | head -1` once `head` is done): every
    /// write fails with a broken pipe, with no race against the reader.
    Closed,
    /// `/dev/full`: every write fails with "no space left on device".
    #[cfg(target_os = "linux")]
    Full,
}

/// Runs `command` to its end with its standard output at `stdout`, and
/// returns its status and stderr (its `stdout` field is empty). A run that
/// lasts longer than [`test_timeout`] is killed, with everything it
/// started.
///
/// ```
/// # #[cfg(unix)] {
/// use std::process::Command;
///
/// use hcmpi_testkit::{output_with_stdout, Stdout};
///
/// // A shell's `echo` cannot write to a gone reader: SIGPIPE ends it.
/// let output = output_with_stdout(Command::new("sh").args(["-c", "echo hi"]), Stdout::Closed)
///     .unwrap();
/// assert!(!output.status.success());
/// # }
/// ```
///
/// # Errors
///
/// If the pipe or `/dev/full` cannot be opened, `command` cannot start, or
/// it timed out ([`io::ErrorKind::TimedOut`]).
pub fn output_with_stdout(
    command: &mut std::process::Command,
    stdout: Stdout,
) -> std::io::Result<std::process::Output> {
    let target = match stdout {
        Stdout::Closed => {
            let (reader, writer) = std::io::pipe()?;
            drop(reader);
            std::process::Stdio::from(writer)
        }
        #[cfg(target_os = "linux")]
        Stdout::Full => std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")?
            .into(),
    };
    let timeout = test_timeout();
    let captured = supervise_with_stdout(command, timeout, target)?;
    match captured.status {
        Some(status) => Ok(std::process::Output {
            status,
            stdout: Vec::new(),
            stderr: captured.stderr.into_bytes(),
        }),
        None => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "{} did not end within {timeout:?} and was killed",
                command.get_program().to_string_lossy()
            ),
        )),
    }
}

/// For tests of a program that prints a report: asserts that `command`,
/// described by `context`, ends quietly with status 0 when the reader of
/// its stdout has gone ([`Stdout::Closed`]: no panic, no error or broken
/// pipe on stderr, where its log lines may go), and with status 1 and a
/// message that names standard output and the cause when writing fails
/// otherwise ([`Stdout::Full`]).
///
/// ```no_run
/// use std::process::Command;
///
/// // In an integration test, `env!("CARGO_BIN_EXE_<name>")` gives a binary's path.
/// # #[cfg(target_os = "linux")] {
/// let mut command = Command::new("target/debug/smith-waterman");
/// command.args(["--random", "300", "200"]);
/// hcmpi_testkit::assert_stdout_failures_handled(&mut command, "smith-waterman --random 300 200");
/// # }
/// ```
///
/// # Panics
///
/// If either does not hold, or `command` cannot start or times out
/// ([`output_with_stdout`]).
#[cfg(target_os = "linux")]
#[track_caller]
pub fn assert_stdout_failures_handled(command: &mut std::process::Command, context: &str) {
    let out =
        output_with_stdout(command, Stdout::Closed).unwrap_or_else(|e| panic!("{context}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let complaint = ["panicked", "error", "Broken pipe"]
        .into_iter()
        .find(|word| stderr.contains(word));
    assert!(
        out.status.success() && complaint.is_none(),
        "{context} to a gone reader: {:?}\n{stderr}",
        out.status,
    );
    let out =
        output_with_stdout(command, Stdout::Full).unwrap_or_else(|e| panic!("{context}: {e}"));
    assert_refused(&out, 1, &["standard output", "No space left"], context);
}

/// The timeout for multi-rank tests: `$HCMPI_TEST_TIMEOUT_SECS` seconds, or
/// [`DEFAULT_TEST_TIMEOUT`] (120 s) if the variable is unset or empty.
///
/// # Panics
///
/// Panics if the variable is set but is not a whole number of seconds. A
/// typo should not silently fall back to the default.
#[track_caller]
pub fn test_timeout() -> Duration {
    match std::env::var(TEST_TIMEOUT_ENV) {
        Ok(value) if !value.trim().is_empty() => match value.trim().parse::<u64>() {
            Ok(secs) => Duration::from_secs(secs),
            Err(_) => panic!("{TEST_TIMEOUT_ENV}={value:?} is not a whole number of seconds"),
        },
        Ok(_) | Err(std::env::VarError::NotPresent) => DEFAULT_TEST_TIMEOUT,
        Err(std::env::VarError::NotUnicode(value)) => {
            panic!("{TEST_TIMEOUT_ENV}={value:?} is not a whole number of seconds")
        }
    }
}

// ---------------------------------------------------------------------------
// Finding programs, uid
// ---------------------------------------------------------------------------

/// `program` if it is a path to an executable file. If it is a bare name,
/// the first executable file of that name on `PATH`.
fn resolve_program(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 || program.is_absolute() {
        return is_executable(program).then(|| program.to_owned());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether this process runs as root, worked out once. If the uid cannot be
/// determined the answer is `true`, because Open MPI's
/// `--allow-run-as-root` does no harm for other users.
fn running_as_root() -> bool {
    static ROOT: OnceLock<bool> = OnceLock::new();
    *ROOT.get_or_init(|| effective_uid().is_none_or(|uid| uid == 0))
}

/// The effective uid: the second field of the `Uid:` line in
/// `/proc/self/status`, or failing that the output of `id -u`.
fn effective_uid() -> Option<u32> {
    let from_proc = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("Uid:"))?;
            line.split_whitespace().nth(2)?.parse().ok()
        });
    from_proc.or_else(|| {
        let out = Command::new("id")
            .arg("-u")
            .stderr(Stdio::null())
            .output()
            .ok()?;
        String::from_utf8(out.stdout).ok()?.trim().parse().ok()
    })
}

// ---------------------------------------------------------------------------
// Supervision: output capture, timeout, killing the process tree
// ---------------------------------------------------------------------------

/// The result of [`supervise`]. `status` is `None` if the run timed out and
/// was killed.
struct Captured {
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
}

/// Spawns `cmd` with its output piped, and waits for it at most `timeout`.
fn supervise(mut cmd: Command, timeout: Duration) -> io::Result<Captured> {
    supervise_with_stdout(&mut cmd, timeout, Stdio::piped())
}

/// [`supervise`] with `cmd`'s stdout at `stdout`: captured only if piped.
fn supervise_with_stdout(
    cmd: &mut Command,
    timeout: Duration,
    stdout: Stdio,
) -> io::Result<Captured> {
    cmd.stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped());
    let mut guard = KillOnDrop(Some(cmd.spawn()?));
    let child = guard.0.as_mut().expect("the child was just stored");
    let stdout = Capture::start(child.stdout.take(), "stdout")?;
    let stderr = Capture::start(child.stderr.take(), "stderr")?;

    // Poll with a growing pause (1 ms, 2 ms, ... up to 50 ms). Short runs
    // return quickly, long runs cost little, and the deadline is kept to
    // within about 50 ms.
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        let now = Instant::now();
        if now >= deadline {
            break None;
        }
        thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(50));
    };

    let drain = if status.is_some() {
        guard.0 = None; // exited and reaped: nothing left to kill
        DRAIN_AFTER_EXIT
    } else {
        drop(guard); // kill the whole tree and reap `mpiexec`
        DRAIN_AFTER_KILL
    };
    let drain_deadline = Instant::now() + drain;
    Ok(Captured {
        status,
        stdout: stdout.finish(drain_deadline),
        stderr: stderr.finish(drain_deadline),
    })
}

/// Owns a running child. Dropping it kills the child's whole process tree
/// and reaps the child. This covers both the timeout and early returns
/// caused by errors.
struct KillOnDrop(Option<Child>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            kill_tree(child.id());
            let _ = child.kill(); // in case no `kill` program could be run
            let _ = child.wait();
        }
    }
}

/// One output pipe, read to the end on a helper thread into a shared
/// buffer. The output gathered so far can be taken even while the thread is
/// still blocked reading.
struct Capture {
    buffer: Arc<Mutex<Vec<u8>>>,
    reader: Option<JoinHandle<()>>,
}

impl Capture {
    fn start<R: Read + Send + 'static>(pipe: Option<R>, name: &str) -> io::Result<Capture> {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let reader = match pipe {
            None => None,
            Some(mut pipe) => {
                let sink = Arc::clone(&buffer);
                let reader = thread::Builder::new()
                    .name(format!("mpiexec-{name}"))
                    .spawn(move || {
                        let mut chunk = [0u8; 8192];
                        loop {
                            match pipe.read(&mut chunk) {
                                Ok(0) => break,
                                Ok(n) => sink
                                    .lock()
                                    .unwrap_or_else(PoisonError::into_inner)
                                    .extend_from_slice(&chunk[..n]),
                                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                                Err(_) => break,
                            }
                        }
                    })?;
                Some(reader)
            }
        };
        Ok(Capture { buffer, reader })
    }

    /// Waits until the pipe reaches end-of-file or `deadline` passes, then
    /// returns what was read. A reader still blocked at the deadline (a
    /// stray process holds the pipe open) is left to finish on its own.
    fn finish(mut self, deadline: Instant) -> String {
        if let Some(reader) = self.reader.take() {
            while !reader.is_finished() && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(5));
            }
            if reader.is_finished() {
                let _ = reader.join();
            }
        }
        let bytes = self.buffer.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Kills `root` and all of its descendants with `SIGKILL`.
///
/// Everything is stopped first. A stopped process cannot fork, so rescanning
/// after each round of `SIGSTOP` eventually finds the whole tree, at most a
/// few rounds deep. All of it is then killed at once. Killing from the top
/// down instead would orphan the children to init before they were found.
fn kill_tree(root: u32) {
    let mut victims = BTreeSet::from([root]);
    for _ in 0..16 {
        send_signal("STOP", &victims);
        let found = descendants(root, &process_table());
        if found.is_subset(&victims) {
            break;
        }
        victims.extend(found);
    }
    send_signal("KILL", &victims);
}

/// `root` and all processes below it in `table` (pairs of pid and ppid).
fn descendants(root: u32, table: &[(u32, u32)]) -> BTreeSet<u32> {
    let mut found = BTreeSet::from([root]);
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for &(pid, ppid) in table {
            if ppid == parent && found.insert(pid) {
                frontier.push(pid);
            }
        }
    }
    found
}

/// Pid and parent pid of every process, from `/proc`, falling back to `ps`
/// where there is no `/proc`.
fn process_table() -> Vec<(u32, u32)> {
    if let Ok(entries) = std::fs::read_dir("/proc") {
        return entries
            .filter_map(|entry| {
                let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                // "pid (comm) state ppid ..."; comm may itself contain ") ".
                let after_comm = &stat[stat.rfind(')')? + 1..];
                let ppid = after_comm.split_whitespace().nth(1)?.parse().ok()?;
                Some((pid, ppid))
            })
            .collect();
    }
    let Ok(out) = Command::new("ps")
        .args(["-A", "-o", "pid=", "-o", "ppid="])
        .output()
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
        })
        .collect()
}

/// Sends `SIGname` to `pids` with the `kill` program, or the shell's builtin
/// if there is no such program. Pids that have already gone are ignored.
fn send_signal(name: &str, pids: &BTreeSet<u32>) {
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    let quiet = |cmd: &mut Command| {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
    };
    let direct = quiet(Command::new("kill").args(["-s", name, "--"]).args(&pids));
    if direct.is_err() {
        let script = format!("kill -s {name} -- \"$@\"");
        let _ = quiet(Command::new("sh").args(["-c", &script, "sh"]).args(&pids));
    }
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    const HYDRA_VERSION: &str = "\
HYDRA build details:
    Version:                                 4.0.2
    Release Date:                            Thu Apr  7 12:34:45 CDT 2022
    CC:                              gcc -g -O2
    Configure options:                       '--with-device=ch4:ucx' '--prefix=/usr'
    Process Manager:                         pmi
    Launchers available:                     ssh rsh fork slurm ll lsf sge manual persist
    Topology libraries available:            hwloc
    Resource management kernels available:   user slurm ll lsf sge pbs cobalt
    Demux engines available:                 poll select
";

    const OPENRTE_VERSION: &str = "\
mpiexec (OpenRTE) 4.1.4

Report bugs to http://www.open-mpi.org/community/help/
";

    const OPEN_MPI_5_VERSION: &str = "\
mpiexec (Open MPI) 5.0.3

Report bugs to https://www.open-mpi.org/community/help/
";

    fn args_of(cmd: &Command) -> Vec<String> {
        cmd.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// The detected launcher, or `None` (with a note) if there is no
    /// `mpiexec` on this machine.
    fn launcher_or_skip(test: &str) -> Option<Launcher> {
        match Launcher::detect() {
            Ok(launcher) => Some(launcher),
            Err(err @ LaunchError::NotFound { .. }) => {
                eprintln!("note: skipping {test}: {err}");
                None
            }
            Err(err) => panic!("{err}"),
        }
    }

    #[test]
    fn flavor_from_hydra_output() {
        assert_eq!(
            MpiFlavor::from_version_output(HYDRA_VERSION),
            MpiFlavor::Mpich
        );
        assert_eq!(
            MpiFlavor::from_version_output(
                "MPICH Version:      4.0.2\nMPICH Device:     ch4:ucx\n"
            ),
            MpiFlavor::Mpich
        );
    }

    #[test]
    fn flavor_from_open_mpi_output() {
        assert_eq!(
            MpiFlavor::from_version_output(OPENRTE_VERSION),
            MpiFlavor::OpenMpi
        );
        assert_eq!(
            MpiFlavor::from_version_output(OPEN_MPI_5_VERSION),
            MpiFlavor::OpenMpi
        );
    }

    #[test]
    fn flavor_unknown_keeps_first_line() {
        assert_eq!(
            MpiFlavor::from_version_output("\n  srun-ish launcher 1.2  \nmore\n"),
            MpiFlavor::Unknown("srun-ish launcher 1.2".into())
        );
        assert_eq!(
            MpiFlavor::from_version_output(""),
            MpiFlavor::Unknown(String::new())
        );
        assert_eq!(MpiFlavor::Unknown(String::new()).to_string(), "unknown MPI");
    }

    #[test]
    fn mpich_command_has_no_extra_flags() {
        let launcher = Launcher::new("/usr/bin/mpiexec", MpiFlavor::Mpich);
        for as_root in [false, true] {
            let cmd = launcher.command_for(3, Path::new("/bin/echo"), &["a b", "c"], as_root);
            assert_eq!(cmd.get_program(), "/usr/bin/mpiexec");
            assert_eq!(args_of(&cmd), ["-n", "3", "/bin/echo", "a b", "c"]);
        }
    }

    #[test]
    fn open_mpi_command_oversubscribes_and_allows_root() {
        let launcher = Launcher::new("/opt/ompi/bin/mpiexec", MpiFlavor::OpenMpi);
        let as_user = launcher.command_for(4, Path::new("./t"), &["x"], false);
        assert_eq!(as_user.get_program(), "/opt/ompi/bin/mpiexec");
        assert_eq!(
            args_of(&as_user),
            ["--oversubscribe", "-n", "4", "./t", "x"]
        );
        let as_root = launcher.command_for(4, Path::new("./t"), &["x"], true);
        assert_eq!(
            args_of(&as_root),
            [
                "--oversubscribe",
                "--allow-run-as-root",
                "-n",
                "4",
                "./t",
                "x"
            ]
        );
    }

    #[test]
    fn unknown_command_is_plain() {
        let launcher = Launcher::new("mpirun", MpiFlavor::Unknown("x".into()));
        let cmd = launcher.command_for(1, Path::new("prog"), &[] as &[&str], true);
        assert_eq!(args_of(&cmd), ["-n", "1", "prog"]);
    }

    #[test]
    #[should_panic(expected = "at least one rank")]
    fn zero_ranks_is_rejected() {
        let _ = Launcher::new("mpiexec", MpiFlavor::Mpich).command(0, Path::new("x"), &["y"]);
    }

    #[test]
    fn missing_launcher_says_how_to_install() {
        let err = Launcher::detect_with(Some("/nonexistent/bin/mpiexec".into())).unwrap_err();
        assert!(
            matches!(err, LaunchError::NotFound { from_env: true, .. }),
            "{err:?}"
        );
        assert!(err
            .to_string()
            .contains("MPIEXEC is set to `/nonexistent/bin/mpiexec`"));

        let text = LaunchError::NotFound {
            program: "mpiexec".into(),
            from_env: false,
        }
        .to_string();
        assert!(
            text.contains("apt-get install mpich libmpich-dev"),
            "{text}"
        );
        assert!(text.contains("./ci/deps.sh"), "{text}");
    }

    #[test]
    fn tail_keeps_last_lines_and_bytes() {
        assert_eq!(tail("", 3, 100), ("", 0));
        assert_eq!(tail("a\nb\n", 3, 100), ("a\nb", 2));
        assert_eq!(tail("1\n2\n3\n4\n5\n", 2, 100), ("4\n5", 5));
        // Cut on a character boundary: "é" is two bytes.
        assert_eq!(tail("xéé", 5, 3), ("é", 1));
    }

    #[test]
    fn failed_display_shows_stderr_tail() {
        let Some(launcher) = launcher_or_skip("failed_display_shows_stderr_tail") else {
            return;
        };
        let script = "for i in $(seq 1 100); do echo line$i >&2; done; exit 3";
        let out = launcher
            .run(
                1,
                Path::new("/bin/sh"),
                &["-c", script],
                Duration::from_secs(60),
            )
            .unwrap();
        assert!(!out.status.success());
        let err = out.success_or_err().unwrap_err();
        assert!(
            matches!(err, LaunchError::Failed { ranks: 1, .. }),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(
            text.starts_with("`/bin/sh` under `mpiexec -n 1` failed: exit status"),
            "{text}"
        );
        assert!(text.contains("line100"), "{text}");
        assert!(
            !text.contains("line1\n"),
            "only the tail should be shown: {text}"
        );
    }

    #[test]
    fn echo_runs_on_two_ranks() {
        let Some(launcher) = launcher_or_skip("echo_runs_on_two_ranks") else {
            return;
        };
        let out = launcher
            .run(
                2,
                Path::new("/bin/echo"),
                &["hello", "ranks"],
                Duration::from_secs(60),
            )
            .unwrap()
            .success_or_err()
            .unwrap();
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert_eq!(
            lines,
            ["hello ranks", "hello ranks"],
            "stderr: {}",
            out.stderr
        );
        assert_eq!(out.ranks, 2);
    }

    #[test]
    fn run_command_passes_caller_environment() {
        let Some(launcher) = launcher_or_skip("run_command_passes_caller_environment") else {
            return;
        };
        let sh = Path::new("/bin/sh");
        let mut cmd = launcher.command(3, sh, &["-c", "echo workers=$HC_WORKERS"]);
        cmd.env("HC_WORKERS", "5");
        let out = launcher
            .run_command(cmd, 3, sh, Duration::from_secs(60))
            .and_then(RunOutput::success_or_err)
            .unwrap();
        assert_eq!(
            out.stdout.lines().filter(|l| *l == "workers=5").count(),
            3,
            "{out:?}"
        );
    }

    /// Processes whose command line is exactly `argv`.
    fn processes_with_argv(argv: &[&str]) -> Vec<u32> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .filter_map(|entry| {
                let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
                let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
                let args: Vec<&[u8]> = raw.split(|&b| b == 0).filter(|a| !a.is_empty()).collect();
                let matches = args.len() == argv.len()
                    && args.iter().zip(argv).all(|(a, b)| *a == b.as_bytes());
                matches.then_some(pid)
            })
            .collect()
    }

    /// A `sleep` duration of about 30 s that no other process is likely to
    /// use, so that [`assert_all_gone`] cannot be confused by another
    /// `sleep 30`.
    fn unique_sleep_duration() -> String {
        static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        format!("30.{}{n}{:03}", std::process::id(), nanos % 1000)
    }

    /// Waits a little for processes running `argv` to disappear (SIGKILL is
    /// delivered asynchronously), then fails if any are left.
    fn assert_all_gone(argv: &[&str]) {
        let gone_by = Instant::now() + Duration::from_secs(5);
        let mut left = processes_with_argv(argv);
        while !left.is_empty() && Instant::now() < gone_by {
            thread::sleep(Duration::from_millis(20));
            left = processes_with_argv(argv);
        }
        assert!(
            left.is_empty(),
            "{argv:?} survived the timeout: pids {left:?}"
        );
    }

    #[test]
    fn timeout_kills_every_rank() {
        let Some(launcher) = launcher_or_skip("timeout_kills_every_rank") else {
            return;
        };
        let duration = unique_sleep_duration();
        let started = Instant::now();
        let result = launcher.run(2, Path::new("sleep"), &[&duration], Duration::from_secs(1));
        let elapsed = started.elapsed();

        let err = result.expect_err("sleep 30 must time out");
        assert!(
            matches!(&err, LaunchError::Timeout { ranks: 2, timeout, .. }
                if *timeout == Duration::from_secs(1)),
            "{err:?}"
        );
        assert!(
            elapsed < Duration::from_secs(10),
            "the timeout took {elapsed:?}"
        );
        let text = err.to_string();
        assert!(
            text.contains("`sleep` under `mpiexec -n 2` did not finish within 1s"),
            "{text}"
        );
        assert_all_gone(&["sleep", &duration]);
    }

    /// Hydra kills its ranks' process groups when `mpiexec` dies, but not
    /// processes that a rank moved into a session of their own. Killing the
    /// whole process tree catches those too.
    #[test]
    fn timeout_kills_processes_in_other_sessions() {
        let Some(launcher) = launcher_or_skip("timeout_kills_processes_in_other_sessions") else {
            return;
        };
        if resolve_program(Path::new("setsid")).is_none() {
            eprintln!("note: skipping timeout_kills_processes_in_other_sessions: no setsid");
            return;
        }
        let duration = unique_sleep_duration();
        let script = format!("setsid sleep {duration}; echo unreachable");
        let started = Instant::now();
        let result = launcher.run(
            2,
            Path::new("/bin/sh"),
            &["-c", &script],
            Duration::from_secs(1),
        );
        assert!(
            matches!(result, Err(LaunchError::Timeout { .. })),
            "{result:?}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "took {:?}",
            started.elapsed()
        );
        assert_all_gone(&["sleep", &duration]);
    }

    #[test]
    fn test_timeout_default() {
        // Only checked when the variable is not set by whoever runs the tests.
        if std::env::var_os(TEST_TIMEOUT_ENV).is_none() {
            assert_eq!(test_timeout(), DEFAULT_TEST_TIMEOUT);
        }
    }
}
