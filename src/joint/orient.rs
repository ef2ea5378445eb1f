//! 3-D joints as dot-product rows `Phi_r = x_r(q) . y_r(q) - c_r` (Haug 1989
//! §9.4, "dot-1" and "dot-2" constraints; Nikravesh 1988 §7.4).
//!
//! Each factor is the separation `d = r_B - r_A` of the joint's two points,
//! a body-fixed direction `R(q) a` of the body on side A or B (any
//! [`crate::kinematics::attitude::Attitude`]; a fixed
//! direction on a ground side), or a constant vector. Coincidence rows are
//! `d . e_k`, perpendicularity rows `h_A . f_B` (dot-1) and translation rows
//! `f_A . d` (dot-2), so revolute, universal, cylindrical, prismatic and fixed
//! joints are row lists of one implementation:
//! `B_r = x^T J_y + y^T J_x`, `d^2 Phi_r = J_x^T J_y + J_y^T J_x + y . H_x + x . H_y`.

use super::{Joint, MAX_JOINT_DOFS, MAX_ROWS};
use crate::kinematics::attitude::Attitude;
use crate::kinematics::point::PointPair;
use crate::kinematics::vec3::dot;

/// Side of a joint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The first point's owner.
    A,
    /// The second point's owner.
    B,
}

/// A factor of a dot-product row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Vector {
    /// `r_B - r_A` of the joint's points.
    Separation,
    /// Direction `a` fixed in the body of `side` (in body coordinates), or
    /// the fixed direction `a` when that side is the ground.
    Axis(Side, [f64; 3]),
    /// A constant vector.
    Constant([f64; 3]),
}

/// One row `x . y - c`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DotRow {
    /// First factor.
    pub x: Vector,
    /// Second factor.
    pub y: Vector,
    /// Constant c.
    pub c: f64,
}

/// A joint of dot-product rows between two points (3-D bodies, nodes or the ground).
#[derive(Debug, Clone)]
pub struct DotJoint {
    kind: &'static str,
    pair: PointPair,
    rows: [DotRow; MAX_ROWS],
    n_rows: usize,
}

/// Value and Jacobian (`jac[axis][local dof]`) of a factor.
struct Eval {
    value: [f64; 3],
    jac: [[f64; MAX_JOINT_DOFS]; 3],
}

impl DotJoint {
    /// A joint named `kind` on `pair` with the given rows (at most [`MAX_ROWS`]).
    pub fn new(kind: &'static str, pair: PointPair, rows: &[DotRow]) -> Self {
        assert!(rows.len() <= MAX_ROWS);
        let zero = DotRow {
            x: Vector::Constant([0.0; 3]),
            y: Vector::Constant([0.0; 3]),
            c: 0.0,
        };
        let mut r = [zero; MAX_ROWS];
        r[..rows.len()].copy_from_slice(rows);
        DotJoint {
            kind,
            pair,
            rows: r,
            n_rows: rows.len(),
        }
    }

    /// Attitude and local index of the rotation coordinates of `side`, when
    /// it is a 3-D body.
    fn attitude_at(&self, side: Side) -> Option<(Attitude, usize)> {
        let (pt, base) = match side {
            Side::A => (self.pair.a, 0),
            Side::B => (self.pair.b, self.pair.a.ndof()),
        };
        pt.attitude().map(|(att, at)| (att, base + at))
    }

    fn eval(&self, v: &Vector, q: &[f64]) -> Eval {
        let mut jac = [[0.0; MAX_JOINT_DOFS]; 3];
        let value = match *v {
            Vector::Separation => {
                self.pair.put_jacobian(q, &mut jac);
                self.pair.separation(q)
            }
            Vector::Axis(side, dir) => match self.attitude_at(side) {
                Some((att, at)) => {
                    let nr = att.ncoords();
                    let j = att.rotate_jacobian(&q[at..at + nr], &dir);
                    for a in 0..3 {
                        jac[a][at..at + nr].copy_from_slice(&j[a][..nr]);
                    }
                    att.rotate(&q[at..at + nr], &dir)
                }
                None => dir,
            },
            Vector::Constant(c) => c,
        };
        Eval { value, jac }
    }

    /// Adds `scale * sum_a w_a d^2 v_a/dq^2` of factor `v`.
    fn add_hessian(&self, v: &Vector, q: &[f64], w: &[f64; 3], scale: f64, h: &mut [f64]) {
        let n = self.pair.ndof();
        match *v {
            Vector::Separation => self.pair.add_curvature(q, w, scale, h),
            Vector::Axis(side, dir) => {
                if let Some((att, at)) = self.attitude_at(side) {
                    att.add_rotate_hessian(&dir, w, scale, h, n, at);
                }
            }
            Vector::Constant(_) => {}
        }
    }
}

impl Joint for DotJoint {
    fn kind(&self) -> &'static str {
        self.kind
    }

    fn rows(&self) -> usize {
        self.n_rows
    }

    fn ndof(&self) -> usize {
        self.pair.ndof()
    }

    fn phi(&self, u: &[f64], _t: f64, phi: &mut [f64]) {
        for (p, r) in phi.iter_mut().zip(&self.rows[..self.n_rows]) {
            *p = dot(&self.eval(&r.x, u).value, &self.eval(&r.y, u).value) - r.c;
        }
    }

    fn jacobian(&self, u: &[f64], _t: f64, b: &mut [f64]) {
        let n = self.ndof();
        for (i, r) in self.rows[..self.n_rows].iter().enumerate() {
            let (x, y) = (self.eval(&r.x, u), self.eval(&r.y, u));
            for k in 0..n {
                b[i * n + k] = (0..3)
                    .map(|a| x.value[a] * y.jac[a][k] + y.value[a] * x.jac[a][k])
                    .sum();
            }
        }
    }

    fn add_curvature(&self, u: &[f64], _t: f64, w: &[f64], scale: f64, h: &mut [f64]) {
        let n = self.ndof();
        for (r, &wr) in self.rows[..self.n_rows].iter().zip(w) {
            if wr == 0.0 {
                continue;
            }
            let s = scale * wr;
            let (x, y) = (self.eval(&r.x, u), self.eval(&r.y, u));
            for i in 0..n {
                for j in 0..n {
                    h[i * n + j] += s
                        * (0..3)
                            .map(|a| x.jac[a][i] * y.jac[a][j] + y.jac[a][i] * x.jac[a][j])
                            .sum::<f64>();
                }
            }
            self.add_hessian(&r.x, u, &y.value, s, h);
            self.add_hessian(&r.y, u, &x.value, s, h);
        }
    }
}

/// Euler-parameter normalization of a 3-D body: `Phi = (p.p - 1)/2`, `B = p^T`
/// (local DOFs: the four Euler parameters).
#[derive(Debug, Clone)]
pub struct EulerNormalization;

impl Joint for EulerNormalization {
    fn kind(&self) -> &'static str {
        "euler_normalization"
    }

    fn rows(&self) -> usize {
        1
    }

    fn ndof(&self) -> usize {
        4
    }

    fn phi(&self, u: &[f64], _t: f64, phi: &mut [f64]) {
        phi[0] = 0.5 * (u[..4].iter().map(|x| x * x).sum::<f64>() - 1.0);
    }

    fn jacobian(&self, u: &[f64], _t: f64, b: &mut [f64]) {
        b[..4].copy_from_slice(&u[..4]);
    }

    fn add_curvature(&self, _u: &[f64], _t: f64, w: &[f64], scale: f64, h: &mut [f64]) {
        for i in 0..4 {
            h[i * 4 + i] += scale * w[0];
        }
    }
}

/// The six internal constraints of a director body (Betsch & Steinmann 2001):
/// `Phi = ((d1.d1 - 1)/2, (d2.d2 - 1)/2, (d3.d3 - 1)/2, d1.d2, d2.d3, d3.d1)`
/// (local DOFs: the nine director coordinates `d1, d2, d3`). Quadratic, so
/// the midpoint Jacobian is their exact discrete derivative, and invariant
/// under rotations of all three directors.
#[derive(Debug, Clone)]
pub struct DirectorConstraints;

impl DirectorConstraints {
    /// The director pair `(i, j)` of row `r`.
    pub const PAIRS: [(usize, usize); 6] = [(0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (2, 0)];
}

impl Joint for DirectorConstraints {
    fn kind(&self) -> &'static str {
        "director_constraints"
    }

    fn rows(&self) -> usize {
        6
    }

    fn ndof(&self) -> usize {
        9
    }

    fn phi(&self, u: &[f64], _t: f64, phi: &mut [f64]) {
        for (p, &(i, j)) in phi.iter_mut().zip(&Self::PAIRS) {
            let d: f64 = (0..3).map(|a| u[3 * i + a] * u[3 * j + a]).sum();
            *p = if i == j { 0.5 * (d - 1.0) } else { d };
        }
    }

    fn jacobian(&self, u: &[f64], _t: f64, b: &mut [f64]) {
        b[..6 * 9].fill(0.0);
        for (r, &(i, j)) in Self::PAIRS.iter().enumerate() {
            for a in 0..3 {
                // d(d_i.d_j)/dd_i = d_j (and /2 twice on the diagonal rows).
                b[r * 9 + 3 * i + a] += if i == j { u[3 * i + a] } else { u[3 * j + a] };
                if i != j {
                    b[r * 9 + 3 * j + a] += u[3 * i + a];
                }
            }
        }
    }

    fn add_curvature(&self, _u: &[f64], _t: f64, w: &[f64], scale: f64, h: &mut [f64]) {
        for (&(i, j), &wr) in Self::PAIRS.iter().zip(w) {
            for a in 0..3 {
                if i == j {
                    h[(3 * i + a) * 9 + 3 * i + a] += scale * wr;
                } else {
                    h[(3 * i + a) * 9 + 3 * j + a] += scale * wr;
                    h[(3 * j + a) * 9 + 3 * i + a] += scale * wr;
                }
            }
        }
    }
}
