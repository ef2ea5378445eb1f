//! `flexmb modes`: the linearized system about the initial state or the
//! static equilibrium, its frequencies and mode shapes (docs/modes.md).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use sprs::{CsMat, TriMat};

use flexmb::modes::{linearize, modes, reduce, LinearizeAt, Method, ModeOptions, ModesError};
use flexmb::statics::{StaticError, StaticOptions};

use super::{load, EXIT_NEWTON, EXIT_OUTPUT, EXIT_SINGULAR, EXIT_USAGE};

/// The state to linearize about.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum At {
    /// u0, v0 with the consistent initial acceleration and multipliers.
    Initial,
    /// The static equilibrium (load-stepped Newton from u0, as `flexmb static`).
    Static,
}

#[derive(Args)]
pub(crate) struct ModesArgs {
    /// Model file (TOML).
    model: PathBuf,
    /// Set a model-file value before reading it, e.g. `--set generator.elements=16`
    /// (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// The state to linearize about.
    #[arg(long, value_enum, default_value_t = At::Initial)]
    at: At,
    /// Number of modes, lowest first (default: 10, or all DOFs on the
    /// constraint manifold when there are fewer).
    #[arg(long)]
    count: Option<usize>,
    /// HDF5 file of the mode shapes with the mesh (and an XDMF side file
    /// for ParaView: one time step per mode).
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Largest displacement of a drawn mode in the HDF5 file (default: a
    /// tenth of the model's extent).
    #[arg(long)]
    amplitude: Option<f64>,
    /// Write M, D, K, B (full) and N, Mr, Dr, Kr (reduced, dense path)
    /// in Matrix Market format into this folder.
    #[arg(long, value_name = "DIR")]
    export: Option<PathBuf>,
    /// Largest number of DOFs solved densely; above it shift-invert Lanczos.
    #[arg(long, default_value_t = ModeOptions::default().dense_limit)]
    dense_limit: usize,
    /// Shift sigma of the sparse path (default -1e-6 max K_ii / max M_ii).
    #[arg(long, allow_hyphen_values = true)]
    shift: Option<f64>,
    /// --at static: number of load steps.
    #[arg(long, default_value_t = StaticOptions::default().steps)]
    steps: u32,
    /// --at static: relative Newton tolerance.
    #[arg(long, default_value_t = StaticOptions::default().tol)]
    tol: f64,
}

fn exit_code(e: &ModesError) -> ExitCode {
    ExitCode::from(match e {
        ModesError::Static(StaticError::NoConvergence { .. }) => EXIT_NEWTON,
        ModesError::Static(StaticError::Singular { .. })
        | ModesError::SingularMass { .. }
        | ModesError::ShiftSingular { .. }
        | ModesError::Eigen { .. } => EXIT_SINGULAR,
        ModesError::TooManyModes { .. } | ModesError::Initial(_) => EXIT_USAGE,
    })
}

/// A dense faer matrix as a sprs one (its nonzero entries).
fn sparse(a: &faer::Mat<f64>) -> CsMat<f64> {
    let mut tri = TriMat::new((a.nrows(), a.ncols()));
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            if a[(i, j)] != 0.0 {
                tri.add_triplet(i, j, a[(i, j)]);
            }
        }
    }
    tri.to_csc()
}

/// Writes the matrices of `--export` into `dir`; returns the file names.
fn export(
    dir: &Path,
    sys: &flexmb::modes::LinearizedSystem,
    reduced: bool,
) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files = vec![
        ("M.mtx", sys.mass()),
        ("D.mtx", sys.damping()),
        ("K.mtx", sys.stiffness()),
        ("B.mtx", sys.jacobian()),
    ];
    if reduced {
        let r = reduce(sys).map_err(|e| e.to_string())?;
        files.extend([
            ("N.mtx", sparse(&r.basis)),
            ("Mr.mtx", sparse(&r.mass)),
            ("Dr.mtx", sparse(&r.damping)),
            ("Kr.mtx", sparse(&r.stiffness)),
        ]);
    }
    let mut names = vec![];
    for (name, m) in &files {
        let path = dir.join(name);
        sprs::io::write_matrix_market(&path, m).map_err(|e| format!("{}: {e}", path.display()))?;
        names.push(name.to_string());
    }
    Ok(names)
}

pub(crate) fn modes_command(args: &ModesArgs) -> ExitCode {
    let file = match load(&args.model, &args.set) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let model = &file.model;
    let at = match args.at {
        At::Initial => LinearizeAt::Initial,
        At::Static => LinearizeAt::Static(StaticOptions {
            steps: args.steps.max(1),
            tol: args.tol,
            ..StaticOptions::default()
        }),
    };
    let sys = match linearize(model, &at) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return exit_code(&e);
        }
    };
    let mut opts = ModeOptions {
        count: args.count.unwrap_or(10),
        dense_limit: args.dense_limit,
        shift: args.shift,
    };
    let mut result = modes(&sys, &opts);
    // Without --count: all modes of a small system (the first check is
    // against n, the second against the manifold's DOFs).
    for _ in 0..2 {
        if let (None, Err(ModesError::TooManyModes { available, .. })) = (args.count, &result) {
            opts.count = *available;
            result = modes(&sys, &opts);
        }
    }
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return exit_code(&e);
        }
    };
    let (n, m) = (sys.n_dofs(), sys.n_constraints());
    let method = match result.method {
        Method::Dense => "dense (null-space basis of B, faer)".to_string(),
        Method::ShiftInvert { sigma, steps } => {
            format!("shift-invert Lanczos, sigma = {sigma:.3e}, {steps} steps")
        }
    };
    let manifold = result.manifold_dofs.map_or(String::new(), |r| {
        format!(", {r} on the constraint manifold")
    });
    let description = format!(
        "modes about the {}: {} DOFs, {} constraints{manifold}; {method}",
        sys.at, n, m
    );
    outln!("{description}");
    outln!(
        "{:>5} {:>18} {:>18} {:>18}",
        "mode",
        "omega [rad/s]",
        "f [Hz]",
        "omega^2"
    );
    for (k, md) in result.modes.iter().enumerate() {
        let im = if md.eigenvalue_im != 0.0 {
            format!("  (imaginary part of omega^2: {:.6e})", md.eigenvalue_im)
        } else {
            String::new()
        };
        outln!(
            "{:>5} {:>18.9e} {:>18.9e} {:>18.9e}{im}",
            k + 1,
            md.omega,
            md.hz(),
            md.eigenvalue
        );
    }
    if !result.damped.is_empty() {
        outln!("damped eigenvalues s = re + i im of the first-order form (D != 0):");
        outln!(
            "{:>5} {:>18} {:>18} {:>18} {:>12}",
            "k",
            "re [1/s]",
            "im [rad/s]",
            "|s| [rad/s]",
            "zeta"
        );
        for (k, s) in result.damped.iter().enumerate() {
            outln!(
                "{:>5} {:>18.9e} {:>18.9e} {:>18.9e} {:>12.6}",
                k + 1,
                s.re,
                s.im,
                s.modulus(),
                s.damping_ratio()
            );
        }
    }
    if let Some(dir) = &args.export {
        match export(dir, &sys, result.method == Method::Dense) {
            Ok(names) => outln!("exported to {}: {}", dir.display(), names.join(", ")),
            Err(e) => {
                eprintln!("error: --export: {e}");
                return ExitCode::from(EXIT_OUTPUT);
            }
        }
    }
    if let Some(path) = &args.output {
        let amplitude = args
            .amplitude
            .unwrap_or_else(|| flexmb::output::default_amplitude(model, &sys.u));
        if let Err(e) = flexmb::output::write_modes(
            path,
            model,
            &sys,
            &result,
            amplitude,
            &file.text,
            &description,
        ) {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_OUTPUT);
        }
        outln!("output: {}", path.display());
        if let Some(xmf) = flexmb::output::xdmf_path(path).filter(|x| x.exists()) {
            outln!("ParaView: {} (one time step per mode)", xmf.display());
        }
    }
    ExitCode::SUCCESS
}
