//! Static equilibrium: load-stepped Newton on
//!
//! ```text
//! r = P(u) - s (F(u, t) + M g) + B(u)^T lambda = 0,    Phi(u, t) = 0,
//! ```
//!
//! with the load factor s = k / steps, k = 1..steps, each step starting from
//! the previous equilibrium. A step whose Newton iteration fails is halved
//! and retried from the last equilibrium (at most [`MAX_HALVINGS`] times in a
//! row), and the increment doubles back once the load factor is aligned to
//! it again: the usual load-increment cutting of nonlinear statics. The Newton matrix is the saddle-point matrix
//! `[K - s K_load + H, B^T; B, 0]` (K the element tangent, K_load = dF/du,
//! H = sum_r lambda_r d^2 Phi_r / du^2) filled by the assembler's neutral
//! operators into the pattern the integrators use, and solved by
//! [`SaddlePointSolver`].
//!
//! The iteration is the one Newton driver's ([`newton::solve`]) with the
//! test before each solve. Convergence: `|Phi|_inf <= tol * u_scale` and either
//! `|r|_inf <= tol * f_scale` or a Newton correction `|du|_inf <= tol * u_scale`
//! (the residual of stiff elements stagnates at round-off, e.g. EA eps with
//! eps = (r'.r' - 1)/2), f_scale the largest of |s (F + M g)|_inf, |P|_inf and
//! 1, u_scale the largest of |u|_inf and 1.

use crate::assembly::{
    diagnose_singular, Assembler, ElementEval, JointTerms, Mechanics, MultiplierMix, SaddleSystem,
};
use crate::integrate::newton::{
    self, Correction, Failure, NonlinearSystem, Policy, Stats, Verdict,
};
use crate::linalg::{max_abs, SaddlePointSolver, SolveError};
use crate::model::Model;

/// A load step whose Newton iteration fails is halved and retried from the
/// last equilibrium, down to 1/2^MAX_HALVINGS of a nominal step.
pub const MAX_HALVINGS: u32 = 10;

/// Settings of a static solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StaticOptions {
    /// Number of load steps (>= 1).
    pub steps: u32,
    /// Relative tolerance of the residual and constraint tests.
    pub tol: f64,
    /// Newton iterations allowed per load step.
    pub max_iter: u32,
    /// Time at which the loads' time functions and rheonomic joints are evaluated.
    pub time: f64,
}

impl Default for StaticOptions {
    fn default() -> Self {
        StaticOptions {
            steps: 10,
            tol: 1e-10,
            max_iter: 30,
            time: 0.0,
        }
    }
}

/// A converged static equilibrium.
#[derive(Debug, Clone)]
pub struct StaticSolution {
    /// Positions.
    pub u: Vec<f64>,
    /// Multipliers (constraint forces), numbered as in the dynamic runs.
    pub lambda: Vec<f64>,
    /// Newton iterations per load step (the accepted ones).
    pub iterations: Vec<u32>,
    /// How many times a load step that did not converge was halved and
    /// retried from the last equilibrium (0 when every nominal step converged).
    pub halvings: u32,
    /// Final relative residual (force part).
    pub residual: f64,
}

/// Why a static solve failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StaticError {
    /// Newton did not converge in a load step.
    #[error(
        "static Newton did not converge in load step {step} (load factor {load_factor}, \
         after {halvings} halvings of the load step); relative residuals {}",
        crate::fmt::list(.residuals)
    )]
    NoConvergence {
        /// 1-based load step.
        step: u32,
        /// Load factor of the step.
        load_factor: f64,
        /// Halvings of the load step made before giving up (`MAX_HALVINGS`
        /// in a row at the most).
        halvings: u32,
        /// Relative force residual per iteration.
        residuals: Vec<f64>,
    },
    /// The Newton matrix is singular (unsupported DOFs or redundant constraints).
    #[error("singular static Newton matrix in load step {step}: {source}{diagnosis}")]
    Singular {
        /// 1-based load step.
        step: u32,
        /// Solver error.
        source: SolveError,
        /// What makes it singular, in model terms (`: ...`, or empty).
        diagnosis: String,
    },
}

/// Residual `[r; Phi]` and, with `matrix`, the Newton matrix
/// `[K - s K_load + H, B^T; B, 0]` from the assembler's neutral operators.
/// Returns (|r|_inf, f_scale, |Phi|_inf).
#[allow(clippy::too_many_arguments)]
fn fill(
    mech: &Mechanics<'_>,
    u: &[f64],
    lambda: &[f64],
    s: f64,
    t: f64,
    ext: &mut [f64],
    matrix: bool,
    sys: &mut SaddleSystem,
) -> (f64, f64, f64) {
    let n = mech.n_dofs();
    sys.residual.fill(0.0);
    if matrix {
        sys.values.fill(0.0);
    }
    mech.add_element_forces(&ElementEval::At(u), matrix.then_some(1.0), sys);
    let p_max = max_abs(&sys.residual[..n]);
    // External loads and gravity, scaled by s.
    ext.fill(0.0);
    mech.add_loads(u, t, ext, s);
    for (e, g) in ext.iter_mut().zip(mech.gravity_force()) {
        *e += s * g;
    }
    let f_max = 1.0_f64.max(p_max).max(max_abs(ext));
    mech.subtract_gravity(&mut sys.residual[..n], s);
    mech.add_load_terms(u, &|f| s * f.value(t), matrix.then_some(1.0), sys);
    // Constraints: B^T lambda, its curvature, and the rows Phi, B.
    let lam = MultiplierMix::of(lambda);
    mech.add_joint_terms(
        &JointTerms {
            u,
            t,
            discrete_from: None,
            force: Some((1.0, lam)),
            column: if matrix { 1.0 } else { 0.0 },
            curvature: matrix.then_some((1.0, lam)),
        },
        sys,
    );
    mech.set_constraint_rows(u, t, 1.0, matrix, sys);
    (
        max_abs(&sys.residual[..n]),
        f_max,
        max_abs(&sys.residual[n..]),
    )
}

/// Solves for the static equilibrium of `model` under its loads and gravity,
/// starting from its initial positions.
///
/// ```
/// use flexmb::model::{ModelBuilder, PointRef, SliderKind, SpringDamper};
/// use flexmb::statics::{solve_static, StaticOptions};
///
/// // A 2 kg mass on a spring (k = 400 N/m, free length 1 m) on a vertical guide.
/// let mut b = ModelBuilder::new(2)?;
/// b.gravity(&[0.0, -9.81])?;
/// b.node("mass", &[0.0, -1.0], None, 2.0)?;
/// let spring = SpringDamper { stiffness: 400.0, ..SpringDamper::default() };
/// b.spring_damper("spring", &PointRef::ground([0.0, 0.0]), &PointRef::entity("mass"), spring)?;
/// b.slider("guide", &PointRef::entity("mass"), &PointRef::ground([0.0, 0.0]), [1.0, 0.0], SliderKind::PointOnLine)?;
/// let model = b.build()?;
/// let eq = solve_static(&model, &StaticOptions::default())?;
/// // The spring stretches by m g / k.
/// assert!((eq.u[1] - (-1.0 - 2.0 * 9.81 / 400.0)).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn solve_static(model: &Model, opts: &StaticOptions) -> Result<StaticSolution, StaticError> {
    solve_static_from(model, opts, None)
}

/// [`solve_static`] with the first load step's Newton iteration started
/// from the multipliers `lambda0` instead of zero: a mechanism held only by
/// its joints (a pendulum) has no stiffness but the constraints' geometric
/// stiffness `lambda . d^2 Phi/du^2`, so its Newton matrix is singular at
/// lambda = 0 (`flexmb modes --at static` starts from the consistent initial
/// multipliers).
pub fn solve_static_from(
    model: &Model,
    opts: &StaticOptions,
    lambda0: Option<&[f64]>,
) -> Result<StaticSolution, StaticError> {
    let asm = Assembler::new(model);
    let mech = Mechanics::new(model, &asm);
    let (n, m) = (asm.n_dofs(), asm.n_constraints());
    let solver =
        SaddlePointSolver::new(asm.pattern(), false).map_err(|e| StaticError::Singular {
            step: 0,
            source: e,
            diagnosis: String::new(),
        })?;
    let steps = opts.steps.max(1);
    let mut equilibrium = Equilibrium {
        sys: asm.new_system(),
        mech,
        solver,
        opts,
        u: model.u0.clone(),
        lambda: lambda0.map_or_else(|| vec![0.0; m], <[f64]>::to_vec),
        ext: vec![0.0; n],
        res: vec![0.0; n + m],
        step: 0,
        s: 0.0,
        fill: (0.0, 0.0, 0.0),
        du_max: f64::INFINITY,
        history: Vec::new(),
    };
    let policy = Policy::newton(opts.max_iter);
    let mut stats = Stats::with_capacity(opts.max_iter + 1);
    let mut iterations = Vec::with_capacity(steps as usize);
    let mut last = 0.0;
    // Load factors in units of 1/(steps 2^MAX_HALVINGS): a nominal step is
    // `full` units, so an uncut run's factors are exactly k / steps.
    let full = 1u64 << MAX_HALVINGS;
    let unit = steps as u64 * full;
    let (mut at, mut increment, mut halvings) = (0u64, full, 0u32);
    let (mut u_done, mut lambda_done) = (equilibrium.u.clone(), equilibrium.lambda.clone());
    let mut first_failure: Option<StaticError> = None;
    while at < unit {
        let next = (at + increment).min(unit);
        let step = iterations.len() as u32 + 1;
        equilibrium.step = step;
        equilibrium.s = next as f64 / unit as f64;
        equilibrium.du_max = f64::INFINITY;
        equilibrium.history.clear();
        match newton::solve(&mut equilibrium, &policy, &mut stats, None) {
            Ok(out) => {
                iterations.push(out.iterations);
                last = equilibrium.history.last().copied().unwrap_or(f64::NAN);
                at = next;
                first_failure = None;
                u_done.copy_from_slice(&equilibrium.u);
                lambda_done.copy_from_slice(&equilibrium.lambda);
                // Back towards the nominal increment once aligned to it.
                if increment < full && at % (2 * increment) == 0 {
                    increment *= 2;
                }
            }
            Err(failure) => {
                // A singular matrix at a later iterate of the step (not at
                // the step's start: `history` holds one residual per
                // assembly) is a diverging iteration, cut as a failed test.
                let diverged = match failure {
                    Failure::Stopped { .. } => true,
                    Failure::Error(_) => equilibrium.history.len() > 1,
                };
                let error = match failure {
                    Failure::Error(e) => e,
                    Failure::Stopped { .. } => StaticError::NoConvergence {
                        step,
                        load_factor: equilibrium.s,
                        halvings,
                        residuals: std::mem::take(&mut equilibrium.history),
                    },
                };
                // The failure at the uncut step is the one reported if the
                // cuts do not help (a singular matrix keeps its diagnosis).
                let first = first_failure.get_or_insert(error);
                if diverged && increment > 1 {
                    equilibrium.u.copy_from_slice(&u_done);
                    equilibrium.lambda.copy_from_slice(&lambda_done);
                    increment /= 2;
                    halvings += 1;
                    continue;
                }
                let mut error = first.clone();
                if let StaticError::NoConvergence { halvings: h, .. } = &mut error {
                    *h = halvings;
                }
                return Err(error);
            }
        }
    }
    Ok(StaticSolution {
        u: equilibrium.u,
        lambda: equilibrium.lambda,
        iterations,
        halvings,
        residual: last,
    })
}

/// One load step's equations for the Newton driver ([`newton::solve`]),
/// judged before each solve (the module doc's test).
struct Equilibrium<'a> {
    mech: Mechanics<'a>,
    solver: SaddlePointSolver,
    sys: SaddleSystem,
    opts: &'a StaticOptions,
    u: Vec<f64>,
    lambda: Vec<f64>,
    ext: Vec<f64>,
    /// The last correction (du, dlambda).
    res: Vec<f64>,
    /// 1-based load step and its load factor.
    step: u32,
    s: f64,
    /// (|r|_inf, f_scale, |Phi|_inf) at the last assembly.
    fill: (f64, f64, f64),
    /// `|du|_inf` of the last correction (infinite before the first).
    du_max: f64,
    /// The relative force residual `|r|_inf / f_scale` per assembly.
    history: Vec<f64>,
}

impl NonlinearSystem for Equilibrium<'_> {
    type Error = StaticError;
    const TESTS_FIRST: bool = true;

    /// The residual and the Newton matrix (always refreshed).
    fn assemble(&mut self, _matrix: bool) -> Result<f64, StaticError> {
        self.fill = fill(
            &self.mech,
            &self.u,
            &self.lambda,
            self.s,
            self.opts.time,
            &mut self.ext,
            true,
            &mut self.sys,
        );
        let (r, f, _) = self.fill;
        self.history.push(r / f);
        Ok(r)
    }

    /// `|Phi| <= tol u_scale` and either `|r| <= tol f_scale` or the last
    /// correction `|du| <= tol u_scale` (module doc).
    fn accepts_iterate(&mut self) -> bool {
        let (r, f, phi) = self.fill;
        let tol = self.opts.tol;
        let u_scale = self.u.iter().fold(1.0_f64, |a, x| a.max(x.abs()));
        phi <= tol * u_scale && (r <= tol * f || self.du_max <= tol * u_scale)
    }

    fn factor(&mut self) -> Result<(), StaticError> {
        self.solver
            .factor(&self.sys.values)
            .map_err(|e| self.singular(e))
    }

    fn solve(&mut self) -> Result<(), StaticError> {
        for (x, r) in self.res.iter_mut().zip(&self.sys.residual) {
            *x = -r;
        }
        self.solver
            .solve(&mut self.res)
            .map_err(|e| self.singular(e))
    }

    fn move_along(&mut self, by: f64) {
        let n = self.u.len();
        for (x, d) in self.u.iter_mut().zip(&self.res[..n]) {
            *x += by * d;
        }
        for (x, d) in self.lambda.iter_mut().zip(&self.res[n..]) {
            *x += by * d;
        }
    }

    /// `|du|_inf`, remembered for the next test.
    fn correction(&mut self) -> Correction {
        self.du_max = max_abs(&self.res[..self.u.len()]);
        Correction {
            ratio: self.du_max,
            parts: None,
        }
    }

    /// No test after a correction: the next iterate is judged first.
    fn verdict(&mut self, _correction: &Correction, _iteration: u32) -> Option<Verdict> {
        Some(Verdict::Continue)
    }
}

impl Equilibrium<'_> {
    /// A failed factorization or solve, with what makes the matrix singular
    /// in model terms.
    fn singular(&self, e: SolveError) -> StaticError {
        StaticError::Singular {
            step: self.step,
            source: e,
            diagnosis: format!(
                ": {}",
                diagnose_singular(&self.mech, &self.sys.values, &self.u, self.opts.time)
            ),
        }
    }
}
