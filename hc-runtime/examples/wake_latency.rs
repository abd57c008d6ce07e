//! How long a parked thread takes to run again after an unpark, by how
//! long it was idle: what an idle computation worker costs to wake on this
//! machine.
//!
//! A sleeper parks as an idle worker does (a crossbeam `Parker`); the main
//! thread keeps its own core busy for `IDLE_US`, unparks it, and the
//! sleeper records the time from the unpark to its return from `park`. On
//! a virtual machine an idle virtual CPU halts, and waking it costs far
//! more than on bare metal, more so the longer it was idle: that is the
//! start-up cost of every short parallel run.
//!
//! Run: `cargo run --release -p hc-runtime --example wake_latency [IDLE_US...]`
//! (default 50 200 1000 5000); prints the percentiles of 200 wakes per
//! idle time, in microseconds. With idle times of a few microseconds the
//! unpark may come before the sleeper has parked, and the latency shown
//! is then only that of the parker's token.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crossbeam_utils::sync::Parker;

/// Wakes measured per idle time.
pub const WAKES: usize = 200;

#[allow(dead_code)] // unused when tests/examples.rs includes this file
fn main() -> ExitCode {
    let mut idle_times = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.parse::<u64>() {
            Ok(us) if us > 0 => idle_times.push(us),
            _ => {
                eprintln!(
                    "wake_latency: an idle time is a positive number of microseconds, not '{arg}'"
                );
                return ExitCode::from(2);
            }
        }
    }
    if idle_times.is_empty() {
        idle_times = vec![50, 200, 1000, 5000];
    }
    println!("idle (us)   p10    p50    p90    p99    max  (wake latency, us)");
    for idle in idle_times {
        let mut latencies = measure(Duration::from_micros(idle));
        latencies.sort_by(f64::total_cmp);
        let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
        println!(
            "{idle:>9} {:>6.1} {:>6.1} {:>6.1} {:>6.1} {:>6.1}",
            at(0.1),
            at(0.5),
            at(0.9),
            at(0.99),
            at(1.0)
        );
    }
    ExitCode::SUCCESS
}

/// `WAKES` wake latencies, in microseconds, of a thread parked for `idle`.
pub fn measure(idle: Duration) -> Vec<f64> {
    let epoch = Instant::now();
    let parker = Parker::new();
    let unparker = parker.unparker().clone();
    // Nanoseconds since `epoch` at the unpark; 0 once the sleeper took it.
    let unparked_at = AtomicU64::new(0);
    let (parked, wait_for_park) = mpsc::channel::<()>();
    let unparked_at = &unparked_at;
    std::thread::scope(|s| {
        let sleeper = s.spawn(move || {
            let mut latencies = Vec::with_capacity(WAKES);
            while latencies.len() < WAKES {
                // Tell the waker this thread is about to park; it starts
                // its idle time from there.
                if parked.send(()).is_err() {
                    break;
                }
                parker.park();
                let woke = epoch.elapsed().as_nanos() as u64;
                let sent = unparked_at.swap(0, Ordering::AcqRel);
                if sent != 0 {
                    latencies.push(woke.saturating_sub(sent) as f64 / 1e3);
                }
            }
            latencies
        });
        while wait_for_park.recv().is_ok() {
            let start = Instant::now();
            // Busy, as a worker's neighbour computing a tile would be.
            while start.elapsed() < idle {
                std::hint::spin_loop();
            }
            unparked_at.store(epoch.elapsed().as_nanos() as u64, Ordering::Release);
            unparker.unpark();
        }
        // The sleeper has its samples and dropped its sender.
        sleeper.join().expect("the sleeper does not panic")
    })
}
