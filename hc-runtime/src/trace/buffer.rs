//! Per-thread event buffers and the trace clock.
//!
//! Each thread that records gets a buffer on first use, registered in a
//! global list so that the collector finds the buffers of threads that are
//! still running (the workers, when hc-mpi writes its trace before
//! stopping them). The owner locks its buffer for each push; the lock is
//! contended only while [`collect`] takes the events.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::Event;

/// The most events one thread keeps (at most about 150 MiB); later ones
/// are counted as dropped.
pub const EVENTS_PER_THREAD: usize = 1 << 20;

/// When the trace clock started: a monotonic instant and the wall-clock
/// time (ns since the Unix epoch) at that instant.
struct Clock {
    start: Instant,
    unix_ns: u64,
}

static CLOCK: OnceLock<Clock> = OnceLock::new();

fn clock() -> &'static Clock {
    CLOCK.get_or_init(|| Clock {
        start: Instant::now(),
        unix_ns: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    })
}

pub(super) fn start_clock() {
    clock();
}

/// Nanoseconds since the trace clock started.
#[inline]
pub(crate) fn now() -> u64 {
    clock().start.elapsed().as_nanos() as u64
}

/// One thread's buffer.
pub(super) struct ThreadBuffer {
    pub(super) tid: u64,
    pub(super) name: String,
    pub(super) events: Mutex<Vec<Event>>,
    pub(super) dropped: AtomicU64,
}

static THREADS: Mutex<Vec<Arc<ThreadBuffer>>> = Mutex::new(Vec::new());

thread_local! {
    static LOCAL: Arc<ThreadBuffer> = register();
}

fn register() -> Arc<ThreadBuffer> {
    static NEXT_TID: AtomicU64 = AtomicU64::new(1);
    let tid = NEXT_TID.fetch_add(1, Ordering::Relaxed);
    let current = std::thread::current();
    let name = match current.name() {
        Some(name) => name.to_owned(),
        None => format!("thread {tid}"),
    };
    let buffer = Arc::new(ThreadBuffer {
        tid,
        name,
        events: Mutex::new(Vec::new()),
        dropped: AtomicU64::new(0),
    });
    THREADS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Arc::clone(&buffer));
    buffer
}

/// Appends `event` to the calling thread's buffer. Events recorded while
/// the thread is being torn down (its buffer already gone) are lost.
#[inline]
pub(crate) fn record(event: Event) {
    let _ = LOCAL.try_with(|buffer| {
        let mut events = buffer.events.lock().unwrap_or_else(|e| e.into_inner());
        if events.len() < EVENTS_PER_THREAD {
            events.push(event);
        } else {
            buffer.dropped.fetch_add(1, Ordering::Relaxed);
        }
    });
}

/// What one thread recorded.
pub(crate) struct ThreadEvents {
    pub(crate) tid: u64,
    pub(crate) name: String,
    pub(crate) events: Vec<Event>,
    pub(crate) dropped: u64,
}

/// What the process recorded: every thread's events (taken out of the
/// buffers) and the clock's wall-clock start.
pub(crate) struct Collected {
    pub(crate) unix_ns: u64,
    pub(crate) threads: Vec<ThreadEvents>,
}

/// Takes every thread's events so far, and forgets the buffers of threads
/// that have exited (only the list still holds them).
pub(crate) fn collect() -> Collected {
    let buffers = {
        let mut list = THREADS.lock().unwrap_or_else(|e| e.into_inner());
        let buffers = list.clone();
        list.retain(|buffer| Arc::strong_count(buffer) > 2);
        buffers
    };
    let threads = buffers
        .iter()
        .map(|buffer| ThreadEvents {
            tid: buffer.tid,
            name: buffer.name.clone(),
            events: std::mem::take(&mut *buffer.events.lock().unwrap_or_else(|e| e.into_inner())),
            dropped: buffer.dropped.swap(0, Ordering::Relaxed),
        })
        .filter(|thread| !thread.events.is_empty() || thread.dropped > 0)
        .collect();
    Collected {
        unix_ns: clock().unix_ns,
        threads,
    }
}
