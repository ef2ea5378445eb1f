//! A parameter sweep in code, in parallel with rayon: a mass on a spring
//! (mass 2 kg, stiffness k from 10 to 640 N/m), displaced by 0.1 m and
//! released, stepped for 0.5 s with dt = 5 ms. Each case builds its own
//! model and stepping handle.
//!
//! The midpoint rule on a linear oscillator is the trapezoidal rule: its
//! discrete solution is exactly `x_n = x0 cos(n W dt)` with the numerical
//! frequency `W = (2 / dt) atan(w dt / 2)` (no amplitude error, a phase
//! lag), so each case is checked against that closed form to round-off.
//!
//! Run: `cargo run --release --example sweep`

use rayon::prelude::*;

use flexmb::integrate::IntegratorConfig;
use flexmb::model::{ModelBuilder, PointRef, SpringDamper};
use flexmb::run::{SimulationError, Stepper};

const MASS: f64 = 2.0;
const REST: f64 = 1.0; // free length of the spring (m)
const X0: f64 = 0.1; // initial stretch (m)

/// The displacement after 100 steps, and the closed form.
fn case(stiffness: f64) -> Result<(f64, f64), Box<dyn std::error::Error + Send + Sync>> {
    let mut b = ModelBuilder::new(2)?;
    b.node("mass", &[REST + X0, 0.0], None, MASS)?;
    let spring = SpringDamper {
        stiffness,
        free_length: Some(REST),
        ..SpringDamper::default()
    };
    b.spring_damper(
        "spring",
        &PointRef::ground([0.0, 0.0]),
        &PointRef::entity("mass"),
        spring,
    )?;
    let omega = (stiffness / MASS).sqrt();
    let dt = 0.005;
    let mut sim = Stepper::new(b.build()?, &IntegratorConfig::gssss().dt(dt))?;
    sim.advance_to(0.5)?;
    assert_eq!(sim.steps(), 100);
    let x: Result<f64, SimulationError> = sim.position("mass.x");
    let exact = X0 * (100.0 * 2.0 * (omega * dt / 2.0).atan()).cos();
    Ok((x? - REST, exact))
}

fn main() {
    let stiffnesses: Vec<f64> = (0..7).map(|i| 10.0 * 2f64.powi(i)).collect();
    let results: Vec<_> = stiffnesses
        .par_iter()
        .map(|&k| (k, case(k).expect("the case runs")))
        .collect();
    for (k, (x, exact)) in &results {
        println!("k = {k:6.1} N/m: x(0.5 s) = {x:+.9e} m, closed form {exact:+.9e} m");
        assert!(
            (x - exact).abs() < 1e-12,
            "k = {k}: x(0.5 s) = {x}, expected {exact}"
        );
    }
}
