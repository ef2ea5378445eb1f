//! Truss with Green strain (Hoitink §2.1.5, §4.2.1; Gonzalez 1999).
//!
//! Local DOFs `[x1 (dim), x2 (dim)]`, d = x2 - x1, Green strain
//! `eps = (d.d - L^2) / (2 L^2)`, energy `V = 1/2 EA L eps^2`, force
//! `P = EA L eps d(eps)/du = (EA/L) eps g` with `g = [-d; d]`.
//!
//! Energy-momentum treatment (eqs. 2.7–2.9): the strain is approximated at the
//! EOM time level like a displacement, `eps~ = eps_n + c1dt epsdot_n +
//! c2dt2 epsddot_n + c3 (eps_{n+1} - eps_n)`, and `P~ = (EA/L) eps~ g(u~)`. For
//! the midpoint schemes (c1 = c2 = 0, c3 = 1/2) this is the exact discrete
//! gradient: `(u_{n+1} - u_n).P~ = V(u_{n+1}) - V(u_n)`.

use super::{Element, EvaluationPoint};
use crate::kinematics::vec3::dot;

/// A Green-strain truss between two points in `dim` = 2 or 3 dimensions.
#[derive(Debug, Clone)]
pub struct Truss {
    dim: usize,
    ea: f64,
    length: f64,
    mass_per_length: f64,
}

/// `d = x2 - x1` of a two-node element with `dim` = 2 or 3 coordinates per
/// node, from its local vector `u = [x1; x2]` (zero beyond `dim`).
pub(super) fn separation(dim: usize, u: &[f64]) -> [f64; 3] {
    let mut d = [0.0; 3];
    for (a, da) in d.iter_mut().enumerate().take(dim) {
        *da = u[dim + a] - u[a];
    }
    d
}

impl Truss {
    /// A truss with axial stiffness `ea`, rest length `length` and mass per unit length.
    pub fn new(dim: usize, ea: f64, length: f64, mass_per_length: f64) -> Self {
        assert!(dim == 2 || dim == 3);
        Truss {
            dim,
            ea,
            length,
            mass_per_length,
        }
    }

    /// d = x2 - x1 for local vector `u`.
    fn delta(&self, u: &[f64]) -> [f64; 3] {
        separation(self.dim, u)
    }

    /// Green strain of separation d.
    fn strain(&self, d: &[f64; 3]) -> f64 {
        let l2 = self.length * self.length;
        (dot(d, d) - l2) / (2.0 * l2)
    }

    /// Writes the force `(EA/L) e d_i` (signed by node) of strain `e` along
    /// `d` and, with `k = Some((k, g2, sk))`, the tangent
    /// `sk d g2^T / L^2 + sk e G` ([`Truss::add_tangent`]).
    fn put(&self, e: f64, d: &[f64; 3], f: &mut [f64], k: Option<(&mut [f64], &[f64; 3], f64)>) {
        let s = self.ea / self.length;
        for (i, fi) in f.iter_mut().enumerate().take(2 * self.dim) {
            let (si, ai) = side(i, self.dim);
            *fi = s * e * si * d[ai];
        }
        if let Some((k, g2, sk)) = k {
            let n = 2 * self.dim;
            k[..n * n].fill(0.0);
            self.add_tangent(k, d, g2, sk, e);
        }
    }

    /// Adds `s * g g2^T / L^2 + s * e * G` (G = [[I, -I], [-I, I]]) to k.
    fn add_tangent(&self, k: &mut [f64], g: &[f64; 3], g2: &[f64; 3], s: f64, e: f64) {
        let n = 2 * self.dim;
        let l2 = self.length * self.length;
        for i in 0..n {
            let (si, ai) = side(i, self.dim);
            for j in 0..n {
                let (sj, aj) = side(j, self.dim);
                let mut kij = s * si * sj * g[ai] * g2[aj] / l2;
                if ai == aj {
                    kij += s * e * si * sj;
                }
                k[i * n + j] += kij;
            }
        }
    }
}

/// Sign (-1 for node 1, +1 for node 2) and axis of local DOF i.
fn side(i: usize, dim: usize) -> (f64, usize) {
    if i < dim {
        (-1.0, i)
    } else {
        (1.0, i - dim)
    }
}

impl Element for Truss {
    const KIND: &'static str = "truss";

    fn ndof(&self) -> usize {
        2 * self.dim
    }

    fn mass(&self, m: &mut [f64]) -> bool {
        if self.mass_per_length == 0.0 {
            return false;
        }
        // Consistent mass of linear interpolation: rho A L / 6 [[2I, I], [I, 2I]].
        let n = 2 * self.dim;
        let c = self.mass_per_length * self.length / 6.0;
        m[..n * n].fill(0.0);
        for i in 0..n {
            let ai = i % self.dim;
            for j in 0..n {
                if j % self.dim == ai {
                    m[i * n + j] = if i == j { 2.0 * c } else { c };
                }
            }
        }
        true
    }

    fn potential(&self, u: &[f64]) -> f64 {
        let e = self.strain(&self.delta(u));
        0.5 * self.ea * self.length * e * e
    }

    fn force(&self, u: &[f64], f: &mut [f64], k: Option<&mut [f64]>) {
        let d = self.delta(u);
        let s = self.ea / self.length;
        self.put(self.strain(&d), &d, f, k.map(|k| (k, &d, s)));
    }

    fn eom_force(&self, lvl: &EvaluationPoint<'_>, f: &mut [f64], k: Option<&mut [f64]>) {
        let l2 = self.length * self.length;
        let d_n = self.delta(lvl.u_n);
        let dd_n = self.delta(lvl.v_n);
        let ddd_n = self.delta(lvl.a_n);
        let d_next = self.delta(lvl.u_next);
        let d_tilde = self.delta(lvl.u_tilde);
        let e_n = self.strain(&d_n);
        let edot_n = dot(&d_n, &dd_n) / l2;
        let eddot_n = (dot(&d_n, &ddd_n) + dot(&dd_n, &dd_n)) / l2;
        let w = lvl.w;
        let e_tilde =
            e_n + w.c1dt * edot_n + w.c2dt2 * eddot_n + w.c3 * (self.strain(&d_next) - e_n);
        let s = self.ea / self.length;
        self.put(e_tilde, &d_tilde, f, k.map(|k| (k, &d_next, s * w.c3)));
    }
}
