//! `flexmb.sweep`: a parameter sweep run as `flexmb batch` runs it (cases in
//! parallel, one HDF5 file each, `summary.csv` and `summary.h5`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use flexmb::batch::{run_batch, summary_file_name, BatchOptions, Shard, Sweep};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::toml_table;
use crate::errors::{from_model, Error, OutputError};
use crate::model::{guard_plain, Guarded};
use crate::sim::POLL;

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
    // Ctrl-C: no further case starts, the running ones finish and the
    // summary lists the finished ones (as `flexmb batch`); then
    // KeyboardInterrupt. The sweep runs on its own thread while this one
    // looks for signals without the GIL, taking it every POLL.
    let stop = Arc::new(AtomicBool::new(false));
    let opts = BatchOptions {
        out: out.clone(),
        jobs,
        threads,
        shard: Shard { index: 0, count: 1 },
        resume: false,
        stop: Some(Arc::clone(&stop)),
        force,
    };
    let (result, pending) = py.detach(|| {
        std::thread::scope(|scope| {
            let worker = scope.spawn(|| guard_plain(|| run_batch(&parsed, &opts, &|_| {})));
            let mut pending = None;
            while !worker.is_finished() {
                std::thread::sleep(POLL);
                if pending.is_none() {
                    if let Err(e) = Python::attach(|py| py.check_signals()) {
                        pending = Some(e);
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            }
            let result = worker
                .join()
                .unwrap_or_else(|_| Err(Guarded::Panic("the sweep thread panicked".into())));
            (result, pending)
        })
    });
    result.map_err(|e| match e {
        Guarded::Err(e) => OutputError::new_err(e.to_string()),
        Guarded::Panic(m) => Error::new_err(m),
    })?;
    if let Some(e) = pending {
        return Err(e);
    }
    Ok(out
        .join(summary_file_name(Shard { index: 0, count: 1 }))
        .display()
        .to_string())
}
