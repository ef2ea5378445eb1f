//! Schur-complement solve of `[W B^T; B 0] [x; lambda] = [r1; r2]` for a
//! diagonal positive `W`: the index-1 system `[M B^T; B 0]` of models with a
//! diagonal mass (points, 2-D rigid bodies, lumped masses; Chin
//! eqs. 4.2, 4.22) and the projections of PStab with metric `M` or `I`
//! (eqs. 3.68, 3.69).
//!
//! `lambda` solves the `m x m` system `S lambda = B W^-1 r1 - r2` with
//! `S = B W^-1 B^T` (symmetric positive definite when B has full rank),
//! factored by faer's dense Cholesky (on Andrews' mechanism the whole run
//! took 8 % longer with nalgebra's); then `x = W^-1 (r1 - B^T lambda)`.
//! For Andrews' mechanism (21 coordinates, 20 rows) this replaces a banded LU
//! of 41 unknowns by a 20 x 20 Cholesky.
//!
//! It is a fast path, never the judge of singularity: [`DiagonalSchur::factor`]
//! declines (and the caller factors the whole matrix with its LU) when the
//! values are not of that form (an off-diagonal or non-positive `W` entry, a
//! stiffness or damping entry, a non-zero (2,2) block, `C != B^T`) or when a
//! Cholesky pivot lost more than [`MIN_PIVOT_RATIO`] of its diagonal, so
//! near-singular and singular systems get the LU's pivoting and diagnosis.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{
    cholesky_in_place, cholesky_in_place_scratch, LltRegularization,
};
use faer::linalg::cholesky::llt::solve::solve_in_place_with_conj;
use faer::{Conj, MatMut, MatRef, Par};

use super::Pattern;

/// Smallest accepted ratio of a Cholesky pivot `L_rr^2` to the diagonal
/// entry `S_rr` it came from; below it the Schur complement has lost about
/// half the digits and the LU of the whole matrix is used instead.
pub const MIN_PIVOT_RATIO: f64 = 1e-8;

/// Slots of a matrix `[W C; B 0]` with `n` leading rows and the Cholesky
/// factor of its Schur complement.
pub struct DiagonalSchur {
    n: usize,
    m: usize,
    /// Slot of `W_ii`, i < n.
    diag_slot: Vec<usize>,
    /// Slots that must hold zero: off-diagonal `W` and the (2,2) block.
    zero_slot: Vec<usize>,
    /// B entries grouped by column `i < n` (CSR-like over columns).
    b_col_ptr: Vec<usize>,
    /// Constraint row `r` (0-based within the m rows) of each B entry.
    b_row: Vec<usize>,
    /// Slot of `B_ri`.
    b_slot: Vec<usize>,
    /// Slot of its mirror `C_ir`.
    c_slot: Vec<usize>,
    /// `1 / W_ii`.
    w_inv: Vec<f64>,
    /// The B entries of the last factorization.
    b_val: Vec<f64>,
    /// Column-major `m x m`: S, then its Cholesky factor in the lower triangle.
    s: Vec<f64>,
    /// Workspace of `2 m`: the diagonal of S, then the multipliers of up
    /// to two right-hand sides.
    t: Vec<f64>,
    mem: MemBuffer,
}

impl DiagonalSchur {
    /// The slots of `pattern` split as `[W C; B 0]` with `n` leading rows;
    /// `None` when there are no constraint rows or when `B` and `C` are not
    /// structurally transposes of each other.
    pub fn new(pattern: &Pattern, n: usize) -> Option<Self> {
        let dim = pattern.dim;
        let m = dim.checked_sub(n).filter(|&m| m > 0)?;
        let mut diag_slot = vec![usize::MAX; n];
        let mut zero_slot = Vec::new();
        let mut b_col_ptr = vec![0];
        let (mut b_row, mut b_slot, mut c_slot) = (Vec::new(), Vec::new(), Vec::new());
        let mut c_count = 0;
        for (c, col) in pattern.col_ptr.windows(2).enumerate() {
            for s in col[0]..col[1] {
                let r = pattern.row_idx[s];
                match (r < n, c < n) {
                    (true, true) if r == c => diag_slot[c] = s,
                    (true, true) | (false, false) => zero_slot.push(s),
                    (false, true) => {
                        let mirror = pattern.row_idx[pattern.col_ptr[r]..pattern.col_ptr[r + 1]]
                            .binary_search(&c)
                            .ok()?;
                        b_row.push(r - n);
                        b_slot.push(s);
                        c_slot.push(pattern.col_ptr[r] + mirror);
                    }
                    (true, false) => c_count += 1,
                }
            }
            if c < n {
                b_col_ptr.push(b_row.len());
            }
        }
        if c_count != b_slot.len() || diag_slot.contains(&usize::MAX) {
            return None;
        }
        let nb = b_slot.len();
        Some(DiagonalSchur {
            n,
            m,
            diag_slot,
            zero_slot,
            b_col_ptr,
            b_row,
            b_slot,
            c_slot,
            w_inv: vec![0.0; n],
            b_val: vec![0.0; nb],
            s: vec![0.0; m * m],
            t: vec![0.0; 2 * m],
            mem: MemBuffer::new(cholesky_in_place_scratch::<f64>(
                m,
                Par::Seq,
                Default::default(),
            )),
        })
    }

    /// Factors `S = B W^-1 B^T` for the matrix with these `values`; `false`
    /// (nothing usable factored) when the values are not of the diagonal
    /// form or the Cholesky factor is not well conditioned.
    pub fn factor(&mut self, values: &[f64]) -> bool {
        for (w, &s) in self.w_inv.iter_mut().zip(&self.diag_slot) {
            let d = values[s];
            if !(d > 0.0 && d.is_finite()) {
                return false;
            }
            *w = 1.0 / d;
        }
        if self.zero_slot.iter().any(|&s| values[s] != 0.0) {
            return false;
        }
        for ((b, &bs), &cs) in self.b_val.iter_mut().zip(&self.b_slot).zip(&self.c_slot) {
            *b = values[bs];
            if values[cs] != *b || !b.is_finite() {
                return false;
            }
        }
        let m = self.m;
        self.s.fill(0.0);
        // Lower triangle of S: each DOF i couples the rows of its column of B
        // (rows are sorted, so k >= l gives row_k >= row_l).
        for i in 0..self.n {
            let (a, z) = (self.b_col_ptr[i], self.b_col_ptr[i + 1]);
            for k in a..z {
                let bk = self.b_val[k] * self.w_inv[i];
                let rk = self.b_row[k];
                for l in a..=k {
                    self.s[rk + self.b_row[l] * m] += bk * self.b_val[l];
                }
            }
        }
        for (r, t) in self.t[..m].iter_mut().enumerate() {
            *t = self.s[r + r * m];
        }
        let a = MatMut::from_column_major_slice_mut(&mut self.s, m, m);
        let stack = MemStack::new(&mut self.mem);
        if cholesky_in_place(
            a,
            LltRegularization::default(),
            Par::Seq,
            stack,
            Default::default(),
        )
        .is_err()
        {
            return false;
        }
        (0..m).all(|r| {
            let l = self.s[r + r * m];
            l * l >= MIN_PIVOT_RATIO * self.t[r]
        })
    }

    /// Solves in place with the last factorization (which returned `true`).
    pub fn solve(&mut self, rhs: &mut [f64]) {
        self.solve_columns(&mut [rhs]);
    }

    /// Solves two right-hand sides in place with the last factorization:
    /// the same result as two [`DiagonalSchur::solve`]s, with one
    /// triangular solve of two columns.
    pub fn solve_pair(&mut self, a: &mut [f64], b: &mut [f64]) {
        self.solve_columns(&mut [a, b]);
    }

    /// Solves one or two columns in place.
    fn solve_columns(&mut self, cols: &mut [&mut [f64]]) {
        let (n, m, k) = (self.n, self.m, cols.len());
        let t = &mut self.t[..m * k];
        // t = B W^-1 r1 - r2, column by column
        for (col, tc) in cols.iter().zip(t.chunks_mut(m)) {
            let (r1, r2) = col.split_at(n);
            for (t, r) in tc.iter_mut().zip(r2) {
                *t = -r;
            }
            for (i, (r, w)) in r1.iter().zip(&self.w_inv).enumerate() {
                if *r == 0.0 {
                    continue;
                }
                let y = r * w;
                for q in self.b_col_ptr[i]..self.b_col_ptr[i + 1] {
                    tc[self.b_row[q]] += self.b_val[q] * y;
                }
            }
        }
        let l = MatRef::from_column_major_slice(&self.s, m, m);
        let stack = MemStack::new(&mut self.mem);
        solve_in_place_with_conj(
            l,
            Conj::No,
            MatMut::from_column_major_slice_mut(t, m, k),
            Par::Seq,
            stack,
        );
        // x = W^-1 (r1 - B^T lambda)
        for (col, tc) in cols.iter_mut().zip(self.t.chunks(m)) {
            let (r1, r2) = col.split_at_mut(n);
            for (i, (x, w)) in r1.iter_mut().zip(&self.w_inv).enumerate() {
                for q in self.b_col_ptr[i]..self.b_col_ptr[i + 1] {
                    *x -= self.b_val[q] * tc[self.b_row[q]];
                }
                *x *= w;
            }
            r2.copy_from_slice(tc);
        }
    }
}
