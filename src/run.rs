//! The time loop: start, step, record, summarize.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::assembly::Assembler;
use crate::assembly::Mechanics;
use crate::integrate::{
    accumulate_stats, InitialCorrection, IntegratorConfig, NewtonTimings, StatSpec, State,
    StepError, Steps, DEFAULT_MAX_STEPS,
};
use crate::model::Model;
use crate::output::ProbeSummary;
use crate::output::{AttrValue, RunSource};
use crate::output::{ConstraintNorms, Energy};
use crate::output::{
    Hdf5Recorder, Mesh, NewtonStats, NullRecorder, OutputConfig, OutputError, OutputInterval,
    Recorder, RunInfo, RunStatus, RunTotals, SizeEstimate, StepRecord,
};

mod stepper;

pub use stepper::{SimulationError, Stepper};

/// Why [`Simulation::run_to_file`] could not write its output.
#[derive(Debug, thiserror::Error)]
pub enum RunFileError {
    /// The HDF5 file could not be created.
    #[error("cannot create the output file {source}")]
    Create {
        /// The file.
        path: PathBuf,
        /// Why.
        source: OutputError,
    },
    /// Writing the output failed during the run (a full disk, a file size
    /// limit): the run stopped there.
    #[error("cannot write the output file {source}; {kept}")]
    Output {
        /// Why.
        source: OutputError,
        /// What the file holds now, read back from it.
        kept: String,
    },
}

/// What a run's file holds after an output error stopped the run: its
/// recorded steps and status, read back (the status is `failed` where the
/// file could still be written, else `running` with the steps up to the last
/// flush).
fn kept_in(path: Option<&Path>) -> String {
    let read = path.map(|p| {
        let file = crate::output::Hdf5Reader::open(p)?;
        let rows = file.shape("time")?.first().copied().unwrap_or(0);
        let status = file
            .root_attrs()?
            .into_iter()
            .find_map(|(name, v)| match (name.as_str(), v) {
                ("status", AttrValue::Str(s)) => Some(s),
                _ => None,
            })
            .unwrap_or_default();
        Ok::<_, OutputError>((rows, status))
    });
    match read {
        Some(Ok((rows, status))) => {
            format!("the file keeps {rows} recorded steps with status \"{status}\"")
        }
        Some(Err(_)) => "the file cannot be read back".into(),
        None => "no file was being written".into(),
    }
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Integrator name.
    pub integrator: String,
    /// Steps completed.
    pub steps: u64,
    /// Total Newton iterations.
    pub newton_iterations: u64,
    /// Last time reached.
    pub t_end_reached: f64,
    /// Total energy at t = 0.
    pub energy_initial: f64,
    /// max |E(t) - E(0) - W(t)| / s over recorded steps ([`EnergyBalance`]:
    /// W the work of loads other than gravity, dampers and rheonomic joints;
    /// s = max(|E0|, max |W|), or max(max T, max |E|) where both are 0).
    pub max_rel_energy_change: f64,
    /// Same at the last step.
    pub final_rel_energy_change: f64,
    /// Largest position-constraint violation over recorded steps.
    pub max_position_violation: f64,
    /// Wall time of the time loop (s).
    pub wall_seconds: f64,
    /// Why the run stopped early, if it did.
    pub failure: Option<StepError>,
    /// Summary of each probe over the recorded steps (model order).
    pub probes: Vec<(String, ProbeSummary)>,
    /// Where the Newton iterations spent their time, when the integrator
    /// configuration asked for it (`IntegratorConfig::timing`).
    pub timings: Option<NewtonTimings>,
    /// The method's statistics over the run (name, total), in its order.
    pub stats: Vec<(String, f64)>,
    /// The totals of the method's counters (name, count), in its order: the
    /// counters of [`RunSummary::stats`] as integers.
    pub counts: Vec<(String, u64)>,
    /// Largest velocity-constraint violation over recorded steps.
    pub max_velocity_violation: f64,
    /// max |B a + (B v)_u v + 2 Phi_tu v + Phi_tt| over recorded steps (the
    /// acceleration-level residual, docs/output-format.md).
    pub max_acceleration_violation: f64,
    /// The initial state's constraint residuals and its projection, if any.
    pub initial: InitialCorrection,
    /// The signal number that stopped the run at the end of a step
    /// ([`Simulation::stop_on`]), if one did.
    pub interrupted: Option<usize>,
}

impl RunSummary {
    /// The total of statistic `name` of the method, if it reports one.
    pub fn stat(&self, name: &str) -> Option<f64> {
        self.stats.iter().find(|s| s.0 == name).map(|s| s.1)
    }

    /// The total of the method's counter `name` (e.g. `nreject`), if it
    /// reports one (`None` for a measure).
    pub fn count(&self, name: &str) -> Option<u64> {
        self.counts.iter().find(|s| s.0 == name).map(|s| s.1)
    }

    /// Newton iterations per completed step.
    pub fn iterations_per_step(&self) -> f64 {
        if self.steps == 0 {
            0.0
        } else {
            self.newton_iterations as f64 / self.steps as f64
        }
    }

    /// One line for the terminal, then the method's statistics other than
    /// the Newton iterations.
    pub fn line(&self) -> String {
        if self.failure.is_some() && self.steps == 0 && self.max_rel_energy_change.is_nan() {
            // The run failed before recording its initial state: no energy
            // or residual to report.
            return format!(
                "FAILED before the first step | wall {:.3} s",
                self.wall_seconds
            );
        }
        let stats: Vec<String> = self
            .stats
            .iter()
            .filter(|(name, _)| name != "newton_iterations")
            .map(|(name, x)| {
                if x.fract() == 0.0 && x.abs() < 1e15 {
                    format!("{name} {x}")
                } else {
                    format!("{name} {x:.3e}")
                }
            })
            .collect();
        let stats = if stats.is_empty() {
            String::new()
        } else {
            format!(" | {}", stats.join(", "))
        };
        format!(
            "{} | steps {} to t = {} | {:.3} Newton iterations/step | max relative energy change {:.3e} | \
             max constraint violation: position {:.3e}, velocity {:.3e}, acceleration {:.3e} | \
             wall {:.3} s{stats}",
            match (&self.failure, self.interrupted) {
                (Some(_), _) => "FAILED",
                (None, Some(_)) => "interrupted",
                (None, None) => "completed",
            },
            self.steps,
            crate::integrate::fmt_time(self.t_end_reached),
            self.iterations_per_step(),
            self.max_rel_energy_change,
            self.max_position_violation,
            self.max_velocity_violation,
            self.max_acceleration_violation,
            self.wall_seconds
        )
    }
}

/// A model with its assembled operators.
pub struct Simulation {
    /// The model.
    pub model: Model,
    /// Its assembler (pattern, slots, mass matrix).
    pub asm: Assembler,
    /// Checked once per step: a nonzero value (a signal number) stops the
    /// run at the end of the step ([`Simulation::stop_on`]).
    stop: Option<Arc<AtomicUsize>>,
}

impl Simulation {
    /// Assembles the model's operators.
    pub fn new(model: Model) -> Self {
        let asm = Assembler::new(&model);
        Simulation {
            model,
            asm,
            stop: None,
        }
    }

    /// Runs stop at the end of the step in which `flag` becomes nonzero
    /// (e.g. set to the signal number by a SIGINT or SIGTERM handler): the
    /// output is closed with `status = "interrupted"` and the summary's
    /// [`RunSummary::interrupted`] holds the value.
    pub fn stop_on(mut self, flag: Arc<AtomicUsize>) -> Self {
        self.stop = Some(flag);
        self
    }

    /// The problem as the methods see it: the model with its operators.
    pub fn mechanics(&self) -> Mechanics<'_> {
        Mechanics::new(&self.model, &self.asm)
    }

    /// Runs `config` from the model's initial state, recording into `recorder`
    /// at the interval of `output`; `progress` sees each step's state.
    /// Step failures end the run early and are reported in the summary
    /// (and as `status = "failed"` in the output); only output errors are
    /// `Err`, after the output is closed as `failed` where it still can be.
    pub fn run(
        &self,
        config: &IntegratorConfig,
        model_text: &str,
        output: &OutputConfig,
        recorder: &mut dyn Recorder,
        progress: &mut dyn FnMut(&State),
    ) -> Result<RunSummary, OutputError> {
        self.run_recording(config, model_text, output, recorder, progress)
            .inspect_err(|e| {
                // Best effort: a full disk may refuse this too.
                let _ = recorder.finish(
                    &RunStatus::Failed {
                        reason: format!("output error: {e}"),
                    },
                    f64::NAN,
                );
            })
    }

    fn run_recording(
        &self,
        config: &IntegratorConfig,
        model_text: &str,
        output: &OutputConfig,
        recorder: &mut dyn Recorder,
        progress: &mut dyn FnMut(&State),
    ) -> Result<RunSummary, OutputError> {
        let started = Instant::now();
        let mut sim = match Stepper::unstarted(self, config) {
            Ok(s) => s,
            Err(e) => return self.fail_at_start(config, recorder, e, started),
        };
        let specs = sim.integrator().statistics();
        recorder.begin(&run_info(
            &self.model,
            sim.integrator().name(),
            sim.integrator().parameters(),
            specs,
            model_text,
        ))?;
        let mut summary = self.empty_summary(&sim);
        let started_state = sim.start();
        if let Ok(c) = &started_state {
            summary.initial = *c;
        }
        if let Err(e) = started_state {
            return failed_start(summary, e, recorder, started);
        }

        let mut rec = RowBuffers::new(&self.model, specs.len());
        let e0 = sim.energy();
        summary.energy_initial = e0.total;
        rec.balance = EnergyBalance::new(e0.total);
        let mut rows = Rows {
            rec: &mut rec,
            summary: &mut summary,
            recorder,
        };
        self.record(
            &sim,
            &mut rows,
            sim.state(),
            NewtonStats::default(),
            sim.external_work(),
        )?;

        let t_end = config.t_end;
        let dense = matches!(output.interval, OutputInterval::Time(_))
            && sim.integrator().has_dense_output();
        let mut next_out = match output.interval {
            OutputInterval::Time(h) => h,
            OutputInterval::Steps(_) => 0.0,
        };
        let mut recorded_last = true;
        let mut last_stats = NewtonStats::default();
        let mut dense_state = State::initial(&self.mechanics());
        while sim.time() < t_end {
            let t_prev = sim.time();
            let report = match sim.step(t_end) {
                Ok(r) => r,
                Err(e) => {
                    if !recorded_last {
                        self.record(
                            &sim,
                            &mut rows,
                            sim.state(),
                            last_stats,
                            sim.external_work(),
                        )?;
                    }
                    rows.summary.failure = Some(e);
                    break;
                }
            };
            let t = sim.time();
            let h = t - t_prev;
            let work = sim.external_work();
            rows.summary.steps += 1;
            accumulate_stats(specs, &mut rows.rec.stats, &report.stats);
            last_stats = NewtonStats {
                iterations: report.newton_iterations,
                residual: report.residual,
            };
            let last = t >= t_end;
            // Whether the step's end is an output time.
            let due = if dense {
                // Output times inside the step from the method's dense output,
                // then the step's end when it is an output time or t_end.
                let OutputInterval::Time(h_out) = output.interval else {
                    unreachable!("dense output is used with a time interval only")
                };
                while next_out < t - 1e-9 * h {
                    if let Err(e) = sim.interpolate(next_out, &mut dense_state) {
                        rows.summary.failure = Some(e);
                        break;
                    }
                    dense_state.step = sim.state().step;
                    // The step's work, linearly in time inside the step.
                    let w_out = work - report.external_work * (t - next_out) / h;
                    self.record(&sim, &mut rows, &dense_state, last_stats, w_out)?;
                    next_out += h_out;
                }
                if rows.summary.failure.is_some() {
                    break;
                }
                let at_output = (next_out - t).abs() <= 1e-9 * h;
                if at_output {
                    next_out += h_out;
                }
                at_output
            } else {
                match output.interval {
                    OutputInterval::Steps(every) => rows.summary.steps.is_multiple_of(every),
                    OutputInterval::Time(h_out) => {
                        if t >= next_out - 1e-9 * h {
                            while next_out <= t + 1e-9 * h {
                                next_out += h_out;
                            }
                            true
                        } else {
                            false
                        }
                    }
                }
            };
            // A signal stops the run at the end of this step, which is then
            // recorded as the last row.
            let signal = self.stop.as_ref().map_or(0, |f| f.load(Ordering::Relaxed));
            let interrupted = signal != 0 && !last;
            recorded_last = due || last || interrupted;
            if recorded_last {
                self.record(&sim, &mut rows, sim.state(), last_stats, work)?;
            }
            progress(sim.state());
            if interrupted {
                rows.summary.interrupted = Some(signal);
                break;
            }
        }
        self.finish_run(&sim, summary, &mut rec, recorder, started)
    }

    /// The summary of a run about to start.
    fn empty_summary(&self, sim: &Stepper<'_>) -> RunSummary {
        RunSummary {
            integrator: sim.integrator().name(),
            steps: 0,
            newton_iterations: 0,
            t_end_reached: 0.0,
            energy_initial: 0.0,
            max_rel_energy_change: 0.0,
            final_rel_energy_change: 0.0,
            max_position_violation: 0.0,
            wall_seconds: 0.0,
            failure: None,
            probes: self.probe_summaries(),
            timings: None,
            stats: sim
                .integrator()
                .statistics()
                .iter()
                .map(|s| (s.name.to_string(), 0.0))
                .collect(),
            max_velocity_violation: 0.0,
            max_acceleration_violation: 0.0,
            initial: InitialCorrection::default(),
            interrupted: None,
            counts: Vec::new(),
        }
    }

    /// Records one row (`state` with its Newton statistics and the external
    /// work up to it): energies, constraint norms, probes; the summary's
    /// maxima follow.
    fn record(
        &self,
        sim: &Stepper<'_>,
        rows: &mut Rows<'_>,
        state: &State,
        stats: NewtonStats,
        work: f64,
    ) -> Result<(), OutputError> {
        let (rec, summary) = (&mut *rows.rec, &mut *rows.summary);
        let (e, c) = rec.write_row(sim, state, stats, work, rows.recorder)?;
        rec.balance.add(&e);
        summary.max_position_violation = summary.max_position_violation.max(c.position);
        summary.max_velocity_violation = summary.max_velocity_violation.max(c.velocity);
        summary.max_acceleration_violation = summary.max_acceleration_violation.max(c.acceleration);
        for ((_, s), x) in summary.probes.iter_mut().zip(&rec.probes) {
            s.add(state.t, *x);
        }
        Ok(())
    }

    /// The summary and the file's totals and status after the time loop.
    fn finish_run(
        &self,
        sim: &Stepper<'_>,
        mut summary: RunSummary,
        rec: &mut RowBuffers,
        recorder: &mut dyn Recorder,
        started: Instant,
    ) -> Result<RunSummary, OutputError> {
        let specs = sim.integrator().statistics();
        summary.t_end_reached = sim.time();
        summary.max_rel_energy_change = rec.balance.max_relative();
        summary.final_rel_energy_change = rec.balance.final_relative();
        summary.newton_iterations = sim.newton_iterations();
        summary.wall_seconds = started.elapsed().as_secs_f64();
        summary.timings = sim.integrator().timings();
        let totals: Vec<f64> = sim.stats().map(|(_, x)| x).collect();
        for ((_, total), x) in summary.stats.iter_mut().zip(&totals) {
            *total = *x;
        }
        summary.counts = sim.counts().map(|(n, c)| (n.to_string(), c)).collect();
        let status = match (&summary.failure, summary.interrupted) {
            (Some(e), _) => RunStatus::Failed {
                reason: e.to_string(),
            },
            (None, Some(signal)) => RunStatus::Interrupted {
                reason: format!(
                    "stopped by signal {signal} after step {} (t = {})",
                    summary.steps,
                    crate::integrate::fmt_time(sim.time())
                ),
            },
            (None, None) => RunStatus::Completed,
        };
        recorder.totals(&RunTotals {
            max_constraint_violation: [
                summary.max_position_violation,
                summary.max_velocity_violation,
                summary.max_acceleration_violation,
            ],
            steps: summary.steps,
            newton_iterations: summary.newton_iterations,
            wall_seconds: summary.wall_seconds,
            stats: stat_attributes(specs, &totals),
        });
        recorder.finish(&status, sim.time())?;
        Ok(summary)
    }

    /// [`output_estimate`] of this simulation's model.
    pub fn output_estimate(
        &self,
        config: &IntegratorConfig,
        output: &OutputConfig,
        model_text: &str,
    ) -> SizeEstimate {
        output_estimate(&self.model, config, output, model_text)
    }

    /// What a run does at step 0, without running: builds the method,
    /// checks or projects the initial state (`config.initialize`) and makes
    /// the initial accelerations and multipliers consistent, which factors
    /// the initial saddle-point matrix. `flexmb check` reports it.
    pub fn start(&self, config: &IntegratorConfig) -> Result<InitialCorrection, StepError> {
        Stepper::unstarted(self, config)?.start()
    }

    /// [`Simulation::run`] recording into a new HDF5 file at `path` (the
    /// default backend, [`Hdf5Recorder`]), or nowhere when `path` is `None`:
    /// what `flexmb run [-o FILE]` and every case of `flexmb batch` do. An
    /// XDMF side file is written as [`OutputConfig::for_model`] decides.
    pub fn run_to_file(
        &self,
        config: &IntegratorConfig,
        model_text: &str,
        output: &OutputConfig,
        path: Option<&Path>,
        progress: &mut dyn FnMut(&State),
    ) -> Result<RunSummary, RunFileError> {
        let mut recorder: Box<dyn Recorder> = match path {
            Some(path) => Box::new(
                Hdf5Recorder::create(path, output.for_model(&self.model)).map_err(|source| {
                    RunFileError::Create {
                        path: path.to_path_buf(),
                        source,
                    }
                })?,
            ),
            None => Box::new(NullRecorder),
        };
        let run = self.run(config, model_text, output, recorder.as_mut(), progress);
        // The file is closed (and read back) before the error is reported.
        drop(recorder);
        run.map_err(|source| RunFileError::Output {
            source,
            kept: kept_in(path),
        })
    }

    fn fail_at_start(
        &self,
        config: &IntegratorConfig,
        recorder: &mut dyn Recorder,
        e: StepError,
        started: Instant,
    ) -> Result<RunSummary, OutputError> {
        recorder.begin(&RunInfo {
            integrator: config.label(),
            parameters: config.parameters(),
            ..RunInfo::default()
        })?;
        recorder.finish(
            &RunStatus::Failed {
                reason: e.to_string(),
            },
            0.0,
        )?;
        Ok(RunSummary {
            integrator: config.label(),
            steps: 0,
            newton_iterations: 0,
            t_end_reached: 0.0,
            energy_initial: f64::NAN,
            max_rel_energy_change: f64::NAN,
            final_rel_energy_change: f64::NAN,
            max_position_violation: f64::NAN,
            wall_seconds: started.elapsed().as_secs_f64(),
            failure: Some(e),
            probes: self.probe_summaries(),
            timings: None,
            stats: Vec::new(),
            counts: Vec::new(),
            max_velocity_violation: f64::NAN,
            max_acceleration_violation: f64::NAN,
            initial: InitialCorrection::default(),
            interrupted: None,
        })
    }

    fn probe_summaries(&self) -> Vec<(String, ProbeSummary)> {
        self.model
            .probes
            .iter()
            .map(|p| (p.name.clone(), ProbeSummary::default()))
            .collect()
    }
}

/// What a recorder is told at `begin` about a run of `model`.
fn run_info(
    model: &Model,
    integrator: String,
    parameters: Vec<(String, AttrValue)>,
    specs: &[StatSpec],
    model_text: &str,
) -> RunInfo {
    RunInfo {
        integrator,
        parameters,
        model_text: model_text.to_string(),
        dof_names: model.dofs.names().to_vec(),
        multiplier_names: model.multiplier_names(),
        mesh: Mesh::from_model(model),
        probe_names: model.probes.iter().map(|p| p.name.clone()).collect(),
        stat_names: specs.iter().map(|s| s.name.to_string()).collect(),
    }
}

/// The estimated size of the output of a run of `model` with `config`
/// recorded with `output` ([`SizeEstimate`]), computed from the model alone
/// before anything is allocated for the run (no assembler): [`recorded_rows`]
/// rows of the model's layout, an upper bound from `max_steps` for an
/// adaptive method.
pub fn output_estimate(
    model: &Model,
    config: &IntegratorConfig,
    output: &OutputConfig,
    model_text: &str,
) -> SizeEstimate {
    let info = run_info(
        model,
        config.label(),
        config.parameters(),
        config.statistics(),
        model_text,
    );
    let max_steps = config
        .nominal_steps()
        .is_none()
        .then(|| adaptive_max_steps(config));
    SizeEstimate::new(
        &output.for_model(model),
        &info,
        recorded_rows(config, output.interval),
        max_steps,
    )
}

/// The step bound of an adaptive method: its `max_steps`.
fn adaptive_max_steps(config: &IntegratorConfig) -> u64 {
    match config.steps() {
        Steps::Adaptive { max_steps, .. } => max_steps,
        Steps::Fixed(_) => DEFAULT_MAX_STEPS,
    }
}

/// The rows a run of `config` records at `interval` if it completes: the
/// initial state, one row per `k` steps (exact for fixed steps) or per
/// `dt_out` of time (no more than one per step; one more at most), and the
/// last step. Fixed steps: `t_end / dt` steps; adaptive steps: at most their
/// `max_steps`, so the count is an upper bound.
pub fn recorded_rows(config: &IntegratorConfig, interval: OutputInterval) -> u64 {
    let steps = config
        .nominal_steps()
        .unwrap_or_else(|| adaptive_max_steps(config));
    let recorded = match interval {
        OutputInterval::Steps(k) => steps.div_ceil(k.max(1)),
        OutputInterval::Time(h) => {
            let per_time = (config.t_end / h).ceil() + 1.0;
            if per_time < steps as f64 {
                per_time as u64
            } else {
                steps
            }
        }
    };
    recorded.saturating_add(1)
}

/// Buffers for the recorded rows.
struct RowBuffers {
    a: Vec<f64>,
    lambda: Vec<f64>,
    probes: Vec<f64>,
    /// Statistics accumulated since the last recorded row.
    stats: Vec<f64>,
    /// The energy balance over the recorded steps.
    balance: EnergyBalance,
}

impl RowBuffers {
    fn new(model: &Model, n_stats: usize) -> Self {
        RowBuffers {
            a: vec![0.0; model.n_dofs()],
            lambda: vec![0.0; model.n_constraints()],
            probes: vec![0.0; model.probes.len()],
            stats: vec![0.0; n_stats],
            balance: EnergyBalance::new(0.0),
        }
    }

    /// Records `state` of `sim` (the stepper's method, with the work `work`
    /// done until then and the Newton statistics `newton` of its step) into
    /// `recorder`: its energy, the method's accelerations and multipliers
    /// aligned to the state's time, the constraint residuals, the probe
    /// values (left in `self.probes`) and the statistics accumulated since
    /// the last row (then reset). Returns the energy and residuals.
    fn write_row(
        &mut self,
        sim: &Stepper<'_>,
        state: &State,
        newton: NewtonStats,
        work: f64,
        recorder: &mut dyn Recorder,
    ) -> Result<(Energy, ConstraintNorms), OutputError> {
        let problem = sim.simulation();
        let e = sim.energy_at(state, work);
        sim.integrator()
            .aligned(state, &mut self.a, &mut self.lambda);
        let c = problem
            .mechanics()
            .constraint_norms(&state.u, &state.v, &self.a, state.t);
        let mut step = StepRecord {
            step: state.step,
            time: state.t,
            u: &state.u,
            v: &state.v,
            a: &self.a,
            lambda: &self.lambda,
            energy: e,
            constraints: c,
            newton,
            probes: &[],
            stats: &self.stats,
        };
        for (p, x) in problem.model.probes.iter().zip(self.probes.iter_mut()) {
            *x = p.value(&step);
        }
        step.probes = &self.probes;
        let written = recorder.record(&step);
        self.stats.fill(0.0);
        written.map(|()| (e, c))
    }
}

/// Where recorded rows go: the per-row buffers, the summary's maxima and
/// the recorder.
struct Rows<'a> {
    rec: &'a mut RowBuffers,
    summary: &'a mut RunSummary,
    recorder: &'a mut dyn Recorder,
}

/// A run whose start failed (the initial projection or acceleration):
/// nothing recorded, the measures undefined, as in `fail_at_start`.
fn failed_start(
    mut summary: RunSummary,
    e: StepError,
    recorder: &mut dyn Recorder,
    started: Instant,
) -> Result<RunSummary, OutputError> {
    summary.max_rel_energy_change = f64::NAN;
    summary.final_rel_energy_change = f64::NAN;
    summary.max_position_violation = f64::NAN;
    summary.max_velocity_violation = f64::NAN;
    summary.max_acceleration_violation = f64::NAN;
    summary.failure = Some(e.clone());
    recorder.finish(
        &RunStatus::Failed {
            reason: e.to_string(),
        },
        0.0,
    )?;
    summary.wall_seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// The energy balance of a run: the error `E - E0 - W` of each recorded
/// step (`W` the work of the loads other than gravity, of the dampers and
/// of the rheonomic joints), relative to the run's energy scale
/// `s = max(|E0|, max |W|)`, or where both are zero (a pendulum released at
/// zero total energy) `s = max(max T, max |E|)` over the recorded steps (T
/// the kinetic energy); never zero (a model at rest with no energy: change
/// 0). A blow-up shows as a relative change far above 1.
#[derive(Debug, Clone, Copy)]
pub struct EnergyBalance {
    energy0: f64,
    max_work: f64,
    max_motion: f64,
    max_error: f64,
    last_error: f64,
}

impl EnergyBalance {
    /// A balance starting from total energy `energy0`.
    pub fn new(energy0: f64) -> Self {
        EnergyBalance {
            energy0,
            max_work: 0.0,
            max_motion: 0.0,
            max_error: 0.0,
            last_error: 0.0,
        }
    }

    /// Adds a recorded step.
    pub fn add(&mut self, e: &crate::output::Energy) {
        let error = e.total - self.energy0 - e.external_work;
        self.max_work = self.max_work.max(e.external_work.abs());
        self.max_motion = self.max_motion.max(e.kinetic.abs()).max(e.total.abs());
        self.max_error = self.max_error.max(error.abs());
        self.last_error = error;
    }

    /// The scale `s`.
    pub fn scale(&self) -> f64 {
        let s = self.energy0.abs().max(self.max_work);
        if s > 0.0 {
            s
        } else {
            self.max_motion.max(f64::MIN_POSITIVE)
        }
    }

    /// `max |E - E0 - W| / s`.
    pub fn max_relative(&self) -> f64 {
        self.max_error / self.scale()
    }

    /// `(E - E0 - W) / s` at the last recorded step.
    pub fn final_relative(&self) -> f64 {
        self.last_error / self.scale()
    }
}

/// The root attributes `stats.<name>` of the totals: counters as integers.
fn stat_attributes(specs: &[StatSpec], totals: &[f64]) -> Vec<(String, AttrValue)> {
    specs
        .iter()
        .zip(totals)
        .map(|(s, &x)| {
            let v = if s.integer {
                AttrValue::I64(x.round() as i64)
            } else {
                AttrValue::F64(x)
            };
            (s.name.to_string(), v)
        })
        .collect()
}

pub use crate::integrate::step_count;
