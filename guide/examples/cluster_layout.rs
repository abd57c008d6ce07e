//! Prints how each rank of a job is laid out: host, workers, cores, where
//! the communication engine runs and whether the node is oversubscribed.
//! Run it once with a job's launcher flags before the real program.
//!
//! Run: `mpiexec -n 2 target/release/examples/cluster_layout`.

// sample-run: ranks=0
// sample-run: ranks=1,2,3
// sample-run: ranks=2 HC_WORKERS=1 HCMPI_PLACEMENT=dedicated

// ANCHOR: all
use hc_mpi::{Hcmpi, Placement, ReduceOp};
use std::process::ExitCode;

fn main() -> ExitCode {
    // An error on one rank ends the whole job with its message.
    Hcmpi::run(body)
}

fn body(hc: &Hcmpi) -> Result<(), hc_mpi::Error> {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let workers = hc.runtime().num_workers();
    println!(
        "rank {}/{} on {}: {workers} workers, {} cores per rank, {} engine{}",
        hc.rank(),
        hc.size(),
        host.trim(),
        hc.cores_per_rank(),
        hc.placement(),
        if hc.oversubscribed() {
            ", OVERSUBSCRIBED"
        } else {
            ""
        },
    );
    // `auto` is resolved at start: dedicated only with a core to spare.
    assert_ne!(hc.placement(), Placement::Auto);
    if std::env::var_os("HCMPI_PLACEMENT").is_none() {
        let spare = hc.cores_per_rank() > workers;
        assert_eq!(hc.placement() == Placement::Dedicated, spare);
    }
    // Every rank took part: the ranks' count, summed over the world.
    let ranks = hc.world().allreduce(vec![1u32], ReduceOp::Sum)?;
    assert_eq!(ranks[0], hc.size() as u32);
    Ok(())
}
// ANCHOR_END: all
