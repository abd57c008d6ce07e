//! Binding threads to CPUs.
//!
//! A thread left to the operating system may be woken onto a CPU that is
//! busy while another is idle, and wait there for the next load-balancing
//! pass (milliseconds, a scheduler tick). On a node whose workers fill its
//! cores, that is a worker standing still while the work it would take
//! waits. Bound one to a CPU each, workers never share a CPU by accident.
//! [`Builder::bind_workers`](crate::Builder::bind_workers) binds the
//! computation workers; hc-mpi binds them by rank (its `Binding`).
//!
//! Linux only (`sched_setaffinity(2)`); elsewhere the calls return
//! [`AffinityError::Unsupported`] (after the checks of their arguments).

use std::sync::Arc;

/// Why a thread could not be bound, or its CPUs read.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AffinityError {
    /// This operating system has no thread affinity that hc-runtime uses.
    #[error("binding threads to CPUs is not supported on this operating system")]
    Unsupported,
    /// No CPU was named.
    #[error("binding a thread to no CPU at all")]
    NoCpu,
    /// A CPU number past what a CPU set holds.
    #[error("CPU {cpu} is past the {limit} CPUs a CPU set holds")]
    CpuOutOfRange {
        /// The CPU named.
        cpu: usize,
        /// The size of a CPU set.
        limit: usize,
    },
    /// The system call failed (for example, every CPU named is offline or
    /// outside the cgroup's cpuset).
    #[error("binding a thread to CPUs {cpus:?} failed")]
    Bind {
        /// The CPUs asked for.
        cpus: Vec<usize>,
        /// The operating system's error.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// Reading the calling thread's CPUs failed.
    #[error("reading the CPUs of the calling thread failed")]
    Read(#[source] Arc<std::io::Error>),
}

/// Restricts the calling thread to `cpus` (numbered as the operating system
/// numbers them).
///
/// ```
/// # #[cfg(target_os = "linux")] {
/// let cpus = hc_runtime::affinity::current_cpus().unwrap();
/// // Bound to the first CPU it may run on, then to all of them again.
/// hc_runtime::affinity::bind_current_thread(&cpus[..1]).unwrap();
/// assert_eq!(hc_runtime::affinity::current_cpus().unwrap(), &cpus[..1]);
/// hc_runtime::affinity::bind_current_thread(&cpus).unwrap();
/// # }
/// ```
///
/// # Errors
/// See [`AffinityError`].
pub fn bind_current_thread(cpus: &[usize]) -> Result<(), AffinityError> {
    if cpus.is_empty() {
        return Err(AffinityError::NoCpu);
    }
    imp::bind(cpus)
}

/// The CPUs the calling thread may run on, in increasing order.
///
/// ```
/// # #[cfg(target_os = "linux")]
/// assert!(!hc_runtime::affinity::current_cpus().unwrap().is_empty());
/// ```
///
/// # Errors
/// See [`AffinityError`].
pub fn current_cpus() -> Result<Vec<usize>, AffinityError> {
    imp::current()
}

#[cfg(target_os = "linux")]
mod imp {
    use super::AffinityError;
    use std::sync::Arc;

    const LIMIT: usize = libc::CPU_SETSIZE as usize;

    pub(super) fn bind(cpus: &[usize]) -> Result<(), AffinityError> {
        // SAFETY: an all-zero `cpu_set_t` is a valid empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &cpu in cpus {
            if cpu >= LIMIT {
                return Err(AffinityError::CpuOutOfRange { cpu, limit: LIMIT });
            }
            // SAFETY: `cpu` is below the set's capacity, checked above.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: `set` is a valid set of `size` bytes; pid 0 is the
        // calling thread.
        if unsafe { libc::sched_setaffinity(0, size, &set) } == 0 {
            Ok(())
        } else {
            Err(AffinityError::Bind {
                cpus: cpus.to_vec(),
                source: Arc::new(std::io::Error::last_os_error()),
            })
        }
    }

    pub(super) fn current() -> Result<Vec<usize>, AffinityError> {
        // SAFETY: an all-zero `cpu_set_t` is a valid empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: `set` is valid for writes of `size` bytes, all the call
        // writes; pid 0 is the calling thread.
        if unsafe { libc::sched_getaffinity(0, size, &mut set) } != 0 {
            return Err(AffinityError::Read(Arc::new(
                std::io::Error::last_os_error(),
            )));
        }
        // SAFETY: every `cpu` is below the set's capacity.
        Ok((0..LIMIT)
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect())
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::AffinityError;

    pub(super) fn bind(_cpus: &[usize]) -> Result<(), AffinityError> {
        Err(AffinityError::Unsupported)
    }

    pub(super) fn current() -> Result<Vec<usize>, AffinityError> {
        Err(AffinityError::Unsupported)
    }
}

#[cfg(all(test, target_os = "linux", not(miri)))]
mod tests {
    use super::*;

    #[test]
    fn a_thread_bound_to_one_cpu_runs_on_it_alone() {
        let all = current_cpus().unwrap();
        let last = *all.last().unwrap();
        std::thread::spawn(move || {
            bind_current_thread(&[last]).unwrap();
            assert_eq!(current_cpus().unwrap(), [last]);
        })
        .join()
        .unwrap();
        // Another thread's binding leaves this one as it was.
        assert_eq!(current_cpus().unwrap(), all);
    }

    #[test]
    fn no_cpu_and_cpus_past_the_set_are_refused() {
        assert!(matches!(
            bind_current_thread(&[]),
            Err(AffinityError::NoCpu)
        ));
        assert!(matches!(
            bind_current_thread(&[1 << 20]),
            Err(AffinityError::CpuOutOfRange { cpu, .. }) if cpu == 1 << 20
        ));
    }
}
