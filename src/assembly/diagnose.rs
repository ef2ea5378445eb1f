//! Explaining a singular saddle-point matrix in the model's own terms.
//!
//! Checked in order: DOFs without inertia, stiffness or constraint; constraint
//! rows whose Jacobian vanishes; redundant constraints (rank deficiency of B,
//! found by a column-pivoted QR of B^T, for systems small enough to do densely).

use faer::Mat;

use super::Mechanics;
use crate::model::Model;

/// Largest n * m for which the dense rank analysis of B is attempted.
const DENSE_RANK_MAX: usize = 20_000_000;

fn row_name(model: &Model, row: usize) -> String {
    match model.constraint_owner(row) {
        Some((name, kind, r)) => format!("{kind} joint '{name}' row {r}"),
        None => format!("constraint row {row}"),
    }
}

/// A human-readable explanation of why the saddle-point matrix with `values`
/// (in the assembler's pattern order) is singular at configuration `u`.
pub fn diagnose_singular(mech: &Mechanics<'_>, values: &[f64], u: &[f64], t: f64) -> String {
    let (model, asm) = (mech.model(), mech.assembler());
    let n = asm.n_dofs();
    let m = asm.n_constraints();
    let p = asm.pattern();
    let mut causes = Vec::new();

    for c in 0..n + m {
        let range = p.col_ptr[c]..p.col_ptr[c + 1];
        if values[range].iter().all(|v| *v == 0.0) {
            if c < n {
                causes.push(format!(
                    "DOF '{}' has no inertia, stiffness or constraint",
                    model.dofs.name(c)
                ));
            } else {
                causes.push(format!(
                    "the Jacobian of {} vanishes at this configuration",
                    row_name(model, c - n)
                ));
            }
        }
    }
    // Redundant rows are looked for even next to an unsupported DOF: a
    // static matrix (no inertia) can show both, and both need fixing.
    if m > 0 && n * m <= DENSE_RANK_MAX {
        causes.extend(redundant_constraints(mech, u, t));
    }
    if causes.is_empty() {
        let largest = values.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
        let coord = u.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
        format!(
            "no single DOF or constraint explains it; the mechanism may be in a singular \
             configuration, or the matrix is ill-conditioned (largest entry {largest:.3e}, \
             largest coordinate {coord:.3e}: a solution that is blowing up looks like this)"
        )
    } else {
        causes.join("; ")
    }
}

/// Redundant constraint rows of B(u): each dependent row with the rows it is a
/// combination of.
fn redundant_constraints(mech: &Mechanics<'_>, u: &[f64], t: f64) -> Vec<String> {
    let (model, asm) = (mech.model(), mech.assembler());
    let n = asm.n_dofs();
    let m = asm.n_constraints();
    let b = mech.constraint_jacobian(u, t);
    let mut bt = Mat::<f64>::zeros(n, m);
    for (r, row) in b.outer_iterator().enumerate() {
        for (c, v) in row.iter() {
            bt[(c, r)] = *v;
        }
    }
    let qr = bt.col_piv_qr();
    let rmat = qr.R();
    let fwd = qr.P().arrays().0.to_vec();
    let size = n.min(m);
    let rmax = (0..size).fold(0.0_f64, |a, i| a.max(rmat[(i, i)].abs()));
    let tol = rmax * f64::EPSILON * (n.max(m) as f64) * 10.0;
    let rank = (0..size).take_while(|&i| rmat[(i, i)].abs() > tol).count();
    let mut out = Vec::new();
    for k in rank..m {
        // Solve R11 x = R[:rank, k] for the combination coefficients.
        let mut x = vec![0.0; rank];
        for i in (0..rank).rev() {
            let s: f64 = (i + 1..rank).map(|j| rmat[(i, j)] * x[j]).sum();
            x[i] = (rmat[(i, k)] - s) / rmat[(i, i)];
        }
        let partners: Vec<String> = (0..rank)
            .filter(|&i| x[i].abs() > 1e-8)
            .map(|i| format!("{:+.3} x {}", x[i], row_name(model, fwd[i])))
            .collect();
        out.push(format!(
            "{} is redundant: it equals {}",
            row_name(model, fwd[k]),
            if partners.is_empty() {
                "zero".to_string()
            } else {
                partners.join(" ")
            }
        ));
    }
    out
}
