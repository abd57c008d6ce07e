//! Rust `async`/`.await` on hc-runtime's workers: futures as tasks of a
//! finish, what `.await` gives for each handle, waiting for all or any of
//! many, `block_on`, detached futures and their join handles, and promises
//! (completed from outside the runtime, or tied to a finish).
//!
//! Needs no MPI launcher: `target/release/examples/futures`
//! (`HC_WORKERS` sets the number of workers of the main runtime).

// sample-run: ranks=0
// sample-run: ranks=0 HC_WORKERS=1

use hc_runtime::{Awaitable, Ddf, Handle, JoinError, JoinHandle, PromiseError, Runtime};

fn main() -> Result<(), hc_runtime::BuildError> {
    let rt = Runtime::builder().build()?;
    chain_on_one_worker()?;
    what_await_gives(&rt);
    many_at_once(&rt);
    block_on_and_detached(&rt);
    promises(&rt);
    println!("futures: all checks passed");
    Ok(())
}

fn chain_on_one_worker() -> Result<(), hc_runtime::BuildError> {
    // ANCHOR: chain
    let rt = Runtime::builder().num_workers(1).build()?;
    let stages: Vec<Ddf<u64>> = (0..1000).map(|_| Ddf::new()).collect();
    rt.finish(|s| {
        for i in 1..stages.len() {
            let stages = &stages; // futures borrow from the stack too
            s.spawn_future(async move {
                let previous = *(&stages[i - 1]).await; // pending: holds no worker
                stages[i].put(previous + 1).unwrap();
            });
        }
        stages[0].put(0).unwrap();
    }); // the finish waits for every future, as for any task
    assert_eq!(stages[999].get(), Ok(&999));
    // ANCHOR_END: chain
    println!("chain: 999 chained futures on one worker");
    Ok(())
}

fn what_await_gives(rt: &Runtime) {
    // ANCHOR: await_forms
    let (numbers, label) = (Ddf::<Vec<u64>>::new(), Ddf::<String>::new());
    let (n, l) = (numbers.clone(), label.clone());
    rt.spawn_detached(move |_| {
        n.put((1..=10).collect()).unwrap();
        l.put("squares".to_owned()).unwrap();
    });
    let (name, sum) = rt.block_on(async {
        let v: &Vec<u64> = (&numbers).await; // borrows the value
        let name: String = label.await; // an owned handle: a clone of the value
        hc_runtime::ready(&numbers).await; // anything Awaitable: readiness only
        (name, v.iter().map(|x| x * x).sum::<u64>())
    });
    assert_eq!((name.as_str(), sum), ("squares", 385));
    // ANCHOR_END: await_forms
    println!("await: {name} sum to {sum}");
}

fn many_at_once(rt: &Runtime) {
    // ANCHOR: many
    let parts: Vec<Ddf<u64>> = (0..100).map(|_| Ddf::new()).collect();
    let first: Ddf<usize> = Ddf::new();
    let mut total = 0;
    rt.finish(|s| {
        let (parts, first, total) = (&parts, &first, &mut total);
        s.spawn_future(async move {
            // Any of them: an OR-list task puts the index into a DDF,
            // and the future awaits that DDF.
            let any: Vec<&dyn Awaitable> = parts.iter().map(|p| p as _).collect();
            s.spawn_await_any(&any, move |_, index| first.put(index).unwrap());
            let index = *first.await;
            assert!(parts[index].is_put());
            // All of them: await each in turn; the wait ends with the last.
            for part in parts {
                *total += *part.await;
            }
        });
        for (k, part) in parts.iter().enumerate() {
            s.spawn(move |_| part.put(k as u64 * k as u64).unwrap());
        }
    });
    assert_eq!(total, (0..100u64).map(|k| k * k).sum::<u64>());
    // ANCHOR_END: many
    println!("many: first part {}, total {total}", first.get().unwrap());
}

fn block_on_and_detached(rt: &Runtime) {
    // ANCHOR: block_on
    // From main: run a future as a task and park until its output is in.
    let sum = rt.block_on(async {
        let handle = Handle::current(); // the future runs on a worker
        let squares: Vec<JoinHandle<u64>> = (1..=10u64)
            .map(|k| handle.spawn(async move { k * k }))
            .collect();
        let mut sum = 0;
        for square in squares {
            sum += square.await.unwrap(); // a JoinHandle is a future too
        }
        sum
    });
    assert_eq!(sum, 385);
    // ANCHOR_END: block_on
    println!("block_on: {sum}");

    // ANCHOR: detached
    let input: Ddf<u64> = Ddf::new();
    let doubled: JoinHandle<u64> = rt.spawn({
        let input = input.clone(); // 'static: the task owns what it uses
        async move { input.await * 2 }
    });
    assert!(!doubled.is_finished()); // pending, and holding no worker
    input.put(21).unwrap();
    assert_eq!(doubled.join().unwrap(), 42); // join: a blocking wait

    let failing = quietly(|| rt.spawn(async { panic!("detached failure") }).join());
    match failing {
        Err(JoinError::Panicked(payload)) => {
            assert_eq!(hc_runtime::panic_message(&*payload), "detached failure")
        }
        other => panic!("expected the task's panic, got {other:?}"),
    }
    // ANCHOR_END: detached
    println!("detached: 21 doubled is 42; a panic came back as a JoinError");
}

/// Runs `f` with the panic hook silenced: the expected panic would print a
/// report from the worker thread that ran the failing task.
fn quietly<R>(f: impl FnOnce() -> R) -> R {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = f();
    std::panic::set_hook(hook);
    result
}

fn promises(rt: &Runtime) {
    // ANCHOR: promise
    // A value from outside the runtime: a plain thread, a callback, another
    // executor. The completer is Send; complete it from anywhere.
    let (completer, promise) = hc_runtime::promise::<Vec<u8>>();
    let producer = std::thread::spawn(move || completer.complete(b"from a thread".to_vec()));
    let text = rt.block_on(async move {
        let bytes = promise.await.unwrap(); // takes the value
        String::from_utf8(bytes).unwrap()
    });
    producer.join().unwrap();
    assert_eq!(text, "from a thread");

    let (completer, promise) = hc_runtime::promise::<u8>();
    drop(completer); // never completed: the reader is told, not left waiting
    assert_eq!(rt.block_on(promise), Err(PromiseError::Abandoned));
    // ANCHOR_END: promise

    // ANCHOR: tie
    let (mut completer, promise) = hc_runtime::promise::<u64>();
    let thread = rt.finish(|_| {
        assert!(completer.join_enclosing_finish()); // this finish now waits for it
        std::thread::spawn(move || completer.complete(6 * 7))
    });
    assert!(promise.is_complete()); // finish returned only once it was completed
    thread.join().unwrap();
    assert_eq!(promise.wait(), Ok(42));
    // ANCHOR_END: tie
    println!("promises: a thread's value, an abandoned promise, a tied finish");
}
