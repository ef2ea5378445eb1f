//! Greenspan's simplified thin beam (Hoitink §4.2.2, after Armero & Romero
//! 2001): an axial spring between two nodes and a three-node bending element,
//! in 2-D or 3-D. Neither carries mass (masses are lumped at the nodes).
//!
//! * [`AxialSpring`]: `V = 1/2 kappa (l - l0)^2` (eq. 4.43), `l = abs(x2 - x1)`.
//! * [`Bending`]: `V = 1/2 Cb (nu + psi) / (nu - psi)` (eq. 4.42) with
//!   `r1 = x_a - x_b`, `r2 = x_c - x_b` the vectors from the middle node b to
//!   its neighbours a and c, `psi = r1.r2`, `nu = l1 l2`, `l_i = abs(r_i)`.
//!   `nu + psi = l1 l2 (1 + cos theta)` vanishes when the three nodes are on a
//!   straight line (theta = pi), so V = 0 there; V is singular when the beam
//!   folds back on itself (theta = 0).
//!
//! `force` is the exact gradient with its exact tangent.
//!
//! `eom_force`: for the energy-conserving midpoint level weights
//! (`c1dt = c2dt2 = 0`, `c3 = 1/2`: U0(1,1,1), V0(1,1,0) and the two-field
//! scheme) it is Greenspan's discrete derivative (eqs. 4.44–4.45), for which
//! `(u_{n+1} - u_n).P_d = V(u_{n+1}) - V(u_n)` exactly; for any other weights
//! it is the exact gradient at `u~` with derivative `c3 K(u~)`. Both come with
//! their exact derivative with respect to `u_{n+1}`.
//!
//! The difference quotients of eqs. 4.44–4.45 are evaluated in closed form,
//! with the division by the increment cancelled analytically:
//!
//! ```text
//! axial:   (V(l') - V(l)) / (l' - l)            = kappa ((l' + l)/2 - l0)
//! bending: (V(psi', nu) - V(psi, nu)) / (psi' - psi) = Cb nu  / ((nu - psi') (nu - psi))
//!          (V(psi, nu') - V(psi, nu)) / (nu' - nu)   = -Cb psi / ((nu' - psi) (nu - psi))
//! ```
//!
//! (primes: t_{n+1}). These are the seed's quotients exactly, and at a
//! vanishing increment they equal the derivative the seed falls back to
//! ("evaluated simply by V'_{n+1/2}"), so the fallback is the continuous limit
//! of the same formula: no branch, no cancellation when the increment is
//! small, and a smooth Newton tangent.

use super::truss::separation;
use super::{Element, EvaluationPoint};
use crate::kinematics::vec3::{dot, norm};

fn scale(s: f64, a: &[f64; 3]) -> [f64; 3] {
    [s * a[0], s * a[1], s * a[2]]
}

fn mid(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [
        0.5 * (a[0] + b[0]),
        0.5 * (a[1] + b[1]),
        0.5 * (a[2] + b[2]),
    ]
}

// ---------------------------------------------------------------------------
// Axial spring
// ---------------------------------------------------------------------------

/// Axial spring `V = 1/2 kappa (l - l0)^2` between two nodes (eq. 4.43).
///
/// Local DOFs `[x1 (dim), x2 (dim)]`, `d = x2 - x1`, `l = abs(d)`.
#[derive(Debug, Clone)]
pub struct AxialSpring {
    dim: usize,
    kappa: f64,
    rest_length: f64,
}

impl AxialSpring {
    /// A spring of stiffness `kappa` and rest length `rest_length` in `dim` = 2 or 3.
    pub fn new(dim: usize, kappa: f64, rest_length: f64) -> Self {
        assert!(dim == 2 || dim == 3);
        AxialSpring {
            dim,
            kappa,
            rest_length,
        }
    }

    fn delta(&self, u: &[f64]) -> [f64; 3] {
        separation(self.dim, u)
    }

    /// Writes `[-v; v]` (the node-2-minus-node-1 pattern) scaled by `s` into f.
    fn spread(&self, f: &mut [f64], v: &[f64; 3], s: f64) {
        let dim = self.dim;
        for a in 0..dim {
            f[a] = -s * v[a];
            f[dim + a] = s * v[a];
        }
    }

    /// Adds `G (x) (alpha I + p q^T)` to k, with G = [[1, -1], [-1, 1]].
    fn add_block(&self, k: &mut [f64], alpha: f64, p: &[f64; 3], q: &[f64; 3]) {
        let dim = self.dim;
        let n = 2 * dim;
        for i in 0..n {
            let (si, ai) = if i < dim { (-1.0, i) } else { (1.0, i - dim) };
            for j in 0..n {
                let (sj, aj) = if j < dim { (-1.0, j) } else { (1.0, j - dim) };
                let mut b = p[ai] * q[aj];
                if ai == aj {
                    b += alpha;
                }
                k[i * n + j] += si * sj * b;
            }
        }
    }

    /// Greenspan's discrete derivative (eq. 4.44) and its derivative with
    /// respect to u_{n+1}:
    /// `P_d = [V(l') - V(l)]/(l' - l) (d' + d)/(l' + l) [-1; 1]
    ///      = kappa (lbar - l0)/lbar d_m [-1; 1]`,
    /// `lbar = (l' + l)/2`, `d_m = (d' + d)/2`.
    fn greenspan(&self, u_n: &[f64], u_next: &[f64], f: &mut [f64], k: &mut [f64]) {
        let (d0, d1) = (self.delta(u_n), self.delta(u_next));
        let (l0, l1) = (norm(&d0), norm(&d1));
        let lbar = 0.5 * (l0 + l1);
        let dm = mid(&d0, &d1);
        let s = self.kappa * (lbar - self.rest_length) / lbar;
        self.spread(f, &dm, s);
        // d/d d' of s d_m = s/2 I + d_m (kappa l0 / (2 lbar^2 l')) d'^T.
        let n = 2 * self.dim;
        k[..n * n].fill(0.0);
        let q = scale(
            self.kappa * self.rest_length / (2.0 * lbar * lbar * l1),
            &d1,
        );
        self.add_block(k, 0.5 * s, &dm, &q);
    }
}

impl Element for AxialSpring {
    const KIND: &'static str = "axial_spring";

    fn ndof(&self) -> usize {
        2 * self.dim
    }

    fn potential(&self, u: &[f64]) -> f64 {
        let e = norm(&self.delta(u)) - self.rest_length;
        0.5 * self.kappa * e * e
    }

    /// `P = kappa (l - l0)/l [-d; d]`,
    /// `K = kappa G (x) [(1 - l0/l) I + l0/l^3 d d^T]`.
    fn force(&self, u: &[f64], f: &mut [f64], k: Option<&mut [f64]>) {
        let d = self.delta(u);
        let l = norm(&d);
        let s = self.kappa * (l - self.rest_length) / l;
        self.spread(f, &d, s);
        if let Some(k) = k {
            let n = 2 * self.dim;
            k[..n * n].fill(0.0);
            let q = scale(self.kappa * self.rest_length / (l * l * l), &d);
            self.add_block(k, s, &d, &q);
        }
    }

    fn discrete_gradient(&self, lvl: &EvaluationPoint<'_>, f: &mut [f64], k: Option<&mut [f64]>) {
        // The tangent costs little next to the force here: a scratch
        // matrix takes it in residual-only evaluations.
        let mut scratch = [0.0; 9 * 9];
        self.greenspan(lvl.u_n, lvl.u_next, f, k.unwrap_or(&mut scratch));
    }
}

// ---------------------------------------------------------------------------
// Bending element
// ---------------------------------------------------------------------------

/// Three-node bending element `V = 1/2 Cb (nu + psi)/(nu - psi)` (eq. 4.42).
///
/// Local DOFs `[x_a, x_b, x_c]` (dim each), b the middle node;
/// `r1 = x_a - x_b = E1 u`, `r2 = x_c - x_b = E2 u`.
#[derive(Debug, Clone)]
pub struct Bending {
    dim: usize,
    cb: f64,
}

/// A local vector written as `E1^T p1 + E2^T p2` (E1 = [I, -I, 0], E2 = [0, -I, I]).
#[derive(Debug, Clone, Copy)]
struct Split([f64; 3], [f64; 3]);

/// Sign of node `node` (0 = a, 1 = b, 2 = c) in E1 (`which` = 0) or E2 (1).
fn sign(which: usize, node: usize) -> f64 {
    match (which, node) {
        (0, 0) | (1, 2) => 1.0,
        (_, 1) => -1.0,
        _ => 0.0,
    }
}

impl Bending {
    /// A bending element of stiffness `cb` in `dim` = 2 or 3.
    pub fn new(dim: usize, cb: f64) -> Self {
        assert!(dim == 2 || dim == 3);
        Bending { dim, cb }
    }

    /// (r1, r2).
    fn arms(&self, u: &[f64]) -> ([f64; 3], [f64; 3]) {
        let dim = self.dim;
        let (mut r1, mut r2) = ([0.0; 3], [0.0; 3]);
        for a in 0..dim {
            r1[a] = u[a] - u[dim + a];
            r2[a] = u[2 * dim + a] - u[dim + a];
        }
        (r1, r2)
    }

    fn energy(&self, psi: f64, nu: f64) -> f64 {
        0.5 * self.cb * (nu + psi) / (nu - psi)
    }

    /// f = `E1^T p1 + E2^T p2`, scaled by s and added.
    fn add_vec(&self, f: &mut [f64], g: &Split, s: f64) {
        let dim = self.dim;
        for node in 0..3 {
            for a in 0..dim {
                f[node * dim + a] += s * (sign(0, node) * g.0[a] + sign(1, node) * g.1[a]);
            }
        }
    }

    /// k += s g h^T for split vectors g, h.
    fn add_outer(&self, k: &mut [f64], g: &Split, h: &Split, s: f64) {
        let dim = self.dim;
        let n = 3 * dim;
        for i in 0..n {
            let (ni, ai) = (i / dim, i % dim);
            let gi = sign(0, ni) * g.0[ai] + sign(1, ni) * g.1[ai];
            if gi == 0.0 {
                continue;
            }
            for j in 0..n {
                let (nj, aj) = (j / dim, j % dim);
                let hj = sign(0, nj) * h.0[aj] + sign(1, nj) * h.1[aj];
                k[i * n + j] += s * gi * hj;
            }
        }
    }

    /// Adds, for node pair `p` = 0, 1 with `q` the other one, the blocks
    /// `(p, q) += s_p r_p x_q^T` and `(p, p) += t_p r_p x_p^T + c_p I`
    /// ([`Self::add_block`]): the derivative of nu's gradient terms
    /// `(l_q / l_p) r_p`, as in the Hessian of nu (`x = r`) and in its
    /// discrete derivative (`x = r'/l'`, midpoint `r`).
    fn add_nu_blocks(
        &self,
        k: &mut [f64],
        r: [&[f64; 3]; 2],
        x: [&[f64; 3]; 2],
        s: [f64; 2],
        t: [f64; 2],
        c: [f64; 2],
    ) {
        for (p, q) in [(0, 1), (1, 0)] {
            self.add_block(k, (p, q), r[p], x[q], s[p], 0.0);
            self.add_block(k, (p, p), r[p], x[p], t[p], c[p]);
        }
    }

    /// k += E_p^T (s a b^T + t I) E_q (p, q in {0, 1} for E1, E2).
    fn add_block(
        &self,
        k: &mut [f64],
        (p, q): (usize, usize),
        a: &[f64; 3],
        b: &[f64; 3],
        s: f64,
        t: f64,
    ) {
        let dim = self.dim;
        let n = 3 * dim;
        for i in 0..n {
            let (ni, ai) = (i / dim, i % dim);
            let si = sign(p, ni);
            if si == 0.0 {
                continue;
            }
            for j in 0..n {
                let (nj, aj) = (j / dim, j % dim);
                let sj = sign(q, nj);
                if sj == 0.0 {
                    continue;
                }
                let mut b_ij = s * a[ai] * b[aj];
                if ai == aj {
                    b_ij += t;
                }
                k[i * n + j] += si * sj * b_ij;
            }
        }
    }

    /// The constant Hessian of psi = r1.r2: `E1^T E2 + E2^T E1`, times s.
    fn add_psi_hessian(&self, k: &mut [f64], s: f64) {
        let z = [0.0; 3];
        self.add_block(k, (0, 1), &z, &z, 0.0, s);
        self.add_block(k, (1, 0), &z, &z, 0.0, s);
    }
}

/// Gradients of psi and nu for arms (r1, r2) with lengths (l1, l2):
/// `dpsi/du = E1^T r2 + E2^T r1`, `dnu/du = E1^T (l2/l1) r1 + E2^T (l1/l2) r2`.
fn grads(r1: &[f64; 3], r2: &[f64; 3], l1: f64, l2: f64) -> (Split, Split) {
    (
        Split(*r2, *r1),
        Split(scale(l2 / l1, r1), scale(l1 / l2, r2)),
    )
}

impl Element for Bending {
    const KIND: &'static str = "bending";

    fn ndof(&self) -> usize {
        3 * self.dim
    }

    fn potential(&self, u: &[f64]) -> f64 {
        let (r1, r2) = self.arms(u);
        self.energy(dot(&r1, &r2), norm(&r1) * norm(&r2))
    }

    /// `P = V_psi dpsi/du + V_nu dnu/du` with `V_psi = Cb nu/(nu - psi)^2`,
    /// `V_nu = -Cb psi/(nu - psi)^2`; `K` adds the second derivatives of V
    /// and the Hessians of psi and nu.
    fn force(&self, u: &[f64], f: &mut [f64], k: Option<&mut [f64]>) {
        let (r1, r2) = self.arms(u);
        let (l1, l2) = (norm(&r1), norm(&r2));
        let (psi, nu) = (dot(&r1, &r2), l1 * l2);
        let c = self.cb;
        let den = nu - psi;
        let (v_psi, v_nu) = (c * nu / (den * den), -c * psi / (den * den));
        let (gp, gn) = grads(&r1, &r2, l1, l2);
        let n = 3 * self.dim;
        f[..n].fill(0.0);
        self.add_vec(f, &gp, v_psi);
        self.add_vec(f, &gn, v_nu);
        let Some(k) = k else { return };
        k[..n * n].fill(0.0);
        let den3 = den * den * den;
        let v_pp = 2.0 * c * nu / den3;
        let v_pn = -c * (nu + psi) / den3;
        let v_nn = 2.0 * c * psi / den3;
        self.add_outer(k, &gp, &gp, v_pp);
        self.add_outer(k, &gp, &gn, v_pn);
        self.add_outer(k, &gn, &gp, v_pn);
        self.add_outer(k, &gn, &gn, v_nn);
        self.add_psi_hessian(k, v_psi);
        // Hessian of nu: d(l2/l1 r1) = r1 (r2/(l1 l2))^T E2 - (l2/l1^3) r1 r1^T E1 + (l2/l1) E1,
        // and the same with 1 <-> 2.
        let s = v_nu / (l1 * l2);
        let t = [-v_nu * l2 / (l1 * l1 * l1), -v_nu * l1 / (l2 * l2 * l2)];
        let c = [v_nu * l2 / l1, v_nu * l1 / l2];
        self.add_nu_blocks(k, [&r1, &r2], [&r1, &r2], [s, s], t, c);
    }

    fn discrete_gradient(&self, lvl: &EvaluationPoint<'_>, f: &mut [f64], k: Option<&mut [f64]>) {
        // The tangent costs little next to the force here: a scratch
        // matrix takes it in residual-only evaluations.
        let mut scratch = [0.0; 9 * 9];
        self.greenspan(lvl.u_n, lvl.u_next, f, k.unwrap_or(&mut scratch));
    }
}

impl Bending {
    /// Greenspan's discrete derivative (eq. 4.45) and its derivative with
    /// respect to u_{n+1} (primes: t_{n+1}, no prime: t_n):
    ///
    /// ```text
    /// P_d = D_psi g_psi + D_nu g_nu
    /// D_psi = 1/2 [V(psi',nu') - V(psi,nu') + V(psi',nu) - V(psi,nu)] / (psi' - psi)
    ///       = Cb/2 [nu'/((nu' - psi')(nu' - psi)) + nu/((nu - psi')(nu - psi))]
    /// D_nu  = 1/2 [V(psi',nu') - V(psi',nu) + V(psi,nu') - V(psi,nu)] / (nu' - nu)
    ///       = -Cb/2 [psi'/((nu' - psi')(nu - psi')) + psi/((nu' - psi)(nu - psi))]
    /// g_psi = E1^T r2m + E2^T r1m,      g_nu = E1^T (L2/L1) r1m + E2^T (L1/L2) r2m
    /// r_im = (r_i' + r_i)/2,  L_i = (l_i' + l_i)/2
    /// ```
    ///
    /// The seed prints the numerator of the psi quotient for both terms; the
    /// nu quotient must difference in nu (as written here), otherwise the
    /// energy identity fails. The "(.)_{n+1/2}" of the lengths in g_nu is the
    /// mean of the end lengths: then `(u' - u).g_psi = psi' - psi` and
    /// `(u' - u).g_nu = nu' - nu` hold exactly, hence
    /// `(u' - u).P_d = V(u') - V(u)`.
    fn greenspan(&self, u_n: &[f64], u_next: &[f64], f: &mut [f64], k: &mut [f64]) {
        let (a1, a2) = self.arms(u_n);
        let (b1, b2) = self.arms(u_next);
        let (la1, la2, lb1, lb2) = (norm(&a1), norm(&a2), norm(&b1), norm(&b2));
        let (psi0, nu0) = (dot(&a1, &a2), la1 * la2);
        let (psi1, nu1) = (dot(&b1, &b2), lb1 * lb2);
        let h = 0.5 * self.cb;
        // Denominators: (nu' - psi'), (nu' - psi), (nu - psi'), (nu - psi).
        let (e11, e10, e01, e00) = (nu1 - psi1, nu1 - psi0, nu0 - psi1, nu0 - psi0);
        let d_psi = h * (nu1 / (e11 * e10) + nu0 / (e01 * e00));
        let d_nu = -h * (psi1 / (e11 * e01) + psi0 / (e10 * e00));
        let (r1m, r2m) = (mid(&a1, &b1), mid(&a2, &b2));
        let (m1, m2) = (0.5 * (la1 + lb1), 0.5 * (la2 + lb2));
        let g_psi = Split(r2m, r1m);
        let (alpha, beta) = (m2 / m1, m1 / m2);
        let g_nu = Split(scale(alpha, &r1m), scale(beta, &r2m));
        let n = 3 * self.dim;
        f[..n].fill(0.0);
        self.add_vec(f, &g_psi, d_psi);
        self.add_vec(f, &g_nu, d_nu);

        // Derivatives of the quotients with respect to psi' and nu'.
        let dpsi_dpsi1 = h * (nu1 / (e11 * e11 * e10) + nu0 / (e01 * e01 * e00));
        let dpsi_dnu1 = h * (psi1 * psi0 - nu1 * nu1) / (e11 * e11 * e10 * e10);
        let dnu_dpsi1 = -h * (nu1 * nu0 - psi1 * psi1) / (e11 * e11 * e01 * e01);
        let dnu_dnu1 = h * (psi1 / (e11 * e11 * e01) + psi0 / (e10 * e10 * e00));
        let (gp1, gn1) = grads(&b1, &b2, lb1, lb2);
        k[..n * n].fill(0.0);
        self.add_outer(k, &g_psi, &gp1, dpsi_dpsi1);
        self.add_outer(k, &g_psi, &gn1, dpsi_dnu1);
        self.add_outer(k, &g_nu, &gp1, dnu_dpsi1);
        self.add_outer(k, &g_nu, &gn1, dnu_dnu1);
        // d g_psi / du' = 1/2 Hessian of psi.
        self.add_psi_hessian(k, 0.5 * d_psi);
        // d g_nu / du' = E1^T [r1m (x) d alpha + alpha/2 E1] + E2^T [r2m (x) d beta + beta/2 E2],
        // dL_i = 1/2 (r_i'/l_i')^T E_i.
        let (u1, u2) = (scale(1.0 / lb1, &b1), scale(1.0 / lb2, &b2));
        // d alpha = dL2/L1 - L2 dL1/L1^2, d beta = dL1/L2 - L1 dL2/L2^2.
        let s = [d_nu * 0.5 / m1, d_nu * 0.5 / m2];
        let t = [-d_nu * 0.5 * m2 / (m1 * m1), -d_nu * 0.5 * m1 / (m2 * m2)];
        let c = [0.5 * d_nu * alpha, 0.5 * d_nu * beta];
        self.add_nu_blocks(k, [&r1m, &r2m], [&u1, &u2], s, t, c);
    }
}
