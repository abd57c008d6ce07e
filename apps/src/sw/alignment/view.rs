//! The pairwise view of an alignment: A above B, with a line of markers.

use std::fmt::Write;

use super::{Alignment, Op};
use crate::sw::alphabet::Alphabet;
use crate::sw::Scoring;

/// One column of the view: A's letter (or gap), the marker, B's letter.
struct Column {
    a: u8,
    mark: u8,
    b: u8,
}

/// See [`Alignment::pairwise`].
pub(super) fn pairwise(
    alignment: &Alignment,
    a: &[u8],
    b: &[u8],
    alphabet: Alphabet,
    scoring: &Scoring,
    width: usize,
) -> String {
    let letter = |code: u8| alphabet.decode_byte(code).unwrap_or(b'?');
    let (mut i, mut j) = (alignment.a.start, alignment.b.start);
    let mut columns = Vec::with_capacity(alignment.columns());
    for run in &alignment.runs {
        for _ in 0..run.len {
            let column = match run.op {
                Op::Match | Op::Mismatch => {
                    let mark = if a[i] == b[j] {
                        b'|'
                    } else if scoring.score(a[i], b[j]) > 0 {
                        b':'
                    } else {
                        b'.'
                    };
                    let column = Column {
                        a: letter(a[i]),
                        mark,
                        b: letter(b[j]),
                    };
                    (i, j) = (i + 1, j + 1);
                    column
                }
                Op::Deletion => {
                    i += 1;
                    Column {
                        a: letter(a[i - 1]),
                        mark: b' ',
                        b: b'-',
                    }
                }
                Op::Insertion => {
                    j += 1;
                    Column {
                        a: b'-',
                        mark: b' ',
                        b: letter(b[j - 1]),
                    }
                }
            };
            columns.push(column);
        }
    }
    let digits = alignment
        .a
        .end
        .max(alignment.b.end)
        .max(1)
        .to_string()
        .len();
    let mut out = String::new();
    let (mut next_a, mut next_b) = (alignment.a.start, alignment.b.start);
    for (k, block) in columns.chunks(width.max(1)).enumerate() {
        if k > 0 {
            out.push('\n');
        }
        let row = |pick: fn(&Column) -> u8| -> String {
            block.iter().map(|c| char::from(pick(c))).collect()
        };
        let (row_a, marks, row_b) = (row(|c| c.a), row(|c| c.mark), row(|c| c.b));
        let used = |text: &str| text.bytes().filter(|&c| c != b'-').count();
        let span = |next: &mut usize, used: usize| {
            // A line without letters of a sequence shows the position of
            // its last letter before the line on both sides.
            let first = if used == 0 {
                next.saturating_sub(1)
            } else {
                *next
            };
            *next += used;
            (first, next.saturating_sub(1))
        };
        let (a_first, a_last) = span(&mut next_a, used(&row_a));
        let (b_first, b_last) = span(&mut next_b, used(&row_b));
        let _ = writeln!(out, "A {a_first:>digits$} {row_a} {a_last}");
        let _ = writeln!(out, "  {:digits$} {}", "", marks.trim_end());
        let _ = writeln!(out, "B {b_first:>digits$} {row_b} {b_last}");
    }
    out
}
