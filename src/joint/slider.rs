//! Planar sliders (Haug 1989 §3.3, translational joint).
//!
//! A point P (on body or node `b`) stays on a line through point A of body
//! `a` (or of the ground) with unit normal `n` fixed in `a`:
//! `Phi_line = n(theta_a) . d`, `d = r_P - r_A`. A **prismatic** joint also
//! locks the relative rotation: `Phi_rot = theta_b - theta_a - theta0`.
//!
//! With `J = dd/du`, `n' = dn/dtheta_a = S n` (S: rotation by +90 degrees) and
//! `e` the unit vector of theta_a's local DOF:
//! `B_line = n^T J + (n' . d) e^T`,
//! `d^2 Phi_line/du^2 = sum_k n_k d^2 d_k/du^2 + e (n'^T J) + (J^T n') e^T - (n . d) e e^T`.

use super::{Joint, Point, PointPair};
use crate::element::MAX_LOCAL_DOFS;

/// A point on a line of another body or of the ground, optionally without relative rotation.
#[derive(Debug, Clone)]
pub struct Slider {
    kind: &'static str,
    pair: PointPair,
    normal: [f64; 2],
    lock: Option<f64>,
}

impl Slider {
    /// Point `pair.b` on the line through `pair.a` with unit `normal` in
    /// `a`'s frame; `lock = Some(theta0)` also holds `theta_b - theta_a = theta0`
    /// (needs `b` on a body, and `a` on a body or the ground).
    pub fn new(kind: &'static str, pair: PointPair, normal: [f64; 2], lock: Option<f64>) -> Self {
        let m = (normal[0] * normal[0] + normal[1] * normal[1]).sqrt();
        Slider {
            kind,
            pair,
            normal: [normal[0] / m, normal[1] / m],
            lock,
        }
    }

    /// Local index of theta_a, if `a` is a body.
    fn theta_a(&self) -> Option<usize> {
        matches!(self.pair.a, Point::Body2 { .. }).then_some(2)
    }

    /// Local index of theta_b, if `b` is a body.
    fn theta_b(&self) -> Option<usize> {
        matches!(self.pair.b, Point::Body2 { .. }).then_some(self.pair.a.ndof() + 2)
    }

    /// (n, n') at the configuration.
    fn normals(&self, u: &[f64]) -> ([f64; 2], [f64; 2]) {
        let [nx, ny] = self.normal;
        let n = match self.theta_a() {
            Some(k) => {
                let (s, c) = u[k].sin_cos();
                [c * nx - s * ny, s * nx + c * ny]
            }
            None => [nx, ny],
        };
        (n, [-n[1], n[0]])
    }
}

impl Joint for Slider {
    fn kind(&self) -> &'static str {
        self.kind
    }

    fn rows(&self) -> usize {
        1 + usize::from(self.lock.is_some())
    }

    fn ndof(&self) -> usize {
        self.pair.ndof()
    }

    fn phi(&self, u: &[f64], _t: f64, phi: &mut [f64]) {
        let d = self.pair.separation(u);
        let (n, _) = self.normals(u);
        phi[0] = n[0] * d[0] + n[1] * d[1];
        if let Some(theta0) = self.lock {
            let ta = self.theta_a().map_or(0.0, |k| u[k]);
            phi[1] = u[self.theta_b().expect("prismatic needs a body b")] - ta - theta0;
        }
    }

    fn jacobian(&self, u: &[f64], _t: f64, b: &mut [f64]) {
        let nd = self.ndof();
        let d = self.pair.separation(u);
        let mut j = [[0.0; crate::joint::MAX_JOINT_DOFS]; 3];
        self.pair.put_jacobian(u, &mut j);
        let (n, np) = self.normals(u);
        for k in 0..nd {
            b[k] = n[0] * j[0][k] + n[1] * j[1][k];
        }
        if let Some(k) = self.theta_a() {
            b[k] += np[0] * d[0] + np[1] * d[1];
        }
        if self.lock.is_some() {
            let row = &mut b[nd..2 * nd];
            row.fill(0.0);
            row[self.theta_b().expect("prismatic needs a body b")] = 1.0;
            if let Some(k) = self.theta_a() {
                row[k] = -1.0;
            }
        }
    }

    fn add_curvature(&self, u: &[f64], _t: f64, w: &[f64], scale: f64, h: &mut [f64]) {
        let nd = self.ndof();
        let (n, np) = self.normals(u);
        let w0 = w[0] * scale;
        self.pair
            .add_curvature(u, &[w0 * n[0], w0 * n[1], 0.0], 1.0, h);
        if let Some(k) = self.theta_a() {
            let d = self.pair.separation(u);
            let mut j = [[0.0; crate::joint::MAX_JOINT_DOFS]; 3];
            self.pair.put_jacobian(u, &mut j);
            let mut npj = [0.0; MAX_LOCAL_DOFS];
            for (q, x) in npj.iter_mut().enumerate().take(nd) {
                *x = np[0] * j[0][q] + np[1] * j[1][q];
            }
            for q in 0..nd {
                h[k * nd + q] += w0 * npj[q];
                h[q * nd + k] += w0 * npj[q];
            }
            h[k * nd + k] -= w0 * (n[0] * d[0] + n[1] * d[1]);
        }
    }
}
