//! Running the cases of a sweep on a rayon pool and writing the summary.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use super::case::{BatchError, CaseResult};
use super::resume::resumed_summary;
use super::shard::Shard;
use super::summary::{summary_stem, write_summary, Row};
use super::sweep::{Case, Sweep};
use crate::input::{load_model_with_sets, ModelFile};
use crate::integrate::{IntegratorConfig, IntegratorSpec};
use crate::output::SizeEstimate;
use crate::run::{output_estimate, Simulation};

/// How to run a sweep.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// Output folder (created if missing).
    pub out: PathBuf,
    /// Cases run at the same time (worker threads); 0: see [`split_cores`].
    pub jobs: usize,
    /// Threads of each case's own rayon pool (its assembly and
    /// factorization); 0: see [`split_cores`].
    pub threads: usize,
    /// Which cases to run.
    pub shard: Shard,
    /// Skip a case whose file says `status = "completed"` for the same
    /// model text (see `batch/resume.rs`).
    pub resume: bool,
    /// Set (e.g. by a Ctrl-C handler) to start no further case: running
    /// cases finish, the summary lists the finished ones.
    pub stop: Option<Arc<AtomicBool>>,
    /// Run even when a case's estimated output exceeds its `[output]
    /// max_bytes` or the cases' outputs together exceed the free space of
    /// `out` (`flexmb batch --force`).
    pub force: bool,
}

/// A case ready to run: its model and integrator settings.
struct Planned {
    case: Case,
    file: ModelFile,
    config: IntegratorConfig,
    /// Estimated cost: DOFs x steps.
    cost: f64,
    /// Its output's estimated size.
    output: SizeEstimate,
}

/// A case after planning: ready to run, or already finished (its model did
/// not build, or `--resume` skips it).
enum Plan {
    Run(Box<Planned>),
    Done(Box<CaseResult>),
}

/// Builds the case's model (base text + `[set]` + the case's values) and
/// integrator settings; with `resume`, finishes it from its file when that
/// holds a completed run of the same model text.
fn plan(sweep: &Sweep, case: &Case, out: &Path, resume: bool) -> Plan {
    let name = sweep.base.display().to_string();
    let built = load_model_with_sets(&sweep.base_text, &name, &sweep.sets(case)).and_then(|f| {
        let config = f.integrator(&IntegratorSpec::default())?;
        Ok((f, config))
    });
    let (file, config) = match built {
        Ok(b) => b,
        Err(e) => {
            return Plan::Done(Box::new(CaseResult {
                case: case.clone(),
                output: None,
                summary: None,
                failure: Some(e.to_string()),
                resumed: false,
                wall_seconds: 0.0,
            }))
        }
    };
    let path = out.join(format!("{}.h5", case.id));
    if resume {
        if let Some(summary) = resumed_summary(&path, &file) {
            return Plan::Done(Box::new(CaseResult {
                case: case.clone(),
                output: Some(path),
                summary: Some(summary),
                failure: None,
                resumed: true,
                wall_seconds: 0.0,
            }));
        }
    }
    // Adaptive methods' step counts are unknown before the run: a nominal 1000.
    let cost = file.model.n_dofs().max(1) as f64 * config.nominal_steps().unwrap_or(1000) as f64;
    let output = output_estimate(&file.model, &config, &file.output, &file.text);
    Plan::Run(Box::new(Planned {
        case: case.clone(),
        file,
        config,
        cost,
        output,
    }))
}

/// The finished cases and the summary rewritten after each.
struct Progress<'a> {
    sweep: &'a Sweep,
    dir: &'a Path,
    stem: String,
    finished: Vec<(CaseResult, Row)>,
    /// The first summary write error; no case starts after it.
    error: Option<BatchError>,
}

impl Progress<'_> {
    /// Records a finished case and rewrites the summary of all finished cases.
    fn add(&mut self, r: CaseResult) {
        let row = Row::from_result(self.sweep, &r);
        self.finished.push((r, row));
        self.write();
    }

    fn write(&mut self) {
        let rows: Vec<&Row> = self.finished.iter().map(|(_, row)| row).collect();
        if let Err(e) = write_summary(self.sweep, &rows, self.dir, &self.stem) {
            self.error.get_or_insert(e);
        }
    }
}

/// The cases at the same time and the threads of each, `(jobs, threads)`,
/// of a batch on `cores` cores from `--jobs` and `--threads` (0: not given):
/// neither given, one case per core on one thread each (a sweep's cases
/// are independent: running them side by side scales best); one given, the
/// other takes the cores left (`cores / given`, at least 1); both given,
/// they must fit, `jobs x threads <= cores`, else
/// [`BatchError::Oversubscribed`], as is `--threads` alone above the cores.
/// `--jobs` alone above the cores keeps one thread per case (the cases then
/// share the cores, as before `--threads` existed).
pub fn split_cores(
    jobs: usize,
    threads: usize,
    cores: usize,
) -> Result<(usize, usize), BatchError> {
    let cores = cores.max(1);
    let split = match (jobs, threads) {
        (0, 0) => (cores, 1),
        (j, 0) => (j, (cores / j).max(1)),
        (0, t) => ((cores / t).max(1), t),
        (j, t) => (j, t),
    };
    if threads > 0 && split.0 * split.1 > cores {
        return Err(BatchError::Oversubscribed {
            jobs: split.0,
            threads: split.1,
            cores,
        });
    }
    Ok(split)
}

/// Runs the cases of `opts.shard` on `opts.jobs` threads, each into
/// `<out>/<case id>.h5`, calls `on_finish` as each case ends (from the
/// worker thread) and returns the finished cases in expansion order.
///
/// First every case's model is built (in parallel): a case whose model does
/// not build is finished as failed, and with `opts.resume` a case whose file
/// holds a completed run of the same model text is finished from that file.
/// The others run largest first (estimated cost: DOFs x steps), so the big
/// cases do not straggle at the end; each worker thread takes the next
/// largest case when it is free. After every finished case the summary
/// (`summary.csv` and `summary.h5`, or the shard's, see [`summary_stem`])
/// is rewritten with every finished case in expansion order, through a
/// temporary file and a rename. When `opts.stop` is set no further case
/// starts; running cases finish. A failing case is recorded and does not
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
    let (jobs, threads) = split_cores(opts.jobs, opts.threads, rayon::current_num_threads())?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| BatchError::Pool {
            jobs,
            message: e.to_string(),
        })?;
    let selected: Vec<&Case> = sweep
        .cases
        .iter()
        .filter(|c| opts.shard.contains(c.index))
        .collect();
    let plans: Vec<Plan> = pool.install(|| {
        selected
            .par_iter()
            .map(|c| plan(sweep, c, &opts.out, opts.resume))
            .collect()
    });
    let mut progress = Progress {
        sweep,
        dir: &opts.out,
        stem: summary_stem(opts.shard),
        finished: Vec::new(),
        error: None,
    };
    let mut queue: Vec<Planned> = Vec::new();
    for p in plans {
        match p {
            Plan::Run(p) => queue.push(*p),
            Plan::Done(r) => {
                on_finish(&r);
                let row = Row::from_result(sweep, &r);
                progress.finished.push((*r, row));
            }
        }
    }
    progress.write();
    if !opts.force {
        check_output_size(&queue, &opts.out)?;
    }
    // Taken from the end: largest first; a stable sort keeps equal costs in
    // expansion order (reversed: popped from the end, lower index first).
    queue.reverse();
    queue.sort_by(|a, b| a.cost.total_cmp(&b.cost));
    let workers = pool.current_num_threads().min(queue.len());
    let queue = Mutex::new(queue);
    let progress = Mutex::new(progress);
    let stopped = || opts.stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst));
    // Each worker runs its cases in its own pool of `threads` threads, so
    // that a case's parallel assembly neither spreads over the other cases'
    // workers nor depends on them (the results do not depend on the threads).
    let worker = || -> Result<(), BatchError> {
        let case_pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| BatchError::Pool {
                jobs: threads,
                message: e.to_string(),
            })?;
        loop {
            let Some(case) = lock(&queue).pop() else {
                break;
            };
            if stopped() {
                break;
            }
            let r = case_pool.install(|| run_case(case, &opts.out));
            on_finish(&r);
            let mut p = lock(&progress);
            p.add(r);
            if p.error.is_some() {
                lock(&queue).clear();
            }
        }
        Ok(())
    };
    let pool_error = Mutex::new(None);
    pool.scope(|s| {
        for _ in 0..workers {
            s.spawn(|_| {
                if let Err(e) = worker() {
                    lock(&queue).clear();
                    *lock(&pool_error) = Some(e);
                }
            });
        }
    });
    if let Some(e) = pool_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let progress = progress.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = progress.error {
        return Err(e);
    }
    let mut results: Vec<CaseResult> = progress.finished.into_iter().map(|(r, _)| r).collect();
    results.sort_by_key(|r| r.case.index);
    Ok(results)
}

/// Refuses the batch before any case runs when a case's estimated output
/// exceeds its `[output] max_bytes` or the free space of `out`, or the
/// cases' outputs together exceed that free space (`docs/batch.md`); an
/// adaptive method's bound is refused only past `max_bytes`.
fn check_output_size(queue: &[Planned], out: &Path) -> Result<(), BatchError> {
    for p in queue {
        let path = out.join(format!("{}.h5", p.case.id));
        p.output
            .check(&path, p.file.output.max_bytes)
            .map_err(|source| BatchError::CaseOutput {
                case: p.case.id.clone(),
                source,
            })?;
    }
    // Adaptive methods' bounds are left out of the total (see
    // `SizeEstimate::check`): a disk that fills stops those cases plainly.
    let bytes: f64 = queue
        .iter()
        .filter(|p| p.output.max_steps.is_none())
        .map(|p| p.output.bytes)
        .sum();
    match fs4::available_space(out) {
        Ok(free) if bytes > free as f64 => Err(BatchError::FreeSpace {
            cases: queue.len(),
            bytes,
            free: free as f64,
            dir: out.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

/// Locks a mutex; a worker that panicked holding it left consistent data
/// (every update is one push or one clear), so poisoning is ignored.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs a planned case exactly as `flexmb run -o <out>/<id>.h5` would.
fn run_case(p: Planned, out: &Path) -> CaseResult {
    let started = std::time::Instant::now();
    let path = out.join(format!("{}.h5", p.case.id));
    let mut result = CaseResult {
        case: p.case.clone(),
        output: Some(path),
        summary: None,
        failure: None,
        resumed: false,
        wall_seconds: 0.0,
    };
    let sim = Simulation::new(p.file.model);
    let run = sim.run_to_file(
        &p.config,
        &p.file.text,
        &p.file.output,
        result.output.as_deref(),
        &mut |_| {},
    );
    match run {
        Ok(s) => {
            result.failure = s.failure.as_ref().map(|e| e.to_string());
            result.summary = Some(s);
        }
        Err(e) => result.failure = Some(e.to_string()),
    }
    result.wall_seconds = started.elapsed().as_secs_f64();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_times_threads_never_exceeds_the_cores() {
        // Neither given: one case per core, one thread each.
        assert_eq!(split_cores(0, 0, 16).unwrap(), (16, 1));
        // One given: the other takes the cores left.
        assert_eq!(split_cores(4, 0, 16).unwrap(), (4, 4));
        assert_eq!(split_cores(3, 0, 16).unwrap(), (3, 5));
        assert_eq!(split_cores(0, 4, 16).unwrap(), (4, 4));
        assert_eq!(split_cores(0, 2, 2).unwrap(), (1, 2));
        // Both given and fitting.
        assert_eq!(split_cores(2, 8, 16).unwrap(), (2, 8));
        // --jobs alone above the cores: one thread per case, as before.
        assert_eq!(split_cores(8, 0, 2).unwrap(), (8, 1));
        // Oversubscribed: refused, with the numbers.
        for (j, t) in [(2, 2), (0, 3), (3, 1)] {
            let e = split_cores(j, t, 2).unwrap_err().to_string();
            assert!(e.contains("more than the 2 cores"), "{j} x {t}: {e}");
        }
    }
}
