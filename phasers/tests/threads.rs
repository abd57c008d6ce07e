//! A process runs exactly its computation workers (plus the threads it had
//! before): phasers, accumulators, events and phased tasks start no thread
//! of their own, however many tasks wait (Linux: `/proc/self/task`).
//! Alone in its test binary, so no other test's threads come and go.

use std::sync::Mutex;

use hcmpi_testkit::thread_count;

use hcmpi_phasers::{spawn_phased, AccumOp, Event, Mode, Phaser};

const WAITING: u64 = 100;
const WORKERS: usize = 2;

#[test]
fn a_hundred_waiting_phased_tasks_run_on_the_workers_alone() {
    let before = thread_count();
    let rt = hc_runtime::Runtime::builder()
        .num_workers(WORKERS)
        .build()
        .unwrap();
    assert_eq!(thread_count(), before + WORKERS);
    let events: Vec<Event> = (0..4).map(|_| Event::new()).collect();
    let arrived = Event::new();
    let census = Mutex::new(None);
    rt.finish(|s| {
        let barriers = [
            Phaser::new(s, Mode::SignalWait),
            Phaser::builder().flat().build(s, Mode::SignalWait).unwrap(),
        ];
        let sum = Phaser::builder()
            .build_accum::<u64>(s, AccumOp::Sum, Mode::SignalWait)
            .unwrap();
        for task in 0..WAITING {
            let regs = (
                barriers[0].register(Mode::SignalWait).unwrap(),
                barriers[1].register(Mode::SignalWait).unwrap(),
                sum.register(Mode::SignalWait).unwrap(),
            );
            let (events, arrived) = (&events, &arrived);
            spawn_phased(
                s,
                regs,
                move |_, (mut first, mut second, mut sum)| async move {
                    events[(task % 4) as usize].post().unwrap();
                    arrived.post().unwrap();
                    first.next().await.unwrap(); // the census is taken meanwhile
                    second.next().await.unwrap();
                    sum.accum_next(task).await.unwrap();
                    assert_eq!(sum.accum_get(), Ok(WAITING * (WAITING - 1) / 2));
                },
            );
        }
        let mut holder = barriers[0].register(Mode::SignalWait).unwrap();
        let (arrived, census) = (&arrived, &census);
        s.spawn_future(async move {
            // Every phased task waits in phase 0 of the first barrier, which
            // waits for this task.
            arrived.wait(WAITING).await.unwrap();
            *census.lock().unwrap() = Some(thread_count());
            holder.next().await.unwrap();
        });
    });
    let during = census.into_inner().unwrap().expect("the census was taken");
    assert_eq!(during, before + WORKERS);
    assert_eq!(events.iter().map(Event::query).sum::<u64>(), WAITING);
}
