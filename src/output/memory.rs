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
