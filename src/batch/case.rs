//! What one case of a sweep did ([`CaseResult`]) and the batch-level
//! errors ([`BatchError`]): the types that running the cases
//! (`batch/run.rs`), writing their summary (`batch/summary.rs`), emitting
//! and merging share.

use std::path::PathBuf;

use super::sweep::Case;
use crate::output::SizeError;
use crate::run::RunSummary;

/// What one case did.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// The case.
    pub case: Case,
    /// Its HDF5 file, if the run started.
    pub output: Option<PathBuf>,
    /// The run's summary, if the model built and the run started.
    pub summary: Option<RunSummary>,
    /// Why the case failed: bad model or integrator settings, a step
    /// failure, or an output error; `None` when it completed.
    pub failure: Option<String>,
    /// `--resume` found the case completed: not run again, its summary read
    /// back from its file.
    pub resumed: bool,
    /// Wall time of the whole case in this batch (s): operators, time loop
    /// and output file; 0 for a case that did not run (its model did not
    /// build, or `--resume` skipped it).
    pub wall_seconds: f64,
}

impl CaseResult {
    /// `completed` or `failed`.
    pub fn status(&self) -> &'static str {
        if self.failure.is_some() {
            "failed"
        } else {
            "completed"
        }
    }

    /// One line for the terminal.
    pub fn line(&self) -> String {
        match &self.summary {
            Some(s) if self.resumed => {
                format!("{}: skipped (--resume): {}", self.case.id, s.line())
            }
            Some(s) => format!("{}: {}", self.case.id, s.line()),
            None => format!(
                "{}: FAILED: {}",
                self.case.id,
                self.failure.as_deref().unwrap_or_default()
            ),
        }
    }
}

/// A batch-level error (the output folder or the summary cannot be written).
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// A file or folder could not be written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A summary could not be written or read.
    #[error("{}: {message}", .path.display())]
    Summary {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A case's output would be too large; no case ran.
    #[error("case {case}: {source}; no case ran")]
    CaseOutput {
        /// The case id.
        case: String,
        /// The case's estimate against its limit or the free space.
        source: SizeError,
    },
    /// The cases' outputs together would not fit; no case ran.
    #[error(
        "the {cases} cases to run need an estimated {bytes:.3e} bytes of output together \
         (uncompressed), more than the {free:.3e} bytes free on the file system of {}; \
         record fewer rows or fields ([output] every, dt_out, fields), run a shard at a time \
         (--shard), or give --force; no case ran",
        .dir.display()
    )]
    FreeSpace {
        /// Cases that would run.
        cases: usize,
        /// Their estimated output together.
        bytes: f64,
        /// Bytes available to this user.
        free: f64,
        /// The output folder.
        dir: PathBuf,
    },
    /// `--jobs` times `--threads` exceeds the cores; no case ran.
    #[error(
        "{jobs} jobs x {threads} threads per case = {} threads, more than the {cores} cores; \
         give fewer --jobs or --threads (or leave one out: it then takes the cores left), no case ran",
        .jobs * .threads
    )]
    Oversubscribed {
        /// Cases at the same time.
        jobs: usize,
        /// Threads per case.
        threads: usize,
        /// Cores available (the global rayon pool: RAYON_NUM_THREADS, else the cores).
        cores: usize,
    },
    /// The thread pool could not be started.
    #[error("cannot start {jobs} worker threads: {message}")]
    Pool {
        /// Requested threads.
        jobs: usize,
        /// Why.
        message: String,
    },
}
