//! Newton settings of the implicit methods: the stop rule, the refresh of
//! the Newton matrix and the time split, used by the GSSSS stepper
//! ([`crate::integrate::gssss::stepper`], seed 000 §3.6, eqs. 3.14–3.31).
//!
//! Convergence test (documented in docs/theory/gssss.md): the increment of
//! u_{n+1} expressed in acceleration units (`|delta u_{n+1}| / (d u_{n+1}/d da)`,
//! which is the a-form unknown's increment in every form) and the multiplier
//! increment must both fall below `tol` (absolute), or below their round-off
//! floors when those are larger. The floor of an acceleration increment is
//! `FLOOR_FACTOR eps L / (d u_{n+1}/d da)` with `L = 1 + max |u_0|` the model's
//! coordinate scale (about eps |u| / (lambda3 dt^2), SPEC.md §1 DP), and that
//! of a multiplier increment is the force round-off `max|M| floor_a +
//! FLOOR_FACTOR eps L max|K(u_0)|` (stiff beams); with
//! tol = 1e-8 it takes over below dt of about 2^-10 on unit-size models, and
//! Newton still converges in 2 iterations per step at dt = 2^-18 on the
//! SPEC.md §1 problems. The scale is the initial one on purpose: a solution
//! that blows up (growing accelerations and multipliers, spinning angles) must
//! not relax the test, so such runs stop
//! with a Newton failure as in the seed.

use std::time::Duration;

use super::gssss::JacobianKind;

/// Safety factor on the round-off floors of the convergence test: the SPEC.md
/// §1 problems converge with 1 to 8 down to dt = 2^-18; the deformable
/// slider-crank (EA = 1.5e6 lb, 32 elements, dt = 1e-5) needs 4 or more.
pub const FLOOR_FACTOR: f64 = 8.0;

/// Newton settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonSettings {
    /// Tolerance on the increments (acceleration and multiplier units).
    pub tol: f64,
    /// Maximum iterations per step.
    pub max_iter: u32,
    /// Newton matrix variant.
    pub jacobian: JacobianKind,
    /// When an iterate is accepted.
    pub stop: NewtonStop,
    /// When the Newton matrix is assembled and factored.
    pub refactor: Refactor,
}

/// When the Newton matrix is assembled and factored (docs/theory/gssss.md §12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refactor {
    /// Every iteration (Newton's method).
    Iteration,
    /// At the first iteration of each step, then again only after an
    /// iteration whose contraction rate `theta = r_k / r_{k-1}` exceeds
    /// [`SLOW_CONTRACTION`] (modified Newton; the other iterations assemble
    /// the residual only and reuse the factorization).
    Step,
}

/// Where a run's Newton iterations spent their time (`flexmb bench`), when
/// the integrator was built with [`IntegratorConfig::timing`](super::IntegratorConfig).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NewtonTimings {
    /// Building the integrator: the solver's symbolic analysis (band
    /// ordering, sparse symbolic LU) and the consistent-start workspace.
    pub setup: Duration,
    /// Filling the residual and the Newton matrix.
    pub assembly: Duration,
    /// Numeric factorizations.
    pub factorization: Duration,
    /// Triangular solves.
    pub solve: Duration,
    /// Number of factorizations.
    pub factorizations: u64,
}

/// Contraction rate above which a modified-Newton step refreshes its matrix.
pub const SLOW_CONTRACTION: f64 = 0.5;

impl Refactor {
    /// `"iteration"` or `"step"`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "iteration" => Some(Refactor::Iteration),
            "step" => Some(Refactor::Step),
            _ => None,
        }
    }

    /// The name accepted by [`Refactor::from_name`].
    pub fn name(self) -> &'static str {
        match self {
            Refactor::Iteration => "iteration",
            Refactor::Step => "step",
        }
    }

    /// Whether the next iteration assembles and factors the matrix, after an
    /// iteration with scaled increment `r` (previous: `prev`).
    pub fn refresh_after(self, r: f64, prev: Option<f64>) -> bool {
        match self {
            Refactor::Iteration => true,
            Refactor::Step => prev.is_some_and(|p| r > SLOW_CONTRACTION * p),
        }
    }
}

/// When Newton accepts an iterate (docs/theory/gssss.md §12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewtonStop {
    /// The last increment is below the tolerance (seed 000 eq. 2.14): the
    /// accepted iterate is one iteration past the tolerance.
    Increment,
    /// The increment test, or the error of the current iterate estimated from
    /// the contraction rate `theta_k = r_k / r_{k-1}` of the scaled increments
    /// is below the tolerance: `theta_k / (1 - theta_k) r_k <= 1` with
    /// `theta_k < 1` (Hairer & Wanner, Solving ODEs II, §IV.8, eq. 8.10–8.11,
    /// with kappa = 1). Saves the confirming iteration once Newton converges.
    Rate,
}

impl NewtonStop {
    /// `"increment"` or `"rate"`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "increment" => Some(NewtonStop::Increment),
            "rate" => Some(NewtonStop::Rate),
            _ => None,
        }
    }

    /// The name accepted by [`NewtonStop::from_name`].
    pub fn name(self) -> &'static str {
        match self {
            NewtonStop::Increment => "increment",
            NewtonStop::Rate => "rate",
        }
    }

    /// Whether to stop after an iteration whose increments, divided by their
    /// tolerances, have the largest ratio `r`; `prev` is that of the previous
    /// iteration of the step.
    pub fn accepts(self, r: f64, prev: Option<f64>) -> bool {
        if r <= 1.0 {
            return true;
        }
        match (self, prev) {
            (NewtonStop::Rate, Some(p)) => {
                let theta = r / p;
                theta < 1.0 && theta / (1.0 - theta) * r <= 1.0
            }
            _ => false,
        }
    }
}
