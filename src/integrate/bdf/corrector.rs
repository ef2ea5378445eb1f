//! The corrector of one BDF attempt (block 4 of DDASTP) as a
//! [`NonlinearSystem`] of the one Newton driver ([`newton::solve`]): the
//! residual `F(t1, y, y0' + cj (y - y0))`, DASSL's iteration matrix kept
//! across iterations and steps (refreshed only when [`Bdf`] asks), each
//! correction scaled by `2 / (1 + cj / cj_old)`, and DASSL's rate test
//! (Brenan, Campbell & Petzold, §5.2.2): converged when
//! `s |delta| <= 0.33` with the rate estimate `s`, or when the correction is
//! at round-off; failed when the rate exceeds 0.9.
//!
//! The line search is refused for BDF (`line_search` in the settings): DASSL's
//! test judges the corrections by their rate, and a step whose corrector
//! does not converge is cut (h / 4), not globalized.

use super::{Bdf, MAXIT, NEWTON_ITERATIONS, NFCN, NJAC, NSPLIT};
use crate::assembly::Mechanics;
use crate::integrate::newton::{self, Correction, Failure, Policy, Verdict};
use crate::integrate::StepError;

/// What [`newton::solve`] does for the corrector: at most [`MAXIT`]
/// iterations, the stop test and the matrix refresh being the corrector's
/// own ([`NonlinearSystem::verdict`](newton::NonlinearSystem::verdict),
/// [`NonlinearSystem::refresh`](newton::NonlinearSystem::refresh)).
const POLICY: Policy = Policy::newton(MAXIT);

/// One attempt's corrector at `t1` over the engine's state.
struct Corrector<'b, 's, 'm> {
    bdf: &'b mut Bdf,
    sys: &'s Mechanics<'m>,
    t1: f64,
    stats: &'b mut [f64],
    iterations: &'b mut u32,
    /// The predictor's weighted norm (the round-off test's scale).
    pnorm: f64,
    /// The first iteration's weighted correction (the rate's base).
    oldnrm: f64,
}

impl Bdf {
    /// The corrector iteration of one attempt (block 4). Ok(true): converged.
    pub(super) fn correct(
        &mut self,
        sys: &Mechanics<'_>,
        t1: f64,
        stats: &mut [f64],
        iterations: &mut u32,
    ) -> Result<bool, StepError> {
        self.newton_weights();
        let pnorm = self.norm_with(&self.y, &self.conv_mask, &self.wt_newton);
        self.e.fill(0.0);
        let mut newton = std::mem::take(&mut self.newton);
        let mut corrector = Corrector {
            bdf: self,
            sys,
            t1,
            stats,
            iterations,
            pnorm,
            oldnrm: 0.0,
        };
        let out = newton::solve(&mut corrector, &POLICY, &mut newton, None);
        self.newton = newton;
        match out {
            Ok(_) => Ok(true),
            Err(Failure::Stopped { .. }) => Ok(false),
            Err(Failure::Error(e)) => Err(e),
        }
    }
}

impl Corrector<'_, '_, '_> {
    /// The residual F at the iterate into `delta`.
    fn residual(&mut self) -> Result<(), StepError> {
        let bdf = &mut *self.bdf;
        self.stats[NFCN] += 1.0;
        bdf.ggl
            .residual(self.sys, self.t1, &mut bdf.y, &bdf.yp, &mut bdf.delta)
    }
}

impl newton::NonlinearSystem for Corrector<'_, '_, '_> {
    type Error = StepError;

    /// The residual, and with `matrix` the iteration matrix, factored (a
    /// re-split of CS or CM changes the residual, same fixed point: it is
    /// assembled again).
    fn assemble(&mut self, matrix: bool) -> Result<f64, StepError> {
        self.residual()?;
        if matrix {
            let (bdf, sys, t1) = (&mut *self.bdf, self.sys, self.t1);
            self.stats[NJAC] += 1.0;
            bdf.new_jacobian = false;
            let before = bdf.ggl.resplits();
            bdf.ggl.jacobian(sys, t1, &bdf.y, &bdf.yp, bdf.cj)?;
            self.stats[NSPLIT] += (bdf.ggl.resplits() - before) as f64;
            bdf.cjold = bdf.cj;
            bdf.s = 100.0;
            if bdf.ggl.resplits() != before {
                self.residual()?;
            }
        }
        Ok(self.bdf.delta.iter().fold(0.0_f64, |a, x| a.max(x.abs())))
    }

    /// The matrix of the last refresh, or a fresh one when [`Bdf`] asks
    /// (a new step size ratio out of [0.6, 1.667], a failed attempt).
    fn refresh(&mut self, _iteration: u32, _policy: bool) -> bool {
        self.bdf.new_jacobian
    }

    /// The matrix is factored where it is assembled ([`Self::assemble`]).
    fn factor(&mut self) -> Result<(), StepError> {
        Ok(())
    }

    /// `delta = (2 / (1 + cj / cj_old)) J^-1 F` (the correction is
    /// subtracted, [`Self::move_along`]).
    fn solve(&mut self) -> Result<(), StepError> {
        let bdf = &mut *self.bdf;
        bdf.last_residual.copy_from_slice(&bdf.delta);
        bdf.ggl.solve(&mut bdf.delta, self.t1)?;
        *self.iterations += 1;
        self.stats[NEWTON_ITERATIONS] += 1.0;
        let scale = 2.0 / (1.0 + bdf.cj / bdf.cjold);
        for x in &mut bdf.delta {
            *x *= scale;
        }
        Ok(())
    }

    /// `y -= by delta`, `e -= by delta`, `y' -= by cj delta`.
    fn move_along(&mut self, by: f64) {
        let bdf = &mut *self.bdf;
        let cj = bdf.cj;
        for (((y, yp), e), d) in bdf
            .y
            .iter_mut()
            .zip(&mut bdf.yp)
            .zip(&mut bdf.e)
            .zip(&bdf.delta)
        {
            let d = by * d;
            *y -= d;
            *e -= d;
            *yp -= cj * d;
        }
    }

    /// DASSL's weighted norm of the correction (Newton weights, [`Bdf::newton_weights`]).
    fn correction(&mut self) -> Correction {
        let bdf = &*self.bdf;
        Correction {
            ratio: bdf.norm_with(&bdf.delta, &bdf.conv_mask, &bdf.wt_newton),
            parts: None,
        }
    }

    /// DASSL's test on the weighted correction `delnrm` of iteration `m + 1`:
    /// converged at round-off (`delnrm <= 100 eps |y0|`), failed at a
    /// non-finite correction or a rate `(delnrm / delnrm_0)^(1/m)` above
    /// 0.9, converged when `s delnrm <= 0.33` with `s = rate / (1 - rate)`
    /// (carried over from earlier steps at `m = 0`). One safeguard: the
    /// first iterate of an attempt is not accepted on a carried-over rate
    /// when its correction exceeds the tolerance itself (`delnrm > 1`). A
    /// superlinear iteration leaves s tiny (2e-6 on the circular track),
    /// which let DASSL's rule accept first corrections of 17 times the
    /// tolerance; the iterate then failed the error test or left the
    /// constraints off by more than the Newton tolerance
    /// (docs/theory/bdf-ggl.md §2).
    fn verdict(&mut self, correction: &Correction, iteration: u32) -> Option<Verdict> {
        let delnrm = correction.ratio;
        let m = iteration - 1;
        Some(if !delnrm.is_finite() {
            Verdict::Diverged
        } else if delnrm <= 100.0 * f64::EPSILON * self.pnorm {
            Verdict::Converged
        } else {
            if m > 0 {
                let rate = (delnrm / self.oldnrm).powf(1.0 / f64::from(m));
                if rate > 0.9 {
                    return Some(Verdict::Diverged);
                }
                self.bdf.s = rate / (1.0 - rate);
            } else {
                self.oldnrm = delnrm;
            }
            if self.bdf.s * delnrm <= 0.33 && (m > 0 || delnrm <= 1.0) {
                Verdict::Converged
            } else {
                Verdict::Continue
            }
        })
    }
}
