//! A run's HDF5 file read back: the shipped double pendulum runs to t = 2 s
//! into an HDF5 file, which `read_hdf5` reads back as `Results`; the recorded
//! trajectory is the stepping handle's to the last bit, the energy is
//! conserved (midpoint rule, option 2), the bars keep their unit length.
//!
//! Run: `cargo run --release --example read_hdf5`

use flexmb::input::load_model_file;
use flexmb::integrate::IntegratorSpec;
use flexmb::output::{read_hdf5, RunStatus};
use flexmb::run::{Simulation, Stepper};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = format!("{}/models/double_pendulum.toml", env!("CARGO_MANIFEST_DIR"));
    let file = load_model_file(&path)?;
    let config = file.integrator(&IntegratorSpec {
        t_end: Some(2.0),
        ..Default::default()
    })?;
    let out = std::env::temp_dir().join("flexmb-example-double-pendulum.h5");
    let sim = Simulation::new(file.model.clone());
    sim.run_to_file(&config, &file.text, &file.output, Some(&out), &mut |_| {})?;

    let run = read_hdf5(&out)?;
    let (x1, y1) = (run.dof("pendulum1.x")?, run.dof("pendulum1.y")?);
    let (x2, y2) = (run.dof("pendulum2.x")?, run.dof("pendulum2.y")?);
    let e = run.energy("total")?;
    let drift = e.iter().map(|x| (x - e[0]).abs()).fold(0.0, f64::max);
    let last = run.len() - 1;
    println!(
        "{} rows to t = {}, tip ({:.9}, {:.9}), max |E - E0| = {drift:.2e}",
        run.len(),
        run.time[last],
        x2[last],
        y2[last]
    );
    assert_eq!(run.status, Some(RunStatus::Completed));
    assert!(drift < 1e-10 * e[0].abs().max(1.0));
    let l2 = (x2[last] - x1[last]).hypot(y2[last] - y1[last]);
    assert!((l2 - 1.0).abs() < 1e-12 && (x1[last].hypot(y1[last]) - 1.0).abs() < 1e-12);

    // The file holds what the stepping handle computes.
    let mut stepper = Stepper::new(file.model, &config)?;
    stepper.advance_to(2.0)?;
    assert_eq!(stepper.state().u, run.u.row(last));
    Ok(())
}
