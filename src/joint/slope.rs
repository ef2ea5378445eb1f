//! Slope joint: the slope vector s = dr/dx of a beam node stays parallel to a
//! direction d.
//!
//! * Fixed ground direction (a clamp, together with a ground pin of the node's
//!   position): `Phi_i = n_i . s` for the D - 1 unit normals n_i of d (in the
//!   plane n = (d_y, -d_x), i.e. `Phi = s x d = s_x d_y - s_y d_x`; in space
//!   two orthonormal vectors perpendicular to d). Linear in s.
//! * A direction fixed in a planar rigid body, `d = R(theta) d0` (a slope
//!   attachment; with a revolute joint at the same point it welds the beam end
//!   to the body): `Phi = s x d`, one row.
//! * A direction fixed in a 3-D body: `Phi_i = s . R(q) a_i` (any
//!   [`Attitude`])
//!   with `a_1, a_2` the body-frame normals of d0 (two rows; with a spherical
//!   joint at the same point it attaches the beam end to the body, torsion
//!   being absent from the beam).
//!
//! The length of s is left to the beam's axial strain.
//!
//! Local DOFs: `[s]` (ground, D components), `[sx, sy, theta]` (planar body)
//! or `[sx, sy, sz, q_rot]` (3-D body: its 4 or 9 rotation coordinates).

use super::Joint;
use crate::kinematics::attitude::Attitude;
use crate::kinematics::vec3::cross;

/// Where the reference direction lives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SlopeTarget {
    /// A fixed direction in the plane.
    Ground([f64; 2]),
    /// A fixed direction in space (3-D beam nodes).
    Ground3d([f64; 3]),
    /// A direction d0 in the frame of a planar rigid body (its angle is the last local DOF).
    Body([f64; 2]),
    /// A direction d0 in the frame of a 3-D body (its rotation coordinates
    /// are the last local DOFs).
    Body3d([f64; 3], Attitude),
}

/// Keeps a beam node's slope parallel to a ground or body-fixed direction.
#[derive(Debug, Clone)]
pub struct Slope {
    target: SlopeTarget,
    /// Unit normals of a ground direction (rows of Phi = N s).
    normals: [[f64; 3]; 2],
}

fn unit<const K: usize>(d: [f64; K]) -> [f64; K] {
    let n = d.iter().map(|x| x * x).sum::<f64>().sqrt();
    d.map(|x| x / n)
}

impl Slope {
    /// A slope joint; the direction is normalized.
    pub fn new(target: SlopeTarget) -> Self {
        let mut normals = [[0.0; 3]; 2];
        let target = match target {
            SlopeTarget::Ground(d) => {
                let d = unit(d);
                normals[0] = [d[1], -d[0], 0.0];
                SlopeTarget::Ground(d)
            }
            SlopeTarget::Ground3d(d) | SlopeTarget::Body3d(d, _) => {
                let d = unit(d);
                // n1 = d x e_k / |d x e_k| with e_k the axis least aligned with d
                // (|d x e_k| >= sqrt(2/3)), n2 = d x n1 (body frame for Body3d).
                let k = (0..3)
                    .min_by(|&a, &b| d[a].abs().total_cmp(&d[b].abs()))
                    .unwrap_or(0);
                let mut e = [0.0; 3];
                e[k] = 1.0;
                let n1 = unit(cross(&d, &e));
                normals = [n1, cross(&d, &n1)];
                match target {
                    SlopeTarget::Body3d(_, att) => SlopeTarget::Body3d(d, att),
                    _ => SlopeTarget::Ground3d(d),
                }
            }
            SlopeTarget::Body(d) => SlopeTarget::Body(unit(d)),
        };
        Slope { target, normals }
    }

    /// Current direction d of a body target.
    fn body_direction(d0: [f64; 2], theta: f64) -> [f64; 2] {
        let (s, c) = theta.sin_cos();
        [c * d0[0] - s * d0[1], s * d0[0] + c * d0[1]]
    }
}

impl Joint for Slope {
    fn kind(&self) -> &'static str {
        "slope"
    }

    fn rows(&self) -> usize {
        match self.target {
            SlopeTarget::Ground3d(_) | SlopeTarget::Body3d(..) => 2,
            SlopeTarget::Ground(_) | SlopeTarget::Body(_) => 1,
        }
    }

    fn ndof(&self) -> usize {
        match self.target {
            SlopeTarget::Ground(_) => 2,
            SlopeTarget::Ground3d(_) | SlopeTarget::Body(_) => 3,
            SlopeTarget::Body3d(_, att) => 3 + att.ncoords(),
        }
    }

    fn phi(&self, u: &[f64], _t: f64, phi: &mut [f64]) {
        match self.target {
            SlopeTarget::Body(d0) => {
                let d = Self::body_direction(d0, u[2]);
                phi[0] = u[0] * d[1] - u[1] * d[0];
            }
            SlopeTarget::Body3d(_, att) => {
                for (p, a) in phi.iter_mut().zip(&self.normals) {
                    let n = att.rotate(&u[3..], a);
                    *p = (0..3).map(|i| u[i] * n[i]).sum();
                }
            }
            _ => {
                let n = self.ndof();
                for (p, nr) in phi.iter_mut().zip(&self.normals[..self.rows()]) {
                    *p = (0..n).map(|i| nr[i] * u[i]).sum();
                }
            }
        }
    }

    fn jacobian(&self, u: &[f64], _t: f64, b: &mut [f64]) {
        match self.target {
            SlopeTarget::Body(d0) => {
                let d = Self::body_direction(d0, u[2]);
                b[0] = d[1];
                b[1] = -d[0];
                // d' = (-d_y, d_x): dPhi/dtheta = s . d
                b[2] = u[0] * d[0] + u[1] * d[1];
            }
            SlopeTarget::Body3d(_, att) => {
                let n = 3 + att.ncoords();
                for (row, a) in b.chunks_mut(n).zip(&self.normals) {
                    row[..3].copy_from_slice(&att.rotate(&u[3..], a));
                    let j = att.rotate_jacobian(&u[3..], a);
                    for (k, x) in row[3..n].iter_mut().enumerate() {
                        *x = (0..3).map(|i| u[i] * j[i][k]).sum();
                    }
                }
            }
            _ => {
                let n = self.ndof();
                for (row, nr) in b.chunks_mut(n).zip(&self.normals[..self.rows()]) {
                    row.copy_from_slice(&nr[..n]);
                }
            }
        }
    }

    fn add_curvature(&self, u: &[f64], _t: f64, w: &[f64], scale: f64, h: &mut [f64]) {
        // Ground targets are linear in s: no curvature.
        if let SlopeTarget::Body3d(_, att) = self.target {
            let s3 = [u[0], u[1], u[2]];
            let nr = att.ncoords();
            let n = 3 + nr;
            for (&wr, a) in w.iter().zip(&self.normals) {
                let c = scale * wr;
                // d2/ds dq = d(R a)/dq; d2/dq2 = Hessian of s . R(q) a.
                let j = att.rotate_jacobian(&u[3..], a);
                for i in 0..3 {
                    for k in 0..nr {
                        h[i * n + 3 + k] += c * j[i][k];
                        h[(3 + k) * n + i] += c * j[i][k];
                    }
                }
                att.add_rotate_hessian(a, &s3, c, h, n, 3);
            }
        }
        if let SlopeTarget::Body(d0) = self.target {
            let d = Self::body_direction(d0, u[2]);
            let c = scale * w[0];
            // d2Phi/ds dtheta = d; d2Phi/dtheta2 = -(s x d).
            h[2] += c * d[0];
            h[3 + 2] += c * d[1];
            h[6] += c * d[0];
            h[6 + 1] += c * d[1];
            h[8] -= c * (u[0] * d[1] - u[1] * d[0]);
        }
    }
}
