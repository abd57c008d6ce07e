//! Fig. 7 of the HCMPI paper: an hcmpi-phaser as a barrier across tasks
//! and ranks.
//!
//! ```text
//! finish {
//!     phaser *ph = HCMPI_PHASER_CREATE(SIGNAL_WAIT_MODE);
//!     for (i = 0; i < n; ++i) {
//!         async phased(ph) IN(i) { ...; next; ... /* post-barrier work */ }
//!     }
//! }
//! ```
//!
//! Each of `n` tasks on each rank adds its contribution to a per-rank
//! counter, awaits `next`, and then reads the total of all ranks with a
//! sum accumulator fused into the same loop; after the barrier every
//! contribution of every rank is in. The phased tasks are future tasks:
//! while they wait, they hold no worker. Prints `rank R/N: fig7 OK`.

use std::sync::atomic::{AtomicU64, Ordering};

use hc_mpi::Hcmpi;
use hcmpi_phasers::{
    hcmpi_accum_create, hcmpi_phaser_create, spawn_phased, AccumOp, BarrierMode, Mode,
};

const N: u64 = 4;
const ROUNDS: u64 = 5;

fn main() {
    let hc = Hcmpi::init().expect("start hcmpi");
    let (rank, size) = (hc.rank(), hc.size());
    let work = AtomicU64::new(0);
    let work = &work;
    hc.finish(|s| {
        let ph = hcmpi_phaser_create(s, &hc, Mode::SignalWait, BarrierMode::Strict).unwrap();
        let total = hcmpi_accum_create::<u64>(s, &hc, AccumOp::Sum, Mode::SignalWait).unwrap();
        for i in 0..N {
            let regs = (
                ph.register(Mode::SignalWait).unwrap(),
                total.register(Mode::SignalWait).unwrap(),
            );
            spawn_phased(s, regs, move |_, (mut ph, mut total)| async move {
                for round in 0..ROUNDS {
                    work.fetch_add(1, Ordering::SeqCst); // pre-barrier work
                    ph.next().await.unwrap();
                    // Post-barrier work: every local task has done its part.
                    assert!(work.load(Ordering::SeqCst) >= (round + 1) * N);
                    total.accum_next(i + 1).await.unwrap();
                    assert_eq!(total.accum_get().unwrap(), size as u64 * N * (N + 1) / 2);
                }
            });
        }
    });
    assert_eq!(work.load(Ordering::SeqCst), N * ROUNDS);
    println!("rank {rank}/{size}: fig7 OK");
}
