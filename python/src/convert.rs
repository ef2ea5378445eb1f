//! Python values to TOML values (settings, `set=` overrides, builder
//! entries, sweep dictionaries) and run histories to NumPy arrays.

use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// The TOML value of `obj`; `what` names the argument in errors. `None`
/// values inside tables are left out by the caller ([`toml_table`]).
pub fn toml_value(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<toml::Value> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(obj.extract()?));
    }
    if obj.is_instance_of::<PyInt>() {
        return obj.extract::<i64>().map(toml::Value::Integer).map_err(|_| {
            PyValueError::new_err(format!("{what}: integer {obj} does not fit in 64 bits"))
        });
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(obj.extract()?));
    }
    if obj.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(obj.extract()?));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        return toml_table(d, what).map(toml::Value::Table);
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (k, item) in obj.try_iter()?.enumerate() {
            items.push(toml_value(&item?, &format!("{what}[{k}]"))?);
        }
        return Ok(toml::Value::Array(items));
    }
    // NumPy arrays and scalars, os.PathLike.
    if obj.hasattr("tolist")? {
        let plain = obj.call_method0("tolist")?;
        if !plain.is(obj) {
            return toml_value(&plain, what);
        }
    }
    if obj.hasattr("__fspath__")? {
        let s: String = obj.call_method0("__fspath__")?.extract()?;
        return Ok(toml::Value::String(s));
    }
    Err(PyTypeError::new_err(format!(
        "{what}: expected a number, string, bool, list or dict, got {}",
        obj.get_type().name()?
    )))
}

/// The TOML table of a dict with string keys (entries whose value is
/// `None` are left out).
pub fn toml_table(d: &Bound<'_, PyDict>, what: &str) -> PyResult<toml::Table> {
    let mut table = toml::Table::new();
    for (k, v) in d.iter() {
        let key: String = k.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "{what}: keys must be strings, got {}",
                k.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
        if v.is_none() {
            continue;
        }
        let value = toml_value(&v, &format!("{what}[{key:?}]"))?;
        table.insert(key, value);
    }
    Ok(table)
}

/// A `rows x cols` row-major history as a 2-D NumPy array, without a copy
/// (the vector becomes the array's buffer).
pub fn matrix<'py>(py: Python<'py>, data: Vec<f64>, cols: usize) -> PyResult<Bound<'py, PyAny>> {
    let rows = data.len().checked_div(cols).unwrap_or(0);
    let a = PyArray1::from_vec(py, data);
    Ok(a.reshape([rows, cols])?.into_any())
}

/// A 1-D NumPy array owning `data`.
pub fn vector<T: numpy::Element>(py: Python<'_>, data: Vec<T>) -> Bound<'_, PyAny> {
    PyArray1::from_vec(py, data).into_any()
}

/// A float argument, with its name in the error.
pub fn finite_f64(x: f64, what: &str) -> PyResult<f64> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(PyValueError::new_err(format!(
            "{what} must be finite, got {x}"
        )))
    }
}
