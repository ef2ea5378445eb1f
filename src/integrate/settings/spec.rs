//! The `[integrator]` table as written: every key optional, the same type
//! for the model file and the command line's flags. Its resolution into the
//! typed settings of one method is the enum of the methods'
//! (`integrate/methods/`).

use serde::Deserialize;

/// The `[integrator]` table as written, every key optional, and the
/// command line's flags of the same names (`--rtol` for `rtol`, with `cli`):
/// one type for both, merged by `IntegratorSpec::overridden_by` and
/// checked once by `IntegratorSpec::resolve`. A key given to a method that
/// has no use for it is refused there (the keys each method lists, `FromTable::keys`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct IntegratorSpec {
    /// Method: gssss (default; Hoitink); an explicit Runge–Kutta method on the
    /// index-1 form (Chin): dopri5 (adaptive), rk4, heun (fixed steps); epm,
    /// the embedded projection method (Borri and Trainelli) with --tableau; bdf, DASSL's
    /// BDF 1-5 on the GGL form (Yen and Petzold) with --newton, --max-order, --rtol, --atol;
    /// or Lens and Cardona's Galerkin schemes: tcg (energy-preserving), tdg (energy-decaying,
    /// --alpha) and alpha-kappa (with velocity constraints, --alpha, --kappa); hht, the
    /// Hilber-Hughes-Taylor alpha method (--alpha in [-1/3, 0]).
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
    /// (default 1, eq. 28; rho_inf = (1 - alpha)/(1 + alpha)). HHT: alpha in [-1/3, 0]
    /// (default -0.1; rho_inf = (1 + alpha)/(1 - alpha)).
    #[cfg_attr(feature = "cli", arg(long, allow_negative_numbers = true))]
    pub alpha: Option<f64>,
    /// alpha-kappa (--method alpha-kappa, Lens and Cardona eq. 66): kappa K, or auto (eq. 71
    /// at the iterate, clamped to [1 - h/2, 1 + h/2]; the default).
    #[cfg_attr(feature = "cli", arg(long, value_name = "K|auto", value_parser = parse_kappa))]
    pub kappa: Option<KappaChoice>,
}

/// kappa as written: a number or `"auto"` (also a number written as a
/// string, as on the command line). Checked by `IntegratorSpec::resolve`.
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
/// schemes only). Checked by `IntegratorSpec::resolve`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum OptionChoice {
    /// `option = 2`.
    Number(i64),
    /// `option = "dg"` (or a number written as a string, as on the command line).
    Name(String),
}

/// `--option K`: the name or number as written (checked by
/// `IntegratorSpec::resolve`).
#[cfg(feature = "cli")]
fn parse_option(s: &str) -> Result<OptionChoice, String> {
    Ok(OptionChoice::Name(s.to_string()))
}

/// `--kappa K|auto` as written (checked by `IntegratorSpec::resolve`).
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
    /// Every key of the table (its fields), in the order of the fields.
    pub const KEYS: &'static [&'static str] = &{
        macro_rules! names {
            ($($f:ident),*) => { [$(stringify!($f)),*] };
        }
        with_keys!(names)
    };

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

    /// The keys set in `over`, the others from `self`.
    pub(crate) fn merged_with(&self, over: &IntegratorSpec) -> IntegratorSpec {
        macro_rules! pick {
            ($($f:ident),*) => { IntegratorSpec { $($f: over.$f.clone().or_else(|| self.$f.clone()),)* } };
        }
        with_keys!(pick)
    }

    /// Unsets the key `key` (a name of [`Self::given`]).
    pub(crate) fn clear(&mut self, key: &str) {
        macro_rules! clear {
            ($($f:ident),*) => { match key { $(stringify!($f) => self.$f = None,)* _ => {} } };
        }
        with_keys!(clear)
    }

    /// The method's name (`gssss` when not given).
    pub fn method_name(&self) -> &str {
        self.method.as_deref().unwrap_or("gssss")
    }
}

#[cfg(test)]
mod tests {
    /// The table has 35 keys, each once.
    #[test]
    fn keys() {
        let keys = super::IntegratorSpec::KEYS;
        assert_eq!(keys.len(), 35);
        let mut sorted = keys.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), keys.len());
    }
}
