//! `HC_WATCHDOG_SECS`: a diagnostic for guids that never arrive.
//!
//! A guid that is awaited but never put leaves its `finish` waiting
//! forever, and with it every rank that waits for this one. With
//! `HC_WATCHDOG_SECS=N` set, a thread checks every `N` seconds whether the
//! space made progress (a put, a value or request received, a handle
//! created). If it did not, and some guid is still pending on this rank, it
//! prints the pending guids to stderr and ends the whole job
//! (`hc_mpi::abort_job`) with [`WATCHDOG_EXIT_CODE`] instead of letting it
//! hang. Choose `N` well above the longest stretch of pure
//! computation between two DDDF events.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::payload::Payload;
use crate::shared::{describe, Shared};
use crate::sync::Arc;
use crate::DddfError;

/// Environment variable: seconds without progress before the watchdog
/// reports the pending guids and ends the process.
pub const WATCHDOG_ENV: &str = "HC_WATCHDOG_SECS";

/// Exit status of a job ended by the watchdog.
pub const WATCHDOG_EXIT_CODE: i32 = 3;

/// A running watchdog; dropping it stops the thread.
pub(crate) struct Watchdog {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// The period from the environment, if set.
fn period_from_env() -> Result<Option<Duration>, DddfError> {
    match std::env::var(WATCHDOG_ENV) {
        Err(_) => Ok(None),
        Ok(value) => match value.trim().parse::<u64>() {
            Ok(secs) if secs > 0 => Ok(Some(Duration::from_secs(secs))),
            _ => Err(DddfError::BadWatchdogEnv { value }),
        },
    }
}

/// Starts the watchdog if `HC_WATCHDOG_SECS` asks for one.
pub(crate) fn start<T: Payload>(shared: &Arc<Shared<T>>) -> Result<Option<Watchdog>, DddfError> {
    let Some(period) = period_from_env()? else {
        return Ok(None);
    };
    let (stop, stopped) = mpsc::channel::<()>();
    let shared = Arc::clone(shared);
    let thread = std::thread::Builder::new()
        .name("dddf-watchdog".into())
        .spawn(move || watch(&shared, period, &stopped))
        .map_err(|e| DddfError::Thread {
            thread: "dddf-watchdog",
            source: e.into(),
        })?;
    Ok(Some(Watchdog {
        stop: Some(stop),
        thread: Some(thread),
    }))
}

fn watch<T: Payload>(shared: &Shared<T>, period: Duration, stopped: &mpsc::Receiver<()>) {
    let mut last = shared.progress();
    loop {
        match stopped.recv_timeout(period) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
        let now = shared.progress();
        if now == last {
            let pending = shared.pending_report();
            if !pending.is_empty() {
                let rank = shared.rank();
                hc_mpi::abort_job(
                    WATCHDOG_EXIT_CODE,
                    &format!(
                        "dddf watchdog: no progress for {} s; pending guids:{}",
                        period.as_secs(),
                        describe(rank, &pending)
                    ),
                );
            }
        }
        last = now;
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
