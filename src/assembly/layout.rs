//! Block layouts: the sparse pattern of a matrix made of blocks, built from
//! the patterns of the operators placed in them, and the slot of every
//! operator entry in it (issue #24, item 3: one layout type for the
//! saddle point, the Galerkin stages and BDF's GGL form).
//!
//! A [`BlockLayout`] names the blocks of unknowns and their offsets; the
//! pattern of a block matrix is the set of `(row, col)` pairs that the
//! operators add into blocks `(I, J)` ([`BlockPairs`]). Two uses:
//!
//! - the assembler's saddle-point matrix `[S C; B 0]` (unknowns `u` and
//!   `lambda`): S from the mass, element, joint-curvature and load patterns,
//!   B and its transpose C from the joints ([`super::Assembler::new`]);
//! - a `k x k` grid of copies of that saddle-point pattern (dimension
//!   `N = n + m` each) for methods with several time levels per step
//!   ([`BlockGrid`]): Lens and Cardona's TDG and alpha–kappa stages
//!   (`integrate/galerkin`) and the stabilized index-2 GGL form of BDF
//!   (Yen and Petzold eq. 1.3, `integrate/bdf/ggl.rs`). Each block declares
//!   which regions of the base pattern it can hold (the mass pattern, all
//!   of S, the multiplier columns C, the constraint rows B, the diagonal of
//!   S), so that the block matrix keeps only its structural nonzeros (its
//!   band after reverse Cuthill–McKee is then narrow, docs/theory/galerkin.md
//!   §5). Each block is filled with the operators into a [`SaddleSystem`] of
//!   the base pattern and copied into its place through the slot map.

use super::{Pattern, SaddleSystem};

/// Named blocks of unknowns, one after another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockLayout {
    names: Vec<&'static str>,
    /// Offsets of the blocks, and the dimension last.
    offsets: Vec<usize>,
}

impl BlockLayout {
    /// Blocks `(name, size)` in order.
    pub fn new(blocks: &[(&'static str, usize)]) -> Self {
        let mut offsets = Vec::with_capacity(blocks.len() + 1);
        let mut at = 0;
        for &(_, size) in blocks {
            offsets.push(at);
            at += size;
        }
        offsets.push(at);
        BlockLayout {
            names: blocks.iter().map(|b| b.0).collect(),
            offsets,
        }
    }

    /// `k` blocks of size `size` named `name`.
    pub fn uniform(name: &'static str, k: usize, size: usize) -> Self {
        BlockLayout::new(&vec![(name, size); k])
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the layout has no blocks.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The total number of unknowns.
    pub fn dim(&self) -> usize {
        self.offsets[self.names.len()]
    }

    /// The first unknown of block `b`.
    pub fn offset(&self, b: usize) -> usize {
        self.offsets[b]
    }

    /// The size of block `b`.
    pub fn size(&self, b: usize) -> usize {
        self.offsets[b + 1] - self.offsets[b]
    }

    /// The name of block `b`.
    pub fn name(&self, b: usize) -> &'static str {
        self.names[b]
    }

    /// An empty set of pairs of this layout, with room for `capacity`.
    pub fn pairs(&self, capacity: usize) -> BlockPairs<'_> {
        BlockPairs {
            layout: self,
            pairs: Vec::with_capacity(capacity),
        }
    }
}

/// The `(row, col)` pairs of a block matrix being declared.
pub struct BlockPairs<'l> {
    layout: &'l BlockLayout,
    pairs: Vec<(usize, usize)>,
}

impl BlockPairs<'_> {
    /// Entry `(r, c)` of block `(bi, bj)`.
    #[inline]
    pub fn add(&mut self, (bi, bj): (usize, usize), r: usize, c: usize) {
        let (o, p) = (self.layout.offsets[bi], self.layout.offsets[bj]);
        self.pairs.push((o + r, p + c));
    }

    /// Entries `(r, c)` of block `(bi, bj)`.
    pub fn extend(
        &mut self,
        (bi, bj): (usize, usize),
        entries: impl IntoIterator<Item = (usize, usize)>,
    ) {
        let (o, p) = (self.layout.offsets[bi], self.layout.offsets[bj]);
        self.pairs
            .extend(entries.into_iter().map(|(r, c)| (o + r, p + c)));
    }

    /// The dense block `rows x cols` of block `(bi, bj)`: every pair.
    pub fn dense(&mut self, block: (usize, usize), rows: &[usize], cols: &[usize]) {
        self.extend(
            block,
            rows.iter().flat_map(|&r| cols.iter().map(move |&c| (r, c))),
        );
    }

    /// The pattern of the declared pairs.
    pub fn pattern(self) -> Pattern {
        Pattern::from_pairs(self.layout.dim(), self.pairs)
    }
}

/// Region of the base saddle-point pattern a grid block holds: the entries
/// of the mass matrix.
pub const MASS: u8 = 1;
/// Region: every entry of S (the n x n coordinate block; includes [`MASS`]
/// and [`DIAGONAL`]).
pub const STIFF: u8 = 2;
/// Region: the multiplier columns C.
pub const COLUMN: u8 = 4;
/// Region: the constraint rows.
pub const ROWS: u8 = 8;
/// Region: the diagonal `(i, i)`, i < n, of S (an identity block).
pub const DIAGONAL: u8 = 16;
/// Every region of the saddle-point pattern.
pub const ALL: u8 = MASS | STIFF | COLUMN | ROWS;

/// The pattern of a `k x k` grid of copies of the saddle-point pattern and
/// the slot of every base entry in every block.
pub struct BlockGrid {
    /// The block matrix's pattern (dimension k N).
    pub pattern: Pattern,
    /// Blocks per side.
    k: usize,
    /// `(block I k + J, base slot, block-matrix slot)` of every held entry,
    /// block by block, base slots increasing.
    held: Vec<(usize, usize, usize)>,
    /// Where each block's entries start in `held` (and the end last).
    starts: Vec<usize>,
    /// `(block, base slot)` of the entries outside the blocks' regions.
    outside: Vec<(usize, usize)>,
}

impl BlockGrid {
    /// Block (I, J) holds the regions `regions[I k + J]` of `base`, whose
    /// first `n` unknowns are coordinates; `mass` lists the base slots of
    /// the mass matrix.
    pub fn new(base: &Pattern, n: usize, mass: &[usize], k: usize, regions: &[u8]) -> Self {
        assert_eq!(regions.len(), k * k, "one region set per block");
        let nb = base.dim;
        let layout = BlockLayout::uniform("stage", k, nb);
        let mut in_mass = vec![false; base.nnz()];
        for &s in mass {
            in_mass[s] = true;
        }
        // Whether block region set `r` holds base entry (row, col) at slot s.
        let holds = |r: u8, row: usize, col: usize, s: usize| match (row < n, col < n) {
            (true, true) => {
                r & STIFF != 0 || (r & MASS != 0 && in_mass[s]) || (r & DIAGONAL != 0 && row == col)
            }
            (true, false) => r & COLUMN != 0,
            (false, _) => r & ROWS != 0,
        };
        let mut pairs = layout.pairs(0);
        for (b, &r) in regions.iter().enumerate() {
            for c in 0..nb {
                for s in base.col_ptr[c]..base.col_ptr[c + 1] {
                    let row = base.row_idx[s];
                    if holds(r, row, c, s) {
                        pairs.add((b / k, b % k), row, c);
                    }
                }
            }
        }
        let pattern = pairs.pattern();
        let (mut held, mut outside, mut starts) = (Vec::new(), Vec::new(), Vec::new());
        for (b, &r) in regions.iter().enumerate() {
            starts.push(held.len());
            let (o, p) = (layout.offset(b / k), layout.offset(b % k));
            for c in 0..nb {
                for s in base.col_ptr[c]..base.col_ptr[c + 1] {
                    let row = base.row_idx[s];
                    if holds(r, row, c, s) {
                        held.push((b, s, pattern.slot(row + o, c + p)));
                    } else {
                        outside.push((b, s));
                    }
                }
            }
        }
        starts.push(held.len());
        BlockGrid {
            pattern,
            k,
            held,
            starts,
            outside,
        }
    }

    /// `(base slot, block-matrix slot)` of every entry block `b` (`I k + J`)
    /// holds, base slots increasing.
    pub fn slots(&self, b: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.held[self.starts[b]..self.starts[b + 1]]
            .iter()
            .map(|&(_, s, t)| (s, t))
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
