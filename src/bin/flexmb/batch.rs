//! `flexmb batch` and `flexmb batch-merge`: sweeps in parallel, shards and their merge.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use clap::Args;

use flexmb::batch::{
    default_shards, merge_shards, run_batch, summary_file_name, write_emitted, BatchError,
    BatchOptions, EmitSpec, EmitTarget, MergeAfter, Shard, Sweep, WallTime,
};

use super::{progress_bar, EXIT_CASE_FAILED, EXIT_INTERRUPTED, EXIT_OUTPUT, EXIT_USAGE};

#[derive(Args)]
pub(crate) struct BatchArgs {
    /// Sweep file (TOML, see docs/batch.md).
    sweep: PathBuf,
    /// Output folder (default: `batch-<sweep file stem>`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Cases run at the same time (default: the cores divided by --threads,
    /// or all cores).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Threads of each case (its assembly and factorization; default: the
    /// cores divided by --jobs, or 1). Jobs x threads must not exceed the
    /// cores (RAYON_NUM_THREADS, else all cores); the results do not depend on it.
    #[arg(long, value_name = "N", default_value_t = 0)]
    threads: usize,
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
    /// Run nothing: write job scripts that run the sweep as a cluster job
    /// array plus a merge job, `slurm` (`OUT/slurm/`: array.sbatch,
    /// merge.sbatch, submit.sh) or `k8s` (`OUT/k8s/`: shards.yaml,
    /// merge.yaml); docs/cluster.md.
    #[arg(long, value_name = "slurm|k8s", conflicts_with_all = ["shard", "jobs", "resume"])]
    emit: Option<EmitTarget>,
    /// --emit: array tasks N, task I running --shard I/N (default: one per
    /// case, at most 1000).
    #[arg(long, value_name = "N", requires = "emit")]
    shards: Option<usize>,
    /// --emit: cores per task, also each task's --jobs.
    #[arg(long, value_name = "C", default_value_t = 1, requires = "emit")]
    cpus_per_task: usize,
    /// --emit: time limit of each task, in Slurm's formats (M, M:S, H:M:S,
    /// D-H, D-H:M, D-H:M:S).
    #[arg(long, value_name = "T", default_value = "01:00:00", requires = "emit")]
    time: WallTime,
    /// --emit: the flexmb binary the tasks run (default: this one).
    #[arg(long, value_name = "PATH", requires = "emit")]
    flexmb: Option<PathBuf>,
    /// --emit slurm: start the merge after the array tasks all succeeded
    /// (ok, `afterok`) or after they all ended however (any, `afterany`:
    /// the merge then lists the missing cases and exits 6).
    #[arg(long, value_name = "ok|any", default_value = "ok", requires = "emit")]
    merge_after: MergeAfter,
    /// --emit k8s: the container image, holding the flexmb binary, the sweep
    /// and its base model at their paths here.
    #[arg(long, default_value = "flexmb:latest", requires = "emit")]
    image: String,
    /// --emit k8s: the ReadWriteMany volume claim mounted at the output folder.
    #[arg(long, default_value = "flexmb-results", requires = "emit")]
    claim: String,
}

#[derive(Args)]
pub(crate) struct BatchMergeArgs {
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

/// The sweep file at `path` ([`Sweep::from_file_with`]), or its error
/// printed and the usage exit code.
fn load_sweep(path: &Path, force: bool) -> Result<Sweep, ExitCode> {
    Sweep::from_file_with(path, force).map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(EXIT_USAGE)
    })
}

pub(crate) fn batch(args: &BatchArgs) -> ExitCode {
    let sweep = match load_sweep(&args.sweep, args.force) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let shard = args.shard.unwrap_or(Shard::ALL);
    let out = args.out.clone().unwrap_or_else(|| {
        let stem = args.sweep.file_stem().unwrap_or_default().to_string_lossy();
        PathBuf::from(format!("batch-{stem}"))
    });
    if let Some(target) = args.emit {
        return emit(args, target, &sweep, &out);
    }
    let selected = sweep
        .cases
        .iter()
        .filter(|c| shard.contains(c.index))
        .count();
    let cores = rayon::current_num_threads();
    let (jobs, threads) = match flexmb::batch::split_cores(args.jobs, args.threads, cores) {
        Ok(split) => split,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if !args.quiet {
        eprintln!(
            "{}: {} cases, shard {shard}: {selected} cases, {jobs} at a time x {threads} threads, output in {}",
            sweep.file,
            sweep.cases.len(),
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
        jobs,
        threads,
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

/// `flexmb batch --emit`: writes the job files and prints how to submit them.
fn emit(args: &BatchArgs, target: EmitTarget, sweep: &Sweep, out: &Path) -> ExitCode {
    let absolute = |what: &str, p: &Path| {
        std::path::absolute(p).map_err(|e| format!("{what} {}: {e}", p.display()))
    };
    let flexmb = match &args.flexmb {
        Some(p) if !p.is_file() => Err(format!("--flexmb {}: no such file", p.display())),
        Some(p) => absolute("--flexmb", p),
        None => std::env::current_exe().map_err(|e| format!("the flexmb binary's path: {e}")),
    };
    let paths = flexmb.and_then(|flexmb| {
        Ok((
            flexmb,
            absolute("sweep", &args.sweep)?,
            absolute("--out", out)?,
        ))
    });
    let (flexmb, sweep_path, out) = match paths {
        Ok(p) => p,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let spec = EmitSpec {
        target,
        flexmb,
        sweep: sweep_path,
        out,
        cases: sweep.cases.len(),
        shards: args
            .shards
            .unwrap_or_else(|| default_shards(sweep.cases.len())),
        cpus_per_task: args.cpus_per_task,
        time: args.time,
        merge_after: args.merge_after,
        image: args.image.clone(),
        claim: args.claim.clone(),
    };
    let files = match spec.files() {
        Ok(f) => f,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if let Err(e) = write_emitted(&files) {
        eprintln!("error: {e}");
        return ExitCode::from(EXIT_OUTPUT);
    }
    for f in &files {
        outln!("wrote {}", f.path.display());
    }
    let dir = spec.dir();
    match target {
        EmitTarget::Slurm => outln!(
            "{} cases in {} array tasks; submit: {} (prints ARRAY MERGE job ids)",
            sweep.cases.len(),
            spec.shards,
            dir.join("submit.sh").display()
        ),
        EmitTarget::K8s => outln!(
            "{} cases in {} indexed pods; submit: kubectl apply -f {}, once done: kubectl apply -f {}",
            sweep.cases.len(),
            spec.shards,
            dir.join("shards.yaml").display(),
            dir.join("merge.yaml").display()
        ),
    }
    ExitCode::SUCCESS
}

pub(crate) fn batch_merge(args: &BatchMergeArgs) -> ExitCode {
    let sweep = match load_sweep(&args.sweep, args.force) {
        Ok(s) => s,
        Err(code) => return code,
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
pub(crate) fn shard_count(dir: &Path) -> Result<usize, String> {
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
