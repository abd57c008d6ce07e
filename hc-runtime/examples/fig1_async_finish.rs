//! Fig. 1 of the HCMPI paper: the async/finish schema.
//!
//! ```text
//! T0:  finish {
//!          async { STMT1; }   // T1
//!          STMT2;
//!      }
//!      STMT3;
//! ```
//!
//! T0 spawns T1, which may run STMT1 in parallel with T0's STMT2; `finish`
//! does not let T0 reach STMT3 before T1 has completed.
//!
//! Run: `cargo run --release -p hc-runtime --example fig1_async_finish`
//! (`HC_WORKERS` sets the number of workers).

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use hc_runtime::{current_worker_index, finish};

/// The finish let T0 go on to STMT3 before a statement had run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("STMT3 reached before {task} ran {statement}")]
#[non_exhaustive]
pub struct FinishBroken {
    /// The task that had not run its statement.
    pub task: &'static str,
    /// The statement.
    pub statement: &'static str,
}

/// Runs the schema and describes what happened, or why it went wrong.
pub fn run() -> Result<String, FinishBroken> {
    let stmt1_done = AtomicBool::new(false);
    let stmt2_done = AtomicBool::new(false);
    let log = Mutex::new(Vec::new());
    let where_ = |task: &str, stmt: &str| {
        let worker = current_worker_index().map_or("?".to_owned(), |w| w.to_string());
        log.lock()
            .unwrap()
            .push(format!("{task} ran {stmt} on worker {worker}"));
    };

    finish(|s| {
        // T1
        s.spawn(|_| {
            where_("T1", "STMT1");
            stmt1_done.store(true, Ordering::SeqCst);
        });
        // T0, in parallel with T1
        where_("T0", "STMT2");
        stmt2_done.store(true, Ordering::SeqCst);
    });

    // STMT3: after the finish, both statements must have completed.
    for (done, task, statement) in [(&stmt1_done, "T1", "STMT1"), (&stmt2_done, "T0", "STMT2")] {
        if !done.load(Ordering::SeqCst) {
            return Err(FinishBroken { task, statement });
        }
    }
    let mut log = log.into_inner().unwrap();
    log.sort();
    Ok(format!(
        "fig1: {}; then T0 ran STMT3 after the finish: OK",
        log.join(", ")
    ))
}

#[allow(dead_code)] // unused when tests/examples.rs includes this file
fn main() -> ExitCode {
    match run() {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("fig1: FAILED: {error}");
            ExitCode::FAILURE
        }
    }
}
