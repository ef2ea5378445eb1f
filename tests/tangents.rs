//! Finite-difference checks of every analytic derivative of the engine, at
//! random non-symmetric configurations (fixed seeds):
//!
//! * Green-strain truss (2-D, 3-D, stress-free and pre-stressed): force =
//!   dV/du, tangent = dP/du;
//! * truss energy-momentum force at the EOM level: its derivative with respect
//!   to u_{n+1} (u~ moving with the level weights), the strain rates it uses,
//!   and the discrete-gradient identity `(u_{n+1} - u_n).P~ = V_{n+1} - V_n`
//!   for the midpoint weights;
//! * every joint (ground pin, revolute body-body / node-node / body-node,
//!   distance in the length and quadratic forms, point on circle): B = dPhi/du
//!   and the curvature `sum_r w_r d^2 Phi_r/du^2` = d(B^T w)/du;
//! * the rolling disk (both attitudes, tilted and spinning, on and slightly
//!   off the attitude manifold): the contact row's B = dPhi/du and curvature;
//!   the velocity-level rows' curvature d(A^T w)/du, `A v` = the velocity of
//!   the material contact point and the contact row's rate = its vertical
//!   velocity, zero Phi, Phi_t, Phi_tt; and the acceleration rows of
//!   `fill_index1` (`d^2 Phi(u + tau v)/dtau^2` on position rows,
//!   `d/dtau A(u + tau v) v` on velocity rows);
//! * path on a parabola and on y = A sin^2(w t), linear combination,
//!   sliders, prescribed motion, the 3-D joints: B = dPhi/du and the curvature
//!   d(B^T w)/du; for the rheonomic ones also Phi_t and Phi_tt + 2 Phi_tu v
//!   against differences in t;
//! * point loads with a linear field: the local derivative and the one the
//!   assembler puts into the Newton matrix against the load vector `add_loads`;
//! * assembled operators: `constraint_jacobian`, `stiffness`,
//!   `internal_force` (against the potential energy) and the velocity
//!   curvature of `fill_index1`;
//! * the assembled Newton matrix of `fill_step` against the derivative of its
//!   residual with respect to the Newton unknowns (delta, lambda), for several
//!   GSSSS schemes and forms, the two-field scheme and all four constraint
//!   options with the consistent Jacobian, and option dg with the midpoint ones;
//! * the spring-damper-actuator's discrete gradient (midpoint weights) and the
//!   joints' discrete derivative of option dg: `du.P_d = dV`, `B_d du = dPhi`
//!   and their derivatives with respect to u_{n+1}.
//!
//! Derivatives are compared with 4th-order central differences; the error is
//! the max-norm of the difference divided by the max-norm of the reference.
//! Run with `--nocapture` to see the observed errors.

use flexmb::assembly::{Assembler, Mechanics, Pattern, SaddleSystem};
use flexmb::element::{
    Element, EulerKinetic, EvaluationPoint, LevelWeights, RotationalSpringDamper, SpringDamper,
    Truss,
};
use flexmb::integrate::gssss::two_field_scheme;
use flexmb::integrate::gssss::{constraint_force, fill_step, ConstraintForce, StepInput};
use flexmb::integrate::gssss::{ConstraintOption, JacobianKind, LinearScheme, PredCorr};
use flexmb::integrate::gssss::{Family, Gssss, SolveForm};
use flexmb::joint::{
    Coincident, ConstraintLevel, Curve, DirectorConstraints, DiscreteExtras, DiskContact,
    DiskGeometry, DiskRolling, Distance, DistanceForm, DotJoint, DotRow, EulerNormalization, Joint,
    LinearCombination, Motion, PathJoint, Point, PointPair, Prescribed, Side, Slider, Slope,
    SlopeTarget, Vector,
};
use flexmb::kinematics::attitude::Attitude;
use flexmb::load::{BodyTorque, PointLoad, TimeFunction, TorqueFrame};
use flexmb::model::{
    Body2d, Body3dSpec, Joint3d, Model, ModelBuilder, PointRef, RotationalSpringDamper as Rsd,
    SpringDamper as Sd, TrussSection,
};
mod common;

use common::fd::{
    fd_force_and_tangent, fd_gradient, fd_jacobian, fd_second, force_and_tangent, level, Rng, Step,
};
use common::{max_abs, max_diff};
use sprs::CsMat;

/// Relative tolerance of every derivative check.
const TOL: f64 = 1e-6;
/// Default finite-difference step (coordinates are of order one).
const H: f64 = 1e-3;

// ---------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------

/// Asserts `analytic == reference` to `TOL` relative to the reference's
/// max-norm, and that neither is trivially zero. Returns the relative error.
fn check(what: &str, analytic: &[f64], reference: &[f64]) -> f64 {
    let scale = max_abs(reference);
    assert!(
        scale > 1e-6 && max_abs(analytic) > 1e-6,
        "{what}: degenerate check (|analytic| = {:.3e}, |reference| = {scale:.3e})",
        max_abs(analytic)
    );
    let err = max_diff(analytic, reference) / scale;
    eprintln!("{what:<72} rel err {err:.2e}");
    assert!(
        err <= TOL,
        "{what}: relative error {err:.3e} > {TOL:e}\n analytic  = {analytic:?}\n reference = {reference:?}"
    );
    err
}

/// Asserts that both `analytic` and `reference` vanish, to `TOL` relative to `scale`.
fn check_zero(what: &str, analytic: &[f64], reference: &[f64], scale: f64) -> f64 {
    let err = max_abs(analytic).max(max_abs(reference)) / scale;
    eprintln!("{what:<72} zero, err {err:.2e}");
    assert!(
        err <= TOL,
        "{what}: expected zero, got |analytic| = {:.3e}, |reference| = {:.3e} (scale {scale:e})",
        max_abs(analytic),
        max_abs(reference)
    );
    err
}

/// Row-major dense copy of a sprs matrix (CSR or CSC).
fn dense(a: &CsMat<f64>) -> Vec<f64> {
    let (rows, cols) = a.shape();
    let mut d = vec![0.0; rows * cols];
    for (v, (r, c)) in a.iter() {
        d[r * cols + c] += *v;
    }
    d
}

/// Row-major dense copy of saddle-point matrix values in the order of `pattern`.
fn dense_pattern(pattern: &Pattern, values: &[f64]) -> Vec<f64> {
    dense(&pattern.to_csc(values))
}

/// Rows `rows` x columns `cols` of a row-major matrix with `ld` columns.
fn block(
    a: &[f64],
    ld: usize,
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
) -> Vec<f64> {
    rows.flat_map(|r| a[r * ld + cols.start..r * ld + cols.end].iter().copied())
        .collect()
}

// ---------------------------------------------------------------------------
// 1. Truss: force = dV/du, tangent = dP/du
// ---------------------------------------------------------------------------

fn truss_separation(dim: usize, u: &[f64]) -> f64 {
    (0..dim)
        .map(|a| (u[dim + a] - u[a]).powi(2))
        .sum::<f64>()
        .sqrt()
}

/// Checks an element's force against dV/du at `u`; returns the relative error.
fn check_force<E: Element>(tag: &str, e: &E, u: &[f64]) -> f64 {
    let (grad, _) = fd_force_and_tangent(e, u, H);
    check(
        &format!("{tag}: P = dV/du"),
        &force_and_tangent(e, u).0,
        &grad,
    )
}

/// Checks an element's tangent against dP/du at `u`; returns the relative error.
fn check_tangent<E: Element>(tag: &str, e: &E, u: &[f64]) -> f64 {
    let (_, jac) = fd_force_and_tangent(e, u, H);
    check(
        &format!("{tag}: K = dP/du"),
        &force_and_tangent(e, u).1,
        &jac,
    )
}

/// Point pairs of the spring-damper checks: nodes, planar and 3-D body points
/// (Euler parameters off the unit sphere: the formulas hold for any p), ground.
fn spring_pairs() -> Vec<(&'static str, PointPair)> {
    let body = |o: [f64; 2]| Point::Body2 { offset: o };
    let body3 = |offset: [f64; 3], attitude: Attitude| Point::Body3 { offset, attitude };
    vec![
        (
            "2-D nodes",
            PointPair {
                a: Point::Node { dim: 2 },
                b: Point::Node { dim: 2 },
            },
        ),
        (
            "3-D nodes",
            PointPair {
                a: Point::Node { dim: 3 },
                b: Point::Node { dim: 3 },
            },
        ),
        (
            "body point-node",
            PointPair {
                a: body([0.3, -0.4]),
                b: Point::Node { dim: 2 },
            },
        ),
        (
            "body-body points",
            PointPair {
                a: body([0.2, 0.1]),
                b: body([-0.5, 0.3]),
            },
        ),
        (
            "ground-body point",
            PointPair {
                a: Point::Ground {
                    position: [0.1, 0.2, 0.0],
                },
                b: body([0.7, 0.0]),
            },
        ),
        (
            "3-D body points",
            PointPair {
                a: body3([0.2, -0.1, 0.3], Attitude::EulerParameters),
                b: body3([-0.4, 0.3, 0.1], Attitude::EulerParameters),
            },
        ),
        (
            "3-D director and Euler-parameter body points",
            PointPair {
                a: body3([0.2, -0.1, 0.3], Attitude::Directors),
                b: body3([-0.4, 0.3, 0.1], Attitude::EulerParameters),
            },
        ),
    ]
}

/// Spring-damper-actuators: force = dV/du, tangent = dP/du, and the damper
/// force's derivatives with respect to u and v, on node pairs (2-D, 3-D) and
/// body-point pairs.
#[test]
fn spring_damper_force_and_tangents() {
    let mut rng = Rng(0x5d4);
    let pairs = spring_pairs();
    for (name, pair) in pairs {
        let n = pair.ndof();
        let u = rng.vec(n, -1.0, 1.0);
        let v = rng.vec(n, -1.0, 1.0);
        let e = SpringDamper::new(pair, rng.range(5.0, 50.0), 0.3, rng.range(0.5, 3.0), 2.5);
        let tag = format!("spring-damper {name}");
        check_force(&tag, &e, &u);
        check_tangent(&tag, &e, &u);
        let damper = |x: &[f64], w: &[f64], f: &mut [f64]| {
            let (mut kk, mut cc) = (vec![0.0; n * n], vec![0.0; n * n]);
            e.damping_force(x, w, f, &mut kk, &mut cc);
        };
        let (mut fd_, mut kd, mut cd) = (vec![0.0; n], vec![0.0; n * n], vec![0.0; n * n]);
        e.damping_force(&u, &v, &mut fd_, &mut kd, &mut cd);
        check(
            &format!("{tag}: dF_d/du"),
            &kd,
            &fd_jacobian(&u, &vec![H; n], n, |x, f| damper(x, &v, f)),
        );
        check(
            &format!("{tag}: dF_d/dv"),
            &cd,
            &fd_jacobian(&v, &vec![H; n], n, |w, f| damper(&u, w, f)),
        );
    }
    for (name, grounded) in [("to ground", true), ("between bodies", false)] {
        let e = RotationalSpringDamper::new(grounded, 7.0, 0.2, 1.5, 0.8);
        let n = e.ndof();
        let u = rng.vec(n, -1.0, 1.0);
        let v = rng.vec(n, -1.0, 1.0);
        let tag = format!("rotational spring-damper {name}");
        check_force(&tag, &e, &u);
        check_tangent(&tag, &e, &u);
        let (mut fd_, mut kd, mut cd) = (vec![0.0; n], vec![0.0; n * n], vec![0.0; n * n]);
        e.damping_force(&u, &v, &mut fd_, &mut kd, &mut cd);
        let damper = |w: &[f64], f: &mut [f64]| {
            let (mut kk, mut cc) = (vec![0.0; n * n], vec![0.0; n * n]);
            e.damping_force(&u, w, f, &mut kk, &mut cc);
        };
        check(
            &format!("{tag}: dF_d/dv"),
            &cd,
            &fd_jacobian(&v, &vec![H; n], n, damper),
        );
        assert!(kd.iter().all(|x| *x == 0.0));
    }
}

#[test]
fn truss_force_and_tangent() {
    let mut rng = Rng(0x7255);
    let mut worst: f64 = 0.0;
    for dim in [2, 3] {
        for trial in 0..3 {
            let u = rng.vec(2 * dim, -1.0, 1.0);
            let l = truss_separation(dim, &u);
            let ea = rng.range(10.0, 100.0);
            for (case, rest) in [("tension", 0.7 * l), ("compression", 1.3 * l)] {
                let t = Truss::new(dim, ea, rest, 0.0);
                let tag = format!("truss {dim}-D #{trial} {case}");
                worst = worst.max(check_force(&tag, &t, &u));
                worst = worst.max(check_tangent(&tag, &t, &u));
            }
            // Stress-free: rest length = current length, P = 0 but K = EA/L^3 g g^T != 0.
            let t = Truss::new(dim, ea, l, 0.0);
            let tag = format!("truss {dim}-D #{trial} stress-free");
            let grad = fd_gradient(&u, H, |x| t.potential(x));
            worst = worst.max(check_zero(
                &format!("{tag}: P = dV/du = 0"),
                &force_and_tangent(&t, &u).0,
                &grad,
                ea,
            ));
            worst = worst.max(check_tangent(&tag, &t, &u));
        }
    }
    eprintln!("truss_force_and_tangent: worst {worst:.2e}");
}

// ---------------------------------------------------------------------------
// 2. Truss at the EOM time level (energy-momentum strain, seed eqs. 2.7-2.9)
// ---------------------------------------------------------------------------

/// The translational spring-damper-actuator's discrete gradient (what the
/// midpoint schemes ask for) is Gonzalez's: `du.P_d = V(u_{n+1}) - V(u_n)`
/// (spring and actuator potential), with its exact derivative with respect
/// to u_{n+1}; the gradient at u~ of other weights misses the identity, and a
/// vanishing increment gives the gradient at u_n.
#[test]
fn spring_damper_discrete_gradient() {
    let mut rng = Rng(0xD65);
    let dt = 0.05;
    let midpoint = gssss(Family::V0, [1.0, 1.0, 0.0], SolveForm::A, dt).level_weights();
    assert!(midpoint.is_midpoint());
    let mut worst: f64 = 0.0;
    for (name, pair) in spring_pairs() {
        let n = pair.ndof();
        let e = SpringDamper::new(pair, rng.range(5.0, 50.0), 0.3, rng.range(0.5, 3.0), 2.5);
        let u_n = rng.vec(n, -1.0, 1.0);
        let zero = vec![0.0; n];
        let eom = |u_next: &[f64]| {
            let u_tilde: Vec<f64> = u_n.iter().zip(u_next).map(|(a, b)| 0.5 * (a + b)).collect();
            let lvl = EvaluationPoint {
                u_n: &u_n,
                v_n: &zero,
                a_n: &zero,
                u_next,
                u_tilde: &u_tilde,
                w: midpoint,
            };
            let (mut f, mut k) = (vec![0.0; n], vec![0.0; n * n]);
            e.discrete_gradient(&lvl, &mut f, Some(&mut k));
            (f, k)
        };
        let tag = format!("spring-damper {name}");
        let u_next: Vec<f64> = rng.around(&u_n, 0.4);
        let (f, k) = eom(&u_next);
        let dv = e.potential(&u_next) - e.potential(&u_n);
        let vscale = e.potential(&u_next).abs() + e.potential(&u_n).abs();
        let work: f64 = f
            .iter()
            .zip(u_next.iter().zip(&u_n))
            .map(|(f, (a, b))| f * (a - b))
            .sum();
        let err = (work - dv).abs() / vscale;
        eprintln!("{tag}: |du.P_d - dV| / |V| = {err:.2e}");
        assert!(err <= 1e-14, "{tag}: discrete gradient violated: {err:.3e}");
        worst = worst.max(err);
        // The midpoint gradient alone does not satisfy the identity.
        let mut um = vec![0.0; n];
        for i in 0..n {
            um[i] = 0.5 * (u_n[i] + u_next[i]);
        }
        let mut fm = vec![0.0; n];
        e.force(&um, &mut fm, None);
        let wm: f64 = fm
            .iter()
            .zip(u_next.iter().zip(&u_n))
            .map(|(f, (a, b))| f * (a - b))
            .sum();
        assert!((wm - dv).abs() > 1e-6 * vscale, "{tag}: degenerate case");
        check(
            &format!("{tag}: d P_d / d u_(n+1)"),
            &k,
            &fd_jacobian(&u_next, &vec![H; n], n, |x, f| f.copy_from_slice(&eom(x).0)),
        );
        // u_{n+1} = u_n: the gradient at u_n (the continuous limit).
        let (f0, _) = eom(&u_n);
        let mut g = vec![0.0; n];
        e.force(&u_n, &mut g, None);
        assert_eq!(f0, g, "{tag}: vanishing increment");
    }
    eprintln!("spring_damper_discrete_gradient: worst {worst:.2e}");
}

/// The linear forms of a GSSSS member (its `level_weights` are what the integrators pass).
fn gssss(family: Family, rho: [f64; 3], form: SolveForm, dt: f64) -> LinearScheme {
    Gssss::new(family, rho).expect("valid rho").scheme(form, dt)
}

#[test]
fn truss_eom_force_tangent() {
    let mut rng = Rng(0xE0F);
    let dt = 0.1;
    let weights = [
        ("arbitrary weights", level(0.13, 0.021, 0.37)),
        (
            "U0 generalized-alpha(0.7)",
            gssss(Family::U0, [0.7; 3], SolveForm::A, dt).level_weights(),
        ),
        (
            "V0(0.6,0.9,0.3)",
            gssss(Family::V0, [0.6, 0.9, 0.3], SolveForm::A, dt).level_weights(),
        ),
        ("midpoint", level(0.0, 0.0, 0.5)),
    ];
    let mut worst: f64 = 0.0;
    for dim in [2, 3] {
        let n = 2 * dim;
        for (name, w) in weights {
            let st = Step::new(rng.vec(n, -1.0, 1.0), &mut rng);
            let u_next = rng.vec(n, -1.0, 1.0);
            let t = Truss::new(dim, 70.0, 0.9 * truss_separation(dim, &st.u_n), 0.0);
            let (_, k) = st.eom(&t, w, &u_next);
            let fd = fd_jacobian(&u_next, &vec![H; n], n, |x, f| {
                f.copy_from_slice(&st.eom(&t, w, x).0)
            });
            worst = worst.max(check(
                &format!("truss {dim}-D EOM force, {name}: dP~/du_(n+1)"),
                &k,
                &fd,
            ));
        }
    }
    eprintln!("truss_eom_force_tangent: worst {worst:.2e}");
}

/// The strain rates at t_n inside eps~ are the time derivatives of the Green
/// strain along u(tau) = u_n + tau v_n + tau^2/2 a_n.
#[test]
fn truss_eom_strain_rates() {
    let mut rng = Rng(0x5A7E);
    for dim in [2, 3] {
        let n = 2 * dim;
        let st = Step::new(rng.vec(n, -1.0, 1.0), &mut rng);
        let rest = 1.1 * truss_separation(dim, &st.u_n);
        let (ea, t) = (30.0, Truss::new(dim, 30.0, rest, 0.0));
        let strain =
            |u: &[f64]| (truss_separation(dim, u).powi(2) - rest * rest) / (2.0 * rest * rest);
        // With u~ = u_n, P~ = (EA/L) eps~ g(u_n), g = [-d; d]: eps~ = P~.g / ((EA/L) |g|^2).
        let g: Vec<f64> = (0..n)
            .map(|i| {
                if i < dim {
                    st.u_n[i] - st.u_n[dim + i]
                } else {
                    st.u_n[i] - st.u_n[i - dim]
                }
            })
            .collect();
        let eps_tilde = |w: LevelWeights| {
            let (f, _) = st.eom_at(&t, w, &st.u_n, &st.u_n);
            f.iter().zip(&g).map(|(a, b)| a * b).sum::<f64>()
                / (ea / rest * g.iter().map(|x| x * x).sum::<f64>())
        };
        let e_n = eps_tilde(level(0.0, 0.0, 0.0));
        let edot = eps_tilde(level(1.0, 0.0, 0.0)) - e_n;
        let eddot = eps_tilde(level(0.0, 1.0, 0.0)) - e_n;
        let path = |tau: f64| -> Vec<f64> {
            (0..n)
                .map(|i| st.u_n[i] + tau * st.v_n[i] + 0.5 * tau * tau * st.a_n[i])
                .collect()
        };
        let edot_fd = fd_gradient(&[0.0], H, |x| strain(&path(x[0])))[0];
        let eddot_fd = fd_second(H, |tau| strain(&path(tau)));
        check(
            &format!("truss {dim}-D EOM strain: eps_n"),
            &[e_n],
            &[strain(&st.u_n)],
        );
        check(
            &format!("truss {dim}-D EOM strain: d eps/dt at t_n"),
            &[edot],
            &[edot_fd],
        );
        check(
            &format!("truss {dim}-D EOM strain: d2 eps/dt2 at t_n"),
            &[eddot],
            &[eddot_fd],
        );
    }
}

/// Midpoint weights (c1 = c2 = 0, c3 = 1/2, as the V0(1,1,0) midpoint preset
/// and the two-field scheme give) make P~ an exact discrete gradient.
#[test]
fn truss_discrete_gradient() {
    let dt = 0.05;
    let midpoint = gssss(Family::V0, [1.0, 1.0, 0.0], SolveForm::A, dt).level_weights();
    let two_field = two_field_scheme(dt).level_weights();
    for w in [midpoint, two_field] {
        assert!(
            w.c1dt.abs() <= 1e-15 && w.c2dt2.abs() <= 1e-15 && (w.c3 - 0.5).abs() <= 1e-15,
            "{w:?}"
        );
    }
    let alpha = gssss(Family::U0, [0.7; 3], SolveForm::A, dt).level_weights();
    let mut rng = Rng(0xD6);
    let mut worst: f64 = 0.0;
    for dim in [2, 3] {
        let n = 2 * dim;
        for trial in 0..4 {
            let st = Step::new(rng.vec(n, -1.0, 1.0), &mut rng);
            let u_next: Vec<f64> = rng.around(&st.u_n, 0.4);
            let t = Truss::new(
                dim,
                55.0,
                rng.range(0.5, 1.5) * truss_separation(dim, &st.u_n),
                0.0,
            );
            let dv = t.potential(&u_next) - t.potential(&st.u_n);
            let vscale = t.potential(&u_next).abs() + t.potential(&st.u_n).abs();
            assert!(dv.abs() > 1e-3 * vscale, "degenerate energy change");
            let work = |w: LevelWeights| {
                let (f, _) = st.eom(&t, w, &u_next);
                f.iter()
                    .enumerate()
                    .map(|(i, fi)| fi * (u_next[i] - st.u_n[i]))
                    .sum::<f64>()
            };
            let err = (work(midpoint) - dv).abs() / vscale;
            eprintln!("truss {dim}-D #{trial} discrete gradient: |du.P~ - dV| / |V| = {err:.2e}");
            assert!(err <= 1e-13, "discrete gradient violated: {err:.3e}");
            worst = worst.max(err);
            // The identity is specific to the midpoint level (the check can fail).
            let off = (work(alpha) - dv).abs() / vscale;
            assert!(
                off > 1e-6,
                "generalized-alpha weights unexpectedly conserve energy: {off:.3e}"
            );
        }
    }
    eprintln!("truss_discrete_gradient: worst {worst:.2e}");
}

// ---------------------------------------------------------------------------
// 3. Joints: B = dPhi/du, curvature = d(B^T w)/du
// ---------------------------------------------------------------------------

fn node(dim: usize) -> Point {
    Point::Node { dim }
}

fn body(p: [f64; 2]) -> Point {
    Point::Body2 { offset: p }
}

fn ground(x: f64, y: f64, z: f64) -> Point {
    Point::Ground {
        position: [x, y, z],
    }
}

fn pair(a: Point, b: Point) -> PointPair {
    PointPair { a, b }
}

/// Spatial dimension of a point pair (a planar body is 2-D).
fn pair_dim(p: &PointPair) -> usize {
    let dim = |q: &Point| match *q {
        Point::Node { dim } => dim,
        Point::Body2 { .. } => 2,
        Point::Body3 { .. } => 3,
        Point::Ground { .. } => 0,
    };
    dim(&p.a).max(dim(&p.b))
}

/// Every joint type on every kind of point pair, with a flag saying whether
/// its curvature is identically zero (coincidence of nodes or ground points).
fn joint_cases() -> Vec<(String, Box<dyn Joint>, bool)> {
    let mut cases: Vec<(String, Box<dyn Joint>, bool)> = Vec::new();
    let coincident = [
        (
            "ground_pin",
            "body point",
            pair(ground(0.3, -0.2, 0.0), body([0.4, -0.7])),
        ),
        (
            "ground_pin",
            "node 2-D",
            pair(ground(0.3, -0.2, 0.0), node(2)),
        ),
        (
            "ground_pin",
            "node 3-D",
            pair(ground(0.3, -0.2, 0.5), node(3)),
        ),
        (
            "revolute",
            "body-body",
            pair(body([0.3, 0.5]), body([-0.6, 0.2])),
        ),
        (
            "revolute",
            "body centre-body",
            pair(body([0.0; 2]), body([0.45, -0.35])),
        ),
        ("revolute", "body-node", pair(body([-0.25, 0.65]), node(2))),
        ("revolute", "node-node 2-D", pair(node(2), node(2))),
        ("revolute", "node-node 3-D", pair(node(3), node(3))),
    ];
    for (kind, on, p) in coincident {
        let is_body = |q: Point| matches!(q, Point::Body2 { .. });
        let flat = !is_body(p.a) && !is_body(p.b);
        let j = Coincident::new(kind, pair_dim(&p), p);
        cases.push((format!("{kind} {on}"), Box::new(j), flat));
    }
    let pairs = [
        ("node-node 2-D", pair(node(2), node(2))),
        ("node-node 3-D", pair(node(3), node(3))),
        ("node-body 2-D", pair(node(2), body([0.3, -0.4]))),
        ("body-body 2-D", pair(body([0.2, 0.6]), body([-0.5, 0.1]))),
        (
            "ground-body 2-D",
            pair(ground(0.1, 0.2, 0.0), body([0.7, -0.2])),
        ),
    ];
    let forms = [
        ("|d|-L", DistanceForm::Length(0.8)),
        ("(|d|^2-L^2)/2", DistanceForm::Quadratic(0.8)),
    ];
    for (fname, form) in forms {
        for (on, p) in pairs {
            let j = Distance::new("distance", p, form);
            cases.push((format!("distance {fname} {on}"), Box::new(j), false));
        }
    }
    let circles = [
        (
            "body point 2-D",
            pair(ground(0.1, -0.3, 0.0), body([0.35, 0.55])),
        ),
        ("node 2-D", pair(ground(0.1, -0.3, 0.0), node(2))),
        ("node 3-D", pair(ground(0.1, -0.3, 0.4), node(3))),
    ];
    for (on, p) in circles {
        let j = Distance::new("point_on_circle", p, DistanceForm::Circle(0.6));
        cases.push((format!("point_on_circle {on}"), Box::new(j), false));
    }
    let n = [0.6, -0.8];
    let sliders = [
        (
            "ground line, node",
            pair(ground(0.1, 0.2, 0.0), node(2)),
            None,
            true,
        ),
        (
            "ground line, body point",
            pair(ground(0.1, 0.2, 0.0), body([0.3, 0.5])),
            None,
            false,
        ),
        (
            "body line, node",
            pair(body([-0.2, 0.4]), node(2)),
            None,
            false,
        ),
        (
            "body line, body point",
            pair(body([-0.2, 0.4]), body([0.3, 0.5])),
            None,
            false,
        ),
        (
            "prismatic, ground",
            pair(ground(0.1, 0.2, 0.0), body([0.3, 0.5])),
            Some(0.3),
            false,
        ),
        (
            "prismatic, bodies",
            pair(body([-0.2, 0.4]), body([0.3, 0.5])),
            Some(-0.2),
            false,
        ),
    ];
    for (on, p, lock, flat) in sliders {
        let j = Slider::new("slider", p, n, lock);
        cases.push((format!("slider {on}"), Box::new(j), flat));
    }
    cases.push(("prescribed".into(), Box::new(Prescribed::new(MOTION)), true));
    for (on, p, flat_sine) in [
        ("node", node(2), true),
        ("body point", body([0.35, -0.45]), false),
        ("body centre", body([0.0; 2]), true),
    ] {
        for (cname, curve, flat) in path_curves() {
            let j = PathJoint::new(p, curve);
            let flat = flat && flat_sine;
            cases.push((format!("path {cname} {on}"), Box::new(j), flat));
        }
    }
    let lin = LinearCombination::new(vec![0.7, -1.3, 2.1], 0.4);
    cases.push(("linear combination".into(), Box::new(lin), true));
    cases.extend(joint_cases_3d());
    cases
}

/// The path joint's curves, each with a flag saying whether its own
/// curvature is zero (`f_xx = 0`).
fn path_curves() -> [(&'static str, Curve, bool); 2] {
    [
        ("parabola", Curve::Parabola { a: 0.8, b: -0.3 }, false),
        (
            "sine_squared",
            Curve::SineSquared {
                amplitude: 1.3,
                omega: 2.5,
            },
            true,
        ),
    ]
}

fn body3(s: [f64; 3], attitude: Attitude) -> Point {
    Point::Body3 {
        offset: s,
        attitude,
    }
}

/// 3-D joints: ball joints and distances with 3-D body points, every
/// dot-product row type on body-body and ground-body pairs, slopes to 3-D
/// bodies, for both attitudes (and a director body joined to an
/// Euler-parameter one); the Euler-parameter normalization and the director
/// constraints.
fn joint_cases_3d() -> Vec<(String, Box<dyn Joint>, bool)> {
    let mut cases = Vec::new();
    for (att, other) in [
        (Attitude::EulerParameters, Attitude::EulerParameters),
        (Attitude::Directors, Attitude::Directors),
        (Attitude::Directors, Attitude::EulerParameters),
    ] {
        for (name, j, flat) in joint_cases_3d_for(att, other) {
            cases.push((format!("{name} [{}-{}]", att.name(), other.name()), j, flat));
        }
    }
    cases.push((
        "euler_normalization".into(),
        Box::new(EulerNormalization),
        false,
    ));
    cases.push((
        "director_constraints".into(),
        Box::new(DirectorConstraints),
        false,
    ));
    cases
}

fn joint_cases_3d_for(att: Attitude, other: Attitude) -> Vec<(String, Box<dyn Joint>, bool)> {
    let body3 = |s: [f64; 3]| body3(s, att);
    let body3b = |s: [f64; 3]| self::body3(s, other);
    let mut cases: Vec<(String, Box<dyn Joint>, bool)> = Vec::new();
    let pairs = [
        (
            "body-body",
            pair(body3([0.3, -0.2, 0.5]), body3b([-0.4, 0.1, 0.2])),
        ),
        (
            "ground-body",
            pair(ground(0.2, -0.1, 0.4), body3([0.1, 0.6, -0.3])),
        ),
        ("body-node", pair(body3([0.3, -0.2, 0.5]), node(3))),
    ];
    for (on, p) in pairs {
        // Coincidence is linear in director coordinates.
        let ep = |q: Point| q.attitude().map(|a| a.0) == Some(Attitude::EulerParameters);
        cases.push((
            format!("spherical 3-D {on}"),
            Box::new(Coincident::new("spherical", 3, p)),
            !ep(p.a) && !ep(p.b),
        ));
        let j = Distance::new("distance", p, DistanceForm::Length(0.9));
        cases.push((format!("distance 3-D {on}"), Box::new(j), false));
    }
    let (ha, hb) = ([0.6, 0.0, 0.8], [0.0, 1.0, 0.0]);
    let rows = |x: Vector, y: Vector| DotRow { x, y, c: 0.0 };
    let row_sets: [(&str, Vec<DotRow>); 4] = [
        (
            "dot-1 axis-axis",
            vec![rows(Vector::Axis(Side::A, ha), Vector::Axis(Side::B, hb))],
        ),
        (
            "dot-2 axis-separation",
            vec![rows(Vector::Axis(Side::A, ha), Vector::Separation)],
        ),
        (
            "dot-2 separation-axis of B",
            vec![rows(Vector::Separation, Vector::Axis(Side::B, hb))],
        ),
        (
            "coincidence rows and a constant",
            vec![
                rows(Vector::Separation, Vector::Constant([1.0, 0.0, 0.0])),
                DotRow {
                    x: Vector::Separation,
                    y: Vector::Separation,
                    c: 0.7,
                },
                rows(
                    Vector::Axis(Side::B, hb),
                    Vector::Constant([0.3, -0.2, 0.9]),
                ),
            ],
        ),
    ];
    for (on, p) in [pairs[0], pairs[1]] {
        for (what, r) in &row_sets {
            let j = DotJoint::new("dot", p, r);
            // A ground axis times a director-body axis or separation is linear.
            let flat = on == "ground-body"
                && att == Attitude::Directors
                && (what.starts_with("dot-1") || what.starts_with("dot-2 axis-separation"));
            cases.push((format!("{what} {on}"), Box::new(j), flat));
        }
    }
    let slope = Slope::new(SlopeTarget::Body3d([0.3, -0.5, 0.8], att));
    cases.push(("slope to a 3-D body".into(), Box::new(slope), false));
    cases
}

/// `Phi_t` against a difference in t, and `Phi_tt + 2 Phi_tu v`
/// against `d^2/ds^2 Phi(u + s v, t + s) - v^T (d^2 Phi/du^2) v` (the second
/// derivative along the motion minus its velocity-curvature part). Returns
/// the two reference vectors.
fn time_derivative_check(name: &str, j: &dyn Joint, u: &[f64], v: &[f64], t: f64) -> [Vec<f64>; 2] {
    let (rows, n) = (j.rows(), j.ndof());
    let phi = |x: &[f64], t: f64| {
        let mut p = vec![0.0; rows];
        j.phi(x, t, &mut p);
        p
    };
    let (mut pt, mut ptt) = (vec![0.0; rows], vec![0.0; rows]);
    j.phi_t(u, t, &mut pt);
    j.phi_tt(u, v, t, &mut ptt);
    let fd_t = fd_jacobian(&[t], &[H], rows, |x, out| j.phi(u, x[0], out));
    let fd_tt: Vec<f64> = (0..rows)
        .map(|r| {
            let along = fd_second(H, |s| {
                let x: Vec<f64> = u.iter().zip(v).map(|(a, b)| a + s * b).collect();
                phi(&x, t + s)[r]
            });
            let mut w = vec![0.0; rows];
            w[r] = 1.0;
            let mut hess = vec![0.0; n * n];
            j.add_curvature(u, t, &w, 1.0, &mut hess);
            let vhv: f64 = (0..n)
                .map(|k| (0..n).map(|l| v[k] * hess[k * n + l] * v[l]).sum::<f64>())
                .sum();
            along - vhv
        })
        .collect();
    for (what, analytic, reference) in
        [("Phi_t", &pt, &fd_t), ("Phi_tt + 2 Phi_tu v", &ptt, &fd_tt)]
    {
        if max_abs(reference) > 1e-6 {
            check(&format!("{name}: {what}"), analytic, reference);
        } else {
            check_zero(&format!("{name}: {what}"), analytic, reference, 1.0);
        }
    }
    [fd_t, fd_tt]
}

/// The prescribed motion of the rheonomic joint checks.
const MOTION: Motion = Motion {
    value: 0.2,
    rate: 1.5,
    amplitude: 0.3,
    omega: 4.0,
    phase: 0.1,
};

/// Rheonomic joints (prescribed motion, path on y = A sin^2(w t)) and the
/// scleronomic path on a parabola: Phi_t and Phi_tt + 2 Phi_tu v against
/// differences in t, at several times and states.
#[test]
fn rheonomic_time_derivatives() {
    let mut cases: Vec<(String, Box<dyn Joint>, bool)> =
        vec![("prescribed".into(), Box::new(Prescribed::new(MOTION)), true)];
    for (on, p) in [("node", node(2)), ("body point", body([0.35, -0.45]))] {
        for (cname, curve, _) in path_curves() {
            let rheonomic = curve.is_rheonomic();
            let j = PathJoint::new(p, curve);
            cases.push((format!("path {cname} {on}"), Box::new(j), rheonomic));
        }
    }
    let mut rng = Rng(0x7173);
    for (name, j, rheonomic) in cases {
        let n = j.ndof();
        for t in [0.0, 0.37, 1.9] {
            let (u, v) = (rng.vec(n, -1.5, 1.5), rng.vec(n, -2.0, 2.0));
            let [fd_t, fd_tt] =
                time_derivative_check(&format!("{name} t = {t}"), j.as_ref(), &u, &v, t);
            // A scleronomic joint has no time derivatives; the rheonomic
            // ones are exercised away from their zeros.
            let moving = max_abs(&fd_t).max(max_abs(&fd_tt)) > 1e-3;
            assert_eq!(moving, rheonomic, "{name} t = {t}");
        }
    }
}

fn joint_jacobian(j: &dyn Joint, u: &[f64], t: f64) -> Vec<f64> {
    let mut b = vec![0.0; j.rows() * j.ndof()];
    j.jacobian(u, t, &mut b);
    b
}

/// Checks B against dPhi/du at (u, t); returns the relative error.
fn check_jacobian(tag: &str, j: &dyn Joint, u: &[f64], t: f64) -> f64 {
    let (rows, n) = (j.rows(), j.ndof());
    let fd_b = fd_jacobian(u, &vec![H; n], rows, |x, phi| j.phi(x, t, phi));
    check(
        &format!("{tag}: B = dPhi/du"),
        &joint_jacobian(j, u, t),
        &fd_b,
    )
}

/// The curvature d(B^T w)/du from `add_curvature` (which adds `scale * H`:
/// the check starts from a non-zero matrix) and its finite-difference
/// reference.
fn curvature_and_fd(j: &dyn Joint, u: &[f64], t: f64, w: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let (rows, n) = (j.rows(), j.ndof());
    let scale = -1.75;
    let mut h = vec![0.5; n * n];
    j.add_curvature(u, t, w, scale, &mut h);
    let h: Vec<f64> = h.iter().map(|x| (x - 0.5) / scale).collect();
    let fd_h = fd_jacobian(u, &vec![H; n], n, |x, out| {
        let b = joint_jacobian(j, x, t);
        for (k, o) in out.iter_mut().enumerate() {
            *o = (0..rows).map(|r| w[r] * b[r * n + k]).sum();
        }
    });
    (h, fd_h)
}

#[test]
fn joint_jacobians_and_curvatures() {
    let mut rng = Rng(0x10147);
    let t = 0.37;
    let (mut worst_b, mut worst_h, mut worst_g): (f64, f64, f64) = (0.0, 0.0, 0.0);
    for (name, j, flat) in joint_cases() {
        let (rows, n) = (j.rows(), j.ndof());
        for trial in 0..3 {
            let u = rng.vec(n, -1.5, 1.5);
            let w = rng.vec(rows, -3.0, 3.0);
            let tag = format!("{name} #{trial}");

            worst_b = worst_b.max(check_jacobian(&tag, j.as_ref(), &u, t));

            let (h, fd_h) = curvature_and_fd(j.as_ref(), &u, t, &w);
            let what = format!("{tag}: sum w_r d2Phi_r/du2 = d(B^T w)/du");
            worst_h = worst_h.max(if flat {
                check_zero(&what, &h, &fd_h, max_abs(&w))
            } else {
                check(&what, &h, &fd_h)
            });

            // The velocity curvature (B v)_u v = d/ds B(u + s v) v at s = 0.
            let v = rng.vec(n, -2.0, 2.0);
            let mut gamma = vec![0.0; rows];
            j.velocity_curvature(&u, &v, t, &mut gamma);
            let fd_g = fd_jacobian(&[0.0], &[H / max_abs(&v)], rows, |s, out| {
                let x: Vec<f64> = u.iter().zip(&v).map(|(a, b)| a + s[0] * b).collect();
                let b = joint_jacobian(j.as_ref(), &x, t);
                for (r, o) in out.iter_mut().enumerate() {
                    *o = (0..n).map(|k| b[r * n + k] * v[k]).sum();
                }
            });
            let what = format!("{tag}: velocity curvature (B v)_u v");
            worst_g = worst_g.max(if flat {
                check_zero(&what, &gamma, &fd_g, max_abs(&v).powi(2))
            } else {
                check(&what, &gamma, &fd_g)
            });
        }
    }
    eprintln!(
        "joint_jacobians_and_curvatures: worst B {worst_b:.2e}, worst curvature {worst_h:.2e}, worst velocity curvature {worst_g:.2e}"
    );
}

// ---------------------------------------------------------------------------
// 3b. Rolling disk: one position-level row, two velocity-level rows
// ---------------------------------------------------------------------------

/// A random disk state: rotation coordinates of a random attitude whose
/// axis `s` is tilted (|a_z| <= 0.85, away from the flat disk), with rates
/// of a random angular velocity (Euler-parameter rates orthogonal to p), and
/// a random centre and centre velocity. `off` scales the rotation
/// coordinates by 1 +- 3 % (the derivative identities hold off the manifold).
fn disk_state(att: Attitude, s: &[f64; 3], rng: &mut Rng, off: bool) -> (Vec<f64>, Vec<f64>) {
    let nr = att.ncoords();
    loop {
        let p = rng.vec(4, -1.0, 1.0);
        let norm = p.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm < 0.3 {
            continue;
        }
        let p: [f64; 4] = std::array::from_fn(|k| p[k] / norm);
        let rot = att.from_quaternion(&p);
        if att.rotate(&rot[..nr], s)[2].abs() > 0.85 {
            continue;
        }
        let wb: [f64; 3] = std::array::from_fn(|_| rng.range(-2.0, 2.0));
        let rate = att.rate_from_body_angular_velocity(&rot[..nr], &wb);
        let mut u = rng.vec(3, -1.0, 1.0);
        let mut v = rng.vec(3, -1.0, 1.0);
        u.extend_from_slice(&rot[..nr]);
        v.extend_from_slice(&rate[..nr]);
        if off {
            for x in &mut u[3..] {
                *x *= 1.0 + rng.range(-0.03, 0.03);
            }
        }
        return (u, v);
    }
}

#[test]
fn rolling_disk_jacobians_and_curvatures() {
    let mut rng = Rng(0xD15C);
    let t = 0.3;
    let norm = (0.36_f64 * 0.36 + 0.48 * 0.48 + 0.8 * 0.8).sqrt();
    let axis = [0.36 / norm, -0.48 / norm, 0.8 / norm];
    let (mut worst_b, mut worst_h, mut worst_v): (f64, f64, f64) = (0.0, 0.0, 0.0);
    for att in [Attitude::EulerParameters, Attitude::Directors] {
        let g = DiskGeometry {
            radius: 0.7,
            axis,
            height: 0.15,
            attitude: att,
        };
        let joints: [(&str, Box<dyn Joint>); 2] = [
            ("contact", Box::new(DiskContact(g))),
            ("rolling", Box::new(DiskRolling(g))),
        ];
        for trial in 0..4 {
            let off = trial % 2 == 1;
            let (u, v) = disk_state(att, &axis, &mut rng, off);
            let n = u.len();
            for (name, j) in &joints {
                let rows = j.rows();
                let tag = format!(
                    "rolling disk {name} [{}] #{trial}{}",
                    att.name(),
                    if off { " off-manifold" } else { "" }
                );
                let w = rng.vec(rows, -3.0, 3.0);
                if j.level() == ConstraintLevel::Position {
                    worst_b = worst_b.max(check_jacobian(&tag, j.as_ref(), &u, t));
                } else {
                    let mut phi = vec![1.0; rows];
                    j.phi(&u, t, &mut phi);
                    assert_eq!(phi, vec![0.0; rows], "{tag}: velocity rows have no Phi");
                }
                let (mut pt, mut ptt) = (vec![1.0; rows], vec![1.0; rows]);
                j.phi_t(&u, t, &mut pt);
                j.phi_tt(&u, &v, t, &mut ptt);
                assert_eq!(
                    (max_abs(&pt), max_abs(&ptt)),
                    (0.0, 0.0),
                    "{tag}: scleronomic"
                );
                // The curvature d(B^T w)/du (velocity level: d(A^T w)/du,
                // not symmetric).
                let (h, fd_h) = curvature_and_fd(j.as_ref(), &u, t, &w);
                worst_h = worst_h.max(check(&format!("{tag}: curvature = d(B^T w)/du"), &h, &fd_h));
            }
            if off {
                continue;
            }
            // On the manifold: A v is the (x, y) velocity and the contact
            // row's rate B v the vertical velocity of the material point at
            // the contact, X(tau) = x_c(tau) + R(q(tau)) s_c, s_c = R^T rho.
            let c0 = g.contact_point(&u);
            let rho = [c0[0] - u[0], c0[1] - u[1], c0[2] - u[2]];
            let s_c = att.rotate_back(&u[3..], &rho);
            let fd_x = fd_jacobian(&[0.0], &[1e-3], 3, |tau, x| {
                let ut: Vec<f64> = u.iter().zip(&v).map(|(a, b)| a + tau[0] * b).collect();
                let r = att.rotate(&ut[3..], &s_c);
                for k in 0..3 {
                    x[k] = ut[k] + r[k];
                }
            });
            let times_v = |j: &dyn Joint| -> Vec<f64> {
                let b = joint_jacobian(j, &u, t);
                (0..j.rows())
                    .map(|r| (0..n).map(|k| b[r * n + k] * v[k]).sum())
                    .collect()
            };
            let tag = format!("rolling disk [{}] #{trial}", att.name());
            worst_v = worst_v.max(check(
                &format!("{tag}: A v = (x, y) velocity of the contact point"),
                &times_v(joints[1].1.as_ref()),
                &fd_x[..2],
            ));
            worst_v = worst_v.max(check(
                &format!("{tag}: contact row B v = z velocity of the contact point"),
                &times_v(joints[0].1.as_ref()),
                &fd_x[2..],
            ));
        }
    }
    eprintln!(
        "rolling_disk_jacobians_and_curvatures: worst B {worst_b:.2e}, worst curvature \
         {worst_h:.2e}, worst contact velocity {worst_v:.2e}"
    );
}

/// `fill_index1` of a rolling disk model at a perturbed state: its
/// constraint rows hold `v^T H_r v`, which is `d^2 Phi_r(u + tau v)/dtau^2`
/// on the position rows (normalization, contact) and `d/dtau A_r(u + tau v) v`
/// on the velocity rows.
#[test]
fn rolling_disk_acceleration_rows() {
    for att in [Attitude::EulerParameters, Attitude::Directors] {
        let (q, qd) = common::disk::tilted_state(1, 1.3);
        let model = common::disk::disk_model(0.8, 1.3, &q, &qd, att);
        let asm = Assembler::new(&model);
        let mech = Mechanics::new(&model, &asm);
        let (n, m) = (asm.n_dofs(), asm.n_constraints());
        let mut rng = Rng(0xACC);
        let u: Vec<f64> = rng.around(&model.u0, 0.02);
        let v: Vec<f64> = rng.around(&model.v0, 0.2);
        let t = 0.1;
        let mut sys = asm.new_system();
        mech.fill_index1(&u, &v, t, None, &mut sys);
        let levels = model.constraint_levels();
        let rates = |x: &[f64]| {
            let mut out = vec![0.0; m];
            mech.constraint_rates(x, &v, t, &mut out);
            out
        };
        let d_rates = fd_jacobian(&[0.0], &[H], m, |tau, out| {
            let x: Vec<f64> = u.iter().zip(&v).map(|(a, b)| a + tau[0] * b).collect();
            out.copy_from_slice(&rates(&x));
        });
        let gamma: Vec<f64> = (0..m)
            .map(|r| match levels[r] {
                ConstraintLevel::Position => fd_second(H, |tau| {
                    let x: Vec<f64> = u.iter().zip(&v).map(|(a, b)| a + tau * b).collect();
                    let mut phi = vec![0.0; m];
                    global_phi(&model, &x, t, &mut phi);
                    phi[r]
                }),
                ConstraintLevel::Velocity => d_rates[r],
            })
            .collect();
        assert!(levels.contains(&ConstraintLevel::Velocity));
        check(
            &format!(
                "rolling disk [{}]: fill_index1 acceleration rows",
                att.name()
            ),
            &sys.residual[n..],
            &gamma,
        );
    }
}

// ---------------------------------------------------------------------------
// 4. Loads: linear force fields
// ---------------------------------------------------------------------------

/// A node or body reference point, for [`ModelBuilder`].
fn at(id: &str) -> PointRef {
    PointRef::Entity(id.into())
}

/// A body-fixed point, for [`ModelBuilder`].
fn at_body(id: &str, offset: [f64; 2]) -> PointRef {
    PointRef::Body {
        body: id.into(),
        offset: [offset[0], offset[1], 0.0],
    }
}

fn load(point: Point, matrix: [[f64; 3]; 3], offset: [f64; 3]) -> PointLoad {
    PointLoad {
        kind: "linear_field",
        point,
        matrix,
        offset,
        time: TimeFunction::Sine {
            omega: 2.0,
            phase: 0.4,
        },
    }
}

fn random_field(rng: &mut Rng) -> ([[f64; 3]; 3], [f64; 3]) {
    let mut a = [[0.0; 3]; 3];
    for row in &mut a {
        for x in row.iter_mut() {
            *x = rng.range(-4.0, 4.0);
        }
    }
    (
        a,
        [
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
        ],
    )
}

#[test]
fn point_load_derivative() {
    let mut rng = Rng(0x10AD);
    let mut worst: f64 = 0.0;
    let points = [
        ("node 2-D", node(2)),
        ("node 3-D", node(3)),
        ("body point 2-D", body([0.45, -0.3])),
        ("body reference point 2-D", body([0.0, 0.0])),
        (
            "3-D Euler-parameter body point",
            body3([0.3, -0.4, 0.2], Attitude::EulerParameters),
        ),
        (
            "3-D director body point",
            body3([0.3, -0.4, 0.2], Attitude::Directors),
        ),
    ];
    for (name, point) in points {
        let (a, b) = random_field(&mut rng);
        let l = load(point, a, b);
        let n = l.ndof();
        let q = rng.vec(n, -1.0, 1.0);
        let s = 0.83;
        let (mut f, mut k) = (vec![0.0; n], vec![0.0; n * n]);
        l.force(&q, s, &mut f, Some(&mut k));
        let fd = fd_jacobian(&q, &vec![H; n], n, |x, out| l.force(x, s, out, None));
        worst = worst.max(check(
            &format!("point load at {name}: d(J^T F)/dq"),
            &k,
            &fd,
        ));
    }
    eprintln!("point_load_derivative: worst {worst:.2e}");
}

/// Torques on 3-D bodies (both attitudes, spatial and body frames): the
/// derivative of the generalized force against finite differences (off the
/// attitude manifold), and on it the power identity `Q . qdot = n . omega`
/// and, for directors, `sum_i d_i x Q_{d_i} = n`.
#[test]
fn body_torque_derivative_and_power() {
    let mut rng = Rng(0x70_4C);
    let mut worst: f64 = 0.0;
    for att in [Attitude::EulerParameters, Attitude::Directors] {
        for frame in [TorqueFrame::Spatial, TorqueFrame::Body] {
            let l = BodyTorque {
                torque: [
                    rng.range(-2.0, 2.0),
                    rng.range(-2.0, 2.0),
                    rng.range(-2.0, 2.0),
                ],
                frame,
                attitude: att,
                time: TimeFunction::Constant,
            };
            let n = l.ndof();
            let what = format!("torque {frame:?} on {}", att.name());
            let s = 0.7;
            let q = rng.vec(n, -1.0, 1.0);
            let (mut f, mut k) = (vec![0.0; n], vec![0.0; n * n]);
            l.force(&q, s, &mut f, Some(&mut k));
            let fd = fd_jacobian(&q, &vec![H; n], n, |x, out| l.force(x, s, out, None));
            worst = worst.max(check(&format!("{what}: dQ/dq"), &k, &fd));
            // On the manifold: power and resultant.
            let p = {
                let v = rng.vec(4, -1.0, 1.0);
                let m = v.iter().map(|x| x * x).sum::<f64>().sqrt();
                [v[0] / m, v[1] / m, v[2] / m, v[3] / m]
            };
            let qr = att.from_quaternion(&p);
            let w_body = [
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
            ];
            let qdot = att.rate_from_body_angular_velocity(&qr[..n], &w_body);
            l.force(&qr[..n], 1.0, &mut f, None);
            let omega = att.rotate(&qr[..n], &w_body);
            let nspace = match frame {
                TorqueFrame::Spatial => l.torque,
                TorqueFrame::Body => att.rotate(&qr[..n], &l.torque),
            };
            let power: f64 = (0..n).map(|i| f[i] * qdot[i]).sum();
            let expect: f64 = (0..3).map(|a| nspace[a] * omega[a]).sum();
            eprintln!("{what}: Q.qdot - n.omega = {:.2e}", power - expect);
            assert!((power - expect).abs() < 1e-12 * (1.0 + expect.abs()));
            if att == Attitude::Directors {
                let mut res = [0.0; 3];
                for i in 0..3 {
                    let (d, qi) = (&qr[3 * i..3 * i + 3], &f[3 * i..3 * i + 3]);
                    res[0] += d[1] * qi[2] - d[2] * qi[1];
                    res[1] += d[2] * qi[0] - d[0] * qi[2];
                    res[2] += d[0] * qi[1] - d[1] * qi[0];
                }
                for a in 0..3 {
                    assert!(
                        (res[a] - nspace[a]).abs() < 1e-13,
                        "{what}: resultant {res:?}"
                    );
                }
            }
        }
    }
    eprintln!("body_torque_derivative_and_power: worst {worst:.2e}");
}

/// The load derivative that `fill_step` puts into the Newton matrix
/// (`-coef_u c3 K_load`) against the load vector of `add_loads`.
#[test]
fn assembled_load_derivative() {
    let mut rng = Rng(0xF1E1D);
    let mut worst: f64 = 0.0;
    for dim in [2, 3] {
        let mut b = ModelBuilder::new(dim).unwrap();
        b.node("n", &rng.vec(dim, -1.0, 1.0), None, 1.0).unwrap();
        b.node("m", &rng.vec(dim, -1.0, 1.0), None, 0.5).unwrap();
        let (a1, b1) = random_field(&mut rng);
        let (a2, b2) = random_field(&mut rng);
        let sine = TimeFunction::Sine {
            omega: 1.3,
            phase: 0.2,
        };
        b.point_load("f1", "linear_field", &at("n"), a1, b1, sine)
            .unwrap();
        b.point_load(
            "f2",
            "linear_field",
            &at("m"),
            a2,
            b2,
            TimeFunction::Constant,
        )
        .unwrap();
        b.point_load(
            "f3",
            "linear_field",
            &at("n"),
            a2,
            b1,
            TimeFunction::Ramp { t0: 0.0, t1: 2.0 },
        )
        .unwrap();
        if dim == 2 {
            b.body2d("body", Body2d::new(2.0, 0.3).at(0.2, -0.4, 0.6))
                .unwrap();
            let off = at_body("body", [0.5, -0.25]);
            b.point_load("f4", "linear_field", &off, a1, b2, sine)
                .unwrap();
        }
        let model = b.build().unwrap();
        let asm = Assembler::new(&model);
        let mech = Mechanics::new(&model, &asm);
        let n = asm.n_dofs();
        let u = rng.vec(n, -1.0, 1.0);
        let t = 0.7;

        // Isolate the load: coef_mass = 0, coef_u = c3 = 1, W1 = 1, u~ = u_{n+1} = u.
        let zero = vec![0.0; n];
        let w = level(0.0, 0.0, 1.0);
        let inp = StepInput {
            level: EvaluationPoint {
                u_n: &zero,
                v_n: &zero,
                a_n: &zero,
                u_next: &u,
                u_tilde: &u,
                w,
            },
            discrete_gradient: false,
            a_tilde: &zero,
            inertia: None,
            v_tilde: &zero,
            coef_v: 0.0,
            lambda_n: &[],
            lambda: &[],
            t_n: 0.0,
            t_next: t,
            w1: 1.0,
            coef_mass: 0.0,
            coef_u: 1.0,
            forces: constraint_force(ConstraintOption::Two, JacobianKind::Consistent, 1.0, 1.0),
            matrix: true,
        };
        let mut sys = asm.new_system();
        fill_step(&mech, &inp, &mut sys);
        let mut f = vec![0.0; n];
        mech.add_loads(&u, t, &mut f, 1.0);
        let minus_f: Vec<f64> = f.iter().map(|x| -x).collect();
        check(
            &format!("{dim}-D model: fill_step residual = -add_loads"),
            &sys.residual,
            &minus_f,
        );

        let k: Vec<f64> = dense_pattern(asm.pattern(), &sys.values)
            .iter()
            .map(|x| -x)
            .collect();
        let fd = fd_jacobian(&u, &vec![H; n], n, |x, out| {
            out.fill(0.0);
            mech.add_loads(x, t, out, 1.0);
        });
        worst = worst.max(check(
            &format!("{dim}-D model: Newton-matrix load block = d(add_loads)/du"),
            &k,
            &fd,
        ));
    }
    eprintln!("assembled_load_derivative: worst {worst:.2e}");
}

// ---------------------------------------------------------------------------
// 5. Assembled operators and the Newton matrix of a mechanism
// ---------------------------------------------------------------------------

/// The spring-damper-actuator of the assembled models.
const SPRING_DAMPER: Sd = Sd {
    stiffness: 30.0,
    damping: 2.0,
    force: 1.5,
    free_length: Some(0.7),
};

/// Two planar bodies (ground pin, revolute), three nodes (revolute to a body,
/// two trusses, one pre-stressed), a quadratic and a length distance, a point
/// on a circle, two linear-field loads and gravity: 12 DOFs, 9 multipliers.
fn mechanism() -> Model {
    let mut b = ModelBuilder::new(2).unwrap();
    b.gravity(&[0.0, -9.81]).unwrap();
    b.body2d("b1", Body2d::new(1.3, 0.11).at(0.3, -0.9, 0.2))
        .unwrap();
    let pin = b.entity_position("b1", [0.05, 0.9, 0.0]).unwrap();
    b.ground_pin("pin", &at_body("b1", [0.05, 0.9]), &pin)
        .unwrap();

    let hinge = b.entity_position("b1", [0.1, -0.8, 0.0]).unwrap();
    let (th2, p2) = (-0.7_f64, [-0.2, 0.6]);
    let (s, c) = th2.sin_cos();
    let c2 = [
        hinge[0] - (c * p2[0] - s * p2[1]),
        hinge[1] - (s * p2[0] + c * p2[1]),
    ];
    b.body2d("b2", Body2d::new(0.8, 0.05).at(c2[0], c2[1], th2))
        .unwrap();
    b.revolute("hinge", &at_body("b1", [0.1, -0.8]), &at_body("b2", p2))
        .unwrap();

    let tip = b.entity_position("b2", [0.4, -0.3, 0.0]).unwrap();
    b.node("n1", &tip, None, 0.2).unwrap();
    b.revolute("tip", &at_body("b2", [0.4, -0.3]), &at("n1"))
        .unwrap();
    b.node("n2", &[tip[0] + 0.9, tip[1] + 0.35], None, 0.3)
        .unwrap();
    b.truss(
        "t12",
        "n1",
        "n2",
        &TrussSection {
            ea: 40.0,
            rho_a: 0.15,
        },
        Some(0.8),
    )
    .unwrap();
    b.distance(
        "d2",
        &at("n2"),
        &at_body("b1", [-0.2, 0.1]),
        None,
        flexmb::model::DistanceKind::Quadratic,
    )
    .unwrap();
    b.node("n3", &[tip[0] + 0.3, tip[1] + 1.1], None, 0.25)
        .unwrap();
    b.truss(
        "t23",
        "n2",
        "n3",
        &TrussSection {
            ea: 25.0,
            rho_a: 0.1,
        },
        None,
    )
    .unwrap();
    b.point_on_circle("c3", &at("n3"), &[0.5, 0.4], None)
        .unwrap();
    b.distance(
        "d3",
        &at_body("b2", [0.0, 0.5]),
        &at("n3"),
        None,
        flexmb::model::DistanceKind::Length,
    )
    .unwrap();
    // Dampers: their u~ and v~ derivatives enter the Newton matrix.
    b.spring_damper("sd", &at_body("b1", [0.0, 0.3]), &at("n3"), SPRING_DAMPER)
        .unwrap();
    let rsd = Rsd {
        stiffness: 5.0,
        damping: 0.7,
        torque: 0.3,
        rest_angle: None,
    };
    b.rotational_spring_damper("rsd", Some("b1"), "b2", rsd)
        .unwrap();
    let rsd0 = Rsd {
        stiffness: 2.0,
        damping: 1.1,
        torque: -0.4,
        rest_angle: Some(0.1),
    };
    b.rotational_spring_damper("rsd0", None, "b1", rsd0)
        .unwrap();

    let field = [[0.5, 2.0, 0.0], [-1.5, 0.3, 0.0], [0.0, 0.0, 0.0]];
    let sine = TimeFunction::Sine {
        omega: 2.0,
        phase: 0.3,
    };
    b.point_load(
        "field",
        "linear_field",
        &at_body("b2", [0.3, 0.2]),
        field,
        [0.2, -0.1, 0.0],
        sine,
    )
    .unwrap();
    let track = [[0.0, 4.0, 0.0], [-4.0, 0.0, 0.0], [0.0, 0.0, 0.0]];
    b.point_load(
        "track",
        "linear_field",
        &at("n3"),
        track,
        [0.1, 0.0, 0.0],
        TimeFunction::Constant,
    )
    .unwrap();
    b.build().unwrap()
}

/// Two planar bodies in a pinned chain whose tip is on a parabola (`path`),
/// a node on the moving line y = A sin^2(w t) (`path`, rheonomic) and a
/// `linear` joint tying the two body angles to the node's x, with gravity
/// and a linear field on the node: 8 DOFs, 7 multipliers.
fn path_mechanism() -> Model {
    let mut b = ModelBuilder::new(2).unwrap();
    b.gravity(&[0.0, -9.81]).unwrap();
    b.body2d("l1", Body2d::new(1.4, 0.12).at(0.2, 0.45, 1.15))
        .unwrap();
    let pin = b.entity_position("l1", [-0.5, 0.0, 0.0]).unwrap();
    b.ground_pin("pin", &at_body("l1", [-0.5, 0.0]), &pin)
        .unwrap();
    let elbow = b.entity_position("l1", [0.5, 0.0, 0.0]).unwrap();
    let th2 = -0.9_f64;
    let c2 = [elbow[0] + 0.5 * th2.cos(), elbow[1] + 0.5 * th2.sin()];
    b.body2d("l2", Body2d::new(0.9, 0.08).at(c2[0], c2[1], th2))
        .unwrap();
    b.revolute(
        "elbow",
        &at_body("l1", [0.5, 0.0]),
        &at_body("l2", [-0.5, 0.0]),
    )
    .unwrap();
    let tip = b.entity_position("l2", [0.5, 0.1, 0.0]).unwrap();
    let a = 0.9;
    let parabola = Curve::Parabola {
        a,
        b: tip[1] - a * tip[0] * tip[0],
    };
    b.path("tip_path", &at_body("l2", [0.5, 0.1]), parabola)
        .unwrap();
    b.node("n1", &[0.7, 0.0], None, 0.4).unwrap();
    let sine = Curve::SineSquared {
        amplitude: 0.6,
        omega: 1.7,
    };
    b.path("n1_path", &at("n1"), sine).unwrap();
    let names = ["l1.theta", "n1.x", "l2.theta"].map(String::from);
    b.linear("tie", &names, &[0.5, -1.2, 0.3], None).unwrap();
    let field = [[0.3, -1.0, 0.0], [0.8, 0.2, 0.0], [0.0, 0.0, 0.0]];
    b.point_load(
        "field",
        "linear_field",
        &at("n1"),
        field,
        [0.1, 0.2, 0.0],
        TimeFunction::Constant,
    )
    .unwrap();
    b.build().unwrap()
}

/// Three 3-D Euler-parameter bodies (revolute to the ground, universal,
/// cylindrical), a node on a ball joint, a spring-damper and gravity: the
/// configuration-dependent inertia and the dot-product joints in the Newton matrix.
fn mechanism3d(attitude: Attitude, kinetic: EulerKinetic) -> Model {
    let mut b = ModelBuilder::new(3).unwrap();
    b.gravity(&[0.0, -2.0, -9.81]).unwrap();
    let body = |p: [f64; 3], q: [f64; 4], w: [f64; 3]| Body3dSpec {
        position: p,
        orientation: q,
        attitude,
        kinetic,
        mass: 1.7,
        inertia: [[0.3, 0.02, -0.01], [0.02, 0.5, 0.03], [-0.01, 0.03, 0.4]],
        velocity: [0.1, -0.2, 0.3],
        angular_velocity: w,
    };
    let q1 = [0.9, 0.3, -0.2, 0.2449489742783178];
    b.body3d("b1", &body([0.2, -0.5, 0.1], q1, [1.0, -2.0, 0.5]))
        .unwrap();
    let pin = b.entity_position("b1", [0.1, 0.4, -0.2]).unwrap();
    let pin: [f64; 3] = pin.try_into().unwrap();
    let ax = |id: &str, s: [f64; 3]| PointRef::Body {
        body: id.into(),
        offset: s,
    };
    b.joint3d(
        "hinge",
        &PointRef::Ground(pin),
        &ax("b1", [0.1, 0.4, -0.2]),
        Joint3d::Revolute {
            axis: [0.3, 0.4, 0.8],
        },
    )
    .unwrap();
    let c = b.entity_position("b1", [-0.3, -0.5, 0.2]).unwrap();
    let q2 = [0.6, -0.48, 0.64, 0.0];
    b.body3d(
        "b2",
        &body([c[0] + 0.2, c[1] - 0.6, c[2] + 0.1], q2, [0.3, 0.7, -1.1]),
    )
    .unwrap();
    // b2's point (-0.2, ...) in its frame must sit at c: solve by placing the
    // joint at b2's centre offset expressed in the body frame.
    let s2 = flexmb::kinematics::rotation::rotate_back(&q2, &[-0.2, 0.6, -0.1]);
    b.joint3d(
        "cross",
        &ax("b1", [-0.3, -0.5, 0.2]),
        &ax("b2", s2),
        Joint3d::Universal {
            axis_a: [1.0, 0.0, 0.0],
            axis_b: [0.0, 0.6, 0.8],
        },
    )
    .unwrap();
    let e = b.entity_position("b2", [0.4, 0.1, 0.0]).unwrap();
    let h = [0.0, 0.0, 1.0];
    let q3 = [0.8, 0.0, 0.0, 0.6];
    b.body3d("b3", &body([e[0], e[1], e[2] + 0.7], q3, [0.0, 0.2, 2.0]))
        .unwrap();
    b.joint3d(
        "sleeve",
        &ax("b2", [0.4, 0.1, 0.0]),
        &at("b3"),
        Joint3d::Cylindrical { axis: h },
    )
    .unwrap();
    let tip = b.entity_position("b3", [0.3, 0.0, 0.1]).unwrap();
    b.node("n", &tip, Some(&[0.2, 0.0, -0.1]), 0.4).unwrap();
    b.joint3d(
        "ball",
        &ax("b3", [0.3, 0.0, 0.1]),
        &at("n"),
        Joint3d::Spherical,
    )
    .unwrap();
    b.spring_damper(
        "sd",
        &ax("b1", [0.0, 0.2, 0.3]),
        &ax("b3", [0.1, -0.2, 0.0]),
        SPRING_DAMPER,
    )
    .unwrap();
    b.build().unwrap()
}

/// Phi of all joints, rows numbered block by block as in the assembler.
fn global_phi(model: &Model, u: &[f64], t: f64, out: &mut [f64]) {
    let mut row = 0;
    for blk in &model.joints {
        for i in 0..blk.len() {
            blk.phi(i, u, t, &mut out[row..row + blk.rows()]);
            row += blk.rows();
        }
    }
}

#[test]
fn assembled_operators() {
    let model = mechanism();
    let asm = Assembler::new(&model);
    let mech = Mechanics::new(&model, &asm);
    let (n, m) = (asm.n_dofs(), asm.n_constraints());
    assert_eq!((n, m), (12, 9));
    let mut rng = Rng(0xA55E);
    let u: Vec<f64> = rng.around(&model.u0, 0.2);
    let v = rng.vec(n, -1.0, 1.0);
    let t = 0.4;
    let steps = vec![H; n];

    let fd_b = fd_jacobian(&u, &steps, m, |x, phi| global_phi(&model, x, t, phi));
    check(
        "mechanism: constraint_jacobian = dPhi/du",
        &dense(&mech.constraint_jacobian(&u, t)),
        &fd_b,
    );

    let fd_k = fd_jacobian(&u, &steps, n, |x, p| {
        p.copy_from_slice(&mech.internal_force(x))
    });
    check(
        "mechanism: stiffness = d(internal_force)/du",
        &dense(&mech.stiffness(&u)),
        &fd_k,
    );
    // The round-off scale summed through the slot maps is the largest entry
    // of the assembled stiffness, serial and parallel, and leaves sys zeroed.
    let k_max = mech
        .stiffness(&u)
        .data()
        .iter()
        .fold(0.0_f64, |a, x| a.max(x.abs()));
    assert!(k_max > 0.0);
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let mut sys = asm.new_system();
        assert_eq!(pool.install(|| mech.stiffness_max(&u, &mut sys)), k_max);
        assert!(sys.values.iter().chain(&sys.residual).all(|&x| x == 0.0));
    }

    // Potential energy = elastic - (M g).u, so its gradient is P(u) - M g.
    let grad = fd_gradient(&u, H, |x| mech.energy(x, &v).potential);
    let p_minus_g: Vec<f64> = mech
        .internal_force(&u)
        .iter()
        .zip(asm.gravity_force())
        .map(|(p, g)| p - g)
        .collect();
    check(
        "mechanism: internal_force - M g = d(potential)/du",
        &p_minus_g,
        &grad,
    );

    // fill_index1: constraint rows hold gamma = v^T (d2 Phi_r/du2) v (scleronomic joints).
    let mut sys = asm.new_system();
    mech.fill_index1(&u, &v, t, None, &mut sys);
    let gamma: Vec<f64> = (0..m)
        .map(|r| {
            fd_second(H, |tau| {
                let x: Vec<f64> = u.iter().zip(&v).map(|(a, b)| a + tau * b).collect();
                let mut phi = vec![0.0; m];
                global_phi(&model, &x, t, &mut phi);
                phi[r]
            })
        })
        .collect();
    check(
        "mechanism: fill_index1 gamma = d2 Phi(u + tau v)/dtau2",
        &sys.residual[n..],
        &gamma,
    );
}

/// Option dg's discrete derivative of every joint of the planar and 3-D
/// mechanisms (Gonzalez 1999): `B_d du = Phi(u1) - Phi(u0)` to round-off
/// (where `B(u_m) du` is off for the nonlinear rows), its tangent
/// `d(B_d^T w)/du1` against finite differences, and `B_d = B(u0)` at a
/// vanishing increment.
#[test]
fn discrete_joint_derivative() {
    let mut rng = Rng(0xB0D);
    let t = 0.4;
    for (label, model) in [
        ("planar", mechanism()),
        ("planar path and linear joints", path_mechanism()),
        (
            "3-D",
            mechanism3d(Attitude::EulerParameters, EulerKinetic::Quadratic),
        ),
        (
            "3-D directors",
            mechanism3d(Attitude::Directors, EulerKinetic::Quadratic),
        ),
    ] {
        let u0: Vec<f64> = rng.around(&model.u0, 0.2);
        let u1: Vec<f64> = rng.around(&u0, 0.3);
        let (mut worst, mut midpoint_miss): (f64, f64) = (0.0, 0.0);
        for blk in &model.joints {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let what = format!("{label} {} '{}'", blk.kind(i), blk.name(i));
                let d = blk.dofs(i);
                let du: Vec<f64> = d.iter().map(|&j| u1[j] - u0[j]).collect();
                let w = rng.vec(rows, -2.0, 2.0);
                let (mut b, mut h) = (vec![0.0; rows * k], vec![0.0; k * k]);
                blk.discrete_jacobian(i, &u0, &u1, t, &mut b, Some((&w, &mut h)));
                let (mut p0, mut p1) = (vec![0.0; rows], vec![0.0; rows]);
                blk.phi(i, &u0, t, &mut p0);
                blk.phi(i, &u1, t, &mut p1);
                let um: Vec<f64> = u0.iter().zip(&u1).map(|(a, b)| 0.5 * (a + b)).collect();
                let mut bm = vec![0.0; rows * k];
                blk.jacobian(i, &um, t, &mut bm);
                let scale = 1.0 + max_abs(&p0).max(max_abs(&p1));
                for r in 0..rows {
                    let row =
                        |m: &[f64]| -> f64 { (0..k).map(|p| m[r * k + p] * du[p]).sum::<f64>() };
                    let err = (row(&b) - (p1[r] - p0[r])).abs() / scale;
                    assert!(err <= 1e-14, "{what} row {r}: B_d du - dPhi = {err:.2e}");
                    worst = worst.max(err);
                    midpoint_miss = midpoint_miss.max((row(&bm) - (p1[r] - p0[r])).abs() / scale);
                }
                // d(B_d^T w)/du1 over the joint's DOFs.
                let local1: Vec<f64> = d.iter().map(|&j| u1[j]).collect();
                let fd = fd_jacobian(&local1, &vec![H; k], k, |x, out| {
                    let mut v = u1.clone();
                    for (&j, &xj) in d.iter().zip(x) {
                        v[j] = xj;
                    }
                    let mut bb = vec![0.0; rows * k];
                    blk.discrete_jacobian(i, &u0, &v, t, &mut bb, None);
                    for (p, o) in out.iter_mut().enumerate() {
                        *o = (0..rows).map(|r| w[r] * bb[r * k + p]).sum();
                    }
                });
                if max_abs(&fd) > 1e-9 {
                    check(&format!("{what}: d(B_d^T w)/du1"), &h, &fd);
                } else {
                    assert!(max_abs(&h) <= 1e-9, "{what}: linear rows, nonzero tangent");
                }
                // A vanishing increment gives B(u0).
                blk.discrete_jacobian(i, &u0, &u0, t, &mut b, None);
                blk.jacobian(i, &u0, t, &mut bm);
                assert_eq!(b, bm, "{what}: vanishing increment");
            }
        }
        eprintln!(
            "{label}: max |B_d du - dPhi| = {worst:.2e} (B(u_m) du - dPhi up to {midpoint_miss:.2e})"
        );
        if label.contains("directors") {
            // Every joint row on director bodies is at most quadratic: the
            // midpoint Jacobian is already the exact discrete derivative.
            assert!(
                midpoint_miss < 1e-13,
                "{label}: B(u_m) du - dPhi = {midpoint_miss:.2e}"
            );
        } else {
            assert!(
                midpoint_miss > 1e-4,
                "{label}: no nonlinear joint exercised"
            );
        }
    }
}

/// The further outputs of `discrete_jacobian_with` (the Galerkin schemes'
/// fused passes) are the separate evaluations' values bit for bit: the
/// derivative with respect to u0 is the swapped call's tangent, the end rows
/// are Phi(u1) and B(u1), and known start values Phi(u0), B(u0) give the
/// same B_d and tangents as evaluating them.
#[test]
fn discrete_joint_extras() {
    let mut rng = Rng(0xE47);
    let t = 0.4;
    for model in [
        mechanism(),
        path_mechanism(),
        mechanism3d(Attitude::EulerParameters, EulerKinetic::Quadratic),
        mechanism3d(Attitude::Directors, EulerKinetic::Quadratic),
    ] {
        let u0: Vec<f64> = rng.around(&model.u0, 0.2);
        let u1: Vec<f64> = rng.around(&u0, 0.3);
        for blk in &model.joints {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let what = format!("{} '{}'", blk.kind(i), blk.name(i));
                let w = rng.vec(rows, -2.0, 2.0);
                let (mut b, mut h) = (vec![0.0; rows * k], vec![0.0; k * k]);
                blk.discrete_jacobian(i, &u0, &u1, t, &mut b, Some((&w, &mut h)));
                let (mut bs, mut h0) = (vec![0.0; rows * k], vec![0.0; k * k]);
                blk.discrete_jacobian(i, &u1, &u0, t, &mut bs, Some((&w, &mut h0)));
                let (mut p0, mut p1) = (vec![0.0; rows], vec![0.0; rows]);
                blk.phi(i, &u0, t, &mut p0);
                blk.phi(i, &u1, t, &mut p1);
                let (mut b0, mut b1) = (vec![0.0; rows * k], vec![0.0; rows * k]);
                blk.jacobian(i, &u0, t, &mut b0);
                blk.jacobian(i, &u1, t, &mut b1);
                for known in [false, true] {
                    let (mut bx, mut hx, mut h0x) =
                        (vec![0.0; rows * k], vec![0.0; k * k], vec![0.0; k * k]);
                    let (mut phi_end, mut b_end) = (vec![0.0; rows], vec![0.0; rows * k]);
                    blk.discrete_jacobian_with(
                        i,
                        &u0,
                        &u1,
                        t,
                        &mut bx,
                        Some((&w, &mut hx)),
                        DiscreteExtras {
                            tangent_from: Some(&mut h0x),
                            end: Some((&mut phi_end, &mut b_end)),
                            start_phi: known.then_some(&p0[..]),
                            start_b: known.then_some(&b0[..]),
                        },
                    );
                    assert_eq!(bx, b, "{what} (known start {known}): B_d");
                    assert_eq!(hx, h, "{what} (known start {known}): tangent");
                    assert_eq!(h0x, h0, "{what} (known start {known}): swapped tangent");
                    assert_eq!(phi_end, p1, "{what} (known start {known}): Phi(u1)");
                    assert_eq!(b_end, b1, "{what} (known start {known}): B(u1)");
                }
            }
        }
    }
}

/// The state at t_n of a step and the map from the Newton unknowns
/// x = (delta, lambda) to the iterates, exactly as `OneStepIntegrator::step`
/// updates them: `X = chi_P . (u_n, v_n, a_n) + chi_C delta` for
/// X = u_{n+1}, u~, a~, and lambda itself.
struct StepFixture {
    u_n: Vec<f64>,
    v_n: Vec<f64>,
    a_n: Vec<f64>,
    lam_n: Vec<f64>,
    t_n: f64,
    dt: f64,
}

impl StepFixture {
    fn iterate(&self, pc: &PredCorr, delta: &[f64]) -> Vec<f64> {
        (0..delta.len())
            .map(|i| pc.predict(self.u_n[i], self.v_n[i], self.a_n[i]) + pc.c * delta[i])
            .collect()
    }

    fn fill(
        &self,
        asm: &Mechanics<'_>,
        sch: &LinearScheme,
        forces: ConstraintForce,
        x: &[f64],
        matrix: bool,
    ) -> SaddleSystem {
        let mut sys = asm.new_system();
        let (delta, lambda) = x.split_at(asm.n_dofs());
        let (pu, put, pvt, pat) = (
            sch.pred_corr(&sch.u_next),
            sch.pred_corr(&sch.u_tilde),
            sch.pred_corr(&sch.v_tilde),
            sch.pred_corr(&sch.a_tilde),
        );
        let (u_next, u_tilde, v_tilde, a_tilde) = (
            self.iterate(&pu, delta),
            self.iterate(&put, delta),
            self.iterate(&pvt, delta),
            self.iterate(&pat, delta),
        );
        let inp = StepInput {
            level: EvaluationPoint {
                u_n: &self.u_n,
                v_n: &self.v_n,
                a_n: &self.a_n,
                u_next: &u_next,
                u_tilde: &u_tilde,
                w: sch.level_weights(),
            },
            // As the stepper: the midpoint schemes' discrete gradients.
            discrete_gradient: sch.level_weights().is_midpoint(),
            a_tilde: &a_tilde,
            inertia: None,
            v_tilde: &v_tilde,
            coef_v: pvt.c,
            lambda_n: &self.lam_n,
            lambda,
            t_n: self.t_n,
            t_next: self.t_n + self.dt,
            w1: sch.w1,
            coef_mass: pat.c,
            coef_u: pu.c,
            forces,
            matrix,
        };
        fill_step(asm, &inp, &mut sys);
        sys
    }
}

const OPTIONS: [ConstraintOption; 4] = [
    ConstraintOption::One,
    ConstraintOption::Two,
    ConstraintOption::Three,
    ConstraintOption::Four,
];

/// Relative errors of the blocks S (n x n), C (n x m), B (m x n) of a Newton
/// matrix against the finite-difference derivative of the residual; the
/// m x m block must vanish in both.
fn newton_block_errors(
    analytic: &[f64],
    fd: &[f64],
    n: usize,
    m: usize,
    what: &str,
    verbose: bool,
) -> [f64; 3] {
    let d = n + m;
    let blocks = [("S", 0..n, 0..n), ("C", 0..n, n..d), ("B", n..d, 0..n)];
    let errs = blocks.map(|(name, r, c)| {
        let (a, f) = (block(analytic, d, r.clone(), c.clone()), block(fd, d, r, c));
        let err = max_diff(&a, &f) / max_abs(&f);
        assert!(
            max_abs(&f) > 1e-6 && max_abs(&a) > 1e-6,
            "{what}: block {name} is zero"
        );
        if verbose {
            eprintln!("{what:<64} block {name} rel err {err:.2e}");
        }
        err
    });
    let zero = block(fd, d, n..d, n..d);
    assert!(
        max_abs(&zero) <= 1e-9 && max_abs(&block(analytic, d, n..d, n..d)) == 0.0,
        "{what}: lower-right block"
    );
    errs
}

#[test]
fn newton_matrix_is_residual_derivative() {
    newton_matrix_check("planar mechanism", mechanism());
}

#[test]
fn newton_matrix_is_residual_derivative_path() {
    newton_matrix_check("planar path/linear mechanism", path_mechanism());
}

#[test]
fn newton_matrix_is_residual_derivative_3d() {
    newton_matrix_check(
        "3-D mechanism",
        mechanism3d(Attitude::EulerParameters, EulerKinetic::Quadratic),
    );
}

/// The same mechanism with the scale-invariant kinetic energy of its
/// Euler-parameter bodies (src/element/rigid3d.rs, `EulerKinetic`).
#[test]
fn newton_matrix_is_residual_derivative_3d_scale_invariant() {
    newton_matrix_check(
        "3-D mechanism, scale-invariant kinetic energy",
        mechanism3d(Attitude::EulerParameters, EulerKinetic::ScaleInvariant),
    );
}

#[test]
fn newton_matrix_is_residual_derivative_3d_directors() {
    newton_matrix_check(
        "3-D director mechanism",
        mechanism3d(Attitude::Directors, EulerKinetic::Quadratic),
    );
}

fn newton_matrix_check(label: &str, model: Model) {
    let asm = Assembler::new(&model);
    let mech = Mechanics::new(&model, &asm);
    let pool3 = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let (n, m) = (asm.n_dofs(), asm.n_constraints());
    let mut rng = Rng(0x6E77);
    let dt = 0.2;
    let schemes = [
        (
            "U0 generalized-alpha(0.7) a-form",
            gssss(Family::U0, [0.7; 3], SolveForm::A, dt),
        ),
        (
            "V0(0.6,0.9,0.3) v-form",
            gssss(Family::V0, [0.6, 0.9, 0.3], SolveForm::V, dt),
        ),
        (
            "U0(0.5,1,0.2) d-form",
            gssss(Family::U0, [0.5, 1.0, 0.2], SolveForm::D, dt),
        ),
        (
            "V0(1,1,0) midpoint a-form",
            gssss(Family::V0, [1.0, 1.0, 0.0], SolveForm::A, dt),
        ),
        ("two-field midpoint", two_field_scheme(dt)),
    ];
    let mut worst: f64 = 0.0;
    for (name, sch) in schemes {
        let fx = StepFixture {
            u_n: rng.around(&model.u0, 0.1),
            v_n: rng.vec(n, -1.0, 1.0),
            a_n: rng.vec(n, -3.0, 3.0),
            lam_n: rng.vec(m, -5.0, 5.0),
            t_n: 0.3,
            dt,
        };
        // Unknowns at an arbitrary iterate (not the predictor).
        let x: Vec<f64> = rng
            .vec(n, -2.0, 2.0)
            .into_iter()
            .chain(rng.vec(m, -5.0, 5.0))
            .collect();
        // Steps: delta moves u_{n+1} by chi_C delta, so scale to a position step H.
        let pu = sch.pred_corr(&sch.u_next);
        let steps: Vec<f64> = (0..n + m)
            .map(|i| if i < n { H / pu.c.abs() } else { H })
            .collect();
        // Option dg is defined for the midpoint weights only.
        let dg = sch.level_weights().is_midpoint();
        for option in OPTIONS
            .into_iter()
            .chain(dg.then_some(ConstraintOption::Gonzalez))
        {
            let what = format!("{label}: {name}, option {}", option.name());
            let forces = constraint_force(
                option,
                JacobianKind::Consistent,
                sch.w1,
                sch.level_weights().c3,
            );
            let sys = fx.fill(&mech, &sch, forces, &x, true);
            let analytic = dense_pattern(asm.pattern(), &sys.values);
            // The residual-only fill (modified Newton) gives the same residual,
            // and its derivative is the matrix of the full fill.
            let res_only = fx.fill(&mech, &sch, forces, &x, false);
            assert!(
                max_diff(&res_only.residual, &sys.residual) <= 1e-15 * max_abs(&sys.residual),
                "{what}: residual-only fill"
            );
            let fd = fd_jacobian(&x, &steps, n + m, |y, r| {
                r.copy_from_slice(&fx.fill(&mech, &sch, forces, y, false).residual);
            });
            let errs = newton_block_errors(&analytic, &fd, n, m, &what, true);
            let err = errs.iter().fold(0.0_f64, |a, &b| a.max(b));
            assert!(
                err <= TOL,
                "{what}: Newton matrix != d(residual)/d(delta, lambda): S, C, B errors {errs:?}"
            );
            worst = worst.max(err);

            // Three threads assemble the same system, bit for bit.
            let par = pool3.install(|| fx.fill(&mech, &sch, forces, &x, true));
            assert_eq!(par.values, sys.values, "{what}: matrix on 3 threads");
            assert_eq!(par.residual, sys.residual, "{what}: residual on 3 threads");

            // The check detects a wrong multiplier column: the seed's matrices
            // omit the W1 weights for options 1, 3 and 4 (not 2).
            let seed = constraint_force(option, JacobianKind::Seed, sch.w1, sch.level_weights().c3);
            let s = fx.fill(&mech, &sch, seed, &x, true);
            let seed_errs = newton_block_errors(
                &dense_pattern(asm.pattern(), &s.values),
                &fd,
                n,
                m,
                &what,
                false,
            );
            if matches!(option, ConstraintOption::Two | ConstraintOption::Gonzalez) {
                assert!(seed_errs[1] <= TOL, "{what}: seed column should be exact");
            } else {
                assert!(
                    seed_errs[1] > 1e-3,
                    "{what}: seed column not detected ({:.2e})",
                    seed_errs[1]
                );
            }
        }
    }
    eprintln!("newton_matrix_is_residual_derivative ({label}): worst {worst:.2e}");
}
