//! The linearized system and its modes (`flexmb modes`; issue 26 item 4;
//! the equivalent of Exudyn's `ComputeLinearizedSystem` and
//! `ComputeODE2Eigenvalues`).
//!
//! 1. [`linearize()`]: M, D, K (with the constraints' geometric stiffness
//!    `lambda . d^2 Phi/du^2`) and B about the initial state (u0, v0 and the
//!    consistent a0, lambda0 of Hoitink eq. 3.5) or about the static
//!    equilibrium ([`crate::statics::solve_static`], v = a = 0), from the
//!    integrators' own Newton matrix ([`linearize`](mod@linearize)).
//! 2. [`modes()`]: up to [`ModeOptions::dense_limit`] DOFs, reduction to the
//!    constraint manifold by a null-space basis N of B and faer's dense
//!    eigensolvers, undamped modes and, when D != 0, the damped eigenvalues
//!    of the first-order form ([`dense`]); above it, shift-invert Lanczos on
//!    the saddle-point matrix `[K - sigma M, B^T; B, 0]` with the project's
//!    sparse factorization, which restricts to the manifold without N
//!    ([`lanczos`]; symmetric K and M, undamped modes only).
//!
//! Frequencies: `w = sign(w^2) sqrt(|w^2|)` rad/s, so an unstable
//! equilibrium (w^2 < 0) shows a negative frequency; rigid-body modes come
//! out near zero.

pub mod dense;
pub mod lanczos;
pub mod linearize;

pub use dense::{reduce, Reduced};
pub use linearize::{dynamic_residual, linearize_state, LinearizedSystem};

use crate::assembly::{Assembler, Mechanics};
use crate::integrate::{consistent_initial, initialize, Initialize, State, StepError};
use crate::linalg::SolverChoice;
use crate::model::Model;
use crate::statics::{solve_static_from, StaticError, StaticOptions};

/// The state a model is linearized about.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LinearizeAt {
    /// The model's initial u0, v0 with the consistent initial acceleration
    /// and multipliers (refused when u0, v0 violate the constraints).
    Initial,
    /// The static equilibrium from u0 (v = a = 0), solved with these
    /// options, Newton started from the consistent multipliers at rest.
    Static(StaticOptions),
}

impl LinearizeAt {
    /// The command-line name (`initial`, `static`).
    pub fn name(&self) -> &'static str {
        match self {
            LinearizeAt::Initial => "initial",
            LinearizeAt::Static(_) => "static",
        }
    }
}

/// Why a linearization or an eigen-analysis failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModesError {
    /// The static equilibrium was not found.
    #[error(
        "the static equilibrium to linearize about was not found: {0} (Newton starts at the \
         model's initial positions: start a mechanism near its equilibrium)"
    )]
    Static(#[from] StaticError),
    /// The initial state is inconsistent or its accelerations not solvable.
    #[error("the initial state cannot be linearized about: {0}")]
    Initial(String),
    /// M is singular on the constraint manifold.
    #[error(
        "the mass matrix is singular on the constraint manifold (N^T M N of size {reduced} is not \
         positive definite){}",
        if massless.is_empty() { String::new() } else { format!("; DOFs without mass: {}", massless.join(", ")) }
    )]
    SingularMass {
        /// Size of the reduced system.
        reduced: usize,
        /// Names of DOFs with a zero mass diagonal (up to 8).
        massless: Vec<String>,
    },
    /// More modes asked for than the system has.
    #[error(
        "{count} modes asked for, but the system has {available} DOFs on the constraint manifold"
    )]
    TooManyModes {
        /// Asked for.
        count: usize,
        /// Available (DOFs minus independent constraints).
        available: usize,
    },
    /// The shifted saddle-point matrix could not be factored.
    #[error(
        "shift-invert with [K - sigma M, B^T; B, 0] (sigma = {sigma:e}) failed: {reason} \
         (redundant constraints, fewer DOFs on the manifold than modes asked for, or sigma an \
         eigenvalue: give another --shift)"
    )]
    ShiftSingular {
        /// The shift.
        sigma: f64,
        /// Solver message.
        reason: String,
    },
    /// A dense eigensolver failed.
    #[error("{what} failed: {reason}")]
    Eigen {
        /// Which problem.
        what: String,
        /// Solver message.
        reason: String,
    },
}

/// One mode: `K phi = w^2 M phi` on the constraint manifold.
#[derive(Debug, Clone, PartialEq)]
pub struct Mode {
    /// w^2 (its real part when K is not symmetric).
    pub eigenvalue: f64,
    /// Imaginary part of w^2 (0 for symmetric K).
    pub eigenvalue_im: f64,
    /// `sign(w^2) sqrt(|w^2|)` (rad/s).
    pub omega: f64,
    /// Shape in all n DOFs (`phi^T M phi = 1`; real part when complex).
    pub shape: Vec<f64>,
}

impl Mode {
    fn new(eigenvalue: f64, eigenvalue_im: f64, shape: Vec<f64>) -> Self {
        Mode {
            eigenvalue,
            eigenvalue_im,
            omega: eigenvalue.signum() * eigenvalue.abs().sqrt(),
            shape,
        }
    }

    /// Frequency in Hz, `omega / (2 pi)`.
    pub fn hz(&self) -> f64 {
        self.omega / std::f64::consts::TAU
    }
}

/// An eigenvalue `s = re + i im` of the damped first-order system.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DampedEigenvalue {
    /// Real part (-zeta w).
    pub re: f64,
    /// Imaginary part (damped frequency, rad/s).
    pub im: f64,
}

impl DampedEigenvalue {
    /// |s| (the undamped frequency w of a single-DOF oscillator).
    pub fn modulus(&self) -> f64 {
        self.re.hypot(self.im)
    }

    /// Damping ratio `-re / |s|`.
    pub fn damping_ratio(&self) -> f64 {
        let m = self.modulus();
        if m > 0.0 {
            -self.re / m
        } else {
            0.0
        }
    }
}

/// How the modes were computed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// Null-space reduction and dense eigensolver.
    Dense,
    /// Shift-invert Lanczos on the saddle-point matrix.
    ShiftInvert {
        /// The shift sigma.
        sigma: f64,
        /// Lanczos steps.
        steps: usize,
    },
}

/// Settings of [`modes`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModeOptions {
    /// Number of modes (lowest w^2 first).
    pub count: usize,
    /// Largest number of DOFs n solved densely.
    pub dense_limit: usize,
    /// The shift of the sparse path (`None`: `-1e-6 max K_ii / max M_ii`,
    /// just below zero so that rigid-body modes do not make the matrix
    /// singular).
    pub shift: Option<f64>,
}

impl Default for ModeOptions {
    fn default() -> Self {
        ModeOptions {
            count: 10,
            dense_limit: 500,
            shift: None,
        }
    }
}

/// The result of [`modes`].
#[derive(Debug, Clone)]
pub struct Modes {
    /// The modes, lowest w^2 first.
    pub modes: Vec<Mode>,
    /// With D != 0 (dense path): the damped eigenvalues of least modulus,
    /// one of each complex-conjugate pair.
    pub damped: Vec<DampedEigenvalue>,
    /// DOFs on the constraint manifold (dense path; `None` on the sparse one).
    pub manifold_dofs: Option<usize>,
    /// The solver used.
    pub method: Method,
}

/// Linearizes `model` about the state `at` (module doc).
pub fn linearize(model: &Model, at: &LinearizeAt) -> Result<LinearizedSystem, ModesError> {
    let asm = Assembler::new(model);
    let sys = Mechanics::new(model, &asm);
    match at {
        LinearizeAt::Initial => {
            let mut state = State::initial(&sys);
            let initial_error = |e: StepError| ModesError::Initial(e.to_string());
            initialize(&sys, &mut state, Initialize::Check, SolverChoice::default())
                .map_err(initial_error)?;
            let mut solver = crate::integrate::mass_system_solver(&sys, SolverChoice::default())
                .map_err(initial_error)?;
            let mut work = asm.new_system();
            consistent_initial(&sys, &mut solver, &mut work, &mut state).map_err(initial_error)?;
            Ok(linearize_state(
                &sys,
                "initial state",
                state.t,
                &state.u,
                &state.v,
                &state.a,
                &state.lambda,
            ))
        }
        LinearizeAt::Static(opts) => {
            // Newton starts from the consistent multipliers at rest, scaled
            // to the first load step (the geometric stiffness of a
            // mechanism); from zero where they are not solvable.
            let mut state = State::initial(&sys);
            state.v.fill(0.0);
            let lambda0 = crate::integrate::mass_system_solver(&sys, SolverChoice::default())
                .and_then(|mut solver| {
                    let mut work = asm.new_system();
                    consistent_initial(&sys, &mut solver, &mut work, &mut state)
                })
                .ok()
                .map(|_| {
                    let s = 1.0 / opts.steps.max(1) as f64;
                    state.lambda.iter().map(|l| s * l).collect::<Vec<f64>>()
                });
            let eq = solve_static_from(model, opts, lambda0.as_deref())?;
            let zeros = vec![0.0; model.n_dofs()];
            Ok(linearize_state(
                &sys,
                "static equilibrium",
                opts.time,
                &eq.u,
                &zeros,
                &zeros,
                &eq.lambda,
            ))
        }
    }
}

/// The lowest `opts.count` modes of a linearized system (module doc).
pub fn modes(sys: &LinearizedSystem, opts: &ModeOptions) -> Result<Modes, ModesError> {
    let n = sys.n_dofs();
    if opts.count > n {
        return Err(ModesError::TooManyModes {
            count: opts.count,
            available: n,
        });
    }
    if n <= opts.dense_limit {
        let red = reduce(sys)?;
        let r = red.mass.nrows();
        if opts.count > r {
            return Err(ModesError::TooManyModes {
                count: opts.count,
                available: r,
            });
        }
        let modes = dense::undamped(sys, &red, opts.count)?;
        let damped = if sys.is_damped() && 2 * r <= opts.dense_limit {
            dense::damped(sys, &red, opts.count)?
        } else {
            Vec::new()
        };
        return Ok(Modes {
            modes,
            damped,
            manifold_dofs: Some(r),
            method: Method::Dense,
        });
    }
    let sigma = opts.shift.unwrap_or_else(|| default_shift(sys));
    let (modes, steps) = lanczos::shift_invert(sys, opts.count, sigma)?;
    Ok(Modes {
        modes,
        damped: Vec::new(),
        manifold_dofs: None,
        method: Method::ShiftInvert { sigma, steps },
    })
}

/// `-1e-6 max K_ii / max M_ii` ([`ModeOptions::shift`]).
fn default_shift(sys: &LinearizedSystem) -> f64 {
    let diag_max = |a: &sprs::CsMat<f64>| a.diag().iter().fold(0.0_f64, |m, (_, v)| m.max(v.abs()));
    let (k, m) = (diag_max(&sys.stiffness()), diag_max(&sys.mass()));
    if k > 0.0 && m > 0.0 {
        -1e-6 * k / m
    } else {
        -1e-6
    }
}
