//! Sequential kernel in linear memory.
//!
//! It is the tile kernel applied to the whole matrix in column blocks: one
//! row of `H`/`F` (`m` values each, updated in place block by block) and
//! one column of `H`/`E` (`n` values, the right edge of one block handed to
//! the next), so memory is `O(n + m)`. The kernel is the one
//! [`crate::sw::tile`] uses: striped on 8/16-bit lanes with the widest
//! instruction set available, 32-bit lanes for rows past their range.
//!
//! Why blocks rather than whole rows: on related sequences, right of the
//! best alignment's path every cell's score comes from a horizontal gap
//! that crosses all the striped lanes, and such a row takes the kernel a
//! second pass. A whole row right of the path's cell pays it over its whole
//! width; a block left of the path pays nothing (see [`BLOCK_COLS`]), and
//! a block right of it runs transposed, its gaps down the engine's columns
//! (see `kernel::orientation`).

use std::ops::Range;

use crate::progress::Progress;
use crate::sw::alignment::Checkpoints;
use crate::sw::kernel::{self, TileIo, LANES};
use crate::sw::tile::{check_tile, EdgeCol, EdgeRow, Origin};
use crate::sw::{Best, Kernel, Scoring};

/// About how many columns a block has: wide enough that what a tile
/// costs besides its cells stays small, narrow enough that on related
/// sequences the blocks left of the best path skip the second pass (on 2
/// cores, related DNA 20000 x 20000 ran about 1.2x faster in blocks of
/// 4096 than in whole rows; random DNA at the same speed).
pub const BLOCK_COLS: usize = 4096;

/// Cells per band of [`align_with_progress`]: about ten milliseconds of
/// work, so the bar moves smoothly. Each band starts every column block
/// again (its edges into the kernel's lane layout, its profile looked up,
/// its first rows on narrow lanes): bands of 2^24 cells ran 3–16% slower
/// (related DNA 20000², random DNA 40000² and 60000², 2 cores).
const BAND_CELLS: usize = 1 << 26;

/// Fewest rows of a band of [`align_with_progress`] on long rows, where
/// 2^26 cells make short bands: 671 rows for 100000 columns, over which
/// each block's start is paid again. Bands of 4096 rows ran random DNA
/// 100000² in 0.95 of the time, 60000² in 0.98 and related DNA 100000²
/// in 0.94 (paired medians, 2 cores), and still advance the bar every
/// 20 ms or so at 100000 columns.
const MIN_BAND_ROWS: usize = 4096;

/// Cells per band of [`align_with_checkpoints`]: the bands' last rows are
/// the rows the traceback may keep, so more of them make its blocks
/// shorter (24 kept rows for 20000², where the traceback takes about a
/// tenth of the pass).
const CHECKPOINT_BAND_CELLS: usize = 1 << 24;

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
    align_in_bands(
        kernel,
        (a, b),
        scoring,
        (a.len().max(1), BLOCK_COLS),
        |_, _| {},
    )
}

/// [`align`] reporting to `progress`: its length becomes the number of
/// cells, and it advances by a band of rows (about 2^26 cells) at a time.
/// The bands cut the pass into several on whole strips of rows: the result
/// is the same.
///
/// # Panics
///
/// As [`align`].
pub fn align_with_progress(a: &[u8], b: &[u8], scoring: &Scoring, progress: &Progress) -> Best {
    let mut none = Checkpoints::none();
    align_keeping(
        band_rows(b.len(), BAND_CELLS).max(MIN_BAND_ROWS),
        a,
        b,
        scoring,
        progress,
        &mut none,
    )
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
    align_with_checkpoints_in(
        band_rows(b.len(), CHECKPOINT_BAND_CELLS),
        a,
        b,
        scoring,
        progress,
    )
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
    align_in_bands(
        Kernel::Auto,
        (a, b),
        scoring,
        (band, BLOCK_COLS),
        |rows, top| {
            done += rows;
            progress.inc(rows as u64 * columns);
            if done < a.len() {
                checkpoints.offer(done, top);
            }
        },
    )
}

/// Rows per band for rows of `columns` cells: whole strips, about `cells`
/// cells, at least one strip.
fn band_rows(columns: usize, cells: usize) -> usize {
    (cells / columns.max(1) / LANES).max(1) * LANES
}

/// The column blocks of a row of `len` columns: about `target` each, of
/// equal widths, a whole number of 32-column vectors but the last.
fn column_blocks(len: usize, target: usize) -> impl Iterator<Item = Range<usize>> {
    let target = target.max(1);
    let count = ((len + target / 2) / target).max(1);
    let width = len.div_ceil(count).next_multiple_of(32).max(32);
    (0..len.div_ceil(width)).map(move |k| k * width..((k + 1) * width).min(len))
}

/// The matrix by bands of `band` rows, each band in column blocks, calling
/// `done` with the rows of each band and its last row's `H` and `F` once
/// it is computed: the one sequential path, whole (one band), reporting
/// progress or keeping checkpoints.
fn align_in_bands(
    kernel: Kernel,
    (a, b): (&[u8], &[u8]),
    scoring: &Scoring,
    (band, block): (usize, usize),
    mut done: impl FnMut(usize, &EdgeRow),
) -> Best {
    let mut top = EdgeRow::border(b.len());
    let mut left = EdgeCol::border(a.len());
    // Checked once for the whole matrix: the bound on the scores checked
    // per tile would count the rows above it twice.
    check_tile(a, b, scoring, Origin::default(), &top, &left);
    let mut best = Best::zero_at(0, 0);
    if b.is_empty() {
        return best;
    }
    let blocks: Vec<Range<usize>> = column_blocks(b.len(), block).collect();
    for (k, rows) in a.chunks(band).enumerate() {
        let row0 = k * band;
        let span = row0..row0 + rows.len();
        // H above-left of the block: the matrix's left border for the
        // first; for the others, the row above's value before the block
        // to their left overwrote it.
        let mut corner = 0;
        for cols in &blocks {
            let corner_of_next = top.h[cols.end - 1];
            // The right edge of the block to the left, in `left`, is the
            // left edge of this one; the first finds the border there.
            let block_best = kernel::run_tile(
                kernel,
                scoring,
                TileIo {
                    a: rows,
                    b: &b[cols.clone()],
                    top_h: &mut top.h[cols.clone()],
                    top_f: &mut top.f[cols.clone()],
                    left_h: &mut left.h[span.clone()],
                    left_e: &mut left.e[span.clone()],
                    corner,
                    row0,
                    col0: cols.start,
                },
            );
            best = best.merge(block_best);
            corner = corner_of_next;
        }
        done(rows.len(), &top);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sw::random::{mutated, random_dna, random_protein};
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
                    for (band, block) in [(1, 32), (5, 4096), (16, 40), (32, 64), (1000, 1)] {
                        let mut cells = 0;
                        let got =
                            align_in_bands(kernel, (a, b), scoring, (band, block), |rows, top| {
                                assert_eq!(top.len(), b.len());
                                cells += (rows * b.len()) as u64;
                            });
                        assert_eq!(
                            got, want,
                            "{kernel:?} band {band} block {block}: {len_a}x{len_b}"
                        );
                        assert_eq!(cells, (len_a * len_b) as u64);
                    }
                }
            }
        }
    }

    #[test]
    fn column_blocks_cover_the_row_in_equal_vector_widths() {
        let widths = |len, target| -> Vec<usize> {
            let blocks: Vec<_> = column_blocks(len, target).collect();
            assert_eq!(blocks.first().map_or(0, |b| b.start), 0);
            assert_eq!(blocks.last().map_or(0, |b| b.end), len);
            assert!(blocks.windows(2).all(|w| w[0].end == w[1].start));
            blocks.iter().map(|b| b.len()).collect()
        };
        assert_eq!(widths(20_000, 4096), [4000; 5]);
        assert_eq!(widths(10_000, 4096), [5024, 4976]);
        assert_eq!(widths(5_000, 4096), [5000]);
        assert_eq!(widths(130, 32), [64, 64, 2]);
        assert_eq!(widths(0, 4096), [0usize; 0]);
    }

    #[test]
    fn related_sequences_in_many_blocks_equal_the_reference() {
        // Long rows in blocks of 32 to 4096 columns: the best path crosses
        // from block to block, and its gaps cross block edges.
        let dna = Scoring::match_mismatch(2, -1, 3, 1).unwrap();
        let protein = Scoring::blosum62(11, 1).unwrap();
        let a = random_dna(90, 11);
        let b = mutated(&random_dna(9000, 11), 4, 0.1, 12);
        let pa = random_protein(70, 13);
        let pb = mutated(&random_protein(5000, 13), 20, 0.1, 14);
        for (a, b, scoring) in [(&a, &b, &dna), (&pa, &pb, &protein)] {
            let want = reference::align(a, b, scoring);
            for kernel in [Kernel::Scalar, Kernel::Auto] {
                for (band, block) in [(90, 4096), (7, 100), (64, 1000), (90, 32)] {
                    let got = align_in_bands(kernel, (a, b), scoring, (band, block), |_, _| {});
                    assert_eq!(got, want, "{kernel:?} band {band} block {block}");
                }
            }
        }
    }

    #[test]
    fn scores_past_16_bits_equal_the_reference() {
        // A related pair gaining about 16 a row: from about row 4000 the
        // cells near its path lie past 65535, where the 16-bit passes run
        // relative to a base. One band of the whole matrix crosses 65535;
        // bands of 704 and 4000 rows also start past it.
        let scoring = Scoring::match_mismatch(20, -3, 7, 2).unwrap();
        let a = random_dna(5000, 21);
        let b = mutated(&a, 4, 0.08, 22);
        let want = reference::align(&a, &b, &scoring);
        assert!(want.score > 75_000, "score {}", want.score);
        for kernel in Kernel::available() {
            for (band, block) in [(5000, 4096), (704, 1000), (4000, 2500)] {
                let got = align_in_bands(kernel, (&a, &b), &scoring, (band, block), |_, _| {});
                assert_eq!(got, want, "{kernel:?} band {band} block {block}");
            }
        }
    }

    #[test]
    fn bands_are_whole_strips_of_about_the_cells_asked() {
        assert_eq!(band_rows(1 << 22, BAND_CELLS), LANES);
        assert_eq!(band_rows(1, BAND_CELLS), BAND_CELLS);
        assert_eq!(band_rows(1000, 100_000), 96);
        assert_eq!(band_rows(0, 64), 64);
    }

    #[test]
    fn the_reporting_alignment_equals_align() {
        // Bands of one strip: the 3 strips and a row of A take 4 bands.
        let scoring = Scoring::dna_default();
        let (a, b) = (random_dna(3 * LANES + 1, 7), random_dna(5000, 8));
        let progress = Progress::hidden();
        let mut none = Checkpoints::none();
        assert_eq!(
            align_keeping(LANES, &a, &b, &scoring, &progress, &mut none),
            align(&a, &b, &scoring)
        );
        assert_eq!(
            align_with_progress(&a, &b, &scoring, &progress),
            align(&a, &b, &scoring)
        );
    }
}
