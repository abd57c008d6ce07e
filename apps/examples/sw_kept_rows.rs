//! The rows an hcmpi pass keeps for `--align`, checked on rank 0 against
//! the plain DP: after a pass of `hcmpi::align_with_checkpoints` over a
//! related pair, rank 0 holds rows (its own tiles' pieces and the other
//! ranks' sent to it), each equal to the reference's `H` and clamped `F`
//! at that row over every column; every other rank holds none. The
//! alignment traced from them is the sequential one.
//!
//! The printed alignment is the same whatever rows are kept (fewer only
//! make the traceback recompute more), so the command-line tests cannot see
//! a lost row; this can.
//!
//! Prints `rank R/N: kept rows OK (K rows)` on every rank.
//!
//! Run: `mpiexec -n 2 target/release/examples/sw_kept_rows`.

use apps::progress::Progress;
use apps::sw::alignment::{local_alignment, trace};
use apps::sw::grid::Distribution;
use apps::sw::hcmpi::{align_with_checkpoints, Tiling};
use apps::sw::random::{mutated, random_dna};
use apps::sw::{reference, Scoring};
use hc_mpi::Hcmpi;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let hc = Hcmpi::init()?;
    let (rank, size) = (hc.rank(), hc.size());
    let a = random_dna(700, 11);
    let b = mutated(&a[40..], 4, 0.1, 12);
    let scoring = Scoring::match_mismatch(2, -1, 3, 1)?;
    // Two column blocks per rank, dealt back and forth, in bands of two
    // 32-row inner tiles: kept rows come from several ranks' tiles.
    let blocks = 2 * size as usize;
    let tiling = Tiling {
        outer: (64, b.len().div_ceil(blocks)),
        inner: (32, b.len().div_ceil(2 * blocks)),
        distribution: Distribution::ColSnake,
        taper: false,
    };
    let (best, kept) = align_with_checkpoints(&hc, &a, &b, &scoring, &tiling, &Progress::hidden())?;
    assert_eq!(
        best,
        reference::align(&a, &b, &scoring),
        "rank {rank}: best cell"
    );
    if rank == 0 {
        assert!(!kept.is_empty(), "rank 0 kept no row");
        let dp = reference::matrices(&a, &b, &scoring);
        let mut last = 0;
        for k in 0..kept.len() {
            let (row, h, f) = kept.row(k);
            assert!(row > last && row < a.len(), "kept row {row} after {last}");
            last = row;
            assert_eq!(h, &dp.h[row][1..], "H of kept row {row}");
            let clamped: Vec<i32> = dp.f[row][1..].iter().map(|&x| x.max(0)).collect();
            assert_eq!(f, clamped, "F of kept row {row}");
        }
        let traced = trace(&a, &b, &scoring, best, &kept);
        assert_eq!(
            traced,
            local_alignment(&a, &b, &scoring),
            "the alignment traced from the kept rows"
        );
    } else {
        assert!(kept.is_empty(), "rank {rank} kept {} rows", kept.len());
    }
    println!("rank {rank}/{size}: kept rows OK ({} rows)", kept.len());
    Ok(())
}
