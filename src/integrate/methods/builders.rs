//! Typed builders of [`IntegratorConfig`]: a configuration in code,
//! without a model file. A builder given to a method that does not take its
//! setting is kept as an error for [`IntegratorConfig::check`] (naming the
//! method and the key), never ignored; a new method's settings are built
//! from its own type (`IntegratorConfig::from(settings)`).

use crate::integrate::gssss::{preset, ConstraintOption, Family, Gssss, SolveForm, Variant};
use crate::integrate::initial::Initialize;
use crate::integrate::newton::{NewtonStop, ScaledTolerances};
use crate::integrate::rk::{Formulation, RkSettings, RkStep, Stabilization, Tableau};
use crate::integrate::settings::{bad, SettingsError, Steps, DEFAULT_MAX_STEPS};
use crate::integrate::{
    bdf::BdfSettings,
    galerkin::{Kappa, Scheme, TdgSettings},
    gssss::{GssssSettings, StepControl},
};

use super::{foreign_message, IntegratorConfig, MethodSettings};

/// Typed builders: a configuration in code, without a model file.
///
/// ```
/// use flexmb::integrate::{ConstraintOption, IntegratorConfig};
///
/// let config = IntegratorConfig::gssss()
///     .midpoint()
///     .option(ConstraintOption::Two)
///     .dt(1e-3);
/// config.check().unwrap();
/// assert!(IntegratorConfig::gssss().dt(-1.0).check().is_err());
/// ```
impl IntegratorConfig {
    /// The GSSSS family with its defaults: the midpoint scheme V0(1,1,0),
    /// constraint option 2, a-form, dt 0.01, the scaled Newton test (rtol
    /// 1e-6, docs/theory/gssss.md §12a) with at most 100 iterations, fixed
    /// steps; `t_end` 0 (set it with
    /// [`IntegratorConfig::t_end`] for [`crate::run::Simulation::run`]; the
    /// stepping handle [`crate::run::Stepper`] stops where it is told).
    pub fn gssss() -> Self {
        Self::from(GssssSettings::default())
    }

    /// Seed 002's energy-preserving time-continuous Galerkin scheme
    /// (`method = "tcg"`): the two-field midpoint scheme with option dg and
    /// the GSSSS defaults otherwise.
    pub fn tcg() -> Self {
        Self::from(GssssSettings::tcg())
    }

    /// Seed 002's time-discontinuous Galerkin scheme with dissipation
    /// control `alpha` (eq. 47; eq. 28 for alpha = 1), dt 0.01, the scaled
    /// Newton test (rtol 1e-6) with at most 100 iterations.
    pub fn tdg(alpha: f64) -> Self {
        Self::from(TdgSettings::tdg(alpha))
    }

    /// Dormand–Prince 5(4) on the index-1 form with adaptive steps (rtol
    /// 1e-6, atol 1e-7) and post-stabilization PStab in the mass metric.
    pub fn dopri5() -> Self {
        Self::runge_kutta(
            crate::integrate::rk::DOPRI5,
            RkStep::Adaptive {
                rtol: 1e-6,
                atol: 1e-7,
                max_step: f64::INFINITY,
                max_steps: DEFAULT_MAX_STEPS,
            },
        )
    }

    /// The classical Runge–Kutta method on the index-1 form with fixed steps
    /// of 0.01 and post-stabilization PStab in the mass metric.
    pub fn rk4() -> Self {
        Self::runge_kutta(crate::integrate::rk::RK4, RkStep::Fixed { dt: 0.01 })
    }

    /// Heun's method (the explicit trapezoidal rule) on the index-1 form
    /// with fixed steps of 0.01 and PStab in the mass metric.
    pub fn heun() -> Self {
        Self::runge_kutta(crate::integrate::rk::HEUN, RkStep::Fixed { dt: 0.01 })
    }

    /// The embedded projection method (Borri and Trainelli) with the classical
    /// Runge–Kutta tableau and fixed steps of 0.01 (`method = "epm"`).
    pub fn epm() -> Self {
        Self::from(RkSettings::epm())
    }

    /// Seed 002's alpha–kappa scheme (eq. 66) with dissipation control
    /// `alpha` and kappa from eq. 71 (`kappa = "auto"`), dt 0.01, the
    /// scaled Newton test (rtol 1e-6) with at most 100 iterations.
    pub fn alpha_kappa(alpha: f64) -> Self {
        let mut config = Self::tdg(alpha);
        if let MethodSettings::Tdg(t) = &mut config.method {
            t.scheme = Scheme::AlphaKappa(Kappa::Auto);
        }
        config
    }

    /// DASSL's BDF on the GGL form (Yen and Petzold): full Newton, orders 1 to 5,
    /// the error test on positions and velocities, rtol = atol = 1e-6, no
    /// largest step, at most [`DEFAULT_MAX_STEPS`] steps.
    pub fn bdf() -> Self {
        Self::from(BdfSettings::default())
    }

    fn runge_kutta(tableau: Tableau, step: RkStep) -> Self {
        Self::from(RkSettings::index1(tableau, step))
    }

    /// `method` with the solver defaults: `t_end` 0, the dense/band/sparse
    /// choice by size, the automatic sparse factorization, an inconsistent
    /// initial state refused, no timings, no matrix export.
    pub(crate) fn with_method(method: MethodSettings) -> Self {
        let dt = match method.method().steps() {
            Steps::Fixed(dt) => dt,
            Steps::Adaptive { max_step, .. } => max_step,
        };
        IntegratorConfig {
            method,
            dt,
            t_end: 0.0,
            force_sparse: false,
            factorization: Default::default(),
            initialize: Initialize::Check,
            timing: false,
            export_matrix: None,
            misapplied: None,
        }
    }

    /// The name of the method in `[integrator] method`.
    pub fn method_name(&self) -> &'static str {
        self.method.method().name()
    }

    /// `field` was set on a method that does not take it: the first such
    /// call is kept for [`Self::check`] (and so [`crate::run::Stepper::new`]).
    fn refuse(mut self, field: &'static str) -> Self {
        self.note(self.foreign(field));
        self
    }

    /// Keeps `e` unless an earlier builder call was refused.
    fn note(&mut self, e: SettingsError) {
        self.misapplied.get_or_insert(e);
    }

    fn foreign(&self, field: &'static str) -> SettingsError {
        bad(field, foreign_message(self.method_name(), field))
    }

    /// Applies `set` to the GSSSS settings (and TCG's unless `scheme_key`:
    /// TCG's scheme is fixed), or refuses `field`.
    fn gssss_with(
        mut self,
        field: &'static str,
        scheme_key: bool,
        set: impl FnOnce(&mut GssssSettings),
    ) -> Self {
        match &mut self.method {
            MethodSettings::Gssss(g) if !(scheme_key && g.is_tcg()) => {
                set(g);
                self
            }
            _ => self.refuse(field),
        }
    }

    /// GSSSS: the midpoint scheme V0(1,1,0), in the current form.
    pub fn midpoint(self) -> Self {
        self.gssss_with("scheme", true, |g| {
            let form = match g.variant {
                Variant::Single { form, .. } => form,
                Variant::TwoField => SolveForm::A,
            };
            g.variant = Variant::Single {
                coefficients: Gssss::midpoint(),
                form,
            };
            g.preset = Some("midpoint".into());
        })
    }

    /// GSSSS: a named preset (`midpoint`, `newmark`, `generalized-alpha(0.8)`, ...).
    pub fn preset(self, name: &str) -> Result<Self, SettingsError> {
        if !matches!(&self.method, MethodSettings::Gssss(g) if !g.is_tcg()) {
            return Err(self.foreign("scheme"));
        }
        let (family, rho) = preset(name).map_err(|e| bad("scheme", e))?;
        let mut config = self.family(family, rho)?;
        if let MethodSettings::Gssss(g) = &mut config.method {
            g.preset = Some(name.to_string());
        }
        Ok(config)
    }

    /// GSSSS: the member `family` (rho1, rho2, rho3), in the current form.
    pub fn family(mut self, family: Family, rho: [f64; 3]) -> Result<Self, SettingsError> {
        let coefficients = Gssss::new(family, rho).map_err(|e| bad("family", e))?;
        match &mut self.method {
            MethodSettings::Gssss(g) if !g.is_tcg() => {
                let form = match g.variant {
                    Variant::Single { form, .. } => form,
                    Variant::TwoField => SolveForm::A,
                };
                g.variant = Variant::Single { coefficients, form };
                g.preset = None;
                Ok(self)
            }
            _ => Err(self.foreign("family")),
        }
    }

    /// GSSSS: the Newton unknown of a single-field member (the two-field
    /// scheme has its own: refused there, as for another method).
    pub fn form(mut self, form: SolveForm) -> Self {
        if matches!(&self.method, MethodSettings::Gssss(g) if !g.is_tcg() && g.variant == Variant::TwoField)
        {
            self.note(bad(
                "form",
                "the two-field scheme is its own form: choose a family or a preset before a form",
            ));
            return self;
        }
        self.gssss_with("form", true, |g| {
            if let Variant::Single { form: f, .. } = &mut g.variant {
                *f = form;
            }
        })
    }

    /// GSSSS: the two-field v-form midpoint scheme.
    pub fn two_field(self) -> Self {
        self.gssss_with("form", true, |g| {
            g.variant = Variant::TwoField;
            g.preset = None;
        })
    }

    /// GSSSS: the constraint-force option (checked by [`IntegratorConfig::check`]).
    pub fn option(self, option: ConstraintOption) -> Self {
        self.gssss_with("option", true, |g| g.option = option)
    }

    /// GSSSS and TCG: halve a step whose Newton iteration fails instead of stopping.
    pub fn cutback(mut self) -> Self {
        if let MethodSettings::RungeKutta(_) = &self.method {
            let m = self.method_name();
            self.note(bad(
                "step_control",
                format!(
                    "`step_control = \"cutback\"` belongs to \"gssss\" and \"tcg\"; method \"{m}\" \
                     steps \"adaptive\" or \"fixed\""
                ),
            ));
            return self;
        }
        self.gssss_with("step_control", false, |g| {
            g.step_control = StepControl::Cutback
        })
    }

    /// GSSSS and TCG: the absolute increment test of Hoitink (`convergence
    /// = "increment"`, docs/theory/gssss.md §12b) with tolerance `tol`
    /// (acceleration and multiplier units).
    pub fn increment_test(self, tol: f64) -> Self {
        self.gssss_with("convergence", false, |g| {
            g.newton.stop = NewtonStop::Increment;
            g.newton.tol = tol;
        })
    }

    /// GSSSS and TCG: the increment test that also stops when the error
    /// estimated from the contraction rate is below `tol` (`convergence =
    /// "rate"`).
    pub fn rate_test(self, tol: f64) -> Self {
        self.gssss_with("convergence", false, |g| {
            g.newton.stop = NewtonStop::Rate;
            g.newton.tol = tol;
        })
    }

    /// GSSSS and TCG: the scaled Newton test (`convergence = "scaled"`, the
    /// default; docs/theory/gssss.md §12a) with `rtol` and `atol`
    /// (displacement units; `None`: `rtol (1 + max |u0|)`).
    pub fn scaled_test(self, rtol: f64, atol: Option<f64>) -> Self {
        self.gssss_with("convergence", false, |g| {
            g.newton.stop = NewtonStop::Scaled;
            g.newton.scaled = ScaledTolerances { rtol, atol };
        })
    }

    /// The Newton methods (GSSSS, TCG, TDG, alpha–kappa): at most
    /// `max_iter` iterations per step.
    pub fn max_iter(mut self, max_iter: u32) -> Self {
        match &mut self.method {
            MethodSettings::Gssss(g) => g.newton.max_iter = max_iter,
            MethodSettings::Tdg(t) => t.newton.max_iter = max_iter,
            _ => return self.refuse("max_iter"),
        }
        self
    }

    /// The step of a fixed-step method (GSSSS, TCG, TDG, alpha–kappa, a
    /// Runge–Kutta method with fixed steps). The adaptive methods choose
    /// their steps and refuse it, as in a model file; their largest step is
    /// [`Self::max_step`].
    pub fn dt(mut self, dt: f64) -> Self {
        match &mut self.method {
            MethodSettings::Gssss(g) => g.dt = dt,
            MethodSettings::RungeKutta(RkSettings {
                step: RkStep::Fixed { dt: h },
                ..
            }) => *h = dt,
            MethodSettings::Tdg(t) => t.dt = dt,
            _ => return self.refuse("dt"),
        }
        self.dt = dt;
        self
    }

    /// The largest step of an adaptive method (DOPRI5 and the EPM with
    /// adaptive steps, BDF); refused by the fixed-step methods.
    pub fn max_step(mut self, max_step: f64) -> Self {
        match &mut self.method {
            MethodSettings::RungeKutta(RkSettings {
                step: RkStep::Adaptive { max_step: h, .. },
                ..
            }) => *h = max_step,
            MethodSettings::Bdf(b) => b.max_step = max_step,
            _ => return self.refuse("max_step"),
        }
        self.dt = max_step;
        self
    }

    /// Tolerances: of the adaptive step control (Runge–Kutta, BDF), or of
    /// the scaled Newton test (GSSSS with that test, TDG, alpha–kappa;
    /// `atol` in displacement units, docs/theory/gssss.md §12a). The
    /// convergence test is never changed: with GSSSS's increment or rate
    /// test they are refused (select the scaled one with
    /// [`Self::scaled_test`]).
    pub fn tolerances(mut self, rtol: f64, atol: f64) -> Self {
        let test = match &mut self.method {
            MethodSettings::RungeKutta(RkSettings {
                step: RkStep::Adaptive {
                    rtol: r, atol: a, ..
                },
                ..
            }) => {
                (*r, *a) = (rtol, atol);
                return self;
            }
            MethodSettings::Gssss(g) if g.newton.stop != NewtonStop::Scaled => g.newton.stop.name(),
            MethodSettings::Gssss(g) => {
                g.newton.scaled = ScaledTolerances {
                    rtol,
                    atol: Some(atol),
                };
                return self;
            }
            MethodSettings::Bdf(b) => {
                (b.rtol, b.atol) = (rtol, atol);
                return self;
            }
            MethodSettings::Tdg(t) => {
                (t.newton.rtol, t.newton.atol) = (rtol, Some(atol));
                return self;
            }
            _ => return self.refuse("rtol"),
        };
        self.note(bad(
            "rtol",
            format!(
                "`rtol` and `atol` are the scaled Newton test's; this configuration uses the \
                 \"{test}\" test (select the scaled one with scaled_test)"
            ),
        ));
        self
    }

    /// Runge–Kutta on the index-1 form: the drift control (the EPM's
    /// projections are part of its evaluations: refused there).
    pub fn stabilization(mut self, stabilization: Stabilization) -> Self {
        match &mut self.method {
            MethodSettings::RungeKutta(r) if r.formulation == Formulation::Index1 => {
                r.stabilization = stabilization
            }
            _ => return self.refuse("stabilization"),
        }
        self
    }

    /// How the initial state is treated: checked against the constraints
    /// (the default) or projected onto them (`[integrator] initialize`).
    pub fn initialize(mut self, initialize: Initialize) -> Self {
        self.initialize = initialize;
        self
    }

    /// The end time of [`crate::run::Simulation::run`].
    pub fn t_end(mut self, t_end: f64) -> Self {
        self.t_end = t_end;
        self
    }
}
