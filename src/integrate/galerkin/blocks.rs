//! Combining the blocks of a stage matrix: each block of the `k x k` grid
//! ([`crate::assembly::BlockGrid`]) is filled with the operators into a
//! [`SaddleSystem`] of the base pattern; these add scaled operator systems
//! into the blocks.

use crate::assembly::SaddleSystem;

/// `dst.residual += c src.residual` (the first `rows` entries) and, for
/// every `(block, coef)` of `into`, `blocks[block].values += coef src.values`.
pub fn add_scaled(
    src: &SaddleSystem,
    residual: Option<(&mut [f64], f64)>,
    blocks: &mut [SaddleSystem],
    into: &[(usize, f64)],
) {
    if let Some((dst, c)) = residual {
        for (d, s) in dst.iter_mut().zip(&src.residual) {
            *d += c * s;
        }
    }
    add_slots(src, 0..src.values.len(), blocks, into);
}

/// For every `(block, coef)` of `into`, `blocks[block].values[slots] +=
/// coef src.values[slots]` (one region of the base pattern, e.g. the
/// multiplier columns, which are the slots from the first multiplier
/// column's start on).
pub fn add_slots(
    src: &SaddleSystem,
    slots: std::ops::Range<usize>,
    blocks: &mut [SaddleSystem],
    into: &[(usize, f64)],
) {
    for &(b, c) in into {
        for (d, s) in blocks[b].values[slots.clone()]
            .iter_mut()
            .zip(&src.values[slots.clone()])
        {
            *d += c * s;
        }
    }
}

/// Zeroes the residual and values of a system.
pub fn clear(sys: &mut SaddleSystem) {
    sys.residual.fill(0.0);
    sys.values.fill(0.0);
}
