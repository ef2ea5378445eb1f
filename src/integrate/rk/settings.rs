//! The settings of the explicit Runge–Kutta methods on the index-1 form
//! and of the embedded projection method: what [`super::RungeKutta`] is
//! built from, their keys, defaults and checks, read from the
//! `[integrator]` table.

use super::{RungeKutta, Tableau};
use crate::assembly::Mechanics;
use crate::integrate::projector::{Metric, Passes};
use crate::integrate::settings::{
    at_least_one, bad, check_step_count, choice, largest_step, named, positive, required_t_end,
    round_off_rtol, step_size, Build, FromTable, IntegratorSpec, Method, SettingsError, Steps,
    DEFAULT_MAX_STEPS,
};
use crate::integrate::{AttrValue, Integrator, StatSpec, StepError};

named!(Metric: Mass, Identity);
named!(Passes: Two, Converged);

/// The explicit Runge–Kutta methods, whatever their steps.
const RK: &[&str] = &["step_control"];

/// The index-1 form's drift control (Baumgarte or PStab). The parameters of
/// either stabilization are the method's whichever is chosen, so that a
/// sweep can vary `stabilization` alone.
const INDEX1: &[&str] = &[
    "stabilization",
    "baumgarte",
    "datol",
    "projection",
    "pstab_passes",
];

/// The adaptive step control of an embedded tableau.
const ADAPTIVE: &[&str] = &["rtol", "atol", "max_step", "max_steps"];

/// Fixed steps of `dt`.
const FIXED: &[&str] = &["dt"];

/// How a Runge–Kutta method steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RkStep {
    /// Steps of `dt` (the last one may be shorter).
    Fixed {
        /// Step size.
        dt: f64,
    },
    /// Steps chosen by the embedded error estimate.
    Adaptive {
        /// Relative tolerance.
        rtol: f64,
        /// Absolute tolerance.
        atol: f64,
        /// Largest step.
        max_step: f64,
        /// Most attempted steps per run (HNW's NMAX).
        max_steps: u64,
    },
}

/// Drift control of the index-1 form (Chin).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stabilization {
    /// None: the constraints drift.
    None,
    /// Baumgarte's B(g1, g2): `Phi'' + g1 Phi' + g2 Phi = 0` (eq. 2.14b).
    Baumgarte([f64; 2]),
    /// Post-stabilization PStab (S-both2, eq. 3.68).
    PStab {
        /// Steps whose drift is at most `datol` are not stabilized (0: all).
        datol: f64,
        /// The projections' metric.
        metric: Metric,
        /// The S-both passes per stabilization.
        passes: Passes,
    },
}

/// The ODE a Runge–Kutta tableau integrates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formulation {
    /// The index-1 form in (u, v) (Chin), with Baumgarte or PStab.
    Index1,
    /// The embedded projection method in the modified state (Borri and Trainelli).
    Epm,
}

/// Settings of an explicit Runge–Kutta method (seeds 001 and 004).
#[derive(Debug, Clone, PartialEq)]
pub struct RkSettings {
    /// The ODE integrated.
    pub formulation: Formulation,
    /// The tableau.
    pub tableau: Tableau,
    /// Fixed or adaptive steps.
    pub step: RkStep,
    /// Drift control.
    pub stabilization: Stabilization,
}

impl RkSettings {
    /// `tableau` on the index-1 form stepping by `step`, post-stabilized by
    /// PStab in the mass metric (two passes, every step): the builders'
    /// default (a model file's is no stabilization).
    pub fn index1(tableau: Tableau, step: RkStep) -> Self {
        RkSettings {
            formulation: Formulation::Index1,
            tableau,
            step,
            stabilization: Stabilization::PStab {
                datol: 0.0,
                metric: Metric::Mass,
                passes: Passes::Two,
            },
        }
    }

    /// The embedded projection method with the classical tableau and fixed
    /// steps of 0.01.
    pub fn epm() -> Self {
        RkSettings {
            formulation: Formulation::Epm,
            tableau: super::RK4,
            step: RkStep::Fixed { dt: 0.01 },
            stabilization: Stabilization::None,
        }
    }

    /// The Runge–Kutta settings; GSSSS keys in the table are that method's
    /// and not used here.
    fn resolve(
        table: &IntegratorSpec,
        tableau: Tableau,
        formulation: Formulation,
    ) -> Result<Self, SettingsError> {
        let t_end = required_t_end(table)?;
        let control = table
            .step_control
            .as_deref()
            .unwrap_or(if tableau.is_embedded() {
                "adaptive"
            } else {
                "fixed"
            });
        let step = match control {
            "adaptive" => {
                if !tableau.is_embedded() {
                    return Err(bad(
                        "step_control",
                        format!(
                            "{} has no embedded error estimate: it runs with fixed steps (`step_control = \"fixed\"` and `dt`)",
                            tableau.name
                        ),
                    ));
                }
                // The values are checked once, by `Method::check`.
                let rtol = table.rtol.unwrap_or(1e-6);
                RkStep::Adaptive {
                    rtol,
                    atol: table.atol.unwrap_or(rtol / 10.0),
                    max_step: table.max_step.unwrap_or(t_end),
                    max_steps: table.max_steps.unwrap_or(DEFAULT_MAX_STEPS),
                }
            }
            "fixed" => RkStep::Fixed {
                dt: step_size(
                    "dt",
                    table
                        .dt
                        .ok_or(bad("dt", "`dt` is required with fixed steps"))?,
                )?,
            },
            other => {
                return Err(bad(
                    "step_control",
                    format!(
                        "`step_control` must be \"adaptive\" or \"fixed\" for {}, got \"{other}\"",
                        tableau.name
                    ),
                ))
            }
        };
        let stabilization = stabilization_of(table)?;
        // `baumgarte` with another explicit stabilization, and `datol` without
        // PStab, are kept for that stabilization and unused here, like the
        // keys of another method (a sweep can vary `stabilization` alone).
        if let RkStep::Fixed { dt } = step {
            check_step_count(dt, t_end)?;
        }
        Ok(RkSettings {
            formulation,
            tableau,
            step,
            stabilization,
        })
    }
}

/// The index-1 form's drift control (`stabilization`, `baumgarte`,
/// `datol`, `projection`, `pstab_passes`).
fn stabilization_of(table: &IntegratorSpec) -> Result<Stabilization, SettingsError> {
    let metric = choice("projection", table.projection.as_deref(), Metric::Mass)?;
    let name = table
        .stabilization
        .as_deref()
        .unwrap_or(if table.baumgarte.is_some() {
            "baumgarte"
        } else {
            "none"
        });
    let stabilization = match name {
        "none" => Stabilization::None,
        "baumgarte" => {
            let g = table.baumgarte.ok_or(bad(
                "baumgarte",
                "`stabilization = \"baumgarte\"` needs `baumgarte = [g1, g2]`",
            ))?;
            if g.iter().any(|x| !x.is_finite() || *x < 0.0) {
                return Err(bad(
                    "baumgarte",
                    format!(
                        "Baumgarte's parameters must be finite and non-negative, got {}",
                        crate::fmt::list(&g)
                    ),
                ));
            }
            Stabilization::Baumgarte(g)
        }
        "pstab" => {
            let datol = table.datol.unwrap_or(0.0);
            if !(datol >= 0.0 && datol.is_finite()) {
                return Err(bad("datol", format!("`datol` must be >= 0, got {datol}")));
            }
            let passes = choice("pstab_passes", table.pstab_passes.as_deref(), Passes::Two)?;
            Stabilization::PStab {
                datol,
                metric,
                passes,
            }
        }
        other => {
            return Err(bad(
                "stabilization",
                format!(
                    "`stabilization` must be \"none\", \"baumgarte\" or \"pstab\", got \"{other}\""
                ),
            ))
        }
    };
    Ok(stabilization)
}

impl Method for RkSettings {
    fn name(&self) -> &'static str {
        match self.formulation {
            Formulation::Index1 => self.tableau.name,
            Formulation::Epm => "epm",
        }
    }

    /// A human-readable name, e.g. `dopri5 (rtol 1e-5, atol 1e-6), PStab`.
    fn label(&self) -> String {
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
    fn parameters(&self) -> Vec<(String, AttrValue)> {
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

    fn statistics(&self) -> &'static [StatSpec] {
        super::STATS
    }

    fn check(&self) -> Result<(), SettingsError> {
        match self.step {
            RkStep::Fixed { dt } => {
                step_size("dt", dt)?;
            }
            RkStep::Adaptive {
                rtol,
                atol,
                max_step,
                max_steps,
            } => {
                at_least_one("max_steps", max_steps)?;
                round_off_rtol(rtol)?;
                positive("atol", atol)?;
                largest_step("max_step", max_step)?;
            }
        }
        match self.stabilization {
            Stabilization::Baumgarte(g) if g.iter().any(|x| !x.is_finite() || *x < 0.0) => {
                Err(bad(
                    "baumgarte",
                    format!(
                        "Baumgarte's parameters must be finite and non-negative, got [{}, {}]",
                        g[0], g[1]
                    ),
                ))
            }
            Stabilization::PStab { datol, .. } if !(datol >= 0.0 && datol.is_finite()) => {
                Err(bad("datol", format!("`datol` must be >= 0, got {datol}")))
            }
            _ => Ok(()),
        }
    }

    fn steps(&self) -> Steps {
        match self.step {
            RkStep::Fixed { dt } => Steps::Fixed(dt),
            RkStep::Adaptive {
                max_step,
                max_steps,
                ..
            } => Steps::Adaptive {
                max_step,
                max_steps,
            },
        }
    }

    fn build(
        &self,
        sys: &Mechanics<'_>,
        build: Build<'_>,
    ) -> Result<Box<dyn Integrator>, StepError> {
        Ok(Box::new(RungeKutta::new(
            sys,
            build.identity,
            self,
            build.solver,
        )?))
    }
}

impl FromTable for RkSettings {
    const NAMES: &'static [&'static str] = &["dopri5", "rk4", "heun", "epm"];

    fn keys(name: &str, table: &IntegratorSpec) -> Vec<&'static [&'static str]> {
        let embedded = if name == "epm" {
            table.tableau.as_deref() == Some("dopri5")
        } else {
            name == "dopri5"
        };
        let mut keys = if name == "epm" {
            vec![RK, &["tableau"]]
        } else {
            vec![RK, INDEX1]
        };
        match table.step_control.as_deref() {
            Some("adaptive") => keys.push(ADAPTIVE),
            Some("fixed") => keys.push(FIXED),
            // Neither name: its own check reports it.
            Some(_) => keys.extend([ADAPTIVE, FIXED]),
            None if embedded => keys.push(ADAPTIVE),
            None => keys.push(FIXED),
        }
        keys
    }

    fn from_table(name: &str, table: &IntegratorSpec) -> Result<Self, SettingsError> {
        if name == "epm" {
            let name = table.tableau.as_deref().unwrap_or("rk4");
            let tableau = Tableau::by_name(name).ok_or(bad(
                "tableau",
                format!("`tableau` must be \"rk4\", \"dopri5\" or \"heun\", got \"{name}\""),
            ))?;
            return Self::resolve(table, tableau, Formulation::Epm);
        }
        let tableau =
            Tableau::by_name(name).ok_or(bad("method", format!("no tableau \"{name}\"")))?;
        Self::resolve(table, tableau, Formulation::Index1)
    }

    fn refusal(_name: &str, key: &str) -> Option<String> {
        if key == "dt" {
            Some(
                " (its steps are adaptive: the error control chooses them, `max_step` bounds them; \
                 `step_control = \"fixed\"` steps by `dt`)"
                    .to_string(),
            )
        } else if ADAPTIVE.contains(&key) {
            Some(
                " (its steps are fixed steps of `dt`; the tolerances and step limits belong to \
                 `step_control = \"adaptive\"` of an embedded tableau)"
                    .to_string(),
            )
        } else {
            None
        }
    }
}
