//! One step of TDG or alpha–kappa as the nonlinear system of the Newton
//! driver ([`crate::integrate::newton::solve`]): the block residual and
//! matrix of [`super::fill`] at the unknowns in the workspace, the block
//! solve (with kappa's Sherman–Morrison term), and the scaled test's scales
//! of docs/theory/galerkin.md §2–3 (those of docs/theory/gssss.md §12 per
//! block).

use crate::assembly::Mechanics;
use crate::integrate::newton::{driver::scaled_l2, weighted_rms, Correction, NonlinearSystem};
use crate::integrate::StepError;
use crate::linalg::{dot, SolveError};

use super::{fill, TdgSettings, Workspace};
use crate::linalg::max_abs;

/// The equations of one step of size `h` from `t_n`.
pub(super) struct StepSystem<'a, 's> {
    pub sys: &'a Mechanics<'s>,
    pub ws: &'a mut Workspace,
    pub settings: &'a TdgSettings,
    pub t_n: f64,
    pub h: f64,
    /// The step's number (of the singular-matrix error).
    pub step: u64,
    /// `atol` in displacement units.
    pub atol_u: f64,
    /// The force round-off (docs/theory/gssss.md §12).
    pub floor_l: f64,
    /// The force tolerance `max(rtol |M (v1 - vn)/h - M g| + ..., floor)` of
    /// the last assembly, and that of the step's first (the line search's
    /// weights, fixed over the step).
    pub f_tol: f64,
    pub f_tol_first: Option<f64>,
    /// The force scale of the last assembly.
    pub force_scale: f64,
}

impl StepSystem<'_, '_> {
    /// The coordinate tolerance `max(atol, round-off)`.
    fn coord_tol(&self) -> f64 {
        self.atol_u.max(self.ws.round_off.coord_floor())
    }

    fn singular(&self, e: SolveError) -> StepError {
        StepError::Singular {
            step: self.step,
            time: self.t_n + self.h,
            diagnosis: format!("{e} (the block Newton matrix of docs/theory/galerkin.md §2)"),
        }
    }
}

impl NonlinearSystem for StepSystem<'_, '_> {
    type Error = StepError;

    /// The block matrix is filled with the residual whatever `matrix`; under
    /// modified Newton ([`crate::integrate::Refactor::Step`]) it is factored
    /// only when refreshed.
    fn assemble(&mut self, _matrix: bool) -> Result<f64, StepError> {
        fill(self.sys, self.ws, self.settings, self.t_n, self.h);
        Ok(max_abs(&self.ws.res))
    }

    /// Force rows (Ra, 3Rb / 3) over the force tolerance, constraint rows
    /// over the coordinate tolerance; for alpha–kappa the kinematic rows
    /// (2Rc, 6Rd / 3, momentum units) over `2 h` times the force tolerance
    /// and the velocity constraints over the coordinate tolerance over `h`.
    fn residual_ratio(&mut self) -> f64 {
        let ws = &mut *self.ws;
        let (n, nb, h) = (ws.n, ws.nb, self.h);
        // Force scale: |M (v1 - vn)/h - M g| + |the other forces of Ra|.
        for i in 0..n {
            ws.w[i] = (ws.v1[i] - ws.vn[i]) / h;
        }
        ws.inertia.fill(0.0);
        self.sys.mass_mul_add(&ws.w, &mut ws.inertia);
        self.sys.subtract_gravity(&mut ws.inertia, 1.0);
        self.force_scale = ws.res[..n]
            .iter()
            .zip(&ws.inertia)
            .fold(0.0_f64, |mx, (e, f)| mx.max(f.abs() + (e - f).abs()));
        let f_tol = (self.settings.newton.rtol * self.force_scale).max(self.floor_l);
        self.f_tol = f_tol;
        self.f_tol_first.get_or_insert(f_tol);
        let coord_tol = self.coord_tol();
        let res = &self.ws.res;
        let mut ratio = max_abs(&res[..n]).max(max_abs(&res[nb..nb + n]) / 3.0) / f_tol;
        ratio = ratio.max(max_abs(&res[n..nb]).max(max_abs(&res[nb + n..2 * nb])) / coord_tol);
        if self.ws.k == 4 {
            // Kinematic rows (momentum units) and velocity constraints.
            ratio = ratio
                .max(
                    max_abs(&res[2 * nb..2 * nb + n]).max(max_abs(&res[3 * nb..3 * nb + n]) / 3.0)
                        / (2.0 * f_tol * h),
                )
                .max(
                    max_abs(&res[2 * nb + n..3 * nb]).max(max_abs(&res[3 * nb + n..]))
                        / (coord_tol / h),
                );
        }
        ratio
    }

    /// The scaled 2-norm of the blocks with the weights of
    /// [`Self::residual_ratio`], the force tolerance fixed at the step's
    /// first assembly.
    fn merit(&mut self) -> f64 {
        let (n, nb, h) = (self.ws.n, self.ws.nb, self.h);
        let f_tol = self.f_tol_first.unwrap_or(self.f_tol);
        let coord_tol = self.coord_tol();
        let res = &self.ws.res;
        let weights = [
            1.0 / f_tol,
            1.0 / coord_tol,
            1.0 / (3.0 * f_tol),
            1.0 / coord_tol,
            1.0 / (2.0 * f_tol * h),
            h / coord_tol,
            1.0 / (6.0 * f_tol * h),
            h / coord_tol,
        ];
        scaled_l2((0..2 * self.ws.k).map(|b| {
            let (block, part) = (b / 2, b % 2);
            let rows = if part == 0 {
                block * nb..block * nb + n
            } else {
                block * nb + n..(block + 1) * nb
            };
            (&res[rows], weights[b])
        }))
    }

    fn factor(&mut self) -> Result<(), StepError> {
        let ws = &mut *self.ws;
        ws.pattern.gather(&ws.blocks, &mut ws.values);
        ws.solver.factor(&ws.values).map_err(|e| self.singular(e))
    }

    /// With kappa's derivative, exact Newton by Sherman–Morrison:
    /// `(J0 + u g^T)^-1 r = y - z (g^T y) / (1 + g^T z)`, `y = J0^-1 r`,
    /// `z = J0^-1 u`; where `1 + g^T z` vanishes the exact matrix is singular
    /// and the step keeps `y` (kappa held).
    fn solve(&mut self) -> Result<(), StepError> {
        let ws = &mut *self.ws;
        for (r, e) in ws.rhs.iter_mut().zip(&ws.res) {
            *r = -e;
        }
        if let Err(e) = ws.solver.solve_again(&mut ws.rhs) {
            return Err(self.singular(e));
        }
        if ws.kappa_free {
            ws.sm.copy_from_slice(&ws.dres_dkappa);
            if let Err(e) = ws.solver.solve_again(&mut ws.sm) {
                return Err(self.singular(e));
            }
            let denom = 1.0 + dot(&ws.dkappa, &ws.sm);
            if denom.abs() >= 1e-8 {
                let f = dot(&ws.dkappa, &ws.rhs) / denom;
                for (r, z) in ws.rhs.iter_mut().zip(&ws.sm) {
                    *r -= f * z;
                }
            }
        }
        Ok(())
    }

    fn move_along(&mut self, by: f64) {
        for (x, d) in self.ws.x.iter_mut().zip(&self.ws.rhs) {
            *x += by * d;
        }
    }

    /// Block b: coordinates (b < 2) or velocities in their units,
    /// multipliers lambda in force units, eta in momentum units.
    fn correction(&mut self) -> Correction {
        let ws = &*self.ws;
        let (n, nb, k, h) = (ws.n, ws.nb, ws.k, self.h);
        let (rtol, atol_u, floor_l) = (self.settings.newton.rtol, self.atol_u, self.floor_l);
        let ro = ws.round_off;
        let atol_l = atol_u / ro.coord_scale * self.force_scale;
        let (x, dx) = (&ws.x, &ws.rhs);
        let unit = |b: usize| if b < 2 { 1.0 } else { 1.0 / h };
        let inc_u = weighted_rms((0..k).flat_map(|b| {
            (b * nb..b * nb + n).map(move |i| {
                let w = (rtol * x[i].abs() + atol_u * unit(b)).max(ro.coord_floor() * unit(b));
                (dx[i], w)
            })
        }));
        let inc_l = weighted_rms((0..k).flat_map(|b| {
            (b * nb + n..(b + 1) * nb).map(move |i| {
                let w = (rtol * x[i].abs() + atol_l / unit(b)).max(floor_l / unit(b));
                (dx[i], w)
            })
        }));
        Correction {
            ratio: inc_u.max(inc_l),
            parts: None,
        }
    }
}
