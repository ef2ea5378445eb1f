//! `flexmb.sweep`: a parameter sweep run as `flexmb batch` runs it (cases in
//! parallel, one HDF5 file each, `summary.csv` and `summary.h5`).

use std::path::{Path, PathBuf};

use flexmb::batch::{run_batch, summary_file_name, BatchOptions, Shard, Sweep};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::toml_table;
use crate::errors::{from_model, Error, OutputError};
use crate::model::{guard_plain, Guarded};

/// _sweep(sweep, out_dir, jobs=None, threads=None, force=False) -> str: runs
/// the sweep (a sweep file's path, or a dict of its tables whose `base` is
/// relative to the current folder) and returns the summary CSV's path.
#[pyfunction]
#[pyo3(signature = (sweep, out_dir, jobs=None, threads=None, force=false))]
pub fn sweep(
    py: Python<'_>,
    sweep: &Bound<'_, PyAny>,
    out_dir: &Bound<'_, PyAny>,
    jobs: Option<i64>,
    threads: Option<i64>,
    force: bool,
) -> PyResult<String> {
    let out: PathBuf = out_dir
        .extract()
        .map_err(|_| PyTypeError::new_err("out_dir: expected a str or os.PathLike"))?;
    let count = |x: Option<i64>, what: &str| -> PyResult<usize> {
        match x {
            None => Ok(0),
            Some(n) if n >= 1 => Ok(n as usize),
            Some(n) => Err(PyValueError::new_err(format!(
                "{what} must be at least 1, got {n}"
            ))),
        }
    };
    let (jobs, threads) = (count(jobs, "jobs")?, count(threads, "threads")?);
    let parsed = if let Ok(d) = sweep.cast::<PyDict>() {
        let text = toml::to_string(&toml_table(d, "sweep")?)
            .map_err(|e| PyValueError::new_err(format!("sweep: {e}")))?;
        Sweep::from_str_with(&text, "<sweep dict>", Path::new(""), force)
    } else {
        let path: PathBuf = sweep.extract().map_err(|_| {
            PyTypeError::new_err("sweep: expected a sweep file's path or a dict of its tables")
        })?;
        Sweep::from_file_with(&path, force)
    }
    .map_err(|e| from_model(py, &e))?;
    let opts = BatchOptions {
        out: out.clone(),
        jobs,
        threads,
        shard: Shard { index: 0, count: 1 },
        resume: false,
        stop: None,
        force,
    };
    py.detach(|| guard_plain(|| run_batch(&parsed, &opts, &|_| {})))
        .map_err(|e| match e {
            Guarded::Err(e) => OutputError::new_err(e.to_string()),
            Guarded::Panic(m) => Error::new_err(m),
        })?;
    Ok(out
        .join(summary_file_name(Shard { index: 0, count: 1 }))
        .display()
        .to_string())
}
