//! The settings of the GSSSS family (Hoitink) and of TCG, its preset
//! (Lens and Cardona eq. 14): what [`super::OneStepIntegrator`] is built
//! from, their keys, defaults and checks, read from the `[integrator]`
//! table.

use super::{
    preset, stepper, ConstraintOption, Family, Gssss, JacobianKind, OneStepIntegrator, SolveForm,
    Variant,
};
use crate::assembly::Mechanics;
use crate::integrate::newton::settings::{check_scaled, refactor_and_line_search};
use crate::integrate::newton::{
    LineSearch, NewtonSettings, NewtonStop, Refactor, ScaledTolerances, DEFAULT_RTOL,
};
use crate::integrate::settings::{
    bad, check_step_count, choice, positive, step_size, Build, FromTable, IntegratorSpec, Method,
    OptionChoice, SettingsError, Steps, NEWTON,
};
use crate::integrate::{AttrValue, Integrator, StatSpec, StepError};

/// The method name of Lens and Cardona's energy-preserving scheme (a GSSSS preset).
const TCG: &str = "tcg";

/// GSSSS's further Newton keys: the absolute tests and the seed's Jacobian.
const GSSSS_NEWTON: &[&str] = &["tol", "jacobian", "convergence", "step_control", "dt"];

/// The GSSSS scheme: a preset or a family with its roots, the
/// constraint-force option and the Newton unknown.
const GSSSS_SCHEME: &[&str] = &["scheme", "family", "rho1", "rho2", "rho3", "option", "form"];

/// A GSSSS family, its roots and the preset's name (when a preset).
type FamilyChoice = (Family, [f64; 3], Option<String>);

/// How a fixed-step method treats a step whose Newton iteration fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepControl {
    /// The run stops (Hoitink's failure patterns).
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

/// Settings of the GSSSS family (Hoitink).
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

impl Default for GssssSettings {
    /// The midpoint scheme V0(1,1,0), constraint option 2, a-form, dt 0.01,
    /// the scaled Newton test (rtol 1e-6, docs/theory/gssss.md §12a) with at
    /// most 100 iterations, fixed steps.
    fn default() -> Self {
        GssssSettings {
            variant: Variant::Single {
                coefficients: Gssss::midpoint(),
                form: SolveForm::A,
            },
            preset: Some("midpoint".into()),
            option: ConstraintOption::Two,
            dt: 0.01,
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
        }
    }
}

impl GssssSettings {
    /// Whether this is `method = "tcg"` (the two-field midpoint scheme with option dg).
    pub fn is_tcg(&self) -> bool {
        self.preset.as_deref() == Some(TCG)
    }

    /// Seed 002's energy-preserving time-continuous Galerkin scheme (eq. 14
    /// with the discrete derivatives of eqs. 18–21) is the two-field midpoint
    /// scheme with Gonzalez's discrete derivative (`form = "two-field"`,
    /// `option = "dg"`, docs/theory/galerkin.md §1): a preset of the GSSSS
    /// stepper (the table holds none of the scheme keys: they are refused).
    pub fn tcg() -> Self {
        GssssSettings {
            variant: Variant::TwoField,
            preset: Some(TCG.into()),
            option: ConstraintOption::Gonzalez,
            ..GssssSettings::default()
        }
    }

    fn gssss_from_table(table: &IntegratorSpec) -> Result<Self, (&'static str, String)> {
        let pos = |name: &'static str, v: Option<f64>| -> Result<f64, (&'static str, String)> {
            match v {
                None => Err((name, format!("`{name}` is required"))),
                Some(x) if x > 0.0 && x.is_finite() => Ok(x),
                Some(x) => Err((name, format!("`{name}` must be positive, got {x}"))),
            }
        };
        let dt = pos("dt", table.dt)?;
        step_size("dt", dt).map_err(|e| (e.field, e.message))?;
        let t_end = pos("t_end", table.t_end)?;
        check_step_count(dt, t_end).map_err(|e| (e.field, e.message))?;
        // tol, max_iter, rtol, atol and the option's scheme are checked once,
        // by `Method::check` (called by `resolve`).
        let tol = table.tol.unwrap_or(1e-8);
        let max_iter = table.max_iter.unwrap_or(100);
        let option_choice = table.option.clone().unwrap_or(OptionChoice::Number(2));
        let option = match &option_choice {
            OptionChoice::Number(k) => ConstraintOption::from_name(&k.to_string()),
            OptionChoice::Name(name) => ConstraintOption::from_name(name),
        }
        .ok_or((
            "option",
            format!("`option` must be 1, 2, 3, 4 or \"dg\", got {option_choice}"),
        ))?;
        let to_pair = |e: SettingsError| (e.field, e.message);
        let jacobian = choice(
            "jacobian",
            table.jacobian.as_deref(),
            JacobianKind::Consistent,
        )
        .map_err(to_pair)?;
        let stop = choice(
            "convergence",
            table.convergence.as_deref(),
            NewtonStop::Scaled,
        )
        .map_err(to_pair)?;
        let conv = stop.name();
        let rtol = table.rtol.unwrap_or(DEFAULT_RTOL);
        let atol = table.atol;
        let (refactor, line_search) =
            refactor_and_line_search(table).map_err(|e| (e.field, e.message))?;
        let search = line_search.name();
        if line_search != LineSearch::None && stop != NewtonStop::Scaled {
            return Err((
                "line_search",
                format!(
                    "`line_search` = \"{search}\" works on the scaled residual: it needs \
                     `convergence` = \"scaled\", not \"{conv}\""
                ),
            ));
        }

        let (family, rho, preset_name) = family_of(table)?;
        let coefficients = Gssss::new(family, rho).map_err(|e| ("scheme", e))?;
        let method = match table.form.as_deref().unwrap_or("a") {
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
        let step_control = match table.step_control.as_deref().unwrap_or("fixed") {
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
        Ok(GssssSettings {
            variant: method,
            preset: preset_name,
            option,
            dt,
            newton: NewtonSettings {
                tol,
                scaled: ScaledTolerances { rtol, atol },
                max_iter,
                jacobian,
                stop,
                refactor,
                line_search,
            },
            step_control,
        })
    }
}

/// The GSSSS family and roots: a preset `scheme` (default `"midpoint"`),
/// or `family` with `rho1..3`; with the preset's name.
fn family_of(table: &IntegratorSpec) -> Result<FamilyChoice, (&'static str, String)> {
    if let (Some(scheme), Some(_)) = (&table.scheme, &table.family) {
        if scheme != "gssss" {
            return Err((
                    "family",
                    format!("give either a preset `scheme` (\"{scheme}\") or `family` with rho1..3, not both"),
                ));
        }
    }
    let explicit = table.family.is_some() || table.scheme.as_deref() == Some("gssss");
    if !explicit {
        // The roots belong to `family`: without it they would be ignored.
        for (name, v) in [
            ("rho1", table.rho1),
            ("rho2", table.rho2),
            ("rho3", table.rho3),
        ] {
            if v.is_some() {
                return Err((
                        name,
                        format!("`{name}` is given without `family` (u0 or v0); the preset `scheme` fixes the roots"),
                    ));
            }
        }
    }
    let (family, rho, preset_name) = if explicit {
        let family = match table.family.as_deref() {
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
                need("rho1", table.rho1)?,
                need("rho2", table.rho2)?,
                need("rho3", table.rho3)?,
            ],
            None,
        )
    } else {
        let name = table.scheme.clone().unwrap_or_else(|| "midpoint".into());
        let (f, r) = preset(&name).map_err(|e| ("scheme", e))?;
        (f, r, Some(name))
    };
    Ok((family, rho, preset_name))
}

fn form_name(form: SolveForm) -> &'static str {
    match form {
        SolveForm::A => "a",
        SolveForm::V => "v",
        SolveForm::D => "d",
    }
}

/// Option "dg" (Gonzalez's discrete derivative replaces B(u~)) needs u~ at
/// the midpoint of the step.
fn check_option(option: ConstraintOption, variant: Variant, dt: f64) -> Result<(), SettingsError> {
    if option != ConstraintOption::Gonzalez {
        return Ok(());
    }
    if variant.midpoint_level() {
        return Ok(());
    }
    let sch = variant.scheme(dt);
    let label = match variant {
        Variant::Single { coefficients, .. } => coefficients.label(),
        Variant::TwoField => "the two-field form".into(),
    };
    Err(bad(
        "option",
        format!(
            "option \"dg\" (Gonzalez's discrete derivative) needs a midpoint scheme, \
             u~ = (u_n + u_{{n+1}})/2 (V0(1,1,0) \"midpoint\", U0(1,1,1) \
             \"midpoint-endpoint\" or the two-field form); {label} has W1 = {}",
            sch.w1
        ),
    ))
}

impl Method for GssssSettings {
    fn name(&self) -> &'static str {
        if self.is_tcg() {
            TCG
        } else {
            "gssss"
        }
    }

    /// A human-readable name.
    fn label(&self) -> String {
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
    fn parameters(&self) -> Vec<(String, AttrValue)> {
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
        p.push((
            "jacobian".into(),
            AttrValue::Str(self.newton.jacobian.name().into()),
        ));
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

    fn statistics(&self) -> &'static [StatSpec] {
        stepper::STATS
    }

    fn check(&self) -> Result<(), SettingsError> {
        step_size("dt", self.dt)?;
        positive("tol", self.newton.tol)?;
        check_scaled(
            self.newton.scaled.rtol,
            self.newton.scaled.atol,
            self.newton.max_iter,
        )?;
        check_option(self.option, self.variant, self.dt)
    }

    fn steps(&self) -> Steps {
        Steps::Fixed(self.dt)
    }

    fn exports_matrix(&self) -> bool {
        true
    }

    fn build(
        &self,
        sys: &Mechanics<'_>,
        build: Build<'_>,
    ) -> Result<Box<dyn Integrator>, StepError> {
        let mut integrator = OneStepIntegrator::new(sys, build.identity, self, build.solver)?;
        if let Some(started) = build.timing {
            integrator.measure_timings(started.elapsed());
        }
        if let Some(export) = build.export_matrix {
            integrator.export_matrix(sys, export.clone());
        }
        Ok(Box::new(integrator))
    }
}

impl FromTable for GssssSettings {
    const NAMES: &'static [&'static str] = &["gssss", TCG];

    fn keys(name: &str, _table: &IntegratorSpec) -> Vec<&'static [&'static str]> {
        if name == TCG {
            vec![NEWTON, GSSSS_NEWTON]
        } else {
            vec![NEWTON, GSSSS_NEWTON, GSSSS_SCHEME]
        }
    }

    /// GSSSS, or TCG: the table's GSSSS with the two-field form and option
    /// dg (the scheme keys are refused for TCG; the Newton keys apply).
    fn from_table(name: &str, table: &IntegratorSpec) -> Result<Self, SettingsError> {
        let to_error = |(field, message)| SettingsError { field, message };
        if name != TCG {
            return Self::gssss_from_table(table).map_err(to_error);
        }
        let tcg = IntegratorSpec {
            form: Some("two-field".into()),
            option: Some(OptionChoice::Name("dg".into())),
            ..table.clone()
        };
        let mut settings = Self::gssss_from_table(&tcg).map_err(to_error)?;
        settings.preset = Some(TCG.into());
        Ok(settings)
    }
}
