//! Explicit Runge–Kutta methods on the index-1 form (Chin ch. 4,
//! "RKSTAB"): one engine, tableaux as data ([`tableau`]); fixed steps, or
//! adaptive steps with the embedded error estimate and the step-size
//! controller of DOPRI5 (Hairer, Nørsett & Wanner I, §II.4 and the code
//! `dopri5`: PI control with beta = 0.04, safety 0.9, step ratio in
//! [0.2, 10], initial step `hinit`); dense output (Dormand–Prince's
//! continuous extension, cubic Hermite otherwise; with PStab the
//! interpolated state is stabilized too, so recorded output satisfies the
//! constraints like the steps do).
//!
//! Drift control (Chin): Baumgarte's B(g1, g2) in the right-hand side
//! ([`super::index1::Index1`]), or post-stabilization PStab (S-both2,
//! eq. 4.10–4.13) applied to every attempted step before its error estimate:
//! the unstabilized 5th-order result `z~` is projected twice with one
//! factorization at `z~` ([`Projector::stabilize`]), the end stage is
//! evaluated at the stabilized point (FSAL), and the local error is the
//! embedded difference `h sum_j e_j k_j` with that end stage. PStab is skipped when the drift of `z~` is
//! at most `datol` (`datol = 0`: every step). Counters as Chin defines
//! them: NFCN right-hand sides (6 per attempted DOPRI5 step + 2 at the
//! start), NSTEP attempted steps, NACCP accepted, NREJCT rejected, NSTAB
//! stabilized.

mod settings;
pub mod tableau;

use std::time::Instant;

pub use tableau::{Tableau, DOPRI5, HEUN, RK4};

use super::epm::Epm;
use super::index1::Index1;
use super::projector::{Drift, Projector};
use super::{statistics, FixedGrid, Integrator, State, StepError, StepReport};
use crate::assembly::Mechanics;
use crate::integrate::Identity;
use crate::linalg::max_abs;
pub use settings::{Formulation, RkSettings, RkStep, Stabilization};

statistics! {
    /// Statistics of a Runge–Kutta step (indices into [`StepReport::stats`]).
    pub(crate) STATS = [
        NFCN, NSTEP, NACCEPT, NREJECT, NSTAB, DRIFT_POSITION, DRIFT_VELOCITY, STAB_SECONDS, NPASS,
    ];
}

/// DOPRI5's controller constants.
const SAFE: f64 = 0.9;
const BETA: f64 = 0.04;
/// 1 / smallest step ratio.
const FACC1: f64 = 5.0;
/// 1 / largest step ratio.
const FACC2: f64 = 0.1;

/// An explicit Runge–Kutta method on the index-1 form.
pub struct RungeKutta {
    /// Label, run metadata and statistics.
    identity: Identity,
    tab: Tableau,
    step: RkStep,
    datol: f64,
    field: Field,
    projector: Option<Projector>,
    n: usize,
    ws: Work,
    /// Step size to try next (adaptive), or the fixed step.
    h: f64,
    facold: f64,
    last_rejected: bool,
    /// Fixed-step grid.
    grid: FixedGrid,
    /// Statistics of the start (f(t0) and the initial step), reported with the first step.
    pending: [f64; 2],
    /// The last accepted step: start time and size.
    last: (f64, f64),
    /// Attempted steps since the start (the adaptive `max_steps` limit).
    attempts: u64,
}

/// The ODE the tableau integrates.
enum Field {
    /// The index-1 form in y = (u, v) (Chin).
    Index1(Box<Index1>),
    /// The embedded projection method in the modified state y = (q*, p*) (Borri and Trainelli).
    Epm(Box<Epm>),
}

impl Field {
    /// f(t, y) into `k`, the multipliers (reactions) into `lambda`.
    fn eval(
        &mut self,
        sys: &Mechanics<'_>,
        t: f64,
        y: &[f64],
        k: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), StepError> {
        match self {
            Field::Index1(rhs) => {
                let n = y.len() / 2;
                let (u, v) = y.split_at(n);
                let (ku, kv) = k.split_at_mut(n);
                ku.copy_from_slice(v);
                rhs.eval(sys, t, u, v, kv, lambda)
            }
            Field::Epm(epm) => epm.eval(sys, t, y, k, lambda),
        }
    }

    /// Positions and velocities of the last evaluation, at y with derivative k.
    fn configuration<'a>(&'a self, y: &'a [f64]) -> (&'a [f64], &'a [f64]) {
        match self {
            Field::Index1(_) => y.split_at(y.len() / 2),
            Field::Epm(epm) => (&epm.q, &epm.v),
        }
    }

    /// Writes the original state of the last evaluation (at y, derivative k,
    /// multipliers `lambda`) into `out`.
    fn recover(&self, y: &[f64], k: &[f64], lambda: &[f64], out: &mut State) {
        let n = out.u.len();
        match self {
            Field::Index1(_) => {
                out.u.copy_from_slice(&y[..n]);
                out.v.copy_from_slice(&y[n..]);
                out.a.copy_from_slice(&k[n..]);
            }
            Field::Epm(epm) => {
                out.u.copy_from_slice(&epm.q);
                out.v.copy_from_slice(&epm.v);
                out.a.copy_from_slice(&epm.a);
            }
        }
        out.lambda.copy_from_slice(lambda);
    }
}

/// Workspace (no allocation per step).
struct Work {
    /// y_n = (u_n, v_n).
    y0: Vec<f64>,
    /// Stage derivatives k_1..k_s and the end stage k_{s+1} = f(t_n + h, y_{n+1}).
    k: Vec<Vec<f64>>,
    ytmp: Vec<f64>,
    ynew: Vec<f64>,
    lambda: Vec<f64>,
    lambda_end: Vec<f64>,
    /// Positions and velocities at y0 (the original state).
    u_last: Vec<f64>,
    v_last: Vec<f64>,
    phi: Vec<f64>,
    rate: Vec<f64>,
    /// Dense output of the last accepted step (5 arrays of 2n).
    dense: Vec<Vec<f64>>,
    /// Derivative at an interpolated point.
    kdense: Vec<f64>,
    /// Power of the non-conservative forces at the stages.
    power: Vec<f64>,
    /// Their work over the last attempt, `h sum_i b_i P_i`.
    work: f64,
}

impl RungeKutta {
    /// The method for the model in `sys`.
    pub fn new(
        sys: &Mechanics<'_>,
        identity: Identity,
        settings: &RkSettings,
        solver: crate::linalg::SolverChoice,
    ) -> Result<Self, StepError> {
        let (n, m) = (sys.n_dofs(), sys.n_constraints());
        let (baumgarte, projector, datol) = match settings.stabilization {
            Stabilization::None => (None, None, 0.0),
            Stabilization::Baumgarte(g) => (Some(g), None, 0.0),
            Stabilization::PStab {
                datol,
                metric,
                passes,
            } => {
                let mut p = Projector::new(sys, metric, solver)?;
                p.set_passes(passes);
                (None, Some(p), datol)
            }
        };
        let z = |k: usize| vec![0.0; k];
        let h = match settings.step {
            RkStep::Fixed { dt } => dt,
            RkStep::Adaptive { .. } => 0.0,
        };
        Ok(RungeKutta {
            identity,
            tab: settings.tableau,
            step: settings.step,
            datol,
            field: match settings.formulation {
                Formulation::Index1 => {
                    Field::Index1(Box::new(Index1::new(sys, baumgarte, solver)?))
                }
                Formulation::Epm => Field::Epm(Box::new(Epm::new(sys, solver)?)),
            },
            projector,
            n,
            ws: Work {
                y0: z(2 * n),
                k: (0..=settings.tableau.stages).map(|_| z(2 * n)).collect(),
                ytmp: z(2 * n),
                ynew: z(2 * n),
                lambda: z(m),
                lambda_end: z(m),
                u_last: z(n),
                v_last: z(n),
                phi: z(m),
                rate: z(m),
                dense: (0..5).map(|_| z(2 * n)).collect(),
                kdense: z(2 * n),
                power: z(settings.tableau.stages),
                work: 0.0,
            },
            h,
            facold: 1e-4,
            last_rejected: false,
            grid: FixedGrid::new(0.0, h),
            pending: [0.0; 2],
            last: (0.0, 0.0),
            attempts: 0,
        })
    }

    /// Error weights of the adaptive control.
    fn tolerances(&self) -> (f64, f64) {
        match self.step {
            RkStep::Adaptive { rtol, atol, .. } => (rtol, atol),
            RkStep::Fixed { .. } => (0.0, 0.0),
        }
    }

    /// Hairer's initial step (`hinit` of dopri5): one extra evaluation.
    fn initial_step(&mut self, sys: &Mechanics<'_>, t: f64, h_max: f64) -> Result<f64, StepError> {
        let (rtol, atol) = self.tolerances();
        let ws = &mut self.ws;
        let (mut dnf, mut dny) = (0.0, 0.0);
        for (y, f) in ws.y0.iter().zip(&ws.k[0]) {
            let sk = atol + rtol * y.abs();
            dnf += (f / sk).powi(2);
            dny += (y / sk).powi(2);
        }
        let mut h = if dnf <= 1e-10 || dny <= 1e-10 {
            1e-6
        } else {
            (dny / dnf).sqrt() * 0.01
        };
        h = h.min(h_max);
        for ((yt, y), f) in ws.ytmp.iter_mut().zip(&ws.y0).zip(&ws.k[0]) {
            *yt = y + h * f;
        }
        let s = self.tab.stages;
        let (head, tail) = ws.k.split_at_mut(s);
        self.field
            .eval(sys, t + h, &ws.ytmp, &mut tail[0], &mut ws.lambda_end)?;
        let mut der2 = 0.0;
        for ((y, f0), f1) in ws.y0.iter().zip(&head[0]).zip(&tail[0]) {
            let sk = atol + rtol * y.abs();
            der2 += ((f1 - f0) / sk).powi(2);
        }
        let der2 = der2.sqrt() / h;
        let der12 = der2.abs().max(dnf.sqrt());
        let h1 = if der12 <= 1e-15 {
            (h * 1e-3).max(1e-6)
        } else {
            (0.01 / der12).powf(1.0 / f64::from(self.tab.order))
        };
        Ok((100.0 * h).min(h1).min(h_max))
    }

    /// One attempt of size h from (t, y0) with k[0] = f(t, y0): the stages,
    /// the result in `ynew` (stabilized when PStab is on), the end stage and
    /// its multipliers, and the scaled error norm (0 for fixed steps).
    fn attempt(
        &mut self,
        sys: &Mechanics<'_>,
        t: f64,
        h: f64,
        stats: &mut [f64],
    ) -> Result<f64, StepError> {
        let n = self.n;
        let s = self.tab.stages;
        let ws = &mut self.ws;
        let nonconservative = sys.has_nonconservative_forces();
        let power =
            |t: f64, (u, v): (&[f64], &[f64])| sys.nonconservative_work(u, v, v, &|f| f.value(t));
        if nonconservative {
            // The state at t: the previous end stage (FSAL) evaluated y0.
            ws.power[0] = power(t, (&ws.u_last, &ws.v_last));
        }
        stats[NSTEP] += 1.0;
        for i in 1..s {
            let row = self.tab.a[i];
            ws.ytmp.copy_from_slice(&ws.y0);
            for (j, &a) in row.iter().enumerate() {
                if a != 0.0 {
                    axpy(h * a, &ws.k[j], &mut ws.ytmp);
                }
            }
            stats[NFCN] += 1.0;
            self.field.eval(
                sys,
                t + self.tab.c[i] * h,
                &ws.ytmp,
                &mut ws.k[i],
                &mut ws.lambda,
            )?;
            if nonconservative {
                ws.power[i] = power(t + self.tab.c[i] * h, self.field.configuration(&ws.ytmp));
            }
        }
        // Work of loads and dampers by the method's own quadrature.
        ws.work = if nonconservative {
            h * self
                .tab
                .b
                .iter()
                .zip(&ws.power)
                .map(|(b, p)| b * p)
                .sum::<f64>()
        } else {
            0.0
        };
        ws.ynew.copy_from_slice(&ws.y0);
        for (j, &b) in self.tab.b.iter().enumerate() {
            if b != 0.0 {
                axpy(h * b, &ws.k[j], &mut ws.ynew);
            }
        }
        let t1 = t + h;
        if let Some(p) = self.projector.as_mut() {
            let clock = Instant::now();
            let (u, v) = ws.ynew.split_at_mut(n);
            // datol = 0: every step is stabilized, and the matrix comes
            // with the residuals from one Jacobian evaluation. Otherwise the
            // test needs the residuals alone, and the matrix is filled only
            // for a step that fails it.
            let stabilize = if self.datol == 0.0 {
                p.prepare(sys, u, v, t1);
                true
            } else if p.residuals(sys, u, v, t1).max() > self.datol {
                p.fill(sys, u, t1);
                true
            } else {
                false
            };
            if stabilize {
                stats[NPASS] += f64::from(p.stabilize(sys, u, v, t1)?);
                stats[NSTAB] += 1.0;
            }
            stats[STAB_SECONDS] += clock.elapsed().as_secs_f64();
        }
        stats[NFCN] += 1.0;
        self.field
            .eval(sys, t1, &ws.ynew, &mut ws.k[s], &mut ws.lambda_end)?;
        let Some(e) = self.tab.error else {
            return Ok(0.0);
        };
        let RkStep::Adaptive { rtol, atol, .. } = self.step else {
            return Ok(0.0);
        };
        // err = z~ - z^ = h sum_j e_j k_j with the end stage at the stabilized
        // point (Chin eqs. 4.11–4.13; the PStab correction z~ - z is not
        // added: see docs/theory/stabilization.md for the measured effect).
        let mut sum = 0.0;
        for i in 0..2 * n {
            let mut x = 0.0;
            for (j, &ej) in e.iter().enumerate() {
                if ej != 0.0 {
                    x += ej * ws.k[j][i];
                }
            }
            let x = h * x;
            let sk = atol + rtol * ws.y0[i].abs().max(ws.ynew[i].abs());
            sum += (x / sk).powi(2);
        }
        Ok((sum / (2 * n).max(1) as f64).sqrt())
    }

    /// Accepts the attempt: the state moves to (t + h, ynew), the dense
    /// output of the step is kept, and the end stage becomes k_1 (FSAL).
    fn accept(&mut self, state: &mut State, t: f64, h: f64) {
        let n = self.n;
        let s = self.tab.stages;
        let ws = &mut self.ws;
        // Dense output (Hairer, Nørsett & Wanner I, §II.6, contd5), or Hermite data.
        match self.tab.dense {
            Some(d) => {
                for i in 0..2 * n {
                    let (y0, y1) = (ws.y0[i], ws.ynew[i]);
                    let ydiff = y1 - y0;
                    let bspl = h * ws.k[0][i] - ydiff;
                    ws.dense[0][i] = y0;
                    ws.dense[1][i] = ydiff;
                    ws.dense[2][i] = bspl;
                    ws.dense[3][i] = ydiff - h * ws.k[s][i] - bspl;
                    ws.dense[4][i] = h * (0..=s).map(|j| d[j] * ws.k[j][i]).sum::<f64>();
                }
            }
            None => {
                for i in 0..2 * n {
                    ws.dense[0][i] = ws.y0[i];
                    ws.dense[1][i] = h * ws.k[0][i];
                    ws.dense[2][i] = ws.ynew[i];
                    ws.dense[3][i] = h * ws.k[s][i];
                }
            }
        }
        self.last = (t, h);
        self.field
            .recover(&ws.ynew, &ws.k[s], &ws.lambda_end, state);
        ws.u_last.copy_from_slice(&state.u);
        ws.v_last.copy_from_slice(&state.v);
        ws.y0.copy_from_slice(&ws.ynew);
        let (head, tail) = ws.k.split_at_mut(s);
        head[0].copy_from_slice(&tail[0]);
        state.t = t + h;
        state.step += 1;
    }
}

impl Integrator for RungeKutta {
    fn identity(&self) -> &Identity {
        &self.identity
    }

    fn start(&mut self, sys: &Mechanics<'_>, state: &mut State) -> Result<(), StepError> {
        let n = self.n;
        match &mut self.field {
            Field::Index1(_) => {
                self.ws.y0[..n].copy_from_slice(&state.u);
                self.ws.y0[n..].copy_from_slice(&state.v);
            }
            Field::Epm(epm) => epm.modified_state(sys, &state.u, &state.v, &mut self.ws.y0),
        }
        self.field
            .eval(
                sys,
                state.t,
                &self.ws.y0,
                &mut self.ws.k[0],
                &mut self.ws.lambda,
            )
            .map_err(|e| at_step(e, state.step, state.t))?;
        self.field
            .recover(&self.ws.y0, &self.ws.k[0], &self.ws.lambda, state);
        self.ws.u_last.copy_from_slice(&state.u);
        self.ws.v_last.copy_from_slice(&state.v);
        self.pending = [1.0, 0.0];
        self.grid = FixedGrid::new(state.t, self.h);
        self.facold = 1e-4;
        self.last_rejected = false;
        self.attempts = 0;
        if let RkStep::Adaptive { max_step, .. } = self.step {
            self.h = self
                .initial_step(sys, state.t, max_step)
                .map_err(|e| at_step(e, state.step, state.t))?;
            self.pending[0] += 1.0;
        }
        Ok(())
    }

    fn advance(
        &mut self,
        sys: &Mechanics<'_>,
        state: &mut State,
        t_stop: f64,
    ) -> Result<StepReport, StepError> {
        let mut report = StepReport::new(0.0);
        let stats = &mut report.stats;
        stats[NFCN] += self.pending[0];
        self.pending = [0.0; 2];
        let t = state.t;
        let step = state.step + 1;
        match self.step {
            RkStep::Fixed { .. } => {
                let h = self.grid.target(t_stop) - t;
                self.attempt(sys, t, h, stats)
                    .map_err(|e| at_step(e, step, t + h))?;
                self.accept(state, t, h);
                self.grid.k += 1;
                stats[NACCEPT] += 1.0;
                report.h = h;
                report.external_work = self.ws.work;
            }
            RkStep::Adaptive {
                max_step,
                max_steps,
                ..
            } => {
                let expo1 = 0.2 - BETA * 0.75;
                let mut rejected = 0u32;
                loop {
                    if self.attempts >= max_steps {
                        return Err(StepError::TooManySteps {
                            limit: max_steps,
                            time: t,
                        });
                    }
                    self.attempts += 1;
                    let mut h = self.h.min(max_step);
                    // The controller's step below round-off of the interval's
                    // scale (HNW's "step size too small", relative to
                    // max(|t|, |t_stop|) so that a start at t = 0 cannot
                    // shrink h toward 1e-300 and creep), or the step to
                    // t_stop below round-off of t.
                    let tiny = h <= 1e-14 * t.abs().max(t_stop.abs());
                    if t + 1.01 * h >= t_stop {
                        h = t_stop - t;
                    }
                    if tiny || h <= 1e-14 * t.abs().max(1e-300) || !h.is_finite() {
                        return Err(StepError::StepSize {
                            step,
                            time: t,
                            h,
                            rejected,
                        });
                    }
                    let err = match self.attempt(sys, t, h, stats) {
                        Ok(err) => err,
                        // A singular matrix or an unconverged projection inside
                        // a trial step (a stage past a singular configuration)
                        // rejects the step like a large error: h / 4. Only a
                        // step size at round-off level gives up (StepSize).
                        Err(StepError::Singular { .. } | StepError::Setup { .. })
                            if h > 1e-10 * t.abs().max(h) =>
                        {
                            f64::INFINITY
                        }
                        Err(e) => return Err(at_step(e, step, t + h)),
                    };
                    let fac11 = err.powf(expo1);
                    if err <= 1.0 {
                        // Lund stabilization (PI control).
                        let fac = (fac11 / self.facold.powf(BETA) / SAFE).clamp(FACC2, FACC1);
                        let mut h_new = h / fac;
                        self.facold = err.max(1e-4);
                        if self.last_rejected {
                            h_new = h_new.min(h);
                        }
                        self.last_rejected = false;
                        self.h = h_new;
                        self.accept(state, t, h);
                        stats[NACCEPT] += 1.0;
                        report.h = h;
                        report.external_work = self.ws.work;
                        break;
                    }
                    self.h = h / FACC1.min(fac11 / SAFE);
                    self.last_rejected = true;
                    stats[NREJECT] += 1.0;
                    rejected += 1;
                }
            }
        }
        let d = drift(
            sys,
            state.t,
            &state.u,
            &state.v,
            &mut self.ws.phi,
            &mut self.ws.rate,
        );
        stats[DRIFT_POSITION] = d.position;
        stats[DRIFT_VELOCITY] = d.velocity;
        Ok(report)
    }

    fn has_dense_output(&self) -> bool {
        true
    }

    fn interpolate(
        &mut self,
        sys: &Mechanics<'_>,
        t: f64,
        out: &mut State,
    ) -> Result<(), StepError> {
        let (t0, h) = self.last;
        let th = if h > 0.0 { (t - t0) / h } else { 1.0 };
        let ws = &mut self.ws;
        let d = &ws.dense;
        let th1 = 1.0 - th;
        // Weights of the four (Hermite) or five (Dormand–Prince) arrays.
        let w: [f64; 5] = if self.tab.dense.is_some() {
            // r1 + th (r2 + th1 (r3 + th (r4 + th1 r5)))
            [1.0, th, th * th1, th * th1 * th, th * th1 * th * th1]
        } else {
            let (t2, t3) = (th * th, th * th * th);
            [
                2.0 * t3 - 3.0 * t2 + 1.0,
                t3 - 2.0 * t2 + th,
                -2.0 * t3 + 3.0 * t2,
                t3 - t2,
                0.0,
            ]
        };
        for (i, y) in ws.ytmp.iter_mut().enumerate() {
            *y = (0..5).map(|j| w[j] * d[j][i]).sum();
        }
        out.t = t;
        // With PStab the output lies on the manifold too: the interpolant is
        // stabilized like a step's result.
        if let Some(p) = self.projector.as_mut() {
            let n = self.n;
            let (u, v) = ws.ytmp.split_at_mut(n);
            p.prepare(sys, u, v, t);
            p.stabilize(sys, u, v, t)
                .map_err(|e| at_step(e, out.step, t))?;
        }
        self.field
            .eval(sys, t, &ws.ytmp, &mut ws.kdense, &mut ws.lambda)
            .map_err(|e| at_step(e, out.step, t))?;
        self.field.recover(&ws.ytmp, &ws.kdense, &ws.lambda, out);
        Ok(())
    }

    fn aligned(&self, state: &State, a: &mut [f64], lambda: &mut [f64]) {
        a.copy_from_slice(&state.a);
        lambda.copy_from_slice(&state.lambda);
    }
}

/// The drift of (u, v) at t (scratch `phi`, `rate` of m rows).
fn drift(
    sys: &Mechanics<'_>,
    t: f64,
    u: &[f64],
    v: &[f64],
    phi: &mut [f64],
    rate: &mut [f64],
) -> Drift {
    sys.constraint_residuals(u, v, t, phi, rate);
    Drift {
        position: max_abs(phi),
        velocity: max_abs(rate),
    }
}

/// Puts the step number and time into an evaluation's error.
fn at_step(e: StepError, step: u64, time: f64) -> StepError {
    match e {
        StepError::Singular { diagnosis, .. } => StepError::Singular {
            step,
            time,
            diagnosis,
        },
        other => other,
    }
}

/// y += a x.
fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}
