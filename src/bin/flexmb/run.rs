//! `flexmb run`: integrate a model file into HDF5, with a progress bar.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use clap::Args;

use flexmb::integrate::IntegratorSpec;
use flexmb::run::Simulation;

use super::{load, parse_export, progress_bar, step_error_code, EXIT_OUTPUT, EXIT_USAGE};

#[derive(Args)]
pub(crate) struct RunArgs {
    /// Model file (TOML, see docs/model-format.md).
    model: PathBuf,
    /// Set a model-file value before reading it, e.g. `--set generator.elements=16`
    /// or `--set integrator.dt=1e-5` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// HDF5 output file (default: no file, summary only).
    #[arg(short, long)]
    output: Option<PathBuf>,
    #[command(flatten)]
    integrator: IntegratorSpec,
    /// Write the first Newton matrix of step STEP to FILE (Matrix Market) and its
    /// right-hand side to FILE's stem + `.rhs.mtx` (GSSSS methods; step 0: the
    /// initial-acceleration system).
    #[arg(long, value_name = "STEP:FILE", value_parser = parse_export)]
    export_matrix: Option<flexmb::linalg::MatrixExport>,
    /// Lift the soft limits: run even when the output's estimated size
    /// exceeds `[output] max_bytes` (default 1e10) or the free disk space.
    #[arg(long)]
    force: bool,
    /// Threads of the assembly and the factorization (default: RAYON_NUM_THREADS,
    /// else all cores); the results are the same for any number.
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

pub(crate) fn run(args: &RunArgs) -> ExitCode {
    let file = match load(&args.model, &args.set) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let mut config = match file.integrator(&args.integrator.clone()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    config.export_matrix = args.export_matrix.clone();
    // SIGINT / SIGTERM: stop at the end of the current step, close the file
    // as `interrupted`, print the summary, exit 128 + signal.
    let signal = Arc::new(AtomicUsize::new(0));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register_usize(sig, Arc::clone(&signal), sig as usize) {
            eprintln!("warning: no handler for signal {sig}: {e}");
        }
    }
    let sim = Simulation::new(file.model).stop_on(signal);
    // The output's size, before anything is allocated for the run.
    if let (Some(path), false) = (&args.output, args.force) {
        let estimate = sim.output_estimate(&config, &file.output, &file.text);
        if let Err(e) = estimate.check(path, file.output.max_bytes) {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::from(EXIT_USAGE);
        }
        if let Some(w) = estimate.free_space_warning(path) {
            eprintln!("warning: {}: {w}", path.display());
        }
    }
    // Fixed steps: a bar of steps; adaptive steps: a bar of time (per mille of t_end).
    let steps = config.nominal_steps();
    let bar = progress_bar(
        steps.unwrap_or(1000),
        args.quiet,
        if steps.is_some() {
            "{elapsed_precise} [{bar:40}] {pos}/{len} steps  t = {msg}  ETA {eta}"
        } else {
            "{elapsed_precise} [{bar:40}] {pos}/{len} of t_end  t = {msg}  ETA {eta}"
        },
    );
    let t_end = config.t_end;
    let mut progress = |s: &flexmb::integrate::State| {
        if s.step.is_multiple_of(64) {
            bar.set_position(match steps {
                Some(_) => s.step,
                None => (1000.0 * s.t / t_end) as u64,
            });
            bar.set_message(format!("{:.6}", s.t));
        }
    };
    if !args.quiet {
        eprintln!(
            "{}: {} DOFs, {} constraints; {}",
            file.file,
            sim.model.n_dofs(),
            sim.model.n_constraints(),
            config.label()
        );
    }
    let summary = match sim.run_to_file(
        &config,
        &file.text,
        &file.output,
        args.output.as_deref(),
        &mut progress,
    ) {
        Ok(s) => s,
        Err(e) => {
            bar.abandon();
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_OUTPUT);
        }
    };
    bar.finish_and_clear();
    if summary.initial.position_moved > 0.0 || summary.initial.velocity_moved > 0.0 {
        outln!("initial state: {}", summary.initial.describe());
    }
    outln!("{}", summary.line());
    for (name, p) in &summary.probes {
        outln!(
            "probe {name}: min {:.6e} | max {:.6e} | max |.| {:.6e} at t = {} | final {:.6e}",
            p.min,
            p.max,
            p.max_abs,
            flexmb::integrate::fmt_time(p.t_max_abs),
            p.last
        );
    }
    if let Some(out) = &args.output {
        outln!("output: {}", out.display());
        if let Some(xmf) = flexmb::output::xdmf_path(out).filter(|x| x.exists()) {
            outln!("ParaView: {}", xmf.display());
        }
    }
    match (&summary.failure, summary.interrupted) {
        (None, None) => ExitCode::SUCCESS,
        (None, Some(signal)) => {
            eprintln!("interrupted by signal {signal}");
            ExitCode::from(128 + signal as u8)
        }
        (Some(e), _) => {
            eprintln!("error: {e}");
            step_error_code(e)
        }
    }
}
