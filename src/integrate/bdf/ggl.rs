//! The stabilized index-2 GGL form (Gear–Gupta–Leimkuhler; Yen and Petzold eq. 1.3)
//! as the implicit DAE `F(t, y, y') = 0` that the BDF engine solves, with
//! `y = (q, mu, v, lambda)`:
//!
//! ```text
//! F1 = q' - v + G^T mu                  (1.3a)      F4 = g(q, t)          (1.3d)
//! F2 = M(q) v' - f(q, v, t) + G^T lambda (1.3b)      F3 = G v + g_t        (1.3c)
//! ```
//!
//! (`f = F + M g - P(q) - F_d(q, v) - g_inertia(q, v)`, flexmb's sign). The
//! iteration matrix `dF/dy + cj dF/dy'` (digest of Yen and Petzold, B3) is a 2 x 2
//! block matrix whose blocks all lie in the assembler's saddle pattern
//! `[S C; B 0]`: with the unknowns ordered (q, mu | v, lambda) and the rows
//! (F1, F4 | F2, F3),
//!
//! ```text
//! [ cj I + C(q; mu)   G^T |  -I          0   ]
//! [ G                 0   |   0          0   ]
//! [ K + C(q; lambda)  0   |  cj M + D    G^T ]
//! [ (G v)_q           0   |   G          0   ]
//! ```
//!
//! so the method declares that block pattern once and fills each block with
//! the assembler's operators. `C(q; w) = d(G^T w)/dq`, `K` the derivative of
//! `-f` in q (elements, loads, dampers, configuration-dependent inertia).
//!
//! The three nonlinear iterations of Yen and Petzold differ only in the multipliers
//! put into the residual and the curvature of the matrix:
//! - full Newton on GGL: the iterate's multipliers, matrix as above;
//! - CS (the coordinate-split iteration, eqs. 2.3–2.4): before every residual
//!   the multipliers are replaced by the pseudo-inverse estimates
//!   `mu = -w1`, `lambda = -w2`, `w = (G Y)^-T Y^T r` of the residual
//!   `r` without multipliers (eq. 2.1–2.2), so the residual is `P(q) r` in
//!   the dependent rows' complement and the Newton step in (q, v) is CS's;
//!   the matrix curvature uses those estimates (the derivative of P, eq. 2.2);
//! - CM (§2.3, eqs. 2.16–2.20): the residual of CS, the matrix without the
//!   curvature ("dP(q) = 0 in the Newton iteration matrix"): an inexact
//!   Newton method with CS's fixed point (the digest's reading A; reading B,
//!   P frozen at the last Jacobian in the residual too, moves the fixed point
//!   by O(|q - q_J| |lambda|) and failed the error test on the TSDA
//!   slider-crank 3 times as often, docs/theory/bdf-ggl.md).
//!
//! The coordinate split (Def. 2.1) is an LU with partial pivoting of `G^T`:
//! its pivot rows are the dependent coordinates Y. It is redone at a new
//! Jacobian when the current `G_y`'s pivot ratio has fallen below 1e-3 of a
//! fresh split's, or `G_y` is singular.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::{factor as dense_factor, solve as dense_solve};
use faer::{Conj, MatMut, MatRef, Par};

use crate::assembly::{
    diagnose_singular, BlockGrid, ElementEval, JointTerms, MultiplierMix, RateRows, SaddleSystem,
    ALL, DIAGONAL, ROWS, STIFF,
};
use crate::element::RateState;
use crate::linalg::SaddlePointSolver;

use super::super::StepError;
use super::NewtonIteration;
use crate::assembly::Mechanics;

/// The regions of the saddle-point pattern each block of the iteration
/// matrix holds (module doc): (1,1) all, (1,2) the diagonal of S (`-I`),
/// (2,1) S and the rows B, (2,2) all.
const GGL_REGIONS: [u8; 4] = [ALL, DIAGONAL, STIFF | ROWS, ALL];

/// The grid block `I k + J` of each of `Ggl::blocks`: (1,1), (2,1), (2,2).
const GRID_BLOCK: [usize; 3] = [0, 2, 3];

/// The GGL system of one model: residual, iteration matrix and its solver.
pub(crate) struct Ggl {
    n: usize,
    m: usize,
    iteration: NewtonIteration,
    /// The 2 x 2 grid of saddle-point blocks ([`GGL_REGIONS`]).
    grid: BlockGrid,
    /// The values of the blocks (1,1), (2,1), (2,2) (base pattern order).
    blocks: [SaddleSystem; 3],
    values: Vec<f64>,
    pub(super) solver: SaddlePointSolver,
    /// Coordinate split (CS and CM).
    split: Option<Split>,
    /// Whether a joint depends on time explicitly (g_t != 0).
    rheonomic: bool,
}

impl Ggl {
    /// The system of the model in `sys`; refuses velocity-level joints (GGL
    /// needs position constraints g(q) = 0).
    pub fn new(
        sys: &Mechanics<'_>,
        iteration: NewtonIteration,
        force_sparse: bool,
    ) -> Result<Self, StepError> {
        if let Some(k) = sys.first_velocity_row() {
            let owner = sys
                .constraint_owner(k)
                .map(|(j, kind, _)| format!("{kind} '{j}'"))
                .unwrap_or_else(|| format!("row {k}"));
            return Err(StepError::Setup {
                reason: format!(
                    "BDF on the GGL form needs position-level constraints g(q) = 0; joint {owner} \
                     is a velocity-level (nonholonomic) constraint"
                ),
            });
        }
        let rheonomic = sys.has_rheonomic_joints();
        let (n, m) = (sys.n_dofs(), sys.n_constraints());
        // Every base entry in the blocks (1,1) and (2,2); S and B (the
        // columns < n) in (2,1); the diagonal of S in (1,2) (the -I).
        let grid = sys.block_grid(2, &GGL_REGIONS);
        let pattern = &grid.pattern;
        let solver =
            SaddlePointSolver::new(pattern, force_sparse).map_err(|e| StepError::Setup {
                reason: e.to_string(),
            })?;
        let split = match iteration {
            NewtonIteration::Full => None,
            NewtonIteration::Cs | NewtonIteration::Cm => Some(Split::new(n, m)),
        };
        Ok(Ggl {
            n,
            m,
            iteration,
            values: vec![0.0; pattern.nnz()],
            grid,
            blocks: [sys.new_system(), sys.new_system(), sys.new_system()],
            solver,
            split,
            rheonomic,
        })
    }

    /// Number of unknowns 2 (n + m).
    pub fn dim(&self) -> usize {
        2 * (self.n + self.m)
    }

    /// Whether component `i` of y is a multiplier.
    pub fn is_multiplier(&self, i: usize) -> bool {
        let n1 = self.n + self.m;
        (self.n..n1).contains(&i) || i >= n1 + self.n
    }

    /// Whether component `i` (a q or v component) is left out of the local
    /// error test as a dependent coordinate of the current split (CS, CM;
    /// Yen and Petzold §4: the error is estimated on X^T q, X^T v). Never for full
    /// Newton, nor on a model with rheonomic joints: there the dependent
    /// coordinates are y = phi(x, t), and their motion driven by t (all of
    /// it when no coordinate is independent, as in the slider-crank with a
    /// prescribed crank) carries a truncation error of y' (accelerations,
    /// multipliers) that the independent ones do not see; left out, the
    /// test had nothing to measure and the step doubled unchecked (24 steps
    /// on that model at rtol 1e-6, relative energy change 0.75).
    pub fn is_dependent(&self, i: usize) -> bool {
        if self.rheonomic {
            return false;
        }
        let Some(s) = &self.split else { return false };
        let n1 = self.n + self.m;
        let j = if i < n1 { i } else { i - n1 };
        j < self.n && s.is_dep[j]
    }

    /// Re-splits performed.
    pub fn resplits(&self) -> u64 {
        self.split.as_ref().map_or(0, |s| s.resplits)
    }

    /// The split at the start (CS, CM): fresh from G(q0).
    pub fn start(&mut self, sys: &Mechanics<'_>, t: f64, y: &[f64]) -> Result<(), StepError> {
        if let Some(s) = &mut self.split {
            sys.constraint_jacobian_dense(&y[..self.n], t, &mut s.g);
            s.fresh(t)?;
            s.resplits = 0;
        }
        Ok(())
    }

    /// The residual `F(t, y, y')` into `out` (rows F1, F4, F2, F3). For CS
    /// the multipliers of `y` are first replaced by the pseudo-inverse
    /// estimates at q, for CM by zero (module doc).
    pub fn residual(
        &mut self,
        sys: &Mechanics<'_>,
        t: f64,
        y: &mut [f64],
        yp: &[f64],
        out: &mut [f64],
    ) -> Result<(), StepError> {
        let (n, m) = (self.n, self.m);
        let n1 = n + m;
        if self.split.is_some() {
            y[n..n1].fill(0.0);
            y[n1 + n..].fill(0.0);
        }
        self.fill(sys, t, y, yp, None);
        out[..n1].copy_from_slice(&self.blocks[0].residual);
        out[n1..].copy_from_slice(&self.blocks[1].residual);
        if let Some(s) = self.split.as_mut() {
            sys.constraint_jacobian_dense(&y[..n], t, &mut s.g);
            for (off_r, off_y) in [(0, n), (n1, n1 + n)] {
                s.pseudo_multipliers(&out[off_r..off_r + n], t)?;
                // F = r + G^T mu with mu = -w: the dependent rows vanish.
                for (j, w) in s.w.iter().enumerate() {
                    y[off_y + j] = -w;
                    let row = &s.g[j * n..(j + 1) * n];
                    for (o, g) in out[off_r..off_r + n].iter_mut().zip(row) {
                        *o -= g * w;
                    }
                }
            }
        }
        Ok(())
    }

    /// Assembles the iteration matrix `dF/dy + cj dF/dy'` at (t, y, y') and
    /// factors it. The multipliers in the curvature are those of `y` (full
    /// Newton: the iterate's; CS: the estimates the last residual put there);
    /// CM has none. CS and CM re-split here when the split degraded.
    pub fn jacobian(
        &mut self,
        sys: &Mechanics<'_>,
        t: f64,
        y: &[f64],
        yp: &[f64],
        cj: f64,
    ) -> Result<(), StepError> {
        let n = self.n;
        if let Some(s) = &mut self.split {
            sys.constraint_jacobian_dense(&y[..n], t, &mut s.g);
            s.check(t)?;
        }
        self.fill(sys, t, y, yp, Some(cj));
        self.values.fill(0.0);
        for (b, &g) in self.blocks.iter().zip(&GRID_BLOCK) {
            for (s, t) in self.grid.slots(g) {
                self.values[t] += b.values[s];
            }
        }
        for (_, t) in self.grid.slots(1) {
            self.values[t] = -1.0;
        }
        if let Err(e) = self.solver.factor(&self.values) {
            return Err(StepError::Singular {
                step: 0,
                time: t,
                diagnosis: format!(
                    "{e} in the BDF-GGL iteration matrix; at q: {}",
                    diagnose_singular(sys, &self.blocks[2].values, &y[..n], t)
                ),
            });
        }
        Ok(())
    }

    /// Solves the factored matrix for `rhs` in place.
    pub fn solve(&mut self, rhs: &mut [f64], t: f64) -> Result<(), StepError> {
        self.solver.solve(rhs).map_err(|e| StepError::Singular {
            step: 0,
            time: t,
            diagnosis: format!("{e} in the BDF-GGL solve"),
        })
    }

    /// Fills the residual blocks and, with `cj = Some(..)`, the matrix blocks.
    fn fill(&mut self, mech: &Mechanics<'_>, t: f64, y: &[f64], yp: &[f64], cj: Option<f64>) {
        let (n, m) = (self.n, self.m);
        let n1 = n + m;
        let (q, mu, v, lambda) = (&y[..n], &y[n..n1], &y[n1..n1 + n], &y[n1 + n..]);
        let (qp, vp) = (&yp[..n], &yp[n1..n1 + n]);
        let matrix = cj.is_some();
        let curvature = matrix && self.iteration != NewtonIteration::Cm;
        let [b11, b21, b22] = &mut self.blocks;

        // Block row 1: F1 = q' - v + G^T mu, F4 = g.
        b11.residual.fill(0.0);
        b11.values.fill(0.0);
        for ((r, a), b) in b11.residual[..n].iter_mut().zip(qp).zip(v) {
            *r = a - b;
        }
        let terms = JointTerms {
            u: q,
            t,
            discrete_from: None,
            force: Some((1.0, MultiplierMix::of(mu))),
            column: if matrix { 1.0 } else { 0.0 },
            curvature: curvature.then_some((1.0, MultiplierMix::of(mu))),
        };
        mech.add_joint_terms(&terms, b11);
        mech.set_constraint_rows(q, t, 1.0, matrix, b11);
        if let Some(cj) = cj {
            mech.add_identity(&mut b11.values, cj);
        }

        // Block row 2: F2 = M v' - f + G^T lambda, F3 = G v + g_t; its q columns.
        b21.residual.fill(0.0);
        b21.values.fill(0.0);
        mech.mass_mul_add(vp, &mut b21.residual[..n]);
        mech.subtract_gravity(&mut b21.residual[..n], 1.0);
        let k = matrix.then_some(1.0);
        mech.add_element_forces(&ElementEval::At(q), k, b21);
        let x = RateState {
            u: q,
            v,
            a: vp,
            midpoint: None,
        };
        mech.add_rate_forces(&x, matrix.then_some([1.0, 0.0, 0.0]), b21);
        mech.add_load_terms(q, &|f| f.value(t), k, b21);
        let terms = JointTerms {
            u: q,
            t,
            discrete_from: None,
            force: Some((1.0, MultiplierMix::of(lambda))),
            column: 0.0,
            curvature: curvature.then_some((1.0, MultiplierMix::of(lambda))),
        };
        mech.add_joint_terms(&terms, b21);
        let b = match matrix {
            true => RateRows::Evaluate,
            false => RateRows::Residual,
        };
        mech.set_rate_rows(q, v, t, b, b21);

        // Its v and lambda columns: cj M(q) + D, G^T; G.
        if let Some(cj) = cj {
            b22.residual.fill(0.0);
            b22.values.fill(0.0);
            mech.add_mass(&mut b22.values, cj);
            mech.add_rate_forces(&x, Some([0.0, 1.0, cj]), b22);
            let terms = JointTerms {
                u: q,
                t,
                discrete_from: None,
                force: None,
                column: 1.0,
                curvature: None,
            };
            mech.add_joint_terms(&terms, b22);
            mech.set_constraint_rows(q, t, 1.0, true, b22);
        }
    }
}

/// The coordinate split of Def. 2.1: dependent coordinates Y from an LU with
/// partial pivoting of `G^T`, and the pseudo-inverse multipliers
/// `w = (G Y)^-T Y^T r` (eq. 2.1).
struct Split {
    n: usize,
    m: usize,
    /// G(q), m x n row-major.
    g: Vec<f64>,
    /// `G^T` (n x m, column-major) for a fresh split.
    gt: Vec<f64>,
    perm_n: Vec<usize>,
    perm_inv_n: Vec<usize>,
    /// Dependent coordinates (m) and the mask of them (n).
    dep: Vec<usize>,
    is_dep: Vec<bool>,
    /// `(G Y)^T` (m x m, column-major), factored in place.
    gy: Vec<f64>,
    perm_m: Vec<usize>,
    perm_inv_m: Vec<usize>,
    /// Pivot ratio of the last fresh split.
    quality: f64,
    /// Multiplier estimates of the last [`Split::pseudo_multipliers`].
    w: Vec<f64>,
    mem: MemBuffer,
    resplits: u64,
}

impl Split {
    fn new(n: usize, m: usize) -> Self {
        let par = Par::Seq;
        let req = StackReq::any_of(&[
            dense_factor::lu_in_place_scratch::<usize, f64>(n, m, par, Default::default()),
            dense_factor::lu_in_place_scratch::<usize, f64>(m, m, par, Default::default()),
            dense_solve::solve_in_place_scratch::<usize, f64>(m, 1, par),
        ]);
        Split {
            n,
            m,
            g: vec![0.0; m * n],
            gt: vec![0.0; n * m],
            perm_n: vec![0; n],
            perm_inv_n: vec![0; n],
            dep: (0..m).collect(),
            is_dep: vec![false; n],
            gy: vec![0.0; m * m],
            perm_m: vec![0; m],
            perm_inv_m: vec![0; m],
            quality: 0.0,
            w: vec![0.0; m],
            mem: MemBuffer::new(req),
            resplits: 0,
        }
    }

    /// Pivot ratio min |u_ii| / max |u_ii| of a factored square or tall
    /// column-major matrix with `rows` rows and `cols` columns.
    fn pivot_ratio(lu: &[f64], rows: usize, cols: usize) -> f64 {
        let d = (0..cols).map(|i| lu[i + i * rows].abs());
        let (lo, hi) = d.fold((f64::INFINITY, 0.0_f64), |(a, b), x| (a.min(x), b.max(x)));
        if cols == 0 {
            1.0
        } else if hi > 0.0 && lo.is_finite() {
            lo / hi
        } else {
            0.0
        }
    }

    /// A fresh split from `self.g`.
    fn fresh(&mut self, t: f64) -> Result<(), StepError> {
        self.quality = self.fresh_ratio().unwrap_or(0.0);
        if self.quality <= f64::EPSILON {
            return Err(StepError::Singular {
                step: 0,
                time: t,
                diagnosis: "the constraint Jacobian G has no full row rank: no coordinate split"
                    .into(),
            });
        }
        self.is_dep.fill(false);
        for (d, &p) in self.dep.iter_mut().zip(&self.perm_n) {
            *d = p;
            self.is_dep[p] = true;
        }
        self.factor_gy()
            .map(|_| ())
            .ok_or_else(|| StepError::Singular {
                step: 0,
                time: t,
                diagnosis: "G_y of a fresh coordinate split is singular".into(),
            })
    }

    /// Factors `(G Y)^T` of the current split; its pivot ratio (None: singular).
    fn factor_gy(&mut self) -> Option<f64> {
        let (n, m) = (self.n, self.m);
        // (G Y)^T (i, j) = G(j, dep[i]).
        for j in 0..m {
            for (i, &d) in self.dep.iter().enumerate() {
                self.gy[i + j * m] = self.g[j * n + d];
            }
        }
        let stack = MemStack::new(&mut self.mem);
        let a = MatMut::from_column_major_slice_mut(&mut self.gy, m, m);
        dense_factor::lu_in_place(
            a,
            &mut self.perm_m,
            &mut self.perm_inv_m,
            Par::Seq,
            stack,
            Default::default(),
        );
        let r = Self::pivot_ratio(&self.gy, m, m);
        (r > f64::EPSILON).then_some(r)
    }

    /// At a new Jacobian: keeps the split unless `G_y` degraded below 1e-3 of
    /// a fresh split's pivot ratio (or is singular), then re-splits.
    fn check(&mut self, t: f64) -> Result<(), StepError> {
        let keep = match self.factor_gy() {
            Some(r) => self.fresh_ratio().is_some_and(|f| r >= 1e-3 * f),
            None => false,
        };
        if !keep {
            self.fresh(t)?;
            self.resplits += 1;
        }
        Ok(())
    }

    /// Factors `G^T` afresh (pivoted LU into `gt`, `perm_n`: the split a
    /// fresh start would take) and returns its pivot ratio (None: rank-deficient).
    fn fresh_ratio(&mut self) -> Option<f64> {
        let (n, m) = (self.n, self.m);
        for j in 0..m {
            for i in 0..n {
                self.gt[i + j * n] = self.g[j * n + i];
            }
        }
        let stack = MemStack::new(&mut self.mem);
        let a = MatMut::from_column_major_slice_mut(&mut self.gt, n, m);
        dense_factor::lu_in_place(
            a,
            &mut self.perm_n,
            &mut self.perm_inv_n,
            Par::Seq,
            stack,
            Default::default(),
        );
        let r = Self::pivot_ratio(&self.gt, n, m);
        (r > f64::EPSILON).then_some(r)
    }

    /// `w = (G Y)^-T Y^T r` into `self.w`, with `G_y` of `self.g` at the
    /// current split.
    fn pseudo_multipliers(&mut self, r: &[f64], t: f64) -> Result<(), StepError> {
        if self.factor_gy().is_none() {
            return Err(StepError::Singular {
                step: 0,
                time: t,
                diagnosis: "G_y of the coordinate split became singular".into(),
            });
        }
        let m = self.m;
        for (w, &d) in self.w.iter_mut().zip(&self.dep) {
            *w = r[d];
        }
        let stack = MemStack::new(&mut self.mem);
        let lu = MatRef::from_column_major_slice(&self.gy, m, m);
        let p = faer::perm::PermRef::new_checked(&self.perm_m, &self.perm_inv_m, m);
        let x = MatMut::from_column_major_slice_mut(&mut self.w, m, 1);
        dense_solve::solve_in_place_with_conj(lu, lu, p, Conj::No, x, Par::Seq, stack);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assembly::Assembler;
    use crate::assembly::Mechanics;
    use crate::model::{slider_crank_flexible, SliderCrankParams};

    /// The assembled GGL iteration matrix equals `dF/dy + cj dF/dy'` by
    /// central differences of the residual, on the deformable slider-crank
    /// with two rod elements (crank body with a ground pin, a rotational
    /// spring-damper and a sine torque; Euler–Bernoulli beams; revolute and
    /// slider joints) at a perturbed state with nonzero multipliers, built
    /// by the model generator (no model file: `integrate` does not read
    /// files). The differences use h = 1e-5 (1 + |y|): the beams' forces
    /// make h = 1e-6 round-off bound (the differences shrank from 2.6e-5 to
    /// 1.1e-6 of an entry as h grew from 1e-7 to 1e-5); a 0.1 % error in cj
    /// gives 1.0e-3.
    #[test]
    fn iteration_matrix_against_finite_differences() {
        let model = slider_crank_flexible(&SliderCrankParams::new(2, 150.0)).unwrap();
        let asm = Assembler::new(&model);
        let sys = Mechanics::new(&model, &asm);
        let mut ggl = Ggl::new(&sys, NewtonIteration::Full, false).unwrap();
        let dim = ggl.dim();
        let n = asm.n_dofs();
        let m = asm.n_constraints();
        let n1 = n + m;
        let mut y = vec![0.0; dim];
        let mut yp = vec![0.0; dim];
        for i in 0..dim {
            let s = ((i * 7 + 3) % 11) as f64 / 11.0 - 0.5;
            y[i] = s;
            yp[i] = 0.3 * s + 0.1;
        }
        y[..n].copy_from_slice(sys.initial_positions());
        for (i, x) in y[..n].iter_mut().enumerate() {
            *x += 1e-5 * (i as f64 - 3.0);
        }
        for x in &mut y[n1 + n..] {
            *x *= 100.0;
        }
        let (t, cj) = (0.1, 37.0);
        ggl.jacobian(&sys, t, &y, &yp, cj).unwrap();
        let p = &ggl.grid.pattern;
        let mut dense = vec![0.0; dim * dim];
        for c in 0..dim {
            for s in p.col_ptr[c]..p.col_ptr[c + 1] {
                dense[p.row_idx[s] * dim + c] = ggl.values[s];
            }
        }
        let (mut fp, mut fm) = (vec![0.0; dim], vec![0.0; dim]);
        let mut worst: f64 = 0.0;
        for c in 0..dim {
            let h = 1e-5 * (1.0 + y[c].abs());
            let mut col = vec![0.0; dim];
            for (which, coef) in [(0, 1.0), (1, cj)] {
                let (mut yy, mut yyp) = (y.clone(), yp.clone());
                let x = if which == 0 { &mut yy } else { &mut yyp };
                x[c] += h;
                ggl.residual(&sys, t, &mut yy, &yyp, &mut fp).unwrap();
                let (mut yy, mut yyp) = (y.clone(), yp.clone());
                let x = if which == 0 { &mut yy } else { &mut yyp };
                x[c] -= h;
                ggl.residual(&sys, t, &mut yy, &yyp, &mut fm).unwrap();
                for r in 0..dim {
                    col[r] += coef * (fp[r] - fm[r]) / (2.0 * h);
                }
            }
            for r in 0..dim {
                let d = (col[r] - dense[r * dim + c]).abs() / (1.0 + col[r].abs());
                worst = worst.max(d);
            }
        }
        println!("largest relative difference {worst:e}");
        assert!(worst < 1e-5, "largest relative difference {worst:e}");
    }
}
