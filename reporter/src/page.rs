//! The report page: `index.md` beside its PNG charts.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::ReportError;
use crate::figures::{figures, Figure};
use crate::machine::Machine;
use crate::rows::Dataset;

/// What [`render`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// `index.md`.
    pub page: PathBuf,
    /// The charts, in page order.
    pub charts: Vec<PathBuf>,
}

/// Draws every figure `data` has numbers for into `out` and writes
/// `out/index.md` with their tables.
///
/// # Errors
/// `out` cannot be created or written, or a chart cannot be drawn.
pub fn render(data: &Dataset, out: &Path) -> Result<Rendered, ReportError> {
    let write_error = |file: &Path| {
        let file = file.to_owned();
        move |source| ReportError::Write { file, source }
    };
    std::fs::create_dir_all(out).map_err(write_error(out))?;
    let (machine, quick, failed) = match &data.run {
        Some(run) => (run.machine.clone(), run.quick, run.failed.as_slice()),
        None => (
            Machine {
                cores: 0,
                cpu: "unknown machine".into(),
                mpi: "unknown MPI".into(),
                date: "unknown date".into(),
            },
            false,
            &[][..],
        ),
    };
    let mut caption = machine.caption();
    if quick {
        caption.push_str(" · quick run");
    }
    let figures = figures(data);
    let mut charts = Vec::new();
    for figure in &figures {
        let path = out.join(&figure.chart.file);
        figure.chart.render(&caption, &path)?;
        charts.push(path);
    }
    let page = out.join("index.md");
    let text = markdown(&machine, quick, failed, &figures);
    std::fs::write(&page, text).map_err(write_error(&page))?;
    Ok(Rendered { page, charts })
}

fn markdown(machine: &Machine, quick: bool, failed: &[String], figures: &[Figure]) -> String {
    let mut page = String::from("# hcmpi benchmark report\n\n");
    let _ = writeln!(page, "Measured on {}.\n", machine.caption());
    if quick {
        page.push_str(
            "**A quick run** (`--quick`): one or a few repetitions and smaller problems; \
             expect noise.\n\n",
        );
    }
    page.push_str(
        "Every number is a median over repetitions, the variants of a figure measured side \
         by side in one run. On a machine with fewer cores than ranks × threads, counting \
         each hcmpi rank's communication thread where the engine is `dedicated`, the runs are \
         oversubscribed, and the variants that poll lose most. Reproduce with `./scripts/report` (or `./scripts/report --quick`, \
         fewer repetitions and smaller problems).\n\n",
    );
    if !failed.is_empty() {
        let _ = writeln!(
            page,
            "**Steps that failed:** {}; their figures are missing (the logs are in `data/`).\n",
            failed.join(", ")
        );
    }
    if figures.is_empty() {
        page.push_str("No measurements were found.\n");
    }
    for figure in figures {
        let _ = writeln!(page, "- [{}](#{})", figure.heading, anchor(&figure.heading));
    }
    for figure in figures {
        let _ = write!(
            page,
            "\n## {}\n\n{}\n\n![{}]({})\n\n{}",
            figure.heading, figure.note, figure.chart.title, figure.chart.file, figure.table
        );
        if !figure.table.ends_with('\n') {
            page.push('\n');
        }
    }
    page
}

/// The anchor GitHub gives a heading.
fn anchor(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_githubs() {
        assert_eq!(anchor("Smith-Waterman"), "smith-waterman");
        assert_eq!(anchor("Task overhead"), "task-overhead");
        assert_eq!(anchor("UTS"), "uts");
    }
}
