//! Scoring schemes: match/mismatch or a substitution matrix, plus affine gap
//! penalties.

use std::borrow::Cow;
use std::fmt;

/// "Minus infinity" for the gap states `E`/`F` on matrix borders. Chosen so
/// that subtracting any allowed penalty cannot overflow `i32`.
pub const NEG_INF: i32 = -(1 << 29);
/// Largest `H` value the kernels accept or produce; kernels panic before a
/// computation that could exceed it (see [`crate::sw::tile::tile_in_place`]).
pub const MAX_SCORE: i32 = 1 << 29;
/// Largest absolute value accepted for any scoring parameter.
pub const MAX_PARAM: i32 = 1 << 20;
/// Substitution matrices are stored as a flat `MATRIX_DIM x MATRIX_DIM` table.
pub const MATRIX_DIM: usize = 32;

/// BLOSUM62 in the order of [`crate::sw::alphabet::PROTEIN_LETTERS`]
/// (`A R N D C Q E G H I L K M F P S T W Y V B Z X *`), as distributed by NCBI.
#[rustfmt::skip]
pub const BLOSUM62: [[i8; 24]; 24] = [
    //A   R   N   D   C   Q   E   G   H   I   L   K   M   F   P   S   T   W   Y   V   B   Z   X   *
    [ 4, -1, -2, -2,  0, -1, -1,  0, -2, -1, -1, -1, -1, -2, -1,  1,  0, -3, -2,  0, -2, -1,  0, -4], // A
    [-1,  5,  0, -2, -3,  1,  0, -2,  0, -3, -2,  2, -1, -3, -2, -1, -1, -3, -2, -3, -1,  0, -1, -4], // R
    [-2,  0,  6,  1, -3,  0,  0,  0,  1, -3, -3,  0, -2, -3, -2,  1,  0, -4, -2, -3,  3,  0, -1, -4], // N
    [-2, -2,  1,  6, -3,  0,  2, -1, -1, -3, -4, -1, -3, -3, -1,  0, -1, -4, -3, -3,  4,  1, -1, -4], // D
    [ 0, -3, -3, -3,  9, -3, -4, -3, -3, -1, -1, -3, -1, -2, -3, -1, -1, -2, -2, -1, -3, -3, -2, -4], // C
    [-1,  1,  0,  0, -3,  5,  2, -2,  0, -3, -2,  1,  0, -3, -1,  0, -1, -2, -1, -2,  0,  3, -1, -4], // Q
    [-1,  0,  0,  2, -4,  2,  5, -2,  0, -3, -3,  1, -2, -3, -1,  0, -1, -3, -2, -2,  1,  4, -1, -4], // E
    [ 0, -2,  0, -1, -3, -2, -2,  6, -2, -4, -4, -2, -3, -3, -2,  0, -2, -2, -3, -3, -1, -2, -1, -4], // G
    [-2,  0,  1, -1, -3,  0,  0, -2,  8, -3, -3, -1, -2, -1, -2, -1, -2, -2,  2, -3,  0,  0, -1, -4], // H
    [-1, -3, -3, -3, -1, -3, -3, -4, -3,  4,  2, -3,  1,  0, -3, -2, -1, -3, -1,  3, -3, -3, -1, -4], // I
    [-1, -2, -3, -4, -1, -2, -3, -4, -3,  2,  4, -2,  2,  0, -3, -2, -1, -2, -1,  1, -4, -3, -1, -4], // L
    [-1,  2,  0, -1, -3,  1,  1, -2, -1, -3, -2,  5, -1, -3, -1,  0, -1, -3, -2, -2,  0,  1, -1, -4], // K
    [-1, -1, -2, -3, -1,  0, -2, -3, -2,  1,  2, -1,  5,  0, -2, -1, -1, -1, -1,  1, -3, -1, -1, -4], // M
    [-2, -3, -3, -3, -2, -3, -3, -3, -1,  0,  0, -3,  0,  6, -4, -2, -2,  1,  3, -1, -3, -3, -1, -4], // F
    [-1, -2, -2, -1, -3, -1, -1, -2, -2, -3, -3, -1, -2, -4,  7, -1, -1, -4, -3, -2, -2, -1, -2, -4], // P
    [ 1, -1,  1,  0, -1,  0,  0,  0, -1, -2, -2,  0, -1, -2, -1,  4,  1, -3, -2, -2,  0,  0,  0, -4], // S
    [ 0, -1,  0, -1, -1, -1, -1, -2, -2, -1, -1, -1, -1, -2, -1,  1,  5, -2, -2,  0, -1, -1,  0, -4], // T
    [-3, -3, -4, -4, -2, -2, -3, -2, -2, -3, -2, -3, -1,  1, -4, -3, -2, 11,  2, -3, -4, -3, -2, -4], // W
    [-2, -2, -2, -3, -2, -1, -2, -3,  2, -1, -1, -2, -1,  3, -3, -2, -2,  2,  7, -1, -3, -2, -1, -4], // Y
    [ 0, -3, -3, -3, -1, -2, -2, -3, -3,  3,  1, -2,  1, -1, -2, -2,  0, -3, -1,  4, -3, -2, -1, -4], // V
    [-2, -1,  3,  4, -3,  0,  1, -1,  0, -3, -4,  0, -3, -3, -2,  0, -1, -4, -3, -3,  4,  1, -1, -4], // B
    [-1,  0,  0,  1, -3,  3,  4, -2,  0, -3, -3,  1, -1, -3, -1,  0, -1, -3, -2, -2,  1,  4, -1, -4], // Z
    [ 0, -1, -1, -1, -2, -1, -1, -1, -1, -1, -1, -1, -1, -1, -2,  0,  0, -2, -1, -1, -1, -1, -1, -4], // X
    [-4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4,  1], // *
];

/// A square substitution matrix over codes `0..size` (`size <= 32`), stored
/// flat and zero-padded to 32 x 32 so that any code pair `< 32` indexes it.
#[derive(Clone, PartialEq, Eq)]
pub struct SubstMatrix {
    name: String,
    size: usize,
    table: Box<[i32; MATRIX_DIM * MATRIX_DIM]>,
}

impl fmt::Debug for SubstMatrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubstMatrix")
            .field("name", &self.name)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl SubstMatrix {
    /// Builds a matrix from rows (`rows.len() == size`, every row of length
    /// `size`, `1 <= size <= 32`, `|entry| <= MAX_PARAM`).
    pub fn from_rows<R: AsRef<[i32]>>(name: &str, rows: &[R]) -> Result<Self, ScoringError> {
        let size = rows.len();
        if size == 0 || size > MATRIX_DIM || rows.iter().any(|r| r.as_ref().len() != size) {
            return Err(ScoringError::BadMatrixShape);
        }
        let mut table = Box::new([0i32; MATRIX_DIM * MATRIX_DIM]);
        for (i, row) in rows.iter().enumerate() {
            for (j, &v) in row.as_ref().iter().enumerate() {
                check_param("matrix entry", v)?;
                table[i * MATRIX_DIM + j] = v;
            }
        }
        Ok(SubstMatrix {
            name: name.to_string(),
            size,
            table,
        })
    }

    /// The BLOSUM62 matrix (24 x 24, protein codes).
    pub fn blosum62() -> Self {
        let rows: Vec<Vec<i32>> = BLOSUM62
            .iter()
            .map(|r| r.iter().map(|&v| i32::from(v)).collect())
            .collect();
        SubstMatrix::from_rows("BLOSUM62", &rows).expect("BLOSUM62 is well-formed")
    }

    /// Matrix name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of codes (`codes must be < size`).
    pub fn size(&self) -> usize {
        self.size
    }

    /// Score of a code pair. Panics if a code is `>= size`.
    pub fn get(&self, a: u8, b: u8) -> i32 {
        assert!(
            (a as usize) < self.size && (b as usize) < self.size,
            "code out of range for matrix {}",
            self.name
        );
        self.table[a as usize * MATRIX_DIM + b as usize]
    }

    /// The flat padded table (`table[a * 32 + b]`).
    pub(crate) fn table(&self) -> &[i32; MATRIX_DIM * MATRIX_DIM] {
        &self.table
    }

    /// The matrix with its rows and columns exchanged (`get(a, b)` of the
    /// result is `get(b, a)` of `self`), under the same name.
    fn transposed(&self) -> SubstMatrix {
        let mut table = Box::new([0i32; MATRIX_DIM * MATRIX_DIM]);
        for i in 0..MATRIX_DIM {
            for j in 0..MATRIX_DIM {
                table[j * MATRIX_DIM + i] = self.table[i * MATRIX_DIM + j];
            }
        }
        SubstMatrix {
            name: self.name.clone(),
            size: self.size,
            table,
        }
    }

    fn is_symmetric(&self) -> bool {
        (0..MATRIX_DIM).all(|i| {
            (0..i).all(|j| self.table[i * MATRIX_DIM + j] == self.table[j * MATRIX_DIM + i])
        })
    }

    fn max_entry(&self) -> i32 {
        (0..self.size)
            .flat_map(|i| (0..self.size).map(move |j| (i, j)))
            .map(|(i, j)| self.table[i * MATRIX_DIM + j])
            .max()
            .unwrap_or(0)
    }
}

/// How aligned letter pairs are scored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Substitution {
    /// Equal codes score `matched`, different codes `mismatched`.
    MatchMismatch {
        /// Score of identical codes.
        matched: i32,
        /// Score of different codes (normally negative).
        mismatched: i32,
    },
    /// Table lookup; all codes must be `< matrix.size()`.
    Matrix(SubstMatrix),
}

/// A complete scoring scheme. Gap penalties are positive numbers: a gap of
/// length `L` scores `-(gap_open + (L - 1) * gap_extend)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scoring {
    subst: Substitution,
    gap_open: i32,
    gap_extend: i32,
}

/// Rejected scoring parameters.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScoringError {
    /// A parameter's magnitude exceeds [`MAX_PARAM`].
    #[error("{what} = {value} is out of range (|x| <= {MAX_PARAM})")]
    OutOfRange {
        /// Which parameter.
        what: &'static str,
        /// Its value.
        value: i32,
    },
    /// Gap penalties must satisfy `0 <= gap_extend <= gap_open`.
    #[error("gap penalties must satisfy 0 <= extend <= open (got open {open}, extend {extend})")]
    BadGaps {
        /// Gap-open penalty given.
        open: i32,
        /// Gap-extend penalty given.
        extend: i32,
    },
    /// Matrix rows are empty, ragged, or larger than 32.
    #[error("substitution matrix must be square with 1..=32 rows")]
    BadMatrixShape,
}

fn check_param(what: &'static str, value: i32) -> Result<(), ScoringError> {
    // `unsigned_abs`: `i32::MIN` has no positive `abs`.
    if value.unsigned_abs() > MAX_PARAM.unsigned_abs() {
        Err(ScoringError::OutOfRange { what, value })
    } else {
        Ok(())
    }
}

impl Scoring {
    /// Validated scoring scheme (`0 <= gap_extend <= gap_open`, all
    /// magnitudes `<= MAX_PARAM`).
    pub fn new(subst: Substitution, gap_open: i32, gap_extend: i32) -> Result<Self, ScoringError> {
        if let Substitution::MatchMismatch {
            matched,
            mismatched,
        } = subst
        {
            check_param("match", matched)?;
            check_param("mismatch", mismatched)?;
        }
        check_param("gap open", gap_open)?;
        check_param("gap extend", gap_extend)?;
        if gap_extend < 0 || gap_open < gap_extend {
            return Err(ScoringError::BadGaps {
                open: gap_open,
                extend: gap_extend,
            });
        }
        Ok(Scoring {
            subst,
            gap_open,
            gap_extend,
        })
    }

    /// Match/mismatch scoring.
    pub fn match_mismatch(
        matched: i32,
        mismatched: i32,
        gap_open: i32,
        gap_extend: i32,
    ) -> Result<Self, ScoringError> {
        Scoring::new(
            Substitution::MatchMismatch {
                matched,
                mismatched,
            },
            gap_open,
            gap_extend,
        )
    }

    /// The defaults: match 2, mismatch -1, gap open 2, gap extend 2.
    pub fn dna_default() -> Self {
        Scoring::match_mismatch(2, -1, 2, 2).expect("defaults are valid")
    }

    /// BLOSUM62 with the given gap penalties.
    pub fn blosum62(gap_open: i32, gap_extend: i32) -> Result<Self, ScoringError> {
        Scoring::new(
            Substitution::Matrix(SubstMatrix::blosum62()),
            gap_open,
            gap_extend,
        )
    }

    /// The substitution part.
    pub fn substitution(&self) -> &Substitution {
        &self.subst
    }

    /// Every parameter as text, a substitution matrix's entries included
    /// (its `Debug` shows only the name): two scorings have the same text
    /// exactly when they are equal. For comparing the scorings of separate
    /// processes.
    ///
    /// ```
    /// use apps::sw::{Scoring, SubstMatrix, Substitution};
    ///
    /// let matrix = |x| SubstMatrix::from_rows("m", &[[1, -1], [-1, x]]).unwrap();
    /// let scoring = |x| Scoring::new(Substitution::Matrix(matrix(x)), 3, 1).unwrap();
    /// assert_eq!(scoring(2).parameters(), scoring(2).parameters());
    /// assert_ne!(scoring(2).parameters(), scoring(3).parameters());
    /// ```
    pub fn parameters(&self) -> String {
        match &self.subst {
            Substitution::Matrix(m) => {
                let rows: Vec<&[i32]> = m
                    .table()
                    .chunks(MATRIX_DIM)
                    .take(m.size())
                    .map(|row| &row[..m.size()])
                    .collect();
                format!("{self:?} {rows:?}")
            }
            Substitution::MatchMismatch { .. } => format!("{self:?}"),
        }
    }

    /// Gap-open penalty (cost of the first gap position).
    pub fn gap_open(&self) -> i32 {
        self.gap_open
    }

    /// Gap-extend penalty (cost of each further gap position).
    pub fn gap_extend(&self) -> i32 {
        self.gap_extend
    }

    /// Score of aligning code `a` with code `b`.
    pub fn score(&self, a: u8, b: u8) -> i32 {
        match &self.subst {
            Substitution::MatchMismatch {
                matched,
                mismatched,
            } => {
                if a == b {
                    *matched
                } else {
                    *mismatched
                }
            }
            Substitution::Matrix(m) => m.get(a, b),
        }
    }

    /// The scheme for the matrix's transpose, which aligns `b` (rows)
    /// against `a` (columns): `score(x, y)` of the result is `score(y, x)`
    /// of `self`. Borrowed where the substitution is symmetric (every
    /// match/mismatch scheme, BLOSUM62).
    pub(crate) fn transposed(&self) -> Cow<'_, Scoring> {
        match &self.subst {
            Substitution::Matrix(m) if !m.is_symmetric() => Cow::Owned(Scoring {
                subst: Substitution::Matrix(m.transposed()),
                gap_open: self.gap_open,
                gap_extend: self.gap_extend,
            }),
            _ => Cow::Borrowed(self),
        }
    }

    /// Largest substitution score, clamped at 0 (bounds how fast `H` grows).
    pub fn max_gain(&self) -> i32 {
        match &self.subst {
            Substitution::MatchMismatch {
                matched,
                mismatched,
            } => (*matched).max(*mismatched).max(0),
            Substitution::Matrix(m) => m.max_entry().max(0),
        }
    }

    /// Panics unless every code is valid for this scheme (matrix scoring
    /// requires codes `< size`; match/mismatch accepts any byte).
    pub(crate) fn check_codes(&self, seq: &[u8], which: &str) {
        if let Substitution::Matrix(m) = &self.subst {
            // The largest code first: a reduction that vectorizes, where a
            // search for the first bad code runs a byte at a time (every
            // tile checks its rows and columns).
            let largest = seq.iter().copied().max().unwrap_or(0);
            if usize::from(largest) < m.size() {
                return;
            }
            if let Some(pos) = seq.iter().position(|&c| c as usize >= m.size()) {
                panic!(
                    "sequence {which}: code {} at position {pos} is out of range for matrix {} (size {})",
                    seq[pos],
                    m.name(),
                    m.size()
                );
            }
        }
    }
}

impl Default for Scoring {
    fn default() -> Self {
        Scoring::dna_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transposed_scheme_scores_pairs_the_other_way_round() {
        let m = SubstMatrix::from_rows("m", &[[2, -1, 0], [-3, 2, 1], [0, -2, 2]]).unwrap();
        let scoring = Scoring::new(Substitution::Matrix(m), 3, 1).unwrap();
        let t = scoring.transposed();
        assert!(matches!(t, Cow::Owned(_)));
        for x in 0..3 {
            for y in 0..3 {
                assert_eq!(t.score(x, y), scoring.score(y, x), "({x}, {y})");
            }
        }
        assert_eq!((t.gap_open(), t.gap_extend()), (3, 1));
        // Symmetric schemes are their own transpose.
        assert!(matches!(
            Scoring::blosum62(11, 1).unwrap().transposed(),
            Cow::Borrowed(_)
        ));
        assert!(matches!(
            Scoring::dna_default().transposed(),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn parameters_differ_where_any_entry_does() {
        let rows =
            |x, y| SubstMatrix::from_rows("m", &[[2, -1, 0], [-1, 2, x], [0, y, 2]]).unwrap();
        let scoring = |m| Scoring::new(Substitution::Matrix(m), 3, 1).unwrap();
        let base = scoring(rows(-2, -2)).parameters();
        assert_eq!(base, scoring(rows(-2, -2)).parameters());
        assert_ne!(base, scoring(rows(-3, -2)).parameters());
        assert_ne!(base, scoring(rows(-2, -3)).parameters());
        // The gap penalties are in it too.
        let gaps = Scoring::new(Substitution::Matrix(rows(-2, -2)), 4, 1).unwrap();
        assert_ne!(base, gaps.parameters());
    }

    #[test]
    fn blosum62_is_symmetric_with_known_entries() {
        for (i, row) in BLOSUM62.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                assert_eq!(v, BLOSUM62[j][i], "({i},{j})");
            }
        }
        let diag: Vec<i8> = (0..24).map(|i| BLOSUM62[i][i]).collect();
        assert_eq!(
            diag,
            [4, 5, 6, 6, 9, 5, 5, 6, 8, 4, 4, 5, 5, 6, 7, 4, 5, 11, 7, 4, 4, 4, -1, 1]
        );
        let m = SubstMatrix::blosum62();
        assert_eq!(m.get(17, 17), 11); // W/W
        assert_eq!(m.get(0, 23), -4); // A/*
    }

    #[test]
    fn validation() {
        assert!(Scoring::match_mismatch(2, -1, 2, 3).is_err());
        assert!(Scoring::match_mismatch(2, -1, 3, -1).is_err());
        assert!(Scoring::match_mismatch(MAX_PARAM + 1, -1, 3, 1).is_err());
        assert!(Scoring::match_mismatch(2, -MAX_PARAM, 3, 1).is_ok());
        assert_eq!(
            Scoring::match_mismatch(2, i32::MIN, 3, 1).unwrap_err(),
            ScoringError::OutOfRange {
                what: "mismatch",
                value: i32::MIN
            }
        );
        assert!(Scoring::match_mismatch(2, -1, 0, 0).is_ok());
        assert_eq!(Scoring::dna_default().score(1, 1), 2);
        assert_eq!(Scoring::dna_default().score(1, 2), -1);
        assert!(SubstMatrix::from_rows("x", &[vec![1, 2], vec![3]]).is_err());
    }
}
