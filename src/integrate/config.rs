//! The `[integrator]` table: what the user writes ([`IntegratorSpec`], every
//! field optional so that the CLI can override it) and what it resolves to
//! ([`IntegratorConfig`]).

use serde::Deserialize;

use super::gssss::{preset, Family, Gssss, SolveForm};
use super::newton::{NewtonSettings, NewtonStop, OneStepIntegrator, Refactor};
use super::scheme::{ConstraintOption, JacobianKind};
use super::two_field::two_field_scheme;
use super::{StepError, System};
use crate::output::AttrValue;

/// The `[integrator]` table as written (all fields optional).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntegratorSpec {
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

/// The integration method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// A GSSSS member in a single-field form.
    Gssss {
        /// Coefficients.
        coefficients: Gssss,
        /// Newton unknown.
        form: SolveForm,
    },
    /// The two-field v-form midpoint scheme.
    TwoField,
}

/// A fully resolved integrator configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct IntegratorConfig {
    /// Method.
    pub method: Method,
    /// Preset name when one was used.
    pub preset: Option<String>,
    /// Constraint-force option.
    pub option: ConstraintOption,
    /// Time step.
    pub dt: f64,
    /// End time.
    pub t_end: f64,
    /// Newton settings.
    pub newton: NewtonSettings,
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
    pub fn resolve(&self) -> Result<IntegratorConfig, (&'static str, String)> {
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
            "a" => Method::Gssss {
                coefficients,
                form: SolveForm::A,
            },
            "v" => Method::Gssss {
                coefficients,
                form: SolveForm::V,
            },
            "d" => Method::Gssss {
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
                Method::TwoField
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
            let sch = match method {
                Method::Gssss { coefficients, form } => coefficients.scheme(form, dt),
                Method::TwoField => two_field_scheme(dt),
            };
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
        Ok(IntegratorConfig {
            method,
            preset: preset_name,
            option,
            dt,
            t_end,
            newton: NewtonSettings {
                tol,
                max_iter,
                jacobian,
                stop,
                refactor,
            },
            force_sparse: self.sparse.unwrap_or(false),
            timing: false,
        })
    }
}

impl IntegratorConfig {
    /// A human-readable name.
    pub fn label(&self) -> String {
        let opt = self.option.name();
        let jac = match self.newton.jacobian {
            JacobianKind::Consistent => "",
            JacobianKind::Seed => ", seed Jacobian",
        };
        match self.method {
            Method::Gssss { coefficients, form } => {
                let f = match form {
                    SolveForm::A => "a",
                    SolveForm::V => "v",
                    SolveForm::D => "d",
                };
                let name = self
                    .preset
                    .as_ref()
                    .map(|p| format!(" [{p}]"))
                    .unwrap_or_default();
                format!(
                    "GSSSS {}{name}, option {opt}, {f}-form{jac}",
                    coefficients.label()
                )
            }
            Method::TwoField => format!("two-field v-form midpoint, option {opt}{jac}"),
        }
    }

    /// Parameters for the output metadata.
    pub fn parameters(&self) -> Vec<(String, AttrValue)> {
        let mut p = Vec::new();
        match self.method {
            Method::Gssss { coefficients, form } => {
                let fam = match coefficients.family {
                    Family::U0 => "u0",
                    Family::V0 => "v0",
                };
                p.push(("family".into(), AttrValue::Str(fam.into())));
                for (k, r) in ["rho1", "rho2", "rho3"].iter().zip(coefficients.rho) {
                    p.push((k.to_string(), AttrValue::F64(r)));
                }
                let f = match form {
                    SolveForm::A => "a",
                    SolveForm::V => "v",
                    SolveForm::D => "d",
                };
                p.push(("form".into(), AttrValue::Str(f.into())));
            }
            Method::TwoField => p.push(("form".into(), AttrValue::Str("two-field".into()))),
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
        p.push(("t_end".into(), AttrValue::F64(self.t_end)));
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
        p
    }

    /// The integrator for the model in `sys`.
    pub fn build(&self, sys: &System<'_>) -> Result<OneStepIntegrator, StepError> {
        let started = std::time::Instant::now();
        let scheme_for: Box<dyn Fn(f64) -> super::LinearScheme + Send + Sync> = match self.method {
            Method::Gssss { coefficients, form } => {
                Box::new(move |dt| coefficients.scheme(form, dt))
            }
            Method::TwoField => Box::new(two_field_scheme),
        };
        let mut integrator = OneStepIntegrator::new(
            sys,
            self.label(),
            self.parameters(),
            scheme_for,
            self.option,
            self.newton,
            self.force_sparse,
        )?;
        if self.timing {
            integrator.measure_timings(started.elapsed());
        }
        Ok(integrator)
    }
}
