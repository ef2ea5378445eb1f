//! The `flexmb` command line: `run` a model file, `check` it, solve its `static`
//! equilibrium, `batch`-run a parameter sweep (and `batch-merge` its shards),
//! `plot` results, `bench` the large-mesh problems or `factor` one matrix. One
//! module per subcommand; the options shared by `run` and `bench`, the exit
//! codes and the output helpers are here.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use flexmb::input::{load_model_with_sets, ModelFile};
use flexmb::integrate::{IntegratorSpec, OptionChoice, StepError};

use batch::{batch, batch_merge, BatchArgs, BatchMergeArgs};
use bench::{bench, BenchArgs};
use check::{check, CheckArgs};
use factor::{factor, FactorArgs};
use modes::{modes_command, ModesArgs};
use plot::{plot, PlotArgs};
use run::{run, RunArgs};
use statics::{statics, StaticArgs};

/// Exit code of a model-file or command-line error.
const EXIT_USAGE: u8 = 2;
/// Exit code when Newton fails to converge.
const EXIT_NEWTON: u8 = 3;
/// Exit code when the Newton matrix is singular.
const EXIT_SINGULAR: u8 = 4;
/// Exit code when the output file cannot be written.
const EXIT_OUTPUT: u8 = 5;
/// Exit code of a batch in which some case failed (or of a merge missing cases).
const EXIT_CASE_FAILED: u8 = 6;
/// Exit code of a batch stopped by Ctrl-C (128 + SIGINT).
const EXIT_INTERRUPTED: u8 = 130;

/// Rigid and flexible multibody dynamics by the finite element method.
#[derive(Parser)]
#[command(name = "flexmb", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once
enum Command {
    /// Integrate a model file and stream the results to HDF5.
    Run(RunArgs),
    /// Validate a model file and print its sizes and the saddle-point sparsity.
    Check(CheckArgs),
    /// Static equilibrium under the model's loads and gravity (load-stepped Newton).
    Static(StaticArgs),
    /// Linearized system about the initial state or the static equilibrium:
    /// frequencies, mode shapes to HDF5, matrices to Matrix Market (docs/modes.md).
    Modes(ModesArgs),
    /// Run a parameter sweep in parallel: one HDF5 file per case and a summary.csv (docs/batch.md).
    Batch(BatchArgs),
    /// Draw a PNG chart: probe time histories of a run file (`OUT.h5 --probe NAME`),
    /// or a summary column against a parameter (`summary.csv --x PARAM --y COLUMN [--group PARAM]`).
    Plot(PlotArgs),
    /// Combine the shard summaries of a sweep into summary.csv and summary.h5 (docs/batch.md).
    BatchMerge(BatchMergeArgs),
    /// Time steps of the large-mesh problems (SPEC.md §7) at growing sizes: sizes,
    /// time per step split into assembly / factorization / solve / output, Newton
    /// iterations, peak memory, fitted scaling exponents (docs/bench.md).
    Bench(BenchArgs),
    /// Factor one Matrix Market matrix (e.g. from `bench --export-matrix`) N times
    /// with flexmb's band or sparse LU or its LDLT with refinement: median analysis / factorization / solve times, fill,
    /// memory and backward error (scripts/compare_solvers.py, docs/bench.md).
    Factor(FactorArgs),
}

/// Overrides of the model file's `[integrator]` table.
#[derive(Args)]
struct IntegratorArgs {
    /// Method: gssss (default; seed 000); an explicit Runge–Kutta method on the
    /// index-1 form (seed 001): dopri5 (adaptive), rk4, heun (fixed steps); epm,
    /// the embedded projection method (seed 004) with --tableau; bdf, DASSL's
    /// BDF 1-5 on the GGL form (seed 003) with --newton, --max-order, --rtol, --atol;
    /// or seed 002's Galerkin schemes: tcg (energy-preserving), tdg (energy-decaying,
    /// --alpha) and alpha-kappa (with velocity constraints, --alpha, --kappa).
    #[arg(long)]
    method: Option<String>,
    /// BDF: the nonlinear iteration, full (Newton on GGL, default), cs
    /// (coordinate split) or cm (cs without the derivative of the projection).
    #[arg(long)]
    newton: Option<String>,
    /// BDF: the largest order, 1 to 5 (default 5).
    #[arg(long)]
    max_order: Option<u64>,
    /// BDF: the components of the local error test, qv (positions and
    /// velocities, default) or q (positions only, as seed 003 §4.1).
    #[arg(long)]
    error_test: Option<String>,
    /// GSSSS: fixed (a Newton failure stops the run) or cutback (halve dt and retry,
    /// regrow after successes). Runge–Kutta: adaptive (dopri5's default) or fixed.
    #[arg(long)]
    step_control: Option<String>,
    /// Runge–Kutta drift control: none, baumgarte (with --baumgarte) or pstab
    /// (post-stabilization, seed 001 S-both2).
    #[arg(long)]
    stabilization: Option<String>,
    /// Baumgarte's parameters G1,G2: Phi'' + G1 Phi' + G2 Phi = 0 (seed 001 B(G1, G2)).
    #[arg(long, value_name = "G1,G2", value_parser = parse_pair)]
    baumgarte: Option<[f64; 2]>,
    /// Relative tolerance of the adaptive step control (Runge–Kutta), or of the
    /// scaled Newton test (GSSSS, default 1e-6).
    #[arg(long)]
    rtol: Option<f64>,
    /// Absolute tolerance of the adaptive step control (default rtol/10), or of the
    /// scaled Newton test in coordinate units (default rtol (1 + max |u0|)).
    #[arg(long)]
    atol: Option<f64>,
    /// PStab: steps whose drift is at most DATOL are not stabilized (default 0: every step).
    #[arg(long)]
    datol: Option<f64>,
    /// Projection metric of PStab: mass (W = M, eq. 3.68) or identity (W = I, eq. 3.69).
    #[arg(long)]
    projection: Option<String>,
    /// PStab's S-both passes per stabilization: two (the seed's S-both2,
    /// default) or converged (more with the same factorization while the
    /// drift falls: drift at round-off).
    #[arg(long, value_name = "two|converged")]
    pstab_passes: Option<String>,
    /// Largest step of an adaptive method.
    #[arg(long)]
    max_step: Option<f64>,
    /// Adaptive methods: most attempted steps in a run (default 1e6).
    #[arg(long, value_name = "N")]
    max_steps: Option<u64>,
    /// Tableau of the embedded projection method (--method epm): rk4 (default), dopri5, heun.
    #[arg(long)]
    tableau: Option<String>,
    /// Preset: newmark, midpoint-endpoint, midpoint, generalized-alpha(RHO), hht(RHO), wbz(RHO), u0v0-optimal(RHO).
    #[arg(long)]
    scheme: Option<String>,
    /// GSSSS family u0 or v0 (with --rho1, --rho2, --rho3), instead of a preset.
    #[arg(long)]
    family: Option<String>,
    /// First principal root at infinity.
    #[arg(long)]
    rho1: Option<f64>,
    /// Second principal root at infinity.
    #[arg(long)]
    rho2: Option<f64>,
    /// Spurious root at infinity.
    #[arg(long)]
    rho3: Option<f64>,
    /// Constraint-force option 1..4 (seed 000 eqs. 3.8-3.11), or dg: Gonzalez's
    /// discrete derivative of the joint rows, exact energy balance (midpoint schemes only).
    #[arg(long)]
    option: Option<String>,
    /// Newton unknown: a, v, d, or two-field (the two-field v-form midpoint scheme).
    #[arg(long)]
    form: Option<String>,
    /// Time step.
    #[arg(long)]
    dt: Option<f64>,
    /// End time.
    #[arg(long)]
    t_end: Option<f64>,
    /// Newton tolerance of the increment and rate tests (absolute).
    #[arg(long)]
    tol: Option<f64>,
    /// Newton iteration limit per step.
    #[arg(long)]
    max_iter: Option<u32>,
    /// Newton matrix: consistent (exact) or seed (multiplier column without the W1 weights).
    #[arg(long)]
    jacobian: Option<String>,
    /// Newton stop test: scaled (default: weighted RMS correction against rtol |x| + atol
    /// and residual against rtol times the force scale, docs/theory/gssss.md §12),
    /// increment (the last increment below tol, seed 000 eq. 2.14) or rate (also stop
    /// when the error estimated from the contraction rate is below tol).
    #[arg(long)]
    convergence: Option<String>,
    /// Newton matrix refresh: iteration (Newton; the default of `run` and
    /// `batch`) or step (modified Newton: factor at the first iteration of a
    /// step, again only when convergence slows below rate 1/2; the default of
    /// `bench`).
    #[arg(long)]
    refactor: Option<String>,
    /// Globalization of the scaled Newton test: none (the default; a growing
    /// correction is divergence, and the step restarts from the other
    /// predictor) or backtracking (halve a correction until the scaled
    /// residual falls; docs/theory/gssss.md §12a).
    #[arg(long)]
    line_search: Option<String>,
    /// Initial state violating its constraints: check (refuse it, the default)
    /// or project (move it onto the constraints and report how far).
    #[arg(long)]
    initialize: Option<String>,
    /// Use the sparse LU even for small systems.
    #[arg(long)]
    sparse: bool,
    /// Sparse factorization: auto (LDLT with refinement when the pattern is
    /// structurally symmetric, else LU), lu or ldlt.
    #[arg(long)]
    factorization: Option<String>,
    /// TDG and alpha-kappa (seed 002 eqs. 47, 66): dissipation control alpha in [0, 1]
    /// (default 1, eq. 28; rho_inf = (1 - alpha)/(1 + alpha)).
    #[arg(long)]
    alpha: Option<f64>,
    /// alpha-kappa (--method alpha-kappa, seed 002 eq. 66): kappa K, or auto (eq. 71
    /// at the iterate, clamped to [1 - h/2, 1 + h/2]; the default).
    #[arg(long, value_name = "K|auto")]
    kappa: Option<String>,
}

impl IntegratorArgs {
    fn spec(&self) -> IntegratorSpec {
        IntegratorSpec {
            method: self.method.clone(),
            step_control: self.step_control.clone(),
            stabilization: self.stabilization.clone(),
            baumgarte: self.baumgarte,
            rtol: self.rtol,
            atol: self.atol,
            datol: self.datol,
            projection: self.projection.clone(),
            pstab_passes: self.pstab_passes.clone(),
            max_step: self.max_step,
            max_steps: self.max_steps,
            tableau: self.tableau.clone(),
            scheme: self.scheme.clone(),
            family: self.family.clone(),
            rho1: self.rho1,
            rho2: self.rho2,
            rho3: self.rho3,
            option: self.option.clone().map(OptionChoice::Name),
            form: self.form.clone(),
            dt: self.dt,
            t_end: self.t_end,
            tol: self.tol,
            max_iter: self.max_iter,
            jacobian: self.jacobian.clone(),
            convergence: self.convergence.clone(),
            refactor: self.refactor.clone(),
            line_search: self.line_search.clone(),
            sparse: self.sparse.then_some(true),
            factorization: self.factorization.clone(),
            initialize: self.initialize.clone(),
            newton: self.newton.clone(),
            max_order: self.max_order,
            error_test: self.error_test.clone(),
            alpha: self.alpha,
            kappa: self.kappa.clone().map(flexmb::integrate::KappaChoice::Name),
        }
    }
}

/// `print!` that ends the program quietly when stdout is closed (e.g. piped
/// into `head`) instead of panicking on the broken pipe.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout().lock(), $($arg)*) {
            crate::stdout_failed(e);
        }
    }};
}

/// `println!` with the broken-pipe handling of [`out!`].
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            crate::stdout_failed(e);
        }
    }};
}

mod batch;
mod bench;
mod check;
mod factor;
mod modes;
mod plot;
mod run;
mod statics;

/// Stdout cannot be written: a closed pipe ends the program with the exit
/// code of SIGPIPE (141) and no message; other errors are reported on stderr.
fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(141);
    }
    eprintln!("error: cannot write to stdout: {e}");
    std::process::exit(EXIT_OUTPUT.into());
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => with_threads(args.threads, || run(&args)),
        Command::Check(args) => check(&args),
        Command::Static(args) => statics(&args),
        Command::Modes(args) => modes_command(&args),
        Command::Batch(args) => batch(&args),
        Command::Plot(args) => plot(&args),
        Command::BatchMerge(args) => batch_merge(&args),
        Command::Bench(args) => with_threads(args.threads, || bench(&args)),
        Command::Factor(args) => factor(&args),
    }
}

/// Stack of the pool's threads: the main thread's usual 8 MiB (the command
/// runs on one of them).
const STACK_BYTES: usize = 8 << 20;

/// Runs `command` on a rayon pool of `threads` threads (`--threads N` of
/// `run` and `bench`; `None`: rayon's default, `RAYON_NUM_THREADS`, else one
/// thread per core). The time loop then runs on a worker of the pool, whose
/// parallel loops split there, without a hand-over per loop from an outside
/// thread. The results do not depend on the number of threads
/// (src/assembly/colour.rs).
fn with_threads(threads: Option<usize>, command: impl FnOnce() -> ExitCode + Send) -> ExitCode {
    if threads == Some(0) {
        eprintln!("error: --threads must be at least 1");
        return ExitCode::from(EXIT_USAGE);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .stack_size(STACK_BYTES)
        .build();
    match pool {
        Ok(pool) => pool.install(command),
        Err(e) => {
            eprintln!("error: cannot start the thread pool: {e}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// `STEP:FILE` of `run --export-matrix`.
fn parse_export(s: &str) -> Result<flexmb::linalg::MatrixExport, String> {
    let (step, path) = s
        .split_once(':')
        .ok_or_else(|| format!("expected STEP:FILE, got '{s}'"))?;
    let step = step
        .trim()
        .parse::<u64>()
        .map_err(|_| format!("'{step}' is not a step number"))?;
    if path.is_empty() {
        return Err(format!("expected STEP:FILE, got '{s}' (no file)"));
    }
    Ok(flexmb::linalg::MatrixExport {
        step,
        path: path.into(),
    })
}

/// `G1,G2` as two numbers.
fn parse_pair(s: &str) -> Result<[f64; 2], String> {
    let parts: Vec<&str> = s.split(',').collect();
    match parts[..] {
        [a, b] => {
            let num = |x: &str| {
                x.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("'{x}' is not a number"))
            };
            Ok([num(a)?, num(b)?])
        }
        _ => Err(format!("expected two numbers G1,G2, got '{s}'")),
    }
}

/// A progress bar on stderr with `template`, hidden when `quiet` or when
/// stderr is not a terminal.
fn progress_bar(total: u64, quiet: bool, template: &'static str) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(template)
            .expect("static template")
            .progress_chars("=> "),
    );
    bar
}

fn load(path: &Path, sets: &[String]) -> Result<ModelFile, ExitCode> {
    let name = path.display().to_string();
    std::fs::read_to_string(path)
        .map_err(|e| format!("{name}: cannot read the model file: {e}"))
        .and_then(|text| load_model_with_sets(&text, &name, sets).map_err(|e| e.to_string()))
        .map_err(|message| {
            eprintln!("error: {message}");
            ExitCode::from(EXIT_USAGE)
        })
}

/// The exit code of a failed step (or start) of a run.
fn step_error_code(e: &StepError) -> ExitCode {
    match e {
        StepError::Singular { .. } => ExitCode::from(EXIT_SINGULAR),
        StepError::Setup { .. } | StepError::StopTime { .. } => ExitCode::from(EXIT_USAGE),
        StepError::NewtonFailed { .. }
        | StepError::StepSize { .. }
        | StepError::TooManySteps { .. } => ExitCode::from(EXIT_NEWTON),
    }
}
