//! A traced runtime: `Builder::trace` writes one trace whose spans nest
//! on every worker: its runs of tasks (nested where a task's finish waits
//! and runs others on its stack), searches, parks, and the tasks' own spans.
//!
//! Tracing is per process, so this file is its own test binary.

use hc_runtime::trace::{check, ChromeTrace};
use hc_runtime::Runtime;

#[test]
#[cfg_attr(miri, ignore = "writes and reads a file")]
fn a_traced_runtime_writes_a_valid_trace() {
    let dir = std::env::temp_dir().join(format!("hc-runtime-trace-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let rt = Runtime::builder()
        .num_workers(2)
        .trace(Some(dir.clone()))
        .build()
        .unwrap();
    const OUTER: usize = 20;
    const INNER: usize = 10;
    rt.finish(|s| {
        let _phase = hc_runtime::trace::span("test", "outer phase");
        for _ in 0..OUTER {
            s.spawn(|_| {
                // A nested finish: its owner runs the inner tasks on its
                // stack, so their spans nest in this task's.
                hc_runtime::finish(|s| {
                    for _ in 0..INNER {
                        s.spawn(|_| {
                            let _leaf = hc_runtime::trace::span("test", "leaf");
                            std::hint::black_box((0..100).sum::<u64>());
                        });
                    }
                });
            });
        }
    });
    let metrics = rt.metrics();
    drop(rt);
    let trace = ChromeTrace::read(&dir.join("trace.json")).expect("the runtime wrote its trace");
    let summary = check(&trace).unwrap_or_else(|e| panic!("malformed trace: {e}"));
    let count = |name: &str| summary.by_name.get(name).copied().unwrap_or(0);
    // Workers' runs of tasks, with the number of tasks in each.
    assert!(count("run") >= 1, "{summary:?}");
    let ran: i64 = trace
        .trace_events
        .iter()
        .filter(|e| e.name == "run")
        .map(|e| e.args["tasks"].as_i64().unwrap())
        .sum();
    assert!(ran >= 1, "runs of no task: {summary:?}");
    assert_eq!(count("leaf"), OUTER * INNER);
    assert_eq!(count("outer phase"), 1);
    // The finish body came through the injector: at least one steal.
    assert!(count("steal") >= 1, "{summary:?}");
    assert_eq!(count("steal") as u64, metrics.total().steals);
    let _ = std::fs::remove_dir_all(&dir);
}
