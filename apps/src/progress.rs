//! Progress bars on stderr for long runs (UTS searches, Smith-Waterman
//! alignments, the benchmark drivers), drawn with `indicatif`.
//!
//! A [`Progress`] draws only when stderr is a terminal (and `TERM` is not
//! `dumb`), and only once its run has gone on for [`DELAY`]. Short runs, and
//! every run whose stderr is a pipe or a file — each rank under `mpiexec`,
//! the test suites, output redirected to a log — write nothing at all, so
//! their output stays byte for byte what it is without the bar. When stderr
//! is not a terminal a `Progress` holds no bar, and reporting to it is one
//! branch.
//!
//! Callers report work in batches (a tile, a benchmark run, 2^16 tree
//! nodes), never per item: while a bar exists, [`Progress::inc`] costs an
//! atomic add and a clock read. No thread draws: the reporting calls do, at
//! most [`REFRESH_HZ`] times a second, so a bar whose work reports rarely
//! moves in steps; the pending bar switches from a hidden target to stderr
//! on the first report after the delay.

use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// How long a run goes on before its bar appears.
pub const DELAY: Duration = Duration::from_secs(2);

/// Most redraws per second: enough to look live, few enough that drawing
/// never shows up next to the work.
pub const REFRESH_HZ: u8 = 10;

/// A progress bar (known length) or counter (unknown length) on stderr; see
/// the module docs for when it shows. Dropping it clears its line.
#[derive(Debug)]
pub struct Progress {
    /// `None` when stderr is not a terminal: nothing is ever drawn.
    bar: Option<Bar>,
}

#[derive(Debug)]
struct Bar {
    bar: ProgressBar,
    unit: &'static str,
    reveal: Reveal,
    /// Where the bar draws once revealed; taken by the reveal.
    target: Mutex<Option<ProgressDrawTarget>>,
}

impl Progress {
    /// A bar labelled `label` over `total` items of `unit` (plural, e.g.
    /// `"cells"`), or a counter with its rate when `total` is `None`.
    pub fn new(
        label: impl Into<Cow<'static, str>>,
        total: Option<u64>,
        unit: &'static str,
    ) -> Self {
        Self::with_target(
            label,
            total,
            unit,
            ProgressDrawTarget::stderr_with_hz(REFRESH_HZ),
            DELAY,
        )
    }

    /// A progress that never draws, for the callers that do not display
    /// (ranks other than the root, library calls).
    pub fn hidden() -> Self {
        Progress { bar: None }
    }

    /// [`Progress::new`] drawing to `target` after `delay`; a hidden
    /// target (what indicatif makes of a stderr that is not a terminal)
    /// gives [`Progress::hidden`].
    fn with_target(
        label: impl Into<Cow<'static, str>>,
        total: Option<u64>,
        unit: &'static str,
        target: ProgressDrawTarget,
        delay: Duration,
    ) -> Self {
        if target.is_hidden() {
            return Progress::hidden();
        }
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::hidden())
            .with_style(style(unit, total.is_some()))
            .with_prefix(label);
        Progress {
            bar: Some(Bar {
                bar,
                unit,
                reveal: Reveal::new(Instant::now(), delay),
                target: Mutex::new(Some(target)),
            }),
        }
    }

    /// Whether this progress may ever draw: stderr is a terminal.
    pub fn is_active(&self) -> bool {
        self.bar.is_some()
    }

    /// Reports `n` more items done.
    #[inline]
    pub fn inc(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.bar.inc(n);
            bar.reveal_if_due();
        }
    }

    /// Sets the length to `total` items: the counter becomes a bar. For
    /// drivers that learn their share of the work only once they run.
    pub fn set_length(&self, total: u64) {
        if let Some(bar) = &self.bar {
            bar.bar.set_length(total);
            bar.bar.set_style(style(bar.unit, true));
            bar.reveal_if_due();
        }
    }

    /// Shows `message` after the counts: what is running now.
    pub fn set_message(&self, message: impl Into<Cow<'static, str>>) {
        if let Some(bar) = &self.bar {
            bar.bar.set_message(message);
            bar.reveal_if_due();
        }
    }

    /// Writes `line` to stderr, above the bar when it shows (a plain
    /// `eprintln!` would land in the middle of the bar's line).
    pub fn println(&self, line: impl AsRef<str>) {
        let line = line.as_ref();
        match &self.bar {
            Some(bar) => bar.bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    /// Removes the bar and its line; the same as dropping it.
    pub fn finish(self) {}
}

/// A bar dropped without `finish` (a panic, an early return) still leaves
/// a clean line.
impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.bar.finish_and_clear();
        }
    }
}

impl Bar {
    fn reveal_if_due(&self) {
        // Once revealed, no clock read.
        if self.reveal.done() || !self.reveal.due(Instant::now()) {
            return;
        }
        let target = self
            .target
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(target) = target {
            self.bar.set_draw_target(target);
            // Draw now rather than at the next report, which may be seconds
            // away for a benchmark configuration.
            self.bar.tick();
        }
    }
}

/// When a pending bar appears: at the first report `delay` after `start`.
#[derive(Debug)]
struct Reveal {
    start: Instant,
    delay: Duration,
    done: AtomicBool,
}

impl Reveal {
    fn new(start: Instant, delay: Duration) -> Self {
        Reveal {
            start,
            delay,
            done: AtomicBool::new(false),
        }
    }

    fn done(&self) -> bool {
        self.done.load(Ordering::Relaxed)
    }

    /// `true` for exactly one call with `now` past the deadline, whichever
    /// thread makes it.
    fn due(&self, now: Instant) -> bool {
        !self.done()
            && now.saturating_duration_since(self.start) >= self.delay
            && !self.done.swap(true, Ordering::Relaxed)
    }
}

/// The bar's look: `label [=====>    ] 1.20 G/3.60 G cells · eta 2s
/// message`, or for an unknown length `label ⠙ 45.6 M nodes · 12.3 M nodes/s
/// · 4s message`. With the labels of this workspace a bar fits in 80
/// columns without its message, which is cut to what is left of the line,
/// so that the bar stays on one line.
fn style(unit: &'static str, known_length: bool) -> ProgressStyle {
    let template = if known_length {
        "{prefix} [{bar:20}] {count} · eta {eta} {wide_msg}"
    } else {
        "{prefix} {spinner} {count} · {rate} · {elapsed} {wide_msg}"
    };
    ProgressStyle::with_template(template)
        .expect("the templates are valid")
        .progress_chars("=> ")
        .with_key(
            "count",
            move |state: &ProgressState, w: &mut dyn fmt::Write| {
                let _ = w.write_str(&count(state.pos(), state.len(), unit));
            },
        )
        .with_key(
            "rate",
            move |state: &ProgressState, w: &mut dyn fmt::Write| {
                let _ = write!(w, "{} {unit}/s", si(state.per_sec()));
            },
        )
}

/// `12.3 M nodes`, or `1.20 G/3.60 G cells` with a length.
fn count(done: u64, total: Option<u64>, unit: &str) -> String {
    match total {
        Some(total) => format!("{}/{} {unit}", si(done as f64), si(total as f64)),
        None => format!("{} {unit}", si(done as f64)),
    }
}

/// `x` with three significant digits and an SI prefix (`k`, `M`, `G`, …);
/// whole numbers below 1000 as they are, anything not positive as `0`.
fn si(x: f64) -> String {
    if !x.is_finite() || x <= 0.0 {
        return "0".into();
    }
    let mut value = x;
    let mut prefix = "";
    for next in ["k", "M", "G", "T", "P", "E"] {
        // From 999.5 on, three digits would round to `1000`: next prefix.
        if value < 999.5 {
            break;
        }
        value /= 1000.0;
        prefix = next;
    }
    let digits = match value {
        v if prefix.is_empty() && v.fract() == 0.0 => 0,
        v if v < 9.995 => 2,
        v if v < 99.95 => 1,
        _ => 0,
    };
    if prefix.is_empty() {
        format!("{value:.digits$}")
    } else {
        format!("{value:.digits$} {prefix}")
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::sync::Arc;

    use indicatif::TermLike;

    use super::*;

    /// A terminal that records what is written to it.
    #[derive(Debug, Clone, Default)]
    struct Recorder(Arc<Mutex<String>>);

    impl Recorder {
        fn text(&self) -> String {
            self.0.lock().unwrap().clone()
        }

        fn push(&self, s: &str) -> io::Result<()> {
            self.0.lock().unwrap().push_str(s);
            Ok(())
        }
    }

    impl TermLike for Recorder {
        fn width(&self) -> u16 {
            120
        }
        fn move_cursor_up(&self, n: usize) -> io::Result<()> {
            self.push(&format!("<up {n}>"))
        }
        fn move_cursor_down(&self, n: usize) -> io::Result<()> {
            self.push(&format!("<down {n}>"))
        }
        fn move_cursor_right(&self, n: usize) -> io::Result<()> {
            self.push(&format!("<right {n}>"))
        }
        fn move_cursor_left(&self, n: usize) -> io::Result<()> {
            self.push(&format!("<left {n}>"))
        }
        fn write_line(&self, s: &str) -> io::Result<()> {
            self.push(&format!("{s}\n"))
        }
        fn write_str(&self, s: &str) -> io::Result<()> {
            self.push(s)
        }
        fn clear_line(&self) -> io::Result<()> {
            self.push("<clear>")
        }
        fn flush(&self) -> io::Result<()> {
            Ok(())
        }
    }

    fn recorded(total: Option<u64>, delay: Duration) -> (Progress, Recorder) {
        let term = Recorder::default();
        let target = ProgressDrawTarget::term_like_with_hz(Box::new(term.clone()), REFRESH_HZ);
        let progress = Progress::with_target("test run", total, "items", target, delay);
        (progress, term)
    }

    #[test]
    fn reveal_is_due_once_after_the_delay() {
        let start = Instant::now();
        let reveal = Reveal::new(start, DELAY);
        assert!(!reveal.due(start));
        assert!(!reveal.due(start + DELAY - Duration::from_millis(1)));
        assert!(reveal.due(start + DELAY));
        assert!(!reveal.due(start + DELAY));
        assert!(!reveal.due(start + 10 * DELAY));
        // A clock read before the start (another thread's) is not past it.
        let later = Reveal::new(start + DELAY, Duration::from_millis(1));
        assert!(!later.due(start));
    }

    #[test]
    fn si_keeps_three_digits() {
        assert_eq!(si(0.0), "0");
        assert_eq!(si(-3.0), "0");
        assert_eq!(si(f64::NAN), "0");
        assert_eq!(si(17.0), "17");
        assert_eq!(si(999.0), "999");
        assert_eq!(si(0.523), "0.52");
        assert_eq!(si(42.25), "42.2");
        assert_eq!(si(999.7), "1.00 k");
        assert_eq!(si(1234.0), "1.23 k");
        assert_eq!(si(45_600_000.0), "45.6 M");
        assert_eq!(si(999_999.0), "1.00 M");
        assert_eq!(si(3.6e9), "3.60 G");
        assert_eq!(si(512e12), "512 T");
    }

    #[test]
    fn counts_name_their_unit() {
        assert_eq!(count(3, Some(20), "runs"), "3/20 runs");
        assert_eq!(
            count(1_200_000_000, Some(3_600_000_000), "cells"),
            "1.20 G/3.60 G cells"
        );
        assert_eq!(count(45_600_000, None, "nodes"), "45.6 M nodes");
    }

    #[test]
    fn both_styles_render() {
        // `with_template` would panic in `style` on a bad template.
        let _ = style("items", true);
        let _ = style("items", false);
    }

    #[test]
    fn nothing_is_drawn_before_the_delay() {
        let (progress, term) = recorded(Some(10), Duration::from_secs(3600));
        assert!(progress.is_active());
        progress.set_message("first");
        for _ in 0..10 {
            progress.inc(1);
        }
        drop(progress);
        assert_eq!(term.text(), "");
    }

    #[test]
    fn the_bar_shows_after_the_delay_and_is_cleared_at_the_end() {
        let (progress, term) = recorded(None, Duration::ZERO);
        progress.set_message("working");
        progress.inc(1500);
        let shown = term.text();
        assert!(shown.contains("test run"), "{shown:?}");
        assert!(shown.contains("1.50 k items"), "{shown:?}");
        assert!(shown.contains("working"), "{shown:?}");
        progress.finish();
        let end = term.text();
        let last = &end[shown.len()..];
        assert!(
            last.contains("<clear>") && !last.contains("test run"),
            "{end:?}"
        );
    }

    #[test]
    fn a_length_set_later_makes_a_bar() {
        let (progress, term) = recorded(None, Duration::ZERO);
        progress.set_length(20);
        progress.inc(5);
        let shown = term.text();
        assert!(shown.contains("5/20 items"), "{shown:?}");
        assert!(shown.contains('['), "{shown:?}");
    }

    #[test]
    fn a_hidden_target_gives_a_hidden_progress() {
        let progress = Progress::with_target(
            "test run",
            Some(3),
            "items",
            ProgressDrawTarget::hidden(),
            Duration::ZERO,
        );
        assert!(!progress.is_active());
        progress.inc(1);
        progress.set_length(4);
        progress.set_message("ignored");
        assert!(!Progress::hidden().is_active());
    }
}
