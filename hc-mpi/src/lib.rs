//! # hc-mpi
//!
//! The inter-node half of hcmpi: one **communication worker** per MPI
//! process, the only thread that ever calls MPI, and the HCMPI API on top of
//! [`hc_runtime`] (§II-B, §II-C, §III of Chatterjee et al., IPDPS 2013).
//!
//! Computation tasks never block in MPI. A call such as [`Comm::isend`]
//! queues a communication task and returns a [`Request`]; requests are
//! data-driven futures, so a task can `spawn_await` on them (Fig. 4), and
//! [`Request::wait`] runs other tasks while it waits. A communication task
//! belongs to the finish enclosing the task that started it: the finish
//! returns only once the operation has completed (Fig. 3).
//!
//! Waiting by running other tasks has one hazard, shared with every
//! help-first runtime: a task blocked in `wait` resumes only after the tasks
//! it picked up meanwhile return, so if one of those waits (directly or not)
//! for something the blocked task has yet to do, they deadlock. Prefer
//! `spawn_await` continuations to blocking waits inside tasks where a
//! waiting task produces data other tasks wait for.
//!
//! ```no_run
//! use hc_mpi::Hcmpi;
//!
//! let hc = Hcmpi::init()?;
//! let world = hc.world().clone();
//! let peer = (hc.rank() + 1) % hc.size();
//! hc.finish(|s| {
//!     let incoming = world.irecv(vec![0u64; 4], hc_mpi::ANY_SOURCE, 7).unwrap();
//!     world.isend(vec![hc.rank() as u64; 4], peer, 7).unwrap();
//!     s.spawn_await(&[&incoming], |_| { /* the message has arrived */ });
//! });
//! # Ok::<(), hc_mpi::Error>(())
//! ```
//!
//! | module       | role                                                      |
//! |--------------|-----------------------------------------------------------|
//! | `context`    | [`Hcmpi`]: start/stop of both kinds of workers            |
//! | `task`       | communication task records and their lifecycle states     |
//! | `shared`     | worklist hand-off, record pool, submission vs. shutdown   |
//! | `worker`     | the communication worker loop and its shutdown protocol   |
//! | `op`         | operation descriptions and owned buffers                  |
//! | `comm`       | communicators and point-to-point calls                    |
//! | `collective` | non-blocking collectives                                  |
//! | `user_op`    | user-defined reduction operations                         |
//! | `request`    | requests as DDFs, status, wait/test families              |
//! | `raw`        | raw MPI handles and error-reporting wrappers              |

#![warn(missing_docs)]

mod collective;
mod comm;
mod context;
mod error;
mod op;
mod raw;
mod request;
mod shared;
mod sync;
mod task;
mod user_op;
mod worker;

#[cfg(all(test, loom))]
mod loom_tests;

pub use collective::ReduceOp;
pub use comm::{Comm, Source, TagMatch, ANY_SOURCE, ANY_TAG};
pub use context::{Hcmpi, HcmpiBuilder, MAX_POLL_ENV};
pub use error::Error;
pub use request::{test_all, test_any, wait_all, wait_any, Request, Status};
pub use user_op::{Reduction, UserOp};

/// Re-exported so users can derive or implement it for their own types.
pub use mpi::datatype::Equivalence;
