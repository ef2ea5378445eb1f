//! Consistent initial accelerations and multipliers:
//! `[M B^T; B 0] [a0; lambda0] = [F(u0, t0) + M g - P(u0); -gamma0]`,
//! `gamma0 = (B v0)_u v0 + Phi_tt + 2 Phi_tu v0` (index-1 form, seed 000 eq. 3.5).

use crate::assembly::SaddleSystem;
use crate::linalg::{diagnose_singular, SaddlePointSolver};

use super::{State, StepError, System};

/// Overwrites `state.a` and `state.lambda` with values consistent with
/// `state.u`, `state.v` at `state.t`.
pub fn consistent_initial(
    sys: &System<'_>,
    solver: &mut SaddlePointSolver,
    work: &mut SaddleSystem,
    state: &mut State,
) -> Result<(), StepError> {
    let n = sys.asm.n_dofs();
    sys.asm
        .fill_index1(sys.model, &state.u, &state.v, state.t, None, work);
    let singular = |e: crate::linalg::SolveError, values: &[f64]| StepError::Singular {
        step: state.step,
        time: state.t,
        diagnosis: format!(
            "{e} while computing consistent initial accelerations: {}",
            diagnose_singular(sys.model, sys.asm, values, &state.u, state.t)
        ),
    };
    solver
        .factor(&work.values)
        .map_err(|e| singular(e, &work.values))?;
    let mut x: Vec<f64> = work.residual.iter().map(|r| -r).collect();
    solver
        .solve(&mut x)
        .map_err(|e| singular(e, &work.values))?;
    state.a.copy_from_slice(&x[..n]);
    state.lambda.copy_from_slice(&x[n..]);
    Ok(())
}
