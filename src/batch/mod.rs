//! `flexmb batch`: a sweep of model variants run in parallel, one HDF5 file
//! per case and a `summary.csv` (see `docs/batch.md`).

mod run;
mod shard;
mod sweep;

pub use run::{run_batch, summary_file_name, BatchError, BatchOptions, CaseResult};
pub use shard::Shard;
pub use sweep::{case_id, Case, Sweep};
