//! Newton's method of the implicit methods: the settings (the stop rule, the
//! refresh of the Newton matrix, the line search, the time split), their
//! parts, and the one iteration that uses them, [`driver::solve`], run by the
//! GSSSS stepper ([`crate::integrate::gssss::stepper`], Hoitink §3.6, eqs.
//! 3.14–3.31) and the Galerkin schemes ([`crate::integrate::galerkin`]).
//!
//! Convergence test (documented in docs/theory/gssss.md): the increment of
//! u_{n+1} expressed in acceleration units (`|delta u_{n+1}| / (d u_{n+1}/d da)`,
//! which is the a-form unknown's increment in every form) and the multiplier
//! increment must both fall below `tol` (absolute), or below their round-off
//! floors when those are larger. The floor of an acceleration increment is
//! `FLOOR_FACTOR eps L / (d u_{n+1}/d da)` with `L = 1 + max |u_0|` the model's
//! coordinate scale (about eps |u| / (lambda3 dt^2), the double pendulum), and that
//! of a multiplier increment is the force round-off `max|M| floor_a +
//! FLOOR_FACTOR eps L max|K(u_0)|` (stiff beams); with
//! tol = 1e-8 it takes over below dt of about 2^-10 on unit-size models, and
//! Newton still converges in 2 iterations per step at dt = 2^-18 on the
//! test problems of Hoitink. The scale is the initial one on purpose: a solution
//! that blows up (growing accelerations and multipliers, spinning angles) must
//! not relax the test, so such runs stop
//! with a Newton failure as in the seed.

pub mod driver;
pub(crate) mod settings;

use std::time::Duration;

pub use driver::{solve, Cause, Correction, Failure, NonlinearSystem, Outcome, Policy, Stats};
pub use settings::DriverSettings;

/// Safety factor on the round-off floors of the convergence test: the
/// test problems of Hoitink converge with 1 to 8 down to dt = 2^-18; the deformable
/// slider-crank (EA = 1.5e6 lb, 32 elements, dt = 1e-5) needs 4 or more.
pub const FLOOR_FACTOR: f64 = 8.0;

/// Which Newton matrix multiplies the multiplier increment (GSSSS; seed
/// 000 eqs. 4.15–4.18).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JacobianKind {
    /// The exact derivative of the residual.
    Consistent,
    /// The seed's matrices (eqs. 4.15–4.18 as reproduced in the double pendulum): the
    /// multiplier column omits the W1 / (1 - W1) weights, i.e. B(u_{n+1})^T for
    /// options 1 and 3 and B(u~)^T for option 4. Converges more slowly; kept to
    /// reproduce the seed's iteration counts.
    Seed,
}

impl JacobianKind {
    /// The name in the model file.
    pub fn name(self) -> &'static str {
        match self {
            JacobianKind::Consistent => "consistent",
            JacobianKind::Seed => "seed",
        }
    }
}

/// Newton settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonSettings {
    /// Tolerance on the increments (acceleration and multiplier units) of
    /// the `increment` and `rate` tests.
    pub tol: f64,
    /// Tolerances of the `scaled` test.
    pub scaled: ScaledTolerances,
    /// Maximum iterations per step.
    pub max_iter: u32,
    /// Newton matrix variant.
    pub jacobian: JacobianKind,
    /// When an iterate is accepted.
    pub stop: NewtonStop,
    /// When the Newton matrix is assembled and factored.
    pub refactor: Refactor,
    /// Globalization of the scaled test's iteration.
    pub line_search: LineSearch,
}

impl NewtonSettings {
    /// What [`driver::solve`] does with these settings.
    pub fn policy(&self) -> Policy {
        Policy {
            max_iter: self.max_iter,
            stop: self.stop,
            refactor: self.refactor,
            line_search: self.line_search,
        }
    }
}

/// Globalization of the Newton iteration under the scaled test
/// (docs/theory/gssss.md §12a, "Line search").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineSearch {
    /// Full corrections; divergence is a correction that grows
    /// ([`DIVERGENT_GROWTHS`] iterations in a row).
    None,
    /// Backtracking on the scaled residual norm ([`Backtracking`]): a
    /// correction is halved until the residual falls by the Armijo factor;
    /// divergence is a correction along which it cannot be made to fall.
    Backtracking,
}

impl LineSearch {
    /// The name in the model file.
    pub fn name(self) -> &'static str {
        match self {
            LineSearch::None => "none",
            LineSearch::Backtracking => "backtracking",
        }
    }
}

/// Sufficient decrease of the line search: a fraction `alpha` of a
/// correction is accepted when the residual norm falls to at most
/// `(1 - ARMIJO alpha)` times its value at the iterate the correction
/// started from (Armijo's condition on the residual norm; Dennis & Schnabel
/// 1983, §6.3; Deuflhard 2004, §3.1).
pub const ARMIJO: f64 = 1e-4;

/// Halvings of one correction at most (the smallest fraction tried is
/// `2^-MAX_BACKTRACKS`).
pub const MAX_BACKTRACKS: u32 = 10;

/// What the line search makes of the residual at a trial iterate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Trial {
    /// The iterate is accepted (solve for the next correction from it).
    Accept,
    /// Move back along the last correction: add `by` (negative) times it to
    /// the iterate and evaluate the residual again.
    Shorten {
        /// Change of the fraction of the correction applied.
        by: f64,
    },
    /// [`MAX_BACKTRACKS`] halvings did not decrease the residual.
    Failed,
    /// Failed with an outdated Newton matrix: the iterate is taken as the
    /// start of a correction solved with a fresh one ([`driver::solve`];
    /// never returned by [`Backtracking::judge`]).
    Rebased,
}

/// The backtracking line search over the iterations of one step: the
/// residual norm at the last accepted iterate, the fraction of the current
/// correction applied, and its halvings so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backtracking {
    base: Option<f64>,
    alpha: f64,
    halvings: u32,
}

impl Default for Backtracking {
    fn default() -> Self {
        Backtracking {
            base: None,
            alpha: 1.0,
            halvings: 0,
        }
    }
}

impl Backtracking {
    /// Judges the residual norm `merit` at the current trial iterate (the
    /// last accepted iterate plus the fraction `alpha` of the correction
    /// solved from it; the first call of a step: the predictor, accepted).
    pub fn judge(&mut self, merit: f64) -> Trial {
        let Some(base) = self.base else {
            self.base = Some(merit);
            return Trial::Accept;
        };
        if merit <= (1.0 - ARMIJO * self.alpha) * base {
            self.rebase(merit);
            Trial::Accept
        } else if self.halvings < MAX_BACKTRACKS {
            self.halvings += 1;
            let by = -0.5 * self.alpha;
            self.alpha *= 0.5;
            Trial::Shorten { by }
        } else {
            Trial::Failed
        }
    }

    /// Takes the current iterate, with residual norm `merit`, as the start
    /// of the next correction, whether or not it decreased the residual
    /// (after a failure with an outdated Newton matrix: the next correction
    /// comes from a fresh one).
    pub fn rebase(&mut self, merit: f64) {
        self.base = Some(merit);
        self.alpha = 1.0;
        self.halvings = 0;
    }

    /// Halvings of the current correction so far.
    pub fn halvings(&self) -> u32 {
        self.halvings
    }
}

/// When the Newton matrix is assembled and factored (docs/theory/gssss.md §12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refactor {
    /// Every iteration (Newton's method).
    Iteration,
    /// At the first iteration of each step, then again only after an
    /// iteration whose contraction rate `theta = r_k / r_{k-1}` exceeds
    /// [`SLOW_CONTRACTION`] (modified Newton; the other iterations assemble
    /// the residual only and reuse the factorization).
    Step,
}

/// Where a run's Newton iterations spent their time (`flexmb bench`), when
/// the integrator was built with [`IntegratorConfig::timing`](super::IntegratorConfig).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NewtonTimings {
    /// Building the integrator: the solver's symbolic analysis (band
    /// ordering, sparse symbolic LU) and the consistent-start workspace.
    pub setup: Duration,
    /// Filling the residual and the Newton matrix.
    pub assembly: Duration,
    /// Numeric factorizations.
    pub factorization: Duration,
    /// Triangular solves.
    pub solve: Duration,
    /// Number of factorizations.
    pub factorizations: u64,
}

/// Contraction rate above which a modified-Newton step refreshes its matrix.
pub const SLOW_CONTRACTION: f64 = 0.5;

impl Refactor {
    /// The name in the model file.
    pub fn name(self) -> &'static str {
        match self {
            Refactor::Iteration => "iteration",
            Refactor::Step => "step",
        }
    }

    /// Whether the next iteration assembles and factors the matrix, after an
    /// iteration with scaled increment `r` (previous: `prev`).
    pub fn refresh_after(self, r: f64, prev: Option<f64>) -> bool {
        match self {
            Refactor::Iteration => true,
            Refactor::Step => prev.is_some_and(|p| r > SLOW_CONTRACTION * p),
        }
    }
}

/// When Newton accepts an iterate (docs/theory/gssss.md §12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewtonStop {
    /// The last increment is below the tolerance (Hoitink eq. 2.14): the
    /// accepted iterate is one iteration past the tolerance.
    Increment,
    /// The increment test, or the error of the current iterate estimated from
    /// the contraction rate `theta_k = r_k / r_{k-1}` of the scaled increments
    /// is below the tolerance: `theta_k / (1 - theta_k) r_k <= 1` with
    /// `theta_k < 1` (Hairer & Wanner, Solving ODEs II, §IV.8, eq. 8.10–8.11,
    /// with kappa = 1). Saves the confirming iteration once Newton converges.
    Rate,
    /// The size- and unit-independent test of [`ScaledTest`]: the weighted
    /// RMS norm of the correction (coordinates in displacement units,
    /// multipliers in force units) at most 1 and the residual below `rtol`
    /// times the model's force scale or its round-off floor; divergence is
    /// detected within a few iterations and the step restarted from the
    /// displacement predictor (docs/theory/gssss.md §12).
    Scaled,
}

impl NewtonStop {
    /// The name in the model file.
    pub fn name(self) -> &'static str {
        match self {
            NewtonStop::Increment => "increment",
            NewtonStop::Rate => "rate",
            NewtonStop::Scaled => "scaled",
        }
    }

    /// Whether to stop after an iteration whose increments, divided by their
    /// tolerances, have the largest ratio `r`; `prev` is that of the previous
    /// iteration of the step (the `increment` and `rate` rules; the scaled
    /// test is [`ScaledTest::judge`]).
    pub fn accepts(self, r: f64, prev: Option<f64>) -> bool {
        if r <= 1.0 {
            return true;
        }
        match (self, prev) {
            (NewtonStop::Rate, Some(p)) => {
                let theta = r / p;
                theta < 1.0 && theta / (1.0 - theta) * r <= 1.0
            }
            _ => false,
        }
    }
}

/// Tolerances of the scaled test (`convergence = "scaled"`, docs/theory/gssss.md §12).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScaledTolerances {
    /// Relative tolerance (of coordinates and multipliers).
    pub rtol: f64,
    /// Absolute tolerance of coordinates, displacement units (`None`:
    /// `rtol` times the model's coordinate scale `1 + max |u_0|`).
    pub atol: Option<f64>,
}

/// Default relative tolerance of the scaled test.
pub const DEFAULT_RTOL: f64 = 1e-6;

/// Iterations in a row whose weighted correction grows (`theta >= 1`) after
/// which an iteration is declared divergent.
pub const DIVERGENT_GROWTHS: u32 = 2;

/// The round-off of an assembled model, from the initial state
/// (the floors of docs/theory/gssss.md §12).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundOff {
    /// `L = 1 + max |u_0|`: the coordinate scale.
    pub coord_scale: f64,
    /// `max |M_ij|`.
    pub mass_scale: f64,
    /// `max |K_ij(u_0)|`.
    pub stiffness_scale: f64,
}

impl RoundOff {
    /// The round-off of a force assembled at coordinates of size `L` from
    /// stiffnesses up to `max |K|`: `FLOOR_FACTOR eps L max |K|`, plus that
    /// of `M a` for an acceleration known to `floor_a`.
    pub fn force_floor(&self, floor_a: f64) -> f64 {
        self.mass_scale * floor_a
            + FLOOR_FACTOR * f64::EPSILON * self.coord_scale * self.stiffness_scale
    }

    /// The round-off of a coordinate `u`: `FLOOR_FACTOR eps (|u| + L)`.
    pub fn coord_floor(&self) -> f64 {
        FLOOR_FACTOR * f64::EPSILON * self.coord_scale
    }
}

/// Weighted RMS norm `sqrt(mean_i (dx_i / w_i)^2)` (Hairer & Wanner, Solving
/// ODEs II, §IV.8; DASSL): `pairs` yields `(dx_i, w_i)`; 0 for no pairs.
pub fn weighted_rms(pairs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (sum, count) = pairs.fold((0.0, 0usize), |(s, k), (dx, w)| {
        let r = dx / w;
        (s + r * r, k + 1)
    });
    if count == 0 {
        0.0
    } else {
        (sum / count as f64).sqrt()
    }
}

/// What a Newton iteration under the scaled test concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The iterate is accepted.
    Converged,
    /// Iterate again.
    Continue,
    /// The corrections grow: iterating further is pointless.
    Diverged,
}

/// The scaled test's state over the iterations of one step: the weighted
/// correction of the previous iteration, the growths in a row, and whether
/// any correction grew.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ScaledTest {
    prev: Option<f64>,
    growths: u32,
    grew: bool,
    /// The multipliers' weighted correction of the previous iteration, and
    /// the iterations in a row it stalled with everything else converged.
    prev_multipliers: Option<f64>,
    stalls: u32,
}

/// Contraction of the multipliers' correction at or above which it counts
/// as stalled ([`ScaledTest::judge_parts`]).
pub const STALLED_CONTRACTION: f64 = 0.5;

/// Stalled iterations in a row after which the multipliers are taken as at
/// their attainable accuracy.
pub const STALLED_ITERATIONS: u32 = 2;

impl ScaledTest {
    /// Judges an iteration with weighted correction `r` (the larger of the
    /// coordinates' and multipliers' weighted RMS norms, 1 at the tolerance)
    /// and residual ratio `res` (the residual this iteration solved for over
    /// its tolerance). Accepted when `res <= 1` and the correction, or the
    /// error estimated from the contraction rate `theta = r_k / r_{k-1}`
    /// (`theta / (1 - theta) r_k`, Hairer & Wanner §IV.8 eq. 8.10), is at
    /// most 1; divergent after [`DIVERGENT_GROWTHS`] iterations in a row with
    /// `theta >= 1`, or at a non-finite correction.
    pub fn judge(&mut self, r: f64, res: f64) -> Verdict {
        if !r.is_finite() {
            return Verdict::Diverged;
        }
        let theta = self.prev.map(|p| r / p);
        self.prev = Some(r);
        let small = r <= 1.0 || theta.is_some_and(|t| t < 1.0 && t / (1.0 - t) * r <= 1.0);
        if small && res <= 1.0 {
            return Verdict::Converged;
        }
        if !small && theta.is_some_and(|t| t >= 1.0) {
            self.growths += 1;
            self.grew = true;
        } else {
            self.growths = 0;
        }
        if self.growths >= DIVERGENT_GROWTHS {
            Verdict::Diverged
        } else {
            Verdict::Continue
        }
    }

    /// [`Self::judge`] on the larger of the coordinates' weighted correction
    /// `coords` and the multipliers' `multipliers`, except that the step is
    /// also accepted when the residual is at tolerance (`res <= 1`), the
    /// coordinates' correction is (`coords <= 1`), and the multipliers'
    /// correction has stopped contracting (`theta >= 0.5`) for
    /// [`STALLED_ITERATIONS`] iterations in a row: the multipliers are then
    /// at the accuracy the linear solve can give them. On a long chain the
    /// saddle-point system's conditioning puts that above the test's
    /// multiplier tolerance (L4 with 12,000 bodies: the multipliers'
    /// correction alternates 72.57, 72.55, ... times its tolerance with the
    /// residual at 1e-10 of its own; docs/theory/gssss.md §12).
    pub fn judge_parts(&mut self, coords: f64, multipliers: f64, res: f64) -> Verdict {
        let verdict = self.judge(coords.max(multipliers), res);
        let stalled = self
            .prev_multipliers
            .is_some_and(|p| multipliers >= STALLED_CONTRACTION * p);
        self.prev_multipliers = Some(multipliers);
        if verdict != Verdict::Continue {
            return verdict;
        }
        if stalled && res <= 1.0 && coords <= 1.0 {
            self.stalls += 1;
        } else {
            self.stalls = 0;
        }
        if self.stalls >= STALLED_ITERATIONS {
            Verdict::Converged
        } else {
            Verdict::Continue
        }
    }

    /// Whether an iteration of the step had a growing correction
    /// (`theta >= 1` short of the tolerance): its predictor started outside
    /// Newton's region of fast contraction.
    pub fn grew(&self) -> bool {
        self.grew
    }
}

#[cfg(test)]
mod tests {
    use super::{weighted_rms, Backtracking, ScaledTest, Trial, Verdict, MAX_BACKTRACKS};

    /// The weighted RMS norm of a uniform correction equals its ratio to the
    /// weight whatever the number of components (size independence).
    #[test]
    fn weighted_rms_is_size_independent() {
        for n in [1usize, 10, 1_000_000] {
            let r = weighted_rms((0..n).map(|i| (0.5e-6 * (i % 2 * 2) as f64 - 0.5e-6, 1e-6)));
            assert!((r - 0.5).abs() < 1e-12, "n = {n}: {r}");
        }
        assert_eq!(weighted_rms(std::iter::empty()), 0.0);
    }

    /// Small corrections with a small residual converge; a small correction
    /// with a large residual does not; the rate estimate accepts a fast
    /// contraction; two growths in a row diverge; a non-finite correction
    /// diverges; a growth is remembered after the iteration recovers.
    #[test]
    fn judge() {
        let mut t = ScaledTest::default();
        assert_eq!(t.judge(0.5, 0.5), Verdict::Converged);
        let mut t = ScaledTest::default();
        assert_eq!(t.judge(0.5, 2.0), Verdict::Continue);
        let mut t = ScaledTest::default();
        assert_eq!(t.judge(100.0, 10.0), Verdict::Continue);
        // theta = 0.01: 0.01 / 0.99 * 1.5 <= 1.
        assert_eq!(t.judge(1.5, 0.5), Verdict::Converged);
        assert!(!t.grew());
        // 707 -> 23,750 -> 0.8 (L1 at 10,000 elements, step 1).
        let mut t = ScaledTest::default();
        assert_eq!(t.judge(707.0, 1e6), Verdict::Continue);
        assert_eq!(t.judge(23750.0, 1e6), Verdict::Continue);
        assert_eq!(t.judge(0.8, 0.5), Verdict::Converged);
        assert!(t.grew());
        let mut t = ScaledTest::default();
        assert_eq!(t.judge(10.0, 10.0), Verdict::Continue);
        assert_eq!(t.judge(20.0, 10.0), Verdict::Continue);
        assert_eq!(t.judge(15.0, 10.0), Verdict::Continue);
        assert_eq!(t.judge(30.0, 10.0), Verdict::Continue);
        assert_eq!(t.judge(60.0, 10.0), Verdict::Diverged);
        let mut t = ScaledTest::default();
        assert_eq!(t.judge(f64::NAN, 1.0), Verdict::Diverged);
    }

    /// The line search accepts the predictor, a correction that decreases
    /// the residual by the Armijo factor, halves one that does not (down to
    /// 2^-10), fails after that, and starts each correction at the full step.
    #[test]
    fn backtracking() {
        let mut b = Backtracking::default();
        assert_eq!(b.judge(100.0), Trial::Accept);
        // A full correction that raises the residual: halved, then accepted.
        assert_eq!(b.judge(150.0), Trial::Shorten { by: -0.5 });
        assert_eq!(b.judge(99.999), Trial::Shorten { by: -0.25 });
        assert_eq!(b.judge(99.99), Trial::Accept);
        // The next correction starts at alpha = 1 from the new base.
        assert_eq!(b.halvings(), 0);
        assert_eq!(b.judge(99.98), Trial::Accept);
        // A non-finite residual is shortened, then gives up.
        for k in 1..=MAX_BACKTRACKS {
            let by = -0.5f64.powi(k as i32);
            assert_eq!(b.judge(f64::NAN), Trial::Shorten { by });
        }
        assert_eq!(b.judge(1e9), Trial::Failed);
        b.rebase(1e9);
        assert_eq!(b.judge(1e8), Trial::Accept);
    }

    /// Multipliers whose correction stalls with the residual and the
    /// coordinates converged are accepted after two stalled iterations; a
    /// stall with the residual or the coordinates short of tolerance, or a
    /// contracting multiplier correction, is not.
    #[test]
    fn judge_parts() {
        // L4 with 12,000 bodies: 4121, then 72.57, 72.55, 72.57 with the
        // residual at 1e-8 to 1e-10 of its tolerance.
        let mut t = ScaledTest::default();
        assert_eq!(t.judge_parts(0.1, 4121.0, 0.2), Verdict::Continue);
        assert_eq!(t.judge_parts(1e-3, 72.57, 2.5e-8), Verdict::Continue);
        assert_eq!(t.judge_parts(1e-3, 72.55, 5.2e-10), Verdict::Continue);
        assert_eq!(t.judge_parts(1e-3, 72.57, 5.2e-10), Verdict::Converged);
        // The residual short of tolerance: no acceptance (a slow contraction,
        // theta 0.99, so that judge does not count growths).
        let mut t = ScaledTest::default();
        for k in 0..5 {
            let m = 72.0 * 0.99f64.powi(k);
            assert_eq!(t.judge_parts(1e-3, m, 3.0), Verdict::Continue);
        }
        // The coordinates short of tolerance: no acceptance.
        let mut t = ScaledTest::default();
        for k in 0..5 {
            let m = 72.0 * 0.99f64.powi(k);
            assert_eq!(
                t.judge_parts(2.0 * 0.99f64.powi(k), m, 0.5),
                Verdict::Continue
            );
        }
        // A contracting multiplier correction: accepted only by the usual test.
        let mut t = ScaledTest::default();
        assert_eq!(t.judge_parts(1e-3, 1000.0, 0.5), Verdict::Continue);
        assert_eq!(t.judge_parts(1e-3, 400.0, 0.5), Verdict::Continue);
        assert_eq!(t.judge_parts(1e-3, 200.0, 0.5), Verdict::Continue);
        assert_eq!(t.judge_parts(1e-3, 1.5, 0.5), Verdict::Converged);
    }
}
