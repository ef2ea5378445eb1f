//! Time integrators of the constrained equations of motion
//! `M a + P(u) + B(u)^T lambda = F(t)`, `Phi(u, t) = 0`.
//!
//! Integrators see only the global operators of the [`Assembler`]. The GSSSS
//! family ([`gssss`]) and the two-field midpoint scheme ([`two_field`]) are
//! linear forms ([`scheme::LinearScheme`]) run by one Newton implementation
//! ([`newton::OneStepIntegrator`]).

mod config;
pub mod gssss;
mod initial;
pub mod newton;
pub mod scheme;
pub mod two_field;

pub use config::{IntegratorConfig, IntegratorSpec, Method, OptionChoice};
pub use gssss::{Family, Gssss, SolveForm};
pub use newton::{NewtonStop, NewtonTimings, Refactor};
pub use scheme::{ConstraintOption, JacobianKind, LinearScheme};

use crate::assembly::Assembler;
use crate::model::Model;
use crate::output::AttrValue;

/// The model and its assembled operators, as integrators see them.
#[derive(Clone, Copy)]
pub struct System<'a> {
    /// The model.
    pub model: &'a Model,
    /// Its assembler.
    pub asm: &'a Assembler,
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
    pub fn initial(model: &Model) -> Self {
        State {
            step: 0,
            t: 0.0,
            u: model.u0.clone(),
            v: model.v0.clone(),
            a: vec![0.0; model.n_dofs()],
            lambda: vec![0.0; model.n_constraints()],
        }
    }
}

/// Statistics of one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepStats {
    /// Newton iterations (linear solves).
    pub iterations: u32,
    /// Factorizations of the Newton matrix (fewer than `iterations` with
    /// modified Newton).
    pub factorizations: u32,
    /// Max-norm of the residual at the last evaluated iterate.
    pub residual: f64,
    /// Work of the non-conservative forces (loads other than gravity, dampers) over the step.
    pub external_work: f64,
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
pub fn largest_entries(model: &Model, residual: &[f64], k: usize) -> Vec<(String, f64)> {
    let n = model.n_dofs();
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
                format!("equation of motion of {}", model.dofs.name(i))
            } else {
                match model.constraint_owner(i - n) {
                    Some((j, kind, r)) => format!("constraint {kind} '{j}'[{r}]"),
                    None => format!("constraint row {}", i - n),
                }
            };
            (name, residual[i])
        })
        .collect()
}

/// A time integrator.
pub trait Integrator {
    /// Descriptive name, e.g. `GSSSS V0(1,1,0), option 2, a-form`.
    fn name(&self) -> String;
    /// Parameters for the output metadata.
    fn parameters(&self) -> Vec<(String, AttrValue)>;
    /// Makes `state.a` and `state.lambda` consistent with `state.u`, `state.v`.
    fn start(&mut self, sys: &System<'_>, state: &mut State) -> Result<(), StepError>;
    /// Advances `state` by `dt`.
    fn step(
        &mut self,
        sys: &System<'_>,
        state: &mut State,
        dt: f64,
    ) -> Result<StepStats, StepError>;
    /// Acceleration and multipliers at `state.t` (undoing the time-level shift
    /// of the scheme's variables by linear extrapolation, seed 000 §4.1.1 and eq. 3.31).
    fn aligned(&self, state: &State, a: &mut [f64], lambda: &mut [f64]);
}

/// Convenience: the system view of a model and its assembler.
pub fn system<'a>(model: &'a Model, asm: &'a Assembler) -> System<'a> {
    System { model, asm }
}
