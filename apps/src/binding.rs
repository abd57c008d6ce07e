//! The baselines bound to CPUs as hc-mpi binds its computation workers, so
//! that every mode of a comparison runs on the same terms.
//!
//! hc-mpi binds each worker to a CPU of its own in its rank's share of the
//! node (see `hc_mpi::Binding`); unbound, Linux may start two ranks' busy
//! threads on one CPU and leave the other idle for milliseconds. The
//! drivers' MPI + rayon modes (`smith-waterman --mode hybrid`, `uts --mode
//! hybrid`) and plain MPI ranks (`uts --mode mpi-ws`) call
//! [`bind_pool_like_hcmpi`] or [`bind_rank_like_hcmpi`] right after MPI
//! starts, under the same `HCMPI_BIND` ([`requested`], read before MPI
//! starts, so that a bad value is the rank's own error).

use hc_runtime::affinity::{bind_current_thread, current_cpus, AffinityError};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives};

/// Why a baseline could not be bound.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BindError {
    /// `HCMPI_BIND` names no binding, or `cores` was asked for where this
    /// rank has no share of the node's CPUs.
    #[error("cannot choose the CPUs to bind to")]
    Choose(#[source] hc_mpi::InitError),
    /// A thread could not be bound.
    #[error("cannot bind a thread to its CPUs")]
    Affinity(#[source] AffinityError),
}

/// The binding `HCMPI_BIND` asks for, `auto` where it is unset: read
/// before MPI starts, so that a bad value is each rank's own error.
///
/// ```
/// std::env::remove_var("HCMPI_BIND");
/// assert_eq!(apps::binding::requested().unwrap(), hc_mpi::Binding::Auto);
/// ```
///
/// # Errors
/// [`BindError::Choose`] for a value that names no binding.
pub fn requested() -> Result<hc_mpi::Binding, BindError> {
    hc_mpi::Binding::from_env()
        .map(Option::unwrap_or_default)
        .map_err(BindError::Choose)
}

/// Binds the threads of `pool` as hc-mpi binds its computation workers:
/// under `requested` ([`requested()`]), each thread on a CPU
/// of its own in this rank's share of the node ([`hc_mpi::cpu_share`] over
/// the CPU sets of the ranks `MPI_Comm_split_type` puts on it, MPI 4.0
/// §7.4.2), and the calling thread restricted to the share. `auto` binds
/// where the pool's threads fill the share and the node's ranks' threads
/// do not outnumber its CPUs; `none` binds nothing. Returns whether it
/// bound. Collective over `world`.
///
/// ```
/// # #[cfg(target_os = "linux")] {
/// use hc_runtime::affinity::current_cpus;
///
/// let universe = mpi::initialize().unwrap();
/// let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// let cpus = current_cpus().unwrap();
/// let bound =
///     apps::binding::bind_pool_like_hcmpi(&universe.world(), &pool, hc_mpi::Binding::Cores);
/// assert!(bound.expect("one thread binds to a CPU of its own"));
/// // One rank alone: its share is every CPU it may run on; the pool's one
/// // thread is on the first of them, in hc-mpi's (socket, core) order.
/// let share = hc_mpi::cpu_share(&[&hc_mpi::cpu_mask(&cpus)[..]], 0).unwrap();
/// assert_eq!(pool.install(|| current_cpus().unwrap()), &share[..1]);
/// # }
/// ```
///
/// # Errors
/// `cores` where the rank has no share, or a thread the operating system
/// would not bind.
pub fn bind_pool_like_hcmpi(
    world: &SimpleCommunicator,
    pool: &rayon::ThreadPool,
    requested: hc_mpi::Binding,
) -> Result<bool, BindError> {
    bind_like_hcmpi(world, pool.current_num_threads(), requested, |share| {
        bind_current_thread(share)?;
        pool.broadcast(|thread| bind_current_thread(&[share[thread.index() % share.len()]]))
            .into_iter()
            .collect()
    })
}

/// Binds the calling thread, the one thread of a plain MPI rank, as
/// hc-mpi binds a rank's one worker: to the first CPU of this rank's share
/// of the node, under the rules of [`bind_pool_like_hcmpi`]. Returns
/// whether it bound. Collective over `world`.
///
/// ```
/// let universe = mpi::initialize().unwrap();
/// let bound = apps::binding::bind_rank_like_hcmpi(&universe.world(), hc_mpi::Binding::None);
/// assert!(!bound.expect("binding none cannot fail"));
/// ```
///
/// # Errors
/// As [`bind_pool_like_hcmpi`].
pub fn bind_rank_like_hcmpi(
    world: &SimpleCommunicator,
    requested: hc_mpi::Binding,
) -> Result<bool, BindError> {
    bind_like_hcmpi(world, 1, requested, |share| {
        bind_current_thread(&share[..1])
    })
}

/// Finds this rank's share of its node for `threads` threads and, where
/// `requested` binds them, hands it to `bind`.
fn bind_like_hcmpi(
    world: &SimpleCommunicator,
    threads: usize,
    requested: hc_mpi::Binding,
    bind: impl FnOnce(&[usize]) -> Result<(), AffinityError>,
) -> Result<bool, BindError> {
    let node = world.split_shared(world.rank());
    // An unknown CPU set (all zero) leaves the rank without a share, as in
    // hc-mpi: `auto` then binds nothing, `cores` is an error.
    let own = hc_mpi::cpu_mask(&current_cpus().unwrap_or_default());
    let mut all = vec![0u64; own.len() * node.size() as usize];
    node.all_gather_into(&own[..], &mut all[..]);
    let sets: Vec<&[u64]> = all.chunks(own.len()).collect();
    let node_cpus = hc_mpi::node_cpu_count(&sets);
    let mut node_threads = 0u64;
    node.all_reduce_into(&(threads as u64), &mut node_threads, SystemOperation::sum());
    let share = hc_mpi::cpu_share(&sets, node.rank() as usize);
    let oversubscribed = node_threads > node_cpus as u64;
    let Some(share) = requested
        .cpus_to_bind(share, threads, oversubscribed)
        .map_err(BindError::Choose)?
    else {
        return Ok(false);
    };
    bind(&share).map_err(BindError::Affinity)?;
    Ok(true)
}
