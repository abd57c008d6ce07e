//! Small helpers for tests of tasks and threads: the process's threads
//! (to check that a runtime starts no thread of its own) and a future that
//! gives its worker away once (to perturb task interleavings).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The names of this process's threads, sorted (Linux:
/// `/proc/self/task/*/comm`; names are cut at 15 bytes by the kernel).
///
/// # Errors
/// If `/proc/self/task` cannot be read (not Linux).
pub fn thread_names() -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for task in std::fs::read_dir("/proc/self/task")? {
        let comm = std::fs::read_to_string(task?.path().join("comm"))?;
        names.push(comm.trim().to_owned());
    }
    names.sort();
    Ok(names)
}

/// The number of this process's threads.
///
/// # Panics
/// If `/proc/self/task` cannot be read (not Linux).
pub fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("read /proc/self/task")
        .count()
}

/// A future that returns `Pending` once after waking itself, so that the
/// task awaiting it goes to the back of its worker's queue.
#[derive(Debug, Default)]
pub struct YieldNow {
    yielded: bool,
}

/// Gives the worker to the other tasks once.
pub fn yield_now() -> YieldNow {
    YieldNow::default()
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
