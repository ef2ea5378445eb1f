//! A 3-D double pendulum: two unit point masses on massless rods of length 1
//! (distance joints), the first hung from a 3-D ground point, released with
//! an out-of-plane velocity. The energy-conserving midpoint rule keeps the
//! total energy to round-off and the rods at their length.
//! Run: `cargo run --release --example double_pendulum_3d`
use flexmb::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut b = ModelBuilder::new(3)?;
    b.gravity(&[0.0, 0.0, -9.81])?;
    b.node("m1", &[1.0, 0.0, 0.0], Some(&[0.0, 1.0, 0.0]), 1.0)?;
    b.node("m2", &[1.0, 0.0, -1.0], Some(&[2.0, 1.0, 0.0]), 1.0)?;
    let (pin, m1, m2) = (
        PointRef::ground([0.0; 3]),
        PointRef::entity("m1"),
        PointRef::entity("m2"),
    );
    b.distance("rod1", &pin, &m1, None, DistanceKind::Length)?;
    b.distance("rod2", &m1, &m2, None, DistanceKind::Length)?;
    let what = Recording::default().with_u().with_energy();
    let mut sim = Stepper::new(b.build()?, &IntegratorConfig::gssss().dt(1e-3))?.record(what);
    sim.advance_to(2.0)?;
    let r = sim.into_results().expect("recording");

    let e = r.energy("total")?;
    let drift = e.iter().map(|x| (x - e[0]).abs()).fold(0.0, f64::max);
    let [x1, y1, z1, x2, y2, z2] =
        ["m1.x", "m1.y", "m1.z", "m2.x", "m2.y", "m2.z"].map(|n| r.dof(n));
    let (x1, y1, z1, x2, y2, z2) = (x1?, y1?, z1?, x2?, y2?, z2?);
    let k = r.len() - 1;
    let rod1 = x1[k].hypot(y1[k]).hypot(z1[k]);
    let rod2 = (x2[k] - x1[k]).hypot(y2[k] - y1[k]).hypot(z2[k] - z1[k]);
    println!(
        "{} rows; m2 ({:.6}, {:.6}, {:.6}); max |E - E0| {drift:.2e} J",
        k + 1,
        x2[k],
        y2[k],
        z2[k]
    );
    assert_eq!(r.len(), 2001);
    assert!(drift < 1e-10 * e[0].abs().max(1.0), "energy drift {drift}");
    assert!(
        (rod1 - 1.0).abs() < 1e-10 && (rod2 - 1.0).abs() < 1e-10,
        "{rod1} {rod2}"
    );
    assert!(
        y1.iter().any(|y| y.abs() > 0.1),
        "the motion leaves the x-z plane"
    );
    Ok(())
}
