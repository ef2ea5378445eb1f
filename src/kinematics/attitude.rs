//! Attitude parametrizations of a 3-D rigid body: the one interface through
//! which body points, body-fixed axes, joints, loads, probes and output see a
//! body's rotation coordinates.
//!
//! * [`Attitude::EulerParameters`]: four coordinates `p = (p0, p1, p2, p3)`
//!   with `|p| = 1`; a body vector `s` is rotated by the homogeneous quadratic
//!   form `R(p) s` of [`crate::kinematics::rotation`] (constant Hessian in `p`).
//! * [`Attitude::Directors`]: nine coordinates `(d1, d2, d3)`, the body axes
//!   as spatial vectors (Betsch & Steinmann, "Constrained integration of
//!   rigid body dynamics", CMAME 191 (2001) 467–488), with
//!   `d_i . d_j = delta_ij`; a body vector is `s_i d_i`, linear in the
//!   coordinates (zero Hessian).
//!
//! The rotation coordinates of a body follow its centre of mass `(x, y, z)`
//! in its local DOF list.

use nalgebra::{Matrix3, Rotation3, UnitQuaternion};

use crate::kinematics::rotation;
use crate::kinematics::vec3::{cross, dot};

/// Most rotation coordinates of a 3-D body (directors: 9).
pub const MAX_ATTITUDE_COORDS: usize = 9;

/// Jacobian `d(R s)/dq_rot` as `jac[axis][k]` (only `k < ncoords` is used).
pub type AttitudeJacobian = [[f64; MAX_ATTITUDE_COORDS]; 3];

/// How a 3-D body's rotation is parametrized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Attitude {
    /// Euler parameters `(p0, p1, p2, p3)` (unit quaternion), 4 coordinates.
    #[default]
    EulerParameters,
    /// Directors `(d1, d2, d3)`: the body axes in space, 9 coordinates.
    Directors,
}

/// Director `i` of the director coordinates `q`.
fn director(q: &[f64], i: usize) -> [f64; 3] {
    [q[3 * i], q[3 * i + 1], q[3 * i + 2]]
}

impl Attitude {
    /// Number of rotation coordinates (4 or 9).
    pub fn ncoords(self) -> usize {
        match self {
            Attitude::EulerParameters => 4,
            Attitude::Directors => 9,
        }
    }

    /// Name used in model files (`euler`, `directors`).
    pub fn name(self) -> &'static str {
        match self {
            Attitude::EulerParameters => "euler",
            Attitude::Directors => "directors",
        }
    }

    /// The attitude of a model-file name.
    pub fn from_name(name: &str) -> Option<Attitude> {
        match name {
            "euler" => Some(Attitude::EulerParameters),
            "directors" => Some(Attitude::Directors),
            _ => None,
        }
    }

    /// The spatial vector of body vector `s`: `R(p) s` (quadratic in p) or
    /// `s_i d_i` (linear).
    pub fn rotate(self, q: &[f64], s: &[f64; 3]) -> [f64; 3] {
        match self {
            Attitude::EulerParameters => rotation::rotate(q, s),
            Attitude::Directors => {
                let mut r = [0.0; 3];
                for (i, si) in s.iter().enumerate() {
                    for (a, ra) in r.iter_mut().enumerate() {
                        *ra += si * q[3 * i + a];
                    }
                }
                r
            }
        }
    }

    /// `d(R s)/dq_rot` as `jac[axis][k]`.
    pub fn rotate_jacobian(self, q: &[f64], s: &[f64; 3]) -> AttitudeJacobian {
        let mut j = [[0.0; MAX_ATTITUDE_COORDS]; 3];
        match self {
            Attitude::EulerParameters => {
                let jr = rotation::rotate_jacobian(q, s);
                for a in 0..3 {
                    j[a][..4].copy_from_slice(&jr[a]);
                }
            }
            Attitude::Directors => {
                for (i, si) in s.iter().enumerate() {
                    for (a, row) in j.iter_mut().enumerate() {
                        row[3 * i + a] = *si;
                    }
                }
            }
        }
        j
    }

    /// Adds `scale * d^2 (w . R s)/dq_rot^2` into the square block at
    /// (`at`, `at`) of the row-major `h` (leading dimension `ld`); nothing for
    /// directors (linear in the coordinates).
    pub fn add_rotate_hessian(
        self,
        s: &[f64; 3],
        w: &[f64; 3],
        scale: f64,
        h: &mut [f64],
        ld: usize,
        at: usize,
    ) {
        if self == Attitude::EulerParameters {
            let b = rotation::rotate_hessian(s, w);
            for (i, row) in b.iter().enumerate() {
                for (j, x) in row.iter().enumerate() {
                    h[(at + i) * ld + at + j] += scale * x;
                }
            }
        }
    }

    /// `R^T x`: a spatial vector in body coordinates (`q` on its manifold).
    pub fn rotate_back(self, q: &[f64], x: &[f64; 3]) -> [f64; 3] {
        match self {
            Attitude::EulerParameters => rotation::rotate_back(q, x),
            Attitude::Directors => [0, 1, 2].map(|i| dot(&director(q, i), x)),
        }
    }

    /// Rotation coordinates of the unit quaternion `p` (first `ncoords`
    /// entries): `p` itself, or `d_i = R(p) e_i`.
    pub fn from_quaternion(self, p: &[f64; 4]) -> [f64; MAX_ATTITUDE_COORDS] {
        let mut q = [0.0; MAX_ATTITUDE_COORDS];
        match self {
            Attitude::EulerParameters => q[..4].copy_from_slice(p),
            Attitude::Directors => {
                for i in 0..3 {
                    let mut e = [0.0; 3];
                    e[i] = 1.0;
                    q[3 * i..3 * i + 3].copy_from_slice(&rotation::rotate(p, &e));
                }
            }
        }
        q
    }

    /// The rotation as a unit quaternion `(p0, p1, p2, p3)` with `p0 >= 0`
    /// for directors (nalgebra's conversion of the rotation matrix
    /// `[d1 d2 d3]`); the Euler parameters themselves otherwise.
    pub fn quaternion(self, q: &[f64]) -> [f64; 4] {
        match self {
            Attitude::EulerParameters => [q[0], q[1], q[2], q[3]],
            Attitude::Directors => {
                // Column c of the rotation is d_c.
                let m = Matrix3::from_column_slice(&q[..9]);
                let u = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(m));
                let p = [u.w, u.i, u.j, u.k];
                if p[0] < 0.0 {
                    p.map(|x| -x)
                } else {
                    p
                }
            }
        }
    }

    /// Rates of the rotation coordinates for the body angular velocity `w`
    /// (body axes): `pdot = 1/2 G(p)^T w`, or `ddot_i = omega x d_i` with the
    /// spatial `omega = w_k d_k`.
    pub fn rate_from_body_angular_velocity(
        self,
        q: &[f64],
        w: &[f64; 3],
    ) -> [f64; MAX_ATTITUDE_COORDS] {
        let mut r = [0.0; MAX_ATTITUDE_COORDS];
        match self {
            Attitude::EulerParameters => {
                r[..4].copy_from_slice(&rotation::rate_from_body_angular_velocity(q, w));
            }
            Attitude::Directors => {
                let omega = self.rotate(q, w);
                for i in 0..3 {
                    r[3 * i..3 * i + 3].copy_from_slice(&cross(&omega, &director(q, i)));
                }
            }
        }
        r
    }

    /// The matrix `W(q)` (3 x ncoords, as `w[axis][k]`) of the spatial
    /// angular velocity `omega = W(q) qdot`, **linear in q** (so
    /// `dW/dq_k = W(e_k)`): `2 E(p)` for Euler parameters
    /// ([`rotation::e_matrix`]), `1/2 [[d1 x] [d2 x] [d3 x]]` for directors
    /// (`omega = 1/2 sum_i d_i x ddot_i`). On the body's constraint manifold
    /// it equals [`Attitude::angular_velocity`]; off it the two differ (that
    /// one is cubic in p), and rows that are linear in the velocities
    /// (velocity-level joints) use this one for its simple derivatives.
    pub fn angular_velocity_matrix(self, q: &[f64]) -> AttitudeJacobian {
        let mut w = [[0.0; MAX_ATTITUDE_COORDS]; 3];
        match self {
            Attitude::EulerParameters => {
                let e = rotation::e_matrix(&nalgebra::Vector4::new(q[0], q[1], q[2], q[3]));
                for (a, row) in w.iter_mut().enumerate() {
                    for k in 0..4 {
                        row[k] = 2.0 * e[(a, k)];
                    }
                }
            }
            Attitude::Directors => {
                // (d x ddot)_a = eps_abc d_b ddot_c: column c of [d x] is d x e_c.
                for i in 0..3 {
                    let d = director(q, i);
                    for c in 0..3 {
                        let mut e = [0.0; 3];
                        e[c] = 1.0;
                        let col = cross(&d, &e);
                        for (a, row) in w.iter_mut().enumerate() {
                            row[3 * i + c] = 0.5 * col[a];
                        }
                    }
                }
            }
        }
        w
    }

    /// Spatial angular velocity: `R (2 G(p) pdot)`, or
    /// `omega = 1/2 sum_i d_i x ddot_i` (exact for orthonormal directors).
    pub fn angular_velocity(self, q: &[f64], qdot: &[f64]) -> [f64; 3] {
        match self {
            Attitude::EulerParameters => self.rotate(q, &rotation::body_angular_velocity(q, qdot)),
            Attitude::Directors => {
                let mut w = [0.0; 3];
                for i in 0..3 {
                    let c = cross(&director(q, i), &director(qdot, i));
                    for a in 0..3 {
                        w[a] += 0.5 * c[a];
                    }
                }
                w
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `W(q) qdot` is the spatial angular velocity on the manifold, for
    /// both attitudes (Euler-parameter rates with a component along p too:
    /// `E(p) p = 0`).
    #[test]
    fn angular_velocity_matrix_is_angular_velocity() {
        let n = (0.9_f64 * 0.9 + 0.3 * 0.3 + 0.2 * 0.2 + 0.25 * 0.25).sqrt();
        let p = [0.9 / n, 0.3 / n, -0.2 / n, 0.25 / n];
        let wb = [0.7, -1.3, 0.4];
        for att in [Attitude::EulerParameters, Attitude::Directors] {
            let q = att.from_quaternion(&p);
            let mut qdot = att.rate_from_body_angular_velocity(&q, &wb);
            if att == Attitude::EulerParameters {
                for k in 0..4 {
                    qdot[k] += 0.37 * q[k];
                }
            }
            let w = att.angular_velocity_matrix(&q);
            let nr = att.ncoords();
            let omega: Vec<f64> = (0..3)
                .map(|a| (0..nr).map(|k| w[a][k] * qdot[k]).sum())
                .collect();
            let expect = att.rotate(&q, &wb);
            for a in 0..3 {
                assert!(
                    (omega[a] - expect[a]).abs() < 1e-14,
                    "{att:?}: {omega:?} vs {expect:?}"
                );
            }
        }
    }

    #[test]
    fn quaternion_round_trip() {
        let cases = [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
            [0.5, -0.5, 0.5, 0.5],
            [0.9, 0.3, -0.2, 0.2449489742783178],
            [0.1, -0.7, 0.1, 0.7],
        ];
        for p in cases {
            let n = p.iter().map(|x: &f64| x * x).sum::<f64>().sqrt();
            let mut p = p.map(|x| x / n);
            if p[0] < 0.0 {
                p = p.map(|x| -x);
            }
            let d = Attitude::Directors.from_quaternion(&p);
            let back = Attitude::Directors.quaternion(&d);
            for k in 0..4 {
                assert!((back[k] - p[k]).abs() < 1e-14, "{p:?} -> {back:?}");
            }
            let s = [0.3, -1.2, 0.7];
            let (a, b) = (
                Attitude::Directors.rotate(&d, &s),
                Attitude::EulerParameters.rotate(&p, &s),
            );
            for k in 0..3 {
                assert!((a[k] - b[k]).abs() < 1e-14);
            }
        }
    }
}
