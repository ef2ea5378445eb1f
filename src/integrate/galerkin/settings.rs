//! The settings of Lens and Cardona's energy-decaying Galerkin schemes (TDG,
//! eq. 47, and alpha–kappa, eq. 66): what [`super::Tdg`] is built from,
//! their keys, defaults and checks, read from the `[integrator]` table.

use super::{Kappa, Scheme, Tdg, AK_STATS, STATS};
use crate::assembly::Mechanics;
use crate::integrate::newton::{DriverSettings, LineSearch, Policy, Refactor};
use crate::integrate::settings::{
    bad, check_step_count, positive, required_t_end, step_size, Build, FromTable, IntegratorSpec,
    KappaChoice, Method, SettingsError, Steps, NEWTON,
};
use crate::integrate::{AttrValue, Integrator, StatSpec, StepError};

/// The keys of both schemes besides the Newton driver's.
const TDG: &[&str] = &["alpha", "dt"];

/// Settings of the energy-decaying Galerkin schemes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TdgSettings {
    /// TDG or alpha–kappa.
    pub scheme: Scheme,
    /// Dissipation control alpha in [0, 1] (eq. 44; rho_inf = (1 - alpha)/(1 + alpha)).
    pub alpha: f64,
    /// Time step.
    pub dt: f64,
    /// The scaled Newton test and the driver's options.
    pub newton: DriverSettings,
}

impl TdgSettings {
    /// The Newton driver's policy: the scaled test, the refresh and the
    /// line search as set.
    pub fn policy(&self) -> Policy {
        self.newton.policy()
    }
}

impl TdgSettings {
    /// TDG (eq. 47; eq. 28 at alpha = 1) with dissipation control `alpha`,
    /// dt 0.01, the scaled Newton test (rtol 1e-6) with at most 100
    /// iterations.
    pub fn tdg(alpha: f64) -> Self {
        TdgSettings {
            scheme: Scheme::Tdg,
            alpha,
            dt: 0.01,
            newton: DriverSettings::default(),
        }
    }

    /// Seed 002's time-discontinuous Galerkin scheme (eq. 47) or alpha–kappa
    /// scheme (eq. 66): `alpha` (default 1, eq. 28), `dt`, `t_end` and the
    /// scaled Newton test's `rtol`, `atol`, `max_iter`, `refactor` and
    /// `line_search`; fixed steps.
    fn resolve(table: &IntegratorSpec, scheme: Scheme) -> Result<Self, SettingsError> {
        let dt = step_size("dt", table.dt.ok_or(bad("dt", "`dt` is required"))?)?;
        let t_end = required_t_end(table)?;
        check_step_count(dt, t_end)?;
        // alpha and the Newton options are checked once, by `Method::check`
        // (called by `resolve`).
        Ok(TdgSettings {
            scheme,
            alpha: table.alpha.unwrap_or(1.0),
            dt,
            newton: DriverSettings::from_table(table)?,
        })
    }
}

impl Method for TdgSettings {
    fn name(&self) -> &'static str {
        match self.scheme {
            Scheme::Tdg => "tdg",
            Scheme::AlphaKappa(_) => "alpha-kappa",
        }
    }

    fn label(&self) -> String {
        match self.scheme {
            Scheme::Tdg => format!(
                "TDG (Lens and Cardona eq. {}), alpha = {}",
                if self.alpha == 1.0 { "28" } else { "47" },
                self.alpha
            ),
            Scheme::AlphaKappa(k) => format!(
                "alpha-kappa (Lens and Cardona eq. 66), alpha = {}, kappa = {}",
                self.alpha,
                match k {
                    Kappa::Auto => "eq. 71 in [1 - h/2, 1 + h/2]".to_string(),
                    Kappa::Fixed(k) => k.to_string(),
                }
            ),
        }
    }

    fn parameters(&self) -> Vec<(String, AttrValue)> {
        let mut p = vec![
            (
                "method".into(),
                AttrValue::Str(
                    match self.scheme {
                        Scheme::Tdg => "tdg",
                        Scheme::AlphaKappa(_) => "alpha-kappa",
                    }
                    .into(),
                ),
            ),
            ("alpha".into(), AttrValue::F64(self.alpha)),
            ("dt".into(), AttrValue::F64(self.dt)),
            ("rtol".into(), AttrValue::F64(self.newton.rtol)),
        ];
        match self.scheme {
            Scheme::AlphaKappa(Kappa::Auto) => {
                p.push(("kappa".into(), AttrValue::Str("auto".into())))
            }
            Scheme::AlphaKappa(Kappa::Fixed(k)) => p.push(("kappa".into(), AttrValue::F64(k))),
            Scheme::Tdg => {}
        }
        if let Some(atol) = self.newton.atol {
            p.push(("atol".into(), AttrValue::F64(atol)));
        }
        p.push((
            "max_iter".into(),
            AttrValue::I64(self.newton.max_iter.into()),
        ));
        // Recorded when set (runs without them keep their attributes).
        if self.newton.refactor != Refactor::Iteration {
            p.push((
                "refactor".into(),
                AttrValue::Str(self.newton.refactor.name().into()),
            ));
        }
        if self.newton.line_search != LineSearch::None {
            p.push((
                "line_search".into(),
                AttrValue::Str(self.newton.line_search.name().into()),
            ));
        }
        p
    }

    fn statistics(&self) -> &'static [StatSpec] {
        match self.scheme {
            Scheme::Tdg => STATS,
            Scheme::AlphaKappa(_) => AK_STATS,
        }
    }

    fn check(&self) -> Result<(), SettingsError> {
        step_size("dt", self.dt)?;
        if let Scheme::AlphaKappa(Kappa::Fixed(k)) = self.scheme {
            positive("kappa", k)?;
        }
        if !(0.0..=1.0).contains(&self.alpha) {
            return Err(bad(
                "alpha",
                format!(
                    "`alpha` must be in [0, 1] (Lens and Cardona eq. 44), got {}",
                    self.alpha
                ),
            ));
        }
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
        Ok(Box::new(Tdg::new(
            sys,
            build.identity,
            *self,
            build.solver,
        )?))
    }
}

impl FromTable for TdgSettings {
    const NAMES: &'static [&'static str] = &["tdg", "alpha-kappa"];

    fn keys(name: &str, _table: &IntegratorSpec) -> Vec<&'static [&'static str]> {
        if name == "alpha-kappa" {
            vec![NEWTON, TDG, &["kappa"]]
        } else {
            vec![NEWTON, TDG]
        }
    }

    fn from_table(name: &str, table: &IntegratorSpec) -> Result<Self, SettingsError> {
        if name != "alpha-kappa" {
            return Self::resolve(table, Scheme::Tdg);
        }
        let kappa = match &table.kappa {
            None => Kappa::Auto,
            Some(KappaChoice::Number(k)) => Kappa::Fixed(*k),
            Some(KappaChoice::Name(s)) if s == "auto" => Kappa::Auto,
            Some(KappaChoice::Name(s)) => Kappa::Fixed(s.parse().map_err(|_| {
                bad(
                    "kappa",
                    format!("`kappa` must be a number or \"auto\", got \"{s}\""),
                )
            })?),
        };
        Self::resolve(table, Scheme::AlphaKappa(kappa))
    }
}
