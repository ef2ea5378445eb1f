//! Planar geometrically exact Euler–Bernoulli beam (`Beam2d`, absolute nodal
//! coordinates), its slope joint and the static solver:
//!
//! * element derivatives by 4th-order central differences: force = dV/du,
//!   tangent = dP/du (symmetric), for a straight and an initially curved
//!   reference; the EOM-level force: Gonzalez's discrete gradient for the
//!   midpoint weights (`du.P_d = V1 - V0` to round-off, derivative with respect
//!   to u_{n+1}) and `P(u~)`, `c3 K(u~)` for other weights;
//! * the constant mass matrix: symmetric, positive definite, rigid-translation
//!   mass rho A L, Hermite mass entries;
//! * beams of one length share one quadrature table, with bit-identical
//!   results;
//! * rigid-motion invariance: zero force and energy for a rigidly moved straight
//!   beam; a deformed beam's energy and force are frame invariant;
//! * the slope joint (ground and body targets): B = dPhi/du and the curvature;
//! * cantilever (models/cantilever.toml, 10 elements): static tip deflection
//!   under a small tip load within 0.1 % of P L^3 / (3 EI), and under its own
//!   weight within 0.1 % of q L^4 / (8 EI) (distributed gravity M g, no gravity
//!   on slope DOFs);
//! * the first three cantilever frequencies from small free vibrations (midpoint
//!   scheme, initial velocity in the analytic mode shape, zero crossings of the
//!   mass-weighted modal coordinate) within 1 % of (beta_n L)^2 sqrt(EI/(rho A L^4));
//! * large-deflection cantilever under a dead tip load against the elastica,
//!   solved independently in this test by shooting on
//!   `theta'' = alpha cos(theta)`, theta(0) = 0, theta'(1) = 0 (alpha = P L^2/EI),
//!   and cross-checked against Mattiasson (1981), Int. J. Numer. Meth. Eng. 17,
//!   145–153, Table 1: alpha = 1: u/L = 0.05643, w/L = 0.30172; alpha = 5:
//!   u/L = 0.38763, w/L = 0.71379; alpha = 10: u/L = 0.55500, w/L = 0.81061;
//! * energy conservation of a large-amplitude free vibration with the midpoint
//!   scheme, and joints on beam nodes (revolute to a rigid body + slope joint
//!   to the body's angle) in a dynamic run;
//! * cost of one element force + tangent (printed; run with --nocapture).

mod common;

use common::cantilever::{
    at_rest, cantilever, dof, mode_shape, run_model, solve, EA, EI, L, RHO_A,
};
use common::fd::{check_eom_force, check_force_and_tangent, fd_jacobian_h, Rng};
use common::{assert_load_errors, max_abs, max_energy_change, rel_err};
use flexmb::assembly::Assembler;
use flexmb::element::{Beam2d, Beam3d, BeamShapes, Element};
use flexmb::input::{load_model_file, load_model_str};
use flexmb::joint::{Joint, Slope, SlopeTarget};
use flexmb::model::Model;

/// Straight beam from (0, 0) to (l, 0) with unit slopes, perturbed by `amp`.
fn beam_config(rng: &mut Rng, l: f64, amp: f64) -> Vec<f64> {
    let base = [0.0, 0.0, 1.0, 0.0, l, 0.0, 1.0, 0.0];
    base.iter().map(|b| b + rng.range(-amp, amp)).collect()
}

fn elements(rng: &mut Rng) -> Vec<(&'static str, Beam2d)> {
    let l = 0.7;
    let curved = beam_config(rng, l, 0.2);
    vec![
        ("straight", Beam2d::new(l, 50.0, 2.0, 1.3, None)),
        ("curved", Beam2d::new(l, 50.0, 2.0, 1.3, Some(&curved))),
    ]
}

#[test]
fn force_and_tangent_match_finite_differences() {
    let mut rng = Rng(7);
    for (name, el) in elements(&mut rng) {
        for trial in 0..5 {
            let u = beam_config(&mut rng, 0.7, 0.3);
            check_force_and_tangent(name, trial, &el, &u);
        }
    }
}

#[test]
fn eom_force_discrete_gradient_and_level_derivatives() {
    let mut rng = Rng(11);
    for (name, el) in elements(&mut rng) {
        let u_n = beam_config(&mut rng, 0.7, 0.3);
        let v_n: Vec<f64> = (0..8).map(|_| rng.range(-1.0, 1.0)).collect();
        let a_n: Vec<f64> = (0..8).map(|_| rng.range(-1.0, 1.0)).collect();
        let u1 = beam_config(&mut rng, 0.7, 0.3);
        check_eom_force(name, &el, [&u_n, &v_n, &a_n, &u1]);
    }
}

#[test]
fn mass_matrix_is_constant_symmetric_positive() {
    let (l, rho_a) = (0.7, 1.3);
    let el = Beam2d::new(l, 50.0, 2.0, rho_a, None);
    let mut m = [0.0; 64];
    assert!(el.mass(&mut m));
    // Symmetric.
    for i in 0..8 {
        for j in 0..8 {
            assert!((m[i * 8 + j] - m[j * 8 + i]).abs() < 1e-15);
        }
    }
    // Positive definite (Cholesky).
    let mut a = m;
    for j in 0..8 {
        let d = a[j * 8 + j] - (0..j).map(|k| a[j * 8 + k] * a[j * 8 + k]).sum::<f64>();
        assert!(d > 0.0, "mass matrix not positive definite at pivot {j}");
        a[j * 8 + j] = d.sqrt();
        for i in j + 1..8 {
            let s = a[i * 8 + j] - (0..j).map(|k| a[i * 8 + k] * a[j * 8 + k]).sum::<f64>();
            a[i * 8 + j] = s / a[j * 8 + j];
        }
    }
    // Rigid translation in x: kinetic mass rho A L; classical Hermite entries.
    let t = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
    let mt: f64 = (0..8)
        .map(|i| t[i] * (0..8).map(|j| m[i * 8 + j] * t[j]).sum::<f64>())
        .sum();
    assert!((mt - rho_a * l).abs() < 1e-14);
    let c = rho_a * l / 420.0;
    assert!((m[0] - 156.0 * c).abs() < 1e-14);
    assert!((m[2] - 22.0 * l * c).abs() < 1e-14);
    assert!((m[2 * 8 + 2] - 4.0 * l * l * c).abs() < 1e-14);
    assert!((m[2 * 8 + 6] + 3.0 * l * l * c).abs() < 1e-14);
    assert!(m[1].abs() < 1e-16);
}

/// Beams of one length share one quadrature table: an element holds its
/// stiffnesses, mass per length, reference strains and a pointer (14 words,
/// not the 75 of per-element tables), and computes bit for bit what a beam
/// with its own table computes.
#[test]
fn beams_of_one_length_share_their_tables() {
    use std::sync::Arc;
    assert!(std::mem::size_of::<Beam2d>() <= 14 * 8);
    assert!(std::mem::size_of::<Beam3d>() <= 14 * 8);
    let l = 0.7;
    let mut shapes = BeamShapes::default();
    let a = shapes.get(l);
    assert!(Arc::ptr_eq(&a, &shapes.get(l)));
    assert!(!Arc::ptr_eq(
        &a,
        &shapes.get(f64::from_bits(l.to_bits() + 1))
    ));
    let mut rng = Rng(11);
    let e0 = beam_config(&mut rng, l, 0.2);
    let own = Beam2d::new(l, 50.0, 2.0, 1.3, Some(&e0));
    let shared = Beam2d::with_shape(a, 50.0, 2.0, 1.3, Some(&e0));
    let u = beam_config(&mut rng, l, 0.3);
    let (mut f1, mut k1, mut f2, mut k2) = ([0.0; 8], [0.0; 64], [0.0; 8], [0.0; 64]);
    own.force(&u, &mut f1, Some(&mut k1));
    shared.force(&u, &mut f2, Some(&mut k2));
    assert_eq!((f1, k1), (f2, k2));
    assert_eq!(own.potential(&u), shared.potential(&u));
    assert!(own.mass(&mut k1) && shared.mass(&mut k2));
    assert_eq!(k1, k2);
}

#[test]
fn rigid_motions_cost_no_energy() {
    let mut rng = Rng(3);
    let l = 0.7;
    let el = Beam2d::new(l, 50.0, 2.0, 1.3, None);
    let deformed = beam_config(&mut rng, l, 0.2);
    let mut f_def = [0.0; 8];
    el.force(&deformed, &mut f_def, None);
    for _ in 0..5 {
        let th = rng.range(-3.0, 3.0);
        let (s, c) = th.sin_cos();
        let (tx, ty) = (rng.range(-2.0, 2.0), rng.range(-2.0, 2.0));
        let rot = |u: &[f64], shift: bool| -> Vec<f64> {
            let mut out = vec![0.0; 8];
            for node in 0..4 {
                let (x, y) = (u[2 * node], u[2 * node + 1]);
                let pos = node % 2 == 0 && shift;
                out[2 * node] = c * x - s * y + if pos { tx } else { 0.0 };
                out[2 * node + 1] = s * x + c * y + if pos { ty } else { 0.0 };
            }
            out
        };
        let straight = rot(&[0.0, 0.0, 1.0, 0.0, l, 0.0, 1.0, 0.0], true);
        let mut f = [0.0; 8];
        el.force(&straight, &mut f, None);
        assert!(
            max_abs(&f) < 1e-12,
            "rigidly moved straight beam: force {:.2e}",
            max_abs(&f)
        );
        assert!(el.potential(&straight).abs() < 1e-14);
        // Deformed beam: energy invariant, force rotates with the frame.
        let moved = rot(&deformed, true);
        let rel = (el.potential(&moved) - el.potential(&deformed)).abs() / el.potential(&deformed);
        assert!(rel < 1e-12, "energy not frame invariant: {rel:.2e}");
        let mut f_moved = [0.0; 8];
        el.force(&moved, &mut f_moved, None);
        let f_rot = rot(&f_def, false);
        assert!(rel_err(&f_moved, &f_rot) < 1e-11);
    }
}

#[test]
fn slope_joint_derivatives() {
    let mut rng = Rng(5);
    for target in [
        SlopeTarget::Ground([0.6, 0.8]),
        SlopeTarget::Body([0.3, -1.1]),
    ] {
        let j = Slope::new(target);
        let n = j.ndof();
        let u: Vec<f64> = (0..n).map(|_| rng.range(-1.5, 1.5)).collect();
        let mut b = vec![0.0; n];
        j.jacobian(&u, 0.0, &mut b);
        let bfd = fd_jacobian_h(&u, 1e-3, 1, |x, out| j.phi(x, 0.0, out));
        assert!(rel_err(&b, &bfd) < 1e-9, "{target:?}: B");
        let w = [0.7];
        let mut h = vec![0.0; n * n];
        j.add_curvature(&u, 0.0, &w, 1.0, &mut h);
        let hfd = fd_jacobian_h(&u, 1e-3, n, |x, out| {
            let mut bb = vec![0.0; n];
            j.jacobian(x, 0.0, &mut bb);
            for (o, v) in out.iter_mut().zip(&bb) {
                *o = w[0] * v;
            }
        });
        let scale = max_abs(&hfd).max(1.0);
        let d: Vec<f64> = h.iter().zip(&hfd).map(|(a, b)| a - b).collect();
        assert!(max_abs(&d) / scale < 1e-9, "{target:?}: curvature");
    }
}

// ---------------------------------------------------------------------------
// Cantilever
// ---------------------------------------------------------------------------

/// The tip DOFs (x, y) of node `n{n}`.
fn tip_dofs(m: &Model, n: usize) -> (usize, usize) {
    (dof(m, &format!("n{n}.x")), dof(m, &format!("n{n}.y")))
}

#[test]
fn cantilever_static_tip_load_and_self_weight() {
    // The shipped model: 10 elements, 1 N tip load.
    let file = load_model_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/cantilever.toml"
    ))
    .expect("cantilever model loads");
    let m = &file.model;
    let sol = solve(m, 10);
    let (_, iy) = tip_dofs(m, 10);
    let exact = 1.0 * L.powi(3) / (3.0 * EI);
    let err = (-sol.u[iy] - exact).abs() / exact;
    println!(
        "tip load: deflection {:.9e}, P L^3/(3 EI) = {exact:.9e}, error {:.2e}",
        -sol.u[iy], err
    );
    assert!(err < 1e-3);
    // The root pin carries the tip load.
    assert!((sol.lambda[..2].iter().map(|x| x.abs()).fold(0.0, f64::max) - 1.0).abs() < 1e-6);

    // Self-weight: q L^4 / (8 EI) with q = rho A g (consistent gravity M g).
    let g = 9.81;
    let m2 = cantilever(2, 10, EA, [0.0; 3], [0.0, -g, 0.0], &at_rest);
    let sol2 = solve(&m2, 10);
    let (_, iy) = tip_dofs(&m2, 10);
    let exact2 = RHO_A * g * L.powi(4) / (8.0 * EI);
    let err2 = (-sol2.u[iy] - exact2).abs() / exact2;
    println!(
        "self-weight: deflection {:.9e}, q L^4/(8 EI) = {exact2:.9e}, error {err2:.2e}",
        -sol2.u[iy]
    );
    assert!(err2 < 1e-3);
}

#[test]
fn cantilever_first_three_frequencies() {
    const BETA_L: [f64; 3] = [1.875_104_068_7, 4.694_091_132_97, 7.854_757_438_24];
    let dt = 1e-4;
    for (mode, &bl) in BETA_L.iter().enumerate() {
        let omega = bl * bl * (EI / (RHO_A * L.powi(4))).sqrt();
        let period = 2.0 * std::f64::consts::PI / omega;
        // Tip velocity amplitude giving a tip displacement of 1e-6 L.
        let scale = 1e-6 * L * omega / mode_shape(bl, L)[0];
        let model = cantilever(2, 10, EA, [0.0; 3], [0.0; 3], &|x| {
            let p = mode_shape(bl, x);
            ([0.0, scale * p[0], 0.0], [0.0, scale * p[1], 0.0])
        });
        let asm = Assembler::new(&model);
        let phi = model.v0.clone();
        let mut mphi = vec![0.0; phi.len()];
        asm.mass_mul_add(&phi, &mut mphi);
        let u0 = model.u0.clone();
        let rec = run_model(model, dt, 2.3 * period);
        let q: Vec<f64> = rec
            .u
            .iter()
            .map(|u| {
                u.iter()
                    .zip(&u0)
                    .zip(&mphi)
                    .map(|((a, b), m)| (a - b) * m)
                    .sum()
            })
            .collect();
        // Zero crossings after t = 0 (q = A sin(omega t)).
        let mut crossings = Vec::new();
        for k in 2..q.len() {
            if q[k - 1] != 0.0 && q[k - 1].signum() != q[k].signum() {
                let t0 = rec.time[k - 1];
                crossings.push(t0 + dt * q[k - 1] / (q[k - 1] - q[k]));
            }
        }
        assert!(
            crossings.len() >= 3,
            "mode {}: too few zero crossings",
            mode + 1
        );
        let span = crossings[crossings.len() - 1] - crossings[0];
        let omega_num = std::f64::consts::PI * (crossings.len() - 1) as f64 / span;
        // The midpoint rule's period elongation: omega_num = (2/dt) atan(omega dt/2).
        let omega_fe = 2.0 / dt * (omega_num * dt / 2.0).tan();
        let err_raw = (omega_num - omega).abs() / omega;
        let err = (omega_fe - omega).abs() / omega;
        println!(
            "mode {}: analytic {omega:.4} rad/s, measured {omega_num:.4} (error {err_raw:.2e}), \
             FE after the midpoint period correction {omega_fe:.4} (error {err:.2e})",
            mode + 1
        );
        assert!(err < 0.01 && err_raw < 0.01, "mode {}", mode + 1);
    }
}

/// Tip (horizontal shortening, vertical deflection) / L of the elastica under a
/// dead transverse tip load, alpha = P L^2 / EI, by shooting on
/// theta'' = alpha cos(theta), theta(0) = 0, theta'(1) = 0 with RK4.
fn elastica(alpha: f64) -> (f64, f64) {
    let integrate = |k0: f64| -> [f64; 4] {
        // state: theta, theta', x, y (arc length s in [0, 1])
        let rhs = |s: &[f64; 4]| [s[1], alpha * s[0].cos(), s[0].cos(), s[0].sin()];
        let mut y = [0.0, k0, 0.0, 0.0];
        let n = 4000;
        let h = 1.0 / n as f64;
        for _ in 0..n {
            let k1 = rhs(&y);
            let y2: [f64; 4] = std::array::from_fn(|i| y[i] + 0.5 * h * k1[i]);
            let k2 = rhs(&y2);
            let y3: [f64; 4] = std::array::from_fn(|i| y[i] + 0.5 * h * k2[i]);
            let k3 = rhs(&y3);
            let y4: [f64; 4] = std::array::from_fn(|i| y[i] + h * k3[i]);
            let k4 = rhs(&y4);
            for i in 0..4 {
                y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
            }
        }
        y
    };
    // theta'(0) in [-alpha, 0]: bisection on theta'(1).
    let (mut lo, mut hi) = (-alpha, 0.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if integrate(mid)[1] > 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let y = integrate(0.5 * (lo + hi));
    (1.0 - y[2], -y[3])
}

#[test]
fn large_deflection_cantilever_matches_elastica() {
    // Mattiasson (1981), Table 1 (u/L, w/L) for a cantilever with a dead end load.
    let mattiasson = [
        (1.0, 0.05643, 0.30172),
        (5.0, 0.38763, 0.71379),
        (10.0, 0.55500, 0.81061),
    ];
    for (alpha, u_ref, w_ref) in mattiasson {
        let (u_sh, w_sh) = elastica(alpha);
        println!("elastica alpha = {alpha}: shooting u/L = {u_sh:.5}, w/L = {w_sh:.5}; Mattiasson {u_ref}, {w_ref}");
        assert!((u_sh - u_ref).abs() < 2e-5 && (w_sh - w_ref).abs() < 2e-5);
        // Nearly inextensible beam: EA L^2 / EI = 1e6.
        let p = alpha * EI / (L * L);
        for n in [10, 20] {
            let m = cantilever(2, n, 1e6 * EI / (L * L), [0.0, -p, 0.0], [0.0; 3], &at_rest);
            let sol = solve(&m, 10);
            let (ix, iy) = tip_dofs(&m, n);
            let (u_fe, w_fe) = ((L - sol.u[ix]) / L, -sol.u[iy] / L);
            let (eu, ew) = ((u_fe - u_sh).abs() / u_sh, (w_fe - w_sh).abs() / w_sh);
            println!(
                "  {n} elements: u/L = {u_fe:.5} (error {eu:.2e}), w/L = {w_fe:.5} (error {ew:.2e}), \
                 {} Newton iterations",
                sol.iterations.iter().sum::<u32>()
            );
            if n == 20 {
                assert!(eu < 2e-3 && ew < 1e-3, "alpha = {alpha}, {n} elements");
            }
        }
    }
}

#[test]
fn midpoint_conserves_energy_of_large_free_vibration() {
    // First-mode velocity shape with a tip speed that swings the tip by ~0.3 L.
    let bl = 1.875_104_068_7;
    let omega = bl * bl * (EI / (RHO_A * L.powi(4))).sqrt();
    let scale = 0.3 * L * omega / mode_shape(bl, L)[0];
    let model = cantilever(2, 8, 1e4 * EI, [0.0; 3], [0.0; 3], &|x| {
        let p = mode_shape(bl, x);
        ([0.0, scale * p[0], 0.0], [0.0, scale * p[1], 0.0])
    });
    let rec = run_model(model, 2e-4, 0.08);
    let e0 = rec.energy[0].total;
    let (mut drift, mut peak) = (0.0_f64, 0.0_f64);
    for (e, u) in rec.energy.iter().zip(&rec.u) {
        drift = drift.max((e.total - e0).abs() / e0);
        peak = peak.max(-u[8 * 4 + 1]);
    }
    println!("large free vibration: tip swing {peak:.3} L, relative energy drift {drift:.2e}");
    assert!(peak > 0.2, "the vibration should be large ({peak})");
    assert!(drift < 1e-8, "energy drift {drift:.3e}");
}

#[test]
fn beam_attached_to_rigid_body_by_revolute_and_slope() {
    // A rigid crank pinned to the ground, a 4-element beam welded to its tip
    // (revolute + slope joint to the body angle), a ground distance joint and
    // a point-on-circle check that the other joints accept beam nodes.
    let text = r#"
dimension = 2
gravity = [0.0, -9.81]

[[body]]
id = "crank"
position = [0.25, 0.0]
mass = 1.0
inertia = 0.02

[[node]]
id = "a"
position = [0.5, 0.0]
slope = [1.0, 0.0]
[[node]]
id = "b"
position = [0.75, 0.0]
slope = [1.0, 0.0]
[[node]]
id = "c"
position = [1.0, 0.0]
slope = [1.0, 0.0]

[[element]]
id = "e1"
type = "beam"
nodes = ["a", "b"]
ea = 1e5
ei = 10.0
rho_a = 0.5
[[element]]
id = "e2"
type = "beam"
nodes = ["b", "c"]
ea = 1e5
ei = 10.0
rho_a = 0.5

[[joint]]
id = "pivot"
type = "ground_pin"
point = { body = "crank", offset = [-0.25, 0.0] }
[[joint]]
id = "weld_pos"
type = "revolute"
a = { body = "crank", offset = [0.25, 0.0] }
b = "a"
[[joint]]
id = "weld_slope"
type = "slope"
node = "a"
body = "crank"
[[joint]]
id = "tie"
type = "point_on_circle"
point = "c"
center = [1.0, 0.5]

[integrator]
scheme = "midpoint"
dt = 1e-3
t_end = 0.2
"#;
    let file = load_model_str(text, "weld.toml").expect("model with beam-node joints loads");
    assert_eq!(file.model.n_constraints(), 2 + 2 + 1 + 1);
    let rec = run_model(file.model, 1e-3, 0.2);
    let last = rec.constraints.last().unwrap();
    let e0 = rec.energy[0].total;
    let drift = max_energy_change(&rec.energy);
    println!(
        "welded beam: |Phi| {:.1e}, energy drift {drift:.1e}",
        last.position
    );
    assert!(last.position < 1e-8);
    assert!(drift < 1e-8 * (1.0 + e0.abs()));
}

#[test]
fn beam_model_errors_name_the_field() {
    let base = "dimension = 2\n[[node]]\nid = \"a\"\nposition = [0.0, 0.0]\nslope = [1.0, 0.0]\n";
    let cases = [
        (
            "[[node]]\nid = \"b\"\nposition = [1.0, 0.0]\n[[element]]\nid = \"e\"\ntype = \"beam\"\nnodes = [\"a\", \"b\"]\nea = 1.0\nei = 1.0\n",
            "has no slope",
        ),
        (
            "[[node]]\nid = \"b\"\nposition = [1.0, 0.0]\nslope = [1.0, 0.0]\n[[element]]\nid = \"e\"\ntype = \"beam\"\nnodes = [\"a\", \"b\"]\nea = 1.0\nei = -1.0\n",
            "bending stiffness EI must be positive",
        ),
        (
            "[[node]]\nid = \"b\"\nposition = [1.0, 0.0]\nslope = [0.0, 0.0]\n",
            "slope vector must not be zero",
        ),
        (
            "[[node]]\nid = \"b\"\nposition = [1.0, 0.0]\n[[joint]]\nid = \"s\"\ntype = \"slope\"\nnode = \"b\"\n",
            "not a beam node",
        ),
    ];
    assert_load_errors(base, &cases);
}

#[test]
fn element_cost() {
    let mut rng = Rng(9);
    let el = Beam2d::new(0.1, EA, EI, RHO_A, None);
    let configs: Vec<Vec<f64>> = (0..64).map(|_| beam_config(&mut rng, 0.1, 0.01)).collect();
    let mut f = [0.0; 8];
    let mut k = [0.0; 64];
    let reps = 20_000;
    let mut sink = 0.0;
    let start = std::time::Instant::now();
    for r in 0..reps {
        el.force(&configs[r % 64], &mut f, Some(&mut k));
        sink += k[r % 64] + f[r % 8];
    }
    let ns = start.elapsed().as_nanos() as f64 / reps as f64;
    println!("beam force + tangent: {ns:.0} ns per element (checksum {sink:.3e})");
    assert!(sink.is_finite());
}

#[test]
#[cfg(feature = "cli")]
fn static_command_prints_the_tip_deflection() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_flexmb"))
        .args([
            "static",
            concat!(env!("CARGO_MANIFEST_DIR"), "/models/cantilever.toml"),
        ])
        .args(["--node", "n10", "--steps", "2"])
        .output()
        .expect("flexmb runs");
    common::scratch::assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("n10.y"))
        .expect("n10.y printed");
    let dy: f64 = line.split_whitespace().last().unwrap().parse().unwrap();
    let exact = L.powi(3) / (3.0 * EI);
    assert!((-dy - exact).abs() < 1e-3 * exact, "{line}");
    assert!(!text.contains("n9."), "--node filters the output");
}
