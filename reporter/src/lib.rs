//! # hcmpi-report
//!
//! The benchmark report of hcmpi: `./scripts/report [--quick]` builds the
//! suite, runs it (`hcmpi-report run`) and writes `report/index.md` with a
//! table and a PNG chart per figure. `hcmpi-report render` redraws the page
//! from the data of an earlier run.
//!
//! | module    | role                                                        |
//! |-----------|-------------------------------------------------------------|
//! | `collect` | the suite's programs and arguments, run into a data directory |
//! | `rows`    | the data files and their typed rows                          |
//! | `figures` | each figure's chart and table, built from the rows           |
//! | `chart`   | a chart as data, drawn as PNG with plotters                  |
//! | `page`    | `index.md` and the charts beside it                          |
//! | `machine` | cores, CPU, MPI library and date, named on every chart; `run.json` |
//! | `error`   | [`ReportError`]                                              |

#![deny(missing_docs)]

pub mod chart;
pub mod collect;
pub mod error;
pub mod figures;
pub mod machine;
pub mod page;
pub mod rows;

pub use collect::{Step, Suite};
pub use error::ReportError;
pub use machine::Machine;
pub use page::{render, Rendered};
pub use rows::Dataset;
