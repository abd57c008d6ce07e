//! Thread census, run by `tests/mpiexec.rs` at 1 to 4 ranks in both
//! placements: a process runs its computation workers, one communication
//! worker in dedicated placement, and the main thread — and not one thread
//! more however many phasers, accumulators, event sets and phased tasks it
//! has (Linux: the entries of `/proc/self/task`).
//!
//! The census is taken by a phased task while 100 others wait in a phase
//! of an hcmpi-phaser (and hold registrations on an hcmpi-accum and a
//! local phaser), with two distributed event sets and a local event alive
//! and remote posts in flight. Threads the MPI library starts for itself
//! during initialization are counted once, right after it, and must not
//! change either.
//!
//! Usage: `thread_census dedicated|shared`; prints
//! `rank R/N: thread census of T threads (1 main + W workers + C communication + M MPI's own) OK`.

use std::sync::Mutex;

use hcmpi_testkit::thread_count;

use hc_mpi::{Hcmpi, Placement};
use hcmpi_phasers::{spawn_phased, AccumOp, BarrierMode, DistEvents, Event, Mode, Phaser};

const WAITING: u64 = 100;
const WORKERS: usize = 2;

fn main() {
    let placement: Placement = std::env::args()
        .nth(1)
        .expect("usage: thread_census dedicated|shared")
        .parse()
        .expect("a placement");
    let hc = Hcmpi::builder()
        .workers(WORKERS)
        .placement(placement)
        .build()
        .expect("start hcmpi");
    let (rank, size) = (hc.rank(), hc.size());
    let right = (rank + 1) % size;
    let communication = usize::from(hc.placement() == Placement::Dedicated);
    let ours = 1 + WORKERS + communication;
    let after_init = thread_count();
    assert!(
        after_init >= ours,
        "{after_init} threads, fewer than main + {WORKERS} workers + {communication}"
    );
    let mpi_own = after_init - ours;

    let sets = [
        DistEvents::create(hc.world(), 2).expect("first event set"),
        DistEvents::create(hc.world(), 1).expect("second event set"),
    ];
    let local = Event::new();
    let arrived = Event::new();
    let census = Mutex::new(None);
    hc.finish(|s| {
        let barrier = Phaser::builder()
            .build_hcmpi(s, hc.world(), BarrierMode::Strict, Mode::SignalWait)
            .expect("hcmpi phaser");
        let sum = Phaser::builder()
            .build_hcmpi_accum::<u64>(s, hc.world(), AccumOp::Sum, Mode::SignalWait)
            .expect("hcmpi accumulator");
        let intra = Phaser::new(s, Mode::SignalWait);
        let everyone = (WAITING + 1) * size as u64;
        for _ in 0..WAITING {
            let regs = (
                barrier.register(Mode::SignalWait).unwrap(),
                sum.register(Mode::SignalWait).unwrap(),
                intra.register(Mode::SignalWait).unwrap(),
            );
            let (sets, local, arrived) = (&sets, &local, &arrived);
            spawn_phased(
                s,
                regs,
                move |_, (mut barrier, mut sum, mut intra)| async move {
                    sets[0].post(right, 0, 1).unwrap();
                    local.post().unwrap();
                    arrived.post().unwrap();
                    barrier.next().await.unwrap(); // the census is taken meanwhile
                    sum.accum_next(1).await.unwrap();
                    assert_eq!(sum.accum_get(), Ok(everyone));
                    intra.next().await.unwrap();
                },
            );
        }
        let regs = (
            barrier.register(Mode::SignalWait).unwrap(),
            sum.register(Mode::SignalWait).unwrap(),
            intra.register(Mode::SignalWait).unwrap(),
        );
        let (arrived, census) = (&arrived, &census);
        spawn_phased(
            s,
            regs,
            move |_, (mut barrier, mut sum, mut intra)| async move {
                // Every other task has arrived and waits in phase 0, which
                // waits for this one.
                arrived.wait(WAITING).await.unwrap();
                *census.lock().unwrap() = Some(thread_count());
                barrier.next().await.unwrap();
                sum.accum_next(1).await.unwrap();
                intra.next().await.unwrap();
            },
        );
    });
    let during = census.into_inner().unwrap().expect("the census was taken");
    assert_eq!(
        during, after_init,
        "{during} threads with {WAITING} phased tasks waiting, {after_init} after initialization"
    );
    assert_eq!(local.query(), WAITING);
    let [first, second] = sets;
    let received = first.local(0).unwrap().clone();
    hc.block_on(async {
        first.close().await.unwrap();
        second.close().await.unwrap();
    });
    assert_eq!(received.query(), WAITING);
    assert_eq!(thread_count(), after_init);
    println!(
        "rank {rank}/{size}: thread census of {during} threads (1 main + {WORKERS} workers + {communication} communication + {mpi_own} MPI's own) OK"
    );
}
