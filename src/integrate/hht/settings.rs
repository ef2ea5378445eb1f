//! The settings of HHT-α: `alpha`, `dt` and the Newton driver's keys, their
//! defaults and checks, the label and metadata, and the build on the GSSSS
//! stepper.

use crate::assembly::Mechanics;
use crate::integrate::gssss::{
    preset, stepper, ConstraintOption, Gssss, GssssSettings, OneStepIntegrator, SolveForm,
    StepControl, Variant,
};
use crate::integrate::newton::DriverSettings;
use crate::integrate::settings::{
    bad, check_step_count, required_t_end, step_size, Build, FromTable, IntegratorSpec, Method,
    SettingsError, Steps, NEWTON,
};
use crate::integrate::{AttrValue, Integrator, StatSpec, StepError};

/// The method's keys besides the Newton driver's.
const HHT: &[&str] = &["alpha", "dt"];

/// Settings of HHT-α.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HhtSettings {
    /// alpha in [-1/3, 0] (0: the trapezoidal rule, no dissipation).
    pub alpha: f64,
    /// Time step.
    pub dt: f64,
    /// The scaled Newton test and the driver's options.
    pub newton: DriverSettings,
}

impl Default for HhtSettings {
    /// alpha = -0.1 (rho_inf = 0.818), dt 0.01, the driver's defaults.
    fn default() -> Self {
        HhtSettings {
            alpha: -0.1,
            dt: 0.01,
            newton: DriverSettings::default(),
        }
    }
}

impl HhtSettings {
    /// The spectral radius at infinity, `(1 + alpha) / (1 - alpha)`.
    pub fn rho_inf(&self) -> f64 {
        (1.0 + self.alpha) / (1.0 - self.alpha)
    }

    /// The GSSSS settings this method steps with: the preset `hht(rho_inf)`,
    /// option 2, the a-form, fixed steps.
    pub fn gssss(&self) -> Result<GssssSettings, SettingsError> {
        let name = format!("hht({})", self.rho_inf());
        let (family, rho) = preset(&name).map_err(|e| bad("alpha", e))?;
        let coefficients = Gssss::new(family, rho).map_err(|e| bad("alpha", e))?;
        Ok(GssssSettings {
            variant: Variant::Single {
                coefficients,
                form: SolveForm::A,
            },
            preset: Some(name),
            option: ConstraintOption::Two,
            dt: self.dt,
            newton: self.newton.gssss(),
            step_control: StepControl::Fixed,
        })
    }
}

impl Method for HhtSettings {
    fn name(&self) -> &'static str {
        "hht"
    }

    fn label(&self) -> String {
        let scheme = self.gssss().map(|g| g.label()).unwrap_or_default();
        format!(
            "HHT-alpha (Hilber, Hughes and Taylor 1977), alpha = {}: {scheme}",
            self.alpha
        )
    }

    fn parameters(&self) -> Vec<(String, AttrValue)> {
        let mut p = vec![
            ("method".into(), AttrValue::Str("hht".into())),
            ("alpha".into(), AttrValue::F64(self.alpha)),
            ("dt".into(), AttrValue::F64(self.dt)),
        ];
        self.newton.parameters(&mut p);
        p
    }

    fn statistics(&self) -> &'static [StatSpec] {
        stepper::STATS
    }

    /// alpha in [-1/3, 0] (Hilber et al.: second order and unconditionally
    /// stable there), the step, the Newton options.
    fn check(&self) -> Result<(), SettingsError> {
        if !(-1.0 / 3.0..=0.0).contains(&self.alpha) {
            return Err(bad(
                "alpha",
                format!(
                    "`alpha` of HHT must be in [-1/3, 0] (Hilber, Hughes and Taylor), got {}",
                    self.alpha
                ),
            ));
        }
        step_size("dt", self.dt)?;
        self.newton.check()
    }

    fn steps(&self) -> Steps {
        Steps::Fixed(self.dt)
    }

    fn build(
        &self,
        sys: &Mechanics<'_>,
        build: Build<'_>,
    ) -> Result<Box<dyn Integrator>, StepError> {
        let gssss = self.gssss().map_err(|e| StepError::Setup {
            reason: e.to_string(),
        })?;
        Ok(Box::new(OneStepIntegrator::new(
            sys,
            build.identity,
            &gssss,
            build.solver,
        )?))
    }
}

impl FromTable for HhtSettings {
    const NAMES: &'static [&'static str] = &["hht"];

    fn keys(_name: &str, _table: &IntegratorSpec) -> Vec<&'static [&'static str]> {
        vec![NEWTON, HHT]
    }

    /// `alpha` (default -0.1), `dt` and `t_end` (required), the Newton
    /// driver's keys; checked by [`Method::check`].
    fn from_table(_name: &str, table: &IntegratorSpec) -> Result<Self, SettingsError> {
        let dt = step_size("dt", table.dt.ok_or(bad("dt", "`dt` is required"))?)?;
        check_step_count(dt, required_t_end(table)?)?;
        Ok(HhtSettings {
            alpha: table.alpha.unwrap_or(HhtSettings::default().alpha),
            dt,
            newton: DriverSettings::from_table(table)?,
        })
    }
}
