//! Linear algebra of the Newton steps: the saddle-point solver and the
//! diagnosis of singular systems.
//!
//! [`SaddlePointSolver`] factors `A = [S C; B 0]` with faer's sparse LU
//! (partial pivoting) after the column ordering of least predicted fill
//! ([`SparseLu`]: COLAMD, AMD or METIS). The symbolic factorization is computed
//! once per model from the fixed pattern and reused for every numeric
//! factorization. Below [`DENSE_MAX`] unknowns a dense partial-pivoting LU on a
//! preallocated buffer is used instead (faer's, or nalgebra's stack-only
//! fixed-size LU up to [`FIXED_MAX`] unknowns): for the 10-unknown double
//! pendulum it is several times cheaper than the sparse machinery. Larger
//! systems whose reverse Cuthill–McKee ordering has a band of at most
//! [`BAND_MAX`] use a banded LU ([`BandLu`]); the rest use the sparse LU, or
//! (see [`Factorization`]) the symmetric `LDLᵀ` with iterative refinement
//! ([`SparseLdlt`]) and the LU as its fallback.
//! [`SaddlePointSolver::export`] writes one system in Matrix Market.

mod band;
mod capture;
mod fixed;
mod heap;
mod ldlt;
mod market;
mod metis;
mod pattern;
mod schur;
mod sparse;
mod supernodal;
mod supernodal_factor;
mod vector;

pub use band::{BandLu, BAND_MAX};
pub use capture::{rhs_path, MatrixExport};
pub use fixed::FIXED_MAX;
pub use ldlt::{
    newton_refine_tol, structurally_symmetric, Refinement, SparseLdlt, LDLT_FACTOR_ENV, MAX_REFINE,
    NEWTON_REFINE_FACTOR, PARALLEL_MIN_WORK_PER_ENTRY, REFINE_TOL,
};
pub use market::{read_matrix, read_vector, write_matrix, write_vector};
pub use pattern::Pattern;
pub use schur::{DiagonalSchur, MIN_PIVOT_RATIO};
pub use sparse::{Ordering, OrderingCost, SparseLu};
pub use vector::{dot, max_abs};

use capture::Capture;
use fixed::{fixed_lu, FixedLu};

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::{factor as dense_factor, solve as dense_solve};
use faer::{Conj, MatMut, MatRef, Par};

/// Largest system solved with the dense LU.
pub const DENSE_MAX: usize = 40;

/// Smallest system [`Factorization::Auto`] gives to the `LDLᵀ`: below it the
/// sparse LU's fill is small anyway, and the small models keep the LU's
/// round-off (their recorded tables).
pub const LDLT_MIN: usize = 1000;

/// Which sparse factorization a system above the dense and band sizes uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Factorization {
    /// `LDLᵀ` when the system has at least [`LDLT_MIN`] unknowns and its
    /// pattern is structurally symmetric (every Newton matrix of a model whose
    /// constraint and coupling blocks mirror each other), else LU; a model
    /// whose refinement fails switches to LU.
    #[default]
    Auto,
    /// Sparse LU with partial pivoting ([`SparseLu`]).
    Lu,
    /// `LDLᵀ` of the symmetric part, refined against the matrix, LU fallback.
    Ldlt,
}

impl Factorization {
    /// Every choice.
    pub const ALL: [Factorization; 3] =
        [Factorization::Auto, Factorization::Lu, Factorization::Ldlt];

    /// The name in model files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Factorization::Auto => "auto",
            Factorization::Lu => "lu",
            Factorization::Ldlt => "ldlt",
        }
    }

    /// The choice of a name.
    pub fn from_name(name: &str) -> Option<Factorization> {
        Factorization::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// How an integrator's saddle-point solver is chosen (`[integrator] sparse`
/// and `factorization`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SolverChoice {
    /// Skip the dense and band paths.
    pub force_sparse: bool,
    /// The sparse factorization.
    pub factorization: Factorization,
}

/// Failure of a factorization or solve.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SolveError {
    /// The matrix is singular to working precision; `index` is the pivot step
    /// (in factorization order) where it was detected, when known.
    #[error("the saddle-point matrix is singular{}", .index.map_or(String::new(), |i| format!(" (pivot {i})")))]
    Singular {
        /// Pivot index.
        index: Option<usize>,
    },
    /// The solution contains NaN or infinity.
    #[error("the linear solve produced non-finite values")]
    NonFinite,
    /// The `LDLᵀ` without pivoting broke down: its factor overflowed after
    /// static pivoting replaced pivots (`regularized`: faer's count, the
    /// `+` side's). The symmetric part is too ill-conditioned for it (L1 at
    /// 25,000 elements: `κ(Ā)` about 3e10, `n u κ` near 1, so a rounded pivot
    /// comes out non-positive and its replacement `δ ‖A‖` is 150 times the
    /// smallest eigenvalue) or not quasi-definite; the LU solves it.
    #[error("the LDLT without pivoting broke down on this matrix (its factor overflowed after {regularized} regularized pivots: the symmetric part is too ill-conditioned or not quasi-definite for static pivoting); use the LU")]
    LdltBreakdown {
        /// Regularized pivots of sign `+`.
        regularized: usize,
    },
    /// Out of memory or another library failure, in words (no library
    /// types or debug formatting).
    #[error("sparse LU failed: {0}")]
    Library(String),
}

impl From<faer::sparse::FaerError> for SolveError {
    /// faer's failures (out of memory, an index past the index type's range)
    /// said in words.
    fn from(e: faer::sparse::FaerError) -> Self {
        SolveError::Library(
            match e {
                faer::sparse::FaerError::OutOfMemory => "out of memory",
                faer::sparse::FaerError::IndexOverflow => {
                    "the matrix is too large for the solver's index type"
                }
                _ => "the factorization library failed",
            }
            .into(),
        )
    }
}

enum Backend {
    Dense {
        lu: Vec<f64>,
        /// Singularity threshold of each pivot: `eps dim max_r |a_rc|` of its column.
        tol: Vec<f64>,
        dense_index: Vec<usize>,
        perm: Vec<usize>,
        perm_inv: Vec<usize>,
        /// Stack-only LU for up to `FIXED_MAX` unknowns (faer's otherwise).
        small: Option<Box<dyn FixedLu>>,
    },
    Band(Box<BandLu>),
    Sparse(Box<SparseLu>),
    Ldlt(Box<LdltPath>),
}

/// The symmetric path and its LU fallback.
struct LdltPath {
    ldlt: SparseLdlt,
    /// Built at the first fallback (symbolic analysis once).
    lu: Option<SparseLu>,
    /// Set by the first fallback: every later matrix goes to the LU.
    switched: bool,
    /// The current factorization is the LU's.
    on_lu: bool,
    /// Solves whose refinement did not converge and were redone with the LU.
    fallbacks: usize,
    /// Refinement steps over all converged solves, and their count.
    refine_steps: usize,
    refined_solves: usize,
}

/// The parts that faer splits the LDLT's dense products into where it
/// factors in parallel ([`SparseLdlt::new_adaptive`]): a fixed count, not the
/// pool's threads, because the split sets the order of the sums, and with
/// the pool's count the factors, and so the run's results, differed between
/// 1 and 2 threads (L3 at 20,577 rows, issue 23); the pool runs the parts on
/// the threads it has.
const LDLT_PARTS: usize = 2;

/// The LDLT's parallelism: [`LDLT_PARTS`] parts, whatever the pool.
fn pool_threads() -> Par {
    Par::rayon(LDLT_PARTS)
}

/// LU solver for the saddle-point systems of one model.
pub struct SaddlePointSolver {
    dim: usize,
    backend: Backend,
    mem: MemBuffer,
    par: Par,
    factored: bool,
    /// Fast path for `[W B^T; B 0]` with diagonal `W` ([`Self::with_diagonal_mass`]).
    schur: Option<Box<DiagonalSchur>>,
    /// Whether the last factorization is the Schur complement's.
    schur_active: bool,
    /// Armed by [`SaddlePointSolver::export`].
    capture: Option<Box<Capture>>,
    /// The backward error the `LDLᵀ`'s refinement stops at
    /// ([`Self::set_refine_tol`]).
    refine_tol: f64,
}

impl SaddlePointSolver {
    /// Prepares the solver for matrices with `pattern` (symbolic factorization
    /// for the sparse path). `force_sparse` disables the dense path.
    pub fn new(pattern: &Pattern, force_sparse: bool) -> Result<Self, SolveError> {
        Self::with_factorization(pattern, force_sparse, Factorization::Auto)
    }

    /// As [`Self::new`], with the sparse factorization chosen by `choice`.
    pub fn with_factorization(
        pattern: &Pattern,
        force_sparse: bool,
        choice: Factorization,
    ) -> Result<Self, SolveError> {
        let dim = pattern.dim;
        // One thread for the dense, band and sparse LU paths; the LDLT takes
        // the pool's threads where its work per factor entry makes them pay
        // (`SparseLdlt::new_adaptive`; docs/bench.md, "Threads").
        let par = Par::Seq;
        if dim <= DENSE_MAX && !force_sparse {
            let mut dense_index = Vec::with_capacity(pattern.nnz());
            for c in 0..dim {
                for &r in &pattern.row_idx[pattern.col_ptr[c]..pattern.col_ptr[c + 1]] {
                    dense_index.push(r + c * dim);
                }
            }
            let req = StackReq::any_of(&[
                dense_factor::lu_in_place_scratch::<usize, f64>(dim, dim, par, Default::default()),
                dense_solve::solve_in_place_scratch::<usize, f64>(dim, 1, par),
            ]);
            let backend = Backend::Dense {
                lu: vec![0.0; dim * dim],
                tol: vec![0.0; dim],
                dense_index,
                perm: vec![0; dim],
                perm_inv: vec![0; dim],
                small: fixed_lu(dim),
            };
            return Ok(Self::unfactored(dim, backend, req, par));
        }
        if !force_sparse {
            if let Some(band) = BandLu::new(pattern) {
                let backend = Backend::Band(Box::new(band));
                return Ok(Self::unfactored(dim, backend, StackReq::EMPTY, par));
            }
        }
        let symmetric = match choice {
            Factorization::Lu => false,
            Factorization::Ldlt => true,
            Factorization::Auto => dim >= LDLT_MIN && ldlt::structurally_symmetric(pattern),
        };
        let backend = if symmetric {
            Backend::Ldlt(Box::new(LdltPath {
                ldlt: SparseLdlt::new_adaptive(pattern, None, pool_threads())?,
                lu: None,
                switched: false,
                on_lu: false,
                fallbacks: 0,
                refine_steps: 0,
                refined_solves: 0,
            }))
        } else {
            Backend::Sparse(Box::new(SparseLu::new(pattern, None, par)?))
        };
        Ok(Self::unfactored(dim, backend, StackReq::EMPTY, par))
    }

    /// A solver on `backend` with stack memory `req`, before its first
    /// factorization.
    fn unfactored(dim: usize, backend: Backend, req: StackReq, par: Par) -> Self {
        SaddlePointSolver {
            dim,
            backend,
            mem: MemBuffer::new(req),
            par,
            factored: false,
            schur: None,
            schur_active: false,
            capture: None,
            refine_tol: REFINE_TOL,
        }
    }

    /// As [`Self::new`], but a system above [`FIXED_MAX`] unknowns whose
    /// reverse Cuthill–McKee band fits [`BAND_MAX`] takes the band LU even
    /// below [`DENSE_MAX`]: for the sparse block matrices of the Galerkin
    /// schemes (20 and 40 unknowns on the double pendulum, about a sixth of
    /// the entries nonzero) it is three to four times cheaper than faer's
    /// dense LU (docs/theory/galerkin.md §5).
    pub fn preferring_band(pattern: &Pattern, force_sparse: bool) -> Result<Self, SolveError> {
        if !force_sparse && pattern.dim > FIXED_MAX {
            if let Some(band) = BandLu::new(pattern) {
                let backend = Backend::Band(Box::new(band));
                return Ok(Self::unfactored(
                    pattern.dim,
                    backend,
                    StackReq::EMPTY,
                    Par::Seq,
                ));
            }
        }
        Self::new(pattern, force_sparse)
    }

    /// A solver for the systems `[W B^T; B 0]` of a model whose first `n`
    /// unknowns have a diagonal metric `W` (the index-1 and projection systems
    /// of a diagonal mass): each factorization first tries the Schur
    /// complement ([`DiagonalSchur`]) and falls back to the LU of
    /// [`Self::new`] when the values are not of that form or it is badly
    /// conditioned.
    pub fn with_diagonal_mass(
        pattern: &Pattern,
        n: usize,
        force_sparse: bool,
    ) -> Result<Self, SolveError> {
        let mut solver = Self::new(pattern, force_sparse)?;
        solver.schur = DiagonalSchur::new(pattern, n).map(Box::new);
        Ok(solver)
    }

    /// Which factorization is used, e.g. `band LU (kl 5, ku 5)`.
    pub fn describe(&self) -> String {
        let lu = self.describe_lu();
        if self.schur.is_some() {
            format!("Schur complement with dense Cholesky (diagonal mass), else {lu}")
        } else {
            lu
        }
    }

    fn describe_lu(&self) -> String {
        match &self.backend {
            Backend::Dense { small: Some(_), .. } => "dense LU (stack, fixed size)".into(),
            Backend::Dense { .. } => "dense LU".into(),
            Backend::Band(b) => {
                let (kl, ku) = b.bandwidths();
                format!("band LU after reverse Cuthill-McKee (kl {kl}, ku {ku})")
            }
            Backend::Sparse(lu) => format!(
                "sparse LU (faer {}, {})",
                lu.kind(),
                lu.cost().ordering.name()
            ),
            Backend::Ldlt(p) => {
                let kind = if p.ldlt.tree_factor() {
                    "tree-parallel supernodal".to_string()
                } else {
                    format!("faer {}", p.ldlt.kind())
                };
                let mut d = format!(
                    "sparse LDLT ({kind}, {}) + refinement",
                    p.ldlt.ordering().name()
                );
                if p.fallbacks > 0 {
                    d += &format!(", {} LU fallbacks", p.fallbacks);
                }
                d
            }
        }
    }

    /// Solves redone with the LU because the `LDLᵀ`'s refinement did not
    /// converge (0 off the symmetric path).
    pub fn fallbacks(&self) -> usize {
        match &self.backend {
            Backend::Ldlt(p) => p.fallbacks,
            _ => 0,
        }
    }

    /// Mean refinement steps per converged `LDLᵀ` solve (symmetric path only).
    pub fn mean_refinement(&self) -> Option<f64> {
        match &self.backend {
            Backend::Ldlt(p) if p.refined_solves > 0 => {
                Some(p.refine_steps as f64 / p.refined_solves as f64)
            }
            _ => None,
        }
    }

    /// Whether the symmetric path is in use (and not switched to its LU).
    pub fn is_ldlt(&self) -> bool {
        matches!(&self.backend, Backend::Ldlt(p) if !p.switched)
    }

    /// Stored entries of the factors: `dim²` (dense), the band storage, or
    /// the predicted `L + U` nonzeros of the sparse LU's ordering.
    pub fn fill(&self) -> usize {
        match &self.backend {
            Backend::Dense { .. } => self.dim * self.dim,
            Backend::Band(b) => b.stored(),
            Backend::Sparse(lu) => lu.cost().fill,
            Backend::Ldlt(p) => match &p.lu {
                Some(lu) if p.switched => lu.cost().fill,
                _ => p.ldlt.fill(),
            },
        }
    }

    /// Whether the last factorization took the Schur-complement fast path
    /// ([`Self::with_diagonal_mass`]).
    pub fn is_schur_active(&self) -> bool {
        self.factored && self.schur_active
    }

    /// Whether the dense path is used.
    pub fn is_dense(&self) -> bool {
        matches!(self.backend, Backend::Dense { .. })
    }

    /// Writes the first system of step `export.step` (its matrix with this
    /// solver's `pattern`, and the right-hand side of the solve after it) in
    /// Matrix Market; the integrator reports its steps with [`Self::at_step`].
    pub fn export(&mut self, export: MatrixExport, pattern: &Pattern) {
        self.capture = Some(Box::new(Capture::new(export, pattern)));
    }

    /// The step the next factorizations belong to (for [`Self::export`]).
    pub fn at_step(&mut self, step: u64) {
        if let Some(c) = &mut self.capture {
            c.step = step;
        }
    }

    /// Numeric factorization of the matrix with the given values (pattern order).
    pub fn factor(&mut self, values: &[f64]) -> Result<(), SolveError> {
        self.factored = false;
        if let Some(c) = &mut self.capture {
            c.on_factor(values);
        }
        if let Some(schur) = &mut self.schur {
            self.schur_active = schur.factor(values);
            if self.schur_active {
                self.factored = true;
                return Ok(());
            }
        }
        let dim = self.dim;
        let par = self.par;
        let stack = MemStack::new(&mut self.mem);
        match &mut self.backend {
            Backend::Dense {
                lu,
                tol,
                dense_index,
                perm,
                perm_inv,
                small,
            } => {
                lu.fill(0.0);
                for (&d, &v) in dense_index.iter().zip(values) {
                    lu[d] = v;
                }
                // Row pivoting keeps columns: pivot i is singular when it is
                // round-off of its own column's scale. (A whole-matrix scale
                // flags the O(dt^2) constraint pivots of the d-form, whose mass
                // entries are 1/dt^2 larger than the constraint rows.)
                for (t, col) in tol.iter_mut().zip(lu.chunks(dim)) {
                    let scale = col.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
                    *t = scale * f64::EPSILON * dim as f64;
                }
                if let Some(s) = small {
                    s.factor(lu, tol)
                        .map_err(|i| SolveError::Singular { index: Some(i) })?;
                    self.factored = true;
                    return Ok(());
                }
                let a = MatMut::from_column_major_slice_mut(lu, dim, dim);
                dense_factor::lu_in_place(a, perm, perm_inv, par, stack, Default::default());
                for (i, t) in tol.iter().enumerate() {
                    let p = lu[i + i * dim];
                    if p.is_nan() || p.abs() <= *t {
                        return Err(SolveError::Singular { index: Some(i) });
                    }
                }
            }
            Backend::Band(band) => band.factor(values)?,
            Backend::Sparse(lu) => lu.factor(values)?,
            Backend::Ldlt(p) => p.factor(values, par)?,
        }
        self.factored = true;
        Ok(())
    }

    /// Solves `A x = a` and `A y = b` in place with the last factorization
    /// (the Schur-complement path solves both columns at once; the other
    /// backends one after the other).
    pub fn solve_pair(&mut self, a: &mut [f64], b: &mut [f64]) -> Result<(), SolveError> {
        if self.factored && self.capture.is_none() {
            if let (true, Some(schur)) = (self.schur_active, &mut self.schur) {
                schur.solve_pair(a, b);
                return finite(a.iter().chain(b.iter()));
            }
        }
        self.solve(a)?;
        self.solve(b)
    }

    /// Solves every column of the column-major `rhs` (its length a multiple
    /// of the dimension) in place with the last factorization: one call of
    /// the fixed-size LU for all columns (the Galerkin block elimination's
    /// many right-hand sides), else column by column.
    pub fn solve_columns(&mut self, rhs: &mut [f64]) -> Result<(), SolveError> {
        assert!(
            self.factored,
            "solve called without a successful factorization"
        );
        if let (None, false, Backend::Dense { small: Some(s), .. }) =
            (&self.capture, self.schur_active, &self.backend)
        {
            s.solve_columns(rhs);
            return finite(rhs.iter());
        }
        let dim = self.dim;
        for col in rhs.chunks_mut(dim) {
            self.solve(col)?;
        }
        Ok(())
    }

    /// The backward error the symmetric path's refinement stops at
    /// ([`REFINE_TOL`] unless set).
    pub fn refine_tol(&self) -> f64 {
        self.refine_tol
    }

    /// Sets the normwise backward error at which the symmetric path's
    /// refinement stops, for every later [`Self::solve`] (clamped to at least
    /// [`REFINE_TOL`]): Newton's solver asks for [`newton_refine_tol`] (the
    /// reason is in the module documentation of `src/linalg/ldlt.rs`). The direct paths (dense, band,
    /// LU) have no refinement and ignore it.
    pub fn set_refine_tol(&mut self, tol: f64) {
        self.refine_tol = tol.max(REFINE_TOL);
    }

    /// [`Self::solve`] refined to the backward error `tol` whatever
    /// [`Self::set_refine_tol`] asked (a projection or an initial solve that
    /// shares Newton's solver: [`REFINE_TOL`]).
    pub fn solve_to(&mut self, rhs: &mut [f64], tol: f64) -> Result<(), SolveError> {
        let kept = std::mem::replace(&mut self.refine_tol, tol.max(REFINE_TOL));
        let result = self.solve(rhs);
        self.refine_tol = kept;
        result
    }

    /// Solves `A x = rhs` in place with the last factorization.
    pub fn solve(&mut self, rhs: &mut [f64]) -> Result<(), SolveError> {
        assert!(
            self.factored,
            "solve called without a successful factorization"
        );
        if let Some(c) = &mut self.capture {
            c.on_solve(rhs)
                .map_err(|e| SolveError::Library(format!("writing {}: {e}", c.path().display())))?;
        }
        if let (true, Some(schur)) = (self.schur_active, &mut self.schur) {
            schur.solve(rhs);
            return finite(rhs.iter());
        }
        let dim = self.dim;
        let par = self.par;
        let stack = MemStack::new(&mut self.mem);
        let x = MatMut::from_column_major_slice_mut(rhs, dim, 1);
        match &mut self.backend {
            Backend::Dense { small: Some(s), .. } => s.solve(rhs),
            Backend::Band(band) => band.solve(rhs),
            Backend::Dense {
                lu, perm, perm_inv, ..
            } => {
                let lu = MatRef::from_column_major_slice(lu, dim, dim);
                // SAFETY-free: the permutation arrays come from lu_in_place.
                let p = faer::perm::PermRef::new_checked(perm, perm_inv, dim);
                dense_solve::solve_in_place_with_conj(lu, lu, p, Conj::No, x, par, stack);
            }
            Backend::Sparse(lu) => lu.solve(rhs),
            Backend::Ldlt(p) => p.solve(rhs, par, self.refine_tol)?,
        }
        finite(rhs.iter())
    }
}

impl LdltPath {
    /// The LU of the last matrix the LDLᵀ factored; its symbolic analysis is
    /// made at the first fallback (once per model, allocating).
    fn factor_lu(&mut self, values: &[f64], par: Par) -> Result<(), SolveError> {
        let lu = match &mut self.lu {
            Some(lu) => lu,
            none => none.insert(SparseLu::new(&self.ldlt.matrix().0, None, par)?),
        };
        lu.factor(values)
    }

    /// The LDLᵀ of `values`, or the LU once the model has switched (or when
    /// the LDLᵀ breaks down).
    fn factor(&mut self, values: &[f64], par: Par) -> Result<(), SolveError> {
        self.on_lu = self.switched;
        if !self.switched {
            match self.ldlt.factor(values) {
                Ok(()) => return Ok(()),
                Err(SolveError::Library(e)) => return Err(SolveError::Library(e)),
                Err(_) => {
                    self.fallbacks += 1;
                    self.switched = true;
                    self.on_lu = true;
                }
            }
        }
        self.factor_lu(values, par)
    }

    /// The refined LDLᵀ solve; when it does not converge, the LU of the same
    /// matrix solves it and every later matrix goes to the LU.
    fn solve(&mut self, rhs: &mut [f64], par: Par, tol: f64) -> Result<(), SolveError> {
        if !self.on_lu {
            let r = self.ldlt.solve_to(rhs, tol);
            if r.converged {
                self.refine_steps += r.steps;
                self.refined_solves += 1;
                return Ok(());
            }
            self.fallbacks += 1;
            self.switched = true;
            self.on_lu = true;
            let (_, values) = self.ldlt.matrix();
            self.factor_lu(&values, par)?;
        }
        self.lu
            .as_mut()
            .expect("the LU is factored before it solves")
            .solve(rhs);
        Ok(())
    }
}

/// `Ok` when every entry of a solution is finite, else [`SolveError::NonFinite`].
fn finite<'a>(mut x: impl Iterator<Item = &'a f64>) -> Result<(), SolveError> {
    match x.all(|v| v.is_finite()) {
        true => Ok(()),
        false => Err(SolveError::NonFinite),
    }
}

#[cfg(test)]
mod tests {
    use super::SolveError;
    use faer::sparse::FaerError;

    /// faer's failures read as words, with no library type or debug form.
    #[test]
    fn library_failures_are_words() {
        let oom = SolveError::from(FaerError::OutOfMemory).to_string();
        assert_eq!(oom, "sparse LU failed: out of memory");
        let overflow = SolveError::from(FaerError::IndexOverflow).to_string();
        assert_eq!(
            overflow,
            "sparse LU failed: the matrix is too large for the solver's index type"
        );
        let alloc: FaerError = faer::dyn_stack::mem::AllocError.into();
        assert_eq!(SolveError::from(alloc).to_string(), oom);
    }
}
