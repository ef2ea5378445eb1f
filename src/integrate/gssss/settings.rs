//! The settings of the GSSSS family: what [`super::Gssss`] is built from
//! (read and checked by [`crate::integrate::settings`]).

use super::{ConstraintOption, Variant};
use crate::integrate::newton::NewtonSettings;

/// How a fixed-step method treats a step whose Newton iteration fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepControl {
    /// The run stops (Hoitink's failure patterns).
    Fixed,
    /// The step is halved and retried (at most 10 times), and doubled again
    /// after 4 successes, up to dt.
    Cutback,
}

impl StepControl {
    /// The name in the model file.
    pub fn name(self) -> &'static str {
        match self {
            StepControl::Fixed => "fixed",
            StepControl::Cutback => "cutback",
        }
    }
}

/// Settings of the GSSSS family (Hoitink).
#[derive(Debug, Clone, PartialEq)]
pub struct GssssSettings {
    /// The scheme.
    pub variant: Variant,
    /// Preset name when one was used.
    pub preset: Option<String>,
    /// Constraint-force option.
    pub option: ConstraintOption,
    /// Time step.
    pub dt: f64,
    /// Newton settings.
    pub newton: NewtonSettings,
    /// What a Newton failure does.
    pub step_control: StepControl,
}
