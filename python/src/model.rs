//! `flexmb.Model`: a loaded model file (or the text a `ModelBuilder`
//! wrote), with `load`, `loads` and `static`.

use std::sync::Arc;

use flexmb::input::{load_model_with_sets, ModelFile};
use flexmb::integrate::{IntegratorConfig, IntegratorSpec};
use flexmb::statics::{solve_static, StaticOptions};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{toml_table, toml_value, vector};
use crate::errors::{from_model, from_static, guard, model_error};

/// A mechanism with its file's `[integrator]` and `[output]` settings.
#[pyclass(module = "flexmb", name = "Model", frozen)]
pub struct PyModel {
    pub(crate) file: Arc<ModelFile>,
}

impl PyModel {
    /// The integrator configuration of the model's `[integrator]` table
    /// with the keyword `settings` (the table's names) on top, checked by
    /// the engine (a key the method does not take is refused).
    pub(crate) fn config(
        &self,
        py: Python<'_>,
        method: Option<String>,
        t_end: Option<f64>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<IntegratorConfig> {
        let mut table = match settings {
            Some(d) => toml_table(d, "settings")?,
            None => toml::Table::new(),
        };
        if let Some(m) = method {
            table.insert("method".into(), toml::Value::String(m));
        }
        if let Some(t) = t_end {
            table.insert("t_end".into(), toml::Value::Float(t));
        }
        let spec: IntegratorSpec =
            toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| {
                    let message = e.message().trim().to_string();
                    let field = crate::errors::field_of(&message);
                    model_error(py, format!("settings: {message}"), None, None, field)
                })?;
        self.file.integrator(&spec).map_err(|e| from_model(py, &e))
    }
}

#[pymethods]
impl PyModel {
    /// DOF names, e.g. `bob.x`, in the order of `u`, `v`, `a`.
    #[getter]
    fn dof_names(&self) -> Vec<String> {
        self.file.model.dofs.names().to_vec()
    }

    /// Number of DOFs.
    #[getter]
    fn n_dofs(&self) -> usize {
        self.file.model.n_dofs()
    }

    /// Number of constraint equations (multipliers).
    #[getter]
    fn n_constraints(&self) -> usize {
        self.file.model.n_constraints()
    }

    /// Multiplier names, e.g. `pin[0]`, in the order of `lam`.
    #[getter]
    fn multiplier_names(&self) -> Vec<String> {
        self.file.model.multiplier_names()
    }

    /// Probe names.
    #[getter]
    fn probe_names(&self) -> Vec<String> {
        self.file
            .model
            .probes
            .iter()
            .map(|p| p.name.clone())
            .collect()
    }

    /// 2 or 3.
    #[getter]
    fn dimension(&self) -> usize {
        self.file.model.dim
    }

    /// The model file's text (the text a builder wrote, the overrides applied).
    #[getter]
    fn text(&self) -> String {
        self.file.text.clone()
    }

    /// The file name (`<builder>` or `<string>` for models not from a file).
    #[getter]
    fn file(&self) -> String {
        self.file.file.clone()
    }

    /// The title, if the file gives one.
    #[getter]
    fn title(&self) -> Option<String> {
        self.file.title.clone()
    }

    /// The end time of the model's `[integrator]` table (None when the
    /// table does not resolve).
    #[getter]
    fn t_end(&self) -> Option<f64> {
        self.file
            .integrator(&IntegratorSpec::default())
            .ok()
            .map(|c| c.t_end)
    }

    /// The initial positions.
    #[getter]
    fn u0<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        vector(py, self.file.model.u0.clone())
    }

    fn __repr__(&self) -> String {
        format!(
            "<flexmb.Model {}: {}-D, {} DOFs, {} constraints>",
            self.file.file,
            self.file.model.dim,
            self.file.model.n_dofs(),
            self.file.model.n_constraints()
        )
    }
}

/// `set=` overrides as the command line's `--set KEY=VALUE` strings.
fn sets(set: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(set) = set else {
        return Ok(Vec::new());
    };
    if set.is_none() {
        return Ok(Vec::new());
    }
    let d = set
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("set: expected a dict of KEY: VALUE"))?;
    let mut out = Vec::new();
    for (k, v) in d.iter() {
        let key: String = k.extract().map_err(|_| {
            PyTypeError::new_err("set: keys must be strings such as \"generator.elements\"")
        })?;
        let value = toml_value(&v, &format!("set[{key:?}]"))?;
        out.push(format!("{key}={value}"));
    }
    Ok(out)
}

/// A model from TOML `text`; `name` names it in messages.
pub(crate) fn from_text(
    py: Python<'_>,
    text: &str,
    name: &str,
    set: Vec<String>,
) -> PyResult<PyModel> {
    let file = py
        .detach(|| guard_plain(|| load_model_with_sets(text, name, &set)))
        .map_err(|e| match e {
            Guarded::Err(e) => from_model(py, &e),
            Guarded::Panic(m) => crate::errors::Error::new_err(m),
        })?;
    Ok(PyModel {
        file: Arc::new(file),
    })
}

/// A result or a caught panic's message, from code run without the GIL.
pub(crate) enum Guarded<E> {
    Err(E),
    Panic(String),
}

/// Runs `f`, catching a panic (as [`guard`] does, without the GIL).
pub(crate) fn guard_plain<T, E>(f: impl FnOnce() -> Result<T, E>) -> Result<T, Guarded<E>> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(Guarded::Err),
        Err(payload) => Err(Guarded::Panic(crate::errors::panic_message(
            payload.as_ref(),
        ))),
    }
}

/// load(path, set=None) -> Model: a model file with `--set` overrides.
#[pyfunction]
#[pyo3(signature = (path, set=None))]
pub fn load(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
    set: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyModel> {
    let path: std::path::PathBuf = path
        .extract()
        .map_err(|_| PyTypeError::new_err("path: expected a str or os.PathLike"))?;
    let set = sets(set)?;
    let name = path.display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| {
        model_error(
            py,
            format!("{name}: cannot read the model file: {e}"),
            Some(name.clone()),
            None,
            None,
        )
    })?;
    from_text(py, &text, &name, set)
}

/// loads(text, name="<string>", set=None) -> Model: a model from TOML text.
#[pyfunction]
#[pyo3(signature = (text, name="<string>", set=None))]
pub fn loads(
    py: Python<'_>,
    text: &str,
    name: &str,
    set: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyModel> {
    let set = sets(set)?;
    from_text(py, text, name, set)
}

/// static(model, steps=10, tol=1e-10, max_iter=30, time=0.0) -> dict:
/// load-stepped static equilibrium (`u`, `lam`, `iterations`, `residual`).
#[pyfunction(name = "static")]
#[pyo3(signature = (model, steps=10, tol=1e-10, max_iter=30, time=0.0))]
pub fn static_equilibrium<'py>(
    py: Python<'py>,
    model: &PyModel,
    steps: i64,
    tol: f64,
    max_iter: i64,
    time: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let steps = u32::try_from(steps)
        .ok()
        .filter(|&s| s >= 1)
        .ok_or_else(|| PyValueError::new_err(format!("steps must be at least 1, got {steps}")))?;
    let max_iter = u32::try_from(max_iter)
        .ok()
        .filter(|&s| s >= 1)
        .ok_or_else(|| {
            PyValueError::new_err(format!("max_iter must be at least 1, got {max_iter}"))
        })?;
    if !(tol > 0.0 && tol.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "tol must be positive, got {tol}"
        )));
    }
    crate::convert::finite_f64(time, "time")?;
    let opts = StaticOptions {
        steps,
        tol,
        max_iter,
        time,
    };
    let file = Arc::clone(&model.file);
    let sol = py
        .detach(move || guard_plain(|| solve_static(&file.model, &opts)))
        .map_err(|e| match e {
            Guarded::Err(e) => from_static(py, &e, time),
            Guarded::Panic(m) => crate::errors::Error::new_err(m),
        })?;
    guard(|| {
        let d = PyDict::new(py);
        d.set_item("u", vector(py, sol.u))?;
        d.set_item("lam", vector(py, sol.lambda))?;
        d.set_item("iterations", sol.iterations)?;
        d.set_item("residual", sol.residual)?;
        d.set_item("dof_names", model.file.model.dofs.names().to_vec())?;
        Ok(d)
    })
}

/// The TOML text of a model file's tables given as a dict (`ModelBuilder`).
fn builder_text(doc: &Bound<'_, PyDict>) -> PyResult<String> {
    let table = toml_table(doc, "model")?;
    toml::to_string(&table).map_err(|e| PyValueError::new_err(format!("model: {e}")))
}

/// _to_toml(doc) -> str: the model file text of a builder's tables.
#[pyfunction(name = "_to_toml")]
pub fn to_toml(doc: &Bound<'_, PyDict>) -> PyResult<String> {
    builder_text(doc)
}

/// _build(doc) -> Model: a builder's tables read as a model file named
/// `<builder>` (errors name the entity and field; lines are those of
/// `ModelBuilder.to_toml()`).
#[pyfunction(name = "_build")]
pub fn build(py: Python<'_>, doc: &Bound<'_, PyDict>) -> PyResult<PyModel> {
    let text = builder_text(doc)?;
    from_text(py, &text, "<builder>", Vec::new())
}
