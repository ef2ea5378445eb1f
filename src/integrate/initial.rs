//! Consistent initial accelerations and multipliers:
//! `[M B^T; B 0] [a0; lambda0] = [F(u0, t0) + M g - P(u0); -gamma0]`,
//! `gamma0 = (B v0)_u v0 + Phi_tt + 2 Phi_tu v0` (index-1 form, Hoitink eq. 3.5);
//! before them, the check or projection of the initial positions and
//! velocities onto the constraints ([`initialize`]).

use crate::assembly::{diagnose_singular, SaddleSystem};
use crate::linalg::SaddlePointSolver;

use super::projector::{Metric, Projector};
use super::{State, StepError};
use crate::assembly::Mechanics;

/// Overwrites `state.a` and `state.lambda` with values consistent with
/// `state.u`, `state.v` at `state.t`.
pub fn consistent_initial(
    sys: &Mechanics<'_>,
    solver: &mut SaddlePointSolver,
    work: &mut SaddleSystem,
    state: &mut State,
) -> Result<(), StepError> {
    let n = sys.n_dofs();
    sys.fill_index1(&state.u, &state.v, state.t, None, work);
    let singular = |e: crate::linalg::SolveError, values: &[f64]| StepError::Singular {
        step: state.step,
        time: state.t,
        diagnosis: format!(
            "{e} while computing consistent initial accelerations: {}",
            diagnose_singular(sys, values, &state.u, state.t)
        ),
    };
    solver
        .factor(&work.values)
        .map_err(|e| singular(e, &work.values))?;
    let mut x: Vec<f64> = work.residual.iter().map(|r| -r).collect();
    solver
        .solve_to(&mut x, crate::linalg::REFINE_TOL)
        .map_err(|e| singular(e, &work.values))?;
    state.a.copy_from_slice(&x[..n]);
    state.lambda.copy_from_slice(&x[n..]);
    Ok(())
}

/// What to do with an initial state that violates its constraints:
/// `[integrator] initialize` (docs/model-format.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Initialize {
    /// Refuse an initial state whose position or velocity constraints are
    /// violated beyond [`initial_tolerance`] (the default).
    Check,
    /// Project it onto the constraints: positions by Newton's method on
    /// `Phi(u, 0) = 0`, then velocities onto `B v + Phi_t = 0`, each the
    /// mass-metric-smallest change ([`Projector`], Chin eq. 3.68).
    Project,
}

impl Initialize {
    /// The model-file name.
    pub fn name(self) -> &'static str {
        match self {
            Initialize::Check => "check",
            Initialize::Project => "project",
        }
    }

    /// The mode of a model-file name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "check" => Some(Initialize::Check),
            "project" => Some(Initialize::Project),
            _ => None,
        }
    }
}

/// The initial constraint residuals and what the projection changed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct InitialCorrection {
    /// `max |Phi(u0, t0)|` of the state as given.
    pub position_residual: f64,
    /// `max |B v0 + Phi_t|` of the state as given.
    pub velocity_residual: f64,
    /// `max |du|` of the projection (0 without one).
    pub position_moved: f64,
    /// `max |dv|` of the projection (0 without one).
    pub velocity_moved: f64,
}

impl InitialCorrection {
    /// One line for the terminal.
    pub fn describe(&self) -> String {
        let residuals = format!(
            "constraint residuals position {:.3e}, velocity {:.3e}",
            self.position_residual, self.velocity_residual
        );
        if self.position_moved > 0.0 || self.velocity_moved > 0.0 {
            format!(
                "{residuals}; projected: positions moved by up to {:.3e}, velocities by up to {:.3e}",
                self.position_moved, self.velocity_moved
            )
        } else {
            residuals
        }
    }
}

/// The largest initial violation accepted without a projection: `1e-8`
/// times `max(1, max |x|)` with `x` the positions (position level) or the
/// velocities (velocity level) of the state.
pub fn initial_tolerance(x: &[f64]) -> f64 {
    1e-8 * x.iter().fold(1.0_f64, |m, xi| m.max(xi.abs()))
}

/// The largest |entry| of a constraint residual with its joint, as text.
fn worst_row(sys: &Mechanics<'_>, r: &[f64]) -> (f64, String) {
    let (row, value) = r.iter().enumerate().fold((0, 0.0_f64), |(k, m), (i, x)| {
        if x.abs() > m || x.is_nan() {
            (i, x.abs())
        } else {
            (k, m)
        }
    });
    let name = match sys.constraint_owner(row) {
        Some((joint, kind, r)) => format!("{kind} '{joint}' row {r}"),
        None => format!("constraint row {row}"),
    };
    (value, name)
}

/// Makes the initial (u, v) of `state` consistent with the constraints
/// (`mode`), or refuses it naming the joint and the size of the violation.
pub fn initialize(
    sys: &Mechanics<'_>,
    state: &mut State,
    mode: Initialize,
    solver: crate::linalg::SolverChoice,
) -> Result<InitialCorrection, StepError> {
    let m = sys.n_constraints();
    let mut phi = vec![0.0; m];
    let mut rate = vec![0.0; m];
    sys.constraint_values(&state.u, state.t, &mut phi);
    sys.constraint_rates(&state.u, &state.v, state.t, &mut rate);
    let (p, p_joint) = worst_row(sys, &phi);
    let (v, v_joint) = worst_row(sys, &rate);
    let mut out = InitialCorrection {
        position_residual: p,
        velocity_residual: v,
        ..InitialCorrection::default()
    };
    let (p_tol, v_tol) = (initial_tolerance(&state.u), initial_tolerance(&state.v));
    // NaN residuals count as violations.
    let position_ok = p <= p_tol;
    let violated = !(position_ok && v <= v_tol);
    match mode {
        Initialize::Check if violated => {
            let (level, size, joint, tol) = if !position_ok {
                ("position", p, p_joint, p_tol)
            } else {
                ("velocity", v, v_joint, v_tol)
            };
            Err(StepError::Setup {
                reason: format!(
                    "the initial state violates the {level} constraint of {joint} by {size:.3e} \
                     (tolerance {tol:.3e}); correct the initial values or set \
                     `[integrator] initialize = \"project\"`"
                ),
            })
        }
        Initialize::Project if violated && m > 0 => {
            let mut projector = Projector::new(sys, Metric::Mass, solver)?;
            let (u0, v0) = (state.u.clone(), state.v.clone());
            projector.factor(sys, &state.u, state.t)?;
            projector.project_position(sys, &mut state.u, state.t, p_tol, 50)?;
            projector.factor(sys, &state.u, state.t)?;
            projector.project_velocity(sys, &state.u, &mut state.v, state.t)?;
            out.position_moved = max_diff(&state.u, &u0);
            out.velocity_moved = max_diff(&state.v, &v0);
            Ok(out)
        }
        _ => Ok(out),
    }
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .fold(0.0_f64, |m, (x, y)| m.max((x - y).abs()))
}
