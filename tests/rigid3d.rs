//! 3-D rigid bodies in Euler parameters (SPEC.md §6): the kinematics and
//! inertial force against finite differences and Lagrange's equations, a
//! torque-free body, the heavy top, and 3-D joints against planar and
//! analytic counterparts.

mod common;

use common::fd::{fd_gradient, fd_jacobian_h, Rng};
use common::{max_abs, max_diff, max_energy_change, model_path, order, rel_err, run_file};
use flexmb::element::{Element, EulerKinetic, RateForce, RateState, Rigid3d, StepStart};
use flexmb::input::load_model_str;
use flexmb::integrate::IntegratorSpec;
use flexmb::kinematics::rotation::{
    body_angular_velocity, g_matrix, g_transpose_derivative, rotate, rotate_hessian,
    rotate_jacobian,
};
use flexmb::output::MemoryRecorder;
use flexmb::run::{RunSummary, Simulation};
use nalgebra::{Matrix3, Vector3, Vector4};

const H: f64 = 1e-4;

/// Runs model text with the given scheme, dt and end time.
fn run_str(text: &str, scheme: &str, dt: f64, t_end: f64) -> (RunSummary, MemoryRecorder) {
    let file = load_model_str(text, "rigid3d.toml").expect("model builds");
    let over = IntegratorSpec {
        scheme: Some(scheme.into()),
        dt: Some(dt),
        t_end: Some(t_end),
        ..IntegratorSpec::default()
    };
    run_file(file, &over)
}

fn heavy_top(dt: f64, t_end: f64) -> (RunSummary, MemoryRecorder) {
    let text = std::fs::read_to_string(model_path("heavy_top")).unwrap();
    run_str(&text, "midpoint", dt, t_end)
}

/// Rotation matrix A(p) = E(p) G(p)^T for a unit p (Nikravesh eq. 6.82).
fn rotation_matrix(p: &[f64]) -> Matrix3<f64> {
    let e = |s: [f64; 3]| Vector3::from(rotate(p, &s));
    Matrix3::from_columns(&[e([1.0, 0.0, 0.0]), e([0.0, 1.0, 0.0]), e([0.0, 0.0, 1.0])])
}

/// Spatial angular momentum about the origin of body states `q = (r, p)`, `qd`.
fn angular_momentum(m: f64, j: &Matrix3<f64>, q: &[f64], qd: &[f64]) -> Vector3<f64> {
    let r = Vector3::new(q[0], q[1], q[2]);
    let v = Vector3::new(qd[0], qd[1], qd[2]);
    let w = Vector3::from(body_angular_velocity(&q[3..7], &qd[3..7]));
    r.cross(&(m * v)) + rotation_matrix(&q[3..7]) * j * w
}

#[test]
fn rotation_kinematics_against_finite_differences() {
    let mut rng = Rng(0x3D01);
    for _ in 0..5 {
        let p = rng.vec(4, -1.0, 1.0);
        let s = [
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
        ];
        let w = [
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
        ];
        let jac = rotate_jacobian(&p, &s).concat();
        let fd = fd_jacobian_h(&p, H, 3, |x, out| out.copy_from_slice(&rotate(x, &s)));
        assert!(rel_err(&jac, &fd) < 1e-9, "d(R s)/dp");
        let hess = rotate_hessian(&s, &w).concat();
        let fd = fd_jacobian_h(&p, H, 4, |x, out| {
            let j = rotate_jacobian(x, &s);
            for (k, o) in out.iter_mut().enumerate() {
                *o = (0..3).map(|a| w[a] * j[a][k]).sum();
            }
        });
        assert!(rel_err(&hess, &fd) < 1e-9, "d2(w.R s)/dp2");
        let wv = Vector3::from(w);
        let d = g_transpose_derivative(&wv);
        let fd = fd_jacobian_h(&p, H, 4, |x, out| {
            let g = g_matrix(&Vector4::new(x[0], x[1], x[2], x[3]));
            out.copy_from_slice((g.transpose() * wv).as_slice());
        });
        let dt: Vec<f64> = d.transpose().iter().copied().collect(); // row-major
        assert!(rel_err(&dt, &fd) < 1e-9, "d(G^T w)/dp");
    }
    // On |p| = 1, R(p) is a rotation and w' = 2 G pdot matches dA/dt = A [w'x].
    let mut p = rng.vec(4, -1.0, 1.0);
    let n = p.iter().map(|x| x * x).sum::<f64>().sqrt();
    p.iter_mut().for_each(|x| *x /= n);
    let a = rotation_matrix(&p);
    assert!((a.transpose() * a - Matrix3::identity()).amax() < 1e-14);
    assert!((a.determinant() - 1.0).abs() < 1e-14);
    let mut pd = rng.vec(4, -1.0, 1.0);
    let c = pd.iter().zip(&p).map(|(x, y)| x * y).sum::<f64>();
    pd.iter_mut().zip(&p).for_each(|(x, y)| *x -= c * y); // p . pdot = 0
    let h = 1e-6;
    let at = |s: f64| {
        let q: Vec<f64> = p.iter().zip(&pd).map(|(x, y)| x + s * y).collect();
        rotation_matrix(&q)
    };
    let adot = (at(h) - at(-h)) / (2.0 * h);
    let w = Vector3::from(body_angular_velocity(&p, &pd));
    assert!((adot - a * w.cross_matrix()).amax() < 1e-8, "w' = 2 G pdot");
}

fn random_body(rng: &mut Rng) -> Rigid3d {
    let l = Matrix3::from_fn(|_, _| rng.range(-1.0, 1.0));
    let j = l * l.transpose() + Matrix3::identity() * 0.2;
    Rigid3d::new(2.5, [0, 1, 2].map(|r| [j[(r, 0)], j[(r, 1)], j[(r, 2)]]))
}

/// The inertial force and its derivatives `[f, df/du, df/dv, df/da]` at
/// the state (u, v, a); with `midpoint`, at the midpoint state of that step
/// (with the energy correction).
fn inertia_at(
    b: &Rigid3d,
    (u, v, a): (&[f64], &[f64], &[f64]),
    midpoint: Option<StepStart>,
) -> [Vec<f64>; 4] {
    let mut out = [vec![0.0; 7], vec![0.0; 49], vec![0.0; 49], vec![0.0; 49]];
    let [f, k, c, m] = &mut out;
    let x = RateState { u, v, a, midpoint };
    b.inertia_force(&x, &mut RateForce { f, k, c, m });
    out
}

fn inertia(b: &Rigid3d, u: &[f64], v: &[f64], a: &[f64]) -> [Vec<f64>; 4] {
    inertia_at(b, (u, v, a), None)
}

/// The inertial force at the midpoint state (u, v, a) of a step of size `dt`
/// from `u0`, i.e. with the energy correction.
fn midpoint_inertia(
    b: &Rigid3d,
    (u, v, a): (&[f64], &[f64], &[f64]),
    u0: &[f64],
    dt: f64,
) -> [Vec<f64>; 4] {
    inertia_at(b, (u, v, a), Some(StepStart { u_n: u0, dt }))
}

/// Checks `[df/du, df/dv, df/da]` (`d`) of the force `f(u, v, a)` against
/// finite differences at (u, v, a), each to relative `tol` (`label` names the
/// case); returns the largest relative error.
fn check_rate_derivatives(
    label: &str,
    d: [&[f64]; 3],
    (u, v, a): (&[f64], &[f64], &[f64]),
    f: impl Fn(&[f64], &[f64], &[f64]) -> Vec<f64>,
    tol: f64,
) -> f64 {
    let fd_k = fd_jacobian_h(u, H, 7, |x, o| o.copy_from_slice(&f(x, v, a)));
    let fd_c = fd_jacobian_h(v, H, 7, |x, o| o.copy_from_slice(&f(u, x, a)));
    let fd_m = fd_jacobian_h(a, H, 7, |x, o| o.copy_from_slice(&f(u, v, x)));
    let mut worst: f64 = 0.0;
    for (what, x, y) in [
        ("df/du", d[0], &fd_k),
        ("df/dv", d[1], &fd_c),
        ("df/da", d[2], &fd_m),
    ] {
        let e = rel_err(x, y);
        assert!(e < tol, "{label} {what}: {e:.2e}");
        worst = worst.max(e);
    }
    worst
}

/// A body with inertia diag(j) in rotated body axes.
fn body_with_moments(rng: &mut Rng, j: [f64; 3]) -> Rigid3d {
    let mut p = rng.vec(4, -1.0, 1.0);
    let n = p.iter().map(|x| x * x).sum::<f64>().sqrt();
    p.iter_mut().for_each(|x| *x /= n);
    let r = rotation_matrix(&p);
    let jj = r * Matrix3::from_diagonal(&Vector3::from(j)) * r.transpose();
    Rigid3d::new(2.0, [0, 1, 2].map(|i| [jj[(i, 0)], jj[(i, 1)], jj[(i, 2)]]))
}

/// The energy-consistent midpoint force (src/element/rigid3d.rs): for
/// asymmetric, axisymmetric (in rotated body axes) and spherical inertia,
/// `(p1 - p0) . f_p = T(p1, v1) - T(p0, v0)` to round-off, its u, v and a
/// derivatives against finite differences, and the correction vanishing as
/// dt^2 (second order, the scheme's accuracy).
#[test]
fn energy_consistent_midpoint_force() {
    let mut rng = Rng(0xE4C0);
    let mut worst: f64 = 0.0;
    let forms = [EulerKinetic::Quadratic, EulerKinetic::ScaleInvariant];
    for (form, (label, moments)) in forms.into_iter().flat_map(|k| {
        [
            ("asymmetric", [1.0, 2.0, 3.5]),
            ("axisymmetric", [0.7, 1.9, 0.7]),
            ("spherical", [1.3, 1.3, 1.3]),
        ]
        .map(|x| (k, x))
    }) {
        let label = &format!("{label} ({form:?})");
        let b = body_with_moments(&mut rng, moments).with_kinetic_energy(form);
        let mut gaps = Vec::new();
        for dt in [0.1, 0.05] {
            // A step of a unit quaternion: p0, p1 on the sphere, the midpoint
            // state from the midpoint kinematics.
            let mut p0 = rng.vec(4, -1.0, 1.0);
            let n0 = p0.iter().map(|x| x * x).sum::<f64>().sqrt();
            p0.iter_mut().for_each(|x| *x /= n0);
            let dir = rng.vec(4, -1.0, 1.0);
            let mut p1: Vec<f64> = p0.iter().zip(&dir).map(|(x, d)| x + dt * d).collect();
            let n1 = p1.iter().map(|x| x * x).sum::<f64>().sqrt();
            p1.iter_mut().for_each(|x| *x /= n1);
            let v0: Vec<f64> = rng.vec(7, -2.0, 2.0);
            let u0: Vec<f64> = rng.vec(3, -1.0, 1.0).into_iter().chain(p0).collect();
            let u1: Vec<f64> = rng.vec(3, -1.0, 1.0).into_iter().chain(p1).collect();
            let um: Vec<f64> = u0.iter().zip(&u1).map(|(a, b)| 0.5 * (a + b)).collect();
            let vm: Vec<f64> = u0.iter().zip(&u1).map(|(a, b)| (b - a) / dt).collect();
            let v1: Vec<f64> = vm.iter().zip(&v0).map(|(m, a)| 2.0 * m - a).collect();
            let am: Vec<f64> = v0.iter().zip(&v1).map(|(a, b)| (b - a) / dt).collect();
            let [f, k, c, m] = midpoint_inertia(&b, (&um, &vm, &am), &u0, dt);
            let plain = inertia(&b, &um, &vm, &am)[0].clone();
            let dt_kin = b.kinetic_energy(&u1, &v1) - b.kinetic_energy(&u0, &v0);
            let work = |f: &[f64]| -> f64 { (3..7).map(|i| (u1[i] - u0[i]) * f[i]).sum() };
            let gap = (work(&f) - dt_kin).abs() / dt_kin.abs();
            let plain_gap = (work(&plain) - dt_kin).abs() / dt_kin.abs();
            gaps.push(plain_gap);
            println!(
                "{label} dt {dt}: du.f - dT = {gap:.1e} relative (plain midpoint force {plain_gap:.1e})"
            );
            if label.starts_with("spherical") {
                assert_eq!(f, plain, "a spherical body has no correction direction");
            } else {
                assert!(gap < 1e-12, "{label}: energy gap {gap:e}");
            }
            let e = check_rate_derivatives(
                label,
                [&k, &c, &m],
                (&um, &vm, &am),
                |x, y, z| midpoint_inertia(&b, (x, y, z), &u0, dt)[0].clone(),
                1e-7,
            );
            worst = worst.max(e);
        }
        if !label.starts_with("spherical") {
            // The plain force's energy gap is the scheme's O(dt^3) per step.
            assert!(gaps[0] > 1e-6, "{label}: the correction is exercised");
        }
    }
    eprintln!("energy-consistent midpoint force: worst derivative error {worst:.2e}");
}

#[test]
fn inertial_force_derivatives_and_lagrange_equations() {
    let mut rng = Rng(0x3D02);
    let mut worst: f64 = 0.0;
    for k in 0..10 {
        let form = [EulerKinetic::Quadratic, EulerKinetic::ScaleInvariant][k % 2];
        let b = random_body(&mut rng).with_kinetic_energy(form);
        let (u, v, a) = (
            rng.vec(7, -1.0, 1.0),
            rng.vec(7, -2.0, 2.0),
            rng.vec(7, -3.0, 3.0),
        );
        let [f, k, c, m] = inertia(&b, &u, &v, &a);
        let e = check_rate_derivatives(
            &format!("{form:?}"),
            [&k, &c, &m],
            (&u, &v, &a),
            |x, y, z| inertia(&b, x, y, z)[0].clone(),
            1e-8,
        );
        worst = worst.max(e);
        // Lagrange: f = d/dt(dT/dv) - dT/du with T the rotational kinetic energy;
        // d/dt(dT/dv) = (d2T/dv2) a + (d2T/dv du) v.
        let t_v = |uu: &[f64], vv: &[f64]| fd_gradient(vv, H, |x| b.kinetic_energy(uu, x));
        let d2_vv = fd_jacobian_h(&v, H, 7, |x, o| o.copy_from_slice(&t_v(&u, x)));
        let d2_vu = fd_jacobian_h(&u, H, 7, |x, o| o.copy_from_slice(&t_v(x, &v)));
        let t_u = fd_gradient(&u, H, |x| b.kinetic_energy(x, &v));
        let lagrange: Vec<f64> = (0..7)
            .map(|r| {
                (0..7)
                    .map(|s| d2_vv[r * 7 + s] * a[s] + d2_vu[r * 7 + s] * v[s])
                    .sum::<f64>()
                    - t_u[r]
            })
            .collect();
        // The translational part m a is in the constant mass matrix.
        let mut lagr_rot = lagrange.clone();
        lagr_rot[..3].fill(0.0);
        let e = rel_err(&f, &lagr_rot);
        assert!(
            e < 1e-6,
            "{form:?}: inertial force vs Lagrange's equations: {e:.2e}"
        );
        // df/da is the mass matrix of T: 2 T = v^T M v.
        let t2: f64 = (0..7)
            .map(|r| (0..7).map(|s| v[r] * m[r * 7 + s] * v[s]).sum::<f64>())
            .sum();
        assert!((t2 - 2.0 * b.kinetic_energy(&u, &v)).abs() < 1e-12 * t2.abs());
    }
    eprintln!("rigid body inertial force: worst derivative error {worst:.2e}");
}

/// The normalization reaction of the two kinetic-energy forms
/// (src/element/rigid3d.rs): the scale-invariant force has no component
/// along p at any state (`p . f~ = 0`, also off `|p| = 1`); on `|p| = 1`,
/// `p . pdot = 0` the quadratic form's is `p . f = -2 w'.J w'` (the
/// multiplier 2 w'.J w') and the two forces differ by `2 (w'.J w') p` only.
#[test]
fn normalization_reaction_of_the_kinetic_energy_forms() {
    let mut rng = Rng(0x3D03);
    for _ in 0..5 {
        let quadratic = random_body(&mut rng);
        let invariant = quadratic
            .clone()
            .with_kinetic_energy(EulerKinetic::ScaleInvariant);
        let (u, v, a) = (
            rng.vec(7, -1.0, 1.0),
            rng.vec(7, -2.0, 2.0),
            rng.vec(7, -3.0, 3.0),
        );
        let f = &inertia(&invariant, &u, &v, &a)[0];
        let along: f64 = (3..7).map(|i| u[i] * f[i]).sum();
        let scale = max_abs(f) * max_abs(&u[3..]);
        println!("off |p| = 1: p.f~ = {along:.1e} (|f~| |p| = {scale:.1e})");
        assert!(along.abs() <= 1e-14 * scale, "p.f~ = {along:e}");

        // On the manifold.
        let mut u = u;
        let n = u[3..].iter().map(|x| x * x).sum::<f64>().sqrt();
        u[3..].iter_mut().for_each(|x| *x /= n);
        let mut v = v;
        let c: f64 = (3..7).map(|i| u[i] * v[i]).sum();
        (3..7).for_each(|i| v[i] -= c * u[i]);
        let fq = &inertia(&quadratic, &u, &v, &a)[0];
        let fi = &inertia(&invariant, &u, &v, &a)[0];
        let w2 = 4.0 * quadratic.kinetic_energy(&u, &v); // 2 w'.J w' = 4 T
        let along_q: f64 = (3..7).map(|i| u[i] * fq[i]).sum();
        let along_i: f64 = (3..7).map(|i| u[i] * fi[i]).sum();
        let shifted: Vec<f64> = (0..7)
            .map(|i| if i < 3 { fq[i] } else { fq[i] + w2 * u[i] })
            .collect();
        println!(
            "on |p| = 1: p.f = {along_q:.6} (2 w.J w = {w2:.6}), p.f~ = {along_i:.1e}, \
             |f~ - f - 2 (w.J w) p| = {:.1e}",
            max_diff(fi, &shifted)
        );
        assert!((along_q + w2).abs() <= 1e-13 * w2, "quadratic form: p.f");
        assert!(along_i.abs() <= 1e-13 * w2, "scale-invariant: p.f~");
        assert!(max_diff(fi, &shifted) <= 1e-13 * max_abs(fq), "f~ - f");
        let t = invariant.kinetic_energy(&u, &v);
        assert!((t - quadratic.kinetic_energy(&u, &v)).abs() <= 1e-14 * t);
    }
}

/// An asymmetric body spinning freely (no gravity, no joints but |p| = 1).
const FREE_BODY: &str = r#"
schema = 1
dimension = 3
[[body]]
id = "b"
position = [0.2, -0.1, 0.3]
orientation = [0.9, 0.3, -0.2, 0.2449489742783178]
mass = 3.0
inertia = [1.0, 2.0, 3.0, 0.1, -0.05, 0.2]
velocity = [0.3, 0.1, -0.2]
angular_velocity = [0.5, 4.0, 0.3]
"#;

/// Largest relative energy and angular-momentum changes and |p| - 1 of a free-body run.
fn free_body_drifts(dt: f64) -> [f64; 3] {
    let j = Matrix3::new(1.0, 0.1, 0.2, 0.1, 2.0, -0.05, 0.2, -0.05, 3.0);
    let (s, rec) = run_str(FREE_BODY, "midpoint", dt, 4.0);
    assert!(s.failure.is_none(), "free body: {}", s.line());
    let h0 = angular_momentum(3.0, &j, &rec.u[0], &rec.v[0]);
    let e0 = rec.energy[0].total;
    let mut d = [0.0_f64; 3];
    for k in 0..rec.u.len() {
        let h = angular_momentum(3.0, &j, &rec.u[k], &rec.v[k]);
        d[0] = d[0].max((rec.energy[k].total - e0).abs() / e0);
        d[1] = d[1].max((h - h0).amax() / h0.amax());
        let p = &rec.u[k][3..7];
        d[2] = d[2].max((p.iter().map(|x| x * x).sum::<f64>().sqrt() - 1.0).abs());
    }
    eprintln!(
        "free body dt {dt}: energy {:.2e}, angular momentum {:.2e}, |p|-1 {:.2e}, {:.3} it/step",
        d[0],
        d[1],
        d[2],
        s.iterations_per_step()
    );
    d
}

/// The midpoint rule with the energy-consistent Euler-parameter inertia
/// (src/element/rigid3d.rs) conserves a free body's energy to round-off; its
/// spatial angular momentum only to O(dt^2): with the midpoint kinematics on
/// Euler parameters no inertial force conserves both (docs/theory/rigid3d.md;
/// the director body does, `tests/directors.rs`).
#[test]
fn free_body_energy_conserved_angular_momentum_second_order() {
    let (c, f) = (free_body_drifts(1e-2), free_body_drifts(5e-3));
    assert!(c[2] < 1e-13 && f[2] < 1e-13, "|p| = 1");
    assert!(
        c[0] < 1e-12 && f[0] < 1e-12,
        "energy: {:.2e}, {:.2e}",
        c[0],
        f[0]
    );
    assert!(
        c[1] < 2e-4,
        "angular momentum drift at dt 1e-2: {:.2e}",
        c[1]
    );
    let o = order(c[1], f[1]);
    assert!(
        (1.9..=2.2).contains(&o),
        "angular momentum error order {o:.2}"
    );
}

#[test]
fn heavy_top_spin_and_normalization() {
    let (s, rec) = heavy_top(1e-3, 2.0);
    assert!(s.failure.is_none(), "heavy top: {}", s.line());
    let (mut spin, mut dp): (f64, f64) = (0.0, 0.0);
    for (u, v) in rec.u.iter().zip(&rec.v) {
        let w = body_angular_velocity(&u[3..7], &v[3..7]);
        spin = spin.max((w[1] - 150.0).abs() / 150.0);
        dp = dp.max((u[3..7].iter().map(|x| x * x).sum::<f64>().sqrt() - 1.0).abs());
    }
    let de = max_energy_change(&rec.energy) / rec.energy[0].total.abs();
    eprintln!(
        "heavy top dt 1e-3, 2 s: spin {spin:.2e}, |p|-1 {dp:.2e}, energy {de:.2e}, {:.3} it/step",
        s.iterations_per_step()
    );
    assert!(spin < 1e-8, "spin about the symmetry axis: {spin:.2e}");
    assert!(dp < 1e-12, "|p| = 1: {dp:.2e}");
    assert!((s.iterations_per_step() - 3.0).abs() < 0.5);
    // SPEC.md §6: energy conserved by the midpoint scheme to 1e-8 relative.
    assert!(de < 1e-12, "energy {de:.2e}");
}

#[test]
fn heavy_top_second_order() {
    let t_end = 0.25;
    let (_, fine) = heavy_top(1.0 / 16000.0, t_end);
    let (ur, lr) = (
        fine.u.last().unwrap().clone(),
        fine.lambda.last().unwrap().clone(),
    );
    let errs: Vec<(f64, f64)> = [1.0 / 1000.0, 1.0 / 2000.0]
        .iter()
        .map(|&dt| {
            let (_, r) = heavy_top(dt, t_end);
            (
                max_diff(r.u.last().unwrap(), &ur),
                max_diff(&r.lambda.last().unwrap()[..3], &lr[..3]),
            )
        })
        .collect();
    let (ou, ol) = (order(errs[0].0, errs[1].0), order(errs[0].1, errs[1].1));
    eprintln!("heavy top orders at t = {t_end}: u {ou:.3}, lambda {ol:.3} (errors {errs:?})");
    assert!((1.9..=2.2).contains(&ou) && (1.9..=2.2).contains(&ol));
}

/// A pendulum: body of mass 2, inertia 0.3 about axes perpendicular to its
/// long axis, centre of mass 0.8 from the pivot, started at 1 rad from the
/// hanging position (the hanging direction is `down`).
fn planar_pendulum_2d() -> String {
    let th: f64 = 1.0;
    format!(
        r#"
schema = 1
dimension = 2
gravity = [0.0, -9.81]
[[body]]
id = "b"
position = [{x}, {y}]
angle = {th}
mass = 2.0
inertia = 0.3
[[joint]]
type = "ground_pin"
id = "pin"
point = {{ body = "b", offset = [0.0, 0.8] }}
ground = [0.0, 0.0]
"#,
        x = 0.8 * th.sin(),
        y = -0.8 * th.cos(),
    )
}

/// The same pendulum as a 3-D body rotating about `axis` (unit), with gravity
/// `g` perpendicular to the axis, on a spherical or a revolute joint.
fn pendulum_3d(joint: &str, axis: [f64; 3], down: [f64; 3]) -> String {
    let th: f64 = 1.0;
    let (n, d) = (Vector3::from(axis), Vector3::from(down));
    // Body frame: body y along the pivot direction (centre -> pivot is +y),
    // rotated by th about n from the hanging position. Build p from the axis-angle.
    // Hanging: body y = -d; body z = n; body x = y x z.
    let (y0, z0) = (-d, n);
    let x0 = y0.cross(&z0);
    let r0 = Matrix3::from_columns(&[x0, y0, z0]);
    let q0 = nalgebra::UnitQuaternion::from_matrix(&r0);
    let q = nalgebra::UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_normalize(n), th) * q0;
    let rot = q.to_rotation_matrix();
    let c = rot * Vector3::new(0.0, -0.8, 0.0);
    let g = 9.81 * d;
    let extra = if joint == "revolute" {
        format!("axis = [{}, {}, {}]", n[0], n[1], n[2])
    } else {
        String::new()
    };
    format!(
        r#"
schema = 1
dimension = 3
gravity = [{gx}, {gy}, {gz}]
[[body]]
id = "b"
position = [{cx}, {cy}, {cz}]
orientation = [{p0}, {p1}, {p2}, {p3}]
mass = 2.0
inertia = [0.3, 0.05, 0.3]
[[joint]]
type = "{joint}"
id = "pin"
a = {{ ground = [0.0, 0.0, 0.0] }}
b = {{ body = "b", offset = [0.0, 0.8, 0.0] }}
{extra}
"#,
        gx = g[0],
        gy = g[1],
        gz = g[2],
        cx = c[0],
        cy = c[1],
        cz = c[2],
        p0 = q.w,
        p1 = q.i,
        p2 = q.j,
        p3 = q.k,
    )
}

/// Swing angle of the centre of mass `c` about `n` from the hanging direction `d`.
fn swing(c: &[f64], n: [f64; 3], d: [f64; 3]) -> f64 {
    let (n, d, c) = (
        Vector3::from(n),
        Vector3::from(d),
        Vector3::new(c[0], c[1], c[2]),
    );
    let e = n.cross(&d);
    c.dot(&e).atan2(c.dot(&d))
}

#[test]
fn pendulums_3d_match_the_planar_pendulum() {
    let (dt, t_end) = (1e-3, 2.0);
    let (s2, r2) = run_str(&planar_pendulum_2d(), "midpoint", dt, t_end);
    assert!(s2.failure.is_none());
    let (sref, rref) = run_str(&planar_pendulum_2d(), "midpoint", dt / 16.0, t_end);
    assert!(sref.failure.is_none());
    let th_ref = rref.u.last().unwrap()[2];
    let k = 1.0 / 3.0_f64.sqrt();
    let cases = [
        ("spherical", [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]),
        ("revolute", [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]),
        // A tilted hinge, gravity perpendicular to it.
        ("revolute", [k, k, k], [1.0, -1.0, 0.0]),
    ];
    for (joint, n, d) in cases {
        let dn = Vector3::from(d).normalize();
        let d = [dn[0], dn[1], dn[2]];
        let text = pendulum_3d(joint, n, d);
        let (s3, r3) = run_str(&text, "midpoint", dt, t_end);
        assert!(s3.failure.is_none(), "{joint}: {}", s3.line());
        let (_, r3h) = run_str(&text, "midpoint", dt / 2.0, t_end);
        let th3 = |r: &MemoryRecorder| swing(&r.u.last().unwrap()[..3], n, d);
        let (e, eh) = ((th3(&r3) - th_ref).abs(), (th3(&r3h) - th_ref).abs());
        // 2-D and 3-D discretizations differ; both converge to the same angle.
        let d2 = (r2.u.last().unwrap()[2] - th_ref).abs();
        eprintln!(
            "{joint} pendulum about {n:?}: angle error {e:.2e} (dt/2: {eh:.2e}, order {:.2}); planar {d2:.2e}",
            order(e, eh)
        );
        assert!(
            e < 1e-3 && (1.8..=2.3).contains(&order(e, eh)),
            "{joint} about {n:?}"
        );
        // The motion stays in the plane through the pivot perpendicular to n.
        let off =
            r3.u.iter()
                .map(|u| (u[0] * n[0] + u[1] * n[1] + u[2] * n[2]).abs())
                .fold(0.0, f64::max);
        assert!(off < 1e-12, "{joint}: out-of-plane {off:.2e}");
    }
}

/// The same pendulums with a director body (midpoint, option dg): the swing
/// angle converges at second order to the planar reference, and the director
/// and Euler-parameter bodies agree to O(dt^2).
#[test]
fn director_pendulums_match_euler_parameter_ones() {
    let (dt, t_end) = (1e-3, 2.0);
    let (_, rref) = run_str(&planar_pendulum_2d(), "midpoint", dt / 16.0, t_end);
    let th_ref = rref.u.last().unwrap()[2];
    let k = 1.0 / 3.0_f64.sqrt();
    let cases = [
        ("spherical", [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]),
        ("revolute", [k, k, k], [1.0, -1.0, 0.0]),
    ];
    for (joint, n, d) in cases {
        let dn = Vector3::from(d).normalize();
        let d = [dn[0], dn[1], dn[2]];
        let ep = pendulum_3d(joint, n, d);
        let dir = ep.replace("mass = 2.0", "attitude = \"directors\"\nmass = 2.0")
            + "[integrator]\noption = \"dg\"\n";
        let th = |r: &MemoryRecorder, i: usize| swing(&r.u[i][..3], n, d);
        let (mut errs, mut gaps) = (Vec::new(), Vec::new());
        for h in [dt, dt / 2.0] {
            let (s, rd) = run_str(&dir, "midpoint", h, t_end);
            assert!(s.failure.is_none(), "{joint} directors: {}", s.line());
            let (_, re) = run_str(&ep, "midpoint", h, t_end);
            let last = rd.u.len() - 1;
            errs.push((th(&rd, last) - th_ref).abs());
            gaps.push(
                (0..rd.u.len())
                    .map(|i| (th(&rd, i) - th(&re, i)).abs())
                    .fold(0.0, f64::max),
            );
            if h == dt {
                let de = max_energy_change(&rd.energy) / rd.energy[0].total.abs();
                eprintln!(
                    "{joint} director pendulum: energy {de:.2e}, {:.3} it/step",
                    s.iterations_per_step()
                );
                assert!(de < 1e-12, "{joint}: energy {de:.2e}");
            }
        }
        eprintln!(
            "{joint} director pendulum about {n:?}: angle error {:.2e} / {:.2e} (order {:.2}); \
             max |directors - Euler parameters| {:.2e} / {:.2e}",
            errs[0],
            errs[1],
            order(errs[0], errs[1]),
            gaps[0],
            gaps[1]
        );
        assert!(errs[0] < 1e-3 && (1.8..=2.3).contains(&order(errs[0], errs[1])));
        assert!(gaps[0] < 1e-3 && (1.8..=2.3).contains(&order(gaps[0], gaps[1])));
    }
}

#[test]
fn prismatic_body_slides_with_the_exact_acceleration() {
    // Slide axis (1, 0, -1)/sqrt 2 under gravity -z: s'' = g / sqrt 2, no rotation.
    let text = r#"
schema = 1
dimension = 3
gravity = [0.0, 0.0, -9.81]
[[body]]
id = "b"
position = [0.0, 0.0, 0.0]
orientation = [0.8, 0.0, 0.6, 0.0]
mass = 2.0
inertia = [0.3, 0.5, 0.7]
[[joint]]
type = "prismatic"
id = "slide"
line = { ground = [0.0, 0.0, 0.0] }
point = "b"
axis = [1.0, 0.0, -1.0]
"#;
    let (s, rec) = run_str(text, "midpoint", 1e-2, 1.0);
    assert!(s.failure.is_none(), "{}", s.line());
    let t = *rec.time.last().unwrap();
    let sd = 0.5 * 9.81 / 2.0_f64.sqrt() * t * t;
    let u = rec.u.last().unwrap();
    let exact = [
        sd / 2.0_f64.sqrt(),
        0.0,
        -sd / 2.0_f64.sqrt(),
        0.8,
        0.0,
        0.6,
        0.0,
    ];
    let e = max_diff(u, &exact);
    eprintln!("prismatic slide: error {e:.2e}");
    assert!(e < 1e-10, "prismatic: {u:?} vs {exact:?}");
}

#[test]
fn fixed_body_stays_and_carries_its_weight() {
    let p = [0.9, 0.3, -0.2, 0.2449489742783178];
    let (c, s) = ([0.5, 0.0, 0.0], [-0.1, 0.2, 0.3]);
    let r = rotate(&p, &s);
    let weld = |g: [f64; 3]| {
        format!(
            r#"
schema = 1
dimension = 3
gravity = [0.0, 0.0, -9.81]
[[body]]
id = "b"
position = {c:?}
orientation = {p:?}
mass = 2.0
inertia = [0.3, 0.5, 0.7]
[[joint]]
type = "fixed"
id = "weld"
a = {{ ground = {g:?} }}
b = {{ body = "b", offset = {s:?} }}
"#
        )
    };
    let misplaced = load_model_str(&weld([0.0; 3]), "weld.toml")
        .err()
        .expect("rejected");
    assert!(misplaced.message.contains("weld"), "{misplaced}");
    let g = [c[0] + r[0], c[1] + r[1], c[2] + r[2]];
    let (summary, rec) = run_str(&weld(g), "midpoint", 1e-2, 1.0);
    assert!(summary.failure.is_none(), "{}", summary.line());
    let drift = rec
        .u
        .iter()
        .map(|u| max_diff(u, &rec.u[0]))
        .fold(0.0, f64::max);
    // Reaction: the 3 coincidence multipliers carry the weight m g = 19.62.
    let lam = rec.lambda.last().unwrap();
    eprintln!("fixed joint: drift {drift:.2e}, multipliers {lam:?}");
    assert!(drift < 1e-13);
    // Multiplier rows: b.normalization (1), then the weld (3 coincidence + 3 locks).
    let weight = lam[1..4].iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!((weight - 2.0 * 9.81).abs() < 1e-9, "reaction {weight}");
}

/// The midpoint scheme in every Newton form (and the two-field form) gives
/// the same heavy-top motion: the d-form's 1/dt^2-scaled saddle matrix is
/// not mistaken for a singular one.
#[test]
fn heavy_top_in_every_form() {
    let text = std::fs::read_to_string(model_path("heavy_top")).unwrap();
    let file = load_model_str(&text, "heavy_top.toml").unwrap();
    let finals: Vec<(String, Vec<f64>)> = ["a", "v", "d", "two-field"]
        .iter()
        .map(|form| {
            let over = IntegratorSpec {
                form: Some(form.to_string()),
                t_end: Some(0.2),
                ..IntegratorSpec::default()
            };
            let config = file.integrator(&over).unwrap();
            let model = load_model_str(&text, "heavy_top.toml").unwrap().model;
            let mut rec = MemoryRecorder::default();
            let s = Simulation::new(model)
                .run(&config, &text, &file.output, &mut rec, &mut |_| {})
                .unwrap();
            assert!(s.failure.is_none(), "form {form}: {}", s.line());
            (form.to_string(), rec.u.last().unwrap().clone())
        })
        .collect();
    for (form, u) in &finals[1..] {
        let d = max_diff(u, &finals[0].1);
        assert!(d < 1e-9, "form {form} differs from the a-form by {d:.2e}");
    }
}

/// A bad `kinetic_energy` key is a model error naming the file, line,
/// field and reason: an unknown form, the key on a director body, and on a
/// planar body.
#[test]
fn bad_kinetic_energy_key_is_named() {
    let text = std::fs::read_to_string(model_path("axisymmetric_body")).unwrap();
    let line = 1 + text
        .lines()
        .position(|l| l.starts_with("kinetic_energy"))
        .unwrap();
    let err = |t: &str| match load_model_str(t, "body.toml") {
        Ok(_) => panic!("model should be rejected"),
        Err(e) => e.to_string(),
    };
    let unknown = text.replace("= \"scale_invariant\"", "= \"invariant\"");
    let directors = text.replace("attitude = \"euler\"", "attitude = \"directors\"");
    for (bad, reason) in [
        (&unknown, "unknown kinetic energy 'invariant'"),
        (&directors, "is for Euler parameters"),
    ] {
        let msg = err(bad);
        println!("{msg}");
        assert!(
            msg.contains(&format!("body.toml:{line}"))
                && msg.contains("kinetic_energy")
                && msg.contains(reason),
            "{msg}"
        );
    }
    let planar = "dimension = 2\n[[body]]\nid = \"b\"\nposition = [0.0, 0.0]\nmass = 1.0\n\
                  inertia = 1.0\nkinetic_energy = \"quadratic\"\n";
    let msg = err(planar);
    println!("{msg}");
    assert!(
        msg.contains("body.toml:") && msg.contains("kinetic_energy") && msg.contains("3-D"),
        "{msg}"
    );
    // The default is the quadratic form; naming it is accepted.
    let named = text.replace("= \"scale_invariant\"", "= \"quadratic\"");
    assert!(load_model_str(&named, "body.toml").is_ok());
}
