//! Variable-step, variable-order BDF (orders 1–5) in DASSL's
//! fixed-leading-coefficient form (Brenan, Campbell & Petzold, ch. 5; the
//! DDASTP/DDATRP routines of DASSL) on the stabilized index-2 GGL form of the
//! equations of motion (Yen and Petzold eq. 1.3, module `ggl`), with the three nonlinear
//! iterations of Yen and Petzold: full Newton on GGL, the coordinate-split CS
//! iteration and the modified CM iteration ([`NewtonIteration`]).
//!
//! The engine follows DDASTP step by step (digest of Yen and Petzold, B5): modified
//! divided differences `phi` with step sums `psi`; predictor
//! `y0 = sum phi_j`, `y0' = sum gamma_j phi_j`; corrector
//! `y' = y0' + cj (y - y0)`, `cj = -alpha_s / h`; modified Newton with the
//! iteration matrix kept across steps while `cj / cj_old` stays in
//! [0.6, 1.667], each correction scaled by `2 / (1 + cj / cj_old)`, at most 4
//! iterations, convergence when `s |delta| <= 0.33` with the rate estimate `s`
//! (an attempt's first iterate also needs `|delta| <= 1`);
//! local error `e = y - y0`, error test `ck |e| <= 1`; DASSL's order selection
//! (terk-1, terk, terk+1) and step rules (`r = (2 est + 1e-4)^(-1/(k+1))`,
//! doubling, at most halving; failures: h / 4 after a convergence failure,
//! the estimate-based cut after an error-test failure); the start-up phase
//! that raises the order and doubles the step until the order is lowered or
//! reaches the maximum; DASSL's initial step; dense output by DDATRP.
//!
//! Norms are DASSL's weighted RMS with `wt_i = rtol |y_i| + atol` and the
//! divisor NEQ: for GGL NEQ = 2 (n + m), the error test skipping the
//! multipliers as DASSL does for index-2 systems, the Newton test over every
//! component; for CS and CM NEQ = 2 n, the Newton test over (q, v) and the
//! error test over the independent coordinates (Yen and Petzold §4). The error test
//! covers (q, v) by default, or q alone ([`ErrorTest`]; Yen and Petzold §4.1).

mod control;
mod corrector;
mod ggl;
mod settings;

use super::index1::Index1;
use super::newton::{weighted_rms, Stats, FLOOR_FACTOR};
use super::{statistics, Integrator, State, StepError, StepReport};
use crate::assembly::Mechanics;
use crate::integrate::Identity;
use control::{Corrected, Estimate, Fails, Failure};
use ggl::Ggl;
pub use settings::BdfSettings;

/// The nonlinear iteration of each BDF step (Yen and Petzold).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewtonIteration {
    /// Newton on the GGL system (1.3) itself.
    Full,
    /// The coordinate-split iteration (eqs. 2.3–2.4).
    Cs,
    /// CS without the derivative of the projection (§2.3).
    Cm,
}

impl NewtonIteration {
    /// The name in the model file and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            NewtonIteration::Full => "full",
            NewtonIteration::Cs => "cs",
            NewtonIteration::Cm => "cm",
        }
    }
}

/// The components of DASSL's local error test (the multipliers never count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorTest {
    /// Positions q only (CS, CM: the independent ones, X^T q): Yen and Petzold §4.1,
    /// "local error estimated using position, i.e. q".
    Positions,
    /// Positions and velocities (q, v) (CS, CM: X^T q, X^T v): DASSL's
    /// usual treatment of an index-2 system.
    States,
}

impl ErrorTest {
    /// The name in the model file and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ErrorTest::Positions => "q",
            ErrorTest::States => "qv",
        }
    }
}

statistics! {
    /// Statistics of a BDF step (DASSL's IWORK counters; Yen and Petzold Tables 4.1–4.4).
    pub(crate) STATS = [NSTEP, NFCN, NJAC, ETFS, CTFS, NEWTON_ITERATIONS, ORDER, NSPLIT];
}

/// Most Newton iterations per attempt (DASSL's MAXIT).
const MAXIT: u32 = 4;
/// Convergence-failure cuts on one step before giving up (DASSL).
const MAX_CONV_FAILS: u32 = 10;
/// Singular-matrix cuts on one step before giving up (DASSL).
const MAX_SINGULAR: u32 = 3;

/// DASSL's BDF on the GGL form.
pub struct Bdf {
    /// Label, run metadata and statistics.
    identity: Identity,
    settings: BdfSettings,
    ggl: Ggl,
    start: Index1,
    n: usize,
    m: usize,
    /// Modified divided differences phi_1..phi_{maxord+2}.
    phi: Vec<Vec<f64>>,
    psi: [f64; 7],
    alpha: [f64; 7],
    beta: [f64; 7],
    gamma: [f64; 7],
    sigma: [f64; 7],
    /// Current time t_n.
    t: f64,
    h: f64,
    hold: f64,
    k: usize,
    kold: usize,
    ns: usize,
    iphase: bool,
    cj: f64,
    cjold: f64,
    /// Convergence rate estimate `s` (DASSL).
    s: f64,
    /// The matrix must be formed before the next iteration (DASSL's jcalc = -1).
    new_jacobian: bool,
    /// Whether the first step's size is still to be chosen.
    pending_h0: bool,
    /// Fixed steps at a fixed order ([`Bdf::start_with_history`]).
    fixed: Option<f64>,
    attempts: u64,
    y: Vec<f64>,
    yp: Vec<f64>,
    e: Vec<f64>,
    delta: Vec<f64>,
    wt: Vec<f64>,
    /// Weights of the Newton test: `wt`, those of the stabilizing
    /// multipliers mu divided by h, those of lambda at least their
    /// round-off floor ([`Bdf::newton_weights`]).
    wt_newton: Vec<f64>,
    /// `FLOOR_FACTOR eps L max |M|` (L = 1 + max |q0|): times cj^2, the
    /// multiplier change that moves q by its round-off.
    lambda_floor: f64,
    /// Error-test and Newton-test masks (true: counted).
    err_mask: Vec<bool>,
    conv_mask: Vec<bool>,
    /// Constraint residual scratch.
    phi_c: Vec<f64>,
    /// Power of the non-conservative forces at t_n.
    power: f64,
    /// The last corrector attempt's iterations (its history: max |F| and
    /// the weighted norm of the correction per iteration) and its last
    /// residual F (the failure report).
    newton: Stats,
    last_residual: Vec<f64>,
}

impl Bdf {
    /// The method for the model in `sys`.
    pub fn new(
        sys: &Mechanics<'_>,
        identity: Identity,
        settings: &BdfSettings,
        force_sparse: bool,
    ) -> Result<Self, StepError> {
        let mut ggl = Ggl::new(sys, settings.iteration, force_sparse)?;
        ggl.solver
            .set_refine_tol(crate::linalg::newton_refine_tol(settings.rtol));
        let (n, m) = (sys.n_dofs(), sys.n_constraints());
        let dim = ggl.dim();
        let z = || vec![0.0; dim];
        Ok(Bdf {
            identity,
            settings: *settings,
            start: Index1::new(
                sys,
                None,
                crate::linalg::SolverChoice {
                    force_sparse,
                    factorization: Default::default(),
                },
            )?,
            ggl,
            n,
            m,
            phi: (0..settings.max_order + 2).map(|_| z()).collect(),
            psi: [0.0; 7],
            alpha: [0.0; 7],
            beta: [0.0; 7],
            gamma: [0.0; 7],
            sigma: [0.0; 7],
            t: 0.0,
            h: 0.0,
            hold: 0.0,
            k: 1,
            kold: 0,
            ns: 0,
            iphase: false,
            cj: 0.0,
            cjold: 0.0,
            s: 100.0,
            new_jacobian: true,
            pending_h0: true,
            fixed: None,
            attempts: 0,
            y: z(),
            yp: z(),
            e: z(),
            delta: z(),
            wt: z(),
            wt_newton: z(),
            lambda_floor: FLOOR_FACTOR
                * f64::EPSILON
                * (1.0
                    + sys
                        .initial_positions()
                        .iter()
                        .fold(0.0_f64, |a, x| a.max(x.abs())))
                * sys
                    .mass_matrix()
                    .data()
                    .iter()
                    .fold(0.0_f64, |a, x| a.max(x.abs())),
            err_mask: vec![false; dim],
            conv_mask: vec![false; dim],
            phi_c: vec![0.0; m],
            power: 0.0,
            newton: Stats::with_capacity(MAXIT),
            last_residual: z(),
        })
    }

    /// The engine state from `state` (consistent q, v): y = (q, 0, v,
    /// lambda), y' = (v, 0, a, 0) with (a, lambda) from the index-1 system.
    fn load(&mut self, sys: &Mechanics<'_>, state: &mut State) -> Result<(), StepError> {
        let (n, m) = (self.n, self.m);
        let n1 = n + m;
        self.start.eval(
            sys,
            state.t,
            &state.u,
            &state.v,
            &mut state.a,
            &mut state.lambda,
        )?;
        self.y.fill(0.0);
        self.yp.fill(0.0);
        self.y[..n].copy_from_slice(&state.u);
        self.y[n1..n1 + n].copy_from_slice(&state.v);
        self.y[n1 + n..].copy_from_slice(&state.lambda);
        self.yp[..n].copy_from_slice(&state.v);
        self.yp[n1..n1 + n].copy_from_slice(&state.a);
        self.t = state.t;
        self.ggl.start(sys, state.t, &self.y)?;
        self.power = self.nonconservative_power(sys, state.t);
        Ok(())
    }

    /// Continues a history of equally spaced states at a fixed step `h` and
    /// the fixed order `k = past.len() - 1` (the verification of the order:
    /// the BDF formulas alone, without a start-up phase). `past` is ordered
    /// oldest first; its last state is the current one, written to `state`.
    /// The multipliers of the states are taken as given (the index-1 values).
    pub fn start_with_history(
        &mut self,
        sys: &Mechanics<'_>,
        past: &[State],
        h: f64,
        state: &mut State,
    ) -> Result<(), StepError> {
        let k = past.len().saturating_sub(1);
        if !(1..=self.settings.max_order).contains(&k) || h.is_nan() || h <= 0.0 {
            return Err(StepError::Setup {
                reason: format!(
                    "a history of {} states does not fit the orders 1..={}",
                    past.len(),
                    self.settings.max_order
                ),
            });
        }
        *state = past[k].clone();
        self.load(sys, state)?;
        // phi_{j+1} = the j-th backward difference of y at constant step.
        let (n, m) = (self.n, self.m);
        let n1 = n + m;
        let mut hist: Vec<Vec<f64>> = past
            .iter()
            .rev()
            .map(|s| {
                let mut y = vec![0.0; 2 * n1];
                y[..n].copy_from_slice(&s.u);
                y[n1..n1 + n].copy_from_slice(&s.v);
                y[n1 + n..].copy_from_slice(&s.lambda);
                y
            })
            .collect();
        for j in 0..=k {
            self.phi[j].copy_from_slice(&hist[0]);
            for i in 0..hist.len() - 1 {
                let (a, b) = hist.split_at_mut(i + 1);
                for (x, y) in a[i].iter_mut().zip(&b[0]) {
                    *x -= y;
                }
            }
            hist.pop();
        }
        for (i, p) in self.psi.iter_mut().enumerate() {
            *p = (i + 1) as f64 * h;
        }
        self.k = k;
        self.kold = k;
        self.h = h;
        self.hold = h;
        self.iphase = true;
        self.fixed = Some(h);
        self.pending_h0 = false;
        self.new_jacobian = true;
        self.cj = 0.0;
        // The coefficients of the constant step (ns > k + 1 skips their update).
        self.beta = [1.0; 7];
        self.alpha[0] = 1.0;
        self.gamma[0] = 0.0;
        self.sigma[0] = 1.0;
        for i in 1..=k {
            self.alpha[i] = 1.0 / (i + 1) as f64;
            self.sigma[i] = i as f64 * self.sigma[i - 1] * self.alpha[i];
            self.gamma[i] = self.gamma[i - 1] + self.alpha[i - 1] / h;
        }
        self.ns = k + 2;
        Ok(())
    }

    /// Weights `rtol |y_i| + atol` at the current solution (DDAWTS).
    fn weights(&mut self) {
        let (rtol, atol) = (self.settings.rtol, self.settings.atol);
        for (w, y) in self.wt.iter_mut().zip(&self.phi[0]) {
            *w = rtol * y.abs() + atol;
        }
        for i in 0..self.wt.len() {
            let multiplier = self.ggl.is_multiplier(i);
            self.conv_mask[i] = self.settings.iteration == NewtonIteration::Full || !multiplier;
            self.err_mask[i] = !multiplier && !self.ggl.is_dependent(i);
            if self.settings.error_test == ErrorTest::Positions && i >= self.n + self.m {
                self.err_mask[i] = false;
            }
        }
    }

    /// DASSL's norm of `x` over the components of `mask`, divided by NEQ
    /// (the components of the formulation's equations: every one for GGL,
    /// (q, v) for CS and CM).
    fn norm(&self, x: &[f64], mask: &[bool]) -> f64 {
        self.norm_with(x, mask, &self.wt)
    }

    /// [`Bdf::norm`] with the weights `wt`.
    fn norm_with(&self, x: &[f64], mask: &[bool], wt: &[f64]) -> f64 {
        let full = self.settings.iteration == NewtonIteration::Full;
        weighted_rms(
            x.iter()
                .zip(wt)
                .zip(mask)
                .enumerate()
                .filter(|(i, _)| full || !self.ggl.is_multiplier(*i))
                .map(|(_, ((x, w), &k))| (if k { *x } else { 0.0 }, *w)),
        )
    }

    /// DASSL's initial step: 0.001 of the interval, or `0.5 / |y'0|`.
    fn initial_step(&mut self, t_stop: f64) -> f64 {
        self.phi[0].copy_from_slice(&self.y);
        self.weights();
        let mut h = 1e-3 * (t_stop - self.t);
        let ypnorm = self.norm(&self.yp, &self.err_mask);
        if ypnorm > 0.5 / h {
            h = 0.5 / ypnorm;
        }
        h.min(self.settings.max_step)
    }

    /// The power of the loads and dampers at the current (q, v).
    fn nonconservative_power(&self, sys: &Mechanics<'_>, t: f64) -> f64 {
        let (n, n1) = (self.n, self.n + self.m);
        let nonconservative = sys.has_nonconservative_forces();
        if !nonconservative {
            return 0.0;
        }
        let (q, v) = (&self.y[..n], &self.y[n1..n1 + n]);
        sys.nonconservative_work(q, v, v, &|f| f.value(t))
    }

    /// Block 2 of DDASTP: the coefficients of the step h at order k.
    fn coefficients(&mut self) {
        let k = self.k;
        if self.h != self.hold || k != self.kold {
            self.ns = 0;
        }
        self.ns = (self.ns + 1).min(self.kold + 2);
        let kp1 = k + 1;
        if kp1 >= self.ns {
            self.beta[0] = 1.0;
            self.alpha[0] = 1.0;
            let mut temp1 = self.h;
            self.gamma[0] = 0.0;
            self.sigma[0] = 1.0;
            for i in 1..kp1 {
                let temp2 = self.psi[i - 1];
                self.psi[i - 1] = temp1;
                self.beta[i] = self.beta[i - 1] * self.psi[i - 1] / temp2;
                temp1 = temp2 + self.h;
                self.alpha[i] = self.h / temp1;
                self.sigma[i] = i as f64 * self.sigma[i - 1] * self.alpha[i];
                self.gamma[i] = self.gamma[i - 1] + self.alpha[i - 1] / self.h;
            }
            self.psi[kp1 - 1] = temp1;
        }
    }

    /// Scales phi to phi* (the step's beta), or back.
    fn scale_phi(&mut self, inverse: bool) {
        let kp1 = self.k + 1;
        // phi_j, j = ns+1..k+1 (1-based).
        for j in self.ns..kp1 {
            let b = if inverse {
                1.0 / self.beta[j]
            } else {
                self.beta[j]
            };
            for x in &mut self.phi[j] {
                *x *= b;
            }
        }
    }

    /// The predictor into y, y'.
    fn predict(&mut self) {
        let kp1 = self.k + 1;
        self.y.copy_from_slice(&self.phi[0]);
        self.yp.fill(0.0);
        for j in 1..kp1 {
            let g = self.gamma[j];
            for ((y, yp), p) in self.y.iter_mut().zip(&mut self.yp).zip(&self.phi[j]) {
                *y += p;
                *yp += g * p;
            }
        }
    }

    /// The Newton test's weights for the step h: `wt`, with the stabilizing
    /// multipliers mu weighed by `wt / h`, i.e. their corrections measured
    /// as `h dmu`. mu is an index-2 variable, zero on the exact solution
    /// (1.3a): a correction dmu moves q by `G^T dmu / cj ~ h G^T dmu`
    /// through the kinematic row, so `h dmu` is its effect on the solution,
    /// in the units of q. Unscaled, the round-off of the converged residual
    /// (`cj u (q - q0)` in q') reaches mu amplified by cj ~ 1/h and, weighed
    /// by atol alone, never passes the test (Andrews' mechanism failed at
    /// step 1 at every h). This is the index-2 scaling of Hairer and Wanner
    /// (Solving ODEs II, §VII.4; RADAU5 divides the weight of index-2
    /// variables by h in its Newton and error norms); the error test still
    /// leaves the multipliers out, as DASSL does for index-2 systems.
    /// CS and CM do not test the multipliers (their unknowns are (q, v)).
    ///
    /// lambda keeps `wt` (it is not zero on the solution; weighing it by h
    /// too lengthened the runs, §2), but not below its round-off floor
    /// `cj^2 FLOOR_FACTOR eps L max |M|`: a lambda correction moves q by
    /// about `M^-1 G^T dlambda / cj^2` (through v' and q' = cj (q - q0)), so
    /// below that floor it is round-off of q (the floor of the GSSSS test,
    /// docs/theory/gssss.md §12, with cj^2 for 1 / (beta dt^2)). It matters
    /// only at steps far below the solution's time scale: Andrews' mechanism
    /// at rtol 1e-8 starts with DASSL's h = 3.1e-13 s, where lambda's rows
    /// near zero (weight atol 1e-9) kept round-off corrections of 0.3–0.6 of
    /// their weight, growing 4 times with every step cut.
    fn newton_weights(&mut self) {
        let (n, n1, h) = (self.n, self.n + self.m, self.h);
        self.wt_newton.copy_from_slice(&self.wt);
        for w in &mut self.wt_newton[n..n1] {
            *w /= h;
        }
        let floor = self.lambda_floor * self.cj * self.cj;
        for w in &mut self.wt_newton[n1 + n..] {
            *w = w.max(floor);
        }
    }

    /// The constraint residuals of the accepted (q, v): max |g|, max |G v + g_t|.
    fn constraint_residual(&mut self, sys: &Mechanics<'_>, t: f64) -> f64 {
        let (n, n1) = (self.n, self.n + self.m);
        let (q, v) = (&self.y[..n], &self.y[n1..n1 + n]);
        sys.constraint_values(q, t, &mut self.phi_c);
        let p = self.phi_c.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
        sys.constraint_rates(q, v, t, &mut self.phi_c);
        let r = self.phi_c.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
        p.max(r)
    }

    /// The largest entries of the last corrector residual F, named by the
    /// GGL row they belong to (eq. 1.3a–d).
    fn largest_residuals(&self, sys: &Mechanics<'_>) -> Vec<(String, f64)> {
        let n1 = self.n + self.m;
        let (pos, vel) = self.last_residual.split_at(n1);
        let mut all: Vec<(String, f64)> = [(pos, "position level"), (vel, "velocity level")]
            .into_iter()
            .flat_map(|(part, level)| {
                super::largest_entries(sys, part, 5)
                    .into_iter()
                    .map(move |(name, v)| {
                        let name = match name.strip_prefix("equation of motion of ") {
                            Some(dof) if level == "position level" => {
                                format!("kinematic row q' - v + G^T mu of {dof}")
                            }
                            _ => format!("{name} ({level})"),
                        };
                        (name, v)
                    })
            })
            .collect();
        all.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
        all.truncate(5);
        all
    }

    /// Why the corrector failed MAX_CONV_FAILS times, from the last attempt
    /// (its history and its last correction, still in `delta`).
    fn convergence_failure(&self) -> String {
        let (n, n1) = (self.n, self.n + self.m);
        // The block of y = (q, mu, v, lambda) with the largest weighted correction.
        let blocks = [
            ("positions q", 0..n),
            ("stabilizing multipliers mu", n..n1),
            ("velocities v", n1..n1 + n),
            ("multipliers lambda", n1 + n..2 * n1),
        ];
        let weighted: Vec<(&str, f64)> = blocks
            .iter()
            .map(|(name, r)| {
                let w = self.delta[r.clone()]
                    .iter()
                    .zip(&self.wt_newton[r.clone()])
                    .fold(0.0_f64, |a, (x, w)| a.max((x / w).abs()));
                (*name, w)
            })
            .collect();
        let (block, worst) = weighted
            .iter()
            .copied()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or(("", 0.0));
        let why = match self.newton.history.as_slice() {
            [] => "no iteration ran".to_string(),
            h if h.iter().any(|(f, d)| !f.is_finite() || !d.is_finite()) => {
                "the residual or the correction became non-finite".to_string()
            }
            h if h.len() >= 2 && h[h.len() - 1].1 / h[h.len() - 2].1 > 0.9 => {
                let (f0, (f1, b), a) = (h[0].0, h[h.len() - 1], h[h.len() - 2].1);
                format!(
                    "the corrections stopped shrinking (weighted norm {a:.2e} -> {b:.2e}, \
                     rate > 0.9; residual F {f0:.2e} -> {f1:.2e}), the largest in the \
                     {block} ({worst:.2e} weights)"
                )
            }
            h => format!(
                "{} iterations left the weighted correction at {:.2e}, the largest in the \
                 {block} ({worst:.2e} weights)",
                h.len(),
                h[h.len() - 1].1
            ),
        };
        format!(
            "the BDF corrector failed {MAX_CONV_FAILS} times on this step (step size cut to \
             {:.3e} s): {why}",
            self.h
        )
    }

    /// Writes the solution y (with its derivative y') into `out`.
    fn write_state(&self, y: &[f64], yp: &[f64], out: &mut State) {
        let (n, n1) = (self.n, self.n + self.m);
        out.u.copy_from_slice(&y[..n]);
        out.v.copy_from_slice(&y[n1..n1 + n]);
        out.a.copy_from_slice(&yp[n1..n1 + n]);
        out.lambda.copy_from_slice(&y[n1 + n..]);
    }
}

impl Integrator for Bdf {
    fn identity(&self) -> &Identity {
        &self.identity
    }

    fn start(&mut self, sys: &Mechanics<'_>, state: &mut State) -> Result<(), StepError> {
        self.load(sys, state)?;
        self.k = 1;
        self.kold = 0;
        self.hold = 0.0;
        self.ns = 0;
        self.iphase = false;
        self.s = 100.0;
        self.new_jacobian = true;
        self.pending_h0 = true;
        self.fixed = None;
        self.attempts = 0;
        Ok(())
    }

    /// One step of DDASTP: attempts (blocks 1–4, `Bdf::attempt`) until
    /// one passes the error test (block 5, `Bdf::error_estimate`), then
    /// the next order and step (block 6, `Bdf::accept`); a failed attempt
    /// is restored and cut (block 7, `Bdf::reject`).
    fn advance(
        &mut self,
        sys: &Mechanics<'_>,
        state: &mut State,
        t_stop: f64,
    ) -> Result<StepReport, StepError> {
        let mut report = StepReport::new(0.0);
        let step = state.step + 1;
        if self.pending_h0 {
            self.first_step(t_stop);
        }
        self.weights();
        let mut fails = Fails::default();
        loop {
            self.attempt_size(t_stop, step, &fails)?;
            let k = self.k;
            let ck = self.prepare_attempt();
            let t1 = self.t + self.h;
            let mut iterations = 0u32;
            let corrected = self.attempt(sys, t1, &mut report.stats, &mut iterations)?;
            let estimate = match corrected {
                Corrected::Converged => self.error_estimate(k, ck),
                _ => Estimate::none(k),
            };
            if estimate.accepted {
                self.accept(k, &estimate, &mut report.stats);
                let t0 = self.t;
                self.t = t1;
                // The solution is phi_1 = y; its derivative is the corrector's.
                self.write_state(&self.y, &self.yp, state);
                state.t = t1;
                state.step = step;
                let p1 = self.nonconservative_power(sys, t1);
                report.external_work = 0.5 * (t1 - t0) * (self.power + p1);
                self.power = p1;
                report.h = t1 - t0;
                report.newton_iterations = iterations;
                report.residual = self.constraint_residual(sys, t1);
                return Ok(report);
            }
            self.restore(k);
            let failure = Failure {
                step,
                t1,
                iterations,
            };
            self.reject(
                sys,
                corrected,
                &estimate,
                &failure,
                &mut fails,
                &mut report.stats,
            )?;
        }
    }

    fn has_dense_output(&self) -> bool {
        true
    }

    /// DDATRP: the interpolating polynomial of the last step at `t`.
    fn interpolate(
        &mut self,
        _sys: &Mechanics<'_>,
        t: f64,
        out: &mut State,
    ) -> Result<(), StepError> {
        let koldp1 = self.kold + 1;
        let temp1 = t - self.t;
        self.delta.copy_from_slice(&self.phi[0]);
        self.e.fill(0.0);
        let (mut c, mut d) = (1.0, 0.0);
        let mut gamma = temp1 / self.psi[0];
        for j in 1..koldp1 {
            d = d * gamma + c / self.psi[j - 1];
            c *= gamma;
            gamma = (temp1 + self.psi[j - 1]) / self.psi[j];
            for ((y, yp), p) in self.delta.iter_mut().zip(&mut self.e).zip(&self.phi[j]) {
                *y += c * p;
                *yp += d * p;
            }
        }
        let (y, yp) = (std::mem::take(&mut self.delta), std::mem::take(&mut self.e));
        self.write_state(&y, &yp, out);
        (self.delta, self.e) = (y, yp);
        out.t = t;
        Ok(())
    }

    fn aligned(&self, state: &State, a: &mut [f64], lambda: &mut [f64]) {
        a.copy_from_slice(&state.a);
        lambda.copy_from_slice(&state.lambda);
    }
}
