//! Where a rank's computation workers run (`HCMPI_BIND`, see
//! `hc_mpi::Binding`), checked on every worker:
//!
//! * bound (`cores`): each worker runs on exactly one CPU, one of those the
//!   process may use, and the workers of all ranks run on different CPUs
//!   while the node has a CPU for each of them;
//! * unbound (`none`): each worker may run wherever the process may.
//!
//! Prints `rank R/N: binding OK <binding>` on every rank.
//!
//! Run: `HCMPI_BIND=cores mpiexec -n 2 target/release/examples/binding`.

use std::sync::Mutex;

use hc_mpi::{Binding, Error, Hcmpi};
use hc_runtime::affinity::current_cpus;

fn main() -> Result<(), Error> {
    let hc = Hcmpi::init()?;
    // The starting thread is restricted to the rank's share when bound:
    // the process's CPUs are those its workers may have.
    let share = current_cpus().expect("the CPUs of the starting thread");
    let workers = hc.runtime().num_workers();
    let seen = Mutex::new(Vec::new());
    // One task per worker, each waiting for the others: every worker runs
    // one of them.
    let barrier = std::sync::Barrier::new(workers);
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
    let mine: Vec<u64> = match hc.binding() {
        Binding::Cores => seen
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
            .collect(),
        Binding::None => {
            for cpus in &seen {
                assert_eq!(cpus, &share, "an unbound worker is restricted");
            }
            Vec::new()
        }
        Binding::Auto => unreachable!("hc.binding() is resolved"),
    };
    // Across the ranks: the workers of all ranks on different CPUs where
    // the ranks' shares are disjoint and each holds its rank's workers.
    let mut mask = vec![0u64; 16];
    for &cpu in share.iter().filter(|&&cpu| cpu < 1024) {
        mask[cpu / 64] |= 1 << (cpu % 64);
    }
    let masks = hc.world().allgather(mask)?;
    let sizes = hc
        .world()
        .allgather(vec![workers as u64, share.len() as u64])?;
    let union: u32 = (0..16)
        .map(|w| masks.chunks(16).fold(0, |u, m| u | m[w]).count_ones())
        .sum();
    let disjoint = masks.iter().map(|w| w.count_ones()).sum::<u32>() == union;
    let fits = sizes
        .chunks(2)
        .all(|s| s[0] <= s[1] && s[0] == workers as u64);
    if hc.binding() == Binding::Cores && disjoint && fits {
        let every = hc.world().allgather(mine)?;
        let mut sorted = every.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), every.len(), "workers share CPUs: {every:?}");
    }
    println!(
        "rank {}/{}: binding OK {}",
        hc.rank(),
        hc.size(),
        hc.binding()
    );
    Ok(())
}
