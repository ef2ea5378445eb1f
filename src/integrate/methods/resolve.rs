//! The `[integrator]` table resolved into the typed settings of its method:
//! the keys each method takes (the union of the methods' own lists), the
//! refusal of a key given to a method that has no use for it, the override
//! rule of the command line, and the resolution.

use crate::integrate::initial::Initialize;
use crate::integrate::settings::{
    bad, choice, named, required_t_end, IntegratorSpec, SettingsError, RUN,
};
use crate::linalg::Factorization;

use super::{
    foreign_message, keys_of, method_names, settings_of, IntegratorConfig, MethodSettings,
};

named!(Initialize: Check, Project);
named!(Factorization: Auto, Lu, Ldlt);

/// Whether `method` takes `key` with the table `table` (its `step_control`
/// and `tableau` decide some); an unknown method takes every key (its name
/// is the error).
fn takes_in(method: &str, table: &IntegratorSpec, key: &str) -> bool {
    RUN.contains(&key) || keys_of(method, table).is_none_or(|g| g.iter().any(|k| k.contains(&key)))
}

/// Whether `method` takes `key` with the table's `step_control` and
/// `tableau`; an unknown method takes every key (its name is the error).
pub(crate) fn takes(
    method: &str,
    step_control: Option<&str>,
    tableau: Option<&str>,
    key: &str,
) -> bool {
    let table = IntegratorSpec {
        step_control: step_control.map(String::from),
        tableau: tableau.map(String::from),
        ..IntegratorSpec::default()
    };
    takes_in(method, &table, key)
}

/// Every method's name with the keys it takes (the run's keys left out)
/// with any of its steps (`step_control` "fixed" or "adaptive", the EPM's
/// `tableau` "dopri5"), in the order of the documentation: the list
/// docs/model-format.md is checked against.
pub fn method_keys() -> Vec<(&'static str, Vec<&'static str>)> {
    let tables: Vec<IntegratorSpec> = [None, Some("fixed"), Some("adaptive")]
        .into_iter()
        .flat_map(|control| {
            [None, Some("dopri5")].map(|tableau| IntegratorSpec {
                step_control: control.map(String::from),
                tableau: tableau.map(String::from),
                ..IntegratorSpec::default()
            })
        })
        .collect();
    method_names()
        .map(|m| {
            let keys = IntegratorSpec::KEYS
                .iter()
                .copied()
                .filter(|k| !RUN.contains(k) && tables.iter().any(|t| takes_in(m, t, k)))
                .collect();
            (m, keys)
        })
        .collect()
}

impl IntegratorSpec {
    /// Fields of `over` that are set replace those of `self`. A method
    /// given in `over` other than `self`'s replaces `self`'s with its
    /// settings: the keys of `self` the new method does not take are
    /// dropped (those of `over` stay, and are refused by
    /// [`Self::resolve`]).
    pub fn overridden_by(&self, over: &IntegratorSpec) -> IntegratorSpec {
        let mut out = self.merged_with(over);
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
        keys.into_iter()
            .filter(|k| !takes_in(self.method_name(), self, k))
            .collect()
    }

    /// Resolves defaults and checks values. Errors name the field.
    pub fn resolve(&self) -> Result<IntegratorConfig, SettingsError> {
        let mut config = self.resolve_method()?;
        config.initialize = choice("initialize", self.initialize.as_deref(), Initialize::Check)?;
        let given = self.factorization.as_deref();
        config.factorization = choice("factorization", given, Factorization::Auto)?;
        // The checks the library's configurations get too (step floor, ...).
        config.check()?;
        Ok(config)
    }

    /// A configuration of `method` with this spec's solver settings
    /// (`initialize` and `factorization` are set by [`Self::resolve`]).
    fn config(&self, method: MethodSettings, t_end: f64) -> IntegratorConfig {
        IntegratorConfig {
            t_end,
            force_sparse: self.sparse.unwrap_or(false),
            ..IntegratorConfig::with_method(method)
        }
    }

    fn resolve_method(&self) -> Result<IntegratorConfig, SettingsError> {
        let name = self.method_name();
        if let Some(key) = self.foreign(self.given()).first() {
            return Err(bad(key, foreign_message(name, key)));
        }
        match settings_of(name, self) {
            Some(settings) => {
                let settings = settings?;
                Ok(self.config(settings, required_t_end(self)?))
            }
            None => {
                let names: Vec<String> = method_names().map(|m| format!("\"{m}\"")).collect();
                let (last, rest) = names.split_last().expect("methods");
                Err(bad(
                    "method",
                    format!(
                        "`method` must be {} or {last}, got \"{name}\"",
                        rest.join(", ")
                    ),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every method takes the run's keys and its own; every key is some
    /// method's.
    #[test]
    fn table() {
        for m in method_names() {
            for k in RUN {
                assert!(takes(m, None, None, k), "{m} {k}");
            }
        }
        for k in IntegratorSpec::KEYS {
            assert!(
                method_names().any(|m| takes(m, None, None, k) || takes(m, Some("fixed"), None, k)),
                "{k}"
            );
        }
        assert!(takes("dopri5", None, None, "max_step"));
        assert!(!takes("dopri5", None, None, "dt"));
        assert!(takes("dopri5", Some("fixed"), None, "dt"));
        assert!(!takes("rk4", None, None, "rtol"));
        assert!(takes("epm", None, Some("dopri5"), "rtol"));
        assert!(!takes("epm", None, None, "rtol"));
        assert!(!takes("tcg", None, None, "scheme"));
        assert!(takes("nonsense", None, None, "scheme"));
        let m = foreign_message("rk4", "kappa");
        assert!(m.contains("\"rk4\"") && m.contains("`kappa`") && m.contains("alpha-kappa"));
    }
}
