//! Where a step's Newton iteration starts, and which start the next step
//! tries first (docs/theory/gssss.md §12).
//!
//! Two predictors: the scheme's own (the Newton unknown at zero) and the
//! displacement predictor `u_{n+1} = u_n`. On a stiff model the scheme's
//! predictor can carry the stiff modes of `a_n` into `u_{n+1}`, and Newton
//! from there diverges or first overshoots (a growing correction); the
//! displacement predictor discards them but ignores the velocity, so its
//! residual grows as the motion speeds up. [`PredictorChoice`] keeps the one
//! that works and retries the other now and then.

/// Where a step's Newton iteration starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Predictor {
    /// The scheme's unknown at zero: `a_{n+1} = a_n` in the a-form,
    /// `v_{n+1} = v_n` in the v-form, `u_{n+1} = u_n` in the d-form.
    Unknown,
    /// `u_{n+1} = u_n` in every form.
    Displacement,
}

impl Predictor {
    /// The other predictor.
    pub fn other(self) -> Self {
        match self {
            Predictor::Unknown => Predictor::Displacement,
            Predictor::Displacement => Predictor::Unknown,
        }
    }
}

/// Converged steps on the other predictor before a predictor left after a
/// growing correction is tried again; each retry that grows again doubles it.
pub const RETRY_AFTER: u32 = 8;

/// How a step went, as far as the choice of the next predictor is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Converged from the predictor tried first, with every correction
    /// contracting.
    Converged,
    /// Converged from the predictor tried first after a growing correction
    /// (`theta >= 1` short of the tolerance).
    ConvergedAfterGrowth,
    /// Failed from the predictor tried first, converged from the other one.
    Restarted,
}

/// The predictor a step tries first (the scaled test's policy): the one that
/// converged last, except that a step that converged only after a growing
/// correction hands the next steps to the other predictor, and that
/// predictor is retried after [`RETRY_AFTER`] steps (then twice as many
/// after each retry that grows again). A restart after a failure switches
/// for good, as before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PredictorChoice {
    first: Predictor,
    /// The predictor left after a growing correction, the converged steps
    /// until it is retried, and the current wait.
    retry: Option<(Predictor, u32, u32)>,
}

impl Default for PredictorChoice {
    fn default() -> Self {
        PredictorChoice {
            first: Predictor::Unknown,
            retry: None,
        }
    }
}

impl PredictorChoice {
    /// The predictor the next step tries first.
    pub fn first(&self) -> Predictor {
        self.first
    }

    /// Records how the step that tried [`Self::first`] went.
    pub fn record(&mut self, outcome: Outcome) {
        let tried = self.first;
        let retrying = self.retry.is_some_and(|(p, ..)| p == tried);
        match outcome {
            Outcome::Restarted => {
                self.first = tried.other();
                self.retry = None;
            }
            Outcome::ConvergedAfterGrowth => {
                let wait = match self.retry {
                    Some((_, _, wait)) if retrying => 2 * wait,
                    _ => RETRY_AFTER,
                };
                self.first = tried.other();
                self.retry = Some((tried, wait, wait));
            }
            Outcome::Converged if retrying => self.retry = None,
            Outcome::Converged => {
                if let Some((p, left, wait)) = self.retry {
                    if left <= 1 {
                        self.first = p;
                        self.retry = Some((p, 0, wait));
                    } else {
                        self.retry = Some((p, left - 1, wait));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Outcome, Predictor, PredictorChoice, RETRY_AFTER};

    /// Steps until the choice returns to `p`, recording `Converged` on the
    /// other predictor.
    fn steps_until(c: &mut PredictorChoice, p: Predictor) -> u32 {
        let mut n = 0;
        while c.first() != p {
            c.record(Outcome::Converged);
            n += 1;
            assert!(n < 1000);
        }
        n
    }

    /// A growth switches to the other predictor; the first one is retried
    /// after RETRY_AFTER steps, then after twice as many each time it grows
    /// again; a retry that contracts keeps it.
    #[test]
    fn growth_switches_and_retries_with_backoff() {
        let mut c = PredictorChoice::default();
        assert_eq!(c.first(), Predictor::Unknown);
        c.record(Outcome::Converged);
        assert_eq!(c.first(), Predictor::Unknown);
        c.record(Outcome::ConvergedAfterGrowth);
        assert_eq!(c.first(), Predictor::Displacement);
        assert_eq!(steps_until(&mut c, Predictor::Unknown), RETRY_AFTER);
        c.record(Outcome::ConvergedAfterGrowth);
        assert_eq!(c.first(), Predictor::Displacement);
        assert_eq!(steps_until(&mut c, Predictor::Unknown), 2 * RETRY_AFTER);
        c.record(Outcome::ConvergedAfterGrowth);
        assert_eq!(steps_until(&mut c, Predictor::Unknown), 4 * RETRY_AFTER);
        // The retry contracts: it stays, and nothing is pending.
        c.record(Outcome::Converged);
        for _ in 0..100 {
            assert_eq!(c.first(), Predictor::Unknown);
            c.record(Outcome::Converged);
        }
        // A later growth starts the wait afresh.
        c.record(Outcome::ConvergedAfterGrowth);
        assert_eq!(steps_until(&mut c, Predictor::Unknown), RETRY_AFTER);
    }

    /// A growth on the displacement predictor switches the other way; a
    /// restart after a failure switches for good.
    #[test]
    fn restart_switches_for_good() {
        let mut c = PredictorChoice::default();
        c.record(Outcome::Restarted);
        assert_eq!(c.first(), Predictor::Displacement);
        for _ in 0..100 {
            c.record(Outcome::Converged);
            assert_eq!(c.first(), Predictor::Displacement);
        }
        c.record(Outcome::ConvergedAfterGrowth);
        assert_eq!(c.first(), Predictor::Unknown);
        assert_eq!(steps_until(&mut c, Predictor::Displacement), RETRY_AFTER);
    }
}
