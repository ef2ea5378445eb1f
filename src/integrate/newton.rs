//! Newton iterations of a one-step scheme on the index-3 DAE (seed 000 §3.6,
//! eqs. 3.14–3.31), shared by every [`LinearScheme`] (GSSSS in a/v/d form, the
//! two-field midpoint scheme).
//!
//! Each iteration assembles `e1 = M a~ + P~ + B~^T lambda~ - F~` and
//! `e2 = Phi(u_{n+1}) / chi_Cu` with the Newton matrix
//! `[chi_Ca M + chi_Cu (K~ + H~ - K~_F), C; B(u_{n+1}), 0]`, solves with the
//! saddle-point LU and corrects the iterates with the chi_C coefficients.
//!
//! Convergence test (documented in docs/theory/gssss.md): the increment of
//! u_{n+1} expressed in acceleration units (`|delta u_{n+1}| / (d u_{n+1}/d da)`,
//! which is the a-form unknown's increment in every form) and the multiplier
//! increment must both fall below `tol` (absolute), or below their round-off
//! floors when those are larger. The floor of an acceleration increment is
//! `FLOOR_FACTOR eps L / (d u_{n+1}/d da)` with `L = 1 + max |u_0|` the model's
//! coordinate scale (about eps |u| / (lambda3 dt^2), SPEC.md §1 DP), and that
//! of a multiplier increment is the force round-off `max|M| floor_a +
//! FLOOR_FACTOR eps L max|K(u_0)|` (stiff beams); with
//! tol = 1e-8 it takes over below dt of about 2^-10 on unit-size models, and
//! Newton still converges in 2 iterations per step at dt = 2^-18 on the
//! SPEC.md §1 problems. The scale is the initial one on purpose: a solution
//! that blows up (growing accelerations and multipliers, spinning angles) must
//! not relax the test, so such runs stop
//! with a Newton failure as in the seed.

use std::time::{Duration, Instant};

use crate::assembly::{At, ConstraintForce, Mult, SaddleSystem, StepInput};
use crate::element::GlobalLevel;
use crate::linalg::{diagnose_singular, SaddlePointSolver, SolveError};
use crate::output::AttrValue;

use super::initial::consistent_initial;
use super::scheme::{ConstraintOption, JacobianKind, LinearScheme, PredCorr};
use super::{Integrator, State, StepError, StepStats, System};

/// Safety factor on the round-off floors of the convergence test: the SPEC.md
/// §1 problems converge with 1 to 8 down to dt = 2^-18; the deformable
/// slider-crank (EA = 1.5e6 lb, 32 elements, dt = 1e-5) needs 4 or more.
const FLOOR_FACTOR: f64 = 8.0;

/// Newton settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonSettings {
    /// Tolerance on the increments (acceleration and multiplier units).
    pub tol: f64,
    /// Maximum iterations per step.
    pub max_iter: u32,
    /// Newton matrix variant.
    pub jacobian: JacobianKind,
    /// When an iterate is accepted.
    pub stop: NewtonStop,
    /// When the Newton matrix is assembled and factored.
    pub refactor: Refactor,
}

/// When the Newton matrix is assembled and factored (docs/theory/gssss.md §12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refactor {
    /// Every iteration (Newton's method).
    Iteration,
    /// At the first iteration of each step, then again only after an
    /// iteration whose contraction rate `theta = r_k / r_{k-1}` exceeds
    /// [`SLOW_CONTRACTION`] (modified Newton; the other iterations assemble
    /// the residual only and reuse the factorization).
    Step,
}

/// Where a run's Newton iterations spent their time (`flexmb bench`), when
/// the integrator was built with [`IntegratorConfig::timing`](super::IntegratorConfig).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NewtonTimings {
    /// Building the integrator: the solver's symbolic analysis (band
    /// ordering, sparse symbolic LU) and the consistent-start workspace.
    pub setup: Duration,
    /// Filling the residual and the Newton matrix.
    pub assembly: Duration,
    /// Numeric factorizations.
    pub factorization: Duration,
    /// Triangular solves.
    pub solve: Duration,
    /// Number of factorizations.
    pub factorizations: u64,
}

/// Contraction rate above which a modified-Newton step refreshes its matrix.
pub const SLOW_CONTRACTION: f64 = 0.5;

impl Refactor {
    /// `"iteration"` or `"step"`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "iteration" => Some(Refactor::Iteration),
            "step" => Some(Refactor::Step),
            _ => None,
        }
    }

    /// The name accepted by [`Refactor::from_name`].
    pub fn name(self) -> &'static str {
        match self {
            Refactor::Iteration => "iteration",
            Refactor::Step => "step",
        }
    }

    /// Whether the next iteration assembles and factors the matrix, after an
    /// iteration with scaled increment `r` (previous: `prev`).
    pub fn refresh_after(self, r: f64, prev: Option<f64>) -> bool {
        match self {
            Refactor::Iteration => true,
            Refactor::Step => prev.is_some_and(|p| r > SLOW_CONTRACTION * p),
        }
    }
}

/// When Newton accepts an iterate (docs/theory/gssss.md §12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewtonStop {
    /// The last increment is below the tolerance (seed 000 eq. 2.14): the
    /// accepted iterate is one iteration past the tolerance.
    Increment,
    /// The increment test, or the error of the current iterate estimated from
    /// the contraction rate `theta_k = r_k / r_{k-1}` of the scaled increments
    /// is below the tolerance: `theta_k / (1 - theta_k) r_k <= 1` with
    /// `theta_k < 1` (Hairer & Wanner, Solving ODEs II, §IV.8, eq. 8.10–8.11,
    /// with kappa = 1). Saves the confirming iteration once Newton converges.
    Rate,
}

impl NewtonStop {
    /// `"increment"` or `"rate"`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "increment" => Some(NewtonStop::Increment),
            "rate" => Some(NewtonStop::Rate),
            _ => None,
        }
    }

    /// The name accepted by [`NewtonStop::from_name`].
    pub fn name(self) -> &'static str {
        match self {
            NewtonStop::Increment => "increment",
            NewtonStop::Rate => "rate",
        }
    }

    /// Whether to stop after an iteration whose increments, divided by their
    /// tolerances, have the largest ratio `r`; `prev` is that of the previous
    /// iteration of the step.
    pub fn accepts(self, r: f64, prev: Option<f64>) -> bool {
        if r <= 1.0 {
            return true;
        }
        match (self, prev) {
            (NewtonStop::Rate, Some(p)) => {
                let theta = r / p;
                theta < 1.0 && theta / (1.0 - theta) * r <= 1.0
            }
            _ => false,
        }
    }
}

/// The constraint force of `option` at time-level weight `w1` (eqs. 3.8–3.11;
/// `dg`: option 2 with Gonzalez's discrete derivative, midpoint schemes only)
/// with `c3 = d u~ / d u_{n+1}`, and its Newton column.
pub fn constraint_force(
    option: ConstraintOption,
    jac: JacobianKind,
    w1: f64,
    c3: f64,
) -> ConstraintForce {
    let seed = jac == JacobianKind::Seed;
    let none = (0.0, At::Next, Mult::Iterate);
    match option {
        ConstraintOption::One => ConstraintForce {
            force: [
                (1.0 - w1, At::Prev, Mult::Prev),
                (w1, At::Next, Mult::Iterate),
            ],
            column: [(if seed { 1.0 } else { w1 }, At::Next), (0.0, At::Next)],
            curvature: (w1, At::Next, Mult::Iterate),
            discrete: false,
        },
        ConstraintOption::Two => ConstraintForce {
            force: [(1.0, At::Tilde, Mult::Iterate), none],
            column: [(1.0, At::Tilde), (0.0, At::Next)],
            curvature: (c3, At::Tilde, Mult::Iterate),
            discrete: false,
        },
        // Option 2 with B(u~) replaced by Gonzalez's B_d(u_n, u_{n+1}).
        ConstraintOption::Gonzalez => ConstraintForce {
            discrete: true,
            ..constraint_force(ConstraintOption::Two, jac, w1, c3)
        },
        ConstraintOption::Three => ConstraintForce {
            force: [
                (1.0 - w1, At::Prev, Mult::Iterate),
                (w1, At::Next, Mult::Iterate),
            ],
            column: if seed {
                [(1.0, At::Next), (0.0, At::Next)]
            } else {
                [(1.0 - w1, At::Prev), (w1, At::Next)]
            },
            curvature: (w1, At::Next, Mult::Iterate),
            discrete: false,
        },
        ConstraintOption::Four => ConstraintForce {
            force: [(1.0, At::Tilde, Mult::Blend(w1)), none],
            column: [(if seed { 1.0 } else { w1 }, At::Tilde), (0.0, At::Next)],
            curvature: (c3, At::Tilde, Mult::Blend(w1)),
            discrete: false,
        },
    }
}

/// A one-step integrator: a scheme (as linear forms for a given dt) plus the
/// constraint option, Newton settings and workspace.
pub struct OneStepIntegrator {
    label: String,
    parameters: Vec<(String, AttrValue)>,
    scheme_for: Box<dyn Fn(f64) -> LinearScheme + Send + Sync>,
    option: ConstraintOption,
    newton: NewtonSettings,
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
    /// Largest mass-matrix entry (converts the acceleration floor to multiplier units).
    mass_scale: f64,
    /// Largest tangent-stiffness entry at u_0 (round-off of internal forces).
    stiffness_scale: f64,
    /// `1 + max |u_0|`: the coordinate scale of the round-off floor.
    coord_scale: f64,
}

impl OneStepIntegrator {
    /// An integrator for the model in `sys`.
    pub fn new(
        sys: &System<'_>,
        label: String,
        parameters: Vec<(String, AttrValue)>,
        scheme_for: Box<dyn Fn(f64) -> LinearScheme + Send + Sync>,
        option: ConstraintOption,
        newton: NewtonSettings,
        force_sparse: bool,
    ) -> Result<Self, StepError> {
        let n = sys.asm.n_dofs();
        let m = sys.asm.n_constraints();
        let solver = SaddlePointSolver::new(sys.asm.pattern(), force_sparse).map_err(|e| {
            StepError::Setup {
                reason: e.to_string(),
            }
        })?;
        let z = |k: usize| vec![0.0; k];
        Ok(OneStepIntegrator {
            label,
            parameters,
            scheme_for,
            option,
            newton,
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
                sys: sys.asm.new_system(),
                solver,
                history: Vec::with_capacity(newton.max_iter as usize),
                stepped: false,
                scheme: None,
                mass_scale: max_abs(sys.asm.mass_matrix().data()),
                stiffness_scale: max_abs(sys.asm.stiffness(sys.model, &sys.model.u0).data()),
                coord_scale: 1.0 + max_abs(&sys.model.u0),
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

    /// The time split so far, when measured.
    pub fn timings(&self) -> Option<NewtonTimings> {
        self.timings
    }

    fn scheme(&mut self, dt: f64) -> LinearScheme {
        match self.ws.scheme {
            Some((h, s)) if h == dt => s,
            _ => {
                let s = (self.scheme_for)(dt);
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

fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0_f64, |m, v| m.max(v.abs()))
}

impl Integrator for OneStepIntegrator {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn parameters(&self) -> Vec<(String, AttrValue)> {
        self.parameters.clone()
    }

    fn start(&mut self, sys: &System<'_>, state: &mut State) -> Result<(), StepError> {
        let ws = &mut self.ws;
        consistent_initial(sys, &mut ws.solver, &mut ws.sys, state)?;
        ws.stepped = false;
        Ok(())
    }

    fn step(
        &mut self,
        sys: &System<'_>,
        state: &mut State,
        dt: f64,
    ) -> Result<StepStats, StepError> {
        let sch = self.scheme(dt);
        let option = self.option;
        let newton = self.newton;
        let ws = &mut self.ws;
        let n = ws.u_n.len();
        ws.u_n.copy_from_slice(&state.u);
        ws.v_n.copy_from_slice(&state.v);
        ws.a_n.copy_from_slice(&state.a);
        ws.lam_n.copy_from_slice(&state.lambda);

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
        let floor_a = FLOOR_FACTOR * f64::EPSILON * ws.coord_scale / accel_scale;
        // Multipliers balance forces: their floor is the round-off of M a and
        // of the internal forces, eps L max|K|, both at the initial scales.
        let floor_l = ws.mass_scale * floor_a
            + FLOOR_FACTOR * f64::EPSILON * ws.coord_scale * ws.stiffness_scale;
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
        while iterations < newton.max_iter {
            iterations += 1;
            let inp = StepInput {
                level: GlobalLevel {
                    u_n: &ws.u_n,
                    v_n: &ws.v_n,
                    a_n: &ws.a_n,
                    u_next: &ws.u_next,
                    u_tilde: &ws.u_tilde,
                    w,
                },
                a_tilde: &ws.a_tilde,
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
            sys.asm.fill_step(sys.model, &inp, &mut ws.sys);
            let clock = lap(clock, self.timings.as_mut().map(|t| &mut t.assembly));
            residual_norm = max_abs(&ws.sys.residual);
            if !residual_norm.is_finite() {
                ws.history.push((residual_norm, f64::NAN));
                break;
            }
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
            let (xd, xl) = ws.rhs.split_at(n);
            for (i, &x) in xd.iter().enumerate() {
                ws.u_next[i] += pu.c * x;
                ws.u_tilde[i] += put.c * x;
                ws.v_tilde[i] += pvt.c * x;
                ws.a_tilde[i] += pat.c * x;
                ws.du[i] += x;
            }
            for (l, x) in ws.lam.iter_mut().zip(xl) {
                *l += x;
            }
            let inc_a = max_abs(xd) / delta3;
            let inc_l = max_abs(xl);
            ws.history.push((residual_norm, inc_a));
            let ratio = (inc_a / newton.tol.max(floor_a)).max(inc_l / newton.tol.max(floor_l));
            if newton.stop.accepts(ratio, prev_ratio) {
                converged = true;
                break;
            }
            refresh = newton.refactor.refresh_after(ratio, prev_ratio);
            prev_ratio = Some(ratio);
        }
        if !converged {
            return Err(newton_failed(
                sys,
                ws,
                state.step + 1,
                t_next,
                iterations,
                newton.max_iter,
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
        let work = sys.asm.nonconservative_work(
            sys.model,
            &ws.u_tilde,
            &ws.v_tilde,
            &ws.du,
            t_n,
            t_next,
            sch.w1,
        );
        state.t = t_next;
        state.step += 1;
        ws.stepped = true;
        if let Some(t) = self.timings.as_mut() {
            t.factorizations += u64::from(factorizations);
        }
        Ok(StepStats {
            iterations,
            factorizations,
            residual: residual_norm,
            external_work: work,
        })
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
) -> StepError {
    let last = ws.history.last().map(|h| h.0).unwrap_or(f64::NAN);
    let reason = if last.is_finite() {
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
        largest: super::largest_entries(sys.model, &ws.sys.residual, 5),
    }
}
