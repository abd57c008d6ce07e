//! Asymmetric memory barriers for the sleep protocol's store-buffering pair.
//!
//! Waking idle workers is a Dekker pattern (see `sleep`): a publisher stores
//! work, then loads the idle count; a sleeper stores itself idle, then loads
//! the deques. Each side needs a full barrier between its store and its
//! load, or both loads may read stale values and the work sits in a deque
//! while the worker that could run it parks.
//!
//! The two sides are not equally frequent. Every spawn is a publication; a
//! park happens only after a worker has found nothing to do for tens of
//! microseconds and is about to make a system call anyway. So the barrier is
//! split unevenly, as `membarrier(2)` allows (the scheme of liburcu and
//! folly's asymmetric fences):
//!
//! - [`light`], on the publisher's path, is a compiler barrier only;
//! - [`heavy`], on the sleeper's path, is
//!   `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`: the kernel makes every
//!   thread of the process that is running execute a full barrier (and a
//!   thread that is not running passes through one when it is scheduled)
//!   before the call returns.
//!
//! Paired this way, each compiler barrier on the light side acts as a full
//! barrier with respect to the heavy side, which is all the store-buffering
//! argument needs.
//!
//! # When membarrier is not there
//!
//! The expedited command needs a registration per process, made once by
//! [`init`] before the first worker starts. Where it is unavailable (not
//! Linux, a kernel before 4.14, a seccomp filter, Miri, loom), both sides
//! take a `SeqCst` fence. The mode is fixed before any worker exists and
//! never changes afterwards, and a publisher that reads "not yet decided"
//! takes the full fence, so the pairing is sound in every mode.

use std::sync::atomic::{compiler_fence, fence, AtomicU8, Ordering};
use std::sync::Once;

const UNDECIDED: u8 = 0;
const SYMMETRIC: u8 = 1;
const ASYMMETRIC: u8 = 2;

static MODE: AtomicU8 = AtomicU8::new(UNDECIDED);
static INIT: Once = Once::new();

/// Decides the mode, registering for expedited membarriers where possible.
/// Called before any worker thread of any pool starts, so every sleeper
/// (a worker) sees the final mode.
pub(crate) fn init() {
    INIT.call_once(|| {
        let mode = if membarrier::register() {
            ASYMMETRIC
        } else {
            SYMMETRIC
        };
        MODE.store(mode, Ordering::Release);
    });
}

/// The publisher's barrier: between storing work and loading the idle
/// count.
#[inline]
pub(crate) fn light() {
    if MODE.load(Ordering::Relaxed) == ASYMMETRIC {
        compiler_fence(Ordering::SeqCst);
    } else {
        fence(Ordering::SeqCst);
    }
}

/// The sleeper's barrier: between announcing itself idle and its last look
/// for work.
pub(crate) fn heavy() {
    if MODE.load(Ordering::Acquire) == ASYMMETRIC {
        membarrier::expedited();
    } else {
        fence(Ordering::SeqCst);
    }
}

/// Whether publishers get away with a compiler barrier in this process.
#[cfg(all(test, target_os = "linux", not(miri), not(loom)))]
pub(crate) fn is_asymmetric() -> bool {
    MODE.load(Ordering::Acquire) == ASYMMETRIC
}

#[cfg(all(target_os = "linux", not(miri), not(loom)))]
mod membarrier {
    // From <linux/membarrier.h>.
    const CMD_QUERY: libc::c_int = 0;
    const CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
    const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

    fn call(command: libc::c_int) -> libc::c_long {
        // SAFETY: membarrier takes three integer arguments and touches no
        // user memory.
        unsafe { libc::syscall(libc::SYS_membarrier, command, 0, 0) }
    }

    pub(super) fn register() -> bool {
        let supported = call(CMD_QUERY);
        supported >= 0
            && supported & libc::c_long::from(CMD_PRIVATE_EXPEDITED) != 0
            && call(CMD_REGISTER_PRIVATE_EXPEDITED) == 0
    }

    pub(super) fn expedited() {
        if call(CMD_PRIVATE_EXPEDITED) != 0 {
            // Registered at start-up and documented not to fail afterwards;
            // publishers rely on it, so there is no safe way on.
            crate::unwind::abort_on_runtime_bug("membarrier failed after registration");
        }
    }
}

#[cfg(not(all(target_os = "linux", not(miri), not(loom))))]
mod membarrier {
    pub(super) fn register() -> bool {
        false
    }

    pub(super) fn expedited() {
        unreachable!("membarrier is never registered on this platform")
    }
}

#[cfg(all(test, target_os = "linux", not(miri), not(loom)))]
mod tests {
    #[test]
    fn the_mode_is_decided_once_and_heavy_works() {
        super::init();
        let first = super::is_asymmetric();
        super::init();
        assert_eq!(super::is_asymmetric(), first);
        super::heavy();
        super::light();
    }
}
