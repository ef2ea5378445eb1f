//! `flexmb.run` (a whole run, as `flexmb run` does) and `flexmb.Simulation`
//! (the stepping handle, [`flexmb::run::Stepper`]). Both release the GIL
//! while they step and look for Ctrl-C between steps: a pending
//! `KeyboardInterrupt` stops the run at the end of the step (the output
//! file closed as `interrupted`) and is raised then.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::Duration;

use flexmb::integrate::{IntegratorConfig, State};
use flexmb::output::{Recording, Results};
use flexmb::run::{RunSummary, Simulation, Stepper};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{finite_f64, vector};
use crate::errors::{from_simulation, from_step, guard, Error};
use crate::model::{guard_plain, Guarded, PyModel};
use crate::results::{read_file, results_dict};

/// How often a run without the GIL takes it back to look for signals and
/// to call the progress callback.
pub(crate) const POLL: Duration = Duration::from_millis(20);

/// The signal number a `KeyboardInterrupt` stops a run with (SIGINT).
const SIGINT: usize = 2;

/// Where a run on the pool is, for the waiting thread's progress calls,
/// and the flag that stops it at the end of a step.
struct Shared {
    /// Time reached (f64 bits).
    t: AtomicU64,
    /// Steps taken.
    step: AtomicU64,
    /// Nonzero: stop at the end of the step (the signal number).
    stop: Arc<AtomicUsize>,
}

impl Shared {
    fn new() -> Self {
        Shared {
            t: AtomicU64::new(0f64.to_bits()),
            step: AtomicU64::new(0),
            stop: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Called by the run after each step.
    fn at(&self, t: f64, step: u64) {
        self.t.store(t.to_bits(), Ordering::Relaxed);
        self.step.store(step, Ordering::Relaxed);
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) != 0
    }
}

/// Runs `work` on a worker of rayon's pool, as the command line runs its
/// time loop (`with_threads` in src/bin/flexmb/main.rs: the parallel loops
/// of assembly and factorization then split on the pool without a
/// hand-over per loop), while this thread waits without the GIL and every
/// [`POLL`] takes it back briefly to look for signals and call
/// `progress(t, step)`. Signals are only seen on the main thread, which is
/// why the waiting thread polls and the pool steps. The first Python error
/// (a `KeyboardInterrupt`, or one the callback raised) is returned beside
/// the work's result, after the work stopped at the end of its step.
fn on_pool<T: Send>(
    py: Python<'_>,
    progress: Option<&Py<PyAny>>,
    shared: &Shared,
    work: impl FnOnce() -> T + Send,
) -> (T, Option<PyErr>) {
    py.detach(|| {
        rayon::in_place_scope(|scope| {
            let (tx, rx) = mpsc::channel();
            scope.spawn(move |_| {
                let _ = tx.send(work());
            });
            let mut pending: Option<PyErr> = None;
            loop {
                match rx.recv_timeout(POLL) {
                    Ok(result) => return (result, pending),
                    Err(mpsc::RecvTimeoutError::Timeout) if pending.is_none() => {
                        let t = f64::from_bits(shared.t.load(Ordering::Relaxed));
                        let step = shared.step.load(Ordering::Relaxed);
                        let polled = Python::attach(|py| {
                            py.check_signals()?;
                            if let Some(cb) = progress {
                                cb.call1(py, (t, step))?;
                            }
                            Ok::<(), PyErr>(())
                        });
                        if let Err(e) = polled {
                            pending = Some(e);
                            shared.stop.store(SIGINT, Ordering::Relaxed);
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    // The work is guarded (no panic leaves it): its sender
                    // is dropped only after sending.
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        unreachable!("the pool's work ended without a result")
                    }
                }
            }
        })
    })
}

/// What a run gives back: its histories and the method's totals, or the
/// error that stopped it.
struct Outcome {
    results: Results,
    stats: Vec<(String, f64)>,
    summary: RunSummary,
}

/// run(model, t_end=None, output=None, progress=None, force=False, record=True, **settings) -> dict
///
/// `record=False` (without `output`) keeps the energies, constraint
/// residuals, probes and statistics of every row but not `u`, `v`, `a`,
/// `lam` (a large model's states, as `flexmb run` without `-o` keeps none).
#[pyfunction]
#[pyo3(signature = (model, t_end=None, output=None, progress=None, force=false, record=true, **settings))]
// One argument per keyword of the Python signature.
#[allow(clippy::too_many_arguments)]
pub fn run<'py>(
    py: Python<'py>,
    model: &PyModel,
    t_end: Option<f64>,
    output: Option<&Bound<'py, PyAny>>,
    progress: Option<Py<PyAny>>,
    force: bool,
    record: bool,
    settings: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    if let Some(t) = t_end {
        finite_f64(t, "t_end")?;
    }
    let output: Option<PathBuf> = match output {
        Some(o) if !o.is_none() => Some(
            o.extract()
                .map_err(|_| PyTypeError::new_err("output: expected a str or os.PathLike"))?,
        ),
        _ => None,
    };
    let progress = progress.filter(|p| !p.is_none(py));
    if let Some(p) = &progress {
        if !p.bind(py).is_callable() {
            return Err(PyTypeError::new_err(
                "progress: expected a callable(t, step)",
            ));
        }
    }
    let config = model.config(py, None, t_end, settings)?;
    let file = Arc::clone(&model.file);
    if let (Some(path), false) = (&output, force) {
        let estimate = flexmb::run::output_estimate(&file.model, &config, &file.output, &file.text);
        estimate.check(path, file.output.max_bytes).map_err(|e| {
            crate::errors::OutputError::new_err(format!(
                "{}: {e} (force=True runs anyway)",
                path.display()
            ))
        })?;
    }
    let shared = Shared::new();
    let (outcome, pending) = on_pool(py, progress.as_ref(), &shared, || {
        guard_plain(|| {
            let sim = Simulation::new(file.model.clone()).stop_on(Arc::clone(&shared.stop));
            let mut each = |s: &State| shared.at(s.t, s.step);
            match &output {
                Some(path) => {
                    let summary = sim
                        .run_to_file(&config, &file.text, &file.output, Some(path), &mut each)
                        .map_err(|e| RunError::Output(e.to_string()))?;
                    let (results, stats) =
                        read_file(path).map_err(|e| RunError::Output(e.to_string()))?;
                    Ok(Outcome {
                        results,
                        stats,
                        summary,
                    })
                }
                None => {
                    let counters = config
                        .statistics()
                        .iter()
                        .filter(|s| s.integer)
                        .map(|s| s.name);
                    let what = if record {
                        Recording::all()
                    } else {
                        Recording {
                            energy: true,
                            constraints: true,
                            newton: true,
                            probes: true,
                            stats: true,
                            ..Recording::default()
                        }
                    };
                    let mut rec = Results::new(what).with_counters(counters);
                    let summary = sim
                        .run(&config, &file.text, &file.output, &mut rec, &mut each)
                        .map_err(|e| RunError::Output(e.to_string()))?;
                    Ok(Outcome {
                        results: rec,
                        stats: summary.stats.clone(),
                        summary,
                    })
                }
            }
        })
    });
    let outcome = outcome.map_err(|e| match e {
        Guarded::Err(RunError::Output(m)) => crate::errors::OutputError::new_err(m),
        Guarded::Panic(m) => Error::new_err(m),
    })?;
    let Outcome {
        results,
        stats,
        summary,
    } = outcome;
    if let (Some(cb), None) = (&progress, &pending) {
        // The last call: the bar ends where the run did.
        cb.call1(py, (summary.t_end_reached, summary.steps))?;
    }
    let d = guard(|| results_dict(py, results, stats))?;
    d.set_item("summary", summary.line())?;
    d.set_item("steps", summary.steps)?;
    d.set_item("wall_seconds", summary.wall_seconds)?;
    if let Some(e) = pending {
        // Ctrl-C (or the progress callback's error) after the step, with
        // the file closed as `interrupted`.
        if let Ok(v) = e.value(py).getattr("__dict__") {
            let _ = v.set_item("result", &d);
        }
        return Err(e);
    }
    if let Some(failure) = &summary.failure {
        let err = from_step(py, failure);
        let _ = err.value(py).setattr("result", &d);
        return Err(err);
    }
    Ok(d)
}

/// An output error of a run, as text (made into `flexmb.OutputError` once
/// the GIL is back).
enum RunError {
    Output(String),
}

/// A simulation in progress: `advance_to`, `step`, and the state between steps.
#[pyclass(module = "flexmb", name = "Simulation", subclass)]
pub struct PySimulation {
    stepper: Mutex<Stepper<'static>>,
    config: IntegratorConfig,
    model: Py<PyModel>,
}

impl PySimulation {
    /// The stepper, or an error when another thread is stepping it (waiting
    /// for it while holding the GIL would deadlock with that thread's
    /// signal polls).
    fn lock(&self) -> PyResult<MutexGuard<'_, Stepper<'static>>> {
        self.stepper.try_lock().map_err(|e| match e {
            TryLockError::WouldBlock => {
                PyRuntimeError::new_err("the simulation is busy: another thread is stepping it")
            }
            TryLockError::Poisoned(_) => {
                Error::new_err("the simulation was poisoned by an earlier internal error")
            }
        })
    }
}

#[pymethods]
impl PySimulation {
    #[new]
    #[pyo3(signature = (model, method=None, record=false, **settings))]
    fn new(
        py: Python<'_>,
        model: Bound<'_, PyModel>,
        method: Option<String>,
        record: bool,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let m = model.get();
        let config = m.config(py, method, None, settings)?;
        let file = Arc::clone(&m.file);
        let stepper = py
            .detach(|| guard_plain(|| Stepper::new(file.model.clone(), &config)))
            .map_err(|e| match e {
                Guarded::Err(e) => from_simulation(py, &e),
                Guarded::Panic(m) => Error::new_err(m),
            })?;
        let stepper = if record {
            stepper.record(Recording::all())
        } else {
            stepper
        };
        Ok(PySimulation {
            stepper: Mutex::new(stepper),
            config,
            model: model.unbind(),
        })
    }

    /// Steps until the time is `t` (GIL released; Ctrl-C stops at the end
    /// of a step and raises KeyboardInterrupt).
    #[pyo3(signature = (t, progress=None))]
    fn advance_to(&self, py: Python<'_>, t: f64, progress: Option<Py<PyAny>>) -> PyResult<()> {
        let mut sim = self.lock()?;
        sim.check_advance(t).map_err(|e| from_simulation(py, &e))?;
        let progress = progress.filter(|p| !p.is_none(py));
        let shared = Shared::new();
        let stepper = &mut *sim;
        let (r, pending) = on_pool(py, progress.as_ref(), &shared, || {
            guard_plain(|| {
                while stepper.time() < t && !shared.stopped() {
                    stepper.step(t)?;
                    shared.at(stepper.time(), stepper.steps());
                }
                Ok(())
            })
        });
        if let Some(e) = pending {
            return Err(e);
        }
        r.map_err(|e| match e {
            Guarded::Err(e) => from_step(py, &e),
            Guarded::Panic(m) => Error::new_err(m),
        })?;
        if let Some(cb) = &progress {
            cb.call1(py, (stepper.time(), stepper.steps()))?;
        }
        Ok(())
    }

    /// One step toward `t_stop` (default: the model's `t_end` while it is
    /// ahead, else as far again: the method's own step); returns the new time.
    #[pyo3(signature = (t_stop=None))]
    fn step(&self, py: Python<'_>, t_stop: Option<f64>) -> PyResult<f64> {
        let mut sim = self.lock()?;
        // Without a stop time: the model's t_end while it is ahead, then a
        // horizon as far again (a finite stop the method steps toward with
        // its own step: dt, or the adaptive step).
        let stop = t_stop.unwrap_or_else(|| {
            let (t, t_end) = (sim.time(), self.config.t_end);
            if t < t_end {
                t_end
            } else {
                t + t.abs().max(t_end.abs()).max(1.0)
            }
        });
        let stepper = &mut *sim;
        py.detach(|| guard_plain(|| stepper.step(stop).map(|_| stepper.time())))
            .map_err(|e| match e {
                Guarded::Err(e) => from_step(py, &e),
                Guarded::Panic(m) => Error::new_err(m),
            })
    }

    /// The current time.
    #[getter]
    fn t(&self) -> PyResult<f64> {
        Ok(self.lock()?.time())
    }

    /// Steps taken.
    #[getter]
    fn steps(&self) -> PyResult<u64> {
        Ok(self.lock()?.steps())
    }

    /// Positions now (a copy).
    #[getter]
    fn u<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(vector(py, self.lock()?.state().u.clone()))
    }

    /// Velocities now.
    #[getter]
    fn v<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(vector(py, self.lock()?.state().v.clone()))
    }

    /// Accelerations now.
    #[getter]
    fn a<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (a, _) = guard(|| Ok(self.lock()?.acceleration_and_multipliers()))?;
        Ok(vector(py, a))
    }

    /// Multipliers now.
    #[getter]
    fn lam<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (_, lam) = guard(|| Ok(self.lock()?.acceleration_and_multipliers()))?;
        Ok(vector(py, lam))
    }

    /// Kinetic, potential and total energy, and the work of the
    /// non-conservative forces since t = 0.
    fn energy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let e = guard(|| Ok(self.lock()?.energy()))?;
        let d = PyDict::new(py);
        d.set_item("kinetic", e.kinetic)?;
        d.set_item("potential", e.potential)?;
        d.set_item("total", e.total)?;
        d.set_item("external_work", e.external_work)?;
        Ok(d)
    }

    /// Max-norms of the constraint residuals at position, velocity and
    /// acceleration level.
    fn constraint_residuals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = guard(|| Ok(self.lock()?.constraint_residuals()))?;
        let d = PyDict::new(py);
        d.set_item("position", c.position)?;
        d.set_item("velocity", c.velocity)?;
        d.set_item("acceleration", c.acceleration)?;
        Ok(d)
    }

    /// The position coordinate `name` (e.g. `bob.x`).
    fn position(&self, py: Python<'_>, name: &str) -> PyResult<f64> {
        self.lock()?
            .position(name)
            .map_err(|e| from_simulation(py, &e))
    }

    /// The velocity of coordinate `name`.
    fn velocity(&self, py: Python<'_>, name: &str) -> PyResult<f64> {
        self.lock()?
            .velocity(name)
            .map_err(|e| from_simulation(py, &e))
    }

    /// The model's probe `name` now.
    fn probe(&self, py: Python<'_>, name: &str) -> PyResult<f64> {
        let sim = self.lock()?;
        guard(|| sim.probe(name).map_err(|e| from_simulation(py, &e)))
    }

    /// The method's statistics so far (name -> total).
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = self.lock()?;
        let d = PyDict::new(py);
        let counts: Vec<(&str, u64)> = sim.counts().collect();
        for (name, x) in sim.stats() {
            match counts.iter().find(|c| c.0 == name) {
                Some((_, c)) => d.set_item(name, *c)?,
                None => d.set_item(name, x)?,
            }
        }
        Ok(d)
    }

    /// The method's name and settings, as the output file's attributes give them.
    #[getter]
    fn method(&self) -> String {
        self.config.label()
    }

    /// The model.
    #[getter]
    fn model(&self, py: Python<'_>) -> Py<PyModel> {
        self.model.clone_ref(py)
    }

    /// The histories since the start (`record=True`), as `flexmb.run`'s
    /// fields; None when not recording.
    fn _results<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let sim = self.lock()?;
        let Some(r) = sim.results() else {
            return Ok(None);
        };
        let mut r = r.clone();
        let _ = flexmb::output::Recorder::finish(
            &mut r,
            &flexmb::output::RunStatus::Completed,
            sim.time(),
        );
        let stats = sim.stats().map(|(n, x)| (n.to_string(), x)).collect();
        guard(|| results_dict(py, r, stats)).map(Some)
    }

    fn __repr__(&self) -> PyResult<String> {
        let sim = self.lock()?;
        Ok(format!(
            "<flexmb.Simulation t = {} after {} steps, {}>",
            sim.time(),
            sim.steps(),
            self.config.label()
        ))
    }
}
