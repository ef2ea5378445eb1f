//! Who a built method is: its label, its run metadata and the statistics
//! each of its steps reports ([`Identity`]), drawn once from its settings
//! ([`super::Method`]) by the factory and carried by the built integrator
//! ([`super::Integrator::identity`]). The statistics several methods share
//! are named and kinded once here ([`stat`]); a method lists the ones it
//! reports, and declares its own, in one
//! [`statistics!`](crate::integrate::statistics) table, which also gives
//! each its index in [`super::StepReport::stats`].

use super::{AttrValue, StatSpec};

/// The identity of a built method: what the recorders write about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    /// Descriptive name, e.g. `GSSSS V0(1,1,0), option 2, a-form`.
    pub label: String,
    /// Parameters for the output metadata (the HDF5 `integrator.*` attributes).
    pub parameters: Vec<(String, AttrValue)>,
    /// The statistics every step report carries, in order.
    pub statistics: &'static [StatSpec],
}

/// Every statistic a method reports: its name (`/stats/<name>`, the root
/// attribute `stats.<name>`) and how steps combine. What each counts for
/// each method: docs/output-format.md, "Method statistics".
pub mod stat {
    use crate::integrate::StatSpec;

    /// Newton iterations (GSSSS, TDG, alpha–kappa, BDF).
    pub const NEWTON_ITERATIONS: StatSpec = StatSpec::count("newton_iterations");
    /// Factorizations of the Newton matrix (GSSSS).
    pub const FACTORIZATIONS: StatSpec = StatSpec::count("factorizations");
    /// Halvings of Newton corrections by the line search (GSSSS).
    pub const BACKTRACKS: StatSpec = StatSpec::count("backtracks");
    /// Rejected attempts (GSSSS cut-backs, Runge–Kutta error-test failures).
    pub const NREJECT: StatSpec = StatSpec::count("nreject");
    /// Right-hand-side or residual evaluations (Chin's and DASSL's NFCN).
    pub const NFCN: StatSpec = StatSpec::count("nfcn");
    /// Newton matrices evaluated (DASSL's NJE).
    pub const NJAC: StatSpec = StatSpec::count("njac");
    /// Attempted steps (NSTEP).
    pub const NSTEP: StatSpec = StatSpec::count("nstep");
    /// Accepted steps (Chin's NACCP).
    pub const NACCEPT: StatSpec = StatSpec::count("naccept");
    /// Attempts stabilized by PStab (Chin's NSTAB).
    pub const NSTAB: StatSpec = StatSpec::count("nstab");
    /// S-both passes of the stabilized attempts.
    pub const NPASS: StatSpec = StatSpec::count("npass");
    /// Error-test failures (DASSL's ETF).
    pub const ETFS: StatSpec = StatSpec::count("etfs");
    /// Convergence-test failures (DASSL's CTF).
    pub const CTFS: StatSpec = StatSpec::count("ctfs");
    /// Re-splits of the coordinate partition (BDF's CS and CM).
    pub const NSPLIT: StatSpec = StatSpec::count("nsplit");
    /// Largest position drift `max_i |Phi_i|` at the step points.
    pub const DRIFT_POSITION: StatSpec = StatSpec::max("drift_position");
    /// Largest velocity drift `max_i |B v + Phi_t|_i` at the step points.
    pub const DRIFT_VELOCITY: StatSpec = StatSpec::max("drift_velocity");
    /// Largest order used (BDF).
    pub const ORDER: StatSpec = StatSpec::max("order");
    /// Largest kappa (alpha–kappa, Lens and Cardona eq. 71).
    pub const KAPPA: StatSpec = StatSpec::max("kappa");
    /// Wall time in PStab, s.
    pub const STAB_SECONDS: StatSpec = StatSpec::sum("stab_seconds");
}

/// Declares the statistics a method reports, once: the table `$table` (a
/// `&'static [StatSpec]`, in the order of [`super::StepReport::stats`]) of
/// [`stat`] entries, or of the method's own (`NAME = count("name")`, for a
/// statistic no other method reports: a new method needs no edit outside
/// its folder), and for each statistic a `usize` constant of the same
/// name, its index (`stats[NFCN] += 1.0`).
///
/// ```ignore
/// statistics! {
///     /// Statistics of a step.
///     pub(crate) STATS = [NSTEP, NFCN, ORDER, NSTAGE = count("nstage")];
/// }
/// ```
macro_rules! statistics {
    ($(#[$doc:meta])* $vis:vis $table:ident = [
        $($stat:ident $(= $kind:ident($name:literal))?),+ $(,)?
    ];) => {
        $(#[$doc])*
        $vis const $table: &[$crate::integrate::StatSpec] =
            &[$($crate::integrate::statistics!(@spec $stat $(= $kind($name))?)),+];
        const _: () = assert!($table.len() <= $crate::integrate::MAX_STATS);
        $crate::integrate::statistics!(@index 0usize; $($stat)+);
    };
    (@spec $stat:ident) => {
        $crate::integrate::stat::$stat
    };
    (@spec $stat:ident = $kind:ident($name:literal)) => {
        $crate::integrate::StatSpec::$kind($name)
    };
    (@index $i:expr; $first:ident $($rest:ident)*) => {
        const $first: usize = $i;
        $crate::integrate::statistics!(@index $i + 1; $($rest)*);
    };
    (@index $i:expr;) => {};
}
pub(crate) use statistics;

#[cfg(test)]
mod tests {
    use crate::integrate::{StatSpec, StatTotal};

    statistics! {
        /// Shared and own statistics mixed.
        TABLE = [NSTEP, OWN = sum("own_seconds"), ORDER];
    }

    #[test]
    fn a_table_names_each_statistic_once_and_indexes_it() {
        assert_eq!((NSTEP, OWN, ORDER), (0, 1, 2));
        let names: Vec<&str> = TABLE.iter().map(|s| s.name).collect();
        assert_eq!(names, ["nstep", "own_seconds", "order"]);
        assert_eq!(TABLE[OWN], StatSpec::sum("own_seconds"));
        assert_eq!(TABLE[ORDER].total, StatTotal::Max);
        assert!(TABLE[NSTEP].integer);
    }
}
