//! Registration modes and the errors of phaser operations.

use std::fmt;

/// How a task is registered on a phaser (§II-A of the HCMPI paper, after
/// Shirako et al., ICS 2008).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `SIGNAL_WAIT_MODE`: the task signals each phase and waits for it.
    SignalWait,
    /// `SIGNAL_ONLY_MODE`: the task signals; it never waits.
    SignalOnly,
    /// `WAIT_ONLY_MODE`: the task waits; it never signals, and phases do not
    /// wait for it.
    WaitOnly,
}

impl Mode {
    /// Whether the mode may signal.
    ///
    /// ```
    /// assert!(hcmpi_phasers::Mode::SignalOnly.can_signal());
    /// assert!(!hcmpi_phasers::Mode::WaitOnly.can_signal());
    /// ```
    pub fn can_signal(self) -> bool {
        matches!(self, Mode::SignalWait | Mode::SignalOnly)
    }

    /// Whether the mode may wait.
    ///
    /// ```
    /// assert!(hcmpi_phasers::Mode::WaitOnly.can_wait());
    /// assert!(!hcmpi_phasers::Mode::SignalOnly.can_wait());
    /// ```
    pub fn can_wait(self) -> bool {
        matches!(self, Mode::SignalWait | Mode::WaitOnly)
    }

    /// Whether a registration in this mode may create one in `child`: the
    /// child's capabilities must be a subset of the parent's.
    ///
    /// ```
    /// use hcmpi_phasers::Mode;
    ///
    /// assert!(Mode::SignalWait.allows_child(Mode::WaitOnly));
    /// assert!(!Mode::SignalOnly.allows_child(Mode::SignalWait));
    /// ```
    pub fn allows_child(self, child: Mode) -> bool {
        (!child.can_signal() || self.can_signal()) && (!child.can_wait() || self.can_wait())
    }

    /// The paper's name of the mode.
    ///
    /// ```
    /// assert_eq!(hcmpi_phasers::Mode::SignalWait.name(), "SIGNAL_WAIT");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Mode::SignalWait => "SIGNAL_WAIT",
            Mode::SignalOnly => "SIGNAL_ONLY",
            Mode::WaitOnly => "WAIT_ONLY",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a phaser operation was refused or failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PhaserError {
    /// The operation needs a capability the registration's mode lacks
    /// (a `wait` in `SIGNAL_ONLY`, a `signal` in `WAIT_ONLY`).
    ModeViolation {
        /// The operation attempted.
        op: &'static str,
        /// The registration's mode.
        mode: Mode,
    },
    /// A child registration may not be stronger than its parent.
    StrongerChild {
        /// The parent's mode.
        parent: Mode,
        /// The mode asked for.
        child: Mode,
    },
    /// `signal` twice without the `wait` in between (`SIGNAL_WAIT`).
    AlreadySignaled {
        /// The phase already signaled.
        phase: u64,
    },
    /// `wait` without the `signal` of that phase first (`SIGNAL_WAIT`).
    WaitBeforeSignal {
        /// The phase not yet signaled.
        phase: u64,
    },
    /// The phase can never complete: no registration that signals is left.
    NoSignalers {
        /// The phase waited for.
        phase: u64,
    },
    /// `accum_get` before any phase was waited for.
    NoResult,
    /// The result of the phase this registration waited for was already
    /// replaced (a `WAIT_ONLY` reader two phases behind).
    ResultOverwritten {
        /// The phase whose result was asked for.
        phase: u64,
    },
    /// The accumulation operation is not defined for the value type
    /// (bitwise and logical operations on floats).
    UnsupportedOp {
        /// The operation.
        op: &'static str,
        /// The value type.
        ty: &'static str,
    },
    /// The phaser's tree has no room for another member.
    Full,
    /// A phase failed to complete (the inter-node collective failed, or the
    /// phase action panicked); every later operation reports it.
    Failed(PhaseFailure),
    /// A phaser tree with no leaf, or a degree below 2 (builder arguments).
    BadShape {
        /// Leaves asked for.
        leaves: usize,
        /// Degree asked for.
        degree: usize,
    },
    /// Creating an hcmpi-phaser failed in MPI.
    #[cfg(feature = "mpi")]
    Mpi {
        /// What the creation was doing.
        what: &'static str,
        /// The MPI error.
        source: hc_mpi::Error,
    },
}

/// Why a phase failed to complete ([`PhaserError::Failed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PhaseFailure {
    /// The phase action of `phase` panicked.
    ActionPanicked {
        /// The phase.
        phase: u64,
        /// The panic's message.
        message: String,
    },
    /// The inter-node collective of a phase failed.
    #[cfg(feature = "mpi")]
    Collective {
        /// The MPI operation (`"MPI_Ibarrier"`, `"MPI_Iallreduce"`).
        op: &'static str,
        /// The MPI error.
        source: hc_mpi::Error,
    },
    /// The inter-node collective completed without a value.
    NoValue {
        /// The MPI operation.
        op: &'static str,
    },
    /// A fuzzy barrier's collective for `phase` was not the next one in
    /// flight (a runtime bug).
    CollectiveOutOfOrder {
        /// The phase completing.
        phase: u64,
        /// The phase of the collective found instead, if any.
        found: Option<u64>,
    },
}

impl fmt::Display for PhaseFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PhaseFailure::ActionPanicked { phase, message } => {
                write!(f, "the phase action of phase {phase} panicked: {message}")
            }
            #[cfg(feature = "mpi")]
            PhaseFailure::Collective { op, .. } => write!(f, "{op} failed"),
            PhaseFailure::NoValue { op } => write!(f, "{op} returned no value"),
            PhaseFailure::CollectiveOutOfOrder { phase, found } => write!(
                f,
                "internal error: fuzzy collective of phase {phase} not in flight (found {found:?})"
            ),
        }
    }
}

impl std::error::Error for PhaseFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            #[cfg(feature = "mpi")]
            PhaseFailure::Collective { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl fmt::Display for PhaserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PhaserError::ModeViolation { op, mode } => {
                write!(f, "phaser: {op} is not allowed in {mode} mode")
            }
            PhaserError::StrongerChild { parent, child } => write!(
                f,
                "phaser: a {parent} registration cannot register a {child} child (a child's mode must be no stronger than its parent's)"
            ),
            PhaserError::AlreadySignaled { phase } => write!(
                f,
                "phaser: phase {phase} was already signaled; wait for it before signaling again"
            ),
            PhaserError::WaitBeforeSignal { phase } => write!(
                f,
                "phaser: wait for phase {phase} before signaling it (a SIGNAL_WAIT registration must signal first; use next)"
            ),
            PhaserError::NoSignalers { phase } => write!(
                f,
                "phaser: phase {phase} can never complete: no registration that signals is left"
            ),
            PhaserError::NoResult => {
                f.write_str("phaser: accum_get before any accumulation phase completed for this registration")
            }
            PhaserError::ResultOverwritten { phase } => write!(
                f,
                "phaser: the result of phase {phase} was already replaced by a later phase"
            ),
            PhaserError::UnsupportedOp { op, ty } => {
                write!(f, "phaser: accumulation {op} is not defined for {ty}")
            }
            PhaserError::Full => f.write_str(
                "phaser: no sub-phaser can take another member (a node counts at most 4095)",
            ),
            PhaserError::Failed(failure) => write!(f, "phaser: a phase failed: {failure}"),
            PhaserError::BadShape { leaves, degree } => write!(
                f,
                "phaser: a phaser tree needs at least one leaf and degree >= 2 \
                 (got {leaves} leaves, degree {degree})"
            ),
            #[cfg(feature = "mpi")]
            PhaserError::Mpi { what, .. } => write!(f, "phaser: cannot {what}"),
        }
    }
}

impl std::error::Error for PhaserError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PhaserError::Failed(failure) => Some(failure),
            #[cfg(feature = "mpi")]
            PhaserError::Mpi { source, .. } => Some(source),
            _ => None,
        }
    }
}
