//! The GSSSS family (Hoitink): coefficients of the U0/V0 families and their
//! presets ([`coefficients`]), the schemes as linear forms ([`scheme`]), the
//! two-field midpoint scheme ([`two_field`]), the residual of a Newton
//! iteration with the constraint options ([`residual`]), where its iteration
//! starts ([`predictor`]) and the stepper that runs them ([`stepper`], fixed
//! step or cutback after a Newton failure).

pub mod coefficients;
pub mod predictor;
pub mod residual;
pub mod scheme;
mod settings;
pub mod stepper;
pub mod two_field;

pub use coefficients::{preset, Family, Gssss, SolveForm};
pub use residual::{constraint_force, fill_step, At, ConstraintForce, Mult, StepInput};
pub use scheme::{ConstraintOption, JacobianKind, LinearScheme, PredCorr};
pub use settings::{GssssSettings, StepControl};
pub use stepper::OneStepIntegrator;
pub use two_field::two_field_scheme;

/// A one-step scheme of the family: a GSSSS member in a single-field form, or
/// the two-field v-form midpoint scheme.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Variant {
    /// A GSSSS member in a single-field form.
    Single {
        /// Coefficients.
        coefficients: Gssss,
        /// Newton unknown.
        form: SolveForm,
    },
    /// The two-field v-form midpoint scheme.
    TwoField,
}

impl Variant {
    /// The linear forms of one step of size `dt`.
    pub fn scheme(&self, dt: f64) -> LinearScheme {
        match *self {
            Variant::Single { coefficients, form } => coefficients.scheme(form, dt),
            Variant::TwoField => two_field_scheme(dt),
        }
    }

    /// Whether the EOM level is the midpoint of the step (see
    /// [`Gssss::midpoint_level`]; the two-field form's always is): these
    /// schemes ask the elements for their discrete gradients
    /// ([`crate::assembly::ElementEval::DiscreteGradient`]) and the
    /// configuration-dependent inertia for its energy-consistent form.
    pub fn midpoint_level(&self) -> bool {
        match self {
            Variant::Single { coefficients, .. } => coefficients.midpoint_level(),
            Variant::TwoField => true,
        }
    }
}
