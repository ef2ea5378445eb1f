//! The names a program building and running a model needs, in one import:
//! `use flexmb::prelude::*;`.

pub use crate::input::{load_model_file, ModelFile};
pub use crate::integrate::{IntegratorConfig, IntegratorSpec, StepError};
pub use crate::kinematics::attitude::Attitude;
pub use crate::model::{
    BeamSection, Body2d, Body3dSpec, BuildError, DistanceKind, Joint3d, LineIds, Model,
    ModelBuilder, PointRef, ProbeTarget, Shape, SliderKind, TrussSection,
};
pub use crate::output::{read_hdf5, Recording, Results, ResultsError, RunStatus};
pub use crate::run::{Simulation, SimulationError, Stepper};
