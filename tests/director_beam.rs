//! The geometrically exact 3-D beam in directors (`beam3d`,
//! src/element/beam3d.rs) on the standard benchmarks of
//! docs/validation/beam3d.md: linear cantilever statics (bending with shear,
//! torsion), the roll-up of a cantilever into a full circle by a tip moment,
//! the tip torque, the 45-degree bend (models/bend45.toml), the cantilever's
//! frequencies by `flexmb modes`, and bad input. Run with `--nocapture` to
//! see the measured numbers.

use flexmb::element::RodSection;
use flexmb::input::{load_model_file, load_model_str};
use flexmb::load::{TimeFunction, TorqueFrame};
use flexmb::model::{Model, ModelBuilder, PointRef, RodLine, RodPath, Shape};
use flexmb::modes::{linearize, modes, LinearizeAt, ModeOptions};
use flexmb::output::MemoryRecorder;
use flexmb::statics::{solve_static, StaticOptions};

mod common;

/// A square-ish section: EA, GA, GJ, EI1, EI2 and inertias.
fn section(ei1: f64, ei2: f64, gj: f64, ga: f64) -> RodSection {
    RodSection {
        ea: 1e4 * ei1.max(ei2),
        ga1: ga,
        ga2: ga,
        gj,
        ei1,
        ei2,
        rho_a: 0.0,
        rho_i1: 0.0,
        rho_i2: 0.0,
    }
}

/// A cantilever along x of length `len`, clamped at x = 0, `n` elements of
/// `order`, d1 = y, d2 = z; the tip node is `tip`.
fn cantilever(n: usize, order: usize, len: f64, s: &RodSection) -> ModelBuilder {
    let mut b = ModelBuilder::new(3).unwrap();
    b.line_of_beam3d(&RodLine {
        nodes: "n",
        element_ids: "e",
        path: RodPath::Straight {
            from: [0.0; 3],
            to: [len, 0.0, 0.0],
        },
        elements: n,
        order,
        orientation: [0.0, 1.0, 0.0],
        section: *s,
        lumped: false,
        last_node: Some("tip"),
    })
    .unwrap();
    b.clamp("root", "n0").unwrap();
    b
}

/// Index of DOF `name`.
fn dof(m: &Model, name: &str) -> usize {
    m.dofs
        .names()
        .iter()
        .position(|n| n == name)
        .unwrap_or_else(|| panic!("no DOF {name}"))
}

/// The error message of model text that must not build.
fn load_err(text: &str) -> String {
    match load_model_str(text, "t.toml") {
        Ok(_) => panic!("the model built"),
        Err(e) => e.to_string(),
    }
}

/// A torque `t` about the beam's axis (x) on the node `tip`.
fn axial_tip_torque(b: &mut ModelBuilder, t: f64) {
    b.torque3d(
        "T",
        "tip",
        [t, 0.0, 0.0],
        TorqueFrame::Spatial,
        TimeFunction::default(),
    )
    .unwrap();
}

/// The twist of the node `tip` about x: the angle of its d1 in the y-z plane.
fn tip_twist(m: &Model, u: &[f64]) -> f64 {
    u[dof(m, "tip.d1z")].atan2(u[dof(m, "tip.d1y")])
}

fn solve(m: &Model, steps: u32) -> Vec<f64> {
    let opts = StaticOptions {
        steps,
        ..StaticOptions::default()
    };
    solve_static(m, &opts).expect("static solve converges").u
}

/// Linear statics: tip force P along d2 gives `P L^3/(3 EI1) + P L/GA`
/// (Timoshenko), a tip torque T the twist `T L / GJ`, exactly for any mesh
/// (linear twist) and to the mesh's accuracy for bending.
#[test]
fn cantilever_linear_statics() {
    let (len, ei1, ei2, gj, ga): (f64, f64, f64, f64, f64) = (2.0, 3.0, 5.0, 1.7, 400.0);
    let s = section(ei1, ei2, gj, ga);
    let (p, t): (f64, f64) = (1e-6, 1e-6);
    let exact = p * len.powi(3) / (3.0 * ei1) + p * len / ga;
    for (n, order, tol) in [(16, 1, 2e-3), (4, 2, 1e-10), (8, 2, 1e-10)] {
        let mut b = cantilever(n, order, len, &s);
        b.point_force("P", &PointRef::entity("tip"), &[0.0, 0.0, p])
            .unwrap();
        axial_tip_torque(&mut b, t);
        let m = b.build().unwrap();
        let u = solve(&m, 1);
        let w = u[dof(&m, "tip.z")];
        let twist = tip_twist(&m, &u);
        let (ew, et) = (
            (w - exact).abs() / exact,
            (twist - t * len / gj).abs() / (t * len / gj),
        );
        println!(
            "cantilever {n} x order {order}: deflection {w:.6e} (exact {exact:.6e}, rel {ew:.2e}), \
             twist rel error {et:.2e}"
        );
        assert!(ew < tol, "deflection {ew:.2e}");
        assert!(et < 1e-6, "twist {et:.2e}");
    }
}

/// Roll-up: the tip moment `M = 2 pi EI / L` bends the cantilever into a
/// full circle: the tip returns to the root (within 1e-3 L at 16 quadratic
/// elements, 10 load steps, one of them halved) with its d3 back along x (to the mesh's
/// accuracy); a tip torque twists it by exactly `T L / GJ` at any size.
#[test]
fn cantilever_rolls_up_into_a_circle_and_twists() {
    let (len, ei): (f64, f64) = (10.0, 2.0);
    let s = section(ei, ei, 1.5, 1e4);
    for (n, order) in [(16, 2), (32, 1)] {
        let mut b = cantilever(n, order, len, &s);
        // About -y: the beam (along x) curls upward in the x-z plane.
        let m = 2.0 * std::f64::consts::PI * ei / len;
        b.torque3d(
            "M",
            "tip",
            [0.0, -m, 0.0],
            TorqueFrame::Spatial,
            TimeFunction::default(),
        )
        .unwrap();
        let model = b.build().unwrap();
        // The default 10 load steps (36 degrees each): step 7 does not
        // converge as it stands and is halved (statics' load-step cutting).
        let u = solve(&model, 10);
        let tip = [
            u[dof(&model, "tip.x")],
            u[dof(&model, "tip.y")],
            u[dof(&model, "tip.z")],
        ];
        let gap = tip.iter().map(|x| x * x).sum::<f64>().sqrt() / len;
        let turn = u[dof(&model, "tip.d3z")].atan2(u[dof(&model, "tip.d3x")]);
        println!(
            "roll-up, {n} x order {order}: tip {tip:?}, |tip - root| / L = {gap:.2e}, \
             tip rotation - 2 pi = {turn:.2e} rad"
        );
        if order == 2 {
            assert!(gap < 1e-3, "gap {gap:.2e}");
            assert!(turn.abs() < 2.5e-3, "rotation error {turn:.2e}");
        }
    }
    // A large tip torque: the twist T L / GJ = 1.2 rad. The interpolated
    // directors shorten between the nodes (K_3 = sin(2 D)/(2 h) for a twist
    // D per linear element): the twist converges to it, at fourth order with
    // quadratic elements (measured: 1.2e-4, 7.6e-6, 4.7e-7 rad).
    let mut errors = Vec::new();
    for n in [4, 8, 16] {
        let mut b = cantilever(n, 2, len, &s);
        let t = 1.2 * 1.5 / len;
        axial_tip_torque(&mut b, t);
        let model = b.build().unwrap();
        let u = solve(&model, 4);
        let twist = tip_twist(&model, &u);
        println!("tip torque, {n} quadratic elements: twist {twist:.10} (exact 1.2)");
        errors.push((twist - 1.2).abs());
    }
    let order = (errors[1] / errors[2]).log2();
    println!("tip torque: errors {errors:?}, observed order {order:.2}");
    assert!(errors[2] < 1e-6 && order > 3.5, "{errors:?}");
}

/// The 45-degree bend (models/bend45.toml) converges with `flexmb static`'s
/// defaults; its tip displacement is within 0.5 % (vector norm of the
/// difference over the norm) of the converged value of the exact arc and of
/// Simo & Vu-Quoc's (docs/validation/beam3d.md).
#[test]
fn bend45_matches_the_literature() {
    let file = load_model_file(common::model_path("bend45")).expect("bend45 builds");
    let m = &file.model;
    let u = solve_static(m, &StaticOptions::default())
        .expect("converges with the defaults")
        .u;
    let d: Vec<f64> = ["tip.x", "tip.y", "tip.z"]
        .iter()
        .zip([70.710_678_118_654_76, -29.289_321_881_345_245, 0.0])
        .map(|(n, x0)| u[dof(m, n)] - x0)
        .collect();
    for (name, reference) in [
        // Kynema's 15-node LSFE (its converged digits), docs/validation/beam3d.md.
        ("Kynema LSFE, converged", [-23.6460, 13.7208, 53.5776]),
        // Simo & Vu-Quoc 1986, 8 elements (tip (15.79, 47.23, 53.37) in their axes).
        ("Simo & Vu-Quoc 1986", [-23.48, 13.50, 53.37]),
    ] {
        let diff: f64 = (0..3)
            .map(|k| (d[k] - reference[k]).powi(2))
            .sum::<f64>()
            .sqrt();
        let size: f64 = reference.iter().map(|x| x * x).sum::<f64>().sqrt();
        println!(
            "bend45 tip displacement {d:?} vs {name} {reference:?}: {:.3} %",
            100.0 * diff / size
        );
        assert!(diff / size < 5e-3, "{name}: {:.3} %", 100.0 * diff / size);
    }
    // Component by component against the converged exact arc (32 quadratic
    // elements; the element converges to Kynema's value on Kynema's
    // geometry to 2.5e-8, test below).
    let text = std::fs::read_to_string(common::model_path("bend45")).unwrap();
    let fine = load_model_str(
        &text.replace("elements = 8", "elements = 32"),
        "bend45_32.toml",
    )
    .expect("refined bend45 builds")
    .model;
    let uf = solve(&fine, 10);
    for (k, n) in ["tip.x", "tip.y", "tip.z"].iter().enumerate() {
        let x0 = u[dof(m, n)] - d[k];
        let converged = uf[dof(&fine, n)] - x0;
        let rel = (d[k] - converged) / converged;
        println!(
            "bend45 {n}: 8 quadratic {:.6}, 32 quadratic {converged:.6} ({rel:.2e})",
            d[k]
        );
        assert!(rel.abs() < 5e-3, "{n}: {rel:.2e}");
    }
}

/// Bad input: clear errors naming the element or line and the field.
#[test]
fn bad_input_is_a_clear_error() {
    let head = r#"
dimension = 3
[[body]]
id = "a"
attitude = "directors"
position = [0.0, 0.0, 0.0]
orientation = [0.7071067811865476, 0.0, 0.7071067811865476, 0.0]
mass = 0.0
inertia = [0.0, 0.0, 0.0]
[[body]]
id = "b"
attitude = "directors"
position = [1.0, 0.0, 0.0]
orientation = [0.7071067811865476, 0.0, 0.7071067811865476, 0.0]
mass = 0.0
inertia = [0.0, 0.0, 0.0]
[[body]]
id = "e"
position = [2.0, 0.0, 0.0]
mass = 1.0
inertia = [1.0, 1.0, 1.0]
"#;
    let el = |nodes: &str, ei1: f64| {
        format!(
            "{head}[[element]]\ntype = \"beam3d\"\nid = \"el\"\nnodes = {nodes}\nea = 1.0\nga1 = 1.0\n\
             ga2 = 1.0\ngj = 1.0\nei1 = {ei1}\nei2 = 1.0\n"
        )
    };
    // The orientation above turns d3 onto -x... (0.707, 0, 0.707, 0) is +90 deg
    // about y: d3 = (1, 0, 0) along the axis a -> b.
    assert!(load_model_str(&el("[\"a\", \"b\"]", 1.0), "t.toml").is_ok());
    for (text, expect) in [
        (
            el("[\"a\", \"b\"]", 0.0),
            "element 'el' (field `ei1`): bending stiffness EI1 must be positive",
        ),
        (
            el("[\"a\", \"b\"]", -2.0),
            "bending stiffness EI1 must be positive, got -2",
        ),
        (el("[\"a\", \"e\"]", 1.0), "'e' is not a director body"),
        (
            el("[\"a\"]", 1.0),
            "a beam3d element has 2 or 3 nodes, got 1",
        ),
        (el("[\"a\", \"a\"]", 1.0), "node 'a' is listed twice"),
        (el("[\"b\", \"a\"]", 1.0), "d3 is not along the beam axis"),
        (el("[\"a\", \"x\"]", 1.0), "node or body 'x' is not defined"),
    ] {
        let e = load_err(&text);
        assert!(e.contains(expect), "{e}\n  expected: {expect}");
    }
    // A zero-length element: two bodies at one point.
    let zero = el("[\"a\", \"b\"]", 1.0)
        .replace("position = [1.0, 0.0, 0.0]", "position = [0.0, 0.0, 0.0]");
    let e = load_err(&zero);
    assert!(e.contains("zero length"), "{e}");
    // A line whose orientation vector is parallel to its axis.
    let line = r#"
dimension = 3
[[beam3d_line]]
nodes = "n"
element_ids = "e"
from = [0.0, 0.0, 0.0]
to = [1.0, 0.0, 0.0]
elements = 2
orientation = [2.0, 0.0, 0.0]
section = { ea = 1.0, ga1 = 1.0, ga2 = 1.0, gj = 1.0, ei1 = 1.0, ei2 = 1.0 }
"#;
    let e = load_err(line);
    assert!(
        e.contains("t.toml:9:")
            && e.contains("beam3d_line 'n' (field `orientation`)")
            && e.contains("parallel to the beam axis"),
        "{e}"
    );
    // A material instead of the section: builds; a shape without its size
    // or an unknown one does not.
    let material = |m: &str| {
        line.replace(
            "orientation = [2.0, 0.0, 0.0]",
            "orientation = [0.0, 1.0, 0.0]",
        )
        .replace(
            "section = { ea = 1.0, ga1 = 1.0, ga2 = 1.0, gj = 1.0, ei1 = 1.0, ei2 = 1.0 }",
            &format!("material = {{ e = 2.1e11, nu = 0.3, rho = 7850.0, {m} }}"),
        )
    };
    assert!(load_model_str(
        &material("shape = \"rectangle\", width = 0.02, height = 0.01"),
        "t.toml"
    )
    .is_ok());
    let e = load_err(&material("shape = \"rectangle\", width = 0.02"));
    assert!(e.contains("shape 'rectangle' needs `height`"), "{e}");
    let e = load_err(&material("shape = \"hexagon\""));
    assert!(e.contains("unknown shape 'hexagon'"), "{e}");
    let e = load_err(&line.replace("gj = 1.0", "gj = 0.0"));
    assert!(
        e.contains("section `gj`: torsional stiffness GJ must be positive"),
        "{e}"
    );
}

/// `flexmb modes` on a clamped steel rod (L = 1, diameter 0.02): the first
/// three bending frequencies (each a pair, EI1 = EI2) against
/// Euler–Bernoulli, `(beta_n L)^2 sqrt(EI / (rho A L^4))`, and the first
/// torsion frequency against Saint-Venant, `pi/2 sqrt(GJ / (rho Ip)) / L`,
/// within 0.5 % at 10 quadratic elements.
#[test]
fn cantilever_frequencies() {
    use std::f64::consts::PI;
    let (e, nu, rho, d, len): (f64, f64, f64, f64, f64) = (2.1e11, 0.3, 7850.0, 0.02, 1.0);
    let g = e / (2.0 * (1.0 + nu));
    let a = PI * d * d / 4.0;
    let i = PI * d.powi(4) / 64.0;
    let kappa = 6.0 * (1.0 + nu) / (7.0 + 6.0 * nu);
    let s = RodSection {
        ea: e * a,
        ga1: kappa * g * a,
        ga2: kappa * g * a,
        gj: g * 2.0 * i,
        ei1: e * i,
        ei2: e * i,
        rho_a: rho * a,
        rho_i1: rho * i,
        rho_i2: rho * i,
    };
    // The same section from the material and the shape.
    let from = RodSection::from_material(e, nu, rho, Shape::Circle { diameter: d }).unwrap();
    for (x, y) in [
        (from.ea, s.ea),
        (from.ga1, s.ga1),
        (from.gj, s.gj),
        (from.ei2, s.ei2),
        (from.rho_i1, s.rho_i1),
    ] {
        assert!((x - y).abs() <= 1e-14 * y, "{from:?} vs {s:?}");
    }
    let model = cantilever(10, 2, len, &s).build().unwrap();
    let sys = linearize(&model, &LinearizeAt::Initial).unwrap();
    let found = modes(
        &sys,
        &ModeOptions {
            count: 12,
            ..ModeOptions::default()
        },
    )
    .unwrap();
    let names = model.dofs.names();
    let translation = |shape: &[f64]| -> f64 {
        names
            .iter()
            .zip(shape)
            .filter(|(n, _)| n.ends_with(".x") || n.ends_with(".y") || n.ends_with(".z"))
            .map(|(_, x)| x.abs())
            .fold(0.0, f64::max)
    };
    let all = |shape: &[f64]| shape.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let (mut bending, mut torsion) = (Vec::new(), Vec::new());
    for m in &found.modes {
        if translation(&m.shape) < 1e-8 * all(&m.shape) {
            torsion.push(m.omega);
        } else {
            bending.push(m.omega);
        }
    }
    let w0 = (s.ei1 / (s.rho_a * len.powi(4))).sqrt();
    for (k, bl) in [
        1.875_104_068_711_961,
        4.694_091_132_974_175,
        7.854_757_438_237_613,
    ]
    .iter()
    .enumerate()
    {
        let exact = bl * bl * w0;
        for w in &bending[2 * k..2 * k + 2] {
            let rel = (w - exact) / exact;
            println!(
                "bending mode {}: {w:.4} rad/s, Euler-Bernoulli {exact:.4} ({:+.3} %)",
                k + 1,
                100.0 * rel
            );
            assert!(rel.abs() < 5e-3, "bending {}: {:.3} %", k + 1, 100.0 * rel);
        }
    }
    let exact = PI / 2.0 * (s.gj / (s.rho_i1 + s.rho_i2)).sqrt() / len;
    let rel = (torsion[0] - exact) / exact;
    println!(
        "torsion mode 1: {:.4} rad/s, Saint-Venant {exact:.4} ({:+.3} %)",
        torsion[0],
        100.0 * rel
    );
    assert!(rel.abs() < 5e-3, "torsion: {:.3} %", 100.0 * rel);
}

/// Spatial angular momentum about the origin of a model made of 3-vector
/// slots only (positions and directors): `sum_slots q x (M v)` (the conjugate
/// momenta of the constant mass matrix).
fn angular_momentum(mass: &sprs::CsMat<f64>, u: &[f64], v: &[f64]) -> [f64; 3] {
    let mut mv = vec![0.0; u.len()];
    for (&x, (r, c)) in mass.iter() {
        mv[r] += x * v[c];
    }
    let mut l = [0.0; 3];
    for (q, p) in u.chunks_exact(3).zip(mv.chunks_exact(3)) {
        l[0] += q[1] * p[2] - q[2] * p[1];
        l[1] += q[2] * p[0] - q[0] * p[2];
        l[2] += q[0] * p[1] - q[1] * p[0];
    }
    l
}

/// The shipped `model` run with the step `dt` to `t_end` (a run that fails
/// fails the test).
fn run_model(model: &str, dt: f64, t_end: f64) -> MemoryRecorder {
    let file = load_model_file(common::model_path(model)).expect("model builds");
    let over = flexmb::integrate::IntegratorSpec {
        dt: Some(dt),
        t_end: Some(t_end),
        ..Default::default()
    };
    let (summary, rec) = common::run_file(file, &over);
    assert!(summary.failure.is_none(), "{}", summary.line());
    rec
}

/// The shipped `model` run with dt = 0.01 to `t_end`: its (constant) mass
/// matrix, the records, and the indices of the records from `t_free` on,
/// after its loads stop.
fn run_after_the_loads(
    model: &str,
    t_end: f64,
    t_free: f64,
) -> (sprs::CsMat<f64>, MemoryRecorder, Vec<usize>) {
    let file = load_model_file(common::model_path(model)).expect("model builds");
    let mass = flexmb::assembly::Assembler::new(&file.model)
        .mass_matrix()
        .clone();
    let rec = run_model(model, 0.01, t_end);
    let free = (0..rec.time.len())
        .filter(|&k| rec.time[k] >= t_free - 1e-9)
        .collect();
    (mass, rec, free)
}

/// The flying beam (models/flying_beam.toml, after Simo & Vu-Quoc 1988)
/// with the midpoint scheme and option dg: after the loads stop (t = 5) the
/// total energy and the angular momentum are constant to round-off; the
/// midpoint rule converges at second order (three step sizes).
#[test]
fn flying_beam_conserves_energy_and_angular_momentum() {
    let (mass, rec, free) = run_after_the_loads("flying_beam", 10.0, 5.0);
    let (k0, e0) = (free[0], rec.energy[free[0]].total);
    let l0 = angular_momentum(&mass, &rec.u[k0], &rec.v[k0]);
    let ln = l0.iter().map(|x| x * x).sum::<f64>().sqrt();
    let (mut de, mut dl) = (0.0f64, 0.0f64);
    for &k in &free {
        de = de.max((rec.energy[k].total - e0).abs() / e0.abs());
        let l = angular_momentum(&mass, &rec.u[k], &rec.v[k]);
        dl = dl.max((0..3).map(|a| (l[a] - l0[a]).abs()).fold(0.0, f64::max) / ln);
    }
    let l_start = angular_momentum(&mass, &rec.u[0], &rec.v[0]);
    println!(
        "flying beam, dt 0.01, t in [5, 10]: energy {e0:.6e}, relative drift {de:.2e}; angular \
         momentum {l0:.6?} (|L| {ln:.4e}; at t = 0 {l_start:.2?}), relative drift {dl:.2e}"
    );
    assert!(de < 1e-12, "energy drift {de:.2e}");
    assert!(dl < 1e-12, "angular momentum drift {dl:.2e}");
    assert!(ln > 1.0, "the loads left the beam spinning");
    // Second order: the positions at t = 6 for dt = 0.04, 0.02, 0.01.
    let finals: Vec<Vec<f64>> = [0.04, 0.02, 0.01]
        .iter()
        .map(|&dt| {
            let r = run_model("flying_beam", dt, 6.0);
            r.u.last().unwrap().clone()
        })
        .collect();
    let e1 = common::max_diff(&finals[0], &finals[1]);
    let e2 = common::max_diff(&finals[1], &finals[2]);
    let order = (e1 / e2).log2();
    println!("flying beam at t = 6: |u(0.04) - u(0.02)| = {e1:.3e}, |u(0.02) - u(0.01)| = {e2:.3e}, order {order:.3}");
    assert!((order - 2.0).abs() < 0.2, "order {order}");
}

/// Joints on beam nodes: a stiff beam3d (L = 1, rho A = 1) hanging from a
/// `revolute` joint (axis y) with a rigid 3-D body welded (`fixed`) to its
/// tip, and the same beam on a `spherical` joint: the small-oscillation
/// frequency about the hanging equilibrium (`flexmb modes --at static`) is
/// the compound pendulum's `w^2 = g (rho A L^2 / 2 + m L) / (rho A L^3 / 3 +
/// m L^2 + J + rho_i L)`, up to the beam's flexibility (EI = 1e6: relative
/// 1e-6).
#[test]
fn joints_on_beam_nodes_make_a_compound_pendulum() {
    let text = |root: &str, tip: &str| {
        format!(
            r#"
dimension = 3
gravity = [0.0, 0.0, -9.81]
[[beam3d_line]]
nodes = "n"
element_ids = "e"
from = [0.0, 0.0, 0.0]
to = [0.0, 0.0, -1.0]
elements = 4
order = 2
orientation = [1.0, 0.0, 0.0]
last_node = "tip"
section = {{ ea = 1e8, ga1 = 1e8, ga2 = 1e8, gj = 1e6, ei1 = 1e6, ei2 = 1e6, rho_a = 1.0, rho_i1 = 1e-4, rho_i2 = 1e-4 }}
[[body]]
id = "weight"
position = [0.0, 0.0, -1.0]
mass = 0.5
inertia = [0.01, 0.01, 0.01]
{root}
{tip}
"#
        )
    };
    let revolute = "[[joint]]\nid = \"hinge\"\ntype = \"revolute\"\na = { ground = [0.0, 0.0, 0.0] }\nb = \"n0\"\naxis = [0.0, 1.0, 0.0]";
    let spherical = "[[joint]]\nid = \"ball\"\ntype = \"spherical\"\na = { ground = [0.0, 0.0, 0.0] }\nb = \"n0\"";
    let weld = "[[joint]]\nid = \"weld\"\ntype = \"fixed\"\na = \"tip\"\nb = \"weight\"";
    // The swing turns d1 (or d2) at w: + rho_i L.
    let exact = (9.81 * (0.5 + 0.5) / (1.0 / 3.0 + 0.5 + 0.01 + 1e-4_f64)).sqrt();
    for (name, root) in [("revolute", revolute), ("spherical", spherical)] {
        let file = load_model_str(&text(root, weld), "pendulum.toml").expect("builds");
        let sys = linearize(&file.model, &LinearizeAt::Static(StaticOptions::default()))
            .expect("linearizes about the hanging equilibrium");
        let found = modes(
            &sys,
            &ModeOptions {
                count: 4,
                ..ModeOptions::default()
            },
        )
        .unwrap();
        let w: Vec<f64> = found.modes.iter().map(|m| m.omega).collect();
        // The spherical joint leaves the spin about the vertical: w = 0
        // (-6e-3 here: the dense solver's round-off, eps w_max^2).
        let swing: Vec<f64> = w.iter().copied().filter(|w| w.abs() > 0.1).collect();
        let rel = (swing[0] - exact) / exact;
        println!("{name}: frequencies {w:.8?}, compound pendulum {exact:.8} ({rel:.2e})");
        assert!(rel.abs() < 1e-5, "{name}: {rel:.2e}");
        if name == "spherical" {
            let rel2 = (swing[1] - exact) / exact;
            assert!(rel2.abs() < 1e-5, "second swing plane {rel2:.2e}");
        }
    }
}

/// The torque-driven spin-up (models/spin_up.toml): after the hub torque
/// stops (t = 15) the energy and the axial angular momentum are constant to
/// round-off, and the angular momentum is the torque's impulse 1600; the
/// midpoint rule converges at second order.
#[test]
fn spin_up_conserves_energy_and_axial_angular_momentum() {
    let (mass, rec, free) = run_after_the_loads("spin_up", 20.0, 15.0);
    let (k0, e0) = (free[0], rec.energy[free[0]].total);
    let lz0 = angular_momentum(&mass, &rec.u[k0], &rec.v[k0])[2];
    let (mut de, mut dl) = (0.0f64, 0.0f64);
    for &k in &free {
        de = de.max((rec.energy[k].total - e0).abs() / e0);
        dl = dl.max((angular_momentum(&mass, &rec.u[k], &rec.v[k])[2] - lz0).abs() / lz0);
    }
    let impulse = 213.333_333_333_333_34 * 15.0 / 2.0;
    println!(
        "spin-up, dt 0.01, t in [15, 20]: energy {e0:.6e} (drift {de:.2e}), L_z {lz0:.8} \
         (drift {dl:.2e}; impulse {impulse}, {:.2e})",
        (lz0 - impulse) / impulse
    );
    assert!(de < 1e-12 && dl < 1e-12, "drifts {de:.2e} {dl:.2e}");
    assert!(((lz0 - impulse) / impulse).abs() < 1e-3);
    // Second order: the axial angular momentum at t = 15 against the
    // impulse (the hub torque acts on the midpoint directors, whose length
    // is 1 - O(dt^2)). The positions converge irregularly at these steps:
    // the stiff shear and rotary modes (about 1e5 rad/s) are not resolved.
    let errors: Vec<f64> = [0.04, 0.02, 0.01]
        .iter()
        .map(|&dt| {
            let r = run_model("spin_up", dt, 15.0);
            let k = r.u.len() - 1;
            (angular_momentum(&mass, &r.u[k], &r.v[k])[2] - impulse).abs() / impulse
        })
        .collect();
    let order = (errors[1] / errors[2]).log2();
    println!("spin-up: L_z(15) - impulse, relative: {errors:?}, order {order:.3}");
    assert!((order - 2.0).abs() < 0.2, "order {order}");
}

/// Kynema's converged 45-degree bend, reproduced: its regression test
/// (`static_curved_composite_beam_bending.cpp`) builds the reference axis
/// from three points (root, mid-arc, tip) given against the parameter x, so
/// its beam lies on the parabola `y(x)` through them, not on the arc. On
/// that parabola (64 quadratic elements, nodes equally spaced in x) the tip
/// displacement agrees with Kynema's 15-node spectral element
/// (-23.6459716009047, 13.7208006040058, 53.5776450626987): measured
/// 2.5e-8, -4.1e-9, 1.7e-8 relative.
#[test]
fn bend45_on_kynemas_parabola_matches_its_converged_value() {
    let (xm, ym, xt, yt) = (3.82683e+01, -7.61205e+00, 7.07107e+01, -2.92893e+01);
    // y = a x + b x^2 through (xm, ym) and (xt, yt).
    let b = (ym / xm - yt / xt) / (xm - xt);
    let a = ym / xm - b * xm;
    let s = RodSection {
        ea: 100.0e5,
        ga1: 41.6667e5,
        ga2: 41.6667e5,
        gj: 8.333e5,
        ei1: 8.333e5,
        ei2: 8.333e5,
        rho_a: 0.0,
        rho_i1: 0.0,
        rho_i2: 0.0,
    };
    let mut bld = ModelBuilder::new(3).unwrap();
    let n = 128;
    let ids: Vec<String> = (0..=n).map(|k| format!("n{k}")).collect();
    for (k, id) in ids.iter().enumerate() {
        let x = xt * k as f64 / n as f64;
        bld.beam3d_node(
            id,
            [x, a * x + b * x * x, 0.0],
            [1.0, a + 2.0 * b * x, 0.0],
            [0.0, 0.0, 1.0],
            "orientation",
        )
        .unwrap();
    }
    for k in 0..n / 2 {
        let nodes = [&ids[2 * k], &ids[2 * k + 1], &ids[2 * k + 2]].map(String::as_str);
        bld.beam3d(&format!("e{k}"), &nodes, &s, false).unwrap();
    }
    bld.clamp("root", "n0").unwrap();
    bld.point_force("P", &PointRef::entity(&ids[n]), &[0.0, 0.0, 600.0])
        .unwrap();
    let m = bld.build().unwrap();
    let u = solve(&m, 10);
    let tip = &ids[n];
    let d = [
        u[dof(&m, &format!("{tip}.x"))] - xt,
        u[dof(&m, &format!("{tip}.y"))] - yt,
        u[dof(&m, &format!("{tip}.z"))],
    ];
    let kynema = [-23.6459716009047, 13.7208006040058, 53.5776450626987];
    let rel: Vec<f64> = (0..3).map(|k| (d[k] - kynema[k]) / kynema[k]).collect();
    println!("bend45 on Kynema's parabola: {d:?}, relative to Kynema {rel:?}");
    assert!(rel.iter().all(|r| r.abs() < 1e-6), "{rel:?}");
}

/// The shear-rigid limit recovers the existing Euler–Bernoulli beam: a
/// cantilever (L = 1, EI = 1, EA = 1e6) under a tip force P = 3 EI / L^2
/// (large deflection) as 32 quadratic beam3d elements with GA = 1e8 and as
/// 32 ANCF beams (`type = "beam"`, 3-D) end at the same tip position.
#[test]
fn shear_rigid_limit_recovers_the_euler_bernoulli_beam() {
    use flexmb::model::{BeamSection, LineIds};
    let p = 3.0;
    let mut b = cantilever(32, 2, 1.0, &{
        let mut s = section(1.0, 1.0, 1.0, 1e8);
        s.ea = 1e6;
        s
    });
    b.point_force("P", &PointRef::entity("tip"), &[0.0, 0.0, -p])
        .unwrap();
    let rod = b.build().unwrap();
    let ur = solve(&rod, 10);
    let mut b = ModelBuilder::new(3).unwrap();
    let ids = LineIds {
        nodes: "a",
        elements: "b",
    };
    let section = BeamSection {
        ea: 1e6,
        ei: 1.0,
        rho_a: 0.0,
    };
    b.line_of_beams(ids, &[0.0; 3], &[1.0, 0.0, 0.0], 32, &section)
        .unwrap();
    b.clamp("root", "a0").unwrap();
    b.point_force("P", &PointRef::entity("a32"), &[0.0, 0.0, -p])
        .unwrap();
    let ancf = b.build().unwrap();
    let ua = solve(&ancf, 10);
    let r = [ur[dof(&rod, "tip.x")], ur[dof(&rod, "tip.z")]];
    let a = [ua[dof(&ancf, "a32.x")], ua[dof(&ancf, "a32.z")]];
    let diff = ((r[0] - a[0]).powi(2) + (r[1] - a[1]).powi(2)).sqrt();
    println!(
        "tip force 3 EI/L^2: beam3d tip (x, z) {r:?}, ANCF beam {a:?}, difference {diff:.2e} L"
    );
    assert!(diff < 1e-5, "{diff:.2e}");
}

/// A spatial four-bar (RSSR) with beam3d links falling under gravity
/// (models/spatial_fourbar_beams.toml): revolute joints on beam nodes to
/// the ground, spherical joints between beam nodes; midpoint with option dg
/// conserves the energy (kinetic + elastic + gravity) to round-off while the
/// rocker swings down and drags the crank round.
#[test]
fn spatial_fourbar_with_beam_links_conserves_energy() {
    let file = load_model_file(common::model_path("spatial_fourbar_beams")).expect("builds");
    let m = file.model.clone();
    let (summary, rec) = common::run_file(file, &Default::default());
    assert!(summary.failure.is_none(), "{}", summary.line());
    let e0 = rec.energy[0].total;
    let kmax = rec.energy.iter().map(|e| e.kinetic).fold(0.0, f64::max);
    let drift = rec
        .energy
        .iter()
        .map(|e| (e.total - e0).abs())
        .fold(0.0, f64::max)
        / kmax;
    let (cx, rz) = (dof(&m, "c4.x"), dof(&m, "r4.z"));
    let crank_turn = rec.u.iter().map(|u| u[cx].abs()).fold(0.0, f64::max);
    let drop = rec.u.iter().map(|u| u[rz]).fold(0.0, f64::min);
    println!(
        "spatial four-bar: max kinetic energy {kmax:.4e}, energy drift / max kinetic {drift:.2e}, \
         crank tip |x| up to {crank_turn:.4}, rocker tip down to z = {drop:.4}"
    );
    assert!(drift < 1e-12, "energy drift {drift:.2e}");
    assert!(crank_turn > 0.1 && drop < -1.0, "the mechanism moved");
}
