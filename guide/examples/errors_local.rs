//! Errors of one process's tasks, caught and checked: a runtime that cannot
//! be built, DDF misuse, a task's panic re-raised by its finish, a
//! data-driven task whose input was dropped unput, a detached task that
//! panicked, an abandoned promise, phaser and event misuse, and stale
//! accumulator misuse. Needs no MPI launcher.
//!
//! Run: `target/release/examples/errors_local`.

// sample-run: ranks=0

use std::panic::{self, AssertUnwindSafe};

use hc_runtime::{
    panic_message, AlreadyPut, BuildError, Ddf, JoinError, NotPut, PromiseError, Runtime,
};
use hcmpi_phasers::{AccumOp, Event, EventError, Mode, Phaser, PhaserError};
use hcmpi_phasers::{Reduction, SspError, StaleAccum, Staleness};

fn main() {
    hide_panics_on_purpose();

    // ANCHOR: runtime
    assert!(matches!(
        Runtime::builder().num_workers(0).build(),
        Err(BuildError::ZeroWorkers)
    ));
    let rt = Runtime::builder()
        .num_workers(2)
        .build()
        .expect("two workers");

    let ddf = Ddf::new();
    assert_eq!(ddf.get(), Err(NotPut)); // read before the put
    ddf.put(1).expect("the first put");
    let Err(AlreadyPut(rejected)) = ddf.put(2) else {
        panic!("a DDF is put once")
    };
    assert_eq!((rejected, ddf.get()), (2, Ok(&1))); // the second value comes back

    let (completer, promise) = hc_runtime::promise::<u32>();
    drop(completer); // nobody will complete it
    assert_eq!(rt.block_on(promise), Err(PromiseError::Abandoned));
    // ANCHOR_END: runtime

    // ANCHOR: panics
    // A panicking task: its finish waits for the other tasks, then re-raises.
    let caught = panic::catch_unwind(AssertUnwindSafe(|| {
        rt.finish(|s| {
            s.spawn(|_| panic!("cell 7 is out of range (on purpose)"));
            s.spawn(|_| {}); // still runs
        })
    }));
    assert_eq!(
        panic_message(&*caught.unwrap_err()),
        "cell 7 is out of range (on purpose)"
    );

    // A data-driven task whose input is dropped without a put can never
    // run: its finish raises that instead of waiting forever.
    let caught = panic::catch_unwind(AssertUnwindSafe(|| {
        rt.finish(|s| {
            let input: Ddf<u32> = Ddf::new();
            s.spawn_await(&[&input], |_| unreachable!("never released"));
            drop(input); // its last handle: nobody can put it any more
        })
    }));
    let message = panic_message(&*caught.unwrap_err()).to_owned();
    assert!(
        message.contains("dropped without ever being put"),
        "{message}"
    );

    // A detached future has no finish: its JoinHandle gets the panic.
    let task = rt.spawn(async { panic!("detached task failed (on purpose)") });
    let Err(JoinError::Panicked(payload)) = task.join() else {
        panic!("it panicked")
    };
    assert_eq!(
        panic_message(&*payload),
        "detached task failed (on purpose)"
    );
    // ANCHOR_END: panics

    // ANCHOR: phasers
    rt.finish(|s| {
        let mut signaler = Phaser::new(s, Mode::SignalOnly);
        let stronger = signaler.register(Mode::SignalWait);
        assert!(matches!(stronger, Err(PhaserError::StrongerChild { .. })));
        s.spawn_future(async move {
            let refused = signaler.wait().await; // SIGNAL_ONLY cannot wait
            let expected = PhaserError::ModeViolation {
                op: "wait",
                mode: Mode::SignalOnly,
            };
            assert_eq!(refused, Err(expected));
        });
    });

    let event = Event::new();
    assert_eq!(event.post_n(0), Err(EventError::ZeroCount { op: "post" }));
    rt.finish(|_| assert_eq!(event.wait_blocking(1), Err(EventError::BlockingOnWorker)));

    let float_and = Reduction::<f64>::op(AccumOp::BitAnd);
    assert!(matches!(float_and, Err(SspError::UnsupportedOp { .. })));
    let acc = StaleAccum::local(
        Reduction::<i64>::op(AccumOp::Sum).unwrap(),
        Staleness::Bounded(0),
    );
    std::mem::forget(acc.join()); // a member leaked instead of dropped
    assert_eq!(
        rt.block_on(acc.close()),
        Err(SspError::MembersLeaked { count: 1 })
    );
    // ANCHOR_END: phasers

    println!("errors_local: 13 errors caught, each the expected one");
}

/// Prints every panic but the ones provoked on purpose (caught and checked).
fn hide_panics_on_purpose() {
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let message = panic_message(info.payload());
        let abandoned = message.contains("dropped without ever being put");
        if !message.contains("on purpose") && !abandoned {
            default_hook(info);
        }
    }));
}
