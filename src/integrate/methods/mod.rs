//! The one enum of the methods ([`MethodSettings`]: one variant per
//! method's typed settings, each in its method's folder), the resolved
//! configuration ([`IntegratorConfig`]) and the one factory
//! ([`IntegratorConfig::build`]). A method is added by its folder (its
//! settings implementing [`Method`] and [`FromTable`]) and one line of
//! [`methods!`](self): the names, keys, resolution, checks, labels,
//! statistics and factory below are drawn from that list.

mod builders;
mod resolve;

pub use resolve::method_keys;
pub(crate) use resolve::takes;

use crate::assembly::Mechanics;
use crate::integrate::bdf::BdfSettings;
use crate::integrate::galerkin::TdgSettings;
use crate::integrate::gssss::GssssSettings;
use crate::integrate::hht::HhtSettings;
use crate::integrate::initial::Initialize;
use crate::integrate::rk::RkSettings;
use crate::integrate::settings::{
    bad, Build, FromTable, IntegratorSpec, Method, SettingsError, Steps,
};
use crate::integrate::{AttrValue, Identity, Integrator, StatSpec, StepError};

/// Declares [`MethodSettings`] with one variant per method and the
/// functions drawn from the list (names, keys, resolution of the table).
macro_rules! methods {
    ($($(#[$doc:meta])* $variant:ident($settings:ty),)*) => {
        /// The method and its typed settings (one variant per method, its
        /// settings in its own folder).
        #[derive(Debug, Clone, PartialEq)]
        pub enum MethodSettings {
            $($(#[$doc])* $variant($settings),)*
        }

        impl MethodSettings {
            /// The settings as the contract every method's settings keep.
            pub fn method(&self) -> &dyn Method {
                match self {
                    $(MethodSettings::$variant(s) => s,)*
                }
            }
        }

        $(impl From<$settings> for MethodSettings {
            fn from(settings: $settings) -> Self {
                MethodSettings::$variant(settings)
            }
        })*

        $(impl From<$settings> for IntegratorConfig {
            fn from(settings: $settings) -> Self {
                IntegratorConfig::with_method(MethodSettings::$variant(settings))
            }
        })*

        /// The `method` names, in the order of the documentation.
        pub fn method_names() -> impl Iterator<Item = &'static str> {
            [$(<$settings as FromTable>::NAMES),*].into_iter().flatten().copied()
        }

        /// The key groups method `name` takes besides the run's (`None`:
        /// not a method name).
        fn keys_of(name: &str, table: &IntegratorSpec) -> Option<Vec<&'static [&'static str]>> {
            $(if <$settings as FromTable>::NAMES.contains(&name) {
                return Some(<$settings as FromTable>::keys(name, table));
            })*
            None
        }

        /// Method `name` resolved from the table (`None`: not a method name).
        fn settings_of(
            name: &str,
            table: &IntegratorSpec,
        ) -> Option<Result<MethodSettings, SettingsError>> {
            $(if <$settings as FromTable>::NAMES.contains(&name) {
                return Some(
                    <$settings as FromTable>::from_table(name, table).map(MethodSettings::$variant),
                );
            })*
            None
        }

        /// Why method `name` refuses `key`, where its settings say it.
        fn refusal_of(name: &str, key: &str) -> Option<String> {
            $(if <$settings as FromTable>::NAMES.contains(&name) {
                return <$settings as FromTable>::refusal(name, key);
            })*
            None
        }
    };
}

methods! {
    /// The GSSSS family and the two-field midpoint scheme; TCG, its preset.
    Gssss(GssssSettings),
    /// Seed 002's time-discontinuous Galerkin schemes (TDG, alpha–kappa).
    Tdg(TdgSettings),
    /// An explicit Runge–Kutta method on the index-1 form, or the EPM.
    RungeKutta(RkSettings),
    /// DASSL's BDF on the GGL form (Yen and Petzold).
    Bdf(BdfSettings),
    /// The Hilber–Hughes–Taylor alpha method (a GSSSS member in its own parameter).
    Hht(HhtSettings),
}

/// A fully resolved integrator configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct IntegratorConfig {
    /// The method.
    pub method: MethodSettings,
    /// Time step of the fixed-step methods; for adaptive ones the largest step.
    pub dt: f64,
    /// End time.
    pub t_end: f64,
    /// Force the sparse LU.
    pub force_sparse: bool,
    /// The sparse factorization (LU, or `LDLᵀ` with refinement).
    pub factorization: crate::linalg::Factorization,
    /// What to do with an inconsistent initial state.
    pub initialize: Initialize,
    /// Measure the Newton time split ([`crate::integrate::newton::NewtonTimings`],
    /// reported in [`crate::run::RunSummary::timings`]); set by `flexmb bench`.
    pub timing: bool,
    /// Write the Newton matrix of one step (`flexmb run/bench --export-matrix`).
    pub export_matrix: Option<crate::linalg::MatrixExport>,
    /// The first builder call that does not apply to the method (a setting
    /// the method does not take): reported by [`IntegratorConfig::check`].
    misapplied: Option<SettingsError>,
}

/// The message for `key` given to `method`, which has no use for it: the
/// method and the key, why where the method's settings say it, and the
/// methods that do take the key.
pub(crate) fn foreign_message(method: &str, key: &str) -> String {
    let takers: Vec<String> = method_names()
        .filter(|m| takes(m, None, None, key) || takes(m, Some("fixed"), None, key))
        .map(|m| format!("\"{m}\""))
        .collect();
    let why = if let Some(why) = refusal_of(method, key) {
        why
    } else if takers.is_empty() {
        String::new()
    } else {
        format!(" (`{key}` is a setting of {})", takers.join(", "))
    };
    format!("method \"{method}\" has no setting `{key}`{why}")
}

impl IntegratorConfig {
    /// A human-readable name.
    pub fn label(&self) -> String {
        self.method.method().label()
    }

    /// Parameters for the output metadata: the method's and `t_end`.
    pub fn parameters(&self) -> Vec<(String, AttrValue)> {
        let mut p = self.method.method().parameters();
        p.push(("t_end".into(), AttrValue::F64(self.t_end)));
        p
    }

    /// The number of steps to t_end of a fixed-step method (the last one may
    /// be shorter); `None` for adaptive methods.
    pub fn nominal_steps(&self) -> Option<u64> {
        self.fixed_step()
            .map(|dt| crate::integrate::step_count(self.t_end, dt))
    }

    /// The statistics the method reports ([`Integrator::statistics`]).
    pub fn statistics(&self) -> &'static [StatSpec] {
        self.method.method().statistics()
    }

    /// How the method steps.
    pub fn steps(&self) -> Steps {
        self.method.method().steps()
    }

    /// The GSSSS settings, when the method is GSSSS.
    pub fn gssss_settings(&self) -> Option<&GssssSettings> {
        match &self.method {
            MethodSettings::Gssss(g) => Some(g),
            _ => None,
        }
    }

    /// The step of a fixed-step method (`None` for the adaptive ones).
    pub fn fixed_step(&self) -> Option<f64> {
        match self.steps() {
            Steps::Fixed(dt) => Some(dt),
            Steps::Adaptive { .. } => None,
        }
    }

    /// The saddle-point solver's settings.
    pub fn solver(&self) -> crate::linalg::SolverChoice {
        crate::linalg::SolverChoice {
            force_sparse: self.force_sparse,
            factorization: self.factorization,
        }
    }

    /// The method for the model in `sys` (the one factory of every method).
    pub fn build(&self, sys: &Mechanics<'_>) -> Result<Box<dyn Integrator>, StepError> {
        let started = std::time::Instant::now();
        let method = self.method.method();
        if self.export_matrix.is_some() && !method.exports_matrix() {
            return Err(StepError::Setup {
                reason: "exporting the Newton matrix needs a Newton method (GSSSS family)".into(),
            });
        }
        method.build(
            sys,
            Build {
                identity: Identity {
                    parameters: self.parameters(),
                    ..method.identity()
                },
                solver: self.solver(),
                timing: self.timing.then_some(started),
                export_matrix: self.export_matrix.as_ref(),
            },
        )
    }

    /// Checks the values a typed configuration can hold but a method cannot
    /// run: steps, tolerances and limits positive and finite, option "dg"
    /// with a midpoint scheme only, tolerances above round-off (each
    /// method's [`Method::check`]). Errors name the `[integrator]` key.
    pub fn check(&self) -> Result<(), SettingsError> {
        if let Some(e) = &self.misapplied {
            return Err(e.clone());
        }
        if !(self.t_end >= 0.0 && self.t_end.is_finite()) {
            return Err(bad(
                "t_end",
                format!("`t_end` must be finite and >= 0, got {}", self.t_end),
            ));
        }
        self.method.method().check()
    }
}
