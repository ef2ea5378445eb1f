//! 3-D rigid bodies: in Euler parameters (Nikravesh 1988 §11.1; Haug 1989
//! §11.2), [`Rigid3d`], and in directors (Betsch & Steinmann 2001),
//! [`RigidDirectors`] (below).
//!
//! Local DOFs `q = (x, y, z, p0, p1, p2, p3)`: centre of mass and Euler
//! parameters; `|p| = 1` is the body's normalization joint, added by the model
//! builder. Kinetic energy `T = 1/2 m |rdot|^2 + 2 pdot^T G(p)^T J G(p) pdot`
//! (J the inertia tensor about the centre of mass in body axes, see
//! [`crate::kinematics::rotation`]). The translational part is the constant mass `m I`;
//! Lagrange's equations give the rotational inertial force
//! `f_p = M_p(p) pddot + 8 G(pdot)^T J G(p) pdot`, `M_p = 4 G(p)^T J G(p)`
//! (with `G(p) x = -G(x) p` and `G(x) x = 0`), which the integrators evaluate
//! at the EOM level like any configuration-dependent inertia.
//! `M_p` has the null vector p; the normalization row `p^T` completes the
//! saddle-point matrix. On the exact motion the normalization multiplier is
//! `-p . f_p = 2 w'.J w'` (`p^T G(pdot)^T J G(p) pdot = -|G(p) pdot|_J^2`).
//!
//! **Scale-invariant kinetic energy** ([`EulerKinetic::ScaleInvariant`]):
//! `T~ = T(p, pdot) / s^2`, `s = p.p`, the kinetic energy of the rotation
//! `A(p/|p|)` for any `p != 0` (its body angular velocity is
//! `2 G(p) pdot / s`; Sherif, Nachbagauer & Steiner, Nonlinear Dyn. 81 (2015)
//! 343–352, on the forms of these equations and their multipliers). Its
//! Lagrange equations are
//! `f~_p = f_p / s^2 - 4 (p.pdot) M_p pdot / s^3 + 4 T p / s^3`, with
//! `p . f~_p = 0` identically (`p . f_p = -4 T`): torque-free, the
//! normalization reaction vanishes (Borri and Trainelli: "zero reactions corresponding
//! to the kinematic constraint"). On `|p| = 1`, `p.pdot = 0` it is
//! `f_p + 2 (w'.J w') p`, a force along the normalization row only: the
//! same motion, the multiplier shifted by `-2 w'.J w'`.
//!
//! **Energy-consistent midpoint force.** With the midpoint weights the plain
//! `f_p(p~, v~, a~)` does not balance the kinetic energy: `dt v~ . f_p` differs
//! from `T_{n+1} - T_n` by O(dt^3) per step (5.9e-7 relative over the 2 s heavy
//! top). In such steps the body adds `alpha c`, `c = P v~`, with
//! `alpha = ((T_{n+1} - T_n)/dt - v~ . f_p) / (v~ . c)`, so that
//! `(p_{n+1} - p_n) . (f_p + alpha c) = T_{n+1} - T_n` exactly. `P` projects out
//! `p~` (the normalization joint's direction) and the generators `p~ (x) (0, a)`
//! of the body's rotational symmetries (a: the symmetry axis of an
//! axisymmetric inertia, every axis of a spherical one): the plain midpoint
//! force conserves the momenta of those symmetries (the spin of a symmetric
//! top) and the correction does no work along them. `alpha` is O(dt^2). Not
//! conserved: the spatial angular momentum of a free body (with the midpoint
//! kinematics on Euler parameters no force conserves it together with the
//! energy; docs/theory/rigid3d.md). A spherical inertia leaves no direction
//! (P = 0): no correction. Below `v~ . c <= (FLOOR max(|v_n|, |v_{n+1}|))^2`
//! the correction is dropped, as in Gonzalez's discrete gradient.

use nalgebra::{Matrix3, Matrix4, SymmetricEigen, Vector3, Vector4};

use super::{Element, RateForce, RateState, StepStart};
use crate::kinematics::rotation::{g_matrix, g_transpose_derivative};

/// Relative size `|P v~| / max(|v_n|, |v_{n+1}|)` below which the energy
/// correction is dropped.
const FLOOR: f64 = 1e-5;

/// Relative gap between principal moments below which they count as equal.
const EQUAL_MOMENTS: f64 = 1e-12;

/// How the rotational kinetic energy of an Euler-parameter body extends off
/// `|p| = 1` (module doc). Both give the same motion on `|p| = 1`; they
/// differ in the normalization multiplier.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EulerKinetic {
    /// `T = 2 pdot^T G(p)^T J G(p) pdot` (Nikravesh 1988 §11.1; Haug 1989
    /// §11.2): normalization multiplier `2 w'.J w'`.
    #[default]
    Quadratic,
    /// `T = 2 pdot^T G(p)^T J G(p) pdot / (p.p)^2`: invariant under scaling
    /// of p, zero normalization reaction for a torque-free body.
    ScaleInvariant,
}

impl EulerKinetic {
    /// The form named `name` in model files (`quadratic`, `scale_invariant`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "quadratic" => Some(EulerKinetic::Quadratic),
            "scale_invariant" => Some(EulerKinetic::ScaleInvariant),
            _ => None,
        }
    }
}

/// A rigid body with mass `m` and body-axes inertia tensor `J` about its centre of mass.
#[derive(Debug, Clone)]
pub struct Rigid3d {
    mass: f64,
    inertia: Matrix3<f64>,
    /// Rotational symmetry axes of `J` in body axes (none, one, or three).
    symmetry: Vec<Vector3<f64>>,
    kinetic: EulerKinetic,
}

impl Rigid3d {
    /// A body of mass `mass` and inertia tensor `inertia` (row-major, symmetric).
    pub fn new(mass: f64, inertia: [[f64; 3]; 3]) -> Self {
        let inertia = Matrix3::from_row_slice(&inertia.concat());
        Rigid3d {
            mass,
            inertia,
            symmetry: symmetry_axes(&inertia),
            kinetic: EulerKinetic::Quadratic,
        }
    }

    /// The body with the kinetic-energy form `kinetic`.
    pub fn with_kinetic_energy(mut self, kinetic: EulerKinetic) -> Self {
        self.kinetic = kinetic;
        self
    }

    /// `1/s` with `s = p.p` for the scale-invariant form, else `None`.
    fn inverse_scale(&self, p: &Vector4<f64>) -> Option<f64> {
        (self.kinetic == EulerKinetic::ScaleInvariant).then(|| 1.0 / p.norm_squared())
    }

    /// Turns the quadratic form's force `rf` at `(p, pdot)` into the
    /// scale-invariant one (module doc) with its derivatives:
    /// `f~ = f/s^2 - 4 sig pi/s^3 + 4 T p/s^3`, `sig = p.pdot`,
    /// `pi = M_p pdot`, `T = pi.pdot/2`.
    fn scale_invariant(&self, p: &Vector4<f64>, pd: &Vector4<f64>, rf: &mut RotationalForce) {
        let Some(r) = self.inverse_scale(p) else {
            return;
        };
        let (r2, r3, r4) = (r * r, r * r * r, r * r * r * r);
        let j = &self.inertia;
        let (gp, gpd) = (g_matrix(p), g_matrix(pd));
        let pi = rf.m * pd;
        let t = 0.5 * pi.dot(pd);
        let sig = p.dot(pd);
        // d(pi)/dp and dT/dp.
        let pi_p = 4.0 * (g_transpose_derivative(&(j * gp * pd)) - gp.transpose() * j * gpd);
        let t_p = -4.0 * gpd.transpose() * (j * (gp * pd));
        let RotationalForce { f, k, c, m } = rf;
        *k =
            *k * r2 - 4.0 * r3 * *f * p.transpose() - 4.0 * r3 * (pi * pd.transpose() + sig * pi_p)
                + 24.0 * r4 * sig * pi * p.transpose()
                + 4.0 * r3 * (p * t_p.transpose() + t * Matrix4::identity())
                - 24.0 * r4 * t * p * p.transpose();
        *c = *c * r2 - 4.0 * r3 * (pi * p.transpose() + sig * *m) + 4.0 * r3 * p * pi.transpose();
        *f = *f * r2 - 4.0 * r3 * sig * pi + 4.0 * r3 * t * p;
        *m *= r2;
    }

    /// Adds the energy correction `alpha c` (module doc) and its derivatives
    /// to the rotational force `rf` at the midpoint state `(p, v, a)` of a step
    /// of size `dt` from `p0`.
    fn add_energy_correction(
        &self,
        (p, v, a): (&Vector4<f64>, &Vector4<f64>, &Vector4<f64>),
        p0: &Vector4<f64>,
        dt: f64,
        rf: &mut RotationalForce,
    ) {
        let RotationalForce { f, k, c: c_mat, m } = rf;
        let r = p.norm();
        if r == 0.0 {
            return;
        }
        // Orthonormal directions removed by P: e_k = A_k p / r with A_0 = I
        // and A_k the symmetry generators; s_k = e_k . v.
        let count = 1 + self.symmetry.len();
        let mut gens = [Matrix4::identity(); 4];
        for (g, axis) in gens[1..].iter_mut().zip(&self.symmetry) {
            *g = right_product(axis);
        }
        let gens = &gens[..count];
        let mut e = [Vector4::zeros(); 4];
        let mut s = [0.0; 4];
        let mut c = *v;
        for ((ek, sk), g) in e.iter_mut().zip(&mut s).zip(gens) {
            *ek = g * p / r;
            *sk = ek.dot(v);
            c -= *sk * *ek;
        }
        let d = v.dot(&c);
        let (p1, v0, v1) = (2.0 * p - p0, v - 0.5 * dt * a, v + 0.5 * dt * a);
        // Relative to the step's velocities: an iterate with v~ ~ 0 (the
        // d-form's predictor u_{n+1} = u_n) must not be corrected.
        if d <= (FLOOR * v0.norm().max(v1.norm())).powi(2) {
            return;
        }
        let (t0, pi0) = self.rotational_energy(p0, &v0);
        let (t1, pi1) = self.rotational_energy(&p1, &v1);
        let n = (t1 - t0) / dt - v.dot(f);
        let alpha = n / d;
        // Gradients of n and d.
        let dn_dp = 2.0 / dt * self.energy_p_gradient(&p1, &v1) - k.transpose() * v;
        let dn_dv = (pi1 - pi0) / dt - *f - c_mat.transpose() * v;
        let dn_da = 0.5 * (pi1 + pi0) - m.transpose() * v;
        let e0 = e[0];
        let mut dd_dp = Vector4::zeros();
        let mut dc_dp = Matrix4::zeros();
        let mut proj = Matrix4::identity();
        for ((g, ek), sk) in gens.iter().zip(&e).zip(&s) {
            let ds = (g.transpose() * v - *sk * e0) / r;
            let de = (g - ek * e0.transpose()) / r;
            dd_dp -= 2.0 * *sk * ds;
            dc_dp -= ek * ds.transpose() + *sk * de;
            proj -= ek * ek.transpose();
        }
        *k += c * (dn_dp - alpha * dd_dp).transpose() / d + alpha * dc_dp;
        *c_mat += c * (dn_dv - 2.0 * alpha * c).transpose() / d + alpha * proj;
        *m += c * dn_da.transpose() / d;
        *f += alpha * c;
    }

    /// Rotational kinetic energy `T = 2 w.J w`, `w = G(p) v`, and
    /// `dT/dv = 4 G^T J w` (both over `s^2` in the scale-invariant form).
    fn rotational_energy(&self, p: &Vector4<f64>, v: &Vector4<f64>) -> (f64, Vector4<f64>) {
        let gp = g_matrix(p);
        let jw = self.inertia * (gp * v);
        let r2 = self.inverse_scale(p).map_or(1.0, |r| r * r);
        (2.0 * r2 * (gp * v).dot(&jw), 4.0 * r2 * gp.transpose() * jw)
    }

    /// `dT/dp = -4 G(v)^T J G(p) v` (scale-invariant: that `/ s^2 - 4 T p / s^3`).
    fn energy_p_gradient(&self, p: &Vector4<f64>, v: &Vector4<f64>) -> Vector4<f64> {
        let gpv = g_matrix(p) * v;
        let grad = -4.0 * g_matrix(v).transpose() * (self.inertia * gpv);
        match self.inverse_scale(p) {
            None => grad,
            Some(r) => r * r * grad - 8.0 * r * r * r * gpv.dot(&(self.inertia * gpv)) * p,
        }
    }
}

/// The rotational part of the inertial force and its derivatives with respect
/// to p, pdot and pddot.
struct RotationalForce {
    f: Vector4<f64>,
    k: Matrix4<f64>,
    c: Matrix4<f64>,
    m: Matrix4<f64>,
}

/// The rotational symmetry axes of an inertia tensor: none for three distinct
/// principal moments, the distinct one's axis when two are equal, the three
/// coordinate axes when all are.
fn symmetry_axes(j: &Matrix3<f64>) -> Vec<Vector3<f64>> {
    let eig = SymmetricEigen::new(*j);
    let l = eig.eigenvalues;
    let scale = l.amax().max(f64::MIN_POSITIVE);
    let same = |a: usize, b: usize| (l[a] - l[b]).abs() <= EQUAL_MOMENTS * scale;
    match (same(0, 1), same(1, 2), same(0, 2)) {
        (true, true, _) | (true, _, true) | (_, true, true) => {
            vec![Vector3::x(), Vector3::y(), Vector3::z()]
        }
        (true, false, false) => vec![eig.eigenvectors.column(2).normalize()],
        (false, true, false) => vec![eig.eigenvectors.column(0).normalize()],
        (false, false, true) => vec![eig.eigenvectors.column(1).normalize()],
        (false, false, false) => Vec::new(),
    }
}

/// The matrix of `p -> p (x) (0, a)` (quaternion product; a body rotation
/// generator): `(-e.a, p0 a + e x a)` for `p = (p0, e)`. Skew-symmetric, and
/// `|p (x) (0, a)| = |p| |a|`.
fn right_product(a: &Vector3<f64>) -> Matrix4<f64> {
    Matrix4::new(
        0.0, -a[0], -a[1], -a[2], //
        a[0], 0.0, a[2], -a[1], //
        a[1], -a[2], 0.0, a[0], //
        a[2], a[1], -a[0], 0.0,
    )
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

    fn inertia_force(&self, x: &RateState<'_>, out: &mut RateForce<'_>) {
        let (p, pd, pdd) = (vec4(&x.u[3..]), vec4(&x.v[3..]), vec4(&x.a[3..]));
        let j = &self.inertia;
        let (gp, gpd, gpdd) = (g_matrix(&p), g_matrix(&pd), g_matrix(&pdd));
        let jg = j * gp;
        let mp = 4.0 * gp.transpose() * jg;
        let w_v = jg * pd;
        let w_a = jg * pdd;
        let mut rf = RotationalForce {
            f: mp * pdd + 8.0 * gpd.transpose() * w_v,
            k: 4.0 * (g_transpose_derivative(&w_a) - gp.transpose() * j * gpdd)
                - 8.0 * gpd.transpose() * j * gpd,
            c: 8.0 * (g_transpose_derivative(&w_v) + gpd.transpose() * jg),
            m: mp,
        };
        self.scale_invariant(&p, &pd, &mut rf);
        if let Some(StepStart { u_n, dt }) = x.midpoint {
            let p0 = vec4(&u_n[3..]);
            self.add_energy_correction((&p, &pd, &pdd), &p0, dt, &mut rf);
        }
        out.f.fill(0.0);
        out.f[3..7].copy_from_slice(rf.f.as_slice());
        put_block(out.m, &rf.m);
        put_block(out.c, &rf.c);
        put_block(out.k, &rf.k);
    }

    fn kinetic_energy(&self, u: &[f64], v: &[f64]) -> f64 {
        self.rotational_energy(&vec4(&u[3..]), &vec4(&v[3..])).0
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
}
