//! Material points that joints and loads attach to: a node, a point fixed in a
//! planar rigid body or in a 3-D body (any [`Attitude`]), or a fixed ground point.
//!
//! A point contributes its owner's DOFs to the local vector of a joint or load
//! and provides its position r(q), Jacobian dr/dq and the contraction
//! `sum_a w_a d^2 r_a / dq^2` used for the constraint-force derivative
//! d(B^T lambda)/du (Hoitink eq. 4.19).

use crate::kinematics::attitude::{Attitude, MAX_ATTITUDE_COORDS};

/// Maximum local DOFs of one point (a 3-D director body has 3 + 9).
pub const MAX_POINT_DOFS: usize = 3 + MAX_ATTITUDE_COORDS;

/// Maximum local DOFs of a [`PointPair`].
pub const MAX_PAIR_DOFS: usize = 2 * MAX_POINT_DOFS;

/// Where a point sits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Point {
    /// A node in `dim` dimensions; its DOFs are its coordinates.
    Node {
        /// 2 or 3.
        dim: usize,
    },
    /// A point at body-fixed offset `p` of a planar rigid body with DOFs
    /// (x, y, theta): r = x + R(theta) p.
    Body2 {
        /// Offset in body coordinates.
        offset: [f64; 2],
    },
    /// A point at body-fixed offset `s` of a 3-D rigid body with DOFs
    /// (x, y, z, rotation coordinates): r = x + R(q) s (see [`Attitude`]).
    Body3 {
        /// Offset in body coordinates.
        offset: [f64; 3],
        /// The body's rotation coordinates.
        attitude: Attitude,
    },
    /// A fixed point in space (no DOFs).
    Ground {
        /// Position.
        position: [f64; 3],
    },
}

impl Point {
    /// Number of local DOFs the point contributes.
    pub fn ndof(&self) -> usize {
        match self {
            Point::Node { dim } => *dim,
            Point::Body2 { .. } => 3,
            Point::Body3 { attitude, .. } => 3 + attitude.ncoords(),
            Point::Ground { .. } => 0,
        }
    }

    /// Position r(q) (z = 0 in planar models).
    pub fn position(&self, q: &[f64]) -> [f64; 3] {
        match *self {
            Point::Node { dim } => {
                let mut r = [0.0; 3];
                r[..dim].copy_from_slice(&q[..dim]);
                r
            }
            Point::Body2 { offset: p } => {
                let (s, c) = q[2].sin_cos();
                [q[0] + c * p[0] - s * p[1], q[1] + s * p[0] + c * p[1], 0.0]
            }
            Point::Body3 { offset, attitude } => {
                let r = attitude.rotate(&q[3..], &offset);
                [q[0] + r[0], q[1] + r[1], q[2] + r[2]]
            }
            Point::Ground { position } => position,
        }
    }

    /// Writes `sign * dr/dq` into columns `at..at + ndof` of `j` (3 rows;
    /// other entries untouched): the joints assemble pair Jacobians in place
    /// instead of copying per-point arrays.
    pub fn put_jacobian<const W: usize>(
        &self,
        q: &[f64],
        sign: f64,
        j: &mut [[f64; W]; 3],
        at: usize,
    ) {
        match *self {
            Point::Node { dim } => {
                for (a, row) in j.iter_mut().enumerate().take(dim) {
                    row[at + a] = sign;
                }
            }
            Point::Body2 { offset: p } => {
                let (s, c) = q[2].sin_cos();
                j[0][at] = sign;
                j[1][at + 1] = sign;
                // d(R p)/dtheta = [-s p0 - c p1, c p0 - s p1]
                j[0][at + 2] = sign * (-s * p[0] - c * p[1]);
                j[1][at + 2] = sign * (c * p[0] - s * p[1]);
            }
            Point::Body3 { offset, attitude } => {
                let jr = attitude.rotate_jacobian(&q[3..], &offset);
                let nr = attitude.ncoords();
                for (a, (row, jra)) in j.iter_mut().zip(&jr).enumerate() {
                    row[at + a] = sign;
                    for (x, y) in row[at + 3..at + 3 + nr].iter_mut().zip(&jra[..nr]) {
                        *x = sign * y;
                    }
                }
            }
            Point::Ground { .. } => {}
        }
    }

    /// Adds `scale * sum_a w_a d^2 r_a/dq^2` into the `ld x ld` row-major block
    /// of `h` starting at local index `at`.
    pub fn add_curvature(
        &self,
        q: &[f64],
        w: &[f64; 3],
        scale: f64,
        h: &mut [f64],
        ld: usize,
        at: usize,
    ) {
        if let Point::Body2 { offset: p } = *self {
            let (s, c) = q[2].sin_cos();
            // d^2(R p)/dtheta^2 = -R p
            let rx = c * p[0] - s * p[1];
            let ry = s * p[0] + c * p[1];
            h[(at + 2) * ld + at + 2] -= scale * (w[0] * rx + w[1] * ry);
        }
        if let Point::Body3 { offset, attitude } = *self {
            attitude.add_rotate_hessian(&offset, w, scale, h, ld, at + 3);
        }
    }

    /// `d/dt (dr/dq) qd` at fixed `qd` (`sum_pq d^2 r/dq_p dq_q qd_p qd_q`):
    /// the point's acceleration at zero generalized acceleration, e.g.
    /// `-thetadot^2 R(theta) p` for a planar body point.
    pub fn velocity_curvature(&self, q: &[f64], qd: &[f64]) -> [f64; 3] {
        match *self {
            Point::Node { .. } | Point::Ground { .. } => [0.0; 3],
            Point::Body2 { offset: p } => {
                let (s, c) = q[2].sin_cos();
                let w2 = qd[2] * qd[2];
                [
                    -w2 * (c * p[0] - s * p[1]),
                    -w2 * (s * p[0] + c * p[1]),
                    0.0,
                ]
            }
            Point::Body3 { .. } => {
                let nd = self.ndof();
                let mut out = [0.0; 3];
                let mut h = [0.0; MAX_POINT_DOFS * MAX_POINT_DOFS];
                for (a, o) in out.iter_mut().enumerate() {
                    let mut w = [0.0; 3];
                    w[a] = 1.0;
                    h[..nd * nd].fill(0.0);
                    self.add_curvature(q, &w, 1.0, &mut h, nd, 0);
                    *o = (0..nd)
                        .map(|p| qd[p] * (0..nd).map(|r| h[p * nd + r] * qd[r]).sum::<f64>())
                        .sum();
                }
                out
            }
        }
    }

    /// The attitude and local index of the rotation coordinates of a 3-D body point.
    pub fn attitude(&self) -> Option<(Attitude, usize)> {
        match *self {
            Point::Body3 { attitude, .. } => Some((attitude, 3)),
            _ => None,
        }
    }
}

/// Two points A and B with the separation d = r_B - r_A; local DOFs are
/// `[A's DOFs, B's DOFs]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointPair {
    /// First point.
    pub a: Point,
    /// Second point.
    pub b: Point,
}

impl PointPair {
    /// Local DOFs of the pair.
    pub fn ndof(&self) -> usize {
        self.a.ndof() + self.b.ndof()
    }

    fn split<'q>(&self, q: &'q [f64]) -> (&'q [f64], &'q [f64]) {
        q.split_at(self.a.ndof())
    }

    /// d = r_B - r_A.
    pub fn separation(&self, q: &[f64]) -> [f64; 3] {
        let (qa, qb) = self.split(q);
        let ra = self.a.position(qa);
        let rb = self.b.position(qb);
        [rb[0] - ra[0], rb[1] - ra[1], rb[2] - ra[2]]
    }

    /// Writes dd/dq into the first `ndof` columns of `j` (3 rows; other
    /// entries untouched).
    pub fn put_jacobian<const W: usize>(&self, q: &[f64], j: &mut [[f64; W]; 3]) {
        let (qa, qb) = self.split(q);
        self.a.put_jacobian(qa, -1.0, j, 0);
        self.b.put_jacobian(qb, 1.0, j, self.a.ndof());
    }

    /// `d/dt (dd/dq) qd` at fixed `qd`: the velocity curvature of the
    /// separation, `B's - A's` ([`Point::velocity_curvature`]).
    pub fn velocity_curvature(&self, q: &[f64], qd: &[f64]) -> [f64; 3] {
        let (qa, qb) = self.split(q);
        let (da, db) = self.split(qd);
        let ca = self.a.velocity_curvature(qa, da);
        let cb = self.b.velocity_curvature(qb, db);
        [cb[0] - ca[0], cb[1] - ca[1], cb[2] - ca[2]]
    }

    /// Adds `scale * sum_a w_a d^2 d_a/dq^2` into the row-major `h` (ndof x ndof).
    pub fn add_curvature(&self, q: &[f64], w: &[f64; 3], scale: f64, h: &mut [f64]) {
        let (qa, qb) = self.split(q);
        let nd = self.ndof();
        self.a.add_curvature(qa, w, -scale, h, nd, 0);
        self.b.add_curvature(qb, w, scale, h, nd, self.a.ndof());
    }
}
