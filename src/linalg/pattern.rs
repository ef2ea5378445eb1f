//! The CSC sparsity pattern of the saddle-point matrix `[S C; B 0]`, built once
//! per model from the (row, col) pairs every element, joint, load and mass entry
//! can touch; entries are later addressed by their position ("slot").

/// A compressed-sparse-column pattern of a square matrix.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// Matrix dimension.
    pub dim: usize,
    /// Column pointers (len dim + 1).
    pub col_ptr: Vec<usize>,
    /// Row indices, sorted within each column.
    pub row_idx: Vec<usize>,
}

impl Pattern {
    /// Builds the pattern from (row, col) pairs (duplicates allowed).
    pub fn from_pairs(dim: usize, mut pairs: Vec<(usize, usize)>) -> Self {
        pairs.sort_unstable_by_key(|&(r, c)| (c, r));
        pairs.dedup();
        let mut col_ptr = vec![0; dim + 1];
        for &(_, c) in &pairs {
            col_ptr[c + 1] += 1;
        }
        for c in 0..dim {
            col_ptr[c + 1] += col_ptr[c];
        }
        // A fresh vector of the deduplicated length (collecting in place
        // would keep the pairs' allocation, twice as large and more).
        let row_idx = pairs.iter().map(|&(r, _)| r).collect();
        Pattern {
            dim,
            col_ptr,
            row_idx,
        }
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.row_idx.len()
    }

    /// Position of entry (row, col); panics if it is not in the pattern
    /// (which would be an assembler bug: every pair is registered up front).
    pub fn slot(&self, row: usize, col: usize) -> usize {
        let (a, b) = (self.col_ptr[col], self.col_ptr[col + 1]);
        match self.row_idx[a..b].binary_search(&row) {
            Ok(k) => a + k,
            Err(_) => panic!("entry ({row}, {col}) missing from the sparsity pattern"),
        }
    }

    /// Slots of the dense block rows x cols (row-major order of the block).
    pub fn block_slots(&self, rows: &[usize], cols: &[usize], out: &mut Vec<usize>) {
        for &r in rows {
            for &c in cols {
                out.push(self.slot(r, c));
            }
        }
    }

    /// The matrix with these `values` (one per slot) as a sprs CSC matrix.
    pub fn to_csc(&self, values: &[f64]) -> sprs::CsMat<f64> {
        sprs::CsMat::new_csc(
            (self.dim, self.dim),
            self.col_ptr.clone(),
            self.row_idx.clone(),
            values.to_vec(),
        )
    }
}
