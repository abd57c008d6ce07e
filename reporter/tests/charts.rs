//! Every chart of the report drawn from a small fixed set of rows
//! (`tests/data/`, taken from real runs), and the page that shows them.

use std::path::{Path, PathBuf};

use report::chart::{Kind, Scale, SIZE};
use report::figures::figures;
use report::{render, Dataset, ReportError};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// A fresh directory under cargo's scratch space for integration tests.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("report-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Width and height from a PNG's IHDR chunk, after checking the signature.
fn png_size(file: &Path) -> (u32, u32) {
    let bytes = std::fs::read(file).unwrap();
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        file.display()
    );
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn the_fixed_rows_load() {
    let data = Dataset::load(&fixtures()).unwrap();
    let run = data.run.as_ref().unwrap();
    assert_eq!((run.machine.cores, run.quick), (2, false));
    assert!(run.failed.is_empty());
    assert_eq!(data.overhead.len(), 15);
    assert!(data.threadbench.iter().any(|r| r.bench == "latency"));
    assert!(data.syncbench.iter().any(|r| r.bench == "barrier"));
    assert_eq!(data.uts.len(), 6);
    assert!(data.sw.iter().any(|c| c.report.mode == "parasail"));
}

#[test]
fn figures_hold_the_rows_values() {
    let data = Dataset::load(&fixtures()).unwrap();
    let figures = figures(&data);
    let files: Vec<&str> = figures.iter().map(|f| f.chart.file.as_str()).collect();
    assert_eq!(
        files,
        [
            "latency.png",
            "msgrate.png",
            "barrier.png",
            "uts.png",
            "sw.png",
            "overhead.png"
        ]
    );
    let chart = |file: &str| &figures.iter().find(|f| f.chart.file == file).unwrap().chart;

    let latency = chart("latency.png");
    assert_eq!(latency.categories, ["0", "8", "64", "256", "1K"]);
    assert_eq!((latency.kind, latency.scale), (Kind::Lines, Scale::Log));
    let row = data
        .threadbench
        .iter()
        .find(|r| {
            r.bench == "latency" && r.threads == 1 && r.bytes == 64 && r.variant == "mpi-single"
        })
        .unwrap();
    let series = latency
        .series
        .iter()
        .find(|s| s.name == "mpi-single")
        .unwrap();
    assert_eq!(series.values[2], Some(row.value));

    // Relative to rayon: rayon itself is 1, hc is the ratio of the rows.
    let overhead = chart("overhead.png");
    let rayon = overhead.series.iter().find(|s| s.name == "rayon").unwrap();
    assert!(rayon.values.iter().flatten().all(|v| *v == 1.0));
    let value = |variant: &str, param: &str| {
        data.overhead
            .iter()
            .find(|r| r.variant == variant && r.param == param)
            .unwrap()
            .value
    };
    let hc = overhead.series.iter().find(|s| s.name == "hc").unwrap();
    let flat = overhead
        .categories
        .iter()
        .position(|c| c == "spawn flat n=1000000")
        .unwrap();
    assert_eq!(
        hc.values[flat],
        Some(value("hc", "flat n=1000000") / value("rayon", "flat n=1000000"))
    );
    assert!(
        !overhead
            .categories
            .iter()
            .any(|c| c.starts_with("idle") || c.starts_with("ddf")),
        "cases without a rayon baseline are table-only: {:?}",
        overhead.categories
    );

    let uts = chart("uts.png");
    assert_eq!(uts.categories.len(), 6);
    assert_eq!(
        uts.series[0].values[0],
        Some(data.uts[0].report.nodes_per_sec / 1e6)
    );
    let sw = chart("sw.png");
    assert_eq!(sw.categories.last().unwrap(), "parasail 1x1");
}

#[test]
fn every_chart_renders_and_the_page_links_it() {
    let data = Dataset::load(&fixtures()).unwrap();
    let out = scratch("all");
    let rendered = render(&data, &out).unwrap();
    assert_eq!(rendered.charts.len(), 6);
    for chart in &rendered.charts {
        assert_eq!(png_size(chart), SIZE, "{}", chart.display());
        // A blank canvas compresses to a few kB; axes, text and data do not.
        let bytes = std::fs::metadata(chart).unwrap().len();
        assert!(bytes > 12_000, "{} has only {bytes} bytes", chart.display());
    }
    let page = std::fs::read_to_string(&rendered.page).unwrap();
    assert!(page.contains("2 cores · Test CPU @ 2.0GHz · MPICH Version: 4.0.2 · 2026-11-24"));
    for figure in figures(&data) {
        assert!(page.contains(&format!("## {}", figure.heading)), "{page}");
        assert!(
            page.contains(&format!("]({})", figure.chart.file)),
            "{page}"
        );
    }
    assert!(
        page.contains("| 1K "),
        "latency table by message size:\n{page}"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_partial_data_set_gives_a_partial_page() {
    let out = scratch("partial");
    let data = out.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::copy(
        fixtures().join("overhead.jsonl"),
        data.join("overhead.jsonl"),
    )
    .unwrap();
    let rendered = render(&Dataset::load(&data).unwrap(), &out).unwrap();
    assert_eq!(rendered.charts, [out.join("overhead.png")]);
    let page = std::fs::read_to_string(&rendered.page).unwrap();
    assert!(
        page.contains("## Task overhead") && !page.contains("## UTS"),
        "{page}"
    );
    assert!(page.contains("unknown machine"), "{page}");
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_bad_row_is_named_by_file_and_line() {
    let dir = scratch("bad");
    let good = std::fs::read_to_string(fixtures().join("syncbench.jsonl")).unwrap();
    let first = good.lines().next().unwrap();
    std::fs::write(
        dir.join("syncbench.jsonl"),
        format!("{first}\n{{\"bench\":1}}\n"),
    )
    .unwrap();
    match Dataset::load(&dir) {
        Err(ReportError::Parse { file, line, .. }) => {
            assert_eq!(file, dir.join("syncbench.jsonl"));
            assert_eq!(line, 2);
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    assert!(matches!(
        Dataset::load(&dir.join("missing")),
        Err(ReportError::NoData(_))
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_data_is_drawn_not_only_the_frame() {
    let data = Dataset::load(&fixtures()).unwrap();
    let out = scratch("blank");
    let figure = figures(&data)
        .into_iter()
        .find(|f| f.chart.file == "uts.png")
        .unwrap();
    let mut blank = figure.chart.clone();
    for series in &mut blank.series {
        // Same axes (the y range is kept by one value), no bars.
        let keep = series
            .values
            .iter()
            .flatten()
            .fold(0.0f64, |a, &b| a.max(b));
        series.values = vec![None; series.values.len()];
        series.values[0] = Some(keep);
    }
    figure
        .chart
        .render("caption", &out.join("full.png"))
        .unwrap();
    blank.render("caption", &out.join("blank.png")).unwrap();
    let full = std::fs::read(out.join("full.png")).unwrap();
    let blank = std::fs::read(out.join("blank.png")).unwrap();
    assert_ne!(full, blank, "the bars change the picture");
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn barrier_rows_sort_by_bench_then_tasks_then_ranks() {
    let data = Dataset::load(&fixtures()).unwrap();
    let figure = figures(&data)
        .into_iter()
        .find(|f| f.chart.file == "barrier.png")
        .unwrap();
    let rows: Vec<&str> = figure
        .table
        .lines()
        .skip(2)
        .map(|l| l.split('|').nth(1).unwrap().trim())
        .collect();
    let key = |row: &str| {
        let (bench, shape) = row.split_once(' ').unwrap();
        let (ranks, tasks) = shape.split_once('×').unwrap();
        let (ranks, tasks): (usize, usize) = (ranks.parse().unwrap(), tasks.parse().unwrap());
        (bench != "barrier", ranks * tasks, ranks)
    };
    assert!(rows.len() > 4, "{rows:?}");
    assert!(rows.windows(2).all(|w| key(w[0]) < key(w[1])), "{rows:?}");
    // The chart's x axis is the tasks in the barrier, ascending.
    assert_eq!(figure.chart.categories, ["2", "4", "8"]);
}

#[test]
fn a_failed_step_leaves_no_data_but_its_log() {
    let data = scratch("failed-step");
    std::fs::write(data.join("overhead.jsonl"), "{\"stale\":1}\n").unwrap();
    let step = report::Step {
        name: "overhead",
        command: vec![
            "sh".into(),
            "-c".into(),
            "echo partial; echo 'it broke' >&2; exit 3".into(),
        ],
        stdout: "overhead.jsonl",
        rows: None,
        env: Vec::new(),
        limit: report::collect::STEP_LIMIT,
    };
    match report::collect::run_step(&step, &data) {
        Err(ReportError::Benchmark {
            stderr_tail,
            status,
            ..
        }) => {
            assert_eq!(stderr_tail, "it broke");
            assert_eq!(status.code(), Some(3));
        }
        other => panic!("expected a benchmark failure, got {other:?}"),
    }
    assert!(
        !data.join("overhead.jsonl").exists(),
        "stale or partial rows stayed"
    );
    assert!(data.join("overhead.log").exists());
    std::fs::remove_dir_all(&data).unwrap();
}

#[test]
fn a_hung_step_is_stopped_at_its_limit() {
    let data = scratch("hung-step");
    let step = report::Step {
        name: "uts",
        // A step that would never end, and a child of it that would
        // outlive a kill of the shell alone.
        command: vec!["sh".into(), "-c".into(), "sleep 600 & sleep 600".into()],
        stdout: "uts.md",
        rows: Some("uts.jsonl"),
        env: Vec::new(),
        limit: std::time::Duration::from_millis(300),
    };
    let started = std::time::Instant::now();
    match report::collect::run_step(&step, &data) {
        Err(ReportError::TimedOut { limit, .. }) => assert_eq!(limit, step.limit),
        other => panic!("expected a time-out, got {other:?}"),
    }
    // Ended by the limit, not by the sleeps.
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert!(!data.join("uts.md").exists());
    std::fs::remove_dir_all(&data).unwrap();
}
