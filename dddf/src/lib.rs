//! # hcmpi-dddf
//!
//! Distributed data-driven futures (DDDFs): single-assignment values named
//! by a global id (`u64` guid), put on one rank — the guid's *home* — and
//! awaited on any rank, after §II-D and §III-B of Chatterjee et al.,
//! *Integrating Asynchronous Task Parallelism with MPI* (IPDPS 2013). The
//! paper calls this model an Asynchronous Partitioned Global Name Space.
//!
//! ```no_run
//! use hcmpi_dddf::DddfSpace;
//! use hc_mpi::Hcmpi;
//!
//! let hc = Hcmpi::init()?;
//! let ranks = hc.size();
//! // guid g lives on rank g % ranks and holds 4 i64s (32 bytes).
//! let space = DddfSpace::<Vec<i64>>::new(&hc, move |g| (g % ranks as u64) as i32, |_| 32)?;
//! let mine = space.handle(hc.rank() as u64)?;
//! let next = space.handle(((hc.rank() + 1) % ranks) as u64)?;
//! hc.finish(|s| {
//!     s.spawn_await(&[&next], |_| println!("next rank holds {:?}", next.get().unwrap()));
//!     s.spawn(|_| mine.put(vec![hc.rank() as i64; 4]).unwrap());
//! });
//! space.close()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Model
//!
//! * A [`DddfSpace<T>`] is created collectively with `home(guid) -> rank`
//!   and `size(guid) -> bytes` (the paper's `DDF_HOME`, `DDF_SIZE`).
//! * [`DddfSpace::handle`] gives a [`Dddf<T>`] for any guid on any rank. It
//!   is awaitable like a local [`hc_runtime::Ddf`] — in `spawn_await`,
//!   `spawn_await_any`, `hc_runtime::wait` — next to local DDFs and MPI
//!   requests.
//! * Only the home puts. `put` elsewhere is an error ([`DddfError::PutNotHome`]):
//!   silently forwarding it would hide a wrong `home` function.
//! * Values are [`Payload`]s: [`Plain`] data or vectors of it, sent as bytes;
//!   the length must equal `size(guid)` at the put and on arrival.
//!
//! ## Protocol (§III-B)
//!
//! 1. The first time a task on a non-home rank awaits a guid, the rank
//!    sends `REQUEST(guid)` to the home (a flag per guid and rank makes it
//!    the only time; see `entry::Once`).
//! 2. The home's listener records the request; if the guid is already put
//!    it sends `DATA(guid, value)` at once, otherwise the put sends it to
//!    every rank that asked (the put/request race is resolved under one
//!    lock, see `home`).
//! 3. The requesting rank's listener stores the value in the guid's local
//!    DDF, which releases the tasks awaiting it; the copy stays, so later
//!    awaits on that rank are local. At most one transfer per guid and rank.
//!    In a space made with [`DddfSpace::with_reader`], the put also sends
//!    the value to `reader(guid)` (unless that is the home itself), which
//!    therefore skips step 1; the value may arrive before any handle on it
//!    exists there, and the arrival makes the guid's entry.
//! 4. When every rank is done, [`DddfSpace::close`] detects global
//!    termination by counting messages in waves of non-blocking allreduces
//!    (see `termination`) and stops the listeners.
//!
//! ## Memory ordering
//!
//! * The put/request race of step 2 is decided under the guid's interest
//!   lock (`home`), and the value is published inside it: whoever takes
//!   the lock after the put (the put itself, or a request served at once)
//!   sees the value, so no rank is sent a value before it exists.
//! * A value becomes visible on a rank by the put of its local DDF (the
//!   home's own, or the listener's on arrival): the DDF's release/acquire
//!   protocol (`hc_runtime::ddf`) orders the value before every task the
//!   put releases.
//! * The ask-once flag of step 1 is one atomic swap (`Relaxed`): only which
//!   task wins matters, and the request itself travels through MPI.
//! * The `closed` flag is `SeqCst`: a task that registers interest after
//!   `close` began must see it and fail rather than send a request no
//!   listener will answer. The `failed` flag is release/acquire, so the
//!   failure recorded before it is seen with it.
//! * The termination counters are one pair under one lock, so a snapshot
//!   never sees a reply's receipt without its send (`termination`).
//!
//! ## Diagnostics
//!
//! A guid that is awaited but never put makes its finish wait forever. Set
//! `HC_WATCHDOG_SECS=N` and a rank that makes no progress for `N` seconds
//! while guids are pending prints them and exits with
//! [`WATCHDOG_EXIT_CODE`] (see `watchdog`). [`DddfSpace::pending`] and the
//! [`CloseReport`] list the same guids on demand.
//!
//! | module        | role                                                   |
//! |---------------|--------------------------------------------------------|
//! | `space`       | [`DddfSpace`]: creation, handles, close                |
//! | `handle`      | [`Dddf`]: put, get, await                              |
//! | `shared`      | guid table, message handling, sends                    |
//! | `entry`       | one guid on one rank; the ask-once flag                |
//! | `home`        | the home's interest list and put/request race          |
//! | `listener`    | the engine's message service for the space's messages  |
//! | `termination` | message counting and the wave decision                 |
//! | `watchdog`    | `HC_WATCHDOG_SECS`                                     |
//! | `wire`        | message tags and layout                                |
//! | `payload`     | [`Plain`], [`Payload`]                                 |
//! | `sync`        | the std/loom shim every modelled protocol imports from |

#![deny(missing_docs)]

mod entry;
mod error;
mod handle;
mod home;
mod listener;
mod payload;
mod shared;
mod space;
mod sync;
mod termination;
mod watchdog;
mod wire;

#[cfg(all(test, loom))]
mod loom_tests;

pub use error::{DddfError, IoError, SizeCheck};
pub use handle::{Dddf, DddfGet};
pub use payload::{Payload, Plain};
pub use shared::Pending;
pub use space::{CloseReport, DddfSpace, Stats};
pub use watchdog::{WATCHDOG_ENV, WATCHDOG_EXIT_CODE};
