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
//!
//! # Newton's solves
//!
//! A caller may ask for a larger backward error ([`SparseLdlt::set_refine_tol`],
//! [`SparseLdlt::solve_to`]). Newton's correction solves ask for
//! [`newton_refine_tol`]`(rtol) = NEWTON_REFINE_FACTOR rtol` (`1e-8` at the
//! default `rtol = 1e-6` of the scaled test); the projections and the
//! consistent initial accelerations keep [`REFINE_TOL`]. The reason: a
//! solution `x̂` of `J dx = −F` with normwise backward error `β` is the exact
//! correction of `(J + ΔJ) x̂ = −F + ΔF` with `‖ΔJ‖ ≤ β ‖J‖`, `‖ΔF‖ ≤ β ‖F‖`
//! (Rigal and Gaches 1967; Higham 2002, Thm. 7.1), so Newton with such solves
//! is an inexact Newton method (Dembo, Eisenstat and Steihaug 1982): it
//! converges to the same root, and the solve adds to the next correction an
//! error `δ = J⁻¹ r̂`, `‖r̂‖ ≤ β (‖J‖ ‖x̂‖ + ‖F‖)`, of at most about `κ β`
//! times the current correction (`κ` the condition number as the solve
//! sees it). Newton stops at the first correction under its tolerance
//! (`rtol |x| + atol`); from a correction of relative size up to 1 (the
//! predictor's error is far smaller), the solve's share of the next one stays
//! under the tolerance when `κ β ≤ rtol`, and Newton then takes the same
//! iterations as with exact solves (its quadratic convergence is kept down to
//! the tolerance). `κ` is not known, so the request leaves two orders for
//! it: `β = 1e-2 rtol`, "a few orders under the tolerance". Measured
//! (`flexmb run models/slider_crank_rigid.toml --sparse --factorization ldlt
//! --t-end 0.2`, full and modified Newton): 2.000 iterations per step with
//! `β` from round-off to 1e-5, 2.29 at 3e-5 and 2.39 at 1e-4, so the default
//! request is three orders inside the margin. On L2 (100,352 DOFs, 5 steps
//! of `flexmb bench l2 --sizes 223`) the plain solve's backward error is 5e-6
//! to 1.4e-5 (the unsymmetric pairs of the follower load, which the factor
//! of `Ā` does not see) and each refinement step gains about four orders,
//! so Newton's solves take one refinement step instead of three, with the
//! same 3.0 iterations per step. A solve that does not reach the request
//! falls back to the LU as before.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::LdltRegularization;
use faer::perm::PermRef;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, simplicial, supernodal, LdltRef, SymbolicCholesky,
    SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};

use super::sparse::Ordering;
use super::supernodal::TreeSolve;
use super::supernodal_factor::TreeFactor;
use super::Pattern;
use super::SolveError;

/// Normwise backward error at which the refinement stops.
pub const REFINE_TOL: f64 = 1e-14;

/// Newton's request as a fraction of its relative tolerance
/// ([`newton_refine_tol`]).
pub const NEWTON_REFINE_FACTOR: f64 = 1e-2;

/// The normwise backward error Newton's correction solves refine to, for
/// the relative tolerance `rtol` of its convergence test:
/// `NEWTON_REFINE_FACTOR rtol`, at least [`REFINE_TOL`] (module
/// documentation, "Newton's solves").
pub fn newton_refine_tol(rtol: f64) -> f64 {
    (NEWTON_REFINE_FACTOR * rtol).max(REFINE_TOL)
}

/// The environment variable that, set to `faer`, makes faer's numeric
/// factorization (its supernodal `LDLᵀ`, parallel inside dense blocks only)
/// the default instead of the tree-parallel one (docs/bench.md).
pub const LDLT_FACTOR_ENV: &str = "FLEXMB_LDLT_FACTOR";

/// Whether the tree-parallel numeric factorization is the default
/// ([`LDLT_FACTOR_ENV`]).
fn tree_factor_default() -> bool {
    std::env::var(LDLT_FACTOR_ENV).map_or(true, |v| v != "faer")
}

/// Refinement steps at most before the solve is declared unconverged.
pub const MAX_REFINE: usize = 10;

/// Pivots of magnitude at most `EPSILON ‖A‖_max` (or of the wrong sign) are
/// regularized.
const EPSILON: f64 = 1e-13;

/// The regularized pivot magnitude, relative to `‖A‖_max` (the square root
/// of the unit round-off, as in PARDISO's default perturbation 1e-8).
const DELTA: f64 = 1e-8;

/// No source entry.
const NONE: u32 = u32::MAX;

/// Multiply-adds per stored entry of `L` from which [`SparseLdlt::new_adaptive`]
/// factors on several threads. faer parallelizes inside each supernode's
/// dense products; that pays only when most of the work is in large ones.
/// Measured on one and two threads of an idle 2-core machine
/// (`docs/bench.md`, "Threads"): L3 at 54,756 rows (587 per entry) 30 %
/// faster, at 21,660 rows (327) 2–18 %; L3 at 10,800 rows (214) and every
/// L2 size up to 998,284 rows (243) 15–80 % slower.
pub const PARALLEL_MIN_WORK_PER_ENTRY: f64 = 300.0;

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
    /// Whether it reached the requested backward error.
    pub converged: bool,
}

/// `LDLᵀ` of the symmetric part with static pivoting, refined against `A`.
///
/// Everything is kept in the chosen ordering: the triangle of `P Ā Pᵀ` that
/// faer's numeric factorization reads as it is (the lower one for the
/// supernodal factorization, the upper one for the simplicial), so faer makes
/// no permuted copy of its own, and the symbolic factorization carries no
/// permutation. `A` itself is not copied: its entries are `Ā`'s plus, for the
/// pairs whose two values differ, their two values.
pub struct SparseLdlt {
    dim: usize,
    /// The ordering: `fwd[new] = old`.
    fwd: Vec<usize>,
    /// The triangle of `P Ā Pᵀ` read by faer (CSC, every diagonal entry).
    tri_col_ptr: Vec<u32>,
    tri_row_idx: Vec<u32>,
    tri_values: Vec<f64>,
    /// Whether `tri` is the lower triangle (supernodal) or the upper one.
    lower: bool,
    /// For each `tri` entry at `(i, j)`: the positions of `a_ij` and `a_ji`
    /// (original numbering) in the caller's values, [`NONE`] when absent.
    tri_src: Vec<[u32; 2]>,
    /// Entries of the caller's values (the length of `A`'s pattern).
    nnz: usize,
    /// The pairs of the last factored matrix whose two values differ. Its
    /// capacity is one per off-diagonal `tri` entry, so it never grows; only
    /// the part in use is ever written (resident).
    skew: Vec<Skew>,
    /// Pivot signs, in the chosen ordering.
    signs: Vec<i8>,
    symbolic: SymbolicCholesky<u32>,
    ordering: Ordering,
    candidates: Vec<(Ordering, usize)>,
    l_values: Vec<f64>,
    a_inf: f64,
    /// Right-hand side, solution and residual, in the chosen ordering.
    b: Vec<f64>,
    /// The tree-parallel solve of a supernodal factor.
    tree: Option<TreeSolve>,
    /// The tree-parallel numeric factorization of a supernodal factor
    /// (`None`: faer's; [`SparseLdlt::set_tree_factor`]).
    tree_factor: Option<TreeFactor>,
    /// The parallelism the caller asked for (the tree factorization's top
    /// kernels run on it).
    par_asked: Par,
    /// Pivots the last factorization regularized.
    regularized: usize,
    x: Vec<f64>,
    r: Vec<f64>,
    mem: MemBuffer,
    par: Par,
    /// See [`SparseLdlt::multiply_adds`].
    multiply_adds: f64,
    /// The backward error [`SparseLdlt::solve`] refines to
    /// ([`SparseLdlt::set_refine_tol`]).
    refine_tol: f64,
}

/// One pair of `A` (in the chosen ordering) that differs from its transpose:
/// its values `a_ij`, `a_ji` at `tri` entry `k` (row `i`) of column `j`, whose
/// stored symmetric value is `ā_ij = (a_ij + a_ji) / 2`.
#[derive(Debug, Clone, Copy)]
struct Skew {
    j: u32,
    k: u32,
    a_ij: f64,
    a_ji: f64,
}

fn lib_err(e: impl std::fmt::Debug) -> SolveError {
    SolveError::Library(format!("{e:?}"))
}

/// CSC transpose of a structure (`n × n`); the rows of each output column
/// come out sorted.
fn transpose<I: faer::Index>(n: usize, col_ptr: &[I], row_idx: &[I]) -> (Vec<I>, Vec<I>) {
    let mut count = vec![0usize; n + 1];
    for &r in row_idx {
        count[r.zx() + 1] += 1;
    }
    for c in 0..n {
        count[c + 1] += count[c];
    }
    let mut next = count[..n].to_vec();
    let mut t_idx = vec![I::truncate(0); row_idx.len()];
    for c in 0..n {
        for &r in &row_idx[col_ptr[c].zx()..col_ptr[c + 1].zx()] {
            t_idx[next[r.zx()]] = I::truncate(c);
            next[r.zx()] += 1;
        }
    }
    (count.into_iter().map(I::truncate).collect(), t_idx)
}

/// See [`SparseLdlt::multiply_adds`].
fn multiply_adds(symbolic: &SymbolicCholesky<u32>) -> f64 {
    let column = |m: f64| m * (m + 1.0) / 2.0;
    match symbolic.raw() {
        SymbolicCholeskyRaw::Supernodal(s) => (0..s.n_supernodes())
            .map(|k| {
                let cols = (s.supernode_end()[k] - s.supernode_begin()[k]) as usize;
                let below = s.supernode(k).pattern().len();
                (0..cols)
                    .map(|j| column((cols - 1 - j + below) as f64))
                    .sum::<f64>()
            })
            .sum(),
        // L by columns (CSC), the diagonal (which holds D) included.
        SymbolicCholeskyRaw::Simplicial(s) => s
            .col_ptr()
            .windows(2)
            .map(|w| column((w[1] - w[0]) as f64 - 1.0))
            .sum(),
    }
}

/// Upper triangle (with every diagonal entry) of the structure of `A + Aᵀ`,
/// sorted rows without duplicates, by column.
fn upper_pattern(pattern: &Pattern) -> (Vec<usize>, Vec<usize>) {
    let (n, nnz) = (pattern.dim, pattern.nnz());
    let (t_ptr, t_idx) = transpose(n, &pattern.col_ptr, &pattern.row_idx);
    let mut col_ptr = Vec::with_capacity(n + 1);
    let mut row_idx = Vec::with_capacity(nnz / 2 + n);
    col_ptr.push(0);
    for c in 0..n {
        let start = row_idx.len();
        row_idx.extend(
            pattern.row_idx[pattern.col_ptr[c]..pattern.col_ptr[c + 1]]
                .iter()
                .chain(&t_idx[t_ptr[c]..t_ptr[c + 1]])
                .copied()
                .filter(|&r| r < c),
        );
        row_idx.push(c);
        row_idx[start..].sort_unstable();
        let mut w = start;
        for k in start..row_idx.len() {
            if k == start || row_idx[k] != row_idx[w - 1] {
                row_idx[w] = row_idx[k];
                w += 1;
            }
        }
        row_idx.truncate(w);
        col_ptr.push(row_idx.len());
    }
    (col_ptr, row_idx)
}

/// The chosen ordering, every candidate's factor size, the permutation and its
/// inverse.
type OrderingChoice = (Ordering, Vec<(Ordering, usize)>, Vec<usize>, Vec<usize>);

/// A symmetric fill-reducing ordering and its inverse, the one of `tried` with
/// the smallest factor of `up` (upper triangle of `A + Aᵀ`; `a` the pattern of
/// `A` for METIS), with every candidate's factor size.
fn best_ordering(
    tried: Vec<Ordering>,
    a: SymbolicSparseColMatRef<'_, usize>,
    up: SymbolicSparseColMatRef<'_, usize>,
) -> Result<OrderingChoice, SolveError> {
    let n = up.ncols();
    let mut best: Option<(Ordering, usize, Vec<usize>, Vec<usize>)> = None;
    let mut candidates = Vec::new();
    for o in tried {
        let (mut fwd, mut inv) = (vec![0usize; n], vec![0usize; n]);
        let fill = match o {
            Ordering::Metis => {
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
                .map_err(lib_err)?
                .len_val()
            }
            _ => {
                let symbolic = factorize_symbolic_cholesky(
                    up,
                    Side::Upper,
                    SymmetricOrdering::Amd,
                    Default::default(),
                )
                .map_err(lib_err)?;
                let perm = symbolic
                    .perm()
                    .ok_or_else(|| SolveError::Library("AMD gave no permutation".into()))?;
                let (f, i) = perm.arrays();
                fwd.copy_from_slice(f);
                inv.copy_from_slice(i);
                symbolic.len_val()
            }
        };
        candidates.push((o, fill));
        if best.as_ref().is_none_or(|b| fill < b.1) {
            best = Some((o, fill, fwd, inv));
        }
    }
    let (ordering, _, fwd, inv) =
        best.ok_or_else(|| SolveError::Library("no symmetric ordering succeeded".into()))?;
    Ok((ordering, candidates, fwd, inv))
}

/// Upper triangle of P (A + Aᵀ) Pᵀ: entry (r, c) of `up` goes to
/// (inv r, inv c), in the upper triangle of its column. 32-bit indices
/// from here on (faer's symbolic factor too): they halve the stored
/// structure of the triangle and of L's supernodes.
fn permuted_upper(
    up_col_ptr: &[usize],
    up_row_idx: &[usize],
    inv: &[usize],
) -> (Vec<u32>, Vec<u32>) {
    let n = inv.len();
    let mut col_ptr = vec![0u32; n + 1];
    for c in 0..n {
        for &r in &up_row_idx[up_col_ptr[c]..up_col_ptr[c + 1]] {
            col_ptr[inv[r].max(inv[c]) + 1] += 1;
        }
    }
    for c in 0..n {
        col_ptr[c + 1] += col_ptr[c];
    }
    let mut next = col_ptr[..n].to_vec();
    let mut row_idx = vec![0u32; up_row_idx.len()];
    for c in 0..n {
        for &r in &up_row_idx[up_col_ptr[c]..up_col_ptr[c + 1]] {
            let (pr, pc) = (inv[r].min(inv[c]), inv[r].max(inv[c]));
            row_idx[next[pc] as usize] = pr as u32;
            next[pc] += 1;
        }
    }
    for c in 0..n {
        row_idx[col_ptr[c] as usize..col_ptr[c + 1] as usize].sort_unstable();
    }
    (col_ptr, row_idx)
}

/// For each stored entry (i, j) of the permuted triangle, the positions in
/// `A`'s values of (fwd i, fwd j) and of its mirror (`NONE` where absent or on
/// the diagonal): a sorted row search by column.
fn entry_sources(
    pattern: &Pattern,
    fwd: &[usize],
    tri_col_ptr: &[u32],
    tri_row_idx: &[u32],
) -> Vec<[u32; 2]> {
    let n = fwd.len();
    let find = |r: usize, c: usize| -> u32 {
        let s = pattern.col_ptr[c];
        pattern.row_idx[s..pattern.col_ptr[c + 1]]
            .binary_search(&r)
            .map_or(NONE, |k| (s + k) as u32)
    };
    let mut tri_src = Vec::with_capacity(tri_row_idx.len());
    for j in 0..n {
        for &i in &tri_row_idx[tri_col_ptr[j] as usize..tri_col_ptr[j + 1] as usize] {
            let i = i as usize;
            let (r, c) = (fwd[i], fwd[j]);
            tri_src.push([find(r, c), if i == j { NONE } else { find(c, r) }]);
        }
    }
    tri_src
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
        Self::build(pattern, ordering, par, false)
    }

    /// As [`Self::new`], but factoring on `par`'s threads only when the
    /// factor's work per stored entry reaches [`PARALLEL_MIN_WORK_PER_ENTRY`],
    /// else on one.
    pub fn new_adaptive(
        pattern: &Pattern,
        ordering: Option<Ordering>,
        par: Par,
    ) -> Result<Self, SolveError> {
        Self::build(pattern, ordering, par, true)
    }

    fn build(
        pattern: &Pattern,
        ordering: Option<Ordering>,
        par: Par,
        adaptive: bool,
    ) -> Result<Self, SolveError> {
        let n = pattern.dim;
        let nnz = pattern.nnz();
        if nnz.saturating_add(n) >= NONE as usize {
            return Err(SolveError::Library(
                "matrix too large for the LDLT's 32-bit entry map".into(),
            ));
        }
        let tried: Vec<Ordering> = match ordering {
            Some(o @ (Ordering::Amd | Ordering::Metis)) => vec![o],
            Some(Ordering::Colamd) => {
                return Err(SolveError::Library(
                    "COLAMD is an unsymmetric ordering; the LDLT takes amd or metis".into(),
                ))
            }
            None => vec![Ordering::Amd, Ordering::Metis],
        };
        let (up_col_ptr, up_row_idx) = upper_pattern(pattern);
        let up = SymbolicSparseColMatRef::new_checked(n, n, &up_col_ptr, None, &up_row_idx);
        let a =
            SymbolicSparseColMatRef::new_checked(n, n, &pattern.col_ptr, None, &pattern.row_idx);
        let (ordering, candidates, fwd, inv) = best_ordering(tried, a, up)?;
        let (p_col_ptr, p_row_idx) = permuted_upper(&up_col_ptr, &up_row_idx, &inv);
        drop((up_col_ptr, up_row_idx));
        let symbolic = factorize_symbolic_cholesky(
            SymbolicSparseColMatRef::new_checked(n, n, &p_col_ptr, None, &p_row_idx),
            Side::Upper,
            SymmetricOrdering::Identity,
            Default::default(),
        )
        .map_err(SolveError::from)?;
        drop(inv);
        // faer's supernodal factorization reads the lower triangle, the
        // simplicial one the upper: given that side, it copies nothing.
        let lower = matches!(symbolic.raw(), SymbolicCholeskyRaw::Supernodal(_));
        let (tri_col_ptr, tri_row_idx) = if lower {
            let t = transpose(n, &p_col_ptr, &p_row_idx);
            drop((p_col_ptr, p_row_idx));
            t
        } else {
            (p_col_ptr, p_row_idx)
        };
        let tri_src = entry_sources(pattern, &fwd, &tri_col_ptr, &tri_row_idx);
        let off_diagonal = tri_row_idx.len() - n;
        let multiply_adds = multiply_adds(&symbolic);
        let par_asked = par;
        let par = if adaptive
            && multiply_adds < PARALLEL_MIN_WORK_PER_ENTRY * symbolic.len_val() as f64
        {
            Par::Seq
        } else {
            par
        };
        let req = StackReq::any_of(&[
            symbolic.factorize_numeric_ldlt_scratch::<f64>(par, Default::default()),
            symbolic.solve_in_place_scratch::<f64>(1, par),
        ]);
        let tree = match symbolic.raw() {
            SymbolicCholeskyRaw::Supernodal(s) => Some(TreeSolve::new(s)),
            SymbolicCholeskyRaw::Simplicial(_) => None,
        };
        let tree_factor = match symbolic.raw() {
            SymbolicCholeskyRaw::Supernodal(s) if tree_factor_default() => {
                Some(TreeFactor::new(s, par_asked))
            }
            _ => None,
        };
        super::heap::release_freed_memory(nnz);
        Ok(SparseLdlt {
            dim: n,
            fwd,
            tri_values: vec![0.0; tri_row_idx.len()],
            tri_col_ptr,
            tri_row_idx,
            lower,
            tri_src,
            nnz,
            skew: Vec::with_capacity(off_diagonal),
            signs: vec![0; n],
            l_values: vec![0.0; symbolic.len_val()],
            symbolic,
            ordering,
            candidates,
            a_inf: 0.0,
            b: vec![0.0; n],
            tree,
            tree_factor,
            par_asked,
            regularized: 0,
            x: vec![0.0; n],
            r: vec![0.0; n],
            mem: MemBuffer::try_new(req).map_err(lib_err)?,
            par,
            multiply_adds,
            refine_tol: REFINE_TOL,
        })
    }

    /// Multiply-adds of one numeric factorization: `Σ_j m_j (m_j + 1) / 2`
    /// over the columns of `L`, `m_j` the stored entries below the diagonal
    /// (the zeros of merged supernodes included, as faer computes them).
    pub fn multiply_adds(&self) -> f64 {
        self.multiply_adds
    }

    /// The parallelism the factorization runs with.
    pub fn par(&self) -> Par {
        self.par
    }

    /// The chosen ordering.
    pub fn ordering(&self) -> Ordering {
        self.ordering
    }

    /// The chosen permutation: entry `k` is the original index of the
    /// `k`-th unknown eliminated.
    pub fn permutation(&self) -> &[usize] {
        &self.fwd
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
        if self.lower {
            "supernodal"
        } else {
            "simplicial"
        }
    }

    /// The pattern of `A` and the values of the last factorization (pattern
    /// order), rebuilt from the stored symmetric part and unsymmetric pairs
    /// (for the LU fallback; allocates).
    pub fn matrix(&self) -> (Pattern, Vec<f64>) {
        let n = self.dim;
        let mut row_idx = vec![0usize; self.nnz];
        let mut col_ptr = vec![0usize; n + 1];
        let mut values = vec![0.0; self.nnz];
        let mut put = |src: u32, r: usize, c: usize, v: f64| {
            if src != NONE {
                row_idx[src as usize] = r;
                col_ptr[c + 1] += 1;
                values[src as usize] = v;
            }
        };
        for j in 0..n {
            for k in self.tri_col_ptr[j] as usize..self.tri_col_ptr[j + 1] as usize {
                let i = self.tri_row_idx[k] as usize;
                let (r, c) = (self.fwd[i], self.fwd[j]);
                let [ij, ji] = self.tri_src[k];
                put(ij, r, c, self.tri_values[k]);
                put(ji, c, r, self.tri_values[k]);
            }
        }
        for s in &self.skew {
            let [ij, ji] = self.tri_src[s.k as usize];
            for (src, a) in [(ij, s.a_ij), (ji, s.a_ji)] {
                if src != NONE {
                    values[src as usize] = a;
                }
            }
        }
        for c in 0..n {
            col_ptr[c + 1] += col_ptr[c];
        }
        (
            Pattern {
                dim: n,
                col_ptr,
                row_idx,
            },
            values,
        )
    }

    /// Numeric factorization of the symmetric part of the matrix with the
    /// given values (pattern order), with pivot signs from its diagonal.
    pub fn factor(&mut self, values: &[f64]) -> Result<(), SolveError> {
        let n = self.dim;
        let at = |k: u32| if k == NONE { 0.0 } else { values[k as usize] };
        // Ā's entries, the pairs that differ, and the row sums of |A| (in r).
        self.skew.clear();
        self.r.fill(0.0);
        for j in 0..n {
            for k in self.tri_col_ptr[j] as usize..self.tri_col_ptr[j + 1] as usize {
                let i = self.tri_row_idx[k] as usize;
                let [ij, ji] = self.tri_src[k];
                let (a_ij, a_ji) = (at(ij), if i == j { at(ij) } else { at(ji) });
                let v = 0.5 * (a_ij + a_ji);
                self.tri_values[k] = v;
                if i == j {
                    self.signs[i] = if a_ij > 0.0 { 1 } else { -1 };
                    self.r[i] += a_ij.abs();
                    continue;
                }
                self.r[i] += a_ij.abs();
                self.r[j] += a_ji.abs();
                if a_ij != a_ji {
                    self.skew.push(Skew {
                        j: j as u32,
                        k: k as u32,
                        a_ij,
                        a_ji,
                    });
                }
            }
        }
        // ‖A‖∞ for the backward error, ‖A‖_max for the regularization.
        self.a_inf = self.r.iter().fold(0.0, |m, &x| m.max(x));
        let a_max = values.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        if !self.a_inf.is_finite() || !a_max.is_finite() {
            return Err(SolveError::NonFinite);
        }
        let tri = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(n, n, &self.tri_col_ptr, None, &self.tri_row_idx),
            &self.tri_values,
        );
        let reg = LdltRegularization {
            dynamic_regularization_signs: Some(&self.signs),
            dynamic_regularization_delta: DELTA * a_max,
            dynamic_regularization_epsilon: EPSILON * a_max,
        };
        let zero_pivot = |e| match e {
            faer::linalg::cholesky::ldlt::factor::LdltError::ZeroPivot { index } => {
                SolveError::Singular { index: Some(index) }
            }
        };
        self.regularized = if let (Some(tf), SymbolicCholeskyRaw::Supernodal(s)) =
            (&mut self.tree_factor, self.symbolic.raw())
        {
            tf.factor(s, &mut self.l_values, tri, reg, self.par_asked)
                .map_err(zero_pivot)?
        } else {
            // faer's `factorize_numeric_ldlt` without a permutation: the
            // triangle is already on the side it reads.
            let stack = MemStack::new(&mut self.mem);
            match self.symbolic.raw() {
                SymbolicCholeskyRaw::Supernodal(s) => {
                    supernodal::factorize_supernodal_numeric_ldlt(
                        &mut self.l_values,
                        tri,
                        reg,
                        s,
                        self.par,
                        stack,
                        Default::default(),
                    )
                }
                SymbolicCholeskyRaw::Simplicial(s) => {
                    simplicial::factorize_simplicial_numeric_ldlt(
                        &mut self.l_values,
                        tri,
                        reg,
                        s,
                        stack,
                    )
                }
            }
            .map_err(zero_pivot)?
            .dynamic_regularization_count
        };
        if self.l_values.iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            // The input was finite (checked above): the factor overflowed.
            Err(SolveError::LdltBreakdown {
                regularized: self.regularized,
            })
        }
    }

    /// `x ← (L D Lᵀ)⁻¹ x` in the chosen ordering: the supernodal factor by
    /// the tree-parallel substitution ([`TreeSolve`]), the simplicial one (or,
    /// with `faer`, either) by faer's solve.
    fn apply_inverse(&mut self, x: &mut [f64], faer: bool) {
        if let (false, Some(tree), SymbolicCholeskyRaw::Supernodal(s)) =
            (faer, &mut self.tree, self.symbolic.raw())
        {
            tree.solve_in_place(s, &self.l_values, x);
            return;
        }
        let n = self.dim;
        let stack = MemStack::new(&mut self.mem);
        LdltRef::new(&self.symbolic, &self.l_values).solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(x, n, 1),
            self.par,
            stack,
        );
    }

    /// Whether the numeric factorization is the tree-parallel one
    /// (`linalg::supernodal_factor`) rather than faer's.
    pub fn tree_factor(&self) -> bool {
        self.tree_factor.is_some()
    }

    /// Chooses the tree-parallel numeric factorization (`true`, a supernodal
    /// factor only; builds its schedule, which allocates) or faer's. The
    /// default is the tree's unless the environment variable
    /// [`LDLT_FACTOR_ENV`] is `faer`.
    pub fn set_tree_factor(&mut self, tree: bool) {
        self.tree_factor = match (tree, self.symbolic.raw()) {
            (true, SymbolicCholeskyRaw::Supernodal(s)) => self
                .tree_factor
                .take()
                .or_else(|| Some(TreeFactor::new(s, self.par_asked))),
            _ => None,
        };
    }

    /// Pivots of sign `+` the last factorization replaced by `δ ‖A‖_max`
    /// (faer's count: the `−` side's replacements are not counted).
    pub fn regularized_pivots(&self) -> usize {
        self.regularized
    }

    /// The factor's values in faer's storage (`L` with `D` on its diagonal;
    /// supernodal: each supernode's dense block, column-major), in the chosen
    /// ordering.
    pub fn factor_values(&self) -> &[f64] {
        &self.l_values
    }

    /// Subtree tasks and top supernodes of the tree-parallel factorization
    /// (`(0, 0)` with faer's).
    pub fn factor_tasks(&self) -> (usize, usize) {
        self.tree_factor
            .as_ref()
            .map_or((0, 0), |t| (t.tasks(), t.top_len()))
    }

    /// Subtree tasks of the tree-parallel solve (0 for a simplicial factor).
    pub fn solve_tasks(&self) -> usize {
        self.tree.as_ref().map_or(0, TreeSolve::tasks)
    }

    /// Solves `Ā x = rhs` in place with the factor alone (no refinement).
    pub fn solve_unrefined(&mut self, rhs: &mut [f64]) {
        self.unrefined(rhs, false);
    }

    /// [`Self::solve_unrefined`] with faer's own triangular solves (the
    /// reference of the tree-parallel substitution, for tests).
    pub fn solve_unrefined_faer(&mut self, rhs: &mut [f64]) {
        self.unrefined(rhs, true);
    }

    fn unrefined(&mut self, rhs: &mut [f64], faer: bool) {
        let mut x = std::mem::take(&mut self.x);
        for (xi, &o) in x.iter_mut().zip(&self.fwd) {
            *xi = rhs[o];
        }
        self.apply_inverse(&mut x, faer);
        for (&xi, &o) in x.iter().zip(&self.fwd) {
            rhs[o] = xi;
        }
        self.x = x;
    }

    /// `r = b − A x` (in the chosen ordering: `Ā`'s triangle used both ways,
    /// then the differences of the unsymmetric pairs) and the normwise
    /// backward error of `x`.
    fn residual(&mut self) -> f64 {
        let (x, r) = (&self.x, &mut self.r);
        r.copy_from_slice(&self.b);
        for j in 0..self.dim {
            let xj = x[j];
            let mut rj = 0.0;
            for k in self.tri_col_ptr[j] as usize..self.tri_col_ptr[j + 1] as usize {
                let (i, v) = (self.tri_row_idx[k] as usize, self.tri_values[k]);
                r[i] -= v * xj;
                if i != j {
                    rj += v * x[i];
                }
            }
            r[j] -= rj;
        }
        for s in &self.skew {
            let (i, j) = (self.tri_row_idx[s.k as usize] as usize, s.j as usize);
            let v = self.tri_values[s.k as usize];
            r[i] -= (s.a_ij - v) * x[j];
            r[j] -= (s.a_ji - v) * x[i];
        }
        let norm = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let den = self.a_inf * norm(x) + norm(&self.b);
        if den == 0.0 {
            0.0
        } else {
            norm(r) / den
        }
    }

    /// The backward error [`Self::solve`] refines to: [`REFINE_TOL`] unless
    /// set (Newton's solves: [`newton_refine_tol`]).
    pub fn refine_tol(&self) -> f64 {
        self.refine_tol
    }

    /// Sets the backward error [`Self::solve`] refines to (clamped to at
    /// least [`REFINE_TOL`]: below it the refinement only stagnates).
    pub fn set_refine_tol(&mut self, tol: f64) {
        self.refine_tol = tol.max(REFINE_TOL);
    }

    /// Solves `A x = rhs` in place: the `LDLᵀ` solve, then refinement against
    /// `A` until the backward error is at most [`Self::refine_tol`]. When it
    /// does not converge `rhs` is left unchanged (for the caller's fallback).
    pub fn solve(&mut self, rhs: &mut [f64]) -> Refinement {
        self.solve_to(rhs, self.refine_tol)
    }

    /// [`Self::solve`] to the backward error `tol` (at least [`REFINE_TOL`]).
    pub fn solve_to(&mut self, rhs: &mut [f64], tol: f64) -> Refinement {
        let tol = tol.max(REFINE_TOL);
        for ((bi, xi), &o) in self.b.iter_mut().zip(self.x.iter_mut()).zip(&self.fwd) {
            *bi = rhs[o];
            *xi = rhs[o];
        }
        let mut x = std::mem::take(&mut self.x);
        self.apply_inverse(&mut x, false);
        self.x = x;
        let mut berr = self.residual();
        let first_backward_error = berr;
        let mut steps = 0;
        while berr.is_finite() && berr > tol && steps < MAX_REFINE {
            let mut d = std::mem::take(&mut self.r);
            self.apply_inverse(&mut d, false);
            for (xi, di) in self.x.iter_mut().zip(&d) {
                *xi += di;
            }
            self.r = d;
            let next = self.residual();
            steps += 1;
            // Stagnation (or NaN): the contraction is too slow to reach the tolerance.
            let halved = next < 0.5 * berr;
            berr = next;
            if !halved {
                break;
            }
        }
        let converged = berr <= tol;
        if converged {
            for (&xi, &o) in self.x.iter().zip(&self.fwd) {
                rhs[o] = xi;
            }
        }
        Refinement {
            steps,
            first_backward_error,
            backward_error: berr,
            converged,
        }
    }
}
