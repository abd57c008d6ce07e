//! Sequential whole-matrix kernel in linear memory.
//!
//! It is the tile kernel applied to one tile covering the whole matrix: one
//! row of `H`/`F` (`m` values each, updated in place strip by strip) and one
//! column of `H`/`E` (`n` values), so memory is `O(n + m)`. The kernel is the
//! one [`crate::sw::tile`] uses: striped on 8/16-bit lanes with the widest
//! instruction set available, 32-bit lanes for rows past their range.

use crate::progress::Progress;
use crate::sw::alignment::Checkpoints;
use crate::sw::kernel::{self, TileIo, LANES};
use crate::sw::tile::{check_tile, EdgeCol, EdgeRow};
use crate::sw::{Best, Kernel, Scoring};

/// Cells per band of [`align_with_progress`]: a few milliseconds of work,
/// so the bar moves smoothly and the extra kernel calls cost nothing.
const BAND_CELLS: usize = 1 << 24;

/// Best local alignment score of `a` (rows) against `b` (columns) and its end
/// cell; see the crate docs for the tie-break. Equals
/// [`crate::sw::reference::align`].
///
/// # Panics
///
/// If a code is out of range for a matrix scoring, or if
/// `min(n, m) * max_substitution` could exceed [`crate::sw::MAX_SCORE`].
pub fn align(a: &[u8], b: &[u8], scoring: &Scoring) -> Best {
    align_with(Kernel::Auto, a, b, scoring)
}

/// [`align`] with an explicit kernel choice: one band of every row.
pub fn align_with(kernel: Kernel, a: &[u8], b: &[u8], scoring: &Scoring) -> Best {
    align_in_bands(kernel, a, b, scoring, a.len().max(1), |_, _| {})
}

/// [`align`] reporting to `progress`: its length becomes the number of
/// cells, and it advances by a band of rows (about 2^24 cells) at a time.
/// The bands only cut the kernel's one pass into several on whole strips of
/// rows: the result is the same, and so is the speed (`smith-waterman
/// --random 80000 80000`: 1.82–1.83 s in one pass, 1.83–1.85 s banded).
///
/// # Panics
///
/// As [`align`].
pub fn align_with_progress(a: &[u8], b: &[u8], scoring: &Scoring, progress: &Progress) -> Best {
    let mut none = Checkpoints::none();
    align_keeping(band_rows(b.len()), a, b, scoring, progress, &mut none)
}

/// [`align_with_progress`] keeping rows of `H` and `F` at evenly spaced
/// band ends for [`crate::sw::alignment::trace`] (at most
/// [`crate::sw::alignment::CHECKPOINT_BYTES`] of them). Copying a row per
/// kept band costs nothing next to computing the band.
///
/// # Panics
///
/// As [`align`].
pub fn align_with_checkpoints(
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    progress: &Progress,
) -> (Best, Checkpoints) {
    align_with_checkpoints_in(band_rows(b.len()), a, b, scoring, progress)
}

/// [`align_with_checkpoints`] in bands of `band` rows.
pub(crate) fn align_with_checkpoints_in(
    band: usize,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    progress: &Progress,
) -> (Best, Checkpoints) {
    let mut checkpoints = Checkpoints::for_pass(a.len(), b.len(), band);
    let best = align_keeping(band, a, b, scoring, progress, &mut checkpoints);
    (best, checkpoints)
}

/// The matrix in bands of `band` rows, reporting to `progress` and offering
/// every band's last row but the matrix's to `checkpoints`.
fn align_keeping(
    band: usize,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    progress: &Progress,
    checkpoints: &mut Checkpoints,
) -> Best {
    progress.set_length(a.len() as u64 * b.len() as u64);
    let columns = b.len() as u64;
    let mut done = 0;
    align_in_bands(Kernel::Auto, a, b, scoring, band, |rows, top| {
        done += rows;
        progress.inc(rows as u64 * columns);
        if done < a.len() {
            checkpoints.offer(done, top);
        }
    })
}

/// Rows per band for rows of `columns` cells: whole strips, about
/// [`BAND_CELLS`] cells, at least one strip.
fn band_rows(columns: usize) -> usize {
    (BAND_CELLS / columns.max(1) / LANES).max(1) * LANES
}

/// The matrix by bands of `band` rows, calling `done` with the rows of
/// each band and its last row's `H` and `F` once it is computed: the one
/// sequential path, whole (one band), reporting progress or keeping
/// checkpoints.
fn align_in_bands(
    kernel: Kernel,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    band: usize,
    mut done: impl FnMut(usize, &EdgeRow),
) -> Best {
    let mut top = EdgeRow::border(b.len());
    let mut left = EdgeCol::border(a.len());
    // Checked once for the whole matrix: the bound on the scores checked
    // per band would count the rows above it twice.
    check_tile(a, b, scoring, &top, &left);
    let mut best = Best::zero_at(0, 0);
    if b.is_empty() {
        return best;
    }
    for (k, rows) in a.chunks(band).enumerate() {
        let row0 = k * band;
        let span = row0..row0 + rows.len();
        let band_best = kernel::run_tile(
            kernel,
            scoring,
            TileIo {
                a: rows,
                b,
                top_h: &mut top.h,
                top_f: &mut top.f,
                left_h: &mut left.h[span.clone()],
                left_e: &mut left.e[span],
                // H on the matrix's left border.
                corner: 0,
                row0,
                col0: 0,
            },
        );
        best = best.merge(band_best);
        done(rows.len(), &top);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sw::random::{random_dna, random_protein};
    use crate::sw::reference;

    #[test]
    fn bands_give_the_whole_matrix_result() {
        let dna = Scoring::dna_default();
        let protein = Scoring::blosum62(10, 1).unwrap();
        for (len_a, len_b, seed) in [(0, 9, 1), (9, 0, 2), (1, 1, 3), (100, 37, 4), (61, 130, 5)] {
            let cases = [
                (random_dna(len_a, seed), random_dna(len_b, seed + 100), &dna),
                (
                    random_protein(len_a, seed),
                    random_protein(len_b, seed + 100),
                    &protein,
                ),
            ];
            for (a, b, scoring) in &cases {
                let want = reference::align(a, b, scoring);
                for kernel in [Kernel::Scalar, Kernel::Portable, Kernel::Auto] {
                    for band in [1, 5, 16, 32, 1000] {
                        let mut cells = 0;
                        let got = align_in_bands(kernel, a, b, scoring, band, |rows, top| {
                            assert_eq!(top.len(), b.len());
                            cells += (rows * b.len()) as u64;
                        });
                        assert_eq!(got, want, "{kernel:?} band {band}: {len_a}x{len_b}");
                        assert_eq!(cells, (len_a * len_b) as u64);
                    }
                }
            }
        }
    }

    #[test]
    fn the_reporting_alignment_equals_align() {
        // Rows of 2^20 cells: BAND_CELLS makes bands of one strip, so the
        // 3 strips and a row of A take 4 bands.
        let scoring = Scoring::dna_default();
        let (a, b) = (random_dna(3 * LANES + 1, 7), random_dna(1 << 20, 8));
        assert_eq!(band_rows(b.len()), LANES);
        assert_eq!(band_rows(1), BAND_CELLS);
        let progress = Progress::hidden();
        assert_eq!(
            align_with_progress(&a, &b, &scoring, &progress),
            align(&a, &b, &scoring)
        );
    }
}
