//! The rolling disk of seed 001 §4.6 in the seed's coordinates
//! `q = (x, y, phi, theta, psi)` (notes digest §3.6) and their conversion to
//! a flexmb 3-D body (centre of mass, attitude, velocities), as in the header
//! of `models/rolling_disk.toml`: attitude `R = Rz(phi) Rx(-theta) Ry(-psi)`,
//! symmetry axis body y.

use super::qmul;
use flexmb::kinematics::attitude::Attitude;
use flexmb::model::{Body3dSpec, Model, ModelBuilder};

/// Rotation by `angle` about the coordinate axis `k`.
fn axis_quat(k: usize, angle: f64) -> [f64; 4] {
    let (s, c) = (0.5 * angle).sin_cos();
    let mut p = [c, 0.0, 0.0, 0.0];
    p[1 + k] = s;
    p
}

/// Euler parameters of `R = Rz(phi) Rx(-theta) Ry(-psi)`.
pub fn attitude(phi: f64, theta: f64, psi: f64) -> [f64; 4] {
    qmul(
        qmul(axis_quat(2, phi), axis_quat(0, -theta)),
        axis_quat(1, -psi),
    )
}

/// Rates `(x', y', phi', theta', psi')` with the contact velocity of the
/// seed's rolling constraint (eq. 4.29), `x' = -r cos(phi) psi'`,
/// `y' = -r sin(phi) psi'`.
pub fn rolling_rates(q: &[f64; 5], dphi: f64, dtheta: f64, dpsi: f64, r: f64) -> [f64; 5] {
    let phi = q[2];
    [
        -r * phi.cos() * dpsi,
        -r * phi.sin() * dpsi,
        dphi,
        dtheta,
        dpsi,
    ]
}

/// The body state of seed coordinates `(q, qd)`: centre of mass, Euler
/// parameters, centre velocity and angular velocity in body axes.
pub fn body_state(q: &[f64; 5], qd: &[f64; 5], r: f64) -> ([f64; 3], [f64; 4], [f64; 3], [f64; 3]) {
    let [x, y, phi, theta, psi] = *q;
    let [dx, dy, dphi, dtheta, dpsi] = *qd;
    let (sp, cp) = phi.sin_cos();
    let (st, ct) = theta.sin_cos();
    let centre = [x - r * st * sp, y + r * st * cp, r * ct];
    let vc = [
        dx - r * (ct * dtheta * sp + st * cp * dphi),
        dy + r * (ct * dtheta * cp - st * sp * dphi),
        -r * st * dtheta,
    ];
    let p = attitude(phi, theta, psi);
    // omega = phi' e_z - theta' t - psi' a (header of models/rolling_disk.toml).
    let t = [cp, sp, 0.0];
    let a = [-ct * sp, ct * cp, -st];
    let omega: [f64; 3] = std::array::from_fn(|k| {
        let ez = if k == 2 { 1.0 } else { 0.0 };
        dphi * ez - dtheta * t[k] - dpsi * a[k]
    });
    let wb = flexmb::kinematics::rotation::rotate_back(&p, &omega);
    (centre, p, vc, wb)
}

/// Thin uniform disk (A = m r^2/4, C = m r^2/2, axis body y) at seed state
/// `(q, qd)` on the plane z = 0 under gravity 9.81 along -z, rolling joint
/// `floor`.
pub fn disk_model(m: f64, r: f64, q: &[f64; 5], qd: &[f64; 5], att: Attitude) -> Model {
    let (position, orientation, velocity, angular_velocity) = body_state(q, qd, r);
    let (a, c) = (m * r * r / 4.0, m * r * r / 2.0);
    let mut b = ModelBuilder::new(3).unwrap();
    b.gravity(&[0.0, 0.0, -9.81]).unwrap();
    let spec = Body3dSpec {
        position,
        orientation,
        attitude: att,
        kinetic: Default::default(),
        mass: m,
        inertia: [[a, 0.0, 0.0], [0.0, c, 0.0], [0.0, 0.0, a]],
        velocity,
        angular_velocity,
    };
    b.body3d("disk", &spec).unwrap();
    b.rolling_disk("floor", "disk", r, [0.0, 1.0, 0.0], 0.0)
        .unwrap();
    b.build().unwrap()
}

/// A tilted, spinning seed state away from the upright and flat
/// configurations, rolling (index `k` picks one of a few).
pub fn tilted_state(k: usize, r: f64) -> ([f64; 5], [f64; 5]) {
    let cases = [
        ([0.2, -0.1, 0.4, 0.3, 0.7], [0.5, -0.4, -1.2]),
        ([-0.3, 0.5, -1.1, -0.6, 2.1], [-0.8, 0.3, 2.5]),
        ([0.0, 0.0, 2.6, 0.9, -0.4], [0.2, 0.7, -0.6]),
    ];
    let (q, [dphi, dtheta, dpsi]) = cases[k % cases.len()];
    (q, rolling_rates(&q, dphi, dtheta, dpsi, r))
}
