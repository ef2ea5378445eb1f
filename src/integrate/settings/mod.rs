//! The `[integrator]` table: what the user writes ([`IntegratorSpec`], every
//! field optional so that the CLI can override it, `spec.rs`), what it
//! resolves to (the typed [`IntegratorConfig`] with one [`MethodConfig`] per
//! method, `config.rs`) and the factory that builds the method
//! ([`IntegratorConfig::build`], `config.rs`). The checks both use are here.

mod config;
mod keys;
mod spec;

pub use config::{
    Formulation, GssssSettings, IntegratorConfig, MethodConfig, RkSettings, RkStep, Stabilization,
    StepControl, DEFAULT_MAX_STEPS,
};
pub(crate) use keys::{is_key, takes};
pub use spec::{IntegratorSpec, KappaChoice, OptionChoice};

use super::gssss::{ConstraintOption, Variant};

/// The most steps a fixed-step run may take (`t_end / dt`): beyond it the
/// run would take days and its output terabytes, so it is refused before
/// anything is allocated.
pub const MAX_STEPS: f64 = 1e9;

/// The smallest step size (`dt`, `max_step`) a method accepts. The implicit
/// methods' Newton matrices carry `dt²` and `1/dt²` (GSSSS: `M / (β dt²)`,
/// Hoitink eq. 3.24; BDF: `M / (β h)²`): below about 1e-154 `dt²` is no
/// longer a normal floating-point number and the matrix degenerates into a
/// "singular" one (at dt = 1e-200 the pendulum's saddle-point matrix had a
/// zero pivot). The floor keeps eight orders of margin above that.
pub const MIN_STEP: f64 = 1e-150;

/// A step size: positive, finite and at least [`MIN_STEP`].
fn step_size(field: &'static str, v: f64) -> Result<f64, SettingsError> {
    let v = positive(field, v)?;
    if v < MIN_STEP {
        return Err(bad(
            field,
            format!(
                "`{field}` = {v:e} is below the smallest step {MIN_STEP:e} (its square, in the \
                 Newton matrices, would no longer be a normal floating-point number)"
            ),
        ));
    }
    Ok(v)
}

/// The largest step of an adaptive method: as [`step_size`], but infinite
/// (no limit) is allowed.
fn largest_step(field: &'static str, v: f64) -> Result<f64, SettingsError> {
    if v == f64::INFINITY {
        Ok(v)
    } else {
        step_size(field, v)
    }
}

/// Rejects a fixed step that needs more than [`MAX_STEPS`] steps to `t_end`.
pub(crate) fn check_step_count(dt: f64, t_end: f64) -> Result<(), SettingsError> {
    let steps = (t_end / dt).ceil();
    if steps > MAX_STEPS {
        return Err(bad(
            "dt",
            format!(
                "t_end / dt = {t_end:e} / {dt:e} = {steps:e} steps, more than the limit of {MAX_STEPS:e}"
            ),
        ));
    }
    Ok(())
}

/// Option "dg" (Gonzalez's discrete derivative replaces B(u~)) needs u~ at
/// the midpoint of the step.
fn check_option(option: ConstraintOption, variant: Variant, dt: f64) -> Result<(), SettingsError> {
    if option != ConstraintOption::Gonzalez {
        return Ok(());
    }
    let sch = variant.scheme(dt);
    if sch.level_weights().is_midpoint() {
        return Ok(());
    }
    let label = match variant {
        Variant::Single { coefficients, .. } => coefficients.label(),
        Variant::TwoField => "the two-field form".into(),
    };
    Err(bad(
        "option",
        format!(
            "option \"dg\" (Gonzalez's discrete derivative) needs a midpoint scheme, \
             u~ = (u_n + u_{{n+1}})/2 (V0(1,1,0) \"midpoint\", U0(1,1,1) \
             \"midpoint-endpoint\" or the two-field form); {label} has W1 = {}",
            sch.w1
        ),
    ))
}

/// A finite value > 0, or an error naming `field`.
fn positive(field: &'static str, v: f64) -> Result<f64, SettingsError> {
    if v > 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(bad(field, format!("`{field}` must be positive, got {v}")))
    }
}

/// A setting that cannot be used: the field of the `[integrator]` table and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct SettingsError {
    /// The `[integrator]` key at fault.
    pub field: &'static str,
    /// What is wrong with it.
    pub message: String,
}

fn bad(field: &'static str, message: impl Into<String>) -> SettingsError {
    SettingsError {
        field,
        message: message.into(),
    }
}

/// The method name of Lens and Cardona's energy-preserving scheme (a GSSSS preset).
const TCG: &str = "tcg";
