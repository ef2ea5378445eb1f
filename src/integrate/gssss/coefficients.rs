//! The GSSSS family (generalized single step single solve; Hoitink §2.1,
//! Algorithms 1 and 2, Table 2.1) for the index-3 DAE (§3.6, eqs. 3.12–3.31).
//!
//! One implementation covers the U0 and V0 families for any
//! `0 <= rho3 <= rho1 <= rho2 <= 1`; the named presets of Hoitink are
//! parameter sets. [`Gssss::scheme`] turns the coefficients into the linear
//! forms of [`LinearScheme`] for the a-, v- or d-form.

use super::scheme::{Form, LinearScheme};

/// U0 (zero-order displacement overshoot) or V0 (zero-order velocity overshoot).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Algorithm 1.
    U0,
    /// Algorithm 2.
    V0,
}

/// The Newton unknown (Hoitink Table 2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolveForm {
    /// Acceleration increment.
    A,
    /// Velocity v_{n+1}.
    V,
    /// Displacement u_{n+1}.
    D,
}

/// The GSSSS coefficients of one (family, rho1, rho2, rho3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gssss {
    /// Family.
    pub family: Family,
    /// (rho1, rho2, rho3): principal roots and spurious root at infinity.
    pub rho: [f64; 3],
    /// W1, W2, W3 of the weighted time field.
    pub w: [f64; 3],
    /// Products W1 L1, W2 L2, W3 L3, W1 L4, W2 L5, W1 L6 (L = capital Lambda).
    pub wl: [f64; 6],
    /// lambda1 ..= lambda5.
    pub lam: [f64; 5],
}

/// A named preset with its parameters, e.g. `generalized-alpha(0.8)`.
pub fn preset(name: &str) -> Result<(Family, [f64; 3]), String> {
    let (base, arg) = match name.find('(') {
        Some(i) if name.ends_with(')') => {
            let v: f64 = name[i + 1..name.len() - 1]
                .trim()
                .parse()
                .map_err(|_| format!("bad parameter in scheme '{name}'"))?;
            (&name[..i], Some(v))
        }
        _ => (name, None),
    };
    let need = |a: Option<f64>| {
        a.ok_or_else(|| format!("scheme '{base}' needs a parameter, e.g. '{base}(0.8)'"))
    };
    let none = |a: Option<f64>| match a {
        None => Ok(()),
        Some(_) => Err(format!("scheme '{base}' takes no parameter")),
    };
    Ok(match base {
        "newmark" => (none(arg).map(|_| Family::U0)?, [1.0, 1.0, 0.0]),
        "midpoint-endpoint" => (none(arg).map(|_| Family::U0)?, [1.0, 1.0, 1.0]),
        "midpoint" => (none(arg).map(|_| Family::V0)?, [1.0, 1.0, 0.0]),
        "generalized-alpha" => {
            let r = need(arg)?;
            (Family::U0, [r, r, r])
        }
        "wbz" => {
            let r = need(arg)?;
            (Family::U0, [r, r, 0.0])
        }
        "hht" => {
            let r = need(arg)?;
            // Table 2.1: rho3 = (1 - rho1 rho2) / (rho1 + rho2 + 2 rho1 rho2) = (1 - r) / (2 r).
            (Family::U0, [r, r, (1.0 - r * r) / (2.0 * r + 2.0 * r * r)])
        }
        "u0v0-optimal" => {
            let r = need(arg)?;
            (Family::U0, [r, 1.0, r])
        }
        _ => {
            return Err(format!(
                "unknown scheme '{name}' (known: newmark, midpoint-endpoint, midpoint, \
                 generalized-alpha(rho), wbz(rho), hht(rho), u0v0-optimal(rho), or family + rho1..rho3)"
            ))
        }
    })
}

/// `W_i = sum_j w_j / (1 + i + j) / sum_j w_j / (1 + j)` for a cubic weight
/// `w(tau) = sum_j w_j (tau/dt)^j` (any common factor of the w_j cancels).
fn weights(wj: [f64; 4]) -> [f64; 3] {
    let moment = |i: usize| -> f64 { (0..4).map(|j| wj[j] / (1 + i + j) as f64).sum() };
    let m0 = moment(0);
    [moment(1) / m0, moment(2) / m0, moment(3) / m0]
}

impl Gssss {
    /// Coefficients of `family` with roots `rho`; checks `0 <= rho3 <= rho1 <= rho2 <= 1`.
    pub fn new(family: Family, rho: [f64; 3]) -> Result<Self, String> {
        let [r1, r2, r3] = rho;
        if !(0.0 <= r3 && r3 <= r1 && r1 <= r2 && r2 <= 1.0) {
            return Err(format!(
                "GSSSS needs 0 <= rho3 <= rho1 <= rho2 <= 1, got rho1 = {r1}, rho2 = {r2}, rho3 = {r3}"
            ));
        }
        Ok(Self::of(family, rho))
    }

    /// The midpoint scheme V0(1, 1, 0) (whose roots need no check).
    pub fn midpoint() -> Self {
        Self::of(Family::V0, [1.0, 1.0, 0.0])
    }

    /// Coefficients of `family` with roots `rho`, checked by the caller.
    fn of(family: Family, rho: [f64; 3]) -> Self {
        let [r1, r2, r3] = rho;
        let (p1, p2, p3) = (1.0 + r1, 1.0 + r2, 1.0 + r3);
        let l6 = (2.0 + r1 + r2 + r3 - r1 * r2 * r3) / (p1 * p2 * p3);
        let q = 3.0 + r1 + r2 - r1 * r2;
        let (w, wl, lam) = match family {
            Family::U0 => {
                // Weighted time field of Algorithm 1, multiplied through by (1 - 4 rho3).
                let w = weights([
                    1.0 - 4.0 * r3,
                    -15.0 * (1.0 - 2.0 * r3),
                    15.0 * (3.0 - 4.0 * r3),
                    -35.0 * (1.0 - r3),
                ]);
                let wl = [
                    1.0 / p3,
                    1.0 / (2.0 * p3),
                    1.0 / (p1 * p2 * p3),
                    1.0 / p3,
                    q / (2.0 * p1 * p2 * p3),
                    l6,
                ];
                let lam = [1.0, 0.5, 1.0 / (p1 * p2), 1.0, q / (2.0 * p1 * p2)];
                (w, wl, lam)
            }
            Family::V0 => {
                // Weighted time field of Algorithm 2, multiplied through by its denominator.
                let w = weights([
                    9.0 - 11.0 * r1 - 11.0 * r2 + 19.0 * r1 * r2,
                    -30.0 * (3.0 - 4.0 * r1 - 4.0 * r2 + 6.0 * r1 * r2),
                    7.5 * (25.0 - 37.0 * r1 - 37.0 * r2 + 53.0 * r1 * r2),
                    -35.0 * (3.0 - 5.0 * r1 - 5.0 * r2 + 7.0 * r1 * r2),
                ]);
                let wl = [
                    q / (2.0 * p1 * p2),
                    1.0 / (p1 * p2),
                    1.0 / (p1 * p2 * p3),
                    q / (2.0 * p1 * p2),
                    2.0 / (p1 * p2 * p3),
                    l6,
                ];
                let lam = [1.0, 0.5, 1.0 / (2.0 * p3), 1.0, 1.0 / p3];
                (w, wl, lam)
            }
        };
        Gssss {
            family,
            rho,
            w,
            wl,
            lam,
        }
    }

    /// Capital Lambda_1 ..= Lambda_6.
    pub fn big_lambda(&self) -> [f64; 6] {
        let [w1, w2, w3] = self.w;
        [
            self.wl[0] / w1,
            self.wl[1] / w2,
            self.wl[2] / w3,
            self.wl[3] / w1,
            self.wl[4] / w2,
            self.wl[5] / w1,
        ]
    }

    /// Linear forms of one step of size `dt` with Newton unknown `form`.
    pub fn scheme(&self, form: SolveForm, dt: f64) -> LinearScheme {
        let [l1, l2, l3, l4, l5] = self.lam;
        let wl = self.wl;
        let dt2 = dt * dt;
        let u_next: Form = [1.0, l1 * dt, l2 * dt2, l3 * dt2];
        let unknown: Form = match form {
            SolveForm::A => [0.0, 0.0, 0.0, 1.0],
            SolveForm::V => [0.0, 0.0, l4 * dt, l5 * dt],
            SolveForm::D => [0.0, l1 * dt, l2 * dt2, l3 * dt2],
        };
        LinearScheme {
            u_next,
            u_tilde: [1.0, wl[0] * dt, wl[1] * dt2, wl[2] * dt2],
            v_tilde: [0.0, 1.0, wl[3] * dt, wl[4] * dt],
            a_tilde: [0.0, 0.0, 1.0, wl[5]],
            v_next: [0.0, 1.0, l4 * dt, l5 * dt],
            unknown,
            w1: self.w[0],
            // a~ = a_n + W1 L6 da sits at t_n + W1 dt, so a_k sits at t_k + (W1 - W1 L6) dt.
            accel_shift: self.w[0] - wl[5],
        }
    }

    /// Whether the scheme's EOM level is the midpoint of the step,
    /// `u~ = (u_n + u_{n+1})/2`, so that its internal forces are the
    /// discrete gradients of the energy-conserving midpoint rule: from the
    /// forms of [`Gssss::scheme`], `c3 = W3 L3 / lambda3` is `1/(1 + rho3)`
    /// for U0 (with `c1 = c2 = 0`) and `2/((1 + rho1)(1 + rho2))` for V0 (with
    /// `c1 = -(1 - rho1)(1 - rho2)/((1 + rho1)(1 + rho2))`, `c2 = 0`): U0 with
    /// rho3 = 1 (hence (1,1,1), "midpoint-endpoint") and V0 with
    /// rho1 = rho2 = 1 (any rho3; (1,1,0) is "midpoint").
    pub fn midpoint_level(&self) -> bool {
        match self.family {
            Family::U0 => self.rho[2] == 1.0,
            Family::V0 => self.rho[0] == 1.0 && self.rho[1] == 1.0,
        }
    }

    /// Short label, e.g. `V0(1,1,0)`.
    pub fn label(&self) -> String {
        let fam = match self.family {
            Family::U0 => "U0",
            Family::V0 => "V0",
        };
        let [a, b, c] = self.rho;
        format!("{fam}({a},{b},{c})")
    }
}
