//! Which `[integrator]` keys each method takes: the one table behind the
//! refusal of a setting given to a method that has no use for it (in the
//! model file, on the command line and through `--set`), and behind the
//! override rule that a method chosen over the file's drops the file's keys
//! of the old method ([`foreign_to`]).

/// The keys of the run rather than of a method: every method takes them.
const RUN: &[&str] = &["method", "t_end", "initialize", "factorization", "sparse"];

/// The scaled Newton test and the Newton driver's options (the methods on
/// the Newton driver: GSSSS, TCG, TDG, alpha–kappa).
const NEWTON: &[&str] = &["rtol", "atol", "max_iter", "refactor", "line_search"];

/// GSSSS's further Newton keys: the absolute tests and the seed's Jacobian.
const GSSSS_NEWTON: &[&str] = &["tol", "jacobian", "convergence", "step_control", "dt"];

/// The GSSSS scheme: a preset or a family with its roots, the
/// constraint-force option and the Newton unknown.
const GSSSS_SCHEME: &[&str] = &["scheme", "family", "rho1", "rho2", "rho3", "option", "form"];

/// Seed 002's Galerkin schemes (TDG and alpha–kappa).
const TDG: &[&str] = &["alpha", "dt"];

/// DASSL's BDF on the GGL form (Yen and Petzold).
const BDF: &[&str] = &[
    "newton",
    "max_order",
    "error_test",
    "rtol",
    "atol",
    "max_step",
    "max_steps",
];

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

/// The method names of `method`, in the order of the documentation.
pub(crate) const METHODS: [&str; 9] = [
    "gssss",
    "tcg",
    "tdg",
    "alpha-kappa",
    "dopri5",
    "rk4",
    "heun",
    "epm",
    "bdf",
];

/// How a Runge–Kutta method steps, as far as the table says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Steps {
    Adaptive,
    Fixed,
    /// `step_control` holds neither name: its own check reports it.
    Unknown,
}

/// The key groups of `method` (`None`: not a method name). `step_control`
/// and `tableau` are the table's values (they decide the keys of the
/// Runge–Kutta methods' steps).
fn groups(
    method: &str,
    step_control: Option<&str>,
    tableau: Option<&str>,
) -> Option<Vec<&'static [&'static str]>> {
    let steps = |embedded: bool| match step_control {
        Some("adaptive") => Steps::Adaptive,
        Some("fixed") => Steps::Fixed,
        Some(_) => Steps::Unknown,
        None if embedded => Steps::Adaptive,
        None => Steps::Fixed,
    };
    let step_keys = |s: Steps| -> Vec<&'static [&'static str]> {
        match s {
            Steps::Adaptive => vec![ADAPTIVE],
            Steps::Fixed => vec![FIXED],
            Steps::Unknown => vec![ADAPTIVE, FIXED],
        }
    };
    let mut g: Vec<&'static [&'static str]> = vec![RUN];
    match method {
        "gssss" => g.extend([NEWTON, GSSSS_NEWTON, GSSSS_SCHEME]),
        "tcg" => g.extend([NEWTON, GSSSS_NEWTON]),
        "tdg" => g.extend([NEWTON, TDG]),
        "alpha-kappa" => g.extend([NEWTON, TDG, &["kappa"]]),
        "bdf" => g.push(BDF),
        "dopri5" | "rk4" | "heun" => {
            g.extend([RK, INDEX1]);
            g.extend(step_keys(steps(method == "dopri5")));
        }
        "epm" => {
            g.extend([RK, &["tableau"]]);
            g.extend(step_keys(steps(tableau == Some("dopri5"))));
        }
        _ => return None,
    }
    Some(g)
}

/// Whether `method` takes `key` (with the table's `step_control` and
/// `tableau`); an unknown method takes every key (its name is the error).
pub(crate) fn takes(
    method: &str,
    step_control: Option<&str>,
    tableau: Option<&str>,
    key: &str,
) -> bool {
    groups(method, step_control, tableau).is_none_or(|g| g.iter().any(|k| k.contains(&key)))
}

/// Whether `key` is an `[integrator]` key (of some method).
pub(crate) fn is_key(key: &str) -> bool {
    [
        RUN,
        NEWTON,
        GSSSS_NEWTON,
        GSSSS_SCHEME,
        TDG,
        BDF,
        RK,
        INDEX1,
        ADAPTIVE,
        FIXED,
        &["kappa", "tableau"],
    ]
    .iter()
    .any(|g| g.contains(&key))
}

/// The keys of `set` that `method` does not take, in the order given.
pub(crate) fn foreign_to<'a>(
    method: &str,
    step_control: Option<&str>,
    tableau: Option<&str>,
    set: impl IntoIterator<Item = &'a str>,
) -> Vec<&'a str> {
    set.into_iter()
        .filter(|k| !takes(method, step_control, tableau, k))
        .collect()
}

/// The message for `key` given to `method`, which has no use for it: the
/// method and the key, why where it is the steps, and the methods that do
/// take the key.
pub(crate) fn foreign_message(method: &str, key: &str) -> String {
    let takers: Vec<String> = METHODS
        .iter()
        .filter(|m| takes(m, None, None, key) || takes(m, Some("fixed"), None, key))
        .map(|m| format!("\"{m}\""))
        .collect();
    let rk = matches!(method, "dopri5" | "rk4" | "heun" | "epm");
    let why = if rk && key == "dt" {
        " (its steps are adaptive: the error control chooses them, `max_step` bounds them; \
         `step_control = \"fixed\"` steps by `dt`)"
            .to_string()
    } else if rk && ADAPTIVE.contains(&key) {
        " (its steps are fixed steps of `dt`; the tolerances and step limits belong to \
         `step_control = \"adaptive\"` of an embedded tableau)"
            .to_string()
    } else if takers.is_empty() {
        String::new()
    } else {
        format!(" (`{key}` is a setting of {})", takers.join(", "))
    };
    format!("method \"{method}\" has no setting `{key}`{why}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every method takes the run's keys and its own; every key is some
    /// method's.
    #[test]
    fn table() {
        for m in METHODS {
            for k in RUN {
                assert!(takes(m, None, None, k), "{m} {k}");
            }
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
