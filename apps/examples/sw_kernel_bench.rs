//! GCUPS of the sequential kernel and of the tile kernel.
//!
//! ```text
//! cargo run --release -p hcmpi-apps --example sw_kernel_bench -- [LEN] [TILE] [KERNEL] [SCORING] [REPS]
//! ```
//! `LEN` (default 20000): both sequences' length; `TILE` (default 512): tile
//! side, or `ROWSxCOLS`; `KERNEL`: auto | scalar | portable | avx2-wide
//! (32-bit lanes) | sse41 | avx2 | avx512 (striped from 8-bit lanes; `-16`
//! from 16); `SCORING`: dna | blosum62; `REPS` (default 3): repetitions of
//! both, one after the other, so that a slower spell of a shared machine
//! hits both; the best time of each is reported.

use apps::sw::random::{random_dna, random_protein};
use apps::sw::tile::{tile_in_place_with, EdgeCol, EdgeRow, Origin};
use apps::sw::{Best, Bits, Isa, Kernel, Scoring};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let len: usize = args.first().map_or(20_000, |s| s.parse().expect("LEN"));
    let tile = args.get(1).map_or((512, 512), |s| {
        apps::sw::grid::parse_tile(s)
            .or_else(|_| s.parse().map(|n| (n, n)))
            .expect("TILE")
    });
    let kernel = match args.get(2).map_or("auto", String::as_str) {
        "auto" => Kernel::Auto,
        "avx2-wide" => Kernel::Avx2Wide,
        "portable" => Kernel::Portable,
        "scalar" => Kernel::Scalar,
        "sse41" => Kernel::Striped(Isa::Sse41, Bits::Eight),
        "sse41-16" => Kernel::Striped(Isa::Sse41, Bits::Sixteen),
        "avx2" => Kernel::Striped(Isa::Avx2, Bits::Eight),
        "avx2-16" => Kernel::Striped(Isa::Avx2, Bits::Sixteen),
        "avx512" => Kernel::Striped(Isa::Avx512, Bits::Eight),
        "avx512-16" => Kernel::Striped(Isa::Avx512, Bits::Sixteen),
        k => panic!("unknown kernel {k}"),
    };
    let protein = match args.get(3).map_or("dna", String::as_str) {
        "dna" => false,
        "blosum62" => true,
        s => panic!("unknown scoring {s}"),
    };
    let (a, b, scoring) = if protein {
        (
            random_protein(len, 1),
            random_protein(len, 2),
            Scoring::blosum62(11, 1).unwrap(),
        )
    } else {
        (
            random_dna(len, 1),
            random_dna(len, 2),
            Scoring::dna_default(),
        )
    };
    let reps: usize = args.get(4).map_or(3, |s| s.parse().expect("REPS"));
    let cells = (len * len) as f64;
    println!(
        "{len}x{len} {}, kernel {:?} -> {:?}",
        if protein {
            "protein BLOSUM62 11/1"
        } else {
            "DNA 2/-1/2/2"
        },
        kernel,
        kernel.resolve()
    );

    // Interleaved, so that a slower spell of a shared machine hits both.
    let (mut seq_s, mut tile_s) = (f64::INFINITY, f64::INFINITY);
    let (mut best, mut tbest) = (Best::default(), Best::default());
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        best = apps::sw::seq::align_with(kernel, &a, &b, &scoring);
        seq_s = seq_s.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        tbest = tiles(kernel, &a, &b, &scoring, tile);
        tile_s = tile_s.min(t.elapsed().as_secs_f64());
    }
    println!(
        "seq:   {:>7.3} s  {:>6.2} GCUPS  {best:?}",
        seq_s,
        cells / seq_s / 1e9
    );
    println!(
        "tiles: {:>7.3} s  {:>6.2} GCUPS  {tbest:?}  ({}x{} tiles)",
        tile_s,
        cells / tile_s / 1e9,
        tile.0,
        tile.1
    );
    assert_eq!(best, tbest);
}

fn tiles(kernel: Kernel, a: &[u8], b: &[u8], scoring: &Scoring, tile: (usize, usize)) -> Best {
    let len = a.len();
    let (tile_rows, tile) = tile;

    // Tiles computed one after another (row-major order is a valid
    // wavefront order for a single thread), each with its own edges, as a
    // driver would do.
    let nb = len.div_ceil(tile);
    let mut rows: Vec<EdgeRow> = (0..nb)
        .map(|j| EdgeRow::border(tile.min(len - j * tile)))
        .collect();
    let mut tbest = Best::default();
    for i in 0..len.div_ceil(tile_rows) {
        let r = i * tile_rows..((i + 1) * tile_rows).min(len);
        let mut left = EdgeCol::border(r.len());
        for (j, row) in rows.iter_mut().enumerate() {
            let c = j * tile..((j + 1) * tile).min(len);
            let origin = Origin {
                row: r.start,
                col: c.start,
            };
            let tb = tile_in_place_with(
                kernel,
                &a[r.clone()],
                &b[c],
                scoring,
                origin,
                row,
                &mut left,
            );
            tbest = tbest.merge(tb);
        }
    }
    tbest
}
