//! Geometrically exact planar Euler–Bernoulli beam in absolute nodal
//! coordinates (ANCF "elastic line" element; Gerstmayr & Irschik 2008,
//! Berzeri & Shabana 2000).
//!
//! Local DOFs `e = [x1, y1, dx1, dy1, x2, y2, dx2, dy2]`: node positions r_i and
//! slope vectors r'_i = dr/dx (x the reference arc length, 0 <= x <= L). The
//! centre line is the cubic Hermite interpolation
//! `r(x) = h0 r_1 + h1 r'_1 + h2 r_2 + h3 r'_2` (xi = x / L,
//! h0 = 1 - 3 xi^2 + 2 xi^3, h1 = L (xi - 2 xi^2 + xi^3), h2 = 3 xi^2 - 2 xi^3,
//! h3 = L (xi^3 - xi^2)), so the mass matrix `M = rho_a int S^T S dx` is
//! constant (the classical Hermite beam mass, in both directions).
//!
//! Strain measures (invariant under rigid motions):
//! * axial: Green strain `eps = (r'.r' - 1) / 2`;
//! * bending: exact curvature `kappa = (r' x r'') / |r'|^3`.
//!
//! Energy `V = int [ EA/2 (eps - eps0)^2 + EI/2 (kappa - kappa0)^2 ] dx`,
//! eps0 and kappa0 taken from the initial configuration (stress-free start;
//! zero for a straight beam with unit slopes). Integrated with 5-point Gauss
//! quadrature (exact for the axial energy). Force and tangent are analytic.
//!
//! EOM level: for the midpoint weights (c1 = c2 = 0, c3 = 1/2) the element
//! returns Gonzalez's discrete gradient
//! `P_d = P(u_m) + (V(u1) - V(u0) - P(u_m).du) / |du|^2 du` (u_m the midpoint,
//! du = u1 - u0), which satisfies `du.P_d = V(u1) - V(u0)` exactly, with its
//! exact derivative with respect to u1. Other weights use P(u~) with c3 K(u~).

use super::{Element, EomLevel};

/// Gauss points per element.
const NG: usize = 5;

/// 5-point Gauss–Legendre abscissae and weights on [-1, 1].
const GAUSS_X: [f64; NG] = [
    -0.906_179_845_938_664,
    -0.538_469_310_105_683_1,
    0.0,
    0.538_469_310_105_683_1,
    0.906_179_845_938_664,
];
const GAUSS_W: [f64; NG] = [
    0.236_926_885_056_189_1,
    0.478_628_670_499_366_5,
    0.568_888_888_888_888_9,
    0.478_628_670_499_366_5,
    0.236_926_885_056_189_1,
];

/// A two-node planar ANCF Euler–Bernoulli beam element.
#[derive(Debug, Clone)]
pub struct Beam2d {
    length: f64,
    ea: f64,
    ei: f64,
    rho_a: f64,
    /// Quadrature weight times L per Gauss point.
    w: [f64; NG],
    /// dh_k/dx at the Gauss points.
    h1: [[f64; 4]; NG],
    /// d^2 h_k/dx^2 at the Gauss points.
    h2: [[f64; 4]; NG],
    /// Reference axial strain and curvature at the Gauss points.
    eps0: [f64; NG],
    kap0: [f64; NG],
    /// Scalar 4x4 mass `rho_a int h_k h_l dx`.
    m4: [[f64; 4]; 4],
}

/// Hermite shape functions and their first two x-derivatives at xi.
fn hermite(xi: f64, l: f64) -> ([f64; 4], [f64; 4], [f64; 4]) {
    let (x2, x3) = (xi * xi, xi * xi * xi);
    let h = [
        1.0 - 3.0 * x2 + 2.0 * x3,
        l * (xi - 2.0 * x2 + x3),
        3.0 * x2 - 2.0 * x3,
        l * (x3 - x2),
    ];
    let d1 = [
        (-6.0 * xi + 6.0 * x2) / l,
        1.0 - 4.0 * xi + 3.0 * x2,
        (6.0 * xi - 6.0 * x2) / l,
        3.0 * x2 - 2.0 * xi,
    ];
    let d2 = [
        (-6.0 + 12.0 * xi) / (l * l),
        (-4.0 + 6.0 * xi) / l,
        (6.0 - 12.0 * xi) / (l * l),
        (6.0 * xi - 2.0) / l,
    ];
    (h, d1, d2)
}

/// Per-Gauss-point kinematics.
struct Point {
    g: f64,
    c: f64,
    /// dg/de and dc/de.
    dg: [f64; 8],
    dc: [f64; 8],
}

impl Beam2d {
    /// A beam of reference length `length` with axial stiffness `ea`, bending
    /// stiffness `ei` and mass per unit length `rho_a`, stress free in the
    /// configuration `e0` (local DOFs; `None`: straight with unit slopes).
    pub fn new(length: f64, ea: f64, ei: f64, rho_a: f64, e0: Option<&[f64]>) -> Self {
        assert!(length > 0.0);
        let mut b = Beam2d {
            length,
            ea,
            ei,
            rho_a,
            w: [0.0; NG],
            h1: [[0.0; 4]; NG],
            h2: [[0.0; 4]; NG],
            eps0: [0.0; NG],
            kap0: [0.0; NG],
            m4: [[0.0; 4]; 4],
        };
        for q in 0..NG {
            let xi = 0.5 * (GAUSS_X[q] + 1.0);
            let (h, d1, d2) = hermite(xi, length);
            b.w[q] = 0.5 * GAUSS_W[q] * length;
            b.h1[q] = d1;
            b.h2[q] = d2;
            for k in 0..4 {
                for l in 0..4 {
                    b.m4[k][l] += rho_a * b.w[q] * h[k] * h[l];
                }
            }
        }
        if let Some(e0) = e0 {
            for q in 0..NG {
                let p = b.point(q, e0);
                b.eps0[q] = 0.5 * (p.g - 1.0);
                b.kap0[q] = p.c / (p.g * p.g.sqrt());
            }
        }
        b
    }

    /// Reference length.
    pub fn length(&self) -> f64 {
        self.length
    }

    /// g = r'.r', c = r' x r'' and their gradients at Gauss point q.
    #[inline]
    fn point(&self, q: usize, e: &[f64]) -> Point {
        let (h1, h2) = (&self.h1[q], &self.h2[q]);
        let mut r1 = [0.0; 2];
        let mut r2 = [0.0; 2];
        for k in 0..4 {
            r1[0] += h1[k] * e[2 * k];
            r1[1] += h1[k] * e[2 * k + 1];
            r2[0] += h2[k] * e[2 * k];
            r2[1] += h2[k] * e[2 * k + 1];
        }
        let mut dg = [0.0; 8];
        let mut dc = [0.0; 8];
        for k in 0..4 {
            dg[2 * k] = 2.0 * h1[k] * r1[0];
            dg[2 * k + 1] = 2.0 * h1[k] * r1[1];
            dc[2 * k] = h1[k] * r2[1] - h2[k] * r1[1];
            dc[2 * k + 1] = h2[k] * r1[0] - h1[k] * r2[0];
        }
        Point {
            g: r1[0] * r1[0] + r1[1] * r1[1],
            c: r1[0] * r2[1] - r1[1] * r2[0],
            dg,
            dc,
        }
    }

    /// Energy only.
    fn energy(&self, e: &[f64]) -> f64 {
        let mut v = 0.0;
        for q in 0..NG {
            let (h1, h2) = (&self.h1[q], &self.h2[q]);
            let mut r1 = [0.0; 2];
            let mut r2 = [0.0; 2];
            for k in 0..4 {
                r1[0] += h1[k] * e[2 * k];
                r1[1] += h1[k] * e[2 * k + 1];
                r2[0] += h2[k] * e[2 * k];
                r2[1] += h2[k] * e[2 * k + 1];
            }
            let g = r1[0] * r1[0] + r1[1] * r1[1];
            let c = r1[0] * r2[1] - r1[1] * r2[0];
            let eps = 0.5 * (g - 1.0) - self.eps0[q];
            let kap = c / (g * g.sqrt()) - self.kap0[q];
            v += self.w[q] * (0.5 * self.ea * eps * eps + 0.5 * self.ei * kap * kap);
        }
        v
    }

    /// Energy, gradient and (optionally) Hessian of the element at e.
    fn eval(&self, e: &[f64], f: &mut [f64], k: Option<&mut [f64]>) -> f64 {
        f[..8].fill(0.0);
        let mut v = 0.0;
        let want_k = k.is_some();
        // Hessian = sum over points of
        //   a dg dg^T + b dk dk^T + gm (dc dg^T + dg dc^T) + dlt d2g + zeta d2c,
        // d2g = 2 h1 h1^T (x) I2, d2c = (h1 h2^T - h2 h1^T) (x) [[0, 1], [-1, 0]].
        let mut kk = [0.0; 64];
        let mut sg = [[0.0; 4]; 4];
        let mut sc = [[0.0; 4]; 4];
        for q in 0..NG {
            let p = self.point(q, e);
            let w = self.w[q];
            let gi = 1.0 / p.g;
            let g32 = gi * gi.sqrt(); // g^{-3/2}
            let g52 = g32 * gi;
            let eps = 0.5 * (p.g - 1.0) - self.eps0[q];
            let kap = p.c * g32 - self.kap0[q];
            v += w * (0.5 * self.ea * eps * eps + 0.5 * self.ei * kap * kap);
            let mut dk = [0.0; 8];
            for i in 0..8 {
                dk[i] = g32 * p.dc[i] - 1.5 * p.c * g52 * p.dg[i];
                f[i] += w * (0.5 * self.ea * eps * p.dg[i] + self.ei * kap * dk[i]);
            }
            if want_k {
                // dk = al dc + be dg: the rank-one terms are the 2x2 form
                // [dg dc] Q [dg dc]^T (upper triangle here, mirrored below).
                let (al, be) = (g32, -1.5 * p.c * g52);
                let a = w * (0.25 * self.ea + 3.75 * self.ei * kap * p.c * g52 * gi);
                let b = w * self.ei;
                let gm = -1.5 * w * self.ei * kap * g52;
                let dlt = w * (0.5 * self.ea * eps - 1.5 * self.ei * kap * p.c * g52);
                let zeta = w * self.ei * kap * g32;
                let (qgg, qcc, qgc) = (a + b * be * be, b * al * al, gm + b * al * be);
                for i in 0..8 {
                    let ui = qgg * p.dg[i] + qgc * p.dc[i];
                    let wi = qgc * p.dg[i] + qcc * p.dc[i];
                    for j in i..8 {
                        kk[i * 8 + j] += ui * p.dg[j] + wi * p.dc[j];
                    }
                }
                let (h1, h2) = (&self.h1[q], &self.h2[q]);
                for kx in 0..4 {
                    for l in 0..4 {
                        sg[kx][l] += 2.0 * dlt * h1[kx] * h1[l];
                        sc[kx][l] += zeta * (h1[kx] * h2[l] - h2[kx] * h1[l]);
                    }
                }
            }
        }
        if let Some(k) = k {
            for i in 1..8 {
                for j in 0..i {
                    kk[i * 8 + j] = kk[j * 8 + i];
                }
            }
            for kx in 0..4 {
                for l in 0..4 {
                    let (i, j) = (2 * kx, 2 * l);
                    kk[i * 8 + j] += sg[kx][l];
                    kk[(i + 1) * 8 + j + 1] += sg[kx][l];
                    kk[i * 8 + j + 1] += sc[kx][l];
                    kk[(i + 1) * 8 + j] -= sc[kx][l];
                }
            }
            k[..64].copy_from_slice(&kk);
        }
        v
    }
}

impl Element for Beam2d {
    const KIND: &'static str = "beam";

    fn ndof(&self) -> usize {
        8
    }

    fn mass(&self, m: &mut [f64]) -> bool {
        if self.rho_a == 0.0 {
            return false;
        }
        m[..64].fill(0.0);
        for k in 0..4 {
            for l in 0..4 {
                m[(2 * k) * 8 + 2 * l] = self.m4[k][l];
                m[(2 * k + 1) * 8 + 2 * l + 1] = self.m4[k][l];
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

    fn eom_force(&self, lvl: &EomLevel<'_>, f: &mut [f64], k: &mut [f64]) {
        let w = lvl.w;
        let midpoint = w.c1dt == 0.0 && w.c2dt2 == 0.0 && (w.c3 - 0.5).abs() < 1e-14;
        if !midpoint {
            self.eval(lvl.u_tilde, f, Some(&mut *k));
            for x in k[..64].iter_mut() {
                *x *= w.c3;
            }
            return;
        }
        // Gonzalez's discrete gradient between u0 = u_n and u1 = u_{n+1}.
        let (u0, u1) = (lvl.u_n, lvl.u_next);
        let mut um = [0.0; 8];
        let mut du = [0.0; 8];
        for i in 0..8 {
            um[i] = 0.5 * (u0[i] + u1[i]);
            du[i] = u1[i] - u0[i];
        }
        let mut km = [0.0; 64];
        self.eval(&um, f, Some(&mut km));
        let n2: f64 = du.iter().map(|x| x * x).sum();
        let scale: f64 = um.iter().fold(self.length, |m, x| m.max(x.abs()));
        for (kij, kmij) in k[..64].iter_mut().zip(&km) {
            *kij = 0.5 * kmij;
        }
        if n2 <= (1e-12 * scale).powi(2) {
            return;
        }
        let mut f1 = [0.0; 8];
        let v0 = self.energy(u0);
        let v1 = self.eval(u1, &mut f1, None);
        let fdu: f64 = (0..8).map(|i| f[i] * du[i]).sum();
        let err = v1 - v0 - fdu;
        let s = err / n2;
        // d err / d u1 = P(u1) - P(u_m) - K(u_m) du / 2.
        let mut de = [0.0; 8];
        for i in 0..8 {
            let kdu: f64 = (0..8).map(|j| km[i * 8 + j] * du[j]).sum();
            de[i] = f1[i] - f[i] - 0.5 * kdu;
        }
        for i in 0..8 {
            for j in 0..8 {
                k[i * 8 + j] += du[i] * de[j] / n2 - 2.0 * s * du[i] * du[j] / n2;
            }
            k[i * 8 + i] += s;
        }
        for i in 0..8 {
            f[i] += s * du[i];
        }
    }
}
