//! `flexmb check`: validate a model file and print its sizes, sparsity and solver.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use flexmb::integrate::IntegratorSpec;
use flexmb::run::Simulation;

use super::{load, step_error_code, EXIT_OUTPUT};

#[derive(Args)]
pub(crate) struct CheckArgs {
    /// Model file (TOML).
    model: PathBuf,
    /// Set a model-file value before reading it, e.g. `--set generator.elements=16`
    /// or `--set integrator.dt=1e-5` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Write the initial-acceleration matrix [M B^T; B 0] (stiffness and damping
    /// slots stored as zeros) to this Matrix Market file; the Newton matrix of a
    /// step is written by `run --export-matrix STEP:FILE`.
    #[arg(long)]
    matrix_market: Option<PathBuf>,
}

pub(crate) fn check(args: &CheckArgs) -> ExitCode {
    let file = match load(&args.model, &args.set) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let config = match file.integrator(&IntegratorSpec::default()) {
        Ok(c) => Some(c),
        Err(e) => {
            eprintln!("warning: {e}");
            None
        }
    };
    let sim = Simulation::new(file.model);
    let m = &sim.model;
    let pattern = sim.asm.pattern();
    let dim = pattern.dim;
    outln!("model: {}", file.file);
    if let Some(title) = &file.title {
        outln!("title: {title}");
    }
    outln!(
        "{} DOFs, {} constraint rows, {} elements, {} joints",
        m.n_dofs(),
        m.n_constraints(),
        m.n_elements(),
        m.n_joints()
    );
    outln!(
        "saddle-point matrix: {dim} x {dim}, {} stored entries ({:.3} % dense, {:.1} per row)",
        pattern.nnz(),
        100.0 * pattern.nnz() as f64 / (dim as f64 * dim as f64).max(1.0),
        pattern.nnz() as f64 / dim.max(1) as f64
    );
    match flexmb::linalg::SaddlePointSolver::new(pattern, false) {
        Ok(s) => outln!("linear solver: {}", s.describe()),
        Err(e) => outln!("linear solver: {e}"),
    }
    if let Some(c) = &config {
        match c.nominal_steps() {
            Some(steps) => outln!(
                "integrator: {} | dt {} | t_end {} | {steps} steps",
                c.label(),
                c.dt,
                c.t_end,
            ),
            None => outln!(
                "integrator: {} | t_end {} | adaptive steps",
                c.label(),
                c.t_end
            ),
        }
    }
    if let Some(path) = &args.matrix_market {
        let matrix = sim.mechanics().initial_saddle_matrix();
        if let Err(e) = sprs::io::write_matrix_market(path, &matrix) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::from(EXIT_OUTPUT);
        }
        outln!(
            "wrote the initial saddle-point matrix to {}",
            path.display()
        );
    }
    // What `run` does at step 0: build the method, check (or project) the
    // initial state and factor the initial saddle-point matrix.
    if let Some(c) = &config {
        match sim.start(c) {
            Ok(start) => outln!("initial state: {}", start.describe()),
            Err(e) => {
                eprintln!("error: {e}");
                return step_error_code(&e);
            }
        }
    }
    ExitCode::SUCCESS
}
