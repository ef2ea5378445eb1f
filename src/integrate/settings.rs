//! The `[integrator]` table: what the user writes ([`IntegratorSpec`], every
//! field optional so that the CLI can override it), what it resolves to (the
//! typed [`IntegratorConfig`] with one [`MethodConfig`] per method) and the
//! factory that builds the method ([`IntegratorConfig::build`]).

use serde::Deserialize;

use super::gssss::OneStepIntegrator;
use super::gssss::{preset, ConstraintOption, Family, Gssss, JacobianKind, SolveForm, Variant};
use super::newton::{NewtonSettings, NewtonStop, Refactor};
use super::{Integrator, StepError, System};
use crate::output::AttrValue;

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

/// The `[integrator]` table as written (all fields optional).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntegratorSpec {
    /// Method: `gssss` (default) ...
    pub method: Option<String>,
    /// `fixed` or `cutback` (GSSSS).
    pub step_control: Option<String>,
    /// Preset name (`midpoint`, `newmark`, `generalized-alpha(0.8)`, ...) or `gssss`.
    pub scheme: Option<String>,
    /// `u0` or `v0` (with rho1, rho2, rho3).
    pub family: Option<String>,
    /// First principal root at infinity.
    pub rho1: Option<f64>,
    /// Second principal root at infinity.
    pub rho2: Option<f64>,
    /// Spurious root at infinity.
    pub rho3: Option<f64>,
    /// Constraint-force option: 1..=4 or `"dg"`.
    pub option: Option<OptionChoice>,
    /// `a`, `v`, `d` or `two-field`.
    pub form: Option<String>,
    /// Time step.
    pub dt: Option<f64>,
    /// End time.
    pub t_end: Option<f64>,
    /// Newton tolerance.
    pub tol: Option<f64>,
    /// Newton iteration limit per step.
    pub max_iter: Option<u32>,
    /// `consistent` or `seed`.
    pub jacobian: Option<String>,
    /// Newton stop test: `increment` or `rate`.
    pub convergence: Option<String>,
    /// Newton matrix refresh: `iteration` or `step`.
    pub refactor: Option<String>,
    /// Force the sparse LU even for small systems.
    pub sparse: Option<bool>,
}

/// A constraint-force option as written: an integer 1..=4 (seed 000 eqs.
/// 3.8–3.11) or the name `"dg"` (Gonzalez's discrete derivative, midpoint
/// schemes only). Checked by [`IntegratorSpec::resolve`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum OptionChoice {
    /// `option = 2`.
    Number(i64),
    /// `option = "dg"` (or a number written as a string, as on the command line).
    Name(String),
}

impl From<u8> for OptionChoice {
    fn from(k: u8) -> Self {
        OptionChoice::Number(k.into())
    }
}

impl std::fmt::Display for OptionChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptionChoice::Number(k) => write!(f, "{k}"),
            OptionChoice::Name(s) => write!(f, "\"{s}\""),
        }
    }
}

/// How a fixed-step method treats a step whose Newton iteration fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepControl {
    /// The run stops (seed 000's failure patterns).
    Fixed,
    /// The step is halved and retried (at most 10 times), and doubled again
    /// after 4 successes, up to dt.
    Cutback,
}

impl StepControl {
    /// The name in the model file.
    pub fn name(self) -> &'static str {
        match self {
            StepControl::Fixed => "fixed",
            StepControl::Cutback => "cutback",
        }
    }
}

/// Settings of the GSSSS family (seed 000).
#[derive(Debug, Clone, PartialEq)]
pub struct GssssSettings {
    /// The scheme.
    pub variant: Variant,
    /// Preset name when one was used.
    pub preset: Option<String>,
    /// Constraint-force option.
    pub option: ConstraintOption,
    /// Time step.
    pub dt: f64,
    /// Newton settings.
    pub newton: NewtonSettings,
    /// What a Newton failure does.
    pub step_control: StepControl,
}

/// The method and its typed settings.
#[derive(Debug, Clone, PartialEq)]
pub enum MethodConfig {
    /// The GSSSS family and the two-field midpoint scheme.
    Gssss(GssssSettings),
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
    /// Measure the Newton time split ([`super::newton::NewtonTimings`],
    /// reported in [`crate::run::RunSummary::timings`]); set by `flexmb bench`.
    pub timing: bool,
}

impl IntegratorSpec {
    /// Fields of `over` that are set replace those of `self`.
    pub fn overridden_by(&self, over: &IntegratorSpec) -> IntegratorSpec {
        macro_rules! pick {
            ($($f:ident),*) => { IntegratorSpec { $($f: over.$f.clone().or_else(|| self.$f.clone()),)* } };
        }
        let mut out = pick!(
            method,
            step_control,
            scheme,
            family,
            rho1,
            rho2,
            rho3,
            option,
            form,
            dt,
            t_end,
            tol,
            max_iter,
            jacobian,
            convergence,
            refactor,
            sparse
        );
        // A family given on top of a preset replaces the preset, and a preset
        // given on top of a family replaces the family and its roots.
        if over.family.is_some() && over.scheme.is_none() {
            out.scheme = None;
        }
        if over.scheme.is_some() && over.family.is_none() && over.scheme.as_deref() != Some("gssss")
        {
            out.family = None;
            (out.rho1, out.rho2, out.rho3) = (None, None, None);
        }
        out
    }

    /// Resolves defaults and checks values. Errors name the field.
    pub fn resolve(&self) -> Result<IntegratorConfig, SettingsError> {
        match self.method.as_deref().unwrap_or("gssss") {
            "gssss" => self
                .resolve_gssss()
                .map_err(|(field, message)| SettingsError { field, message }),
            other => Err(bad(
                "method",
                format!("`method` must be \"gssss\", got \"{other}\""),
            )),
        }
    }

    fn resolve_gssss(&self) -> Result<IntegratorConfig, (&'static str, String)> {
        let pos = |name: &'static str, v: Option<f64>| -> Result<f64, (&'static str, String)> {
            match v {
                None => Err((name, format!("`{name}` is required"))),
                Some(x) if x > 0.0 && x.is_finite() => Ok(x),
                Some(x) => Err((name, format!("`{name}` must be positive, got {x}"))),
            }
        };
        let dt = pos("dt", self.dt)?;
        let t_end = pos("t_end", self.t_end)?;
        let tol = pos("tol", Some(self.tol.unwrap_or(1e-8)))?;
        let max_iter = self.max_iter.unwrap_or(100);
        if max_iter == 0 {
            return Err(("max_iter", "`max_iter` must be at least 1".into()));
        }
        let option_choice = self.option.clone().unwrap_or(OptionChoice::Number(2));
        let option = match &option_choice {
            OptionChoice::Number(k) => ConstraintOption::from_name(&k.to_string()),
            OptionChoice::Name(name) => ConstraintOption::from_name(name),
        }
        .ok_or((
            "option",
            format!("`option` must be 1, 2, 3, 4 or \"dg\", got {option_choice}"),
        ))?;
        let jacobian = match self.jacobian.as_deref().unwrap_or("consistent") {
            "consistent" => JacobianKind::Consistent,
            "seed" => JacobianKind::Seed,
            other => {
                return Err((
                    "jacobian",
                    format!("`jacobian` must be \"consistent\" or \"seed\", got \"{other}\""),
                ))
            }
        };
        let conv = self.convergence.as_deref().unwrap_or("increment");
        let stop = NewtonStop::from_name(conv).ok_or((
            "convergence",
            format!("`convergence` must be \"increment\" or \"rate\", got \"{conv}\""),
        ))?;
        let refac = self.refactor.as_deref().unwrap_or("iteration");
        let refactor = Refactor::from_name(refac).ok_or((
            "refactor",
            format!("`refactor` must be \"iteration\" or \"step\", got \"{refac}\""),
        ))?;

        if let (Some(scheme), Some(_)) = (&self.scheme, &self.family) {
            if scheme != "gssss" {
                return Err((
                    "family",
                    format!("give either a preset `scheme` (\"{scheme}\") or `family` with rho1..3, not both"),
                ));
            }
        }
        let explicit = self.family.is_some() || self.scheme.as_deref() == Some("gssss");
        let (family, rho, preset_name) = if explicit {
            let family = match self.family.as_deref() {
                Some("u0") | Some("U0") => Family::U0,
                Some("v0") | Some("V0") => Family::V0,
                Some(other) => {
                    return Err((
                        "family",
                        format!("`family` must be \"u0\" or \"v0\", got \"{other}\""),
                    ))
                }
                None => {
                    return Err((
                        "family",
                        "scheme \"gssss\" needs `family` = \"u0\" or \"v0\"".into(),
                    ))
                }
            };
            let need = |name: &'static str, v: Option<f64>| {
                v.ok_or((name, format!("`{name}` is required with `family`")))
            };
            (
                family,
                [
                    need("rho1", self.rho1)?,
                    need("rho2", self.rho2)?,
                    need("rho3", self.rho3)?,
                ],
                None,
            )
        } else {
            let name = self.scheme.clone().unwrap_or_else(|| "midpoint".into());
            let (f, r) = preset(&name).map_err(|e| ("scheme", e))?;
            (f, r, Some(name))
        };
        let coefficients = Gssss::new(family, rho).map_err(|e| ("scheme", e))?;
        let method = match self.form.as_deref().unwrap_or("a") {
            "a" => Variant::Single {
                coefficients,
                form: SolveForm::A,
            },
            "v" => Variant::Single {
                coefficients,
                form: SolveForm::V,
            },
            "d" => Variant::Single {
                coefficients,
                form: SolveForm::D,
            },
            "two-field" => {
                if family != Family::V0 || rho != [1.0, 1.0, 0.0] {
                    return Err((
                        "form",
                        format!(
                            "the two-field v-form is the midpoint scheme V0(1,1,0); it cannot run {}",
                            coefficients.label()
                        ),
                    ));
                }
                Variant::TwoField
            }
            other => {
                return Err((
                    "form",
                    format!("`form` must be \"a\", \"v\", \"d\" or \"two-field\", got \"{other}\""),
                ))
            }
        };
        if option == ConstraintOption::Gonzalez {
            // Gonzalez's discrete derivative replaces B(u~) with u~ the midpoint.
            let sch = method.scheme(dt);
            if !sch.level_weights().is_midpoint() {
                return Err((
                    "option",
                    format!(
                        "option \"dg\" (Gonzalez's discrete derivative) needs a midpoint scheme, \
                         u~ = (u_n + u_{{n+1}})/2 (V0(1,1,0) \"midpoint\", U0(1,1,1) \
                         \"midpoint-endpoint\" or the two-field form); {} has W1 = {}",
                        coefficients.label(),
                        sch.w1
                    ),
                ));
            }
        }
        let step_control = match self.step_control.as_deref().unwrap_or("fixed") {
            "fixed" => StepControl::Fixed,
            "cutback" => StepControl::Cutback,
            other => {
                return Err((
                    "step_control",
                    format!(
                    "`step_control` must be \"fixed\" or \"cutback\" for GSSSS, got \"{other}\""
                ),
                ))
            }
        };
        Ok(IntegratorConfig {
            method: MethodConfig::Gssss(GssssSettings {
                variant: method,
                preset: preset_name,
                option,
                dt,
                newton: NewtonSettings {
                    tol,
                    max_iter,
                    jacobian,
                    stop,
                    refactor,
                },
                step_control,
            }),
            dt,
            t_end,
            force_sparse: self.sparse.unwrap_or(false),
            timing: false,
        })
    }
}

impl GssssSettings {
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
            Variant::TwoField => format!("two-field v-form midpoint, option {opt}{jac}{cut}"),
        }
    }

    /// Parameters for the output metadata.
    pub fn parameters(&self) -> Vec<(String, AttrValue)> {
        let mut p = vec![("method".into(), AttrValue::Str("gssss".into()))];
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
        if let Some(name) = &self.preset {
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
        p.push(("tol".into(), AttrValue::F64(self.newton.tol)));
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
            "step_control".into(),
            AttrValue::Str(self.step_control.name().into()),
        ));
        p
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
        }
    }

    /// Parameters for the output metadata.
    pub fn parameters(&self) -> Vec<(String, AttrValue)> {
        let mut p = match &self.method {
            MethodConfig::Gssss(g) => g.parameters(),
        };
        p.push(("t_end".into(), AttrValue::F64(self.t_end)));
        p
    }

    /// The number of steps to t_end of a fixed-step method (the last one may
    /// be shorter); `None` for adaptive methods.
    pub fn nominal_steps(&self) -> Option<u64> {
        match &self.method {
            MethodConfig::Gssss(g) => Some(crate::run::step_count(self.t_end, g.dt)),
        }
    }

    /// The GSSSS settings, when the method is GSSSS.
    pub fn gssss(&self) -> Option<&GssssSettings> {
        match &self.method {
            MethodConfig::Gssss(g) => Some(g),
        }
    }

    /// The method for the model in `sys` (the one factory of every method).
    pub fn build(&self, sys: &System<'_>) -> Result<Box<dyn Integrator>, StepError> {
        let started = std::time::Instant::now();
        match &self.method {
            MethodConfig::Gssss(g) => {
                let mut integrator = OneStepIntegrator::new(
                    sys,
                    self.label(),
                    self.parameters(),
                    g,
                    self.force_sparse,
                )?;
                if self.timing {
                    integrator.measure_timings(started.elapsed());
                }
                Ok(Box::new(integrator))
            }
        }
    }
}
