//! Slope joint: the slope vector s = dr/dx of a planar beam node stays
//! parallel to a direction d (one row, `Phi = s x d = s_x d_y - s_y d_x`).
//!
//! d is either a fixed ground direction (a clamp, together with a ground pin of
//! the node's position) or a direction fixed in a planar rigid body,
//! `d = R(theta) d0` (a slope attachment; with a revolute joint at the same
//! point it welds the beam end to the body). The length of s is left to the
//! beam's axial strain.
//!
//! Local DOFs: `[sx, sy]` (ground) or `[sx, sy, theta]` (body).

use super::Joint;

/// Where the reference direction lives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SlopeTarget {
    /// A fixed unit direction in space.
    Ground([f64; 2]),
    /// A unit direction d0 in the frame of a planar rigid body (its angle is the last local DOF).
    Body([f64; 2]),
}

/// Keeps a beam node's slope parallel to a ground or body-fixed direction.
#[derive(Debug, Clone)]
pub struct Slope {
    target: SlopeTarget,
}

impl Slope {
    /// A slope joint; the direction is normalized.
    pub fn new(target: SlopeTarget) -> Self {
        let unit = |d: [f64; 2]| {
            let n = d[0].hypot(d[1]);
            [d[0] / n, d[1] / n]
        };
        let target = match target {
            SlopeTarget::Ground(d) => SlopeTarget::Ground(unit(d)),
            SlopeTarget::Body(d) => SlopeTarget::Body(unit(d)),
        };
        Slope { target }
    }

    /// Current direction d.
    fn direction(&self, u: &[f64]) -> [f64; 2] {
        match self.target {
            SlopeTarget::Ground(d) => d,
            SlopeTarget::Body(d0) => {
                let (s, c) = u[2].sin_cos();
                [c * d0[0] - s * d0[1], s * d0[0] + c * d0[1]]
            }
        }
    }
}

impl Joint for Slope {
    fn kind(&self) -> &'static str {
        "slope"
    }

    fn rows(&self) -> usize {
        1
    }

    fn ndof(&self) -> usize {
        match self.target {
            SlopeTarget::Ground(_) => 2,
            SlopeTarget::Body(_) => 3,
        }
    }

    fn phi(&self, u: &[f64], _t: f64, phi: &mut [f64]) {
        let d = self.direction(u);
        phi[0] = u[0] * d[1] - u[1] * d[0];
    }

    fn jacobian(&self, u: &[f64], _t: f64, b: &mut [f64]) {
        let d = self.direction(u);
        b[0] = d[1];
        b[1] = -d[0];
        if let SlopeTarget::Body(_) = self.target {
            // d' = (-d_y, d_x): dPhi/dtheta = s . d
            b[2] = u[0] * d[0] + u[1] * d[1];
        }
    }

    fn add_curvature(&self, u: &[f64], _t: f64, w: &[f64], scale: f64, h: &mut [f64]) {
        if let SlopeTarget::Body(_) = self.target {
            let d = self.direction(u);
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
