//! A timeline trace asked for with the builder, spans opened by tasks, and
//! the workers' counters read with `Runtime::metrics()`.
//!
//! Run: `target/release/examples/perf_trace` (no MPI here, no launcher).
//! Open the file it names at <https://ui.perfetto.dev> to see the timeline;
//! set `KEEP_TRACE=1` to keep it.

// sample-run: ranks=0

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use hc_runtime::trace::{self, Args, ChromeTrace};
use hc_runtime::Runtime;

const TASKS: u64 = 1_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // ANCHOR: trace
    let dir = std::env::temp_dir().join(format!("hcmpi-perf-trace-{}", std::process::id()));
    // Tracing on for this runtime, whatever HCMPI_TRACE says.
    let rt = Runtime::builder()
        .num_workers(2)
        .trace(Some(dir.clone()))
        .build()?;
    let checksum = AtomicU64::new(0);
    {
        let _solve = trace::span("app", "solve"); // a span on the main thread
        rt.finish(|s| {
            for i in 0..TASKS {
                let checksum = &checksum;
                s.spawn(move |_| {
                    let mut leaf = trace::span("app", "leaf"); // names this task in the timeline
                    let x: u64 = (0..2_000u64).map(|k| k ^ i).sum();
                    checksum.fetch_add(x, Relaxed);
                    leaf.set_args(Args::new().with("i", i as i64)); // shown in the details pane
                });
            }
        });
    } // `solve` ends here
    let metrics = rt.metrics(); // a fresh runtime: everything it did

    // Dropping the runtime stops the workers and writes <dir>/trace.json.
    drop(rt);
    // ANCHOR_END: trace

    let want: u64 = (0..TASKS)
        .map(|i| (0..2_000u64).map(|k| k ^ i).sum::<u64>())
        .sum();
    assert_eq!(checksum.into_inner(), want);

    // ANCHOR: check
    let trace = ChromeTrace::read(&dir.join("trace.json"))?;
    let summary = trace::check(&trace)?; // spans nest on every thread; async spans end
    let count = |name: &str| summary.by_name.get(name).copied().unwrap_or(0);
    assert_eq!(count("leaf"), TASKS as usize, "one span per task");
    assert_eq!(count("solve"), 1);
    assert!(
        count("run") >= 1,
        "workers record their runs of tasks: {summary:?}"
    );
    assert_eq!(trace.other_data.dropped_events, 0);
    // ANCHOR_END: check

    // ANCHOR: metrics
    assert_eq!(metrics.workers.len(), 2);
    let total = metrics.total();
    // The tasks plus the finish body, which the main thread handed to a
    // worker. A worker publishes its count every 256 tasks and when it runs
    // out of work, so one still busy at the snapshot may owe up to 255.
    let (jobs, slack) = (TASKS + 1, 255 * (metrics.workers.len() as u64 - 1));
    assert!(total.tasks_run <= jobs, "{total:?}");
    assert!(total.tasks_run + slack >= jobs, "{total:?}");
    for (i, w) in metrics.workers.iter().enumerate() {
        // working + searching + parked = the worker's life so far. A search
        // or park still under way counts as working until it ends.
        println!(
            "worker {i}: {:>5} tasks, {:>3} steals, {:>4} failed sweeps; \
             working {:.2?}, searching {:.2?}, parked {:.2?}",
            w.tasks_run, w.steals, w.failed_steals, w.working, w.searching, w.parked
        );
    }
    // ANCHOR_END: metrics

    println!(
        "{} events on {} threads in {}",
        summary.events,
        summary.threads,
        dir.join("trace.json").display()
    );
    if std::env::var_os("KEEP_TRACE").is_none() {
        std::fs::remove_dir_all(&dir)?;
    }
    Ok(())
}
