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
    /// assert!(phasers::Mode::SignalOnly.can_signal());
    /// assert!(!phasers::Mode::WaitOnly.can_signal());
    /// ```
    pub fn can_signal(self) -> bool {
        matches!(self, Mode::SignalWait | Mode::SignalOnly)
    }

    /// Whether the mode may wait.
    ///
    /// ```
    /// assert!(phasers::Mode::WaitOnly.can_wait());
    /// assert!(!phasers::Mode::SignalOnly.can_wait());
    /// ```
    pub fn can_wait(self) -> bool {
        matches!(self, Mode::SignalWait | Mode::WaitOnly)
    }

    /// Whether a registration in this mode may create one in `child`: the
    /// child's capabilities must be a subset of the parent's.
    ///
    /// ```
    /// use phasers::Mode;
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
    /// assert_eq!(phasers::Mode::SignalWait.name(), "SIGNAL_WAIT");
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
    Failed(String),
    /// A configuration error (builder arguments).
    Config(String),
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
            PhaserError::Failed(message) => write!(f, "phaser: a phase failed: {message}"),
            PhaserError::Config(message) => write!(f, "phaser: {message}"),
        }
    }
}

impl std::error::Error for PhaserError {}
