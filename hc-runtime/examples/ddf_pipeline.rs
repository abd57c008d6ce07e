//! A pipeline built from data-driven futures.
//!
//! `STAGES` stages process `ITEMS` items. `cell[k][i]` (a `Ddf`) holds the
//! output of stage `k` for item `i`. The task computing it awaits stage
//! `k - 1` of the same item and stage `k` of the previous item (a stage
//! handles items in order), so items flow through the stages as a wavefront,
//! with no barrier between stages. Stage 0 is fed by the inputs, put last.
//!
//! Run: `cargo run --release -p hc-runtime --example ddf_pipeline`
//! (`HC_WORKERS` sets the number of workers). Exits non-zero if the result
//! differs from the sequential computation.

use std::process::ExitCode;

use hc_runtime::{finish, Awaitable, Ddf};

/// Number of stages.
pub const STAGES: usize = 6;

/// Number of items.
pub const ITEMS: usize = 500;

/// The input of item `i`.
pub fn input(i: usize) -> u64 {
    (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 17
}

/// Stage `k`'s output from its input `from_prev_stage` and its own output
/// for the previous item (`None` for the first item).
pub fn stage(k: usize, from_prev_stage: u64, prev_item: Option<u64>) -> u64 {
    let carry = prev_item.unwrap_or(k as u64);
    from_prev_stage
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(carry.rotate_left(k as u32 + 1))
        ^ (k as u64)
}

/// The final stage's output for every item, computed sequentially.
pub fn sequential() -> Vec<u64> {
    let mut prev_stage: Vec<u64> = (0..ITEMS).map(input).collect();
    for k in 0..STAGES {
        let mut out = Vec::with_capacity(ITEMS);
        for i in 0..ITEMS {
            let prev_item = if i == 0 { None } else { Some(out[i - 1]) };
            out.push(stage(k, prev_stage[i], prev_item));
        }
        prev_stage = out;
    }
    prev_stage
}

/// The final stage's output for every item, computed by data-driven tasks.
pub fn pipelined() -> Vec<u64> {
    let inputs: Vec<Ddf<u64>> = (0..ITEMS).map(|_| Ddf::new()).collect();
    let cells: Vec<Vec<Ddf<u64>>> = (0..STAGES)
        .map(|_| (0..ITEMS).map(|_| Ddf::new()).collect())
        .collect();
    let (inputs, cells) = (&inputs, &cells);
    finish(|s| {
        // Created last item first, so that most tasks wait for real.
        for i in (0..ITEMS).rev() {
            for k in (0..STAGES).rev() {
                let from: &Ddf<u64> = if k == 0 { &inputs[i] } else { &cells[k - 1][i] };
                let prev = if i == 0 { None } else { Some(&cells[k][i - 1]) };
                let mut deps: Vec<&dyn Awaitable> = vec![from];
                deps.extend(prev.map(|p| p as &dyn Awaitable));
                s.spawn_await(&deps, move |_| {
                    let value = stage(k, *from.get().unwrap(), prev.map(|p| *p.get().unwrap()));
                    cells[k][i].put(value).unwrap();
                });
            }
        }
        for (i, d) in inputs.iter().enumerate() {
            d.put(input(i)).unwrap();
        }
    });
    cells[STAGES - 1]
        .iter()
        .map(|d| {
            *d.get()
                .expect("finish returned before the pipeline drained")
        })
        .collect()
}

/// Where the pipelined result differs from the sequential one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Mismatch {
    /// Not as many items.
    #[error("{got} items instead of {expected}")]
    Length {
        /// Items pipelined.
        got: usize,
        /// Items computed sequentially.
        expected: usize,
    },
    /// One item differs (the first one).
    #[error("item {index}: got {got:#x}, expected {expected:#x}")]
    Item {
        /// Its index.
        index: usize,
        /// The pipelined value.
        got: u64,
        /// The sequential value.
        expected: u64,
    },
}

/// Compares a pipelined result with the sequential one.
pub fn verify(got: &[u64], expected: &[u64]) -> Result<(), Mismatch> {
    if got.len() != expected.len() {
        return Err(Mismatch::Length {
            got: got.len(),
            expected: expected.len(),
        });
    }
    match (0..got.len()).find(|&i| got[i] != expected[i]) {
        None => Ok(()),
        Some(index) => Err(Mismatch::Item {
            index,
            got: got[index],
            expected: expected[index],
        }),
    }
}

/// Runs the pipeline and checks it against the sequential computation.
pub fn run() -> Result<String, Mismatch> {
    let expected = sequential();
    let got = pipelined();
    verify(&got, &expected)?;
    let checksum = got.iter().fold(0u64, |acc, v| acc.rotate_left(5) ^ v);
    Ok(format!(
        "ddf_pipeline: {STAGES} stages x {ITEMS} items match the sequential result \
         (checksum {checksum:#018x}): OK"
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
            eprintln!("ddf_pipeline: FAILED: {error}");
            ExitCode::FAILURE
        }
    }
}
