//! # hcmpi-phasers
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
//! * **Awaitable**: every operation that waits is a future. A task waiting
//!   for a phase holds no worker and no thread; whoever completes the
//!   phase wakes it.
//! * **Phased tasks** are ordinary future tasks of a finish
//!   ([`spawn_phased`]): a thousand of them wait in a phase on one worker.
//! * **Tree or flat**: sub-phasers of configurable fan-in, whose last
//!   arriver carries the signal up (Fig. 13), or one counter.
//! * **Accumulators**: [`Registration::accum_next`] and
//!   [`Registration::accum_get`] with [`AccumOp`] over integers and floats.
//! * **hcmpi-phaser / hcmpi-accum** (feature `mpi`, on by default): the
//!   same across ranks, each phase ending in one `MPI_Ibarrier` (strict or
//!   fuzzy, see `BarrierMode`) or `MPI_Iallreduce`, started by the last
//!   local arrival and releasing the waiters from its completion.
//! * **Counting events** (after CAF events on MPI-3): [`Event`] with
//!   `post`, `wait(n)`, `query` and [`Event::when`], an awaitable that
//!   releases a data-driven task once `n` posts arrived; `DistEvents`
//!   (feature `mpi`) reaches events on other ranks.
//!
//! ```
//! use hcmpi_phasers::{spawn_phased, AccumOp, Mode, Phaser};
//! use std::sync::Mutex;
//!
//! let results = Mutex::new(Vec::new());
//! hc_runtime::finish(|s| {
//!     let results = &results;
//!     let acc = Phaser::builder()
//!         .build_accum::<i64>(s, AccumOp::Sum, Mode::SignalWait)
//!         .unwrap();
//!     for i in 1..=4 {
//!         spawn_phased(s, acc.register(Mode::SignalWait).unwrap(), move |_, mut r| async move {
//!             r.accum_next(i).await.unwrap();
//!             results.lock().unwrap().push(r.accum_get().unwrap());
//!         });
//!     }
//!     // `acc` is dropped here: the creator leaves and the phase can complete.
//! });
//! assert_eq!(results.into_inner().unwrap(), [10, 10, 10, 10]);
//! ```
//!
//! ## Semantics in brief
//!
//! * Phase ordering: no task leaves phase `k` (its `wait`/`next` completes)
//!   before every registration that signals has signaled `k` or left.
//! * Bounded run-ahead: a `SIGNAL_ONLY` registration may signal at most one
//!   phase ahead of the last completed one; a further `signal` waits until
//!   the phaser catches up.
//! * Errors, not hangs: a mode violation, a stronger child, a `wait` that
//!   can never be satisfied (no signaler left) return a [`PhaserError`].
//!
//! ## A phaser belongs to its finish
//!
//! As in Habanero (a phaser's *immediately enclosing finish*), a phaser is
//! created with the [`Scope`](hc_runtime::Scope) of a finish, and all its
//! registrations carry that scope's lifetime. So a registration never
//! outlives its finish: the finish body cannot keep the creator's
//! registration past its end (where it would never signal while the
//! phased tasks wait for it), nor return it, nor hand it to the phased
//! tasks of another finish. These are compile-time errors:
//!
//! ```compile_fail
//! use hcmpi_phasers::{Mode, Phaser};
//!
//! // The creator cannot leave the finish it belongs to...
//! let creator = hc_runtime::finish(|s| Phaser::new(s, Mode::SignalWait));
//! ```
//!
//! ```compile_fail
//! use hcmpi_phasers::{Mode, Phaser, Registration};
//! use std::sync::Mutex;
//!
//! // ...not even through a variable declared outside it...
//! let outside: Mutex<Option<Registration<'_>>> = Mutex::new(None);
//! hc_runtime::finish(|s| *outside.lock().unwrap() = Some(Phaser::new(s, Mode::SignalWait)));
//! ```
//!
//! ```compile_fail
//! use hcmpi_phasers::{Mode, Phaser};
//!
//! // ...and there is no phaser without a finish to belong to.
//! let creator = Phaser::new(Mode::SignalWait);
//! ```
//!
//! The creator's registration is dropped at the latest when the finish
//! body that created it returns, and the finish then waits for phased
//! tasks that no registration outside it can hold up. (Inside the finish,
//! a holder that blocks — a finish body that waits for something the
//! phased tasks produce after a phase, while it still holds the creator —
//! keeps that phase from completing like any participant that never
//! arrives: drop or [`deregister`](Registration::deregister) the creator
//! first.)
//!
//! ## Design
//!
//! | module          | role                                                    |
//! |-----------------|---------------------------------------------------------|
//! | `word`          | a sub-phaser's state word and its transitions           |
//! | `tree`          | sub-phaser tree: sub-masters, activation, vacancy       |
//! | `core`          | phases, results, failure, joins, signals, drops         |
//! | `core::wait`    | the phase-wait future, bounded run-ahead                |
//! | `core::pipeline`| completion in order; collective hand-off to its waker   |
//! | `wakers`        | parked waiters' wakers; wake-ups without loss           |
//! | `registration`  | modes, cursors, async next/signal/wait, children, drop  |
//! | `spawn`         | phased tasks as future tasks of a finish                |
//! | `accum`         | reduction operations and value types                    |
//! | `builder`       | creating phasers (shape, phase action, accumulator)     |
//! | `global`        | the inter-node stage as the pipeline sees it            |
//! | `hcmpi`         | hcmpi-phaser and hcmpi-accum over MPI collectives (`mpi`)|
//! | `event`         | counting events: post, wait(n), query, triggers         |
//! | `event::wait`   | the wait future and the trigger                         |
//! | `event::dist`   | distributed event sets over a message service (`mpi`)   |
//! | `sync`          | the std/loom shim                                       |

#![deny(missing_docs)]

mod accum;
mod builder;
mod core;
mod event;
mod global;
#[cfg(feature = "mpi")]
mod hcmpi;
mod mode;
mod registration;
mod spawn;
pub mod ssp;
mod sync;
mod tree;
mod wakers;
mod word;

#[cfg(all(test, loom))]
mod loom_tests;

pub use accum::{AccumOp, AccumValue};
pub use builder::{Phaser, PhaserBuilder, Shape, DEFAULT_DEGREE, DEFAULT_LEAVES};
#[cfg(feature = "mpi")]
pub use event::DistEvents;
pub use event::{Event, EventError, EventTrigger, EventWait};
#[cfg(feature = "mpi")]
pub use hcmpi::{hcmpi_accum_create, hcmpi_phaser_create, BarrierMode};
pub use mode::{Mode, PhaseFailure, PhaserError};
pub use registration::{PhaserHandle, Registration};
pub use spawn::{spawn_phased, PhasedOutput, Registrations};
pub use ssp::{Member, Reduction, Snapshot, SspError, StaleAccum, Staleness};
