//! The rolling disk (Chin §4.6; `docs/theory/nonholonomic.md`): a thin
//! disk of radius `r`, a 3-D rigid body whose symmetry axis is the body
//! vector `s`, rolling without slipping on the plane `z = h` (up = +z).
//!
//! Local DOFs of both joints: the body's `(x, y, z, rotation coordinates)`
//! (Euler parameters or directors, [`Attitude`]). With the world axis
//! `a = R(q) s` and `k = a . e_z`, the contact point (the lowest rim point) is
//! at `x_c + rho`, `rho = -r w/|w|`, `w = e_z - k a` (the unit downward
//! direction in the disk plane, times r).
//!
//! * [`DiskContact`], one position-level row: the lowest rim point touches
//!   the plane, `Phi = z_c - r sqrt(1 - k^2) - h`.
//! * [`DiskRolling`], two velocity-level rows: the x and y components of the
//!   velocity of the material point at the contact,
//!   `v_c + omega x rho = 0`, with the spatial angular velocity
//!   `omega = W(q) qdot` (linear in q, [`Attitude::angular_velocity_matrix`]:
//!   `2 E(p) pdot` for Euler parameters). Row j (j = x, y) is
//!   `A_j = [e_j^T, (rho x e_j)^T W(q)]` (since `e_j . (omega x rho) =
//!   omega . (rho x e_j)`), and `A^T w = [m; W(q)^T (rho x m)]` with
//!   `m = (w_x, w_y, 0)`, whose derivative is the curvature
//!   `d(A^T w)/dq_l = [0; W(e_l)^T (rho x m) + W(q)^T (drho/dq_l x m)]`.
//!
//! The vertical velocity of the contact point is the contact row's rate; both
//! joints are scleronomic (`a_t = 0`). Singular when the disk lies flat
//! (`|w| = 0`, `k = +-1`).

use super::{ConstraintLevel, Joint};
use crate::kinematics::attitude::{Attitude, AttitudeJacobian, MAX_ATTITUDE_COORDS};
use crate::kinematics::vec3::cross;

/// Shape and support of a rolling disk.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiskGeometry {
    /// Radius r (> 0).
    pub radius: f64,
    /// Symmetry axis in body coordinates (unit).
    pub axis: [f64; 3],
    /// Height h of the supporting plane z = h.
    pub height: f64,
    /// The body's rotation coordinates.
    pub attitude: Attitude,
}

/// Contact geometry at one configuration (rotation coordinates `q`).
struct Contact {
    /// Contact offset `rho = x_contact - x_c`.
    rho: [f64; 3],
    /// `drho/dq` as `jrho[axis][k]`.
    jrho: AttitudeJacobian,
}

impl DiskGeometry {
    /// Number of local DOFs (3 + rotation coordinates).
    pub fn ndof(&self) -> usize {
        3 + self.attitude.ncoords()
    }

    /// The world axis `a = R(q) s` and `da/dq`.
    fn axis_z(&self, q: &[f64]) -> ([f64; 3], AttitudeJacobian) {
        (
            self.attitude.rotate(q, &self.axis),
            self.attitude.rotate_jacobian(q, &self.axis),
        )
    }

    /// The contact offset `rho` and its derivative at rotation coordinates `q`.
    fn contact(&self, q: &[f64]) -> Contact {
        let nr = self.attitude.ncoords();
        let (a, ja) = self.axis_z(q);
        let k = a[2];
        // w = e_z - k a, dw/dq = -(a dk/dq + k da/dq).
        let w = [-k * a[0], -k * a[1], 1.0 - k * a[2]];
        let mut jw = [[0.0; MAX_ATTITUDE_COORDS]; 3];
        for i in 0..3 {
            for l in 0..nr {
                jw[i][l] = -(a[i] * ja[2][l] + k * ja[i][l]);
            }
        }
        let nw = (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt();
        let wh = [w[0] / nw, w[1] / nw, w[2] / nw];
        let r = self.radius;
        let rho = [-r * wh[0], -r * wh[1], -r * wh[2]];
        // drho/dq = -(r/|w|) (I - wh wh^T) dw/dq.
        let mut jrho = [[0.0; MAX_ATTITUDE_COORDS]; 3];
        for l in 0..nr {
            let wj: f64 = (0..3).map(|i| wh[i] * jw[i][l]).sum();
            for i in 0..3 {
                jrho[i][l] = -(r / nw) * (jw[i][l] - wh[i] * wj);
            }
        }
        Contact { rho, jrho }
    }

    /// `sqrt(1 - k^2)` of the contact row, with `k = a . e_z`.
    fn lean(k: f64) -> f64 {
        (1.0 - k * k).sqrt()
    }

    /// Position of the contact point (the lowest rim point) for the body's
    /// local DOFs `u` (centre of mass, rotation coordinates).
    pub fn contact_point(&self, u: &[f64]) -> [f64; 3] {
        let c = self.contact(&u[3..]);
        [u[0] + c.rho[0], u[1] + c.rho[1], u[2] + c.rho[2]]
    }
}

/// The holonomic row of a rolling disk: the lowest rim point is on the plane,
/// `Phi = z_c - r sqrt(1 - k^2) - h` (module doc).
#[derive(Debug, Clone)]
pub struct DiskContact(pub DiskGeometry);

impl Joint for DiskContact {
    fn kind(&self) -> &'static str {
        "rolling_disk"
    }

    fn rows(&self) -> usize {
        1
    }

    fn ndof(&self) -> usize {
        self.0.ndof()
    }

    fn phi(&self, u: &[f64], _t: f64, phi: &mut [f64]) {
        let g = &self.0;
        let k = g.attitude.rotate(&u[3..], &g.axis)[2];
        phi[0] = u[2] - g.radius * DiskGeometry::lean(k) - g.height;
    }

    fn jacobian(&self, u: &[f64], _t: f64, b: &mut [f64]) {
        let g = &self.0;
        let n = g.ndof();
        let (a, ja) = g.axis_z(&u[3..]);
        let k = a[2];
        // d(-r sqrt(1 - k^2))/dk = r k / sqrt(1 - k^2).
        let f1 = g.radius * k / DiskGeometry::lean(k);
        b[..n].fill(0.0);
        b[2] = 1.0;
        for l in 0..n - 3 {
            b[3 + l] = f1 * ja[2][l];
        }
    }

    fn add_curvature(&self, u: &[f64], _t: f64, w: &[f64], scale: f64, h: &mut [f64]) {
        let g = &self.0;
        let n = g.ndof();
        let (a, ja) = g.axis_z(&u[3..]);
        let k = a[2];
        let s = DiskGeometry::lean(k);
        let f1 = g.radius * k / s;
        let f2 = g.radius / (s * s * s);
        let c = scale * w[0];
        for i in 0..n - 3 {
            for j in 0..n - 3 {
                h[(3 + i) * n + 3 + j] += c * f2 * ja[2][i] * ja[2][j];
            }
        }
        g.attitude
            .add_rotate_hessian(&g.axis, &[0.0, 0.0, 1.0], c * f1, h, n, 3);
    }
}

/// The two velocity-level rows of a rolling disk: no slip in x and y,
/// `(v_c + omega x rho)_{x,y} = 0` (module doc).
#[derive(Debug, Clone)]
pub struct DiskRolling(pub DiskGeometry);

impl Joint for DiskRolling {
    fn kind(&self) -> &'static str {
        "rolling_disk"
    }

    fn level(&self) -> ConstraintLevel {
        ConstraintLevel::Velocity
    }

    fn rows(&self) -> usize {
        2
    }

    fn ndof(&self) -> usize {
        self.0.ndof()
    }

    fn phi(&self, _u: &[f64], _t: f64, phi: &mut [f64]) {
        phi[..2].fill(0.0);
    }

    fn jacobian(&self, u: &[f64], _t: f64, b: &mut [f64]) {
        let g = &self.0;
        let n = g.ndof();
        let q = &u[3..];
        let c = g.contact(q);
        let wm = g.attitude.angular_velocity_matrix(q);
        b[..2 * n].fill(0.0);
        for j in 0..2 {
            let mut e = [0.0; 3];
            e[j] = 1.0;
            let x = cross(&c.rho, &e);
            b[j * n + j] = 1.0;
            for l in 0..n - 3 {
                b[j * n + 3 + l] = (0..3).map(|i| x[i] * wm[i][l]).sum();
            }
        }
    }

    fn add_curvature(&self, u: &[f64], _t: f64, w: &[f64], scale: f64, h: &mut [f64]) {
        let g = &self.0;
        let n = g.ndof();
        let nr = n - 3;
        let q = &u[3..];
        let c = g.contact(q);
        let wm = g.attitude.angular_velocity_matrix(q);
        let m = [w[0], w[1], 0.0];
        let x = cross(&c.rho, &m);
        let mut el = [0.0; MAX_ATTITUDE_COORDS];
        for l in 0..nr {
            // W(e_l)^T (rho x m) + W(q)^T (drho/dq_l x m).
            el[l] = 1.0;
            let wl = g.attitude.angular_velocity_matrix(&el[..nr]);
            el[l] = 0.0;
            let dx = cross(&[c.jrho[0][l], c.jrho[1][l], c.jrho[2][l]], &m);
            for p in 0..nr {
                let d: f64 = (0..3).map(|i| wl[i][p] * x[i] + wm[i][p] * dx[i]).sum();
                h[(3 + p) * n + 3 + l] += scale * d;
            }
        }
    }
}
