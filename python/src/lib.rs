//! `flexmb._flexmb`: the native part of the Python package `flexmb`
//! (PyO3, abi3). The engine crate stays free of Python: this crate maps its
//! public API (model files, `run::Simulation`, `run::Stepper`,
//! `output::read_hdf5`, `statics`, `batch`) onto Python objects, NumPy arrays
//! and exceptions; `python/flexmb/__init__.py` adds the pure-Python layer
//! (`Result`, `ModelBuilder`, the progress bar).

use pyo3::prelude::*;

mod convert;
mod errors;
mod model;
mod results;
mod sim;
mod sweep;

/// Panics inside a guarded call: the test of the panic-to-`flexmb.Error`
/// mapping (python/tests/test_errors.py).
#[pyfunction]
fn _panic_for_tests() -> PyResult<()> {
    errors::guard(|| panic!("a panic raised on purpose by _panic_for_tests"))
}

#[pymodule]
fn _flexmb(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The pool the runs step on (sim.rs), with the command line's 8 MiB
    // stacks (src/bin/flexmb/main.rs); RAYON_NUM_THREADS sets its size. A
    // global pool another extension built first is used as it is.
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(8 << 20)
        .build_global();
    errors::register(m)?;
    m.add_class::<model::PyModel>()?;
    m.add_class::<sim::PySimulation>()?;
    m.add_function(wrap_pyfunction!(model::load, m)?)?;
    m.add_function(wrap_pyfunction!(model::loads, m)?)?;
    m.add_function(wrap_pyfunction!(model::static_equilibrium, m)?)?;
    m.add_function(wrap_pyfunction!(sim::run, m)?)?;
    m.add_function(wrap_pyfunction!(results::read_hdf5, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep, m)?)?;
    m.add_function(wrap_pyfunction!(model::to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(model::build, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
