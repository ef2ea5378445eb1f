//! The size of a run's output before it is written: the HDF5 layout's
//! datasets ([`plan_columns`], [`plan_fixed`]) for a number of recorded rows,
//! plus the XDMF side file, checked against a soft limit and the free space
//! of the output file system (`docs/output-format.md`, "Size").

use std::path::Path;

use super::hdf5::xdmf;
use super::hdf5::{plan_columns, plan_fixed, FixedData, POINTS};
use super::{OutputConfig, RunInfo};

/// Default soft limit of a run's output (`[output] max_bytes`), 10 GB.
pub const DEFAULT_MAX_BYTES: f64 = 1e10;

/// Bytes of file metadata per written chunk (its entry in the chunk index),
/// and per file (superblock, object headers of the groups and datasets,
/// attributes other than the model text): measured upper bounds of
/// `rust-hdf5`'s layout, checked by `tests/output_size.rs`.
const CHUNK_INDEX_BYTES: f64 = 64.0;
const FILE_BYTES: f64 = 64.0 * 1024.0;
/// Bytes of metadata per dataset (object header, layout, chunk index header).
const DATASET_BYTES: f64 = 1024.0;

/// The estimated size of a run's output files.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SizeEstimate {
    /// Recorded rows (the initial state, the recorded steps, the last one).
    pub rows: u64,
    /// Values of one recorded row in bytes, over every streamed dataset.
    pub row_bytes: f64,
    /// `Some(max_steps)` when `rows` is an upper bound rather than a count:
    /// an adaptive method's step count is known only after the run, and it
    /// takes at most `max_steps` steps.
    pub max_steps: Option<u64>,
    /// The HDF5 file and its XDMF side file, in bytes: every chunk the rows
    /// touch (chunks are written whole), the chunk index, the datasets
    /// written once, the model text and the file's metadata. Without
    /// compression: with `[output] compression` the file is smaller.
    pub bytes: f64,
}

impl SizeEstimate {
    /// The size of a run of `info` recording `rows` rows with `config`;
    /// `max_steps` as in [`SizeEstimate::max_steps`].
    pub fn new(
        config: &OutputConfig,
        info: &RunInfo,
        rows: u64,
        max_steps: Option<u64>,
    ) -> SizeEstimate {
        // `plan_columns` fails only for a mesh naming columns beyond the
        // model's; such a run fails at `begin` before writing anything.
        let columns = plan_columns(Path::new(""), config, info).unwrap_or_default();
        let rows_f = rows as f64;
        let (mut row_bytes, mut bytes) = (0.0, FILE_BYTES);
        for c in &columns {
            let (n, elem) = (c.row_len(), c.dtype().size() as f64);
            row_bytes += n as f64 * elem;
            bytes += DATASET_BYTES;
            if n == 0 {
                continue;
            }
            let bands = rows.div_ceil(c.chunk_rows as u64) as f64;
            let tiles = n.div_ceil(c.chunk_cols) as f64;
            let chunk = (c.chunk_rows * c.chunk_cols) as f64 * elem;
            bytes += bands * tiles * (chunk + CHUNK_INDEX_BYTES);
        }
        for f in plan_fixed(info) {
            bytes += DATASET_BYTES
                + match &f.data {
                    FixedData::F64(v) => 8.0 * v.len() as f64,
                    FixedData::I64(v) => 8.0 * v.len() as f64,
                    // A variable-length string: its heap object and reference.
                    FixedData::Str(v) => v.iter().map(|s| s.len() as f64 + 32.0).sum(),
                };
        }
        bytes += info.model_text.len() as f64;
        // The XDMF side file: one spatial collection per recorded row.
        if config.xdmf != Some(false) && columns.iter().any(|c| c.path == POINTS) {
            let doc = xdmf::document("run.h5", &info.mesh, &[0.0]);
            let two = xdmf::document("run.h5", &info.mesh, &[0.0, 1.0]).len() as f64;
            let one = doc.len() as f64;
            // Times as `{:?}` take up to 24 characters ("1.2345678901234567e-5");
            // each grid of a row names its row and the row count (3 numbers).
            let grids = doc.matches("/points row").count() as f64;
            let digits = rows_f.max(1.0).log10().floor() + 1.0;
            bytes += one + (two - one + 24.0 + 3.0 * grids * digits) * rows_f;
        }
        SizeEstimate {
            rows,
            row_bytes,
            max_steps,
            bytes,
        }
    }

    /// Refuses the estimate when it exceeds `limit` bytes (the soft limit,
    /// `[output] max_bytes`) or, for an exact row count, the space available
    /// on the file system that holds `path` (when that can be read: a missing
    /// folder is reported when the file is created). An adaptive method's
    /// bound past the free space is not refused (its real step count is
    /// usually far below `max_steps`): [`SizeEstimate::free_space_warning`]
    /// says so, and a disk that fills stops the run with the file readable.
    pub fn check(&self, path: &Path, limit: f64) -> Result<(), SizeError> {
        if self.bytes > limit {
            return Err(SizeError::Limit {
                estimate: *self,
                limit,
            });
        }
        match self.past_free_space(path) {
            Some(e) if self.max_steps.is_none() => Err(e),
            _ => Ok(()),
        }
    }

    /// For an adaptive method's bound (`max_steps` set) past the space free
    /// on `path`'s file system: the warning to print before the run.
    pub fn free_space_warning(&self, path: &Path) -> Option<String> {
        self.max_steps?;
        self.past_free_space(path).map(|e| {
            format!(
                "{e}; the run goes on, as the bound is rarely reached: a disk that fills \
                 stops it (exit 5) with the file readable up to its last flush"
            )
        })
    }

    fn past_free_space(&self, path: &Path) -> Option<SizeError> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let free = fs4::available_space(dir).ok()? as f64;
        (self.bytes > free).then(|| SizeError::FreeSpace {
            estimate: *self,
            free,
            dir: dir.display().to_string(),
        })
    }

    fn describe(&self) -> String {
        let bound = match self.max_steps {
            Some(n) => format!(
                "; at most: the adaptive method may take up to max_steps = {n} steps, \
                 lower [integrator] max_steps or record by time ([output] dt_out)"
            ),
            None => String::new(),
        };
        format!(
            "an estimated {:.3e} bytes ({} recorded rows of {} bytes, uncompressed{bound})",
            self.bytes, self.rows, self.row_bytes
        )
    }
}

/// A run's output would be too large (see [`SizeEstimate::check`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SizeError {
    /// Past the soft limit.
    #[error(
        "the output needs {}, more than the limit of {limit:.3e} bytes \
         ([output] max_bytes); record fewer rows or fields ([output] every, dt_out, fields), \
         raise max_bytes, or give --force",
        .estimate.describe()
    )]
    Limit {
        /// The estimate.
        estimate: SizeEstimate,
        /// The limit in bytes.
        limit: f64,
    },
    /// Past the free space of the output file system.
    #[error(
        "the output needs {}, more than the {free:.3e} bytes free on the file system of {dir}; \
         record fewer rows or fields ([output] every, dt_out, fields), or give --force",
        .estimate.describe()
    )]
    FreeSpace {
        /// The estimate.
        estimate: SizeEstimate,
        /// Bytes available to this user.
        free: f64,
        /// The output folder.
        dir: String,
    },
}
