//! External loads other than gravity: forces at points, scaled by a time function.
//!
//! A [`PointLoad`] applies the spatial force `F(r) = (A r + b) s(t)` at a point
//! r(q); its generalized force is `J^T F` with J = dr/dq. A constant point force
//! is A = 0; the circular track of Hoitink App. A.1 is F = (4y, -4x), a linear
//! field whose derivative `J^T A J` enters the Newton matrix.
//!
//! At the EOM time level the position-dependent part is evaluated at u~
//! (parameters inside, like the internal force) and the time factor outside,
//! `s~ = (1 - W1) s(t_n) + W1 s(t_{n+1})` as for f in Algorithms 1 and 2.
//! Gravity is not a `PointLoad`: it is `M g` with a potential (`crate::model`).
//!
//! A [`BodyTorque`] applies a torque vector to a 3-D rigid body, constant in
//! space or in body axes, scaled by a time function; its generalized force
//! acts on the body's rotation coordinates ([`Attitude`]).

use nalgebra::{Matrix3x4, Vector3, Vector4};

use crate::kinematics::attitude::Attitude;
use crate::kinematics::point::Point;
use crate::kinematics::rotation::{g_matrix, g_transpose_derivative};

/// A scalar function of time multiplying a load (the `time` table of a
/// `[[load]]` in a model file, `type = "ramp"` etc.; [`TimeFunction::check`]
/// validates it).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum TimeFunction {
    /// s = 1.
    #[default]
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
        /// Phase (rad; default 0).
        #[serde(default)]
        phase: f64,
    },
}

impl TimeFunction {
    /// Refuses non-finite parameters, a ramp without t1 > t0 and a pulse
    /// without t0 < t_peak < t1 (their s(t) would divide by zero or run
    /// backwards).
    pub fn check(&self) -> Result<(), String> {
        let params: &[(&str, f64)] = match self {
            TimeFunction::Constant => &[],
            TimeFunction::Ramp { t0, t1 } => &[("t0", *t0), ("t1", *t1)],
            TimeFunction::Triangular { t0, t_peak, t1 } => {
                &[("t0", *t0), ("t_peak", *t_peak), ("t1", *t1)]
            }
            TimeFunction::Sine { omega, phase } => &[("omega", *omega), ("phase", *phase)],
        };
        if let Some((name, x)) = params.iter().find(|(_, x)| !x.is_finite()) {
            return Err(format!(
                "time function parameter `{name}` must be finite, got {x}"
            ));
        }
        match *self {
            TimeFunction::Ramp { t0, t1 } if t1 <= t0 => {
                Err(format!("ramp needs t1 > t0, got t0 = {t0}, t1 = {t1}"))
            }
            TimeFunction::Triangular { t0, t_peak, t1 } if !(t0 < t_peak && t_peak < t1) => Err(
                format!("triangular pulse needs t0 < t_peak < t1, got {t0}, {t_peak}, {t1}"),
            ),
            _ => Ok(()),
        }
    }

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
        let mut j = [[0.0; crate::kinematics::point::MAX_POINT_DOFS]; 3];
        self.point.put_jacobian(q, 1.0, &mut j, 0);
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

/// The frame a [`BodyTorque`] is constant in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TorqueFrame {
    /// A fixed spatial vector `n`.
    Spatial,
    /// A vector `n'` fixed in body axes: `n = R n'`.
    Body,
}

/// A torque `n s(t)` on a 3-D rigid body. Local DOFs: the body's rotation
/// coordinates. Generalized forces, with the power identity `Q . qdot = n . omega`:
///
/// * Euler parameters: spatial `Q_p = 2 E(p)^T n`, body `Q_p = 2 G(p)^T n'`
///   (`omega = 2 E(p) pdot`, `omega' = 2 G(p) pdot`; on `|p| = 1`,
///   `2 E^T n = 2 G^T R^T n`), both linear in p;
/// * directors: `Q_{d_i} = 1/2 n x d_i` with `n = n'_j d_j` for a body torque
///   (`sum_i d_i x Q_{d_i} = n` for orthonormal directors).
#[derive(Debug, Clone)]
pub struct BodyTorque {
    /// Torque vector (spatial, or in body axes).
    pub torque: [f64; 3],
    /// The frame of `torque`.
    pub frame: TorqueFrame,
    /// The body's rotation coordinates.
    pub attitude: Attitude,
    /// Time function s(t).
    pub time: TimeFunction,
}

/// `E(p)` (3 x 4): the spatial angular velocity is `2 E(p) pdot`.
fn e_matrix(p: &Vector4<f64>) -> Matrix3x4<f64> {
    Matrix3x4::new(
        -p[1], p[0], -p[3], p[2], //
        -p[2], p[3], p[0], -p[1], //
        -p[3], -p[2], p[1], p[0],
    )
}

fn skew(v: &[f64; 3]) -> [[f64; 3]; 3] {
    [[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]]
}

impl BodyTorque {
    /// Local DOFs (4 or 9).
    pub fn ndof(&self) -> usize {
        self.attitude.ncoords()
    }

    /// Generalized force `Q s` at the rotation coordinates `q` and, when
    /// asked, its derivative `s dQ/dq` (row-major ndof x ndof).
    pub fn force(&self, q: &[f64], s: f64, f: &mut [f64], k: Option<&mut [f64]>) {
        let n = self.ndof();
        let t = self.torque.map(|x| x * s);
        match self.attitude {
            Attitude::EulerParameters => {
                let p = Vector4::new(q[0], q[1], q[2], q[3]);
                let tv = Vector3::from(t);
                let (qf, dq) = match self.frame {
                    TorqueFrame::Spatial => {
                        let mut d = nalgebra::Matrix4::zeros();
                        for c in 0..4 {
                            let mut e = Vector4::zeros();
                            e[c] = 1.0;
                            d.set_column(c, &(2.0 * e_matrix(&e).transpose() * tv));
                        }
                        (2.0 * e_matrix(&p).transpose() * tv, d)
                    }
                    TorqueFrame::Body => (
                        2.0 * g_matrix(&p).transpose() * tv,
                        2.0 * g_transpose_derivative(&tv),
                    ),
                };
                f[..4].copy_from_slice(qf.as_slice());
                if let Some(k) = k {
                    for i in 0..4 {
                        for j in 0..4 {
                            k[i * 4 + j] = dq[(i, j)];
                        }
                    }
                }
            }
            Attitude::Directors => {
                let d = |i: usize| [q[3 * i], q[3 * i + 1], q[3 * i + 2]];
                let nv = match self.frame {
                    TorqueFrame::Spatial => t,
                    TorqueFrame::Body => self.attitude.rotate(q, &t),
                };
                for i in 0..3 {
                    let di = d(i);
                    let c = [
                        nv[1] * di[2] - nv[2] * di[1],
                        nv[2] * di[0] - nv[0] * di[2],
                        nv[0] * di[1] - nv[1] * di[0],
                    ];
                    for a in 0..3 {
                        f[3 * i + a] = 0.5 * c[a];
                    }
                }
                if let Some(k) = k {
                    k[..n * n].fill(0.0);
                    // dQ_i/dd_i = 1/2 [n x]; body frame also dQ_i/dd_k = -1/2 n'_k [d_i x].
                    let sn = skew(&nv);
                    for i in 0..3 {
                        for a in 0..3 {
                            for b in 0..3 {
                                k[(3 * i + a) * n + 3 * i + b] += 0.5 * sn[a][b];
                            }
                        }
                        if self.frame == TorqueFrame::Body {
                            let sd = skew(&d(i));
                            for (kk, tk) in t.iter().enumerate() {
                                for a in 0..3 {
                                    for b in 0..3 {
                                        k[(3 * i + a) * n + 3 * kk + b] -= 0.5 * tk * sd[a][b];
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// An external load: a force at a point or a torque on a 3-D body.
#[derive(Debug, Clone)]
pub enum Load {
    /// A force at a point (or a generalized force on one coordinate).
    Point(PointLoad),
    /// A torque on a 3-D rigid body.
    Torque(BodyTorque),
}

impl From<PointLoad> for Load {
    fn from(l: PointLoad) -> Self {
        Load::Point(l)
    }
}

impl Load {
    /// Local DOFs.
    pub fn ndof(&self) -> usize {
        match self {
            Load::Point(l) => l.ndof(),
            Load::Torque(l) => l.ndof(),
        }
    }

    /// The time function.
    pub fn time(&self) -> &TimeFunction {
        match self {
            Load::Point(l) => &l.time,
            Load::Torque(l) => &l.time,
        }
    }

    /// Generalized force at local state q scaled by s and, when asked, its
    /// derivative (row-major ndof x ndof).
    pub fn force(&self, q: &[f64], s: f64, f: &mut [f64], k: Option<&mut [f64]>) {
        match self {
            Load::Point(l) => l.force(q, s, f, k),
            Load::Torque(l) => l.force(q, s, f, k),
        }
    }
}
