//! Projections onto the constraint manifold and its tangent space, shared by
//! post-stabilization (Chin, PStab = S-both2, eq. 3.68, Algorithm 3.3,
//! eq. 4.15) and the embedded projection method (Borri and Trainelli).
//!
//! A correction `dx` of a residual `r` is the `W`-smallest vector with
//! `B dx = r`: `[W B^T; B 0] [dx; mu] = [0; r]`, that is
//! `dx = W^-1 B^T (B W^-1 B^T)^-1 r` with `W = M(u)` (eq. 3.68) or `W = I`
//! (eq. 3.69). One factorization of the matrix at the unstabilized point
//! serves every correction of a step (Algorithm 3.3, step 2).

use crate::assembly::{diagnose_singular, SaddleSystem};
use crate::linalg::{max_abs, SaddlePointSolver};

use super::newton::{self, Correction, Failure, NonlinearSystem, Policy, Stats, Verdict};
use super::StepError;
use crate::assembly::Mechanics;

/// The metric of the projections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// `W = M(u)` (Chin eq. 3.68).
    Mass,
    /// `W = I` (Chin eq. 3.69).
    Identity,
}

impl Metric {
    /// The name in the model file.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Mass => "mass",
            Metric::Identity => "identity",
        }
    }
}

/// How many S-both passes PStab makes with its one factorization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Passes {
    /// Two (S-both2, Chin eq. 3.68 / Algorithm 3.3): the seed's PStab,
    /// which leaves a remainder of second order in the drift.
    Two,
    /// Two, then more with the same factorization while the larger of the
    /// position and velocity residuals keeps falling (at most
    /// [`MAX_EXTRA_PASSES`] more; a pass that made it larger is undone):
    /// the drift at round-off at the price of a residual evaluation and a
    /// solve per pass.
    Converged,
}

/// Most passes [`Passes::Converged`] adds to the seed's two.
pub const MAX_EXTRA_PASSES: u32 = 10;

impl Passes {
    /// The name in the model file.
    pub fn name(self) -> &'static str {
        match self {
            Passes::Two => "two",
            Passes::Converged => "converged",
        }
    }
}

/// Drifts of a state: max-norms of the position and velocity constraints.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Drift {
    /// `max |Phi(u, t)|`.
    pub position: f64,
    /// `max |B(u, t) v + Phi_t(u, t)|`.
    pub velocity: f64,
}

impl Drift {
    /// The larger of the two.
    pub fn max(&self) -> f64 {
        self.position.max(self.velocity)
    }
}

/// Projections with one factorization per step.
pub struct Projector {
    metric: Metric,
    passes: Passes,
    sys: SaddleSystem,
    solver: SaddlePointSolver,
    phi: Vec<f64>,
    rate: Vec<f64>,
    /// Right-hand sides of the position and velocity corrections.
    rhs: Vec<f64>,
    rhs_v: Vec<f64>,
    /// (u, v) before an extra pass of [`Passes::Converged`].
    saved_u: Vec<f64>,
    saved_v: Vec<f64>,
    /// `sys` holds the matrix at the point of the last [`Projector::prepare`].
    prepared: bool,
    factored_at: f64,
}

impl Projector {
    /// A projector for the model in `sys`.
    pub fn new(
        sys: &Mechanics<'_>,
        metric: Metric,
        solver: crate::linalg::SolverChoice,
    ) -> Result<Self, StepError> {
        let (n, m) = (sys.n_dofs(), sys.n_constraints());
        let solver = crate::integrate::mass_system_solver(sys, solver)?;
        Ok(Projector {
            metric,
            passes: Passes::Two,
            sys: sys.new_system(),
            solver,
            phi: vec![0.0; m],
            rate: vec![0.0; m],
            rhs: vec![0.0; n + m],
            rhs_v: vec![0.0; n + m],
            saved_u: vec![0.0; n],
            saved_v: vec![0.0; n],
            prepared: false,
            factored_at: f64::NAN,
        })
    }

    /// The metric.
    pub fn metric(&self) -> Metric {
        self.metric
    }

    /// Sets the passes of [`Projector::stabilize`] (default [`Passes::Two`]).
    pub fn set_passes(&mut self, passes: Passes) {
        self.passes = passes;
    }

    /// Evaluates the constraint residuals at the unstabilized (u~, v~, t)
    /// and fills the projection matrix there, from one Jacobian evaluation
    /// (Algorithm 3.3, steps 2–3); returns the drift. A
    /// [`Projector::stabilize`] at the same point follows, or none.
    pub fn prepare(&mut self, sys: &Mechanics<'_>, u: &[f64], v: &[f64], t: f64) -> Drift {
        sys.fill_projection(
            u,
            t,
            self.metric == Metric::Mass,
            &mut self.sys,
            Some((v, &mut self.phi, &mut self.rate)),
        );
        self.prepared = true;
        Drift {
            position: max_abs(&self.phi),
            velocity: max_abs(&self.rate),
        }
    }

    /// Fills the projection matrix at (u~, t) for a [`Projector::stabilize`]
    /// whose pass-1 residuals are those of the last
    /// [`Projector::residuals`] at the same point (the `datol` test of a
    /// step that then needs PStab).
    pub fn fill(&mut self, sys: &Mechanics<'_>, u: &[f64], t: f64) {
        let mass = self.metric == Metric::Mass;
        sys.fill_projection(u, t, mass, &mut self.sys, None);
        self.prepared = true;
    }

    /// Evaluates the constraint residuals at (u, v, t) and returns their drift.
    pub fn residuals(&mut self, sys: &Mechanics<'_>, u: &[f64], v: &[f64], t: f64) -> Drift {
        sys.constraint_residuals(u, v, t, &mut self.phi, &mut self.rate);
        Drift {
            position: max_abs(&self.phi),
            velocity: max_abs(&self.rate),
        }
    }

    /// Factors `[W B^T; B 0]` at (u, t).
    pub fn factor(&mut self, sys: &Mechanics<'_>, u: &[f64], t: f64) -> Result<(), StepError> {
        let mass = self.metric == Metric::Mass;
        sys.fill_projection(u, t, mass, &mut self.sys, None);
        self.factor_filled(sys, u, t)
    }

    /// Factors the matrix in `sys` (filled at (u, t)).
    fn factor_filled(&mut self, sys: &Mechanics<'_>, u: &[f64], t: f64) -> Result<(), StepError> {
        self.prepared = false;
        self.solver
            .factor(&self.sys.values)
            .map_err(|e| StepError::Singular {
                step: 0,
                time: t,
                diagnosis: format!(
                    "{e} in the projection matrix [W B^T; B 0]: {}",
                    diagnose_singular(sys, &self.sys.values, u, t)
                ),
            })?;
        self.factored_at = t;
        Ok(())
    }

    /// Subtracts from `x` the correction of the residual `which` (positions:
    /// the last [`Projector::residuals`]' Phi; velocities: its `B v + Phi_t`)
    /// with the last factorization.
    fn correct(&mut self, positions: bool, x: &mut [f64]) -> Result<(), StepError> {
        self.solve_correction(positions, x.len())?;
        for (xi, d) in x.iter_mut().zip(&self.rhs) {
            *xi -= d;
        }
        Ok(())
    }

    /// The correction of [`Projector::correct`] into `rhs[..n]`.
    fn solve_correction(&mut self, positions: bool, n: usize) -> Result<(), StepError> {
        self.rhs[..n].fill(0.0);
        let r = if positions { &self.phi } else { &self.rate };
        self.rhs[n..].copy_from_slice(r);
        self.solver
            .solve(&mut self.rhs)
            .map_err(|e| StepError::Singular {
                step: 0,
                time: self.factored_at,
                diagnosis: format!("{e} in a projection solve"),
            })
    }

    /// Subtracts from (u, v) the corrections of both residuals of the last
    /// [`Projector::residuals`] (or [`Projector::prepare`]) with the last
    /// factorization: one S-both pass (Chin eq. 3.66), both solves at once.
    fn correct_both(&mut self, u: &mut [f64], v: &mut [f64]) -> Result<(), StepError> {
        let n = u.len();
        self.rhs[..n].fill(0.0);
        self.rhs[n..].copy_from_slice(&self.phi);
        self.rhs_v[..n].fill(0.0);
        self.rhs_v[n..].copy_from_slice(&self.rate);
        self.solver
            .solve_pair(&mut self.rhs, &mut self.rhs_v)
            .map_err(|e| StepError::Singular {
                step: 0,
                time: self.factored_at,
                diagnosis: format!("{e} in a projection solve"),
            })?;
        for (xi, d) in u.iter_mut().zip(&self.rhs[..n]) {
            *xi -= d;
        }
        for (xi, d) in v.iter_mut().zip(&self.rhs_v[..n]) {
            *xi -= d;
        }
        Ok(())
    }

    /// Post-stabilization PStab (S-both2, Chin eq. 3.68 / Algorithm 3.3 /
    /// eq. 4.15) of the (u~, v~) of the last [`Projector::prepare`] (or
    /// [`Projector::residuals`] then [`Projector::fill`]): the matrix filled
    /// there is factored and two S-both passes follow, the
    /// first with the residuals at (u~, v~), the second with those at the
    /// corrected point; with [`Passes::Converged`] more passes while the
    /// residual falls. Returns the passes made.
    pub fn stabilize(
        &mut self,
        sys: &Mechanics<'_>,
        u: &mut [f64],
        v: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError> {
        if !self.prepared {
            self.prepare(sys, u, v, t);
        }
        self.factor_filled(sys, u, t)?;
        self.correct_both(u, v)?;
        let mut previous = self.residuals(sys, u, v, t).max();
        self.correct_both(u, v)?;
        let mut passes = 2;
        if self.passes == Passes::Converged {
            let mut r = self.residuals(sys, u, v, t).max();
            while r > 0.0 && r < previous && passes < 2 + MAX_EXTRA_PASSES {
                self.saved_u.copy_from_slice(u);
                self.saved_v.copy_from_slice(v);
                self.correct_both(u, v)?;
                passes += 1;
                previous = r;
                r = self.residuals(sys, u, v, t).max();
                if r > previous {
                    u.copy_from_slice(&self.saved_u);
                    v.copy_from_slice(&self.saved_v);
                    break;
                }
            }
        }
        Ok(passes)
    }

    /// Projects the velocities onto the tangent space at u (one linear
    /// projection, exact): `v -= W^-1 B^T (B W^-1 B^T)^-1 (B v + Phi_t)` with
    /// the last factorization (which must be at u).
    pub fn project_velocity(
        &mut self,
        sys: &Mechanics<'_>,
        u: &[f64],
        v: &mut [f64],
        t: f64,
    ) -> Result<(), StepError> {
        sys.constraint_rates(u, v, t, &mut self.rate);
        self.correct(false, v)
    }

    /// Newton's method for the positions on the manifold `Phi(u, t) = 0`
    /// (simplified: the matrix factored at the entry point): corrections
    /// until `|Phi| <= tol` or `max_iter` iterations. Returns the iterations.
    pub fn project_position(
        &mut self,
        sys: &Mechanics<'_>,
        u: &mut [f64],
        t: f64,
        tol: f64,
        max_iter: u32,
    ) -> Result<u32, StepError> {
        let mut newton = PositionNewton {
            projector: self,
            sys,
            u,
            t,
            tol,
            residual: 0.0,
        };
        let policy = Policy::newton(max_iter);
        let mut stats = Stats::with_capacity(max_iter + 1);
        match newton::solve(&mut newton, &policy, &mut stats, None) {
            Ok(out) => Ok(out.iterations),
            Err(Failure::Error(e)) => Err(e),
            Err(Failure::Stopped { .. }) => Err(StepError::Setup {
                reason: format!(
                    "projection onto the constraint manifold did not converge at t = {t}: |Phi| = {:.3e} after {max_iter} iterations",
                    newton.residual
                ),
            }),
        }
    }
}

/// [`Projector::project_position`]'s simplified Newton iteration for
/// [`newton::solve`]: the matrix is the one factored before, the test
/// `|Phi| <= tol` before each correction.
struct PositionNewton<'p, 's, 'm> {
    projector: &'p mut Projector,
    sys: &'s Mechanics<'m>,
    u: &'p mut [f64],
    t: f64,
    tol: f64,
    /// `|Phi|` at the last assembly.
    residual: f64,
}

impl NonlinearSystem for PositionNewton<'_, '_, '_> {
    type Error = StepError;
    const TESTS_FIRST: bool = true;

    fn assemble(&mut self, _matrix: bool) -> Result<f64, StepError> {
        let p = &mut *self.projector;
        self.sys.constraint_values(self.u, self.t, &mut p.phi);
        self.residual = max_abs(&p.phi);
        Ok(self.residual)
    }

    /// Never: the matrix factored before the iteration serves every
    /// correction.
    fn refresh(&mut self, _iteration: u32, _policy: bool) -> bool {
        false
    }

    fn accepts_iterate(&mut self) -> bool {
        self.residual <= self.tol
    }

    /// Unused ([`Self::refresh`]).
    fn factor(&mut self) -> Result<(), StepError> {
        Ok(())
    }

    fn solve(&mut self) -> Result<(), StepError> {
        self.projector.solve_correction(true, self.u.len())
    }

    /// `u -= by du` (the correction solved for `Phi`, subtracted).
    fn move_along(&mut self, by: f64) {
        for (x, d) in self.u.iter_mut().zip(&self.projector.rhs) {
            *x -= by * d;
        }
    }

    fn correction(&mut self) -> Correction {
        Correction {
            ratio: f64::NAN,
            parts: None,
        }
    }

    /// No test after a correction: the next iterate is judged first.
    fn verdict(&mut self, _correction: &Correction, _iteration: u32) -> Option<Verdict> {
        Some(Verdict::Continue)
    }
}
