//! SPEC.md §1 TB: the thin-beam four-bar of seed 000 §4.2.2 (Greenspan thin
//! beam: axial springs eq. 4.43 and three-node bending elements eq. 4.42 with
//! the discrete derivatives eqs. 4.44–4.45), and the elements themselves:
//!
//! * finite-difference checks (4th-order central differences, random
//!   configurations with fixed seeds, 2-D and 3-D) of both elements'
//!   force = dV/du and tangent = dP/du, and of the EOM-level force's
//!   derivative with respect to u_{n+1} in both branches (Greenspan for the
//!   midpoint level weights, exact gradient at u~ otherwise);
//! * the discrete-gradient identity `(u_{n+1} - u_n).P_d = V(u_{n+1}) - V(u_n)`
//!   to round-off, including vanishing increments of psi, nu, l (the seed's
//!   fallback to the derivative) and agreement with the seed's difference
//!   quotients where they are well conditioned;
//! * the SPEC outcome pattern of the 12 combinations over 100 s at dt = 0.01,
//!   energy conservation after the pulse, Newton convergence, and second-order
//!   convergence at t = 0.2 s.
//!
//! Run with `--nocapture` to see the measured numbers.

mod common;

use common::fd::{fd_force_and_tangent, fd_jacobian_h, force_and_tangent, level, Rng, Step};
use common::*;
use flexmb::element::{AxialSpring, Bending, Element, LevelWeights};
use flexmb::integrate::gssss::two_field_scheme;
use flexmb::integrate::gssss::{Family, Gssss, SolveForm};
use flexmb::integrate::IntegratorSpec;

const MODEL: &str = "thin_beam_fourbar";

/// Relative tolerance of the derivative checks.
const TOL: f64 = 1e-6;
/// Finite-difference step.
const H: f64 = 1e-4;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Asserts `analytic == reference` to `tol` relative to the reference's max-norm.
fn check(what: &str, analytic: &[f64], reference: &[f64], tol: f64) -> f64 {
    let scale = max_abs(reference);
    assert!(
        scale > 1e-8 && max_abs(analytic) > 1e-8,
        "{what}: degenerate check"
    );
    let err = max_diff(analytic, reference) / scale;
    eprintln!("{what:<70} rel err {err:.2e}");
    assert!(
        err <= tol,
        "{what}: relative error {err:.3e} > {tol:e}\n analytic  = {analytic:?}\n reference = {reference:?}"
    );
    err
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn force<E: Element>(e: &E, u: &[f64]) -> Vec<f64> {
    force_and_tangent(e, u).0
}

/// Checks an element's force against dV/du and its tangent against dP/du at `u`.
fn check_force_and_tangent<E: Element>(tag: &str, e: &E, u: &[f64]) {
    let (f, k) = force_and_tangent(e, u);
    let (grad, jac) = fd_force_and_tangent(e, u, H);
    check(&format!("{tag}: P = dV/du"), &f, &grad, TOL);
    check(&format!("{tag}: K = dP/du"), &k, &jac, TOL);
}

/// `(u_{n+1} - u_n).P_d - (V(u_{n+1}) - V(u_n))` of step `st`, relative to
/// |V_{n+1}| + |V_n|.
fn energy_error<E: Element>(st: &Step, e: &E, w: LevelWeights, u_next: &[f64]) -> f64 {
    let (f, _) = st.eom(e, w, u_next);
    let du: Vec<f64> = u_next.iter().zip(&st.u_n).map(|(a, b)| a - b).collect();
    let (v1, v0) = (e.potential(u_next), e.potential(&st.u_n));
    (dot(&du, &f) - (v1 - v0)).abs() / (v1.abs() + v0.abs())
}
fn gssss(family: Family, rho: [f64; 3], dt: f64) -> LevelWeights {
    Gssss::new(family, rho)
        .expect("valid rho")
        .scheme(SolveForm::A, dt)
        .level_weights()
}

/// The level weights of the energy-conserving midpoint schemes (Greenspan branch).
fn midpoint_weights(dt: f64) -> [(&'static str, LevelWeights); 3] {
    [
        ("V0(1,1,0)", gssss(Family::V0, [1.0, 1.0, 0.0], dt)),
        ("U0(1,1,1)", gssss(Family::U0, [1.0, 1.0, 1.0], dt)),
        ("two-field", two_field_scheme(dt).level_weights()),
    ]
}

/// Level weights of other schemes (exact gradient at u~).
fn other_weights(dt: f64) -> [(&'static str, LevelWeights); 4] {
    [
        ("U0(1,1,0) Newmark", gssss(Family::U0, [1.0, 1.0, 0.0], dt)),
        ("generalized-alpha(0.7)", gssss(Family::U0, [0.7; 3], dt)),
        ("V0(0.6,0.9,0.3)", gssss(Family::V0, [0.6, 0.9, 0.3], dt)),
        ("arbitrary", level(0.13, 0.021, 0.37)),
    ]
}

/// A random bent configuration of a bending element: middle node near the
/// origin, arms of length 0.5..1.5 at an angle of at least 0.4 rad from folded.
fn bent(rng: &mut Rng, dim: usize) -> Vec<f64> {
    loop {
        let u = rng.vec(3 * dim, -1.0, 1.0);
        let r1: Vec<f64> = (0..dim).map(|a| u[a] - u[dim + a]).collect();
        let r2: Vec<f64> = (0..dim).map(|a| u[2 * dim + a] - u[dim + a]).collect();
        let (l1, l2) = (dot(&r1, &r1).sqrt(), dot(&r2, &r2).sqrt());
        let c = dot(&r1, &r2) / (l1 * l2);
        if (0.5..1.5).contains(&l1) && (0.5..1.5).contains(&l2) && c < 0.4f64.cos() {
            return u;
        }
    }
}

fn spring_length(dim: usize, u: &[f64]) -> f64 {
    (0..dim)
        .map(|a| (u[dim + a] - u[a]).powi(2))
        .sum::<f64>()
        .sqrt()
}

// ---------------------------------------------------------------------------
// 1. Force = dV/du and tangent = dP/du
// ---------------------------------------------------------------------------

#[test]
fn axial_spring_force_and_tangent() {
    let mut rng = Rng(0xA81A);
    for dim in [2, 3] {
        for trial in 0..3 {
            let u = rng.vec(2 * dim, -1.0, 1.0);
            let l = spring_length(dim, &u);
            for (case, l0) in [("tension", 0.7 * l), ("compression", 1.3 * l)] {
                let s = AxialSpring::new(dim, rng.range(1e3, 1e4), l0);
                let tag = format!("axial spring {dim}-D #{trial} {case}");
                check_force_and_tangent(&tag, &s, &u);
            }
            // V = 1/2 kappa (l - l0)^2 itself.
            let s = AxialSpring::new(dim, 2.0, 0.5 * l);
            assert!((s.potential(&u) - 0.25 * l * l).abs() < 1e-14);
        }
    }
}

#[test]
fn bending_force_and_tangent() {
    let mut rng = Rng(0xBE4D);
    for dim in [2, 3] {
        for trial in 0..4 {
            let u = bent(&mut rng, dim);
            let b = Bending::new(dim, rng.range(1.0, 20.0));
            let tag = format!("bending {dim}-D #{trial}");
            check_force_and_tangent(&tag, &b, &u);
        }
        // Straight (any arm lengths): V = 0 and P = 0; K is not zero.
        let mut u = vec![0.0; 3 * dim];
        u[0] = -0.7;
        u[2 * dim] = 1.3;
        let b = Bending::new(dim, 10.0);
        assert!(b.potential(&u).abs() < 1e-15);
        assert!(max_abs(&force(&b, &u)) < 1e-12);
        let fd = fd_jacobian_h(&u, H, 3 * dim, |x, f| b.force(x, f, None));
        check(
            &format!("bending {dim}-D straight: K = dP/du"),
            &force_and_tangent(&b, &u).1,
            &fd,
            TOL,
        );
    }
    // V = 1/2 Cb (nu + psi)/(nu - psi): a right angle gives Cb/2.
    let b = Bending::new(2, 10.0);
    assert!((b.potential(&[1.0, 0.0, 0.0, 0.0, 0.0, 2.0]) - 5.0).abs() < 1e-14);
}

// ---------------------------------------------------------------------------
// 2. EOM-level force: derivative with respect to u_{n+1}, both branches
// ---------------------------------------------------------------------------

fn check_eom<E: Element>(what: &str, e: &E, st: &Step, w: LevelWeights, u_next: &[f64]) {
    let n = e.ndof();
    let (_, k) = st.eom(e, w, u_next);
    let fd = fd_jacobian_h(u_next, H, n, |x, f| f.copy_from_slice(&st.eom(e, w, x).0));
    check(&format!("{what}: dP~/du_(n+1)"), &k, &fd, TOL);
}

#[test]
fn eom_force_tangents() {
    let mut rng = Rng(0xE0F7);
    let dt = 0.01;
    for dim in [2, 3] {
        for (name, w) in midpoint_weights(dt).into_iter().chain(other_weights(dt)) {
            // Axial spring.
            let st = Step::new(rng.vec(2 * dim, -1.0, 1.0), &mut rng);
            let u_next: Vec<f64> = rng.around(&st.u_n, 0.3);
            let s = AxialSpring::new(dim, 1e4, 0.8 * spring_length(dim, &st.u_n));
            check_eom(&format!("axial {dim}-D, {name}"), &s, &st, w, &u_next);
            // Bending.
            let st = Step::new(bent(&mut rng, dim), &mut rng);
            let u_next: Vec<f64> = rng.around(&st.u_n, 0.1);
            let b = Bending::new(dim, 10.0);
            check_eom(&format!("bending {dim}-D, {name}"), &b, &st, w, &u_next);
            // Outside the midpoint level the force is the exact gradient at u~.
            if other_weights(dt).iter().any(|(n, _)| *n == name) {
                let (f, _) = st.eom(&b, w, &u_next);
                let exact = force(&b, &st.u_tilde(w, &u_next));
                assert!(max_diff(&f, &exact) <= 1e-14 * max_abs(&exact), "{name}");
            }
        }
        // The Greenspan tangent at vanishing increments (u_{n+1} = u_n, where
        // the seed falls back to the derivative) is exact too.
        let w = midpoint_weights(dt)[0].1;
        let st = Step::new(bent(&mut rng, dim), &mut rng);
        let u = st.u_n.clone();
        check_eom(
            &format!("bending {dim}-D, u_(n+1) = u_n"),
            &Bending::new(dim, 10.0),
            &st,
            w,
            &u,
        );
        let st = Step::new(rng.vec(2 * dim, -1.0, 1.0), &mut rng);
        let s = AxialSpring::new(dim, 1e4, 0.8 * spring_length(dim, &st.u_n));
        let u = st.u_n.clone();
        check_eom(&format!("axial {dim}-D, u_(n+1) = u_n"), &s, &st, w, &u);
    }
}

// ---------------------------------------------------------------------------
// 3. Discrete gradient (eqs. 4.44–4.45)
// ---------------------------------------------------------------------------

/// The seed's eq. 4.45 with its difference quotients evaluated literally
/// (nu quotient differencing in nu), for well-separated end states.
fn literal_bending(cb: f64, dim: usize, u0: &[f64], u1: &[f64]) -> Vec<f64> {
    let arms = |u: &[f64]| -> (Vec<f64>, Vec<f64>) {
        (
            (0..dim).map(|a| u[a] - u[dim + a]).collect(),
            (0..dim).map(|a| u[2 * dim + a] - u[dim + a]).collect(),
        )
    };
    let v = |psi: f64, nu: f64| 0.5 * cb * (nu + psi) / (nu - psi);
    let ((a1, a2), (b1, b2)) = (arms(u0), arms(u1));
    let (la1, la2, lb1, lb2) = (
        dot(&a1, &a1).sqrt(),
        dot(&a2, &a2).sqrt(),
        dot(&b1, &b1).sqrt(),
        dot(&b2, &b2).sqrt(),
    );
    let (p0, n0, p1, n1) = (dot(&a1, &a2), la1 * la2, dot(&b1, &b2), lb1 * lb2);
    let dpsi = 0.5 * (v(p1, n1) + v(p1, n0) - v(p0, n1) - v(p0, n0)) / (p1 - p0);
    let dnu = 0.5 * (v(p1, n1) + v(p0, n1) - v(p1, n0) - v(p0, n0)) / (n1 - n0);
    let (m1, m2) = (0.5 * (la1 + lb1), 0.5 * (la2 + lb2));
    let mut f = vec![0.0; 3 * dim];
    for a in 0..dim {
        let (r1, r2) = (0.5 * (a1[a] + b1[a]), 0.5 * (a2[a] + b2[a]));
        // Node order [a, b, c] (the seed writes [a; c; b]).
        f[a] = dpsi * r2 + dnu * m2 / m1 * r1;
        f[2 * dim + a] = dpsi * r1 + dnu * m1 / m2 * r2;
        f[dim + a] = -f[a] - f[2 * dim + a];
    }
    f
}

#[test]
fn discrete_gradient() {
    let dt = 0.01;
    let mut rng = Rng(0xD15C);
    let mut worst: f64 = 0.0;
    for dim in [2, 3] {
        for trial in 0..6 {
            let st = Step::new(bent(&mut rng, dim), &mut rng);
            let u_next: Vec<f64> = rng.around(&st.u_n, 0.15);
            let b = Bending::new(dim, 10.0);
            for (name, w) in midpoint_weights(dt) {
                let err = energy_error(&st, &b, w, &u_next);
                worst = worst.max(err);
                assert!(err <= 1e-13, "bending {dim}-D #{trial} {name}: {err:.2e}");
            }
            // Same as the seed's quotients where those are well conditioned.
            let (f, _) = st.eom(&b, midpoint_weights(dt)[0].1, &u_next);
            check(
                &format!("bending {dim}-D #{trial}: closed form = eq. 4.45 literally"),
                &f,
                &literal_bending(10.0, dim, &st.u_n, &u_next),
                1e-9,
            );
            // Not an identity at other levels (the check can fail).
            let off = energy_error(&st, &b, other_weights(dt)[1].1, &u_next);
            assert!(
                off > 1e-6,
                "bending: generalized-alpha conserves? {off:.2e}"
            );

            let st = Step::new(rng.vec(2 * dim, -1.0, 1.0), &mut rng);
            let u_next: Vec<f64> = rng.around(&st.u_n, 0.3);
            let s = AxialSpring::new(dim, 1e4, rng.range(0.5, 1.5) * spring_length(dim, &st.u_n));
            for (name, w) in midpoint_weights(dt) {
                let err = energy_error(&st, &s, w, &u_next);
                worst = worst.max(err);
                assert!(err <= 1e-13, "axial {dim}-D #{trial} {name}: {err:.2e}");
            }
            let off = energy_error(&st, &s, other_weights(dt)[1].1, &u_next);
            assert!(off > 1e-6, "axial: generalized-alpha conserves? {off:.2e}");
        }
    }
    eprintln!("discrete gradient: worst relative error {worst:.2e}");
}

/// Vanishing denominators of eqs. 4.44–4.45 (psi_{n+1} = psi_n, nu_{n+1} =
/// nu_n, l_{n+1} = l_n, u_{n+1} = u_n): the identity still holds to round-off,
/// the force is finite and continuous, and at u_{n+1} = u_n it is the
/// derivative V'(u_n) (the seed's fallback).
#[test]
fn discrete_gradient_vanishing_denominators() {
    let w = midpoint_weights(0.01)[0].1;
    let mut rng = Rng(0xFA11);
    let b = Bending::new(2, 10.0);
    let polar = |l1: f64, t1: f64, l2: f64, t2: f64| {
        vec![
            l1 * t1.cos(),
            l1 * t1.sin(),
            0.0,
            0.0,
            l2 * t2.cos(),
            l2 * t2.sin(),
        ]
    };
    let (l1, l2, t1, t2) = (0.9, 1.1, 0.3, 2.9);
    let u_n = polar(l1, t1, l2, t2);
    let st = Step::new(u_n.clone(), &mut rng);
    let theta = t2 - t1;
    let cases = [
        // psi' = psi, nu' != nu: l1 grows by 20 %, the angle opens to keep psi.
        (
            "psi' = psi",
            polar(1.2 * l1, t1, l2, t1 + (theta.cos() / 1.2).acos()),
        ),
        // nu' = nu, psi' != psi: arm 2 rotates at constant length.
        ("nu' = nu", polar(l1, t1, l2, t2 - 0.2)),
        // Both: a rigid rotation.
        ("rigid rotation", polar(l1, t1 + 0.4, l2, t2 + 0.4)),
        ("u' = u", u_n.clone()),
    ];
    for (name, u_next) in cases {
        let (f, _) = st.eom(&b, w, &u_next);
        assert!(f.iter().all(|x| x.is_finite()), "{name}: {f:?}");
        let err = energy_error(&st, &b, w, &u_next);
        eprintln!("bending, {name}: energy identity error {err:.2e}");
        assert!(err <= 1e-13, "{name}: {err:.2e}");
        // Continuity: a 1e-7 perturbation moves the force by O(1e-7).
        let mut u_p = u_next.clone();
        u_p[4] += 1e-7;
        let (fp, _) = st.eom(&b, w, &u_p);
        assert!(
            max_diff(&f, &fp) < 1e-5 * max_abs(&f).max(1.0),
            "{name}: jump"
        );
    }
    // u_{n+1} = u_n: the derivative at u_n.
    let (f, _) = st.eom(&b, w, &u_n);
    check(
        "bending, u' = u: P_d = V'(u_n)",
        &f,
        &force(&b, &u_n),
        1e-14,
    );
    // Axial spring: rotation at constant length, and u' = u.
    let s = AxialSpring::new(2, 1e4, 0.8);
    let u_n = vec![0.1, 0.2, 0.1 + 0.5f64.cos(), 0.2 + 0.5f64.sin()];
    let st = Step::new(u_n.clone(), &mut rng);
    let rot = vec![0.1, 0.2, 0.1 + 0.9f64.cos(), 0.2 + 0.9f64.sin()];
    let err = energy_error(&st, &s, w, &rot);
    assert!(err <= 1e-13, "axial, l' = l: {err:.2e}");
    let (f, _) = st.eom(&s, w, &u_n);
    check("axial, u' = u: P_d = V'(u_n)", &f, &force(&s, &u_n), 1e-14);
}

// ---------------------------------------------------------------------------
// 4. Model files: the element tables and their validation
// ---------------------------------------------------------------------------

const NODES: &str = r#"
dimension = 2
[[node]]
id = "a"
position = [0.0, 0.0]
mass = 1.0
[[node]]
id = "b"
position = [1.0, 0.0]
mass = 1.0
[[node]]
id = "c"
position = [2.0, 0.5]
mass = 1.0
[[body]]
id = "rb"
position = [0.0, 3.0]
mass = 1.0
"#;

/// Loads NODES plus `element`; the error message, if any.
fn load_with(element: &str) -> Result<flexmb::input::ModelFile, String> {
    flexmb::input::load_model_str(&format!("{NODES}\n[[element]]\n{element}"), "m.toml")
        .map_err(|e| e.to_string())
}

#[test]
fn model_file_elements_and_errors() {
    // Valid tables build; the rest length defaults to the initial distance.
    let f =
        load_with("id = \"s\"\ntype = \"axial_spring\"\nnodes = [\"a\", \"b\"]\nstiffness = 100.0")
            .expect("valid spring");
    assert_eq!(f.model.elements[0].kind(), "axial_spring");
    assert!(f.model.elements[0].potential(0, &f.model.u0).abs() < 1e-15);
    let f = load_with(
        "id = \"k\"\ntype = \"bending\"\nnodes = [\"a\", \"b\", \"c\"]\nstiffness = 10.0",
    )
    .expect("valid bending");
    assert_eq!(f.model.elements[0].kind(), "bending");
    assert!(f.model.elements[0].potential(0, &f.model.u0) > 0.0);
    let cases = [
        (
            "id = \"s\"\ntype = \"axial_spring\"\nnodes = [\"a\", \"b\"]\nstiffness = -1.0",
            "element 's' (field `stiffness`)",
        ),
        (
            "id = \"s\"\ntype = \"axial_spring\"\nnodes = [\"a\", \"a\"]\nstiffness = 1.0",
            "element 's' (field `nodes`)",
        ),
        (
            "id = \"s\"\ntype = \"axial_spring\"\nnodes = [\"a\", \"x\"]\nstiffness = 1.0",
            "element 's' (field `nodes`): node 'x' is not defined",
        ),
        (
            "id = \"s\"\ntype = \"axial_spring\"\nnodes = [\"a\", \"b\"]\nstiffness = 1.0\nrest_length = 0.0",
            "element 's' (field `rest_length`)",
        ),
        (
            "id = \"k\"\ntype = \"bending\"\nnodes = [\"a\", \"b\", \"c\"]\nstiffness = 0.0",
            "element 'k' (field `stiffness`)",
        ),
        (
            "id = \"k\"\ntype = \"bending\"\nnodes = [\"a\", \"b\", \"a\"]\nstiffness = 1.0",
            "element 'k' (field `nodes`)",
        ),
        (
            "id = \"k\"\ntype = \"bending\"\nnodes = [\"a\", \"rb\", \"c\"]\nstiffness = 1.0",
            "element 'k' (field `nodes`): 'rb' is a rigid body",
        ),
        (
            "id = \"k\"\ntype = \"bending\"\nnodes = [\"a\", \"b\", \"c\"]\nstiffness = 1.0\nrest_length = 1.0",
            "unknown field `rest_length`",
        ),
        (
            "id = \"k\"\ntype = \"bending\"\nnodes = [\"a\", \"b\"]\nstiffness = 1.0",
            "m.toml:",
        ),
    ];
    for (table, expected) in cases {
        let e = load_with(table)
            .err()
            .unwrap_or_else(|| panic!("accepted:\n{table}"));
        println!("{e}");
        assert!(e.contains(expected), "{e}\n expected to contain {expected}");
    }
}

// ---------------------------------------------------------------------------
// 5. The four-bar (SPEC.md §1 TB)
// ---------------------------------------------------------------------------

/// Index of the first recorded step at or after t.
fn at(time: &[f64], t: f64) -> usize {
    time.iter()
        .position(|&s| s >= t - 1e-9)
        .expect("time reached")
}

/// Largest |E(t) - E(t0)| / E(t0) over recorded t >= t0.
fn energy_drift_after(rec: &flexmb::output::MemoryRecorder, t0: f64) -> f64 {
    let k = at(&rec.time, t0);
    max_energy_change(&rec.energy[k..]) / rec.energy[k].total.abs()
}

fn max_over(rows: &[Vec<f64>]) -> f64 {
    rows.iter().map(|r| max_abs(r)).fold(0.0, f64::max)
}

/// Over 100 s at dt = 0.01 (Figs. 4.45–4.53): U0(1,1,0) and option 1 fail,
/// V0(1,1,0) option 1 only after its energy has grown; U0(1,1,1) options 2–4
/// reach 100 s with large accelerations and acceleration-level constraint
/// residuals; V0(1,1,0) option 4 with oscillating multipliers; V0(1,1,0)
/// options 2 and 3 smooth and conserving energy after the pulse.
#[test]
fn outcome_pattern_over_100_s() {
    let mut smooth_acc: f64 = 0.0; // V0(1,1,0) options 2-3 (the reference)
    let mut smooth_lambda: f64 = 0.0;
    let mut results = Vec::new();
    for (scheme, option) in combinations() {
        let (s, r) = run(MODEL, &spec(scheme, option, 0.01, 100.0));
        let acc_residual = max_constraint(&r.constraints, |c| c.acceleration);
        let (amax, lmax) = (max_over(&r.a), max_over(&r.lambda));
        let n = r.time.len();
        let lambda_osc = oscillation(&r.lambda, n.saturating_sub(1000)..n);
        let drift = energy_drift_after(&r, 0.5);
        let what = format!(
            "{scheme} option {option}: {} | after the pulse: energy drift {drift:.2e}, \
             max |a| {amax:.2e}, max acc. residual {acc_residual:.2e}, max |lambda| {lmax:.2e}, \
             lambda oscillation (last 10 s) {lambda_osc:.2e}",
            s.line()
        );
        println!("{what}");
        match (scheme, option) {
            ("newmark", _) | ("midpoint-endpoint", 1) | ("midpoint", 1) => {
                println!("  failure: {:?}", s.failure);
                assert!(s.failure.is_some(), "{what}: expected a failure");
                // SPEC: U0(1,1,0) near 20 s, U0(1,1,1) option 1 near 16.5 s,
                // V0(1,1,0) option 1 near 46 s (measured: 21.56, 16.52, 35.52 s).
                // The time a blow-up stops the run depends on how it is
                // detected (Newton failure, or a pivot at round-off of its
                // column); the windows are +-25 % around SPEC's 20 and 16.5 s.
                let (lo, hi) = match (scheme, option) {
                    ("midpoint", 1) => (30.0, 50.0),
                    ("newmark", _) => (15.0, 25.0),
                    _ => (12.4, 20.6),
                };
                assert!(
                    (lo..hi).contains(&s.t_end_reached),
                    "{what}: failed outside [{lo}, {hi})"
                );
                assert!(s.max_rel_energy_change > 1.0, "{what}: energy did not grow");
            }
            _ => {
                assert!(s.failure.is_none(), "{what}");
                assert_eq!(s.t_end_reached, 100.0);
                assert!(drift < 1e-10, "{what}");
                assert!(s.max_rel_energy_change < 1e-10, "{what}");
                if scheme == "midpoint" && option != 4 {
                    smooth_acc = smooth_acc.max(acc_residual);
                    smooth_lambda = smooth_lambda.max(lmax);
                }
            }
        }
        results.push((scheme, option, acc_residual, lmax, lambda_osc));
    }
    assert!(smooth_acc > 0.0 && smooth_lambda > 0.0);
    for (scheme, option, acc_residual, lmax, lambda_osc) in results {
        match (scheme, option) {
            ("midpoint-endpoint", 2..=4) => assert!(
                acc_residual > 100.0 * smooth_acc,
                "{scheme} option {option}: acceleration residual {acc_residual:.2e} not large \
                 against V0(1,1,0)'s {smooth_acc:.2e}"
            ),
            ("midpoint", 4) => assert!(
                lmax > 20.0 * smooth_lambda && lambda_osc > 10.0,
                "{scheme} option 4: multipliers do not oscillate ({lmax:.2e}, {lambda_osc:.2e})"
            ),
            ("midpoint", 2 | 3) => assert!(
                lambda_osc < 10.0,
                "{scheme} option {option}: multipliers oscillate ({lambda_osc:.2e})"
            ),
            _ => {}
        }
    }
}

/// V0(1,1,0) options 2 and 3 (a-form and two-field form): energy after the
/// pulse (t > 0.5 s) constant to round-off over 100 s (SPEC: about 3e-13),
/// positions on the constraints,
/// and Newton converging quadratically (iteration count nearly independent
/// of the tolerance).
#[test]
fn midpoint_conserves_energy_after_the_pulse() {
    for option in [2, 3] {
        let (s, r) = run(MODEL, &spec("midpoint", option, 0.01, 100.0));
        assert!(s.failure.is_none(), "option {option}: {}", s.line());
        let drift = energy_drift_after(&r, 0.5);
        let e_pulse = r.energy[at(&r.time, 0.5)].total;
        let w_pulse = r.energy[at(&r.time, 0.5)].external_work;
        println!(
            "option {option}: E(0.5) = {e_pulse:.6} (pulse work {w_pulse:.6}), drift after \
             the pulse {drift:.2e}, |E - E0 - W| {:.2e}, {:.3} iterations/step",
            s.max_rel_energy_change,
            s.iterations_per_step()
        );
        assert!(e_pulse > 1.0, "the pulse must put energy in");
        assert!(drift < 1e-10, "option {option}: drift {drift:.2e}");
        assert!(s.max_position_violation < 1e-13, "{}", s.line());
        let tight = IntegratorSpec {
            tol: Some(1e-12),
            ..spec("midpoint", option, 0.01, 100.0)
        };
        let (st, _) = run(MODEL, &tight);
        println!(
            "option {option}: {:.3} iterations/step at tol 1e-8, {:.3} at tol 1e-12",
            s.iterations_per_step(),
            st.iterations_per_step()
        );
        assert!(s.iterations_per_step() < 4.5, "{}", s.line());
        assert!(
            st.iterations_per_step() < s.iterations_per_step() + 1.0,
            "Newton is not quadratic: {}",
            st.line()
        );
        // The two-field v-form (V0(1,1,0)) as well.
        let two_field = IntegratorSpec {
            form: Some("two-field".into()),
            ..spec("midpoint", option, 0.01, 100.0)
        };
        let (s2, r2) = run(MODEL, &two_field);
        let drift2 = energy_drift_after(&r2, 0.5);
        println!("option {option}, two-field: drift after the pulse {drift2:.2e}");
        assert!(s2.failure.is_none() && drift2 < 1e-10, "{}", s2.line());
    }
}

/// Second order in u, v, a, lambda for every combination at t = 0.2 s (before
/// the pulse's kink at 0.25 s), finest pair of dt = 0.2/2^3 .. 0.2/2^6 against
/// dt = 0.2/2^10. The steps divide 0.2 so that every run ends on a full step:
/// with dt = 2^-k (`common::convergence`) the last step to 0.2 is shortened
/// and the output alignment of a (V0(1,1,0)) and lambda (options 2, 3), which
/// assumes equal steps, is only first order (measured orders 0.5-1.3).
#[test]
fn second_order_convergence() {
    let t_end = 0.2;
    for (scheme, option) in combinations() {
        let final_state = |k: i32| {
            let (s, r) = run(MODEL, &spec(scheme, option, t_end / 2f64.powi(k), t_end));
            assert!(
                s.failure.is_none(),
                "{scheme} option {option}: {}",
                s.line()
            );
            assert!((r.time[r.time.len() - 1] - t_end).abs() < 1e-12);
            r
        };
        let reference = final_state(10);
        let k = reference.time.len() - 1;
        let exact = [
            reference.u[k].as_slice(),
            &reference.v[k],
            &reference.a[k],
            &reference.lambda[k],
        ];
        let errors: Vec<[f64; 4]> = (3..=6)
            .map(|k| final_errors(&final_state(k), exact))
            .collect();
        let (c, f) = (errors[2], errors[3]);
        let orders = [0, 1, 2, 3].map(|q| order(c[q], f[q]));
        print_orders(&format!("{scheme} option {option}"), &errors, orders);
        let what = format!("{scheme} option {option}");
        assert_orders(&what, [orders[0], orders[1], orders[2], 2.0], 1.9, 2.2);
        // lambda: measured 1.92-2.23 (options 2 and 3: 2.23, error ratio 4.7
        // per halving, pre-asymptotic); second order, not third.
        assert_orders(&what, [2.0, 2.0, 2.0, orders[3]], 1.9, 2.3);
    }
}
