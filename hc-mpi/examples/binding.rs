//! Where a rank's computation workers run (`HCMPI_BIND`, see
//! `hc_mpi::Binding`), checked on every worker:
//!
//! * bound (`cores`): each worker runs on exactly one CPU of the rank's
//!   share (the CPUs the starting thread is restricted to), the workers of
//!   a rank on different CPUs while the share has one for each, and the
//!   workers of all ranks on different CPUs while the shares are disjoint
//!   and hold their ranks' workers;
//! * unbound (`none`): each worker may run wherever the process may.
//!
//! Either way the starting thread has its CPUs back once `Hcmpi` drops.
//!
//! Prints `rank R/N: binding OK <binding>` on every rank.
//!
//! Run: `HCMPI_BIND=cores mpiexec -n 2 target/release/examples/binding`.

use std::sync::{Barrier, Mutex};

use hc_mpi::{Binding, Error, Hcmpi};
use hc_runtime::affinity::current_cpus;

fn main() -> Result<(), Error> {
    let before = current_cpus().expect("the CPUs of the starting thread");
    let hc = Hcmpi::init()?;
    let (rank, size, binding) = (hc.rank(), hc.size(), hc.binding());
    let share = current_cpus().expect("the CPUs of the starting thread");
    let workers = hc.runtime().num_workers();
    let seen = Mutex::new(Vec::new());
    // One task per worker, each waiting for the others: every worker runs
    // one of them.
    let barrier = Barrier::new(workers);
    hc.finish(|s| {
        for _ in 0..workers {
            let (seen, barrier) = (&seen, &barrier);
            s.spawn(move |_| {
                let cpus = current_cpus().expect("the CPUs of a worker");
                seen.lock().unwrap().push(cpus);
                barrier.wait();
            });
        }
    });
    let seen = seen.into_inner().unwrap();
    let mine: Vec<u64> = match binding {
        Binding::Cores => {
            let mine: Vec<u64> = seen
                .iter()
                .map(|cpus| {
                    assert_eq!(cpus.len(), 1, "a bound worker runs on {cpus:?}");
                    assert!(
                        share.contains(&cpus[0]),
                        "worker on CPU {} outside the rank's share {share:?}",
                        cpus[0]
                    );
                    cpus[0] as u64
                })
                .collect();
            if workers <= share.len() {
                let mut distinct = mine.clone();
                distinct.sort_unstable();
                distinct.dedup();
                assert_eq!(distinct.len(), workers, "workers share CPUs: {mine:?}");
            }
            mine
        }
        Binding::None => {
            assert_eq!(
                share, before,
                "an unbound rank's starting thread was restricted"
            );
            for cpus in &seen {
                assert_eq!(cpus, &before, "an unbound worker is restricted");
            }
            Vec::new()
        }
        Binding::Auto => unreachable!("hc.binding() is resolved"),
    };
    // Across the ranks: the workers of all ranks on different CPUs where
    // every rank is bound, the shares are disjoint and each holds its
    // rank's workers.
    let masks = hc.world().allgather(hc_mpi::cpu_mask(&share))?;
    let fits = u64::from(binding == Binding::Cores && workers <= share.len());
    let fit = hc.world().allgather(vec![fits, workers as u64])?;
    let words = hc_mpi::CPU_MASK_WORDS;
    let union: u32 = (0..words)
        .map(|w| masks.chunks(words).fold(0, |u, m| u | m[w]).count_ones())
        .sum();
    let disjoint = masks.iter().map(|w| w.count_ones()).sum::<u32>() == union;
    let all_fit = fit.chunks(2).all(|f| f[0] == 1 && f[1] == workers as u64);
    if disjoint && all_fit {
        let every = hc.world().allgather(mine)?;
        let mut distinct = every.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(
            distinct.len(),
            every.len(),
            "ranks' workers share CPUs: {every:?}"
        );
    }
    drop(hc);
    assert_eq!(
        current_cpus().expect("the CPUs of the starting thread"),
        before,
        "the starting thread's CPUs after Hcmpi dropped"
    );
    println!("rank {rank}/{size}: binding OK {binding}");
    Ok(())
}
