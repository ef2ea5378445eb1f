//! The normwise backward error of a solve, from the matrix as the caller
//! holds it (CSC pattern and values), for the sparse solver tests.

use flexmb::assembly::Pattern;

/// `‖b − A x‖∞ / (‖A‖∞ ‖x‖∞ + ‖b‖∞)`, computed here from the caller's matrix.
pub fn backward_error(p: &Pattern, v: &[f64], x: &[f64], b: &[f64]) -> f64 {
    let mut r = b.to_vec();
    let mut rows = vec![0.0f64; p.dim];
    for (c, &xc) in x.iter().enumerate() {
        for k in p.col_ptr[c]..p.col_ptr[c + 1] {
            r[p.row_idx[k]] -= v[k] * xc;
            rows[p.row_idx[k]] += v[k].abs();
        }
    }
    let norm = |u: &[f64]| u.iter().fold(0.0f64, |m, y| m.max(y.abs()));
    norm(&r) / (norm(&rows) * norm(x) + norm(b))
}
