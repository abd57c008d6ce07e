//! The result type shared by all kernels.

/// Best local-alignment score and the 0-based end cell (`row` in A, `col` in
/// B) that reaches it.
///
/// Ordering rule used by every kernel: higher score wins; on equal scores the
/// smaller `row` wins, then the smaller `col`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Best {
    /// Maximal `H` value (always `>= 0`).
    pub score: i32,
    /// 0-based row (index into A) of the end cell.
    pub row: usize,
    /// 0-based column (index into B) of the end cell.
    pub col: usize,
}

impl Best {
    /// Score 0 at the given cell: the initial value for a region whose first
    /// cell is `(row, col)`.
    pub const fn zero_at(row: usize, col: usize) -> Self {
        Best { score: 0, row, col }
    }

    /// `true` when `self` wins over `other` under the crate's tie-break rule
    /// (higher score, then smaller row, then smaller column).
    pub fn beats(&self, other: &Best) -> bool {
        self.score > other.score
            || (self.score == other.score && (self.row, self.col) < (other.row, other.col))
    }

    /// The winner of `self` and `other` (see [`Best::beats`]). Associative and
    /// commutative, so per-tile results can be merged in any order.
    pub fn merge(self, other: Best) -> Best {
        if other.beats(&self) {
            other
        } else {
            self
        }
    }
}

impl Default for Best {
    fn default() -> Self {
        Best::zero_at(0, 0)
    }
}
