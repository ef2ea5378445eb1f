//! `flexmb factor`: one Matrix Market system factored and timed.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::EXIT_USAGE;

#[derive(Args)]
pub(crate) struct FactorArgs {
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
    /// Threads of the factorization and solves (a rayon pool of this size; 1:
    /// sequential).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// One JSON line instead of the text report.
    #[arg(long)]
    json: bool,
}

pub(crate) fn factor(args: &FactorArgs) -> ExitCode {
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
    // The tree-parallel LDLT and solves run on the pool's threads.
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads)
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let r = match pool.install(|| {
        flexmb::factor::factor_file(&args.matrix, args.rhs.as_deref(), args.repeat, path, par)
    }) {
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
