//! Symmetric factorization of the saddle-point matrices: faer's sparse
//! `LDLᵀ` (supernodal or simplicial by its own flop ratio) of the symmetric
//! part `Ā = (A + Aᵀ)/2` with static pivoting, followed by iterative
//! refinement against the true matrix `A`.
//!
//! The Newton matrix `[S C; B 0]` is symmetric when `C = Bᵀ` and `S` is (a
//! conservative model, midpoint with option 2, the index-1 systems); follower
//! loads, damping and some constraint options make it slightly unsymmetric
//! (relative 1e-5 on the bench problems). `Ā` is quasi-definite in the sense
//! of Vanderbei (1995) after the pivot signs are fixed: `+` on the rows with a
//! positive diagonal (the coordinate block), `−` on the others (the constraint
//! rows, whose diagonal is zero). A pivot of the wrong sign or of magnitude
//! at most `ε ‖A‖` is replaced by `±δ ‖A‖` (faer's dynamic regularization),
//! so the factorization never breaks down and any symmetric fill-reducing
//! ordering may be used (AMD or METIS nested dissection, the one of fewer
//! factor nonzeros). The factor of the perturbed symmetric matrix `M ≈ A`
//! then serves as the preconditioner of the refinement
//! `x ← x + M⁻¹ (b − A x)` (Higham 2002, §12.1), which stops when the normwise
//! backward error `‖b − A x‖∞ / (‖A‖∞ ‖x‖∞ + ‖b‖∞)` is at most
//! [`REFINE_TOL`], and reports failure when it does not get there within
//! [`MAX_REFINE`] steps or stops decreasing; the caller then solves with the
//! LU ([`super::SaddlePointSolver`]).

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::LdltRegularization;
use faer::perm::PermRef;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, LdltRef, SymbolicCholesky, SymmetricOrdering,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};

use super::sparse::Ordering;
use super::Pattern;
use super::SolveError;

/// Normwise backward error at which the refinement stops.
pub const REFINE_TOL: f64 = 1e-14;

/// Refinement steps at most before the solve is declared unconverged.
pub const MAX_REFINE: usize = 10;

/// Pivots of magnitude at most `EPSILON ‖A‖_max` (or of the wrong sign) are
/// regularized.
const EPSILON: f64 = 1e-13;

/// The regularized pivot magnitude, relative to `‖A‖_max` (the square root
/// of the unit round-off, as in PARDISO's default perturbation 1e-8).
const DELTA: f64 = 1e-8;

/// No source entry.
const NONE: usize = usize::MAX;

/// Whether the pattern is structurally symmetric (entry (i, j) stored
/// exactly when (j, i) is).
pub fn structurally_symmetric(pattern: &Pattern) -> bool {
    let n = pattern.dim;
    (0..n).all(|c| {
        pattern.row_idx[pattern.col_ptr[c]..pattern.col_ptr[c + 1]]
            .iter()
            .all(|&r| {
                pattern.row_idx[pattern.col_ptr[r]..pattern.col_ptr[r + 1]]
                    .binary_search(&c)
                    .is_ok()
            })
    })
}

/// The outcome of one refined solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Refinement {
    /// Refinement steps taken.
    pub steps: usize,
    /// Normwise backward error of the unrefined solve.
    pub first_backward_error: f64,
    /// Normwise backward error of the returned solution against `A`.
    pub backward_error: f64,
    /// Whether it reached [`REFINE_TOL`].
    pub converged: bool,
}

/// `LDLᵀ` of the symmetric part with static pivoting, refined against `A`.
pub struct SparseLdlt {
    dim: usize,
    /// `A`'s pattern and the values of the last factorization.
    pattern: Pattern,
    values: Vec<f64>,
    /// Upper triangle of `A + Aᵀ` with every diagonal entry, and for each of
    /// its entries the indices of `a_ij` and `a_ji` in `A`'s values.
    up_col_ptr: Vec<usize>,
    up_row_idx: Vec<usize>,
    up_src: Vec<[usize; 2]>,
    up_values: Vec<f64>,
    /// Index of each diagonal entry in `A`'s values.
    diag_src: Vec<usize>,
    signs: Vec<i8>,
    symbolic: SymbolicCholesky<usize>,
    ordering: Ordering,
    candidates: Vec<(Ordering, usize)>,
    l_values: Vec<f64>,
    a_inf: f64,
    b: Vec<f64>,
    r: Vec<f64>,
    mem: MemBuffer,
    par: Par,
}

fn lib_err(e: impl std::fmt::Debug) -> SolveError {
    SolveError::Library(format!("{e:?}"))
}

impl SparseLdlt {
    /// Symbolic analysis of the symmetric structure of `pattern` with AMD
    /// and METIS, keeping the ordering of fewer factor nonzeros (or the given
    /// one: [`Ordering::Amd`] or [`Ordering::Metis`]).
    pub fn new(
        pattern: &Pattern,
        ordering: Option<Ordering>,
        par: Par,
    ) -> Result<Self, SolveError> {
        let n = pattern.dim;
        let nnz = pattern.nnz();
        // Position of (r, c) in A, by column: a sorted row search.
        let find = |r: usize, c: usize| -> usize {
            let s = pattern.col_ptr[c];
            pattern.row_idx[s..pattern.col_ptr[c + 1]]
                .binary_search(&r)
                .map_or(NONE, |k| s + k)
        };
        // Rows r <= c of column c of A + Aᵀ: from column c of A and from row c
        // of A (column c of Aᵀ), plus the diagonal.
        let mut lower_of: Vec<Vec<usize>> = vec![Vec::new(); n];
        for c in 0..n {
            for &r in &pattern.row_idx[pattern.col_ptr[c]..pattern.col_ptr[c + 1]] {
                if r > c {
                    // (r, c) below the diagonal: (c, r) is in upper column r.
                    lower_of[r].push(c);
                }
            }
        }
        let mut up_col_ptr = Vec::with_capacity(n + 1);
        let mut up_row_idx = Vec::with_capacity(nnz / 2 + n);
        let mut up_src = Vec::with_capacity(nnz / 2 + n);
        let mut diag_src = vec![NONE; n];
        up_col_ptr.push(0);
        let mut col = Vec::new();
        for c in 0..n {
            col.clear();
            col.extend(
                pattern.row_idx[pattern.col_ptr[c]..pattern.col_ptr[c + 1]]
                    .iter()
                    .copied()
                    .filter(|&r| r < c),
            );
            col.append(&mut lower_of[c]);
            col.push(c);
            col.sort_unstable();
            col.dedup();
            for &r in &col {
                up_row_idx.push(r);
                up_src.push([find(r, c), find(c, r)]);
            }
            diag_src[c] = find(c, c);
            up_col_ptr.push(up_row_idx.len());
        }
        drop(lower_of);
        let up = SymbolicSparseColMatRef::new_checked(n, n, &up_col_ptr, None, &up_row_idx);
        let tried: Vec<Ordering> = match ordering {
            Some(o @ (Ordering::Amd | Ordering::Metis)) => vec![o],
            Some(Ordering::Colamd) => {
                return Err(SolveError::Library(
                    "COLAMD is an unsymmetric ordering; the LDLT takes amd or metis".into(),
                ))
            }
            None => vec![Ordering::Amd, Ordering::Metis],
        };
        let a =
            SymbolicSparseColMatRef::new_checked(n, n, &pattern.col_ptr, None, &pattern.row_idx);
        let mut best: Option<(Ordering, SymbolicCholesky<usize>)> = None;
        let mut candidates = Vec::new();
        for o in tried {
            let symbolic = match o {
                Ordering::Metis => {
                    let (mut fwd, mut inv) = (vec![0usize; n], vec![0usize; n]);
                    if !super::metis::node_nd(a, &mut fwd, &mut inv)? {
                        continue;
                    }
                    let perm = PermRef::new_checked(&fwd, &inv, n);
                    factorize_symbolic_cholesky(
                        up,
                        Side::Upper,
                        SymmetricOrdering::Custom(perm),
                        Default::default(),
                    )
                }
                _ => factorize_symbolic_cholesky(
                    up,
                    Side::Upper,
                    SymmetricOrdering::Amd,
                    Default::default(),
                ),
            }
            .map_err(lib_err)?;
            candidates.push((o, symbolic.len_val()));
            if best
                .as_ref()
                .is_none_or(|(_, b)| symbolic.len_val() < b.len_val())
            {
                best = Some((o, symbolic));
            }
        }
        let (ordering, symbolic) =
            best.ok_or_else(|| SolveError::Library("no symmetric ordering succeeded".into()))?;
        let req = StackReq::any_of(&[
            symbolic.factorize_numeric_ldlt_scratch::<f64>(par, Default::default()),
            symbolic.solve_in_place_scratch::<f64>(1, par),
        ]);
        Ok(SparseLdlt {
            dim: n,
            pattern: pattern.clone(),
            values: vec![0.0; nnz],
            up_values: vec![0.0; up_row_idx.len()],
            up_col_ptr,
            up_row_idx,
            up_src,
            diag_src,
            signs: vec![0; n],
            l_values: vec![0.0; symbolic.len_val()],
            symbolic,
            ordering,
            candidates,
            a_inf: 0.0,
            b: vec![0.0; n],
            r: vec![0.0; n],
            mem: MemBuffer::try_new(req).map_err(lib_err)?,
            par,
        })
    }

    /// The chosen ordering.
    pub fn ordering(&self) -> Ordering {
        self.ordering
    }

    /// Every ordering analysed with the factor nonzeros it gives.
    pub fn candidates(&self) -> &[(Ordering, usize)] {
        &self.candidates
    }

    /// Stored nonzeros of `L` (with `D`).
    pub fn fill(&self) -> usize {
        self.symbolic.len_val()
    }

    /// `supernodal` or `simplicial`.
    pub fn kind(&self) -> &'static str {
        match self.symbolic.raw() {
            faer::sparse::linalg::cholesky::SymbolicCholeskyRaw::Supernodal(_) => "supernodal",
            faer::sparse::linalg::cholesky::SymbolicCholeskyRaw::Simplicial(_) => "simplicial",
        }
    }

    /// The values of the last factorization (pattern order).
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    pub(super) fn values_mut(&mut self) -> &mut Vec<f64> {
        &mut self.values
    }

    /// The pattern of `A`.
    pub fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    /// Numeric factorization of the symmetric part of the matrix with the
    /// given values (pattern order), with pivot signs from its diagonal.
    pub fn factor(&mut self, values: &[f64]) -> Result<(), SolveError> {
        let n = self.dim;
        self.values.copy_from_slice(values);
        let at = |k: usize| if k == NONE { 0.0 } else { values[k] };
        for (v, &[ij, ji]) in self.up_values.iter_mut().zip(&self.up_src) {
            *v = 0.5 * (at(ij) + at(ji));
        }
        for (s, &k) in self.signs.iter_mut().zip(&self.diag_src) {
            *s = if at(k) > 0.0 { 1 } else { -1 };
        }
        // ‖A‖∞ for the backward error, ‖A‖_max for the regularization.
        self.r.fill(0.0);
        let mut a_max = 0.0f64;
        for (&r, &v) in self.pattern.row_idx.iter().zip(values) {
            self.r[r] += v.abs();
            a_max = a_max.max(v.abs());
        }
        self.a_inf = self.r.iter().fold(0.0, |m, &x| m.max(x));
        if !self.a_inf.is_finite() {
            return Err(SolveError::NonFinite);
        }
        let up = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(n, n, &self.up_col_ptr, None, &self.up_row_idx),
            &self.up_values,
        );
        let reg = LdltRegularization {
            dynamic_regularization_signs: Some(&self.signs),
            dynamic_regularization_delta: DELTA * a_max,
            dynamic_regularization_epsilon: EPSILON * a_max,
        };
        let stack = MemStack::new(&mut self.mem);
        self.symbolic
            .factorize_numeric_ldlt(
                &mut self.l_values,
                up,
                Side::Upper,
                reg,
                self.par,
                stack,
                Default::default(),
            )
            .map_err(|e| match e {
                faer::linalg::cholesky::ldlt::factor::LdltError::ZeroPivot { index } => {
                    SolveError::Singular { index: Some(index) }
                }
            })?;
        if self.l_values.iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(SolveError::NonFinite)
        }
    }

    fn apply_inverse(&mut self, x: &mut [f64]) {
        let n = self.dim;
        let stack = MemStack::new(&mut self.mem);
        LdltRef::new(&self.symbolic, &self.l_values).solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(x, n, 1),
            self.par,
            stack,
        );
    }

    /// Solves `Ā x = rhs` in place with the factor alone (no refinement).
    pub fn solve_unrefined(&mut self, rhs: &mut [f64]) {
        self.apply_inverse(rhs);
    }

    /// `r = b − A x` and the normwise backward error of `x`.
    fn residual(&mut self, x: &[f64]) -> f64 {
        self.r.copy_from_slice(&self.b);
        for (c, &xc) in x.iter().enumerate() {
            for k in self.pattern.col_ptr[c]..self.pattern.col_ptr[c + 1] {
                self.r[self.pattern.row_idx[k]] -= self.values[k] * xc;
            }
        }
        let norm = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let den = self.a_inf * norm(x) + norm(&self.b);
        if den == 0.0 {
            0.0
        } else {
            norm(&self.r) / den
        }
    }

    /// Solves `A x = rhs` in place: the `LDLᵀ` solve, then refinement against
    /// `A` until the backward error is at most [`REFINE_TOL`]. When it does not
    /// converge `rhs` is left unchanged (for the caller's fallback).
    pub fn solve(&mut self, rhs: &mut [f64]) -> Refinement {
        self.b.copy_from_slice(rhs);
        self.apply_inverse(rhs);
        let mut berr = self.residual(rhs);
        let first_backward_error = berr;
        let mut steps = 0;
        while berr.is_finite() && berr > REFINE_TOL && steps < MAX_REFINE {
            let mut d = std::mem::take(&mut self.r);
            self.apply_inverse(&mut d);
            for (xi, di) in rhs.iter_mut().zip(&d) {
                *xi += di;
            }
            self.r = d;
            let next = self.residual(rhs);
            steps += 1;
            // Stagnation (or NaN): the contraction is too slow to reach the tolerance.
            let halved = next < 0.5 * berr;
            berr = next;
            if !halved {
                break;
            }
        }
        let converged = berr <= REFINE_TOL;
        if !converged {
            rhs.copy_from_slice(&self.b);
        }
        Refinement {
            steps,
            first_backward_error,
            backward_error: berr,
            converged,
        }
    }
}
