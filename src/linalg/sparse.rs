//! Sparse LU of the saddle-point matrices: faer's supernodal LU with partial
//! (row) pivoting after a fill-reducing column ordering chosen by the
//! symbolic analysis.
//!
//! Candidates: COLAMD on `A` (faer's default), approximate minimum degree on
//! the symmetric structure `A + Aᵀ` (faer's AMD) and nested dissection of
//! `A + Aᵀ` (METIS `NodeND`). For a column ordering `P` the supernodal LU
//! stores the structure of the Cholesky factor of `(AP)ᵀ(AP)` (an upper
//! bound of `L` and `U` under any row pivoting, George & Ng 1987), so the
//! factor size of each candidate is known before any numeric work: the sum
//! of the column counts of that factor and of the Householder (`L`) counts,
//! as faer's own analysis computes them. The candidate with the fewest
//! predicted nonzeros is kept. As in faer's own LU, a factorization of few
//! operations per nonzero ([`SUPERNODAL_RATIO`]) is done column by column
//! (simplicial), which also keeps its storage between factorizations.

/// Predicted multiply-adds per predicted nonzero above which the supernodal
/// factorization is used (faer's `LU_SUPERNODAL_RATIO_FACTOR` at its default
/// threshold).
pub const SUPERNODAL_RATIO: f64 = 40.0;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::perm::PermRef;
use faer::sparse::linalg::lu::simplicial::{
    self, factorize_simplicial_numeric_lu, factorize_simplicial_numeric_lu_scratch, SimplicialLu,
};
use faer::sparse::linalg::lu::supernodal::{
    self, factorize_supernodal_numeric_lu, factorize_supernodal_numeric_lu_scratch,
    factorize_supernodal_symbolic_lu, factorize_supernodal_symbolic_lu_scratch, SupernodalLu,
    SymbolicSupernodalLu,
};
use faer::sparse::linalg::{amd, colamd, qr, LuError};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par};

use super::Pattern;
use super::SolveError;

/// A fill-reducing column ordering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ordering {
    /// Column approximate minimum degree on `A` (for `AᵀA`).
    Colamd,
    /// Approximate minimum degree on `A + Aᵀ`.
    Amd,
    /// Nested dissection of `A + Aᵀ` (METIS).
    Metis,
}

impl Ordering {
    /// Every ordering, in the order the analysis tries them.
    pub const ALL: [Ordering; 3] = [Ordering::Colamd, Ordering::Amd, Ordering::Metis];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Ordering::Colamd => "colamd",
            Ordering::Amd => "amd",
            Ordering::Metis => "metis",
        }
    }

    /// The ordering of a name.
    pub fn from_name(name: &str) -> Option<Ordering> {
        Ordering::ALL.into_iter().find(|o| o.name() == name)
    }
}

/// The symbolic analysis of one ordering.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrderingCost {
    /// The ordering.
    pub ordering: Ordering,
    /// Predicted stored nonzeros of `L + U`.
    pub fill: usize,
    /// Predicted multiply-adds of the factorization.
    pub flops: f64,
}

/// The column ordering and the elimination structure it implies.
struct Symbolic {
    fwd: Vec<usize>,
    inv: Vec<usize>,
    /// `None`: simplicial factorization.
    symbolic: Option<SymbolicSupernodalLu<usize>>,
    cost: OrderingCost,
}

enum Numeric {
    Simplicial(SimplicialLu<usize, f64>),
    Supernodal(SupernodalLu<usize, f64>),
}

/// Supernodal sparse LU with the best of [`Ordering::ALL`] (or a given one).
pub struct SparseLu {
    dim: usize,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// `Aᵀ` (faer's numeric LU reads both): its pattern and, for each of its
    /// entries, the index of the same entry in `A`'s values.
    at_col_ptr: Vec<usize>,
    at_row_idx: Vec<usize>,
    at_src: Vec<usize>,
    at_values: Vec<f64>,
    sym: Symbolic,
    candidates: Vec<OrderingCost>,
    numeric: Numeric,
    row_perm: Vec<usize>,
    row_perm_inv: Vec<usize>,
    mem: MemBuffer,
    par: Par,
}

fn lib_err(e: impl Into<faer::sparse::FaerError>) -> SolveError {
    e.into().into()
}

impl SparseLu {
    /// Symbolic analysis of `pattern` with `ordering`, or with every
    /// candidate and the one of least predicted fill when `None`.
    pub fn new(
        pattern: &Pattern,
        ordering: Option<Ordering>,
        par: Par,
    ) -> Result<Self, SolveError> {
        let n = pattern.dim;
        let a =
            SymbolicSparseColMatRef::new_checked(n, n, &pattern.col_ptr, None, &pattern.row_idx);
        // Transpose pattern and the map of its entries into A's values.
        let mut at_col_ptr = vec![0usize; n + 1];
        for &r in &pattern.row_idx {
            at_col_ptr[r + 1] += 1;
        }
        for i in 0..n {
            at_col_ptr[i + 1] += at_col_ptr[i];
        }
        let mut next = at_col_ptr.clone();
        let mut at_row_idx = vec![0usize; pattern.nnz()];
        let mut at_src = vec![0usize; pattern.nnz()];
        for c in 0..n {
            for k in pattern.col_ptr[c]..pattern.col_ptr[c + 1] {
                let r = pattern.row_idx[k];
                at_row_idx[next[r]] = c;
                at_src[next[r]] = k;
                next[r] += 1;
            }
        }
        let at = SymbolicSparseColMatRef::new_checked(n, n, &at_col_ptr, None, &at_row_idx);
        let tried: Vec<Ordering> = match ordering {
            Some(o) => vec![o],
            None => Ordering::ALL.to_vec(),
        };
        let mut best: Option<Symbolic> = None;
        let mut candidates = Vec::new();
        for o in tried {
            let Some(s) = analyse(a, at, o)? else {
                continue;
            };
            candidates.push(s.cost);
            if best.as_ref().is_none_or(|b| s.cost.fill < b.cost.fill) {
                best = Some(s);
            }
        }
        let sym =
            best.ok_or_else(|| SolveError::Library("no fill-reducing ordering succeeded".into()))?;
        let (req, numeric) = match &sym.symbolic {
            Some(s) => (
                StackReq::any_of(&[
                    factorize_supernodal_numeric_lu_scratch::<usize, f64>(s, Default::default()),
                    supernodal::solve_in_place_scratch::<usize, f64>(n, 1, par),
                ]),
                Numeric::Supernodal(SupernodalLu::new()),
            ),
            None => (
                StackReq::any_of(&[
                    factorize_simplicial_numeric_lu_scratch::<usize, f64>(n, n),
                    simplicial::solve_in_place_scratch::<usize, f64>(n, 1, par),
                ]),
                Numeric::Simplicial(SimplicialLu::new()),
            ),
        };
        super::heap::release_freed_memory(pattern.nnz());
        Ok(SparseLu {
            dim: n,
            col_ptr: pattern.col_ptr.clone(),
            row_idx: pattern.row_idx.clone(),
            at_values: vec![0.0; at_row_idx.len()],
            at_col_ptr,
            at_row_idx,
            at_src,
            sym,
            candidates,
            numeric,
            row_perm: vec![0; n],
            row_perm_inv: vec![0; n],
            mem: MemBuffer::try_new(req).map_err(lib_err)?,
            par,
        })
    }

    /// The chosen ordering and its predicted cost.
    pub fn cost(&self) -> OrderingCost {
        self.sym.cost
    }

    /// `supernodal` or `simplicial`: how the numeric factorization proceeds.
    pub fn kind(&self) -> &'static str {
        if self.sym.symbolic.is_some() {
            "supernodal"
        } else {
            "simplicial"
        }
    }

    /// Every ordering analysed, with its predicted cost.
    pub fn candidates(&self) -> &[OrderingCost] {
        &self.candidates
    }

    /// Numeric factorization with the given values (pattern order).
    pub fn factor(&mut self, values: &[f64]) -> Result<(), SolveError> {
        let n = self.dim;
        for (v, &k) in self.at_values.iter_mut().zip(&self.at_src) {
            *v = values[k];
        }
        let a = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(n, n, &self.col_ptr, None, &self.row_idx),
            values,
        );
        let at = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(n, n, &self.at_col_ptr, None, &self.at_row_idx),
            &self.at_values,
        );
        let perm = PermRef::new_checked(&self.sym.fwd, &self.sym.inv, n);
        let stack = MemStack::new(&mut self.mem);
        match (&mut self.numeric, &self.sym.symbolic) {
            (Numeric::Supernodal(lu), Some(symbolic)) => factorize_supernodal_numeric_lu(
                &mut self.row_perm,
                &mut self.row_perm_inv,
                lu,
                a,
                at,
                perm,
                symbolic,
                self.par,
                stack,
                Default::default(),
            ),
            (Numeric::Simplicial(lu), _) => factorize_simplicial_numeric_lu(
                &mut self.row_perm,
                &mut self.row_perm_inv,
                lu,
                a,
                perm,
                stack,
            ),
            (Numeric::Supernodal(_), None) => unreachable!("supernodal numeric without symbolic"),
        }
        .map_err(|e| match e {
            LuError::SymbolicSingular { index } => SolveError::Singular { index: Some(index) },
            LuError::Generic(g) => lib_err(g),
        })
    }

    /// Solves `A x = rhs` in place with the last factorization.
    pub fn solve(&mut self, rhs: &mut [f64]) {
        let n = self.dim;
        let x = MatMut::from_column_major_slice_mut(rhs, n, 1);
        let rows = PermRef::new_checked(&self.row_perm, &self.row_perm_inv, n);
        let cols = PermRef::new_checked(&self.sym.fwd, &self.sym.inv, n);
        let stack = MemStack::new(&mut self.mem);
        match &self.numeric {
            Numeric::Supernodal(lu) => {
                lu.solve_in_place_with_conj(rows, cols, Conj::No, x, self.par, stack)
            }
            Numeric::Simplicial(lu) => {
                lu.solve_in_place_with_conj(rows, cols, Conj::No, x, self.par, stack)
            }
        }
    }
}

/// Ordering `o` of `a` and the supernodal structure it implies; `None` when
/// the ordering does not apply (METIS on a graph without edges).
fn analyse(
    a: SymbolicSparseColMatRef<'_, usize>,
    at: SymbolicSparseColMatRef<'_, usize>,
    o: Ordering,
) -> Result<Option<Symbolic>, SolveError> {
    let n = a.ncols();
    let nnz = a.compute_nnz();
    let mut fwd = vec![0usize; n];
    let mut inv = vec![0usize; n];
    match o {
        Ordering::Colamd => {
            let mut mem =
                MemBuffer::try_new(colamd::order_scratch::<usize>(n, n, nnz)).map_err(lib_err)?;
            colamd::order(
                &mut fwd,
                &mut inv,
                a,
                Default::default(),
                MemStack::new(&mut mem),
            )
            .map_err(lib_err)?;
        }
        Ordering::Amd => {
            let mut mem =
                MemBuffer::try_new(amd::order_scratch::<usize>(n, nnz)).map_err(lib_err)?;
            amd::order(
                &mut fwd,
                &mut inv,
                a,
                Default::default(),
                MemStack::new(&mut mem),
            )
            .map_err(lib_err)?;
        }
        Ordering::Metis => {
            if !super::metis::node_nd(a, &mut fwd, &mut inv)? {
                return Ok(None);
            }
        }
    }
    let perm = PermRef::new_checked(&fwd, &inv, n);
    let mut etree = vec![0usize; n];
    let mut post = vec![0usize; n];
    let mut col_counts = vec![0usize; n];
    let mut min_col = vec![0usize; n];
    let req = StackReq::any_of(&[
        qr::col_etree_scratch::<usize>(n, n),
        qr::postorder_scratch::<usize>(n),
        StackReq::new::<usize>(5 * n + n),
        factorize_supernodal_symbolic_lu_scratch::<usize>(n, n),
    ]);
    let mut mem = MemBuffer::try_new(req).map_err(lib_err)?;
    let stack = MemStack::new(&mut mem);
    let tree = qr::col_etree(a, Some(perm), &mut etree, stack);
    qr::postorder(&mut post, tree, stack);
    qr::column_counts_ata(
        &mut col_counts,
        &mut min_col,
        at,
        Some(perm),
        tree,
        &post,
        stack,
    );
    // Householder (L) column counts: each row starts in its first column
    // and is carried up the column elimination tree (faer's own estimate).
    let mut h = vec![0usize; n];
    for &c in &min_col {
        if c < n {
            h[c] += 1;
        }
    }
    for (j, &parent) in tree.into_inner().iter().enumerate() {
        if parent >= 0 {
            h[parent as usize] += h[j].saturating_sub(1);
        }
    }
    let (mut fill, mut flops) = (0usize, 0.0f64);
    for (&hj, &rj) in h.iter().zip(&col_counts) {
        fill += hj + rj;
        flops += hj as f64 * (1.0 + rj as f64);
    }
    let symbolic = if flops > SUPERNODAL_RATIO * fill as f64 {
        Some(
            factorize_supernodal_symbolic_lu(
                a,
                Some(perm),
                &min_col,
                tree,
                &col_counts,
                stack,
                Default::default(),
            )
            .map_err(lib_err)?,
        )
    } else {
        None
    };
    Ok(Some(Symbolic {
        fwd,
        inv,
        symbolic,
        cost: OrderingCost {
            ordering: o,
            fill,
            flops,
        },
    }))
}
