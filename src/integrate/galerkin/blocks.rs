//! Block matrices of methods with several time levels per step: a `k x k`
//! grid of copies of the model's saddle-point pattern `[S C; B 0]`
//! (dimension N = n + m each), declared once. Each block is filled with the
//! assembler's operators into a [`SaddleSystem`] of the base pattern and
//! copied into its place in the block matrix through a slot map.

use crate::assembly::{Pattern, SaddleSystem};

/// The pattern of a `k x k` grid of base patterns and the slot of every base
/// entry in every block.
pub struct BlockPattern {
    /// The block matrix's pattern (dimension k N).
    pub pattern: Pattern,
    /// Blocks per side.
    k: usize,
    /// `slots[I k + J][s]`: slot in the block matrix of base slot `s` of block (I, J).
    slots: Vec<Vec<usize>>,
}

impl BlockPattern {
    /// Every block carries the full base pattern.
    pub fn full(base: &Pattern, k: usize) -> Self {
        let n = base.dim;
        let mut pairs = Vec::with_capacity(k * k * base.nnz());
        for bi in 0..k {
            for bj in 0..k {
                for c in 0..n {
                    for &r in &base.row_idx[base.col_ptr[c]..base.col_ptr[c + 1]] {
                        pairs.push((r + bi * n, c + bj * n));
                    }
                }
            }
        }
        let pattern = Pattern::from_pairs(k * n, pairs);
        let mut slots = Vec::with_capacity(k * k);
        for bi in 0..k {
            for bj in 0..k {
                let mut s = Vec::with_capacity(base.nnz());
                for c in 0..n {
                    for &r in &base.row_idx[base.col_ptr[c]..base.col_ptr[c + 1]] {
                        s.push(pattern.slot(r + bi * n, c + bj * n));
                    }
                }
                slots.push(s);
            }
        }
        BlockPattern { pattern, k, slots }
    }

    /// Writes the values of the blocks (`blocks[I k + J]`, base order) into
    /// `values` (block-matrix order).
    pub fn gather(&self, blocks: &[SaddleSystem], values: &mut [f64]) {
        debug_assert_eq!(blocks.len(), self.k * self.k);
        for (b, slots) in blocks.iter().zip(&self.slots) {
            for (&s, &v) in slots.iter().zip(&b.values) {
                values[s] = v;
            }
        }
    }
}

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
    for &(b, c) in into {
        for (d, s) in blocks[b].values.iter_mut().zip(&src.values) {
            *d += c * s;
        }
    }
}

/// Zeroes the residual and values of a system.
pub fn clear(sys: &mut SaddleSystem) {
    sys.residual.fill(0.0);
    sys.values.fill(0.0);
}
