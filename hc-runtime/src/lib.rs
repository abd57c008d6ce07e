//! # hc-runtime
//!
//! The computation side of hcmpi: a work-stealing pool of computation workers
//! running the Habanero task model — `async` (here [`Scope::spawn`]),
//! `finish` ([`finish`], [`Runtime::finish`]) and data-driven futures
//! ([`Ddf`], [`Scope::spawn_await`], [`Scope::spawn_await_any`]) — after
//! §II-A and §III of Chatterjee et al., *Integrating Asynchronous Task
//! Parallelism with MPI* (IPDPS 2013), with Rust's `async`/`.await` on top.
//!
//! ```
//! use hc_runtime::{Ddf, Runtime};
//!
//! let rt = Runtime::builder().num_workers(2).build().unwrap();
//! let (a, b) = (Ddf::new(), Ddf::new());
//! let mut sum = 0;
//! rt.finish(|s| {
//!     s.spawn_await(&[&a, &b], |_| sum = a.get().unwrap() + b.get().unwrap());
//!     s.spawn(|_| a.put(1).unwrap());
//!     s.spawn(|_| b.put(2).unwrap());
//! });
//! assert_eq!(sum, 3);
//! ```
//!
//! For fork-join code, [`join`] runs two closures potentially in parallel
//! with the work-first fast path (the second closure is a job on the
//! caller's stack, run inline when no other worker took it).
//!
//! ## Two ways to wait, and which API belongs to which
//!
//! HC's `async`/`await` is not Rust's. This crate has both, and every
//! handle (a [`Ddf`], a [`Promise`], an MPI request, a distributed DDF)
//! works with both:
//!
//! | model | spawn | wait for a handle | holds a worker while waiting? |
//! |---|---|---|---|
//! | HC data-driven tasks | [`Scope::spawn_await`], [`Scope::spawn_await_any`], [`Handle::spawn_await_detached`] | the task *starts* once its handles are ready | no: the task does not exist as running code until then |
//! | Rust futures as tasks | [`Scope::spawn_future`], [`Handle::spawn`], [`Runtime::block_on`] | `(&ddf).await`, `promise.await`, `request.await`, [`ready`]`(&x).await` | no: a pending future is parked on its handle; a wake puts it back on a deque |
//! | blocking (leaf code) | — | [`wait`], `Ddf::wait`, `Promise::wait`, `Request::wait` | yes: on a worker it runs other tasks on its stack; elsewhere the thread parks |
//!
//! Prefer the first two wherever a task waits for something another task
//! produces: a blocking wait resumes only after the tasks it picked up
//! meanwhile return, so thousands of blocked waits stack up on one worker.
//!
//! ```
//! use hc_runtime::{Ddf, Runtime};
//!
//! let rt = Runtime::builder().num_workers(1).build().unwrap();
//! let input: Ddf<u32> = Ddf::new();
//! let output = rt.block_on(async {
//!     let producer = input.clone();
//!     hc_runtime::Handle::current().spawn_detached(move |_| producer.put(20).unwrap());
//!     *(&input).await + 1
//! });
//! assert_eq!(output, 21);
//! ```
//!
//! ## Design
//!
//! | module        | role                                                         |
//! |---------------|--------------------------------------------------------------|
//! | `registry`    | workers, deques, stealing, injector, main loop, shutdown     |
//! | `sleep`       | idle protocol: back off, then park; wake-ups without loss    |
//! | `barrier`     | the asymmetric barrier pair the idle protocol rests on       |
//! | `backoff`     | the one back-off policy: spin, yield, park                   |
//! | `poller`      | the generic poller workers drive (MPI in shared placement)   |
//! | `latch`       | the finish counter                                           |
//! | `finish`      | finish frames, the enclosing finish, counted finish tokens   |
//! | `scope`       | finish scopes, spawn, data-driven spawn, future spawn        |
//! | `future_task` | futures as tasks: states, wakers, rescheduling               |
//! | `ddf`         | DDF state, AND/OR await lists, waker waiters, readiness      |
//! | `promise`     | one value from a completer to one reader                     |
//! | `job`         | type-erased jobs as stored in the deques; task blocks        |
//! | `join`        | fork-join with the work-first fast path (stack jobs)         |
//! | `handle`      | a clonable reference to a pool                               |
//! | `detached`    | tasks outside any finish; join handles                       |
//! | `foreign`     | running a finish on the pool from a non-worker thread        |
//! | `unwind`      | panic capture and propagation                                |
//! | `sync`        | the std/loom shim every modelled protocol imports from       |
//! | `metrics`     | per-worker counters: tasks, steals, working/searching/parked |
//! | `trace`       | Chrome/Perfetto timeline traces, per-thread event buffers    |

#![deny(missing_docs)]

pub mod affinity;
mod backoff;
mod barrier;
mod ddf;
mod detached;
mod finish;
mod foreign;
mod future_task;
mod handle;
mod job;
mod join;
mod latch;
mod metrics;
mod poller;
mod promise;
mod registry;
mod runtime;
mod scope;
mod sleep;
mod sync;
pub mod trace;
mod unwind;

#[cfg(all(test, loom))]
mod loom_tests;

pub use backoff::{precise_timers, Backoff, BackoffPolicy, Snooze};
pub use ddf::value::{DdfGet, DdfValue};
pub use ddf::{ready, AlreadyPut, Awaitable, Ddf, NotPut, Readiness, Ready};
pub use detached::{JoinError, JoinHandle};
pub use handle::Handle;
pub use join::join;
pub use metrics::{RuntimeMetrics, WorkerMetrics};
pub use poller::{Polled, Poller};
pub use promise::{promise, Completer, Promise, PromiseError};
pub use runtime::{
    current_worker_index, default_runtime, finish, outside_finish, wait, wait_any, wait_polling,
    BuildError, Builder, Runtime, DEFAULT_POLL_INTERVAL, WORKERS_ENV,
};
pub use scope::Scope;
pub use unwind::panic_message;
