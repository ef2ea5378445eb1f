//! The `[integrator]` keys more than one method takes. Each method lists
//! its keys in its own settings ([`super::FromTable::keys`]); the one list
//! behind the refusal of a key given to a method that has no use for it (in
//! the model file, on the command line, through `--set` and from code) is
//! their union, drawn by the enum of the methods (`integrate/methods/`).

/// The keys of the run rather than of a method: every method takes them.
pub(crate) const RUN: &[&str] = &["method", "t_end", "initialize", "factorization", "sparse"];

/// The scaled Newton test and the Newton driver's options (the methods on
/// the Newton driver: GSSSS, TCG, TDG, alpha–kappa).
pub(crate) const NEWTON: &[&str] = &["rtol", "atol", "max_iter", "refactor", "line_search"];

/// Whether `key` is an `[integrator]` key (a field of the table).
pub(crate) fn is_key(key: &str) -> bool {
    super::IntegratorSpec::KEYS.contains(&key)
}
