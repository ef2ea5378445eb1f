//! The composed saddle-point systems: the index-1 system `[M B^T; B 0]`
//! (Chin eq. 4.22) and the projection matrices `[W B^T; B 0]` (eqs. 3.68,
//! 3.69).

use sprs::CsMat;

use crate::element::{gather, RateState, MAX_LOCAL_DOFS};
use crate::joint::MAX_ROWS;

use super::{scatter_set, Mechanics, SaddleSystem};

impl Mechanics<'_> {
    /// Fills the index-1 system of the accelerations and multipliers at
    /// (u, v, t) (Chin eq. 3.4; Hoitink eq. 3.5):
    /// `[M(u) B^T; B 0] [a; lambda] = [f(u, v, t); gamma]` with
    /// `f = F + M g - P(u) - F_d(u, v) - g(u, v)` and
    /// `gamma = -(B v)_u v - 2 Phi_tu v - Phi_tt`; with Baumgarte's
    /// stabilization `Some([g1, g2])` (Chin eq. 2.14b, B(g1, g2):
    /// `Phi'' + g1 Phi' + g2 Phi = 0`) the constraint rows are
    /// `gamma - g1 (B v + Phi_t) - g2 Phi`. The residual
    /// holds the negated right-hand side, so that the solve of `A x = -r`
    /// gives (a, lambda).
    pub fn fill_index1(
        &self,
        u: &[f64],
        v: &[f64],
        t: f64,
        baumgarte: Option<[f64; 2]>,
        sys: &mut SaddleSystem,
    ) {
        sys.residual.fill(0.0);
        sys.values.fill(0.0);
        let n = self.n;
        self.add_mass(&mut sys.values, 1.0);
        self.subtract_gravity(&mut sys.residual[..n], 1.0);
        self.element_pass(sys, None, |b, i, f, _| b.force(i, u, f, None));
        self.add_load_terms(u, &|f| f.value(t), None, sys);
        // Dampers and configuration-dependent inertia at a = 0: the residual
        // gets F_d(u, v) + g(u, v), the matrix M(u).
        let zeros = std::mem::take(&mut sys.zeros);
        let x = RateState {
            u,
            v,
            a: &zeros,
            midpoint: None,
        };
        self.add_rate_forces(&x, Some([0.0, 0.0, 1.0]), sys);
        sys.zeros = zeros;
        let mut bl = [0.0; MAX_ROWS * MAX_LOCAL_DOFS];
        let mut extra = [0.0; MAX_ROWS];
        let mut phi = [0.0; MAX_ROWS];
        let mut phi_t = [0.0; MAX_ROWS];
        let mut vl = [0.0; MAX_LOCAL_DOFS];
        for (blk, s) in self.model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let r0 = s.row0 + i * rows;
                blk.jacobian(i, u, t, &mut bl[..rows * k]);
                let blk_slots = i * rows * k..(i + 1) * rows * k;
                scatter_set(&mut sys.values, &s.b[blk_slots.clone()], &bl[..rows * k]);
                scatter_set(&mut sys.values, &s.c[blk_slots], &bl[..rows * k]);
                let mut gamma = [0.0; MAX_ROWS];
                blk.velocity_curvature(i, u, v, t, &mut gamma[..rows]);
                blk.phi_tt(i, u, v, t, &mut extra[..rows]);
                for r in 0..rows {
                    sys.residual[n + r0 + r] = gamma[r] + extra[r];
                }
                if let Some([g1, g2]) = baumgarte {
                    blk.phi(i, u, t, &mut phi[..rows]);
                    blk.phi_t(i, u, t, &mut phi_t[..rows]);
                    gather(v, blk.dofs(i), &mut vl[..k]);
                    for r in 0..rows {
                        let bv: f64 = (0..k).map(|p| bl[r * k + p] * vl[p]).sum();
                        sys.residual[n + r0 + r] += g1 * (bv + phi_t[r]) + g2 * phi[r];
                    }
                }
            }
        }
    }

    /// Fills the matrix `[W B^T; B 0]` of a projection onto the constraints
    /// at (u, t), with the metric `W = M(u)` (`mass`, Chin eq. 3.68 /
    /// 4.15) or `W = I` (eq. 3.69, for badly scaled or singular masses); the
    /// residual is left zero. With `residuals = Some((v, phi, rate))` it
    /// also writes `Phi(u, t)` into `phi` and `B(u, t) v + Phi_t(u, t)` into
    /// `rate` (as [`Mechanics::constraint_values`] and
    /// [`Mechanics::constraint_rates`] do) from the same Jacobian blocks:
    /// PStab's drift test and its matrix at the unstabilized point
    /// (Chin Algorithm 3.3, steps 2–3) with one Jacobian evaluation.
    pub fn fill_projection(
        &self,
        u: &[f64],
        t: f64,
        mass: bool,
        sys: &mut SaddleSystem,
        residuals: Option<(&[f64], &mut [f64], &mut [f64])>,
    ) {
        let model = self.model;
        sys.residual.fill(0.0);
        sys.values.fill(0.0);
        if mass {
            self.add_mass(&mut sys.values, 1.0);
            if model.elements.iter().any(|b| b.has_inertia()) {
                let zeros = std::mem::take(&mut sys.zeros);
                let x = RateState {
                    u,
                    v: &zeros,
                    a: &zeros,
                    midpoint: None,
                };
                self.add_rate_forces(&x, Some([0.0, 0.0, 1.0]), sys);
                sys.zeros = zeros;
                sys.residual.fill(0.0);
            }
        } else {
            for &d in &self.diag_slots {
                sys.values[d] = 1.0;
            }
        }
        let mut bl = [0.0; MAX_ROWS * MAX_LOCAL_DOFS];
        let mut vl = [0.0; MAX_LOCAL_DOFS];
        let mut residuals = residuals;
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                blk.jacobian(i, u, t, &mut bl[..rows * k]);
                let blk_slots = i * rows * k..(i + 1) * rows * k;
                scatter_set(&mut sys.values, &s.b[blk_slots.clone()], &bl[..rows * k]);
                scatter_set(&mut sys.values, &s.c[blk_slots], &bl[..rows * k]);
                if let Some((v, phi, rate)) = residuals.as_mut() {
                    let r0 = s.row0 + i * rows;
                    blk.phi(i, u, t, &mut phi[r0..r0 + rows]);
                    blk.phi_t(i, u, t, &mut rate[r0..r0 + rows]);
                    gather(v, blk.dofs(i), &mut vl[..k]);
                    for r in 0..rows {
                        rate[r0 + r] += (0..k).map(|p| bl[r * k + p] * vl[p]).sum::<f64>();
                    }
                }
            }
        }
    }

    /// The matrix `[M B^T; B 0]` of the consistent-initialization solve at the model's initial state.
    pub fn initial_saddle_matrix(&self) -> CsMat<f64> {
        let model = self.model;
        let mut sys = self.new_system();
        self.fill_index1(&model.u0, &model.v0, 0.0, None, &mut sys);
        self.pattern.to_csc(&sys.values)
    }
}
