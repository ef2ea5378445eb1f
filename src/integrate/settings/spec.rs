//! The `[integrator]` table as written and its resolution into the typed
//! settings of one method.

use serde::Deserialize;

use crate::integrate::bdf::{BdfSettings, ErrorTest, NewtonIteration};
use crate::integrate::galerkin::{Kappa, Scheme, TdgSettings};
use crate::integrate::gssss::{
    preset, ConstraintOption, Family, Gssss, JacobianKind, SolveForm, Variant,
};
use crate::integrate::initial::Initialize;
use crate::integrate::newton::{
    LineSearch, NewtonSettings, NewtonStop, Refactor, ScaledTolerances, DEFAULT_RTOL,
};
use crate::integrate::projector::{Metric, Passes};
use crate::integrate::rk::Tableau;

use super::config::{
    Formulation, GssssSettings, IntegratorConfig, MethodConfig, RkSettings, RkStep, Stabilization,
    StepControl, DEFAULT_MAX_STEPS,
};
use super::{bad, check_step_count, keys, positive, step_size, SettingsError, TCG};

/// The `[integrator]` table as written, every key optional, and the
/// command line's flags of the same names (`--rtol` for `rtol`, with `cli`):
/// one type for both, merged by [`IntegratorSpec::overridden_by`] and
/// checked once by [`IntegratorSpec::resolve`]. A key given to a method that
/// has no use for it is refused there (`keys.rs`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct IntegratorSpec {
    /// Method: gssss (default; Hoitink); an explicit Runge–Kutta method on the
    /// index-1 form (Chin): dopri5 (adaptive), rk4, heun (fixed steps); epm,
    /// the embedded projection method (Borri and Trainelli) with --tableau; bdf, DASSL's
    /// BDF 1-5 on the GGL form (Yen and Petzold) with --newton, --max-order, --rtol, --atol;
    /// or Lens and Cardona's Galerkin schemes: tcg (energy-preserving), tdg (energy-decaying,
    /// --alpha) and alpha-kappa (with velocity constraints, --alpha, --kappa).
    #[cfg_attr(feature = "cli", arg(long))]
    pub method: Option<String>,
    /// GSSSS: fixed (a Newton failure stops the run) or cutback (halve dt and retry,
    /// regrow after successes). Runge–Kutta: adaptive (dopri5's default) or fixed.
    #[cfg_attr(feature = "cli", arg(long))]
    pub step_control: Option<String>,
    /// Runge–Kutta drift control: none, baumgarte (with --baumgarte) or pstab
    /// (post-stabilization, Chin S-both2).
    #[cfg_attr(feature = "cli", arg(long))]
    pub stabilization: Option<String>,
    /// Baumgarte's parameters G1,G2: Phi'' + G1 Phi' + G2 Phi = 0 (Chin B(G1, G2)).
    #[cfg_attr(feature = "cli", arg(long, value_name = "G1,G2", value_parser = parse_pair))]
    pub baumgarte: Option<[f64; 2]>,
    /// Relative tolerance of the adaptive step control (Runge–Kutta), or of the
    /// scaled Newton test (GSSSS, default 1e-6).
    #[cfg_attr(feature = "cli", arg(long))]
    pub rtol: Option<f64>,
    /// Absolute tolerance of the adaptive step control (default rtol/10), or of the
    /// scaled Newton test in coordinate units (default rtol (1 + max |u0|)).
    #[cfg_attr(feature = "cli", arg(long))]
    pub atol: Option<f64>,
    /// PStab: steps whose drift is at most DATOL are not stabilized (default 0: every step).
    #[cfg_attr(feature = "cli", arg(long))]
    pub datol: Option<f64>,
    /// Projection metric of PStab: mass (W = M, eq. 3.68) or identity (W = I, eq. 3.69).
    #[cfg_attr(feature = "cli", arg(long))]
    pub projection: Option<String>,
    /// PStab's S-both passes per stabilization: two (the seed's S-both2,
    /// default) or converged (more with the same factorization while the
    /// drift falls: drift at round-off).
    #[cfg_attr(feature = "cli", arg(long, value_name = "two|converged"))]
    pub pstab_passes: Option<String>,
    /// Largest step of an adaptive method.
    #[cfg_attr(feature = "cli", arg(long))]
    pub max_step: Option<f64>,
    /// Adaptive methods: most attempted steps in a run (default 1e6).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub max_steps: Option<u64>,
    /// Tableau of the embedded projection method (--method epm): rk4 (default), dopri5, heun.
    #[cfg_attr(feature = "cli", arg(long))]
    pub tableau: Option<String>,
    /// Preset: newmark, midpoint-endpoint, midpoint, generalized-alpha(RHO), hht(RHO), wbz(RHO), u0v0-optimal(RHO).
    #[cfg_attr(feature = "cli", arg(long))]
    pub scheme: Option<String>,
    /// GSSSS family u0 or v0 (with --rho1, --rho2, --rho3), instead of a preset.
    #[cfg_attr(feature = "cli", arg(long))]
    pub family: Option<String>,
    /// First principal root at infinity.
    #[cfg_attr(feature = "cli", arg(long))]
    pub rho1: Option<f64>,
    /// Second principal root at infinity.
    #[cfg_attr(feature = "cli", arg(long))]
    pub rho2: Option<f64>,
    /// Spurious root at infinity.
    #[cfg_attr(feature = "cli", arg(long))]
    pub rho3: Option<f64>,
    /// Constraint-force option 1..4 (Hoitink eqs. 3.8-3.11), or dg: Gonzalez's
    /// discrete derivative of the joint rows, exact energy balance (midpoint schemes only).
    #[cfg_attr(feature = "cli", arg(long, value_parser = parse_option))]
    pub option: Option<OptionChoice>,
    /// Newton unknown: a, v, d, or two-field (the two-field v-form midpoint scheme).
    #[cfg_attr(feature = "cli", arg(long))]
    pub form: Option<String>,
    /// Time step.
    #[cfg_attr(feature = "cli", arg(long))]
    pub dt: Option<f64>,
    /// End time.
    #[cfg_attr(feature = "cli", arg(long))]
    pub t_end: Option<f64>,
    /// Newton tolerance of the increment and rate tests (absolute).
    #[cfg_attr(feature = "cli", arg(long))]
    pub tol: Option<f64>,
    /// Newton iteration limit per step.
    #[cfg_attr(feature = "cli", arg(long))]
    pub max_iter: Option<u32>,
    /// Newton matrix: consistent (exact) or seed (multiplier column without the W1 weights).
    #[cfg_attr(feature = "cli", arg(long))]
    pub jacobian: Option<String>,
    /// Newton stop test: scaled (default: weighted RMS correction against rtol |x| + atol
    /// and residual against rtol times the force scale, docs/theory/gssss.md §12),
    /// increment (the last increment below tol, Hoitink eq. 2.14) or rate (also stop
    /// when the error estimated from the contraction rate is below tol).
    #[cfg_attr(feature = "cli", arg(long))]
    pub convergence: Option<String>,
    /// Newton matrix refresh: iteration (Newton; the default of `run` and
    /// `batch`) or step (modified Newton: factor at the first iteration of a
    /// step, again only when convergence slows below rate 1/2; the default of
    /// `bench`).
    #[cfg_attr(feature = "cli", arg(long))]
    pub refactor: Option<String>,
    /// Globalization of the scaled Newton test: none (the default; a growing
    /// correction is divergence, and the step restarts from the other
    /// predictor) or backtracking (halve a correction until the scaled
    /// residual falls; docs/theory/gssss.md §12a).
    #[cfg_attr(feature = "cli", arg(long))]
    pub line_search: Option<String>,
    /// Use the sparse LU even for small systems.
    #[cfg_attr(
        feature = "cli",
        arg(long, num_args = 0, default_missing_value = "true")
    )]
    pub sparse: Option<bool>,
    /// Sparse factorization: auto (LDLT with refinement when the pattern is
    /// structurally symmetric, else LU), lu or ldlt.
    #[cfg_attr(feature = "cli", arg(long))]
    pub factorization: Option<String>,
    /// Initial state violating its constraints: check (refuse it, the default)
    /// or project (move it onto the constraints and report how far).
    #[cfg_attr(feature = "cli", arg(long))]
    pub initialize: Option<String>,
    /// BDF: the nonlinear iteration, full (Newton on GGL, default), cs
    /// (coordinate split) or cm (cs without the derivative of the projection).
    #[cfg_attr(feature = "cli", arg(long))]
    pub newton: Option<String>,
    /// BDF: the largest order, 1 to 5 (default 5).
    #[cfg_attr(feature = "cli", arg(long))]
    pub max_order: Option<u64>,
    /// BDF: the components of the local error test, qv (positions and
    /// velocities, default) or q (positions only, as Yen and Petzold §4.1).
    #[cfg_attr(feature = "cli", arg(long))]
    pub error_test: Option<String>,
    /// TDG and alpha-kappa (Lens and Cardona eqs. 47, 66): dissipation control alpha in [0, 1]
    /// (default 1, eq. 28; rho_inf = (1 - alpha)/(1 + alpha)).
    #[cfg_attr(feature = "cli", arg(long))]
    pub alpha: Option<f64>,
    /// alpha-kappa (--method alpha-kappa, Lens and Cardona eq. 66): kappa K, or auto (eq. 71
    /// at the iterate, clamped to [1 - h/2, 1 + h/2]; the default).
    #[cfg_attr(feature = "cli", arg(long, value_name = "K|auto", value_parser = parse_kappa))]
    pub kappa: Option<KappaChoice>,
}

/// A GSSSS family, its roots and the preset's name (when a preset).
type FamilyChoice = (Family, [f64; 3], Option<String>);

/// kappa as written: a number or `"auto"` (also a number written as a
/// string, as on the command line). Checked by [`IntegratorSpec::resolve`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum KappaChoice {
    /// `kappa = 1`.
    Number(f64),
    /// `kappa = "auto"`.
    Name(String),
}

/// A constraint-force option as written: an integer 1..=4 (Hoitink eqs.
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

/// `--option K`: the name or number as written (checked by
/// [`IntegratorSpec::resolve`]).
#[cfg(feature = "cli")]
fn parse_option(s: &str) -> Result<OptionChoice, String> {
    Ok(OptionChoice::Name(s.to_string()))
}

/// `--kappa K|auto` as written (checked by [`IntegratorSpec::resolve`]).
#[cfg(feature = "cli")]
fn parse_kappa(s: &str) -> Result<KappaChoice, String> {
    Ok(KappaChoice::Name(s.to_string()))
}

/// `--baumgarte G1,G2`: two numbers.
#[cfg(feature = "cli")]
fn parse_pair(s: &str) -> Result<[f64; 2], String> {
    let parts: Vec<&str> = s.split(',').collect();
    match parts[..] {
        [a, b] => {
            let num = |x: &str| {
                x.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("'{x}' is not a number"))
            };
            Ok([num(a)?, num(b)?])
        }
        _ => Err(format!("expected two numbers G1,G2, got '{s}'")),
    }
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

/// Calls `$m!` with the names of every field of [`IntegratorSpec`] (the
/// `[integrator]` keys): the one list the merging, the key check and the
/// clearing of a key below are written from.
macro_rules! with_keys {
    ($m:ident) => {
        $m!(
            method,
            step_control,
            stabilization,
            baumgarte,
            rtol,
            atol,
            datol,
            projection,
            pstab_passes,
            max_step,
            max_steps,
            tableau,
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
            line_search,
            sparse,
            factorization,
            initialize,
            newton,
            max_order,
            error_test,
            alpha,
            kappa
        )
    };
}

impl IntegratorSpec {
    /// The keys that are set, in the order of the fields.
    pub fn given(&self) -> Vec<&'static str> {
        macro_rules! given {
            ($($f:ident),*) => { [$((stringify!($f), self.$f.is_some()),)*] };
        }
        with_keys!(given)
            .into_iter()
            .filter_map(|(k, set)| set.then_some(k))
            .collect()
    }

    /// Unsets the key `key` (a name of [`Self::given`]).
    fn clear(&mut self, key: &str) {
        macro_rules! clear {
            ($($f:ident),*) => { match key { $(stringify!($f) => self.$f = None,)* _ => {} } };
        }
        with_keys!(clear)
    }

    /// The method's name (`gssss` when not given).
    pub fn method_name(&self) -> &str {
        self.method.as_deref().unwrap_or("gssss")
    }

    /// Fields of `over` that are set replace those of `self`. A method
    /// given in `over` other than `self`'s replaces `self`'s with its
    /// settings: the keys of `self` the new method does not take are
    /// dropped (those of `over` stay, and are refused by
    /// [`Self::resolve`]).
    pub fn overridden_by(&self, over: &IntegratorSpec) -> IntegratorSpec {
        macro_rules! pick {
            ($($f:ident),*) => { IntegratorSpec { $($f: over.$f.clone().or_else(|| self.$f.clone()),)* } };
        }
        let mut out = with_keys!(pick);
        // A family given on top of a preset replaces the preset, and a preset
        // given on top of a family replaces the family and its roots.
        if over.family.is_some() && over.scheme.is_none() {
            out.scheme = None;
        }
        if over.scheme.is_some() && over.family.is_none() && over.scheme.as_deref() != Some("gssss")
        {
            out.family = None;
            (out.rho1, out.rho2, out.rho3) = (over.rho1, over.rho2, over.rho3);
        }
        if over.method.is_some() && over.method_name() != self.method_name() {
            let mine: Vec<&str> = self
                .given()
                .into_iter()
                .filter(|k| !over.given().contains(k))
                .collect();
            for key in out.foreign(mine) {
                out.clear(key);
            }
        }
        out
    }

    /// The keys of `keys` that this table's method does not take.
    fn foreign<'a>(&self, keys: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
        keys::foreign_to(
            self.method_name(),
            self.step_control.as_deref(),
            self.tableau.as_deref(),
            keys,
        )
    }

    /// Resolves defaults and checks values. Errors name the field.
    pub fn resolve(&self) -> Result<IntegratorConfig, SettingsError> {
        let mut config = self.resolve_method()?;
        let mode = self.initialize.as_deref().unwrap_or("check");
        config.initialize = Initialize::from_name(mode).ok_or(bad(
            "initialize",
            format!("`initialize` must be \"check\" or \"project\", got \"{mode}\""),
        ))?;
        let name = self.factorization.as_deref().unwrap_or("auto");
        config.factorization = crate::linalg::Factorization::from_name(name).ok_or(bad(
            "factorization",
            format!("`factorization` must be \"auto\", \"lu\" or \"ldlt\", got \"{name}\""),
        ))?;
        // The checks the library's configurations get too (step floor, ...).
        config.check()?;
        Ok(config)
    }

    /// A configuration of `method` with this spec's solver settings
    /// (`initialize` and `factorization` are set by [`Self::resolve`]).
    fn config(&self, method: MethodConfig, dt: f64, t_end: f64) -> IntegratorConfig {
        IntegratorConfig {
            t_end,
            force_sparse: self.sparse.unwrap_or(false),
            ..IntegratorConfig::with_method(method, dt)
        }
    }

    fn resolve_method(&self) -> Result<IntegratorConfig, SettingsError> {
        let name = self.method_name();
        if let Some(key) = self.foreign(self.given()).first() {
            return Err(bad(key, keys::foreign_message(name, key)));
        }
        match name {
            "bdf" => self.resolve_bdf(),
            "tdg" => self.resolve_tdg(Scheme::Tdg),
            "alpha-kappa" => {
                let kappa = match &self.kappa {
                    None => Kappa::Auto,
                    Some(KappaChoice::Number(k)) => Kappa::Fixed(*k),
                    Some(KappaChoice::Name(s)) if s == "auto" => Kappa::Auto,
                    Some(KappaChoice::Name(s)) => Kappa::Fixed(s.parse().map_err(|_| {
                        bad("kappa", format!("`kappa` must be a number or \"auto\", got \"{s}\""))
                    })?),
                };
                self.resolve_tdg(Scheme::AlphaKappa(kappa))
            }

            "gssss" => self
                .resolve_gssss()
                .map_err(|(field, message)| SettingsError { field, message }),
            "tcg" => self.resolve_tcg(),
            "epm" => {
                let name = self.tableau.as_deref().unwrap_or("rk4");
                let tableau = Tableau::by_name(name).ok_or(bad(
                    "tableau",
                    format!("`tableau` must be \"rk4\", \"dopri5\" or \"heun\", got \"{name}\""),
                ))?;
self.resolve_rk(tableau, Formulation::Epm)
            }
            name => match Tableau::by_name(name) {
                Some(tableau) => self.resolve_rk(tableau, Formulation::Index1),
                None => Err(bad(
                    "method",
                    format!(
                        "`method` must be \"gssss\", \"tcg\", \"tdg\", \"alpha-kappa\", \"dopri5\", \"rk4\", \"heun\", \"epm\" or \"bdf\", got \"{name}\""

                    ),
                )),
            },
        }
    }

    /// The BDF settings (Yen and Petzold); keys of the other methods in the table
    /// are theirs and not used here.
    fn resolve_bdf(&self) -> Result<IntegratorConfig, SettingsError> {
        let t_end = positive(
            "t_end",
            self.t_end.ok_or(bad("t_end", "`t_end` is required"))?,
        )?;
        let name = self.newton.as_deref().unwrap_or("full");
        let iteration = NewtonIteration::from_name(name).ok_or(bad(
            "newton",
            format!("`newton` must be \"full\", \"cs\" or \"cm\", got \"{name}\""),
        ))?;
        let name = self.error_test.as_deref().unwrap_or("qv");
        let error_test = ErrorTest::from_name(name).ok_or(bad(
            "error_test",
            format!("`error_test` must be \"qv\" or \"q\", got \"{name}\""),
        ))?;
        let rtol = self.rtol.unwrap_or(1e-6);
        let settings = BdfSettings {
            iteration,
            max_order: usize::try_from(self.max_order.unwrap_or(5)).unwrap_or(usize::MAX),
            error_test,
            rtol,
            atol: self.atol.unwrap_or(rtol),
            max_step: self.max_step.unwrap_or(t_end),
            max_steps: self.max_steps.unwrap_or(DEFAULT_MAX_STEPS),
        };
        // Checked by `IntegratorConfig::check` (called by `resolve`).
        Ok(self.config(MethodConfig::Bdf(settings), settings.max_step, t_end))
    }

    /// The Runge–Kutta settings; GSSSS keys in the table are that method's
    /// and not used here.
    fn resolve_rk(
        &self,
        tableau: Tableau,
        formulation: Formulation,
    ) -> Result<IntegratorConfig, SettingsError> {
        let t_end = positive(
            "t_end",
            self.t_end.ok_or(bad("t_end", "`t_end` is required"))?,
        )?;
        let control = self
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
                // The values are checked once, by `IntegratorConfig::check`.
                let rtol = self.rtol.unwrap_or(1e-6);
                RkStep::Adaptive {
                    rtol,
                    atol: self.atol.unwrap_or(rtol / 10.0),
                    max_step: self.max_step.unwrap_or(t_end),
                    max_steps: self.max_steps.unwrap_or(DEFAULT_MAX_STEPS),
                }
            }
            "fixed" => RkStep::Fixed {
                dt: step_size(
                    "dt",
                    self.dt
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
        let stabilization = self.resolve_stabilization()?;
        // `baumgarte` with another explicit stabilization, and `datol` without
        // PStab, are kept for that stabilization and unused here, like the
        // keys of another method (a sweep can vary `stabilization` alone).
        let dt = match step {
            RkStep::Fixed { dt } => {
                check_step_count(dt, t_end)?;
                dt
            }
            RkStep::Adaptive { max_step, .. } => max_step,
        };
        Ok(self.config(
            MethodConfig::RungeKutta(RkSettings {
                formulation,
                tableau,
                step,
                stabilization,
            }),
            dt,
            t_end,
        ))
    }

    /// Seed 002's energy-preserving time-continuous Galerkin scheme (eq. 14
    /// with the discrete derivatives of eqs. 18–21) is the two-field midpoint
    /// scheme with Gonzalez's discrete derivative (`form = "two-field"`,
    /// `option = "dg"`, docs/theory/galerkin.md §1): a preset of the GSSSS
    /// stepper. The GSSSS scheme keys of the table are that method's and not
    /// used here; the Newton keys apply.
    fn resolve_tcg(&self) -> Result<IntegratorConfig, SettingsError> {
        let spec = IntegratorSpec {
            scheme: None,
            family: None,
            rho1: None,
            rho2: None,
            rho3: None,
            form: Some("two-field".into()),
            option: Some(OptionChoice::Name("dg".into())),
            ..self.clone()
        };
        let mut config = spec
            .resolve_gssss()
            .map_err(|(field, message)| SettingsError { field, message })?;
        if let MethodConfig::Gssss(g) = &mut config.method {
            g.preset = Some(TCG.into());
        }
        Ok(config)
    }

    /// Seed 002's time-discontinuous Galerkin scheme (eq. 47) or alpha–kappa
    /// scheme (eq. 66): `alpha` (default 1, eq. 28), `dt`, `t_end` and the
    /// scaled Newton test's `rtol`, `atol`, `max_iter`, `refactor` and
    /// `line_search`; fixed steps. The GSSSS keys `tol`, `convergence` and
    /// `jacobian` are that method's and not used here.
    fn resolve_tdg(&self, scheme: Scheme) -> Result<IntegratorConfig, SettingsError> {
        let dt = step_size("dt", self.dt.ok_or(bad("dt", "`dt` is required"))?)?;
        let t_end = positive(
            "t_end",
            self.t_end.ok_or(bad("t_end", "`t_end` is required"))?,
        )?;
        check_step_count(dt, t_end)?;
        // alpha, rtol, atol and max_iter are checked once, by
        // `IntegratorConfig::check` (called by `resolve`).
        let alpha = self.alpha.unwrap_or(1.0);
        let rtol = self.rtol.unwrap_or(DEFAULT_RTOL);
        let atol = self.atol;
        let max_iter = self.max_iter.unwrap_or(100);
        let (refactor, line_search) = self
            .refactor_and_line_search()
            .map_err(|(field, message)| SettingsError { field, message })?;
        let config = self.config(
            MethodConfig::Tdg(TdgSettings {
                scheme,
                alpha,
                dt,
                rtol,
                atol,
                max_iter,
                refactor,
                line_search,
            }),
            dt,
            t_end,
        );
        Ok(config)
    }

    /// The GSSSS family and roots: a preset `scheme` (default `"midpoint"`),
    /// or `family` with `rho1..3`; with the preset's name.
    fn resolve_family(&self) -> Result<FamilyChoice, (&'static str, String)> {
        if let (Some(scheme), Some(_)) = (&self.scheme, &self.family) {
            if scheme != "gssss" {
                return Err((
                    "family",
                    format!("give either a preset `scheme` (\"{scheme}\") or `family` with rho1..3, not both"),
                ));
            }
        }
        let explicit = self.family.is_some() || self.scheme.as_deref() == Some("gssss");
        if !explicit {
            // The roots belong to `family`: without it they would be ignored.
            for (name, v) in [
                ("rho1", self.rho1),
                ("rho2", self.rho2),
                ("rho3", self.rho3),
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
        Ok((family, rho, preset_name))
    }

    /// The index-1 form's drift control (`stabilization`, `baumgarte`,
    /// `datol`, `projection`, `pstab_passes`).
    fn resolve_stabilization(&self) -> Result<Stabilization, SettingsError> {
        let metric = match self.projection.as_deref().unwrap_or("mass") {
            "mass" => Metric::Mass,
            "identity" => Metric::Identity,
            other => {
                return Err(bad(
                    "projection",
                    format!("`projection` must be \"mass\" or \"identity\", got \"{other}\""),
                ))
            }
        };
        let name = self
            .stabilization
            .as_deref()
            .unwrap_or(if self.baumgarte.is_some() {
                "baumgarte"
            } else {
                "none"
            });
        let stabilization = match name {
            "none" => Stabilization::None,
            "baumgarte" => {
                let g = self.baumgarte.ok_or(bad(
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
                let datol = self.datol.unwrap_or(0.0);
                if !(datol >= 0.0 && datol.is_finite()) {
                    return Err(bad("datol", format!("`datol` must be >= 0, got {datol}")));
                }
                let passes = match self.pstab_passes.as_deref().unwrap_or("two") {
                    "two" => Passes::Two,
                    "converged" => Passes::Converged,
                    other => {
                        return Err(bad(
                            "pstab_passes",
                            format!(
                                "`pstab_passes` must be \"two\" or \"converged\", got \"{other}\""
                            ),
                        ))
                    }
                };
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
    /// The Newton driver's `refactor` (default `"iteration"`) and
    /// `line_search` (default `"none"`), checked.
    fn refactor_and_line_search(&self) -> Result<(Refactor, LineSearch), (&'static str, String)> {
        let refac = self.refactor.as_deref().unwrap_or("iteration");
        let refactor = Refactor::from_name(refac).ok_or((
            "refactor",
            format!("`refactor` must be \"iteration\" or \"step\", got \"{refac}\""),
        ))?;
        let search = self.line_search.as_deref().unwrap_or("none");
        let line_search = LineSearch::from_name(search).ok_or((
            "line_search",
            format!("`line_search` must be \"none\" or \"backtracking\", got \"{search}\""),
        ))?;
        Ok((refactor, line_search))
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
        step_size("dt", dt).map_err(|e| (e.field, e.message))?;
        let t_end = pos("t_end", self.t_end)?;
        check_step_count(dt, t_end).map_err(|e| (e.field, e.message))?;
        // tol, max_iter, rtol, atol and the option's scheme are checked once,
        // by `IntegratorConfig::check` (called by `resolve`).
        let tol = self.tol.unwrap_or(1e-8);
        let max_iter = self.max_iter.unwrap_or(100);
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
        let conv = self.convergence.as_deref().unwrap_or("scaled");
        let stop = NewtonStop::from_name(conv).ok_or((
            "convergence",
            format!("`convergence` must be \"scaled\", \"increment\" or \"rate\", got \"{conv}\""),
        ))?;
        let rtol = self.rtol.unwrap_or(DEFAULT_RTOL);
        let atol = self.atol;
        let (refactor, line_search) = self.refactor_and_line_search()?;
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

        let (family, rho, preset_name) = self.resolve_family()?;
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
        Ok(self.config(
            MethodConfig::Gssss(GssssSettings {
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
            }),
            dt,
            t_end,
        ))
    }
}

#[cfg(test)]
mod tests {
    /// Every field of the table is a key of some method in `keys.rs`.
    #[test]
    fn every_field_is_a_key() {
        macro_rules! names {
            ($($f:ident),*) => { [$(stringify!($f)),*] };
        }
        let fields = with_keys!(names);
        for f in fields {
            assert!(super::keys::is_key(f), "{f}");
        }
        assert_eq!(fields.len(), 35);
    }
}
