//! Running the cases of a sweep on a rayon pool and writing the summary.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::shard::Shard;
use super::sweep::{Case, Sweep};
use crate::integrate::IntegratorSpec;
use crate::model::load_model_with_sets;
use crate::run::{RunSummary, Simulation};

/// How to run a sweep.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// Output folder (created if missing).
    pub out: PathBuf,
    /// Worker threads; 0 = one per core.
    pub jobs: usize,
    /// Which cases to run.
    pub shard: Shard,
}

/// What one case did.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// The case.
    pub case: Case,
    /// Its HDF5 file, if the run started.
    pub output: Option<PathBuf>,
    /// The run's summary, if the model built and the run started.
    pub summary: Option<RunSummary>,
    /// Why the case failed: bad model or integrator settings, a step
    /// failure, or an output error; `None` when it completed.
    pub failure: Option<String>,
}

impl CaseResult {
    /// `completed` or `failed`.
    pub fn status(&self) -> &'static str {
        if self.failure.is_some() {
            "failed"
        } else {
            "completed"
        }
    }

    /// One line for the terminal.
    pub fn line(&self) -> String {
        match &self.summary {
            Some(s) => format!("{}: {}", self.case.id, s.line()),
            None => format!(
                "{}: FAILED: {}",
                self.case.id,
                self.failure.as_deref().unwrap_or_default()
            ),
        }
    }
}

/// A batch-level error (the output folder or the summary cannot be written).
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// A file or folder could not be written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The thread pool could not be started.
    #[error("cannot start {jobs} worker threads: {message}")]
    Pool {
        /// Requested threads.
        jobs: usize,
        /// Why.
        message: String,
    },
}

/// The summary file of a shard: `summary.csv` for the whole sweep,
/// `summary-I-of-N.csv` for shard I of N > 1 (so shards can share a folder).
pub fn summary_file_name(shard: Shard) -> String {
    if shard.count == 1 {
        "summary.csv".into()
    } else {
        format!("summary-{}-of-{}.csv", shard.index, shard.count)
    }
}

/// Runs the cases of `opts.shard` on `opts.jobs` threads, each into
/// `<out>/<case id>.h5`, calls `on_finish` as each case ends (from the
/// worker thread), writes the summary ([`summary_file_name`]) and returns
/// the results in expansion order. A failing case is recorded and does not
/// stop the others.
pub fn run_batch(
    sweep: &Sweep,
    opts: &BatchOptions,
    on_finish: &(dyn Fn(&CaseResult) + Sync),
) -> Result<Vec<CaseResult>, BatchError> {
    std::fs::create_dir_all(&opts.out).map_err(|source| BatchError::Io {
        path: opts.out.clone(),
        source,
    })?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs)
        .build()
        .map_err(|e| BatchError::Pool {
            jobs: opts.jobs,
            message: e.to_string(),
        })?;
    let selected: Vec<&Case> = sweep
        .cases
        .iter()
        .filter(|c| opts.shard.contains(c.index))
        .collect();
    let results: Vec<CaseResult> = pool.install(|| {
        selected
            .par_iter()
            .with_max_len(1)
            .map(|case| {
                let r = run_case(sweep, case, &opts.out);
                on_finish(&r);
                r
            })
            .collect()
    });
    let path = opts.out.join(summary_file_name(opts.shard));
    std::fs::write(&path, summary_csv(sweep, &results))
        .map_err(|source| BatchError::Io { path, source })?;
    Ok(results)
}

/// Builds the case's model (base text + `[set]` + the case's values) and
/// runs it exactly as `flexmb run -o <out>/<id>.h5` would.
fn run_case(sweep: &Sweep, case: &Case, out: &Path) -> CaseResult {
    let mut result = CaseResult {
        case: case.clone(),
        output: None,
        summary: None,
        failure: None,
    };
    let name = sweep.base.display().to_string();
    let built = load_model_with_sets(&sweep.base_text, &name, &sweep.sets(case)).and_then(|f| {
        let config = f.integrator(&IntegratorSpec::default())?;
        Ok((f, config))
    });
    let (file, config) = match built {
        Ok(b) => b,
        Err(e) => {
            result.failure = Some(e.to_string());
            return result;
        }
    };
    let sim = Simulation::new(file.model);
    let path = out.join(format!("{}.h5", case.id));
    match sim.run_to_file(&config, &file.text, &file.output, Some(&path), &mut |_| {}) {
        Ok(s) => {
            result.failure = s.failure.as_ref().map(|e| e.to_string());
            result.summary = Some(s);
        }
        Err(e) => result.failure = Some(e.to_string()),
    }
    result.output = Some(path);
    result
}

/// The summary columns after the case id and the parameters.
const COLUMNS: [&str; 9] = [
    "status",
    "failure_reason",
    "steps",
    "t_end_reached",
    "newton_iterations",
    "newton_iterations_per_step",
    "wall_seconds",
    "max_rel_energy_change",
    "max_position_violation",
];

/// `summary.csv` (RFC 4180): a header, then one row per case; numbers in
/// Rust's shortest round-trip form (`{}` or `{:e}`), empty cells where a case has no run or
/// does not set a parameter.
fn summary_csv(sweep: &Sweep, results: &[CaseResult]) -> String {
    let mut out = String::new();
    let header: Vec<&str> = std::iter::once("case")
        .chain(sweep.keys.iter().map(String::as_str))
        .chain(COLUMNS)
        .collect();
    push_row(&mut out, header.iter().map(|s| s.to_string()));
    for r in results {
        let params = sweep.keys.iter().map(|k| match r.case.value(k) {
            Some(toml::Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => String::new(),
        });
        let run: Vec<String> = match &r.summary {
            Some(s) => vec![
                s.steps.to_string(),
                s.t_end_reached.to_string(),
                s.newton_iterations.to_string(),
                s.iterations_per_step().to_string(),
                s.wall_seconds.to_string(),
                format!("{:e}", s.max_rel_energy_change),
                format!("{:e}", s.max_position_violation),
            ],
            None => vec![String::new(); COLUMNS.len() - 2],
        };
        let row = std::iter::once(r.case.id.clone())
            .chain(params)
            .chain([
                r.status().to_string(),
                r.failure.clone().unwrap_or_default(),
            ])
            .chain(run);
        push_row(&mut out, row);
    }
    out
}

/// Appends one CSV record, quoting fields that contain `,`, `"` or a line break.
fn push_row(out: &mut String, fields: impl Iterator<Item = String>) {
    let fields: Vec<String> = fields
        .map(|f| {
            if f.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f
            }
        })
        .collect();
    out.push_str(&fields.join(","));
    out.push('\n');
}
