//! Seed 002's energy-decaying time-discontinuous Galerkin scheme (Lens &
//! Cardona 2007, §5.1–5.2): eq. 47 with dissipation control alpha (eq. 28
//! is alpha = 1), docs/theory/galerkin.md §2.
//!
//! Two states per step: the jump state j at t_n+ and the end state n+1. With
//! L = I, G = 0 (points, trusses, beams, planar bodies) the step equations are
//!
//! ```text
//! Ra  = M (v1 - vn)/h + D_g + B*_g^T lg                                   (47a)
//! 3Rb = 3 M (vj - vn)/h - (D_g - D_h) + alpha/2 (P(qj) - P(qn))
//!       - (B*_g^T lg - B*_h^T lj)                                          (47b)
//! Rf  = Phi(q1),   Re = Phi(qj)                                            (47f, e)
//! ```
//!
//! with `D_g = DV(qj, q1)`, `D_h = DV(qn, qj)` the elements' discrete
//! gradients (midpoint-weight [`crate::element::Element::eom_force`], gravity
//! exact) and `B*_g = B*(qj, q1)`, `B*_h = B*(qn, qj)` Gonzalez's discrete
//! Jacobians (eqs. 35, 37). The kinematic rows 47c, 47d are linear and
//! eliminate the velocities:
//! `vj = (2 d1 + 6 dj)/(h (1 + alpha)) - (1 - alpha)/(1 + alpha) vn`,
//! `v1 = 2 d1/h - vj` with `d1 = q1 - qn`, `dj = qj - qn` (eq. 28c's printed
//! minus sign is a typo; 47c's plus is used). Newton runs on
//! `(q1, lg, qj, lj)` with the 2 x 2 block matrix of [`blocks::BlockPattern`]
//! (rows [Ra; Rf], [3Rb; Re]):
//!
//! ```text
//! [ 2a c M + K_g1 + H_g1 , B*_g^T | -6 c M + K_g0 + H_g0            , 0       ]
//! [ B(q1)                , 0      | 0                               , 0       ]
//! [ 6 c M - K_g1 - H_g1  , -B*_g^T| 18 c M - K_g0 - H_g0 + K_h1 + H_h1
//!                                   + alpha/2 K(qj)                 , B*_h^T  ]
//! [ 0                    , 0      | B(qj)                           , 0       ]
//! ```
//!
//! with `c = 1/((1 + alpha) h^2)`. Every discrete gradient of flexmb is
//! symmetric in its two states (Gonzalez's correction is even in the swap,
//! Greenspan's quotients and the truss's averages are symmetric), so the
//! derivatives with respect to the first state (K_g0, H_g0) are the
//! second-state derivatives of the swapped call; the finite-difference test
//! of the whole matrix checks it. Energy (eqs. 41–43, 52–53):
//! `E_{n+1} - E_n = -alpha (K_nj + V_nj)`.
//!
//! The proofs need a constant mass matrix and a conservative system: models
//! with 3-D bodies in Euler parameters (configuration-dependent inertia),
//! dampers, external loads or velocity-level joints are refused.

pub mod blocks;

use crate::assembly::{ElementEval, JointTerms, MultiplierMix, SaddleSystem};
use crate::element::{GlobalLevel, LevelWeights};
use crate::linalg::{SaddlePointSolver, SolveError};
use crate::output::AttrValue;

use super::initial::consistent_initial;
use super::newton::{weighted_rms, RoundOff, ScaledTest, Verdict, DIVERGENT_GROWTHS};
use super::{FixedGrid, Integrator, StatSpec, State, StepError, StepReport, System};
use blocks::{add_scaled, clear, BlockPattern};

/// Statistics of a Galerkin step: Newton iterations, residual evaluations,
/// Newton-matrix evaluations (each is factored).
pub(crate) const STATS: [StatSpec; 3] = [
    StatSpec::count("newton_iterations"),
    StatSpec::count("nfcn"),
    StatSpec::count("njac"),
];

/// Settings of the time-discontinuous Galerkin scheme.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TdgSettings {
    /// Dissipation control alpha in [0, 1] (eq. 44; rho_inf = (1 - alpha)/(1 + alpha)).
    pub alpha: f64,
    /// Time step.
    pub dt: f64,
    /// Relative tolerance of the scaled Newton test.
    pub rtol: f64,
    /// Absolute tolerance (displacement units); `None`: rtol (1 + max |u0|).
    pub atol: Option<f64>,
    /// Newton iteration limit per step.
    pub max_iter: u32,
}

/// Block indices in the 2 x 2 grid (row block I, column block J): I 2 + J.
const B00: usize = 0;
const B01: usize = 1;
const B10: usize = 2;
const B11: usize = 3;

/// The midpoint weights: `eom_force` returns the discrete gradient.
const MIDPOINT: LevelWeights = LevelWeights {
    c1dt: 0.0,
    c2dt2: 0.0,
    c3: 0.5,
};

/// The TDG integrator (eq. 47).
pub struct Tdg {
    label: String,
    parameters: Vec<(String, AttrValue)>,
    settings: TdgSettings,
    grid: FixedGrid,
    ws: Workspace,
}

/// Vectors, block systems and solvers reused by every step.
struct Workspace {
    qn: Vec<f64>,
    vn: Vec<f64>,
    q1: Vec<f64>,
    qj: Vec<f64>,
    v1: Vec<f64>,
    vj: Vec<f64>,
    lg: Vec<f64>,
    lj: Vec<f64>,
    /// Midpoints (qj + q1)/2 and (qn + qj)/2.
    mid_g: Vec<f64>,
    mid_h: Vec<f64>,
    /// Elements' P(qn) of the step.
    pn: Vec<f64>,
    zeros: Vec<f64>,
    /// Scratch n-vector.
    w: Vec<f64>,
    /// `M (v1 - vn)/h - M g` (force scale of the scaled test).
    inertia: Vec<f64>,
    /// Residuals [Ra; Rf] and [3Rb; Re].
    res_a: Vec<f64>,
    res_b: Vec<f64>,
    /// One term of the assembly.
    tmp: SaddleSystem,
    /// The four blocks' values.
    blocks: Vec<SaddleSystem>,
    pattern: BlockPattern,
    values: Vec<f64>,
    rhs: Vec<f64>,
    solver: SaddlePointSolver,
    /// The consistent start's solver and system (base pattern).
    start_solver: SaddlePointSolver,
    start_sys: SaddleSystem,
    round_off: RoundOff,
    history: Vec<(f64, f64)>,
    /// a and lambda of the previous step (for [`Integrator::aligned`]).
    a_prev: Vec<f64>,
    lam_prev: Vec<f64>,
    stepped: bool,
}

fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0_f64, |m, v| m.max(v.abs()))
}

/// Refuses what the energy proofs of seed 002 do not cover, naming it.
pub fn refuse_unsupported(model: &crate::model::Model, method: &str) -> Result<(), StepError> {
    let setup = |reason: String| Err(StepError::Setup { reason });
    if let Some(name) = model.velocity_joints().next() {
        return setup(format!(
            "joint '{name}' is a velocity-level (nonholonomic) constraint, which {method} \
             (seed 002, holonomic constraints) cannot integrate"
        ));
    }
    if model.elements.iter().any(|b| b.has_inertia()) {
        return setup(format!(
            "{method} needs a constant mass matrix (seed 002 eq. 2, energy proof eqs. 33–34): \
             the model has 3-D bodies in Euler parameters (configuration-dependent inertia); \
             use method \"tcg\" or \"gssss\""
        ));
    }
    if model.elements.iter().any(|b| b.is_dissipative()) {
        return setup(format!(
            "{method} integrates conservative systems (seed 002 §2): the model has dampers; \
             use method \"tcg\" or \"gssss\""
        ));
    }
    if !model.loads.is_empty() {
        return setup(format!(
            "{method} integrates conservative systems (seed 002 §2): the model has external \
             loads other than gravity; use method \"tcg\" or \"gssss\""
        ));
    }
    Ok(())
}

impl Tdg {
    /// The integrator for the model in `sys`.
    pub fn new(
        sys: &System<'_>,
        label: String,
        parameters: Vec<(String, AttrValue)>,
        settings: TdgSettings,
        force_sparse: bool,
    ) -> Result<Self, StepError> {
        refuse_unsupported(sys.model, "method \"tdg\"")?;
        let n = sys.asm.n_dofs();
        let m = sys.asm.n_constraints();
        let pattern = BlockPattern::full(sys.asm.pattern(), 2);
        let solver = SaddlePointSolver::new(&pattern.pattern, force_sparse).map_err(|e| {
            StepError::Setup {
                reason: e.to_string(),
            }
        })?;
        let z = |k: usize| vec![0.0; k];
        Ok(Tdg {
            label,
            parameters,
            settings,
            grid: FixedGrid::new(0.0, settings.dt),
            ws: Workspace {
                qn: z(n),
                vn: z(n),
                q1: z(n),
                qj: z(n),
                v1: z(n),
                vj: z(n),
                lg: z(m),
                lj: z(m),
                mid_g: z(n),
                mid_h: z(n),
                pn: z(n),
                zeros: z(n),
                w: z(n),
                inertia: z(n),
                res_a: z(n + m),
                res_b: z(n + m),
                tmp: sys.asm.new_system(),
                blocks: (0..4).map(|_| sys.asm.new_system()).collect(),
                values: z(pattern.pattern.nnz()),
                rhs: z(2 * (n + m)),
                pattern,
                solver,
                start_solver: super::saddle_solver(sys, force_sparse)?,
                start_sys: sys.asm.new_system(),
                round_off: RoundOff {
                    coord_scale: 1.0 + max_abs(&sys.model.u0),
                    mass_scale: max_abs(sys.asm.mass_matrix().data()),
                    stiffness_scale: max_abs(sys.asm.stiffness(sys.model, &sys.model.u0).data()),
                },
                history: Vec::with_capacity(settings.max_iter as usize),
                a_prev: z(n),
                lam_prev: z(m),
                stepped: false,
            },
        })
    }

    /// The block matrix's pattern (dimension 2 (n + m)).
    pub fn block_pattern(&self) -> &crate::assembly::Pattern {
        &self.ws.pattern.pattern
    }

    /// Fills the residual `[Ra; Rf; 3Rb; Re]` into `res` and, with `matrix`,
    /// the block Newton matrix into `values`, at the unknowns
    /// `x = [q1; lg; qj; lj]` of a step of size `h` from `(qn, vn)` at `t_n`.
    /// For the tangent tests; the stepper calls the same fill.
    #[allow(clippy::too_many_arguments)]
    pub fn eval(
        &mut self,
        sys: &System<'_>,
        qn: &[f64],
        vn: &[f64],
        t_n: f64,
        h: f64,
        x: &[f64],
        res: &mut [f64],
        values: &mut [f64],
    ) {
        let n = sys.asm.n_dofs();
        let m = sys.asm.n_constraints();
        let ws = &mut self.ws;
        ws.qn.copy_from_slice(qn);
        ws.vn.copy_from_slice(vn);
        ws.q1.copy_from_slice(&x[..n]);
        ws.lg.copy_from_slice(&x[n..n + m]);
        ws.qj.copy_from_slice(&x[n + m..2 * n + m]);
        ws.lj.copy_from_slice(&x[2 * n + m..]);
        elements_at_qn(sys, ws);
        fill(sys, ws, self.settings.alpha, t_n, h);
        res[..n + m].copy_from_slice(&ws.res_a);
        res[n + m..].copy_from_slice(&ws.res_b);
        ws.pattern.gather(&ws.blocks, values);
    }

    /// One step of size `h` from `state`; `state` changes only on success.
    fn step(
        &mut self,
        sys: &System<'_>,
        state: &mut State,
        h: f64,
    ) -> Result<Converged, StepError> {
        let n = sys.asm.n_dofs();
        let alpha = self.settings.alpha;
        let ws = &mut self.ws;
        ws.solver.at_step(state.step + 1);
        ws.qn.copy_from_slice(&state.u);
        ws.vn.copy_from_slice(&state.v);
        // Predictor from the last step's acceleration a: q1 = qn + h vn + h^2/2 a,
        // and qj such that vj = vn (qj - qn = (h vn - d1)/3 = -h^2/6 a).
        for i in 0..n {
            let (q, v, a) = (state.u[i], state.v[i], state.a[i]);
            ws.q1[i] = q + h * v + 0.5 * h * h * a;
            ws.qj[i] = q - h * h / 6.0 * a;
        }
        ws.lg.copy_from_slice(&state.lambda);
        ws.lj.copy_from_slice(&state.lambda);
        elements_at_qn(sys, ws);

        let s = self.settings;
        let ro = ws.round_off;
        let atol_u = s.atol.unwrap_or(s.rtol * ro.coord_scale);
        // Round-off of the forces: that of M (v - vn)/h for coordinates known
        // to their round-off (the largest mass coefficient, 18 c, of the
        // block matrix) and of the internal forces (docs/theory/gssss.md §12).
        let floor_l = ro.force_floor(ro.coord_floor() * 18.0 / ((1.0 + alpha) * h * h));
        let t_next = state.t + h;
        let mut test = ScaledTest::default();
        let mut iterations = 0;
        let mut converged = false;
        let mut residual_norm = f64::NAN;
        ws.history.clear();
        while iterations < s.max_iter {
            iterations += 1;
            fill(sys, ws, alpha, state.t, h);
            residual_norm = max_abs(&ws.res_a).max(max_abs(&ws.res_b));
            if !residual_norm.is_finite() {
                ws.history.push((residual_norm, f64::NAN));
                break;
            }
            // Force scale: |M (v1 - vn)/h - M g| + |the other forces of Ra|.
            for i in 0..n {
                ws.w[i] = (ws.v1[i] - ws.vn[i]) / h;
            }
            ws.inertia.fill(0.0);
            sys.asm.mass_mul_add(&ws.w, &mut ws.inertia);
            sys.asm.subtract_gravity(&mut ws.inertia, 1.0);
            let force_scale = ws.res_a[..n]
                .iter()
                .zip(&ws.inertia)
                .fold(0.0_f64, |mx, (e, f)| mx.max(f.abs() + (e - f).abs()));
            let res_force = max_abs(&ws.res_a[..n]).max(max_abs(&ws.res_b[..n]) / 3.0)
                / (s.rtol * force_scale).max(floor_l);
            let res_phi =
                max_abs(&ws.res_a[n..]).max(max_abs(&ws.res_b[n..])) / atol_u.max(ro.coord_floor());
            let residual_ratio = res_force.max(res_phi);

            ws.pattern.gather(&ws.blocks, &mut ws.values);
            if let Err(e) = ws.solver.factor(&ws.values) {
                return Err(singular(state.step + 1, t_next, e));
            }
            let nm = ws.res_a.len();
            for (r, e) in ws.rhs.iter_mut().zip(ws.res_a.iter().chain(&ws.res_b)) {
                *r = -e;
            }
            if let Err(e) = ws.solver.solve(&mut ws.rhs) {
                return Err(singular(state.step + 1, t_next, e));
            }
            let (xa, xb) = ws.rhs.split_at(nm);
            let (dq1, dlg) = xa.split_at(n);
            let (dqj, dlj) = xb.split_at(n);
            for (q, d) in ws.q1.iter_mut().zip(dq1).chain(ws.qj.iter_mut().zip(dqj)) {
                *q += d;
            }
            for (l, d) in ws.lg.iter_mut().zip(dlg).chain(ws.lj.iter_mut().zip(dlj)) {
                *l += d;
            }
            let wu = |d: &f64, q: &f64| (*d, (s.rtol * q.abs() + atol_u).max(ro.coord_floor()));
            let inc_u = weighted_rms(
                dq1.iter()
                    .zip(&ws.q1)
                    .map(|(d, q)| wu(d, q))
                    .chain(dqj.iter().zip(&ws.qj).map(|(d, q)| wu(d, q))),
            );
            let atol_l = atol_u / ro.coord_scale * force_scale;
            let wl = |d: &f64, l: &f64| (*d, (s.rtol * l.abs() + atol_l).max(floor_l));
            let inc_l = weighted_rms(
                dlg.iter()
                    .zip(&ws.lg)
                    .map(|(d, l)| wl(d, l))
                    .chain(dlj.iter().zip(&ws.lj).map(|(d, l)| wl(d, l))),
            );
            let ratio = inc_u.max(inc_l);
            ws.history.push((residual_norm, ratio));
            match test.judge(ratio, residual_ratio) {
                Verdict::Converged => {
                    converged = true;
                    break;
                }
                Verdict::Diverged => break,
                Verdict::Continue => {}
            }
        }
        if !converged {
            let reason = match ws.history.last() {
                Some((r, _)) if !r.is_finite() => "the residual became non-finite".to_string(),
                _ if iterations < s.max_iter => format!(
                    "divergence: the weighted correction grew in {DIVERGENT_GROWTHS} iterations in a row"
                ),
                _ => format!("no convergence in {} iterations", s.max_iter),
            };
            let mut largest = crate::integrate::largest_entries(sys.model, &ws.res_a, 3);
            largest.extend(
                crate::integrate::largest_entries(sys.model, &ws.res_b, 3)
                    .into_iter()
                    .map(|(name, v)| (format!("{name} (jump state)"), v)),
            );
            return Err(StepError::NewtonFailed {
                step: state.step + 1,
                time: t_next,
                iterations,
                reason,
                history: ws.history.clone(),
                largest,
            });
        }
        velocities(ws, alpha, h);
        ws.a_prev.copy_from_slice(&state.a);
        ws.lam_prev.copy_from_slice(&state.lambda);
        for i in 0..n {
            state.a[i] = (ws.v1[i] - ws.vn[i]) / h;
        }
        state.u.copy_from_slice(&ws.q1);
        state.v.copy_from_slice(&ws.v1);
        state.lambda.copy_from_slice(&ws.lg);
        state.t = t_next;
        state.step += 1;
        ws.stepped = true;
        Ok(Converged {
            iterations,
            residual: residual_norm,
        })
    }
}

/// A converged step.
struct Converged {
    iterations: u32,
    residual: f64,
}

fn singular(step: u64, time: f64, e: SolveError) -> StepError {
    StepError::Singular {
        step,
        time,
        diagnosis: format!("{e} (the TDG block matrix of docs/theory/galerkin.md §2)"),
    }
}

/// The elements' true force P(qn) of the step (its alpha/6 term, eq. 47b).
fn elements_at_qn(sys: &System<'_>, ws: &mut Workspace) {
    clear(&mut ws.tmp);
    sys.asm
        .add_element_forces(sys.model, &ElementEval::At(&ws.qn), None, &mut ws.tmp);
    let n = ws.pn.len();
    ws.pn.copy_from_slice(&ws.tmp.residual[..n]);
}

/// The velocities of eqs. 47c, 47d at the current (q1, qj).
fn velocities(ws: &mut Workspace, alpha: f64, h: f64) {
    let k = 1.0 / (h * (1.0 + alpha));
    let r = (1.0 - alpha) / (1.0 + alpha);
    for i in 0..ws.qn.len() {
        let d1 = ws.q1[i] - ws.qn[i];
        let dj = ws.qj[i] - ws.qn[i];
        ws.vj[i] = k * (2.0 * d1 + 6.0 * dj) - r * ws.vn[i];
        ws.v1[i] = 2.0 * d1 / h - ws.vj[i];
    }
}

/// The residuals `res_a = [Ra; Rf]`, `res_b = [3Rb; Re]` and the four blocks'
/// values at the current unknowns (module doc).
fn fill(sys: &System<'_>, ws: &mut Workspace, alpha: f64, t_n: f64, h: f64) {
    let (asm, model) = (sys.asm, sys.model);
    let n = ws.qn.len();
    let t1 = t_n + h;
    velocities(ws, alpha, h);
    for i in 0..n {
        ws.mid_g[i] = 0.5 * (ws.qj[i] + ws.q1[i]);
        ws.mid_h[i] = 0.5 * (ws.qn[i] + ws.qj[i]);
    }
    ws.res_a.fill(0.0);
    ws.res_b.fill(0.0);
    for b in ws.blocks.iter_mut() {
        b.values.fill(0.0);
    }
    // Inertia and gravity: Ra += M (v1 - vn)/h - M g, 3Rb += 3 M (vj - vn)/h
    // (gravity's discrete gradients cancel in 3Rb and its P(qj) - P(qn) is 0).
    for i in 0..n {
        ws.w[i] = (ws.v1[i] - ws.vn[i]) / h;
    }
    asm.mass_mul_add(&ws.w, &mut ws.res_a[..n]);
    asm.subtract_gravity(&mut ws.res_a[..n], 1.0);
    for i in 0..n {
        ws.w[i] = 3.0 * (ws.vj[i] - ws.vn[i]) / h;
    }
    asm.mass_mul_add(&ws.w, &mut ws.res_b[..n]);
    let c = 1.0 / ((1.0 + alpha) * h * h);
    for (b, coef) in [
        (B00, 2.0 * alpha * c),
        (B01, -6.0 * c),
        (B10, 6.0 * c),
        (B11, 18.0 * c),
    ] {
        asm.add_mass(&mut ws.blocks[b].values, coef);
    }
    for (r, p) in ws.res_b[..n].iter_mut().zip(&ws.pn) {
        *r -= 0.5 * alpha * p;
    }
    // g-terms, derivative with respect to q1: D_g + B*_g^T lg into Ra (+) and 3Rb (-).
    clear(&mut ws.tmp);
    let g1 = GlobalLevel {
        u_n: &ws.qj,
        v_n: &ws.zeros,
        a_n: &ws.zeros,
        u_next: &ws.q1,
        u_tilde: &ws.mid_g,
        w: MIDPOINT,
    };
    asm.add_element_forces(model, &ElementEval::Level(g1), Some(1.0), &mut ws.tmp);
    let lg = MultiplierMix::of(&ws.lg);
    asm.add_joint_terms(
        model,
        &JointTerms {
            u: &ws.q1,
            t: t1,
            discrete_from: Some(&ws.qj),
            force: Some((1.0, lg)),
            column: 1.0,
            curvature: Some((1.0, lg)),
        },
        &mut ws.tmp,
    );
    add_scaled(
        &ws.tmp,
        Some((&mut ws.res_a[..n], 1.0)),
        &mut ws.blocks,
        &[(B00, 1.0), (B10, -1.0)],
    );
    add_scaled(&ws.tmp, Some((&mut ws.res_b[..n], -1.0)), &mut [], &[]);

    // g-terms, derivative with respect to qj (the swapped symmetric call).
    clear(&mut ws.tmp);
    let g0 = GlobalLevel {
        u_n: &ws.q1,
        v_n: &ws.zeros,
        a_n: &ws.zeros,
        u_next: &ws.qj,
        u_tilde: &ws.mid_g,
        w: MIDPOINT,
    };
    asm.add_element_forces(model, &ElementEval::Level(g0), Some(1.0), &mut ws.tmp);
    asm.add_joint_terms(
        model,
        &JointTerms {
            u: &ws.qj,
            t: t1,
            discrete_from: Some(&ws.q1),
            force: None,
            column: 0.0,
            curvature: Some((1.0, lg)),
        },
        &mut ws.tmp,
    );
    add_scaled(&ws.tmp, None, &mut ws.blocks, &[(B01, 1.0), (B11, -1.0)]);

    // h-terms: D_h + B*_h^T lj into 3Rb, and the jump state's constraint rows Re.
    clear(&mut ws.tmp);
    let h1 = GlobalLevel {
        u_n: &ws.qn,
        v_n: &ws.zeros,
        a_n: &ws.zeros,
        u_next: &ws.qj,
        u_tilde: &ws.mid_h,
        w: MIDPOINT,
    };
    asm.add_element_forces(model, &ElementEval::Level(h1), Some(1.0), &mut ws.tmp);
    let lj = MultiplierMix::of(&ws.lj);
    asm.add_joint_terms(
        model,
        &JointTerms {
            u: &ws.qj,
            t: t_n,
            discrete_from: Some(&ws.qn),
            force: Some((1.0, lj)),
            column: 1.0,
            curvature: Some((1.0, lj)),
        },
        &mut ws.tmp,
    );
    asm.set_constraint_rows(model, &ws.qj, t_n, 1.0, true, &mut ws.tmp);
    add_scaled(
        &ws.tmp,
        Some((&mut ws.res_b, 1.0)),
        &mut ws.blocks,
        &[(B11, 1.0)],
    );

    // alpha/6 P(qj) (times 3) with its tangent.
    if alpha != 0.0 && !model.elements.is_empty() {
        clear(&mut ws.tmp);
        asm.add_element_forces(model, &ElementEval::At(&ws.qj), Some(1.0), &mut ws.tmp);
        add_scaled(
            &ws.tmp,
            Some((&mut ws.res_b[..n], 0.5 * alpha)),
            &mut ws.blocks,
            &[(B11, 0.5 * alpha)],
        );
    }

    // End state's constraint rows Rf.
    clear(&mut ws.tmp);
    asm.set_constraint_rows(model, &ws.q1, t1, 1.0, true, &mut ws.tmp);
    add_scaled(
        &ws.tmp,
        Some((&mut ws.res_a, 1.0)),
        &mut ws.blocks,
        &[(B00, 1.0)],
    );
}

impl Integrator for Tdg {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn parameters(&self) -> Vec<(String, AttrValue)> {
        self.parameters.clone()
    }

    fn statistics(&self) -> &'static [StatSpec] {
        &STATS
    }

    fn start(&mut self, sys: &System<'_>, state: &mut State) -> Result<(), StepError> {
        let ws = &mut self.ws;
        consistent_initial(sys, &mut ws.start_solver, &mut ws.start_sys, state)?;
        ws.stepped = false;
        self.grid = FixedGrid::new(state.t, self.settings.dt);
        Ok(())
    }

    fn advance(
        &mut self,
        sys: &System<'_>,
        state: &mut State,
        t_stop: f64,
    ) -> Result<StepReport, StepError> {
        let t_target = self.grid.target(t_stop);
        let h = t_target - state.t;
        let c = self.step(sys, state, h)?;
        state.t = t_target;
        self.grid.k += 1;
        let mut report = StepReport::new(h);
        report.newton_iterations = c.iterations;
        report.residual = c.residual;
        let it = f64::from(c.iterations);
        report.stats[..3].copy_from_slice(&[it, it, it]);
        Ok(report)
    }

    /// `a` = (v_{n+1} - v_n)/h and `lambda` = lambda_g sit at t_{n+1/2}:
    /// `x(t_{n+1}) ~ 3/2 x_{n+1} - 1/2 x_n`.
    fn aligned(&self, state: &State, a: &mut [f64], lambda: &mut [f64]) {
        let ws = &self.ws;
        let s = if ws.stepped { -0.5 } else { 0.0 };
        for ((o, x), x0) in a.iter_mut().zip(&state.a).zip(&ws.a_prev) {
            *o = (1.0 - s) * x + s * x0;
        }
        for ((o, x), x0) in lambda.iter_mut().zip(&state.lambda).zip(&ws.lam_prev) {
            *o = (1.0 - s) * x + s * x0;
        }
    }
}
