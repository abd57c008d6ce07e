//! # hcmpi-benches
//!
//! Overhead benchmarks of `hc-runtime` measured side by side with rayon:
//! the `overhead` binary (`src/bin/overhead.rs`) and a small criterion bench
//! (`benches/spawn.rs`).
//!
//! | module      | role                                                        |
//! |-------------|-------------------------------------------------------------|
//! | `workloads` | the measured kernels (spawn, fib, DDF chain), hc and rayon  |
//! | `stats`     | median and min over repetitions                             |
//! | `cpu`       | process CPU time from `getrusage`, idle CPU fraction        |
//! | `report`    | the markdown table and the JSON rows (hand-written JSON)    |
//! | `shared_comm` | a raw communicator shared by the baselines' threads       |

#![warn(missing_docs)]

pub mod cpu;
pub mod report;
pub mod shared_comm;
pub mod stats;
pub mod workloads;
