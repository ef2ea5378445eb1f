//! Seed 002's energy-decaying schemes (Lens & Cardona 2007): the
//! time-discontinuous Galerkin scheme TDG (§5.1–5.2: eq. 47 with
//! dissipation control alpha, eq. 28 is alpha = 1) and the alpha–kappa
//! scheme with velocity constraints (§5.3, eqs. 66, 71), on one block
//! Newton driver; docs/theory/galerkin.md §2–3.
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
//! `(q1, lg, qj, lj)` with the 2 x 2 block matrix of [`crate::assembly::BlockGrid`]
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
//! The alpha–kappa scheme (eq. 66) keeps the velocities as unknowns and adds
//! the velocity constraints at both states with multipliers eta:
//!
//! ```text
//! 2Rc = 2 M (q1 - qn)/h - kappa (B1^T eta1 + Bj^T etaj) - kappa M (v1 + vj)         (66c)
//! 6Rd = 6 M (qj - qn)/h + kappa (B1^T eta1 - Bj^T etaj)
//!       + kappa M (v1 - alpha vj - (1 - alpha) vn)                                   (66d)
//! Rh  = B(q1) v1,   Rg = B(qj) vj                                                    (66h, g)
//! ```
//!
//! with the true B (Ra, Rb as in TDG with the discrete B*). Newton on
//! `(q1, lg | qj, lj | v1, eta1 | vj, etaj)`, a 4 x 4 grid of the base
//! pattern (the velocity rows and their derivative `(B v)_q` from
//! [`crate::assembly::Mechanics::set_rate_rows`], shared with BDF-GGL); kappa is 1, or eq. 71 `kappa = 2 dK / (2 dK + W)`,
//! `W = etaj^T Bj (v1 + vj - 2 vn) + eta1^T B1 (v1 - vj)`, evaluated at the
//! iterate, clamped to [1 - h/2, 1 + h/2]; where it is not clamped its
//! derivative makes the Newton matrix exact: the block matrix with kappa
//! held plus a rank-one term, solved by Sherman–Morrison with the block
//! matrix's factors ([`Tdg::kappa_derivative`]).
//! On models whose TDG-sized system is dense-sized, each Newton solve
//! eliminates the velocities and eta by a row combination and block
//! elimination ([`reduce`]); the iterates are the full system's to round-off.
//!
//! The proofs need a constant mass matrix and a conservative system: models
//! with 3-D bodies in Euler parameters (configuration-dependent inertia),
//! dampers, external loads or velocity-level joints are refused, and for
//! alpha–kappa rheonomic joints too (its energy identity, eq. 69, is for
//! scleronomic constraints).

pub mod blocks;
pub mod reduce;
mod settings;
mod step;

use crate::assembly::{
    DiscreteOutputs, ElementEval, JointTerms, MultiplierMix, RateRows, SaddleSystem,
};
use crate::element::{EvaluationPoint, LevelWeights};
use crate::integrate::Identity;
use crate::linalg::{dot, max_abs, SaddlePointSolver, SolveError};

use super::initial::consistent_initial;
use super::newton::{self, Failure, RoundOff};
use super::{statistics, FixedGrid, Integrator, StatSpec, State, StepError, StepReport};
use crate::assembly::Mechanics;
use crate::assembly::{BlockGrid, ALL, COLUMN, MASS, ROWS, STIFF};
use blocks::{add_scaled, add_slots, clear};
use reduce::Reduction;
pub use settings::TdgSettings;

statistics! {
    /// Statistics of an alpha–kappa step: Newton iterations, residual
    /// evaluations (iterations and line-search backtracks), factored Newton
    /// matrices, and kappa (eq. 71).
    pub(crate) AK_STATS = [NEWTON_ITERATIONS, NFCN, NJAC, KAPPA];
}

/// Statistics of a TDG step: those of alpha–kappa but kappa.
pub(crate) const STATS: &[StatSpec] = AK_STATS.split_at(KAPPA).0;

/// kappa of the alpha–kappa scheme (§5.3.3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kappa {
    /// A constant (the seed uses 1).
    Fixed(f64),
    /// Eq. 71 at the iterate, clamped to [1 - h/2, 1 + h/2].
    Auto,
}

/// Which scheme of Lens and Cardona §5.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scheme {
    /// The time-discontinuous Galerkin scheme (eq. 47).
    Tdg,
    /// The alpha–kappa scheme with velocity constraints (eq. 66).
    AlphaKappa(Kappa),
}

/// The regions of the TDG blocks (rows [Ra; Rf], [3Rb; Re]; columns
/// (q1, lg), (qj, lj)): the module doc's 2 x 2 matrix.
const TDG_REGIONS: [u8; 4] = [ALL, STIFF, STIFF | COLUMN, ALL];

/// The regions of the alpha–kappa blocks: TDG's in the first two block rows
/// and columns, the mass couplings `M/h`, `3M/h` with the velocities, and
/// the rows 2Rc, 6Rd (mass, curvature, `B^T` of eta) with the velocity rows
/// (`(B v)_q`, B) of eq. 66.
const AK_REGIONS: [u8; 16] = [
    ALL,
    STIFF,
    MASS,
    0,
    STIFF | COLUMN,
    ALL,
    0,
    MASS,
    STIFF | ROWS,
    STIFF,
    MASS | COLUMN | ROWS,
    MASS | COLUMN,
    STIFF,
    STIFF | ROWS,
    MASS | COLUMN,
    MASS | COLUMN | ROWS,
];

/// The midpoint weights: `eom_force` returns the discrete gradient.
const MIDPOINT: LevelWeights = LevelWeights {
    c1dt: 0.0,
    c2dt2: 0.0,
    c3: 0.5,
};

/// The solver of the block Newton system: the block matrix's LU, or for
/// alpha–kappa on small models the block elimination of its velocities
/// ([`reduce`]).
enum NewtonSolver {
    Full(SaddlePointSolver),
    Reduced(Box<Reduction>),
}

impl NewtonSolver {
    /// Factors the block matrix with `values`.
    fn factor(&mut self, values: &[f64]) -> Result<(), SolveError> {
        match self {
            NewtonSolver::Full(s) => s.factor(values),
            NewtonSolver::Reduced(r) => r.factor(values),
        }
    }

    /// Solves `rhs` in place with the last factorization.
    fn solve_again(&mut self, rhs: &mut [f64]) -> Result<(), SolveError> {
        match self {
            NewtonSolver::Full(s) => s.solve(rhs),
            NewtonSolver::Reduced(r) => r.solve(rhs),
        }
    }
}

/// The TDG and alpha–kappa integrator.
pub struct Tdg {
    /// Label, run metadata and statistics.
    identity: Identity,
    settings: TdgSettings,
    grid: FixedGrid,
    ws: Workspace,
    /// The Newton iterations of the current step.
    stats: newton::Stats,
}

/// Vectors, block systems and solvers reused by every step.
struct Workspace {
    n: usize,
    /// Base dimension n + m.
    nb: usize,
    /// Blocks per side: 2 (TDG) or 4 (alpha–kappa).
    k: usize,
    qn: Vec<f64>,
    vn: Vec<f64>,
    /// Unknowns `[q1; lg | qj; lj]` and for alpha–kappa `[v1; eta1 | vj; etaj]`.
    x: Vec<f64>,
    /// Velocities of the iterate (eliminated for TDG, copied for alpha–kappa).
    v1: Vec<f64>,
    vj: Vec<f64>,
    /// Midpoints (qj + q1)/2 and (qn + qj)/2.
    mid_g: Vec<f64>,
    mid_h: Vec<f64>,
    /// Elements' P(qn) and the constraints Phi(qn, t_n) of the step.
    pn: Vec<f64>,
    phi_n: Vec<f64>,
    zeros: Vec<f64>,
    /// Scratch n-vectors.
    w: Vec<f64>,
    mw: Vec<f64>,
    /// `M (v1 - vn)/h - M g` (force scale of the scaled test).
    inertia: Vec<f64>,
    /// `B(qj) (v1 + vj - 2 vn)` and `B(q1) (v1 - vj)` (eq. 71's W).
    bw: Vec<f64>,
    bw1: Vec<f64>,
    /// `B(q1)^T eta1` and `B(qj)^T etaj` of the last alpha–kappa fill.
    bte1: Vec<f64>,
    btej: Vec<f64>,
    /// Kappa's derivative when eq. 71 is differentiable at the iterate
    /// (`kappa_free`): the residual's derivative with respect to kappa, `u`,
    /// and kappa's gradient `g`, so that the exact Newton matrix is the
    /// block matrix (kappa held) plus `u g^T`; and `J0^-1 u` (`sm`).
    kappa_free: bool,
    dres_dkappa: Vec<f64>,
    dkappa: Vec<f64>,
    sm: Vec<f64>,
    /// Residual, k blocks of nb rows: [Ra; Rf], [3Rb; Re], [2Rc; Rh], [6Rd; Rg].
    res: Vec<f64>,
    /// One term of the assembly (the g-terms), the h-terms, the derivatives
    /// of the g-terms with respect to qj, and the constraint rows at q1, qj.
    tmp: SaddleSystem,
    tmp_h: SaddleSystem,
    swapped: SaddleSystem,
    rows_1: SaddleSystem,
    rows_j: SaddleSystem,
    /// The blocks' values, `blocks[I k + J]`.
    blocks: Vec<SaddleSystem>,
    pattern: BlockGrid,
    values: Vec<f64>,
    rhs: Vec<f64>,
    solver: NewtonSolver,
    /// The consistent start's solver and system (base pattern).
    start_solver: SaddlePointSolver,
    start_sys: SaddleSystem,
    round_off: RoundOff,
    /// a and lambda of the previous step (for [`Integrator::aligned`]).
    a_prev: Vec<f64>,
    lam_prev: Vec<f64>,
    stepped: bool,
    /// kappa of the last fill.
    kappa: f64,
}

/// Refuses what the energy proofs of Lens and Cardona do not cover, naming it.
pub fn refuse_unsupported(
    sys: &Mechanics<'_>,
    method: &str,
    rheonomic: bool,
) -> Result<(), StepError> {
    let setup = |reason: String| Err(StepError::Setup { reason });
    if let Some(name) = sys.velocity_joint() {
        return setup(format!(
            "joint '{name}' is a velocity-level (nonholonomic) constraint, which {method} \
             (Lens and Cardona, holonomic constraints) cannot integrate"
        ));
    }
    if sys.has_configuration_inertia() {
        return setup(format!(
            "{method} needs a constant mass matrix (Lens and Cardona eq. 2, energy proof eqs. 33–34): \
             the model has 3-D bodies in Euler parameters (configuration-dependent inertia); \
             use method \"tcg\" or \"gssss\""
        ));
    }
    if sys.has_dampers() {
        return setup(format!(
            "{method} integrates conservative systems (Lens and Cardona 2007, §2): the model has dampers; \
             use method \"tcg\" or \"gssss\""
        ));
    }
    if sys.has_loads() {
        return setup(format!(
            "{method} integrates conservative systems (Lens and Cardona 2007, §2): the model has external \
             loads other than gravity; use method \"tcg\" or \"gssss\""
        ));
    }
    if !rheonomic && sys.has_rheonomic_joints() {
        return setup(format!(
            "{method} integrates scleronomic systems (Lens and Cardona 2007, §2, energy identity eq. 69): \
             the model has prescribed motion"
        ));
    }
    Ok(())
}

impl Tdg {
    /// The integrator for the model in `sys`.
    pub fn new(
        sys: &Mechanics<'_>,
        identity: Identity,
        settings: TdgSettings,
        choice: crate::linalg::SolverChoice,
    ) -> Result<Self, StepError> {
        let k = match settings.scheme {
            Scheme::Tdg => {
                refuse_unsupported(sys, "method \"tdg\"", true)?;
                2
            }
            Scheme::AlphaKappa(_) => {
                refuse_unsupported(sys, "method \"alpha-kappa\"", false)?;
                4
            }
        };
        let n = sys.n_dofs();
        let m = sys.n_constraints();
        let nb = n + m;
        let regions: &[u8] = match k {
            2 => &TDG_REGIONS,
            _ => &AK_REGIONS,
        };
        let pattern = sys.block_grid(k, regions);
        let setup = |e: SolveError| StepError::Setup {
            reason: e.to_string(),
        };
        let reduction = match k {
            2 => None,
            _ => Reduction::new(&pattern.pattern, n, nb, settings.alpha, choice.force_sparse)
                .map_err(setup)?,
        };
        let solver = match reduction {
            Some(r) => NewtonSolver::Reduced(Box::new(r)),
            None => NewtonSolver::Full({
                let mut s =
                    SaddlePointSolver::preferring_band(&pattern.pattern, choice.force_sparse)
                        .map_err(setup)?;
                s.set_refine_tol(crate::linalg::newton_refine_tol(settings.newton.rtol));
                s
            }),
        };
        let z = |len: usize| vec![0.0; len];
        let mut start_sys = sys.new_system();
        let stiffness_scale = sys.stiffness_max(sys.initial_positions(), &mut start_sys);
        Ok(Tdg {
            identity,
            settings,
            grid: FixedGrid::new(0.0, settings.dt),
            stats: newton::Stats::with_capacity(settings.newton.max_iter),
            ws: Workspace {
                n,
                nb,
                k,
                qn: z(n),
                vn: z(n),
                x: z(k * nb),
                v1: z(n),
                vj: z(n),
                mid_g: z(n),
                mid_h: z(n),
                pn: z(n),
                phi_n: z(m),
                zeros: z(n),
                w: z(n),
                mw: z(n),
                inertia: z(n),
                bw: z(m),
                bw1: z(m),
                bte1: z(n),
                btej: z(n),
                kappa_free: false,
                dres_dkappa: z(k * nb),
                dkappa: z(k * nb),
                sm: z(k * nb),
                res: z(k * nb),
                tmp: sys.new_system(),
                tmp_h: sys.new_system(),
                swapped: sys.new_system(),
                rows_1: sys.new_system(),
                rows_j: sys.new_system(),
                blocks: (0..k * k).map(|_| sys.new_system()).collect(),
                values: z(pattern.pattern.nnz()),
                rhs: z(k * nb),
                pattern,
                solver,
                start_solver: super::saddle_solver(sys, choice)?,
                start_sys,
                round_off: RoundOff {
                    coord_scale: 1.0 + max_abs(sys.initial_positions()),
                    mass_scale: max_abs(sys.mass_matrix().data()),
                    stiffness_scale,
                },
                a_prev: z(n),
                lam_prev: z(m),
                stepped: false,
                kappa: 1.0,
            },
        })
    }

    /// The block matrix's pattern (dimension 2 (n + m) for TDG, 4 (n + m)
    /// for alpha–kappa).
    pub fn block_pattern(&self) -> &crate::assembly::Pattern {
        &self.ws.pattern.pattern
    }

    /// How the block Newton system is solved, e.g. `block elimination of the
    /// velocities (reduced system: dense LU)`.
    pub fn describe_solver(&self) -> String {
        match &self.ws.solver {
            NewtonSolver::Full(s) => s.describe(),
            NewtonSolver::Reduced(r) => format!(
                "block elimination of the velocities (reduced system: {})",
                r.describe()
            ),
        }
    }

    /// Fills the residual (blocks `[Ra; Rf]`, `[3Rb; Re]`, and for
    /// alpha–kappa `[2Rc; Rh]`, `[6Rd; Rg]`) into `res` and the block Newton
    /// matrix into `values`, at the unknowns `x` (`[q1; lg | qj; lj]`, then
    /// `[v1; eta1 | vj; etaj]`) of a step of size `h` from `(qn, vn)` at
    /// `t_n`. For the tangent tests; the stepper calls the same fill.
    #[allow(clippy::too_many_arguments)]
    pub fn eval(
        &mut self,
        sys: &Mechanics<'_>,
        qn: &[f64],
        vn: &[f64],
        t_n: f64,
        h: f64,
        x: &[f64],
        res: &mut [f64],
        values: &mut [f64],
    ) {
        let ws = &mut self.ws;
        ws.qn.copy_from_slice(qn);
        ws.vn.copy_from_slice(vn);
        ws.x.copy_from_slice(x);
        at_step_start(sys, ws, t_n);
        fill(sys, ws, &self.settings, t_n, h);
        res.copy_from_slice(&ws.res);
        ws.pattern.gather(&ws.blocks, values);
    }

    /// After [`Tdg::eval`] of alpha–kappa with kappa from eq. 71: where
    /// kappa is differentiable at `x` (not clamped), `(u, g)` with the exact
    /// Newton matrix equal to the block matrix (kappa held) plus `u g^T`:
    /// `u` the residual's derivative with respect to kappa, `g` kappa's
    /// gradient. For the tangent tests; the stepper solves with it by
    /// Sherman–Morrison.
    pub fn kappa_derivative(&self) -> Option<(&[f64], &[f64])> {
        self.ws
            .kappa_free
            .then_some((&self.ws.dres_dkappa[..], &self.ws.dkappa[..]))
    }

    /// One step of size `h` from `state`; `state` changes only on success.
    fn step(
        &mut self,
        sys: &Mechanics<'_>,
        state: &mut State,
        h: f64,
    ) -> Result<Converged, StepError> {
        let s = self.settings;
        let ws = &mut self.ws;
        let (n, nb, k) = (ws.n, ws.nb, ws.k);
        if let NewtonSolver::Full(solver) = &mut ws.solver {
            solver.at_step(state.step + 1);
        }
        ws.qn.copy_from_slice(&state.u);
        ws.vn.copy_from_slice(&state.v);
        // Predictor from the last step's acceleration a: q1 = qn + h vn + h^2/2 a,
        // and qj such that vj = vn (qj - qn = (h vn - d1)/3 = -h^2/6 a);
        // v1 = vn + h a, vj = vn, eta = 0.
        ws.x.fill(0.0);
        for i in 0..n {
            let (q, v, a) = (state.u[i], state.v[i], state.a[i]);
            ws.x[i] = q + h * v + 0.5 * h * h * a;
            ws.x[nb + i] = q - h * h / 6.0 * a;
            if k == 4 {
                ws.x[2 * nb + i] = v + h * a;
                ws.x[3 * nb + i] = v;
            }
        }
        ws.x[n..nb].copy_from_slice(&state.lambda);
        ws.x[nb + n..2 * nb].copy_from_slice(&state.lambda);
        at_step_start(sys, ws, state.t);

        let ro = ws.round_off;
        // Round-off of the forces: that of M (v - vn)/h for coordinates known
        // to their round-off (the largest mass coefficient of the block
        // matrix, 18 / ((1 + alpha) h^2) for TDG, 6/h^2 for alpha–kappa
        // through its velocities) and of the internal forces
        // (docs/theory/gssss.md §12).
        let floor_l = ro.force_floor(ro.coord_floor() * 18.0 / ((1.0 + s.alpha) * h * h));
        let t_next = state.t + h;
        let mut system = step::StepSystem {
            sys,
            ws,
            settings: &s,
            t_n: state.t,
            h,
            step: state.step + 1,
            atol_u: s.newton.atol.unwrap_or(s.newton.rtol * ro.coord_scale),
            floor_l,
            f_tol: 0.0,
            f_tol_first: None,
            force_scale: 0.0,
        };
        let stats = &mut self.stats;
        stats.reset();
        let outcome = newton::solve(&mut system, &s.policy(), stats, None);
        let ws = &mut self.ws;
        let out = match outcome {
            Ok(out) => out,
            Err(Failure::Error(e)) => return Err(e),
            Err(failure @ Failure::Stopped { iterations, .. }) => {
                let mut largest = Vec::new();
                let names = ["", " (jump state)", " (end velocity)", " (jump velocity)"];
                for (b, name) in names.iter().enumerate().take(k) {
                    largest.extend(
                        crate::integrate::largest_entries(sys, &ws.res[b * nb..(b + 1) * nb], 2)
                            .into_iter()
                            .map(|(what, v)| (format!("{what}{name}"), v)),
                    );
                }
                return Err(StepError::NewtonFailed {
                    step: state.step + 1,
                    time: t_next,
                    iterations,
                    reason: failure.reason(None).unwrap_or_default(),
                    history: stats.history.clone(),
                    largest,
                });
            }
        };
        current_velocities(ws, &s, h);
        ws.a_prev.copy_from_slice(&state.a);
        ws.lam_prev.copy_from_slice(&state.lambda);
        for i in 0..n {
            state.a[i] = (ws.v1[i] - ws.vn[i]) / h;
        }
        state.u.copy_from_slice(&ws.x[..n]);
        state.v.copy_from_slice(&ws.v1);
        state.lambda.copy_from_slice(&ws.x[n..nb]);
        state.t = t_next;
        state.step += 1;
        ws.stepped = true;
        Ok(Converged {
            iterations: out.iterations,
            residual: out.residual,
        })
    }
}

/// A converged step.
struct Converged {
    iterations: u32,
    residual: f64,
}

/// What a step's start state fixes: the elements' true force P(qn) (its
/// alpha/6 term, eq. 47b) and the constraints Phi(qn, t_n) (of the h-terms'
/// discrete Jacobian).
fn at_step_start(sys: &Mechanics<'_>, ws: &mut Workspace, t_n: f64) {
    sys.constraint_values(&ws.qn, t_n, &mut ws.phi_n);
    clear(&mut ws.tmp);
    sys.add_element_forces(&ElementEval::At(&ws.qn), None, &mut ws.tmp);
    let n = ws.pn.len();
    ws.pn.copy_from_slice(&ws.tmp.residual[..n]);
}

/// The velocities of the iterate: eliminated by eqs. 47c, 47d for TDG, the
/// unknowns for alpha–kappa.
fn current_velocities(ws: &mut Workspace, s: &TdgSettings, h: f64) {
    let (n, nb) = (ws.n, ws.nb);
    match s.scheme {
        Scheme::Tdg => {
            let alpha = s.alpha;
            let c = 1.0 / (h * (1.0 + alpha));
            let r = (1.0 - alpha) / (1.0 + alpha);
            for i in 0..n {
                let d1 = ws.x[i] - ws.qn[i];
                let dj = ws.x[nb + i] - ws.qn[i];
                ws.vj[i] = c * (2.0 * d1 + 6.0 * dj) - r * ws.vn[i];
                ws.v1[i] = 2.0 * d1 / h - ws.vj[i];
            }
        }
        Scheme::AlphaKappa(_) => {
            ws.v1.copy_from_slice(&ws.x[2 * nb..2 * nb + n]);
            ws.vj.copy_from_slice(&ws.x[3 * nb..3 * nb + n]);
        }
    }
}

/// Eq. 71's pieces at an iterate where kappa is differentiable: the
/// kinetic energy change dK, W and the denominator 2 dK + W.
#[derive(Debug, Clone, Copy)]
struct KappaFree {
    dk: f64,
    w: f64,
    denom: f64,
}

/// kappa at the iterate (eq. 71, clamped), or the fixed value; with the
/// pieces of eq. 71 where kappa is differentiable (not fixed, not clamped, not
/// set to 1 by the round-off rules below). `ws.bw`, `ws.bw1` keep
/// `B(qj) (v1 + vj - 2 vn)` and `B(q1) (v1 - vj)`.
fn kappa(
    sys: &Mechanics<'_>,
    ws: &mut Workspace,
    kappa: Kappa,
    t_n: f64,
    h: f64,
) -> (f64, Option<KappaFree>) {
    if let Kappa::Fixed(k) = kappa {
        return (k, None);
    }
    let (n, nb) = (ws.n, ws.nb);
    let asm = sys;
    let kinetic = |v: &[f64], mw: &mut Vec<f64>| {
        mw.fill(0.0);
        asm.mass_mul_add(v, mw);
        0.5 * dot(v, mw)
    };
    let (k1, k0) = (kinetic(&ws.v1, &mut ws.mw), kinetic(&ws.vn, &mut ws.mw));
    let dk = k1 - k0;
    let q1 = &ws.x[..n];
    let qj = &ws.x[nb..nb + n];
    let eta1 = &ws.x[2 * nb + n..3 * nb];
    let etaj = &ws.x[3 * nb + n..];
    for i in 0..n {
        ws.w[i] = ws.v1[i] + ws.vj[i] - 2.0 * ws.vn[i];
    }
    asm.constraint_rates_from(&ws.rows_j, [qj, &ws.w], t_n, &mut ws.bw);
    let mut w = dot(etaj, &ws.bw);
    for i in 0..n {
        ws.w[i] = ws.v1[i] - ws.vj[i];
    }
    asm.constraint_rates_from(&ws.rows_1, [q1, &ws.w], t_n + h, &mut ws.bw1);
    w += dot(eta1, &ws.bw1);
    // W at the round-off of the kinetic energies (velocity constraints met
    // to round-off): kappa = 1 keeps the energy balance (eq. 70 with the
    // (kappa/2) W term) at round-off, while eq. 71 would turn the noise of W
    // into kappa's, amplified by 1/dK where the energy barely changes, and
    // keep Newton from converging.
    if w.abs() <= 16.0 * f64::EPSILON * (k1.abs() + k0.abs()) {
        return (1.0, None);
    }
    let denom = 2.0 * dk + w;
    if !(denom.abs() > 16.0 * f64::EPSILON * (2.0 * dk.abs() + w.abs()) && denom != 0.0) {
        return (1.0, None);
    }
    let k = 2.0 * dk / denom;
    let (lo, hi) = (1.0 - 0.5 * h, 1.0 + 0.5 * h);
    if !k.is_finite() {
        (1.0, None)
    } else if k < lo || k > hi {
        (k.clamp(lo, hi), None)
    } else {
        (k, Some(KappaFree { dk, w, denom }))
    }
}

/// The rank-one part of alpha–kappa's exact Newton matrix where kappa (eq. 71)
/// is differentiable: `ws.dres_dkappa`, the derivative of 2Rc and 6Rd
/// (eqs. 66c, d) with respect to kappa, and `ws.dkappa`, kappa's gradient
/// `(2 W dK' - 2 dK W') / (2 dK + W)^2` with `dK' = M v1` (v1) and the
/// derivatives of `W = etaj^T Bj (v1 + vj - 2 vn) + eta1^T B1 (v1 - vj)`:
/// `Bj^T etaj +- B1^T eta1` (v1, vj), `Bj wj`, `B1 w1` (etaj, eta1) and
/// `C(q; eta)^T w` (q1, qj: the curvature, which the joint pass of the fill
/// left there in `ws.dkappa`'s coordinate blocks).
fn kappa_derivative(sys: &Mechanics<'_>, ws: &mut Workspace, free: KappaFree, alpha: f64) {
    let (n, nb) = (ws.n, ws.nb);
    let asm = sys;
    let d2 = free.denom * free.denom;
    let (a, b) = (2.0 * free.w / d2, -2.0 * free.dk / d2);
    ws.dres_dkappa.fill(0.0);
    for i in 0..n {
        ws.w[i] = ws.v1[i] + ws.vj[i];
    }
    asm.mass_mul_add(&ws.w, &mut ws.dres_dkappa[2 * nb..2 * nb + n]);
    for i in 0..n {
        ws.w[i] = -ws.v1[i] + alpha * ws.vj[i] + (1.0 - alpha) * ws.vn[i];
    }
    asm.mass_mul_add(&ws.w, &mut ws.dres_dkappa[3 * nb..3 * nb + n]);
    for i in 0..n {
        let (e1, ej) = (ws.bte1[i], ws.btej[i]);
        ws.dres_dkappa[2 * nb + i] = -(ws.dres_dkappa[2 * nb + i] + e1 + ej);
        ws.dres_dkappa[3 * nb + i] = e1 - ej - ws.dres_dkappa[3 * nb + i];
    }
    // The coordinate blocks hold C^T w: scale them; lg, lj have no part.
    for i in 0..n {
        ws.dkappa[i] *= b;
        ws.dkappa[nb + i] *= b;
    }
    ws.dkappa[n..nb].fill(0.0);
    ws.dkappa[nb + n..2 * nb].fill(0.0);
    ws.mw.fill(0.0);
    asm.mass_mul_add(&ws.v1, &mut ws.mw);
    for i in 0..n {
        let (e1, ej) = (ws.bte1[i], ws.btej[i]);
        ws.dkappa[2 * nb + i] = a * ws.mw[i] + b * (ej + e1);
        ws.dkappa[3 * nb + i] = b * (ej - e1);
    }
    let m = nb - n;
    for r in 0..m {
        ws.dkappa[2 * nb + n + r] = b * ws.bw1[r];
        ws.dkappa[3 * nb + n + r] = b * ws.bw[r];
    }
}

/// The systems a half-step's terms go to ([`add_half_step_terms`]), each
/// cleared first.
struct HalfStepOut<'a> {
    /// The terms and their derivatives with respect to the end state.
    terms: &'a mut SaddleSystem,
    /// The derivatives with respect to the start state (the swapped call's).
    swapped: Option<&'a mut SaddleSystem>,
    /// The constraint rows `Phi`, `B` at the end state.
    rows: Option<&'a mut SaddleSystem>,
    /// `Phi` at the start state, when known.
    phi_from: Option<&'a [f64]>,
    /// `Phi`, `B` at the start state at another time (for scleronomic joints).
    from_rows: Option<&'a SaddleSystem>,
}

/// Into `out.terms`: the discrete gradients of the elements and of the
/// joint rows between the states `from` and `to` (midpoint `mid`) with their
/// derivatives with respect to `to` (Lens and Cardona eqs. 18, 19), the constraint
/// force `B*^T lambda` when `force` is given (with its column block), and the
/// curvature with the multipliers `curvature`: one half-step's terms of the
/// TDG and alpha-kappa equations (eqs. 28, 47, 66). From the same joint
/// evaluations, the derivatives with respect to `from` into `out.swapped`
/// (every discrete gradient is symmetric in its states) and the constraint
/// rows at `to` into `out.rows`.
fn add_half_step_terms(
    sys: &Mechanics<'_>,
    zeros: &[f64],
    out: HalfStepOut<'_>,
    [from, to, mid]: [&[f64]; 3],
    t: f64,
    force: Option<MultiplierMix<'_>>,
    curvature: MultiplierMix<'_>,
) {
    let HalfStepOut {
        terms: tmp,
        mut swapped,
        mut rows,
        phi_from,
        from_rows,
    } = out;
    let level = |u_n, u_next| EvaluationPoint {
        u_n,
        v_n: zeros,
        a_n: zeros,
        u_next,
        u_tilde: mid,
        w: MIDPOINT,
    };
    clear(tmp);
    sys.add_element_forces(
        &ElementEval::DiscreteGradient(level(from, to)),
        Some(1.0),
        tmp,
    );
    if let Some(sw) = swapped.as_deref_mut() {
        clear(sw);
        sys.add_element_forces(
            &ElementEval::DiscreteGradient(level(to, from)),
            Some(1.0),
            sw,
        );
    }
    if let Some(r) = rows.as_deref_mut() {
        clear(r);
    }
    sys.add_discrete_joint_terms(
        &JointTerms {
            u: to,
            t,
            discrete_from: Some(from),
            force: force.map(|f| (1.0, f)),
            column: if force.is_some() { 1.0 } else { 0.0 },
            curvature: Some((1.0, curvature)),
        },
        tmp,
        DiscreteOutputs {
            from: swapped.map(|sw| &mut sw.values[..]),
            rows,
            phi_from,
            from_rows,
            known_b: None,
        },
    );
}

/// The residual and the blocks' values at the current unknowns (module doc).
fn fill(sys: &Mechanics<'_>, ws: &mut Workspace, s: &TdgSettings, t_n: f64, h: f64) {
    let asm = sys;
    let (n, nb, k) = (ws.n, ws.nb, ws.k);
    let alpha = s.alpha;
    let t1 = t_n + h;
    let blk = |i: usize, j: usize| i * k + j;
    current_velocities(ws, s, h);
    for i in 0..n {
        ws.mid_g[i] = 0.5 * (ws.x[nb + i] + ws.x[i]);
        ws.mid_h[i] = 0.5 * (ws.qn[i] + ws.x[nb + i]);
    }
    ws.res.fill(0.0);
    for b in ws.blocks.iter_mut() {
        b.values.fill(0.0);
    }
    // Inertia and gravity: Ra += M (v1 - vn)/h - M g, 3Rb += 3 M (vj - vn)/h
    // (gravity's discrete gradients cancel in 3Rb and its P(qj) - P(qn) is 0).
    for i in 0..n {
        ws.w[i] = (ws.v1[i] - ws.vn[i]) / h;
    }
    asm.mass_mul_add(&ws.w, &mut ws.res[..n]);
    asm.subtract_gravity(&mut ws.res[..n], 1.0);
    for i in 0..n {
        ws.w[i] = 3.0 * (ws.vj[i] - ws.vn[i]) / h;
    }
    asm.mass_mul_add(&ws.w, &mut ws.res[nb..nb + n]);
    for (r, p) in ws.res[nb..nb + n].iter_mut().zip(&ws.pn) {
        *r -= 0.5 * alpha * p;
    }
    if s.scheme == Scheme::Tdg {
        let c = 1.0 / ((1.0 + alpha) * h * h);
        for ((i, j), coef) in [
            ((0, 0), 2.0 * alpha * c),
            ((0, 1), -6.0 * c),
            ((1, 0), 6.0 * c),
            ((1, 1), 18.0 * c),
        ] {
            asm.add_mass(&mut ws.blocks[blk(i, j)].values, coef);
        }
    }
    ws.kappa = 1.0;
    let (x, tmp, res, blocks) = (&ws.x, &mut ws.tmp, &mut ws.res, &mut ws.blocks);
    let (q1, lg) = x[..nb].split_at(n);
    let (qj, lj) = x[nb..2 * nb].split_at(n);

    // h-terms (in tmp_h): D_h + B*_h^T lj and their derivative with respect
    // to qj, and the constraint rows Re = Phi(qj) with B(qj) (in rows_j; the
    // velocity column of Rg for alpha–kappa).
    let zeros = &ws.zeros;
    let (tmp_h, swapped) = (&mut ws.tmp_h, &mut ws.swapped);
    let (rows_1, rows_j) = (&mut ws.rows_1, &mut ws.rows_j);
    add_half_step_terms(
        sys,
        zeros,
        HalfStepOut {
            terms: &mut *tmp_h,
            swapped: None,
            rows: Some(&mut *rows_j),
            phi_from: Some(&ws.phi_n),
            from_rows: None,
        },
        [&ws.qn, qj, &ws.mid_h],
        t_n,
        Some(MultiplierMix::of(lj)),
        MultiplierMix::of(lj),
    );
    // g-terms: D_g + B*_g^T lg and their derivatives with respect to q1 (in
    // tmp) and qj (in swapped, the symmetric swapped call's), and the
    // constraint rows Rf = Phi(q1) with B(q1) (in rows_1; the velocity
    // column of Rh for alpha–kappa). Phi(qj), B(qj) of scleronomic joints
    // come from rows_j.
    let lgm = MultiplierMix::of(lg);
    add_half_step_terms(
        sys,
        zeros,
        HalfStepOut {
            terms: &mut *tmp,
            swapped: Some(&mut *swapped),
            rows: Some(&mut *rows_1),
            phi_from: None,
            from_rows: Some(&*rows_j),
        },
        [qj, q1, &ws.mid_g],
        t1,
        Some(lgm),
        lgm,
    );
    // Into Ra (+) and 3Rb (-) the g-terms, into 3Rb the h-terms.
    add_scaled(
        tmp,
        Some((&mut res[..n], 1.0)),
        blocks,
        &[(blk(0, 0), 1.0), (blk(1, 0), -1.0)],
    );
    add_scaled(tmp, Some((&mut res[nb..nb + n], -1.0)), &mut [], &[]);
    add_scaled(
        swapped,
        None,
        blocks,
        &[(blk(0, 1), 1.0), (blk(1, 1), -1.0)],
    );
    let row_blocks = |row: usize| [(blk(row, row), 1.0), (blk(row + 2, row + 2), 1.0)];
    add_scaled(
        rows_1,
        Some((&mut res[..nb], 1.0)),
        blocks,
        &row_blocks(0)[..k / 2],
    );
    add_scaled(
        tmp_h,
        Some((&mut res[nb..nb + n], 1.0)),
        blocks,
        &[(blk(1, 1), 1.0)],
    );
    add_scaled(
        rows_j,
        Some((&mut res[nb..2 * nb], 1.0)),
        blocks,
        &row_blocks(1)[..k / 2],
    );

    // alpha/6 P(qj) (times 3) with its tangent.
    if alpha != 0.0 && asm.has_elements() {
        clear(tmp);
        asm.add_element_forces(&ElementEval::At(qj), Some(1.0), tmp);
        add_scaled(
            tmp,
            Some((&mut res[nb..nb + n], 0.5 * alpha)),
            blocks,
            &[(blk(1, 1), 0.5 * alpha)],
        );
    }

    if let Scheme::AlphaKappa(kappa_setting) = s.scheme {
        fill_alpha_kappa(sys, ws, kappa_setting, alpha, t_n, h);
    }
}

/// The alpha–kappa part of [`fill`]: kappa, the velocity rows 2Rc, 6Rd and
/// the velocity constraints Rh, Rg with their blocks (eqs. 66c, d, g, h, 71).
fn fill_alpha_kappa(
    sys: &Mechanics<'_>,
    ws: &mut Workspace,
    kappa_setting: Kappa,
    alpha: f64,
    t_n: f64,
    h: f64,
) {
    let asm = sys;
    let (n, nb, k) = (ws.n, ws.nb, ws.k);
    let t1 = t_n + h;
    let blk = |i: usize, j: usize| i * k + j;
    // alpha–kappa: kappa (eq. 71, with B(q1), B(qj) from the constraint
    // rows), the mass blocks (regions that the terms above do not touch),
    // 2Rc, 6Rd (eqs. 66c, d) and the velocity constraints (66g, h).
    let (kap, free) = kappa(sys, ws, kappa_setting, t_n, h);
    ws.kappa = kap;
    ws.kappa_free = free.is_some();
    if free.is_some() {
        ws.dkappa[..2 * nb].fill(0.0);
    }
    for ((i, j), coef) in [
        ((0, 2), 1.0 / h),
        ((1, 3), 3.0 / h),
        ((2, 0), 2.0 / h),
        ((3, 1), 6.0 / h),
        ((2, 2), -kap),
        ((2, 3), -kap),
        ((3, 2), kap),
        ((3, 3), -alpha * kap),
    ] {
        asm.add_mass(&mut ws.blocks[blk(i, j)].values, coef);
    }
    let (x, tmp, res, blocks) = (&ws.x, &mut ws.tmp, &mut ws.res, &mut ws.blocks);
    let (rows_1, rows_j) = (&ws.rows_1, &ws.rows_j);
    let q1 = &x[..n];
    let qj = &x[nb..nb + n];
    let (v1, eta1) = x[2 * nb..3 * nb].split_at(n);
    let (vj, etaj) = x[3 * nb..].split_at(n);
    for i in 0..n {
        ws.w[i] = 2.0 * (q1[i] - ws.qn[i]) / h - kap * (v1[i] + vj[i]);
    }
    asm.mass_mul_add(&ws.w, &mut res[2 * nb..2 * nb + n]);
    for i in 0..n {
        ws.w[i] =
            6.0 * (qj[i] - ws.qn[i]) / h + kap * (v1[i] - alpha * vj[i] - (1.0 - alpha) * ws.vn[i]);
    }
    asm.mass_mul_add(&ws.w, &mut res[3 * nb..3 * nb + n]);
    // The slots of the coordinate columns (S, B) and of the multiplier columns (C).
    let c0 = asm.pattern().col_ptr[n];
    let nnz = asm.pattern().nnz();
    let rows_at = [rows_1, rows_j];
    for (q, eta, t, sign_d, col) in [(q1, eta1, t1, 1.0, 2), (qj, etaj, t_n, -1.0, 3)] {
        let em = MultiplierMix::of(eta);
        // B^T eta into 2Rc (-kappa) and 6Rd (+-kappa), its column B^T into
        // the eta column and its curvature C(q; eta) into the q column: one
        // pass, split by region; B(q) from the constraint rows.
        clear(tmp);
        asm.add_discrete_joint_terms(
            &JointTerms {
                u: q,
                t,
                discrete_from: None,
                force: Some((1.0, em)),
                column: 1.0,
                curvature: Some((1.0, em)),
            },
            tmp,
            DiscreteOutputs {
                known_b: Some(rows_at[col - 2]),
                ..DiscreteOutputs::default()
            },
        );
        add_scaled(
            tmp,
            Some((&mut res[2 * nb..2 * nb + n], -kap)),
            &mut [],
            &[],
        );
        add_scaled(
            tmp,
            Some((&mut res[3 * nb..3 * nb + n], sign_d * kap)),
            &mut [],
            &[],
        );
        add_slots(
            tmp,
            c0..nnz,
            blocks,
            &[(blk(2, col), -kap), (blk(3, col), sign_d * kap)],
        );
        add_slots(
            tmp,
            0..c0,
            blocks,
            &[(blk(2, col - 2), -kap), (blk(3, col - 2), sign_d * kap)],
        );
        if free.is_some() {
            // B^T eta, and C(q; eta)^T w into kappa's gradient at q
            // (w1 = v1 - vj at q1, wj = v1 + vj - 2 vn at qj).
            let (bte, g) = if col == 2 {
                (&mut ws.bte1, &mut ws.dkappa[..n])
            } else {
                (&mut ws.btej, &mut ws.dkappa[nb..nb + n])
            };
            bte.copy_from_slice(&tmp.residual[..n]);
            let pat = asm.pattern();
            for (c, gc) in g.iter_mut().enumerate() {
                for k in pat.col_ptr[c]..pat.col_ptr[c + 1] {
                    let r = pat.row_idx[k];
                    if r < n {
                        let w = if col == 2 {
                            v1[r] - vj[r]
                        } else {
                            v1[r] + vj[r] - 2.0 * ws.vn[r]
                        };
                        *gc += tmp.values[k] * w;
                    }
                }
            }
        }
    }
    // Rh = B(q1) v1 (row block 2), Rg = B(qj) vj (row block 3): (B v)_q into
    // the coordinate column (B, the velocity column, came with Rf, Re).
    for (q, v, t, row) in [(q1, v1, t1, 2), (qj, vj, t_n, 3)] {
        clear(tmp);
        asm.set_rate_rows(q, v, t, RateRows::Known(rows_at[row - 2]), tmp);
        res[row * nb + n..(row + 1) * nb].copy_from_slice(&tmp.residual[n..]);
        add_scaled(tmp, None, blocks, &[(blk(row, row - 2), 1.0)]);
    }
    if let Some(free) = free {
        kappa_derivative(sys, ws, free, alpha);
    }
}

impl Integrator for Tdg {
    fn identity(&self) -> &Identity {
        &self.identity
    }

    fn start(&mut self, sys: &Mechanics<'_>, state: &mut State) -> Result<(), StepError> {
        let ws = &mut self.ws;
        consistent_initial(sys, &mut ws.start_solver, &mut ws.start_sys, state)?;
        ws.stepped = false;
        self.grid = FixedGrid::new(state.t, self.settings.dt);
        Ok(())
    }

    fn advance(
        &mut self,
        sys: &Mechanics<'_>,
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
        // Residual evaluations: one per iteration and one per backtrack of
        // the line search; matrix evaluations: the factored ones.
        report.stats[NEWTON_ITERATIONS] = f64::from(c.iterations);
        report.stats[NFCN] = f64::from(self.stats.iterations + self.stats.backtracks);
        report.stats[NJAC] = f64::from(self.stats.factorizations);
        report.stats[KAPPA] = self.ws.kappa;
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
