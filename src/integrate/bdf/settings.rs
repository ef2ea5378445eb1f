//! The settings of DASSL's BDF on the GGL form (Yen and Petzold): what
//! [`super::Bdf`] is built from, their keys, defaults and checks, read from
//! the `[integrator]` table.

use super::{Bdf, ErrorTest, NewtonIteration};
use crate::assembly::Mechanics;
use crate::integrate::settings::{
    at_least_one, bad, choice, largest_step, named, positive, required_t_end, round_off_rtol,
    Build, FromTable, IntegratorSpec, Method, SettingsError, Steps, DEFAULT_MAX_STEPS,
};
use crate::integrate::{AttrValue, Integrator, StatSpec, StepError};

named!(NewtonIteration: Full, Cs, Cm);
named!(ErrorTest: States, Positions);

/// The keys of the method.
const BDF: &[&str] = &[
    "newton",
    "max_order",
    "error_test",
    "rtol",
    "atol",
    "max_step",
    "max_steps",
];

/// Settings of the BDF method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BdfSettings {
    /// The nonlinear iteration.
    pub iteration: NewtonIteration,
    /// Largest order (1..=5).
    pub max_order: usize,
    /// The components of the local error test.
    pub error_test: ErrorTest,
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Largest step.
    pub max_step: f64,
    /// Most step attempts per run.
    pub max_steps: u64,
}

impl Default for BdfSettings {
    /// Full Newton, orders 1 to 5, the error test on positions and
    /// velocities, rtol = atol = 1e-6, no largest step, at most
    /// [`DEFAULT_MAX_STEPS`] steps.
    fn default() -> Self {
        BdfSettings {
            iteration: NewtonIteration::Full,
            max_order: 5,
            error_test: ErrorTest::States,
            rtol: 1e-6,
            atol: 1e-6,
            max_step: f64::INFINITY,
            max_steps: DEFAULT_MAX_STEPS,
        }
    }
}

impl Method for BdfSettings {
    fn name(&self) -> &'static str {
        "bdf"
    }

    /// A human-readable name, e.g. `BDF 1-5 on GGL, full Newton (rtol 1e-6, atol 1e-6)`.
    fn label(&self) -> String {
        format!(
            "BDF 1-{} on the GGL form, {} Newton, error test on {} (rtol {:e}, atol {:e})",
            self.max_order,
            self.iteration.name(),
            self.error_test.name(),
            self.rtol,
            self.atol
        )
    }

    /// Parameters for the output metadata.
    fn parameters(&self) -> Vec<(String, AttrValue)> {
        vec![
            ("method".into(), AttrValue::Str("bdf".into())),
            (
                "newton".into(),
                AttrValue::Str(self.iteration.name().into()),
            ),
            ("max_order".into(), AttrValue::I64(self.max_order as i64)),
            (
                "error_test".into(),
                AttrValue::Str(self.error_test.name().into()),
            ),
            ("rtol".into(), AttrValue::F64(self.rtol)),
            ("atol".into(), AttrValue::F64(self.atol)),
            ("max_step".into(), AttrValue::F64(self.max_step)),
            ("max_steps".into(), AttrValue::I64(self.max_steps as i64)),
        ]
    }

    fn statistics(&self) -> &'static [StatSpec] {
        super::STATS
    }

    /// Orders 1..=5, tolerances positive and above round-off, limits positive.
    fn check(&self) -> Result<(), SettingsError> {
        if !(1..=5).contains(&self.max_order) {
            return Err(bad(
                "max_order",
                format!("`max_order` must be 1 to 5, got {}", self.max_order),
            ));
        }
        round_off_rtol(self.rtol)?;
        positive("atol", self.atol)?;
        largest_step("max_step", self.max_step)?;
        at_least_one("max_steps", self.max_steps)
    }

    fn steps(&self) -> Steps {
        Steps::Adaptive {
            max_step: self.max_step,
            max_steps: self.max_steps,
        }
    }

    fn build(
        &self,
        sys: &Mechanics<'_>,
        build: Build<'_>,
    ) -> Result<Box<dyn Integrator>, StepError> {
        Ok(Box::new(Bdf::new(
            sys,
            build.identity,
            self,
            build.solver.force_sparse,
        )?))
    }
}

impl FromTable for BdfSettings {
    const NAMES: &'static [&'static str] = &["bdf"];

    fn keys(_name: &str, _table: &IntegratorSpec) -> Vec<&'static [&'static str]> {
        vec![BDF]
    }

    /// The BDF settings (Yen and Petzold) with their defaults.
    fn from_table(_name: &str, table: &IntegratorSpec) -> Result<Self, SettingsError> {
        let t_end = required_t_end(table)?;
        let iteration = choice("newton", table.newton.as_deref(), NewtonIteration::Full)?;
        let error_test = choice("error_test", table.error_test.as_deref(), ErrorTest::States)?;
        let rtol = table.rtol.unwrap_or(1e-6);
        let settings = BdfSettings {
            iteration,
            max_order: usize::try_from(table.max_order.unwrap_or(5)).unwrap_or(usize::MAX),
            error_test,
            rtol,
            atol: table.atol.unwrap_or(rtol),
            max_step: table.max_step.unwrap_or(t_end),
            max_steps: table.max_steps.unwrap_or(DEFAULT_MAX_STEPS),
        };
        // Checked by `Method::check` (called by `resolve`).
        Ok(settings)
    }
}
