//! The Newton driver's settings as the `[integrator]` table gives them to
//! every method on the driver (GSSSS, TCG, TDG, alpha–kappa, HHT; keys
//! `NEWTON` of `integrate/settings`): read and checked here, once, for all
//! of them.

use super::{JacobianKind, LineSearch, NewtonStop, Refactor};
use crate::integrate::settings::{
    at_least_one, choice, named, positive, round_off_rtol, IntegratorSpec, SettingsError,
};

named!(Refactor: Iteration, Step);
named!(LineSearch: None, Backtracking);
named!(NewtonStop: Scaled, Increment, Rate);
named!(JacobianKind: Consistent, Seed);

/// The Newton driver's `refactor` (default `"iteration"`) and
/// `line_search` (default `"none"`), checked.
pub(crate) fn refactor_and_line_search(
    table: &IntegratorSpec,
) -> Result<(Refactor, LineSearch), SettingsError> {
    let refactor = choice("refactor", table.refactor.as_deref(), Refactor::Iteration)?;
    let line_search = choice(
        "line_search",
        table.line_search.as_deref(),
        LineSearch::None,
    )?;
    Ok((refactor, line_search))
}

/// The scaled test's tolerances and the iteration limit: `rtol` above
/// round-off, `atol` positive when given, `max_iter` at least 1.
pub(crate) fn check_scaled(
    rtol: f64,
    atol: Option<f64>,
    max_iter: u32,
) -> Result<(), SettingsError> {
    round_off_rtol(rtol)?;
    if let Some(a) = atol {
        positive("atol", a)?;
    }
    at_least_one("max_iter", max_iter.into())
}

/// The scaled Newton test and the driver's options as the `[integrator]`
/// table gives them (keys `rtol`, `atol`, `max_iter`, `refactor`,
/// `line_search`): the part of a method's settings that every method on the driver shares,
/// embedded by those that take nothing more (Chrono keeps these on its
/// implicit timestepper base).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DriverSettings {
    /// Relative tolerance of the scaled test (docs/theory/gssss.md §12a).
    pub rtol: f64,
    /// Absolute tolerance (displacement units); `None`: rtol (1 + max |u0|).
    pub atol: Option<f64>,
    /// Iterations at most per step.
    pub max_iter: u32,
    /// When the Newton matrix is refreshed.
    pub refactor: Refactor,
    /// Globalization of the iteration.
    pub line_search: LineSearch,
}

impl Default for DriverSettings {
    /// rtol 1e-6, atol from rtol, at most 100 iterations, Newton's method,
    /// no line search.
    fn default() -> Self {
        DriverSettings {
            rtol: super::DEFAULT_RTOL,
            atol: None,
            max_iter: 100,
            refactor: Refactor::Iteration,
            line_search: LineSearch::None,
        }
    }
}

impl DriverSettings {
    /// The keys of the table, defaults filled in (checked by [`Self::check`]).
    pub(crate) fn from_table(table: &IntegratorSpec) -> Result<Self, SettingsError> {
        let d = DriverSettings::default();
        let (refactor, line_search) = refactor_and_line_search(table)?;
        Ok(DriverSettings {
            rtol: table.rtol.unwrap_or(d.rtol),
            atol: table.atol,
            max_iter: table.max_iter.unwrap_or(d.max_iter),
            refactor,
            line_search,
        })
    }

    /// `rtol` above round-off, `atol` positive, `max_iter` at least 1.
    pub fn check(&self) -> Result<(), SettingsError> {
        check_scaled(self.rtol, self.atol, self.max_iter)
    }

    /// The driver's policy: the scaled test with these options.
    pub fn policy(&self) -> super::Policy {
        super::Policy {
            max_iter: self.max_iter,
            stop: super::NewtonStop::Scaled,
            refactor: self.refactor,
            line_search: self.line_search,
        }
    }

    /// The GSSSS stepper's Newton settings with these options under the
    /// scaled test (the consistent Jacobian; `tol` unused by that test).
    pub fn gssss(&self) -> super::NewtonSettings {
        super::NewtonSettings {
            tol: 1e-8,
            scaled: super::ScaledTolerances {
                rtol: self.rtol,
                atol: self.atol,
            },
            max_iter: self.max_iter,
            jacobian: super::JacobianKind::Consistent,
            stop: super::NewtonStop::Scaled,
            refactor: self.refactor,
            line_search: self.line_search,
        }
    }

    /// The run metadata of these options: `rtol`, `atol` when given,
    /// `max_iter`, `refactor`, `line_search`.
    pub fn parameters(&self, p: &mut Vec<(String, crate::integrate::AttrValue)>) {
        use crate::integrate::AttrValue;
        p.push(("rtol".into(), AttrValue::F64(self.rtol)));
        if let Some(atol) = self.atol {
            p.push(("atol".into(), AttrValue::F64(atol)));
        }
        p.push(("max_iter".into(), AttrValue::I64(self.max_iter.into())));
        p.push((
            "refactor".into(),
            AttrValue::Str(self.refactor.name().into()),
        ));
        p.push((
            "line_search".into(),
            AttrValue::Str(self.line_search.name().into()),
        ));
    }
}
