//! Multi-rank checks of stale accumulators, run by `tests/mpiexec.rs` at 1
//! to 4 ranks.
//!
//! * For staleness 0, 1, 2, 4 and eventual, and SUM, MIN, MAX, PROD, a
//!   float SUM and a user reduction: `T` tasks per rank contribute to
//!   `N + rank` phases (ranks leave at different phases), each after a
//!   random delay. Every result a task reads must say a phase at most `k`
//!   old and hold exactly the reduction of every contribution to that
//!   phase; no task of a rank runs more than `k` phases ahead of another.
//! * Staleness 0 gives, phase by phase, exactly the results of the strict
//!   hcmpi-accum.
//! * `ssp_suite mismatch`: rank 0 asks for another staleness, then for a
//!   user reduction of another name; every rank gets `SspError::Mismatch`
//!   both times.
//! * `ssp_suite leak`: the last rank leaks its member (`mem::forget`) and
//!   closes; it gets `SspError::MembersLeaked`, and every other rank's
//!   member, waiting for a phase that can never complete, gets
//!   `SspError::PeerFailed` naming it — an error instead of a hang.
//!
//! Prints `rank R/N: ssp suite OK` (or `ssp mismatch OK`, `ssp leak OK`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hc_mpi::Hcmpi;
use hcmpi_phasers::{
    spawn_phased, AccumOp, AccumValue, Mode, Phaser, Reduction, SspError, StaleAccum, Staleness,
};

const TASKS: u64 = 3;
const PHASES: u64 = 24;

/// What task `task` of `rank` contributes to `phase` (small, so that PROD
/// and the float SUM stay exact).
fn contribution(rank: u64, task: u64, phase: u64) -> u64 {
    1 + (rank * 7 + task * 3 + phase * 5) % 3
}

/// Phases rank `rank` contributes to.
fn phases_of(rank: u64) -> u64 {
    PHASES + rank
}

/// A deterministic random delay of up to 150 µs.
fn delay(rank: u64, task: u64, phase: u64) {
    let mut z = (rank << 40) ^ (task << 20) ^ phase ^ 0x9e37_79b9_7f4a_7c15;
    z = (z ^ (z >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let until = Instant::now() + Duration::from_micros((z >> 33) % 150);
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// The exact result of `phase`: every contribution of every task of every
/// rank still contributing.
fn expected<V: AccumValue>(
    reduction: &Reduction<V>,
    lift: fn(u64) -> V,
    ranks: u64,
    phase: u64,
) -> V {
    let mut acc = reduction.identity();
    for r in (0..ranks).filter(|&r| phase < phases_of(r)) {
        for t in 0..TASKS {
            acc = reduction.combine(acc, lift(contribution(r, t, phase)));
        }
    }
    acc
}

fn check<V: AccumValue>(
    hc: &Hcmpi,
    reduction: Reduction<V>,
    lift: fn(u64) -> V,
    staleness: Staleness,
) {
    let (rank, ranks) = (hc.rank() as u64, hc.size() as u64);
    let name = reduction.name();
    let acc = StaleAccum::create(hc.world(), reduction.clone(), staleness).expect("create");
    let clocks: Vec<AtomicU64> = (0..TASKS).map(|_| AtomicU64::new(0)).collect();
    hc.finish(|s| {
        let first = acc.join();
        let members: Vec<_> = (1..TASKS).map(|_| first.register()).collect();
        for (task, mut member) in std::iter::once(first).chain(members).enumerate() {
            let (reduction, clocks) = (&reduction, &clocks);
            s.spawn_future(async move {
                let task = task as u64;
                for phase in 0..phases_of(rank) {
                    assert_eq!(member.phase(), phase, "{name}: no phase went by without us");
                    delay(rank, task, phase);
                    // Counted before it contributes, so a task that sees
                    // this one's contribution also sees the count.
                    clocks[task as usize].store(phase + 1, Ordering::SeqCst);
                    let seen = member
                        .advance(lift(contribution(rank, task, phase)))
                        .await
                        .unwrap_or_else(|e| panic!("{name} {staleness:?}: {e}"));
                    if let Some(k) = staleness.bound() {
                        let slowest = clocks.iter().map(|c| c.load(Ordering::SeqCst)).min();
                        assert!(slowest.unwrap() + k > phase, "{name}: ran ahead");
                        if phase >= k {
                            let old = member.result(phase - k).expect("phase p - k is kept");
                            assert_eq!(old.value, expected(reduction, lift, ranks, phase - k));
                        }
                    }
                    if let Some(seen) = seen {
                        assert!(seen.phase <= phase, "{name}: a phase not contributed yet");
                        if let Some(k) = staleness.bound() {
                            assert!(seen.phase + k >= phase, "{name}: older than {k}");
                        }
                        assert_eq!(
                            seen.value,
                            expected(reduction, lift, ranks, seen.phase),
                            "{name} {staleness:?}: phase {} at phase {phase}",
                            seen.phase
                        );
                    } else {
                        assert!(staleness.bound().is_none_or(|k| phase < k));
                    }
                }
                // Leaves here: later phases no longer count this task.
                drop(member);
            });
        }
    });
    hc.block_on(acc.close())
        .unwrap_or_else(|e| panic!("{name} {staleness:?}: close: {e}"));
}

/// Staleness 0 against the strict hcmpi-accum: the same contributions give
/// the same result in every phase.
fn strict_equals_stale_zero(hc: &Hcmpi) {
    let rank = hc.rank() as u64;
    let strict = Mutex::new(Vec::new());
    hc.finish(|s| {
        let strict = &strict;
        let ph = Phaser::builder()
            .build_hcmpi_accum::<i64>(s, hc.world(), AccumOp::Sum, Mode::SignalWait)
            .unwrap();
        for task in 0..TASKS {
            let reg = ph.register(Mode::SignalWait).unwrap();
            spawn_phased(s, reg, move |_, mut reg| async move {
                for phase in 0..PHASES {
                    let v = contribution(rank, task, phase) as i64 * (phase as i64 - 7);
                    reg.accum_next(v).await.unwrap();
                    if task == 0 {
                        strict.lock().unwrap().push(reg.accum_get().unwrap());
                    }
                }
            });
        }
    });
    let stale = Mutex::new(Vec::new());
    let sum = Reduction::op(AccumOp::Sum).unwrap();
    let acc = StaleAccum::create(hc.world(), sum, Staleness::Bounded(0)).unwrap();
    hc.finish(|s| {
        let first = acc.join();
        let members: Vec<_> = (1..TASKS).map(|_| first.register()).collect();
        for (task, mut member) in std::iter::once(first).chain(members).enumerate() {
            let stale = &stale;
            s.spawn_future(async move {
                for phase in 0..PHASES {
                    let v = contribution(rank, task as u64, phase) as i64 * (phase as i64 - 7);
                    let seen = member.advance(v).await.unwrap().expect("strict");
                    assert_eq!(seen.phase, phase);
                    if task == 0 {
                        stale.lock().unwrap().push(seen.value);
                    }
                }
            });
        }
    });
    hc.block_on(acc.close()).unwrap();
    assert_eq!(strict.into_inner().unwrap(), stale.into_inner().unwrap());
}

fn main() {
    let hc = Hcmpi::init().expect("MPI initialization");
    let (rank, size) = (hc.rank(), hc.size());
    if std::env::args().nth(1).as_deref() == Some("mismatch") {
        let k = if rank == 0 { 1 } else { 2 };
        let sum = Reduction::<u64>::op(AccumOp::Sum).unwrap();
        match StaleAccum::create(hc.world(), sum, Staleness::Bounded(k)) {
            Err(SspError::Mismatch { what, .. }) if size > 1 => assert_eq!(what, "staleness"),
            Ok(acc) if size == 1 => hc.block_on(acc.close()).unwrap(),
            other => panic!("expected a mismatch, got {other:?}"),
        }
        // User reductions are compared by name and identity.
        let name = if rank == 0 { "MAXABS" } else { "MINABS" };
        let user = Reduction::custom(name, 0i64, |a, b| a.max(b));
        match StaleAccum::create(hc.world(), user, Staleness::Bounded(1)) {
            Err(SspError::Mismatch { what, .. }) if size > 1 => assert_eq!(what, "reduction"),
            Ok(acc) if size == 1 => hc.block_on(acc.close()).unwrap(),
            other => panic!("expected a mismatch, got {other:?}"),
        }
        println!("rank {rank}/{size}: ssp mismatch OK");
        return;
    }
    if std::env::args().nth(1).as_deref() == Some("leak") {
        leak(&hc);
        println!("rank {rank}/{size}: ssp leak OK");
        return;
    }
    for staleness in [
        Staleness::Bounded(0),
        Staleness::Bounded(1),
        Staleness::Bounded(2),
        Staleness::Bounded(4),
        Staleness::Eventual,
    ] {
        check(
            &hc,
            Reduction::op(AccumOp::Sum).unwrap(),
            |v| v as i64,
            staleness,
        );
        check(
            &hc,
            Reduction::op(AccumOp::Min).unwrap(),
            |v| v as u32,
            staleness,
        );
        check(
            &hc,
            Reduction::op(AccumOp::Max).unwrap(),
            |v| v as i16,
            staleness,
        );
        check(&hc, Reduction::op(AccumOp::Prod).unwrap(), |v| v, staleness);
        check(
            &hc,
            Reduction::op(AccumOp::Sum).unwrap(),
            |v| v as f64,
            staleness,
        );
        let max_abs = Reduction::custom("MAXABS", 0i64, |a: i64, b: i64| {
            // Ties go to the larger value, so the order does not matter.
            if (b.abs(), b) > (a.abs(), a) {
                b
            } else {
                a
            }
        });
        check(&hc, max_abs, |v| 3 - 2 * v as i64, staleness);
    }
    strict_equals_stale_zero(&hc);
    println!("rank {rank}/{size}: ssp suite OK");
}

/// The last rank leaks its member after phase 2; see the module docs.
fn leak(hc: &Hcmpi) {
    let (rank, size) = (hc.rank(), hc.size());
    let leaker = size - 1;
    let sum = Reduction::<u64>::op(AccumOp::Sum).unwrap();
    let acc = StaleAccum::create(hc.world(), sum, Staleness::Bounded(1)).unwrap();
    let closed = hc.block_on(async move {
        let mut member = acc.join();
        if rank == leaker {
            for _ in 0..3 {
                member.advance(1).await.unwrap();
            }
            std::mem::forget(member);
        } else {
            // Phase 3 needs the leaked member: `advance` of phase 4 waits
            // for it and must fail.
            let mut error = None;
            for phase in 0..100 {
                match member.advance(1).await {
                    Ok(_) => assert!(phase < 4, "phase {phase} cannot complete"),
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            }
            assert_eq!(error, Some(SspError::PeerFailed { rank: leaker }));
            drop(member);
        }
        acc.close().await
    });
    let expected = if rank == leaker {
        SspError::MembersLeaked { count: 1 }
    } else {
        SspError::PeerFailed { rank: leaker }
    };
    assert_eq!(closed, Err(expected));
}
