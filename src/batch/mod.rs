//! `flexmb batch`: a sweep of model variants run in parallel, one HDF5 file
//! per case and a summary table (`summary.csv`, `summary.h5`), resumable,
//! shardable across the tasks of a job array and merged with
//! `flexmb batch-merge`, with job scripts for Slurm and Kubernetes
//! (`flexmb batch --emit`; see `docs/batch.md`, `docs/cluster.md`).

mod case;
mod emit;
mod merge;
mod resume;
mod run;
mod shard;
mod summary;
mod sweep;

pub use case::{BatchError, CaseResult};
pub use emit::{
    default_shards, write_emitted, EmitSpec, EmitTarget, EmittedFile, MergeAfter, WallTime,
};
pub use merge::{merge_shards, MergeReport};
pub use run::{run_batch, split_cores, BatchOptions};
pub use shard::Shard;
pub use summary::{summary_file_name, summary_stem};
pub use sweep::{case_id, Case, Sweep};
