//! 3-D rigid bodies: in Euler parameters (Nikravesh 1988 §11.1; Haug 1989
//! §11.2), [`Rigid3d`], and in directors (Betsch & Steinmann 2001),
//! [`RigidDirectors`] (below).
//!
//! Local DOFs `q = (x, y, z, p0, p1, p2, p3)`: centre of mass and Euler
//! parameters; `|p| = 1` is the body's normalization joint, added by the model
//! builder. Kinetic energy `T = 1/2 m |rdot|^2 + 2 pdot^T G(p)^T J G(p) pdot`
//! (J the inertia tensor about the centre of mass in body axes, see
//! [`crate::rotation`]). The translational part is the constant mass `m I`;
//! Lagrange's equations give the rotational inertial force
//! `f_p = M_p(p) pddot + 8 G(pdot)^T J G(p) pdot`, `M_p = 4 G(p)^T J G(p)`
//! (with `G(p) x = -G(x) p` and `G(x) x = 0`), which the integrators evaluate
//! at the EOM level like any configuration-dependent inertia.
//! `M_p` has the null vector p; the normalization row `p^T` completes the
//! saddle-point matrix.

use nalgebra::{Matrix3, Matrix4, Vector4};

use super::{Element, RateForce, RateState};
use crate::rotation::{g_matrix, g_transpose_derivative};

/// A rigid body with mass `m` and body-axes inertia tensor `J` about its centre of mass.
#[derive(Debug, Clone)]
pub struct Rigid3d {
    mass: f64,
    inertia: Matrix3<f64>,
}

impl Rigid3d {
    /// A body of mass `mass` and inertia tensor `inertia` (row-major, symmetric).
    pub fn new(mass: f64, inertia: [[f64; 3]; 3]) -> Self {
        Rigid3d {
            mass,
            inertia: Matrix3::from_row_slice(&inertia.concat()),
        }
    }
}

fn vec4(x: &[f64]) -> Vector4<f64> {
    Vector4::new(x[0], x[1], x[2], x[3])
}

/// Writes the 4 x 4 block `b` at rows/columns 3..7 of the row-major 7 x 7 `out`.
fn put_block(out: &mut [f64], b: &Matrix4<f64>) {
    out.fill(0.0);
    for i in 0..4 {
        for j in 0..4 {
            out[(3 + i) * 7 + 3 + j] = b[(i, j)];
        }
    }
}

impl Element for Rigid3d {
    const KIND: &'static str = "rigid_body3d";
    const NONLINEAR_INERTIA: bool = true;

    fn ndof(&self) -> usize {
        7
    }

    fn mass(&self, m: &mut [f64]) -> bool {
        m.fill(0.0);
        for a in 0..3 {
            m[a * 7 + a] = self.mass;
        }
        true
    }

    fn potential(&self, _u: &[f64]) -> f64 {
        0.0
    }

    fn force(&self, _u: &[f64], f: &mut [f64], k: Option<&mut [f64]>) {
        f.fill(0.0);
        if let Some(k) = k {
            k.fill(0.0);
        }
    }

    fn inertia_force(&self, x: &RateState<'_>, out: &mut RateForce<'_>) {
        let (p, pd, pdd) = (vec4(&x.u[3..]), vec4(&x.v[3..]), vec4(&x.a[3..]));
        let j = &self.inertia;
        let (gp, gpd, gpdd) = (g_matrix(&p), g_matrix(&pd), g_matrix(&pdd));
        let jg = j * gp;
        let mp = 4.0 * gp.transpose() * jg;
        let w_v = jg * pd;
        let w_a = jg * pdd;
        let f = mp * pdd + 8.0 * gpd.transpose() * w_v;
        out.f.fill(0.0);
        out.f[3..7].copy_from_slice(f.as_slice());
        let c = 8.0 * (g_transpose_derivative(&w_v) + gpd.transpose() * jg);
        let k = 4.0 * (g_transpose_derivative(&w_a) - gp.transpose() * j * gpdd)
            - 8.0 * gpd.transpose() * j * gpd;
        put_block(out.m, &mp);
        put_block(out.c, &c);
        put_block(out.k, &k);
    }

    fn kinetic_energy(&self, u: &[f64], v: &[f64]) -> f64 {
        let w = g_matrix(&vec4(&u[3..])) * vec4(&v[3..]);
        2.0 * w.dot(&(self.inertia * w))
    }
}

/// A 3-D rigid body in directors (Betsch & Steinmann, CMAME 191 (2001)
/// 467–488): local DOFs `q = (r, d1, d2, d3)` (12), the centre of mass and
/// the body axes as spatial vectors, a material point `x = r + s_i d_i`. The
/// kinetic energy `T = 1/2 m |rdot|^2 + 1/2 E_ij ddot_i . ddot_j` has the
/// constant mass matrix `diag(m I3, E_ij I3)` with the Euler tensor about the
/// centre of mass `E = 1/2 tr(J) I - J` (body axes): no nonlinear inertia.
/// The six constraints `d_i . d_j = delta_ij` are the joint
/// [`crate::joint::DirectorConstraints`], added by the model builder.
#[derive(Debug, Clone)]
pub struct RigidDirectors {
    mass: f64,
    euler_tensor: Matrix3<f64>,
}

impl RigidDirectors {
    /// A body of mass `mass` and inertia tensor `inertia` (body axes, about
    /// the centre of mass; row-major, symmetric).
    pub fn new(mass: f64, inertia: [[f64; 3]; 3]) -> Self {
        let j = Matrix3::from_row_slice(&inertia.concat());
        RigidDirectors {
            mass,
            euler_tensor: 0.5 * j.trace() * Matrix3::identity() - j,
        }
    }

    /// The Euler tensor `E = 1/2 tr(J) I - J`.
    pub fn euler_tensor(&self) -> [[f64; 3]; 3] {
        [0, 1, 2].map(|i| [0, 1, 2].map(|j| self.euler_tensor[(i, j)]))
    }
}

impl Element for RigidDirectors {
    const KIND: &'static str = "rigid_body3d_directors";

    fn ndof(&self) -> usize {
        12
    }

    fn mass(&self, m: &mut [f64]) -> bool {
        m.fill(0.0);
        for a in 0..3 {
            m[a * 12 + a] = self.mass;
        }
        for i in 0..3 {
            for j in 0..3 {
                for a in 0..3 {
                    m[(3 + 3 * i + a) * 12 + 3 + 3 * j + a] = self.euler_tensor[(i, j)];
                }
            }
        }
        true
    }

    fn potential(&self, _u: &[f64]) -> f64 {
        0.0
    }

    fn force(&self, _u: &[f64], f: &mut [f64], k: Option<&mut [f64]>) {
        f.fill(0.0);
        if let Some(k) = k {
            k.fill(0.0);
        }
    }
}
