//! Fig. 2 of the HCMPI paper: vector addition with one `async` per chunk of
//! `PART_SIZE` elements, all joined by one `finish`.
//!
//! ```text
//! void vectorAdd(float *A, float *B, float *C, int N) {
//!     finish for (int i = 0; i < N; i += PART_SIZE)
//!         async { for (int j = i; j < i + PART_SIZE; j++) C[j] = A[j] + B[j]; }
//! }
//! ```
//!
//! Run: `cargo run --release -p hc-runtime --example fig2_vector_add`
//! (`HC_WORKERS` sets the number of workers). Exits non-zero if C != A + B.

use std::process::ExitCode;

use hc_runtime::finish;

/// Elements per `async`, as in the paper.
pub const PART_SIZE: usize = 16;

/// Number of elements added.
pub const N: usize = 1 << 20;

/// `c = a + b`, one task per `PART_SIZE` elements.
pub fn vector_add(a: &[f32], b: &[f32], c: &mut [f32]) {
    assert!(a.len() == b.len() && b.len() == c.len());
    finish(|s| {
        for ((a, b), c) in a
            .chunks(PART_SIZE)
            .zip(b.chunks(PART_SIZE))
            .zip(c.chunks_mut(PART_SIZE))
        {
            s.spawn(move |_| {
                for j in 0..c.len() {
                    c[j] = a[j] + b[j];
                }
            });
        }
    });
}

/// Where `C` is not `A + B`.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Mismatch {
    /// The vectors have different lengths.
    #[error("length mismatch: {a} + {b} -> {c}")]
    Length {
        /// Length of `A`.
        a: usize,
        /// Length of `B`.
        b: usize,
        /// Length of `C`.
        c: usize,
    },
    /// One element differs (the first one).
    #[error("C[{index}] = {got} but A[{index}] + B[{index}] = {expected}")]
    Element {
        /// Its index.
        index: usize,
        /// `C`'s element.
        got: f32,
        /// The sum.
        expected: f32,
    },
}

/// Checks `c == a + b` element by element (the same f32 addition, so the
/// results must be bit-identical).
pub fn verify(a: &[f32], b: &[f32], c: &[f32]) -> Result<(), Mismatch> {
    if a.len() != c.len() || b.len() != c.len() {
        return Err(Mismatch::Length {
            a: a.len(),
            b: b.len(),
            c: c.len(),
        });
    }
    match (0..c.len()).find(|&j| (a[j] + b[j]).to_bits() != c[j].to_bits()) {
        None => Ok(()),
        Some(index) => Err(Mismatch::Element {
            index,
            got: c[index],
            expected: a[index] + b[index],
        }),
    }
}

/// Builds the inputs, adds them in parallel and verifies the result.
pub fn run() -> Result<String, Mismatch> {
    let a: Vec<f32> = (0..N).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..N).map(|i| (N - i) as f32 * 0.25 + 1.0).collect();
    // Not zero-filled: a chunk that no task wrote is caught.
    let mut c = vec![f32::NAN; N];
    vector_add(&a, &b, &mut c);
    verify(&a, &b, &c)?;
    Ok(format!(
        "fig2: vectorAdd of {N} floats in {} asyncs of {PART_SIZE}: OK",
        N.div_ceil(PART_SIZE)
    ))
}

#[allow(dead_code)] // unused when tests/examples.rs includes this file
fn main() -> ExitCode {
    match run() {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("fig2: FAILED: {error}");
            ExitCode::FAILURE
        }
    }
}
