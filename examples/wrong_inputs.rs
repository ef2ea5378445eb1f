//! Wrong inputs come back as typed errors naming what is wrong, never a
//! panic: each is printed and its kind asserted.
//!
//! Run: `cargo run --release --example wrong_inputs`

use flexmb::input::load_model_str;
use flexmb::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let bad = BeamSection {
        ea: 1e6,
        ei: -1.0,
        rho_a: 1.0,
    };
    let ids = LineIds {
        nodes: "n",
        elements: "e",
    };
    let e = ModelBuilder::new(2)?
        .line_of_beams(ids, &[0.0; 2], &[1.0, 0.0], 4, &bad)
        .unwrap_err();
    println!("builder:  {e}");
    assert_eq!((e.what, e.id.as_str(), e.field), ("line", "n", Some("ei")));
    let text = "dimension = 2\n[[node]]\nid = \"bob\"\nposition = [1.0, 0.0, 0.0]\nmass = 1.0\n";
    let e = load_model_str(text, "bad.toml").err().expect("refused");
    println!("file:     {e}");
    assert_eq!((e.file.as_str(), e.line), ("bad.toml", Some(4)));

    let model = load_model_str(&text.replace(", 0.0]", "]"), "ok.toml")?.model;
    let e = Stepper::new(model.clone(), &IntegratorConfig::gssss().dt(-1.0))
        .err()
        .expect("refused");
    println!("settings: {e}");
    assert!(matches!(e, SimulationError::Settings(_)));
    let mut sim =
        Stepper::new(model, &IntegratorConfig::gssss().dt(1e-3))?.record(Recording::default());
    sim.advance_to(0.5)?;
    let e = sim.step(0.1).unwrap_err();
    println!("step:     {e}");
    assert!(matches!(e, StepError::StopTime { .. }));
    let e = sim.advance_to(0.2).unwrap_err();
    println!("advance:  {e}");
    assert!(matches!(e, SimulationError::Time { .. }));
    let e = sim.position("bob.z").unwrap_err();
    println!("name:     {e}");
    assert!(matches!(
        e,
        SimulationError::UnknownName { what: "DOF", .. }
    ));
    let e = sim.results().expect("recording").dof("bob.x").unwrap_err();
    println!("results:  {e}");
    assert!(matches!(e, ResultsError::NotRecorded { what: "u" }));
    Ok(())
}
