//! Spatial geometrically exact Euler–Bernoulli beam without torsion
//! (`Beam3d`, absolute nodal coordinates r, r' in R^3), the 3-D slope joint and
//! 3-D beam models:
//!
//! * element derivatives by 4th-order central differences: force = dV/du,
//!   tangent = dP/du (symmetric) for a straight and an initially curved
//!   (unsigned curvature) reference; the midpoint discrete gradient
//!   (`du.P_d = V1 - V0` to round-off) and the EOM-level derivatives;
//! * frame invariance under random 3-D rotations (energy invariant, force
//!   rotates, a rigidly moved straight beam is force free); the mass matrix is
//!   the planar Hermite mass in every direction;
//! * the 3-D slope joint (clamp): Phi = 0 exactly for a parallel slope, B = dPhi/du;
//! * cantilever along x (10 elements) under small tip loads in y, in z and
//!   along a diagonal: tip deflections within 0.1 % of P L^3 / (3 EI); self
//!   weight along z within 0.1 % of q L^4 / (8 EI); the same model from a
//!   3-D model file;
//! * the planar problem embedded in 3-D (motion in the x-y plane) equals the
//!   2-D element's result to 1e-10 (static elastica and a dynamic run);
//! * large out-of-plane deflection (dead tip load along z and along a diagonal)
//!   against the elastica of Mattiasson (1981), Int. J. Numer. Meth. Eng. 17,
//!   145–153, Table 1 (the planar reference of tests/beam.rs);
//! * midpoint energy conservation of a large non-planar free vibration.

mod common;

use common::cantilever::{
    add_beam_line, add_tip_load, at_rest, cantilever, dof, mode_shape, run_model, solve, EA, EI, L,
    RHO_A,
};
use common::fd::{check_eom_force, check_force_and_tangent, fd_jacobian_h, Rng};
use common::{assert_load_errors, max_abs, rel_err};
use flexmb::element::{Beam2d, Beam3d, Element};
use flexmb::input::load_model_str;
use flexmb::joint::{Joint, Slope, SlopeTarget};
use flexmb::model::{Body3dSpec, Joint3d, Model, ModelBuilder, PointRef};

/// Straight beam from the origin to (l, 0, 0) with unit slopes, perturbed by `amp`.
fn beam_config(rng: &mut Rng, l: f64, amp: f64) -> Vec<f64> {
    let base = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, l, 0.0, 0.0, 1.0, 0.0, 0.0];
    base.iter().map(|b| b + rng.range(-amp, amp)).collect()
}

fn elements(rng: &mut Rng) -> Vec<(&'static str, Beam3d)> {
    let l = 0.7;
    let curved = beam_config(rng, l, 0.2);
    vec![
        ("straight", Beam3d::new(l, 50.0, 2.0, 1.3, None)),
        ("curved", Beam3d::new(l, 50.0, 2.0, 1.3, Some(&curved))),
    ]
}

#[test]
fn force_and_tangent_match_finite_differences() {
    let mut rng = Rng(17);
    for (name, el) in elements(&mut rng) {
        assert_eq!(el.ndof(), 12);
        for trial in 0..5 {
            let u = beam_config(&mut rng, 0.7, 0.3);
            check_force_and_tangent(name, trial, &el, &u);
        }
    }
}

#[test]
fn eom_force_discrete_gradient_and_level_derivatives() {
    let mut rng = Rng(19);
    for (name, el) in elements(&mut rng) {
        let u_n = beam_config(&mut rng, 0.7, 0.3);
        let v_n = rng.vec(12, -1.0, 1.0);
        let a_n = rng.vec(12, -1.0, 1.0);
        let u1 = beam_config(&mut rng, 0.7, 0.3);
        check_eom_force(name, &el, [&u_n, &v_n, &a_n, &u1]);
    }
}

/// A random rotation matrix (Rodrigues' formula, random axis and angle).
fn random_rotation(rng: &mut Rng) -> [[f64; 3]; 3] {
    let mut n = [
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
    ];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    n.iter_mut().for_each(|x| *x /= len);
    let (s, c) = rng.range(-3.0, 3.0).sin_cos();
    let mut r = [[0.0; 3]; 3];
    let k = [[0.0, -n[2], n[1]], [n[2], 0.0, -n[0]], [-n[1], n[0], 0.0]];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = c * if i == j { 1.0 } else { 0.0 } + s * k[i][j] + (1.0 - c) * n[i] * n[j];
        }
    }
    r
}

/// Rotates the four 3-vectors of a local vector; shifts the positions by `t`.
fn transform(r: &[[f64; 3]; 3], u: &[f64], t: [f64; 3]) -> Vec<f64> {
    let mut out = vec![0.0; 12];
    for v in 0..4 {
        for i in 0..3 {
            out[3 * v + i] = (0..3).map(|j| r[i][j] * u[3 * v + j]).sum::<f64>()
                + if v % 2 == 0 { t[i] } else { 0.0 };
        }
    }
    out
}

#[test]
fn rigid_motions_cost_no_energy() {
    let mut rng = Rng(23);
    let l = 0.7;
    for (name, el) in elements(&mut rng) {
        let deformed = beam_config(&mut rng, l, 0.2);
        let mut f_def = [0.0; 12];
        el.force(&deformed, &mut f_def, None);
        let e_def = el.potential(&deformed);
        for _ in 0..5 {
            let r = random_rotation(&mut rng);
            let t = [
                rng.range(-2.0, 2.0),
                rng.range(-2.0, 2.0),
                rng.range(-2.0, 2.0),
            ];
            if name == "straight" {
                let straight = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, l, 0.0, 0.0, 1.0, 0.0, 0.0];
                let moved = transform(&r, &straight, t);
                let mut f = [0.0; 12];
                el.force(&moved, &mut f, None);
                assert!(
                    max_abs(&f) < 1e-12,
                    "straight beam moved: force {:.2e}",
                    max_abs(&f)
                );
                assert!(el.potential(&moved).abs() < 1e-14);
            }
            let moved = transform(&r, &deformed, t);
            let rel = (el.potential(&moved) - e_def).abs() / e_def;
            assert!(rel < 1e-12, "{name}: energy not frame invariant: {rel:.2e}");
            let mut f_moved = [0.0; 12];
            el.force(&moved, &mut f_moved, None);
            let f_rot = transform(&r, &f_def, [0.0; 3]);
            let ef = rel_err(&f_moved, &f_rot);
            assert!(
                ef < 1e-11,
                "{name}: force does not rotate with the frame: {ef:.2e}"
            );
        }
    }
}

#[test]
fn mass_matrix_is_the_planar_hermite_mass_per_direction() {
    let (l, rho_a) = (0.7, 1.3);
    let (m3, m2) = {
        let mut m3 = [0.0; 144];
        let mut m2 = [0.0; 64];
        assert!(Beam3d::new(l, 50.0, 2.0, rho_a, None).mass(&mut m3));
        assert!(Beam2d::new(l, 50.0, 2.0, rho_a, None).mass(&mut m2));
        (m3, m2)
    };
    for k in 0..4 {
        for l2 in 0..4 {
            for a in 0..3 {
                for b in 0..3 {
                    let v = m3[(3 * k + a) * 12 + 3 * l2 + b];
                    let want = if a == b {
                        m2[(2 * k) * 8 + 2 * l2]
                    } else {
                        0.0
                    };
                    assert_eq!(v, want, "M[{k}{a}][{l2}{b}]");
                }
            }
        }
    }
    // Rigid translation along z: kinetic mass rho A L.
    let t: Vec<f64> = (0..12)
        .map(|i| if i % 6 == 2 { 1.0 } else { 0.0 })
        .collect();
    let mt: f64 = (0..12)
        .map(|i| t[i] * (0..12).map(|j| m3[i * 12 + j] * t[j]).sum::<f64>())
        .sum();
    assert!((mt - rho_a * l).abs() < 1e-14);
}

#[test]
fn slope_joint_in_space() {
    let mut rng = Rng(29);
    for _ in 0..5 {
        let d = [
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
        ];
        let j = Slope::new(SlopeTarget::Ground3d(d));
        assert_eq!((j.rows(), j.ndof()), (2, 3));
        // Any multiple of d satisfies the constraint; B has rank 2 with d in its null space.
        let c = rng.range(0.5, 2.0);
        let s: Vec<f64> = d.iter().map(|x| c * x).collect();
        let mut phi = [0.0; 2];
        j.phi(&s, 0.0, &mut phi);
        assert!(max_abs(&phi) < 1e-15, "parallel slope: Phi = {phi:?}");
        let u = rng.vec(3, -1.5, 1.5);
        let mut b = [0.0; 6];
        j.jacobian(&u, 0.0, &mut b);
        let bfd = fd_jacobian_h(&u, 1e-3, 2, |x, out| j.phi(x, 0.0, out));
        assert!(rel_err(&b, &bfd) < 1e-9);
        let dot = |p: &[f64], q: &[f64]| p.iter().zip(q).map(|(x, y)| x * y).sum::<f64>();
        let dn = dot(&d, &d).sqrt();
        for r in 0..2 {
            assert!(dot(&b[3 * r..3 * r + 3], &d).abs() < 1e-15 * dn);
            assert!((dot(&b[3 * r..3 * r + 3], &b[3 * r..3 * r + 3]) - 1.0).abs() < 1e-15);
        }
        assert!(dot(&b[..3], &b[3..]).abs() < 1e-15);
        let mut h = [0.0; 9];
        j.add_curvature(&u, 0.0, &[0.3, -0.8], 1.0, &mut h);
        assert_eq!(h, [0.0; 9], "a ground slope constraint is linear");
    }
}

// ---------------------------------------------------------------------------
// Cantilever
// ---------------------------------------------------------------------------

/// Tip position (x, y, z) of node `n{n}`.
fn tip(m: &Model, u: &[f64], n: usize) -> [f64; 3] {
    [0, 1, 2].map(|a| u[dof(m, &format!("n{n}.{}", ["x", "y", "z"][a]))])
}

#[test]
fn cantilever_tip_loads_in_y_z_and_diagonal() {
    let p = 1.0;
    let exact = p * L.powi(3) / (3.0 * EI);
    let c = std::f64::consts::FRAC_1_SQRT_2;
    for (what, dir) in [
        ("y", [0.0, -1.0, 0.0]),
        ("z", [0.0, 0.0, -1.0]),
        ("diagonal", [0.0, c, -c]),
    ] {
        let m = cantilever(3, 10, EA, dir.map(|x| p * x), [0.0; 3], &at_rest);
        assert_eq!(m.n_constraints(), 3 + 2);
        let sol = solve(&m, 1);
        let t = tip(&m, &sol.u, 10);
        for a in 1..3 {
            let want = exact * dir[a];
            let err = (t[a] - want).abs() / exact;
            println!(
                "tip load {what}: deflection[{a}] {:.9e}, P L^3/(3 EI) {want:.9e}, error {err:.2e}",
                t[a]
            );
            assert!(err < 1e-3, "{what}: component {a}");
        }
    }
    // Self-weight along -z: q L^4 / (8 EI), q = rho A g (consistent gravity M g).
    let g = 9.81;
    let m = cantilever(3, 10, EA, [0.0; 3], [0.0, 0.0, -g], &at_rest);
    let sol = solve(&m, 1);
    let t = tip(&m, &sol.u, 10);
    let exact = RHO_A * g * L.powi(4) / (8.0 * EI);
    let err = (-t[2] - exact).abs() / exact;
    println!(
        "self-weight along z: {:.9e}, q L^4/(8 EI) {exact:.9e}, error {err:.2e}",
        -t[2]
    );
    assert!(err < 1e-3 && t[1].abs() < 1e-15);
}

#[test]
fn planar_problem_embedded_in_space_equals_the_planar_beam() {
    // Static elastica alpha = 5 (tip load in -y), 10 elements.
    let p = 5.0 * EI / (L * L);
    let ea = 1e6 * EI / (L * L);
    let m2 = cantilever(2, 10, ea, [0.0, -p, 0.0], [0.0; 3], &at_rest);
    let m3 = cantilever(3, 10, ea, [0.0, -p, 0.0], [0.0; 3], &at_rest);
    let (s2, s3) = (solve(&m2, 10), solve(&m3, 10));
    let mut diff = 0.0_f64;
    let mut off_plane = 0.0_f64;
    for (i, name) in m3.dofs.names().iter().enumerate() {
        if name.ends_with('z') {
            off_plane = off_plane.max(s3.u[i].abs());
        } else {
            diff = diff.max((s3.u[i] - s2.u[dof(&m2, name)]).abs());
        }
    }
    println!("static elastica: 3-D vs 2-D max difference {diff:.2e}, |z| max {off_plane:.1e}");
    assert!(diff < 1e-10 && off_plane == 0.0);

    // Large in-plane free vibration, 100 midpoint steps.
    let bl = 1.875_104_068_7;
    let omega = bl * bl * (EI / (RHO_A * L.powi(4))).sqrt();
    let scale = 0.3 * L * omega / mode_shape(bl, L)[0];
    let vel = |x: f64| {
        let p = mode_shape(bl, x);
        ([0.0, scale * p[0], 0.0], [0.0, scale * p[1], 0.0])
    };
    let m2 = cantilever(2, 8, 1e4 * EI, [0.0; 3], [0.0; 3], &vel);
    let m3 = cantilever(3, 8, 1e4 * EI, [0.0; 3], [0.0; 3], &vel);
    // For every 3-D DOF: the matching 2-D DOF, or None for z components.
    let map: Vec<Option<usize>> = m3
        .dofs
        .names()
        .iter()
        .map(|name| (!name.ends_with('z')).then(|| dof(&m2, name)))
        .collect();
    let tip_y = dof(&m3, "n8.y");
    let (r2, r3) = (run_model(m2, 2e-4, 0.02), run_model(m3, 2e-4, 0.02));
    let (mut diff, mut off_plane, mut swing) = (0.0_f64, 0.0_f64, 0.0_f64);
    for (u2, u3) in r2.u.iter().zip(&r3.u) {
        for (i, j) in map.iter().enumerate() {
            match j {
                Some(j) => diff = diff.max((u3[i] - u2[*j]).abs()),
                None => off_plane = off_plane.max(u3[i].abs()),
            }
        }
        swing = swing.max(u3[tip_y].abs());
    }
    println!(
        "dynamic: {} steps, tip swing {swing:.3} L, 3-D vs 2-D max difference {diff:.2e}, |z| max {off_plane:.1e}",
        r3.u.len() - 1
    );
    assert_eq!(r2.u.len(), r3.u.len());
    assert!(swing > 0.05, "the run should move ({swing})");
    assert!(diff < 1e-10 * swing && off_plane == 0.0);
}

#[test]
fn large_out_of_plane_deflection_matches_elastica() {
    // Mattiasson (1981), Table 1 (u/L, w/L) for a cantilever with a dead end
    // load; the same reference as the planar test in tests/beam.rs.
    let mattiasson = [
        (1.0, 0.05643, 0.30172),
        (5.0, 0.38763, 0.71379),
        (10.0, 0.55500, 0.81061),
    ];
    let c = std::f64::consts::FRAC_1_SQRT_2;
    let n = 20;
    let ea = 1e6 * EI / (L * L);
    for (alpha, u_ref, w_ref) in mattiasson {
        let p = alpha * EI / (L * L);
        let planar = {
            let m = cantilever(2, n, ea, [0.0, -p, 0.0], [0.0; 3], &at_rest);
            let s = solve(&m, 10);
            [
                s.u[dof(&m, &format!("n{n}.x"))],
                s.u[dof(&m, &format!("n{n}.y"))],
            ]
        };
        for (what, dir) in [("z", [0.0, 0.0, -1.0]), ("diagonal", [0.0, c, -c])] {
            let m = cantilever(3, n, ea, dir.map(|x| p * x), [0.0; 3], &at_rest);
            let sol = solve(&m, 10);
            let t = tip(&m, &sol.u, n);
            let w = t[1] * dir[1] + t[2] * dir[2];
            // Off the load plane (spanned by x and the load direction).
            let off = t[1] * dir[2] - t[2] * dir[1];
            let (u_fe, w_fe) = ((L - t[0]) / L, w / L);
            let (eu, ew) = ((u_fe - u_ref).abs() / u_ref, (w_fe - w_ref).abs() / w_ref);
            let d2 = ((t[0] - planar[0]).abs()).max((w + planar[1]).abs());
            println!(
                "alpha = {alpha}, load along {what}: u/L = {u_fe:.5} (error {eu:.2e}), w/L = {w_fe:.5} \
                 (error {ew:.2e}), off-plane {off:.1e}, vs planar FE {d2:.1e}"
            );
            assert!(eu < 2e-3 && ew < 1e-3, "alpha = {alpha}, {what}");
            assert!(off.abs() < 1e-12 && d2 < 1e-10, "alpha = {alpha}, {what}");
        }
    }
}

#[test]
fn midpoint_conserves_energy_of_large_spatial_free_vibration() {
    // First mode in z and second mode in y: a non-planar motion.
    let (b1, b2) = (1.875_104_068_7, 4.694_091_132_97);
    let w1 = b1 * b1 * (EI / (RHO_A * L.powi(4))).sqrt();
    let w2 = b2 * b2 * (EI / (RHO_A * L.powi(4))).sqrt();
    let s1 = 0.3 * L * w1 / mode_shape(b1, L)[0];
    let s2 = 0.02 * L * w2 / mode_shape(b2, L)[0];
    let vel = |x: f64| {
        let (p1, p2) = (mode_shape(b1, x), mode_shape(b2, x));
        ([0.0, s2 * p2[0], s1 * p1[0]], [0.0, s2 * p2[1], s1 * p1[1]])
    };
    let model = cantilever(3, 8, 1e4 * EI, [0.0; 3], [0.0; 3], &vel);
    let (iy, iz) = (dof(&model, "n8.y"), dof(&model, "n8.z"));
    let rec = run_model(model, 2e-4, 0.08);
    let e0 = rec.energy[0].total;
    let (mut drift, mut peak_y, mut peak_z) = (0.0_f64, 0.0_f64, 0.0_f64);
    for (e, u) in rec.energy.iter().zip(&rec.u) {
        drift = drift.max((e.total - e0).abs() / e0);
        peak_y = peak_y.max(u[iy].abs());
        peak_z = peak_z.max(u[iz].abs());
    }
    println!(
        "spatial free vibration: tip swing y {peak_y:.3} L, z {peak_z:.3} L, relative energy drift {drift:.2e}"
    );
    assert!(
        peak_z > 0.2 && peak_y > 0.01,
        "the vibration should be large and non-planar"
    );
    assert!(drift < 1e-8, "energy drift {drift:.3e}");
}

#[test]
fn model_file_in_3d() {
    // A 4-element cantilever along x: tip load in -y, gravity in -z.
    let mut text = String::from("dimension = 3\ngravity = [0.0, 0.0, -9.81]\n");
    for i in 0..=4 {
        text += &format!(
            "[[node]]\nid = \"n{i}\"\nposition = [{}, 0.0, 0.0]\nslope = [1.0, 0.0, 0.0]\n",
            0.25 * i as f64
        );
    }
    for i in 0..4 {
        text += &format!(
            "[[element]]\nid = \"e{i}\"\ntype = \"beam\"\nnodes = [\"n{i}\", \"n{}\"]\n\
             ea = {EA:e}\nei = {EI:e}\nrho_a = {RHO_A:e}\n",
            i + 1
        );
    }
    text += "[[joint]]\nid = \"root\"\ntype = \"ground_pin\"\npoint = \"n0\"\n\
             [[joint]]\nid = \"root_slope\"\ntype = \"slope\"\nnode = \"n0\"\n\
             direction = [1.0, 0.0, 0.0]\n\
             [[load]]\nid = \"tip\"\ntype = \"point_force\"\npoint = \"n4\"\nforce = [0.0, -1.0, 0.0]\n";
    let file = load_model_str(&text, "cantilever3d.toml").expect("3-D beam model loads");
    let m = &file.model;
    assert_eq!(
        m.dofs.names()[..6],
        ["n0.x", "n0.y", "n0.z", "n0.dx", "n0.dy", "n0.dz"]
    );
    let sol = solve(m, 1);
    let t = tip(m, &sol.u, 4);
    let ey = (-t[1] - L.powi(3) / (3.0 * EI)) / (L.powi(3) / (3.0 * EI));
    let q = RHO_A * 9.81;
    let ez = (-t[2] - q * L.powi(4) / (8.0 * EI)) / (q * L.powi(4) / (8.0 * EI));
    println!("model file, 4 elements: tip load error {ey:.2e}, self-weight error {ez:.2e}");
    assert!(ey.abs() < 1e-3 && ez.abs() < 1e-3);

    let base = "dimension = 3\n[[node]]\nid = \"a\"\nposition = [0.0, 0.0, 0.0]\nslope = [1.0, 0.0, 0.0]\n";
    let cases = [
        (
            "[[node]]\nid = \"b\"\nposition = [1.0, 0.0, 0.0]\nslope = [1.0, 0.0]\n",
            "expected 3 components",
        ),
        (
            "[[joint]]\nid = \"s\"\ntype = \"slope\"\nnode = \"a\"\ndirection = [1.0, 0.0]\n",
            "expected 3 components",
        ),
        (
            "[[joint]]\nid = \"s\"\ntype = \"slope\"\nnode = \"a\"\ndirection = [0.0, 0.0, 0.0]\n",
            "direction must not be zero",
        ),
        (
            "[[node]]\nid = \"b\"\nposition = [1.0, 0.0, 0.0]\n[[joint]]\nid = \"s\"\ntype = \"slope\"\nnode = \"a\"\nbody = \"b\"\n",
            "is not a rigid body of this 3-D model",
        ),
        (
            "[[node]]\nid = \"b\"\nposition = [1.0, 0.0, 0.0]\n[[element]]\nid = \"e\"\ntype = \"beam\"\nnodes = [\"a\", \"b\"]\nea = 1.0\nei = 1.0\n",
            "has no slope: beam nodes need `slope` (3 components)",
        ),
    ];
    assert_load_errors(base, &cases);
}

/// A beam end attached to a 3-D rigid body (spherical joint + slope joint to
/// a body-fixed direction), the body welded to the ground: the same static
/// tip deflection as the ground clamp (the beam has no torsion).
#[test]
fn beam_attached_to_a_welded_3d_body_equals_the_clamp() {
    let n = 6;
    let load = [0.0, -40.0, 25.0];
    let clamped = cantilever(3, n, EA, load, [0.0; 3], &at_rest);
    let reference = tip(&clamped, &solve(&clamped, 1).u, n);

    let mut b = ModelBuilder::new(3).unwrap();
    let p = [0.9, 0.3, -0.2, 0.2449489742783178];
    let hub = Body3dSpec {
        position: [-0.2, 0.1, 0.0],
        orientation: p,
        attitude: flexmb::kinematics::attitude::Attitude::EulerParameters,
        kinetic: Default::default(),
        mass: 1.0,
        inertia: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        velocity: [0.0; 3],
        angular_velocity: [0.0; 3],
    };
    b.body3d("hub", &hub).unwrap();
    b.joint3d(
        "weld",
        &PointRef::Ground([-0.2, 0.1, 0.0]),
        &PointRef::Entity("hub".into()),
        Joint3d::Fixed,
    )
    .unwrap();
    add_beam_line(&mut b, 3, n, EA, &at_rest);
    // The hub point at the beam root, in body coordinates: R(p)^T (0.2, -0.1, 0).
    let offset = flexmb::kinematics::rotation::rotate_back(&p, &[0.2, -0.1, 0.0]);
    let root = PointRef::Body {
        body: "hub".into(),
        offset,
    };
    b.joint3d(
        "ball",
        &root,
        &PointRef::Entity("n0".into()),
        Joint3d::Spherical,
    )
    .unwrap();
    b.slope("attach", "n0", Some("hub"), None).unwrap();
    add_tip_load(&mut b, n, load);
    let m = b.build().unwrap();
    let attached = tip(&m, &solve(&m, 1).u, n);
    let d = max_abs(&[0, 1, 2].map(|a| attached[a] - reference[a]));
    println!("beam on a welded 3-D body vs clamp: tip difference {d:.2e}, tip {attached:?}");
    assert!(d < 1e-10, "{attached:?} vs {reference:?}");
    assert!(
        reference[1] < -1e-3 && reference[2] > 1e-3,
        "the load bends the beam"
    );
}
