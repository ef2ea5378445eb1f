//! `flexmb plot`: PNG charts of a run's DOFs, energies, statistics and
//! probes against time, or of a summary column.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{EXIT_OUTPUT, EXIT_USAGE};

#[derive(Args)]
pub(crate) struct PlotArgs {
    /// A run's HDF5 file (time histories) or a batch `summary.csv` (table chart).
    input: PathBuf,
    /// PNG file to write.
    #[arg(short, long)]
    output: PathBuf,
    /// DOF to plot against time by name, e.g. `top.p0`, `n3.y` (HDF5 input; repeatable).
    #[arg(long)]
    dof: Vec<String>,
    /// Energy to plot against time: kinetic, potential, total, external_work
    /// (HDF5 input; repeatable).
    #[arg(long)]
    energy: Vec<String>,
    /// Method statistic to plot against time, e.g. `factorizations`, `nfcn`
    /// (HDF5 input; repeatable).
    #[arg(long)]
    stat: Vec<String>,
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
    /// x-axis label with units (default: `t (s)` for run files, the column name for tables).
    #[arg(long)]
    xlabel: Option<String>,
    /// y-axis label with units (default: what is drawn, with its unit where
    /// known, for run files; the column name for tables).
    #[arg(long)]
    ylabel: Option<String>,
    /// Image size in pixels, WIDTHxHEIGHT.
    #[arg(long, default_value = "1000x650")]
    size: String,
    /// Logarithmic x axis (decimal logarithm of the values, which must be positive).
    #[arg(long)]
    logx: bool,
    /// Logarithmic y axis (decimal logarithm of the values, which must be positive).
    #[arg(long)]
    logy: bool,
}

pub(crate) fn plot(args: &PlotArgs) -> ExitCode {
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
        use flexmb::plot::Quantity;
        let quantities: Vec<Quantity> = (args.dof.iter().cloned().map(Quantity::Dof))
            .chain(args.energy.iter().cloned().map(Quantity::Energy))
            .chain(args.stat.iter().cloned().map(Quantity::Stat))
            .chain(args.probe.iter().cloned().map(Quantity::Probe))
            .collect();
        if quantities.is_empty() {
            return usage(
                "a run file chart needs at least one --dof, --energy, --stat or --probe NAME"
                    .into(),
            );
        }
        flexmb::plot::run_chart(&args.input, &quantities).map(|mut c| {
            if let Some(l) = &args.xlabel {
                c.x_label = l.clone();
            }
            if let Some(l) = &args.ylabel {
                c.y_label = l.clone();
            }
            c
        })
    };
    let chart = match chart.and_then(|c| c.log10(args.logx, args.logy, &args.input)) {
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
