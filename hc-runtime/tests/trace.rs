//! A traced runtime: `Builder::trace` writes one trace whose spans nest
//! on every worker, with a span per task (nested where a task's finish runs
//! others on its stack) and the user's own spans.
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
    let tasks = OUTER + OUTER * INNER;
    assert!(
        count("task") >= tasks,
        "{} task spans for {tasks} tasks",
        count("task")
    );
    assert_eq!(
        count("task") as u64,
        metrics.total().tasks_run,
        "one span per task run"
    );
    assert_eq!(count("leaf"), OUTER * INNER);
    assert_eq!(count("outer phase"), 1);
    // The finish body came through the injector: at least one steal.
    assert!(count("steal") >= 1, "{summary:?}");
    assert_eq!(count("steal") as u64, metrics.total().steals);
    let _ = std::fs::remove_dir_all(&dir);
}
