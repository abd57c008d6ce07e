//! Collectives: request forms started together and overlapped with tasks,
//! blocking forms, user-defined reductions (one of them not commutative)
//! and a split communicator. Every result is checked
//! against the answer computed locally from every rank's known input.
//!
//! Run: `mpiexec -n 3 target/release/examples/comm_collectives`.

// sample-run: ranks=0
// sample-run: ranks=1,2,3,4

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use hc_mpi::{wait_all, Error, Hcmpi, ReduceOp, Reduction};

// ANCHOR: user_op
/// Greatest common divisor: commutative, not one of MPI's predefined ops.
struct Gcd;

impl Reduction for Gcd {
    type Element = u64;
    fn combine(input: &u64, inout: &mut u64) {
        let (mut a, mut b) = (*input, *inout);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        *inout = a;
    }
}

/// The last non-zero value in rank order: `input` comes from the lower
/// rank, so the order matters.
struct LastNonZero;

impl Reduction for LastNonZero {
    type Element = i64;
    const COMMUTATIVE: bool = false;
    fn combine(input: &i64, inout: &mut i64) {
        if *inout == 0 {
            *inout = *input;
        }
    }
}
// ANCHOR_END: user_op

fn main() -> ExitCode {
    // An error on one rank ends the whole job with its message.
    Hcmpi::run(body)
}

fn body(hc: &Hcmpi) -> Result<(), Error> {
    let world = hc.world();
    let (rank, size) = (hc.rank(), hc.size());
    let ranks = 0..size;

    // ANCHOR: nonblocking
    // Started in the same order on every rank; the engine progresses them
    // (and any point-to-point traffic) while the tasks below compute.
    let barrier = world.ibarrier();
    let root_data = if rank == 0 {
        vec![42u32, 7]
    } else {
        vec![0; 2]
    };
    let bcast = world.ibcast(root_data, 0)?;
    let sums = world.iallreduce(vec![rank as u64, 1], ReduceOp::Sum)?;
    let squares = world.igather(vec![rank * rank], 0)?;
    let local = AtomicU64::new(0);
    hc.finish(|s| {
        for k in 0..8u64 {
            let local = &local;
            s.spawn(move |_| {
                local.fetch_add((0..1000).map(|i| i ^ k).sum(), Relaxed);
            });
        }
    });
    wait_all(&[&barrier, &bcast, &sums, &squares])?; // as MPI_Waitall
    assert_eq!(bcast.wait()?.0, vec![42, 7]);
    let total = ranks.clone().map(|r| r as u64).sum::<u64>();
    assert_eq!(sums.wait()?.0, vec![total, size as u64]);
    let gathered = squares.wait()?.0; // root: every rank's block; others: empty
    let expected: Vec<i32> = if rank == 0 {
        ranks.clone().map(|r| r * r).collect()
    } else {
        Vec::new()
    };
    assert_eq!(gathered, expected);
    // ANCHOR_END: nonblocking
    let xor_sums: u64 = (0..8u64)
        .map(|k| (0..1000).map(|i| i ^ k).sum::<u64>())
        .sum();
    assert_eq!(local.into_inner(), xor_sums);

    // ANCHOR: blocking
    let prefix = world.scan(vec![rank as u64 + 1], ReduceOp::Sum)?; // MPI_Iscan, waited for
    assert_eq!(prefix, vec![(1..=rank as u64 + 1).sum::<u64>()]);
    let pairs = world.allgather(vec![rank, -rank])?;
    let expected: Vec<i32> = ranks.clone().flat_map(|r| [r, -r]).collect();
    assert_eq!(pairs, expected);
    let largest = world.allreduce(vec![f64::from(rank) * 0.5], ReduceOp::Max)?;
    assert_eq!(largest, vec![f64::from(size - 1) * 0.5]);
    // ANCHOR_END: blocking

    // ANCHOR: user_op_use
    let mine = |r: i32| 60 * (r as u64 + 2);
    let gcd = world.allreduce(vec![mine(rank)], ReduceOp::user::<Gcd>())?;
    let divides_all = |d: &u64| ranks.clone().all(|r| mine(r) % d == 0);
    assert_eq!(
        gcd,
        vec![(1..=mine(0)).rev().find(divides_all).expect("1 divides")]
    );
    // Ranks 1, 4, 7, ... report nothing (0): they carry the last report on.
    let report = |r: i32| if r % 3 == 1 { 0 } else { i64::from(r) * 10 + 5 };
    let carried = world.scan(vec![report(rank)], ReduceOp::user::<LastNonZero>())?;
    let expected = (0..=rank).map(report).rfind(|&v| v != 0).unwrap_or(0);
    assert_eq!(carried, vec![expected]);
    // ANCHOR_END: user_op_use

    // ANCHOR: split
    // Even and odd ranks apart; ordered by world rank within each half.
    let half = world
        .split(Some(rank % 2), rank)?
        .expect("every rank gave a color");
    let mates: Vec<i32> = ranks.clone().filter(|r| r % 2 == rank % 2).collect();
    assert_eq!(half.size() as usize, mates.len());
    assert_eq!(half.rank(), rank / 2);
    let half_sum = half.allreduce(vec![rank], ReduceOp::Sum)?;
    assert_eq!(half_sum, vec![mates.iter().sum::<i32>()]);
    // ANCHOR_END: split

    if rank == 0 {
        println!(
            "collectives on {size} rank(s): sum of ranks {total}, gcd {}",
            gcd[0]
        );
    }
    Ok(())
}
