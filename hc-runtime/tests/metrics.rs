//! `Runtime::metrics`: what the counters say after known work.

use hc_runtime::Runtime;

#[test]
fn tasks_and_steals_are_counted() {
    let rt = Runtime::builder()
        .num_workers(2)
        .trace(None)
        .build()
        .unwrap();
    let before = rt.metrics();
    assert_eq!(before.workers.len(), 2);
    assert_eq!(before.total().tasks_run, 0, "nothing ran yet");
    const TASKS: u64 = if cfg!(miri) { 50 } else { 5_000 };
    rt.finish(|s| {
        for _ in 0..TASKS {
            s.spawn(|_| {
                std::hint::black_box(0u64);
            });
        }
    });
    let after = rt.metrics();
    let delta = after.since(&before);
    // The spawned tasks plus the finish body injected from this thread;
    // a worker that ran the last ones may not have published its count yet
    // (it does every 256 tasks and when it runs out of work).
    let ran = delta.total().tasks_run;
    assert!(
        ran <= TASKS + 1 && ran + 2 * 255 > TASKS,
        "{ran} of {}",
        TASKS + 1
    );
    // The body was injected: some worker took it from the injector.
    assert!(delta.total().steals >= 1, "{delta:?}");
    for worker in &after.workers {
        let accounted = worker.working + worker.searching + worker.parked;
        assert!(
            accounted <= after.uptime + std::time::Duration::from_millis(1),
            "{worker:?} exceeds the uptime {:?}",
            after.uptime
        );
    }
}

#[test]
fn metrics_serialize_as_json_with_seconds() {
    let rt = Runtime::builder()
        .num_workers(1)
        .trace(None)
        .build()
        .unwrap();
    rt.finish(|s| s.spawn(|_| {}));
    let json = serde_json::to_value(rt.metrics()).unwrap();
    assert!(json["uptime"].is_f64(), "{json}");
    assert_eq!(json["workers"].as_array().unwrap().len(), 1);
    assert!(json["workers"][0]["tasks_run"].as_u64().unwrap() >= 2);
    assert!(json["workers"][0]["working"].is_f64(), "{json}");
}
