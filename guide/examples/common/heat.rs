//! The problem both side-by-side samples solve: a 1-D heat stencil on a
//! rod of `N` cells, with a sequential reference to check against. Each
//! sample includes this file as a module.

// ANCHOR: common
/// Cells of the rod, split evenly over 1 to 4 ranks.
pub const N: usize = 24_000;
pub const STEPS: usize = 50;
/// Cells per parallel task.
pub const CHUNK: usize = 1_000;
/// Tags of the halo values travelling right and left.
pub const TO_RIGHT: i32 = 1;
pub const TO_LEFT: i32 = 2;

/// Temperature of cell `g` at the start.
pub fn initial(g: usize) -> f64 {
    (g * 7_919 % 101) as f64
}

/// A cell's next temperature; beyond both ends of the rod it is 0.
pub fn cell(left: f64, mid: f64, right: f64) -> f64 {
    (left + mid + right) / 3.0
}

/// The whole rod after `STEPS` steps, computed sequentially.
pub fn reference() -> Vec<f64> {
    let mut u: Vec<f64> = (0..N).map(initial).collect();
    for _ in 0..STEPS {
        u = (0..N)
            .map(|i| {
                let left = if i == 0 { 0.0 } else { u[i - 1] };
                cell(left, u[i], u.get(i + 1).copied().unwrap_or(0.0))
            })
            .collect();
    }
    u
}

/// How many of a rank's cells, the rod's cells from `lo` on, equal the
/// sequential result `expected`.
pub fn matching_cells(u: &[f64], lo: usize, expected: &[f64]) -> u64 {
    u.iter()
        .zip(&expected[lo..])
        .filter(|(a, b)| a == b)
        .count() as u64
}
// ANCHOR_END: common
