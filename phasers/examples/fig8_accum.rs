//! Fig. 8 of the HCMPI paper: an hcmpi-accum computing a global SUM.
//!
//! ```text
//! finish {
//!     phaser *ph = HCMPI_ACCUM_CREATE(HCMPI_SUM, HCMPI_INT);
//!     for (i = 0; i < n; ++i) {
//!         async phased IN(...) { int *my_val = get_my_val(); accum_next(my_val); ... }
//!     }
//! }
//! int *result = (int *) accum_get(ph);
//! ```
//!
//! `n` tasks per rank contribute `rank * n + i`; after the finish the
//! creator reads the global sum through a handle on the accumulator. Prints
//! `rank R/N: fig8 sum=S OK`.

use hc_mpi::Hcmpi;
use hcmpi_phasers::{hcmpi_accum_create, spawn_phased, AccumOp, Mode};

const N: i32 = 4;

fn main() {
    let hc = Hcmpi::init().expect("start hcmpi");
    let (rank, size) = (hc.rank(), hc.size());
    let handle = hc.finish(|s| {
        let ph = hcmpi_accum_create::<i32>(s, &hc, AccumOp::Sum, Mode::SignalWait).unwrap();
        for i in 0..N {
            let reg = ph.register(Mode::SignalWait).unwrap();
            spawn_phased(s, reg, move |_, mut reg| async move {
                reg.accum_next(rank * N + i).await.unwrap();
            });
        }
        ph.handle()
        // The creator's registration `ph` is dropped here.
    });
    let result = handle.last_result().expect("one phase completed");
    let all = size * N;
    assert_eq!(result, all * (all - 1) / 2);
    println!("rank {rank}/{size}: fig8 sum={result} OK");
}
