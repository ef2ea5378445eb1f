//! Distance-type constraints on the separation d = r_B - r_A, written as one
//! function of s = d.d: `Phi = f(s)`.
//!
//! * `Length`: f = sqrt(s) - L, the form of Hoitink eq. 4.28 (four-mass bars);
//! * `Quadratic`: f = (s - L^2) / 2;
//! * `Circle`: f = R^2 - s, a point on a circle of radius R about a fixed centre
//!   (Hoitink eq. A.2 and the thin-beam four-bar cranks, eq. 4.41).
//!
//! With J = dd/du: B = 2 f'(s) d^T J and
//! `d^2 Phi/du^2 = 4 f''(s) (J^T d)(d^T J) + 2 f'(s) (J^T J + sum_a d_a d^2 d_a/du^2)`.

use super::{Joint, PointPair};
use crate::element::MAX_LOCAL_DOFS;

/// Which function of the squared distance is constrained.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DistanceForm {
    /// |d| - L.
    Length(f64),
    /// (|d|^2 - L^2) / 2.
    Quadratic(f64),
    /// R^2 - |d|^2.
    Circle(f64),
}

impl DistanceForm {
    /// (f(s), f'(s), f''(s)).
    fn eval(self, s: f64) -> (f64, f64, f64) {
        match self {
            DistanceForm::Length(l) => {
                let r = s.sqrt();
                (r - l, 0.5 / r, -0.25 / (r * s))
            }
            DistanceForm::Quadratic(l) => (0.5 * (s - l * l), 0.5, 0.0),
            DistanceForm::Circle(r) => (r * r - s, -1.0, 0.0),
        }
    }
}

/// A one-row distance constraint between two points.
#[derive(Debug, Clone)]
pub struct Distance {
    kind: &'static str,
    pair: PointPair,
    form: DistanceForm,
}

impl Distance {
    /// Constrains `form` on the separation of `pair`; `kind` names the joint type.
    pub fn new(kind: &'static str, pair: PointPair, form: DistanceForm) -> Self {
        Distance { kind, pair, form }
    }

    /// (d, J^T d) with J^T d over the local DOFs.
    fn jtd(&self, u: &[f64]) -> ([f64; 3], [f64; MAX_LOCAL_DOFS]) {
        let d = self.pair.separation(u);
        let mut j = [[0.0; crate::joint::MAX_JOINT_DOFS]; 3];
        self.pair.put_jacobian(u, &mut j);
        let mut g = [0.0; MAX_LOCAL_DOFS];
        for (k, gk) in g.iter_mut().enumerate().take(self.ndof()) {
            *gk = d[0] * j[0][k] + d[1] * j[1][k] + d[2] * j[2][k];
        }
        (d, g)
    }
}

fn dot3(a: &[f64; 3]) -> f64 {
    a[0] * a[0] + a[1] * a[1] + a[2] * a[2]
}

impl Joint for Distance {
    fn kind(&self) -> &'static str {
        self.kind
    }

    fn rows(&self) -> usize {
        1
    }

    fn ndof(&self) -> usize {
        self.pair.ndof()
    }

    fn phi(&self, u: &[f64], _t: f64, phi: &mut [f64]) {
        let d = self.pair.separation(u);
        phi[0] = self.form.eval(dot3(&d)).0;
    }

    fn jacobian(&self, u: &[f64], _t: f64, b: &mut [f64]) {
        let (d, g) = self.jtd(u);
        let (_, f1, _) = self.form.eval(dot3(&d));
        for k in 0..self.ndof() {
            b[k] = 2.0 * f1 * g[k];
        }
    }

    fn add_curvature(&self, u: &[f64], _t: f64, w: &[f64], scale: f64, h: &mut [f64]) {
        let n = self.ndof();
        let (d, g) = self.jtd(u);
        let mut j = [[0.0; crate::joint::MAX_JOINT_DOFS]; 3];
        self.pair.put_jacobian(u, &mut j);
        let (_, f1, f2) = self.form.eval(dot3(&d));
        let c = scale * w[0];
        for k in 0..n {
            for l in 0..n {
                let jtj = j[0][k] * j[0][l] + j[1][k] * j[1][l] + j[2][k] * j[2][l];
                h[k * n + l] += c * (4.0 * f2 * g[k] * g[l] + 2.0 * f1 * jtj);
            }
        }
        self.pair.add_curvature(u, &d, 2.0 * f1 * c, h);
    }
}
