//! The typed settings of each method, their labels and parameters (run
//! metadata), the builders of the library API, and the factory
//! ([`IntegratorConfig::build`]).

use crate::integrate::bdf::{Bdf, BdfSettings};
use crate::integrate::galerkin::{Kappa, Scheme, Tdg, TdgSettings};
use crate::integrate::gssss::{
    preset, ConstraintOption, Family, Gssss, JacobianKind, OneStepIntegrator, SolveForm, Variant,
};
use crate::integrate::initial::Initialize;
use crate::integrate::newton::{
    LineSearch, NewtonSettings, NewtonStop, Refactor, ScaledTolerances, DEFAULT_RTOL,
};
use crate::integrate::projector::{Metric, Passes};
use crate::integrate::rk::{RungeKutta, Tableau};
use crate::integrate::{AttrValue, Integrator, StepError, System};

use super::{bad, check_option, keys, largest_step, positive, step_size, SettingsError, TCG};

pub use crate::integrate::gssss::{GssssSettings, StepControl};
pub use crate::integrate::rk::{Formulation, RkSettings, RkStep, Stabilization};

/// Default `max_steps` of the adaptive methods: a run that needs more is
/// stopped with [`StepError::TooManySteps`] instead of creeping on (HNW's
/// DOPRI5 has NMAX = 1e5; the shipped models need at most a few 1e4).
pub const DEFAULT_MAX_STEPS: u64 = 1_000_000;

/// The method and its typed settings.
#[derive(Debug, Clone, PartialEq)]
pub enum MethodConfig {
    /// The GSSSS family and the two-field midpoint scheme.
    Gssss(GssssSettings),
    /// An explicit Runge–Kutta method on the index-1 form.
    RungeKutta(RkSettings),
    /// DASSL's BDF on the GGL form (Yen and Petzold).
    Bdf(BdfSettings),
    /// Seed 002's time-discontinuous Galerkin scheme.
    Tdg(TdgSettings),
}

/// A fully resolved integrator configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct IntegratorConfig {
    /// The method.
    pub method: MethodConfig,
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
    pub(super) misapplied: Option<SettingsError>,
}

impl GssssSettings {
    /// Whether this is `method = "tcg"` (the two-field midpoint scheme with option dg).
    pub fn is_tcg(&self) -> bool {
        self.preset.as_deref() == Some(TCG)
    }

    /// A human-readable name.
    pub fn label(&self) -> String {
        let opt = self.option.name();
        let jac = match self.newton.jacobian {
            JacobianKind::Consistent => "",
            JacobianKind::Seed => ", seed Jacobian",
        };
        let cut = match self.step_control {
            StepControl::Fixed => "",
            StepControl::Cutback => ", cutback",
        };
        match self.variant {
            Variant::Single { coefficients, form } => {
                let name = self
                    .preset
                    .as_ref()
                    .map(|p| format!(" [{p}]"))
                    .unwrap_or_default();
                format!(
                    "GSSSS {}{name}, option {opt}, {}-form{jac}{cut}",
                    coefficients.label(),
                    form_name(form)
                )
            }
            Variant::TwoField if self.is_tcg() => {
                format!("TCG (Lens and Cardona eq. 14): two-field v-form midpoint, option {opt}{jac}{cut}")
            }
            Variant::TwoField => format!("two-field v-form midpoint, option {opt}{jac}{cut}"),
        }
    }

    /// Parameters for the output metadata.
    pub fn parameters(&self) -> Vec<(String, AttrValue)> {
        let method = if self.is_tcg() { TCG } else { "gssss" };
        let mut p = vec![("method".into(), AttrValue::Str(method.into()))];
        match self.variant {
            Variant::Single { coefficients, form } => {
                let fam = match coefficients.family {
                    Family::U0 => "u0",
                    Family::V0 => "v0",
                };
                p.push(("family".into(), AttrValue::Str(fam.into())));
                for (k, r) in ["rho1", "rho2", "rho3"].iter().zip(coefficients.rho) {
                    p.push((k.to_string(), AttrValue::F64(r)));
                }
                p.push(("form".into(), AttrValue::Str(form_name(form).into())));
            }
            Variant::TwoField => p.push(("form".into(), AttrValue::Str("two-field".into()))),
        }
        if let Some(name) = self.preset.as_ref().filter(|_| !self.is_tcg()) {
            p.push(("scheme".into(), AttrValue::Str(name.clone())));
        }
        p.push((
            "option".into(),
            match self.option.name().parse::<i64>() {
                Ok(k) => AttrValue::I64(k),
                Err(_) => AttrValue::Str(self.option.name().into()),
            },
        ));
        p.push(("dt".into(), AttrValue::F64(self.dt)));
        match self.newton.stop {
            NewtonStop::Scaled => {
                p.push(("rtol".into(), AttrValue::F64(self.newton.scaled.rtol)));
                if let Some(atol) = self.newton.scaled.atol {
                    p.push(("atol".into(), AttrValue::F64(atol)));
                }
            }
            NewtonStop::Increment | NewtonStop::Rate => {
                p.push(("tol".into(), AttrValue::F64(self.newton.tol)));
            }
        }
        p.push((
            "max_iter".into(),
            AttrValue::I64(self.newton.max_iter as i64),
        ));
        let jac = match self.newton.jacobian {
            JacobianKind::Consistent => "consistent",
            JacobianKind::Seed => "seed",
        };
        p.push(("jacobian".into(), AttrValue::Str(jac.into())));
        p.push((
            "convergence".into(),
            AttrValue::Str(self.newton.stop.name().into()),
        ));
        p.push((
            "refactor".into(),
            AttrValue::Str(self.newton.refactor.name().into()),
        ));
        p.push((
            "line_search".into(),
            AttrValue::Str(self.newton.line_search.name().into()),
        ));
        p.push((
            "step_control".into(),
            AttrValue::Str(self.step_control.name().into()),
        ));
        p
    }
}

impl RkSettings {
    /// A human-readable name, e.g. `dopri5 (rtol 1e-5, atol 1e-6), PStab`.
    pub fn label(&self) -> String {
        let step = match self.step {
            RkStep::Fixed { dt } => format!("dt {dt}"),
            RkStep::Adaptive { rtol, atol, .. } => format!("rtol {rtol:e}, atol {atol:e}"),
        };
        let stab = match self.stabilization {
            Stabilization::None => "no stabilization".to_string(),
            Stabilization::Baumgarte([g1, g2]) => format!("Baumgarte B({g1}, {g2})"),
            Stabilization::PStab {
                datol,
                metric,
                passes,
            } => {
                format!(
                    "PStab (datol {datol:e}, {} metric, {} passes)",
                    metric.name(),
                    passes.name()
                )
            }
        };
        match self.formulation {
            Formulation::Index1 => {
                format!("{} on the index-1 form ({step}), {stab}", self.tableau.name)
            }
            Formulation::Epm => format!(
                "embedded projection method with {} ({step})",
                self.tableau.name
            ),
        }
    }

    /// Parameters for the output metadata.
    pub fn parameters(&self) -> Vec<(String, AttrValue)> {
        let mut p = match self.formulation {
            Formulation::Index1 => {
                vec![("method".into(), AttrValue::Str(self.tableau.name.into()))]
            }
            Formulation::Epm => vec![
                ("method".into(), AttrValue::Str("epm".into())),
                ("tableau".into(), AttrValue::Str(self.tableau.name.into())),
            ],
        };
        match self.step {
            RkStep::Fixed { dt } => {
                p.push(("step_control".into(), AttrValue::Str("fixed".into())));
                p.push(("dt".into(), AttrValue::F64(dt)));
            }
            RkStep::Adaptive {
                rtol,
                atol,
                max_step,
                max_steps,
            } => {
                p.push(("step_control".into(), AttrValue::Str("adaptive".into())));
                p.push(("max_steps".into(), AttrValue::I64(max_steps as i64)));
                p.push(("rtol".into(), AttrValue::F64(rtol)));
                p.push(("atol".into(), AttrValue::F64(atol)));
                p.push(("max_step".into(), AttrValue::F64(max_step)));
            }
        }
        match self.stabilization {
            Stabilization::None => {
                p.push(("stabilization".into(), AttrValue::Str("none".into())));
            }
            Stabilization::Baumgarte([g1, g2]) => {
                p.push(("stabilization".into(), AttrValue::Str("baumgarte".into())));
                p.push(("baumgarte_g1".into(), AttrValue::F64(g1)));
                p.push(("baumgarte_g2".into(), AttrValue::F64(g2)));
            }
            Stabilization::PStab {
                datol,
                metric,
                passes,
            } => {
                p.push(("stabilization".into(), AttrValue::Str("pstab".into())));
                p.push(("datol".into(), AttrValue::F64(datol)));
                p.push(("projection".into(), AttrValue::Str(metric.name().into())));
                p.push(("pstab_passes".into(), AttrValue::Str(passes.name().into())));
            }
        }
        p
    }
}

impl BdfSettings {
    /// A human-readable name, e.g. `BDF 1-5 on GGL, full Newton (rtol 1e-6, atol 1e-6)`.
    pub fn label(&self) -> String {
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
    pub fn parameters(&self) -> Vec<(String, AttrValue)> {
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

    /// Orders 1..=5, tolerances positive and above round-off, limits positive.
    pub fn check(&self) -> Result<(), SettingsError> {
        if !(1..=5).contains(&self.max_order) {
            return Err(bad(
                "max_order",
                format!("`max_order` must be 1 to 5, got {}", self.max_order),
            ));
        }
        round_off_rtol(self.rtol)?;
        positive("atol", self.atol)?;
        largest_step("max_step", self.max_step)?;
        if self.max_steps == 0 {
            return Err(bad("max_steps", "`max_steps` must be at least 1"));
        }
        Ok(())
    }
}

/// A relative tolerance: finite and at least 1e-14 (below it no method
/// controls an error or a Newton correction: HNW's dopri5 refuses rtol <=
/// 10 eps as well).
fn round_off_rtol(rtol: f64) -> Result<(), SettingsError> {
    if rtol >= 1e-14 && rtol.is_finite() {
        Ok(())
    } else {
        Err(bad(
            "rtol",
            format!("`rtol` must be finite and at least 1e-14, got {rtol:e}"),
        ))
    }
}

fn form_name(form: SolveForm) -> &'static str {
    match form {
        SolveForm::A => "a",
        SolveForm::V => "v",
        SolveForm::D => "d",
    }
}

impl IntegratorConfig {
    /// A human-readable name.
    pub fn label(&self) -> String {
        match &self.method {
            MethodConfig::Gssss(g) => g.label(),
            MethodConfig::RungeKutta(r) => r.label(),
            MethodConfig::Bdf(b) => b.label(),
            MethodConfig::Tdg(t) => match t.scheme {
                Scheme::Tdg => format!(
                    "TDG (Lens and Cardona eq. {}), alpha = {}",
                    if t.alpha == 1.0 { "28" } else { "47" },
                    t.alpha
                ),
                Scheme::AlphaKappa(k) => format!(
                    "alpha-kappa (Lens and Cardona eq. 66), alpha = {}, kappa = {}",
                    t.alpha,
                    match k {
                        Kappa::Auto => "eq. 71 in [1 - h/2, 1 + h/2]".to_string(),
                        Kappa::Fixed(k) => k.to_string(),
                    }
                ),
            },
        }
    }

    /// Parameters for the output metadata.
    pub fn parameters(&self) -> Vec<(String, AttrValue)> {
        let mut p = match &self.method {
            MethodConfig::Gssss(g) => g.parameters(),
            MethodConfig::RungeKutta(r) => r.parameters(),
            MethodConfig::Bdf(b) => b.parameters(),
            MethodConfig::Tdg(t) => {
                let mut p = vec![
                    (
                        "method".into(),
                        AttrValue::Str(
                            match t.scheme {
                                Scheme::Tdg => "tdg",
                                Scheme::AlphaKappa(_) => "alpha-kappa",
                            }
                            .into(),
                        ),
                    ),
                    ("alpha".into(), AttrValue::F64(t.alpha)),
                    ("dt".into(), AttrValue::F64(t.dt)),
                    ("rtol".into(), AttrValue::F64(t.rtol)),
                ];
                match t.scheme {
                    Scheme::AlphaKappa(Kappa::Auto) => {
                        p.push(("kappa".into(), AttrValue::Str("auto".into())))
                    }
                    Scheme::AlphaKappa(Kappa::Fixed(k)) => {
                        p.push(("kappa".into(), AttrValue::F64(k)))
                    }
                    Scheme::Tdg => {}
                }
                if let Some(atol) = t.atol {
                    p.push(("atol".into(), AttrValue::F64(atol)));
                }
                p.push(("max_iter".into(), AttrValue::I64(t.max_iter.into())));
                // Recorded when set (runs without them keep their attributes).
                if t.refactor != Refactor::Iteration {
                    p.push(("refactor".into(), AttrValue::Str(t.refactor.name().into())));
                }
                if t.line_search != LineSearch::None {
                    p.push((
                        "line_search".into(),
                        AttrValue::Str(t.line_search.name().into()),
                    ));
                }
                p
            }
        };
        p.push(("t_end".into(), AttrValue::F64(self.t_end)));
        p
    }

    /// The number of steps to t_end of a fixed-step method (the last one may
    /// be shorter); `None` for adaptive methods.
    pub fn nominal_steps(&self) -> Option<u64> {
        match &self.method {
            MethodConfig::Gssss(g) => Some(crate::integrate::step_count(self.t_end, g.dt)),
            MethodConfig::RungeKutta(RkSettings {
                step: RkStep::Fixed { dt },
                ..
            }) => Some(crate::integrate::step_count(self.t_end, *dt)),
            MethodConfig::RungeKutta(_) | MethodConfig::Bdf(_) => None,
            MethodConfig::Tdg(t) => Some(crate::integrate::step_count(self.t_end, t.dt)),
        }
    }

    /// The statistics the method reports ([`Integrator::statistics`]).
    pub fn statistics(&self) -> &'static [crate::integrate::StatSpec] {
        match &self.method {
            MethodConfig::Gssss(_) => &crate::integrate::gssss::stepper::STATS,
            MethodConfig::RungeKutta(_) => &crate::integrate::rk::STATS,
            MethodConfig::Bdf(_) => &crate::integrate::bdf::STATS,
            MethodConfig::Tdg(TdgSettings {
                scheme: Scheme::Tdg,
                ..
            }) => &crate::integrate::galerkin::STATS,
            MethodConfig::Tdg(_) => &crate::integrate::galerkin::AK_STATS,
        }
    }

    /// The GSSSS settings, when the method is GSSSS.
    pub fn gssss_settings(&self) -> Option<&GssssSettings> {
        match &self.method {
            MethodConfig::Gssss(g) => Some(g),
            MethodConfig::RungeKutta(_) | MethodConfig::Bdf(_) | MethodConfig::Tdg(_) => None,
        }
    }

    /// The step of a fixed-step method (`None` for the adaptive ones).
    pub fn fixed_step(&self) -> Option<f64> {
        match &self.method {
            MethodConfig::Gssss(g) => Some(g.dt),
            MethodConfig::Tdg(t) => Some(t.dt),
            MethodConfig::RungeKutta(RkSettings {
                step: RkStep::Fixed { dt },
                ..
            }) => Some(*dt),
            MethodConfig::RungeKutta(_) | MethodConfig::Bdf(_) => None,
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
    pub fn build(&self, sys: &System<'_>) -> Result<Box<dyn Integrator>, StepError> {
        let started = std::time::Instant::now();
        match &self.method {
            MethodConfig::Gssss(g) => {
                let mut integrator =
                    OneStepIntegrator::new(sys, self.label(), self.parameters(), g, self.solver())?;
                if self.timing {
                    integrator.measure_timings(started.elapsed());
                }
                if let Some(export) = &self.export_matrix {
                    integrator.export_matrix(sys, export.clone());
                }
                Ok(Box::new(integrator))
            }
            MethodConfig::RungeKutta(_) | MethodConfig::Bdf(_) | MethodConfig::Tdg(_)
                if self.export_matrix.is_some() =>
            {
                Err(StepError::Setup {
                    reason: "exporting the Newton matrix needs a Newton method (GSSSS family)"
                        .into(),
                })
            }
            MethodConfig::RungeKutta(r) => Ok(Box::new(RungeKutta::new(
                sys,
                self.label(),
                self.parameters(),
                r,
                self.solver(),
            )?)),
            MethodConfig::Bdf(b) => Ok(Box::new(Bdf::new(
                sys,
                self.label(),
                self.parameters(),
                b,
                self.force_sparse,
            )?)),
            MethodConfig::Tdg(t) => Ok(Box::new(Tdg::new(
                sys,
                self.label(),
                self.parameters(),
                *t,
                self.solver(),
            )?)),
        }
    }
}

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
        let dt = 0.01;
        Self::with_method(
            MethodConfig::Gssss(GssssSettings {
                variant: Variant::Single {
                    coefficients: Gssss::midpoint(),
                    form: SolveForm::A,
                },
                preset: Some("midpoint".into()),
                option: ConstraintOption::Two,
                dt,
                newton: NewtonSettings {
                    tol: 1e-8,
                    scaled: ScaledTolerances {
                        rtol: DEFAULT_RTOL,
                        atol: None,
                    },
                    max_iter: 100,
                    jacobian: JacobianKind::Consistent,
                    stop: NewtonStop::Scaled,
                    refactor: Refactor::Iteration,
                    line_search: LineSearch::None,
                },
                step_control: StepControl::Fixed,
            }),
            dt,
        )
    }

    /// Seed 002's energy-preserving time-continuous Galerkin scheme
    /// (`method = "tcg"`): the two-field midpoint scheme with option dg and
    /// the GSSSS defaults otherwise.
    pub fn tcg() -> Self {
        let mut config = Self::gssss().two_field().option(ConstraintOption::Gonzalez);
        if let MethodConfig::Gssss(g) = &mut config.method {
            g.preset = Some(TCG.into());
        }
        config
    }

    /// Seed 002's time-discontinuous Galerkin scheme with dissipation
    /// control `alpha` (eq. 47; eq. 28 for alpha = 1), dt 0.01, the scaled
    /// Newton test (rtol 1e-6) with at most 100 iterations.
    pub fn tdg(alpha: f64) -> Self {
        let dt = 0.01;
        Self::with_method(
            MethodConfig::Tdg(TdgSettings {
                scheme: Scheme::Tdg,
                alpha,
                dt,
                rtol: DEFAULT_RTOL,
                atol: None,
                max_iter: 100,
                refactor: Refactor::Iteration,
                line_search: LineSearch::None,
            }),
            dt,
        )
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
        let dt = 0.01;
        Self::with_method(
            MethodConfig::RungeKutta(RkSettings {
                formulation: Formulation::Epm,
                tableau: crate::integrate::rk::RK4,
                step: RkStep::Fixed { dt },
                stabilization: Stabilization::None,
            }),
            dt,
        )
    }

    /// Seed 002's alpha–kappa scheme (eq. 66) with dissipation control
    /// `alpha` and kappa from eq. 71 (`kappa = "auto"`), dt 0.01, the
    /// scaled Newton test (rtol 1e-6) with at most 100 iterations.
    pub fn alpha_kappa(alpha: f64) -> Self {
        let mut config = Self::tdg(alpha);
        if let MethodConfig::Tdg(t) = &mut config.method {
            t.scheme = Scheme::AlphaKappa(Kappa::Auto);
        }
        config
    }

    /// DASSL's BDF on the GGL form (Yen and Petzold): full Newton, orders 1 to 5,
    /// the error test on positions and velocities, rtol = atol = 1e-6, no
    /// largest step, at most [`DEFAULT_MAX_STEPS`] steps.
    pub fn bdf() -> Self {
        let max_step = f64::INFINITY;
        Self::with_method(
            MethodConfig::Bdf(BdfSettings {
                iteration: crate::integrate::bdf::NewtonIteration::Full,
                max_order: 5,
                error_test: crate::integrate::bdf::ErrorTest::States,
                rtol: 1e-6,
                atol: 1e-6,
                max_step,
                max_steps: DEFAULT_MAX_STEPS,
            }),
            max_step,
        )
    }

    fn runge_kutta(tableau: Tableau, step: RkStep) -> Self {
        let dt = match step {
            RkStep::Fixed { dt } => dt,
            RkStep::Adaptive { max_step, .. } => max_step,
        };
        Self::with_method(
            MethodConfig::RungeKutta(RkSettings {
                formulation: Formulation::Index1,
                tableau,
                step,
                stabilization: Stabilization::PStab {
                    datol: 0.0,
                    metric: Metric::Mass,
                    passes: Passes::Two,
                },
            }),
            dt,
        )
    }

    /// `method` with step (or largest step) `dt` and the solver defaults:
    /// `t_end` 0, the dense/band/sparse choice by size, the automatic
    /// sparse factorization, an inconsistent initial state refused, no
    /// timings, no matrix export.
    pub(crate) fn with_method(method: MethodConfig, dt: f64) -> Self {
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
        match &self.method {
            MethodConfig::Gssss(g) if g.is_tcg() => TCG,
            MethodConfig::Gssss(_) => "gssss",
            MethodConfig::RungeKutta(r) => match r.formulation {
                Formulation::Index1 => r.tableau.name,
                Formulation::Epm => "epm",
            },
            MethodConfig::Bdf(_) => "bdf",
            MethodConfig::Tdg(t) => match t.scheme {
                Scheme::Tdg => "tdg",
                Scheme::AlphaKappa(_) => "alpha-kappa",
            },
        }
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
        bad(field, keys::foreign_message(self.method_name(), field))
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
            MethodConfig::Gssss(g) if !(scheme_key && g.is_tcg()) => {
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
        if !matches!(&self.method, MethodConfig::Gssss(g) if !g.is_tcg()) {
            return Err(self.foreign("scheme"));
        }
        let (family, rho) = preset(name).map_err(|e| bad("scheme", e))?;
        let mut config = self.family(family, rho)?;
        if let MethodConfig::Gssss(g) = &mut config.method {
            g.preset = Some(name.to_string());
        }
        Ok(config)
    }

    /// GSSSS: the member `family` (rho1, rho2, rho3), in the current form.
    pub fn family(mut self, family: Family, rho: [f64; 3]) -> Result<Self, SettingsError> {
        let coefficients = Gssss::new(family, rho).map_err(|e| bad("family", e))?;
        match &mut self.method {
            MethodConfig::Gssss(g) if !g.is_tcg() => {
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
        if matches!(&self.method, MethodConfig::Gssss(g) if !g.is_tcg() && g.variant == Variant::TwoField)
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
        if let MethodConfig::RungeKutta(_) = &self.method {
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
            MethodConfig::Gssss(g) => g.newton.max_iter = max_iter,
            MethodConfig::Tdg(t) => t.max_iter = max_iter,
            MethodConfig::RungeKutta(_) | MethodConfig::Bdf(_) => return self.refuse("max_iter"),
        }
        self
    }

    /// The step of a fixed-step method (GSSSS, TCG, TDG, alpha–kappa, a
    /// Runge–Kutta method with fixed steps). The adaptive methods choose
    /// their steps and refuse it, as in a model file; their largest step is
    /// [`Self::max_step`].
    pub fn dt(mut self, dt: f64) -> Self {
        match &mut self.method {
            MethodConfig::Gssss(g) => g.dt = dt,
            MethodConfig::RungeKutta(RkSettings {
                step: RkStep::Fixed { dt: h },
                ..
            }) => *h = dt,
            MethodConfig::Tdg(t) => t.dt = dt,
            MethodConfig::RungeKutta(_) | MethodConfig::Bdf(_) => return self.refuse("dt"),
        }
        self.dt = dt;
        self
    }

    /// The largest step of an adaptive method (DOPRI5 and the EPM with
    /// adaptive steps, BDF); refused by the fixed-step methods.
    pub fn max_step(mut self, max_step: f64) -> Self {
        match &mut self.method {
            MethodConfig::RungeKutta(RkSettings {
                step: RkStep::Adaptive { max_step: h, .. },
                ..
            }) => *h = max_step,
            MethodConfig::Bdf(b) => b.max_step = max_step,
            MethodConfig::Gssss(_) | MethodConfig::Tdg(_) | MethodConfig::RungeKutta(_) => {
                return self.refuse("max_step")
            }
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
            MethodConfig::RungeKutta(RkSettings {
                step: RkStep::Adaptive {
                    rtol: r, atol: a, ..
                },
                ..
            }) => {
                (*r, *a) = (rtol, atol);
                return self;
            }
            MethodConfig::RungeKutta(_) => return self.refuse("rtol"),
            MethodConfig::Gssss(g) if g.newton.stop != NewtonStop::Scaled => g.newton.stop.name(),
            MethodConfig::Gssss(g) => {
                g.newton.scaled = ScaledTolerances {
                    rtol,
                    atol: Some(atol),
                };
                return self;
            }
            MethodConfig::Bdf(b) => {
                (b.rtol, b.atol) = (rtol, atol);
                return self;
            }
            MethodConfig::Tdg(t) => {
                (t.rtol, t.atol) = (rtol, Some(atol));
                return self;
            }
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
            MethodConfig::RungeKutta(r) if r.formulation == Formulation::Index1 => {
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

    /// Checks the values a typed configuration can hold but a method cannot
    /// run: steps, tolerances and limits positive and finite, option "dg"
    /// with a midpoint scheme only, tolerances above round-off. Errors name
    /// the `[integrator]` key.
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
        match &self.method {
            MethodConfig::Bdf(b) => b.check(),
            MethodConfig::Tdg(t) => {
                step_size("dt", t.dt)?;
                if let Scheme::AlphaKappa(Kappa::Fixed(k)) = t.scheme {
                    positive("kappa", k)?;
                }
                if !(0.0..=1.0).contains(&t.alpha) {
                    return Err(bad(
                        "alpha",
                        format!(
                            "`alpha` must be in [0, 1] (Lens and Cardona eq. 44), got {}",
                            t.alpha
                        ),
                    ));
                }
                round_off_rtol(t.rtol)?;
                if let Some(a) = t.atol {
                    positive("atol", a)?;
                }
                if t.max_iter == 0 {
                    return Err(bad("max_iter", "`max_iter` must be at least 1"));
                }
                Ok(())
            }

            MethodConfig::Gssss(g) => {
                step_size("dt", g.dt)?;
                positive("tol", g.newton.tol)?;
                round_off_rtol(g.newton.scaled.rtol)?;
                if let Some(a) = g.newton.scaled.atol {
                    positive("atol", a)?;
                }
                if g.newton.max_iter == 0 {
                    return Err(bad("max_iter", "`max_iter` must be at least 1"));
                }
                check_option(g.option, g.variant, g.dt)
            }
            MethodConfig::RungeKutta(r) => {
                match r.step {
                    RkStep::Fixed { dt } => {
                        step_size("dt", dt)?;
                    }
                    RkStep::Adaptive {
                        rtol,
                        atol,
                        max_step,
                        max_steps,
                    } => {
                        if max_steps == 0 {
                            return Err(bad("max_steps", "`max_steps` must be at least 1"));
                        }
                        round_off_rtol(rtol)?;
                        positive("atol", atol)?;
                        largest_step("max_step", max_step)?;
                    }
                }
                match r.stabilization {
                    Stabilization::Baumgarte(g) if g.iter().any(|x| !x.is_finite() || *x < 0.0) => {
                        Err(bad(
                            "baumgarte",
                            format!("Baumgarte's parameters must be finite and non-negative, got [{}, {}]", g[0], g[1]),
                        ))
                    }
                    Stabilization::PStab { datol, .. } if !(datol >= 0.0 && datol.is_finite()) => {
                        Err(bad("datol", format!("`datol` must be >= 0, got {datol}")))
                    }
                    _ => Ok(()),
                }
            }
        }
    }
}
