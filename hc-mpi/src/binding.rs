//! Which CPUs a rank's threads run on.
//!
//! * [`Binding::Cores`]: each computation worker is bound to a CPU of its
//!   own among the rank's share of the node's CPUs (below); a dedicated
//!   communication thread gets the share's CPUs the workers left, or the
//!   whole share; the thread that starts hc-mpi is restricted to the share,
//!   as a launcher's `--bind-to` would restrict the whole process.
//! * [`Binding::None`]: every thread is left to the operating system.
//! * [`Binding::Auto`] (the default): `Cores` where the node is not
//!   oversubscribed (see [`Placement`](crate::Placement)) and the rank's
//!   threads (its workers, plus a dedicated communication thread) fit its
//!   share one CPU each; `None` otherwise: threads that must share CPUs
//!   are best balanced by the operating system.
//!
//! The rank's **share**: when every rank on the node may run on the same
//! CPUs (the launcher bound none), the `k`-th of the node's `R` ranks takes
//! the `k`-th of `R` equal runs of them (at least one CPU); when the
//! launcher bound the ranks, each rank's own CPU set.
//!
//! Why bind: Linux places a thread it wakes on a CPU of its choosing, often
//! the waker's, and a thread placed on a busy CPU while another is idle
//! waits for the next load-balancing pass. On a 2-core node running 2
//! ranks of 1 worker, unbound, half of the runs of a 50 ms wavefront had
//! one rank's worker wait 3–8 ms behind the other's before its first task
//! (scheduler traces show both workers queued on one CPU, the other idle);
//! bound, none did.
//!
//! Set it with [`HcmpiBuilder::binding`](crate::HcmpiBuilder::binding) or
//! the `HCMPI_BIND` environment variable (`cores`, `none`, `auto`);
//! [`Hcmpi::binding`](crate::Hcmpi::binding) tells the one in effect.

use std::fmt;
use std::str::FromStr;

use crate::error::InitError;

/// Environment variable that chooses the [`Binding`].
pub const BINDING_ENV: &str = "HCMPI_BIND";

/// Which CPUs a rank's threads run on (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Binding {
    /// Each computation worker on a CPU of its own in the rank's share.
    Cores,
    /// Threads left to the operating system.
    None,
    /// `Cores` where the rank's threads fit its share one CPU each, `None`
    /// otherwise.
    #[default]
    Auto,
}

impl Binding {
    /// The name used by `HCMPI_BIND`.
    ///
    /// ```
    /// assert_eq!(hc_mpi::Binding::Cores.name(), "cores");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Binding::Cores => "cores",
            Binding::None => "none",
            Binding::Auto => "auto",
        }
    }

    /// Resolves `Auto` for a rank running `threads` threads on a share of
    /// `cpus` CPUs: `Cores` only when each thread can have one.
    ///
    /// ```
    /// use hc_mpi::Binding;
    ///
    /// assert_eq!(Binding::Auto.resolve(2, 2), Binding::Cores);
    /// assert_eq!(Binding::Auto.resolve(3, 2), Binding::None);
    /// assert_eq!(Binding::Cores.resolve(3, 2), Binding::Cores);
    /// assert_eq!(Binding::Cores.resolve(1, 0), Binding::None);
    /// ```
    pub fn resolve(self, threads: usize, cpus: usize) -> Binding {
        match self {
            _ if cpus == 0 => Binding::None,
            Binding::Auto if threads <= cpus => Binding::Cores,
            Binding::Auto => Binding::None,
            chosen => chosen,
        }
    }

    /// The binding asked for by `HCMPI_BIND`, if set.
    pub(crate) fn from_env() -> Result<Option<Binding>, InitError> {
        match std::env::var(BINDING_ENV) {
            Ok(value) => value.parse().map(Some).map_err(|_| InitError::InvalidEnv {
                name: BINDING_ENV,
                expected: "cores, none or auto",
                value,
            }),
            Err(_) => Ok(None),
        }
    }
}

impl fmt::Display for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a binding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown binding {0:?} (expected cores, none or auto)")]
pub struct UnknownBinding(pub String);

impl FromStr for Binding {
    type Err = UnknownBinding;

    /// ```
    /// use hc_mpi::Binding;
    ///
    /// assert_eq!("cores".parse(), Ok(Binding::Cores));
    /// assert!("tight".parse::<Binding>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Binding, UnknownBinding> {
        match s.trim() {
            "cores" => Ok(Binding::Cores),
            "none" => Ok(Binding::None),
            "auto" => Ok(Binding::Auto),
            other => Err(UnknownBinding(other.to_owned())),
        }
    }
}

/// The share of CPUs of the `node_rank`-th of `node_ranks` ranks on a node
/// (see the module docs): a run of `own` when every rank's set equals
/// `own`, `own` itself otherwise.
pub(crate) fn share(
    own: &[usize],
    all_same: bool,
    node_rank: usize,
    node_ranks: usize,
) -> Vec<usize> {
    if !all_same || own.is_empty() {
        return own.to_vec();
    }
    let (cpus, ranks) = (own.len(), node_ranks.max(1));
    let start = (node_rank * cpus / ranks).min(cpus - 1);
    let end = ((node_rank + 1) * cpus / ranks).clamp(start + 1, cpus);
    own[start..end].to_vec()
}

/// The CPUs of a dedicated communication thread: those of `share` past the
/// `workers` the workers took, or the whole share when they took all.
pub(crate) fn communication_cpus(share: &[usize], workers: usize) -> Vec<usize> {
    match share.get(workers..) {
        Some(rest) if !rest.is_empty() => rest.to_vec(),
        _ => share.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unbound_ranks_split_the_node_evenly() {
        let node: Vec<usize> = (0..8).collect();
        assert_eq!(share(&node, true, 0, 2), [0, 1, 2, 3]);
        assert_eq!(share(&node, true, 1, 2), [4, 5, 6, 7]);
        assert_eq!(share(&node, true, 2, 3), [5, 6, 7]);
        assert_eq!(share(&node, true, 0, 1), node);
        // More ranks than CPUs: each still gets one, some the same.
        let two = [4, 9];
        let shares: Vec<_> = (0..4).map(|k| share(&two, true, k, 4)).collect();
        assert_eq!(shares, [vec![4], vec![4], vec![9], vec![9]]);
    }

    #[test]
    fn ranks_the_launcher_bound_keep_their_own_cpus() {
        assert_eq!(share(&[3], false, 1, 2), [3]);
        assert_eq!(share(&[], true, 0, 2), [0usize; 0]);
    }

    #[test]
    fn the_communication_thread_takes_what_the_workers_left() {
        assert_eq!(communication_cpus(&[0, 1, 2], 2), [2]);
        assert_eq!(communication_cpus(&[0, 1], 2), [0, 1]);
        assert_eq!(communication_cpus(&[0, 1], 3), [0, 1]);
    }
}
