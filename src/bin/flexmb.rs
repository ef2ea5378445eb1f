//! The `flexmb` command line: `run` a model file, `check` it, solve its `static`
//! equilibrium, or `batch`-run a parameter sweep.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use flexmb::batch::{
    merge_shards, run_batch, summary_file_name, BatchError, BatchOptions, Shard, Sweep,
};
use flexmb::input::{load_model_with_sets, ModelFile};
use flexmb::integrate::{IntegratorSpec, OptionChoice, StepError};
use flexmb::run::Simulation;

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

#[derive(Args)]
struct FactorArgs {
    /// Matrix Market file of the matrix.
    matrix: PathBuf,
    /// Right-hand side (one-column Matrix Market array; default: the matrix's
    /// `.rhs.mtx` when it exists, else A times ones).
    #[arg(long)]
    rhs: Option<PathBuf>,
    /// Numeric factorizations to time (the median is reported).
    #[arg(long, default_value_t = 5)]
    repeat: usize,
    /// Factorization: auto (the engine's: band LU when the band is narrow, else the
    /// LDLT with refinement when the pattern is structurally symmetric, else the
    /// sparse LU), band, lu (sparse LU, least predicted fill), the sparse LU with
    /// colamd, amd or metis, ldlt (AMD or METIS, fewer factor nonzeros), ldlt-amd or
    /// ldlt-metis.
    #[arg(long, default_value = "auto")]
    ordering: String,
    /// Threads of the factorization (1: sequential).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// One JSON line instead of the text report.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct BenchArgs {
    /// Problems: l1 (hanging beam), l2 (truss lattice), l3 (space truss lattice),
    /// l4 (rigid chain), chain (hanging truss chain).
    #[arg(required = true)]
    problems: Vec<String>,
    /// Sizes, comma separated, e.g. `--sizes 100,1000,10000` (see docs/bench.md for
    /// what a size counts in each problem).
    #[arg(long, value_delimiter = ',', required = true)]
    sizes: Vec<usize>,
    /// Time steps per case.
    #[arg(long, default_value_t = 20)]
    steps: u64,
    /// Write each case's results to DIR/PROBLEM-SIZE.h5 and time the recording.
    #[arg(long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// Also write the table as CSV.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Write each case's Newton matrix of step --export-step to
    /// DIR/PROBLEM-SIZE.mtx and its right-hand side to DIR/PROBLEM-SIZE.rhs.mtx
    /// (Matrix Market), for scripts/compare_solvers.py and `flexmb factor`.
    #[arg(long, value_name = "DIR")]
    export_matrix: Option<PathBuf>,
    /// The step whose first Newton matrix --export-matrix writes.
    #[arg(long, default_value_t = 1)]
    export_step: u64,
    #[command(flatten)]
    integrator: IntegratorArgs,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args)]
struct PlotArgs {
    /// A run's HDF5 file (probe histories) or a batch `summary.csv` (table chart).
    input: PathBuf,
    /// PNG file to write.
    #[arg(short, long)]
    output: PathBuf,
    /// Probe to plot against time (HDF5 input; repeatable).
    #[arg(long)]
    probe: Vec<String>,
    /// Column for the x axis (CSV input).
    #[arg(long)]
    x: Option<String>,
    /// Column for the y axis (CSV input), e.g. `midpoint_deflection.max_abs`.
    #[arg(long)]
    y: Option<String>,
    /// Column whose values each get their own curve (CSV input).
    #[arg(long)]
    group: Option<String>,
    /// Keep only rows whose COLUMN equals VALUE (CSV input; repeatable),
    /// e.g. `--where integrator.scheme=midpoint`.
    #[arg(long = "where", value_name = "COLUMN=VALUE")]
    filters: Vec<String>,
    /// x-axis label with units (default: `t (s)` for probes, the column name for tables).
    #[arg(long)]
    xlabel: Option<String>,
    /// y-axis label with units (default: `value (model units)` for probes, the column name).
    #[arg(long)]
    ylabel: Option<String>,
    /// Image size in pixels, WIDTHxHEIGHT.
    #[arg(long, default_value = "1000x650")]
    size: String,
}

#[derive(Args)]
struct BatchArgs {
    /// Sweep file (TOML, see docs/batch.md).
    sweep: PathBuf,
    /// Output folder (default: `batch-<sweep file stem>`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Worker threads, one case per thread (default: all cores).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Run only shard I of N (0-based): the cases k with k mod N = I.
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    /// Skip cases whose file holds a completed run of the same model text.
    #[arg(long)]
    resume: bool,
    /// Lift the soft limits: the case count (the sweep file's `max_cases`,
    /// default 10000) and the output size (a case's `[output] max_bytes`,
    /// the free space for all cases together); docs/batch.md.
    #[arg(long)]
    force: bool,
    /// No progress bar and no per-case lines.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args)]
struct BatchMergeArgs {
    /// Sweep file the shards ran (TOML, see docs/batch.md).
    sweep: PathBuf,
    /// Folder holding the shard summaries `summary-I-of-N.csv`.
    #[arg(long)]
    out: PathBuf,
    /// Number of shards N (default: the N of the shard summaries in the folder).
    #[arg(long)]
    shards: Option<usize>,
    /// Lift the soft limit of the case count, as for `batch --force`.
    #[arg(long)]
    force: bool,
}

#[derive(Args)]
struct RunArgs {
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
    integrator: IntegratorArgs,
    /// Write the first Newton matrix of step STEP to FILE (Matrix Market) and its
    /// right-hand side to FILE's stem + `.rhs.mtx` (GSSSS methods; step 0: the
    /// initial-acceleration system).
    #[arg(long, value_name = "STEP:FILE", value_parser = parse_export)]
    export_matrix: Option<flexmb::linalg::MatrixExport>,
    /// Lift the soft limits: run even when the output's estimated size
    /// exceeds `[output] max_bytes` (default 1e10) or the free disk space.
    #[arg(long)]
    force: bool,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
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

#[derive(Args)]
struct CheckArgs {
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

/// `print!` that ends the program quietly when stdout is closed (e.g. piped
/// into `head`) instead of panicking on the broken pipe.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout().lock(), $($arg)*) {
            stdout_failed(e);
        }
    }};
}

/// `println!` with the broken-pipe handling of [`out!`].
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            stdout_failed(e);
        }
    }};
}

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
        Command::Run(args) => run(&args),
        Command::Check(args) => check(&args),
        Command::Static(args) => statics(&args),
        Command::Batch(args) => batch(&args),
        Command::Plot(args) => plot(&args),
        Command::BatchMerge(args) => batch_merge(&args),
        Command::Bench(args) => bench(&args),
        Command::Factor(args) => factor(&args),
    }
}

fn factor(args: &FactorArgs) -> ExitCode {
    use flexmb::factor::FactorPath;
    let Some(path) = FactorPath::from_name(&args.ordering) else {
        eprintln!(
            "error: unknown --ordering '{}' (expected auto, band, lu, colamd, amd, metis, ldlt, \
             ldlt-amd or ldlt-metis)",
            args.ordering
        );
        return ExitCode::from(EXIT_USAGE);
    };
    if args.repeat == 0 || args.threads == 0 {
        eprintln!("error: --repeat and --threads must be positive");
        return ExitCode::from(EXIT_USAGE);
    }
    let par = if args.threads == 1 {
        faer::Par::Seq
    } else {
        faer::Par::rayon(args.threads)
    };
    let r = match flexmb::factor::factor_file(
        &args.matrix,
        args.rhs.as_deref(),
        args.repeat,
        path,
        par,
    ) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if args.json {
        outln!("{}", r.json());
        return ExitCode::SUCCESS;
    }
    outln!(
        "{}: {} rows, {} entries",
        args.matrix.display(),
        r.rows,
        r.nnz
    );
    for c in &r.candidates {
        outln!(
            "  ordering {:<6}  predicted fill {:>12}  flops {:.3e}",
            c.ordering.name(),
            c.fill,
            c.flops
        );
    }
    outln!("solver          {}", r.solver);
    outln!("analysis        {:.4} s", r.analysis_s);
    outln!(
        "factorization   {:.4} s (median of {})",
        r.factor_s,
        args.repeat
    );
    outln!("solve           {:.4} s", r.solve_s);
    outln!(
        "fill (L+U)      {} ({:.2} per matrix entry)",
        r.fill,
        r.fill as f64 / r.nnz.max(1) as f64
    );
    if let Some(m) = r.memory_mib {
        outln!("memory          {m:.1} MiB (resident growth over analysis and factorization)");
    }
    outln!(
        "backward error  {:.2e} ({:.2e} before {} refinement step(s))",
        r.backward_error,
        r.backward_error_plain,
        r.refinements
    );
    ExitCode::SUCCESS
}

fn bench(args: &BenchArgs) -> ExitCode {
    use flexmb::bench::{csv, run_case, table, BenchCase, Problem};
    let mut problems = Vec::new();
    for name in &args.problems {
        match Problem::from_name(name) {
            Some(p) => problems.push(p),
            None => {
                let names: Vec<&str> = Problem::ALL.iter().map(|p| p.name()).collect();
                eprintln!(
                    "error: unknown problem '{name}' (expected one of {})",
                    names.join(", ")
                );
                return ExitCode::from(EXIT_USAGE);
            }
        }
    }
    if args.sizes.contains(&0) || args.steps == 0 {
        eprintln!("error: sizes and --steps must be positive");
        return ExitCode::from(EXIT_USAGE);
    }
    let mut sizes = args.sizes.clone();
    sizes.sort_unstable();
    // Every case's memory estimate before the first model is built.
    if let Some(limit) = flexmb::bench::machine_memory() {
        for &p in &problems {
            for &size in &sizes {
                if let Err(message) = flexmb::bench::check_memory(p, size, limit) {
                    eprintln!("error: {message}");
                    return ExitCode::from(EXIT_USAGE);
                }
            }
        }
    }
    let cases: Vec<BenchCase> = problems
        .iter()
        .flat_map(|&p| {
            sizes.iter().map(move |&size| BenchCase {
                problem: p,
                size,
                steps: args.steps,
                integrator: args.integrator.spec(),
                output: args.output.clone(),
                export: args
                    .export_matrix
                    .as_ref()
                    .map(|dir| (dir.clone(), args.export_step)),
            })
        })
        .collect();
    let bar = progress_bar(
        cases.len() as u64,
        args.quiet,
        "{elapsed_precise} [{bar:30}] {pos}/{len} cases {msg}",
    );
    let mut rows = Vec::new();
    for case in &cases {
        bar.set_message(format!("{} size {}", case.problem.name(), case.size));
        match run_case(case) {
            Ok(row) => rows.push(row),
            Err(e) => {
                bar.abandon();
                out!("{}", table(&rows));
                eprintln!("error: {e}");
                return ExitCode::from(EXIT_CASE_FAILED);
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    out!("{}", table(&rows));
    if let Some(path) = &args.csv {
        if let Err(e) = std::fs::write(path, csv(&rows)) {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::from(EXIT_OUTPUT);
        }
    }
    ExitCode::SUCCESS
}

fn plot(args: &PlotArgs) -> ExitCode {
    let usage = |m: String| {
        eprintln!("error: {m}");
        ExitCode::from(EXIT_USAGE)
    };
    let size = match args
        .size
        .split_once('x')
        .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)))
    {
        Some((w, h)) if (100..=10_000).contains(&w) && (100..=10_000).contains(&h) => (w, h),
        _ => {
            return usage(format!(
                "--size must be WIDTHxHEIGHT (100 to 10000 pixels), got '{}'",
                args.size
            ))
        }
    };
    let is_csv = args
        .input
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let chart = if is_csv {
        let (Some(x), Some(y)) = (&args.x, &args.y) else {
            return usage("a table chart needs --x COLUMN and --y COLUMN".into());
        };
        let labels = (
            args.xlabel.as_deref().unwrap_or(x),
            args.ylabel.as_deref().unwrap_or(y),
        );
        let mut filters = Vec::new();
        for f in &args.filters {
            match f.split_once('=') {
                Some((k, v)) => filters.push((k.to_string(), v.to_string())),
                None => return usage(format!("--where needs COLUMN=VALUE, got '{f}'")),
            }
        }
        let q = flexmb::plot::TableQuery {
            x,
            y,
            group: args.group.as_deref(),
            filters: &filters,
        };
        flexmb::plot::table_chart(&args.input, &q, labels)
    } else {
        if args.probe.is_empty() {
            return usage("a run file chart needs at least one --probe NAME".into());
        }
        let ylabel = args.ylabel.as_deref().unwrap_or("value (model units)");
        flexmb::plot::probe_chart(&args.input, &args.probe, ylabel).map(|mut c| {
            if let Some(l) = &args.xlabel {
                c.x_label = l.clone();
            }
            c
        })
    };
    let chart = match chart {
        Ok(c) => c,
        Err(e) => return usage(e.to_string()),
    };
    match flexmb::plot::draw_png(&chart, &args.output, size) {
        Ok(()) => {
            outln!("wrote {}", args.output.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_OUTPUT)
        }
    }
}

/// A progress bar on stderr with `template`, hidden when `quiet` or when
/// stderr is not a terminal.
/// `G1,G2` as two numbers.
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

fn batch(args: &BatchArgs) -> ExitCode {
    let sweep = match Sweep::from_file_with(&args.sweep, args.force) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let shard = args.shard.unwrap_or(Shard::ALL);
    let out = args.out.clone().unwrap_or_else(|| {
        let stem = args.sweep.file_stem().unwrap_or_default().to_string_lossy();
        PathBuf::from(format!("batch-{stem}"))
    });
    let selected = sweep
        .cases
        .iter()
        .filter(|c| shard.contains(c.index))
        .count();
    if !args.quiet {
        eprintln!(
            "{}: {} cases, shard {shard}: {selected} cases, {} threads, output in {}",
            sweep.file,
            sweep.cases.len(),
            if args.jobs == 0 {
                rayon::current_num_threads()
            } else {
                args.jobs
            },
            out.display()
        );
    }
    let bar = progress_bar(
        selected as u64,
        args.quiet,
        "{elapsed_precise} [{bar:40}] {pos}/{len} cases  ETA {eta}",
    );
    let on_finish = |r: &flexmb::batch::CaseResult| {
        if !args.quiet {
            if bar.is_hidden() {
                outln!("{}", r.line());
            } else {
                bar.println(r.line());
            }
        }
        bar.inc(1);
    };
    // Ctrl-C: start no further case, let the running ones finish (the
    // summary lists every finished case); a second Ctrl-C exits at once,
    // leaving the running cases' files `running` (rerun by --resume).
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let handler = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        eprintln!("interrupted: no further case starts; waiting for the running ones (Ctrl-C again to quit now)");
    });
    if let Err(e) = handler {
        eprintln!("warning: no Ctrl-C handler: {e}");
    }
    let opts = BatchOptions {
        out: out.clone(),
        jobs: args.jobs,
        shard,
        resume: args.resume,
        stop: Some(Arc::clone(&stop)),
        force: args.force,
    };
    let started = Instant::now();
    let results = match run_batch(&sweep, &opts, &on_finish) {
        Ok(r) => r,
        Err(e) => {
            bar.abandon();
            eprintln!("error: {e}");
            let refused = matches!(
                e,
                BatchError::CaseOutput { .. } | BatchError::FreeSpace { .. }
            );
            return ExitCode::from(if refused { EXIT_USAGE } else { EXIT_OUTPUT });
        }
    };
    let wall = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let failed = results.iter().filter(|r| r.failure.is_some()).count();
    let resumed = results.iter().filter(|r| r.resumed).count();
    let skipped = if resumed > 0 {
        format!(" ({resumed} of them skipped by --resume)")
    } else {
        String::new()
    };
    outln!(
        "{} cases: {} completed{skipped}, {failed} failed; summary: {}",
        results.len(),
        results.len() - failed,
        out.join(summary_file_name(shard)).display()
    );
    // Overhead (planning, scheduling, summaries): the wall time beyond what
    // the cases need on `jobs` threads, max(sum of case wall / jobs, longest
    // case); a case's wall covers its operators, time loop and file.
    let ran: Vec<&flexmb::batch::CaseResult> =
        results.iter().filter(|r| r.wall_seconds > 0.0).collect();
    let jobs = if args.jobs == 0 {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        args.jobs
    };
    let case_sum = ran.iter().fold(0.0, |a, r| a + r.wall_seconds);
    let longest = ran.iter().fold(0.0, |a: f64, r| a.max(r.wall_seconds));
    let loops = ran
        .iter()
        .filter_map(|r| r.summary.as_ref())
        .fold(0.0, |a, s| a + s.wall_seconds);
    let overhead = wall - (case_sum / jobs as f64).max(longest);
    outln!(
        "wall {wall:.2} s; {} cases ran: {case_sum:.2} s of case wall ({loops:.2} s in time loops) \
         on {jobs} threads, longest {longest:.2} s; batch overhead {overhead:.2} s ({:.2} %)",
        ran.len(),
        100.0 * overhead / wall.max(f64::MIN_POSITIVE)
    );
    let not_run = selected - results.len();
    if not_run > 0 {
        outln!("interrupted: {not_run} cases not run (rerun with --resume)");
        return ExitCode::from(EXIT_INTERRUPTED);
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_CASE_FAILED)
    }
}

fn batch_merge(args: &BatchMergeArgs) -> ExitCode {
    let sweep = match Sweep::from_file_with(&args.sweep, args.force) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let shards = match args.shards {
        Some(n) => n,
        None => match shard_count(&args.out) {
            Ok(n) => n,
            Err(message) => {
                eprintln!("error: {message}");
                return ExitCode::from(EXIT_USAGE);
            }
        },
    };
    let report = match merge_shards(&sweep, &args.out, shards) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_OUTPUT);
        }
    };
    for name in &report.missing_shards {
        eprintln!("missing shard summary: {}", args.out.join(name).display());
    }
    for id in &report.missing_cases {
        eprintln!("missing case: {id}");
    }
    outln!(
        "{} of {} cases from {shards} shards; summary: {}",
        report.cases,
        sweep.cases.len(),
        args.out.join(summary_file_name(Shard::ALL)).display()
    );
    if report.missing_cases.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_CASE_FAILED)
    }
}

/// The N of the shard summaries `summary-I-of-N.csv` in `dir` (one N only).
fn shard_count(dir: &Path) -> Result<usize, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut counts: Vec<usize> = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let n = name
            .strip_prefix("summary-")
            .and_then(|r| r.strip_suffix(".csv"))
            .and_then(|r| r.split_once("-of-"))
            .and_then(|(_, n)| n.parse::<usize>().ok());
        if let Some(n) = n.filter(|n| !counts.contains(n)) {
            counts.push(n);
        }
    }
    match counts[..] {
        [n] => Ok(n),
        [] => Err(format!(
            "{}: no shard summaries summary-I-of-N.csv",
            dir.display()
        )),
        _ => Err(format!(
            "{}: shard summaries of several shard counts {}: give --shards N",
            dir.display(),
            counts
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
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

fn run(args: &RunArgs) -> ExitCode {
    let file = match load(&args.model, &args.set) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let mut config = match file.integrator(&args.integrator.spec()) {
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

/// The exit code of a failed step (or start) of a run.
fn step_error_code(e: &StepError) -> ExitCode {
    match e {
        StepError::Singular { .. } => ExitCode::from(EXIT_SINGULAR),
        StepError::Setup { .. } => ExitCode::from(EXIT_USAGE),
        StepError::NewtonFailed { .. }
        | StepError::StepSize { .. }
        | StepError::TooManySteps { .. } => ExitCode::from(EXIT_NEWTON),
    }
}

#[derive(Args)]
struct StaticArgs {
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

fn statics(args: &StaticArgs) -> ExitCode {
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
    outln!(
        "static equilibrium: {} load steps, {} Newton iterations, relative residual {:.2e}",
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

fn check(args: &CheckArgs) -> ExitCode {
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
        let matrix = sim.asm.initial_saddle_matrix(m);
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
