//! The one place the communication runtime takes its modelled primitives
//! from: loom's under `--cfg loom`, std's otherwise.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU8, Ordering};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU8, Ordering};
