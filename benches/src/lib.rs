//! # hcmpi-benches
//!
//! The benchmark binaries, each measuring side by side with its baseline:
//! `overhead` (hc-runtime against rayon), `threadbench` (the communication
//! worker against raw MPI) and `syncbench` (phasers against MPI and
//! MPI+rayon), plus a small criterion bench (`benches/spawn.rs`). This
//! library holds what they share.
//!
//! | module        | role                                                      |
//! |---------------|-----------------------------------------------------------|
//! | `workloads`   | the measured kernels (spawn, fib, DDF chain), hc and rayon |
//! | `stats`       | median and min over repetitions                           |
//! | `cli`         | argument parsers shared by the binaries                   |
//! | `error`       | why a child, a job or a driver failed                     |
//! | `cpu`         | process CPU time from `getrusage`, idle CPU fraction      |
//! | `report`      | the markdown table and the JSON rows (serde_json)         |
//! | `shared_comm` | a raw communicator shared by the baselines' threads       |
//!
//! The drivers' progress bars are `apps::progress`, shared with the
//! applications rather than copied here.

#![deny(missing_docs)]

pub mod cli;
pub mod cpu;
pub mod error;
pub mod report;
pub mod shared_comm;
pub mod stats;
pub mod workloads;
