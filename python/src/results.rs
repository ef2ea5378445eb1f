//! A run's histories ([`flexmb::output::Results`]) as a dict of NumPy
//! arrays, which `flexmb.Result` (Python) wraps; `read_hdf5`.

use flexmb::output::{AttrValue, Hdf5Reader, Results, RunSource, RunStatus, StatValues};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{matrix, vector};
use crate::errors::{from_output, guard};
use crate::model::{guard_plain, Guarded};

/// `(status, reason)` of a run.
pub fn status_of(s: Option<&RunStatus>) -> (&'static str, Option<String>) {
    match s {
        Some(RunStatus::Completed) => ("completed", None),
        Some(RunStatus::Failed { reason }) => ("failed", Some(reason.clone())),
        Some(RunStatus::Interrupted { reason }) => ("interrupted", Some(reason.clone())),
        None => ("running", None),
    }
}

/// The fields of `flexmb.Result`; `stats` holds the method's totals over
/// the run (name -> number).
pub fn results_dict<'py>(
    py: Python<'py>,
    r: Results,
    stats: Vec<(String, f64)>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let (status, reason) = status_of(r.status.as_ref());
    d.set_item("status", status)?;
    d.set_item("reason", reason)?;
    d.set_item("t_end_reached", r.t_end_reached)?;
    d.set_item("integrator", &r.integrator)?;
    d.set_item("model_text", &r.model_text)?;
    d.set_item("dof_names", &r.dof_names)?;
    d.set_item("multiplier_names", &r.multiplier_names)?;
    let (n, m) = (r.dof_names.len(), r.multiplier_names.len());
    d.set_item("time", vector(py, r.time))?;
    d.set_item("step", vector(py, r.step))?;
    d.set_item("u", matrix(py, r.u.into_vec(), n)?)?;
    d.set_item("v", matrix(py, r.v.into_vec(), n)?)?;
    d.set_item("a", matrix(py, r.a.into_vec(), n)?)?;
    d.set_item("lam", matrix(py, r.lambda.into_vec(), m)?)?;
    let series = |list: Vec<flexmb::output::Series<f64>>| -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for s in list {
            out.set_item(s.name, vector(py, s.values))?;
        }
        Ok(out)
    };
    d.set_item("energy", series(r.energies)?)?;
    d.set_item("constraints", series(r.constraints)?)?;
    d.set_item("probes", series(r.probes)?)?;
    // Counters as integers, measures as floats (as the file's attributes).
    let counters: Vec<String> = r
        .stats
        .iter()
        .filter(|s| matches!(s.values, StatValues::Count(_)))
        .map(|s| s.name.clone())
        .collect();
    let per_step = PyDict::new(py);
    for s in r.stats {
        match s.values {
            StatValues::Count(c) => per_step.set_item(s.name, vector(py, c))?,
            StatValues::Measure(x) => per_step.set_item(s.name, vector(py, x))?,
        }
    }
    d.set_item("stats_per_row", per_step)?;
    let totals = PyDict::new(py);
    for (name, x) in stats {
        let integer = counters.contains(&name) || name == "newton_iterations";
        if integer && x.fract() == 0.0 && x.abs() < 9e15 {
            totals.set_item(name, x as i64)?;
        } else {
            totals.set_item(name, x)?;
        }
    }
    d.set_item("stats", totals)?;
    d.set_item("newton_iterations", vector(py, r.newton_iterations))?;
    d.set_item("newton_residual", vector(py, r.newton_residual))?;
    Ok(d)
}

/// A run file read back: its histories, and the method's totals from its
/// root attributes (`stats.<name>`).
pub fn read_file(
    path: &std::path::Path,
) -> Result<(Results, Vec<(String, f64)>), flexmb::output::OutputError> {
    let reader = Hdf5Reader::open(path)?;
    let results = reader.results()?;
    let stats = reader
        .root_attrs()?
        .into_iter()
        .filter_map(|(name, v)| {
            let name = name.strip_prefix("stats.")?.to_string();
            match v {
                AttrValue::I64(i) => Some((name, i as f64)),
                AttrValue::F64(x) => Some((name, x)),
                _ => None,
            }
        })
        .collect();
    Ok((results, stats))
}

/// read_hdf5(path) -> dict: a run file written by `flexmb run` or `flexmb.run`.
#[pyfunction]
pub fn read_hdf5<'py>(py: Python<'py>, path: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let path: std::path::PathBuf = path
        .extract()
        .map_err(|_| PyTypeError::new_err("path: expected a str or os.PathLike"))?;
    let (results, stats) = py
        .detach(|| guard_plain(|| read_file(&path)))
        .map_err(|e| match e {
            Guarded::Err(e) => from_output(&e),
            Guarded::Panic(m) => crate::errors::Error::new_err(m),
        })?;
    guard(|| results_dict(py, results, stats))
}
