//! # hc-mpi
//!
//! The inter-node half of hcmpi: one **communication engine** per MPI
//! process, the only owner of MPI calls, and the HCMPI API on top of
//! [`hc_runtime`] (§II-B, §II-C, §III of Chatterjee et al., IPDPS 2013).
//!
//! Computation tasks never block in MPI. A call such as [`Comm::isend`]
//! builds an operation and hands it to the engine, returning a typed
//! [`Request`]. Requests are futures and data-driven futures at once:
//! `request.await` in a future task, `spawn_await(&[&request], ..)` (Fig. 4),
//! or [`Request::wait`] in leaf code. An operation belongs to the finish
//! enclosing the task that started it: the finish returns only once the
//! operation has completed (Fig. 3).
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
//!     s.spawn_future(async move {
//!         let (data, status) = incoming.await.unwrap();
//!         println!("{data:?} from {}", status.source);
//!     });
//! });
//! # Ok::<(), hc_mpi::Error>(())
//! ```
//!
//! The engine runs on a thread of its own or is stepped by the computation
//! workers themselves, depending on the [`Placement`]; message services
//! ([`Comm::serve`]) let it receive and handle a stream of messages by tag.
//!
//! | module       | role                                                      |
//! |--------------|-----------------------------------------------------------|
//! | `context`    | [`Hcmpi`]: MPI start-up and shutdown, workers, engine     |
//! | `abort`      | ending the whole job from one failing rank                |
//! | `placement`  | dedicated, shared or auto engine placement                |
//! | `binding`    | which CPUs a rank's threads run on                        |
//! | `engine`     | worklist, role holder, request table, back-off, shutdown  |
//! | `op`         | the one interface between operations and the engine       |
//! | `comm`       | communicators: checks, creation, freeing                  |
//! | `p2p`        | point-to-point operations                                 |
//! | `probe`      | probes                                                    |
//! | `collective` | non-blocking collectives                                  |
//! | `user_op`    | user-defined reduction operations                         |
//! | `service`    | message services on `MPI_Improbe`/`MPI_Imrecv`            |
//! | `request`    | typed requests: futures, awaitables, wait/test families   |
//! | `raw`        | raw MPI handles and error-reporting wrappers              |
//! | `warm`       | growing MPI's request pool at start-up                    |

#![deny(missing_docs)]

mod abort;
mod binding;
mod collective;
mod comm;
mod context;
mod engine;
mod error;
mod op;
mod p2p;
mod placement;
mod probe;
mod raw;
mod request;
mod service;
mod sync;
mod user_op;
mod warm;

#[cfg(all(test, loom))]
mod loom_tests;

pub use abort::{abort_job, launched_with_peers, AbortJobOnPanic};
pub use binding::{
    cpu_mask, node_cpu_count, share as cpu_share, Binding, UnknownBinding, BINDING_ENV,
    CPU_MASK_WORDS,
};
pub use collective::ReduceOp;
pub use comm::{Comm, Source, TagMatch, ANY_SOURCE, ANY_TAG};
pub use context::{threading_name, Hcmpi, HcmpiBuilder, Metrics, MAX_POLL_ENV};
pub use engine::{EngineMetrics, OperationMetrics, STALL_ENV};
pub use error::{BufferProblem, Error, ErrorChain, InitError};
pub use placement::{Placement, UnknownPlacement, PLACEMENT_ENV};
pub use request::{
    test_all, test_any, wait_all, wait_any, Request, SharedRequest, SharedRequestGet, Status,
};
pub use service::{Message, Service};
pub use user_op::{Reduction, UserOp};

/// Re-exported so users can derive or implement it for their own types.
pub use mpi::datatype::Equivalence;
