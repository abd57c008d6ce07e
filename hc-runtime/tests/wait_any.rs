//! `wait_any` outside the workers parks the caller and starts no runtime;
//! on a worker it runs other tasks of that worker's pool. A file of its
//! own: the check that no default runtime started needs a process in which
//! no other test started one.

use std::sync::atomic::{AtomicUsize, Ordering};

use hc_runtime::{wait_any, Ddf, Runtime};

/// Names of this process's threads (Linux). A thread that exits while the
/// list is read (another test's helper) is skipped.
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .expect("read /proc/self/task")
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|comm| comm.trim().to_owned())
        .collect()
}

#[test]
fn wait_any_waits_on_any_thread_and_starts_no_runtime() {
    // Off the workers: one of three DDFs is put by a plain thread.
    let ddfs: Vec<Ddf<u32>> = (0..3).map(|_| Ddf::new()).collect();
    let producer = ddfs[2].clone();
    let putter = std::thread::spawn(move || producer.put(7).unwrap());
    assert_eq!(wait_any(&[&ddfs[0], &ddfs[1], &ddfs[2]]), 2);
    putter.join().unwrap();
    // Already ready: the lowest ready index, without waiting.
    ddfs[1].put(1).unwrap();
    assert_eq!(wait_any(&[&ddfs[0], &ddfs[1], &ddfs[2]]), 1);
    // (Miri cannot list the threads in /proc.)
    if !cfg!(miri) {
        assert!(
            !thread_names()
                .iter()
                .any(|name| name.starts_with("hc-worker")),
            "wait_any started a runtime: {:?}",
            thread_names()
        );
    }

    // On a worker of a one-worker pool: the put is a task of the same pool,
    // which the waiting worker must run itself.
    let rt = Runtime::builder().num_workers(1).build().unwrap();
    let (never, later) = (Ddf::<u8>::new(), Ddf::<u8>::new());
    let waited = AtomicUsize::new(usize::MAX);
    rt.finish(|s| {
        s.spawn(|_| waited.store(wait_any(&[&never, &later]), Ordering::SeqCst));
        s.spawn(|_| later.put(3).unwrap());
    });
    assert_eq!(waited.load(Ordering::SeqCst), 1);
}

/// An abandoned promise is ready (its `get` says why), so `wait_any`
/// returns rather than wait for a value that cannot come.
#[test]
fn wait_any_off_the_workers_returns_for_an_abandoned_promise() {
    let (first, first_done) = hc_runtime::promise::<u8>();
    let (_second, second_done) = hc_runtime::promise::<u8>();
    let dropper = std::thread::spawn(move || drop(first));
    assert_eq!(wait_any(&[&first_done, &second_done]), 0);
    dropper.join().unwrap();
    assert!(first_done.get().is_err());
}
