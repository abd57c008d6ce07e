//! An idle runtime parks its workers instead of spinning, and `HC_WORKERS`
//! sets the default number of workers.
//!
//! The two tests are serialized: the CPU measurement covers the whole process,
//! so it must not overlap with the other test starting child processes.

#![cfg(not(miri))] // child processes and CPU-time measurements

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hc_runtime::{default_runtime, BuildError, Builder, Runtime, WORKERS_ENV};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// User + system CPU time consumed so far by this whole process.
#[cfg(unix)]
fn process_cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is valid for writes of one `rusage`, which is all
    // getrusage writes.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    assert_eq!(
        rc,
        0,
        "getrusage failed: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: zero-initialized plain data, filled in by a successful getrusage.
    let usage = unsafe { usage.assume_init() };
    let time = |tv: libc::timeval| {
        Duration::from_secs(tv.tv_sec as u64) + Duration::from_micros(tv.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

#[cfg(unix)]
#[test]
fn idle_runtime_uses_little_cpu() {
    let _serial = serial();
    let rt = Runtime::builder().num_workers(4).build().unwrap();
    // Give every worker something to do first, so that each has gone through
    // the search-back-off-park path when the pool runs dry.
    let hits = AtomicUsize::new(0);
    rt.finish(|s| {
        for _ in 0..20_000 {
            s.spawn(|_| {
                hits.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    assert_eq!(hits.load(Ordering::Relaxed), 20_000);

    let cpu_before = process_cpu_time();
    let wall_before = Instant::now();
    // A measurement window, not synchronization: nothing waits for anything
    // here; we only let wall-clock time pass while the pool has no work.
    std::thread::sleep(Duration::from_millis(500));
    let cpu = process_cpu_time() - cpu_before;
    let wall = wall_before.elapsed();

    // A spinning worker would use about one core per worker (4 workers, so
    // up to ~2 cores on this 2-core box); a parked pool uses next to nothing.
    // 25% of one core leaves ample room for noise.
    assert!(
        cpu < wall / 4,
        "idle runtime with 4 workers used {cpu:?} of CPU over {wall:?} of wall time"
    );

    // The parked workers wake up for new work.
    rt.finish(|s| {
        for _ in 0..1_000 {
            s.spawn(|_| {
                hits.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    assert_eq!(hits.load(Ordering::Relaxed), 21_000);
}

/// Set (to a scenario name) in the child processes started by
/// `hc_workers_env_is_honoured`.
const CHILD_ENV: &str = "HC_RUNTIME_IDLE_TEST_CHILD";

/// Runs this test binary again, with `HC_WORKERS=value`, executing only
/// `child_reads_env` in scenario `scenario`; returns the child's stdout.
fn run_child(value: &str, scenario: &str) -> String {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_reads_env",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, scenario)
        .env(WORKERS_ENV, value)
        .output()
        .expect("could not start the test binary as a child process");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "child ({WORKERS_ENV}={value:?}, scenario {scenario}) failed: {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
    // Make sure the child really ran the scenario (a filter that matched no
    // test would also exit successfully).
    let marker = format!("child scenario {scenario}: checked");
    assert!(
        stdout.contains(&marker),
        "no {marker:?} in the child's output:\n{stdout}\n{stderr}"
    );
    stdout
}

#[test]
fn hc_workers_env_is_honoured() {
    let _serial = serial();
    assert_eq!(WORKERS_ENV, "HC_WORKERS");
    run_child("3", "three");
    run_child(" 5 ", "five");
    run_child("abc", "invalid");
    run_child("0", "invalid");
    run_child("-2", "invalid");
}

/// The child side of `hc_workers_env_is_honoured`. In the normal test run
/// (no `CHILD_ENV`) it does nothing: environment variables are process-wide,
/// so the checks run in a child process that has `HC_WORKERS` set from the
/// start.
#[test]
fn child_reads_env() {
    let Ok(scenario) = std::env::var(CHILD_ENV) else {
        return;
    };
    let env_value = std::env::var(WORKERS_ENV).unwrap();
    match scenario.as_str() {
        "three" | "five" => {
            let expected = if scenario == "three" { 3 } else { 5 };
            assert_eq!(Builder::new().resolved_num_workers().unwrap(), expected);
            let rt = Runtime::new();
            assert_eq!(rt.num_workers(), expected);
            let seen = rt.finish(|s| s.num_workers());
            assert_eq!(seen, expected);
            assert_eq!(default_runtime().num_workers(), expected);
            // An explicit count takes precedence over the environment.
            assert_eq!(
                Runtime::builder()
                    .num_workers(2)
                    .build()
                    .unwrap()
                    .num_workers(),
                2
            );
        }
        "invalid" => {
            let err = Builder::new().build().unwrap_err();
            match &err {
                BuildError::InvalidWorkersEnv(value) => assert_eq!(value, &env_value),
                other => panic!("expected InvalidWorkersEnv, got {other:?}"),
            }
            let message = err.to_string();
            assert!(message.contains("HC_WORKERS"), "{message}");
            assert!(message.contains(env_value.as_str()), "{message}");
            assert!(matches!(
                Builder::new().resolved_num_workers(),
                Err(BuildError::InvalidWorkersEnv(_))
            ));
            // An explicit count does not consult the environment at all.
            assert_eq!(
                Runtime::builder()
                    .num_workers(2)
                    .build()
                    .unwrap()
                    .num_workers(),
                2
            );
            // Runtime::new reports the error by panicking with the message.
            let payload = std::panic::catch_unwind(Runtime::new).unwrap_err();
            let text = payload
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default();
            assert!(text.contains("HC_WORKERS"), "{text:?}");
        }
        other => panic!("unknown child scenario {other:?}"),
    }
    println!("child scenario {scenario}: checked");
}

/// Workers of an oversubscribed runtime ask for precise timers, so that
/// their naps between polls are not stretched by the default timer slack;
/// other runtimes leave the slack they inherit.
#[cfg(target_os = "linux")]
#[test]
fn oversubscribed_workers_ask_for_precise_timers() {
    fn slack_ns() -> u64 {
        // SAFETY: PR_GET_TIMERSLACK takes no argument and returns the
        // calling thread's slack; no memory is passed.
        let slack = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK) };
        u64::try_from(slack).expect("PR_GET_TIMERSLACK succeeds")
    }
    let _serial = serial();
    let inherited = slack_ns();
    assert!(
        inherited > 1_000,
        "the default slack is larger: {inherited}"
    );
    for (oversubscribed, expected) in [(false, inherited), (true, 1_000)] {
        let rt = Builder::new()
            .num_workers(1)
            .oversubscribed(oversubscribed)
            .build()
            .unwrap();
        assert_eq!(
            rt.block_on(async { slack_ns() }),
            expected,
            "oversubscribed: {oversubscribed}"
        );
    }
}
