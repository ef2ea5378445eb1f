//! The residual and Newton matrix of one GSSSS Newton iteration (Hoitink
//! §3.6, eqs. 3.14–3.31), composed from the assembler's neutral operators:
//!
//! `e1 = M a~ + P~ + B~^T lambda~ - F~ - M g`, `e2 = Phi(u_{n+1}, t_{n+1}) / chi_Cu`,
//! `[chi_Ca M + chi_Cv D + chi_Cu (K~ + H~ - K~_F), C; B(u_{n+1}), 0]`,
//!
//! where the constraint force `B~^T lambda~` and its column C are placed at
//! the EOM time level by the option of Hoitink §3.5 (eqs. 3.8–3.11, and
//! Gonzalez's discrete derivative `dg`).

use crate::assembly::{ElementEval, JointTerms, Mechanics, MultiplierMix, SaddleSystem};
use crate::element::{EvaluationPoint, RateState, StepStart};

use super::scheme::{ConstraintOption, JacobianKind};

/// Configuration at which a joint quantity is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// u_n.
    Prev,
    /// u_{n+1} (current iterate).
    Next,
    /// u~ (EOM time level).
    Tilde,
}

/// Multiplier vector used in a constraint-force term.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mult {
    /// lambda_n.
    Prev,
    /// The current iterate lambda.
    Iterate,
    /// (1 - w) lambda_n + w lambda.
    Blend(f64),
}

/// The discrete constraint force `B~^T lambda~` of an integrator option
/// (Hoitink eqs. 3.8–3.11) and its derivatives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConstraintForce {
    /// `B~^T lambda~ = sum_k c_k B(at_k)^T mult_k` (unused terms have c = 0).
    pub force: [(f64, At, Mult); 2],
    /// Multiplier column of the Newton matrix: `sum_k c_k B(at_k)^T`.
    pub column: [(f64, At); 2],
    /// Derivative of the force with respect to u_{n+1}: `c * sum_r mult_r d^2 Phi_r(at)`.
    pub curvature: (f64, At, Mult),
    /// Gonzalez's discrete derivative (option `dg`, midpoint schemes): every
    /// `B(u~)` of `force` and `column` is `B_d(u_n, u_{n+1})`
    /// ([`crate::joint::JointSet::discrete_jacobian`]) and the curvature term is
    /// `d(B_d^T mult)/du_{n+1}` (its `c` and `at` are unused).
    pub discrete: bool,
}

/// The constraint force of `option` at time-level weight `w1` (eqs. 3.8–3.11;
/// `dg`: option 2 with Gonzalez's discrete derivative, midpoint schemes only)
/// with `c3 = d u~ / d u_{n+1}`, and its Newton column.
pub fn constraint_force(
    option: ConstraintOption,
    jac: JacobianKind,
    w1: f64,
    c3: f64,
) -> ConstraintForce {
    let seed = jac == JacobianKind::Seed;
    let none = (0.0, At::Next, Mult::Iterate);
    match option {
        ConstraintOption::One => ConstraintForce {
            force: [
                (1.0 - w1, At::Prev, Mult::Prev),
                (w1, At::Next, Mult::Iterate),
            ],
            column: [(if seed { 1.0 } else { w1 }, At::Next), (0.0, At::Next)],
            curvature: (w1, At::Next, Mult::Iterate),
            discrete: false,
        },
        ConstraintOption::Two => ConstraintForce {
            force: [(1.0, At::Tilde, Mult::Iterate), none],
            column: [(1.0, At::Tilde), (0.0, At::Next)],
            curvature: (c3, At::Tilde, Mult::Iterate),
            discrete: false,
        },
        // Option 2 with B(u~) replaced by Gonzalez's B_d(u_n, u_{n+1}).
        ConstraintOption::Gonzalez => ConstraintForce {
            discrete: true,
            ..constraint_force(ConstraintOption::Two, jac, w1, c3)
        },
        ConstraintOption::Three => ConstraintForce {
            force: [
                (1.0 - w1, At::Prev, Mult::Iterate),
                (w1, At::Next, Mult::Iterate),
            ],
            column: if seed {
                [(1.0, At::Next), (0.0, At::Next)]
            } else {
                [(1.0 - w1, At::Prev), (w1, At::Next)]
            },
            curvature: (w1, At::Next, Mult::Iterate),
            discrete: false,
        },
        ConstraintOption::Four => ConstraintForce {
            force: [(1.0, At::Tilde, Mult::Blend(w1)), none],
            column: [(if seed { 1.0 } else { w1 }, At::Tilde), (0.0, At::Next)],
            curvature: (c3, At::Tilde, Mult::Blend(w1)),
            discrete: false,
        },
    }
}

/// Inputs of one Newton iteration of a time step.
#[derive(Debug, Clone, Copy)]
pub struct StepInput<'a> {
    /// Positions and levels for the elements.
    pub level: EvaluationPoint<'a>,
    /// The method's choice of internal and inertial forces: the discrete
    /// gradients of the energy-conserving midpoint schemes (`level` has the
    /// midpoint weights; [`ElementEval::DiscreteGradient`], and the start of
    /// the step for the configuration-dependent inertia) or the forces at
    /// the level ([`ElementEval::Point`]).
    pub discrete_gradient: bool,
    /// Iterate of the acceleration at the EOM time level, a~.
    pub a_tilde: &'a [f64],
    /// `M (a~ - g)` when the caller has computed it (the stepper needs it for
    /// its force scale); `None`: computed here.
    pub inertia: Option<&'a [f64]>,
    /// Iterate of the velocity at the EOM time level, v~ (dampers).
    pub v_tilde: &'a [f64],
    /// d v~ / d delta (coefficient of the damping matrix in S).
    pub coef_v: f64,
    /// Multipliers of the previous step.
    pub lambda_n: &'a [f64],
    /// Current multiplier iterate.
    pub lambda: &'a [f64],
    /// t_n.
    pub t_n: f64,
    /// t_{n+1}.
    pub t_next: f64,
    /// Weight W1 of the parameters-outside terms (load time factors).
    pub w1: f64,
    /// d a~ / d delta (coefficient of M in S).
    pub coef_mass: f64,
    /// d u_{n+1} / d delta (scales the tangents; the constraint rows are divided by it).
    pub coef_u: f64,
    /// Constraint-force option.
    pub forces: ConstraintForce,
    /// Whether to fill the Newton matrix too (false: the residual only, for
    /// an iteration that reuses the last factorization; `values` is left as is).
    pub matrix: bool,
}

impl StepInput<'_> {
    /// The time factor of a load with time function `f` at the EOM level,
    /// parameters outside: `(1 - W1) f(t_n) + W1 f(t_{n+1})`.
    pub fn load_factor(&self, f: &crate::load::TimeFunction) -> f64 {
        (1.0 - self.w1) * f.value(self.t_n) + self.w1 * f.value(self.t_next)
    }
}

/// Fills residual and matrix of one Newton iteration of a time step:
/// `e1 = M a~ + P~ + B~^T lambda~ - F~ - M g`, `e2 = Phi(u_{n+1}, t_{n+1}) / coef_u`,
/// `S = coef_mass M + coef_v D + coef_u (K~ + H~ - K~_load)`, C and B as the option says.
pub fn fill_step(asm: &Mechanics<'_>, inp: &StepInput<'_>, sys: &mut SaddleSystem) {
    let n = asm.n_dofs();
    let g = inp.level;
    sys.clear(inp.matrix);
    if inp.matrix {
        asm.add_mass(&mut sys.values, inp.coef_mass);
    }

    // Inertia and gravity.
    match inp.inertia {
        Some(inertia) => sys.residual[..n].copy_from_slice(inertia),
        None => {
            asm.mass_mul_add(inp.a_tilde, &mut sys.residual[..n]);
            asm.subtract_gravity(&mut sys.residual[..n], 1.0);
        }
    }

    // Internal forces at the EOM time level.
    let coef_k = inp.matrix.then_some(inp.coef_u);
    let eval = match inp.discrete_gradient {
        true => ElementEval::DiscreteGradient(g),
        false => ElementEval::Point(g),
    };
    asm.add_element_forces(&eval, coef_k, sys);

    // Dampers and configuration-dependent inertia at (u~, v~, a~).
    let coef_ut = inp.coef_u * g.w.c3;
    let x = RateState {
        u: g.u_tilde,
        v: inp.v_tilde,
        a: inp.a_tilde,
        midpoint: inp.discrete_gradient.then_some(StepStart {
            u_n: g.u_n,
            dt: inp.t_next - inp.t_n,
        }),
    };
    let coefs = inp.matrix.then_some([coef_ut, inp.coef_v, inp.coef_mass]);
    asm.add_rate_forces(&x, coefs, sys);

    // External loads: position part at u~, time factor outside.
    let load_k = inp.matrix.then_some(coef_ut);
    asm.add_load_terms(g.u_tilde, &|f| inp.load_factor(f), load_k, sys);

    add_constraint_terms(asm, inp, sys);
}

/// The constraint rows at u_{n+1} and the option's constraint force, column
/// and curvature, one [`JointTerms`] per configuration it uses.
fn add_constraint_terms(asm: &Mechanics<'_>, inp: &StepInput<'_>, sys: &mut SaddleSystem) {
    let g = inp.level;
    let cf = &inp.forces;
    asm.set_constraint_rows(g.u_next, inp.t_next, inp.coef_u, inp.matrix, sys);
    let mix = |m: Mult| match m {
        Mult::Prev => MultiplierMix::of(inp.lambda_n),
        Mult::Iterate => MultiplierMix::of(inp.lambda),
        Mult::Blend(w) => MultiplierMix {
            first: inp.lambda_n,
            second: inp.lambda,
            w,
        },
    };
    for at in [At::Prev, At::Next, At::Tilde] {
        let u = match at {
            At::Prev => g.u_n,
            At::Next => g.u_next,
            At::Tilde => g.u_tilde,
        };
        let discrete = cf.discrete && at == At::Tilde;
        let force = cf
            .force
            .iter()
            .find(|f| f.0 != 0.0 && f.1 == at)
            .map(|f| (f.0, mix(f.2)));
        let column = if inp.matrix {
            cf.column
                .iter()
                .filter(|c| c.1 == at)
                .map(|c| c.0)
                .sum::<f64>()
        } else {
            0.0
        };
        let (ch, c_at, c_mult) = cf.curvature;
        let curvature = if !inp.matrix {
            None
        } else if discrete {
            Some((inp.coef_u, mix(c_mult)))
        } else if ch != 0.0 && c_at == at && !cf.discrete {
            Some((inp.coef_u * ch, mix(c_mult)))
        } else {
            None
        };
        if force.is_none() && column == 0.0 && curvature.is_none() {
            continue;
        }
        asm.add_joint_terms(
            &JointTerms {
                u: if discrete { g.u_next } else { u },
                t: inp.t_next,
                discrete_from: discrete.then_some(g.u_n),
                force,
                column,
                curvature,
            },
            sys,
        );
    }
}
