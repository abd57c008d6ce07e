//! Process CPU time (`getrusage(RUSAGE_SELF)`, user + system, all threads).

use std::time::{Duration, Instant};

/// User plus system CPU time consumed so far by every thread of this process.
///
/// # Panics
/// If `getrusage` fails (it cannot for `RUSAGE_SELF` and a valid pointer).
pub fn process_cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: `usage` is a valid, writable `rusage`; RUSAGE_SELF is a valid
    // `who`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    assert_eq!(
        rc,
        0,
        "getrusage(RUSAGE_SELF) failed: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: getrusage returned 0, so it filled the whole struct.
    let usage = unsafe { usage.assume_init() };
    timeval(usage.ru_utime) + timeval(usage.ru_stime)
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(tv.tv_sec.max(0) as u64) + Duration::from_micros(tv.tv_usec.max(0) as u64)
}

/// CPU used by the whole process while the calling thread sleeps for
/// `window`, as a percentage of one core (100.0 = one core busy throughout).
///
/// The calling thread itself only sleeps, so on an otherwise idle process
/// this measures what background threads (idle workers) burn.
pub fn cpu_percent_while_sleeping(window: Duration) -> f64 {
    let cpu_before = process_cpu_time();
    let wall_before = Instant::now();
    std::thread::sleep(window);
    let cpu = process_cpu_time().saturating_sub(cpu_before);
    let wall = wall_before.elapsed();
    100.0 * cpu.as_secs_f64() / wall.as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        let before = process_cpu_time();
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(process_cpu_time() > before);
    }

    #[test]
    fn sleeping_is_a_finite_fraction() {
        let pct = cpu_percent_while_sleeping(Duration::from_millis(5));
        assert!(pct.is_finite() && pct >= 0.0);
    }
}
