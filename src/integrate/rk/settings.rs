//! The settings of the explicit Runge–Kutta methods: what
//! [`super::RungeKutta`] is built from (read and checked by
//! [`crate::integrate::settings`]).

use super::Tableau;
use crate::integrate::projector::{Metric, Passes};

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
