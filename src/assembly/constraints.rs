//! Constraint rows: Phi, B, Phi_t and the rate rows, the joint terms of a
//! Newton matrix (B^T lambda, its curvature), and residual evaluations.

use sprs::{CsMat, TriMat};

use crate::element::{gather, MAX_LOCAL_DOFS};
use crate::joint::{DiscreteExtras, JointSet, MAX_ROWS};

use super::colour::Disjoint;
use super::{scatter_set, DiscreteOutputs, JointTerms, Local, Mechanics, RateRows, SaddleSystem};

impl Mechanics<'_> {
    /// Writes the constraint rows: `residual[n..] = Phi(u, t) / scale` and,
    /// with `matrix`, the row block B(u, t) of the matrix.
    pub fn set_constraint_rows(
        &self,
        u: &[f64],
        t: f64,
        scale: f64,
        matrix: bool,
        sys: &mut SaddleSystem,
    ) {
        let model = self.model;
        let n = self.n;
        let residual = Disjoint::new(&mut sys.residual);
        let values = Disjoint::new(&mut sys.values);
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            s.colours.run(|l, i| {
                let r0 = s.row0 + i * rows;
                let mut phi = [0.0; MAX_ROWS];
                blk.phi(i, u, t, &mut phi[..rows]);
                for p in &mut phi[..rows] {
                    *p /= scale;
                }
                // SAFETY: the joint's own rows and B slots (no other joint's).
                unsafe { residual.set_from(n + r0, &phi[..rows]) };
                if matrix {
                    let bl = &mut l.b[..rows * k];
                    blk.jacobian(i, u, t, bl);
                    let slots = &s.b[i * rows * k..(i + 1) * rows * k];
                    unsafe { values.set(slots, bl) };
                }
            });
        }
    }

    /// Writes the velocity constraints `residual[n..] = B(u, t) v + Phi_t(u, t)`
    /// and, as `matrix` says ([`RateRows`]), their derivative with respect to
    /// u into the row block of B: row r is `v^T d^2 Phi_r/du^2 + d(Phi_t)_r/du` (GGL's
    /// `(G v)_q`, Yen and Petzold eq. 1.3c). `d(Phi_t)/du` of a rheonomic joint is
    /// recovered from `Phi_tt + 2 Phi_tu v` at unit velocities. Position-level
    /// joints only (a velocity-level joint's curvature is not symmetric).
    pub fn set_rate_rows(
        &self,
        u: &[f64],
        v: &[f64],
        t: f64,
        matrix: RateRows<'_>,
        sys: &mut SaddleSystem,
    ) {
        let (matrix, known_b) = match matrix {
            RateRows::Residual => (false, None),
            RateRows::Evaluate => (true, None),
            RateRows::Known(rows) => (true, Some(rows)),
        };
        self.rate_rows_pass(u, v, t, matrix, known_b, sys);
    }

    #[allow(clippy::too_many_arguments)]
    fn rate_rows_pass(
        &self,
        u: &[f64],
        v: &[f64],
        t: f64,
        matrix: bool,
        known_b: Option<&SaddleSystem>,
        sys: &mut SaddleSystem,
    ) {
        let model = self.model;
        let n = self.n;
        let mut zeros = std::mem::take(&mut sys.zeros);
        let Local {
            b: bl,
            h: hl,
            q: vl,
            c: dl,
            ..
        } = &mut *sys.local;
        let mut w = [0.0; MAX_ROWS];
        let (mut p0, mut p1) = ([0.0; MAX_ROWS], [0.0; MAX_ROWS]);
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let r0 = s.row0 + i * rows;
                let d = blk.dofs(i);
                let slots = &s.b[i * rows * k..(i + 1) * rows * k];
                match known_b {
                    Some(r) => read_b(r, slots, &mut bl[..rows * k]),
                    None => blk.jacobian(i, u, t, &mut bl[..rows * k]),
                }
                gather(v, d, &mut vl[..k]);
                let out = &mut sys.residual[n + r0..n + r0 + rows];
                blk.phi_t(i, u, t, out);
                for (r, o) in out.iter_mut().enumerate() {
                    *o += (0..k).map(|p| bl[r * k + p] * vl[p]).sum::<f64>();
                }
                if !matrix {
                    continue;
                }
                // dl: rows x k, row r = H_r v (H_r symmetric).
                for r in 0..rows {
                    w[..rows].fill(0.0);
                    w[r] = 1.0;
                    hl[..k * k].fill(0.0);
                    blk.add_curvature(i, u, t, &w[..rows], 1.0, &mut hl[..k * k]);
                    for p in 0..k {
                        dl[r * k + p] = (0..k).map(|q| hl[q * k + p] * vl[q]).sum::<f64>();
                    }
                }
                if blk.is_rheonomic(i) {
                    blk.phi_tt(i, u, &zeros, t, &mut p0[..rows]);
                    for (p, &dof) in d.iter().enumerate() {
                        zeros[dof] = 1.0;
                        blk.phi_tt(i, u, &zeros, t, &mut p1[..rows]);
                        zeros[dof] = 0.0;
                        for r in 0..rows {
                            dl[r * k + p] += 0.5 * (p1[r] - p0[r]);
                        }
                    }
                }
                scatter_set(&mut sys.values, slots, &dl[..rows * k]);
            }
        }
        sys.zeros = zeros;
    }

    /// Writes the constraint Jacobian B(u, t) densely, row-major m x n, into
    /// `out` (every other entry zero).
    pub fn constraint_jacobian_dense(&self, u: &[f64], t: f64, out: &mut [f64]) {
        let model = self.model;
        let n = self.n;
        out.fill(0.0);
        let mut bl = [0.0; MAX_ROWS * MAX_LOCAL_DOFS];
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let r0 = s.row0 + i * rows;
                blk.jacobian(i, u, t, &mut bl[..rows * k]);
                for r in 0..rows {
                    for (p, &dof) in blk.dofs(i).iter().enumerate() {
                        out[(r0 + r) * n + dof] += bl[r * k + p];
                    }
                }
            }
        }
    }

    /// Adds the joint terms of one configuration ([`JointTerms`]): the
    /// constraint force `c B^T w` into `residual[..n]`, the multiplier
    /// column `c B^T` and the curvature `c d(B^T w)/du` into the matrix, with
    /// B = B(u, t), or Gonzalez's discrete Jacobian `B_d(u0, u)` when
    /// `terms.discrete_from = Some(u0)`
    /// ([`crate::joint::JointSet::discrete_jacobian`]).
    pub fn add_joint_terms(&self, terms: &JointTerms<'_>, sys: &mut SaddleSystem) {
        self.add_discrete_joint_terms(terms, sys, DiscreteOutputs::default());
    }

    /// [`Self::add_joint_terms`] with the further outputs of `out`
    /// ([`DiscreteOutputs`]) from the same joint evaluations when
    /// `terms.discrete_from` is given.
    pub fn add_discrete_joint_terms(
        &self,
        terms: &JointTerms<'_>,
        sys: &mut SaddleSystem,
        out: DiscreteOutputs<'_>,
    ) {
        let model = self.model;
        let DiscreteOutputs {
            from,
            rows: rows_out,
            phi_from,
            from_rows,
            known_b,
        } = out;
        let n = self.n;
        let residual = Disjoint::new(&mut sys.residual);
        let values = Disjoint::new(&mut sys.values);
        let from = from.map(Disjoint::new);
        let rows_out =
            rows_out.map(|r| (Disjoint::new(&mut r.residual), Disjoint::new(&mut r.values)));
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            // SAFETY (every write below): the joints of a colour share no
            // DOF, so neither residual rows, (DOF, DOF) slots nor B^T slots of
            // their DOFs; multiplier rows and B slots are each joint's own.
            s.colours.run(|l, i| {
                let Local {
                    b: bl,
                    h: hl,
                    c: h0l,
                    m: b1l,
                    k: b0l,
                    ..
                } = l;
                let mut w = [0.0; MAX_ROWS];
                let mut wc = [0.0; MAX_ROWS];
                let mut phi = [0.0; MAX_ROWS];
                let d = blk.dofs(i);
                let r0 = s.row0 + i * rows;
                let curvature = terms.curvature.map(|(c, mix)| {
                    for (r, x) in wc.iter_mut().enumerate().take(rows) {
                        *x = mix.at(r0 + r);
                    }
                    c
                });
                let blk_slots = i * rows * k..(i + 1) * rows * k;
                match terms.discrete_from {
                    Some(u0) => {
                        hl[..k * k].fill(0.0);
                        let known = from_rows.filter(|_| !blk.is_rheonomic(i));
                        if let Some(r) = known {
                            read_b(r, &s.b[blk_slots.clone()], &mut b0l[..rows * k]);
                        }
                        blk.discrete_jacobian_with(
                            i,
                            u0,
                            terms.u,
                            terms.t,
                            &mut bl[..rows * k],
                            curvature.map(|_| (&wc[..rows], &mut hl[..k * k])),
                            DiscreteExtras {
                                tangent_from: from.is_some().then(|| &mut h0l[..k * k]),
                                end: rows_out
                                    .is_some()
                                    .then(|| (&mut phi[..rows], &mut b1l[..rows * k])),
                                start_phi: match known {
                                    Some(r) => Some(&r.residual[n + r0..n + r0 + rows]),
                                    None => phi_from.map(|p| &p[r0..r0 + rows]),
                                },
                                start_b: known.map(|_| &b0l[..rows * k]),
                            },
                        );
                        if let Some((r_res, r_val)) = &rows_out {
                            unsafe {
                                r_res.set_from(n + r0, &phi[..rows]);
                                r_val.set(&s.b[blk_slots.clone()], &b1l[..rows * k]);
                            }
                        }
                    }
                    None => match known_b {
                        Some(r) => read_b(r, &s.b[blk_slots.clone()], &mut bl[..rows * k]),
                        None => blk.jacobian(i, terms.u, terms.t, &mut bl[..rows * k]),
                    },
                }
                if let Some((c, mix)) = terms.force {
                    for (r, x) in w.iter_mut().enumerate().take(rows) {
                        *x = c * mix.at(r0 + r);
                    }
                    for r in 0..rows {
                        for (p, &dof) in d.iter().enumerate() {
                            unsafe { residual.add_one(dof, bl[r * k + p] * w[r]) };
                        }
                    }
                }
                if terms.column != 0.0 {
                    unsafe { values.add(&s.c[blk_slots], &bl[..rows * k], terms.column) };
                }
                if let Some(c) = curvature {
                    if terms.discrete_from.is_none() {
                        hl[..k * k].fill(0.0);
                        blk.add_curvature(i, terms.u, terms.t, &wc[..rows], 1.0, &mut hl[..k * k]);
                    }
                    let h_slots = &s.h[i * k * k..(i + 1) * k * k];
                    unsafe { values.add(h_slots, &hl[..k * k], c) };
                    if let (Some(f), Some(_)) = (&from, terms.discrete_from) {
                        unsafe { f.add(h_slots, &h0l[..k * k], c) };
                    }
                }
            });
        }
    }

    /// `out += (d(B(u, t)^T w)/du) x`: the curvature of the constraint force
    /// `B^T w` applied to a vector, without forming the matrix.
    #[allow(clippy::too_many_arguments)]
    pub fn add_curvature_product(
        &self,
        u: &[f64],
        t: f64,
        w: &[f64],
        x: &[f64],
        out: &mut [f64],
        sys: &mut SaddleSystem,
    ) {
        let model = self.model;
        let Local { h: hl, q: xl, .. } = &mut *sys.local;
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let r0 = s.row0 + i * rows;
                let wl = &w[r0..r0 + rows];
                if wl.iter().all(|x| *x == 0.0) {
                    continue;
                }
                hl[..k * k].fill(0.0);
                blk.add_curvature(i, u, t, wl, 1.0, &mut hl[..k * k]);
                let d = blk.dofs(i);
                gather(x, d, &mut xl[..k]);
                for (p, &dof) in d.iter().enumerate() {
                    out[dof] += (0..k).map(|q| hl[p * k + q] * xl[q]).sum::<f64>();
                }
            }
        }
    }

    /// Power of the constraint forces `-B^T lambda` of the rheonomic joints:
    /// `-lambda . B v = lambda . Phi_t(u, t)` on a state with `B v + Phi_t = 0`
    /// (scleronomic joints do no work).
    pub fn constraint_power(&self, u: &[f64], lambda: &[f64], t: f64) -> f64 {
        let model = self.model;
        let mut pt = [0.0; MAX_ROWS];
        let mut power = 0.0;
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let rows = blk.rows();
            for i in (0..blk.len()).filter(|&i| blk.is_rheonomic(i)) {
                let r0 = s.row0 + i * rows;
                blk.phi_t(i, u, t, &mut pt[..rows]);
                power += (0..rows).map(|r| lambda[r0 + r] * pt[r]).sum::<f64>();
            }
        }
        power
    }

    /// Writes `Phi(u, t)` (m rows) into `out`. The rows of velocity-level
    /// joints are zero (their `phi` writes zeros: they have no position-level
    /// residual; [`Model::constraint_levels`](crate::model::Model::constraint_levels)).
    pub fn constraint_values(&self, u: &[f64], t: f64, out: &mut [f64]) {
        let model = self.model;
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let rows = blk.rows();
            for i in 0..blk.len() {
                let r0 = s.row0 + i * rows;
                blk.phi(i, u, t, &mut out[r0..r0 + rows]);
            }
        }
    }

    /// Writes the velocity constraints `B(u, t) v + Phi_t(u, t)` (m rows) into `out`.
    pub fn constraint_rates(&self, u: &[f64], v: &[f64], t: f64, out: &mut [f64]) {
        self.rates_pass([u, v], t, None, out);
    }

    /// [`Self::constraint_rates`] reading B(u, t) from `rows` (constraint
    /// rows of the same u and t that [`Self::set_constraint_rows`] wrote).
    pub fn constraint_rates_from(
        &self,
        rows: &SaddleSystem,
        [u, v]: [&[f64]; 2],
        t: f64,
        out: &mut [f64],
    ) {
        self.rates_pass([u, v], t, Some(rows), out);
    }

    fn rates_pass(&self, uv: [&[f64]; 2], t: f64, known: Option<&SaddleSystem>, out: &mut [f64]) {
        for (blk, s) in self.model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let r0 = s.row0 + i * rows;
                let slots = &s.b[i * rows * k..(i + 1) * rows * k];
                let known = known.map(|r| (r, slots));
                rate_rows(blk.as_ref(), i, uv, t, known, &mut out[r0..r0 + rows]);
            }
        }
    }

    /// Writes `Phi(u, t)` into `phi` and `B(u, t) v + Phi_t(u, t)` into
    /// `rate` (m rows each) in one pass over the joints.
    pub fn constraint_residuals(
        &self,
        u: &[f64],
        v: &[f64],
        t: f64,
        phi: &mut [f64],
        rate: &mut [f64],
    ) {
        let model = self.model;
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let rows = blk.rows();
            for i in 0..blk.len() {
                let r = s.row0 + i * rows..s.row0 + (i + 1) * rows;
                blk.phi(i, u, t, &mut phi[r.clone()]);
                rate_rows(blk.as_ref(), i, [u, v], t, None, &mut rate[r]);
            }
        }
    }

    /// Global constraint Jacobian B(u, t) (m x n, CSR) for export and diagnostics.
    pub fn constraint_jacobian(&self, u: &[f64], t: f64) -> CsMat<f64> {
        let model = self.model;
        let mut tri = TriMat::new((self.m, self.n));
        let mut bl = [0.0; MAX_ROWS * MAX_LOCAL_DOFS];
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                blk.jacobian(i, u, t, &mut bl[..rows * k]);
                for r in 0..rows {
                    for (p, &c) in blk.dofs(i).iter().enumerate() {
                        tri.add_triplet(s.row0 + i * rows + r, c, bl[r * k + p]);
                    }
                }
            }
        }
        tri.to_csr()
    }
}

/// `B v + Phi_t` of row block `i` of the joint set `blk` at (u, v, t) into
/// `out` (its rows).
/// With `known = Some((rows, slots))`, B is read from `rows` (constraint
/// rows of the same u and t, the block's `slots`) instead of evaluated.
fn rate_rows(
    blk: &dyn JointSet,
    i: usize,
    [u, v]: [&[f64]; 2],
    t: f64,
    known: Option<(&SaddleSystem, &[usize])>,
    out: &mut [f64],
) {
    let (rows, k) = (blk.rows(), blk.ndof());
    let mut bl = [0.0; MAX_ROWS * MAX_LOCAL_DOFS];
    let mut vl = [0.0; MAX_LOCAL_DOFS];
    match known {
        Some((r, slots)) => read_b(r, slots, &mut bl[..rows * k]),
        None => blk.jacobian(i, u, t, &mut bl[..rows * k]),
    }
    blk.phi_t(i, u, t, out);
    gather(v, blk.dofs(i), &mut vl[..k]);
    for (r, o) in out.iter_mut().enumerate() {
        *o += (0..k).map(|p| bl[r * k + p] * vl[p]).sum::<f64>();
    }
}

/// Reads a joint's `B` block (its `slots` in the rows' block) from `rows`,
/// a system whose constraint rows [`Mechanics::set_constraint_rows`] wrote.
fn read_b(rows: &SaddleSystem, slots: &[usize], b: &mut [f64]) {
    for (x, &s) in b.iter_mut().zip(slots) {
        *x = rows.values[s];
    }
}
