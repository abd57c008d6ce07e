//! Message ordering and a message storm through the communication worker.
//!
//! **(a) Non-overtaking.** Every rank runs `4 × workers` sender tasks; task
//! `t` sends `ORDER_MESSAGES` messages with tag `t` to the next rank of the
//! ring, the payload being the sequence number. Receiver tasks post the
//! receives for each `(source, tag)` in order and check that sequence
//! numbers arrive in order. MPI orders messages with the same source, tag
//! and communicator in the order their sends were *posted*; the sends of one
//! task enter the worklist in program order and the single communication
//! worker posts them in worklist order, so the order survives hc-mpi.
//!
//! **(b) Storm.** `STORM_TOTAL` (10^5) small messages in all, `STORM_TOTAL /
//! size` from each rank, sent by all of its workers' tasks to destinations
//! spread over every rank (itself included). Receivers use `ANY_SOURCE`,
//! count the messages and add up their payloads; each rank's count and
//! checksum must equal what it computes locally from every rank's known
//! sends, and the global totals (allreduce) must match too: nothing lost,
//! nothing duplicated. Each receiver task keeps a window of `RECV_WINDOW`
//! receives posted, each sender task `SEND_WINDOW` sends, to bound memory.
//!
//! Windows advance the data-flow way (a task awaiting the window's requests
//! posts the next one), never by blocking in `wait`: see [`pipeline`].
//!
//! Options: `--storm N` changes the storm's total, `--order N` the number
//! of ordered messages per task.
//!
//! Run: `mpiexec -n 4 target/release/examples/ordering_storm`.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use hc_mpi::{Comm, Error, Hcmpi, ReduceOp, Request, Status, ANY_SOURCE};
use hc_runtime::{Awaitable, Scope};

const ORDER_MESSAGES: u64 = 500;
const STORM_TOTAL: u64 = 100_000;
const STORM_TAG: i32 = 5000;
const RECV_WINDOW: u64 = 256;
const SEND_WINDOW: u64 = 64;

/// Posts operation `i` of a stream.
type Post<'s, T> = Arc<dyn Fn(u64) -> Request<T> + Send + Sync + 's>;
/// Checks completed operation `i` of a stream.
type Check<'s, T> = Arc<dyn Fn(u64, &T, Status) + Send + Sync + 's>;

/// Runs operations `start..end` of a stream in windows of `window`, the
/// HCMPI data-flow way: post a window, and let a task awaiting all of its
/// requests check them and post the next window.
///
/// No task ever blocks. A blocking `wait` inside a task runs other tasks on
/// top of the waiting one, which cannot resume before they return: a sender
/// waiting on its window could have the receiver of its own stream run on
/// top of it, and that receiver's next window needs the sender's next one —
/// neither would return (an earlier, blocking version of this example hung
/// at every rank count). Within a window, operation `i` is posted before
/// operation `i + 1`.
fn pipeline<'s, T: Any + Send + Sync>(
    s: &'s Scope<'s, '_>,
    start: u64,
    end: u64,
    window: u64,
    post: Post<'s, T>,
    check: Check<'s, T>,
) {
    if start >= end {
        return;
    }
    let stop = (start + window).min(end);
    let requests: Arc<Vec<Request<T>>> = Arc::new((start..stop).map(|i| post(i)).collect());
    let owned = Arc::clone(&requests);
    let deps: Vec<&dyn Awaitable> = requests.iter().map(|r| r as &dyn Awaitable).collect();
    s.spawn_await(&deps, move |s| {
        for (i, request) in (start..).zip(owned.iter()) {
            let (data, status) = request.get().expect("request of the window");
            check(i, data, status);
        }
        drop(owned);
        pipeline(s, stop, end, window, post, check);
    });
}

/// (a): ordered streams, one per sender task, checked per (source, tag).
fn ordering(hc: &Hcmpi, tasks: i32, messages: u64) -> u64 {
    let world = hc.world();
    let (rank, size) = (world.rank(), world.size());
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    let checked = AtomicU64::new(0);
    let checked = &checked;
    hc.finish(|s| {
        for tag in 0..tasks {
            // One task posts its whole stream of sends in program order.
            s.spawn(move |s| {
                let post: Post<'_, Vec<u64>> = Arc::new(move |seq| {
                    world
                        .isend(vec![seq, tag as u64], next, tag)
                        .expect("isend")
                });
                pipeline(s, 0, messages, messages, post, Arc::new(|_, _, _| {}));
            });
            // The receives of (prev, tag), posted in order: receive `i` must
            // get message `i`.
            s.spawn(move |s| {
                let post: Post<'_, Vec<u64>> =
                    Arc::new(move |_| world.irecv(vec![0u64; 2], prev, tag).expect("irecv"));
                let check: Check<'_, Vec<u64>> = Arc::new(move |i, data, status| {
                    assert_eq!((status.source, status.tag), (prev, tag));
                    assert_eq!(
                        *data,
                        vec![i, tag as u64],
                        "rank {rank}: stream (source {prev}, tag {tag}) out of order"
                    );
                    checked.fetch_add(1, Ordering::Relaxed);
                });
                pipeline(s, 0, messages, RECV_WINDOW, post, check);
            });
        }
    });
    checked.load(Ordering::Relaxed)
}

/// The storm's plan, known to every rank: how many messages `sender` sends
/// and, for message `seq` of task `task`, where to and with what payload.
struct Storm {
    size: i32,
    total: u64,
    tasks: i32,
}

impl Storm {
    fn sent_by(&self, sender: i32) -> u64 {
        let size = self.size as u64;
        self.total / size + u64::from((sender as u64) < self.total % size)
    }

    /// Messages of `sender`'s task `task`: every `tasks`-th message.
    fn task_share(&self, sender: i32, task: i32) -> u64 {
        let n = self.sent_by(sender);
        let tasks = self.tasks as u64;
        n / tasks + u64::from((task as u64) < n % tasks)
    }

    fn dest(&self, sender: i32, task: i32, seq: u64) -> i32 {
        ((sender as u64 + 1 + (task as u64 + seq) % self.size as u64) % self.size as u64) as i32
    }

    fn payload(sender: i32, task: i32, seq: u64) -> u64 {
        ((sender as u64) << 48) | ((task as u64) << 32) | seq
    }

    /// Every message, as (sender, dest, payload).
    fn all(&self) -> impl Iterator<Item = (i32, i32, u64)> + '_ {
        (0..self.size).flat_map(move |sender| {
            (0..self.tasks).flat_map(move |task| {
                (0..self.task_share(sender, task)).map(move |seq| {
                    (
                        sender,
                        self.dest(sender, task, seq),
                        Self::payload(sender, task, seq),
                    )
                })
            })
        })
    }
}

/// (b): returns this rank's (received count, checksum).
fn storm(world: &Comm, hc: &Hcmpi, plan: &Storm) -> (u64, u64) {
    let rank = world.rank();
    let (mut expect_count, mut expect_sum) = (0u64, 0u64);
    let mut expect_from = vec![0u64; plan.size as usize];
    for (sender, dest, payload) in plan.all() {
        if dest == rank {
            expect_count += 1;
            expect_sum = expect_sum.wrapping_add(payload);
            expect_from[sender as usize] += 1;
        }
    }
    let receivers = plan.tasks.max(1) as u64;
    let received = AtomicU64::new(0);
    let checksum = AtomicU64::new(0);
    let from: Vec<AtomicU64> = (0..plan.size).map(|_| AtomicU64::new(0)).collect();
    let (received, checksum, from) = (&received, &checksum, &from);
    hc.finish(|s| {
        for task in 0..plan.tasks {
            s.spawn(move |s| {
                let post: Post<'_, Vec<u64>> = Arc::new(move |seq| {
                    let dest = plan.dest(rank, task, seq);
                    let payload = Storm::payload(rank, task, seq);
                    world.isend(vec![payload], dest, STORM_TAG).expect("isend")
                });
                let n = plan.task_share(rank, task);
                pipeline(s, 0, n, SEND_WINDOW, post, Arc::new(|_, _, _| {}));
            });
        }
        for k in 0..receivers {
            let share = expect_count / receivers + u64::from(k < expect_count % receivers);
            s.spawn(move |s| {
                let post: Post<'_, Vec<u64>> = Arc::new(move |_| {
                    world
                        .irecv(vec![0u64; 1], ANY_SOURCE, STORM_TAG)
                        .expect("irecv")
                });
                let check: Check<'_, Vec<u64>> = Arc::new(move |_, data, status| {
                    assert_eq!((data.len(), status.tag), (1, STORM_TAG));
                    assert_eq!(
                        (data[0] >> 48) as i32,
                        status.source,
                        "payload names its sender"
                    );
                    received.fetch_add(1, Ordering::Relaxed);
                    checksum.fetch_add(data[0], Ordering::Relaxed);
                    from[status.source as usize].fetch_add(1, Ordering::Relaxed);
                });
                pipeline(s, 0, share, RECV_WINDOW, post, check);
            });
        }
    });
    let (count, sum) = (
        received.load(Ordering::Relaxed),
        checksum.load(Ordering::Relaxed),
    );
    assert_eq!(count, expect_count, "rank {rank}: storm message count");
    assert_eq!(sum, expect_sum, "rank {rank}: storm checksum");
    let from: Vec<u64> = from.iter().map(|n| n.load(Ordering::Relaxed)).collect();
    assert_eq!(from, expect_from, "rank {rank}: messages per source");
    (count, sum)
}

fn option(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name} takes a number, got {v:?}"))
        })
        .unwrap_or(default)
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let storm_total = option(&args, "--storm", STORM_TOTAL);
    let order_messages = option(&args, "--order", ORDER_MESSAGES);
    let hc = Hcmpi::init()?;
    let world = hc.world();
    let (rank, size) = (hc.rank(), hc.size());
    let tasks = 4 * hc.runtime().num_workers() as i32;
    // Every rank must agree on the task count (it shapes the plan).
    let agreed = world.allreduce(vec![tasks, -tasks], ReduceOp::Max)?;
    assert_eq!(
        agreed,
        vec![tasks, -tasks],
        "ranks disagree on the number of tasks"
    );

    let started = Instant::now();
    let ordered = ordering(&hc, tasks, order_messages);
    assert_eq!(ordered, tasks as u64 * order_messages);
    world.barrier()?;
    let order_time = started.elapsed();

    let started = Instant::now();
    let plan = Storm {
        size,
        total: storm_total,
        tasks,
    };
    let (count, sum) = storm(world, &hc, &plan);
    let totals = world.allreduce(vec![count, sum], ReduceOp::Sum)?;
    let expected_sum = plan.all().fold(0u64, |acc, (_, _, p)| acc.wrapping_add(p));
    // The checksum's Sum may wrap in MPI as in Rust (unsigned arithmetic).
    assert_eq!(totals[0], storm_total, "storm: messages lost or duplicated");
    assert_eq!(totals[1], expected_sum, "storm: global checksum");
    let sent = (0..tasks).map(|t| plan.task_share(rank, t)).sum::<u64>();
    assert_eq!(sent, plan.sent_by(rank));
    world.barrier()?;
    let storm_time = started.elapsed();

    println!(
        "rank {rank}/{size}: ordering storm OK ({tasks} tasks x {order_messages} ordered in \
         {:.2} s; storm {count} of {storm_total} received, {sent} sent, in {:.2} s)",
        order_time.as_secs_f64(),
        storm_time.as_secs_f64()
    );
    Ok(())
}
