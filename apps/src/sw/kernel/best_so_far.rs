//! The best cell the engines of one tile have found so far, and the order
//! in which they break ties between cells of equal score.
//!
//! An engine visits its rows in order and, within a row, finds the first
//! column reaching the row's maximum. Where its rows are the matrix's rows
//! ([`Order::Rows`]), keeping the first row that exceeds every earlier one
//! gives the crate's tie-break (smaller row, then smaller column). Where
//! its rows are the matrix's columns (a transposed tile, [`Order::Columns`]),
//! a later row that only equals the best may still hold the first cell in
//! the matrix's order, at a smaller engine column: such rows are offered too.

use crate::sw::best::Best;

/// Which of the engine's coordinates the crate's tie-break compares first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// The engine's rows are the matrix's: smaller row, then column.
    Rows,
    /// The engine's rows are the matrix's columns: smaller engine column
    /// (the matrix's row), then engine row.
    Columns,
}

impl Order {
    /// Whether `a` wins over `b` (cells in the engine's coordinates).
    fn beats(self, a: &Best, b: &Best) -> bool {
        match self {
            Order::Rows => a.beats(b),
            Order::Columns => {
                a.score > b.score || (a.score == b.score && (a.col, a.row) < (b.col, b.row))
            }
        }
    }
}

/// The best cell so far, in the engine's coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BestSoFar {
    pub(crate) best: Best,
    pub(crate) order: Order,
}

impl BestSoFar {
    pub(crate) fn new(best: Best, order: Order) -> Self {
        BestSoFar { best, order }
    }

    pub(crate) fn score(&self) -> i32 {
        self.best.score
    }

    /// Keeps `candidate` if it wins under the order.
    pub(crate) fn offer(&mut self, candidate: Best) {
        if self.order.beats(&candidate, &self.best) {
            self.best = candidate;
        }
    }

    /// Whether a row that only equals the best score must be offered.
    pub(crate) fn offers_ties(&self) -> bool {
        self.order == Order::Columns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(score: i32, row: usize, col: usize) -> Best {
        Best { score, row, col }
    }

    #[test]
    fn ties_go_to_the_first_cell_in_the_matrix_order() {
        let mut rows = BestSoFar::new(Best::zero_at(0, 0), Order::Rows);
        rows.offer(cell(5, 3, 9));
        rows.offer(cell(5, 4, 2));
        assert_eq!(rows.best, cell(5, 3, 9));
        let mut columns = BestSoFar::new(Best::zero_at(0, 0), Order::Columns);
        columns.offer(cell(5, 3, 9));
        columns.offer(cell(5, 4, 2));
        assert_eq!(columns.best, cell(5, 4, 2));
        columns.offer(cell(5, 5, 2));
        assert_eq!(columns.best, cell(5, 4, 2));
        // A higher score wins in either order.
        columns.offer(cell(6, 9, 9));
        assert_eq!(columns.best, cell(6, 9, 9));
        assert!(columns.offers_ties() && !rows.offers_ties());
    }
}
