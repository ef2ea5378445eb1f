//! Reductions of dense vectors (slices) shared by the integrators, statics
//! and the eigensolver.
//!
//! Written as plain folds rather than nalgebra's `dot`/`amax` on a view:
//! nalgebra sums long vectors in eight interleaved partial sums (other
//! round-off than the left-to-right sum here), and its `amax` returns NaN
//! where a NaN comes first while the fold here skips NaNs (`f64::max`).

/// `a . b`, summed left to right.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `max_i |x_i|` (0 for an empty slice; NaN entries skipped).
#[inline]
pub fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0_f64, |m, v| m.max(v.abs()))
}
