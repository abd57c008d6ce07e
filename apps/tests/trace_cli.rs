//! The `hcmpi-trace` command line: `check` summarizes a trace, `merge`
//! says what it merged, and both end their report quietly when its reader
//! has gone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use hcmpi_testkit::assert_stdout_failures_handled;

const TRACE: &str = env!("CARGO_BIN_EXE_hcmpi-trace");

/// A directory of this test process, holding `rank-0.json`: one span named
/// `traced work`, recorded here once (recording is per process).
fn trace_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("hcmpi-trace-cli-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        hc_runtime::trace::enable();
        drop(hc_runtime::trace::span("test", "traced work"));
        hc_runtime::trace::write_process(&dir.join("rank-0.json"), 0, "rank 0")
            .expect("write the trace");
        dir
    })
}

/// `check` of the trace, and `merge` of it into `merged` beside it (a file
/// of the caller's own: the tests run at once).
fn commands(merged: &str) -> [Vec<String>; 2] {
    let dir = trace_dir();
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    [
        vec!["check".into(), path("rank-0.json")],
        vec![
            "merge".into(),
            path("rank-0.json"),
            "-o".into(),
            path(merged),
        ],
    ]
}

#[test]
fn check_and_merge_report_what_they_found() {
    let [check, merge] = commands("merged-report.json");
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
    for args in commands("merged-gone-reader.json") {
        let context = format!("hcmpi-trace {args:?}");
        let mut command = Command::new(TRACE);
        command.args(&args);
        assert_stdout_failures_handled(&mut command, &context);
    }
}
