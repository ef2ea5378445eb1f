//! The linearized system and its modes (src/modes, `flexmb modes`): the
//! tangents against finite differences of the residual, small oscillations
//! of pendulums against their closed forms, a clamped-free beam against
//! Euler–Bernoulli theory, rigid-body modes of a free body, the sparse
//! shift-invert path against the dense one, and the errors.

use flexmb::assembly::{Assembler, Mechanics};
use flexmb::input::load_model_file;
use flexmb::model::{BeamSection, Body2d, DistanceKind, Model, ModelBuilder, PointRef, SliderKind};
use flexmb::modes::{
    dynamic_residual, linearize, modes, LinearizeAt, LinearizedSystem, Method, ModeOptions,
    ModesError,
};
use flexmb::statics::StaticOptions;

mod common;

fn model_file(name: &str) -> Model {
    load_model_file(common::model_path(name))
        .expect("shipped model")
        .model
}

fn at_static() -> LinearizeAt {
    LinearizeAt::Static(StaticOptions::default())
}

fn opts(count: usize) -> ModeOptions {
    ModeOptions {
        count,
        ..ModeOptions::default()
    }
}

/// max |a_ij - b_ij| over a dense n x n comparison of a sprs matrix with
/// columns given by `fd(j)`, relative to max(1, max |a|).
fn max_rel_diff(a: &sprs::CsMat<f64>, fd: impl Fn(usize) -> Vec<f64>) -> f64 {
    let dense = a.to_dense();
    let scale = dense.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
    let mut worst = 0.0_f64;
    for j in 0..a.cols() {
        let col = fd(j);
        for (i, c) in col.iter().enumerate() {
            worst = worst.max((dense[[i, j]] - c).abs());
        }
    }
    worst / scale
}

/// Central differences of the residual in u, v and a against K, D and M,
/// and of Phi against B, at the linearization state `s`.
fn check_tangents(model: &Model, s: &LinearizedSystem, tol: f64) {
    let n = s.n_dofs();
    let h = 1e-6;
    let r = |u: &[f64], v: &[f64], a: &[f64]| dynamic_residual(model, s.t, u, v, a, &s.lambda);
    let column = |which: usize, j: usize| -> Vec<f64> {
        let mut x = [s.u.clone(), s.v.clone(), s.a.clone()];
        let x0 = x[which][j];
        let step = h * x0.abs().max(1.0);
        x[which][j] = x0 + step;
        let plus = r(&x[0], &x[1], &x[2]);
        x[which][j] = x0 - step;
        let minus = r(&x[0], &x[1], &x[2]);
        plus.iter()
            .zip(&minus)
            .map(|(p, m)| (p - m) / (2.0 * step))
            .collect()
    };
    let k = max_rel_diff(&s.stiffness(), |j| column(0, j));
    let d = max_rel_diff(&s.damping(), |j| column(1, j));
    let m = max_rel_diff(&s.mass(), |j| column(2, j));
    let asm = Assembler::new(model);
    let mech = Mechanics::new(model, &asm);
    let nc = s.n_constraints();
    let b_dense = s.jacobian().to_dense();
    let b_scale = b_dense.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
    let mut b = 0.0_f64;
    for j in 0..n {
        let mut u = s.u.clone();
        let step = h * u[j].abs().max(1.0);
        let (mut p, mut q) = (vec![0.0; nc], vec![0.0; nc]);
        u[j] += step;
        mech.constraint_values(&u, s.t, &mut p);
        u[j] -= 2.0 * step;
        mech.constraint_values(&u, s.t, &mut q);
        for i in 0..nc {
            b = b.max((b_dense[[i, j]] - (p[i] - q[i]) / (2.0 * step)).abs() / b_scale);
        }
    }
    assert!(
        k < tol && d < tol && m < tol && b < tol,
        "finite differences: K {k:.2e}, D {d:.2e}, M {m:.2e}, B {b:.2e} (tol {tol:.0e})"
    );
}

#[test]
fn tangents_match_finite_differences_of_the_constrained_residual() {
    // Planar bodies with pins, a prismatic guide, a spring-damper
    // and a torque; a spinning 3-D top in Euler parameters
    // (configuration-dependent inertia, gyroscopic D); beams with slope
    // joints. Each about its
    // initial state with the consistent acceleration and multipliers.
    for (name, tol) in [
        // Residual entries of order 1e2 against masses of order 1: the
        // differences' round-off (eps |r| / h) is of order 1e-8 here.
        ("slider_crank_tsda", 1e-6),
        ("heavy_top", 1e-8),
        ("double_pendulum", 1e-8),
        ("slider_crank_flexible", 1e-8),
    ] {
        let model = model_file(name);
        let s = linearize(&model, &LinearizeAt::Initial).expect(name);
        assert!(
            s.lambda.iter().any(|l| *l != 0.0),
            "{name}: a state with constraint forces (the geometric stiffness is tested)"
        );
        check_tangents(&model, &s, tol);
    }
}

/// Point mass m hanging at length l below a ground point (distance joint).
fn pendulum(m: f64, l: f64, g: f64, quadratic: bool) -> Model {
    let mut b = ModelBuilder::new(2).unwrap();
    b.gravity(&[0.0, -g]).unwrap();
    b.node("bob", &[0.0, -l], None, m).unwrap();
    b.distance(
        "rod",
        &PointRef::ground([0.0, 0.0]),
        &PointRef::entity("bob"),
        Some(l),
        if quadratic {
            DistanceKind::Quadratic
        } else {
            DistanceKind::Length
        },
    )
    .unwrap();
    b.build().unwrap()
}

#[test]
fn pendulum_frequency_is_sqrt_g_over_l() {
    let (m, l, g) = (3.0, 2.5, 9.81);
    for quadratic in [true, false] {
        let model = pendulum(m, l, g, quadratic);
        for at in [LinearizeAt::Initial, at_static()] {
            let s = linearize(&model, &at).unwrap();
            let r = modes(&s, &opts(1)).unwrap();
            let w = r.modes[0].omega;
            assert!(
                (w / (g / l).sqrt() - 1.0).abs() < 1e-8,
                "quadratic {quadratic}, {}: w = {w}, sqrt(g/l) = {}",
                at.name(),
                (g / l).sqrt()
            );
            assert_eq!(r.manifold_dofs, Some(1));
        }
    }
    // The shipped pendulum, displaced by 0.3 rad from the vertical (the
    // horizontal rod of its initial state carries no tension at rest, so
    // Newton would start without stiffness): its static equilibrium is
    // the hanging one.
    let mut model = model_file("pendulum");
    model.u0 = vec![0.3_f64.sin(), -0.3_f64.cos()];
    let s = linearize(&model, &at_static()).unwrap();
    assert!((s.u[1] + 1.0).abs() < 1e-10, "hanging: y = {}", s.u[1]);
    let w = modes(&s, &opts(1)).unwrap().modes[0].omega;
    assert!((w / 9.81_f64.sqrt() - 1.0).abs() < 1e-8, "w = {w}");
}

#[test]
fn compound_pendulum_on_a_pin() {
    // A planar body (m, J about its centre) pinned at distance d above
    // its centre: w^2 = m g d / (J + m d^2).
    let (m, j, d, g) = (2.0, 0.3, 0.7, 9.81);
    let mut b = ModelBuilder::new(2).unwrap();
    b.gravity(&[0.0, -g]).unwrap();
    b.body2d("link", Body2d::new(m, j).at(0.0, -d, 0.0))
        .unwrap();
    b.ground_pin("pin", &PointRef::on("link", [0.0, d]), &[0.0, 0.0])
        .unwrap();
    let model = b.build().unwrap();
    let s = linearize(&model, &at_static()).unwrap();
    let w = modes(&s, &opts(1)).unwrap().modes[0].omega;
    let exact = (m * g * d / (j + m * d * d)).sqrt();
    assert!((w / exact - 1.0).abs() < 1e-8, "w = {w}, exact {exact}");
}

/// The double pendulum's two small-oscillation w^2 (point masses m1, m2 on
/// massless links l1, l2): `m1 l1 l2 w^4 - (m1 + m2) g (l1 + l2) w^2 +
/// (m1 + m2) g^2 = 0`, from det(K - w^2 M) with M = [(m1+m2) l1^2, m2 l1
/// l2; m2 l1 l2, m2 l2^2], K = diag((m1+m2) g l1, m2 g l2).
fn double_pendulum_w2(m1: f64, m2: f64, l1: f64, l2: f64, g: f64) -> [f64; 2] {
    let c = g * (m1 + m2) / (2.0 * m1 * l1 * l2);
    let root = ((l1 + l2).powi(2) - 4.0 * m1 * l1 * l2 / (m1 + m2)).sqrt();
    [c * ((l1 + l2) - root), c * ((l1 + l2) + root)]
}

#[test]
fn double_pendulum_frequencies_match_the_closed_form() {
    let (m1, m2, l1, l2, g) = (1.5, 0.7, 1.2, 0.8, 9.81);
    let exact = double_pendulum_w2(m1, m2, l1, l2, g);
    // Two variants: point masses on distance joints; planar bodies with
    // zero rotational inertia on pins (as models/double_pendulum.toml),
    // whose mass matrix is singular off the constraint manifold.
    let mut b = ModelBuilder::new(2).unwrap();
    b.gravity(&[0.0, -g]).unwrap();
    b.node("m1", &[0.0, -l1], None, m1).unwrap();
    b.node("m2", &[0.0, -l1 - l2], None, m2).unwrap();
    let (p1, p2) = (PointRef::entity("m1"), PointRef::entity("m2"));
    b.distance(
        "rod1",
        &PointRef::ground([0.0, 0.0]),
        &p1,
        None,
        DistanceKind::Quadratic,
    )
    .unwrap();
    b.distance("rod2", &p1, &p2, None, DistanceKind::Length)
        .unwrap();
    let nodes = b.build().unwrap();
    let mut b = ModelBuilder::new(2).unwrap();
    b.gravity(&[0.0, -g]).unwrap();
    b.body2d("bar1", Body2d::new(m1, 0.0).at(0.0, -l1, 0.0))
        .unwrap();
    b.body2d("bar2", Body2d::new(m2, 0.0).at(0.0, -l1 - l2, 0.0))
        .unwrap();
    b.ground_pin("pin1", &PointRef::on("bar1", [0.0, l1]), &[0.0, 0.0])
        .unwrap();
    b.revolute(
        "pin2",
        &PointRef::on("bar1", [0.0, 0.0]),
        &PointRef::on("bar2", [0.0, l2]),
    )
    .unwrap();
    let bodies = b.build().unwrap();
    for (label, model) in [("nodes", &nodes), ("bodies", &bodies)] {
        for dense_limit in [1500, 0] {
            let s = linearize(model, &at_static()).unwrap();
            let o = ModeOptions {
                count: 2,
                dense_limit,
                shift: None,
            };
            let r = modes(&s, &o).unwrap();
            for (mode, w2) in r.modes.iter().zip(exact) {
                assert!(
                    (mode.eigenvalue / w2 - 1.0).abs() < 1e-8,
                    "{label}, {:?}: w^2 = {}, exact {w2}",
                    r.method,
                    mode.eigenvalue
                );
            }
        }
    }
}

/// A beam of `elements` planar Euler–Bernoulli elements along x, length
/// `len`, clamped at x = 0 (`clamped`) or free.
fn beam(elements: usize, len: f64, ei: f64, rho_a: f64, clamped: bool) -> Model {
    let mut b = ModelBuilder::new(2).unwrap();
    for i in 0..=elements {
        let x = len * i as f64 / elements as f64;
        b.beam_node(&format!("n{i}"), &[x, 0.0], &[1.0, 0.0], None, None, 0.0)
            .unwrap();
    }
    for i in 0..elements {
        let (a, c) = (format!("n{i}"), format!("n{}", i + 1));
        b.beam(
            &format!("e{i}"),
            &a,
            &c,
            &BeamSection {
                ea: 1e4 * ei,
                ei,
                rho_a,
            },
            None,
        )
        .unwrap();
    }
    if clamped {
        b.ground_pin("root", &PointRef::entity("n0"), &[0.0, 0.0])
            .unwrap();
        b.slope("clamp", "n0", None, None).unwrap();
    }
    b.build().unwrap()
}

/// Bending frequencies `(beta_n L)^2 sqrt(EI / (rho A L^4))`.
fn bending(beta_l: &[f64], len: f64, ei: f64, rho_a: f64) -> Vec<f64> {
    beta_l
        .iter()
        .map(|b| b * b * (ei / (rho_a * len.powi(4))).sqrt())
        .collect()
}

#[test]
fn clamped_free_beam_converges_to_euler_bernoulli() {
    // EA = 1e4 EI: the first axial mode (pi/2 sqrt(EA / rho A) / L = 157
    // sqrt(EI / rho A)) lies above the third bending mode (61.7 sqrt(EI / rho A)).
    let (len, ei, rho_a) = (1.0, 175.0, 0.785);
    let exact = bending(&[1.875_104_07, 4.694_091_13, 7.854_757_44], len, ei, rho_a);
    let mut errors = vec![];
    for elements in [2, 4, 8] {
        let model = beam(elements, len, ei, rho_a, true);
        let s = linearize(&model, &LinearizeAt::Initial).unwrap();
        let r = modes(&s, &opts(3)).unwrap();
        let e: Vec<f64> = r
            .modes
            .iter()
            .zip(&exact)
            .map(|(m, w)| (m.omega / w - 1.0).abs())
            .collect();
        errors.push(e);
    }
    // 8 elements: within 0.5 % (the docs' mesh); the error falls with the mesh.
    for (k, e) in errors[2].iter().enumerate() {
        assert!(*e < 5e-3, "8 elements, mode {}: error {e:.3e}", k + 1);
    }
    for k in 0..3 {
        assert!(
            errors[2][k] < errors[1][k] && errors[1][k] <= errors[0][k],
            "mode {}: errors {:?}",
            k + 1,
            errors.iter().map(|e| e[k]).collect::<Vec<_>>()
        );
    }
    // The sparse path agrees with the dense one.
    let model = beam(8, len, ei, rho_a, true);
    let s = linearize(&model, &LinearizeAt::Initial).unwrap();
    let dense = modes(&s, &opts(3)).unwrap();
    let sparse = modes(
        &s,
        &ModeOptions {
            count: 3,
            dense_limit: 0,
            shift: None,
        },
    )
    .unwrap();
    assert!(matches!(sparse.method, Method::ShiftInvert { .. }));
    for (a, b) in dense.modes.iter().zip(&sparse.modes) {
        assert!((a.eigenvalue / b.eigenvalue - 1.0).abs() < 1e-9);
    }
}

#[test]
fn pinned_free_beam_by_shift_invert() {
    // The hanging beam generator (L = 10, EI = 1e-3, rho A = 0.1, pinned at
    // x = 0) at 100 elements, 404 DOFs, on the sparse path: one rigid
    // rotation at ~0, then the pinned-free frequencies beta_n L = 3.9266,
    // 7.0686, 10.2102 (tan(beta L) = tanh(beta L)).
    let model = flexmb::model::hanging_beam(100).unwrap();
    let s = linearize(&model, &LinearizeAt::Initial).unwrap();
    let o = ModeOptions {
        count: 4,
        dense_limit: 0,
        shift: None,
    };
    let r = modes(&s, &o).unwrap();
    assert!(matches!(r.method, Method::ShiftInvert { .. }));
    let exact = bending(
        &[3.926_602_31, 7.068_582_75, 10.210_176_12],
        10.0,
        1e-3,
        0.1,
    );
    assert!(
        r.modes[0].omega.abs() < 1e-4 * exact[0],
        "{}",
        r.modes[0].omega
    );
    for (m, w) in r.modes[1..].iter().zip(&exact) {
        assert!(
            (m.omega / w - 1.0).abs() < 1e-4,
            "w = {}, exact {w}",
            m.omega
        );
    }
    // A shift at the rigid mode's eigenvalue 0 is refused, not answered.
    let e = modes(
        &s,
        &ModeOptions {
            shift: Some(0.0),
            ..o
        },
    )
    .unwrap_err();
    assert!(matches!(e, ModesError::ShiftSingular { .. }), "{e}");
}

#[test]
fn free_beam_has_rigid_modes_at_zero_and_free_free_frequencies() {
    let (len, ei, rho_a) = (1.0, 175.0, 0.785);
    let model = beam(8, len, ei, rho_a, false);
    let s = linearize(&model, &LinearizeAt::Initial).unwrap();
    let r = modes(&s, &opts(6)).unwrap();
    let exact = bending(&[4.730_040_74, 7.853_204_62, 10.995_607_84], len, ei, rho_a);
    // Three rigid-body modes (two translations, one rotation) at ~0.
    for m in &r.modes[..3] {
        assert!(
            m.omega.abs() < 1e-5 * exact[0],
            "rigid mode w = {}",
            m.omega
        );
    }
    for (m, w) in r.modes[3..].iter().zip(&exact) {
        assert!(
            (m.omega / w - 1.0).abs() < 5e-3,
            "w = {}, exact {w}",
            m.omega
        );
    }
}

#[test]
fn free_rigid_body_in_3d_has_six_zero_modes() {
    // Euler parameters with their normalization constraint: 7 - 1 = 6 DOFs.
    let model = model_file("free_body");
    let s = linearize(&model, &LinearizeAt::Initial).unwrap();
    let r = modes(&s, &opts(6)).unwrap();
    assert_eq!(r.manifold_dofs, Some(6));
    // A spinning body: the stiffness of the gyroscopic terms is not zero,
    // but the undamped problem's w^2 are of the order of the spin squared
    // at most; at rest they vanish.
    let mut b = ModelBuilder::new(3).unwrap();
    let spec = flexmb::model::Body3dSpec {
        position: [0.0; 3],
        orientation: [1.0, 0.0, 0.0, 0.0],
        attitude: flexmb::kinematics::attitude::Attitude::EulerParameters,
        kinetic: flexmb::element::EulerKinetic::default(),
        mass: 3.0,
        inertia: [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]],
        velocity: [0.0; 3],
        angular_velocity: [0.0; 3],
    };
    b.body3d("body", &spec).unwrap();
    let model = b.build().unwrap();
    let s = linearize(&model, &LinearizeAt::Initial).unwrap();
    let r = modes(&s, &opts(6)).unwrap();
    for m in &r.modes {
        assert!(m.omega.abs() < 1e-6, "w = {}", m.omega);
    }
}

#[test]
fn damped_oscillator_eigenvalues() {
    // A mass m on a spring-damper (k, c) along a guide: s = -c/(2m) +-
    // i sqrt(k/m - (c/(2m))^2), and the undamped w = sqrt(k/m).
    let (m, k, c) = (2.0, 400.0, 6.0);
    let mut b = ModelBuilder::new(2).unwrap();
    b.node("mass", &[0.0, -1.0], None, m).unwrap();
    let spring = flexmb::model::SpringDamper {
        stiffness: k,
        damping: c,
        ..Default::default()
    };
    b.spring_damper(
        "spring",
        &PointRef::ground([0.0, 0.0]),
        &PointRef::entity("mass"),
        spring,
    )
    .unwrap();
    b.slider(
        "guide",
        &PointRef::entity("mass"),
        &PointRef::ground([0.0, 0.0]),
        [1.0, 0.0],
        SliderKind::PointOnLine,
    )
    .unwrap();
    let model = b.build().unwrap();
    let s = linearize(&model, &LinearizeAt::Initial).unwrap();
    assert!(s.is_damped());
    let r = modes(&s, &opts(1)).unwrap();
    assert!((r.modes[0].omega / (k / m).sqrt() - 1.0).abs() < 1e-12);
    let d = r.damped[0];
    let zeta_w = c / (2.0 * m);
    assert!((d.re / -zeta_w - 1.0).abs() < 1e-12, "{d:?}");
    assert!(
        (d.im / (k / m - zeta_w * zeta_w).sqrt() - 1.0).abs() < 1e-12,
        "{d:?}"
    );
    assert!((d.damping_ratio() - zeta_w / (k / m).sqrt()).abs() < 1e-12);
}

#[test]
fn bad_requests_are_clear_errors() {
    let model = pendulum(1.0, 1.0, 9.81, true);
    let s = linearize(&model, &at_static()).unwrap();
    let e = modes(&s, &opts(2)).unwrap_err();
    assert!(
        matches!(
            e,
            ModesError::TooManyModes {
                count: 2,
                available: 1
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("constraint manifold"), "{e}");
    let e = modes(&s, &opts(3)).unwrap_err();
    assert!(e.to_string().contains("2 DOFs"), "{e}");
    // A massless node on a spring: M singular on the manifold.
    let mut b = ModelBuilder::new(2).unwrap();
    b.node("ghost", &[1.0, 0.0], None, 0.0).unwrap();
    b.spring_damper(
        "spring",
        &PointRef::ground([0.0, 0.0]),
        &PointRef::entity("ghost"),
        flexmb::model::SpringDamper {
            stiffness: 10.0,
            ..Default::default()
        },
    )
    .unwrap();
    let ghost = b.build().unwrap();
    let s = linearize(&ghost, &at_static());
    let e = match s {
        Ok(s) => modes(&s, &opts(1)).unwrap_err(),
        Err(e) => e,
    };
    assert!(e.to_string().contains("ghost.x"), "{e}");
    // A free mass under gravity has no static equilibrium.
    let mut b = ModelBuilder::new(2).unwrap();
    b.gravity(&[0.0, -9.81]).unwrap();
    b.node("falling", &[0.0, 0.0], None, 1.0).unwrap();
    let e = linearize(&b.build().unwrap(), &at_static()).unwrap_err();
    assert!(matches!(e, ModesError::Static(_)), "{e}");
    assert!(e.to_string().contains("static equilibrium"), "{e}");
}

/// `flexmb modes` (the command line needs the default feature `cli`).
#[cfg(feature = "cli")]
mod command_line {
    use std::process::{Command, Output};

    use super::common::scratch::{assert_success, temp_dir};

    fn flexmb(args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_flexmb"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("flexmb runs")
    }

    #[test]
    fn cantilever_table_hdf5_and_matrix_market() {
        let dir = temp_dir("modes-cantilever");
        let h5 = dir.join("modes.h5");
        let out = flexmb(&[
            "modes",
            "models/cantilever.toml",
            "--count",
            "3",
            "-o",
            h5.to_str().unwrap(),
            "--export",
            dir.to_str().unwrap(),
        ]);
        assert_success(&out);
        let text = String::from_utf8_lossy(&out.stdout);
        // The model's description: 52.50, 329.0, 921.2 rad/s.
        for (row, w) in [("    1 ", 52.50), ("    2 ", 329.0), ("    3 ", 921.2)] {
            let line = text.lines().find(|l| l.starts_with(row)).expect(row);
            let omega: f64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
            assert!((omega / w - 1.0).abs() < 5e-3, "{line}");
        }
        // One row for the reference state, one per mode; /v the shape.
        let run = flexmb::output::read_hdf5_run(&h5).unwrap();
        assert_eq!(run.time, [0.0, 1.0, 2.0, 3.0]);
        assert!(run.v[0].iter().all(|x| *x == 0.0));
        assert!(run.v[1].iter().any(|x| *x != 0.0));
        assert!(run.parameters.iter().any(|(name, _)| name == "omega_1"));
        assert!(dir.join("modes.xmf").exists());
        // Kr from the export has the reduced size (44 DOFs, 3 constraints).
        let kr: sprs::TriMat<f64> = sprs::io::read_matrix_market(dir.join("Kr.mtx")).unwrap();
        assert_eq!(kr.shape(), (41, 41));
        let b: sprs::TriMat<f64> = sprs::io::read_matrix_market(dir.join("B.mtx")).unwrap();
        assert_eq!(b.shape(), (3, 44));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn hanging_double_pendulum_and_errors() {
        let out = flexmb(&[
            "modes",
            "models/double_pendulum.toml",
            "--at",
            "static",
            "--set",
            "body.0.position=[0.0,-1.0]",
            "--set",
            "body.0.angle=0.0",
            "--set",
            "body.1.position=[0.0,-2.0]",
        ]);
        assert_success(&out);
        let text = String::from_utf8_lossy(&out.stdout);
        // g = 10, unit masses and lengths: w^2 = 10 (2 -+ sqrt 2).
        assert!(
            text.contains("5.857864376e0") && text.contains("3.414213562e1"),
            "{text}"
        );
        let out = flexmb(&["modes", "models/pendulum.toml", "--count", "5"]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("5 modes asked for"), "{err}");
    }
}
