//! The `hcmpi-trace` command line: `check` summarizes a trace, `merge`
//! says what it merged, and both end their report quietly when its reader
//! has gone.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use hc_runtime::trace::ChromeTrace;
use hcmpi_testkit::assert_stdout_failures_handled;

const TRACE: &str = env!("CARGO_BIN_EXE_hcmpi-trace");

/// A trace of one span named `traced work`, recorded once (recording is
/// per process, and the tests run at once).
fn trace() -> &'static ChromeTrace {
    static TRACE: OnceLock<ChromeTrace> = OnceLock::new();
    TRACE.get_or_init(|| {
        hc_runtime::trace::enable();
        drop(hc_runtime::trace::span("test", "traced work"));
        hc_runtime::trace::take_process(0, "rank 0")
    })
}

/// A test's own directory, holding the trace as `rank-0.json`; removed
/// when dropped.
struct TraceDir(PathBuf);

impl TraceDir {
    fn new(test: &str) -> TraceDir {
        let dir = std::env::temp_dir().join(format!("hcmpi-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        trace()
            .write(&dir.join("rank-0.json"))
            .expect("write the trace");
        TraceDir(dir)
    }

    /// `check` of the trace, and `merge` of it into `merged.json`.
    fn commands(&self) -> [Vec<String>; 2] {
        let path = |name: &str| self.0.join(name).to_string_lossy().into_owned();
        [
            vec!["check".into(), path("rank-0.json")],
            vec![
                "merge".into(),
                path("rank-0.json"),
                "-o".into(),
                path("merged.json"),
            ],
        ]
    }
}

impl Drop for TraceDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn check_and_merge_report_what_they_found() {
    let dir = TraceDir::new("trace-cli-report");
    let [check, merge] = dir.commands();
    let out = Command::new(TRACE).args(&merge).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{merge:?}: {out:?}");
    assert!(text.starts_with("merged 1 file(s) into "), "{text}");
    let out = Command::new(TRACE).args(&check).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{check:?}: {out:?}");
    assert!(text.contains(" process(es), 1 thread(s)"), "{text}");
    assert!(text.contains("1  traced work"), "{text}");
}

#[test]
#[cfg(target_os = "linux")]
fn a_gone_reader_ends_the_report_quietly_and_a_full_disk_is_an_error() {
    let dir = TraceDir::new("trace-cli-stdout");
    for args in dir.commands() {
        let context = format!("hcmpi-trace {args:?}");
        let mut command = Command::new(TRACE);
        command.args(&args);
        assert_stdout_failures_handled(&mut command, &context);
    }
}
