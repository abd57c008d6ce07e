//! # hc-runtime
//!
//! The computation side of hcmpi: a work-stealing pool of computation workers
//! running the Habanero task model — `async` (here [`Scope::spawn`]),
//! `finish` ([`finish`], [`Runtime::finish`]) and data-driven futures
//! ([`Ddf`], [`Scope::spawn_await`], [`Scope::spawn_await_any`]) — after
//! §II-A and §III of Chatterjee et al., *Integrating Asynchronous Task
//! Parallelism with MPI* (IPDPS 2013).
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
//! ## Design
//!
//! | module     | role                                                         |
//! |------------|--------------------------------------------------------------|
//! | `registry` | workers, deques, stealing, injector, main loop, shutdown     |
//! | `sleep`    | idle protocol: back off, then park; wake-ups without loss    |
//! | `latch`    | the finish counter                                           |
//! | `scope`    | finish scopes, spawn, data-driven spawn                      |
//! | `ddf`      | DDF state, AND/OR await lists, the release token            |
//! | `job`      | type-erased jobs as stored in the deques                     |
//! | `detached` | tasks outside any finish (completion callbacks)           |
//! | `foreign`  | running a finish on the pool from a non-worker thread        |
//! | `unwind`   | panic capture and propagation                                |
//! | `sync`     | the std/loom shim every modelled protocol imports from       |

#![warn(missing_docs)]

mod ddf;
mod detached;
mod foreign;
mod job;
mod latch;
mod registry;
mod runtime;
mod scope;
mod sleep;
mod sync;
mod unwind;

#[cfg(all(test, loom))]
mod loom_tests;

pub use ddf::{AlreadyPut, Awaitable, Ddf, DdfCore, NotPut};
pub use runtime::{
    current_worker_index, default_runtime, finish, join_enclosing_finish, outside_finish, wait,
    BuildError, Builder, Runtime, WAIT_LINGER, WORKERS_ENV,
};
pub use scope::Scope;
