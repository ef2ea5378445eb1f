//! Euler-parameter kinematics (Nikravesh 1988, *Computer-Aided Analysis of
//! Mechanical Systems*, §6.3–6.4; Haug 1989, §9.2).
//!
//! `p = (p0, e)` with `e = (p1, p2, p3)`. The rotation of a body vector `s` is
//! written as the homogeneous quadratic form
//! `R(p) s = (p0^2 - e.e) s + 2 (e.s) e + 2 p0 (e x s)`, which equals the
//! rotation matrix `A = E G^T` times `|p|^2`; on `|p| = 1` it is the rotation,
//! off it (at the midpoint of a step) it stays smooth, and its Hessian in `p`
//! is constant. The body angular velocity is `w' = 2 G(p) pdot` with
//! `G(p) = [-p1 p0 p3 -p2; -p2 -p3 p0 p1; -p3 p2 -p1 p0]`.

use nalgebra::{Matrix3x4, Matrix4, Vector3, Vector4};

/// `G(p)` (3 x 4): `w' = 2 G(p) pdot`; linear in p with `G(p) p = 0` and
/// `G(p) x = -G(x) p`.
pub fn g_matrix(p: &Vector4<f64>) -> Matrix3x4<f64> {
    Matrix3x4::new(
        -p[1], p[0], p[3], -p[2], //
        -p[2], -p[3], p[0], p[1], //
        -p[3], p[2], -p[1], p[0],
    )
}

/// `E(p)` (3 x 4): the spatial angular velocity is `w = 2 E(p) pdot`; linear
/// in p with `E(p) p = 0` and `E(p) G(p)^T = A(p)`, the rotation matrix on
/// `|p| = 1`. (`2 E(p) pdot = R(p) (2 G(p) pdot)` for any `pdot` when `|p| = 1`.)
pub fn e_matrix(p: &Vector4<f64>) -> Matrix3x4<f64> {
    Matrix3x4::new(
        -p[1], p[0], -p[3], p[2], //
        -p[2], p[3], p[0], -p[1], //
        -p[3], -p[2], p[1], p[0],
    )
}

/// `d/dx (G(x)^T w)` (4 x 4, constant in x): column k is `G(e_k)^T w`.
pub fn g_transpose_derivative(w: &Vector3<f64>) -> Matrix4<f64> {
    let mut d = Matrix4::zeros();
    for k in 0..4 {
        let mut e = Vector4::zeros();
        e[k] = 1.0;
        d.set_column(k, &(g_matrix(&e).transpose() * w));
    }
    d
}

fn parts(p: &[f64]) -> (f64, Vector3<f64>) {
    (p[0], Vector3::new(p[1], p[2], p[3]))
}

/// `R(p) s`.
pub fn rotate(p: &[f64], s: &[f64; 3]) -> [f64; 3] {
    let (p0, e) = parts(p);
    let s = Vector3::from(*s);
    let r = (p0 * p0 - e.dot(&e)) * s + 2.0 * e.dot(&s) * e + 2.0 * p0 * e.cross(&s);
    r.into()
}

/// `d(R(p) s)/dp` as `jac[axis][k]`, k over (p0, p1, p2, p3).
pub fn rotate_jacobian(p: &[f64], s: &[f64; 3]) -> [[f64; 4]; 3] {
    let (p0, e) = parts(p);
    let sv = Vector3::from(*s);
    let d0 = 2.0 * p0 * sv + 2.0 * e.cross(&sv);
    let es = e.dot(&sv);
    let mut j = [[0.0; 4]; 3];
    for a in 0..3 {
        j[a][0] = d0[a];
        for b in 0..3 {
            // -2 s e^T + 2 (e.s) I + 2 e s^T - 2 p0 [s x]
            let skew = match (a, b) {
                (0, 1) => -s[2],
                (0, 2) => s[1],
                (1, 0) => s[2],
                (1, 2) => -s[0],
                (2, 0) => -s[1],
                (2, 1) => s[0],
                _ => 0.0,
            };
            let id = if a == b { es } else { 0.0 };
            j[a][b + 1] = 2.0 * (-sv[a] * e[b] + id + e[a] * sv[b] - p0 * skew);
        }
    }
    j
}

/// `d^2 (w . R(p) s)/dp^2` (4 x 4, constant in p).
pub fn rotate_hessian(s: &[f64; 3], w: &[f64; 3]) -> [[f64; 4]; 4] {
    let (sv, wv) = (Vector3::from(*s), Vector3::from(*w));
    let ws = wv.dot(&sv);
    let sw = sv.cross(&wv);
    let mut h = [[0.0; 4]; 4];
    h[0][0] = 2.0 * ws;
    for a in 0..3 {
        h[0][a + 1] = 2.0 * sw[a];
        h[a + 1][0] = 2.0 * sw[a];
        for b in 0..3 {
            let id = if a == b { ws } else { 0.0 };
            h[a + 1][b + 1] = 2.0 * (-id + sv[a] * wv[b] + wv[a] * sv[b]);
        }
    }
    h
}

/// `R(p)^T x` for a unit `p`: a global vector in body coordinates.
pub fn rotate_back(p: &[f64], x: &[f64; 3]) -> [f64; 3] {
    rotate(&[p[0], -p[1], -p[2], -p[3]], x)
}

/// `pdot = 1/2 G(p)^T w'` for a unit `p` and body angular velocity `w'`.
pub fn rate_from_body_angular_velocity(p: &[f64], w: &[f64; 3]) -> [f64; 4] {
    let g = g_matrix(&Vector4::new(p[0], p[1], p[2], p[3]));
    let r = 0.5 * g.transpose() * Vector3::from(*w);
    [r[0], r[1], r[2], r[3]]
}

/// Body angular velocity `w' = 2 G(p) pdot`.
pub fn body_angular_velocity(p: &[f64], pdot: &[f64]) -> [f64; 3] {
    let g = g_matrix(&Vector4::new(p[0], p[1], p[2], p[3]));
    (2.0 * g * Vector4::new(pdot[0], pdot[1], pdot[2], pdot[3])).into()
}
