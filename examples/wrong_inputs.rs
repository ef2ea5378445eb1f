//! Wrong inputs come back as typed errors naming what is wrong, never a
//! panic: each is printed and its kind asserted.
//! Run: `cargo run --release --example wrong_inputs`

use flexmb::input::load_model_str;
use flexmb::prelude::*;
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let shape = Shape::Circle { diameter: -0.01 };
    let e = BeamSection::from_material(210e9, 7850.0, shape).unwrap_err();
    println!("section:  {e}");
    assert_eq!((e.what, e.field), ("section", Some("diameter")));
    let text = "dimension = 2\n[[node]]\nid = \"bob\"\nposition = [1.0, 0.0, 0.0]\nmass = 1.0\n";
    let e = load_model_str(text, "bad.toml").err().expect("refused");
    println!("file:     {e}");
    assert_eq!((e.file.as_str(), e.line), ("bad.toml", Some(4)));

    let model = load_model_str(&text.replace(", 0.0]", "]"), "ok.toml")?.model;
    let e = Stepper::new(model.clone(), &IntegratorConfig::gssss().dt(-1.0)).err();
    println!("settings: {}", e.as_ref().expect("refused"));
    assert!(matches!(e, Some(SimulationError::Settings(_))));
    let config = IntegratorConfig::gssss().dt(1e-3);
    let mut sim = Stepper::new(model, &config)?.record(Recording::default());
    sim.advance_to(0.5)?;
    let e = sim.step(0.1).unwrap_err();
    println!("step:     {e}");
    assert!(matches!(e, StepError::StopTime { .. }));
    let e = sim.advance_to(0.2).unwrap_err();
    println!("advance:  {e}");
    assert!(matches!(e, SimulationError::Time { .. }));
    let e = sim.position("bob.z").unwrap_err();
    println!("name:     {e}");
    assert!(matches!(e, SimulationError::UnknownName { .. }));
    let e = sim.results().expect("recording").dof("bob.x").unwrap_err();
    println!("results:  {e}");
    assert!(matches!(e, ResultsError::NotRecorded { what: "u" }));
    Ok(())
}
