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
    let end = |n: &str| r.dof(n).map(|c| c[c.len() - 1]);
    let p1 = [end("m1.x")?, end("m1.y")?, end("m1.z")?];
    let p2 = [end("m2.x")?, end("m2.y")?, end("m2.z")?];
    let rod1 = p1[0].hypot(p1[1]).hypot(p1[2]);
    let rod2 = (p2[0] - p1[0]).hypot(p2[1] - p1[1]).hypot(p2[2] - p1[2]);
    let n = r.len();
    println!("{n} rows; m2 at {p2:.6?}; max |E - E0| {drift:.2e} J, rods {rod1} {rod2}");
    assert!(n == 2001 && drift < 1e-10 * e[0].abs().max(1.0));
    assert!((rod1 - 1.0).abs() < 1e-10 && (rod2 - 1.0).abs() < 1e-10);
    assert!(r.dof("m1.y")?.iter().any(|y| y.abs() > 0.1)); // out of the x-z plane
    Ok(())
}
