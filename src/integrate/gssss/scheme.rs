//! One-step schemes as linear forms, shared by the GSSSS family and the
//! two-field midpoint scheme.
//!
//! Every quantity of a step is written as a linear form in
//! `(u_n, v_n, a_n, da)` with `da = a_{n+1} - a_n`:
//! `X = x0 u_n + x1 v_n + x2 a_n + x3 da`. The Newton unknown of the chosen
//! form (a-, v- or d-form, Hoitink Table 2.2) is another such form `delta`
//! with `delta = 0` at the predictor. Eliminating `da` gives the predictor
//! coefficients `chi_P` and corrector coefficients `chi_C` of eqs. 3.14–3.27:
//! `X = chi_P . (u_n, v_n, a_n) + chi_C delta`, `chi_C = x3 / delta3`.

use crate::element::LevelWeights;

/// A linear form `x0 u_n + x1 v_n + x2 a_n + x3 da`.
pub type Form = [f64; 4];

/// The linear forms of one step of a one-step scheme with step size dt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinearScheme {
    /// u_{n+1}.
    pub u_next: Form,
    /// u~ (EOM time level).
    pub u_tilde: Form,
    /// v~.
    pub v_tilde: Form,
    /// a~.
    pub a_tilde: Form,
    /// v_{n+1}.
    pub v_next: Form,
    /// The Newton unknown (form-dependent; zero at the predictor).
    pub unknown: Form,
    /// W1: weight of parameters-outside terms, EOM at t_n + W1 dt.
    pub w1: f64,
    /// Time shift of the acceleration variable: `a_{n+1} ~ a(t_{n+1} + s dt)`.
    pub accel_shift: f64,
}

/// Predictor and corrector coefficients of one quantity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PredCorr {
    /// chi_P for (u_n, v_n, a_n).
    pub p: [f64; 3],
    /// chi_C.
    pub c: f64,
}

impl PredCorr {
    /// chi_P . (u, v, a).
    #[inline]
    pub fn predict(&self, u: f64, v: f64, a: f64) -> f64 {
        self.p[0] * u + self.p[1] * v + self.p[2] * a
    }
}

impl LinearScheme {
    /// Predictor/corrector coefficients of form `x` for the scheme's unknown.
    pub fn pred_corr(&self, x: &Form) -> PredCorr {
        let d = &self.unknown;
        let c = x[3] / d[3];
        PredCorr {
            p: [x[0] - c * d[0], x[1] - c * d[1], x[2] - c * d[2]],
            c,
        }
    }

    /// Weights placing displacement-level quantities at the EOM time level:
    /// `u~ = u_n + c1dt v_n + c2dt2 a_n + c3 (u_{n+1} - u_n)`.
    pub fn level_weights(&self) -> LevelWeights {
        let c3 = self.u_tilde[3] / self.u_next[3];
        LevelWeights {
            c1dt: self.u_tilde[1] - c3 * self.u_next[1],
            c2dt2: self.u_tilde[2] - c3 * self.u_next[2],
            c3,
        }
    }

    /// d u_{n+1} / d da: converts displacement increments to acceleration units.
    pub fn accel_scale(&self) -> f64 {
        self.u_next[3]
    }
}

/// How the constraint force `B^T lambda` is placed at the EOM time level
/// (Hoitink §3.5, eqs. 3.8–3.11, and one extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConstraintOption {
    /// Parameters outside B and lambda: `(1-W1) B_n^T l_n + W1 B_{n+1}^T l_{n+1}`.
    One,
    /// Parameters inside both: `B(u~)^T l_{n+W1}`.
    Two,
    /// B outside, lambda inside: `[(1-W1) B_n + W1 B_{n+1}]^T l_{n+W1}`.
    Three,
    /// B inside, lambda outside: `B(u~)^T [(1-W1) l_n + W1 l_{n+1}]`.
    Four,
    /// Extension of the seed's options for the midpoint schemes (`dg`):
    /// `B_d(u_n, u_{n+1})^T l_{n+1/2}` with Gonzalez's discrete derivative
    /// `B_d,r = B_r(u~) + [(Phi_r(u_{n+1}) - Phi_r(u_n) - B_r(u~).du) / |du|^2] du^T`
    /// (Gonzalez 1999, Physica D 132), so that `B_d du = Phi(u_{n+1}) - Phi(u_n)`
    /// and the constraint force does no work over a step.
    Gonzalez,
}

impl ConstraintOption {
    /// Option from its name: `1`..`4` or `dg`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "1" => Some(ConstraintOption::One),
            "2" => Some(ConstraintOption::Two),
            "3" => Some(ConstraintOption::Three),
            "4" => Some(ConstraintOption::Four),
            "dg" => Some(ConstraintOption::Gonzalez),
            _ => None,
        }
    }

    /// The option's name: `1`..`4` or `dg`.
    pub fn name(self) -> &'static str {
        match self {
            ConstraintOption::One => "1",
            ConstraintOption::Two => "2",
            ConstraintOption::Three => "3",
            ConstraintOption::Four => "4",
            ConstraintOption::Gonzalez => "dg",
        }
    }

    /// Whether the multipliers live at t_{n+W1} (options 2, 3 and dg).
    pub fn lambda_inside(self) -> bool {
        matches!(
            self,
            ConstraintOption::Two | ConstraintOption::Three | ConstraintOption::Gonzalez
        )
    }
}

/// Which Newton matrix multiplies the multiplier increment (a Newton
/// setting: [`crate::integrate::newton`]).
pub use crate::integrate::newton::JacobianKind;
