//! DDASTP's step control around the corrector (Brenan, Campbell & Petzold,
//! §5.2–5.3; the module doc of [`super`]): the first step, the size of an
//! attempt, the predict–correct attempt, the error test with the order
//! that would be lower (block 5), the next order and step of an accepted
//! attempt (block 6), and the restore and cut of a failed one (block 7).

use super::{Bdf, CTFS, ETFS, MAX_CONV_FAILS, MAX_SINGULAR, NSTEP, ORDER};
use crate::assembly::Mechanics;
use crate::integrate::StepError;

/// How an attempt's corrector ended.
pub(super) enum Corrected {
    /// Converged.
    Converged,
    /// Did not converge (with a fresh matrix).
    Failed,
    /// The iteration matrix or a solve was singular.
    Singular(StepError),
}

/// The failures of the attempts on one step so far.
#[derive(Default)]
pub(super) struct Fails {
    conv: u32,
    singular: u32,
    error: u32,
}

/// The step an attempt belongs to (the failure reports).
pub(super) struct Failure {
    pub step: u64,
    pub t1: f64,
    pub iterations: u32,
}

/// Block 5: the error test of a converged attempt at order `k` and what
/// the orders around it would give.
pub(super) struct Estimate {
    pub accepted: bool,
    /// The order the estimates favour (`k` or `k - 1`).
    knew: usize,
    est: f64,
    terk: f64,
    terkm1: f64,
    erkm1: f64,
}

impl Estimate {
    /// No estimate (the corrector failed).
    pub fn none(k: usize) -> Self {
        Estimate {
            accepted: false,
            knew: k,
            est: 0.0,
            terk: 0.0,
            terkm1: 0.0,
            erkm1: 0.0,
        }
    }
}

impl Bdf {
    /// The first step: DASSL's initial size, phi_1 = y0, phi_2 = h y0'.
    pub(super) fn first_step(&mut self, t_stop: f64) {
        let h = self.initial_step(t_stop);
        self.h = h;
        self.psi[0] = h;
        self.cjold = 1.0 / h;
        self.cj = self.cjold;
        self.phi[0].copy_from_slice(&self.y);
        for (p, yp) in self.phi[1].iter_mut().zip(&self.yp) {
            *p = h * yp;
        }
        self.pending_h0 = false;
    }

    /// Counts an attempt and sizes it: TSTOP and HMAX (DDASSL); a step that
    /// would leave less than 1 % of itself before t_stop is stretched to
    /// t_stop (Hairer's codes: x + 1.01 h > xend): a sliver of a last step
    /// makes the corrector's y' = y0' + cj (y - y0) amplify the Newton error
    /// of v by cj ~ 1/h (the slider-crank with CS at rtol 1e-5 ended with
    /// h = 3e-6 and accelerations 46 % off). The step below round-off gives
    /// up.
    pub(super) fn attempt_size(
        &mut self,
        t_stop: f64,
        step: u64,
        fails: &Fails,
    ) -> Result<(), StepError> {
        if self.attempts >= self.settings.max_steps {
            return Err(StepError::TooManySteps {
                limit: self.settings.max_steps,
                time: self.t,
            });
        }
        self.attempts += 1;
        if let Some(h) = self.fixed {
            self.h = h;
        }
        self.h = self.h.min(self.settings.max_step);
        if self.t + 1.01 * self.h >= t_stop {
            self.h = t_stop - self.t;
        }
        let hmin = 4.0 * f64::EPSILON * self.t.abs().max(t_stop.abs());
        if self.h.is_nan() || self.h < hmin || !self.h.is_finite() {
            return Err(StepError::StepSize {
                step,
                time: self.t,
                h: self.h,
                rejected: fails.conv + fails.error + fails.singular,
            });
        }
        Ok(())
    }

    /// Blocks 2–3 of an attempt: the coefficients, `cj` (a new matrix when
    /// `cj / cj_old` leaves [0.6, 1.667]) and phi*; returns the error
    /// constant `ck`.
    pub(super) fn prepare_attempt(&mut self) -> f64 {
        self.coefficients();
        let k = self.k;
        let alphas: f64 = -(1..=k).map(|i| 1.0 / i as f64).sum::<f64>();
        let alpha0: f64 = -self.alpha[..k].iter().sum::<f64>();
        let cjlast = self.cj;
        self.cj = -alphas / self.h;
        let ck = (self.alpha[k] + alphas - alpha0).abs().max(self.alpha[k]);
        let ratio = self.cj / self.cjold;
        if !(0.6..=1.0 / 0.6).contains(&ratio) {
            self.new_jacobian = true;
        }
        if self.cj != cjlast {
            self.s = 100.0;
        }
        self.scale_phi(false);
        ck
    }

    /// Blocks 3–4: predict and correct, redone once with a fresh matrix
    /// when a stale one failed; errors other than a singular matrix end the
    /// run.
    pub(super) fn attempt(
        &mut self,
        sys: &Mechanics<'_>,
        t1: f64,
        stats: &mut [f64],
        iterations: &mut u32,
    ) -> Result<Corrected, StepError> {
        loop {
            self.predict();
            let fresh = self.new_jacobian;
            match self.correct(sys, t1, stats, iterations) {
                Ok(true) => return Ok(Corrected::Converged),
                Ok(false) if !fresh => self.new_jacobian = true,
                Ok(false) => return Ok(Corrected::Failed),
                Err(e @ StepError::Singular { .. }) => return Ok(Corrected::Singular(e)),
                Err(e) => return Err(e),
            }
        }
    }

    /// Block 5: the error test of the converged attempt at order `k`, and
    /// whether order `k - 1` would do better.
    pub(super) fn error_estimate(&mut self, k: usize, ck: f64) -> Estimate {
        let enorm = self.norm(&self.e, &self.err_mask);
        let erk = self.sigma[k] * enorm;
        let mut out = Estimate::none(k);
        out.terk = (k + 1) as f64 * erk;
        out.est = erk;
        if k > 1 {
            for (d, (p, e)) in self.delta.iter_mut().zip(self.phi[k].iter().zip(&self.e)) {
                *d = p + e;
            }
            out.erkm1 = self.sigma[k - 1] * self.norm(&self.delta, &self.err_mask);
            out.terkm1 = k as f64 * out.erkm1;
            let lower = if k > 2 {
                for (d, p) in self.delta.iter_mut().zip(&self.phi[k - 1]) {
                    *d += p;
                }
                let erkm2 = self.sigma[k - 2] * self.norm(&self.delta, &self.err_mask);
                out.terkm1.max((k - 1) as f64 * erkm2) <= out.terk
            } else {
                out.terkm1 <= 0.5 * out.terk
            };
            if lower {
                out.knew = k - 1;
                out.est = out.erkm1;
            }
        }
        out.accepted = self.fixed.is_some() || ck * enorm <= 1.0;
        out
    }

    /// Block 6: the next order and step after an accepted attempt at order
    /// `k`, and the updated differences.
    pub(super) fn accept(&mut self, k: usize, estimate: &Estimate, stats: &mut [f64]) {
        let (max_order, kp1) = (self.settings.max_order, k + 1);
        stats[NSTEP] += 1.0;
        stats[ORDER] = k as f64;
        let kdiff = k as isize - self.kold as isize;
        self.kold = k;
        self.hold = self.h;
        if self.fixed.is_none() {
            if estimate.knew + 1 == k || k == max_order {
                self.iphase = true;
            }
            if !self.iphase {
                self.k = kp1;
                self.h *= 2.0;
            } else {
                let est = self.next_order(k, kdiff, estimate);
                let r = (2.0 * est + 1e-4).powf(-1.0 / (self.k + 1) as f64);
                if r >= 2.0 {
                    self.h *= 2.0;
                } else if r <= 1.0 {
                    self.h *= r.clamp(0.5, 0.9);
                }
            }
        }
        if self.kold < max_order {
            self.phi[kp1].copy_from_slice(&self.e);
        }
        for (p, e) in self.phi[k].iter_mut().zip(&self.e) {
            *p += e;
        }
        for j in (0..k).rev() {
            let (a, b) = self.phi.split_at_mut(j + 1);
            for (x, y) in a[j].iter_mut().zip(&b[0]) {
                *x += y;
            }
        }
    }

    /// DASSL's order selection after the start-up phase (terk-1, terk,
    /// terk+1); returns the error estimate of the order chosen.
    fn next_order(&mut self, k: usize, kdiff: isize, estimate: &Estimate) -> f64 {
        let (max_order, kp1) = (self.settings.max_order, k + 1);
        let (terk, terkm1) = (estimate.terk, estimate.terkm1);
        let mut est = estimate.est;
        if estimate.knew + 1 == k {
            self.k = k - 1;
            est = estimate.erkm1;
        } else if !(k == max_order || kp1 >= self.ns || kdiff == 1) {
            for (d, (e, p)) in self.delta.iter_mut().zip(self.e.iter().zip(&self.phi[kp1])) {
                *d = e - p;
            }
            let erkp1 = self.norm(&self.delta, &self.err_mask) / (k + 2) as f64;
            let terkp1 = (k + 2) as f64 * erkp1;
            if k == 1 {
                if terkp1 < 0.5 * terk {
                    self.k = kp1;
                    est = erkp1;
                }
            } else if terkm1 <= terk.min(terkp1) {
                self.k = k - 1;
                est = estimate.erkm1;
            } else if terkp1 < terk && k != max_order {
                self.k = kp1;
                est = erkp1;
            }
        }
        est
    }

    /// Block 7, first half: phi and psi back to the step's start.
    pub(super) fn restore(&mut self, k: usize) {
        self.iphase = true;
        self.scale_phi(true);
        for i in 1..k + 1 {
            self.psi[i - 1] = self.psi[i] - self.h;
        }
    }

    /// Block 7, second half: the cut after a failed attempt (error test:
    /// the estimate's, then h / 4 and order 1; convergence or a singular
    /// matrix: h / 4 and a fresh matrix), or the run's end after too many.
    pub(super) fn reject(
        &mut self,
        sys: &Mechanics<'_>,
        corrected: Corrected,
        estimate: &Estimate,
        at: &Failure,
        fails: &mut Fails,
        stats: &mut [f64],
    ) -> Result<(), StepError> {
        if self.fixed.is_some() {
            return Err(match corrected {
                Corrected::Singular(e) => e,
                _ => StepError::NewtonFailed {
                    step: at.step,
                    time: at.t1,
                    iterations: at.iterations,
                    reason: "the BDF corrector did not converge at the fixed step".into(),
                    history: self.newton.history.clone(),
                    largest: self.largest_residuals(sys),
                },
            });
        }
        match corrected {
            Corrected::Converged => {
                stats[ETFS] += 1.0;
                fails.error += 1;
                if fails.error == 1 {
                    self.k = estimate.knew;
                    let r = 0.9 * (2.0 * estimate.est + 1e-4).powf(-1.0 / (self.k + 1) as f64);
                    self.h *= r.clamp(0.25, 0.9);
                } else if fails.error == 2 {
                    self.k = estimate.knew;
                    self.h *= 0.25;
                } else {
                    self.k = 1;
                    self.h *= 0.25;
                }
            }
            Corrected::Failed => {
                stats[CTFS] += 1.0;
                fails.conv += 1;
                self.h *= 0.25;
                self.new_jacobian = true;
                if fails.conv >= MAX_CONV_FAILS {
                    return Err(StepError::NewtonFailed {
                        step: at.step,
                        time: at.t1,
                        iterations: at.iterations,
                        reason: self.convergence_failure(),
                        history: self.newton.history.clone(),
                        largest: self.largest_residuals(sys),
                    });
                }
            }
            Corrected::Singular(e) => {
                stats[CTFS] += 1.0;
                fails.singular += 1;
                self.h *= 0.25;
                self.new_jacobian = true;
                if fails.singular >= MAX_SINGULAR {
                    return Err(match e {
                        StepError::Singular { diagnosis, .. } => StepError::Singular {
                            step: at.step,
                            time: at.t1,
                            diagnosis,
                        },
                        other => other,
                    });
                }
            }
        }
        Ok(())
    }
}
