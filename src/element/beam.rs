//! Geometrically exact Euler–Bernoulli beam in absolute nodal coordinates
//! (ANCF "elastic line" / gradient-deficient cable element; Gerstmayr &
//! Irschik 2008, Berzeri & Shabana 2000, Gerstmayr & Shabana 2006), planar
//! (`D = 2`, [`Beam2d`]) and spatial without torsion (`D = 3`, [`Beam3d`]).
//! One implementation serves both: shape functions, Gauss loop, mass, tangent
//! assembly and discrete gradient are dimension generic; only the curvature
//! measure (signed in the plane, unsigned in space) depends on `D`.
//!
//! Local DOFs `e = [r_1, r'_1, r_2, r'_2]` (4 vectors of D components: node
//! positions r_i and slope vectors r'_i = dr/dx, x the reference arc length,
//! 0 <= x <= L). The centre line is the cubic Hermite interpolation
//! `r(x) = h0 r_1 + h1 r'_1 + h2 r_2 + h3 r'_2` (xi = x / L,
//! h0 = 1 - 3 xi^2 + 2 xi^3, h1 = L (xi - 2 xi^2 + xi^3), h2 = 3 xi^2 - 2 xi^3,
//! h3 = L (xi^3 - xi^2)), so the mass matrix `M = rho_a int S^T S dx` is
//! constant (the classical Hermite beam mass, in every direction).
//!
//! Strain measures (invariant under rigid motions), with g = r'.r' and the
//! curvature vector `k = (r' x r'') / |r'|^3` (Frenet: |k| is the curvature of
//! the centre line, k along the binormal):
//! * axial: Green strain `eps = (g - 1) / 2`;
//! * bending, D = 2: signed curvature `kappa = k_z`, energy density
//!   `EI/2 (kappa - kappa0)^2`;
//! * bending, D = 3: unsigned curvature `kappa = |k|` (no torsion, no material
//!   frame), energy density `EI/2 (|k| - kappa0)^2`, written as `EI/2 |rho|^2`
//!   with `rho = k - kappa0 k/|k|`. For a straight reference (kappa0 = 0, the
//!   usual case) this is `EI/2 |k|^2`, smooth everywhere. A curved reference
//!   has a cone point at k = 0 (the unsigned curvature is not differentiable
//!   there); at exactly k = 0 the element takes the x axis as the direction
//!   of k and drops the unbounded transverse tangent term.
//!
//! Energy `V = int [ EA/2 (eps - eps0)^2 + EI/2 |rho|^2 ] dx`, eps0 and kappa0
//! from the initial configuration (stress-free start; zero for a straight beam
//! with unit slopes). Integrated with 5-point Gauss quadrature (exact for the
//! axial energy). Force and tangent are analytic.
//!
//! EOM level: for the midpoint weights (c1 = c2 = 0, c3 = 1/2) the element
//! returns Gonzalez's discrete gradient
//! `P_d = P(u_m) + (V(u1) - V(u0) - P(u_m).du) / |du|^2 du` (u_m the midpoint,
//! du = u1 - u0), which satisfies `du.P_d = V(u1) - V(u0)` exactly, with its
//! exact derivative with respect to u1. Other weights use P(u~) with c3 K(u~).

use super::gonzalez::between;
use super::{Element, EvaluationPoint};
use std::collections::HashMap;
use std::sync::Arc;

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

/// Largest number of local DOFs (D = 3).
const NMAX: usize = 12;

/// Reference curvatures with `kappa0 L` below this are round-off of a straight
/// reference (3-D only, where a nonzero kappa0 makes k = 0 a cone point).
const STRAIGHT: f64 = 1e-8;

/// The quadrature tables of a beam of reference length `length`: Gauss
/// weights and the first two x-derivatives of the Hermite shape functions at
/// the Gauss points. They depend on the length only, so elements of the same
/// length share one table ([`BeamShapes`]) instead of holding 45 values each.
#[derive(Debug)]
pub struct BeamShape {
    length: f64,
    /// Quadrature weight times L per Gauss point.
    w: [f64; NG],
    /// dh_k/dx at the Gauss points.
    h1: [[f64; 4]; NG],
    /// d^2 h_k/dx^2 at the Gauss points.
    h2: [[f64; 4]; NG],
}

impl BeamShape {
    /// The tables of a beam of reference length `length` > 0.
    pub fn new(length: f64) -> Self {
        assert!(length > 0.0);
        let mut s = BeamShape {
            length,
            w: [0.0; NG],
            h1: [[0.0; 4]; NG],
            h2: [[0.0; 4]; NG],
        };
        for (q, gw) in GAUSS_W.iter().enumerate() {
            let (_, d1, d2) = hermite(gauss_xi(q), length);
            s.w[q] = 0.5 * gw * length;
            s.h1[q] = d1;
            s.h2[q] = d2;
        }
        s
    }
}

/// One shared [`BeamShape`] per distinct reference length (compared bit for
/// bit, so every element keeps exactly the tables of its own length).
#[derive(Debug, Default)]
pub struct BeamShapes(HashMap<u64, Arc<BeamShape>>);

impl BeamShapes {
    /// The tables for `length`, built on first use.
    pub fn get(&mut self, length: f64) -> Arc<BeamShape> {
        self.0
            .entry(length.to_bits())
            .or_insert_with(|| Arc::new(BeamShape::new(length)))
            .clone()
    }
}

/// A two-node ANCF Euler–Bernoulli beam element in `D` = 2 or 3 dimensions.
#[derive(Debug, Clone)]
pub struct Beam<const D: usize> {
    ea: f64,
    ei: f64,
    rho_a: f64,
    /// Length and quadrature tables, shared with the elements of the same length.
    shape: Arc<BeamShape>,
    /// Reference axial strain and curvature at the Gauss points.
    eps0: [f64; NG],
    kap0: [f64; NG],
}

/// The planar beam (DOFs per node x, y, dx, dy).
pub type Beam2d = Beam<2>;
/// The spatial beam without torsion (DOFs per node x, y, z, dx, dy, dz).
pub type Beam3d = Beam<3>;

/// xi in [0, 1] of Gauss point q.
fn gauss_xi(q: usize) -> f64 {
    0.5 * (GAUSS_X[q] + 1.0)
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

/// Nonzeros `(a, A, B, sign)` of the Levi-Civita slices `E_a[A][B] = eps_aAB`
/// for the curvature components a: the cross product is `x_a = r'^T E_a r''`.
/// In the plane the only component is z (a = 0 here): `E = [[0, 1], [-1, 0]]`.
fn levi_civita(d: usize) -> &'static [(usize, usize, usize, f64)] {
    const PLANE: [(usize, usize, usize, f64); 2] = [(0, 0, 1, 1.0), (0, 1, 0, -1.0)];
    const SPACE: [(usize, usize, usize, f64); 6] = [
        (0, 1, 2, 1.0),
        (0, 2, 1, -1.0),
        (1, 2, 0, 1.0),
        (1, 0, 2, -1.0),
        (2, 0, 1, 1.0),
        (2, 1, 0, -1.0),
    ];
    if d == 2 {
        &PLANE
    } else {
        &SPACE
    }
}

/// Kinematics at every Gauss point: r', r'', g = r'.r', x = r' x r''
/// (M components) and g^{-1}, g^{-3/2}. All points are computed before any
/// of them is used, so that the points' divisions and square roots overlap
/// instead of each stalling its own point's force and tangent.
struct Points {
    r1: [[f64; 3]; NG],
    r2: [[f64; 3]; NG],
    g: [f64; NG],
    x: [[f64; 3]; NG],
    gi: [f64; NG],
    g32: [f64; NG],
}

/// Bending state at a Gauss point: `rho` (energy density EI/2 |rho|^2), the
/// curvature vector k, its direction `y = k/|k|` and `gamma = kappa0/|k|`
/// (D = 3 with a curved reference; zero otherwise).
struct Bend {
    rho: [f64; 3],
    y: [f64; 3],
    gamma: f64,
}

impl<const D: usize> Beam<D> {
    /// Local DOFs.
    const N: usize = 4 * D;
    /// Components of the curvature vector: z only in the plane.
    const M: usize = if D == 2 { 1 } else { 3 };
    const VALID: () = assert!(D == 2 || D == 3, "beam dimension must be 2 or 3");

    /// A beam of reference length `length` with axial stiffness `ea`, bending
    /// stiffness `ei` and mass per unit length `rho_a`, stress free in the
    /// configuration `e0` (local DOFs; `None`: straight with unit slopes).
    pub fn new(length: f64, ea: f64, ei: f64, rho_a: f64, e0: Option<&[f64]>) -> Self {
        Self::with_shape(Arc::new(BeamShape::new(length)), ea, ei, rho_a, e0)
    }

    /// [`Beam::new`] with the length and tables of `shape` (shared).
    pub fn with_shape(
        shape: Arc<BeamShape>,
        ea: f64,
        ei: f64,
        rho_a: f64,
        e0: Option<&[f64]>,
    ) -> Self {
        let () = Self::VALID;
        let length = shape.length;
        let mut b = Beam {
            ea,
            ei,
            rho_a,
            shape,
            eps0: [0.0; NG],
            kap0: [0.0; NG],
        };
        if let Some(e0) = e0 {
            let p = b.points(e0);
            for q in 0..NG {
                let (g, x) = (p.g[q], p.x[q]);
                b.eps0[q] = 0.5 * (g - 1.0);
                b.kap0[q] = if D == 2 {
                    x[0] / (g * g.sqrt())
                } else {
                    let k = (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt() / (g * g.sqrt());
                    if k * length < STRAIGHT {
                        0.0
                    } else {
                        k
                    }
                };
            }
        }
        b
    }

    /// Reference length.
    pub fn length(&self) -> f64 {
        self.shape.length
    }

    /// r' and r'' at Gauss point q (`e` the local DOFs, zero padded).
    #[inline]
    fn derivatives(&self, q: usize, e: &[f64; NMAX]) -> ([f64; 3], [f64; 3]) {
        let (h1, h2) = (&self.shape.h1[q], &self.shape.h2[q]);
        let mut r1 = [0.0; 3];
        let mut r2 = [0.0; 3];
        for k in 0..4 {
            for a in 0..D {
                r1[a] += h1[k] * e[D * k + a];
                r2[a] += h2[k] * e[D * k + a];
            }
        }
        (r1, r2)
    }

    /// g = r'.r' and x = r' x r'' from r' and r''.
    #[inline]
    fn invariants(r1: &[f64; 3], r2: &[f64; 3]) -> (f64, [f64; 3]) {
        let g: f64 = r1[..D].iter().map(|v| v * v).sum();
        let mut x = [0.0; 3];
        for &(a, i, j, s) in levi_civita(D) {
            x[a] += s * r1[i] * r2[j];
        }
        (g, x)
    }

    /// The kinematics of every Gauss point at the local DOFs `e`.
    #[inline]
    fn points(&self, e: &[f64]) -> Points {
        let mut el = [0.0; NMAX];
        el[..Self::N].copy_from_slice(&e[..Self::N]);
        let mut p = Points {
            r1: [[0.0; 3]; NG],
            r2: [[0.0; 3]; NG],
            g: [0.0; NG],
            x: [[0.0; 3]; NG],
            gi: [0.0; NG],
            g32: [0.0; NG],
        };
        for q in 0..NG {
            let (r1, r2) = self.derivatives(q, &el);
            (p.g[q], p.x[q]) = Self::invariants(&r1, &r2);
            (p.r1[q], p.r2[q]) = (r1, r2);
        }
        for q in 0..NG {
            let gi = 1.0 / p.g[q];
            p.gi[q] = gi;
            p.g32[q] = gi * gi.sqrt();
        }
        p
    }

    /// The bending state at Gauss point q from g^{-3/2} and x.
    #[inline]
    fn bend(&self, q: usize, g32: f64, x: &[f64; 3]) -> Bend {
        let kap0 = self.kap0[q];
        let mut rho = [0.0; 3];
        if D == 2 {
            rho[0] = x[0] * g32 - kap0;
            return Bend {
                rho,
                y: [1.0, 0.0, 0.0],
                gamma: 0.0,
            };
        }
        let k = [x[0] * g32, x[1] * g32, x[2] * g32];
        if kap0 == 0.0 {
            return Bend {
                rho: k,
                y: [0.0; 3],
                gamma: 0.0,
            };
        }
        let kn = (k[0] * k[0] + k[1] * k[1] + k[2] * k[2]).sqrt();
        let (y, gamma) = if kn > 0.0 {
            ([k[0] / kn, k[1] / kn, k[2] / kn], kap0 / kn)
        } else {
            ([1.0, 0.0, 0.0], 0.0)
        };
        for a in 0..3 {
            rho[a] = (kn - kap0) * y[a];
        }
        Bend { rho, y, gamma }
    }

    /// Energy density times the quadrature weight at Gauss point q.
    #[inline]
    fn density(&self, q: usize, g: f64, b: &Bend) -> f64 {
        let eps = 0.5 * (g - 1.0) - self.eps0[q];
        let rr: f64 = b.rho[..Self::M].iter().map(|r| r * r).sum();
        self.shape.w[q] * (0.5 * self.ea * eps * eps + 0.5 * self.ei * rr)
    }

    /// Energy only.
    fn energy(&self, e: &[f64]) -> f64 {
        let p = self.points(e);
        let mut v = 0.0;
        for q in 0..NG {
            v += self.density(q, p.g[q], &self.bend(q, p.g32[q], &p.x[q]));
        }
        v
    }

    /// Energy, gradient and (optionally) Hessian of the element at e.
    fn eval(&self, e: &[f64], f: &mut [f64], k: Option<&mut [f64]>) -> f64 {
        let (n, m) = (Self::N, Self::M);
        let mut v = 0.0;
        let want_k = k.is_some();
        // With k_a = x_a g^{-3/2} and its gradient dk_a = al dx_a + be_a dg
        // (al = g^{-3/2}, be_a = -3/2 x_a g^{-5/2}), the Hessian is, per point,
        //   [dg dx_0 ..] Q [dg dx_0 ..]^T + dlt d2g + sum_a zeta_a d2x_a,
        // d2g = 2 h1 h1^T (x) I_D, d2x_a = (h1 h2^T - h2 h1^T) (x) E_a; the
        // bending part is EI [(1 - gamma) sum_a dk_a dk_a^T
        // + gamma (y.dk)(y.dk)^T + sum_a rho_a d2k_a] (the Hessian of
        // EI/2 (|k| - kappa0)^2; gamma = 0 in the plane and for a straight
        // reference).
        let mut kk = [0.0; NMAX * NMAX];
        let mut sg = [[0.0; 4]; 4];
        let mut sc = [[[0.0; 4]; 4]; 3];
        let mut fl = [0.0; NMAX];
        let pts = self.points(e);
        for q in 0..NG {
            let (h1, h2) = (&self.shape.h1[q], &self.shape.h2[q]);
            let (r1, r2, x) = (&pts.r1[q], &pts.r2[q], &pts.x[q]);
            // Gradients d = [dg, dx_0, ..]: dg = 2 h1 r', and with
            // dx_a/dr'_i = (E_a r'')_i, dx_a/dr''_i = -(E_a r')_i,
            // dx_a = h1 E_a r'' - h2 E_a r'.
            let mut er1 = [[0.0; 3]; 3];
            let mut er2 = [[0.0; 3]; 3];
            for &(a, i, j, s) in levi_civita(D) {
                er1[a][i] += s * r1[j];
                er2[a][i] += s * r2[j];
            }
            let mut d = [[0.0; NMAX]; 4];
            for k in 0..4 {
                for i in 0..D {
                    d[0][D * k + i] = 2.0 * h1[k] * r1[i];
                    for a in 0..m {
                        d[a + 1][D * k + i] = h1[k] * er2[a][i] - h2[k] * er1[a][i];
                    }
                }
            }
            let w = self.shape.w[q];
            let (g, gi, g32) = (pts.g[q], pts.gi[q], pts.g32[q]);
            let g52 = g32 * gi;
            let bd = self.bend(q, g32, x);
            let eps = 0.5 * (g - 1.0) - self.eps0[q];
            v += self.density(q, g, &bd);
            let (al, be) = (g32, x.map(|x| -1.5 * x * g52));
            let rx: f64 = (0..m).map(|a| bd.rho[a] * x[a]).sum(); // rho . x
            for (i, fi) in fl[..n].iter_mut().enumerate() {
                let fb: f64 = (0..m)
                    .map(|a| bd.rho[a] * (al * d[a + 1][i] + be[a] * d[0][i]))
                    .sum();
                *fi += w * (0.5 * self.ea * eps * d[0][i] + self.ei * fb);
            }
            if want_k {
                let b = w * self.ei;
                // Q in the basis [dg, dx_0, .., dx_{m-1}]; dk_a = al e_{a+1} + be_a e_0.
                let mut qm = [[0.0; 4]; 4];
                qm[0][0] = w * (0.25 * self.ea + 3.75 * self.ei * rx * g52 * gi);
                for a in 0..m {
                    qm[0][0] += b * be[a] * be[a];
                    let qa = -1.5 * b * bd.rho[a] * g52 + b * al * be[a];
                    qm[0][a + 1] = qa;
                    qm[a + 1][0] = qa;
                    qm[a + 1][a + 1] = b * al * al;
                }
                if bd.gamma != 0.0 {
                    // Curved 3-D reference: - gamma sum_a dk_a dk_a^T + gamma (y.dk)(y.dk)^T.
                    let mut yk = [0.0; 4]; // y.dk in the basis
                    let mut dk = [[0.0; 4]; 3];
                    for a in 0..m {
                        yk[0] += bd.y[a] * be[a];
                        yk[a + 1] = bd.y[a] * al;
                        dk[a][0] = be[a];
                        dk[a][a + 1] = al;
                    }
                    for r in 0..=m {
                        for c in 0..=m {
                            let sum_dk: f64 = dk[..m].iter().map(|d| d[r] * d[c]).sum();
                            qm[r][c] += b * bd.gamma * (yk[r] * yk[c] - sum_dk);
                        }
                    }
                }
                let dlt = w * (0.5 * self.ea * eps - 1.5 * self.ei * rx * g52);
                for i in 0..n {
                    let mut ui = [0.0; 4];
                    for (u, qr) in ui.iter_mut().zip(&qm).take(m + 1) {
                        *u = (0..=m).map(|c| qr[c] * d[c][i]).sum();
                    }
                    for j in i..n {
                        kk[i * n + j] += (0..=m).map(|r| ui[r] * d[r][j]).sum::<f64>();
                    }
                }
                let zeta = bd.rho.map(|r| b * r * al);
                for kx in 0..4 {
                    for l in 0..4 {
                        sg[kx][l] += 2.0 * dlt * h1[kx] * h1[l];
                        let anti = h1[kx] * h2[l] - h2[kx] * h1[l];
                        for a in 0..m {
                            sc[a][kx][l] += zeta[a] * anti;
                        }
                    }
                }
            }
        }
        f[..n].copy_from_slice(&fl[..n]);
        if let Some(k) = k {
            for i in 1..n {
                for j in 0..i {
                    kk[i * n + j] = kk[j * n + i];
                }
            }
            for kx in 0..4 {
                for l in 0..4 {
                    for a in 0..D {
                        kk[(D * kx + a) * n + D * l + a] += sg[kx][l];
                    }
                    for &(a, i, j, s) in levi_civita(D) {
                        kk[(D * kx + i) * n + D * l + j] += s * sc[a][kx][l];
                    }
                }
            }
            k[..n * n].copy_from_slice(&kk[..n * n]);
        }
        v
    }
}

impl<const D: usize> Element for Beam<D> {
    const KIND: &'static str = "beam";

    fn ndof(&self) -> usize {
        Self::N
    }

    fn mass(&self, m: &mut [f64]) -> bool {
        if self.rho_a == 0.0 {
            return false;
        }
        // Scalar 4x4 mass rho_a int h_k h_l dx by the Gauss rule (exact).
        let mut m4 = [[0.0; 4]; 4];
        for q in 0..NG {
            let (h, _, _) = hermite(gauss_xi(q), self.shape.length);
            for k in 0..4 {
                for l in 0..4 {
                    m4[k][l] += self.rho_a * self.shape.w[q] * h[k] * h[l];
                }
            }
        }
        let n = Self::N;
        m[..n * n].fill(0.0);
        for k in 0..4 {
            for l in 0..4 {
                for a in 0..D {
                    m[(D * k + a) * n + D * l + a] = m4[k][l];
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

    fn discrete_gradient(&self, lvl: &EvaluationPoint<'_>, f: &mut [f64], k: Option<&mut [f64]>) {
        // Gonzalez's discrete gradient between u0 = u_n and u1 = u_{n+1}.
        let (u0, u1) = (lvl.u_n, lvl.u_next);
        let grad = |um: &[f64], f: &mut [f64], k: Option<&mut [f64]>| {
            self.eval(um, f, k);
        };
        between([u0, u1], self.shape.length, f, k, grad, |g1| {
            let v1 = match g1 {
                Some(g1) => self.eval(u1, g1, None),
                None => self.energy(u1),
            };
            (self.energy(u0), v1)
        });
    }
}
