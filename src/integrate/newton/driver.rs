//! The one Newton iteration of the implicit one-step methods (GSSSS and the
//! two-field midpoint scheme, TCG, TDG, alpha–kappa): [`solve`] owns the
//! convergence tests ([`NewtonStop`], [`ScaledTest`], or the system's own:
//! [`NonlinearSystem::verdict`], before the solve with
//! [`NonlinearSystem::TESTS_FIRST`]), the refresh policy of
//! the Newton matrix ([`Refactor`], modified Newton), the backtracking line
//! search ([`Backtracking`], docs/theory/gssss.md §12a), divergence handling
//! and the statistics; a method supplies its equations through
//! [`NonlinearSystem`]. Used by the one-step methods, BDF's corrector
//! ([`crate::integrate::bdf`]) and statics ([`crate::statics`]) (docs/theory/gssss.md §12; Hoitink eq. 2.14; Hairer
//! & Wanner, Solving ODEs II, §IV.8; Dennis & Schnabel 1983, §6.3).
//!
//! One iteration `k`: assemble the residual `R(x_k)` (and the matrix when it
//! is refreshed); under the line search judge the residual's scaled 2-norm
//! against the last accepted iterate's and, while it has not fallen by the
//! Armijo factor, move back along the correction by halves; factor the
//! matrix when refreshed; solve `J dx = -R(x_k)`; move to `x_k + dx`; judge
//! the correction with the stop test.

use std::time::{Duration, Instant};

use super::{
    Backtracking, LineSearch, NewtonStop, NewtonTimings, Refactor, ScaledTest, Trial, Verdict,
    DIVERGENT_GROWTHS, MAX_BACKTRACKS,
};

/// The equations of one step, at an iterate the system holds.
pub trait NonlinearSystem {
    /// The error of a failed assembly, factorization or solve (a singular
    /// matrix).
    type Error;

    /// Whether the stop test is judged before the solve, on the iterate
    /// just assembled ([`Self::accepts_iterate`]; statics: converged when the
    /// residual at the current iterate already passes): `max_iter` then
    /// counts solves, and the iterate of the last one is judged too.
    const TESTS_FIRST: bool = false;

    /// Assembles the residual at the current iterate, and the Newton matrix
    /// when `matrix`; returns the residual's largest absolute entry.
    fn assemble(&mut self, matrix: bool) -> Result<f64, Self::Error>;

    /// Whether iteration `iteration` (1-based) assembles and factors the
    /// Newton matrix, given the policy's answer `policy` (true at the first
    /// iteration of a call): by default the policy's; DASSL's BDF keeps its
    /// matrix across iterations and steps and decides itself.
    fn refresh(&mut self, _iteration: u32, policy: bool) -> bool {
        policy
    }

    /// Under [`Self::TESTS_FIRST`]: whether the iterate just assembled
    /// passes the system's stop test.
    fn accepts_iterate(&mut self) -> bool {
        false
    }

    /// The system's own stop test after the correction of iteration
    /// `iteration` (1-based), in place of the policy's (DASSL's rate test of
    /// BDF); `None`, the default: the policy's.
    fn verdict(&mut self, _correction: &Correction, _iteration: u32) -> Option<Verdict> {
        None
    }

    /// The residual over its tolerance (the scaled test's residual
    /// condition, at most 1 when converged), after an [`Self::assemble`]
    /// whose residual is finite. Called under [`NewtonStop::Scaled`] only; a
    /// system with its own test ([`Self::verdict`]) keeps the default, NaN.
    fn residual_ratio(&mut self) -> f64 {
        f64::NAN
    }

    /// The line search's merit: the residual's scaled 2-norm (infinite when
    /// not finite), after [`Self::residual_ratio`]. Its weights must be fixed
    /// over the iterations of one call of [`solve`]. Called under the line
    /// search only (default: NaN, no decrease ever found).
    fn merit(&mut self) -> f64 {
        f64::NAN
    }

    /// Factors the assembled Newton matrix.
    fn factor(&mut self) -> Result<(), Self::Error>;

    /// Solves the Newton correction `J dx = -R` with the last factorization
    /// (the system keeps `dx`).
    fn solve(&mut self) -> Result<(), Self::Error>;

    /// Adds `by` times the last correction to the iterate (`by = 1` applies
    /// it; the line search moves back along it with `by < 0`).
    fn move_along(&mut self, by: f64);

    /// The size of the last correction, applied, in units of its tolerance.
    fn correction(&mut self) -> Correction;
}

/// The size of a correction over its tolerance: the stop tests' `r`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Correction {
    /// The largest ratio (coordinates and multipliers together).
    pub ratio: f64,
    /// Under the scaled test, the coordinates' and the multipliers' weighted
    /// corrections apart, when the multipliers may be accepted at their
    /// attainable accuracy ([`ScaledTest::judge_parts`]); `None`: judged on
    /// `ratio` alone ([`ScaledTest::judge`]).
    pub parts: Option<(f64, f64)>,
}

/// What [`solve`] does: the iteration limit and the policies of the
/// iteration (from [`super::NewtonSettings`], or a method's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Iterations at most.
    pub max_iter: u32,
    /// The stop test.
    pub stop: NewtonStop,
    /// When the matrix is refreshed.
    pub refactor: Refactor,
    /// Globalization (under the scaled test only).
    pub line_search: LineSearch,
}

impl Policy {
    /// Newton's method with a fresh matrix each iteration, at most
    /// `max_iter` iterations, no line search: the policy of a system that
    /// judges its iterates itself ([`NonlinearSystem::verdict`]) and may
    /// decide its refreshes ([`NonlinearSystem::refresh`]).
    pub const fn newton(max_iter: u32) -> Self {
        Policy {
            max_iter,
            stop: NewtonStop::Increment,
            refactor: Refactor::Iteration,
            line_search: LineSearch::None,
        }
    }
}

/// Statistics of the iterations, accumulated over calls of [`solve`] (the
/// caller resets them, e.g. per step); `history` is that of the last call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Newton iterations.
    pub iterations: u32,
    /// Factorizations of the Newton matrix.
    pub factorizations: u32,
    /// Halvings of corrections by the line search.
    pub backtracks: u32,
    /// Per iteration of the last call: the residual's largest entry and the
    /// correction's ratio (NaN when none was solved).
    pub history: Vec<(f64, f64)>,
}

impl Stats {
    /// Empty statistics whose history holds `max_iter` iterations without
    /// allocating.
    pub fn with_capacity(max_iter: u32) -> Self {
        Stats {
            history: Vec::with_capacity(max_iter as usize),
            ..Stats::default()
        }
    }

    /// Adds the counts of one call (the factorizations to `timings` too).
    fn add(
        &mut self,
        iterations: u32,
        factorizations: u32,
        backtracks: u32,
        timings: Option<&mut NewtonTimings>,
    ) {
        self.iterations += iterations;
        self.factorizations += factorizations;
        self.backtracks += backtracks;
        if let Some(t) = timings {
            t.factorizations += u64::from(factorizations);
        }
    }

    /// Zeroes the counts (not the history).
    pub fn reset(&mut self) {
        self.iterations = 0;
        self.factorizations = 0;
        self.backtracks = 0;
    }
}

/// A converged iteration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// Iterations of this call.
    pub iterations: u32,
    /// The residual's largest entry at the last assembly.
    pub residual: f64,
    /// Whether a correction grew under the scaled test (the start was
    /// outside Newton's region of fast contraction).
    pub grew: bool,
}

/// Why [`solve`] stopped without converging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The residual became non-finite.
    NonFinite,
    /// The weighted correction grew [`DIVERGENT_GROWTHS`] times in a row.
    Diverged,
    /// `max_iter` iterations did not converge.
    MaxIter,
    /// The line search found no decrease along a correction solved with a
    /// fresh matrix.
    LineSearch,
}

impl Cause {
    /// Why an iteration stopped short, from the residual of its last
    /// assembly, whether the line search failed, and whether it stopped
    /// before the iteration limit.
    fn of(last: f64, search_failed: bool, early: bool) -> Self {
        if !last.is_finite() {
            Cause::NonFinite
        } else if search_failed {
            Cause::LineSearch
        } else if early {
            Cause::Diverged
        } else {
            Cause::MaxIter
        }
    }
}

/// A failed iteration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Failure<E> {
    /// The factorization or a solve failed.
    Error(E),
    /// The iteration stopped.
    Stopped {
        /// Why.
        cause: Cause,
        /// Iterations of this call.
        iterations: u32,
        /// The iteration limit.
        max_iter: u32,
        /// As [`Outcome::grew`].
        grew: bool,
    },
}

impl<E> Failure<E> {
    /// The reason of a stopped iteration in words; `context`, when given,
    /// follows the iteration number in parentheses after a divergence or a
    /// failed line search (e.g. `"; after a restart from the other predictor"`).
    /// `None` for [`Failure::Error`].
    pub fn reason(&self, context: Option<&str>) -> Option<String> {
        let Failure::Stopped {
            cause,
            iterations,
            max_iter,
            ..
        } = *self
        else {
            return None;
        };
        let at = context.map_or(String::new(), |c| format!(" (iteration {iterations}{c})"));
        Some(match cause {
            Cause::LineSearch => format!(
                "the line search found no decrease of the residual along the correction in \
                 {MAX_BACKTRACKS} halvings{at}"
            ),
            Cause::Diverged => format!(
                "divergence: the weighted correction grew in {DIVERGENT_GROWTHS} iterations in a \
                 row{at}"
            ),
            Cause::MaxIter => format!("no convergence in {max_iter} iterations"),
            Cause::NonFinite => "the residual became non-finite".to_string(),
        })
    }
}

/// Newton's iteration on `system` from its current iterate (module doc);
/// counts go to `stats` (its history is cleared first), the time split to
/// `timings` when measured.
pub fn solve<S: NonlinearSystem>(
    system: &mut S,
    policy: &Policy,
    stats: &mut Stats,
    mut timings: Option<&mut NewtonTimings>,
) -> Result<Outcome, Failure<S::Error>> {
    let scaled = policy.stop == NewtonStop::Scaled;
    let search = scaled && policy.line_search == LineSearch::Backtracking;
    let mut test = ScaledTest::default();
    let mut line = Backtracking::default();
    stats.history.clear();
    let mut residual_norm = f64::NAN;
    let mut residual_ratio = 0.0;
    let mut iterations = 0;
    let mut factorizations = 0;
    let mut backtracks = 0;
    let mut prev_ratio = None;
    let mut refresh = true;
    // Whether the last correction was solved with a matrix factored in its
    // own iteration, and whether the line search failed.
    let mut fresh = false;
    let mut search_failed = false;
    let mut converged = false;
    let mut error = None;
    'iterate: while S::TESTS_FIRST || iterations < policy.max_iter {
        if !S::TESTS_FIRST {
            iterations += 1;
        }
        refresh = system.refresh(iterations + u32::from(S::TESTS_FIRST), refresh);
        // Each pass assembles the residual at the current iterate; the line
        // search may move the iterate back along the last correction and ask
        // for another pass.
        let mut rebased = false;
        let clock = loop {
            let clock = timings.is_some().then(Instant::now);
            residual_norm = match system.assemble(refresh) {
                Ok(norm) => norm,
                Err(e) => {
                    error = Some(e);
                    break 'iterate;
                }
            };
            let clock = lap(clock, timings.as_deref_mut().map(|t| &mut t.assembly));
            if scaled && residual_norm.is_finite() {
                residual_ratio = system.residual_ratio();
            }
            if !search || rebased {
                break clock;
            }
            match backtrack(system, &mut line, fresh) {
                Trial::Accept => break clock,
                Trial::Shorten { .. } => backtracks += 1,
                Trial::Failed => {
                    search_failed = true;
                    break clock;
                }
                Trial::Rebased => {
                    refresh = true;
                    rebased = true;
                }
            }
        };
        if !residual_norm.is_finite() || search_failed {
            stats.history.push((residual_norm, f64::NAN));
            break;
        }
        if S::TESTS_FIRST {
            if system.accepts_iterate() {
                converged = true;
                break;
            }
            if iterations == policy.max_iter {
                break;
            }
            iterations += 1;
        }
        fresh = refresh;
        if refresh {
            if let Err(e) = system.factor() {
                error = Some(e);
                break;
            }
            factorizations += 1;
        }
        let clock = lap(clock, timings.as_deref_mut().map(|t| &mut t.factorization));
        if let Err(e) = system.solve() {
            error = Some(e);
            break;
        }
        lap(clock, timings.as_deref_mut().map(|t| &mut t.solve));
        system.move_along(1.0);
        let c = system.correction();
        let ratio = c.ratio;
        stats.history.push((residual_norm, ratio));
        let verdict = match system.verdict(&c, iterations) {
            Some(verdict) => verdict,
            None if scaled => {
                let verdict = match c.parts {
                    Some((coords, multipliers)) => {
                        test.judge_parts(coords, multipliers, residual_ratio)
                    }
                    None => test.judge(ratio, residual_ratio),
                };
                // Under the line search a growing correction is not
                // divergence: the residual still falls along it.
                if verdict == Verdict::Diverged && search && ratio.is_finite() {
                    Verdict::Continue
                } else {
                    verdict
                }
            }
            None if policy.stop.accepts(ratio, prev_ratio) => Verdict::Converged,
            None => Verdict::Continue,
        };
        match verdict {
            Verdict::Converged => {
                converged = true;
                break;
            }
            Verdict::Diverged => break,
            Verdict::Continue => {}
        }
        refresh = policy.refactor.refresh_after(ratio, prev_ratio);
        prev_ratio = Some(ratio);
    }
    if let Some(e) = error {
        return Err(Failure::Error(e));
    }
    stats.add(iterations, factorizations, backtracks, timings);
    let grew = test.grew();
    if converged {
        return Ok(Outcome {
            iterations,
            residual: residual_norm,
            grew,
        });
    }
    let last = stats.history.last().map_or(f64::NAN, |h| h.0);
    Err(Failure::Stopped {
        cause: Cause::of(last, search_failed, iterations < policy.max_iter),
        iterations,
        max_iter: policy.max_iter,
        grew,
    })
}

/// The line search's judgement of the iterate just assembled (module doc):
/// accepted, moved back along the correction ([`Trial::Shorten`], done
/// here), failed (with a fresh matrix, or at a non-finite residual), or
/// [`Trial::Rebased`]: failed with an outdated matrix (modified Newton), so
/// the iteration goes on from here with a fresh one.
fn backtrack<S: NonlinearSystem>(system: &mut S, line: &mut Backtracking, fresh: bool) -> Trial {
    let merit = system.merit();
    match line.judge(merit) {
        Trial::Shorten { by } => {
            system.move_along(by);
            Trial::Shorten { by }
        }
        Trial::Failed if !fresh && merit.is_finite() => {
            line.rebase(merit);
            Trial::Rebased
        }
        trial => trial,
    }
}

/// The scaled 2-norm `sqrt(sum_b sum_i (w_b e_i)^2)` of a residual given as
/// blocks `(e, w_b)` (the line search's merit, docs/theory/gssss.md §12a);
/// infinite when not finite.
pub fn scaled_l2<'a>(blocks: impl IntoIterator<Item = (&'a [f64], f64)>) -> f64 {
    let sum = blocks
        .into_iter()
        .map(|(e, w)| e.iter().map(|x| (x * w).powi(2)).sum::<f64>())
        .sum::<f64>();
    if sum.is_finite() {
        sum.sqrt()
    } else {
        f64::INFINITY
    }
}

/// Adds the time since `since` to `into` (when measuring) and restarts the clock.
fn lap(since: Option<Instant>, into: Option<&mut Duration>) -> Option<Instant> {
    let (since, into) = (since?, into?);
    let now = Instant::now();
    *into += now - since;
    Some(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x^3 - 2 = 0` from `x0`, or `atan(x) = 0` (diverges under full
    /// corrections from |x0| > 1.39), with a multiplier-free correction.
    struct Scalar {
        x: f64,
        r: f64,
        j: f64,
        dx: f64,
        atan: bool,
    }

    impl Scalar {
        fn at(x: f64, atan: bool) -> Self {
            Scalar {
                x,
                r: 0.0,
                j: 0.0,
                dx: 0.0,
                atan,
            }
        }
    }

    impl NonlinearSystem for Scalar {
        type Error = ();
        fn assemble(&mut self, matrix: bool) -> Result<f64, ()> {
            let (r, j) = if self.atan {
                (self.x.atan(), 1.0 / (1.0 + self.x * self.x))
            } else {
                (self.x.powi(3) - 2.0, 3.0 * self.x * self.x)
            };
            self.r = r;
            if matrix {
                self.j = j;
            }
            Ok(r.abs())
        }
        fn residual_ratio(&mut self) -> f64 {
            self.r.abs() / 1e-10
        }
        fn merit(&mut self) -> f64 {
            scaled_l2([(&[self.r][..], 1e10)])
        }
        fn factor(&mut self) -> Result<(), ()> {
            if self.j == 0.0 {
                Err(())
            } else {
                Ok(())
            }
        }
        fn solve(&mut self) -> Result<(), ()> {
            self.dx = -self.r / self.j;
            Ok(())
        }
        fn move_along(&mut self, by: f64) {
            self.x += by * self.dx;
        }
        fn correction(&mut self) -> Correction {
            Correction {
                ratio: self.dx.abs() / (1e-10 * (1.0 + self.x.abs())),
                parts: None,
            }
        }
    }

    fn policy(line_search: LineSearch, refactor: Refactor) -> Policy {
        Policy {
            max_iter: 50,
            stop: NewtonStop::Scaled,
            refactor,
            line_search,
        }
    }

    /// Solves from `x0` (`atan`: `atan(x) = 0`, else `x^3 = 2`) with
    /// fresh statistics.
    fn run(
        x0: f64,
        atan: bool,
        line_search: LineSearch,
        refactor: Refactor,
    ) -> (Scalar, Stats, Result<Outcome, Failure<()>>) {
        let mut stats = Stats::with_capacity(50);
        let mut s = Scalar::at(x0, atan);
        let out = solve(&mut s, &policy(line_search, refactor), &mut stats, None);
        (s, stats, out)
    }

    /// Newton converges on a smooth root quadratically; modified Newton
    /// needs more iterations and fewer factorizations.
    #[test]
    fn converges() {
        let (s, stats, out) = run(1.0, false, LineSearch::None, Refactor::Iteration);
        let out = out.unwrap();
        assert!((s.x - 2f64.cbrt()).abs() < 1e-12, "{}", s.x);
        assert!(out.iterations <= 8, "{out:?}");
        assert_eq!(stats.factorizations, out.iterations);
        let (s, stats, out) = run(1.2, false, LineSearch::None, Refactor::Step);
        let out = out.unwrap();
        assert!((s.x - 2f64.cbrt()).abs() < 1e-12, "{}", s.x);
        assert!(stats.factorizations < out.iterations, "{stats:?}");
    }

    /// Full corrections of `atan(x) = 0` from x0 = 3 diverge (the iterates
    /// alternate in sign and grow); the line search converges, with
    /// backtracks; the failure names its cause.
    #[test]
    fn line_search_converges_where_full_corrections_diverge() {
        let (_, _, fail) = run(3.0, true, LineSearch::None, Refactor::Iteration);
        let fail = fail.unwrap_err();
        assert!(
            matches!(
                fail,
                Failure::Stopped {
                    cause: Cause::Diverged,
                    ..
                }
            ),
            "{fail:?}"
        );
        let reason = fail.reason(Some("; test")).unwrap();
        assert!(
            reason.starts_with("divergence") && reason.ends_with("; test)"),
            "{reason}"
        );
        assert!(fail.reason(None).unwrap().ends_with("in a row"));
        let (s, stats, out) = run(3.0, true, LineSearch::Backtracking, Refactor::Iteration);
        out.unwrap();
        assert!(s.x.abs() < 1e-9, "{}", s.x);
        assert!(stats.backtracks > 0);
    }

    /// `x^3 = 2` judged before each solve (statics' test): `|r| <= 1e-12`
    /// at the iterate, no test after a correction.
    struct First(Scalar, u32);

    impl NonlinearSystem for First {
        type Error = ();
        const TESTS_FIRST: bool = true;
        fn assemble(&mut self, matrix: bool) -> Result<f64, ()> {
            self.1 += 1;
            self.0.assemble(matrix)
        }
        fn accepts_iterate(&mut self) -> bool {
            self.0.r.abs() <= 1e-12
        }
        fn residual_ratio(&mut self) -> f64 {
            self.0.residual_ratio()
        }
        fn merit(&mut self) -> f64 {
            self.0.merit()
        }
        fn factor(&mut self) -> Result<(), ()> {
            self.0.factor()
        }
        fn solve(&mut self) -> Result<(), ()> {
            self.0.solve()
        }
        fn move_along(&mut self, by: f64) {
            self.0.move_along(by)
        }
        fn correction(&mut self) -> Correction {
            self.0.correction()
        }
        fn verdict(&mut self, _: &Correction, _: u32) -> Option<Verdict> {
            Some(Verdict::Continue)
        }
    }

    /// Test before solve: an iterate that passes needs no solve; the count
    /// is of solves; the iterate of the last allowed solve is judged too
    /// (`max_iter + 1` assemblies), and failing it stops at `MaxIter`.
    #[test]
    fn tests_first() {
        let mut stats = Stats::with_capacity(50);
        let mut p = policy(LineSearch::None, Refactor::Iteration);
        let mut at_root = First(Scalar::at(2f64.cbrt(), false), 0);
        // The cube of the rounded root is 2 to round-off.
        let out = solve(&mut at_root, &p, &mut stats, None).unwrap();
        assert_eq!((out.iterations, at_root.1), (0, 1));
        let mut s = First(Scalar::at(1.0, false), 0);
        let out = solve(&mut s, &p, &mut stats, None).unwrap();
        assert!(out.iterations > 0 && s.1 == out.iterations + 1, "{out:?}");
        assert!((s.0.x - 2f64.cbrt()).abs() < 1e-12);
        p.max_iter = 2;
        let mut s = First(Scalar::at(1.0, false), 0);
        let fail = solve(&mut s, &p, &mut stats, None).unwrap_err();
        assert_eq!(
            fail,
            Failure::Stopped {
                cause: Cause::MaxIter,
                iterations: 2,
                max_iter: 2,
                grew: false
            }
        );
        assert_eq!(s.1, 3);
    }

    /// A singular matrix is the system's error; a non-finite residual stops.
    #[test]
    fn errors() {
        let (_, _, out) = run(0.0, false, LineSearch::None, Refactor::Iteration);
        assert_eq!(out, Err(Failure::Error(())));
        let (_, stats, fail) = run(f64::NAN, false, LineSearch::None, Refactor::Iteration);
        let fail = fail.unwrap_err();
        assert!(matches!(
            fail,
            Failure::Stopped {
                cause: Cause::NonFinite,
                ..
            }
        ));
        assert_eq!(stats.history.len(), 1);
    }
}
