//! A distributed wavefront with DDDFs: the grid `c(x, y) = c(x - 1, y) +
//! c(x, y - 1)`, `c(x, 0) = c(0, y) = 1` (so `c(x, y)` is the binomial
//! coefficient `C(x + y, x)`), cut into `T × T` tiles of `B × B` cells.
//! Tile `(i, j)` is one guid, homed on rank `j % ranks` (columns dealt
//! round-robin); its value is its bottom row and right column. Its task
//! awaits the tiles above and to the left — the left one lives on the
//! neighbouring rank — computes, and puts. No rank sends or receives by
//! hand, and no rank waits for a whole column or a barrier.
//!
//! Every rank checks its tiles and the last cell against the closed form,
//! and that each remote tile crossed the network once.
//!
//! Run: `mpiexec -n 3 target/release/examples/dddf_wavefront`.

// sample-run: ranks=1,2,3,4

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use hc_mpi::Hcmpi;
use hc_runtime::Awaitable;
use hcmpi_dddf::DddfSpace;

/// Tiles per side.
const T: u64 = 6;
/// Cells per tile side.
const B: usize = 8;
/// Cells per grid side.
const N: usize = T as usize * B;

// ANCHOR: payload
/// A tile's value: its bottom row, then its right column (a `Plain` array,
/// sent as its bytes).
type Edges = [u128; 2 * B];

fn guid(i: u64, j: u64) -> u64 {
    i * T + j
}
// ANCHOR_END: payload

/// `C(n, k)`, exactly (the products stay far below `u128::MAX` here).
fn binomial(n: usize, k: usize) -> u128 {
    (1..=k as u128).fold(1, |c, i| c * (n as u128 - k as u128 + i) / i)
}

// ANCHOR: kernel
/// Computes tile `(i, j)` from the edges of the tiles above and to the left.
fn tile(i: u64, j: u64, up: Option<&Edges>, left: Option<&Edges>) -> Edges {
    let mut c = [[0u128; B]; B];
    for a in 0..B {
        for b in 0..B {
            let (x, y) = (i as usize * B + a, j as usize * B + b);
            c[a][b] = if x == 0 || y == 0 {
                1
            } else {
                let above = if a > 0 {
                    c[a - 1][b]
                } else {
                    up.expect("tile above")[b]
                };
                let before = if b > 0 {
                    c[a][b - 1]
                } else {
                    left.expect("tile to the left")[B + a]
                };
                above + before
            };
        }
    }
    let mut edges = [0; 2 * B];
    for k in 0..B {
        edges[k] = c[B - 1][k]; // bottom row
        edges[B + k] = c[k][B - 1]; // right column
    }
    edges
}
// ANCHOR_END: kernel

fn main() -> ExitCode {
    // An error on one rank ends the whole job with its message.
    Hcmpi::run(body)
}

fn body(hc: &Hcmpi) -> Result<(), Box<dyn std::error::Error>> {
    let (rank, ranks) = (hc.rank(), hc.size());
    let n = ranks as u64;
    // ANCHOR: space
    let space = DddfSpace::<Edges>::new(
        hc,
        move |g| (g % T % n) as i32, // column j = g % T lives on rank j % n
        |_| std::mem::size_of::<Edges>(), // every tile: 2B u128s
    )?;
    let tiles = (0..T * T)
        .map(|g| space.handle(g))
        .collect::<Result<Vec<_>, _>>()?;
    let at = |i: u64, j: u64| &tiles[guid(i, j) as usize];
    // The columns this rank computes.
    let mine: Vec<u64> = (0..T).filter(|j| j % n == rank as u64).collect();
    // ANCHOR_END: space
    let computed = AtomicUsize::new(0);
    // ANCHOR: wavefront
    hc.finish(|s| {
        let computed = &computed;
        for &j in &mine {
            for i in 0..T {
                let up = (i > 0).then(|| at(i - 1, j));
                let left = (j > 0).then(|| at(i, j - 1)); // on rank (j - 1) % n
                let deps: Vec<&dyn Awaitable> = up
                    .into_iter()
                    .chain(left)
                    .map(|h| h as &dyn Awaitable)
                    .collect();
                // Starts once both inputs are on this rank.
                s.spawn_await(&deps, move |_| {
                    let up = up.map(|h| h.get().unwrap());
                    let left = left.map(|h| h.get().unwrap());
                    at(i, j).put(tile(i, j, up, left)).unwrap();
                    computed.fetch_add(1, Relaxed);
                });
            }
        }
        // Every rank reads the last tile, wherever it is computed.
        s.spawn_future(async move {
            let edges = at(T - 1, T - 1).await.unwrap();
            assert_eq!(edges[B - 1], binomial(2 * N - 2, N - 1));
        });
    });
    // ANCHOR_END: wavefront

    // Every tile of this rank, against the closed form c(x, y) = C(x + y, x).
    let c = |x: usize, y: usize| binomial(x + y, x);
    assert_eq!(computed.into_inner(), mine.len() * T as usize);
    for &j in &mine {
        for i in 0..T {
            let edges = at(i, j).get()?;
            let (x0, y0) = (i as usize * B, j as usize * B);
            for k in 0..B {
                assert_eq!(
                    edges[k],
                    c(x0 + B - 1, y0 + k),
                    "tile ({i}, {j}), bottom row"
                );
                assert_eq!(
                    edges[B + k],
                    c(x0 + k, y0 + B - 1),
                    "tile ({i}, {j}), right column"
                );
            }
        }
    }
    // ANCHOR: close
    // Remote tiles this rank awaited: the left neighbours of its columns
    // that another rank owns, and the last tile unless it is homed here.
    let left_remote = mine
        .iter()
        .filter(|&&j| j > 0 && (j - 1) % n != rank as u64);
    let last = at(T - 1, T - 1);
    let expected = left_remote.count() as u64 * T + u64::from(!last.is_home());
    let report = space.close()?;
    assert!(report.is_clean(), "{:?}", report.pending);
    assert_eq!(report.stats.requests_sent, expected);
    assert_eq!(report.stats.values_received, expected); // each crossed once
                                                        // ANCHOR_END: close
    if rank == 0 {
        println!(
            "{N}x{N} wavefront over {ranks} rank(s): c({0}, {0}) = {1}",
            N - 1,
            last.get()?[B - 1]
        );
    }
    Ok(())
}
