//! Coincident points: Phi = r_B(u) - r_A(u) (`dim` rows).
//!
//! A planar revolute joint between two bodies at body-fixed points, and a
//! ground pin (point B on the ground), are this constraint. With body 1 pinned
//! at its offset (0, L1) and body 2 attached at (0, L2) to body 1's reference
//! point it reproduces the double-pendulum constraints of Hoitink eq. 4.7.

use super::{Joint, PointPair};

/// Two points held together.
#[derive(Debug, Clone)]
pub struct Coincident {
    kind: &'static str,
    dim: usize,
    pair: PointPair,
}

impl Coincident {
    /// Points `pair.a` and `pair.b` coincide in `dim` dimensions; `kind` names the joint type.
    pub fn new(kind: &'static str, dim: usize, pair: PointPair) -> Self {
        Coincident { kind, dim, pair }
    }
}

impl Joint for Coincident {
    fn kind(&self) -> &'static str {
        self.kind
    }

    fn rows(&self) -> usize {
        self.dim
    }

    fn ndof(&self) -> usize {
        self.pair.ndof()
    }

    fn phi(&self, u: &[f64], _t: f64, phi: &mut [f64]) {
        let d = self.pair.separation(u);
        phi[..self.dim].copy_from_slice(&d[..self.dim]);
    }

    fn jacobian(&self, u: &[f64], _t: f64, b: &mut [f64]) {
        let mut j = [[0.0; crate::joint::MAX_JOINT_DOFS]; 3];
        self.pair.put_jacobian(u, &mut j);
        let n = self.ndof();
        for r in 0..self.dim {
            b[r * n..(r + 1) * n].copy_from_slice(&j[r][..n]);
        }
    }

    fn velocity_curvature(&self, u: &[f64], v: &[f64], _t: f64, out: &mut [f64]) {
        let c = self.pair.velocity_curvature(u, v);
        out[..self.dim].copy_from_slice(&c[..self.dim]);
    }

    fn add_curvature(&self, u: &[f64], _t: f64, w: &[f64], scale: f64, h: &mut [f64]) {
        let mut w3 = [0.0; 3];
        w3[..self.dim].copy_from_slice(&w[..self.dim]);
        self.pair.add_curvature(u, &w3, scale, h);
    }
}
