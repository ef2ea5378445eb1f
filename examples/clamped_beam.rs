//! A steel rod (1 m, 10 mm diameter) clamped at one end and released under
//! gravity, as 10 beam elements from `line_of_beams`; the tip's history is
//! an array of the recorded `Results`. It swings about the static deflection
//! q L^4 / (8 EI) (q = rho A g) to about twice it, half a first-mode period
//! (omega_1 = 1.8751^2 sqrt(EI / (rho A L^4))) after the release.
//! Run: `cargo run --release --example clamped_beam`
use flexmb::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rod = BeamSection::from_material(210e9, 7850.0, Shape::Circle { diameter: 0.01 })?;
    let mut b = ModelBuilder::new(2)?;
    b.gravity(&[0.0, -9.81])?;
    let ids = LineIds {
        nodes: "n",
        elements: "e",
    };
    let nodes = b.line_of_beams(ids, &[0.0, 0.0], &[1.0, 0.0], 10, &rod)?;
    b.clamp("root", &nodes[0])?;
    let what = Recording::default().with_u();
    let mut sim = Stepper::new(b.build()?, &IntegratorConfig::gssss().dt(2e-4))?.record(what);
    sim.advance_to(0.15)?;
    let results = sim.into_results().expect("recording");
    let tip: Vec<f64> = results.dof("n10.y")?; // one value per recorded step

    let w_static = rod.rho_a * 9.81 / (8.0 * rod.ei);
    let t_half = std::f64::consts::PI / (1.8751_f64.powi(2) * (rod.ei / rod.rho_a).sqrt());
    let low = tip.iter().fold(0.0_f64, |m, &y| m.min(y));
    let t_low = results.time[tip.iter().position(|&y| y == low).unwrap_or(0)];
    let (peak, rows) = (-low / w_static, tip.len());
    println!("{rows} rows; tip lowest {low:.3e} m = {peak:.3} x static at t = {t_low} s");
    assert!(rows == 751 && tip[0] == 0.0);
    assert!((peak - 2.0).abs() < 0.1, "peak {peak} x static");
    assert!(
        (t_low / t_half - 1.0).abs() < 0.1,
        "at {t_low}, half period {t_half}"
    );
    Ok(())
}
