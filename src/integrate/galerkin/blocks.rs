//! Block matrices of methods with several time levels per step: a `k x k`
//! grid of copies of the model's saddle-point pattern `[S C; B 0]`
//! (dimension N = n + m each), declared once. Each block declares which
//! regions of the base pattern it can hold (the mass pattern, all of S, the
//! multiplier columns C, the constraint rows B), so that the block matrix
//! keeps only its structural nonzeros: its band after reverse
//! Cuthill–McKee is then narrow (docs/theory/galerkin.md §5). Each block is
//! filled with the assembler's operators into a [`SaddleSystem`] of the base
//! pattern and copied into its place in the block matrix through a slot map.

use crate::assembly::{Pattern, SaddleSystem};

/// Region of the base pattern a block holds: the entries of the mass matrix.
pub const MASS: u8 = 1;
/// Region: every entry of S (the n x n coordinate block; includes [`MASS`]).
pub const STIFF: u8 = 2;
/// Region: the multiplier columns C.
pub const COLUMN: u8 = 4;
/// Region: the constraint rows.
pub const ROWS: u8 = 8;
/// Every region.
pub const ALL: u8 = MASS | STIFF | COLUMN | ROWS;

/// A base slot that a block does not hold.
const NONE: usize = usize::MAX;

/// The pattern of a `k x k` grid of base patterns and the slot of every base
/// entry in every block.
pub struct BlockPattern {
    /// The block matrix's pattern (dimension k N).
    pub pattern: Pattern,
    /// Blocks per side.
    k: usize,
    /// `(block I k + J, base slot, block-matrix slot)` of every held entry.
    held: Vec<(usize, usize, usize)>,
    /// `(block, base slot)` of the entries outside the blocks' regions.
    outside: Vec<(usize, usize)>,
}

impl BlockPattern {
    /// Block (I, J) holds the regions `regions[I k + J]` of `base`, whose
    /// first `n` unknowns are coordinates; `mass` lists the base slots of
    /// the mass matrix.
    pub fn new(base: &Pattern, n: usize, mass: &[usize], k: usize, regions: &[u8]) -> Self {
        assert_eq!(regions.len(), k * k, "one region set per block");
        let nb = base.dim;
        let mut in_mass = vec![false; base.nnz()];
        for &s in mass {
            in_mass[s] = true;
        }
        // Whether block region set `r` holds base entry (row, col) at slot s.
        let holds = |r: u8, row: usize, col: usize, s: usize| match (row < n, col < n) {
            (true, true) => r & STIFF != 0 || (r & MASS != 0 && in_mass[s]),
            (true, false) => r & COLUMN != 0,
            (false, _) => r & ROWS != 0,
        };
        let mut pairs = Vec::new();
        for (b, &r) in regions.iter().enumerate() {
            let (bi, bj) = (b / k, b % k);
            for c in 0..nb {
                for s in base.col_ptr[c]..base.col_ptr[c + 1] {
                    let row = base.row_idx[s];
                    if holds(r, row, c, s) {
                        pairs.push((row + bi * nb, c + bj * nb));
                    }
                }
            }
        }
        let pattern = Pattern::from_pairs(k * nb, pairs);
        let slots: Vec<Vec<usize>> = regions
            .iter()
            .enumerate()
            .map(|(b, &r)| {
                let (bi, bj) = (b / k, b % k);
                let mut out = vec![NONE; base.nnz()];
                for c in 0..nb {
                    let col = base.col_ptr[c]..base.col_ptr[c + 1];
                    let entries = out[col.clone()].iter_mut().zip(&base.row_idx[col.clone()]);
                    for (s, (o, &row)) in col.zip(entries) {
                        if holds(r, row, c, s) {
                            *o = pattern.slot(row + bi * nb, c + bj * nb);
                        }
                    }
                }
                out
            })
            .collect();
        let (mut held, mut outside) = (Vec::new(), Vec::new());
        for (b, map) in slots.iter().enumerate() {
            for (s, &t) in map.iter().enumerate() {
                match t {
                    NONE => outside.push((b, s)),
                    _ => held.push((b, s, t)),
                }
            }
        }
        BlockPattern {
            pattern,
            k,
            held,
            outside,
        }
    }

    /// Writes the values of the blocks (`blocks[I k + J]`, base order) into
    /// `values` (block-matrix order); entries outside a block's regions are
    /// zero by construction of the fill and are skipped.
    pub fn gather(&self, blocks: &[SaddleSystem], values: &mut [f64]) {
        debug_assert_eq!(blocks.len(), self.k * self.k);
        for &(b, s, t) in &self.held {
            values[t] = blocks[b].values[s];
        }
        for &(b, s) in &self.outside {
            debug_assert_eq!(
                blocks[b].values[s], 0.0,
                "a value outside its block's regions"
            );
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
