//! Checks that keep the hcmpi user guide honest.
//!
//! The guide (`guide/src/*.md`, built with mdBook) shows no Rust code of its
//! own: every ```` ```rust ```` block includes a part of a program under
//! `guide/examples/` (or another crate's `examples/`) with
//! `{{#include ../examples/NAME.rs:ANCHOR}}`, and `tests/samples.rs` runs
//! each of those programs, under `mpiexec` where the program asks for it.
//! So a sample that stops compiling, or stops giving its result, fails the
//! test suite instead of misleading a reader.
//!
//! This library holds the two halves of that contract:
//!
//! * [`check_book`] reads the chapters and reports every Rust block that is
//!   not an include, every include whose file or anchor is missing, and
//!   every guide example no chapter shows;
//! * [`sample_runs`] reads how a sample program wants to be run from its
//!   `// sample-run:` lines.

#![deny(missing_docs)]

use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A problem [`check_book`] found in the guide.
#[derive(Debug)]
#[non_exhaustive]
pub enum Problem {
    /// A file or directory of the guide could not be read.
    Unreadable {
        /// What could not be read.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A Rust code block holds code instead of including a tested sample.
    InlineRust {
        /// The chapter.
        chapter: PathBuf,
        /// The 1-based line of the offending text.
        line: usize,
    },
    /// An include names a file that does not exist.
    MissingFile {
        /// The chapter.
        chapter: PathBuf,
        /// The 1-based line of the include.
        line: usize,
        /// The path as the chapter spells it.
        target: String,
    },
    /// An include names an anchor the file does not mark with
    /// `ANCHOR: name` and `ANCHOR_END: name`.
    MissingAnchor {
        /// The chapter.
        chapter: PathBuf,
        /// The 1-based line of the include.
        line: usize,
        /// The included file.
        target: String,
        /// The anchor.
        anchor: String,
    },
    /// A Rust include selects lines by number, which silently shift when
    /// the sample changes; samples are cut with anchors.
    LineRange {
        /// The chapter.
        chapter: PathBuf,
        /// The 1-based line of the include.
        line: usize,
    },
    /// A program under `guide/examples/` that no chapter includes.
    UnusedSample {
        /// The program.
        sample: PathBuf,
    },
    /// A chapter listed in `SUMMARY.md` that does not exist.
    MissingChapter {
        /// The chapter as `SUMMARY.md` names it.
        chapter: String,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Unreadable { path, source } => {
                write!(f, "{}: cannot read: {source}", path.display())
            }
            Problem::InlineRust { chapter, line } => write!(
                f,
                "{}:{line}: Rust code written in the chapter; include it from a tested \
                 example with {{{{#include ../examples/NAME.rs:ANCHOR}}}}",
                chapter.display()
            ),
            Problem::MissingFile {
                chapter,
                line,
                target,
            } => write!(
                f,
                "{}:{line}: included file {target} does not exist",
                chapter.display()
            ),
            Problem::MissingAnchor {
                chapter,
                line,
                target,
                anchor,
            } => write!(
                f,
                "{}:{line}: {target} has no `ANCHOR: {anchor}` … `ANCHOR_END: {anchor}` pair",
                chapter.display()
            ),
            Problem::LineRange { chapter, line } => write!(
                f,
                "{}:{line}: include by line numbers; mark the lines with an anchor instead",
                chapter.display()
            ),
            Problem::UnusedSample { sample } => write!(
                f,
                "{}: no chapter includes this sample (show it, or delete it)",
                sample.display()
            ),
            Problem::MissingChapter { chapter } => {
                write!(f, "SUMMARY.md lists {chapter}, which does not exist")
            }
        }
    }
}

impl std::error::Error for Problem {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Problem::Unreadable { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What [`check_book`] read.
#[derive(Debug, Default)]
pub struct Book {
    /// Chapters (Markdown files under `src/`).
    pub chapters: Vec<PathBuf>,
    /// Rust blocks, all of them includes.
    pub rust_blocks: usize,
    /// Files included anywhere in the guide (canonical paths).
    pub included: BTreeSet<PathBuf>,
}

/// Checks the guide rooted at `root` (the directory of `book.toml`):
/// every Rust block only includes, every include resolves (file and
/// anchor), every sample under `root/examples` is shown somewhere, and
/// every chapter `SUMMARY.md` links to exists.
///
/// ```
/// let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
/// let book = hcmpi_guide::check_book(root).unwrap();
/// assert!(book.rust_blocks > 0);
/// ```
pub fn check_book(root: &Path) -> Result<Book, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut book = Book::default();
    let src = root.join("src");
    let mut chapters = match markdown_files(&src) {
        Ok(chapters) => chapters,
        Err(source) => return Err(vec![Problem::Unreadable { path: src, source }]),
    };
    chapters.sort();
    for chapter in &chapters {
        match fs::read_to_string(chapter) {
            Ok(text) => check_chapter(chapter, &text, &mut book, &mut problems),
            Err(source) => problems.push(Problem::Unreadable {
                path: chapter.clone(),
                source,
            }),
        }
    }
    check_summary(&src, &mut problems);
    let examples = root.join("examples");
    match fs::read_dir(&examples) {
        Ok(entries) => {
            let mut samples: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "rs"))
                .collect();
            samples.sort();
            for sample in samples {
                let shown = fs::canonicalize(&sample)
                    .map(|c| book.included.contains(&c))
                    .unwrap_or(false);
                if !shown {
                    problems.push(Problem::UnusedSample { sample });
                }
            }
        }
        Err(source) => problems.push(Problem::Unreadable {
            path: examples,
            source,
        }),
    }
    book.chapters = chapters;
    if problems.is_empty() {
        Ok(book)
    } else {
        Err(problems)
    }
}

fn markdown_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            files.extend(markdown_files(&path)?);
        } else if path.extension().is_some_and(|x| x == "md") {
            files.push(path);
        }
    }
    Ok(files)
}

/// One `{{#include PATH[:ANCHOR]}}` directive.
#[derive(Debug, PartialEq, Eq)]
struct Include<'a> {
    path: &'a str,
    selector: Option<&'a str>,
}

fn parse_include(line: &str) -> Option<Include<'_>> {
    let trimmed = line.trim();
    let body = trimmed
        .strip_prefix("{{#include ")
        .or_else(|| trimmed.strip_prefix("{{#rustdoc_include "))?
        .strip_suffix("}}")?
        .trim();
    Some(match body.split_once(':') {
        Some((path, selector)) => Include {
            path,
            selector: Some(selector),
        },
        None => Include {
            path: body,
            selector: None,
        },
    })
}

fn check_chapter(chapter: &Path, text: &str, book: &mut Book, problems: &mut Vec<Problem>) {
    let dir = chapter.parent().unwrap_or(Path::new("."));
    // The fence that opened the current block (its backticks), and whether
    // the block is Rust.
    let mut open: Option<(&str, bool)> = None;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim_start();
        if let Some((fence, rust)) = open {
            if trimmed.trim_end() == fence {
                open = None;
                continue;
            }
            match parse_include(line) {
                Some(include) => {
                    if rust && include.selector.is_some_and(is_line_range) {
                        problems.push(Problem::LineRange {
                            chapter: chapter.to_path_buf(),
                            line: number,
                        });
                    }
                    resolve(chapter, dir, number, &include, book, problems);
                }
                None if rust && !line.trim().is_empty() => problems.push(Problem::InlineRust {
                    chapter: chapter.to_path_buf(),
                    line: number,
                }),
                None => {}
            }
        } else if trimmed.starts_with("```") {
            let ticks = trimmed.len() - trimmed.trim_start_matches('`').len();
            let fence = &trimmed[..ticks];
            let info = trimmed[ticks..].trim();
            let language = info.split([',', ' ']).next().unwrap_or("");
            book.rust_blocks += usize::from(language == "rust");
            open = Some((fence, language == "rust"));
        } else if let Some(include) = parse_include(line) {
            resolve(chapter, dir, number, &include, book, problems);
        }
    }
}

fn is_line_range(selector: &str) -> bool {
    selector
        .split(':')
        .all(|part| part.is_empty() || part.bytes().all(|b| b.is_ascii_digit()))
}

fn resolve(
    chapter: &Path,
    dir: &Path,
    line: usize,
    include: &Include<'_>,
    book: &mut Book,
    problems: &mut Vec<Problem>,
) {
    let target = dir.join(include.path);
    let Ok(text) = fs::read_to_string(&target) else {
        problems.push(Problem::MissingFile {
            chapter: chapter.to_path_buf(),
            line,
            target: include.path.to_owned(),
        });
        return;
    };
    if let Ok(canonical) = fs::canonicalize(&target) {
        book.included.insert(canonical);
    }
    if let Some(anchor) = include.selector.filter(|s| !is_line_range(s)) {
        if !has_anchor(&text, anchor) {
            problems.push(Problem::MissingAnchor {
                chapter: chapter.to_path_buf(),
                line,
                target: include.path.to_owned(),
                anchor: anchor.to_owned(),
            });
        }
    }
}

fn has_anchor(text: &str, anchor: &str) -> bool {
    anchored(text, anchor).is_some()
}

fn check_summary(src: &Path, problems: &mut Vec<Problem>) {
    let summary = src.join("SUMMARY.md");
    let text = match fs::read_to_string(&summary) {
        Ok(text) => text,
        Err(source) => {
            problems.push(Problem::Unreadable {
                path: summary,
                source,
            });
            return;
        }
    };
    for line in text.lines() {
        let Some((_, rest)) = line.split_once("](") else {
            continue;
        };
        let Some((link, _)) = rest.split_once(')') else {
            continue;
        };
        if !link.is_empty() && !src.join(link).is_file() {
            problems.push(Problem::MissingChapter {
                chapter: link.to_owned(),
            });
        }
    }
}

/// The lines of `source` between `ANCHOR: name` and `ANCHOR_END: name`,
/// without any anchor lines, as mdBook includes them; `None` if the anchor
/// is missing.
///
/// ```
/// let source = "// ANCHOR: a\nlet x = 1;\n// ANCHOR: b\nlet y = 2;\n// ANCHOR_END: b\n// ANCHOR_END: a\n";
/// assert_eq!(hcmpi_guide::anchored(source, "a").unwrap(), "let x = 1;\nlet y = 2;\n");
/// assert_eq!(hcmpi_guide::anchored(source, "c"), None);
/// ```
pub fn anchored(source: &str, anchor: &str) -> Option<String> {
    let names = |line: &str, kind: &str| {
        line.split_once(kind)
            .is_some_and(|(_, name)| name.trim() == anchor)
    };
    let mut inside = false;
    let mut text = String::new();
    for line in source.lines() {
        if names(line, "ANCHOR_END:") {
            return inside.then_some(text);
        }
        if names(line, "ANCHOR:") {
            inside = true;
        } else if inside && !line.contains("ANCHOR:") && !line.contains("ANCHOR_END:") {
            text.push_str(line);
            text.push('\n');
        }
    }
    None
}

/// How the test suite runs a sample program: one `// sample-run:` line of
/// the program, such as `// sample-run: ranks=1,2,3,4 HCMPI_PLACEMENT=shared`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleRun {
    /// Rank counts to run at; `0` runs the program without `mpiexec`.
    pub ranks: Vec<usize>,
    /// Environment variables set for the run.
    pub env: Vec<(String, String)>,
    /// Arguments passed to the program (`arg=VALUE`, in order).
    pub args: Vec<String>,
}

/// A malformed `// sample-run:` line.
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SampleRunError {
    /// A word that is neither `ranks=…`, `arg=…` nor `NAME=VALUE`.
    BadWord {
        /// The 1-based line.
        line: usize,
        /// The word.
        word: String,
    },
    /// A line without `ranks=`.
    NoRanks {
        /// The 1-based line.
        line: usize,
    },
}

impl fmt::Display for SampleRunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SampleRunError::BadWord { line, word } => write!(
                f,
                "line {line}: {word:?} in a `// sample-run:` line is not ranks=N,M, \
                 arg=VALUE or NAME=VALUE"
            ),
            SampleRunError::NoRanks { line } => {
                write!(f, "line {line}: a `// sample-run:` line needs ranks=N,M")
            }
        }
    }
}

impl std::error::Error for SampleRunError {}

/// Reads the `// sample-run:` lines of a sample program's source. A program
/// with none is run once, without `mpiexec`.
///
/// ```
/// use hcmpi_guide::{sample_runs, SampleRun};
///
/// let runs = sample_runs("// sample-run: ranks=1,2 HCMPI_PLACEMENT=shared arg=--fast\nfn main() {}")
///     .unwrap();
/// assert_eq!(runs, vec![SampleRun {
///     ranks: vec![1, 2],
///     env: vec![("HCMPI_PLACEMENT".into(), "shared".into())],
///     args: vec!["--fast".into()],
/// }]);
/// assert_eq!(sample_runs("fn main() {}").unwrap()[0].ranks, vec![0]);
/// ```
pub fn sample_runs(source: &str) -> Result<Vec<SampleRun>, SampleRunError> {
    let mut runs = Vec::new();
    for (index, line) in source.lines().enumerate() {
        let Some(spec) = line.trim().strip_prefix("// sample-run:") else {
            continue;
        };
        let mut run = SampleRun {
            ranks: Vec::new(),
            env: Vec::new(),
            args: Vec::new(),
        };
        for word in spec.split_whitespace() {
            let bad = || SampleRunError::BadWord {
                line: index + 1,
                word: word.to_owned(),
            };
            let (key, value) = word.split_once('=').ok_or_else(bad)?;
            match key {
                "ranks" => {
                    for n in value.split(',') {
                        run.ranks.push(n.parse().map_err(|_| bad())?);
                    }
                }
                "arg" => run.args.push(value.to_owned()),
                _ if !key.is_empty()
                    && key
                        .bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') =>
                {
                    run.env.push((key.to_owned(), value.to_owned()))
                }
                _ => return Err(bad()),
            }
        }
        if run.ranks.is_empty() {
            return Err(SampleRunError::NoRanks { line: index + 1 });
        }
        runs.push(run);
    }
    if runs.is_empty() {
        runs.push(SampleRun {
            ranks: vec![0],
            env: Vec::new(),
            args: Vec::new(),
        });
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The problems `check_chapter` finds in `text`, beside a sample file
    /// in a directory of this test's own (tests run in parallel).
    fn problems(text: &str) -> Vec<String> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hcmpi-guide-check-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("sample.rs"),
            "// ANCHOR: main\nfn main() {}\n// ANCHOR_END: main\n",
        )
        .unwrap();
        let chapter = dir.join("chapter.md");
        let mut book = Book::default();
        let mut found = Vec::new();
        check_chapter(&chapter, text, &mut book, &mut found);
        let _ = fs::remove_dir_all(&dir);
        found.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn an_included_anchor_passes() {
        assert!(problems("```rust\n{{#include sample.rs:main}}\n```\n").is_empty());
    }

    #[test]
    fn inline_rust_is_refused_and_other_languages_are_not() {
        let found = problems("text\n```rust\nfn main() {}\n```\n```sh\nmpiexec -n 2 ./a\n```\n");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("chapter.md:3"), "{found:?}");
    }

    #[test]
    fn a_rust_block_with_attributes_is_still_rust() {
        assert_eq!(problems("```rust,ignore\nlet x = 1;\n```\n").len(), 1);
    }

    #[test]
    fn missing_files_anchors_and_line_ranges_are_named() {
        let found = problems(
            "```rust\n{{#include nowhere.rs:main}}\n{{#include sample.rs:other}}\n{{#include sample.rs:1:2}}\n```\n",
        );
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0].contains("nowhere.rs does not exist"));
        assert!(found[1].contains("ANCHOR: other"));
        assert!(found[2].contains("line numbers"));
    }

    #[test]
    fn a_longer_fence_holds_a_shorter_one() {
        assert!(problems("````md\n```rust\nlet x = 1;\n```\n````\n").is_empty());
    }

    #[test]
    fn bad_sample_run_lines_are_errors() {
        assert!(matches!(
            sample_runs("// sample-run: HCMPI_PLACEMENT=shared"),
            Err(SampleRunError::NoRanks { line: 1 })
        ));
        assert!(matches!(
            sample_runs("// sample-run: ranks=two"),
            Err(SampleRunError::BadWord { .. })
        ));
        assert!(matches!(
            sample_runs("// sample-run: ranks=1 lower=case"),
            Err(SampleRunError::BadWord { .. })
        ));
    }
}
