//! Spring-damper-actuators (issue #3 item 3; Haug 1989 §11.3 "TSDA" and
//! "RSDA").
//!
//! **Translational** between two points A, B (nodes or body-fixed points) with
//! length `l = |r_B - r_A|`:
//! `V = 1/2 k (l - l0)^2 + F_a l` (spring and constant actuator force, tension
//! positive), damper force `F_d = c ldot g` with `g = dl/dq = J^T d / l` and
//! `ldot = g . v`. Tangents: `K = k g g^T + (k (l - l0) + F_a) H`,
//! `H = d^2 l/dq^2 = (J^T J + sum_a d_a d^2 d_a/dq^2 - g g^T) / l`;
//! `dF_d/dv = c g g^T`, `dF_d/dq = c (g (H v)^T + ldot H)`.
//!
//! **Rotational** between the angles of two planar bodies (or one body and
//! the ground), `phi = theta_b - theta_a`:
//! `V = 1/2 k (phi - phi0)^2 - T phi` (T: actuator torque on b, reaction on a),
//! `F_d = c phidot`.
//!
//! Both are evaluated at the EOM level (u~, v~) of the integrator. The
//! rotational spring is linear, so its EOM force is the exact discrete gradient
//! for the midpoint schemes. The translational one's conservative part (spring
//! and actuator, potential V above) is, for the midpoint level weights,
//! Gonzalez's discrete gradient between u_n and u_{n+1}
//! (`super::gonzalez`: `du . P_d = V(u_{n+1}) - V(u_n)` exactly) with its
//! exact derivative; for other weights it is the gradient at u~ with
//! derivative `c3 K(u~)`. The damper force stays `F_d(u~, v~)`.

use super::gonzalez::between;
use super::{Element, EvaluationPoint, MAX_LOCAL_DOFS};
use crate::kinematics::point::{PointPair, MAX_PAIR_DOFS};

/// A translational spring-damper-actuator between two points.
#[derive(Debug, Clone)]
pub struct SpringDamper {
    pair: PointPair,
    stiffness: f64,
    free_length: f64,
    damping: f64,
    actuator: f64,
}

/// Length `l`, its gradient `g` and (optionally) Hessian `H` over the local DOFs.
struct Length {
    l: f64,
    g: [f64; MAX_LOCAL_DOFS],
}

impl SpringDamper {
    /// Spring `stiffness` with `free_length`, damper `damping`, actuator force `actuator`.
    pub fn new(
        pair: PointPair,
        stiffness: f64,
        free_length: f64,
        damping: f64,
        actuator: f64,
    ) -> Self {
        SpringDamper {
            pair,
            stiffness,
            free_length,
            damping,
            actuator,
        }
    }

    fn length(&self, q: &[f64], hess: Option<&mut [f64]>) -> Length {
        let n = self.pair.ndof();
        let d = self.pair.separation(q);
        let mut j = [[0.0; MAX_PAIR_DOFS]; 3];
        self.pair.put_jacobian(q, &mut j);
        let l = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        let mut g = [0.0; MAX_LOCAL_DOFS];
        for (k, gk) in g.iter_mut().enumerate().take(n) {
            *gk = (d[0] * j[0][k] + d[1] * j[1][k] + d[2] * j[2][k]) / l;
        }
        if let Some(h) = hess {
            h[..n * n].fill(0.0);
            self.pair.add_curvature(q, &d, 1.0 / l, h);
            for p in 0..n {
                for r in 0..n {
                    let jj = j[0][p] * j[0][r] + j[1][p] * j[1][r] + j[2][p] * j[2][r];
                    h[p * n + r] += (jj - g[p] * g[r]) / l;
                }
            }
        }
        Length { l, g }
    }
}

impl Element for SpringDamper {
    const KIND: &'static str = "spring_damper";
    const DISSIPATIVE: bool = true;

    fn ndof(&self) -> usize {
        self.pair.ndof()
    }

    fn potential(&self, u: &[f64]) -> f64 {
        let l = self.length(u, None).l;
        0.5 * self.stiffness * (l - self.free_length).powi(2) + self.actuator * l
    }

    fn force(&self, u: &[f64], f: &mut [f64], k: Option<&mut [f64]>) {
        let n = self.ndof();
        let has_k = k.is_some();
        let mut h = [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS];
        let len = self.length(u, has_k.then_some(&mut h[..]));
        let s = self.stiffness * (len.l - self.free_length) + self.actuator;
        for (fp, gp) in f.iter_mut().zip(&len.g[..n]) {
            *fp = s * gp;
        }
        if let Some(k) = k {
            for p in 0..n {
                for r in 0..n {
                    k[p * n + r] = self.stiffness * len.g[p] * len.g[r] + s * h[p * n + r];
                }
            }
        }
    }

    fn discrete_gradient(&self, lvl: &EvaluationPoint<'_>, f: &mut [f64], k: Option<&mut [f64]>) {
        let (u0, u1) = (lvl.u_n, lvl.u_next);
        let grad = |um: &[f64], f: &mut [f64], k: Option<&mut [f64]>| self.force(um, f, k);
        between([u0, u1], self.free_length, f, k, grad, |g1| {
            if let Some(g1) = g1 {
                self.force(u1, g1, None);
            }
            (self.potential(u0), self.potential(u1))
        });
    }

    fn damping_force(&self, u: &[f64], v: &[f64], f: &mut [f64], k: &mut [f64], c: &mut [f64]) {
        let n = self.ndof();
        let mut h = [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS];
        let len = self.length(u, Some(&mut h));
        let ldot: f64 = (0..n).map(|p| len.g[p] * v[p]).sum();
        let mut hv = [0.0; MAX_LOCAL_DOFS];
        for (p, x) in hv.iter_mut().enumerate().take(n) {
            *x = (0..n).map(|r| h[p * n + r] * v[r]).sum();
        }
        for p in 0..n {
            f[p] = self.damping * ldot * len.g[p];
            for r in 0..n {
                c[p * n + r] = self.damping * len.g[p] * len.g[r];
                k[p * n + r] = self.damping * (len.g[p] * hv[r] + ldot * h[p * n + r]);
            }
        }
    }
}

/// A rotational spring-damper-actuator between two planar body angles
/// (local DOFs `[theta_a, theta_b]`) or a body angle and the ground (`[theta_b]`).
#[derive(Debug, Clone)]
pub struct RotationalSpringDamper {
    grounded: bool,
    stiffness: f64,
    rest_angle: f64,
    damping: f64,
    torque: f64,
}

impl RotationalSpringDamper {
    /// `grounded`: body `a` is the ground (one local DOF).
    pub fn new(grounded: bool, stiffness: f64, rest_angle: f64, damping: f64, torque: f64) -> Self {
        RotationalSpringDamper {
            grounded,
            stiffness,
            rest_angle,
            damping,
            torque,
        }
    }

    /// d phi / d q over the local DOFs.
    fn gradient(&self) -> &'static [f64] {
        if self.grounded {
            &[1.0]
        } else {
            &[-1.0, 1.0]
        }
    }

    fn angle(&self, q: &[f64]) -> f64 {
        self.gradient().iter().zip(q).map(|(g, x)| g * x).sum()
    }
}

impl Element for RotationalSpringDamper {
    const KIND: &'static str = "rotational_spring_damper";
    const DISSIPATIVE: bool = true;

    fn ndof(&self) -> usize {
        self.gradient().len()
    }

    fn potential(&self, u: &[f64]) -> f64 {
        let phi = self.angle(u);
        0.5 * self.stiffness * (phi - self.rest_angle).powi(2) - self.torque * phi
    }

    fn force(&self, u: &[f64], f: &mut [f64], k: Option<&mut [f64]>) {
        let g = self.gradient();
        let s = self.stiffness * (self.angle(u) - self.rest_angle) - self.torque;
        for (fp, gp) in f.iter_mut().zip(g) {
            *fp = s * gp;
        }
        if let Some(k) = k {
            outer(g, self.stiffness, k);
        }
    }

    fn damping_force(&self, _u: &[f64], v: &[f64], f: &mut [f64], k: &mut [f64], c: &mut [f64]) {
        let g = self.gradient();
        let rate = self.angle(v);
        for (fp, gp) in f.iter_mut().zip(g) {
            *fp = self.damping * rate * gp;
        }
        k[..g.len() * g.len()].fill(0.0);
        outer(g, self.damping, c);
    }
}

/// out = s g g^T (row-major).
fn outer(g: &[f64], s: f64, out: &mut [f64]) {
    let n = g.len();
    for p in 0..n {
        for r in 0..n {
            out[p * n + r] = s * g[p] * g[r];
        }
    }
}
