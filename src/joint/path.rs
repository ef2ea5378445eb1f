//! A point on a planar curve `y = f(x, t)` (the "path" joint; Chin
//! §4.4.3, the manipulator's end effector on a prescribed path).
//!
//! With `r = (x, y)` the point's position, `J = dr/du` (2 x ndof) and the
//! partial derivatives `f_x`, `f_xx`, `f_t`, `f_tt`, `f_tx` of the curve:
//!
//! * `Phi = y - f(x, t)`;
//! * `B = g^T J` with `g = dPhi/dr = (-f_x, 1)`;
//! * `d^2 Phi/du^2 = -f_xx J_x^T J_x + sum_k g_k d^2 r_k/du^2`
//!   (`J_x` the x row of J; the second term is the point's own curvature,
//!   non-zero on a rigid body);
//! * `Phi_t = -f_t`, `Phi_tt + 2 Phi_tu v = -f_tt - 2 f_tx (J_x . v)`.
//!
//! Curves: `Parabola` `f = a x^2 + b` (scleronomic) and `SineSquared`
//! `f = amplitude sin^2(omega t)` (rheonomic, x free).

use super::{Joint, Point};
use crate::element::MAX_LOCAL_DOFS;

/// A planar curve `y = f(x, t)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Curve {
    /// `y = a x^2 + b`.
    Parabola {
        /// Coefficient of x^2.
        a: f64,
        /// Constant.
        b: f64,
    },
    /// `y = amplitude sin^2(omega t)`, any x.
    SineSquared {
        /// Amplitude.
        amplitude: f64,
        /// Angular frequency.
        omega: f64,
    },
}

/// `f` and its partial derivatives at one `(x, t)`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CurveValue {
    /// f.
    pub f: f64,
    /// df/dx.
    pub f_x: f64,
    /// d2f/dx2.
    pub f_xx: f64,
    /// df/dt.
    pub f_t: f64,
    /// d2f/dt2.
    pub f_tt: f64,
    /// d2f/dtdx.
    pub f_tx: f64,
}

impl Curve {
    /// `f(x, t)` and its derivatives.
    pub fn eval(&self, x: f64, t: f64) -> CurveValue {
        match *self {
            Curve::Parabola { a, b } => CurveValue {
                f: a * x * x + b,
                f_x: 2.0 * a * x,
                f_xx: 2.0 * a,
                ..CurveValue::default()
            },
            Curve::SineSquared { amplitude, omega } => {
                // sin^2(w t) = (1 - cos(2 w t)) / 2.
                let (s, c) = (2.0 * omega * t).sin_cos();
                CurveValue {
                    f: 0.5 * amplitude * (1.0 - c),
                    f_t: amplitude * omega * s,
                    f_tt: 2.0 * amplitude * omega * omega * c,
                    ..CurveValue::default()
                }
            }
        }
    }

    /// Whether `f` depends on time.
    pub fn is_rheonomic(&self) -> bool {
        matches!(self, Curve::SineSquared { .. })
    }
}

/// A point (node or planar body point) held on a [`Curve`].
#[derive(Debug, Clone)]
pub struct PathJoint {
    point: Point,
    curve: Curve,
}

impl PathJoint {
    /// Holds planar `point` on `curve`.
    pub fn new(point: Point, curve: Curve) -> Self {
        PathJoint { point, curve }
    }

    /// (position, dr/du) of the point.
    fn kinematics(&self, u: &[f64]) -> ([f64; 3], [[f64; MAX_LOCAL_DOFS]; 3]) {
        let r = self.point.position(u);
        let mut j = [[0.0; MAX_LOCAL_DOFS]; 3];
        self.point.put_jacobian(u, 1.0, &mut j, 0);
        (r, j)
    }
}

impl Joint for PathJoint {
    fn kind(&self) -> &'static str {
        "path"
    }

    fn rows(&self) -> usize {
        1
    }

    fn ndof(&self) -> usize {
        self.point.ndof()
    }

    fn phi(&self, u: &[f64], t: f64, phi: &mut [f64]) {
        let r = self.point.position(u);
        phi[0] = r[1] - self.curve.eval(r[0], t).f;
    }

    fn jacobian(&self, u: &[f64], t: f64, b: &mut [f64]) {
        let (r, j) = self.kinematics(u);
        let fx = self.curve.eval(r[0], t).f_x;
        for k in 0..self.ndof() {
            b[k] = j[1][k] - fx * j[0][k];
        }
    }

    fn add_curvature(&self, u: &[f64], t: f64, w: &[f64], scale: f64, h: &mut [f64]) {
        let n = self.ndof();
        let (r, j) = self.kinematics(u);
        let c = self.curve.eval(r[0], t);
        let s = scale * w[0];
        if c.f_xx != 0.0 {
            for k in 0..n {
                for l in 0..n {
                    h[k * n + l] -= s * c.f_xx * j[0][k] * j[0][l];
                }
            }
        }
        self.point.add_curvature(u, &[-c.f_x, 1.0, 0.0], s, h, n, 0);
    }

    fn is_rheonomic(&self) -> bool {
        true
    }

    fn phi_t(&self, u: &[f64], t: f64, out: &mut [f64]) {
        let r = self.point.position(u);
        out[0] = -self.curve.eval(r[0], t).f_t;
    }

    fn phi_tt(&self, u: &[f64], v: &[f64], t: f64, out: &mut [f64]) {
        let (r, j) = self.kinematics(u);
        let c = self.curve.eval(r[0], t);
        let vx: f64 = (0..self.ndof()).map(|k| j[0][k] * v[k]).sum();
        out[0] = -c.f_tt - 2.0 * c.f_tx * vx;
    }
}
