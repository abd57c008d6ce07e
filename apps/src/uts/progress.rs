//! A progress line on stderr for long searches run from a terminal.
//!
//! The searches report explored nodes in batches of [`BATCH`] through
//! [`add`], which costs one relaxed load while no display is running. The
//! display thread shows this rank's count and rate; with several ranks only
//! the root rank displays, so the figure is its share of the tree.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Nodes a search explores between two reports.
pub const BATCH: u64 = 1 << 16;

/// How long a run goes before the line appears, and how often it changes.
const FIRST_AFTER: Duration = Duration::from_secs(2);
const EVERY: Duration = Duration::from_millis(500);

static ENABLED: AtomicBool = AtomicBool::new(false);
static NODES: AtomicU64 = AtomicU64::new(0);

/// Reports `n` more explored nodes (cheap when no display runs).
#[inline]
pub fn add(n: u64) {
    if ENABLED.load(Ordering::Relaxed) {
        NODES.fetch_add(n, Ordering::Relaxed);
    }
}

/// The running display; dropping it stops it and clears the line.
#[derive(Debug)]
pub struct Display {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

/// Starts the display if stderr is a terminal, `None` otherwise.
pub fn start(label: String) -> Option<Display> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    NODES.store(0, Ordering::Relaxed);
    ENABLED.store(true, Ordering::Relaxed);
    let stop = Arc::new((Mutex::new(false), Condvar::new()));
    let signal = Arc::clone(&stop);
    let thread = std::thread::Builder::new()
        .name("uts-progress".into())
        .spawn(move || show(&label, &signal))
        .ok()?;
    Some(Display {
        stop,
        thread: Some(thread),
    })
}

fn show(label: &str, stop: &(Mutex<bool>, Condvar)) {
    let start = Instant::now();
    let (lock, wake) = stop;
    let mut stopped = lock.lock().unwrap_or_else(|p| p.into_inner());
    let mut wait = FIRST_AFTER;
    let mut shown = false;
    loop {
        let (guard, _) = wake
            .wait_timeout_while(stopped, wait, |stopped| !*stopped)
            .unwrap_or_else(|p| p.into_inner());
        stopped = guard;
        if *stopped {
            break;
        }
        let nodes = NODES.load(Ordering::Relaxed);
        let secs = start.elapsed().as_secs_f64();
        eprint!(
            "\r{label}: {:.1} M nodes, {:.1} M nodes/s, {secs:.0} s",
            nodes as f64 / 1e6,
            nodes as f64 / secs / 1e6
        );
        let _ = std::io::stderr().flush();
        shown = true;
        wait = EVERY;
    }
    if shown {
        // Clear the line so the summary starts on a clean one.
        eprint!("\r\x1b[K");
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        ENABLED.store(false, Ordering::Relaxed);
        let (lock, wake) = &*self.stop;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
