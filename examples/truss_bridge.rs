//! A Pratt truss bridge of 6 panels under equal loads at the inner bottom
//! nodes, solved for static equilibrium (`flexmb::statics`). The bridge is
//! statically determinate: each support carries half the load, and the
//! bottom chord next to midspan carries M / h (M the bending moment of a
//! simply supported beam at the opposite node), by the method of sections.
//!
//! Run: `cargo run --release --example truss_bridge`

use flexmb::load::TimeFunction;
use flexmb::model::{ModelBuilder, PointRef, SliderKind, TrussSection};
use flexmb::statics::{solve_static, StaticOptions};

const PANELS: usize = 6;
const WIDTH: f64 = 4.0; // panel width (m)
const HEIGHT: f64 = 5.0; // truss height (m)
const EA: f64 = 2e10; // axial stiffness (N)
const LOAD: f64 = 1e5; // load at each inner bottom node (N)

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = PANELS;
    let mut b = ModelBuilder::new(2)?;
    for i in 0..=n {
        b.node(&format!("b{i}"), &[i as f64 * WIDTH, 0.0], None, 0.0)?;
    }
    for i in 1..n {
        b.node(&format!("t{i}"), &[i as f64 * WIDTH, HEIGHT], None, 0.0)?;
    }
    let mut members = Vec::new();
    for i in 0..n {
        members.push((format!("b{i}"), format!("b{}", i + 1)));
        // Pratt diagonals fall toward midspan; the end posts close the ends.
        let diagonal = match i {
            0 => ("b0".into(), "t1".into()),
            i if i == n - 1 => (format!("t{i}"), format!("b{n}")),
            i if i < n / 2 => (format!("t{i}"), format!("b{}", i + 1)),
            i => (format!("b{i}"), format!("t{}", i + 1)),
        };
        members.push(diagonal);
    }
    for i in 1..n {
        members.push((format!("b{i}"), format!("t{i}")));
        if i + 1 < n {
            members.push((format!("t{i}"), format!("t{}", i + 1)));
        }
    }
    for (a, c) in &members {
        b.truss(&format!("{a}-{c}"), a, c, &TrussSection::massless(EA), None)?;
    }
    // A pin at the left end, a roller (on the line y = 0) at the right end.
    b.ground_pin("pin", &PointRef::entity("b0"), &[0.0, 0.0])?;
    let roller_line = PointRef::ground([n as f64 * WIDTH, 0.0]);
    b.slider(
        "roller",
        &PointRef::entity(&format!("b{n}")),
        &roller_line,
        [0.0, 1.0],
        SliderKind::PointOnLine,
    )?;
    for i in 1..n {
        let at = PointRef::entity(&format!("b{i}"));
        let force = [0.0, -LOAD, 0.0];
        b.point_load(
            &format!("P{i}"),
            "point_force",
            &at,
            [[0.0; 3]; 3],
            force,
            TimeFunction::Constant,
        )?;
    }
    let model = b.build()?;
    let solution = solve_static(&model, &StaticOptions::default())?;

    // Support reactions: the multipliers of the pin's y row and the roller.
    let names = model.multiplier_names();
    let reaction = |name: &str| solution.lambda[names.iter().position(|n| n == name).unwrap()];
    let (r_pin, r_roller) = (reaction("pin[1]").abs(), reaction("roller[0]").abs());
    // Force in the bottom chord b3-b4 from its deformed length.
    let coord = |name: String| {
        let k = model.dofs.names().iter().position(|d| *d == name).unwrap();
        solution.u[k]
    };
    let (h, m) = (n / 2, n / 2 + 1);
    let dx = coord(format!("b{m}.x")) - coord(format!("b{h}.x"));
    let dy = coord(format!("b{m}.y")) - coord(format!("b{h}.y"));
    let chord_force = EA * (dx.hypot(dy) - WIDTH) / WIDTH;
    let sag = -coord(format!("b{h}.y"));

    // Method of sections: the cut through panel b3-b4 also cuts t3-t4 and
    // the diagonal b3-t4, which meet at t4 (x = 4 w, y = h), so the chord
    // force is M(4 w) / h with M(x) = R x - sum of P (x - x_i) for x_i < x.
    let total = (n - 1) as f64 * LOAD;
    let arm = m as f64 * WIDTH;
    let moment = total / 2.0 * arm - (1..m).map(|i| LOAD * (arm - i as f64 * WIDTH)).sum::<f64>();
    let expected = moment / HEIGHT;
    println!(
        "reactions {r_pin:.6e} N and {r_roller:.6e} N (expected {:.6e} N each); \
         midspan bottom chord force {chord_force:.6e} N (expected {expected:.6e} N); \
         midspan sag {sag:.3e} m; {} Newton iterations",
        total / 2.0,
        solution.iterations.iter().sum::<u32>()
    );
    assert!((r_pin - total / 2.0).abs() < 1e-9 * total);
    assert!((r_roller - total / 2.0).abs() < 1e-9 * total);
    // Small strains (~1e-5): the geometrically exact truss agrees with the
    // linear method of sections to O(strain).
    assert!(
        (chord_force - expected).abs() < 1e-4 * expected,
        "{chord_force}"
    );
    Ok(())
}
