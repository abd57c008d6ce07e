//! # phasers
//!
//! Phasers for hc-runtime tasks, and their fusion with MPI collectives:
//! §II-A, §II-C and §III-A of Chatterjee et al., *Integrating Asynchronous
//! Task Parallelism with MPI* (IPDPS 2013), after Shirako et al.'s phasers
//! (ICS 2008), phaser accumulators (IPDPS 2009) and hierarchical phasers
//! (IPDPS 2010).
//!
//! * **Phasers**: tasks register in `SIGNAL_WAIT`, `SIGNAL_ONLY` or
//!   `WAIT_ONLY` [`Mode`]; [`Registration::next`] (or split-phase
//!   [`signal`](Registration::signal) / [`wait`](Registration::wait))
//!   advances phases; a phase completes when every registration that
//!   signals has signaled it. Registrations are created by registered
//!   tasks for the tasks they spawn ([`Registration::register`], no
//!   stronger than the parent's mode) and dropped when a task ends.
//! * **Tree or flat**: sub-phasers of configurable fan-in, whose last
//!   arriver carries the signal up (Fig. 13), or one counter.
//! * **Accumulators**: [`Registration::accum_next`] and
//!   [`Registration::accum_get`] with [`AccumOp`] over integers and floats.
//! * **hcmpi-phaser / hcmpi-accum**: the same across ranks, each phase
//!   ending in one `MPI_Ibarrier` (strict or fuzzy, see [`BarrierMode`]) or
//!   `MPI_Iallreduce` on the communication worker.
//! * **Counting events** (after CAF events on MPI-3): [`Event`] with
//!   `post`, `wait(n)`, `query` and [`Event::when`], an awaitable that
//!   releases a data-driven task once `n` posts arrived; [`DistEvents`]
//!   reaches events on other ranks.
//! * **Phased tasks** run on threads of their own ([`spawn_phased`]); see
//!   that module's docs for why and for the limits.
//!
//! ```
//! use phasers::{spawn_phased, AccumOp, Mode, Phaser};
//! use std::sync::Mutex;
//!
//! let results = Mutex::new(Vec::new());
//! hc_runtime::finish(|s| {
//!     let results = &results;
//!     let acc = Phaser::builder()
//!         .build_accum::<i64>(AccumOp::Sum, Mode::SignalWait)
//!         .unwrap();
//!     for i in 1..=4 {
//!         spawn_phased(s, acc.register(Mode::SignalWait).unwrap(), move |_, mut r| {
//!             r.accum_next(i).unwrap();
//!             results.lock().unwrap().push(r.accum_get().unwrap());
//!         })
//!         .unwrap();
//!     }
//!     // `acc` is dropped here: the creator leaves and the phase can complete.
//! });
//! assert_eq!(results.into_inner().unwrap(), [10, 10, 10, 10]);
//! ```
//!
//! ## Semantics in brief
//!
//! * Phase ordering: no task leaves phase `k` (its `wait`/`next` returns)
//!   before every registration that signals has signaled `k` or left.
//! * Bounded run-ahead: a `SIGNAL_ONLY` registration may signal at most one
//!   phase ahead of the last completed one; further signals block until
//!   the phaser catches up.
//! * Errors, not hangs: a mode violation, a stronger child, a `wait` that
//!   can never be satisfied (no signaler left) return a [`PhaserError`].
//!
//! ## Design
//!
//! | module         | role                                                  |
//! |----------------|-------------------------------------------------------|
//! | `word`         | a sub-phaser's state word and its transitions         |
//! | `tree`         | sub-phaser tree: sub-masters, activation, vacancy     |
//! | `core`         | completion pipeline, bounded run-ahead, strict/fuzzy  |
//! | `waiters`      | spin, yield, park; wake-ups without loss              |
//! | `registration` | modes, cursors, next/signal/wait, children, drop      |
//! | `spawn`        | phased tasks on threads of their own                  |
//! | `accum`        | reduction operations and value types                  |
//! | `builder`      | creating phasers (shape, phase action, accumulator)   |
//! | `global`       | the inter-node stage as the pipeline sees it          |
//! | `hcmpi`        | hcmpi-phaser and hcmpi-accum over MPI collectives     |
//! | `event`        | counting events: post, wait(n), query, triggers       |
//! | `event::dist`  | distributed event sets: remote posts, listener, close |
//! | `sync`         | the std/loom shim                                     |

#![warn(missing_docs)]

mod accum;
mod builder;
mod core;
mod event;
mod global;
mod hcmpi;
mod mode;
mod registration;
mod spawn;
mod sync;
mod tree;
mod waiters;
mod word;

#[cfg(all(test, loom))]
mod loom_tests;

pub use accum::{AccumOp, AccumValue};
pub use builder::{Phaser, PhaserBuilder, Shape, DEFAULT_DEGREE, DEFAULT_LEAVES};
pub use event::{DistEvents, Event, EventError, EventTrigger};
pub use hcmpi::{hcmpi_accum_create, hcmpi_phaser_create, BarrierMode};
pub use mode::{Mode, PhaserError};
pub use registration::{PhaserHandle, Registration};
pub use spawn::{spawn_phased, PHASED_STACK_SIZE};
