//! The task model of hc-runtime, one section per chapter heading: a runtime,
//! `finish` and `spawn`, tasks spawning tasks, nested finish, `join`,
//! data-driven futures with AND and OR lists, detached data-driven tasks,
//! and the two failures a finish reports (a panicking task, a DDF that can
//! never be put).
//!
//! Needs no MPI launcher: `target/release/examples/tasks`
//! (`HC_WORKERS` sets the number of workers).

// sample-run: ranks=0
// sample-run: ranks=0 HC_WORKERS=1

// ANCHOR: runtime
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use hc_runtime::{Awaitable, Ddf, Runtime, Scope};

fn main() -> Result<(), hc_runtime::BuildError> {
    // Workers: num_workers(n) if called, else $HC_WORKERS, else every core.
    let rt = Runtime::builder().build()?;
    println!("{} computation workers", rt.num_workers());

    finish_and_spawn(&rt);
    tasks_spawn_tasks(&rt);
    nested_finish_and_join(&rt);
    ddf_basics();
    and_list(&rt);
    or_list(&rt);
    detached(&rt);
    failures(&rt);
    println!("tasks: all checks passed");
    Ok(())
}
// ANCHOR_END: runtime

fn finish_and_spawn(rt: &Runtime) {
    // ANCHOR: finish
    let input: Vec<u64> = (0..1_000_000).collect();
    let mut squares = vec![0u64; input.len()];
    let total = AtomicUsize::new(0);
    let chunks = rt.finish(|s| {
        let mut chunks = 0;
        for (inp, out) in input.chunks(10_000).zip(squares.chunks_mut(10_000)) {
            let total = &total; // tasks borrow from the enclosing frame
            s.spawn(move |_| {
                for (x, y) in inp.iter().zip(out.iter_mut()) {
                    *y = x * x;
                }
                total.fetch_add(inp.len(), Relaxed);
            });
            chunks += 1;
        }
        chunks // the body's result is finish's result
    }); // every task has run here: `squares` is complete
    assert_eq!(chunks, 100);
    assert_eq!(total.into_inner(), input.len());
    assert!(squares
        .iter()
        .enumerate()
        .all(|(i, &y)| y == (i * i) as u64));
    // ANCHOR_END: finish
    println!("finish: {chunks} tasks squared {} numbers", input.len());
}

// ANCHOR: quicksort
/// Sorts `v` with one task per half, all in the caller's finish scope.
fn quicksort<'scope>(s: &'scope Scope<'scope, '_>, v: &'scope mut [u64]) {
    if v.len() <= 4096 {
        v.sort_unstable();
        return;
    }
    let mid = v.len() / 2;
    v.select_nth_unstable(mid); // v[..mid] <= v[mid] <= v[mid + 1..]
    let (low, rest) = v.split_at_mut(mid);
    s.spawn(move |s| quicksort(s, low)); // a task of the same finish
    quicksort(s, &mut rest[1..]);
}
// ANCHOR_END: quicksort

fn tasks_spawn_tasks(rt: &Runtime) {
    // ANCHOR: quicksort_call
    let mut v: Vec<u64> = (0..1_000_000u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20)
        .collect();
    let mut expected = v.clone();
    expected.sort_unstable();
    rt.finish(|s| quicksort(s, &mut v)); // waits for the whole tree of tasks
    assert_eq!(v, expected);
    // ANCHOR_END: quicksort_call
    println!("quicksort: {} numbers sorted by a tree of tasks", v.len());
}

// ANCHOR: fib
/// Each call opens its own finish: a finish nested in a task of another.
fn fib_finish(n: u64) -> u64 {
    if n < 20 {
        return fib_seq(n);
    }
    let (mut a, mut b) = (0, 0);
    hc_runtime::finish(|s| {
        s.spawn(|_| a = fib_finish(n - 1)); // may be stolen
        b = fib_finish(n - 2); // the owner works meanwhile
    });
    a + b
}

/// The same recursion with join: `rayon::join`'s contract.
fn fib_join(n: u64) -> u64 {
    if n < 20 {
        return fib_seq(n);
    }
    let (a, b) = hc_runtime::join(|| fib_join(n - 1), || fib_join(n - 2));
    a + b
}
// ANCHOR_END: fib

fn fib_seq(n: u64) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

fn nested_finish_and_join(rt: &Runtime) {
    // ANCHOR: fib_call
    // On a worker of `rt`, hc_runtime::finish and hc_runtime::join use `rt`.
    let by_finish = rt.finish(|_| fib_finish(32));
    let by_join = rt.finish(|_| fib_join(32));
    assert_eq!(by_finish, fib_seq(32));
    assert_eq!(by_join, fib_seq(32));
    // ANCHOR_END: fib_call
    println!("fib(32) = {by_join} by nested finish and by join");
}

fn ddf_basics() {
    // ANCHOR: ddf
    let d: Ddf<String> = Ddf::new();
    let reader = d.clone(); // a second handle on the same container
    assert_eq!(reader.get(), Err(hc_runtime::NotPut));
    d.put("first".to_owned()).unwrap();
    let again = d.put("second".to_owned()).unwrap_err(); // single assignment
    assert_eq!(again.0, "second"); // AlreadyPut hands the value back
    assert_eq!(reader.get().map(String::as_str), Ok("first"));
    assert!(reader.is_put());
    // ANCHOR_END: ddf
}

fn and_list(rt: &Runtime) {
    // ANCHOR: wavefront
    // paths[i][j] = paths[i-1][j] + paths[i][j-1]: the number of monotone
    // lattice paths to (i, j). One data-driven task per cell.
    const N: usize = 30;
    let paths: Vec<Vec<Ddf<u64>>> = (0..N)
        .map(|_| (0..N).map(|_| Ddf::new()).collect())
        .collect();
    let paths = &paths;
    rt.finish(|s| {
        // Last cell first, so that most tasks really wait.
        for i in (0..N).rev() {
            for j in (0..N).rev() {
                let up = (i > 0).then(|| &paths[i - 1][j]);
                let left = (j > 0).then(|| &paths[i][j - 1]);
                let deps: Vec<&dyn Awaitable> =
                    [up, left].into_iter().flatten().map(|d| d as _).collect();
                // Runs once every DDF in `deps` is put; (0, 0) has none and runs at once.
                s.spawn_await(&deps, move |_| {
                    let value = if i == 0 && j == 0 {
                        1
                    } else {
                        [up, left]
                            .into_iter()
                            .flatten()
                            .map(|d| *d.get().unwrap())
                            .sum()
                    };
                    paths[i][j].put(value).unwrap();
                });
            }
        }
    });
    // C(2(N-1), N-1), computed exactly.
    let binomial = (1..N as u128).fold(1u128, |c, k| c * (N as u128 - 1 + k) / k);
    assert_eq!(*paths[N - 1][N - 1].get().unwrap() as u128, binomial);
    // ANCHOR_END: wavefront
    println!("wavefront: {} paths across a {N}x{N} grid", binomial);
}

fn or_list(rt: &Runtime) {
    // ANCHOR: or_list
    // Two ways to the same answer; use whichever arrives first.
    let n = 1_000_000u64;
    let answers: [Ddf<u64>; 2] = [Ddf::new(), Ddf::new()];
    let fired = AtomicUsize::new(0);
    let mut first = None;
    rt.finish(|s| {
        let [closed_form, summed] = &answers;
        s.spawn_await_any(&[closed_form, summed], |_, index| {
            fired.fetch_add(1, Relaxed);
            first = Some((index, *answers[index].get().unwrap()));
        });
        s.spawn(move |_| closed_form.put(n * (n - 1) / 2).unwrap());
        s.spawn(move |_| summed.put((0..n).sum()).unwrap());
    });
    let (index, value) = first.unwrap();
    assert_eq!(value, (0..n).sum::<u64>());
    assert_eq!(fired.into_inner(), 1); // once, even when both are put
                                       // ANCHOR_END: or_list
    println!("or-list: answer {value} from source {index}");
}

fn detached(rt: &Runtime) {
    // ANCHOR: detached
    let input: Ddf<Vec<u64>> = Ddf::new();
    let output: Ddf<u64> = Ddf::new();
    let (from, to) = (input.clone(), output.clone()); // owned by the task
    rt.spawn_await_detached(&[&input], move |_handle| {
        to.put(from.get().unwrap().iter().sum()).unwrap();
    });
    input.put((1..=100).collect()).unwrap(); // from any thread

    // No finish waits for a detached task: this thread waits for its result.
    // Off the workers, a blocking wait parks the thread.
    assert_eq!(*output.wait(), 5050);
    // ANCHOR_END: detached
    println!("detached: sum 1..=100 = {}", output.get().unwrap());
}

/// Runs `f`, which must panic, and returns the panic's message. The panic
/// hook is silenced meanwhile: the expected panics would print a report
/// from the worker thread that ran the failing task.
fn panic_of(f: impl FnOnce()) -> String {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(hook);
    hc_runtime::panic_message(&*caught.expect_err("expected a panic")).to_owned()
}

fn failures(rt: &Runtime) {
    // ANCHOR: panic
    let finished = AtomicUsize::new(0);
    let message = panic_of(|| {
        rt.finish(|s| {
            for i in 0..100 {
                let finished = &finished;
                s.spawn(move |_| {
                    if i == 42 {
                        panic!("task {i} failed");
                    }
                    finished.fetch_add(1, Relaxed);
                });
            }
        })
    });
    assert_eq!(message, "task 42 failed"); // re-raised by finish...
    assert_eq!(finished.load(Relaxed), 99); // ...after the other 99 ran
    assert_eq!(rt.finish(|_| 1 + 1), 2); // and the workers are fine
                                         // ANCHOR_END: panic
    println!("panic: finish re-raised {message:?} after the other tasks");

    // ANCHOR: abandoned
    let message = panic_of(|| {
        rt.finish(|s| {
            let never: Ddf<u32> = Ddf::new();
            s.spawn_await(&[&never], |_| unreachable!("never runs"));
            // `never` is dropped here, unput: nobody can put it any more.
        })
    });
    assert!(
        message.contains("dropped without ever being put"),
        "{message}"
    );
    // ANCHOR_END: abandoned
    println!("abandoned: finish failed instead of hanging");
}
