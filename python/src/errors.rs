//! The package's exceptions and the engine's errors mapped onto them.
//!
//! `flexmb.Error` is the base; `ModelError` (`.file`, `.line`, `.field`),
//! `ConvergenceError` (`.time`, `.step`), `SingularSystemError` (`.time`,
//! `.step`) and `OutputError` derive from it. A Rust panic inside a call
//! becomes `flexmb.Error` ([`guard`]), never a crash of the interpreter.

use std::panic::{catch_unwind, AssertUnwindSafe};

use flexmb::input::ModelError as EngineModelError;
use flexmb::integrate::{SettingsError, StepError};
use flexmb::output::OutputError as EngineOutputError;
use flexmb::run::SimulationError;
use flexmb::statics::StaticError;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::BoundObject;

pyo3::create_exception!(
    flexmb,
    Error,
    PyException,
    "Base of every flexmb error (a Rust panic inside flexmb is one too)."
);
pyo3::create_exception!(
    flexmb,
    ModelError,
    Error,
    "A model file, model text, builder entry or integrator setting is wrong: `.file`, `.line` (1-based, or None) and `.field` (or None) say where."
);
pyo3::create_exception!(
    flexmb,
    ConvergenceError,
    Error,
    "A step did not converge (Newton failed, the adaptive step fell below round-off, too many steps): `.time` and `.step`."
);
pyo3::create_exception!(
    flexmb,
    SingularSystemError,
    Error,
    "The Newton (saddle-point) matrix is singular, e.g. a mechanism with redundant or missing constraints: `.time` and `.step`."
);
pyo3::create_exception!(
    flexmb,
    OutputError,
    Error,
    "An output file could not be written or read."
);

/// Sets attributes on a new exception instance.
fn with_attrs(py: Python<'_>, err: PyErr, attrs: &[(&str, Py<PyAny>)]) -> PyErr {
    let value = err.value(py);
    for (name, v) in attrs {
        // Exception instances take attributes; a failure here is not worth
        // hiding the original error for.
        let _ = value.setattr(*name, v.clone_ref(py));
    }
    err
}

fn opt<'py, T: IntoPyObject<'py>>(py: Python<'py>, x: Option<T>) -> Py<PyAny> {
    match x {
        Some(v) => v
            .into_pyobject(py)
            .map(|o| o.into_any().unbind())
            .unwrap_or_else(|_| py.None()),
        None => py.None(),
    }
}

/// The field a model error's message names: `(field `x`)` from the
/// builder, `unknown field `x`` from the TOML reader, or the first
/// backticked name after `[integrator] ` (python/tests/test_errors.py
/// checks each kind through the API).
pub fn field_of(message: &str) -> Option<String> {
    let tick = |s: &str| {
        let rest = s.strip_prefix('`')?;
        rest.find('`').map(|k| rest[..k].to_string())
    };
    if let Some(k) = message.find("field `") {
        return tick(&message[k + 6..]);
    }
    let rest = message.strip_prefix("[integrator] ")?;
    rest.find('`').and_then(|k| tick(&rest[k..]))
}

/// `flexmb.ModelError` with its location.
pub fn model_error(
    py: Python<'_>,
    message: String,
    file: Option<String>,
    line: Option<usize>,
    field: Option<String>,
) -> PyErr {
    let err = ModelError::new_err(message);
    with_attrs(
        py,
        err,
        &[
            ("file", opt(py, file)),
            ("line", opt(py, line)),
            ("field", opt(py, field)),
        ],
    )
}

/// The engine's model file error.
pub fn from_model(py: Python<'_>, e: &EngineModelError) -> PyErr {
    model_error(
        py,
        e.to_string(),
        Some(e.file.clone()),
        e.line,
        field_of(&e.message),
    )
}

/// An integrator setting error (models built in code have no file).
pub fn from_settings(py: Python<'_>, e: &SettingsError) -> PyErr {
    model_error(
        py,
        format!("[integrator] {}", e.message),
        None,
        None,
        Some(e.field.to_string()),
    )
}

/// A step error: convergence, singular matrix, or a setup problem.
pub fn from_step(py: Python<'_>, e: &StepError) -> PyErr {
    let message = e.to_string();
    let located = |err: PyErr, time: f64, step: Option<u64>| {
        with_attrs(
            py,
            err,
            &[("time", opt(py, Some(time))), ("step", opt(py, step))],
        )
    };
    match e {
        StepError::NewtonFailed { step, time, .. } | StepError::StepSize { step, time, .. } => {
            located(ConvergenceError::new_err(message), *time, Some(*step))
        }
        StepError::TooManySteps { time, .. } => {
            located(ConvergenceError::new_err(message), *time, None)
        }
        StepError::Singular { step, time, .. } => {
            located(SingularSystemError::new_err(message), *time, Some(*step))
        }
        StepError::StopTime { .. } => PyValueError::new_err(message),
        _ => Error::new_err(message),
    }
}

/// The stepping handle's errors.
pub fn from_simulation(py: Python<'_>, e: &SimulationError) -> PyErr {
    match e {
        SimulationError::Settings(s) => from_settings(py, s),
        SimulationError::Step(s) => from_step(py, s),
        SimulationError::Time { .. } => PyValueError::new_err(format!("t: {e}")),
        SimulationError::UnknownName { .. } => PyValueError::new_err(format!("name: {e}")),
    }
}

/// An output file error.
pub fn from_output(e: &EngineOutputError) -> PyErr {
    OutputError::new_err(e.to_string())
}

/// A static solve's failure.
pub fn from_static(py: Python<'_>, e: &StaticError, time: f64) -> PyErr {
    let message = e.to_string();
    match e {
        StaticError::NoConvergence { step, .. } => with_attrs(
            py,
            ConvergenceError::new_err(message),
            &[
                ("time", opt(py, Some(time))),
                ("step", opt(py, Some(u64::from(*step)))),
            ],
        ),
        StaticError::Singular { step, .. } => with_attrs(
            py,
            SingularSystemError::new_err(message),
            &[
                ("time", opt(py, Some(time))),
                ("step", opt(py, Some(u64::from(*step)))),
            ],
        ),
        #[allow(unreachable_patterns)]
        _ => Error::new_err(message),
    }
}

/// Runs `f`, turning a Rust panic into `flexmb.Error` (the message of the
/// panic, and that it is a bug of flexmb) instead of unwinding into Python.
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(Error::new_err(panic_message(payload.as_ref()))),
    }
}

/// The message of a caught panic: its text, said to be a bug of flexmb.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    format!("internal error in flexmb (a bug, please report it): {what}")
}

/// Registers the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("ModelError", py.get_type::<ModelError>())?;
    m.add("ConvergenceError", py.get_type::<ConvergenceError>())?;
    m.add("SingularSystemError", py.get_type::<SingularSystemError>())?;
    m.add("OutputError", py.get_type::<OutputError>())?;
    Ok(())
}
