//! The index-1 form of the equations of motion as a first-order ODE
//! (Chin eqs. 4.2, 4.22): with `y = (u, v)`,
//! `u' = v`, `[M(u) B^T; B 0] [v'; lambda] = [f(u, v, t); gamma]`, optionally
//! with Baumgarte's stabilization B(g1, g2) in `gamma` (eq. 2.14b). Each
//! evaluation assembles and factors the saddle-point matrix at `u` with the
//! model's [`SaddlePointSolver`] and solves for the acceleration and the
//! multipliers.

use crate::assembly::{diagnose_singular, SaddleSystem};
use crate::linalg::{SaddlePointSolver, SolveError};

use super::StepError;
use crate::assembly::Mechanics;

/// Right-hand side evaluator of the index-1 form.
pub struct Index1 {
    sys: SaddleSystem,
    solver: SaddlePointSolver,
    x: Vec<f64>,
    baumgarte: Option<[f64; 2]>,
}

impl Index1 {
    /// An evaluator for the model in `sys`; `baumgarte = Some([g1, g2])`
    /// adds `- g1 Phi' - g2 Phi` to the constraint rows.
    pub fn new(
        sys: &Mechanics<'_>,
        baumgarte: Option<[f64; 2]>,
        solver: crate::linalg::SolverChoice,
    ) -> Result<Self, StepError> {
        let solver = crate::integrate::mass_system_solver(sys, solver)?;
        Ok(Index1 {
            sys: sys.new_system(),
            solver,
            x: vec![0.0; sys.n_dofs() + sys.n_constraints()],
            baumgarte,
        })
    }

    /// The acceleration `a = v'` and the multipliers at (t, u, v).
    #[allow(clippy::too_many_arguments)]
    pub fn eval(
        &mut self,
        sys: &Mechanics<'_>,
        t: f64,
        u: &[f64],
        v: &[f64],
        a: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), StepError> {
        let n = a.len();
        sys.fill_index1(u, v, t, self.baumgarte, &mut self.sys);
        let singular = |e: SolveError, values: &[f64]| StepError::Singular {
            step: 0,
            time: t,
            diagnosis: format!(
                "{e} in the index-1 system [M B^T; B 0]: {}",
                diagnose_singular(sys, values, u, t)
            ),
        };
        if let Err(e) = self.solver.factor(&self.sys.values) {
            return Err(singular(e, &self.sys.values));
        }
        for (x, r) in self.x.iter_mut().zip(&self.sys.residual) {
            *x = -r;
        }
        if let Err(e) = self.solver.solve(&mut self.x) {
            return Err(singular(e, &self.sys.values));
        }
        a.copy_from_slice(&self.x[..n]);
        lambda.copy_from_slice(&self.x[n..]);
        Ok(())
    }
}
