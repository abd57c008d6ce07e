//! The progress counter of long searches, on a terminal only (see
//! [`crate::progress`]).
//!
//! The search loops are too hot to hold a handle to a bar: they report
//! explored nodes in batches of [`BATCH`] through [`add`], a free function
//! that costs one relaxed load while no display runs, and reaches the one
//! bar of the process, started by [`start`], while one does. Each rank
//! counts its own nodes; under `mpiexec` the ranks' stderr is a pipe and
//! nothing displays, so a bar shows only for a run started from a terminal
//! without a launcher (one rank).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{PoisonError, RwLock};

use crate::progress::Progress;

/// Nodes a search explores between two reports.
pub const BATCH: u64 = 1 << 16;

/// Whether [`ACTIVE`] holds a bar: the one load of [`add`] when it does not.
static ENABLED: AtomicBool = AtomicBool::new(false);
static ACTIVE: RwLock<Option<Progress>> = RwLock::new(None);

/// Reports `n` more explored nodes (cheap when no display runs).
#[inline]
pub fn add(n: u64) {
    if ENABLED.load(Ordering::Relaxed) {
        add_to_bar(n);
    }
}

#[cold]
#[inline(never)]
fn add_to_bar(n: u64) {
    let active = ACTIVE.read().unwrap_or_else(PoisonError::into_inner);
    if let Some(bar) = active.as_ref() {
        bar.inc(n);
    }
}

/// The running display; dropping it removes the bar and its line.
#[derive(Debug)]
pub struct Display(());

/// Starts the display (a counter of nodes with their rate, labelled
/// `label`) if stderr is a terminal, `None` otherwise or while another
/// display runs.
pub fn start(label: String) -> Option<Display> {
    let bar = Progress::new(label, None, "nodes");
    if !bar.is_active() {
        return None;
    }
    let mut active = ACTIVE.write().unwrap_or_else(PoisonError::into_inner);
    if active.is_some() {
        return None;
    }
    *active = Some(bar);
    ENABLED.store(true, Ordering::Relaxed);
    Some(Display(()))
}

impl Drop for Display {
    fn drop(&mut self) {
        ENABLED.store(false, Ordering::Relaxed);
        // Dropping the bar clears its line.
        let bar = ACTIVE
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(bar);
    }
}
