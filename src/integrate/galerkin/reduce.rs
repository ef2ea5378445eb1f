//! Block elimination of the alpha–kappa scheme's velocity unknowns: its
//! Newton system of 4 (n + m) unknowns is solved through one of 2 (n + m)
//! (TDG's size) and two model-sized saddle-point systems
//! (docs/theory/galerkin.md §5).
//!
//! Unknowns `X = (q1, lg | qj, lj)`, `Y = (v1, eta1 | vj, etaj)`; rows
//! `[Ra; Rf | 3Rb; Re]` (X rows) and `[2Rc; Rh | 6Rd; Rg]` (Y rows). In the Y
//! columns the rows 2Rc and 6Rd (eq. 66c, d, kappa held constant) are
//!
//! ```text
//! 2Rc: -kappa M dv1 - kappa B1^T deta1 - kappa M dvj       - kappa Bj^T detaj
//! 6Rd:  kappa M dv1 + kappa B1^T deta1 - alpha kappa M dvj - kappa Bj^T detaj
//! ```
//!
//! and the row combination
//! `P = (6Rd - alpha 2Rc)/(1 + alpha)`, `Q = -(2Rc + 6Rd)/(1 + alpha)` gives
//!
//! ```text
//! P:  kappa M dv1 + kappa B1^T deta1 + kappa (alpha - 1)/(1 + alpha) Bj^T detaj
//! Q:  kappa M dvj + 2 kappa/(1 + alpha) Bj^T detaj
//! ```
//!
//! so that the Y block `D` of the rows `[P; Rh | Q; Rg]` is block upper
//! triangular, `D = [D1 R; 0 D2]`, with the saddle-point blocks
//! `D1 = [kappa M, kappa B1^T; B1, 0]`, `D2 = [kappa M, 2 kappa/(1 + alpha)
//! Bj^T; Bj, 0]` (nonsingular where the model's `[M B^T; B 0]` is). With
//! `J = [A E; F D]` (E: the `M/h`, `3M/h` velocity columns of Ra, 3Rb; F: the
//! coordinate columns of the Y rows; the multiplier columns of F are zero)
//! Newton's `J d = b` is
//!
//! ```text
//! (A - E D^-1 F) dX = bX - E D^-1 bY,      dY = D^-1 (bY - F dX),
//! ```
//!
//! the same solution as the full system's to round-off. `E D^-1 F` is
//! dense in the coordinate rows of Ra, 3Rb and the coordinate columns: the
//! path is for models whose reduced system is dense-sized
//! ([`crate::linalg::DENSE_MAX`]); larger ones factor the full block matrix.

use crate::assembly::Pattern;
use crate::linalg::{SaddlePointSolver, SolveError};

/// The reduced Newton solve of the alpha–kappa block matrix.
pub struct Reduction {
    n: usize,
    nb: usize,
    alpha: f64,
    /// Y rows of the block matrix, dense row-major `2 nb x 4 nb`.
    yrows: Vec<f64>,
    /// `(slot, Y row, column)` of every block-matrix entry in a Y row.
    y_entries: Vec<(usize, usize, usize)>,
    /// `(slot, X row, Y column)` of the entries of E, by row.
    e_entries: Vec<(usize, usize, usize)>,
    /// `e_entries[e_ptr[a]..e_ptr[a + 1]]` are those of row `e_rows[a]`.
    e_ptr: Vec<usize>,
    /// `(slot, reduced slot)` of the entries of A.
    a_entries: Vec<(usize, usize)>,
    /// Values of E (the order of `e_entries`).
    e_values: Vec<f64>,
    /// The X rows holding an entry of E (sorted, distinct).
    e_rows: Vec<usize>,
    /// The coordinate columns of X: `0..n` and `nb..nb + n`.
    q_cols: Vec<usize>,
    /// `update_slot[a * q_cols.len() + b]`: reduced slot of (e_rows[a], q_cols[b]).
    update_slot: Vec<usize>,
    /// The reduced matrix `A - E D^-1 F` (pattern, values, solver).
    pattern: Pattern,
    values: Vec<f64>,
    solver: SaddlePointSolver,
    /// D1, D2 (column-major, the dense pattern's order) and their solvers.
    d1: Vec<f64>,
    d2: Vec<f64>,
    d1_solver: SaddlePointSolver,
    d2_solver: SaddlePointSolver,
    /// `D^-1 F` of F's coordinate columns: the D1 and D2 parts
    /// (column-major, nb x 2n each).
    w1: Vec<f64>,
    w2: Vec<f64>,
    /// Scratch: a Y vector (2 nb), the combined Y right-hand side, an X vector.
    y: Vec<f64>,
    by: Vec<f64>,
    x: Vec<f64>,
}

impl Reduction {
    /// The reduction for the alpha–kappa block matrix `full` (dimension
    /// 4 nb, unknowns `[q1; lg | qj; lj | v1; eta1 | vj; etaj]`), or `None`
    /// when the reduced system is larger than [`crate::linalg::DENSE_MAX`]
    /// or the solver is forced sparse.
    pub fn new(
        full: &Pattern,
        n: usize,
        nb: usize,
        alpha: f64,
        force_sparse: bool,
    ) -> Result<Option<Self>, SolveError> {
        if force_sparse || 2 * nb > crate::linalg::DENSE_MAX {
            return Ok(None);
        }
        assert_eq!(full.dim, 4 * nb, "the alpha–kappa block matrix");
        let (ny, nx) = (2 * nb, 2 * nb);
        let mut y_entries = Vec::new();
        let mut e_entries = Vec::new();
        let mut a_pairs = Vec::new();
        for c in 0..full.dim {
            for s in full.col_ptr[c]..full.col_ptr[c + 1] {
                let r = full.row_idx[s];
                match (r < nx, c < nx) {
                    (true, true) => a_pairs.push((s, r, c)),
                    (true, false) => e_entries.push((s, r, c - nx)),
                    (false, _) => y_entries.push((s, r - nx, c)),
                }
            }
        }
        let q_cols: Vec<usize> = (0..n).chain(nb..nb + n).collect();
        // F's multiplier columns are zero (eq. 66: the Y rows do not hold
        // lambda); a pattern with entries there is not reduced.
        if y_entries
            .iter()
            .any(|&(_, _, c)| c < nx && !q_cols.contains(&c))
        {
            return Ok(None);
        }
        e_entries.sort_unstable_by_key(|&(_, r, c)| (r, c));
        let mut e_rows: Vec<usize> = e_entries.iter().map(|&(_, r, _)| r).collect();
        e_rows.dedup();
        let mut e_ptr = vec![0];
        for &row in &e_rows {
            e_ptr.push(e_ptr.last().unwrap() + e_entries.iter().filter(|e| e.1 == row).count());
        }
        let mut pairs: Vec<(usize, usize)> = a_pairs.iter().map(|&(_, r, c)| (r, c)).collect();
        for &r in &e_rows {
            pairs.extend(q_cols.iter().map(|&c| (r, c)));
        }
        let pattern = Pattern::from_pairs(nx, pairs);
        let a_entries = a_pairs
            .iter()
            .map(|&(s, r, c)| (s, pattern.slot(r, c)))
            .collect();
        let mut update_slot = Vec::with_capacity(e_rows.len() * q_cols.len());
        pattern.block_slots(&e_rows, &q_cols, &mut update_slot);
        let solver = SaddlePointSolver::preferring_band(&pattern, false)?;
        let dense = Pattern::from_pairs(
            nb,
            (0..nb).flat_map(|c| (0..nb).map(move |r| (r, c))).collect(),
        );
        Ok(Some(Reduction {
            n,
            nb,
            alpha,
            yrows: vec![0.0; ny * full.dim],
            e_values: vec![0.0; e_entries.len()],
            y_entries,
            e_entries,
            e_ptr,
            a_entries,
            e_rows,
            q_cols,
            update_slot,
            values: vec![0.0; pattern.nnz()],
            pattern,
            solver,
            d1: vec![0.0; nb * nb],
            d2: vec![0.0; nb * nb],
            d1_solver: SaddlePointSolver::new(&dense, false)?,
            d2_solver: SaddlePointSolver::new(&dense, false)?,
            w1: vec![0.0; nb * 2 * n],
            w2: vec![0.0; nb * 2 * n],
            y: vec![0.0; ny],
            by: vec![0.0; ny],
            x: vec![0.0; nx],
        }))
    }

    /// The reduced matrix's pattern (dimension 2 nb).
    pub fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    /// Which factorization the reduced system uses.
    pub fn describe(&self) -> String {
        self.solver.describe()
    }

    /// Combines the Y rows `2Rc` (local row i) and `6Rd` (local row nb + i),
    /// i < n, of a row-major array with `width` columns into P and Q.
    fn combine(&self, rows: &mut [f64], width: usize) {
        let (a, s) = (self.alpha, 1.0 / (1.0 + self.alpha));
        let (top, bottom) = rows.split_at_mut(self.nb * width);
        for i in 0..self.n {
            let c = &mut top[i * width..(i + 1) * width];
            let d = &mut bottom[i * width..(i + 1) * width];
            for (c, d) in c.iter_mut().zip(d.iter_mut()) {
                let (rc, rd) = (*c, *d);
                *c = (rd - a * rc) * s;
                *d = -(rc + rd) * s;
            }
        }
    }

    /// `y = D^-1 y` in place (back substitution through the block triangle).
    fn solve_d(&mut self) -> Result<(), SolveError> {
        let (nb, w) = (self.nb, 4 * self.nb);
        let (y1, y2) = self.y.split_at_mut(nb);
        self.d2_solver.solve(y2)?;
        for (i, o) in y1.iter_mut().enumerate() {
            let row = &self.yrows[i * w + 3 * nb..(i + 1) * w];
            *o -= row.iter().zip(y2.iter()).map(|(a, b)| a * b).sum::<f64>();
        }
        self.d1_solver.solve(y1)
    }

    /// Factors the system with the block matrix's `values` (the full
    /// pattern's order): D1, D2 and the reduced matrix.
    pub fn factor(&mut self, values: &[f64]) -> Result<(), SolveError> {
        let (nb, w) = (self.nb, 4 * self.nb);
        self.yrows.fill(0.0);
        for &(s, r, c) in &self.y_entries {
            self.yrows[r * w + c] = values[s];
        }
        let mut rows = std::mem::take(&mut self.yrows);
        self.combine(&mut rows, w);
        self.yrows = rows;
        for c in 0..nb {
            for r in 0..nb {
                self.d1[r + c * nb] = self.yrows[r * w + 2 * nb + c];
                self.d2[r + c * nb] = self.yrows[(nb + r) * w + 3 * nb + c];
            }
        }
        self.d1_solver.factor(&self.d1)?;
        self.d2_solver.factor(&self.d2)?;
        self.values.fill(0.0);
        for &(s, t) in &self.a_entries {
            self.values[t] = values[s];
        }
        for (e, &(s, _, _)) in self.e_values.iter_mut().zip(&self.e_entries) {
            *e = values[s];
        }
        // W = D^-1 F on F's coordinate columns, all columns at once:
        // W2 = D2^-1 F2, W1 = D1^-1 (F1 - R W2).
        let nq = self.q_cols.len();
        for (b, &c) in self.q_cols.iter().enumerate() {
            for r in 0..nb {
                self.w1[b * nb + r] = self.yrows[r * w + c];
                self.w2[b * nb + r] = self.yrows[(nb + r) * w + c];
            }
        }
        self.d2_solver.solve_columns(&mut self.w2)?;
        for (w1, w2) in self.w1.chunks_mut(nb).zip(self.w2.chunks(nb)) {
            for (i, o) in w1.iter_mut().enumerate() {
                let row = &self.yrows[i * w + 3 * nb..(i + 1) * w];
                *o -= row.iter().zip(w2).map(|(a, b)| a * b).sum::<f64>();
            }
        }
        self.d1_solver.solve_columns(&mut self.w1)?;
        // A - E W: E's columns are Y columns (v1, eta1 in W1, vj, etaj in W2).
        for b in 0..nq {
            let (w1, w2) = (
                &self.w1[b * nb..(b + 1) * nb],
                &self.w2[b * nb..(b + 1) * nb],
            );
            for a in 0..self.e_rows.len() {
                let range = self.e_ptr[a]..self.e_ptr[a + 1];
                let sum: f64 = self.e_entries[range.clone()]
                    .iter()
                    .zip(&self.e_values[range])
                    .map(|(&(_, _, yc), e)| e * if yc < nb { w1[yc] } else { w2[yc - nb] })
                    .sum();
                self.values[self.update_slot[a * nq + b]] -= sum;
            }
        }
        self.solver.factor(&self.values)
    }

    /// Solves `J d = rhs` in place (`rhs` in the block matrix's row order)
    /// with the last factorization.
    pub fn solve(&mut self, rhs: &mut [f64]) -> Result<(), SolveError> {
        let (nx, w) = (2 * self.nb, 4 * self.nb);
        let mut by = std::mem::take(&mut self.by);
        by.copy_from_slice(&rhs[nx..]);
        self.combine(&mut by, 1);
        // dX from (A - E D^-1 F) dX = bX - E D^-1 bY.
        self.y.copy_from_slice(&by);
        self.solve_d()?;
        self.x.copy_from_slice(&rhs[..nx]);
        for (&(_, r, yc), &e) in self.e_entries.iter().zip(&self.e_values) {
            self.x[r] -= e * self.y[yc];
        }
        self.solver.solve(&mut self.x)?;
        // dY = D^-1 (bY - F dX); F has only coordinate columns.
        for (r, y) in self.y.iter_mut().enumerate() {
            let row = &self.yrows[r * w..r * w + nx];
            *y = by[r] - self.q_cols.iter().map(|&c| row[c] * self.x[c]).sum::<f64>();
        }
        self.by = by;
        self.solve_d()?;
        rhs[..nx].copy_from_slice(&self.x);
        rhs[nx..].copy_from_slice(&self.y);
        Ok(())
    }
}
