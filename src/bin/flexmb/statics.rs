//! `flexmb static`: load-stepped static equilibrium.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{load, EXIT_NEWTON, EXIT_SINGULAR, EXIT_USAGE};

#[derive(Args)]
pub(crate) struct StaticArgs {
    /// Model file (TOML).
    model: PathBuf,
    /// Set a model-file value before reading it, e.g. `--set generator.elements=16`
    /// or `--set integrator.dt=1e-5` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Number of load steps.
    #[arg(long, default_value_t = 10)]
    steps: u32,
    /// Relative Newton tolerance.
    #[arg(long, default_value_t = 1e-10)]
    tol: f64,
    /// Newton iterations allowed per load step.
    #[arg(long, default_value_t = 30)]
    max_iter: u32,
    /// Time at which the loads' time functions are evaluated.
    #[arg(long, default_value_t = 0.0)]
    time: f64,
    /// Print only the DOFs of these nodes/bodies (repeatable; default all).
    #[arg(long)]
    node: Vec<String>,
}

pub(crate) fn statics(args: &StaticArgs) -> ExitCode {
    use flexmb::statics::{solve_static, StaticError, StaticOptions};
    let file = match load(&args.model, &args.set) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let m = &file.model;
    for id in &args.node {
        let prefix = format!("{id}.");
        if !m.dofs.names().iter().any(|n| n.starts_with(&prefix)) {
            eprintln!("error: --node {id}: no node or body of that id");
            return ExitCode::from(EXIT_USAGE);
        }
    }
    let opts = StaticOptions {
        steps: args.steps.max(1),
        tol: args.tol,
        max_iter: args.max_iter,
        time: args.time,
    };
    let sol = match solve_static(m, &opts) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(match e {
                StaticError::Singular { .. } => EXIT_SINGULAR,
                StaticError::NoConvergence { .. } => EXIT_NEWTON,
            });
        }
    };
    let halved = match sol.halvings {
        0 => String::new(),
        1 => " (one load step that did not converge halved)".to_string(),
        h => format!(" ({h} halvings of load steps that did not converge)"),
    };
    outln!(
        "static equilibrium: {} load steps{halved}, {} Newton iterations, relative residual {:.2e}",
        sol.iterations.len(),
        sol.iterations.iter().sum::<u32>(),
        sol.residual
    );
    outln!(
        "{:<24} {:>16} {:>16} {:>16}",
        "dof",
        "initial",
        "equilibrium",
        "change"
    );
    for (i, name) in m.dofs.names().iter().enumerate() {
        let owner = name.rsplit_once('.').map_or(name.as_str(), |(o, _)| o);
        if args.node.is_empty() || args.node.iter().any(|n| n == owner) {
            outln!(
                "{:<24} {:>16.9e} {:>16.9e} {:>16.9e}",
                name,
                m.u0[i],
                sol.u[i],
                sol.u[i] - m.u0[i]
            );
        }
    }
    ExitCode::SUCCESS
}
