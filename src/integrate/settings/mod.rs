//! The `[integrator]` table and the contract of a method's settings: what
//! the user writes ([`IntegratorSpec`], every field optional so that the
//! command line can override it, `spec.rs`), the keys the methods share
//! (`keys.rs`), the traits each method's typed settings implement in its own
//! folder ([`Method`], [`FromTable`]: `gssss/settings.rs`, `rk/settings.rs`,
//! ...) and the value checks they share. The one enum of the methods and the
//! factory are one floor up (`integrate/methods/`): this module imports no
//! method.

mod keys;
mod spec;

pub(crate) use keys::{is_key, NEWTON, RUN};
pub use spec::{IntegratorSpec, KappaChoice, OptionChoice};

use crate::assembly::Mechanics;
use crate::integrate::{AttrValue, Identity, Integrator, StatSpec, StepError};

/// Default `max_steps` of the adaptive methods: a run that needs more is
/// stopped with [`StepError::TooManySteps`] instead of creeping on (HNW's
/// DOPRI5 has NMAX = 1e5; the shipped models need at most a few 1e4).
pub const DEFAULT_MAX_STEPS: u64 = 1_000_000;

/// How a method steps, as the run loop and the output size estimate need it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Steps {
    /// Steps of `dt` (the last one may be shorter).
    Fixed(f64),
    /// Steps chosen by an error control, at most `max_step` long, at most
    /// `max_steps` attempts.
    Adaptive {
        /// Largest step.
        max_step: f64,
        /// Most attempted steps in a run.
        max_steps: u64,
    },
}

/// What the factory passes to [`Method::build`] besides the settings.
pub struct Build<'a> {
    /// The method's label, its run metadata (its parameters and `t_end`)
    /// and statistics ([`Method::identity`]).
    pub identity: Identity,
    /// The saddle-point solver's settings.
    pub solver: crate::linalg::SolverChoice,
    /// When the build started, if the Newton time split is measured
    /// (`flexmb bench`).
    pub timing: Option<std::time::Instant>,
    /// The Newton matrix of one step to write (only where
    /// [`Method::exports_matrix`]).
    pub export_matrix: Option<&'a crate::linalg::MatrixExport>,
}

/// The typed settings of one method: its name, label and run metadata, its
/// statistics, the checks of its values (written once, here and nowhere
/// else), how it steps, and how it is built. Implemented in the method's
/// folder; the one enum of the methods (`integrate/methods/`) dispatches to
/// it.
pub trait Method: std::fmt::Debug {
    /// The name in `[integrator] method`.
    fn name(&self) -> &'static str;
    /// A human-readable name.
    fn label(&self) -> String;
    /// Parameters for the output metadata (the HDF5 `integrator.*`
    /// attributes), without `t_end`.
    fn parameters(&self) -> Vec<(String, AttrValue)>;
    /// The statistics the built method reports ([`Integrator::statistics`]).
    fn statistics(&self) -> &'static [StatSpec];
    /// The built method's identity: label, parameters and statistics.
    fn identity(&self) -> Identity {
        Identity {
            label: self.label(),
            parameters: self.parameters(),
            statistics: self.statistics(),
        }
    }
    /// Checks the values the type can hold but the method cannot run
    /// (steps, tolerances, limits). Errors name the `[integrator]` key.
    fn check(&self) -> Result<(), SettingsError>;
    /// Fixed or adaptive steps.
    fn steps(&self) -> Steps;
    /// Whether the method can write its Newton matrix (`--export-matrix`);
    /// the factory refuses the export for the others.
    fn exports_matrix(&self) -> bool {
        false
    }
    /// The method for the model in `sys`.
    fn build(
        &self,
        sys: &Mechanics<'_>,
        build: Build<'_>,
    ) -> Result<Box<dyn Integrator>, StepError>;
}

/// Settings read from the `[integrator]` table: the method names the type
/// answers to, the keys each takes, and the resolution of the table (its
/// defaults) into the typed settings.
pub trait FromTable: Method + Sized {
    /// The `method` names (in the order of the documentation).
    const NAMES: &'static [&'static str];
    /// The key groups that method `name` takes besides the run's
    /// (`method`, `t_end`, `initialize`, `factorization`, `sparse`), given
    /// the table (its `step_control` and `tableau` can decide the steps'
    /// keys).
    fn keys(name: &str, table: &IntegratorSpec) -> Vec<&'static [&'static str]>;
    /// The settings of method `name` from the table, defaults filled in.
    /// The table holds only keys the method takes (checked before).
    fn from_table(name: &str, table: &IntegratorSpec) -> Result<Self, SettingsError>;
    /// Why method `name` refuses `key`, where the list of the methods that
    /// take it does not say it (the Runge–Kutta steps).
    fn refusal(_name: &str, _key: &str) -> Option<String> {
        None
    }
}

/// `t_end` of the table: given, positive and finite.
pub fn required_t_end(table: &IntegratorSpec) -> Result<f64, SettingsError> {
    positive(
        "t_end",
        table.t_end.ok_or(bad("t_end", "`t_end` is required"))?,
    )
}

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
pub(crate) fn step_size(field: &'static str, v: f64) -> Result<f64, SettingsError> {
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
pub(crate) fn largest_step(field: &'static str, v: f64) -> Result<f64, SettingsError> {
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

/// A finite value > 0, or an error naming `field`.
pub(crate) fn positive(field: &'static str, v: f64) -> Result<f64, SettingsError> {
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

pub(crate) fn bad(field: &'static str, message: impl Into<String>) -> SettingsError {
    SettingsError {
        field,
        message: message.into(),
    }
}

/// A setting chosen by name: its values, in the order an error lists
/// them, and their names in the model file ([`named!`](self)).
pub(crate) trait Named: Copy + 'static {
    /// Every value.
    const ALL: &'static [Self];
    /// The name in the model file.
    fn name(self) -> &'static str;
}

/// Implements [`Named`] for a type with an inherent `name(self)`, its
/// values listed once: `named!(Refactor: Iteration, Step);`.
macro_rules! named {
    ($ty:ident: $($value:ident),+) => {
        impl $crate::integrate::settings::Named for $ty {
            const ALL: &'static [Self] = &[$($ty::$value),+];
            fn name(self) -> &'static str {
                $ty::name(self)
            }
        }
    };
}
pub(crate) use named;

/// The named choice `field`: the value named `given` (`default` when
/// absent), or an error naming the field, the names it takes and the one
/// given (`` `refactor` must be "iteration" or "step", got "x" ``).
pub(crate) fn choice<T: Named>(
    field: &'static str,
    given: Option<&str>,
    default: T,
) -> Result<T, SettingsError> {
    let Some(given) = given else {
        return Ok(default);
    };
    let all = T::ALL.iter().copied();
    all.clone().find(|&x| x.name() == given).ok_or_else(|| {
        let quoted: Vec<String> = all.map(|x| format!("\"{}\"", x.name())).collect();
        let names = match quoted.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => quoted.concat(),
        };
        bad(field, format!("`{field}` must be {names}, got \"{given}\""))
    })
}

/// A relative tolerance: finite and at least 1e-14 (below it no method
/// controls an error or a Newton correction: HNW's dopri5 refuses rtol <=
/// 10 eps as well).
pub(crate) fn round_off_rtol(rtol: f64) -> Result<(), SettingsError> {
    if rtol >= 1e-14 && rtol.is_finite() {
        Ok(())
    } else {
        Err(bad(
            "rtol",
            format!("`rtol` must be finite and at least 1e-14, got {rtol:e}"),
        ))
    }
}

/// An iteration limit: at least 1.
pub(crate) fn at_least_one(field: &'static str, n: u64) -> Result<(), SettingsError> {
    if n == 0 {
        return Err(bad(field, format!("`{field}` must be at least 1")));
    }
    Ok(())
}
