//! Builders that cannot be misread: beam and truss sections by name or from
//! a material and a shape, a line of beams in code and in model files
//! (`[[line]]`), `clamp`, 3-D ground points, `Body3dSpec::new`, the
//! distance joint's form as an enum; each with its bad input refused by a
//! typed error naming the entity and field (and the file and line).

mod common;

use common::model_path;
use flexmb::input::{load_model_file, load_model_str};
use flexmb::output::Recording;
use flexmb::prelude::*;

const STEEL: BeamSection = BeamSection {
    ea: 2.1e7,
    ei: 175.0,
    rho_a: 0.785,
};
const IDS: LineIds = LineIds {
    nodes: "n",
    elements: "e",
};

fn run(model: Model, config: &IntegratorConfig, t: f64) -> Results {
    let mut s = Stepper::new(model, config)
        .unwrap()
        .record(Recording::all());
    s.advance_to(t).unwrap();
    s.into_results().unwrap()
}

fn bits(x: &[f64]) -> Vec<u64> {
    x.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn the_line_file_is_the_long_cantilever_bit_for_bit() {
    let long = load_model_file(model_path("cantilever")).unwrap();
    let short = load_model_file(model_path("cantilever_line")).unwrap();
    assert!(
        short.text.lines().count() < 50,
        "{}",
        short.text.lines().count()
    );
    assert_eq!(long.model.dofs.names(), short.model.dofs.names());
    assert_eq!(bits(&long.model.u0), bits(&short.model.u0));
    assert_eq!(
        long.model.multiplier_names(),
        short.model.multiplier_names()
    );
    let config = long
        .integrator(&IntegratorSpec {
            t_end: Some(2e-3),
            ..Default::default()
        })
        .unwrap();
    let a = run(long.model, &config, 2e-3);
    let b = run(short.model.clone(), &config, 2e-3);
    assert_eq!(a.len(), 21);
    assert_eq!(bits(a.u.as_slice()), bits(b.u.as_slice()));
    assert_eq!(bits(a.lambda.as_slice()), bits(b.lambda.as_slice()));
    assert!(a == b);

    // The same line built in code, clamped and loaded as the file does.
    let mut m = ModelBuilder::new(2).unwrap();
    m.gravity(&[0.0, 0.0]).unwrap();
    let nodes = m
        .line_of_beams(IDS, &[0.0, 0.0], &[1.0, 0.0], 10, &STEEL)
        .unwrap();
    assert_eq!(nodes.len(), 11);
    m.ground_pin("root", &PointRef::entity("n0"), &[0.0, 0.0])
        .unwrap();
    m.slope("root_slope", "n0", None, Some(&[1.0, 0.0]))
        .unwrap();
    m.point_force("tip", &PointRef::entity("n10"), &[0.0, -1.0])
        .unwrap();
    let c = run(m.build().unwrap(), &config, 2e-3);
    assert_eq!(bits(c.u.as_slice()), bits(b.u.as_slice()));
    assert!(c == b);
}

#[test]
fn line_of_beams_refuses_bad_input() {
    let try_line = |from: &[f64], to: &[f64], n: usize, s: BeamSection| {
        let mut b = ModelBuilder::new(2).unwrap();
        b.line_of_beams(IDS, from, to, n, &s).unwrap_err()
    };
    let e = try_line(&[0.0, 0.0], &[1.0, 0.0], 0, STEEL);
    assert_eq!((e.what, e.field), ("line", Some("elements")));
    let e = try_line(&[0.0, 0.0], &[1.0, 0.0], usize::MAX, STEEL);
    assert_eq!(e.field, Some("elements"));
    assert!(e.to_string().contains("1 to 100000 elements"), "{e}");
    let e = try_line(&[0.5, 0.0], &[0.5, 0.0], 4, STEEL);
    assert_eq!(e.field, Some("to"));
    assert!(e.to_string().contains("no length"), "{e}");
    let e = try_line(
        &[0.0, 0.0],
        &[1.0, 0.0],
        4,
        BeamSection { ea: -1.0, ..STEEL },
    );
    assert_eq!(e.field, Some("ea"));
    assert!(e.to_string().contains("must be positive, got -1"), "{e}");
    let e = try_line(
        &[0.0, 0.0],
        &[1.0, 0.0],
        4,
        BeamSection { ei: 0.0, ..STEEL },
    );
    assert_eq!(e.field, Some("ei"));
    let e = try_line(
        &[0.0, 0.0],
        &[1.0, 0.0],
        4,
        BeamSection {
            rho_a: -0.1,
            ..STEEL
        },
    );
    assert_eq!(e.field, Some("rho_a"));
    let e = try_line(&[0.0, 0.0], &[f64::NAN, 0.0], 4, STEEL);
    assert_eq!(e.field, Some("to"));
    let e = try_line(&[0.0, 0.0, 0.0], &[1.0, 0.0], 4, STEEL);
    assert_eq!(e.field, Some("from"));
    // Ids taken by the line are refused for the next entity.
    let mut b = ModelBuilder::new(2).unwrap();
    b.line_of_beams(IDS, &[0.0, 0.0], &[1.0, 0.0], 2, &STEEL)
        .unwrap();
    assert!(b
        .line_of_beams(IDS, &[0.0, 1.0], &[1.0, 1.0], 2, &STEEL)
        .is_err());
    assert!(b.node("n1", &[2.0, 0.0], None, 1.0).is_err());
}

/// The cantilever_line file with `from` replaced by `line`.
fn line_file(replace: &str, with: &str) -> String {
    let text = std::fs::read_to_string(model_path("cantilever_line")).unwrap();
    assert!(text.contains(replace));
    text.replacen(replace, with, 1)
}

#[test]
fn model_file_lines_name_file_line_and_field() {
    let line_of =
        |text: &str, needle: &str| text.lines().position(|l| l.starts_with(needle)).unwrap() + 1;
    for (replace, with, needle, says) in [
        (
            "elements = 10",
            "elements = 0",
            "elements",
            "field `elements`",
        ),
        ("to = [1.0, 0.0]", "to = [0.0, 0.0]", "to =", "field `to`"),
        ("ea = 2.1e7", "ea = -2.1e7", "section", "section `ea`"),
        ("ei = 175.0", "ei = 0.0", "section", "section `ei`"),
        (
            "rho_a = 0.785",
            "rho_a = -1.0",
            "section",
            "section `rho_a`",
        ),
    ] {
        let text = line_file(replace, with);
        let e = match load_model_str(&text, "line.toml") {
            Err(e) => e,
            Ok(_) => panic!("{with} was accepted"),
        };
        assert_eq!(e.file, "line.toml");
        assert_eq!(e.line, Some(line_of(&text, needle)), "{with}: {e}");
        assert!(
            e.to_string().contains(says) && e.to_string().contains("line 'n'"),
            "{with}: {e}"
        );
    }
    // Unknown and negative fields are refused by the schema, with their line.
    let text = line_file("elements = 10", "elements = -3");
    assert!(load_model_str(&text, "line.toml").is_err());
    let text = line_file("elements = 10", "elements = 10\nsegments = 3");
    let e = load_model_str(&text, "line.toml").err().unwrap();
    assert!(e.to_string().contains("segments"), "{e}");
}

#[test]
fn sections_from_a_material_and_a_shape() {
    // The cantilever's 10 mm x 10 mm steel strip.
    let square = Shape::Rectangle {
        width: 0.01,
        height: 0.01,
    };
    let s = BeamSection::from_material(210e9, 7850.0, square).unwrap();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
    assert!(
        close(s.ea, 2.1e7) && close(s.ei, 175.0) && close(s.rho_a, 0.785),
        "{s:?}"
    );
    let pi = std::f64::consts::PI;
    let c = BeamSection::from_material(1.0, 1.0, Shape::Circle { diameter: 2.0 }).unwrap();
    assert!(close(c.ea, pi) && close(c.ei, pi / 4.0) && close(c.rho_a, pi));
    let t = BeamSection::from_material(
        1.0,
        2.0,
        Shape::Tube {
            outer: 2.0,
            inner: 1.0,
        },
    )
    .unwrap();
    assert!(close(t.ea, 0.75 * pi) && close(t.ei, 15.0 * pi / 64.0) && close(t.rho_a, 1.5 * pi));
    let solid = Shape::Tube {
        outer: 2.0,
        inner: 0.0,
    };
    assert_eq!(
        solid.properties().unwrap(),
        Shape::Circle { diameter: 2.0 }.properties().unwrap()
    );
    let truss = TrussSection::from_material(210e9, 7850.0, square).unwrap();
    assert!(close(truss.ea, 2.1e7) && close(truss.rho_a, 0.785));
    // Bad sizes and materials.
    let e = Shape::Tube {
        outer: 1.0,
        inner: 1.0,
    }
    .properties()
    .unwrap_err();
    assert_eq!(e.field, Some("inner"));
    let e = Shape::Rectangle {
        width: -1.0,
        height: 1.0,
    }
    .properties()
    .unwrap_err();
    assert_eq!(e.field, Some("width"));
    assert_eq!(
        Shape::Circle { diameter: 0.0 }
            .properties()
            .unwrap_err()
            .field,
        Some("diameter")
    );
    assert_eq!(
        BeamSection::from_material(-1.0, 1.0, square)
            .unwrap_err()
            .field,
        Some("e")
    );
    assert_eq!(
        TrussSection::from_material(1.0, -1.0, square)
            .unwrap_err()
            .field,
        Some("rho")
    );
    // A beam element refuses a bad section.
    let mut b = ModelBuilder::new(2).unwrap();
    b.beam_node("a", &[0.0, 0.0], &[1.0, 0.0], None, None, 0.0)
        .unwrap();
    b.beam_node("b", &[1.0, 0.0], &[1.0, 0.0], None, None, 0.0)
        .unwrap();
    let e = b
        .beam("e", "a", "b", &BeamSection { ei: -1.0, ..STEEL }, None)
        .unwrap_err();
    assert_eq!((e.what, e.field), ("element", Some("ei")));
    b.beam("e", "a", "b", &STEEL, None).unwrap();
}

#[test]
fn clamp_holds_a_beam_end_and_refuses_bodies() {
    let mut b = ModelBuilder::new(2).unwrap();
    b.gravity(&[0.0, -9.81]).unwrap();
    let nodes = b
        .line_of_beams(IDS, &[0.0, 0.0], &[1.0, 0.0], 4, &STEEL)
        .unwrap();
    b.clamp("root", &nodes[0]).unwrap();
    b.body2d("bar", Body2d::new(1.0, 0.1)).unwrap();
    let e = b.clamp("c2", "bar").unwrap_err();
    assert!(e.to_string().contains("rigid body"), "{e}");
    assert_eq!(b.clamp("c3", "nowhere").unwrap_err().field, Some("node"));
    let model = b.build().unwrap();
    // A ground pin (2 rows) and a slope joint (1 row in 2-D).
    assert_eq!(
        model.multiplier_names(),
        ["root[0]", "root[1]", "root_slope[0]"]
    );
    let config = IntegratorConfig::gssss().dt(1e-4);
    let r = run(model, &config, 1e-2);
    let root = r.dof("n0.x").unwrap();
    assert!(root.iter().all(|x| x.abs() < 1e-12));
    assert!(r.dof("n4.y").unwrap()[100] < 0.0); // it sags
}

#[test]
fn three_d_ground_points_bodies_and_distance_forms() {
    // A 3-D spherical pendulum of length 1 on a distance joint to a 3-D
    // ground point, both forms: the same motion.
    let pendulum = |form: DistanceKind| {
        let mut b = ModelBuilder::new(3).unwrap();
        b.gravity(&[0.0, 0.0, -9.81]).unwrap();
        b.body3d(
            "bob",
            &Body3dSpec::new(1.0, [0.01; 3])
                .at([1.0, 0.0, 2.0])
                .moving([0.0, 1.0, 0.0], [0.0; 3]),
        )
        .unwrap();
        b.distance(
            "rod",
            &PointRef::ground([0.0, 0.0, 2.0]),
            &PointRef::entity("bob"),
            None,
            form,
        )
        .unwrap();
        let config = IntegratorConfig::gssss().dt(1e-3);
        run(b.build().unwrap(), &config, 0.2)
    };
    let (l, q) = (
        pendulum(DistanceKind::Length),
        pendulum(DistanceKind::Quadratic),
    );
    let (x, y, z) = (
        l.dof("bob.x").unwrap(),
        l.dof("bob.y").unwrap(),
        l.dof("bob.z").unwrap(),
    );
    let k = l.len() - 1;
    assert!((x[k].hypot(y[k]).hypot(z[k] - 2.0) - 1.0).abs() < 1e-9);
    assert!(z[k] < 2.0 && y[k] > 0.0);
    let zq = q.dof("bob.z").unwrap();
    assert!((zq[k] - z[k]).abs() < 1e-6);
    assert_eq!(DistanceKind::default(), DistanceKind::Length);
    let d = Body3dSpec::default();
    assert_eq!(
        (d.mass, d.orientation, d.position),
        (1.0, [1.0, 0.0, 0.0, 0.0], [0.0; 3])
    );
}

#[test]
fn truss_sections_and_slider_kinds_are_honoured() {
    const SECTION: TrussSection = TrussSection {
        ea: 10.0,
        rho_a: 0.5,
    };
    // Two 1 kg nodes 2 m apart.
    let two_nodes = || {
        let mut b = ModelBuilder::new(2).unwrap();
        b.node("a", &[0.0, 0.0], None, 1.0).unwrap();
        b.node("c", &[2.0, 0.0], None, 1.0).unwrap();
        b
    };
    let mut b = two_nodes();
    // The section's values reach the element, named as in model files.
    let bad = TrussSection {
        ea: -1.0,
        rho_a: 0.5,
    };
    let e = b.truss("t", "a", "c", &bad, None).unwrap_err();
    assert_eq!((e.id.as_str(), e.field), ("t", Some("ea")), "{e}");
    let e = b
        .truss(
            "t",
            "a",
            "c",
            &TrussSection {
                ea: 1.0,
                rho_a: -0.5,
            },
            None,
        )
        .unwrap_err();
    assert_eq!(e.field, Some("mass_per_length"), "{e}");
    assert_eq!(TrussSection::massless(3.0).rho_a, 0.0);
    b.truss("t", "a", "c", &SECTION, None).unwrap();
    // The truss's own mass (rho A L = 1 kg) joins the nodes' 2 kg: 1^T M 1
    // counts it once per direction.
    let mut m = two_nodes();
    m.truss("t", "a", "c", &SECTION, None).unwrap();
    let model = m.build().unwrap();
    let asm = flexmb::assembly::Assembler::new(&model);
    let mut m1 = vec![0.0; 4];
    asm.mass_mul_add(&[1.0; 4], &mut m1);
    let total: f64 = m1.iter().sum();
    assert!((total / 2.0 - 3.0).abs() < 1e-12, "{total}");
    // A prismatic slider locks a rotation: a node has none to lock.
    let (node, line) = (PointRef::entity("c"), PointRef::ground([0.0, 0.0]));
    let e = b
        .slider("s", &node, &line, [0.0, 1.0], SliderKind::Prismatic)
        .unwrap_err();
    assert!(e.to_string().contains("rigid body"), "{e}");
    b.slider("s", &node, &line, [0.0, 1.0], SliderKind::default())
        .unwrap();
    let model = b.build().unwrap();
    assert_eq!(flexmb::assembly::Assembler::new(&model).n_constraints(), 1);
    assert_eq!(Body2d::default(), Body2d::new(1.0, 1.0));
}
