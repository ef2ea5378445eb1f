//! The GSSSS stepper: Newton iterations of a one-step scheme on the index-3
//! DAE (Hoitink §3.6, eqs. 3.14–3.31), shared by every [`LinearScheme`]
//! (GSSSS in a/v/d form, the two-field midpoint scheme), on a fixed grid of
//! step `dt` or with the step cut back after a Newton failure
//! ([`StepControl::Cutback`]).
//!
//! Each iteration fills the residual and Newton matrix of [`fill_step`],
//! solves with the saddle-point LU and corrects the iterates with the chi_C
//! coefficients; the convergence test is described in [`crate::integrate::newton`].

use std::time::Duration;

use crate::element::{EvaluationPoint, LevelWeights};
use crate::integrate::Identity;
use crate::linalg::{max_abs, SaddlePointSolver, SolveError};

use super::predictor::{Outcome, Predictor, PredictorChoice};
use super::residual::{constraint_force, fill_step, ConstraintForce, StepInput};
use super::scheme::{ConstraintOption, LinearScheme, PredCorr};
use super::settings::{GssssSettings, StepControl};
use super::Variant;
use crate::assembly::Mechanics;
use crate::assembly::{diagnose_singular, SaddleSystem};
use crate::integrate::initial::consistent_initial;
use crate::integrate::newton::{
    self, weighted_rms, Correction, Failure, NewtonSettings, NewtonStop, NewtonTimings,
    NonlinearSystem, RoundOff, FLOOR_FACTOR,
};
use crate::integrate::{statistics, FixedGrid, Integrator, State, StepError, StepReport};

statistics! {
    /// Statistics of a GSSSS step.
    pub(crate) STATS = [NEWTON_ITERATIONS, FACTORIZATIONS, NREJECT, BACKTRACKS];
}

/// Halvings of dt allowed by [`StepControl::Cutback`].
const MAX_CUTBACKS: u32 = 10;

/// Successful steps after which a cut-back step is doubled again.
const REGROW_AFTER: u32 = 4;

/// A one-step integrator: a scheme (as linear forms for a given dt) plus the
/// constraint option, Newton settings and workspace.
pub struct OneStepIntegrator {
    /// Label, run metadata and statistics.
    identity: Identity,
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
    /// The Newton iterations of the current step (all its attempts).
    stats: newton::Stats,
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
    stepped: bool,
    scheme: Option<(f64, LinearScheme)>,
    /// The model's round-off scales at u_0 (the floors of the convergence tests).
    round_off: RoundOff,
    /// `M (a~ - g)` of the current iterate (force scale of the scaled test).
    inertia: Vec<f64>,
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

/// The equations of one step for [`newton::solve`]: the residual and
/// Newton matrix of [`fill_step`] at the iterate in the workspace, its
/// saddle-point solve, and the stop tests' scales (docs/theory/gssss.md §12).
struct StepSystem<'a, 's> {
    sys: &'a Mechanics<'s>,
    ws: &'a mut Workspace,
    w: LevelWeights,
    /// Whether the scheme asks for the discrete gradients (its EOM level is
    /// the step's midpoint, [`Variant::midpoint_level`]).
    discrete_gradient: bool,
    forces: ConstraintForce,
    /// The predictor–corrector coefficients on the unknown of u_{n+1}, u~, v~, a~.
    coefs: [f64; 4],
    w1: f64,
    delta3: f64,
    t: [f64; 2],
    /// The step's number (of the singular-matrix error).
    step: u64,
    scaled: bool,
    tol: f64,
    rtol: f64,
    atol_u: f64,
    floor_a: f64,
    floor_l: f64,
    /// `|M (a~ - g)| + |the other forces|` at the last assembly.
    force_scale: f64,
    /// The weight of the force rows in the line search's norm, fixed at the
    /// step's first assembly.
    force_weight: Option<f64>,
}

impl<'a, 's> StepSystem<'a, 's> {
    fn new(
        sys: &'a Mechanics<'s>,
        ws: &'a mut Workspace,
        sch: &LinearScheme,
        option: ConstraintOption,
        newton: &NewtonSettings,
        pc: [PredCorr; 4],
        t: [f64; 2],
    ) -> Self {
        let w = sch.level_weights();
        let ro = ws.round_off;
        let floor_a = FLOOR_FACTOR * f64::EPSILON * ro.coord_scale / sch.accel_scale();
        let rtol = newton.scaled.rtol;
        StepSystem {
            sys,
            forces: constraint_force(option, newton.jacobian, sch.w1, w.c3),
            w,
            discrete_gradient: false,
            coefs: pc.map(|p| p.c),
            w1: sch.w1,
            delta3: sch.unknown[3],
            t,
            step: 0,
            scaled: newton.stop == NewtonStop::Scaled,
            tol: newton.tol,
            rtol,
            atol_u: newton.scaled.atol.unwrap_or(rtol * ro.coord_scale),
            floor_a,
            // Multipliers balance forces: their floor is the round-off of M a
            // and of the internal forces, eps L max|K|, both at the initial scales.
            floor_l: ro.force_floor(floor_a),
            force_scale: 0.0,
            force_weight: None,
            ws,
        }
    }

    /// The weight of the constraint rows `Phi / chi_Cu` (displacement units
    /// over their tolerance).
    fn phi_weight(&self) -> f64 {
        self.coefs[0].abs() / self.atol_u.max(self.ws.round_off.coord_floor())
    }
}

impl NonlinearSystem for StepSystem<'_, '_> {
    type Error = StepError;

    fn assemble(&mut self, matrix: bool) -> Result<f64, StepError> {
        let (sys, ws) = (self.sys, &mut *self.ws);
        // M (a~ - g): the residual's inertia and gravity, and the scaled
        // test's force scale.
        ws.inertia.fill(0.0);
        sys.mass_mul_add(&ws.a_tilde, &mut ws.inertia);
        sys.subtract_gravity(&mut ws.inertia, 1.0);
        let [cu, _, cvt, cat] = self.coefs;
        let inp = StepInput {
            level: EvaluationPoint {
                u_n: &ws.u_n,
                v_n: &ws.v_n,
                a_n: &ws.a_n,
                u_next: &ws.u_next,
                u_tilde: &ws.u_tilde,
                w: self.w,
            },
            discrete_gradient: self.discrete_gradient,
            a_tilde: &ws.a_tilde,
            inertia: Some(&ws.inertia),
            v_tilde: &ws.v_tilde,
            coef_v: cvt,
            lambda_n: &ws.lam_n,
            lambda: &ws.lam,
            t_n: self.t[0],
            t_next: self.t[1],
            w1: self.w1,
            coef_mass: cat,
            coef_u: cu,
            forces: self.forces,
            matrix,
        };
        fill_step(sys, &inp, &mut ws.sys);
        Ok(max_abs(&ws.sys.residual))
    }

    /// Force rows over `rtol` times the force scale `|M (a~ - g)| + |the
    /// other forces|`, constraint rows in displacement units over `atol`
    /// (docs/theory/gssss.md §12).
    fn residual_ratio(&mut self) -> f64 {
        let n = self.ws.u_n.len();
        let (e1, e2) = self.ws.sys.residual.split_at(n);
        self.force_scale = e1
            .iter()
            .zip(&self.ws.inertia)
            .fold(0.0_f64, |m, (e, f)| m.max(f.abs() + (e - f).abs()));
        let res_force = max_abs(e1) / (self.rtol * self.force_scale).max(self.floor_l);
        // e2 = Phi / chi_Cu: constraint violations in displacement units.
        let coord_tol = self.atol_u.max(self.ws.round_off.coord_floor());
        res_force.max(max_abs(e2) * self.coefs[0].abs() / coord_tol)
    }

    /// Force rows over rtol F at the step's first assembly, constraint rows
    /// over atol (the residual test's scales), in the 2-norm.
    fn merit(&mut self) -> f64 {
        let (rtol, force_scale, floor_l) = (self.rtol, self.force_scale, self.floor_l);
        let w_force = *self
            .force_weight
            .get_or_insert_with(|| 1.0 / (rtol * force_scale).max(floor_l));
        let w_phi = self.phi_weight();
        let (e1, e2) = self.ws.sys.residual.split_at(self.ws.u_n.len());
        newton::driver::scaled_l2([(e1, w_force), (e2, w_phi)])
    }

    fn factor(&mut self) -> Result<(), StepError> {
        let ws = &mut *self.ws;
        ws.solver
            .factor(&ws.sys.values)
            .map_err(|e| singular(self.sys, ws, self.step, self.t[1], e))
    }

    fn solve(&mut self) -> Result<(), StepError> {
        let ws = &mut *self.ws;
        for (r, e) in ws.rhs.iter_mut().zip(&ws.sys.residual) {
            *r = -e;
        }
        ws.solver
            .solve(&mut ws.rhs)
            .map_err(|e| singular(self.sys, ws, self.step, self.t[1], e))
    }

    fn move_along(&mut self, by: f64) {
        self.ws.move_along_correction(by, self.coefs);
    }

    /// Scaled test: coordinates in displacement units, multipliers in force
    /// units, apart; `increment`, `rate`: the unknown's increment in
    /// acceleration units and the multipliers' over `tol` or their floors.
    fn correction(&mut self) -> Correction {
        let ws = &*self.ws;
        let ro = ws.round_off;
        let (xd, xl) = ws.rhs.split_at(ws.u_n.len());
        if self.scaled {
            let (cu, rtol, atol_u) = (self.coefs[0], self.rtol, self.atol_u);
            let inc_u = weighted_rms(
                xd.iter()
                    .zip(&ws.u_next)
                    .map(|(x, u)| (cu * x, (rtol * u.abs() + atol_u).max(ro.coord_floor()))),
            );
            let atol_l = atol_u / ro.coord_scale * self.force_scale;
            let floor_l = self.floor_l;
            let inc_l = weighted_rms(
                xl.iter()
                    .zip(&ws.lam)
                    .map(|(x, l)| (*x, (rtol * l.abs() + atol_l).max(floor_l))),
            );
            Correction {
                ratio: inc_u.max(inc_l),
                parts: Some((inc_u, inc_l)),
            }
        } else {
            let inc_a = max_abs(xd) / self.delta3;
            let inc_l = max_abs(xl);
            Correction {
                ratio: (inc_a / self.tol.max(self.floor_a)).max(inc_l / self.tol.max(self.floor_l)),
                parts: None,
            }
        }
    }
}

impl OneStepIntegrator {
    /// An integrator for the model in `sys`.
    pub fn new(
        sys: &Mechanics<'_>,
        identity: Identity,
        settings: &GssssSettings,
        solver: crate::linalg::SolverChoice,
    ) -> Result<Self, StepError> {
        refuse_velocity_constraints(sys)?;
        let newton = settings.newton;
        let n = sys.n_dofs();
        let m = sys.n_constraints();
        let mut solver = crate::integrate::saddle_solver(sys, solver)?;
        solver.set_refine_tol(crate::linalg::newton_refine_tol(newton.scaled.rtol));
        let z = |k: usize| vec![0.0; k];
        let mut system = sys.new_system();
        let stiffness_scale = sys.stiffness_max(sys.initial_positions(), &mut system);
        Ok(OneStepIntegrator {
            identity,
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
                stepped: false,
                scheme: None,
                round_off: RoundOff {
                    coord_scale: 1.0 + max_abs(sys.initial_positions()),
                    mass_scale: max_abs(sys.mass_matrix().data()),
                    stiffness_scale,
                },
                inertia: z(n),
                predictor: PredictorChoice::default(),
                grew: false,
            },
            timings: None,
            stats: newton::Stats::with_capacity(newton.max_iter),
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
    pub fn export_matrix(&mut self, sys: &Mechanics<'_>, export: crate::linalg::MatrixExport) {
        self.ws.solver.export(export, sys.pattern());
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
        sys: &Mechanics<'_>,
        state: &mut State,
        dt: f64,
    ) -> Result<Converged, StepError> {
        self.stats.reset();
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

    /// Newton's iteration ([`newton::solve`]) of one step of size `dt`
    /// from `state`, starting at `predictor`.
    fn iterate(
        &mut self,
        sys: &Mechanics<'_>,
        state: &mut State,
        dt: f64,
        predictor: Predictor,
    ) -> Result<Converged, StepError> {
        let sch = self.scheme(dt);
        let newton = self.newton;
        let ws = &mut self.ws;
        let n = ws.u_n.len();
        ws.u_n.copy_from_slice(&state.u);
        ws.v_n.copy_from_slice(&state.v);
        ws.a_n.copy_from_slice(&state.a);
        ws.lam_n.copy_from_slice(&state.lambda);
        ws.solver.at_step(state.step + 1);

        let pc = [
            sch.pred_corr(&sch.u_next),
            sch.pred_corr(&sch.u_tilde),
            sch.pred_corr(&sch.v_tilde),
            sch.pred_corr(&sch.a_tilde),
        ];
        let predict = |pc: &PredCorr, out: &mut [f64], ws_u: &[f64], ws_v: &[f64], ws_a: &[f64]| {
            for i in 0..out.len() {
                out[i] = pc.predict(ws_u[i], ws_v[i], ws_a[i]);
            }
        };
        predict(&pc[0], &mut ws.u_next, &ws.u_n, &ws.v_n, &ws.a_n);
        predict(&pc[1], &mut ws.u_tilde, &ws.u_n, &ws.v_n, &ws.a_n);
        predict(&pc[2], &mut ws.v_tilde, &ws.u_n, &ws.v_n, &ws.a_n);
        predict(&pc[3], &mut ws.a_tilde, &ws.u_n, &ws.v_n, &ws.a_n);
        ws.lam.copy_from_slice(&ws.lam_n);

        // Accumulated unknown increment (delta), per DOF, kept in `du`.
        ws.du.fill(0.0);
        if predictor == Predictor::Displacement {
            // The unknown at u_{n+1} = u_n: da0 = -(x1 v_n + x2 a_n) / x3 of u_{n+1}'s form.
            let (x, d) = (&sch.u_next, &sch.unknown);
            for i in 0..n {
                let (u, v, a) = (ws.u_n[i], ws.v_n[i], ws.a_n[i]);
                let da0 = -(x[1] * v + x[2] * a) / x[3];
                let delta0 = d[0] * u + d[1] * v + d[2] * a + d[3] * da0;
                ws.u_next[i] += pc[0].c * delta0;
                ws.u_tilde[i] += pc[1].c * delta0;
                ws.v_tilde[i] += pc[2].c * delta0;
                ws.a_tilde[i] += pc[3].c * delta0;
                ws.du[i] = delta0;
            }
        }
        let t_n = state.t;
        let t_next = state.t + dt;
        let mut system = StepSystem::new(sys, ws, &sch, self.option, &newton, pc, [t_n, t_next]);
        system.step = state.step + 1;
        system.discrete_gradient = self.variant.midpoint_level();
        let outcome = newton::solve(
            &mut system,
            &newton.policy(),
            &mut self.stats,
            self.timings.as_mut(),
        );
        let ws = &mut self.ws;
        let residual = match outcome {
            Ok(out) => {
                ws.grew = out.grew;
                out.residual
            }
            Err(Failure::Error(e)) => return Err(e),
            Err(failure) => {
                if let Failure::Stopped { grew, .. } = failure {
                    ws.grew = grew;
                }
                return Err(newton_failed(
                    sys,
                    ws,
                    &self.stats,
                    state.step + 1,
                    t_next,
                    &failure,
                ));
            }
        };

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
        let work = sys.nonconservative_work(&ws.u_tilde, &ws.v_tilde, &ws.du, &load_factor);
        state.t = t_next;
        state.step += 1;
        ws.stepped = true;
        let stats = &self.stats;
        Ok(Converged {
            iterations: stats.iterations,
            factorizations: stats.factorizations,
            backtracks: stats.backtracks,
            residual,
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

/// GSSSS solves the index-3 form `Phi(u) = 0`: a velocity-level
/// (nonholonomic) joint has no `Phi`, so a model with one is refused, naming
/// the joint.
fn refuse_velocity_constraints(sys: &Mechanics<'_>) -> Result<(), StepError> {
    match sys.velocity_joint() {
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
    fn identity(&self) -> &Identity {
        &self.identity
    }

    fn timings(&self) -> Option<NewtonTimings> {
        self.timings
    }

    fn start(&mut self, sys: &Mechanics<'_>, state: &mut State) -> Result<(), StepError> {
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
        sys: &Mechanics<'_>,
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
                    report.stats[NEWTON_ITERATIONS] = c.iterations.into();
                    report.stats[FACTORIZATIONS] = c.factorizations.into();
                    report.stats[NREJECT] = rejected.into();
                    report.stats[BACKTRACKS] = c.backtracks.into();
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

fn singular(sys: &Mechanics<'_>, ws: &Workspace, step: u64, time: f64, e: SolveError) -> StepError {
    StepError::Singular {
        step,
        time,
        diagnosis: format!(
            "{e}: {}",
            diagnose_singular(sys, &ws.sys.values, &ws.u_next, time)
        ),
    }
}

fn newton_failed(
    sys: &Mechanics<'_>,
    ws: &Workspace,
    stats: &newton::Stats,
    step: u64,
    time: f64,
    failure: &Failure<StepError>,
) -> StepError {
    StepError::NewtonFailed {
        step,
        time,
        iterations: match failure {
            Failure::Stopped { iterations, .. } => *iterations,
            Failure::Error(_) => 0,
        },
        reason: failure
            .reason(Some("; after a restart from the other predictor"))
            .unwrap_or_default(),
        history: stats.history.clone(),
        largest: crate::integrate::largest_entries(sys, &ws.sys.residual, 5),
    }
}

#[cfg(test)]
mod tests {
    use super::refuse_velocity_constraints;
    use crate::assembly::{Assembler, Mechanics};
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
        let refuse = |disk: bool| {
            let model = model(disk);
            let asm = Assembler::new(&model);
            refuse_velocity_constraints(&Mechanics::new(&model, &asm))
        };
        assert!(refuse(false).is_ok());
        match refuse(true) {
            Err(StepError::Setup { reason }) => {
                assert!(reason.contains("'floor.rolling'"), "{reason}");
                assert!(reason.contains("dopri5"), "{reason}");
            }
            other => panic!("expected a setup error, got {other:?}"),
        }
    }
}
