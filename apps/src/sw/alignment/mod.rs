//! The local alignment itself: where it starts, its CIGAR string, its
//! identity and a pairwise view, found in linear memory after a score pass.
//!
//! # How the alignment is found
//!
//! The score pass ([`crate::sw::seq::align_with_checkpoints`]) keeps, besides
//! the best cell, the `H` and `F` rows at a few evenly spaced rows of the
//! matrix ([`Checkpoints`], at most [`CHECKPOINT_BYTES`] of them).
//! [`trace()`] then walks the alignment back from its end cell, one block of
//! rows at a time, from the block below a kept row up to it:
//!
//! 1. **Bound the block.** The path reaches its current cell `(i, j)` with a
//!    known value `v`. It entered the block from some cell `(r, c)` of the
//!    kept row `r`, whose `H[r][c]` bounds its value there, and gained
//!    at most `max_gain * min(i - r, j - c) - min(open, extend) * max(0, j -
//!    c - (i - r))` on the way. Columns `c` for which that sum stays below `v`
//!    cannot hold the path, so the block starts at the first column where it
//!    does not: on related sequences, a band around the diagonal.
//! 2. **Recompute the block.** From the kept row, with 0 (a fresh
//!    start) left of the band. A small block is computed cell by cell with
//!    one byte of traceback per cell; a large one is cut again: the SIMD
//!    kernel runs it strip by strip, keeping each strip's last row, and
//!    each sub-block is traced in turn by these same steps. A strip of many
//!    rows covers only the columns that can hold the path in its rows:
//!    those where a bound on the score of a path reaching the cell plus one
//!    on the score from it to `(i, j)` reaches `v` (`trace/band.rs`).
//! 3. **Trace back** through the block to a cell of the kept row (the
//!    path goes on from there, in state `H` or `F`, with the value stored
//!    there), or to a cell whose diagonal predecessor is 0: the start.
//!
//! Every positive value in a recomputed block is the score of a real
//! alignment, so it is at most the full matrix's value at that cell; every
//! optimal path to the block's bottom cell lies in the block's columns and
//! in each strip's band, so along those paths the values are the full
//! matrix's. Hence the traced path has exactly the reported score and end,
//! and at each cell the walk makes the choice it would make on the whole
//! matrix, whatever rows were kept.
//! Memory is the checkpoints plus, for each walk, one block's traceback
//! bytes and the rows each level of cut blocks keeps (32 MiB at most a
//! level, or one row if a row is larger); [`trace_on`] runs one walk per
//! busy worker and keeps every segment's columns until it joins them.
//!
//! # In parallel
//!
//! [`trace_on`] cuts the path into segments at the kept rows and traces
//! them at once, as tasks of a runtime:
//!
//! 1. **Where the path crosses each kept row**, from its end cell up: from
//!    the path's cell `(i, j)` with value `v`, a backward pass over the block
//!    up to the kept row above gives, for each cell `(r, c)` of that row, the
//!    best score of a path from it to `(i, j)`. Optimal paths to `(i, j)`
//!    cross the row where that score plus the kept value is `v`; the pass
//!    takes one of those cells as its guess and goes on up from it. It runs
//!    the SIMD kernel on the reversed sequences, strip by strip over the
//!    columns that can hold the path.
//! 2. **Each segment is traced** from the guess below it up to the next
//!    kept row, by the steps above, as a task spawned as soon as step 1
//!    has made the guess, while step 1 goes on.
//! 3. **The segments are joined** from the end up. Where a segment left its
//!    kept row at another cell than the guess (a tie: the walk chose
//!    another optimal path), the segment above is traced again from the
//!    cell the walk reached. The result is the alignment [`trace()`] finds.
//!
//! # Which alignment, among equals
//!
//! The traced alignment ends at the reported end cell. Where several
//! optimal alignments end there, the traceback prefers at each cell a
//! substitution, then a gap in B (`D`), then a gap in A (`I`), and it stops
//! at the first cell reached with a zero-valued predecessor. That choice
//! is the one the walk would make on the whole matrix, so every mode, rank
//! count and worker count gives the same alignment.

mod trace;
mod view;

use std::fmt;
use std::ops::Range;

use crate::sw::alphabet::Alphabet;
use crate::sw::Scoring;

pub use trace::{trace, trace_on, Checkpoints, CHECKPOINT_BYTES};

/// One alignment column kind, as in the CIGAR strings of SAM (A is the
/// reference, B the query).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `=`: a letter of A against an identical letter of B.
    Match,
    /// `X`: a letter of A against a different letter of B.
    Mismatch,
    /// `I`: a letter of B against a gap (consumes B only).
    Insertion,
    /// `D`: a letter of A against a gap (consumes A only).
    Deletion,
}

impl Op {
    /// The CIGAR letter.
    pub fn letter(self) -> char {
        match self {
            Op::Match => '=',
            Op::Mismatch => 'X',
            Op::Insertion => 'I',
            Op::Deletion => 'D',
        }
    }

    /// The operation a CIGAR letter stands for (`=`, `X`, `I`, `D`).
    pub fn from_letter(letter: char) -> Option<Op> {
        match letter {
            '=' => Some(Op::Match),
            'X' => Some(Op::Mismatch),
            'I' => Some(Op::Insertion),
            'D' => Some(Op::Deletion),
            _ => None,
        }
    }

    /// Letters of (A, B) one such column consumes.
    fn consumes(self) -> (usize, usize) {
        match self {
            Op::Match | Op::Mismatch => (1, 1),
            Op::Insertion => (0, 1),
            Op::Deletion => (1, 0),
        }
    }
}

/// `len` consecutive columns of the same [`Op`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Run {
    /// The operation.
    pub op: Op,
    /// How many columns (at least 1).
    pub len: usize,
}

/// A best local alignment of A against B.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alignment {
    /// Its score: the best local alignment score.
    pub score: i32,
    /// The letters of A it covers (0-based, half-open); empty when the score
    /// is 0.
    pub a: Range<usize>,
    /// The letters of B it covers (0-based, half-open).
    pub b: Range<usize>,
    /// Its columns, first to last, in maximal runs.
    pub runs: Vec<Run>,
}

/// Why a CIGAR string does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CigarError {
    /// A letter other than `=`, `X`, `I`, `D`.
    #[error("unknown CIGAR operation {0:?} (expected =, X, I or D)")]
    UnknownOp(char),
    /// An operation without a positive count before it.
    #[error("CIGAR operation {0:?} has no positive length before it")]
    MissingLength(char),
    /// Digits at the end, with no operation after them.
    #[error("CIGAR string ends with a length and no operation")]
    TrailingLength,
    /// A length that does not fit in `usize`.
    #[error("CIGAR length too large")]
    LengthTooLarge,
}

/// Why [`rescore`] refused an alignment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RescoreError {
    /// The columns run past the end of a sequence.
    #[error("the alignment runs past the end of {sequence} (length {len})")]
    PastEnd {
        /// `"A"` or `"B"`.
        sequence: &'static str,
        /// Its length.
        len: usize,
    },
    /// A run of no columns.
    #[error("run {run} of the alignment has length 0")]
    EmptyRun {
        /// 0-based index of the run.
        run: usize,
    },
    /// The columns rescore, or cover the sequences, otherwise than the
    /// alignment says.
    #[error("the columns score {rescored} over A[{a:?}], B[{b:?}]; the alignment says otherwise")]
    Disagrees {
        /// The score the columns give.
        rescored: i32,
        /// The range of A they cover.
        a: Range<usize>,
        /// The range of B they cover.
        b: Range<usize>,
    },
    /// A `=` over different letters, or an `X` over identical ones.
    #[error("column {column} is {op:?} but A[{a}] and B[{b}] say otherwise")]
    WrongPair {
        /// 0-based column of the alignment.
        column: usize,
        /// The operation the CIGAR gives.
        op: Op,
        /// Position in A.
        a: usize,
        /// Position in B.
        b: usize,
    },
}

/// The score of the alignment of `a` and `b` that starts at `start` (0-based
/// positions in A and B) and has the columns `runs`, with the ranges of A
/// and B it covers. Adjacent runs of the same gap kind count as one gap.
///
/// ```
/// use apps::sw::alignment::{parse_cigar, rescore};
/// use apps::sw::alphabet::Alphabet;
/// use apps::sw::Scoring;
///
/// let a = Alphabet::Dna.encode(b"ACGTTTACGT").unwrap();
/// let b = Alphabet::Dna.encode(b"ACGTACGA").unwrap();
/// let runs = parse_cigar("4=2D3=1X").unwrap();
/// let scoring = Scoring::match_mismatch(2, -1, 3, 1).unwrap();
/// let (score, ra, rb) = rescore(&a, &b, &scoring, (0, 0), &runs).unwrap();
/// assert_eq!(score, 7 * 2 - (3 + 1) - 1);
/// assert_eq!((ra, rb), (0..10, 0..8));
/// ```
///
/// # Errors
///
/// [`RescoreError`] when the columns leave a sequence or call a pair of
/// letters a match that is not one (or the reverse).
pub fn rescore(
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    start: (usize, usize),
    runs: &[Run],
) -> Result<(i32, Range<usize>, Range<usize>), RescoreError> {
    let (mut i, mut j) = start;
    let mut score = 0i64;
    let mut column = 0;
    let mut open_gap = None;
    for (k, run) in runs.iter().enumerate() {
        let (da, db) = run.op.consumes();
        if run.len == 0 {
            return Err(RescoreError::EmptyRun { run: k });
        }
        // Subtractions, not sums: lengths may be as large as usize allows.
        if i > a.len() || da * run.len > a.len() - i {
            return Err(RescoreError::PastEnd {
                sequence: "A",
                len: a.len(),
            });
        }
        if j > b.len() || db * run.len > b.len() - j {
            return Err(RescoreError::PastEnd {
                sequence: "B",
                len: b.len(),
            });
        }
        match run.op {
            Op::Match | Op::Mismatch => {
                for _ in 0..run.len {
                    let identical = a[i] == b[j];
                    if identical != (run.op == Op::Match) {
                        return Err(RescoreError::WrongPair {
                            column,
                            op: run.op,
                            a: i,
                            b: j,
                        });
                    }
                    score += i64::from(scoring.score(a[i], b[j]));
                    (i, j, column) = (i + 1, j + 1, column + 1);
                }
                open_gap = None;
            }
            gap => {
                let extends = open_gap == Some(gap);
                let opens = usize::from(!extends);
                score -= (opens as i64) * i64::from(scoring.gap_open())
                    + (run.len - opens) as i64 * i64::from(scoring.gap_extend());
                (i, j, column) = (i + da * run.len, j + db * run.len, column + run.len);
                open_gap = Some(gap);
            }
        }
    }
    let score = i32::try_from(score).unwrap_or(if score < 0 { i32::MIN } else { i32::MAX });
    Ok((score, start.0..i, start.1..j))
}

/// Parses a CIGAR string of `=`, `X`, `I` and `D` operations, each after a
/// positive length (`"12=1X3I40="`). The empty string is the empty
/// alignment.
///
/// ```
/// use apps::sw::alignment::{parse_cigar, Op, Run};
///
/// let runs = parse_cigar("3=2I").unwrap();
/// assert_eq!(runs, [Run { op: Op::Match, len: 3 }, Run { op: Op::Insertion, len: 2 }]);
/// assert!(parse_cigar("3M").is_err());
/// ```
///
/// # Errors
///
/// [`CigarError`] on any other letter, a missing, zero or oversized
/// length, or a trailing length.
pub fn parse_cigar(text: &str) -> Result<Vec<Run>, CigarError> {
    let mut runs = Vec::new();
    let mut len: Option<usize> = None;
    for ch in text.chars() {
        if let Some(digit) = ch.to_digit(10) {
            let longer = len.unwrap_or(0).checked_mul(10);
            let longer = longer.and_then(|n| n.checked_add(digit as usize));
            len = Some(longer.ok_or(CigarError::LengthTooLarge)?);
            continue;
        }
        let op = Op::from_letter(ch).ok_or(CigarError::UnknownOp(ch))?;
        match len.take() {
            Some(len) if len > 0 => runs.push(Run { op, len }),
            _ => return Err(CigarError::MissingLength(ch)),
        }
    }
    if len.is_some() {
        return Err(CigarError::TrailingLength);
    }
    Ok(runs)
}

impl Alignment {
    /// The alignment of score 0: no columns.
    pub fn empty() -> Alignment {
        Alignment {
            score: 0,
            a: 0..0,
            b: 0..0,
            runs: Vec::new(),
        }
    }

    /// Number of columns (letters and gaps of either row).
    pub fn columns(&self) -> usize {
        self.runs.iter().map(|run| run.len).sum()
    }

    /// Columns of `op`.
    pub fn count(&self, op: Op) -> usize {
        self.runs
            .iter()
            .filter(|run| run.op == op)
            .map(|run| run.len)
            .sum()
    }

    /// Identical pairs over columns (0 for the empty alignment).
    pub fn identity(&self) -> f64 {
        match self.columns() {
            0 => 0.0,
            columns => self.count(Op::Match) as f64 / columns as f64,
        }
    }

    /// The CIGAR string (`=`, `X`, `I`, `D`; empty for the empty alignment).
    ///
    /// ```
    /// use apps::sw::alignment::{Alignment, Op, Run};
    ///
    /// let runs = vec![Run { op: Op::Match, len: 4 }, Run { op: Op::Deletion, len: 1 }];
    /// let alignment = Alignment { score: 5, a: 0..5, b: 0..4, runs };
    /// assert_eq!(alignment.cigar(), "4=1D");
    /// ```
    pub fn cigar(&self) -> String {
        self.to_string()
    }

    /// Checks the alignment against the sequences: its columns, rescored
    /// by [`rescore`] from its start, give [`Alignment::score`] and cover
    /// exactly [`Alignment::a`] and [`Alignment::b`]. True of every
    /// alignment [`trace()`] returns.
    ///
    /// # Errors
    ///
    /// As [`rescore`], and [`RescoreError::Disagrees`] when the score or
    /// the ranges differ.
    pub fn check(&self, a: &[u8], b: &[u8], scoring: &Scoring) -> Result<(), RescoreError> {
        let start = (self.a.start, self.b.start);
        let (rescored, ra, rb) = rescore(a, b, scoring, start, &self.runs)?;
        if (rescored, &ra, &rb) == (self.score, &self.a, &self.b) {
            Ok(())
        } else {
            Err(RescoreError::Disagrees {
                rescored,
                a: ra,
                b: rb,
            })
        }
    }

    /// The pairwise view: blocks of `width` columns (at least 1), A above B,
    /// each line between the 0-based positions of its first and last
    /// letters; between them `|` for identical letters, `:` for different
    /// letters with a positive score, `.` for other mismatches.
    ///
    /// ```
    /// use apps::sw::alignment::{Alignment, Op, Run};
    /// use apps::sw::alphabet::Alphabet;
    /// use apps::sw::Scoring;
    ///
    /// let a = Alphabet::Dna.encode(b"ACGTTA").unwrap();
    /// let b = Alphabet::Dna.encode(b"ACCTA").unwrap();
    /// let runs = vec![
    ///     Run { op: Op::Match, len: 2 },
    ///     Run { op: Op::Mismatch, len: 1 },
    ///     Run { op: Op::Deletion, len: 1 },
    ///     Run { op: Op::Match, len: 2 },
    /// ];
    /// let alignment = Alignment { score: 4, a: 0..6, b: 0..5, runs };
    /// let view = alignment.pairwise(&a, &b, Alphabet::Dna, &Scoring::dna_default(), 60);
    /// assert_eq!(view, "A 0 ACGTTA 5\n    ||. ||\nB 0 ACC-TA 4\n");
    /// ```
    pub fn pairwise(
        &self,
        a: &[u8],
        b: &[u8],
        alphabet: Alphabet,
        scoring: &Scoring,
        width: usize,
    ) -> String {
        view::pairwise(self, a, b, alphabet, scoring, width)
    }
}

impl fmt::Display for Alignment {
    /// The CIGAR string.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for run in &self.runs {
            write!(f, "{}{}", run.len, run.op.letter())?;
        }
        Ok(())
    }
}

/// The best local alignment of `a` and `b` on one core: the score pass with
/// checkpoints, then [`trace()`].
///
/// ```
/// use apps::sw::alignment::local_alignment;
/// use apps::sw::alphabet::Alphabet;
/// use apps::sw::Scoring;
///
/// let a = Alphabet::Dna.encode(b"TTTACGTACGTTT").unwrap();
/// let b = Alphabet::Dna.encode(b"GGACGTCACGTGG").unwrap();
/// let alignment = local_alignment(&a, &b, &Scoring::match_mismatch(2, -1, 3, 1).unwrap());
/// assert_eq!(alignment.cigar(), "4=1I4=");
/// assert_eq!((alignment.a.clone(), alignment.b.clone()), (3..11, 2..11));
/// assert_eq!(alignment.score, 16 - 3);
/// ```
///
/// # Panics
///
/// As [`crate::sw::seq::align`].
pub fn local_alignment(a: &[u8], b: &[u8], scoring: &Scoring) -> Alignment {
    let progress = crate::progress::Progress::hidden();
    let (best, checkpoints) = crate::sw::seq::align_with_checkpoints(a, b, scoring, &progress);
    trace(a, b, scoring, best, &checkpoints)
}

#[cfg(test)]
mod tests;
