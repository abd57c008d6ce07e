//! Typed errors for UTS parameter handling.

use std::fmt;

/// Errors produced while building a tree description.
#[derive(Debug, Clone, PartialEq)]
pub enum UtsError {
    /// A numeric parameter has a value outside its valid range.
    InvalidParam {
        /// The reference flag, e.g. `-b`.
        flag: &'static str,
        /// What the flag means, e.g. `root branching factor`.
        what: &'static str,
        /// The rejected value, as text.
        value: String,
        /// Which values are accepted.
        expected: &'static str,
    },
    /// `-t` names no known tree type.
    UnknownTreeType(i64),
    /// `-a` names no known geometric shape function.
    UnknownShape(i64),
    /// `--tree` names no known sample tree.
    UnknownSampleTree(String),
}

impl fmt::Display for UtsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UtsError::InvalidParam {
                flag,
                what,
                value,
                expected,
            } => write!(
                f,
                "invalid value '{value}' for {flag} ({what}): expected {expected}"
            ),
            UtsError::UnknownTreeType(t) => write!(
                f,
                "unknown tree type '{t}' for -t: expected 0 (binomial), 1 (geometric), \
                 2 (hybrid) or 3 (balanced)"
            ),
            UtsError::UnknownShape(a) => write!(
                f,
                "unknown geometric shape '{a}' for -a: expected 0 (linear), 1 (expdec), \
                 2 (cyclic) or 3 (fixed)"
            ),
            UtsError::UnknownSampleTree(name) => write!(
                f,
                "unknown sample tree '{name}': expected one of {}",
                crate::uts::samples::names().join(", ")
            ),
        }
    }
}

impl std::error::Error for UtsError {}
