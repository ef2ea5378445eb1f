//! Time integrators of the constrained equations of motion
//! `M a + P(u) + B(u)^T lambda = F(t)`, `Phi(u, t) = 0`: a family of methods
//! behind one contract.
//!
//! The problem is the model with its assembled operators, [`Mechanics`] (the neutral operators
//! M, f, K, D, Phi, B, gamma, curvature and discrete gradients at any state);
//! the method is an [`Integrator`] that owns its step:
//! [`Integrator::advance`] takes one accepted step toward a stop time, chosen
//! fixed (GSSSS, RK4, Heun), adaptively with rejections (Dormand–Prince), or
//! cut back after a Newton failure. Methods are built from typed settings by
//! one factory ([`IntegratorConfig::build`]) and declare their statistics
//! ([`StatSpec`]), which the run loop sums and the recorder writes.
//!
//! Methods: the GSSSS family and the two-field midpoint scheme ([`gssss`],
//! Hoitink) on one Newton driver; explicit Runge–Kutta with tableaux as data
//! on the index-1 form with Baumgarte or post-stabilization ([`rk`], Chin)
//! and the embedded projection method (Borri and Trainelli), sharing one
//! [`projector::Projector`]; Lens and Cardona's Galerkin schemes ([`galerkin`]: TCG
//! is a preset of the two-field scheme, TDG a two-state block Newton).

pub mod bdf;
pub mod epm;
pub mod galerkin;
pub mod gssss;
pub mod hht;
mod identity;
pub mod index1;
mod initial;
mod methods;
pub mod newton;
pub mod projector;
pub mod rk;
mod settings;

pub use gssss::{ConstraintOption, Family, Gssss, JacobianKind, LinearScheme, SolveForm, Variant};
pub use gssss::{GssssSettings, StepControl};
pub(crate) use identity::statistics;
pub use identity::{stat, Identity};
pub use initial::{
    consistent_initial, initial_tolerance, initialize, InitialCorrection, Initialize,
};
pub(crate) use methods::takes;
pub use methods::{method_keys, method_names, IntegratorConfig, MethodSettings};
pub use newton::{LineSearch, NewtonStop, NewtonTimings, Refactor};
pub use rk::{Formulation, RkSettings, RkStep, Stabilization};
pub(crate) use settings::check_step_count;
pub(crate) use settings::is_key;
pub use settings::{
    Build, FromTable, IntegratorSpec, KappaChoice, Method, OptionChoice, SettingsError, Steps,
    DEFAULT_MAX_STEPS, MAX_STEPS, MIN_STEP,
};

use crate::assembly::Mechanics;

/// A scalar value of a method's parameters ([`Integrator::parameters`]),
/// written by the recorders as run metadata.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// A floating point parameter (dt, rho1, tolerance, ...).
    F64(f64),
    /// An integer parameter (option, max_iter, ...).
    I64(i64),
    /// A string parameter (family, form, jacobian, ...).
    Str(String),
}

/// The state carried from step to step. `a` and `lambda` are the scheme's
/// variables (they may sit at a shifted time level, see [`Integrator::aligned`]).
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// Step number.
    pub step: u64,
    /// Time.
    pub t: f64,
    /// Positions.
    pub u: Vec<f64>,
    /// Velocities.
    pub v: Vec<f64>,
    /// Acceleration variable.
    pub a: Vec<f64>,
    /// Multiplier variable.
    pub lambda: Vec<f64>,
}

impl State {
    /// The model's initial positions and velocities at t = 0 (a and lambda zero
    /// until [`Integrator::start`]).
    pub fn initial(sys: &Mechanics<'_>) -> Self {
        State {
            step: 0,
            t: 0.0,
            u: sys.initial_positions().to_vec(),
            v: sys.initial_velocities().to_vec(),
            a: vec![0.0; sys.n_dofs()],
            lambda: vec![0.0; sys.n_constraints()],
        }
    }
}

/// Largest number of statistics a method declares.
pub const MAX_STATS: usize = 10;

/// How the per-step values of a statistic make the run's total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatTotal {
    /// A counter: the total is the sum (written as an integer).
    Sum,
    /// A measure: the total is the largest value.
    Max,
}

/// One statistic a method reports with every step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatSpec {
    /// Name: `/stats/<name>` per recorded step and the root attribute `stats.<name>`.
    pub name: &'static str,
    /// How steps combine.
    pub total: StatTotal,
    /// Whether the total is a count (written as an integer attribute).
    pub integer: bool,
}

impl StatSpec {
    /// A counter.
    pub const fn count(name: &'static str) -> Self {
        StatSpec {
            name,
            total: StatTotal::Sum,
            integer: true,
        }
    }

    /// A largest-value measure.
    pub const fn max(name: &'static str) -> Self {
        StatSpec {
            name,
            total: StatTotal::Max,
            integer: false,
        }
    }

    /// A summed measure (e.g. seconds spent).
    pub const fn sum(name: &'static str) -> Self {
        StatSpec {
            name,
            total: StatTotal::Sum,
            integer: false,
        }
    }
}

/// Combines the values of statistics `specs` of one step into running totals.
pub fn accumulate_stats(specs: &[StatSpec], totals: &mut [f64], step: &[f64]) {
    for ((s, t), x) in specs.iter().zip(totals.iter_mut()).zip(step) {
        match s.total {
            StatTotal::Sum => *t += x,
            // NaN-propagating: a non-finite measure must show in the total.
            StatTotal::Max => {
                if x.is_nan() || *x > *t {
                    *t = *x
                }
            }
        }
    }
}

/// What one accepted step did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepReport {
    /// Size of the accepted step.
    pub h: f64,
    /// Newton iterations (linear solves) of the accepted step (0 for explicit methods).
    pub newton_iterations: u32,
    /// Max-norm of the residual at the last evaluated Newton iterate (0 for explicit methods).
    pub residual: f64,
    /// Work of the non-conservative forces (loads other than gravity, dampers) over the step.
    pub external_work: f64,
    /// Values of the method's statistics ([`Integrator::statistics`]) for
    /// this step, rejected attempts included.
    pub stats: [f64; MAX_STATS],
}

impl StepReport {
    /// A report of a step of size `h` with every statistic zero.
    pub fn new(h: f64) -> Self {
        StepReport {
            h,
            newton_iterations: 0,
            residual: 0.0,
            external_work: 0.0,
            stats: [0.0; MAX_STATS],
        }
    }
}

/// Why a step (or the start of a run) failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StepError {
    /// Newton did not converge.
    #[error("Newton failed at step {step} (t = {}): {reason}; {}", fmt_time(*.time), describe_failure(.history, .largest))]
    NewtonFailed {
        /// Step number being computed.
        step: u64,
        /// Target time t_{n+1}.
        time: f64,
        /// Iterations done.
        iterations: u32,
        /// Cause.
        reason: String,
        /// (residual max-norm, acceleration-increment max-norm) per iteration.
        history: Vec<(f64, f64)>,
        /// The largest residual entries at the last iterate, named.
        largest: Vec<(String, f64)>,
    },
    /// The Newton matrix is singular.
    #[error("singular system at step {step} (t = {}): {diagnosis}", fmt_time(*.time))]
    Singular {
        /// Step number.
        step: u64,
        /// Time.
        time: f64,
        /// What makes it singular, in model terms.
        diagnosis: String,
    },
    /// An adaptive method's step fell below the round-off of the time.
    #[error("step size too small at step {step} (t = {}): h = {h:.3e} after {rejected} rejected attempts", fmt_time(*.time))]
    StepSize {
        /// Step number being computed.
        step: u64,
        /// Time.
        time: f64,
        /// The step size.
        h: f64,
        /// Rejected attempts of this step.
        rejected: u32,
    },
    /// An adaptive method needed more steps than its limit `max_steps`
    /// (HNW's NMAX): the solution is stiff or blows up for this method.
    #[error("more than {limit} steps needed by t = {} (the adaptive method's `max_steps`); the problem may be stiff for it", fmt_time(*.time))]
    TooManySteps {
        /// The limit.
        limit: u64,
        /// Time reached.
        time: f64,
    },
    /// A step was asked toward a stop time that is not ahead of the current
    /// time (or not finite): a step never goes back in time.
    #[error("cannot step from t = {} toward t_stop = {t_stop:e}: {reason}", fmt_time(*.time))]
    StopTime {
        /// The current time.
        time: f64,
        /// The requested stop time.
        t_stop: f64,
        /// Why.
        reason: &'static str,
    },
    /// The integrator could not be set up.
    #[error("integrator setup failed: {reason}")]
    Setup {
        /// Cause.
        reason: String,
    },
}

/// A time without binary noise: 12 decimals, trailing zeros removed (4.7700000000000005 -> 4.77).
pub fn fmt_time(t: f64) -> String {
    let s = format!("{t:.12}");
    let s = s.trim_end_matches('0');
    s.strip_suffix('.').unwrap_or(s).to_string()
}

fn describe_failure(history: &[(f64, f64)], largest: &[(String, f64)]) -> String {
    let shown: Vec<String> = history
        .iter()
        .rev()
        .take(8)
        .rev()
        .map(|(r, _)| format!("{r:.2e}"))
        .collect();
    let worst: Vec<String> = largest
        .iter()
        .map(|(n, v)| format!("{n} = {v:.3e}"))
        .collect();
    format!(
        "residual history (last {} of {} iterations): {}; largest residual entries: {}",
        shown.len(),
        history.len(),
        shown.join(" "),
        worst.join(", ")
    )
}

/// The `k` largest |entries| of a residual `[e1 (DOFs); e2 (constraint rows)]`
/// with their DOF or joint names.
pub fn largest_entries(sys: &Mechanics<'_>, residual: &[f64], k: usize) -> Vec<(String, f64)> {
    let n = sys.n_dofs();
    let mut idx: Vec<usize> = (0..residual.len()).collect();
    let key = |i: usize| {
        let v = residual[i].abs();
        if v.is_nan() {
            f64::INFINITY
        } else {
            v
        }
    };
    idx.sort_by(|&a, &b| key(b).total_cmp(&key(a)));
    idx.into_iter()
        .take(k)
        .map(|i| {
            let name = if i < n {
                format!("equation of motion of {}", sys.dof_name(i))
            } else {
                match sys.constraint_owner(i - n) {
                    Some((j, kind, r)) => format!("constraint {kind} '{j}'[{r}]"),
                    None => format!("constraint row {}", i - n),
                }
            };
            (name, residual[i])
        })
        .collect()
}

/// A time integration method: it owns its step. `Send`, so that a
/// stepping handle can move between threads (the Python package steps
/// with the interpreter lock released).
pub trait Integrator: Send {
    /// Its label, run metadata and statistics, as its settings declared them.
    fn identity(&self) -> &Identity;
    /// Descriptive name, e.g. `GSSSS V0(1,1,0), option 2, a-form`.
    fn name(&self) -> String {
        self.identity().label.clone()
    }
    /// Parameters for the output metadata.
    fn parameters(&self) -> Vec<(String, AttrValue)> {
        self.identity().parameters.clone()
    }
    /// The statistics every [`StepReport`] carries, in order.
    fn statistics(&self) -> &'static [StatSpec] {
        self.identity().statistics
    }
    /// Makes `state.a` and `state.lambda` consistent with `state.u`, `state.v`.
    fn start(&mut self, sys: &Mechanics<'_>, state: &mut State) -> Result<(), StepError>;
    /// Takes one accepted step from `state.t` toward `t_stop`, never past it:
    /// the method chooses the step, and rejects and retries inside.
    fn advance(
        &mut self,
        sys: &Mechanics<'_>,
        state: &mut State,
        t_stop: f64,
    ) -> Result<StepReport, StepError>;
    /// Whether [`Integrator::interpolate`] serves times inside the last step.
    fn has_dense_output(&self) -> bool {
        false
    }
    /// The state at `t` inside the last accepted step (dense output), with
    /// consistent a and lambda; only called when [`Integrator::has_dense_output`].
    fn interpolate(
        &mut self,
        _sys: &Mechanics<'_>,
        _t: f64,
        _out: &mut State,
    ) -> Result<(), StepError> {
        Err(StepError::Setup {
            reason: format!("{} has no dense output", self.name()),
        })
    }
    /// Acceleration and multipliers at `state.t` (undoing the time-level shift
    /// of the scheme's variables by linear extrapolation, Hoitink §4.1.1 and eq. 3.31).
    fn aligned(&self, state: &State, a: &mut [f64], lambda: &mut [f64]);
    /// Where the Newton iterations spent their time, when measured.
    fn timings(&self) -> Option<NewtonTimings> {
        None
    }
}

/// The saddle-point solver of the model's pattern (symbolic analysis once);
/// a failure is a setup error of the method.
pub fn saddle_solver(
    sys: &Mechanics<'_>,
    solver: crate::linalg::SolverChoice,
) -> Result<crate::linalg::SaddlePointSolver, StepError> {
    crate::linalg::SaddlePointSolver::with_factorization(
        sys.pattern(),
        solver.force_sparse,
        solver.factorization,
    )
    .map_err(|e| StepError::Setup {
        reason: e.to_string(),
    })
}

/// The solver of the systems `[M B^T; B 0]` and `[W B^T; B 0]` with the
/// model's mass or the identity (index-1 evaluations and projections): with
/// a diagonal constant mass and no configuration-dependent inertia it tries
/// the Schur complement first ([`crate::linalg::DiagonalSchur`]), otherwise
/// it is [`saddle_solver`].
pub fn mass_system_solver(
    sys: &Mechanics<'_>,
    solver: crate::linalg::SolverChoice,
) -> Result<crate::linalg::SaddlePointSolver, StepError> {
    let mass = sys.mass_matrix();
    let diagonal = mass.iter().all(|(_, (r, c))| r == c) && !sys.has_configuration_inertia();
    let pattern = sys.pattern();
    let solver = if diagonal && !solver.force_sparse {
        crate::linalg::SaddlePointSolver::with_diagonal_mass(pattern, sys.n_dofs(), false)
    } else {
        crate::linalg::SaddlePointSolver::with_factorization(
            pattern,
            solver.force_sparse,
            solver.factorization,
        )
    };
    solver.map_err(|e| StepError::Setup {
        reason: e.to_string(),
    })
}

/// A fixed-step grid: steps of `h` from `t0`, `k` of them taken. The end of
/// the next step toward `t_stop` is the next grid point, or `t_stop` when
/// that is within round-off of it or past it (the last step may be shorter).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedGrid {
    /// Origin.
    pub t0: f64,
    /// Step.
    pub h: f64,
    /// Steps taken on this grid.
    pub k: u64,
}

impl FixedGrid {
    /// A grid of steps `h` from `t0`.
    pub fn new(t0: f64, h: f64) -> Self {
        FixedGrid { t0, h, k: 0 }
    }

    /// The end of the next step toward `t_stop`.
    pub fn target(&self, t_stop: f64) -> f64 {
        let t = self.t0 + (self.k + 1) as f64 * self.h;
        if t >= t_stop - 1e-9 * (t_stop - self.t0).max(self.h) {
            t_stop
        } else {
            t
        }
    }
}

/// Number of steps of size dt to reach t_end (the last one may be shorter).
pub fn step_count(t_end: f64, dt: f64) -> u64 {
    let r = t_end / dt;
    let k = r.round();
    if (r - k).abs() <= 1e-9 * r.max(1.0) {
        k as u64
    } else {
        r.ceil() as u64
    }
}
