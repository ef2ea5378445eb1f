//! The stepping handle: a model, its method and its state, advanced on
//! demand and inspected between steps. [`Simulation::run`] drives one to
//! record a file; a library user drives one directly.

use std::ops::Deref;

use super::{run_info, RowBuffers, Simulation};
use crate::integrate::{
    accumulate_stats, check_step_count, initialize, InitialCorrection, Initialize, Integrator,
    IntegratorConfig, SettingsError, State, StepError, StepReport,
};
use crate::model::Model;
use crate::output::{
    ConstraintNorms, Energy, NewtonStats, Recorder, Recording, Results, RunStatus, StepRecord,
};

/// Why the stepping handle could not start or go on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimulationError {
    /// The integrator configuration cannot run (the field and why).
    #[error("integrator `{field}`: {0}", field = .0.field)]
    Settings(#[from] SettingsError),
    /// The method failed to start or to take a step.
    #[error(transparent)]
    Step(#[from] StepError),
    /// `advance_to` was asked for a time it cannot reach.
    #[error("cannot advance from t = {from} to t = {to}: {reason}")]
    Time {
        /// Current time.
        from: f64,
        /// Requested time.
        to: f64,
        /// Why.
        reason: &'static str,
    },
    /// No DOF or probe has this name.
    #[error("no {what} named '{name}'")]
    UnknownName {
        /// `DOF` or `probe`.
        what: &'static str,
        /// The name asked for.
        name: String,
    },
}

/// The simulation a [`Stepper`] steps: owned, or borrowed from the caller.
enum Problem<'a> {
    Owned(Box<Simulation>),
    Borrowed(&'a Simulation),
}

impl Deref for Problem<'_> {
    type Target = Simulation;
    fn deref(&self) -> &Simulation {
        match self {
            Problem::Owned(s) => s,
            Problem::Borrowed(s) => s,
        }
    }
}

/// A simulation in progress: advance it, look at it, go on.
///
/// ```
/// use flexmb::integrate::IntegratorConfig;
/// use flexmb::model::{DistanceKind, ModelBuilder, PointRef};
/// use flexmb::run::Stepper;
///
/// // A point mass on a massless rod of length 1, released horizontally.
/// let mut b = ModelBuilder::new(2)?;
/// b.node("bob", &[1.0, 0.0], None, 1.0)?;
/// let pivot = PointRef::Ground([0.0; 3]);
/// b.distance("rod", &pivot, &PointRef::entity("bob"), None, DistanceKind::Length)?;
/// b.gravity(&[0.0, -9.81])?;
/// let mut sim = Stepper::new(b.build()?, &IntegratorConfig::gssss().dt(1e-3))?;
/// sim.advance_to(0.5)?;
/// let (x, y) = (sim.position("bob.x")?, sim.position("bob.y")?);
/// assert!((x.hypot(y) - 1.0).abs() < 1e-10); // on the circle
/// assert!(sim.constraint_residuals().position < 1e-10);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Stepper<'a> {
    problem: Problem<'a>,
    integrator: Box<dyn Integrator>,
    state: State,
    /// How the initial state is checked or projected, and on which solver.
    initialize: (Initialize, crate::linalg::SolverChoice),
    /// What the start found and changed in the initial state.
    initial: InitialCorrection,
    /// Work of the non-conservative forces and of the rheonomic joints
    /// since t = 0.
    work: f64,
    /// The rheonomic joints' constraint work: their power at the last step's
    /// end and the aligned acceleration and multipliers it is computed from
    /// (`None` when the model has no rheonomic joint).
    rheonomic: Option<ConstraintPower>,
    steps: u64,
    newton_iterations: u64,
    /// The step of a fixed-step method (`None` for the adaptive ones, whose
    /// `max_steps` limits them).
    fixed_step: Option<f64>,
    /// Totals of the method's statistics.
    totals: Vec<f64>,
    /// The histories kept in memory ([`Stepper::record`]), if any.
    recording: Option<Box<StepperRecording>>,
}

/// A recording stepper's histories and its row buffers.
struct StepperRecording {
    rows: RowBuffers,
    results: Results,
}

/// Power `lambda . Phi_t` of the rheonomic joints at the last step's end,
/// with its workspace (no allocation per step).
struct ConstraintPower {
    power: f64,
    a: Vec<f64>,
    lambda: Vec<f64>,
}

impl Stepper<'static> {
    /// Assembles `model`, builds the method of `config` and starts it at the
    /// model's initial state (t = 0).
    pub fn new(model: Model, config: &IntegratorConfig) -> Result<Self, SimulationError> {
        config.check()?;
        let mut s = Stepper::build(Problem::Owned(Box::new(Simulation::new(model))), config)?;
        s.start()?;
        Ok(s)
    }
}

impl Simulation {
    /// A stepping handle on this simulation, started at the model's initial
    /// state with the method of `config`.
    pub fn stepper(&self, config: &IntegratorConfig) -> Result<Stepper<'_>, SimulationError> {
        config.check()?;
        let mut s = Stepper::build(Problem::Borrowed(self), config)?;
        s.start()?;
        Ok(s)
    }
}

impl<'a> Stepper<'a> {
    /// The method of `config` on `problem`, at the initial state, not started.
    fn build(problem: Problem<'a>, config: &IntegratorConfig) -> Result<Self, StepError> {
        let integrator = config.build(&problem.mechanics())?;
        let state = State::initial(&problem.mechanics());
        let totals = vec![0.0; integrator.statistics().len()];
        let model = &problem.model;
        let rheonomic = model.has_rheonomic_joints().then(|| ConstraintPower {
            power: 0.0,
            a: vec![0.0; model.n_dofs()],
            lambda: vec![0.0; model.n_constraints()],
        });
        Ok(Stepper {
            problem,
            integrator,
            state,
            initialize: (config.initialize, config.solver()),
            initial: InitialCorrection::default(),
            work: 0.0,
            rheonomic,
            steps: 0,
            newton_iterations: 0,
            fixed_step: config.fixed_step(),
            totals,
            recording: None,
        })
    }

    /// The method of `config` on `sim`, not started: [`Simulation::run`]
    /// describes the method to its recorder before starting it.
    pub(super) fn unstarted(
        sim: &'a Simulation,
        config: &IntegratorConfig,
    ) -> Result<Self, StepError> {
        Self::build(Problem::Borrowed(sim), config)
    }

    /// Checks or projects the initial state onto the constraints
    /// (`[integrator] initialize`), then makes its accelerations and
    /// multipliers consistent, which factors the initial saddle-point matrix.
    pub(super) fn start(&mut self) -> Result<InitialCorrection, StepError> {
        let sys = self.problem.mechanics();
        let (mode, solver) = self.initialize;
        self.initial = initialize(&sys, &mut self.state, mode, solver)?;
        self.integrator.start(&sys, &mut self.state)?;
        if let Some(p) = &mut self.rheonomic {
            p.power = constraint_power(&self.problem, self.integrator.as_ref(), &self.state, p);
        }
        Ok(self.initial)
    }

    /// What the start found in the initial state and how far its check or
    /// projection moved it.
    pub fn initial_correction(&self) -> InitialCorrection {
        self.initial
    }

    /// Takes one accepted step toward `t_stop` (never past it, and never
    /// longer than the method's step: `dt` of the fixed-step methods,
    /// `max_step` of the adaptive ones) and adds it to the totals. A
    /// `t_stop` that is not ahead of the current time is refused with
    /// [`StepError::StopTime`], and the state is left as it was.
    #[inline]
    pub fn step(&mut self, t_stop: f64) -> Result<StepReport, StepError> {
        let time = self.state.t;
        if !t_stop.is_finite() || t_stop <= time {
            return Err(StepError::StopTime {
                time,
                t_stop,
                reason: if t_stop.is_finite() {
                    "the stop time must be after the current time (a step never goes back)"
                } else {
                    "the stop time must be finite"
                },
            });
        }
        let sys = self.problem.mechanics();
        let mut report = self.integrator.advance(&sys, &mut self.state, t_stop)?;
        if let Some(p) = &mut self.rheonomic {
            // The rheonomic joints' work by the trapezoidal rule on their
            // power at the step's ends.
            let p1 = constraint_power(&self.problem, self.integrator.as_ref(), &self.state, p);
            report.external_work += 0.5 * report.h * (p.power + p1);
            p.power = p1;
        }
        self.work += report.external_work;
        self.steps += 1;
        self.newton_iterations += u64::from(report.newton_iterations);
        accumulate_stats(
            self.integrator.statistics(),
            &mut self.totals,
            &report.stats,
        );
        if let Some(mut r) = self.recording.take() {
            accumulate_stats(
                self.integrator.statistics(),
                &mut r.rows.stats,
                &report.stats,
            );
            let newton = NewtonStats {
                iterations: report.newton_iterations,
                residual: report.residual,
            };
            let row = r
                .rows
                .write_row(self, &self.state, newton, self.work, &mut r.results);
            self.recording = Some(r);
            // Recording into memory cannot fail.
            debug_assert!(row.is_ok());
        }
        Ok(report)
    }

    /// Keeps the histories of `what` in memory from now on (the current
    /// state is the first row, then every accepted step), as
    /// [`Simulation::run`] records them every step: [`Stepper::results`]
    /// holds them as column arrays, bit for bit what the HDF5 file of the
    /// same run holds ([`crate::output::read_hdf5`]). Each step then also
    /// evaluates the energy, residuals and probes of its row; the storage
    /// grows by amortized doubling.
    ///
    /// ```
    /// use flexmb::integrate::IntegratorConfig;
    /// use flexmb::model::{Body2d, ModelBuilder, PointRef};
    /// use flexmb::output::Recording;
    /// use flexmb::run::Stepper;
    ///
    /// let mut b = ModelBuilder::new(2)?;
    /// b.gravity(&[0.0, -9.81])?;
    /// b.body2d("bob", Body2d::new(1.0, 0.0).at(1.0, 0.0, 0.0))?;
    /// b.ground_pin("pin", &PointRef::on("bob", [-1.0, 0.0]), &[0.0, 0.0])?;
    /// let config = IntegratorConfig::gssss().dt(1e-2);
    /// let mut sim = Stepper::new(b.build()?, &config)?
    ///     .record(Recording { u: true, energy: true, ..Default::default() });
    /// sim.advance_to(1.0)?;
    /// let results = sim.results().expect("recording");
    /// let y = results.dof("bob.y")?;
    /// assert_eq!((y.len(), y[0]), (101, 0.0));
    /// assert!(y.iter().fold(0.0_f64, |m, &y| m.min(y)) < -0.99); // it swung through the bottom
    /// let e = results.energy("total")?;
    /// assert!((e[100] - e[0]).abs() < 1e-9);
    /// assert!(results.probe("tip").is_err()); // not recorded
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn record(mut self, what: Recording) -> Self {
        let specs = self.integrator.statistics();
        let counters = specs.iter().filter(|s| s.integer).map(|s| s.name);
        let mut results = Results::new(what).with_counters(counters);
        let info = run_info(
            self.model(),
            self.integrator.name(),
            self.integrator.parameters(),
            specs,
            "",
        );
        let mut rows = RowBuffers::new(self.model(), specs.len());
        // Recording into memory cannot fail.
        let _ = results.begin(&info);
        let _ = rows.write_row(
            &self,
            &self.state,
            NewtonStats::default(),
            self.work,
            &mut results,
        );
        self.recording = Some(Box::new(StepperRecording { rows, results }));
        self
    }

    /// The histories recorded since [`Stepper::record`] (`None` when not
    /// recording).
    pub fn results(&self) -> Option<&Results> {
        self.recording.as_ref().map(|r| &r.results)
    }

    /// The recorded histories, ended as a completed run at the current time
    /// (`None` when not recording).
    pub fn into_results(self) -> Option<Results> {
        let t = self.state.t;
        self.recording.map(|r| {
            let mut results = r.results;
            let _ = results.finish(&RunStatus::Completed, t);
            results
        })
    }

    /// Steps until the time is `t`. Advancing in pieces takes the same steps
    /// as one call when the pieces end on the method's step grid.
    pub fn advance_to(&mut self, t: f64) -> Result<(), SimulationError> {
        self.check_advance(t)?;
        while self.state.t < t {
            self.step(t)?;
        }
        Ok(())
    }

    /// The checks of [`Stepper::advance_to`] without stepping: `t` finite,
    /// not before the current time, and (fixed steps) within the step
    /// count limit. A caller stepping to `t` in its own loop (the Python
    /// package, which looks for Ctrl-C between steps) checks with it first.
    pub fn check_advance(&self, t: f64) -> Result<(), SimulationError> {
        let from = self.state.t;
        if !t.is_finite() {
            return Err(SimulationError::Time {
                from,
                to: t,
                reason: "the time must be finite",
            });
        }
        if t < from {
            return Err(SimulationError::Time {
                from,
                to: t,
                reason: "the simulation cannot go back in time",
            });
        }
        if let Some(dt) = self.fixed_step {
            // The command line's limit on t_end / dt, for the steps left.
            check_step_count(dt, t - from)?;
        }
        Ok(())
    }

    /// The simulation (model and operators).
    pub fn simulation(&self) -> &Simulation {
        &self.problem
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.problem.model
    }

    /// The method.
    #[inline]
    pub fn integrator(&self) -> &dyn Integrator {
        self.integrator.as_ref()
    }

    /// The current state (time, positions, velocities and the method's
    /// acceleration and multiplier variables).
    #[inline]
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The current time.
    #[inline]
    pub fn time(&self) -> f64 {
        self.state.t
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Newton iterations over all steps.
    pub fn newton_iterations(&self) -> u64 {
        self.newton_iterations
    }

    /// Work of the non-conservative forces (loads other than gravity,
    /// dampers) and of the rheonomic joints since t = 0.
    #[inline]
    pub fn external_work(&self) -> f64 {
        self.work
    }

    /// The method's statistics over the steps taken (name, total), in its order.
    pub fn stats(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.integrator
            .statistics()
            .iter()
            .zip(&self.totals)
            .map(|(s, &x)| (s.name, x))
    }

    /// The method's counters over the steps taken (name, count), in its
    /// order: the counters of [`Stepper::stats`] as integers.
    pub fn counts(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.integrator
            .statistics()
            .iter()
            .zip(&self.totals)
            .filter(|(s, _)| s.integer)
            .map(|(s, &x)| (s.name, x.round() as u64))
    }

    /// The total of the method's counter `name` so far (`None` for a
    /// measure or a name the method does not report).
    pub fn count(&self, name: &str) -> Option<u64> {
        self.counts().find(|c| c.0 == name).map(|c| c.1)
    }

    /// Energy of `state` with the work `work` done on the system until then.
    #[inline]
    pub(super) fn energy_at(&self, state: &State, work: f64) -> Energy {
        let sim: &Simulation = &self.problem;
        let mut e = sim.mechanics().energy(&state.u, &state.v);
        e.external_work = work;
        e
    }

    /// Kinetic, potential and total energy now, and the work done since t = 0.
    pub fn energy(&self) -> Energy {
        self.energy_at(&self.state, self.work)
    }

    /// Acceleration and multipliers at the current time (the method's
    /// variables aligned to `t`, [`Integrator::aligned`]).
    pub fn acceleration_and_multipliers(&self) -> (Vec<f64>, Vec<f64>) {
        let mut a = vec![0.0; self.model().n_dofs()];
        let mut lambda = vec![0.0; self.model().n_constraints()];
        self.integrator.aligned(&self.state, &mut a, &mut lambda);
        (a, lambda)
    }

    /// Max-norms of the constraint residuals at position, velocity and
    /// acceleration level now.
    pub fn constraint_residuals(&self) -> ConstraintNorms {
        let (a, _) = self.acceleration_and_multipliers();
        let sim: &Simulation = &self.problem;
        let s = &self.state;
        sim.mechanics().constraint_norms(&s.u, &s.v, &a, s.t)
    }

    fn dof(&self, name: &str) -> Result<usize, SimulationError> {
        self.model()
            .dofs
            .names()
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| SimulationError::UnknownName {
                what: "DOF",
                name: name.to_string(),
            })
    }

    /// The position coordinate named `name` (e.g. `bob.x`, `crank.theta`).
    pub fn position(&self, name: &str) -> Result<f64, SimulationError> {
        Ok(self.state.u[self.dof(name)?])
    }

    /// The velocity of the coordinate named `name`.
    pub fn velocity(&self, name: &str) -> Result<f64, SimulationError> {
        Ok(self.state.v[self.dof(name)?])
    }

    /// The value of the model's probe `name` now.
    pub fn probe(&self, name: &str) -> Result<f64, SimulationError> {
        let probe = self
            .model()
            .probes
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| SimulationError::UnknownName {
                what: "probe",
                name: name.to_string(),
            })?;
        let (a, lambda) = self.acceleration_and_multipliers();
        let sim: &Simulation = &self.problem;
        let s = &self.state;
        let record = StepRecord {
            step: s.step,
            time: s.t,
            u: &s.u,
            v: &s.v,
            a: &a,
            lambda: &lambda,
            energy: self.energy(),
            constraints: sim.mechanics().constraint_norms(&s.u, &s.v, &a, s.t),
            newton: NewtonStats::default(),
            probes: &[],
            stats: &[],
        };
        Ok(probe.value(&record))
    }

    /// The state at `t` inside the last step, from the method's dense output.
    pub(super) fn interpolate(&mut self, t: f64, out: &mut State) -> Result<(), StepError> {
        let sys = self.problem.mechanics();
        self.integrator.interpolate(&sys, t, out)
    }
}

/// `lambda . Phi_t` of the rheonomic joints at `state` (the method's
/// multipliers aligned to its time, [`Integrator::aligned`]).
fn constraint_power(
    sim: &Simulation,
    integrator: &dyn Integrator,
    state: &State,
    ws: &mut ConstraintPower,
) -> f64 {
    integrator.aligned(state, &mut ws.a, &mut ws.lambda);
    sim.mechanics()
        .constraint_power(&state.u, &ws.lambda, state.t)
}
