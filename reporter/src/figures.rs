//! The report's figures: each a chart and the table of the same numbers,
//! built from a [`Dataset`].

use benches::report::{format_value, markdown_table};

use crate::chart::{Chart, Kind, Scale, Series};
use crate::rows::{Dataset, SyncRow, ThreadRow};

/// One section of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Section heading.
    pub heading: String,
    /// What the chart shows and how it was measured.
    pub note: String,
    /// The chart (its `file` is the PNG's name).
    pub chart: Chart,
    /// The numbers of the chart as a markdown table, or the producing
    /// script's own table when it has one.
    pub table: String,
}

/// Every figure the data set has numbers for, in report order.
pub fn figures(data: &Dataset) -> Vec<Figure> {
    [
        latency(&data.threadbench),
        message_rate(&data.threadbench),
        barrier(&data.syncbench),
        uts(data),
        smith_waterman(data),
        overhead(data),
    ]
    .into_iter()
    .flatten()
    .filter(|f| !f.chart.is_empty())
    .collect()
}

/// Values keyed by (category, series), categories sorted by a numeric key
/// (or kept in first-seen order), series in first-seen order.
#[derive(Debug, Default)]
struct Pivot {
    categories: Vec<(f64, String)>,
    series: Vec<String>,
    cells: Vec<(usize, usize, f64)>,
}

impl Pivot {
    /// A pivot whose series start in this order.
    fn with_series(order: &[&str]) -> Pivot {
        Pivot {
            series: order.iter().map(|s| s.to_string()).collect(),
            ..Pivot::default()
        }
    }

    fn insert(&mut self, order: f64, category: String, series: String, value: f64) {
        let c = match self
            .categories
            .iter()
            .position(|(_, name)| *name == category)
        {
            Some(c) => c,
            None => {
                self.categories.push((order, category));
                self.categories.len() - 1
            }
        };
        let s = match self.series.iter().position(|name| *name == series) {
            Some(s) => s,
            None => {
                self.series.push(series);
                self.series.len() - 1
            }
        };
        self.cells.retain(|&(ci, si, _)| (ci, si) != (c, s));
        self.cells.push((c, s, value));
    }

    /// Categories in ascending `order` (stable for equal keys).
    fn sorted_categories(&self) -> Vec<usize> {
        let mut index: Vec<usize> = (0..self.categories.len()).collect();
        index.sort_by(|&a, &b| self.categories[a].0.total_cmp(&self.categories[b].0));
        index
    }

    /// The series that have values, each aligned with the categories.
    fn series(&self) -> Vec<Series> {
        let order = self.sorted_categories();
        self.series
            .iter()
            .enumerate()
            .filter(|&(s, _)| self.cells.iter().any(|&(_, si, _)| si == s))
            .map(|(s, name)| Series {
                name: name.clone(),
                values: order
                    .iter()
                    .map(|&c| {
                        self.cells
                            .iter()
                            .find(|&&(ci, si, _)| ci == c && si == s)
                            .map(|&(_, _, v)| v)
                    })
                    .collect(),
            })
            .collect()
    }

    fn categories(&self) -> Vec<String> {
        self.sorted_categories()
            .into_iter()
            .map(|c| self.categories[c].1.clone())
            .collect()
    }

    /// The table: a row per category, a column per series.
    fn table(&self, corner: &str) -> String {
        let series = self.series();
        let mut header = vec![corner];
        header.extend(series.iter().map(|s| s.name.as_str()));
        let rows: Vec<Vec<String>> = self
            .categories()
            .into_iter()
            .enumerate()
            .map(|(i, category)| {
                let mut row = vec![category];
                row.extend(
                    series
                        .iter()
                        .map(|s| s.values[i].map_or_else(|| "–".into(), format_value)),
                );
                row
            })
            .collect();
        markdown_table(&header, &rows)
    }

    fn chart(
        &self,
        file: &str,
        title: String,
        axes: (&str, &str),
        kind: Kind,
        scale: Scale,
    ) -> Chart {
        Chart {
            file: file.into(),
            title,
            x_label: axes.0.into(),
            y_label: axes.1.into(),
            categories: self.categories(),
            series: self.series(),
            kind,
            scale,
        }
    }
}

/// A compare script's output for the page: its table as it is, the ratio
/// lines after it in a code block (as plain lines, markdown would run them
/// into one paragraph).
pub fn script_output(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let after_table = lines
        .iter()
        .rposition(|l| l.starts_with('|'))
        .map_or(0, |last| last + 1);
    let mut out = lines[..after_table].join("\n");
    out.push('\n');
    let rest: Vec<&str> = lines[after_table..]
        .iter()
        .copied()
        .skip_while(|l| l.trim().is_empty())
        .collect();
    if !rest.is_empty() {
        out.push_str("\n```text\n");
        out.push_str(rest.join("\n").trim_end());
        out.push_str("\n```\n");
    }
    out
}

/// A message size as people write it: `0`, `64`, `1K`, `8M` (bytes).
pub fn size_label(bytes: usize) -> String {
    const UNITS: [(usize, &str); 3] = [(1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")];
    for (scale, unit) in UNITS {
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{}{unit}", bytes / scale);
        }
    }
    bytes.to_string()
}

fn latency(rows: &[ThreadRow]) -> Option<Figure> {
    let threads = rows
        .iter()
        .filter(|r| r.bench == "latency")
        .map(|r| r.threads)
        .min()?;
    let mut pivot = Pivot::default();
    for r in rows
        .iter()
        .filter(|r| r.bench == "latency" && r.threads == threads)
    {
        pivot.insert(
            r.bytes as f64,
            size_label(r.bytes),
            r.variant.clone(),
            r.value,
        );
    }
    Some(Figure {
        heading: "Latency".into(),
        note: format!(
            "Ping-pong between 2 ranks, {threads} thread{} per rank: µs per one-way message \
             (threadbench, median). Lower is better.",
            if threads == 1 { "" } else { "s" }
        ),
        chart: pivot.chart(
            "latency.png",
            "Latency vs message size".into(),
            ("message size (bytes)", "µs per message"),
            Kind::Lines,
            Scale::Log,
        ),
        table: pivot.table("bytes"),
    })
}

fn message_rate(rows: &[ThreadRow]) -> Option<Figure> {
    let mut pivot = Pivot::default();
    for r in rows.iter().filter(|r| r.bench == "msgrate") {
        pivot.insert(
            r.threads as f64,
            r.threads.to_string(),
            r.variant.clone(),
            r.value / 1e6,
        );
    }
    (!pivot.cells.is_empty()).then(|| Figure {
        heading: "Message rate".into(),
        note: "0-byte messages in windows of 64 between 2 ranks, all threads of a rank \
               sending at once: million messages per second over all threads (threadbench, \
               median). Higher is better."
            .into(),
        chart: pivot.chart(
            "msgrate.png",
            "Message rate vs threads per rank".into(),
            ("threads per rank", "million messages/s"),
            Kind::Lines,
            Scale::Linear,
        ),
        table: pivot.table("threads"),
    })
}

/// The variants drawn in the barrier chart; the table has them all.
const BARRIER_CHART_VARIANTS: [&str; 4] =
    ["hcmpi-strict", "hcmpi-fuzzy", "hybrid", "mpi-everywhere"];

fn barrier_series(r: &SyncRow) -> String {
    if r.variant == "mpi-everywhere" {
        r.variant.clone()
    } else {
        let plural = if r.ranks == 1 { "" } else { "s" };
        format!("{} {} rank{plural}", r.variant, r.ranks)
    }
}

fn barrier(rows: &[SyncRow]) -> Option<Figure> {
    let barriers = || rows.iter().filter(|r| r.bench == "barrier");
    let mut pivot = Pivot::default();
    for r in barriers().filter(|r| BARRIER_CHART_VARIANTS.contains(&r.variant.as_str())) {
        let tasks = r.ranks * r.tasks;
        pivot.insert(tasks as f64, tasks.to_string(), barrier_series(r), r.value);
    }
    if pivot.cells.is_empty() {
        return None;
    }
    // Rows by bench, then tasks in all, then ranks.
    let mut ordered: Vec<&SyncRow> = rows.iter().collect();
    ordered.sort_by_key(|r| (r.bench != "barrier", r.ranks * r.tasks, r.ranks));
    let mut all = Pivot::default();
    for (i, r) in ordered.into_iter().enumerate() {
        let key = format!("{} {}×{}", r.bench, r.ranks, r.tasks);
        all.insert(i as f64, key, r.variant.clone(), r.value);
    }
    Some(Figure {
        heading: "Barrier cost".into(),
        note: "µs per barrier among all tasks of the job (syncbench, EPCC method, median): \
               hcmpi phasers, MPI+rayon (`hybrid`) and one rank per task \
               (`mpi-everywhere`), by the number of tasks in the barrier; the table adds the \
               flat phasers, the fuzzy hybrid barrier and the reductions (rows: ranks×tasks). \
               Lower is better."
            .into(),
        chart: pivot.chart(
            "barrier.png",
            "Barrier cost vs tasks".into(),
            (
                "tasks in the barrier (ranks × tasks per rank)",
                "µs per barrier",
            ),
            Kind::Lines,
            Scale::Log,
        ),
        table: all.table("bench ranks×tasks"),
    })
}

/// A compare script's figure: one bar per configuration, the script's own
/// table (with its ratios) below, or the bars' table without it.
struct Configurations<'a> {
    heading: &'static str,
    note: String,
    file: &'static str,
    title: String,
    unit: &'static str,
    bars: Vec<(String, f64)>,
    script_table: Option<&'a str>,
}

impl Configurations<'_> {
    fn figure(self) -> Figure {
        let mut pivot = Pivot::default();
        for (i, (configuration, value)) in self.bars.into_iter().enumerate() {
            pivot.insert(i as f64, configuration, self.unit.into(), value);
        }
        Figure {
            heading: self.heading.into(),
            note: self.note,
            chart: pivot.chart(
                self.file,
                self.title,
                ("configuration (ranks × workers)", self.unit),
                Kind::Bars,
                Scale::Linear,
            ),
            table: self
                .script_table
                .map_or_else(|| pivot.table("configuration"), script_output),
        }
    }
}

fn uts(data: &Dataset) -> Option<Figure> {
    let first = &data.uts.first()?.report;
    let configurations = Configurations {
        heading: "UTS",
        note: format!(
            "Unbalanced Tree Search of {} ({} nodes) per mode, ranks × workers \
             (apps/scripts/uts-compare.sh, median run). Higher is better.",
            first.tree, first.nodes
        ),
        file: "uts.png",
        title: format!("UTS {}: throughput per mode and rank count", first.tree),
        unit: "million nodes/s",
        bars: data
            .uts
            .iter()
            .map(|c| (c.configuration.clone(), c.report.nodes_per_sec / 1e6))
            .collect(),
        script_table: data.uts_table.as_deref(),
    };
    Some(configurations.figure())
}

fn smith_waterman(data: &Dataset) -> Option<Figure> {
    let first = &data.sw.first()?.report;
    let configurations = Configurations {
        heading: "Smith-Waterman",
        note: format!(
            "Smith-Waterman alignment (score and end cell) of two random DNA sequences of \
             {} × {} bases per mode, ranks × workers, parasail's striped kernel on one core \
             when it is installed (apps/scripts/sw-compare.sh, median run). Higher is better.",
            first.len_a, first.len_b
        ),
        file: "sw.png",
        title: "Smith-Waterman: GCUPS per mode".into(),
        unit: "GCUPS",
        bars: data
            .sw
            .iter()
            .map(|c| (c.configuration.clone(), c.report.gcups))
            .collect(),
        script_table: data.sw_table.as_deref(),
    };
    Some(configurations.figure())
}

/// The variants set against rayon.
const OVERHEAD_VARIANTS: [&str; 3] = ["hc", "hc-join", "rayon"];

fn overhead(data: &Dataset) -> Option<Figure> {
    let rows = &data.overhead;
    let mut relative = Pivot::with_series(&OVERHEAD_VARIANTS);
    let mut absolute = Pivot::with_series(&["hc", "hc-join", "rayon", "seq"]);
    for (i, r) in rows.iter().enumerate() {
        let case = format!("{} {}", r.bench, r.param);
        absolute.insert(
            i as f64,
            format!("{case} ({})", r.unit),
            r.variant.clone(),
            r.value,
        );
        let rayon = rows
            .iter()
            .find(|o| o.bench == r.bench && o.param == r.param && o.variant == "rayon")
            .map(|o| o.value);
        if let Some(rayon) = rayon.filter(|v| *v > 0.0) {
            if OVERHEAD_VARIANTS.contains(&r.variant.as_str()) && r.bench != "idle" {
                relative.insert(i as f64, case, r.variant.clone(), r.value / rayon);
            }
        }
    }
    if relative.cells.is_empty() {
        return None;
    }
    Some(Figure {
        heading: "Task overhead".into(),
        note: "Time of the fine-grained benchmarks relative to rayon on the same workers \
               (overhead, median): empty tasks spawned flat and as a tree, fib without and \
               with a sequential cutoff. Below 1 is faster than rayon. The table has the \
               absolute values, the sequential baseline, DDF chains and the CPU of an idle \
               pool."
            .into(),
        chart: relative.chart(
            "overhead.png",
            "Task overhead relative to rayon".into(),
            ("benchmark", "time / rayon's time"),
            Kind::Bars,
            Scale::Linear,
        ),
        table: absolute.table("benchmark"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_lines_become_a_code_block() {
        let text = "title\n\n| a |\n|---|\n| 1 |\n\nx / y = 2.0\nz / y = 3.0\n";
        assert_eq!(
            script_output(text),
            "title\n\n| a |\n|---|\n| 1 |\n\n```text\nx / y = 2.0\nz / y = 3.0\n```\n"
        );
        assert_eq!(script_output("| a |\n"), "| a |\n");
    }

    #[test]
    fn sizes_read_like_sizes() {
        assert_eq!(size_label(0), "0");
        assert_eq!(size_label(1000), "1000");
        assert_eq!(size_label(1024), "1K");
        assert_eq!(size_label(8 << 20), "8M");
        assert_eq!(size_label(3 << 30), "3G");
        assert_eq!(size_label(1536), "1536");
    }

    #[test]
    fn pivot_sorts_categories_and_keeps_the_last_value() {
        let mut p = Pivot::default();
        p.insert(64.0, "64".into(), "a".into(), 1.0);
        p.insert(8.0, "8".into(), "b".into(), 2.0);
        p.insert(8.0, "8".into(), "a".into(), 3.0);
        p.insert(8.0, "8".into(), "a".into(), 4.0);
        assert_eq!(p.categories(), ["8", "64"]);
        let series = p.series();
        assert_eq!(series[0].name, "a");
        assert_eq!(series[0].values, [Some(4.0), Some(1.0)]);
        assert_eq!(series[1].values, [Some(2.0), None]);
        let table = p.table("bytes");
        assert!(table.contains("| 64    | 1.000 | –     |"), "{table}");
    }
}
