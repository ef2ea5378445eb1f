//! The model files of the seed 001 and seed 004 test problems (SPEC.md §3,
//! §5): every file loads with the expected DOF and constraint counts, its
//! initial state satisfies the constraints at position and velocity level,
//! and a short GSSSS run completes; then one check per model against what is
//! known about its motion:
//!
//! * manipulator, case I: the tip stays on the parabola, energy conserved
//!   (option dg); case II: the tip follows y = sin^2(omega t), `--set` changes
//!   omega, second-order convergence;
//! * TSDA slider-crank: `--set element.tsda.stiffness=10000` changes the
//!   spring (initial potential energy), both stiffnesses run;
//! * singular slider-crank: the Cartesian formulation (4.27) and the linear
//!   closure (4.28) give the same slider motion, before and after the
//!   singular points;
//! * dumbbell, pendulum, axisymmetric body: analytic solutions (positions,
//!   rod tension, quarter period, precession) with second-order errors.
//!
//! Run with `--nocapture` to see the measured numbers.

mod common;

use common::{axisymmetric_attitude, model_path, order, run_file, shipped_with};
use flexmb::input::{load_model_file, load_model_with_sets, ModelFile};
use flexmb::integrate::IntegratorSpec;
use flexmb::kinematics::rotation::rotate;
use flexmb::model::Model;
use flexmb::output::{MemoryRecorder, OutputConfig};
use flexmb::run::RunSummary;

fn load(name: &str) -> ModelFile {
    load_model_file(model_path(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Runs `file` with `dt` and `t_end` (and the file's other integrator
/// settings), recording every step.
fn run(mut file: ModelFile, dt: f64, t_end: f64) -> (RunSummary, MemoryRecorder) {
    file.output = OutputConfig::default();
    let over = IntegratorSpec {
        dt: Some(dt),
        t_end: Some(t_end),
        ..IntegratorSpec::default()
    };
    let (s, rec) = run_file(file, &over);
    assert!(s.failure.is_none(), "run failed: {}", s.line());
    assert!((s.t_end_reached - t_end).abs() < 1e-9, "{}", s.line());
    (s, rec)
}

fn dof(model: &Model, name: &str) -> usize {
    model
        .dofs
        .names()
        .iter()
        .position(|n| n == name)
        .unwrap_or_else(|| panic!("no DOF {name}"))
}

/// Largest |Phi(u0, 0)| and |B(u0) v0 + Phi_t(u0, 0)| over all joints.
fn initial_residuals(model: &Model) -> (f64, f64) {
    let (mut pos, mut vel): (f64, f64) = (0.0, 0.0);
    let mut phi = [0.0; flexmb::joint::MAX_ROWS];
    let mut phi_t = [0.0; flexmb::joint::MAX_ROWS];
    for blk in &model.joints {
        let (rows, n) = (blk.rows(), blk.ndof());
        let mut b = vec![0.0; rows * n];
        for i in 0..blk.len() {
            blk.phi(i, &model.u0, 0.0, &mut phi);
            blk.jacobian(i, &model.u0, 0.0, &mut b);
            blk.phi_t(i, &model.u0, 0.0, &mut phi_t);
            let v: Vec<f64> = blk.dofs(i).iter().map(|&d| model.v0[d]).collect();
            for r in 0..rows {
                let bv: f64 = (0..n).map(|k| b[r * n + k] * v[k]).sum();
                pos = pos.max(phi[r].abs());
                vel = vel.max((bv + phi_t[r]).abs());
            }
        }
    }
    (pos, vel)
}

/// Index of the recorded step at time `t`.
fn at(rec: &MemoryRecorder, t: f64) -> usize {
    rec.time
        .iter()
        .position(|&s| (s - t).abs() < 1e-9)
        .unwrap_or_else(|| panic!("no recorded step at t = {t}"))
}

/// (name, DOFs, constraint rows) of every model of this file.
const MODELS: [(&str, usize, usize); 8] = [
    ("manipulator_parabola", 6, 5),
    ("manipulator_sine", 6, 5),
    ("slider_crank_tsda", 9, 8),
    ("singular_slider_crank", 4, 3),
    ("singular_slider_crank_linear", 6, 5),
    ("dumbbell", 4, 1),
    ("pendulum", 2, 1),
    ("axisymmetric_body", 7, 1),
];

#[test]
fn every_model_loads_consistently_and_runs() {
    for (name, n, m) in MODELS {
        let file = load(name);
        let model = &file.model;
        assert_eq!(
            (model.n_dofs(), model.n_constraints()),
            (n, m),
            "{name}: DOFs, constraints"
        );
        let (pos, vel) = initial_residuals(model);
        println!("{name}: {n} DOFs, {m} rows, initial |Phi| {pos:.1e}, |B v0 + Phi_t| {vel:.1e}");
        assert!(pos <= 1e-12 && vel <= 1e-12, "{name}: {pos:.2e}, {vel:.2e}");
        let config = file.integrator(&IntegratorSpec::default()).unwrap();
        let dt = config.dt;
        let (s, _) = run(file, dt, 50.0 * dt);
        assert_eq!(s.steps, 50, "{name}");
        assert!(s.max_position_violation < 1e-12, "{name}: {}", s.line());
    }
}

/// Tip of the manipulator: link 2's body point (0.5, 0); `k` is `link2.x`.
fn tip(k: usize, u: &[f64]) -> (f64, f64) {
    let (x, y, th) = (u[k], u[k + 1], u[k + 2]);
    (x + 0.5 * th.cos(), y + 0.5 * th.sin())
}

#[test]
fn manipulator_tip_stays_on_the_parabola() {
    let file = load("manipulator_parabola");
    let link2 = dof(&file.model, "link2.x");
    let beta = 4.0 * 70f64.to_radians().cos().powi(2);
    let (s, rec) = run(file, 1e-3, 10.0);
    let (mut off, mut xmin, mut xmax): (f64, f64, f64) = (0.0, f64::MAX, f64::MIN);
    for u in &rec.u {
        let (x, y) = tip(link2, u);
        off = off.max((y - (x * x - beta)).abs());
        xmin = xmin.min(x);
        xmax = xmax.max(x);
    }
    println!(
        "manipulator case I: |y - (x^2 - beta)| <= {off:.1e}, tip x in [{xmin:.3}, {xmax:.3}], \
         energy change {:.1e}, {:.2} it/step",
        s.max_rel_energy_change,
        s.iterations_per_step()
    );
    assert!(off < 1e-12, "tip off the parabola by {off:.2e}");
    assert!(xmax - xmin > 0.5, "the tip hardly moved");
    assert!(s.max_rel_energy_change < 1e-12, "{}", s.line());
}

#[test]
fn manipulator_tip_follows_the_moving_line() {
    let tip_x_at_2: Vec<f64> = [2e-3, 1e-3, 5e-4]
        .iter()
        .map(|&dt| {
            let file = load("manipulator_sine");
            let link2 = dof(&file.model, "link2.x");
            let (_, rec) = run(file, dt, 2.0);
            let mut off: f64 = 0.0;
            for (u, t) in rec.u.iter().zip(&rec.time) {
                let (_, y) = tip(link2, u);
                off = off.max((y - (0.5 * t).sin().powi(2)).abs());
            }
            assert!(off < 1e-12, "dt {dt}: tip off the path by {off:.2e}");
            tip(link2, &rec.u[rec.u.len() - 1]).0
        })
        .collect();
    let (e1, e2) = (
        (tip_x_at_2[0] - tip_x_at_2[1]).abs(),
        (tip_x_at_2[1] - tip_x_at_2[2]).abs(),
    );
    println!(
        "manipulator case II: tip x(2) = {tip_x_at_2:.8?}, differences {e1:.1e}, {e2:.1e}, order {:.2}",
        order(e1, e2)
    );
    assert!((1.8..=2.2).contains(&order(e1, e2)));

    // `--set joint.tip_path.omega=1.0` (the digest's Table 4.7 case).
    let file = shipped_with("manipulator_sine", &["joint.tip_path.omega=1.0"]);
    let link2 = dof(&file.model, "link2.x");
    let (_, rec) = run(file, 1e-3, 1.0);
    let y = tip(link2, &rec.u[rec.u.len() - 1]).1;
    assert!(
        (y - 1f64.sin().powi(2)).abs() < 1e-12,
        "omega = 1: y(1) = {y}"
    );
}

#[test]
fn tsda_stiffness_is_set_from_the_command_line() {
    // Spring compressed by 4 at t = 0; gravity potential -g.M u = 9.81 (1 + 1.5).
    let gravity = 9.81 * 2.5;
    for (sets, k) in [
        (vec![], 1000.0),
        (vec!["element.tsda.stiffness=10000"], 1e4),
    ] {
        let file = shipped_with("slider_crank_tsda", &sets);
        let (s, rec) = run(file, 1e-4, 0.05);
        let v0 = rec.energy[0].potential;
        let expected = 0.5 * k * 16.0 + gravity;
        println!(
            "TSDA k = {k}: initial potential {v0:.6}, energy balance {:.1e}, {:.2} it/step",
            s.max_rel_energy_change,
            s.iterations_per_step()
        );
        assert!(
            (v0 - expected).abs() < 1e-9 * expected,
            "k = {k}: V0 = {v0}"
        );
        assert!(s.max_rel_energy_change < 1e-6, "{}", s.line());
    }
    // By index (from 0) when no entry has that id: the slider's mass.
    let file = shipped_with("slider_crank_tsda", &["body.2.mass=2.5"]);
    let x4 = dof(&file.model, "slider.x");
    let m4 = file.model.inertia.iter().find(|e| e.0 == x4).unwrap().2;
    assert_eq!(m4, 2.5);
    // An entry that does not exist is an error naming the key.
    let text = std::fs::read_to_string(model_path("slider_crank_tsda")).unwrap();
    let e = load_model_with_sets(&text, "m", &["element.spring.stiffness=1".into()])
        .err()
        .expect("unknown id");
    assert!(
        e.message
            .contains("'element' has no entry with the id 'spring'"),
        "{e}"
    );
}

/// Slider x of both singular slider-crank formulations at the end of a run.
fn slider_x(dt: f64, t_end: f64) -> (f64, f64, f64) {
    let (_, cart) = run(load("singular_slider_crank"), dt, t_end);
    let (_, lin) = run(load("singular_slider_crank_linear"), dt, t_end);
    let model = load("singular_slider_crank_linear").model;
    let (x, y) = (dof(&model, "rod.x"), dof(&model, "rod.y"));
    let worst_y = lin.u.iter().map(|u| u[y].abs()).fold(0.0, f64::max);
    let k = cart.u.len() - 1;
    (cart.u[k][2], lin.u[lin.u.len() - 1][x], worst_y)
}

#[test]
fn singular_slider_crank_formulations_agree() {
    let (a, b, y) = slider_x(1e-4, 0.3);
    println!("singular slider-crank, t = 0.3, dt 1e-4: slider x {a:.10} (4.27), {b:.10} (4.28), diff {:.1e}; |y| <= {y:.1e}", (a - b).abs());
    assert!((a - b).abs() < 1e-6 && y < 1e-12);
    // Past both singular points (t = 0.86, 2.59), at the files' dt.
    let (a, b, _) = slider_x(1e-3, 3.0);
    println!(
        "singular slider-crank, t = 3, dt 1e-3: slider x {a:.8} (4.27), {b:.8} (4.28), diff {:.1e}",
        (a - b).abs()
    );
    assert!((a - b).abs() < 1e-4);
}

#[test]
fn dumbbell_matches_the_analytic_solution() {
    let (m1, m2, w) = (1.0, 2.0, 3.0);
    let exact = |t: f64| {
        let c = [2.0 / 3.0 + 0.5 * t, 9.81 * t - 4.905 * t * t];
        let e = [(w * t).cos(), (w * t).sin()];
        let (f1, f2) = (m2 / (m1 + m2), m1 / (m1 + m2));
        [
            c[0] - f1 * e[0],
            c[1] - f1 * e[1],
            c[0] + f2 * e[0],
            c[1] + f2 * e[1],
        ]
    };
    let times = [0.5, 1.0, 1.5, 2.0];
    let errs: Vec<(f64, f64)> = [2e-3, 1e-3]
        .iter()
        .map(|&dt| {
            let (s, rec) = run(load("dumbbell"), dt, 2.0);
            assert!(s.max_rel_energy_change < 1e-12, "{}", s.line());
            let mut e: f64 = 0.0;
            for t in times {
                let k = at(&rec, t);
                let x = exact(t);
                e = e.max(
                    (0..4)
                        .map(|i| (rec.u[k][i] - x[i]).abs())
                        .fold(0.0, f64::max),
                );
            }
            let tension = rec.lambda[2..].iter().map(|l| (l[0] - 6.0).abs());
            (e, tension.fold(0.0, f64::max))
        })
        .collect();
    let o = order(errs[0].0, errs[1].0);
    println!(
        "dumbbell: position errors {:.2e} (dt 2e-3), {:.2e} (dt 1e-3), order {o:.2}; |lambda - 6| <= {:.1e}, {:.1e}",
        errs[0].0, errs[1].0, errs[0].1, errs[1].1
    );
    assert!(errs[1].0 < 1e-4 && (1.9..=2.1).contains(&o));
    assert!(errs[1].1 < 2e-5 && (1.9..=2.1).contains(&order(errs[0].1, errs[1].1)));
}

#[test]
fn pendulum_quarter_period_and_tension() {
    // K(1/sqrt 2) by the arithmetic-geometric mean.
    let (mut a, mut b) = (1.0_f64, 0.5_f64.sqrt());
    for _ in 0..10 {
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    let quarter = (1.0 / 9.81_f64).sqrt() * std::f64::consts::PI / (2.0 * a);
    let errs: Vec<f64> = [2e-3, 1e-3]
        .iter()
        .map(|&dt| {
            let (s, rec) = run(load("pendulum"), dt, 1.0);
            assert!(s.max_rel_energy_change < 1e-12, "{}", s.line());
            // First sign change of x, linearly interpolated.
            let k = rec.u.iter().position(|u| u[0] <= 0.0).unwrap();
            let (x0, x1) = (rec.u[k - 1][0], rec.u[k][0]);
            let t = rec.time[k - 1] + dt * x0 / (x0 - x1);
            // Tension: lambda = 3 g (-y). The recorded multipliers are
            // aligned to t_{n+1}, second order from the second step on
            // (docs/theory/gssss.md §10).
            let mut worst: f64 = 0.0;
            for j in 2..rec.u.len() {
                worst = worst.max((rec.lambda[j][0] + 3.0 * 9.81 * rec.u[j][1]).abs());
            }
            println!(
                "pendulum dt {dt}: bottom at t = {t:.9} (exact T/4 = {quarter:.9}), \
                 |lambda - 3 g (-y)| <= {worst:.1e}"
            );
            assert!(worst < 2e-3, "tension {worst:.2e}");
            (t - quarter).abs()
        })
        .collect();
    println!(
        "pendulum: quarter-period errors {:.1e}, {:.1e}, order {:.2}",
        errs[0],
        errs[1],
        order(errs[0], errs[1])
    );
    assert!(errs[1] < 1e-5 && (1.8..=2.2).contains(&order(errs[0], errs[1])));
}

/// The torque-free axisymmetric body (models/axisymmetric_body.toml) with
/// the midpoint rule: the material points follow the analytic precession
/// at second order, the energy holds to round-off, and the normalization
/// reaction is zero (the model's scale-invariant kinetic energy; the
/// header). The default quadratic form gives the same motion to the
/// scheme's accuracy with the reaction 2 w.J w = 18.
#[test]
fn axisymmetric_body_precesses_analytically() {
    let exact = axisymmetric_attitude;
    let points = [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]];
    let times = [1.0, 2.0, 3.0];
    let forms = [
        ("scale-invariant", None, 0.0, 1e-12),
        (
            "quadratic",
            Some("body.body.kinetic_energy = \"quadratic\""),
            18.0,
            1e-3,
        ),
    ];
    let errs: Vec<[f64; 2]> = [1e-2, 5e-3]
        .iter()
        .map(|&dt| {
            let mut e = [0.0_f64; 2];
            for (ef, (what, set, reaction, bound)) in e.iter_mut().zip(forms) {
                let file = match set {
                    None => load("axisymmetric_body"),
                    Some(set) => shipped_with("axisymmetric_body", &[set]),
                };
                let (s, rec) = run(file, dt, 3.0);
                assert!(s.max_rel_energy_change < 1e-12, "{}", s.line());
                for t in times {
                    let k = at(&rec, t);
                    let p = &rec.u[k][3..7];
                    for s in &points {
                        let (r, x) = (rotate(p, s), rotate(&exact(t), s));
                        *ef = ef.max((0..3).map(|i| (r[i] - x[i]).abs()).fold(0.0, f64::max));
                    }
                }
                let lam = rec.lambda[2..]
                    .iter()
                    .map(|l| (l[0] - reaction).abs())
                    .fold(0.0, f64::max);
                println!(
                    "axisymmetric body dt {dt}, {what} kinetic energy: material point error \
                     {ef:.2e}, |lambda - {reaction}| <= {lam:.1e}"
                );
                assert!(
                    lam <= bound,
                    "{what}: normalization reaction off by {lam:.2e}"
                );
            }
            e
        })
        .collect();
    for (i, (what, ..)) in forms.iter().enumerate() {
        let o = order(errs[0][i], errs[1][i]);
        println!("axisymmetric body, {what}: order {o:.2}");
        assert!(errs[1][i] < 1e-3 && (1.9..=2.1).contains(&o), "{what}");
    }
}

/// The `path` and `linear` keys: defaults and the errors a model file gets.
#[test]
fn path_and_linear_joint_keys() {
    let model = |joint: &str| {
        format!(
            "dimension = 2\n[[body]]\nid = \"b\"\nposition = [0.5, 0.3]\nangle = 0.4\nmass = 1.0\n\
             [[node]]\nid = \"n\"\nposition = [1.0, 0.0]\nmass = 1.0\n[[joint]]\nid = \"j\"\n{joint}\n"
        )
    };
    // Defaults: the parabola's b through the initial point, the linear
    // joint's constant = its initial value; both then hold at t = 0.
    for joint in [
        "type = \"path\"\npoint = { body = \"b\", offset = [0.2, 0.1] }\ncurve = \"parabola\"\na = -0.7",
        "type = \"path\"\npoint = \"n\"\ncurve = \"sine_squared\"\nomega = 3.0",
        "type = \"linear\"\ncoordinates = [\"b.theta\", \"n.x\"]\ncoefficients = [2.0, -1.0]",
    ] {
        let file = flexmb::input::load_model_str(&model(joint), "m.toml")
            .unwrap_or_else(|e| panic!("{joint}: {e}"));
        let (pos, vel) = initial_residuals(&file.model);
        assert!(pos < 1e-15 && vel == 0.0, "{joint}");
    }
    for (joint, expect) in [
        (
            "type = \"path\"\npoint = \"n\"\ncurve = \"circle\"",
            "m.toml:15: joint 'j' (field `curve`): unknown curve 'circle'",
        ),
        (
            "type = \"path\"\npoint = \"n\"\ncurve = \"parabola\"",
            "(field `a`): curve = \"parabola\" needs `a`",
        ),
        (
            "type = \"path\"\npoint = \"n\"\ncurve = \"parabola\"\na = 1.0\nomega = 2.0",
            "(field `omega`): `omega` is a key of curve = \"sine_squared\"",
        ),
        (
            "type = \"path\"\npoint = \"n\"\ncurve = \"sine_squared\"",
            "(field `omega`): curve = \"sine_squared\" needs `omega`",
        ),
        (
            "type = \"path\"\npoint = { ground = [0.0, 0.0] }\ncurve = \"sine_squared\"\nomega = 1.0",
            "(field `point`): a path joint needs a node or a body point",
        ),
        (
            "type = \"path\"\npoint = \"n\"\ncurve = \"parabola\"\na = 1.0\nb = 0.5",
            "the initial positions violate this path joint by 1.500e0",
        ),
        (
            "type = \"linear\"\ncoordinates = [\"b.theta\", \"n.z\"]\ncoefficients = [1.0, 1.0]",
            "(field `coordinates`): no coordinate named 'n.z'",
        ),
        (
            "type = \"linear\"\ncoordinates = [\"b.theta\", \"n.x\"]\ncoefficients = [1.0]",
            "(field `coefficients`): one coefficient per coordinate",
        ),
        (
            "type = \"linear\"\ncoordinates = [\"b.theta\", \"b.theta\"]\ncoefficients = [1.0, 1.0]",
            "(field `coordinates`): coordinate 'b.theta' appears twice",
        ),
        (
            "type = \"linear\"\ncoordinates = [\"n.x\"]\ncoefficients = [0.0]",
            "(field `coefficients`): the coefficients must not all be zero",
        ),
        (
            "type = \"linear\"\ncoordinates = [\"n.x\"]\ncoefficients = [1.0]\nconstant = 0.5",
            "the initial positions violate this linear joint by 5.000e-1",
        ),
    ] {
        let e = flexmb::input::load_model_str(&model(joint), "m.toml")
            .err()
            .unwrap_or_else(|| panic!("accepted: {joint}"))
            .to_string();
        assert!(e.contains(expect), "{joint}:\n got {e}\n expected {expect}");
    }
    // Path joints are planar.
    let e = flexmb::input::load_model_str(
        "dimension = 3\n[[node]]\nid = \"n\"\nposition = [0.0, 0.0, 0.0]\nmass = 1.0\n\
         [[joint]]\nid = \"j\"\ntype = \"path\"\npoint = \"n\"\ncurve = \"sine_squared\"\nomega = 1.0\n",
        "m.toml",
    )
    .err()
    .expect("3-D path");
    assert!(e.message.contains("path joints are planar"), "{e}");
}
