//! An in-memory [`Recorder`]: keeps every recorded step, for tests and library users.

use super::{
    ConstraintNorms, Energy, NewtonStats, OutputError, Recorder, RunInfo, RunStatus, RunTotals,
    StepRecord,
};

/// Stores every recorded step in vectors (row-major `[steps][n]`).
#[derive(Debug, Clone, Default)]
pub struct MemoryRecorder {
    /// Run metadata given at `begin`.
    pub info: RunInfo,
    /// Recorded times.
    pub time: Vec<f64>,
    /// Step numbers.
    pub step: Vec<u64>,
    /// Positions, one vector per recorded step.
    pub u: Vec<Vec<f64>>,
    /// Velocities.
    pub v: Vec<Vec<f64>>,
    /// Accelerations.
    pub a: Vec<Vec<f64>>,
    /// Multipliers.
    pub lambda: Vec<Vec<f64>>,
    /// Energies.
    pub energy: Vec<Energy>,
    /// Constraint residual norms.
    pub constraints: Vec<ConstraintNorms>,
    /// Newton statistics.
    pub newton: Vec<NewtonStats>,
    /// Probe values, one vector per recorded step.
    pub probes: Vec<Vec<f64>>,
    /// The method's statistics, one vector per recorded step.
    pub stats: Vec<Vec<f64>>,
    /// Final status, once finished.
    pub status: Option<RunStatus>,
    /// Last time reached.
    pub t_end_reached: f64,
    /// Run totals, once given.
    pub totals: Option<RunTotals>,
}

impl MemoryRecorder {
    /// The recorded history of position coordinate `name` (e.g. `bob.x`).
    ///
    /// ```
    /// use flexmb::integrate::IntegratorSpec;
    /// use flexmb::input::load_model_file;
    /// use flexmb::output::MemoryRecorder;
    /// use flexmb::run::Simulation;
    ///
    /// let file = load_model_file(concat!(env!("CARGO_MANIFEST_DIR"), "/models/double_pendulum.toml"))?;
    /// let config = file.integrator(&IntegratorSpec { t_end: Some(0.1), ..Default::default() })?;
    /// let mut rec = MemoryRecorder::default();
    /// Simulation::new(file.model).run(&config, &file.text, &file.output, &mut rec, &mut |_| {})?;
    /// let x = rec.dof("pendulum1.x").unwrap();
    /// assert_eq!((x.len(), x[0]), (11, 1.0)); // t = 0, 0.01, ..., 0.1
    /// assert!(rec.dof("pendulum3.x").is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dof(&self, name: &str) -> Option<Vec<f64>> {
        let k = self.info.dof_names.iter().position(|n| n == name)?;
        Some(self.u.iter().map(|row| row[k]).collect())
    }

    /// The recorded history of probe `name`.
    pub fn probe(&self, name: &str) -> Option<Vec<f64>> {
        let k = self.info.probe_names.iter().position(|n| n == name)?;
        Some(self.probes.iter().map(|row| row[k]).collect())
    }
}

impl Recorder for MemoryRecorder {
    fn begin(&mut self, info: &RunInfo) -> Result<(), OutputError> {
        self.info = info.clone();
        Ok(())
    }

    fn record(&mut self, rec: &StepRecord<'_>) -> Result<(), OutputError> {
        self.time.push(rec.time);
        self.step.push(rec.step);
        self.u.push(rec.u.to_vec());
        self.v.push(rec.v.to_vec());
        self.a.push(rec.a.to_vec());
        self.lambda.push(rec.lambda.to_vec());
        self.energy.push(rec.energy);
        self.constraints.push(rec.constraints);
        self.newton.push(rec.newton);
        self.probes.push(rec.probes.to_vec());
        self.stats.push(rec.stats.to_vec());
        Ok(())
    }

    fn totals(&mut self, totals: &RunTotals) {
        self.totals = Some(totals.clone());
    }

    fn finish(&mut self, status: &RunStatus, t_end_reached: f64) -> Result<(), OutputError> {
        self.status = Some(status.clone());
        self.t_end_reached = t_end_reached;
        Ok(())
    }
}
