//! External loads other than gravity: forces at points, scaled by a time function.
//!
//! A [`PointLoad`] applies the spatial force `F(r) = (A r + b) s(t)` at a point
//! r(q); its generalized force is `J^T F` with J = dr/dq. A constant point force
//! is A = 0; the circular track of seed 000 App. A.1 is F = (4y, -4x), a linear
//! field whose derivative `J^T A J` enters the Newton matrix.
//!
//! At the EOM time level the position-dependent part is evaluated at u~
//! (parameters inside, like the internal force) and the time factor outside,
//! `s~ = (1 - W1) s(t_n) + W1 s(t_{n+1})` as for f in Algorithms 1 and 2.
//! Gravity is not a `PointLoad`: it is `M g` with a potential (`crate::model`).

use crate::joint::Point;

/// A scalar function of time multiplying a load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeFunction {
    /// s = 1.
    Constant,
    /// 0 before t0, linear to 1 at t1, then 1.
    Ramp {
        /// Start.
        t0: f64,
        /// End of the ramp.
        t1: f64,
    },
    /// 0 before t0, linear to 1 at t_peak, linear back to 0 at t1, then 0.
    Triangular {
        /// Start.
        t0: f64,
        /// Peak.
        t_peak: f64,
        /// End.
        t1: f64,
    },
    /// s = sin(omega t + phase).
    Sine {
        /// Angular frequency (rad per time unit).
        omega: f64,
        /// Phase (rad).
        phase: f64,
    },
}

impl TimeFunction {
    /// s(t).
    pub fn value(&self, t: f64) -> f64 {
        match *self {
            TimeFunction::Constant => 1.0,
            TimeFunction::Ramp { t0, t1 } => ((t - t0) / (t1 - t0)).clamp(0.0, 1.0),
            TimeFunction::Triangular { t0, t_peak, t1 } => {
                if t <= t0 || t >= t1 {
                    0.0
                } else if t <= t_peak {
                    (t - t0) / (t_peak - t0)
                } else {
                    (t1 - t) / (t1 - t_peak)
                }
            }
            TimeFunction::Sine { omega, phase } => (omega * t + phase).sin(),
        }
    }
}

/// A force `(A r + b) s(t)` acting at a point.
#[derive(Debug, Clone)]
pub struct PointLoad {
    /// Type name for messages (`point_force`, `linear_field`).
    pub kind: &'static str,
    /// Where the force acts.
    pub point: Point,
    /// Position dependence A (row-major 3x3, zero for a constant force).
    pub matrix: [[f64; 3]; 3],
    /// Constant part b.
    pub offset: [f64; 3],
    /// Time function s(t).
    pub time: TimeFunction,
}

impl PointLoad {
    /// Local DOFs.
    pub fn ndof(&self) -> usize {
        self.point.ndof()
    }

    /// Generalized force `J^T F s` at local state q and, when asked, its derivative
    /// `s (J^T A J + sum_a F_a d^2 r_a/dq^2)` (row-major ndof x ndof).
    pub fn force(&self, q: &[f64], s: f64, f: &mut [f64], k: Option<&mut [f64]>) {
        let n = self.ndof();
        let r = self.point.position(q);
        let j = self.point.jacobian(q);
        let mut fs = [0.0; 3];
        for (a, fa) in fs.iter_mut().enumerate() {
            *fa = s * (self.offset[a] + (0..3).map(|b| self.matrix[a][b] * r[b]).sum::<f64>());
        }
        for (i, fi) in f.iter_mut().enumerate().take(n) {
            *fi = (0..3).map(|a| j[a][i] * fs[a]).sum();
        }
        if let Some(k) = k {
            k[..n * n].fill(0.0);
            for i in 0..n {
                for l in 0..n {
                    let mut v = 0.0;
                    for a in 0..3 {
                        for b in 0..3 {
                            v += j[a][i] * self.matrix[a][b] * j[b][l];
                        }
                    }
                    k[i * n + l] = s * v;
                }
            }
            self.point.add_curvature(q, &fs, 1.0, k, n, 0);
        }
    }
}
