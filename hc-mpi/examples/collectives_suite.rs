//! Every collective of hc-mpi in its blocking and request forms, checked
//! against results computed locally from the known inputs of every rank.
//!
//! * barrier, bcast, reduce, allreduce, scan, exscan, gather, gatherv,
//!   scatter, scatterv, allgather, alltoall;
//! * reductions with `Sum`, `Prod`, `Min`, `Max`, `BitXor` (and `BitAnd`,
//!   `BitOr`, `LogicalOr`) on integers, `Sum` and `Max` on `f64`;
//! * blocking forms from the main thread and from inside a task, request
//!   forms started together and completed with `wait_all` and a
//!   `spawn_await` task;
//! * a collective overlapping point-to-point traffic: rank 0 joins the
//!   allreduce only after a ring message that the other ranks send while
//!   their allreduce is already in flight — this only terminates if the
//!   communication worker keeps serving point-to-point requests while a
//!   collective is pending;
//! * user-defined reductions (`ReduceOp::user`): a commutative one and a
//!   non-commutative one, whose result depends on MPI's rank order;
//! * argument errors: a bad root (`Error::InvalidRank`), buffers that do not
//!   fit the communicator and a user reduction over the wrong element type
//!   (`Error::BadCollectiveBuffer`).
//!
//! Every rank issues the collectives in the same order, from one thread at a
//! time (the order of submission is the order the communication worker posts
//! them).
//!
//! Run: `mpiexec -n 3 target/release/examples/collectives_suite`.

use std::sync::Mutex;

use hc_mpi::{wait_all, BufferProblem, Comm, Error, Hcmpi, ReduceOp, Reduction};
use hc_runtime::Awaitable;

type Result<T = ()> = std::result::Result<T, Error>;

const L: usize = 5;

// ---- the inputs of rank `r` ------------------------------------------------

fn sum_input(r: i32) -> Vec<i64> {
    (0..L as i64)
        .map(|i| (r as i64 + 1) * (i + 1) + (r as i64) * (r as i64) - i)
        .collect()
}

fn prod_input(r: i32) -> Vec<i64> {
    (0..L as i64).map(|i| (r as i64 + i) % 3 + 1).collect()
}

fn minmax_input(r: i32) -> Vec<i32> {
    (0..L as i32).map(|i| (r * 7 + i * 3) % 11 - 5).collect()
}

fn bits_input(r: i32) -> Vec<u64> {
    (0..L as u64)
        .map(|i| (r as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 3))
        .collect()
}

fn float_input(r: i32) -> Vec<f64> {
    // Dyadic values: every partial sum is exact, whatever the order.
    (0..L)
        .map(|i| r as f64 * 0.5 + i as f64 * 0.25 - 1.0)
        .collect()
}

// ---- local reference reductions --------------------------------------------

fn fold<E: Copy>(
    ranks: std::ops::Range<i32>,
    input: fn(i32) -> Vec<E>,
    f: fn(E, E) -> E,
) -> Vec<E> {
    let mut ranks = ranks;
    let first = ranks.next().expect("at least one rank");
    ranks.fold(input(first), |acc, r| {
        acc.iter().zip(input(r)).map(|(&a, b)| f(a, b)).collect()
    })
}

/// Checks the result of an integer/float reduction over `ranks`.
struct Expect {
    size: i32,
}

impl Expect {
    fn sum(&self, ranks: std::ops::Range<i32>) -> Vec<i64> {
        fold(ranks, sum_input, |a, b| a + b)
    }
    fn prod(&self) -> Vec<i64> {
        fold(0..self.size, prod_input, |a, b| a * b)
    }
    fn min(&self) -> Vec<i32> {
        fold(0..self.size, minmax_input, i32::min)
    }
    fn max(&self, ranks: std::ops::Range<i32>) -> Vec<i32> {
        fold(ranks, minmax_input, i32::max)
    }
    fn xor(&self) -> Vec<u64> {
        fold(0..self.size, bits_input, |a, b| a ^ b)
    }
    fn and(&self) -> Vec<u64> {
        fold(0..self.size, bits_input, |a, b| a & b)
    }
    fn or(&self) -> Vec<u64> {
        fold(0..self.size, bits_input, |a, b| a | b)
    }
    fn fsum(&self) -> Vec<f64> {
        fold(0..self.size, float_input, |a, b| a + b)
    }
    fn fmax(&self) -> Vec<f64> {
        fold(0..self.size, float_input, f64::max)
    }
}

// ---- layouts of the data-movement collectives -------------------------------

fn gather_input(r: i32) -> Vec<i32> {
    vec![r * 10, r * 10 + 1, r * 10 + 2]
}

fn gatherv_counts(size: i32) -> Vec<usize> {
    (0..size).map(|r| r as usize + 1).collect()
}

fn gatherv_input(r: i32) -> Vec<i32> {
    (0..=r).map(|i| r * 100 + i).collect()
}

const CHUNK: usize = 3;

fn scatter_root_data(size: i32) -> Vec<u32> {
    (0..size as u32 * CHUNK as u32).map(|i| i * 3 + 1).collect()
}

/// Uneven, with an empty piece for every third rank.
fn scatterv_counts(size: i32) -> Vec<usize> {
    (0..size as usize).map(|r| (r % 3) * 2).collect()
}

fn scatterv_root_data(size: i32) -> Vec<i16> {
    let total: usize = scatterv_counts(size).iter().sum();
    (0..total as i16).map(|i| 7 * i - 3).collect()
}

fn scatterv_piece(size: i32, r: i32) -> Vec<i16> {
    let counts = scatterv_counts(size);
    let start: usize = counts[..r as usize].iter().sum();
    scatterv_root_data(size)[start..start + counts[r as usize]].to_vec()
}

fn alltoall_input(r: i32, size: i32) -> Vec<i32> {
    (0..size)
        .flat_map(|j| (0..CHUNK as i32).map(move |c| r * 100 + j * 10 + c))
        .collect()
}

fn alltoall_expected(r: i32, size: i32) -> Vec<i32> {
    (0..size)
        .flat_map(|j| (0..CHUNK as i32).map(move |c| j * 100 + r * 10 + c))
        .collect()
}

/// Every collective in its blocking form, checked.
fn blocking_round(world: &Comm, root: i32) -> Result {
    let (rank, size) = (world.rank(), world.size());
    let ex = Expect { size };
    world.barrier()?;

    let data = if rank == root {
        sum_input(root)
    } else {
        vec![0; L]
    };
    assert_eq!(world.bcast(data, root)?, sum_input(root), "bcast");

    let reduced = world.reduce(sum_input(rank), ReduceOp::Sum, root)?;
    if rank == root {
        assert_eq!(reduced, ex.sum(0..size), "reduce sum");
    } else {
        assert!(reduced.is_empty(), "reduce: non-root result");
    }
    let reduced = world.reduce(prod_input(rank), ReduceOp::Prod, root)?;
    assert_eq!(
        reduced,
        if rank == root { ex.prod() } else { vec![] },
        "reduce prod"
    );
    let reduced = world.reduce(bits_input(rank), ReduceOp::BitXor, root)?;
    assert_eq!(
        reduced,
        if rank == root { ex.xor() } else { vec![] },
        "reduce xor"
    );
    let reduced = world.reduce(float_input(rank), ReduceOp::Max, root)?;
    assert_eq!(
        reduced,
        if rank == root { ex.fmax() } else { vec![] },
        "reduce fmax"
    );

    assert_eq!(
        world.allreduce(sum_input(rank), ReduceOp::Sum)?,
        ex.sum(0..size),
        "allreduce sum"
    );
    assert_eq!(
        world.allreduce(prod_input(rank), ReduceOp::Prod)?,
        ex.prod(),
        "allreduce prod"
    );
    assert_eq!(
        world.allreduce(minmax_input(rank), ReduceOp::Min)?,
        ex.min(),
        "allreduce min"
    );
    assert_eq!(
        world.allreduce(minmax_input(rank), ReduceOp::Max)?,
        ex.max(0..size),
        "allreduce max"
    );
    assert_eq!(
        world.allreduce(bits_input(rank), ReduceOp::BitXor)?,
        ex.xor(),
        "allreduce xor"
    );
    assert_eq!(
        world.allreduce(bits_input(rank), ReduceOp::BitAnd)?,
        ex.and(),
        "allreduce and"
    );
    assert_eq!(
        world.allreduce(bits_input(rank), ReduceOp::BitOr)?,
        ex.or(),
        "allreduce or"
    );
    assert_eq!(
        world.allreduce(float_input(rank), ReduceOp::Sum)?,
        ex.fsum(),
        "allreduce fsum"
    );
    assert_eq!(
        world.allreduce(float_input(rank), ReduceOp::Max)?,
        ex.fmax(),
        "allreduce fmax"
    );
    let any_negative: Vec<i32> = minmax_input(rank).iter().map(|&v| (v < 0) as i32).collect();
    let expected_lor: Vec<i32> = (0..L)
        .map(|i| (0..size).any(|r| minmax_input(r)[i] < 0) as i32)
        .collect();
    assert_eq!(
        world.allreduce(any_negative, ReduceOp::LogicalOr)?,
        expected_lor,
        "allreduce lor"
    );

    assert_eq!(
        world.scan(sum_input(rank), ReduceOp::Sum)?,
        ex.sum(0..rank + 1),
        "scan sum"
    );
    assert_eq!(
        world.scan(minmax_input(rank), ReduceOp::Max)?,
        ex.max(0..rank + 1),
        "scan max"
    );
    let exscan = world.exscan(sum_input(rank), ReduceOp::Sum)?;
    if rank == 0 {
        assert_eq!(exscan, vec![0; L], "exscan on rank 0: default values");
    } else {
        assert_eq!(exscan, ex.sum(0..rank), "exscan sum");
    }

    let gathered = world.gather(gather_input(rank), root)?;
    let all: Vec<i32> = (0..size).flat_map(gather_input).collect();
    assert_eq!(
        gathered,
        if rank == root { all.clone() } else { vec![] },
        "gather"
    );
    let counts = gatherv_counts(size);
    let gathered = world
        .igatherv(gatherv_input(rank), &counts, root)?
        .wait()?
        .0;
    let allv: Vec<i32> = (0..size).flat_map(gatherv_input).collect();
    assert_eq!(
        gathered,
        if rank == root { allv } else { vec![] },
        "gatherv"
    );

    let data = if rank == root {
        scatter_root_data(size)
    } else {
        vec![]
    };
    let piece = world.scatter(data, CHUNK, root)?;
    let start = rank as usize * CHUNK;
    assert_eq!(
        piece,
        scatter_root_data(size)[start..start + CHUNK],
        "scatter"
    );
    let data = if rank == root {
        scatterv_root_data(size)
    } else {
        vec![]
    };
    let my_count = scatterv_counts(size)[rank as usize];
    let piece = world
        .iscatterv(data, &scatterv_counts(size), my_count, root)?
        .wait()?
        .0;
    assert_eq!(piece, scatterv_piece(size, rank), "scatterv");

    assert_eq!(world.allgather(gather_input(rank))?, all, "allgather");
    assert_eq!(
        world.alltoall(alltoall_input(rank, size), CHUNK)?,
        alltoall_expected(rank, size),
        "alltoall"
    );
    Ok(())
}

/// Every collective in its request form, all in flight together, completed
/// by `wait_all` (and one by a data-driven task).
fn request_round(hc: &Hcmpi, root: i32) -> Result {
    let world = hc.world();
    let (rank, size) = (world.rank(), world.size());
    let ex = Expect { size };

    let barrier = world.ibarrier();
    let bcast = world.ibcast(
        if rank == root {
            float_input(root)
        } else {
            vec![0.0; L]
        },
        root,
    )?;
    let reduce_min = world.ireduce(minmax_input(rank), ReduceOp::Min, root)?;
    let reduce_sum = world.ireduce(float_input(rank), ReduceOp::Sum, root)?;
    let all_sum = world.iallreduce(sum_input(rank), ReduceOp::Sum)?;
    let all_prod = world.iallreduce(prod_input(rank), ReduceOp::Prod)?;
    let all_xor = world.iallreduce(bits_input(rank), ReduceOp::BitXor)?;
    let all_fmax = world.iallreduce(float_input(rank), ReduceOp::Max)?;
    let scan = world.iscan(prod_input(rank), ReduceOp::Prod)?;
    let exscan = world.iexscan(minmax_input(rank), ReduceOp::Max)?;
    let gather = world.igather(gather_input(rank), root)?;
    let counts = gatherv_counts(size);
    let gatherv = world.igatherv(gatherv_input(rank), &counts, root)?;
    let scatter = world.iscatter(
        if rank == root {
            scatter_root_data(size)
        } else {
            vec![]
        },
        CHUNK,
        root,
    )?;
    let scatterv = world.iscatterv(
        if rank == root {
            scatterv_root_data(size)
        } else {
            vec![]
        },
        &scatterv_counts(size),
        scatterv_counts(size)[rank as usize],
        root,
    )?;
    let allgather = world.iallgather(gather_input(rank))?;
    let alltoall = world.ialltoall(alltoall_input(rank, size), CHUNK)?;

    // One of them awaited by a data-driven task.
    let from_task = Mutex::new(None);
    hc.finish(|s| {
        s.spawn_await(&[&all_sum], |_| {
            *from_task.lock().unwrap() = Some(all_sum.get().expect("iallreduce").0.clone());
        });
    });
    assert_eq!(
        from_task.into_inner().unwrap(),
        Some(ex.sum(0..size)),
        "awaited iallreduce"
    );

    let deps: [&dyn Awaitable; 16] = [
        &barrier,
        &bcast,
        &reduce_min,
        &reduce_sum,
        &all_sum,
        &all_prod,
        &all_xor,
        &all_fmax,
        &scan,
        &exscan,
        &gather,
        &gatherv,
        &scatter,
        &scatterv,
        &allgather,
        &alltoall,
    ];
    wait_all(&deps)?;
    assert!(hc_mpi::test_all(&deps));

    barrier.wait()?;
    assert_eq!(bcast.wait()?.0, float_input(root), "ibcast");
    let (min, status) = reduce_min.wait()?;
    assert_eq!(
        min,
        if rank == root { ex.min() } else { vec![] },
        "ireduce min"
    );
    assert_eq!(status.count, min.len());
    let fsum = reduce_sum.wait()?.0;
    assert_eq!(
        fsum,
        if rank == root { ex.fsum() } else { vec![] },
        "ireduce fsum"
    );
    assert_eq!(all_sum.wait()?.0, ex.sum(0..size), "iallreduce sum");
    assert_eq!(all_prod.wait()?.0, ex.prod(), "iallreduce prod");
    assert_eq!(all_xor.wait()?.0, ex.xor(), "iallreduce xor");
    assert_eq!(all_fmax.wait()?.0, ex.fmax(), "iallreduce fmax");
    assert_eq!(
        scan.wait()?.0,
        fold(0..rank + 1, prod_input, |a, b| a * b),
        "iscan prod"
    );
    let exscan = exscan.wait()?.0;
    if rank > 0 {
        assert_eq!(exscan, ex.max(0..rank), "iexscan max");
    }
    let all: Vec<i32> = (0..size).flat_map(gather_input).collect();
    assert_eq!(
        gather.wait()?.0,
        if rank == root { all.clone() } else { vec![] },
        "igather"
    );
    let allv: Vec<i32> = (0..size).flat_map(gatherv_input).collect();
    assert_eq!(
        gatherv.wait()?.0,
        if rank == root { allv } else { vec![] },
        "igatherv"
    );
    let start = rank as usize * CHUNK;
    assert_eq!(
        scatter.wait()?.0,
        scatter_root_data(size)[start..start + CHUNK],
        "iscatter"
    );
    assert_eq!(scatterv.wait()?.0, scatterv_piece(size, rank), "iscatterv");
    assert_eq!(allgather.wait()?.0, all, "iallgather");
    assert_eq!(
        alltoall.wait()?.0,
        alltoall_expected(rank, size),
        "ialltoall"
    );
    Ok(())
}

/// A collective in flight while point-to-point messages flow (see the module
/// docs): rank 0 joins the collectives only after its ring message arrived.
fn overlap(world: &Comm) -> Result {
    let (rank, size) = (world.rank(), world.size());
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    let ring = |tag: i32| -> Result<Vec<i32>> {
        let recv = world.irecv(vec![0i32; 64], prev, tag)?;
        let send = world.isend(vec![rank; 64], next, tag)?;
        let (data, status) = recv.wait()?;
        assert_eq!((status.source, status.count), (prev, 64));
        send.wait()?;
        Ok(data)
    };
    let value = vec![rank as i64 + 1];
    let expected = (size as i64) * (size as i64 + 1) / 2;
    let (reduced, barrier, data) = if rank == 0 {
        let data = ring(900)?;
        (
            world.iallreduce(value, ReduceOp::Sum)?,
            world.ibarrier(),
            data,
        )
    } else {
        let reduced = world.iallreduce(value, ReduceOp::Sum)?;
        let barrier = world.ibarrier();
        let data = ring(900)?;
        (reduced, barrier, data)
    };
    assert_eq!(data, vec![prev; 64], "ring data during a collective");
    wait_all(&[&reduced, &barrier])?;
    assert_eq!(reduced.wait()?.0, vec![expected], "overlapped iallreduce");
    barrier.wait()?;
    Ok(())
}

/// Keeps the value of larger magnitude (commutative).
struct MaxMagnitude;

impl Reduction for MaxMagnitude {
    type Element = i64;
    fn combine(input: &i64, inout: &mut i64) {
        if input.abs() > inout.abs() || (input.abs() == inout.abs() && *input > *inout) {
            *inout = *input;
        }
    }
}

/// Affine maps `x ↦ a·x + b` as `[a, b]` pairs, composed in rank order:
/// `f ∘ g` with `f` from the lower rank (not commutative).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, mpi::traits::Equivalence)]
struct Affine {
    a: i64,
    b: i64,
}

impl Affine {
    /// `(self ∘ then)(x) = then(self(x))`: apply the lower rank's map first.
    fn then(self, then: Affine) -> Affine {
        Affine {
            a: then.a * self.a,
            b: then.a * self.b + then.b,
        }
    }
}

struct ComposeInRankOrder;

impl Reduction for ComposeInRankOrder {
    type Element = Affine;
    const COMMUTATIVE: bool = false;
    fn combine(input: &Affine, inout: &mut Affine) {
        *inout = input.then(*inout);
    }
}

fn affine_input(r: i32) -> Vec<Affine> {
    (0..L as i64)
        .map(|i| Affine {
            a: (r as i64 + i) % 3 + 1,
            b: r as i64 - 2 * i,
        })
        .collect()
}

fn magnitude_input(r: i32) -> Vec<i64> {
    (0..L as i64)
        .map(|i| (r as i64 * 5 - i * 3) * if (r + i as i32) % 2 == 0 { 1 } else { -1 })
        .collect()
}

/// User-defined reductions, blocking and as requests.
fn user_reductions(world: &Comm, root: i32) -> Result {
    let (rank, size) = (world.rank(), world.size());
    let expected_magnitude: Vec<i64> = (0..L)
        .map(|i| {
            (0..size)
                .map(|r| magnitude_input(r)[i])
                .fold(None, |acc: Option<i64>, v| {
                    let mut best = acc.unwrap_or(v);
                    MaxMagnitude::combine(&v, &mut best);
                    Some(best)
                })
                .expect("at least one rank")
        })
        .collect();
    assert_eq!(
        world.allreduce(magnitude_input(rank), ReduceOp::user::<MaxMagnitude>())?,
        expected_magnitude,
        "allreduce with a user reduction"
    );
    let composed = |ranks: std::ops::Range<i32>| -> Vec<Affine> {
        (0..L)
            .map(|i| {
                ranks
                    .clone()
                    .map(|r| affine_input(r)[i])
                    .reduce(Affine::then)
                    .expect("non-empty")
            })
            .collect()
    };
    let op = ReduceOp::user::<ComposeInRankOrder>();
    let reduced = world.reduce(affine_input(rank), op, root)?;
    assert_eq!(
        reduced,
        if rank == root {
            composed(0..size)
        } else {
            vec![]
        },
        "reduce with a non-commutative user reduction"
    );
    assert_eq!(
        world.iscan(affine_input(rank), op)?.wait()?.0,
        composed(0..rank + 1),
        "scan with a non-commutative user reduction"
    );
    match world.allreduce(vec![1i32; 2], op) {
        Err(Error::ReductionType {
            op: "iallreduce",
            reduction,
            element,
        }) => {
            assert!(reduction.contains("ComposeInRankOrder"), "{reduction}");
            assert_eq!(element, "i32");
        }
        other => panic!("user reduction over the wrong element type: {other:?}"),
    }
    Ok(())
}

/// Argument errors, reported before anything reaches MPI (so they are local:
/// no rank is left waiting in a collective).
fn argument_errors(world: &Comm) -> Result {
    let (rank, size) = (world.rank(), world.size());
    let bad_rank = |op, rank| Error::InvalidRank { op, rank, size };
    assert_eq!(
        world.ibcast(vec![0u8; 2], size).unwrap_err(),
        bad_rank("ibcast", size)
    );
    assert_eq!(
        world.bcast(vec![0u8; 2], -1).unwrap_err(),
        bad_rank("ibcast", -1)
    );
    assert_eq!(
        world.reduce(vec![1i32], ReduceOp::Sum, size).unwrap_err(),
        bad_rank("ireduce", size)
    );
    assert_eq!(
        world.gather(vec![1i32], size + 1).unwrap_err(),
        bad_rank("igather", size + 1)
    );
    assert_eq!(
        world.igatherv(vec![1i32], &[1], -3).unwrap_err(),
        bad_rank("igatherv", -3)
    );
    assert_eq!(
        world.scatter(vec![1i32], 1, size).unwrap_err(),
        bad_rank("iscatter", size)
    );
    assert_eq!(
        world.iscatterv(vec![1i32], &[1], 1, size).unwrap_err(),
        bad_rank("iscatterv", size)
    );

    // Rank 0 acts as root of the ill-formed calls; the checks are local, so
    // the other ranks simply do not call them.
    if rank == 0 {
        let wrong = vec![0u32; size as usize * CHUNK + 1];
        match world.iscatter(wrong, CHUNK, 0) {
            Err(Error::BadCollectiveBuffer {
                op: "iscatter",
                problem: BufferProblem::WrongLength { len, expected, .. },
            }) => {
                assert_eq!(
                    (len, expected),
                    (size as usize * CHUNK + 1, size as usize * CHUNK)
                );
            }
            other => panic!("scatter with a wrong root buffer: {other:?}"),
        }
        match world.scatter(vec![0u32; 1], CHUNK, 0) {
            Err(Error::BadCollectiveBuffer { .. }) => {}
            other => panic!("blocking scatter with a wrong root buffer: {other:?}"),
        }
        let mut counts = gatherv_counts(size);
        counts.push(1);
        assert!(matches!(
            world.igatherv(vec![1i32], &counts, 0),
            Err(Error::BadCollectiveBuffer {
                op: "igatherv",
                problem: BufferProblem::CountsPerRank { .. }
            })
        ));
        assert!(matches!(
            world.iscatterv(vec![1i32; 1000], &gatherv_counts(size), 1, 0),
            Err(Error::BadCollectiveBuffer {
                op: "iscatterv",
                problem: BufferProblem::CountsTotal { .. }
            })
        ));
    }
    assert!(matches!(
        world.alltoall(vec![0i32; size as usize * CHUNK + 1], CHUNK),
        Err(Error::BadCollectiveBuffer {
            op: "ialltoall",
            ..
        })
    ));
    Ok(())
}

fn main() -> Result {
    let hc = Hcmpi::init()?;
    let world = hc.world();
    let (rank, size) = (hc.rank(), hc.size());
    let last = size - 1;

    // Blocking forms from the main thread, with two different roots.
    blocking_round(world, 0)?;
    blocking_round(world, last)?;
    // Blocking forms inside a task (one task, so the order is fixed).
    hc.finish(|s| {
        s.spawn(|_| blocking_round(world, size / 2).expect("blocking collectives in a task"));
    });
    // Request forms.
    request_round(&hc, last)?;
    request_round(&hc, 0)?;
    // Overlap with point-to-point.
    for _ in 0..3 {
        overlap(world)?;
    }
    user_reductions(world, last)?;
    user_reductions(world, 0)?;
    argument_errors(world)?;
    world.barrier()?;
    println!("rank {rank}/{size}: collectives suite OK");
    Ok(())
}
