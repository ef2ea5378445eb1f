//! Run output: the [`Recorder`] sink the time loop streams into, its HDF5
//! implementations and an in-memory recorder for tests and the library API.
//!
//! The layout every recorder produces is documented in `docs/output-format.md`.
//! The driver (`crate::run`) decides which steps are recorded (every k steps or
//! every `dt_out`); a recorder writes what it is given, restricted to the fields
//! selected in [`OutputConfig`].

mod config;
mod estimate;
mod hdf5;
mod memory;
mod mesh;
mod modes;
mod probe;
mod results;

pub use config::{Field, OutputConfig, OutputInterval};
pub use estimate::{SizeError, SizeEstimate, DEFAULT_MAX_BYTES};
pub use hdf5::xdmf::xdmf_path;
pub use hdf5::{
    path_component, read_hdf5, read_hdf5_run, write_table, Hdf5Reader, Hdf5Recorder, Hdf5Run,
    RunSource, TableColumn,
};
#[cfg(feature = "hdf5-c")]
pub use hdf5::{read_hdf5_c, Hdf5CReader, Hdf5CRecorder};
pub use memory::MemoryRecorder;
pub use mesh::{CellBlock, Mesh, MeshBody, MeshJoint, MeshPoint};
pub use modes::{default_amplitude, write_modes};
pub use probe::ProbeSummary;
pub use results::{
    Matrix, Recording, Results, ResultsError, Series, Stat, StatValues, CONSTRAINT_NAMES,
    ENERGY_NAMES,
};

// Vocabulary of the records, defined on the lowest floor that computes it.
pub use crate::assembly::{ConstraintNorms, Energy};
pub use crate::integrate::AttrValue;

/// What a run is: written once, as root attributes and name datasets, before the first step.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    /// Human-readable integrator name, e.g. `GSSSS V0(1,1,0) option 2, a-form`.
    pub integrator: String,
    /// Integrator parameters, each written as a root attribute `integrator.<name>`.
    pub parameters: Vec<(String, AttrValue)>,
    /// The model file text (empty for models built in code).
    pub model_text: String,
    /// One label per column of `/u`, `/v`, `/a`, e.g. `pendulum1.x`.
    pub dof_names: Vec<String>,
    /// One label per column of `/lambda`, e.g. `pin1[0]`.
    pub multiplier_names: Vec<String>,
    /// Points, elements, bodies and joints of the model (`/mesh`, `/points`,
    /// `/bodies`, `/joints` and the XDMF side file); empty for none.
    pub mesh: Mesh,
    /// Probe names (`/probes/<name>`), in the order of [`StepRecord::probes`].
    pub probe_names: Vec<String>,
    /// The method's statistics (`/stats/<name>`), in the order of [`StepRecord::stats`].
    pub stat_names: Vec<String>,
}

/// Newton statistics of one step.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NewtonStats {
    /// Number of Newton iterations (linear solves) of the step.
    pub iterations: u32,
    /// Max-norm of the residual at the last Newton iterate that was evaluated.
    pub residual: f64,
}

/// One recorded step: all vectors are at time `time` (aligned to t_{n+1}).
#[derive(Debug, Clone, Copy)]
pub struct StepRecord<'a> {
    /// Step number (0 = initial state).
    pub step: u64,
    /// Time t_{n+1}.
    pub time: f64,
    /// Positions.
    pub u: &'a [f64],
    /// Velocities.
    pub v: &'a [f64],
    /// Accelerations.
    pub a: &'a [f64],
    /// Lagrange multipliers.
    pub lambda: &'a [f64],
    /// Energies.
    pub energy: Energy,
    /// Constraint residual norms.
    pub constraints: ConstraintNorms,
    /// Newton statistics.
    pub newton: NewtonStats,
    /// Probe values, in the order of the model's probes.
    pub probes: &'a [f64],
    /// The method's statistics accumulated since the previous recorded step
    /// (counters summed, measures the largest), in the order of [`RunInfo::stat_names`].
    pub stats: &'a [f64],
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunStatus {
    /// The run reached `t_end`.
    Completed,
    /// The run stopped early; the reason names time, step and cause.
    Failed {
        /// Why the run stopped.
        reason: String,
    },
    /// The run was stopped by a signal (SIGINT, SIGTERM) at the end of a step.
    Interrupted {
        /// What stopped it, e.g. `SIGINT`.
        reason: String,
    },
}

/// Errors while writing or reading run output.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The HDF5 library reported an error.
    #[error("{path}: {message}")]
    Hdf5 {
        /// File path.
        path: String,
        /// Library message.
        message: String,
    },
    /// A file system error.
    #[error("output '{path}': {source}")]
    Io {
        /// File path.
        path: String,
        /// Underlying error.
        source: std::io::Error,
    },
}

/// A sink for per-step output.
///
/// Call order: [`Recorder::begin`] once, [`Recorder::record`] for each recorded
/// step, [`Recorder::finish`] once (also after a failed run, so that what was
/// written so far stays readable and says why it stopped).
pub trait Recorder {
    /// Starts the run: writes metadata and creates the datasets.
    fn begin(&mut self, info: &RunInfo) -> Result<(), OutputError>;
    /// Appends one step.
    fn record(&mut self, rec: &StepRecord<'_>) -> Result<(), OutputError>;
    /// Ends the run with its status and the last time reached.
    fn finish(&mut self, status: &RunStatus, t_end_reached: f64) -> Result<(), OutputError>;
    /// The run's totals over every step, recorded or not, given just before
    /// [`Recorder::finish`]. The HDF5 recorders write them as root attributes
    /// (`steps`, `newton_iterations`, `wall_seconds`); the default keeps nothing.
    fn totals(&mut self, _totals: &RunTotals) {}
}

/// Totals of a run that the recorded rows alone do not give (a run recorded
/// every k steps has only every k-th step's Newton iterations).
#[derive(Debug, Clone, PartialEq)]
pub struct RunTotals {
    /// Steps completed.
    pub steps: u64,
    /// Newton iterations of all completed steps.
    pub newton_iterations: u64,
    /// Wall time of the time loop (s).
    pub wall_seconds: f64,
    /// Max over the recorded steps of the constraint residuals' max-norms at
    /// position, velocity and acceleration level (root attributes
    /// `max_position_violation`, `max_velocity_violation`,
    /// `max_acceleration_violation`).
    pub max_constraint_violation: [f64; 3],
    /// The method's statistics over the run (root attributes `stats.<name>`:
    /// counters as integers, measures as floats).
    pub stats: Vec<(String, AttrValue)>,
}

/// A recorder that keeps nothing (runs whose summary is all that is wanted).
#[derive(Debug, Clone, Copy, Default)]
pub struct NullRecorder;

impl Recorder for NullRecorder {
    fn begin(&mut self, _info: &RunInfo) -> Result<(), OutputError> {
        Ok(())
    }

    fn record(&mut self, _rec: &StepRecord<'_>) -> Result<(), OutputError> {
        Ok(())
    }

    fn finish(&mut self, _status: &RunStatus, _t_end_reached: f64) -> Result<(), OutputError> {
        Ok(())
    }
}
