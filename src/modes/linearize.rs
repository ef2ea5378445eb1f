//! The linearized equations of motion about a state (u, v, a, lambda) at time t.
//!
//! The index-3 equations `r(u, v, a, lambda) = M(u) a + P(u) + F_d(u, v) +
//! g(u, v) - F(u, t) - M g + B(u)^T lambda = 0`, `Phi(u, t) = 0`
//! (Hoitink eqs. 3.1–3.2) perturbed by (du, dv, da, dlambda) give
//!
//! ```text
//! M da + D dv + K du + B^T dlambda = 0,      B du = 0,
//! M = dr/da = M(u),   D = dr/dv = dF_d/dv + dg/dv,
//! K = dr/du = dP/du + dF_d/du + d(M(u) a + g)/du - dF/du + sum_r lambda_r d^2 Phi_r/du^2,
//! B = dPhi/du,
//! ```
//!
//! the last term of K being the constraints' geometric stiffness (a
//! pendulum's frequency lives in it: `lambda H = (m g / l) I` for
//! `Phi = (q.q - l^2)/2`). The matrices are the GSSSS Newton matrix
//! `c_a M + c_v D + c_u (K + H - K_load)` of
//! [`crate::integrate::gssss::fill_step`] (Hoitink eqs. 3.14–3.31) at the
//! time level `u~ = u_{n+1} = u_n = u` (weights c1dt = c2dt2 = 0, c3 = 1,
//! constraint option 1 with W1 = 1), filled once per coefficient
//! (c_a, c_v, c_u) = (1, 0, 0), (0, 1, 0), (0, 0, 1): the same code that
//! the integrators' Newton iterations use, no copy.

use sprs::{CsMat, TriMat};

use crate::assembly::{Assembler, Mechanics, SaddleSystem};
use crate::element::{EvaluationPoint, LevelWeights};
use crate::integrate::gssss::{constraint_force, fill_step, StepInput};
use crate::integrate::{ConstraintOption, JacobianKind};
use crate::linalg::Pattern;
use crate::model::Model;

/// The linearized system about one state: M, D, K (n x n) and B (m x n),
/// each as the values of the assembler's saddle-point pattern (M, D, K in
/// the upper-left block, B in the row and column blocks) and as sprs
/// matrices for export.
#[derive(Debug, Clone)]
pub struct LinearizedSystem {
    /// What the state is (`initial state`, `static equilibrium`, ...).
    pub at: String,
    /// Time.
    pub t: f64,
    /// Positions.
    pub u: Vec<f64>,
    /// Velocities.
    pub v: Vec<f64>,
    /// Accelerations.
    pub a: Vec<f64>,
    /// Multipliers.
    pub lambda: Vec<f64>,
    /// The saddle-point pattern of the model's assembler.
    pub pattern: Pattern,
    /// M in pattern order (constraint blocks zero).
    pub mass_values: Vec<f64>,
    /// D in pattern order (constraint blocks zero).
    pub damping_values: Vec<f64>,
    /// K in pattern order, geometric stiffness of the constraints included
    /// (constraint blocks zero).
    pub stiffness_values: Vec<f64>,
    /// B in the row block and B^T in the column block, pattern order.
    pub jacobian_values: Vec<f64>,
    /// The model's DOF names.
    pub dof_names: Vec<String>,
    n: usize,
}

impl LinearizedSystem {
    /// Number of DOFs n.
    pub fn n_dofs(&self) -> usize {
        self.n
    }

    /// Number of multipliers m.
    pub fn n_constraints(&self) -> usize {
        self.pattern.dim - self.n
    }

    /// The mass matrix M (n x n, CSC).
    pub fn mass(&self) -> CsMat<f64> {
        self.block(&self.mass_values, false)
    }

    /// The damping matrix D = dr/dv (n x n, CSC).
    pub fn damping(&self) -> CsMat<f64> {
        self.block(&self.damping_values, false)
    }

    /// The stiffness K = dr/du with the constraints' geometric stiffness
    /// (n x n, CSC).
    pub fn stiffness(&self) -> CsMat<f64> {
        self.block(&self.stiffness_values, false)
    }

    /// The constraint Jacobian B = dPhi/du (m x n, CSC).
    pub fn jacobian(&self) -> CsMat<f64> {
        self.block(&self.jacobian_values, true)
    }

    /// Names of the DOFs whose mass diagonal is zero (up to 8).
    pub fn massless_dofs(&self) -> Vec<String> {
        let mut has_mass = vec![false; self.n];
        for (v, (r, c)) in self.mass().iter() {
            if r == c && *v != 0.0 {
                has_mass[r] = true;
            }
        }
        (0..self.n)
            .filter(|&i| !has_mass[i])
            .take(8)
            .map(|i| self.dof_names[i].clone())
            .collect()
    }

    /// Whether D has a nonzero entry.
    pub fn is_damped(&self) -> bool {
        self.damping_values.iter().any(|x| *x != 0.0)
    }

    /// Values of the saddle-point matrix `[K - sigma M, B^T; B, 0]` in
    /// pattern order.
    pub fn shifted_saddle(&self, sigma: f64) -> Vec<f64> {
        self.stiffness_values
            .iter()
            .zip(&self.mass_values)
            .zip(&self.jacobian_values)
            .map(|((k, m), b)| k - sigma * m + b)
            .collect()
    }

    /// The upper-left n x n block (`rows_b = false`) or the lower-left
    /// m x n block (`rows_b = true`) of `values`.
    fn block(&self, values: &[f64], rows_b: bool) -> CsMat<f64> {
        let (n, p) = (self.n, &self.pattern);
        let rows = if rows_b { p.dim - n } else { n };
        let mut tri = TriMat::new((rows, n));
        for c in 0..n {
            let range = p.col_ptr[c]..p.col_ptr[c + 1];
            for (&r, &v) in p.row_idx[range.clone()].iter().zip(&values[range]) {
                match (v != 0.0, rows_b, r >= n) {
                    (true, false, false) => tri.add_triplet(r, c, v),
                    (true, true, true) => tri.add_triplet(r - n, c, v),
                    _ => {}
                }
            }
        }
        tri.to_csc()
    }
}

/// Fills `c_a M + c_v D + c_u K` and the constraint blocks (B rows, B^T
/// column) at the state into `sys` through the GSSSS Newton matrix; the
/// residual holds `r(u, v, a, lambda)` in its first n entries.
#[allow(clippy::too_many_arguments)]
fn fill(
    mech: &Mechanics<'_>,
    t: f64,
    u: &[f64],
    v: &[f64],
    a: &[f64],
    lambda: &[f64],
    coefs: [f64; 3],
    sys: &mut SaddleSystem,
) {
    let level = EvaluationPoint {
        u_n: u,
        v_n: v,
        a_n: a,
        u_next: u,
        u_tilde: u,
        w: LevelWeights {
            c1dt: 0.0,
            c2dt2: 0.0,
            c3: 1.0,
        },
    };
    let input = StepInput {
        level,
        discrete_gradient: false,
        a_tilde: a,
        inertia: None,
        v_tilde: v,
        coef_v: coefs[1],
        lambda_n: lambda,
        lambda,
        t_n: t,
        t_next: t,
        w1: 1.0,
        coef_mass: coefs[0],
        // The constraint residual is Phi / coef_u: not finite for M or D
        // alone (c_u = 0), and not used.
        coef_u: coefs[2],
        forces: constraint_force(ConstraintOption::One, JacobianKind::Consistent, 1.0, 1.0),
        matrix: true,
    };
    fill_step(mech, &input, sys);
}

/// The residual of the equations of motion `r = M(u) a + P + F_d + g - F -
/// M g + B^T lambda` (n entries) at a state: the function whose derivatives
/// [`linearize_state`] assembles (the tests difference it).
pub fn dynamic_residual(
    model: &Model,
    t: f64,
    u: &[f64],
    v: &[f64],
    a: &[f64],
    lambda: &[f64],
) -> Vec<f64> {
    let asm = Assembler::new(model);
    let mut sys = asm.new_system();
    let mech = Mechanics::new(model, &asm);
    fill(&mech, t, u, v, a, lambda, [0.0, 0.0, 1.0], &mut sys);
    sys.residual.truncate(asm.n_dofs());
    sys.residual
}

/// The linearized system of `model` about (u, v, a, lambda) at time `t`
/// (module doc), labelled `at`.
#[allow(clippy::too_many_arguments)]
pub fn linearize_state(
    mech: &Mechanics<'_>,
    at: &str,
    t: f64,
    u: &[f64],
    v: &[f64],
    a: &[f64],
    lambda: &[f64],
) -> LinearizedSystem {
    let n = mech.n_dofs();
    let pattern = mech.pattern().clone();
    let mut sys = mech.new_system();
    let mut values = |coefs: [f64; 3]| {
        fill(mech, t, u, v, a, lambda, coefs, &mut sys);
        sys.values.clone()
    };
    let mut mass_values = values([1.0, 0.0, 0.0]);
    let mut damping_values = values([0.0, 1.0, 0.0]);
    let mut stiffness_values = values([0.0, 0.0, 1.0]);
    let mut jacobian_values = vec![0.0; pattern.nnz()];
    for c in 0..pattern.dim {
        for s in pattern.col_ptr[c]..pattern.col_ptr[c + 1] {
            if pattern.row_idx[s] >= n || c >= n {
                jacobian_values[s] = stiffness_values[s];
                mass_values[s] = 0.0;
                damping_values[s] = 0.0;
                stiffness_values[s] = 0.0;
            }
        }
    }
    LinearizedSystem {
        at: at.to_string(),
        t,
        u: u.to_vec(),
        v: v.to_vec(),
        a: a.to_vec(),
        lambda: lambda.to_vec(),
        pattern,
        mass_values,
        damping_values,
        stiffness_values,
        jacobian_values,
        dof_names: mech.dof_names().to_vec(),
        n,
    }
}
