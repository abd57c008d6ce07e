//! The "auto" tiling of the distributed drivers: inner and outer tile
//! sizes from the matrix and the ranks and threads that share it.

/// Columns of the narrowest "auto" inner tile, when the matrix has room
/// for one per thread, and of the narrowest column block that several
/// ranks split it into several per rank for (see [`auto_tiles`]).
pub const WIDE_TILE: usize = 2048;

/// Columns of the widest "auto" inner tile.
pub const MAX_TILE_COLS: usize = 4096;

/// Rows of the tallest "auto" inner tile for a kernel of at most 32 8-bit
/// lanes (AVX2, SSE4.1, the portable ones): see [`auto_tiles`].
pub const MAX_TILE_ROWS: usize = 1024;

/// Rows of the tallest "auto" inner tile for the kernel of 64 8-bit lanes
/// (AVX-512), whose cells cost about half as much while what a tile costs
/// besides them (its edges into and out of the lane layout, its first rows
/// on narrow lanes) does not shrink: twice the rows pay it over twice the
/// cells. On 2 cores with AVX-512, 2048-row tiles aligned related DNA
/// 20000² at 2 ranks of one worker in 0.96 of the time of 1024-row ones
/// (paired median of 31 alternating runs), at one rank of two in 0.97
/// (21), random DNA 20000² in 0.91 and 0.97 (15), random DNA 60000² in
/// 0.98 and 1.00 (7); the hybrid driver's in 0.95.
pub const MAX_TILE_ROWS_WIDE_LANES: usize = 2048;

/// The tallest "auto" inner tile for the kernel this CPU runs
/// ([`Kernel::Auto`](crate::sw::Kernel::Auto)): [`MAX_TILE_ROWS_WIDE_LANES`]
/// with AVX-512, [`MAX_TILE_ROWS`] otherwise. Ranks of one job agree on
/// one value before they cut the matrix (the smallest any of them has).
pub fn max_tile_rows() -> usize {
    use crate::sw::{Isa, Kernel};
    match Kernel::Auto.resolve() {
        Kernel::Striped(Isa::Avx512, _) => MAX_TILE_ROWS_WIDE_LANES,
        _ => MAX_TILE_ROWS,
    }
}

/// Column blocks per rank of hcmpi's "auto" outer tiles, whose ranks form
/// a pipeline down the bands (see [`auto_tiles`]).
pub const PIPELINE_BLOCKS: usize = 3;

/// Column blocks per rank of the hybrid driver's "auto" outer tiles,
/// computed one anti-diagonal after another (see [`auto_tiles`]).
pub const FORK_JOIN_BLOCKS: usize = 2;

/// The "auto" (inner, outer) tiles of an `n x m` matrix for `ranks` ranks
/// of `threads` threads, in up to `blocks_per_rank` column blocks per
/// rank.
///
/// What a tile costs besides its cells (edges into and out of the lane
/// layout, its checks) grows with its width and is paid once per tile, so
/// tiles are short only down to 256 rows: about `n / (4 * ranks *
/// threads)` rows, at most [`MAX_TILE_ROWS`] (1024-row tiles run within a
/// few percent of the whole-matrix kernel with AVX2, 256-row ones about
/// 20% slower; [`auto_tiles_up_to`] takes another cap). Their width
/// is about `m / (4 * ranks * threads)`, between 1024 and 4096 columns:
/// narrow enough that on related sequences the tiles below the best
/// alignment's path (where gaps do not cross the striped lanes, so a row
/// needs no scan across them; this was measured when it was a second
/// pass over the row) are not computed together with the tiles above
/// it, wide enough to keep the per-tile costs small. On 2 cores, 2560
/// columns align the related 20000 x 20000 pair about 1.3x faster than
/// 10048 (one tile column per thread) and 1.15x faster than 1024.
///
/// Each row of a tile also pays a fixed cost besides its vectors, which a
/// narrow tile spreads over few of them: so a tile is at least
/// [`WIDE_TILE`] columns wide, or one tile column per thread if the
/// matrix is narrower than that. On 2 cores, random 5000 x 5000 proteins
/// ran about 1.5x faster at one rank of two threads, and 1.8x faster at
/// two ranks, than in 1024- to 1280-column tiles of 256 rows (medians of
/// 21 alternating runs; random 10000 x 10000 DNA: 1.2x at both).
///
/// One rank takes the whole matrix as its outer tile. Several split it
/// into `blocks_per_rank` column blocks per rank (fewer where that makes
/// them narrower than [`WIDE_TILE`]: two, then one), a whole number of
/// inner tiles wide, in bands of one inner row per thread.
///
/// hcmpi deals them back and forth
/// ([`Distribution::ColSnake`](crate::sw::grid::Distribution::ColSnake),
/// [`PIPELINE_BLOCKS`] per rank): the ranks form a pipeline down the
/// bands, each passing its right edge on as soon as a band is done.
/// Several blocks rather than one per rank balance related sequences,
/// whose cells right of the best path cost more than those left of it:
/// with one block each, the rank on the right has about 7/5 of the left
/// one's work (on 2 cores, 2 ranks align the related 20000 x 20000 pair
/// about 1.1x faster with two blocks each). Dealt back and forth, each
/// rank's blocks sit at about the same average position, where dealt
/// cyclically the last rank has the blocks furthest right; with a rank
/// taking its adjacent blocks row by row
/// ([`Distribution::run_after`](crate::sw::grid::Distribution::run_after)),
/// 2 ranks align that pair about 1.1x faster than dealt cyclically
/// (median ratio of 41 alternating pairs: 1.106); a rank also keeps the
/// left one of two blocks apart ahead, which cut the other rank's waits.
/// Three blocks each rather than two balance that pair better still:
/// with two, the cost of a column rose by a third from left to right, and
/// the rank holding the first and the last block was busy 3% longer than
/// the other; with three, within 0.5%. Their single inner tiles of 3360
/// columns also suit unrelated sequences better than two of 2528: 2 ranks
/// of one worker aligned related DNA 20000² in 0.985 of the time and
/// random DNA 20000² in 0.955 (paired medians of 21 and 15 alternating
/// runs; four blocks each: 1.03 and 1.07 of three's). On random DNA
/// 60000² three blocks of three 3360-column tiles took 1.008 of the time
/// of two blocks of four 3776-column ones (9 runs), where two tiles of
/// 5024 columns a block had taken 1.07: no inner tile is wider than
/// [`MAX_TILE_COLS`]. The driver cuts
/// the bands lower towards the matrix's top and bottom
/// ([`Grid::tapered`](crate::sw::grid::Grid::tapered)), which shortens
/// the pipeline's fill and drain where the matrix has many bands
/// ([`tapers`]): on 2 cores, 2 ranks of one worker align that pair in
/// 0.987 of the time (paired median of 41 alternating runs, 31 faster).
/// On one rank of several threads the inner bands taper the same way.
///
/// The hybrid driver computes one anti-diagonal of outer tiles after
/// another, dealt cyclically, and runs best with [`FORK_JOIN_BLOCKS`] per
/// rank: with three, 2 ranks of one thread took 1.07 (related DNA
/// 20000²) and 1.06 (random) of the time.
///
/// ```
/// use apps::sw::auto_tiling::{auto_tiles, PIPELINE_BLOCKS};
///
/// // One rank of two threads: the whole matrix is the one outer tile.
/// let (inner, outer) = auto_tiles(20_000, 20_000, 1, 2, PIPELINE_BLOCKS);
/// assert_eq!((inner, outer), ((1024, 2528), (20_000, 20_000)));
/// // Two ranks of one: three blocks each, of one inner tile.
/// let (inner, outer) = auto_tiles(20_000, 20_000, 2, 1, PIPELINE_BLOCKS);
/// assert_eq!((inner, outer), ((1024, 3360), (1024, 3360)));
/// ```
pub fn auto_tiles(
    n: usize,
    m: usize,
    ranks: usize,
    threads: usize,
    blocks_per_rank: usize,
) -> ((usize, usize), (usize, usize)) {
    auto_tiles_up_to(n, m, ranks, threads, blocks_per_rank, MAX_TILE_ROWS)
}

/// [`auto_tiles`] with inner tiles of at most `max_rows` rows (at least
/// 256 all the same), such as [`max_tile_rows`] for this CPU's kernel.
///
/// ```
/// use apps::sw::auto_tiling::{auto_tiles_up_to, PIPELINE_BLOCKS};
///
/// let (inner, outer) = auto_tiles_up_to(20_000, 20_000, 2, 1, PIPELINE_BLOCKS, 2048);
/// assert_eq!((inner, outer), ((2048, 3360), (2048, 3360)));
/// ```
pub fn auto_tiles_up_to(
    n: usize,
    m: usize,
    ranks: usize,
    threads: usize,
    blocks_per_rank: usize,
    max_rows: usize,
) -> ((usize, usize), (usize, usize)) {
    let (ranks, threads) = (ranks.max(1), threads.max(1));
    let all = ranks * threads;
    let rows = (n / (4 * all)).clamp(256, max_rows.max(256)) / 64 * 64;
    let target = (m / (4 * all))
        .clamp(1024, MAX_TILE_COLS)
        .max((m / all).min(WIDE_TILE));
    // Outer column blocks: the whole row on one rank, `blocks_per_rank`
    // per rank on several unless that makes them narrow.
    let blocks = match ranks {
        1 => 1,
        _ => (2..=blocks_per_rank.max(1))
            .rev()
            .map(|per| per * ranks)
            .find(|&blocks| m.div_ceil(blocks) >= WIDE_TILE)
            .unwrap_or(ranks),
    };
    let block = m.div_ceil(blocks);
    // As many tiles as make them closest to the target, but none wider
    // than `MAX_TILE_COLS` (a block of 10000 columns is three of 3334, not
    // two of 5000).
    let per_block = ((block + target / 2) / target)
        .max(block.div_ceil(MAX_TILE_COLS))
        .max(1);
    // A whole number of 32-column vectors (8-bit AVX2 lanes).
    let cols = block.div_ceil(per_block).next_multiple_of(32).max(32);
    let inner = (rows, cols);
    let outer = if ranks == 1 {
        (n.max(1), m.max(1))
    } else {
        (rows * threads, cols * per_block)
    };
    (inner, outer)
}

/// The fewest bands of `auto` tiles (counted at their full height) for
/// which [`tapers`] cuts them lower towards the matrix's ends.
pub const TAPER_MIN_BANDS: usize = 16;

/// Whether the `auto` (inner, outer) tiles of an `n`-row matrix taper
/// towards its top and bottom
/// ([`Grid::tapered`](crate::sw::grid::Grid::tapered)): on several ranks
/// the bands of outer tiles, down which the ranks form a pipeline; on one
/// rank of several threads the inner bands of its one outer tile, whose
/// wavefront the threads share; and only where the matrix holds at least
/// [`TAPER_MIN_BANDS`] of those bands. The taper adds about seven bands
/// to a matrix (six lower ones at each end for about five of full
/// height), each of whose tiles costs something besides its cells.
///
/// On 2 ranks of one worker, related DNA 20000² (19.5 bands of 1024 rows;
/// of AVX-512's 2048-row tiles it holds 9.8, and does not taper)
/// aligned in 0.987 of the time with the taper, but 5000² proteins (8.7
/// bands of 576 rows, runs of 1.5–3 ms) in 1.007 (random) and 1.014
/// (related) of it (paired medians of 41 alternating runs). On one rank
/// of two workers, whose second worker waited for the whole first tile
/// (about 0.5 ms) before it could start, related DNA 20000² aligned in
/// 0.985 of the time, random DNA 20000² in 1.003 (21 and 15 runs).
///
/// ```
/// use apps::sw::auto_tiling::tapers;
///
/// let tiles = ((1024, 3360), (1024, 3360));
/// assert!(tapers(20_000, tiles, 2, 1));
/// let whole = ((1024, 2528), (20_000, 20_000));
/// assert!(tapers(20_000, whole, 1, 2)); // the inner bands
/// assert!(!tapers(20_000, whole, 1, 1)); // one worker: no pipeline
/// assert!(!tapers(20_000, ((512, 2528), (10_240, 20_000)), 1, 2)); // two bands
/// assert!(!tapers(5_000, ((576, 2528), (576, 2528)), 2, 1)); // too few bands
/// ```
pub fn tapers(
    n: usize,
    (inner, outer): ((usize, usize), (usize, usize)),
    ranks: usize,
    threads: usize,
) -> bool {
    let band_rows = match (ranks, threads) {
        (0 | 1, 0 | 1) => return false,
        // The inner bands of one outer tile: only where it spans every row
        // (an explicit inner tile can make the auto outer one lower).
        (0 | 1, _) if outer.0 >= n => inner.0,
        (0 | 1, _) => return false,
        _ => outer.0,
    };
    n >= TAPER_MIN_BANDS * band_rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_tiles_are_wide_and_short() {
        // One rank, two threads: 8 tile columns of 2500 (rounded up to 32)
        // by 1024 rows (20000 / 8 capped); the whole matrix is the outer
        // tile.
        assert_eq!(
            auto_tiles(20_000, 20_000, 1, 2, FORK_JOIN_BLOCKS),
            ((1024, 2528), (20_000, 20_000))
        );
        // Two ranks of one thread, two column blocks per rank (hybrid): of
        // 2 inner tiles each, in bands of one inner tile.
        assert_eq!(
            auto_tiles(20_000, 20_000, 2, 1, FORK_JOIN_BLOCKS),
            ((1024, 2528), (1024, 5056))
        );
        // 16 threads: 20000 / 64 rows is 312, 256 in whole vectors; 20000
        // / 16 columns, 1250, is below the 2048 of a wide tile: one tile
        // column per thread then; 8 blocks of 2500 columns, 2 inner tiles
        // each.
        assert_eq!(
            auto_tiles(20_000, 20_000, 4, 4, FORK_JOIN_BLOCKS),
            ((256, 1280), (1024, 2560))
        );
        // Long sequences: at most 4096 columns.
        assert_eq!(
            auto_tiles(60_000, 60_000, 2, 1, FORK_JOIN_BLOCKS),
            ((1024, 3776), (1024, 15_104))
        );
        // Small matrices: tiles of at least 2048 columns while each thread
        // gets one, 5000 / 8 rows; two ranks take one block each.
        assert_eq!(
            auto_tiles(5_000, 5_000, 1, 2, FORK_JOIN_BLOCKS),
            ((576, 2528), (5_000, 5_000))
        );
        assert_eq!(
            auto_tiles(5_000, 5_000, 2, 1, FORK_JOIN_BLOCKS),
            ((576, 2528), (576, 2528))
        );
        // 16 threads over 5000 columns: no room for a tile column per
        // thread; 2 tiles of the 1024-column minimum per block (2500 / 2,
        // rounded up to 1280), one block per rank.
        assert_eq!(
            auto_tiles(5_000, 5_000, 2, 8, FORK_JOIN_BLOCKS),
            ((256, 1280), (2048, 2560))
        );
        // Tiny and empty matrices still get positive tiles.
        assert_eq!(
            auto_tiles(1, 1, 3, 2, FORK_JOIN_BLOCKS),
            ((256, 32), (512, 32))
        );
        assert_eq!(
            auto_tiles(0, 0, 1, 0, FORK_JOIN_BLOCKS),
            ((256, 32), (1, 1))
        );
    }

    #[test]
    fn wide_lanes_take_taller_tiles_of_the_same_columns() {
        for (n, ranks, threads, rows) in [
            (20_000, 2, 1, 2048),
            (20_000, 1, 2, 2048),
            // n / (4 * ranks * threads) below either cap: the same rows.
            (5_000, 2, 1, 576),
            (20_000, 4, 4, 256),
        ] {
            let (inner, outer) = auto_tiles(n, 20_000, ranks, threads, PIPELINE_BLOCKS);
            let (tall, tall_outer) = auto_tiles_up_to(
                n,
                20_000,
                ranks,
                threads,
                PIPELINE_BLOCKS,
                MAX_TILE_ROWS_WIDE_LANES,
            );
            assert_eq!(tall, (rows, inner.1), "{n} rows, {ranks}x{threads}");
            let outer_rows = if ranks == 1 { n } else { rows * threads };
            assert_eq!(
                tall_outer,
                (outer_rows, outer.1),
                "{n} rows, {ranks}x{threads}"
            );
        }
        // A cap below the 256-row floor is the floor.
        assert_eq!(
            auto_tiles_up_to(20_000, 20_000, 2, 1, PIPELINE_BLOCKS, 0).0,
            (256, 3360)
        );
        assert!([MAX_TILE_ROWS, MAX_TILE_ROWS_WIDE_LANES].contains(&max_tile_rows()));
    }

    #[test]
    fn pipelines_take_three_blocks_per_rank_where_they_are_wide() {
        // 2 ranks: 6 blocks of 3334 columns, one inner tile each.
        assert_eq!(
            auto_tiles(20_000, 20_000, 2, 1, PIPELINE_BLOCKS),
            ((1024, 3360), (1024, 3360))
        );
        // Long sequences: blocks of 10000 columns, three tiles each (two
        // would be wider than MAX_TILE_COLS).
        assert_eq!(
            auto_tiles(60_000, 60_000, 2, 1, PIPELINE_BLOCKS),
            ((1024, 3360), (1024, 10_080))
        );
        // 4 ranks: 12 blocks would be 1667 columns; 8 are wide enough.
        assert_eq!(
            auto_tiles(20_000, 20_000, 4, 4, PIPELINE_BLOCKS),
            auto_tiles(20_000, 20_000, 4, 4, FORK_JOIN_BLOCKS)
        );
        // 5000 columns: one block per rank, whatever the count asked.
        assert_eq!(
            auto_tiles(5_000, 5_000, 2, 1, PIPELINE_BLOCKS),
            ((576, 2528), (576, 2528))
        );
        for per in [0, 1] {
            assert_eq!(
                auto_tiles(20_000, 20_000, 2, 1, per),
                ((1024, 2528), (1024, 10_112)),
                "{per} blocks per rank"
            );
        }
    }
}
