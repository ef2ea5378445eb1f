//! A run's HDF5 file read back: the shipped double pendulum (seed 000
//! §4.1.1) runs to t = 2 s into an HDF5 file, which `read_hdf5` reads back;
//! the recorded trajectory is the stepping handle's to the last bit, the
//! energy is conserved (midpoint rule, option 2), the pendulum's bars keep
//! their unit length.
//!
//! Run: `cargo run --release --example read_hdf5`

use flexmb::input::load_model_file;
use flexmb::integrate::IntegratorSpec;
use flexmb::output::read_hdf5;
use flexmb::run::{Simulation, Stepper};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = env!("CARGO_MANIFEST_DIR");
    let file = load_model_file(format!("{root}/models/double_pendulum.toml"))?;
    let over = IntegratorSpec {
        t_end: Some(2.0),
        ..IntegratorSpec::default()
    };
    let config = file.integrator(&over)?;
    let out = std::path::Path::new(root).join("target/examples/double_pendulum.h5");
    std::fs::create_dir_all(out.parent().expect("a directory"))?;
    let summary = Simulation::new(file.model).run_to_file(
        &config,
        &file.text,
        &file.output,
        Some(&out),
        &mut |_| {},
    )?;
    println!("{}", summary.line());

    let run = read_hdf5(&out)?;
    let col = |name: &str| run.dof_names.iter().position(|n| n == name).expect("a DOF");
    let (x2, y2) = (col("pendulum2.x"), col("pendulum2.y"));
    let last = run.len() - 1;
    let e = &run.energy;
    let drift = e
        .iter()
        .map(|r| (r.total - e[0].total).abs())
        .fold(0.0, f64::max);
    println!(
        "{}: status {}, {} records to t = {}, tip ({:.9}, {:.9}), max |E - E0| = {drift:.2e}",
        out.display(),
        run.status,
        run.len(),
        run.time[last],
        run.u[last][x2],
        run.u[last][y2],
    );
    assert_eq!(run.status, "completed");
    assert!(drift < 1e-10 * e[0].total.abs().max(1.0));
    let bar = |k: usize| {
        let (x1, y1) = (run.u[k][col("pendulum1.x")], run.u[k][col("pendulum1.y")]);
        ((run.u[k][x2] - x1).hypot(run.u[k][y2] - y1), x1.hypot(y1))
    };
    let (l1, l2) = bar(last);
    assert!((l1 - 1.0).abs() < 1e-12 && (l2 - 1.0).abs() < 1e-12);

    // The file holds what the stepping handle computes.
    let file = load_model_file(format!("{root}/models/double_pendulum.toml"))?;
    let mut sim = Stepper::new(file.model, &config)?;
    sim.advance_to(2.0)?;
    assert_eq!(sim.state().u, run.u[last]);
    Ok(())
}
