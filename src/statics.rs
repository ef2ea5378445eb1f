//! Static equilibrium: load-stepped Newton on
//!
//! ```text
//! r = P(u) - s (F(u, t) + M g) + B(u)^T lambda = 0,    Phi(u, t) = 0,
//! ```
//!
//! with the load factor s = k / steps, k = 1..steps, each step starting from
//! the previous equilibrium. The Newton matrix is the saddle-point matrix
//! `[K - s K_load + H, B^T; B, 0]` (K the element tangent, K_load = dF/du,
//! H = sum_r lambda_r d^2 Phi_r / du^2) built from the same element, joint and
//! load physics the integrators use, and solved by [`SaddlePointSolver`].
//!
//! Convergence: `|Phi|_inf <= tol * u_scale` and either
//! `|r|_inf <= tol * f_scale` or a Newton correction `|du|_inf <= tol * u_scale`
//! (the residual of stiff elements stagnates at round-off, e.g. EA eps with
//! eps = (r'.r' - 1)/2), f_scale the largest of |s (F + M g)|_inf, |P|_inf and
//! 1, u_scale the largest of |u|_inf and 1.

use crate::assembly::{Assembler, Pattern};
use crate::element::{gather, MAX_LOCAL_DOFS};
use crate::joint::MAX_ROWS;
use crate::linalg::{SaddlePointSolver, SolveError};
use crate::model::Model;

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
    /// Newton iterations per load step.
    pub iterations: Vec<u32>,
    /// Final relative residual (force part).
    pub residual: f64,
}

/// Why a static solve failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StaticError {
    /// Newton did not converge in a load step.
    #[error(
        "static Newton did not converge in load step {step} (load factor {load_factor}); \
         relative residuals {residuals:?}"
    )]
    NoConvergence {
        /// 1-based load step.
        step: u32,
        /// Load factor of the step.
        load_factor: f64,
        /// Relative force residual per iteration.
        residuals: Vec<f64>,
    },
    /// The Newton matrix is singular (unsupported DOFs or redundant constraints).
    #[error("singular static Newton matrix in load step {step}: {source}")]
    Singular {
        /// 1-based load step.
        step: u32,
        /// Solver error.
        source: SolveError,
    },
}

/// Sparsity pattern and slot maps of the static Newton matrix.
struct StaticSystem {
    n: usize,
    m: usize,
    pattern: Pattern,
    /// First multiplier row of each joint block.
    row0: Vec<usize>,
}

impl StaticSystem {
    fn new(model: &Model) -> Self {
        let n = model.n_dofs();
        let m = model.n_constraints();
        let mut pairs: Vec<(usize, usize)> = (0..n).map(|i| (i, i)).collect();
        fn square(pairs: &mut Vec<(usize, usize)>, d: &[usize]) {
            for &r in d {
                for &c in d {
                    pairs.push((r, c));
                }
            }
        }
        for b in &model.elements {
            for i in 0..b.len() {
                square(&mut pairs, b.dofs(i));
            }
        }
        for l in &model.loads {
            square(&mut pairs, &l.dofs);
        }
        let mut row0 = Vec::with_capacity(model.joints.len());
        let mut next = 0;
        for b in &model.joints {
            row0.push(next);
            for i in 0..b.len() {
                square(&mut pairs, b.dofs(i));
                for r in 0..b.rows() {
                    for &c in b.dofs(i) {
                        pairs.push((n + next + r, c));
                        pairs.push((c, n + next + r));
                    }
                }
                next += b.rows();
            }
        }
        StaticSystem {
            n,
            m,
            pattern: Pattern::from_pairs(n + m, pairs),
            row0,
        }
    }

    fn add(&self, values: &mut [f64], rows: &[usize], cols: &[usize], k: &[f64], scale: f64) {
        let nc = cols.len();
        for (p, &r) in rows.iter().enumerate() {
            for (q, &c) in cols.iter().enumerate() {
                let v = k[p * nc + q];
                if v != 0.0 {
                    values[self.pattern.slot(r, c)] += scale * v;
                }
            }
        }
    }

    /// Residual `[r; Phi]` and, when `values` is given, the Newton matrix.
    /// Returns (|r|_inf, f_scale, |Phi|_inf).
    #[allow(clippy::too_many_arguments)]
    fn fill(
        &self,
        model: &Model,
        gravity: &[f64],
        u: &[f64],
        lambda: &[f64],
        s: f64,
        t: f64,
        res: &mut [f64],
        mut values: Option<&mut [f64]>,
    ) -> (f64, f64, f64) {
        let n = self.n;
        res.fill(0.0);
        if let Some(v) = values.as_deref_mut() {
            v.fill(0.0);
        }
        let mut fl = [0.0; MAX_LOCAL_DOFS];
        let mut kl = [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS];
        let mut ql = [0.0; MAX_LOCAL_DOFS];
        let mut p_max = 0.0_f64;
        for b in &model.elements {
            let k = b.ndof();
            for i in 0..b.len() {
                let d = b.dofs(i);
                match values.as_deref_mut() {
                    Some(v) => {
                        b.force(i, u, &mut fl[..k], Some(&mut kl[..k * k]));
                        self.add(v, d, d, &kl[..k * k], 1.0);
                    }
                    None => b.force(i, u, &mut fl[..k], None),
                }
                for (p, &r) in d.iter().enumerate() {
                    res[r] += fl[p];
                }
            }
        }
        for r in &res[..n] {
            p_max = p_max.max(r.abs());
        }
        // External loads and gravity, scaled by s.
        let mut ext = vec![0.0; n];
        for l in &model.loads {
            let k = l.dofs.len();
            gather(u, &l.dofs, &mut ql[..k]);
            let st = l.load.time().value(t);
            match values.as_deref_mut() {
                Some(v) => {
                    l.load
                        .force(&ql[..k], st, &mut fl[..k], Some(&mut kl[..k * k]));
                    self.add(v, &l.dofs, &l.dofs, &kl[..k * k], -s);
                }
                None => l.load.force(&ql[..k], st, &mut fl[..k], None),
            }
            for (p, &r) in l.dofs.iter().enumerate() {
                ext[r] += fl[p];
            }
        }
        let mut f_max = 1.0_f64.max(p_max);
        for i in 0..n {
            let e = s * (ext[i] + gravity[i]);
            f_max = f_max.max(e.abs());
            res[i] -= e;
        }
        // Constraints.
        let mut bl = [0.0; MAX_ROWS * MAX_LOCAL_DOFS];
        let mut phi = [0.0; MAX_ROWS];
        let mut phi_max = 0.0_f64;
        for (blk, &row0) in model.joints.iter().zip(&self.row0) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let r0 = row0 + i * rows;
                let d = blk.dofs(i);
                let lam = &lambda[r0..r0 + rows];
                blk.phi(i, u, t, &mut phi[..rows]);
                blk.jacobian(i, u, t, &mut bl[..rows * k]);
                for r in 0..rows {
                    res[n + r0 + r] = phi[r];
                    phi_max = phi_max.max(phi[r].abs());
                    for (p, &c) in d.iter().enumerate() {
                        res[c] += bl[r * k + p] * lam[r];
                    }
                }
                if let Some(v) = values.as_deref_mut() {
                    for r in 0..rows {
                        for (p, &c) in d.iter().enumerate() {
                            let x = bl[r * k + p];
                            v[self.pattern.slot(n + r0 + r, c)] += x;
                            v[self.pattern.slot(c, n + r0 + r)] += x;
                        }
                    }
                    kl[..k * k].fill(0.0);
                    blk.add_curvature(i, u, t, lam, 1.0, &mut kl[..k * k]);
                    self.add(v, d, d, &kl[..k * k], 1.0);
                }
            }
        }
        let r_max = res[..n].iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        (r_max, f_max, phi_max)
    }
}

/// Solves for the static equilibrium of `model` under its loads and gravity,
/// starting from its initial positions.
pub fn solve_static(model: &Model, opts: &StaticOptions) -> Result<StaticSolution, StaticError> {
    let asm = Assembler::new(model);
    let gravity = asm.gravity_force().to_vec();
    let sys = StaticSystem::new(model);
    let (n, m) = (sys.n, sys.m);
    let mut solver = SaddlePointSolver::new(&sys.pattern, false)
        .map_err(|e| StaticError::Singular { step: 0, source: e })?;
    let mut u = model.u0.clone();
    let mut lambda = vec![0.0; m];
    let mut res = vec![0.0; n + m];
    let mut values = vec![0.0; sys.pattern.nnz()];
    let steps = opts.steps.max(1);
    let mut iterations = Vec::with_capacity(steps as usize);
    let mut last = 0.0;
    for step in 1..=steps {
        let s = step as f64 / steps as f64;
        let mut history = Vec::new();
        let mut converged = false;
        let mut du_max = f64::INFINITY;
        for it in 0..=opts.max_iter {
            let (r, f, phi) = sys.fill(
                model,
                &gravity,
                &u,
                &lambda,
                s,
                opts.time,
                &mut res,
                Some(&mut values),
            );
            let u_scale = u.iter().fold(1.0_f64, |a, x| a.max(x.abs()));
            history.push(r / f);
            let small_step = du_max <= opts.tol * u_scale;
            if phi <= opts.tol * u_scale && (r <= opts.tol * f || small_step) {
                iterations.push(it);
                last = r / f;
                converged = true;
                break;
            }
            if it == opts.max_iter {
                break;
            }
            solver
                .factor(&values)
                .and_then(|_| {
                    for x in res.iter_mut() {
                        *x = -*x;
                    }
                    solver.solve(&mut res)
                })
                .map_err(|e| StaticError::Singular { step, source: e })?;
            du_max = res[..n].iter().fold(0.0_f64, |a, x| a.max(x.abs()));
            for (x, d) in u.iter_mut().zip(&res[..n]) {
                *x += d;
            }
            for (x, d) in lambda.iter_mut().zip(&res[n..]) {
                *x += d;
            }
        }
        if !converged {
            return Err(StaticError::NoConvergence {
                step,
                load_factor: s,
                residuals: history,
            });
        }
    }
    Ok(StaticSolution {
        u,
        lambda,
        iterations,
        residual: last,
    })
}
