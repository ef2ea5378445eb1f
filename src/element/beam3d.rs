//! Geometrically exact 3-D beam (Simo–Reissner rod) in directors: the
//! frame-indifferent finite elements of Betsch & Steinmann, "Frame-indifferent
//! beam finite elements based upon the geometrically exact beam theory",
//! IJNME 54 (2002) 1775–1788, with the energy–momentum discrete gradient of
//! Romero & Armero, IJNME 54 (2002) 1683–1716 (strain-based form).
//!
//! **Nodes.** Each node is a 3-D director body (`Attitude::Directors`):
//! local DOFs per node `(x, d1, d2, d3)`, 12 numbers, node `a` at
//! `12 a .. 12 a + 12`; the orthonormality `d_i . d_j = delta_ij` is the
//! node body's own joint. `d3` is the beam axis in the reference, `d1`, `d2`
//! the cross-section's principal axes. Positions and directors are
//! interpolated with the Lagrange shape functions of a 2-node (linear) or
//! 3-node (quadratic; nodes in order along the beam, the middle one second)
//! element, `x(s) = N_a x_a`, `d_k(s) = N_a d_k,a`, `()' = d/ds` with `s` the
//! reference arc length (isoparametric Jacobian `|X_,xi|`).
//!
//! **Strains** (objective: dot products of the interpolated fields; quadratic
//! in the coordinates, so path-independent):
//!
//! ```text
//! Gamma_k = d_k . x'                       (shear 1, 2 and axial, k = 1, 2, 3)
//! K_k     = 1/2 (d_i' . d_j - d_j' . d_i)  ((k, i, j) cyclic: bending 1, 2, torsion)
//! ```
//!
//! For directors moving as `d_k' = kappa x d_k`, `K_k = kappa . d_k` (the
//! curvature in the section's axes; Betsch & Steinmann eq. 20 write
//! `1/2 (d_j' . d_i - d_i' . d_j)`, the opposite sign, which only flips the
//! sign of the reported moments). The reference values (at the initial
//! configuration) are subtracted at every Gauss point: the element is stress
//! free as given, so initially curved beams need nothing else.
//!
//! **Energy** `V = int 1/2 sum_k [C_k (Gamma_k - Gamma_k^0)^2 + D_k (K_k - K_k^0)^2] ds`
//! with `C = (GA1, GA2, EA)`, `D = (EI1, EI2, GJ)`, integrated with one
//! (linear) or two (quadratic) Gauss points: reduced integration, which
//! avoids shear locking. Each strain is `e = 1/2 q^T H q` (H constant per
//! Gauss point), so `de/dq = H q` and the tangent is
//! `sum w (C B B^T + C e H)` exactly.
//!
//! **Mass** from `T = 1/2 int (rho_a |xdot|^2 + rho_i1 |d1dot|^2 + rho_i2 |d2dot|^2) ds`
//! (`rho_i1 = rho int xi_1^2 dA`, the section's second moment along d1;
//! `rho_i1 + rho_i2` the polar one): constant, consistent
//! (`int N_a N_b ds`, three Gauss points) or lumped (row sums); no gyroscopic
//! terms. With the midpoint rule this is why energy and angular momentum can
//! be conserved (Betsch & Steinmann §5).
//!
//! **Discrete gradient** ([`DirectorBeam::strain_discrete_gradient`], the
//! element's [`Element::discrete_gradient`], asked for by the energy-consistent
//! methods): the internal force is
//! `sum w C ((e(q_n) + e(q_{n+1}))/2) B(q_m)` (stresses at the average
//! strain, strain derivatives at the midpoint; Romero & Armero 2002 §4,
//! Betsch & Steinmann 2002 §5). Since each strain is quadratic,
//! `B(q_m) . (q_{n+1} - q_n) = e(q_{n+1}) - e(q_n)` exactly, so
//! `(q_{n+1} - q_n) . f = V_{n+1} - V_n`; and the strains are invariant under
//! rotations, so the force has no moment: angular momentum is conserved.

use super::{force_at_level, Element, EvaluationPoint};
use crate::kinematics::vec3::dot;

/// Largest number of nodes.
const NN: usize = 3;
/// Largest number of local DOFs.
const NMAX: usize = 12 * NN;
/// Largest number of stiffness Gauss points.
const NG: usize = 2;
/// Strains per Gauss point: Gamma_1, Gamma_2, Gamma_3, K_1, K_2, K_3.
const NS: usize = 6;

/// The section of a geometrically exact beam: stiffnesses and inertias
/// per unit length, named so that they cannot be swapped unnoticed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RodSection {
    /// Axial stiffness EA.
    pub ea: f64,
    /// Shear stiffness along d1, GA1 (with the shear correction factor).
    pub ga1: f64,
    /// Shear stiffness along d2, GA2.
    pub ga2: f64,
    /// Torsional stiffness GJ.
    pub gj: f64,
    /// Bending stiffness about d1, EI1 (`E int xi_2^2 dA`).
    pub ei1: f64,
    /// Bending stiffness about d2, EI2 (`E int xi_1^2 dA`).
    pub ei2: f64,
    /// Mass per unit length rho A.
    pub rho_a: f64,
    /// Director inertia of d1, `rho int xi_1^2 dA`.
    pub rho_i1: f64,
    /// Director inertia of d2, `rho int xi_2^2 dA`.
    pub rho_i2: f64,
}

impl RodSection {
    /// The stiffnesses in strain order (GA1, GA2, EA, EI1, EI2, GJ).
    fn stiffness(&self) -> [f64; NS] {
        [self.ga1, self.ga2, self.ea, self.ei1, self.ei2, self.gj]
    }
}

/// Section forces and moments at a Gauss point, in the section's axes:
/// `[Q1, Q2, N, M1, M2, T]` (shear forces, axial force, bending moments,
/// torque), the stiffness times the strain change.
pub type SectionResultants = [f64; NS];

/// Shape functions and their derivatives at one Gauss point.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Point {
    /// N_a.
    n: [f64; NN],
    /// dN_a/ds.
    dn: [f64; NN],
    /// Gauss weight times the Jacobian ds/dxi.
    w: f64,
}

/// A 2- or 3-node geometrically exact beam element on director nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct DirectorBeam {
    nodes: usize,
    c: [f64; NS],
    inertia: [f64; 3],
    lumped: bool,
    points: [Point; NG],
    npoints: usize,
    /// Reference strains at the Gauss points.
    e0: [[f64; NS]; NG],
    /// Scalar mass integrals `int N_a N_b ds` (before rho).
    m: [[f64; NN]; NN],
    /// Reference length (integral of the Jacobian).
    length: f64,
}

/// Lagrange shape functions and xi-derivatives of `nodes` = 2 or 3 at xi.
fn lagrange(nodes: usize, xi: f64) -> ([f64; NN], [f64; NN]) {
    if nodes == 2 {
        ([0.5 * (1.0 - xi), 0.5 * (1.0 + xi), 0.0], [-0.5, 0.5, 0.0])
    } else {
        (
            [0.5 * xi * (xi - 1.0), 1.0 - xi * xi, 0.5 * xi * (xi + 1.0)],
            [xi - 0.5, -2.0 * xi, xi + 0.5],
        )
    }
}

/// The vector at `at` of the local DOFs `q`.
#[inline]
fn v3(q: &[f64], at: usize) -> [f64; 3] {
    [q[at], q[at + 1], q[at + 2]]
}

/// (k, i, j) cyclic: the directors whose derivatives make K_k.
const CYCLE: [(usize, usize); 3] = [(1, 2), (2, 0), (0, 1)];

/// Interpolated fields at a Gauss point: x', d_k, d_k'.
struct Fields {
    x1: [f64; 3],
    d: [[f64; 3]; 3],
    d1: [[f64; 3]; 3],
}

impl DirectorBeam {
    /// An element on `q0.len() / 12` = 2 or 3 nodes of section `section`,
    /// stress free at the local coordinates `q0` (per node x, d1, d2, d3);
    /// `lumped` selects the row-sum mass. The caller checks the section and
    /// the geometry ([`DirectorBeam::check`]).
    pub fn new(section: &RodSection, q0: &[f64], lumped: bool) -> Self {
        let nodes = q0.len() / 12;
        assert!((nodes == 2 || nodes == 3) && q0.len() == 12 * nodes);
        let xs: Vec<[f64; 3]> = (0..nodes).map(|a| v3(q0, 12 * a)).collect();
        let jacobian = |dxi: &[f64; NN]| {
            let mut t = [0.0; 3];
            for (a, x) in xs.iter().enumerate() {
                for c in 0..3 {
                    t[c] += dxi[a] * x[c];
                }
            }
            dot(&t, &t).sqrt()
        };
        let (gx, gw): (&[f64], &[f64]) = if nodes == 2 {
            (&[0.0], &[2.0])
        } else {
            let g = 1.0 / 3f64.sqrt();
            (&[-g, g], &[1.0, 1.0])
        };
        let mut points = [Point {
            n: [0.0; NN],
            dn: [0.0; NN],
            w: 0.0,
        }; NG];
        for (p, (&xi, &w)) in points.iter_mut().zip(gx.iter().zip(gw)) {
            let (n, dxi) = lagrange(nodes, xi);
            let j = jacobian(&dxi);
            let inv = if j > 0.0 { 1.0 / j } else { 0.0 };
            *p = Point {
                n,
                dn: dxi.map(|x| x * inv),
                w: w * j,
            };
        }
        // Mass and length with the 3-point rule (exact for N_a N_b on a
        // straight element).
        let g3 = (0.6f64).sqrt();
        let mut m = [[0.0; NN]; NN];
        let mut length = 0.0;
        for (xi, w) in [(-g3, 5.0 / 9.0), (0.0, 8.0 / 9.0), (g3, 5.0 / 9.0)] {
            let (n, dxi) = lagrange(nodes, xi);
            let wj = w * jacobian(&dxi);
            length += wj;
            for a in 0..nodes {
                for b in 0..nodes {
                    m[a][b] += wj * n[a] * n[b];
                }
            }
        }
        let mut e = DirectorBeam {
            nodes,
            c: section.stiffness(),
            inertia: [section.rho_a, section.rho_i1, section.rho_i2],
            lumped,
            points,
            npoints: gx.len(),
            e0: [[0.0; NS]; NG],
            m,
            length,
        };
        for g in 0..e.npoints {
            e.e0[g] = e.raw_strains(q0, g);
        }
        e
    }

    /// Reference length (the integral of the isoparametric Jacobian).
    pub fn length(&self) -> f64 {
        self.length
    }

    /// Number of nodes (2 or 3).
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// Number of stiffness Gauss points (1 or 2).
    pub fn gauss_points(&self) -> usize {
        self.npoints
    }

    /// What is wrong with the reference geometry, if anything: a zero
    /// Jacobian (coincident nodes) or an axial director `d3` that is not
    /// along the axis (`d3 . x' <= 1/2` at a Gauss point).
    pub fn check(&self) -> Result<(), String> {
        for g in 0..self.npoints {
            if self.points[g].w <= 0.0 {
                return Err("the element has zero length (its nodes coincide)".into());
            }
            let axial = self.e0[g][2];
            if axial.is_nan() || axial <= 0.5 {
                return Err(format!(
                    "the nodes' d3 is not along the beam axis (d3 . x' = {axial:.3} at Gauss \
                     point {g}; d3 must be the unit tangent, d1 and d2 the section axes)"
                ));
            }
        }
        Ok(())
    }

    fn fields(&self, q: &[f64], g: usize) -> Fields {
        let p = &self.points[g];
        let mut f = Fields {
            x1: [0.0; 3],
            d: [[0.0; 3]; 3],
            d1: [[0.0; 3]; 3],
        };
        for a in 0..self.nodes {
            let o = 12 * a;
            for c in 0..3 {
                f.x1[c] += p.dn[a] * q[o + c];
                for k in 0..3 {
                    let v = q[o + 3 + 3 * k + c];
                    f.d[k][c] += p.n[a] * v;
                    f.d1[k][c] += p.dn[a] * v;
                }
            }
        }
        f
    }

    /// The strains (Gamma_1..3, K_1..3) at Gauss point g, reference not subtracted.
    fn raw_strains(&self, q: &[f64], g: usize) -> [f64; NS] {
        let f = self.fields(q, g);
        let mut e = [0.0; NS];
        for k in 0..3 {
            e[k] = dot(&f.d[k], &f.x1);
            let (i, j) = CYCLE[k];
            e[3 + k] = 0.5 * (dot(&f.d1[i], &f.d[j]) - dot(&f.d1[j], &f.d[i]));
        }
        e
    }

    /// Strains and their gradients `B_s = de_s/dq` at Gauss point g.
    fn strain_gradients(&self, q: &[f64], g: usize, b: &mut [[f64; NMAX]; NS]) -> [f64; NS] {
        let f = self.fields(q, g);
        let p = &self.points[g];
        for row in b.iter_mut() {
            row.fill(0.0);
        }
        for a in 0..self.nodes {
            let o = 12 * a;
            let (n, dn) = (p.n[a], p.dn[a]);
            for k in 0..3 {
                let (i, j) = CYCLE[k];
                for c in 0..3 {
                    b[k][o + c] = dn * f.d[k][c];
                    b[k][o + 3 + 3 * k + c] = n * f.x1[c];
                    b[3 + k][o + 3 + 3 * i + c] += 0.5 * (dn * f.d[j][c] - n * f.d1[j][c]);
                    b[3 + k][o + 3 + 3 * j + c] += 0.5 * (n * f.d1[i][c] - dn * f.d[i][c]);
                }
            }
        }
        let mut e = [0.0; NS];
        for k in 0..3 {
            e[k] = dot(&f.d[k], &f.x1);
            let (i, j) = CYCLE[k];
            e[3 + k] = 0.5 * (dot(&f.d1[i], &f.d[j]) - dot(&f.d1[j], &f.d[i]));
        }
        e
    }

    /// Adds `sum_s scale[s] H_s` (the constant strain Hessians at Gauss point
    /// g) to the row-major n x n `k`.
    fn add_strain_hessians(&self, g: usize, scale: &[f64; NS], k: &mut [f64]) {
        let n = 12 * self.nodes;
        let p = &self.points[g];
        for a in 0..self.nodes {
            for bn in 0..self.nodes {
                let (oa, ob) = (12 * a, 12 * bn);
                // Gamma_k: x_a with d_k,b: N'_a N_b.
                let xd = p.dn[a] * p.n[bn];
                // K_k: d_i,a with d_j,b: (N'_a N_b - N_a N'_b) / 2.
                let ij = 0.5 * (p.dn[a] * p.n[bn] - p.n[a] * p.dn[bn]);
                for kk in 0..3 {
                    let (i, j) = CYCLE[kk];
                    let (sg, sk) = (scale[kk] * xd, scale[3 + kk] * ij);
                    for c in 0..3 {
                        let (r, s) = (oa + c, ob + 3 + 3 * kk + c);
                        k[r * n + s] += sg;
                        k[s * n + r] += sg;
                        let (r, s) = (oa + 3 + 3 * i + c, ob + 3 + 3 * j + c);
                        k[r * n + s] += sk;
                        k[s * n + r] += sk;
                    }
                }
            }
        }
    }

    /// Section forces and moments `[Q1, Q2, N, M1, M2, T]` at every Gauss
    /// point (the first [`DirectorBeam::gauss_points`] entries) at `q`.
    pub fn section_resultants(&self, q: &[f64]) -> [SectionResultants; NG] {
        let mut out = [[0.0; NS]; NG];
        for (g, o) in out.iter_mut().enumerate().take(self.npoints) {
            let e = self.raw_strains(q, g);
            for s in 0..NS {
                o[s] = self.c[s] * (e[s] - self.e0[g][s]);
            }
        }
        out
    }

    fn energy(&self, q: &[f64]) -> f64 {
        let mut v = 0.0;
        for g in 0..self.npoints {
            let e = self.raw_strains(q, g);
            for ((es, e0), c) in e.iter().zip(&self.e0[g]).zip(&self.c) {
                let de = es - e0;
                v += 0.5 * self.points[g].w * c * de * de;
            }
        }
        v
    }

    /// Force `sum w C (e - e0) B` and tangent `sum w C (B B^T + (e - e0) H)`.
    fn eval(&self, q: &[f64], f: &mut [f64], k: Option<&mut [f64]>) {
        let n = 12 * self.nodes;
        f[..n].fill(0.0);
        let mut b = [[0.0; NMAX]; NS];
        let mut k = k;
        if let Some(k) = k.as_deref_mut() {
            k[..n * n].fill(0.0);
        }
        for g in 0..self.npoints {
            let e = self.strain_gradients(q, g, &mut b);
            let w = self.points[g].w;
            let sigma: [f64; NS] = std::array::from_fn(|s| w * self.c[s] * (e[s] - self.e0[g][s]));
            for s in 0..NS {
                for (fi, bi) in f[..n].iter_mut().zip(&b[s][..n]) {
                    *fi += sigma[s] * bi;
                }
            }
            if let Some(k) = k.as_deref_mut() {
                for (bs, c) in b.iter().zip(&self.c) {
                    add_outer(k, n, w * c, &bs[..n], &bs[..n]);
                }
                self.add_strain_hessians(g, &sigma, k);
            }
        }
    }

    /// The strain-based discrete gradient between `q0` and `q1` (module
    /// doc): `sum w C ((e(q0) + e(q1))/2 - e0) B(q_m)`, with its derivative
    /// with respect to q1, `sum w C (B(q_m) B(q1)^T / 2 + ((e0 + e1)/2 - e0) H / 2)`.
    pub fn strain_discrete_gradient(
        &self,
        q0: &[f64],
        q1: &[f64],
        f: &mut [f64],
        k: Option<&mut [f64]>,
    ) {
        let n = 12 * self.nodes;
        let mut qm = [0.0; NMAX];
        for i in 0..n {
            qm[i] = 0.5 * (q0[i] + q1[i]);
        }
        f[..n].fill(0.0);
        let mut k = k;
        if let Some(k) = k.as_deref_mut() {
            k[..n * n].fill(0.0);
        }
        let mut bm = [[0.0; NMAX]; NS];
        let mut b1 = [[0.0; NMAX]; NS];
        for g in 0..self.npoints {
            let w = self.points[g].w;
            self.strain_gradients(&qm[..n], g, &mut bm);
            let e0 = self.raw_strains(q0, g);
            let e1 = self.strain_gradients(q1, g, &mut b1);
            let sigma: [f64; NS] =
                std::array::from_fn(|s| w * self.c[s] * (0.5 * (e0[s] + e1[s]) - self.e0[g][s]));
            for s in 0..NS {
                for (fi, bi) in f[..n].iter_mut().zip(&bm[s][..n]) {
                    *fi += sigma[s] * bi;
                }
            }
            if let Some(k) = k.as_deref_mut() {
                for s in 0..NS {
                    add_outer(k, n, 0.5 * w * self.c[s], &bm[s][..n], &b1[s][..n]);
                }
                self.add_strain_hessians(g, &sigma.map(|x| 0.5 * x), k);
            }
        }
    }
}

/// `k += s a b^T` (row-major n x n).
fn add_outer(k: &mut [f64], n: usize, s: f64, a: &[f64], b: &[f64]) {
    for (i, ai) in a.iter().enumerate() {
        let x = s * ai;
        if x == 0.0 {
            continue;
        }
        for (kij, bj) in k[i * n..(i + 1) * n].iter_mut().zip(b) {
            *kij += x * bj;
        }
    }
}

impl Element for DirectorBeam {
    const KIND: &'static str = "beam3d";

    fn ndof(&self) -> usize {
        12 * self.nodes
    }

    fn mass(&self, m: &mut [f64]) -> bool {
        let n = 12 * self.nodes;
        m[..n * n].fill(0.0);
        for a in 0..self.nodes {
            for b in 0..self.nodes {
                let mab = if self.lumped {
                    if a != b {
                        continue;
                    }
                    self.m[a].iter().sum::<f64>()
                } else {
                    self.m[a][b]
                };
                // x, d1, d2 (d3 carries no inertia).
                for (f, rho) in self.inertia.iter().enumerate() {
                    for c in 0..3 {
                        let (r, s) = (12 * a + 3 * f + c, 12 * b + 3 * f + c);
                        m[r * n + s] = rho * mab;
                    }
                }
            }
        }
        true
    }

    fn potential(&self, u: &[f64]) -> f64 {
        self.energy(u)
    }

    fn force(&self, u: &[f64], f: &mut [f64], k: Option<&mut [f64]>) {
        self.eval(u, f, k);
    }

    fn eom_force(&self, lvl: &EvaluationPoint<'_>, f: &mut [f64], k: Option<&mut [f64]>) {
        force_at_level(self, lvl, f, k);
    }

    fn discrete_gradient(&self, lvl: &EvaluationPoint<'_>, f: &mut [f64], k: Option<&mut [f64]>) {
        self.strain_discrete_gradient(lvl.u_n, lvl.u_next, f, k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinematics::attitude::Attitude;

    fn section() -> RodSection {
        RodSection {
            ea: 3.0e3,
            ga1: 1.1e3,
            ga2: 0.9e3,
            gj: 70.0,
            ei1: 50.0,
            ei2: 35.0,
            rho_a: 2.0,
            rho_i1: 0.1,
            rho_i2: 0.05,
        }
    }

    /// Local coordinates of `nodes` nodes on an arc, directors from
    /// rotations about changing axes (a curved, twisted reference).
    fn curved(nodes: usize, shift: f64) -> Vec<f64> {
        let mut q = Vec::new();
        for a in 0..nodes {
            let s = a as f64 / (nodes - 1) as f64;
            let ang = 0.3 * s + shift;
            // d3 the tangent of a helix-like curve, d1, d2 rotated about it.
            let (c, sn) = (ang.cos(), ang.sin());
            let t = [sn * 0.2, 0.1 * shift, 1.0];
            let tn = dot(&t, &t).sqrt();
            let d3 = t.map(|x| x / tn);
            let mut e = [c, sn, 0.0];
            let p = dot(&e, &d3);
            for k in 0..3 {
                e[k] -= p * d3[k];
            }
            let en = dot(&e, &e).sqrt();
            let d1 = e.map(|x| x / en);
            let d2 = [
                d3[1] * d1[2] - d3[2] * d1[1],
                d3[2] * d1[0] - d3[0] * d1[2],
                d3[0] * d1[1] - d3[1] * d1[0],
            ];
            q.extend_from_slice(&[0.1 * shift * s, 0.05 * s * s, 0.7 * s + 0.02 * shift]);
            q.extend_from_slice(&d1);
            q.extend_from_slice(&d2);
            q.extend_from_slice(&d3);
        }
        q
    }

    /// Force = dV/dq and tangent = dP/dq by central differences, at a
    /// configuration off the reference and off the director manifold.
    #[test]
    fn force_and_tangent_match_finite_differences() {
        for nodes in [2, 3] {
            let e = DirectorBeam::new(&section(), &curved(nodes, 0.0), false);
            e.check().unwrap();
            let mut q = curved(nodes, 0.4);
            for (i, x) in q.iter_mut().enumerate() {
                *x += 0.01 * ((i * 7 % 11) as f64 - 5.0) / 5.0;
            }
            let n = 12 * nodes;
            let (mut f, mut k) = (vec![0.0; n], vec![0.0; n * n]);
            e.force(&q, &mut f, Some(&mut k));
            let h = 1e-6;
            let (mut fp, mut fm) = (vec![0.0; n], vec![0.0; n]);
            let (mut ef, mut ek) = (0.0f64, 0.0f64);
            let (fmax, kmax) = (
                f.iter().fold(0.0f64, |m, x| m.max(x.abs())),
                k.iter().fold(0.0f64, |m, x| m.max(x.abs())),
            );
            for j in 0..n {
                let mut qp = q.clone();
                let mut qm = q.clone();
                qp[j] += h;
                qm[j] -= h;
                let dv = (e.potential(&qp) - e.potential(&qm)) / (2.0 * h);
                ef = ef.max((dv - f[j]).abs() / fmax);
                e.force(&qp, &mut fp, None);
                e.force(&qm, &mut fm, None);
                for i in 0..n {
                    let d = (fp[i] - fm[i]) / (2.0 * h);
                    ek = ek.max((d - k[i * n + j]).abs() / kmax);
                }
            }
            assert!(
                ef < 1e-7 && ek < 1e-7,
                "{nodes} nodes: force {ef:.1e}, tangent {ek:.1e}"
            );
        }
    }

    /// The discrete gradient: `dq . f = V(q1) - V(q0)` to round-off, its
    /// derivative with respect to q1 by differences, and no moment
    /// (`sum_slots q_m x f = 0`: angular momentum).
    #[test]
    fn discrete_gradient_is_exact_and_its_derivative_matches() {
        for nodes in [2, 3] {
            let e = DirectorBeam::new(&section(), &curved(nodes, 0.0), false);
            let q0 = curved(nodes, 0.2);
            let q1 = curved(nodes, 0.45);
            let n = 12 * nodes;
            let (mut f, mut k) = (vec![0.0; n], vec![0.0; n * n]);
            e.strain_discrete_gradient(&q0, &q1, &mut f, Some(&mut k));
            let work: f64 = (0..n).map(|i| (q1[i] - q0[i]) * f[i]).sum();
            let dv = e.potential(&q1) - e.potential(&q0);
            assert!(
                (work - dv).abs() <= 1e-12 * e.potential(&q1).abs().max(1.0),
                "{nodes}: {work} vs {dv}"
            );
            let mut moment = [0.0; 3];
            for slot in 0..n / 3 {
                let qm = [0, 1, 2].map(|c| 0.5 * (q0[3 * slot + c] + q1[3 * slot + c]));
                let fs = v3(&f, 3 * slot);
                moment[0] += qm[1] * fs[2] - qm[2] * fs[1];
                moment[1] += qm[2] * fs[0] - qm[0] * fs[2];
                moment[2] += qm[0] * fs[1] - qm[1] * fs[0];
            }
            let fmax = f.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            assert!(moment.iter().all(|m| m.abs() < 1e-12 * fmax), "{moment:?}");
            let h = 1e-6;
            let (mut fp, mut fm) = (vec![0.0; n], vec![0.0; n]);
            let kmax = k.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let mut ek = 0.0f64;
            for j in 0..n {
                let mut qp = q1.clone();
                let mut qn = q1.clone();
                qp[j] += h;
                qn[j] -= h;
                e.strain_discrete_gradient(&q0, &qp, &mut fp, None);
                e.strain_discrete_gradient(&q0, &qn, &mut fm, None);
                for i in 0..n {
                    ek = ek.max(((fp[i] - fm[i]) / (2.0 * h) - k[i * n + j]).abs() / kmax);
                }
            }
            assert!(ek < 1e-7, "{nodes}: {ek:.1e}");
        }
    }

    /// A rigid rotation and translation of the reference leaves the strains
    /// (and the force) at zero; the mass matrix gives the kinetic energy of
    /// a rigid spin about the axis `(rho_i1 + rho_i2) w^2 L / 2`.
    #[test]
    fn rigid_motion_is_strain_free_and_mass_is_right() {
        for nodes in [2, 3] {
            let q0 = curved(nodes, 0.0);
            let e = DirectorBeam::new(&section(), &q0, false);
            let p = [0.8f64, 0.2, -0.5, 0.26];
            let nrm = p.iter().map(|x| x * x).sum::<f64>().sqrt();
            let p = p.map(|x| x / nrm);
            let mut q = q0.clone();
            for slot in 0..4 * nodes {
                let r = crate::kinematics::rotation::rotate(&p, &v3(&q0, 3 * slot));
                let t = if slot % 4 == 0 { 1.5 } else { 0.0 };
                for c in 0..3 {
                    q[3 * slot + c] = r[c] + t;
                }
            }
            assert!(e.potential(&q) < 1e-20, "{}", e.potential(&q));
            // Straight beam along z spinning about z at w: d1dot = w e3 x d1.
            let q0: Vec<f64> = (0..nodes)
                .flat_map(|a| {
                    let z = a as f64 / (nodes - 1) as f64 * 2.0;
                    let d = Attitude::Directors.from_quaternion(&[1.0, 0.0, 0.0, 0.0]);
                    [0.0, 0.0, z].into_iter().chain(d)
                })
                .collect();
            let e = DirectorBeam::new(&section(), &q0, nodes == 3);
            let n = 12 * nodes;
            let mut m = vec![0.0; n * n];
            e.mass(&mut m);
            let w = 1.7;
            let rate = Attitude::Directors.rate_from_body_angular_velocity(
                &Attitude::Directors.from_quaternion(&[1.0, 0.0, 0.0, 0.0]),
                &[0.0, 0.0, w],
            );
            let mut v = vec![0.0; n];
            for a in 0..nodes {
                v[12 * a + 3..12 * a + 12].copy_from_slice(&rate[..9]);
            }
            let t: f64 = (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| 0.5 * v[i] * m[i * n + j] * v[j])
                        .sum::<f64>()
                })
                .sum();
            let expect = 0.5 * (0.1 + 0.05) * w * w * 2.0;
            assert!((t - expect).abs() < 1e-12, "{nodes}: {t} vs {expect}");
        }
    }
}
