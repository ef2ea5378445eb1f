//! The GSSSS stepper: Newton iterations of a one-step scheme on the index-3
//! DAE (seed 000 §3.6, eqs. 3.14–3.31), shared by every [`LinearScheme`]
//! (GSSSS in a/v/d form, the two-field midpoint scheme), on a fixed grid of
//! step `dt` or with the step cut back after a Newton failure
//! ([`StepControl::Cutback`]).
//!
//! Each iteration fills the residual and Newton matrix of [`fill_step`],
//! solves with the saddle-point LU and corrects the iterates with the chi_C
//! coefficients; the convergence test is described in [`crate::integrate::newton`].

use std::time::{Duration, Instant};

use crate::element::EomLevel;
use crate::integrate::AttrValue;
use crate::linalg::{SaddlePointSolver, SolveError};

use super::predictor::{Outcome, Predictor, PredictorChoice};
use super::residual::{constraint_force, fill_step, StepInput};
use super::scheme::{ConstraintOption, LinearScheme, PredCorr};
use super::Variant;
use crate::assembly::{diagnose_singular, SaddleSystem};
use crate::integrate::initial::consistent_initial;
use crate::integrate::newton::{
    weighted_rms, Backtracking, LineSearch, NewtonSettings, NewtonStop, NewtonTimings, RoundOff,
    ScaledTest, Trial, Verdict, DIVERGENT_GROWTHS, FLOOR_FACTOR, MAX_BACKTRACKS,
};
use crate::integrate::settings::{GssssSettings, StepControl};
use crate::integrate::{FixedGrid, Integrator, StatSpec, State, StepError, StepReport, System};

/// Statistics of a GSSSS step.
pub(crate) const STATS: [StatSpec; 4] = [
    StatSpec::count("newton_iterations"),
    StatSpec::count("factorizations"),
    StatSpec::count("nreject"),
    StatSpec::count("backtracks"),
];

/// Halvings of dt allowed by [`StepControl::Cutback`].
const MAX_CUTBACKS: u32 = 10;

/// Successful steps after which a cut-back step is doubled again.
const REGROW_AFTER: u32 = 4;

/// A one-step integrator: a scheme (as linear forms for a given dt) plus the
/// constraint option, Newton settings and workspace.
pub struct OneStepIntegrator {
    label: String,
    parameters: Vec<(String, AttrValue)>,
    variant: Variant,
    option: ConstraintOption,
    newton: NewtonSettings,
    control: StepControl,
    dt: f64,
    grid: FixedGrid,
    /// Successes in a row on the current grid (regrowth after a cutback).
    streak: u32,
    ws: Workspace,
    /// Time split of the Newton iterations, when measured.
    timings: Option<NewtonTimings>,
}

/// Vectors and solver reused by every step (no allocation in the time loop).
struct Workspace {
    u_n: Vec<f64>,
    v_n: Vec<f64>,
    a_n: Vec<f64>,
    lam_n: Vec<f64>,
    u_next: Vec<f64>,
    u_tilde: Vec<f64>,
    v_tilde: Vec<f64>,
    a_tilde: Vec<f64>,
    lam: Vec<f64>,
    du: Vec<f64>,
    rhs: Vec<f64>,
    sys: SaddleSystem,
    solver: SaddlePointSolver,
    history: Vec<(f64, f64)>,
    stepped: bool,
    scheme: Option<(f64, LinearScheme)>,
    /// The model's round-off scales at u_0 (the floors of the convergence tests).
    round_off: RoundOff,
    /// `M (a~ - g)` of the current iterate (force scale of the scaled test).
    inertia: Vec<f64>,
    /// Iterations, factorizations and line-search backtracks of the step's
    /// attempts so far.
    spent: (u32, u32, u32),
    /// The predictor a step tries first (the scaled test's policy).
    predictor: PredictorChoice,
    /// Whether the last iteration's scaled test saw a growing correction.
    grew: bool,
}

impl Workspace {
    /// Adds `by` times the correction in `rhs` (the unknown's increment and
    /// the multipliers') to the iterate: `u_{n+1}`, `u~`, `v~`, `a~` through
    /// their coefficients `coefs` on the unknown (eqs. 3.28–3.30), the
    /// accumulated unknown `du` and the multipliers. `by = 1` applies a
    /// Newton correction; the line search moves back along it with `by < 0`.
    fn move_along_correction(&mut self, by: f64, coefs: [f64; 4]) {
        let n = self.u_next.len();
        let (xd, xl) = self.rhs.split_at(n);
        let [cu, cut, cvt, cat] = coefs.map(|c| by * c);
        for (i, &x) in xd.iter().enumerate() {
            self.u_next[i] += cu * x;
            self.u_tilde[i] += cut * x;
            self.v_tilde[i] += cvt * x;
            self.a_tilde[i] += cat * x;
            self.du[i] += by * x;
        }
        for (l, x) in self.lam.iter_mut().zip(xl) {
            *l += by * x;
        }
    }
}

impl OneStepIntegrator {
    /// An integrator for the model in `sys`.
    pub fn new(
        sys: &System<'_>,
        label: String,
        parameters: Vec<(String, AttrValue)>,
        settings: &GssssSettings,
        solver: crate::linalg::SolverChoice,
    ) -> Result<Self, StepError> {
        refuse_velocity_constraints(sys.model)?;
        let newton = settings.newton;
        let n = sys.asm.n_dofs();
        let m = sys.asm.n_constraints();
        let mut solver = crate::integrate::saddle_solver(sys, solver)?;
        solver.set_refine_tol(crate::linalg::newton_refine_tol(newton.scaled.rtol));
        let z = |k: usize| vec![0.0; k];
        let mut system = sys.asm.new_system();
        let stiffness_scale = sys.asm.stiffness_max(sys.model, &sys.model.u0, &mut system);
        Ok(OneStepIntegrator {
            label,
            parameters,
            variant: settings.variant,
            option: settings.option,
            newton,
            control: settings.step_control,
            dt: settings.dt,
            grid: FixedGrid::new(0.0, settings.dt),
            streak: 0,
            ws: Workspace {
                u_n: z(n),
                v_n: z(n),
                a_n: z(n),
                lam_n: z(m),
                u_next: z(n),
                u_tilde: z(n),
                v_tilde: z(n),
                a_tilde: z(n),
                lam: z(m),
                du: z(n),
                rhs: z(n + m),
                sys: system,
                solver,
                history: Vec::with_capacity(newton.max_iter as usize),
                stepped: false,
                scheme: None,
                round_off: RoundOff {
                    coord_scale: 1.0 + max_abs(&sys.model.u0),
                    mass_scale: max_abs(sys.asm.mass_matrix().data()),
                    stiffness_scale,
                },
                inertia: z(n),
                spent: (0, 0, 0),
                predictor: PredictorChoice::default(),
                grew: false,
            },
            timings: None,
        })
    }

    /// Measures from now on where the Newton iterations spend their time
    /// ([`NewtonTimings`]); `setup` is the time it took to build the integrator.
    pub fn measure_timings(&mut self, setup: Duration) {
        self.timings = Some(NewtonTimings {
            setup,
            ..NewtonTimings::default()
        });
    }

    /// Writes the first Newton system of a step in Matrix Market.
    pub fn export_matrix(&mut self, sys: &System<'_>, export: crate::linalg::MatrixExport) {
        self.ws.solver.export(export, sys.asm.pattern());
    }

    /// Records an accepted step on the grid; after [`REGROW_AFTER`]
    /// successes on a cut-back grid the step doubles (up to dt).
    fn accepted(&mut self, t: f64) {
        self.grid.k += 1;
        self.streak += 1;
        if self.grid.h < self.dt && self.streak >= REGROW_AFTER {
            self.streak = 0;
            self.grid = FixedGrid::new(t, (2.0 * self.grid.h).min(self.dt));
        }
    }

    /// One step of size `dt` from `state`; `state` is changed only on
    /// success. Under the scaled test the iteration starts from the
    /// predictor of [`PredictorChoice`], a failed iteration is restarted once
    /// from the other one, and the outcome steers the next step's choice
    /// (docs/theory/gssss.md §12).
    fn try_step(
        &mut self,
        sys: &System<'_>,
        state: &mut State,
        dt: f64,
    ) -> Result<Converged, StepError> {
        self.ws.spent = (0, 0, 0);
        if self.newton.stop != NewtonStop::Scaled {
            return self.iterate(sys, state, dt, Predictor::Unknown);
        }
        let first = self.ws.predictor.first();
        match self.iterate(sys, state, dt, first) {
            Ok(c) => {
                self.ws.predictor.record(if self.ws.grew {
                    Outcome::ConvergedAfterGrowth
                } else {
                    Outcome::Converged
                });
                Ok(c)
            }
            Err(StepError::NewtonFailed { .. }) => {
                let out = self.iterate(sys, state, dt, first.other());
                if out.is_ok() {
                    self.ws.predictor.record(Outcome::Restarted);
                }
                out
            }
            Err(e) => Err(e),
        }
    }

    /// Newton's iteration of one step of size `dt` from `state`, starting at `predictor`.
    fn iterate(
        &mut self,
        sys: &System<'_>,
        state: &mut State,
        dt: f64,
        predictor: Predictor,
    ) -> Result<Converged, StepError> {
        let sch = self.scheme(dt);
        let option = self.option;
        let newton = self.newton;
        let ws = &mut self.ws;
        let n = ws.u_n.len();
        ws.u_n.copy_from_slice(&state.u);
        ws.v_n.copy_from_slice(&state.v);
        ws.a_n.copy_from_slice(&state.a);
        ws.lam_n.copy_from_slice(&state.lambda);
        ws.solver.at_step(state.step + 1);

        let pu = sch.pred_corr(&sch.u_next);
        let put = sch.pred_corr(&sch.u_tilde);
        let pvt = sch.pred_corr(&sch.v_tilde);
        let pat = sch.pred_corr(&sch.a_tilde);
        let predict = |pc: &PredCorr, out: &mut [f64], ws_u: &[f64], ws_v: &[f64], ws_a: &[f64]| {
            for i in 0..out.len() {
                out[i] = pc.predict(ws_u[i], ws_v[i], ws_a[i]);
            }
        };
        predict(&pu, &mut ws.u_next, &ws.u_n, &ws.v_n, &ws.a_n);
        predict(&put, &mut ws.u_tilde, &ws.u_n, &ws.v_n, &ws.a_n);
        predict(&pvt, &mut ws.v_tilde, &ws.u_n, &ws.v_n, &ws.a_n);
        predict(&pat, &mut ws.a_tilde, &ws.u_n, &ws.v_n, &ws.a_n);
        ws.lam.copy_from_slice(&ws.lam_n);

        let w = sch.level_weights();
        let forces = constraint_force(option, newton.jacobian, sch.w1, w.c3);
        let delta3 = sch.unknown[3];
        let accel_scale = sch.accel_scale();
        let ro = ws.round_off;
        let floor_a = FLOOR_FACTOR * f64::EPSILON * ro.coord_scale / accel_scale;
        // Multipliers balance forces: their floor is the round-off of M a and
        // of the internal forces, eps L max|K|, both at the initial scales.
        let floor_l = ro.force_floor(floor_a);
        let scaled = newton.stop == NewtonStop::Scaled;
        let rtol = newton.scaled.rtol;
        let atol_u = newton.scaled.atol.unwrap_or(rtol * ro.coord_scale);
        let mut test = ScaledTest::default();
        let t_n = state.t;
        let t_next = state.t + dt;
        ws.history.clear();
        let mut residual_norm = f64::NAN;
        let mut converged = false;
        let mut iterations = 0;
        let mut prev_ratio = None;
        let mut refresh = true;
        let mut factorizations = 0;
        // Accumulated unknown increment (delta), per DOF, kept in `du`.
        ws.du.fill(0.0);
        if predictor == Predictor::Displacement {
            // The unknown at u_{n+1} = u_n: da0 = -(x1 v_n + x2 a_n) / x3 of u_{n+1}'s form.
            let (x, d) = (&sch.u_next, &sch.unknown);
            for i in 0..n {
                let (u, v, a) = (ws.u_n[i], ws.v_n[i], ws.a_n[i]);
                let da0 = -(x[1] * v + x[2] * a) / x[3];
                let delta0 = d[0] * u + d[1] * v + d[2] * a + d[3] * da0;
                ws.u_next[i] += pu.c * delta0;
                ws.u_tilde[i] += put.c * delta0;
                ws.v_tilde[i] += pvt.c * delta0;
                ws.a_tilde[i] += pat.c * delta0;
                ws.du[i] = delta0;
            }
        }
        let mut force_scale = 0.0;
        let mut residual_ratio = 0.0;
        // The line search (docs/theory/gssss.md §12a): its state, the weight
        // of the force rows in its residual norm (fixed over the step), the
        // backtracks, whether the last correction was solved with a matrix
        // factored in its own iteration, and whether it failed.
        let search = scaled && newton.line_search == LineSearch::Backtracking;
        let coefs = [pu.c, put.c, pvt.c, pat.c];
        let mut line = Backtracking::default();
        let mut force_weight = None;
        let mut backtracks = 0;
        let mut fresh = false;
        let mut search_failed = false;
        while iterations < newton.max_iter {
            iterations += 1;
            // Each pass assembles the residual at the current iterate; the
            // line search may move the iterate back along the last correction
            // and ask for another pass.
            let mut rebased = false;
            let clock = loop {
                // M (a~ - g): the residual's inertia and gravity, and the scaled
                // test's force scale below.
                ws.inertia.fill(0.0);
                sys.asm.mass_mul_add(&ws.a_tilde, &mut ws.inertia);
                sys.asm.subtract_gravity(&mut ws.inertia, 1.0);
                let inp = StepInput {
                    level: EomLevel {
                        u_n: &ws.u_n,
                        v_n: &ws.v_n,
                        a_n: &ws.a_n,
                        u_next: &ws.u_next,
                        u_tilde: &ws.u_tilde,
                        w,
                    },
                    a_tilde: &ws.a_tilde,
                    inertia: Some(&ws.inertia),
                    v_tilde: &ws.v_tilde,
                    coef_v: pvt.c,
                    lambda_n: &ws.lam_n,
                    lambda: &ws.lam,
                    t_n,
                    t_next,
                    w1: sch.w1,
                    coef_mass: pat.c,
                    coef_u: pu.c,
                    forces,
                    matrix: refresh,
                };
                let clock = self.timings.is_some().then(Instant::now);
                fill_step(sys.asm, sys.model, &inp, &mut ws.sys);
                let clock = lap(clock, self.timings.as_mut().map(|t| &mut t.assembly));
                residual_norm = max_abs(&ws.sys.residual);
                if scaled && residual_norm.is_finite() {
                    // Force scale |M (a~ - g)| + |the other forces| and the
                    // residual over its tolerance (docs/theory/gssss.md §12).
                    let (e1, e2) = ws.sys.residual.split_at(n);
                    force_scale = e1
                        .iter()
                        .zip(&ws.inertia)
                        .fold(0.0_f64, |m, (e, f)| m.max(f.abs() + (e - f).abs()));
                    let res_force = max_abs(e1) / (rtol * force_scale).max(floor_l);
                    // e2 = Phi / chi_Cu: constraint violations in displacement units.
                    let res_phi = max_abs(e2) * pu.c.abs() / atol_u.max(ro.coord_floor());
                    residual_ratio = res_force.max(res_phi);
                }
                if !search || rebased {
                    break clock;
                }
                // The residual norm of the line search: force rows over rtol F at
                // the predictor, constraint rows over atol (the residual test's
                // scales), in the 2-norm.
                let w_force = *force_weight.get_or_insert(1.0 / (rtol * force_scale).max(floor_l));
                let w_phi = pu.c.abs() / atol_u.max(ro.coord_floor());
                let merit = scaled_residual_norm(&ws.sys.residual, n, w_force, w_phi);
                match line.judge(merit) {
                    Trial::Accept => break clock,
                    Trial::Shorten { by } => {
                        // Back along the correction still in rhs.
                        ws.move_along_correction(by, coefs);
                        backtracks += 1;
                    }
                    Trial::Failed if fresh || !merit.is_finite() => {
                        search_failed = true;
                        break clock;
                    }
                    Trial::Failed => {
                        // An outdated matrix (modified Newton): go on from here
                        // with a fresh one, assembled in the next pass.
                        line.rebase(merit);
                        refresh = true;
                        rebased = true;
                    }
                }
            };
            if !residual_norm.is_finite() || search_failed {
                ws.history.push((residual_norm, f64::NAN));
                break;
            }
            fresh = refresh;
            if refresh {
                if let Err(e) = ws.solver.factor(&ws.sys.values) {
                    return Err(singular(sys, ws, state.step + 1, t_next, e));
                }
                factorizations += 1;
            }
            let clock = lap(clock, self.timings.as_mut().map(|t| &mut t.factorization));
            for (r, e) in ws.rhs.iter_mut().zip(&ws.sys.residual) {
                *r = -e;
            }
            if let Err(e) = ws.solver.solve(&mut ws.rhs) {
                return Err(singular(sys, ws, state.step + 1, t_next, e));
            }
            lap(clock, self.timings.as_mut().map(|t| &mut t.solve));
            ws.move_along_correction(1.0, coefs);
            let (xd, xl) = ws.rhs.split_at(n);
            let (ratio, parts) = if scaled {
                // Coordinates in displacement units, multipliers in force units.
                let inc_u = weighted_rms(
                    xd.iter()
                        .zip(&ws.u_next)
                        .map(|(x, u)| (pu.c * x, (rtol * u.abs() + atol_u).max(ro.coord_floor()))),
                );
                let atol_l = atol_u / ro.coord_scale * force_scale;
                let inc_l = weighted_rms(
                    xl.iter()
                        .zip(&ws.lam)
                        .map(|(x, l)| (*x, (rtol * l.abs() + atol_l).max(floor_l))),
                );
                (inc_u.max(inc_l), (inc_u, inc_l))
            } else {
                let inc_a = max_abs(xd) / delta3;
                let inc_l = max_abs(xl);
                let r = (inc_a / newton.tol.max(floor_a)).max(inc_l / newton.tol.max(floor_l));
                (r, (r, r))
            };
            ws.history.push((residual_norm, ratio));
            if scaled {
                match test.judge_parts(parts.0, parts.1, residual_ratio) {
                    Verdict::Converged => {
                        converged = true;
                        break;
                    }
                    // Under the line search a growing correction is not
                    // divergence: the residual still falls along it.
                    Verdict::Diverged if search && ratio.is_finite() => {}
                    Verdict::Diverged => break,
                    Verdict::Continue => {}
                }
            } else if newton.stop.accepts(ratio, prev_ratio) {
                converged = true;
                break;
            }
            refresh = newton.refactor.refresh_after(ratio, prev_ratio);
            prev_ratio = Some(ratio);
        }
        ws.grew = test.grew();
        ws.spent.0 += iterations;
        ws.spent.1 += factorizations;
        ws.spent.2 += backtracks;
        if let Some(t) = self.timings.as_mut() {
            t.factorizations += u64::from(factorizations);
        }
        if !converged {
            return Err(newton_failed(
                sys,
                ws,
                state.step + 1,
                t_next,
                iterations,
                newton.max_iter,
                search_failed,
            ));
        }

        // Final update (eqs. 3.28–3.30): da from the accumulated unknown.
        for i in 0..n {
            let (u, v, a) = (ws.u_n[i], ws.v_n[i], ws.a_n[i]);
            let d = &sch.unknown;
            let da = (ws.du[i] - d[0] * u - d[1] * v - d[2] * a) / d[3];
            let f = &sch.v_next;
            state.v[i] = f[0] * u + f[1] * v + f[2] * a + f[3] * da;
            state.a[i] = a + da;
            ws.du[i] = ws.u_next[i] - u;
        }
        state.u.copy_from_slice(&ws.u_next);
        state.lambda.copy_from_slice(&ws.lam);
        let load_factor = |f: &crate::load::TimeFunction| {
            (1.0 - sch.w1) * f.value(t_n) + sch.w1 * f.value(t_next)
        };
        let work =
            sys.asm
                .nonconservative_work(sys.model, &ws.u_tilde, &ws.v_tilde, &ws.du, &load_factor);
        state.t = t_next;
        state.step += 1;
        ws.stepped = true;
        Ok(Converged {
            iterations: ws.spent.0,
            factorizations: ws.spent.1,
            backtracks: ws.spent.2,
            residual: residual_norm,
            work,
        })
    }

    fn scheme(&mut self, dt: f64) -> LinearScheme {
        match self.ws.scheme {
            Some((h, s)) if h == dt => s,
            _ => {
                let s = self.variant.scheme(dt);
                self.ws.scheme = Some((dt, s));
                s
            }
        }
    }
}

/// Adds the time since `since` to `into` (when measuring) and restarts the clock.
fn lap(since: Option<Instant>, into: Option<&mut Duration>) -> Option<Instant> {
    let (since, into) = (since?, into?);
    let now = Instant::now();
    *into += now - since;
    Some(now)
}

/// GSSSS solves the index-3 form `Phi(u) = 0`: a velocity-level
/// (nonholonomic) joint has no `Phi`, so a model with one is refused, naming
/// the joint.
fn refuse_velocity_constraints(model: &crate::model::Model) -> Result<(), StepError> {
    match model.velocity_joints().next() {
        None => Ok(()),
        Some(name) => Err(StepError::Setup {
            reason: format!(
                "joint '{name}' is a velocity-level (nonholonomic) constraint, which GSSSS \
                 (index-3 form) cannot integrate; use a Runge–Kutta method on the index-1 \
                 form (`method = \"dopri5\"`)"
            ),
        }),
    }
}

/// The line search's residual norm `sqrt(sum (w_force e1_i)^2 + sum (w_phi
/// e2_r)^2)` of a residual whose first `n` rows are forces `e1` and the rest
/// constraints `e2` (docs/theory/gssss.md §12a); infinite when not finite.
fn scaled_residual_norm(residual: &[f64], n: usize, w_force: f64, w_phi: f64) -> f64 {
    let (e1, e2) = residual.split_at(n);
    let sum = e1.iter().map(|e| (e * w_force).powi(2)).sum::<f64>()
        + e2.iter().map(|e| (e * w_phi).powi(2)).sum::<f64>();
    if sum.is_finite() {
        sum.sqrt()
    } else {
        f64::INFINITY
    }
}

fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0_f64, |m, v| m.max(v.abs()))
}

/// A converged step: Newton iterations, factorizations, line-search
/// backtracks, last residual, work.
struct Converged {
    iterations: u32,
    factorizations: u32,
    backtracks: u32,
    residual: f64,
    work: f64,
}

impl Integrator for OneStepIntegrator {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn parameters(&self) -> Vec<(String, AttrValue)> {
        self.parameters.clone()
    }

    fn statistics(&self) -> &'static [StatSpec] {
        &STATS
    }

    fn timings(&self) -> Option<NewtonTimings> {
        self.timings
    }

    fn start(&mut self, sys: &System<'_>, state: &mut State) -> Result<(), StepError> {
        let ws = &mut self.ws;
        consistent_initial(sys, &mut ws.solver, &mut ws.sys, state)?;
        ws.stepped = false;
        ws.predictor = PredictorChoice::default();
        self.grid = FixedGrid::new(state.t, self.dt);
        self.streak = 0;
        Ok(())
    }

    fn advance(
        &mut self,
        sys: &System<'_>,
        state: &mut State,
        t_stop: f64,
    ) -> Result<StepReport, StepError> {
        let mut rejected = 0;
        loop {
            let t_target = self.grid.target(t_stop);
            let h = t_target - state.t;
            match self.try_step(sys, state, h) {
                Ok(c) => {
                    state.t = t_target;
                    let mut report = StepReport::new(h);
                    report.newton_iterations = c.iterations;
                    report.residual = c.residual;
                    report.external_work = c.work;
                    report.stats[..4].copy_from_slice(&[
                        c.iterations.into(),
                        c.factorizations.into(),
                        rejected.into(),
                        c.backtracks.into(),
                    ]);
                    self.accepted(state.t);
                    return Ok(report);
                }
                Err(StepError::NewtonFailed { .. })
                    if self.control == StepControl::Cutback
                        && self.grid.h > self.dt / f64::from(1 << MAX_CUTBACKS) =>
                {
                    rejected += 1;
                    self.grid = FixedGrid::new(state.t, 0.5 * self.grid.h);
                    self.streak = 0;
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn aligned(&self, state: &State, a: &mut [f64], lambda: &mut [f64]) {
        let ws = &self.ws;
        let (s_a, s_l) = match (ws.stepped, ws.scheme) {
            (true, Some((_, sch))) => (
                sch.accel_shift,
                if self.option.lambda_inside() {
                    sch.w1 - 1.0
                } else {
                    0.0
                },
            ),
            _ => (0.0, 0.0),
        };
        // x(t_{n+1}) ~ x_{n+1} - s (x_{n+1} - x_n) for x_k sitting at t_k + s dt.
        for ((o, x), x0) in a.iter_mut().zip(&state.a).zip(&ws.a_n) {
            *o = (1.0 - s_a) * x + s_a * x0;
        }
        for ((o, x), x0) in lambda.iter_mut().zip(&state.lambda).zip(&ws.lam_n) {
            *o = (1.0 - s_l) * x + s_l * x0;
        }
    }
}

fn singular(sys: &System<'_>, ws: &Workspace, step: u64, time: f64, e: SolveError) -> StepError {
    StepError::Singular {
        step,
        time,
        diagnosis: format!(
            "{e}: {}",
            diagnose_singular(sys.model, sys.asm, &ws.sys.values, &ws.u_next, time)
        ),
    }
}

fn newton_failed(
    sys: &System<'_>,
    ws: &Workspace,
    step: u64,
    time: f64,
    iterations: u32,
    max_iter: u32,
    search_failed: bool,
) -> StepError {
    let last = ws.history.last().map(|h| h.0).unwrap_or(f64::NAN);
    let reason = if search_failed && last.is_finite() {
        format!(
            "the line search found no decrease of the residual along the correction in \
             {MAX_BACKTRACKS} halvings (iteration {iterations}; after a restart from the other \
             predictor)"
        )
    } else if last.is_finite() && iterations < max_iter {
        format!(
            "divergence: the weighted correction grew in {DIVERGENT_GROWTHS} iterations in a \
             row (iteration {iterations}; after a restart from the other predictor)"
        )
    } else if last.is_finite() {
        format!("no convergence in {max_iter} iterations")
    } else {
        "the residual became non-finite".to_string()
    };
    StepError::NewtonFailed {
        step,
        time,
        iterations,
        reason,
        history: ws.history.clone(),
        largest: crate::integrate::largest_entries(sys.model, &ws.sys.residual, 5),
    }
}

#[cfg(test)]
mod tests {
    use super::refuse_velocity_constraints;
    use crate::integrate::StepError;
    use crate::model::{Body3dSpec, ModelBuilder};

    /// A model with a rolling disk is refused with the rolling joint's name;
    /// the same body without it is accepted.
    #[test]
    fn velocity_level_joints_are_refused() {
        let model = |disk: bool| {
            let mut b = ModelBuilder::new(3).unwrap();
            let spec = Body3dSpec {
                position: [0.0, 0.0, 1.0],
                orientation: [1.0, 0.0, 0.0, 0.0],
                attitude: Default::default(),
                kinetic: Default::default(),
                mass: 1.0,
                inertia: [[0.25, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 0.25]],
                velocity: [0.0; 3],
                angular_velocity: [0.0; 3],
            };
            b.body3d("disk", &spec).unwrap();
            if disk {
                b.rolling_disk("floor", "disk", 1.0, [0.0, 1.0, 0.0], 0.0)
                    .unwrap();
            }
            b.build().unwrap()
        };
        assert!(refuse_velocity_constraints(&model(false)).is_ok());
        match refuse_velocity_constraints(&model(true)) {
            Err(StepError::Setup { reason }) => {
                assert!(reason.contains("'floor.rolling'"), "{reason}");
                assert!(reason.contains("dopri5"), "{reason}");
            }
            other => panic!("expected a setup error, got {other:?}"),
        }
    }
}
