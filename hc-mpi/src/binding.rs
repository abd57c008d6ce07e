//! Which CPUs a rank's threads run on.
//!
//! * [`Binding::Cores`]: each computation worker is bound to one CPU of the
//!   rank's share of the node's CPUs (below), a CPU of its own while the
//!   share has one for each (round-robin beyond); a dedicated
//!   communication thread gets the share's CPUs the workers left, or the
//!   whole share; the thread that starts hc-mpi is restricted to the share,
//!   as a launcher's `--bind-to` would restrict the whole process.
//! * [`Binding::None`]: every thread is left to the operating system.
//! * [`Binding::Auto`] (the default): `Cores` where the node is not
//!   oversubscribed (see [`Placement`](crate::Placement)) and the rank's
//!   threads (its workers, plus a dedicated communication thread) fill its
//!   share, one thread a CPU; `None` otherwise. Threads that must share
//!   CPUs are best balanced by the operating system, and so are fewer
//!   threads than CPUs, which it can move away from other load.
//!
//! The rank's **share**: the ranks on a node whose CPU sets are equal
//! split that set into runs of equal size to within one CPU (at least one
//! CPU each, shared when there are more ranks than CPUs), the `k`-th of
//! them taking the `k`-th run. Unbound by the launcher, every rank of the
//! node has the same set; bound to a core each, every rank keeps its own;
//! bound to a socket, the ranks of a socket split it. The CPUs of a set
//! are ordered by socket, then core (Linux's
//! `/sys/devices/system/cpu/cpuN/topology`), so a run spans as few sockets
//! as it can and keeps a core's hardware threads together. A rank whose
//! set is unknown, or overlaps another rank's without being equal to it,
//! has no share: `Auto` binds nothing there, and `Cores` is an error
//! ([`InitError::CpuShareUnknown`](crate::InitError::CpuShareUnknown)).
//! The starting thread's CPUs are restored when [`Hcmpi`](crate::Hcmpi)
//! drops.
//!
//! Why bind: Linux places a thread it wakes on a CPU of its choosing, often
//! the waker's, and a thread placed on a busy CPU while another is idle
//! waits for the next load-balancing pass. On a 2-core node running 2
//! ranks of 1 worker, unbound, 7 of 14 traced Smith-Waterman runs (a
//! wavefront of about 28 ms) started one rank's first tile 3.4–7.7 ms in
//! instead of about 1 ms; a scheduler trace of one showed both workers
//! queued on one CPU while the other sat idle. Bound, none of 14 did.
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
    /// Each computation worker on one CPU of the rank's share, a CPU of
    /// its own while the share has one for each.
    Cores,
    /// Threads left to the operating system.
    None,
    /// `Cores` where the node is not oversubscribed and the rank's threads
    /// fill its share, one thread a CPU; `None` otherwise.
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
    /// `cpus` CPUs: `Cores` only when the threads fill the share, one
    /// thread a CPU. Fewer threads are left to the operating system, which
    /// can move them away from other load; more must share CPUs, which it
    /// balances best. (A node whose ranks' threads outnumber its CPUs is
    /// not bound either: see the module docs.)
    ///
    /// ```
    /// use hc_mpi::Binding;
    ///
    /// assert_eq!(Binding::Auto.resolve(2, 2), Binding::Cores);
    /// assert_eq!(Binding::Auto.resolve(1, 2), Binding::None);
    /// assert_eq!(Binding::Auto.resolve(3, 2), Binding::None);
    /// assert_eq!(Binding::Cores.resolve(3, 2), Binding::Cores);
    /// assert_eq!(Binding::Cores.resolve(1, 0), Binding::None);
    /// ```
    pub fn resolve(self, threads: usize, cpus: usize) -> Binding {
        match self {
            _ if cpus == 0 => Binding::None,
            Binding::Auto if threads == cpus => Binding::Cores,
            Binding::Auto => Binding::None,
            chosen => chosen,
        }
    }

    /// The CPUs a rank binds its threads to under this binding (`None`:
    /// none), from its `share` of the node ([`cpu_share`](crate::cpu_share);
    /// `None` if it has none), for `threads` threads of its own (computation
    /// workers, and a dedicated communication thread), on a node that is
    /// `oversubscribed` or not (its ranks' threads outnumber its CPUs).
    /// This is hc-mpi's rule; a program that starts threads of its own (an
    /// MPI + threads baseline) can follow it too.
    ///
    /// ```
    /// use hc_mpi::Binding;
    ///
    /// let share = Some(vec![2, 3]);
    /// assert_eq!(Binding::Auto.cpus_to_bind(share.clone(), 2, false).unwrap(), share);
    /// assert_eq!(Binding::Auto.cpus_to_bind(share.clone(), 2, true).unwrap(), None);
    /// assert_eq!(Binding::None.cpus_to_bind(share, 2, false).unwrap(), None);
    /// assert!(Binding::Cores.cpus_to_bind(None, 2, false).is_err());
    /// ```
    ///
    /// # Errors
    /// [`InitError::CpuShareUnknown`] for `Cores` without a share.
    pub fn cpus_to_bind(
        self,
        share: Option<Vec<usize>>,
        threads: usize,
        oversubscribed: bool,
    ) -> Result<Option<Vec<usize>>, InitError> {
        // An oversubscribed node is left to the operating system, which
        // balances threads that must share CPUs better than a fixed split.
        match (self, share) {
            (Binding::Cores, None) => Err(InitError::CpuShareUnknown),
            (Binding::Auto, _) if oversubscribed => Ok(None),
            (binding, Some(share)) if binding.resolve(threads, share.len()) == Binding::Cores => {
                Ok(Some(share))
            }
            _ => Ok(None),
        }
    }

    /// The binding asked for by `HCMPI_BIND`, if set.
    ///
    /// ```
    /// std::env::remove_var(hc_mpi::BINDING_ENV);
    /// assert_eq!(hc_mpi::Binding::from_env(), Ok(None));
    /// ```
    ///
    /// # Errors
    /// [`InitError::InvalidEnv`] for a value that names no binding.
    pub fn from_env() -> Result<Option<Binding>, InitError> {
        crate::context::choice_from_env(BINDING_ENV, "cores, none or auto")
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

/// Words of a CPU mask ([`cpu_mask`]): 1024 CPUs.
pub const CPU_MASK_WORDS: usize = 16;

/// `cpus` as a mask: CPU `c` in bit `c % 64` of word `c / 64`, the form in
/// which the ranks of a node exchange their CPU sets for [`share`]. CPUs
/// from 1024 on are left out.
///
/// ```
/// assert_eq!(hc_mpi::cpu_mask(&[0, 65])[..2], [1, 2]);
/// ```
pub fn cpu_mask(cpus: &[usize]) -> Vec<u64> {
    let mut words = vec![0u64; CPU_MASK_WORDS];
    for &cpu in cpus.iter().filter(|&&cpu| cpu < CPU_MASK_WORDS * 64) {
        words[cpu / 64] |= 1 << (cpu % 64);
    }
    words
}

/// The share of the node's CPUs of the rank whose CPU set is `sets[me]`,
/// among the ranks of a node whose sets (bit masks, CPU `c` in bit `c %
/// 64` of word `c / 64`) are `sets` (see the module docs): the ranks with
/// the same set split it into runs of equal size to within one CPU, the
/// `k`-th of them taking the `k`-th run, in socket, then core order.
/// `None` when the set is unknown (empty), or overlaps another rank's set
/// without being equal to it: no split of it is fair. This is how hc-mpi
/// shares a node out; a program that starts threads of its own (an MPI +
/// threads baseline) can bind them the same way.
///
/// ```
/// // Two ranks on one node, both free to run on CPUs 0-3.
/// let node = [0b1111u64];
/// let sets = [&node[..], &node[..]];
/// let mut second = hc_mpi::cpu_share(&sets, 1).unwrap();
/// second.sort_unstable();
/// assert_eq!(second.len(), 2);
/// assert_eq!(hc_mpi::cpu_share(&[&[0u64][..]], 0), None);
/// ```
pub fn share(sets: &[&[u64]], me: usize) -> Option<Vec<usize>> {
    share_in(sets, me, topology_order)
}

/// The number of CPUs of a node whose ranks' CPU sets are `sets` (masks
/// as for [`share`]): the size of their union, as ranks bound to disjoint
/// CPUs each see only their own. Where a rank's set is unknown (all zero),
/// the CPUs this process may run on
/// ([`std::thread::available_parallelism`]), at least 1. hc-mpi sizes its
/// workers and judges oversubscription by it; a baseline that binds its
/// threads as hc-mpi does counts the node's CPUs the same way.
///
/// ```
/// // Two ranks bound to CPUs 0-1 and 2-3.
/// let (first, second) = ([0b0011u64], [0b1100u64]);
/// assert_eq!(hc_mpi::node_cpu_count(&[&first[..], &second[..]]), 4);
/// ```
pub fn node_cpu_count(sets: &[&[u64]]) -> usize {
    let known = sets.iter().all(|set| set.iter().any(|&word| word != 0));
    let words = sets.iter().map(|set| set.len()).max().unwrap_or(0);
    let union: u32 = (0..words)
        .map(|w| {
            sets.iter()
                .fold(0u64, |union, set| union | set.get(w).copied().unwrap_or(0))
                .count_ones()
        })
        .sum();
    if known && union > 0 {
        union as usize
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// [`share`] with the CPUs of a set in the order `order` gives them.
fn share_in(sets: &[&[u64]], me: usize, order: fn(Vec<usize>) -> Vec<usize>) -> Option<Vec<usize>> {
    let own = *sets.get(me)?;
    if own.iter().all(|&w| w == 0) {
        return None;
    }
    let overlaps = |set: &[u64]| set.iter().zip(own).any(|(a, b)| a & b != 0);
    if sets.iter().any(|set| *set != own && overlaps(set)) {
        return None;
    }
    let same: Vec<usize> = (0..sets.len()).filter(|&k| sets[k] == own).collect();
    let index = same.iter().position(|&k| k == me)?;
    let cpus = order(
        (0..own.len() * 64)
            .filter(|&cpu| own[cpu / 64] & (1 << (cpu % 64)) != 0)
            .collect(),
    );
    let (count, ranks) = (cpus.len(), same.len());
    let start = (index * count / ranks).min(count - 1);
    let end = ((index + 1) * count / ranks).clamp(start + 1, count);
    Some(cpus[start..end].to_vec())
}

/// `cpus` ordered by package (socket), then physical core, then number,
/// as Linux describes them in `/sys/devices/system/cpu/cpuN/topology`: a
/// run of them then spans as few sockets as it can, and a core's hardware
/// threads sit side by side (Intel numbers them N apart). Numeric order
/// where the topology cannot be read.
pub(crate) fn topology_order(mut cpus: Vec<usize>) -> Vec<usize> {
    let read = |cpu: usize, what: &str| -> Option<u64> {
        let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/{what}");
        std::fs::read_to_string(path).ok()?.trim().parse().ok()
    };
    let keys: Option<Vec<(u64, u64, usize)>> = cpus
        .iter()
        .map(|&cpu| {
            Some((
                read(cpu, "physical_package_id")?,
                read(cpu, "core_id")?,
                cpu,
            ))
        })
        .collect();
    match keys {
        Some(mut keys) => {
            keys.sort_unstable();
            keys.into_iter().map(|(_, _, cpu)| cpu).collect()
        }
        None => {
            cpus.sort_unstable();
            cpus
        }
    }
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

    /// Masks of one word for the CPUs in `cpus`.
    fn mask(cpus: impl IntoIterator<Item = usize>) -> Vec<u64> {
        vec![cpus.into_iter().fold(0, |m, cpu| m | 1 << cpu)]
    }

    /// The shares of every rank of a node whose ranks have `sets`, CPUs in
    /// numeric order (not the test machine's topology).
    fn shares(sets: &[Vec<u64>]) -> Vec<Option<Vec<usize>>> {
        let sets: Vec<&[u64]> = sets.iter().map(Vec::as_slice).collect();
        (0..sets.len())
            .map(|me| share_in(&sets, me, |cpus| cpus))
            .collect()
    }

    #[test]
    fn the_topology_order_is_a_permutation() {
        let cpus: Vec<usize> = (0..64).rev().collect();
        let mut ordered = topology_order(cpus);
        ordered.sort_unstable();
        assert_eq!(ordered, (0..64).collect::<Vec<_>>());
    }

    #[test]
    fn unbound_ranks_split_the_node_evenly() {
        let node = mask(0..8);
        assert_eq!(
            shares(&[node.clone(), node.clone()]),
            [Some(vec![0, 1, 2, 3]), Some(vec![4, 5, 6, 7])]
        );
        assert_eq!(
            shares(std::slice::from_ref(&node)),
            [Some((0..8).collect())]
        );
        assert_eq!(
            shares(&[node.clone(), node.clone(), node]),
            [Some(vec![0, 1]), Some(vec![2, 3, 4]), Some(vec![5, 6, 7])]
        );
        // More ranks than CPUs: each still gets one, some the same.
        let pair = mask([4, 9]);
        let four = shares(&[pair.clone(), pair.clone(), pair.clone(), pair]);
        assert_eq!(
            four,
            [Some(vec![4]), Some(vec![4]), Some(vec![9]), Some(vec![9])]
        );
    }

    #[test]
    fn ranks_sharing_a_launcher_set_split_it_among_themselves() {
        // Bound to sockets: ranks 0 and 2 on CPUs 0-3, ranks 1 and 3 on 4-7.
        let (low, high) = (mask(0..4), mask(4..8));
        assert_eq!(
            shares(&[low.clone(), high.clone(), low, high]),
            [
                Some(vec![0, 1]),
                Some(vec![4, 5]),
                Some(vec![2, 3]),
                Some(vec![6, 7])
            ]
        );
        // Bound to a core each: every rank keeps its own.
        assert_eq!(
            shares(&[mask([3]), mask([5])]),
            [Some(vec![3]), Some(vec![5])]
        );
    }

    #[test]
    fn the_node_has_the_union_of_known_sets() {
        let (low, high, all) = (mask([0, 1]), mask([2, 3]), mask(0..4));
        assert_eq!(node_cpu_count(&[&low, &high]), 4);
        assert_eq!(node_cpu_count(&[&all, &all, &all]), 4);
        // Masks of different lengths: the missing words are empty.
        let far = vec![0, 1u64 << 3];
        assert_eq!(node_cpu_count(&[&low, &far]), 3);
        // A set nobody could read: what this process may use.
        let fallback = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(node_cpu_count(&[&low, &[0u64][..]]), fallback);
        assert_eq!(node_cpu_count(&[]), fallback);
    }

    #[test]
    fn unknown_or_overlapping_sets_have_no_share() {
        assert_eq!(shares(&[vec![0], mask(0..2)]), [None, Some(vec![0, 1])]);
        assert_eq!(shares(&[mask(0..4), mask(2..6)]), [None, None]);
        assert_eq!(share_in(&[], 0, |cpus| cpus), None);
    }

    #[test]
    fn the_communication_thread_takes_what_the_workers_left() {
        assert_eq!(communication_cpus(&[0, 1, 2], 2), [2]);
        assert_eq!(communication_cpus(&[0, 1], 2), [0, 1]);
        assert_eq!(communication_cpus(&[0, 1], 3), [0, 1]);
    }
}
