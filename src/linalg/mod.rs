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
//! [`BAND_MAX`] use a banded LU ([`BandLu`]); the rest use the sparse LU.
//! [`SaddlePointSolver::export`] writes one system in Matrix Market.

mod band;
mod capture;
mod diagnose;
mod fixed;
mod market;
mod metis;
mod schur;
mod sparse;

pub use band::{BandLu, BAND_MAX};
pub use capture::{rhs_path, MatrixExport};
pub use diagnose::diagnose_singular;
pub use fixed::FIXED_MAX;
pub use market::{read_matrix, read_vector, write_matrix, write_vector};
pub use schur::{DiagonalSchur, MIN_PIVOT_RATIO};
pub use sparse::{Ordering, OrderingCost, SparseLu};

use capture::Capture;
use fixed::{fixed_lu, FixedLu};

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::{factor as dense_factor, solve as dense_solve};
use faer::{Conj, MatMut, MatRef, Par};

use crate::assembly::Pattern;

/// Largest system solved with the dense LU.
pub const DENSE_MAX: usize = 40;

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
    /// Out of memory or another library failure.
    #[error("sparse LU failed: {0}")]
    Library(String),
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
}

impl SaddlePointSolver {
    /// Prepares the solver for matrices with `pattern` (symbolic factorization
    /// for the sparse path). `force_sparse` disables the dense path.
    pub fn new(pattern: &Pattern, force_sparse: bool) -> Result<Self, SolveError> {
        let dim = pattern.dim;
        let par = if dim > 20_000 {
            Par::rayon(0)
        } else {
            Par::Seq
        };
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
            return Ok(SaddlePointSolver {
                dim,
                backend: Backend::Dense {
                    lu: vec![0.0; dim * dim],
                    tol: vec![0.0; dim],
                    dense_index,
                    perm: vec![0; dim],
                    perm_inv: vec![0; dim],
                    small: fixed_lu(dim),
                },
                mem: MemBuffer::new(req),
                par,
                factored: false,
                schur: None,
                schur_active: false,
                capture: None,
            });
        }
        if !force_sparse {
            if let Some(band) = BandLu::new(pattern) {
                return Ok(SaddlePointSolver {
                    dim,
                    backend: Backend::Band(Box::new(band)),
                    mem: MemBuffer::new(StackReq::EMPTY),
                    par,
                    factored: false,
                    schur: None,
                    schur_active: false,
                    capture: None,
                });
            }
        }
        Ok(SaddlePointSolver {
            dim,
            backend: Backend::Sparse(Box::new(SparseLu::new(pattern, None, par)?)),
            mem: MemBuffer::new(StackReq::EMPTY),
            par,
            factored: false,
            schur: None,
            schur_active: false,
            capture: None,
        })
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
        }
    }

    /// Stored entries of the factors: `dim²` (dense), the band storage, or
    /// the predicted `L + U` nonzeros of the sparse LU's ordering.
    pub fn fill(&self) -> usize {
        match &self.backend {
            Backend::Dense { .. } => self.dim * self.dim,
            Backend::Band(b) => b.stored(),
            Backend::Sparse(lu) => lu.cost().fill,
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
        }
        self.factored = true;
        Ok(())
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
            return if rhs.iter().all(|v| v.is_finite()) {
                Ok(())
            } else {
                Err(SolveError::NonFinite)
            };
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
        }
        if rhs.iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(SolveError::NonFinite)
        }
    }
}
