//! `flexmb bench`: the large-mesh problems at growing sizes.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use flexmb::integrate::IntegratorSpec;

use super::{progress_bar, EXIT_CASE_FAILED, EXIT_OUTPUT, EXIT_USAGE};

#[derive(Args)]
pub(crate) struct BenchArgs {
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
    integrator: IntegratorSpec,
    /// Threads of the assembly and the factorization (default: RAYON_NUM_THREADS,
    /// else all cores); the table's `threads` column.
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

pub(crate) fn bench(args: &BenchArgs) -> ExitCode {
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
                integrator: args.integrator.clone(),
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
