//! The embedded projection method (Borri and Trainelli, Borri & Trainelli): the
//! constrained equations recast as an ODE in a modified state, integrated by
//! any Runge–Kutta tableau, with the two algebraic projections embedded in
//! every evaluation of the right-hand side.
//!
//! With the GGL pair of multipliers in differentiated form (`sigma = lambda'`,
//! `tau = mu'`), velocities v, momenta `p = M(q) v` and the multiplier sign of
//! flexmb (`M a + B^T lambda' = f`), the modified state is
//!
//! ```text
//! q* = q + B(q)^T mu,        p* = M(q) v + B(q)^T lambda,
//! ```
//!
//! and along the motion (`mu' = 0`, `q' = v`) it obeys the ODE
//!
//! ```text
//! q*' = v + H(q; mu) v,      p*' = f(q, v, t) + H(q; lambda) v,
//! ```
//!
//! `H(q; w) = d(B(q)^T w)/dq` (the joints' curvature; with a
//! configuration-dependent inertia `p*'` also has `(dM/dt) v`). Each evaluation at
//! (q*, p*):
//!
//! 1. first subproblem, projection onto the constraint manifold (nonlinear
//!    in (q, mu): `q + B(q)^T mu = q*`, `Phi(q, t) = 0`, solved by Newton's
//!    method with the exact matrix `[I + H(q; mu), B^T; B, 0]`), then onto the
//!    velocity constraints (linear in (v, lambda): `[M B^T; B 0] [v; lambda] =
//!    [p*; -Phi_t]`);
//! 2. second subproblem, the tangent space: the index-1 solve
//!    `[M B^T; B 0] [a; lambda'] = [f; gamma]` ([`Index1`]);
//! 3. the derivatives above.
//!
//! The original state recovered from any (q*, p*) satisfies the position and
//! velocity constraints to round-off and the reaction `lambda'` the
//! acceleration ones; every quantity is a smooth function of the modified
//! state, so positions, velocities and multipliers reach the tableau's order.
//! The derivation takes `B` without explicit time dependence (every flexmb
//! joint: rheonomic rows are `g(u) - f(t)`); models with velocity-level rows
//! are refused.

use crate::assembly::{diagnose_singular, JointTerms, MultiplierMix, SaddleSystem};
use crate::linalg::SaddlePointSolver;

use super::index1::Index1;
use super::newton::{self, Correction, Failure, NonlinearSystem, Policy, Stats, Verdict};
use super::StepError;
use crate::assembly::Mechanics;

/// Newton iterations allowed for the position projection.
const MAX_NEWTON: u32 = 30;

/// The position projection's Newton iteration ([`newton::solve`]): exact
/// Newton, the tests the projection's own ([`Manifold`]).
const POLICY: Policy = Policy::newton(MAX_NEWTON);

/// The EPM right-hand side and the original state of its last evaluation.
pub struct Epm {
    index1: Index1,
    sys: SaddleSystem,
    solver: SaddlePointSolver,
    x: Vec<f64>,
    /// Positions, velocities, accelerations and the reaction lambda' of the
    /// last evaluation.
    pub q: Vec<f64>,
    /// Velocities.
    pub v: Vec<f64>,
    /// Accelerations.
    pub a: Vec<f64>,
    /// The reaction multipliers lambda'.
    pub reaction: Vec<f64>,
    mu: Vec<f64>,
    lambda: Vec<f64>,
    phi: Vec<f64>,
    /// The position projection's Newton statistics (kept: no allocation
    /// per evaluation).
    newton: Stats,
}

impl Epm {
    /// The method's right-hand side for the model in `sys`.
    pub fn new(
        sys: &Mechanics<'_>,
        solver: crate::linalg::SolverChoice,
    ) -> Result<Self, StepError> {
        if let Some(j) = sys.velocity_joint() {
            return Err(StepError::Setup {
                reason: format!(
                    "joint '{j}' is a velocity-level (nonholonomic) constraint, which the embedded \
                     projection method does not handle; use method \"dopri5\" with PStab"
                ),
            });
        }
        let (n, m) = (sys.n_dofs(), sys.n_constraints());
        let choice = solver;
        let solver = crate::integrate::saddle_solver(sys, choice)?;
        let z = |k: usize| vec![0.0; k];
        Ok(Epm {
            index1: Index1::new(sys, None, choice)?,
            sys: sys.new_system(),
            solver,
            x: z(n + m),
            q: z(n),
            v: z(n),
            a: z(n),
            reaction: z(m),
            mu: z(m),
            lambda: z(m),
            phi: z(m),
            newton: Stats::with_capacity(MAX_NEWTON + 1),
        })
    }

    /// The modified state of a consistent (u, v) with mu = lambda = 0:
    /// `q* = u`, `p* = M(u) v`.
    pub fn modified_state(&mut self, sys: &Mechanics<'_>, u: &[f64], v: &[f64], y: &mut [f64]) {
        let n = u.len();
        y[..n].copy_from_slice(u);
        y[n..].fill(0.0);
        sys.add_mass_product(u, v, Some(&mut y[n..]), None, &mut self.sys);
    }

    fn factor(&mut self, sys: &Mechanics<'_>, t: f64) -> Result<(), StepError> {
        self.solver
            .factor(&self.sys.values)
            .map_err(|e| StepError::Singular {
                step: 0,
                time: t,
                diagnosis: format!(
                    "{e} in an EPM projection: {}",
                    diagnose_singular(sys, &self.sys.values, &self.q, t)
                ),
            })
    }

    /// `k = (q*', p*')` at (t, y = (q*, p*)); the reaction lambda' into `reaction`.
    pub fn eval(
        &mut self,
        sys: &Mechanics<'_>,
        t: f64,
        y: &[f64],
        k: &mut [f64],
        reaction: &mut [f64],
    ) -> Result<(), StepError> {
        let n = self.q.len();
        let (qs, ps) = y.split_at(n);
        let asm = sys;

        // First subproblem, positions: q + B(q)^T mu = q*, Phi(q) = 0 (Newton).
        self.q.copy_from_slice(qs);
        self.mu.fill(0.0);
        let scale = 1.0 + qs.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        let mut projection = Manifold {
            epm: self,
            sys,
            t,
            q_star: qs,
            scale,
            residual: 0.0,
        };
        let mut stats = std::mem::take(&mut projection.epm.newton);
        let out = newton::solve(&mut projection, &POLICY, &mut stats, None);
        self.newton = stats;
        match out {
            Ok(_) => {}
            Err(Failure::Error(e)) => return Err(e),
            Err(Failure::Stopped { .. }) => {
                return Err(StepError::Setup {
                    reason: format!(
                        "the EPM projection onto the constraint manifold did not converge at \
                         t = {t} in {MAX_NEWTON} Newton iterations"
                    ),
                })
            }
        }

        // First subproblem, velocities: [M B^T; B 0] [v; lambda] = [p*; -Phi_t].
        asm.fill_projection(&self.q, t, true, &mut self.sys, None);
        self.factor(sys, t)?;
        self.x[..n].copy_from_slice(ps);
        // Phi_t = B 0 + Phi_t.
        self.a.fill(0.0);
        asm.constraint_rates(&self.q, &self.a, t, &mut self.phi);
        for (x, p) in self.x[n..].iter_mut().zip(&self.phi) {
            *x = -p;
        }
        self.solver
            .solve(&mut self.x)
            .map_err(|e| StepError::Singular {
                step: 0,
                time: t,
                diagnosis: format!("{e} in the EPM velocity projection"),
            })?;
        self.v.copy_from_slice(&self.x[..n]);
        self.lambda.copy_from_slice(&self.x[n..]);

        // Second subproblem: accelerations and the reaction.
        self.index1
            .eval(sys, t, &self.q, &self.v, &mut self.a, &mut self.reaction)?;
        reaction.copy_from_slice(&self.reaction);

        // q*' = v + H(mu) v;  p*' = M a + (dM/dt) v + B^T lambda' + H(lambda) v.
        let (kq, kp) = k.split_at_mut(n);
        kq.copy_from_slice(&self.v);
        asm.add_curvature_product(&self.q, t, &self.mu, &self.v, kq, &mut self.sys);
        kp.fill(0.0);
        asm.add_mass_product(&self.q, &self.a, Some(&mut *kp), None, &mut self.sys);
        asm.add_mass_product(&self.q, &self.v, None, Some(&mut *kp), &mut self.sys);
        self.sys.residual.fill(0.0);
        asm.add_joint_terms(
            &JointTerms {
                u: &self.q,
                t,
                discrete_from: None,
                force: Some((1.0, MultiplierMix::of(&self.reaction))),
                column: 0.0,
                curvature: None,
            },
            &mut self.sys,
        );
        for (k, f) in kp.iter_mut().zip(&self.sys.residual[..n]) {
            *k += f;
        }
        asm.add_curvature_product(&self.q, t, &self.lambda, &self.v, kp, &mut self.sys);
        Ok(())
    }
}

/// The first subproblem's position projection `q + B(q)^T mu = q*`,
/// `Phi(q) = 0` in (q, mu) with the matrix `[I + H(q; mu), B^T; B, 0]`,
/// converged when the residual is at round-off (`4 eps (1 + |q*|)`) before
/// a solve or the correction of q after one (`2 eps (1 + |q*|)`).
struct Manifold<'e, 's, 'm> {
    epm: &'e mut Epm,
    sys: &'s Mechanics<'m>,
    t: f64,
    q_star: &'e [f64],
    scale: f64,
    /// The residual's largest entry at the last assembly.
    residual: f64,
}

impl NonlinearSystem for Manifold<'_, '_, '_> {
    type Error = StepError;
    const TESTS_FIRST: bool = true;

    /// Residual `r1 = q - q* + B^T mu`, `r2 = Phi`, negated into `x`, and
    /// the matrix.
    fn assemble(&mut self, _matrix: bool) -> Result<f64, StepError> {
        let (epm, t) = (&mut *self.epm, self.t);
        let asm = self.sys;
        let n = epm.q.len();
        asm.fill_projection(&epm.q, t, false, &mut epm.sys, None);
        asm.add_joint_terms(
            &JointTerms {
                u: &epm.q,
                t,
                discrete_from: None,
                force: Some((1.0, MultiplierMix::of(&epm.mu))),
                column: 0.0,
                curvature: Some((1.0, MultiplierMix::of(&epm.mu))),
            },
            &mut epm.sys,
        );
        asm.constraint_values(&epm.q, t, &mut epm.phi);
        for (((x, r), q), q_star) in epm.x[..n]
            .iter_mut()
            .zip(&epm.sys.residual)
            .zip(&epm.q)
            .zip(self.q_star)
        {
            *x = -(r + q - q_star);
        }
        for (x, p) in epm.x[n..].iter_mut().zip(&epm.phi) {
            *x = -p;
        }
        self.residual = epm.x.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        Ok(self.residual)
    }

    fn accepts_iterate(&mut self) -> bool {
        self.residual <= 4.0 * f64::EPSILON * self.scale
    }

    fn factor(&mut self) -> Result<(), StepError> {
        self.epm.factor(self.sys, self.t)
    }

    fn solve(&mut self) -> Result<(), StepError> {
        let t = self.t;
        self.epm
            .solver
            .solve(&mut self.epm.x)
            .map_err(|e| StepError::Singular {
                step: 0,
                time: t,
                diagnosis: format!("{e} in the EPM position projection"),
            })
    }

    fn move_along(&mut self, by: f64) {
        let epm = &mut *self.epm;
        let n = epm.q.len();
        for (q, d) in epm.q.iter_mut().zip(&epm.x[..n]) {
            *q += by * d;
        }
        for (mu, d) in epm.mu.iter_mut().zip(&epm.x[n..]) {
            *mu += by * d;
        }
    }

    /// `|dq|_inf`.
    fn correction(&mut self) -> Correction {
        let n = self.epm.q.len();
        Correction {
            ratio: self.epm.x[..n].iter().fold(0.0_f64, |m, x| m.max(x.abs())),
            parts: None,
        }
    }

    fn verdict(&mut self, correction: &Correction, _iteration: u32) -> Option<Verdict> {
        Some(if correction.ratio <= 2.0 * f64::EPSILON * self.scale {
            Verdict::Converged
        } else {
            Verdict::Continue
        })
    }
}
