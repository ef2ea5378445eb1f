//! The `flexmb` command line: `run` a model file, `check` it, solve its `static`
//! equilibrium, `batch`-run a parameter sweep (and `batch-merge` its shards),
//! `plot` results, `bench` the large-mesh problems or `factor` one matrix. One
//! module per subcommand; the options shared by `run` and `bench`, the exit
//! codes and the output helpers are here.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use flexmb::input::{load_model_with_sets, read_text, ModelFile};
use flexmb::integrate::StepError;

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
    /// Time steps of the large-mesh problems L1–L4 (docs/bench.md) at growing sizes: sizes,
    /// time per step split into assembly / factorization / solve / output, Newton
    /// iterations, peak memory, fitted scaling exponents (docs/bench.md).
    Bench(BenchArgs),
    /// Factor one Matrix Market matrix (e.g. from `bench --export-matrix`) N times
    /// with flexmb's band or sparse LU or its LDLT with refinement: median analysis / factorization / solve times, fill,
    /// memory and backward error (scripts/compare_solvers.py, docs/bench.md).
    Factor(FactorArgs),
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
    read_text(path, "model file")
        .and_then(|(name, text)| load_model_with_sets(&text, &name, sets))
        .map_err(|e| e.to_string())
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
