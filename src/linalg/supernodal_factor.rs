//! Tree-parallel numeric `L D Lᵀ` factorization on faer's supernodal
//! symbolic structure, written into faer's own storage of `L` (so that
//! faer's solves and [`super::supernodal::TreeSolve`] work on it).
//!
//! The algorithm is faer 0.24's sequential `factorize_supernodal_numeric_ldlt`
//! (`faer::sparse::linalg::cholesky::supernodal`), the left-looking
//! supernodal factorization (Ng and Peyton 1993; Davis 2006, §9.1): supernode
//! `s` gathers `A`'s lower triangle into its block, subtracts the update
//! `L_d D_d L_dᵀ` of every descendant `d` whose pattern meets its columns, in
//! ascending `d`, then factors its diagonal block by faer's dense `L D Lᵀ`
//! with the same dynamic regularization (sign-fixed static pivoting: a pivot
//! of the wrong sign or of magnitude at most `ε` becomes `±δ`), and solves for
//! the rows below it (`L_21 = A_21 L_11⁻ᵀ D⁻¹`).
//!
//! Supernode `s` reads only its finished descendants and writes only its own
//! block, so independent subtrees of the supernodal elimination tree are
//! factored concurrently: the tree is cut once, from the structure, into
//! subtree tasks of at most [`TASK_SHARE`] of the work (rayon tasks whose
//! kernels run on one thread) and the supernodes above them (the top),
//! factored in order after the tasks; a top supernode gathers its
//! descendants' updates in parallel over fixed panels of [`TOP_PANEL`] of its
//! columns, and its dense kernels run on the caller's `Par` (faer's parallel
//! dense `L D Lᵀ` and triangular solve) when it has at least
//! [`TOP_PAR_MIN_COLS`] columns. A descendant's update is a dense product
//! `W = L_d,rows D_d L_d,colsᵀ` into a buffer (faer's `matmul`, or plain loops
//! below [`SMALL_UPDATE`] multiply-adds), scattered into the block by the
//! relative indices of its rows (the "relaxed" supernodal update of CHOLMOD,
//! Chen, Davis, Hager and Rajamanickam 2008). The cut, the panels, the kernel
//! choices and every order of additions depend on the structure only, so the
//! factor is bitwise the same for every thread count; it agrees with faer's
//! own factorization to rounding (tests/ldlt_tree.rs). Every buffer is sized
//! at symbolic time ([`TreeFactor::new`]); a worker's buffers are taken by
//! its rayon thread index, and grow only when a later pool has more threads.

use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Mutex;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::{
    cholesky_in_place, cholesky_in_place_scratch, LdltError, LdltRegularization,
};
use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::solve_unit_lower_triangular_in_place;
use faer::sparse::linalg::cholesky::supernodal::SymbolicSupernodalCholesky;
use faer::sparse::SparseColMatRef;
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;

use super::supernodal::{cut, Cut};

/// The largest share of the factorization's work in one subtree task.
pub const TASK_SHARE: f64 = 1.0 / 32.0;

/// Columns of a top supernode's panel (the unit of its parallel gather),
/// and of a descendant update's buffer.
pub const TOP_PANEL: usize = 128;

/// Columns from which a top supernode's dense kernels run on the caller's
/// `Par`.
pub const TOP_PAR_MIN_COLS: usize = 256;

/// Multiply-adds of a descendant update below which plain loops replace
/// faer's `matmul` (whose dispatch costs more than small products).
pub const SMALL_UPDATE: usize = 4096;

/// Entries of a worker's update buffer `W` (at least [`MIN_CHUNK`]
/// columns of the longest pattern), and of its `D Lᵀ` buffer.
const W_CAP: usize = 1 << 18;
const R_CAP: usize = 1 << 16;
const MIN_CHUNK: usize = 16;

/// Not a local row.
const NONE: u32 = u32::MAX;

/// One worker's buffers.
struct Workspace {
    /// Global row to local row of the supernode being factored.
    map: Vec<u32>,
    /// Local rows of a descendant's update.
    rows: Vec<u32>,
    /// The update `W` (rows × at most [`TOP_PANEL`] columns).
    w: Vec<f64>,
    /// `D_d L_d,colsᵀ` (descendant columns × at most [`TOP_PANEL`]).
    r: Vec<f64>,
    /// faer's dense `L D Lᵀ` scratch.
    mem: MemBuffer,
}

/// The numeric factorization's schedule and buffers for one symbolic
/// structure (allocated once).
pub struct TreeFactor {
    /// Descendants updating each supernode, ascending:
    /// `desc[desc_ptr[s]..desc_ptr[s + 1]]`.
    desc_ptr: Vec<usize>,
    desc: Vec<u32>,
    /// Subtree tasks and top supernodes.
    cut: Cut,
    /// The top's global-to-local row map.
    top_map: Vec<u32>,
    /// faer's dense scratch for the top's kernels on `Par`.
    top_mem: MemBuffer,
    workspaces: Vec<Mutex<Workspace>>,
    /// Buffer sizes of a workspace.
    max_pattern: usize,
    max_cols: usize,
    dense_req: StackReq,
}

/// Pointer to `L`'s values, shared by tasks that write disjoint supernodes.
#[derive(Clone, Copy)]
struct Shared(*mut f64);
// SAFETY: every task writes only its own supernodes' blocks and reads only
// finished descendants' (see `TreeFactor::factor`).
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    fn ptr(self) -> *mut f64 {
        self.0
    }
}

/// The regularization restricted to supernode columns `begin..end`.
fn reg_of<'a>(
    reg: &LdltRegularization<'a, f64>,
    begin: usize,
    end: usize,
) -> LdltRegularization<'a, f64> {
    LdltRegularization {
        dynamic_regularization_signs: reg.dynamic_regularization_signs.map(|s| &s[begin..end]),
        ..*reg
    }
}

impl TreeFactor {
    /// The schedule of `symbolic`'s numeric factorization, with buffers for
    /// the current rayon pool's threads; the top's dense kernels will run on
    /// `par`.
    pub fn new(symbolic: &SymbolicSupernodalCholesky<u32>, par: Par) -> Self {
        let ns = symbolic.n_supernodes();
        let n = symbolic.nrows();
        let begin = symbolic.supernode_begin();
        let end = symbolic.supernode_end();
        let super_of = super::supernodal::supernode_of_columns(symbolic);
        // Descendants of each supernode: the supernodes its pattern rows
        // meet (consecutive rows of one supernode counted once).
        let each_target = |d: usize, f: &mut dyn FnMut(usize)| {
            let mut last = NONE;
            for &r in symbolic.supernode(d).pattern() {
                let s = super_of[r as usize];
                if s != last {
                    f(s as usize);
                    last = s;
                }
            }
        };
        let mut desc_ptr = vec![0usize; ns + 1];
        for d in 0..ns {
            each_target(d, &mut |s| desc_ptr[s + 1] += 1);
        }
        for s in 0..ns {
            desc_ptr[s + 1] += desc_ptr[s];
        }
        let mut next = desc_ptr[..ns].to_vec();
        let mut desc = vec![0u32; desc_ptr[ns]];
        for d in 0..ns {
            each_target(d, &mut |s| {
                desc[next[s]] = d as u32;
                next[s] += 1;
            });
        }
        drop(next);
        // Work of each supernode: its columns' multiply-adds.
        let weight: Vec<f64> = (0..ns)
            .map(|s| {
                let cols = (end[s] - begin[s]) as usize;
                let below = symbolic.supernode(s).pattern().len();
                (0..cols)
                    .map(|j| {
                        let m = (cols - 1 - j + below) as f64;
                        m * (m + 1.0) / 2.0
                    })
                    .sum()
            })
            .collect();
        let cut = cut(symbolic, weight, TASK_SHARE);
        let max_pattern = (0..ns)
            .map(|s| symbolic.supernode(s).pattern().len())
            .max()
            .unwrap_or(0);
        let max_cols = (0..ns)
            .map(|s| (end[s] - begin[s]) as usize)
            .max()
            .unwrap_or(0);
        let dense_req = cholesky_in_place_scratch::<f64>(max_cols, Par::Seq, Default::default());
        let top_mem_req = cholesky_in_place_scratch::<f64>(max_cols, par, Default::default());
        let mut factor = TreeFactor {
            desc_ptr,
            desc,
            cut,
            top_map: vec![NONE; n],
            top_mem: MemBuffer::new(top_mem_req),
            workspaces: Vec::new(),
            max_pattern,
            max_cols,
            dense_req,
        };
        factor.reserve(n, rayon::current_num_threads());
        factor
    }

    /// Buffers for `threads` workers.
    fn reserve(&mut self, n: usize, threads: usize) {
        let (rows, cols) = (self.max_pattern + self.max_cols, self.max_cols);
        while self.workspaces.len() < threads {
            self.workspaces.push(Mutex::new(Workspace {
                map: vec![NONE; n],
                rows: vec![0; rows],
                w: vec![0.0; (rows * MIN_CHUNK).max(W_CAP)],
                r: vec![0.0; (cols * MIN_CHUNK).max(R_CAP)],
                mem: MemBuffer::new(self.dense_req),
            }));
        }
    }

    /// Subtree tasks of the cut.
    pub fn tasks(&self) -> usize {
        self.cut.tasks()
    }

    /// Top supernodes of the cut.
    pub fn top_len(&self) -> usize {
        self.cut.top.len()
    }

    /// Numeric factorization of `a_lower` (the lower triangle, CSC, of the
    /// matrix `symbolic` was analysed for) into `l_values` (faer's layout),
    /// on the current rayon pool; the top's dense kernels on `par` (the one
    /// given to [`Self::new`]). Returns the count of regularized pivots.
    pub fn factor(
        &mut self,
        symbolic: &SymbolicSupernodalCholesky<u32>,
        l_values: &mut [f64],
        a_lower: SparseColMatRef<'_, u32, f64>,
        reg: LdltRegularization<'_, f64>,
        par: Par,
    ) -> Result<usize, LdltError> {
        let n = symbolic.nrows();
        assert_eq!(l_values.len(), symbolic.len_val());
        self.reserve(n, rayon::current_num_threads());
        let zero_pivot = AtomicUsize::new(usize::MAX);
        let regularized = AtomicUsize::new(0);
        let shared = Shared(l_values.as_mut_ptr());
        let (cut, workspaces) = (&self.cut, &self.workspaces);
        let (desc_ptr, desc) = (&self.desc_ptr, &self.desc);
        let worker = || {
            let k = rayon::current_thread_index().unwrap_or(0) % workspaces.len();
            workspaces[k].lock().unwrap_or_else(|e| e.into_inner())
        };
        // The subtree tasks.
        (0..cut.tasks()).into_par_iter().for_each(|k| {
            let mut ws = worker();
            let ws = &mut *ws;
            for &s in cut.task(k) {
                let s = s as usize;
                let ptr = symbolic.col_ptr_for_val();
                let (lo, hi) = (ptr[s] as usize, ptr[s + 1] as usize);
                // SAFETY: task k owns supernode s's block; no other task
                // reads or writes it (s's ancestors outside the task are in
                // the top, factored after every task).
                let ls = unsafe { std::slice::from_raw_parts_mut(shared.ptr().add(lo), hi - lo) };
                // SAFETY: `head` is only read at the blocks of s's
                // descendants, all in task k and finished before s.
                let head = unsafe { std::slice::from_raw_parts(shared.ptr(), lo) };
                let s_desc = &desc[desc_ptr[s]..desc_ptr[s + 1]];
                let Workspace {
                    map,
                    rows,
                    w,
                    r,
                    mem,
                } = ws;
                gather(symbolic, s, ls, a_lower, map);
                for &d in s_desc {
                    let all = 0..usize::MAX;
                    update_panel(symbolic, s, ls, all, head, d as usize, map, rows, w, r);
                }
                match dense(symbolic, s, ls, &reg, Par::Seq, MemStack::new(mem)) {
                    Ok(c) => {
                        regularized.fetch_add(c, AtomicOrdering::Relaxed);
                    }
                    Err(i) => {
                        zero_pivot.fetch_min(i, AtomicOrdering::Relaxed);
                    }
                }
            }
        });
        let first = zero_pivot.load(AtomicOrdering::Relaxed);
        if first != usize::MAX {
            return Err(LdltError::ZeroPivot { index: first });
        }
        // The top, in order.
        let mut regularized = regularized.into_inner();
        let ptr = symbolic.col_ptr_for_val();
        let begin = symbolic.supernode_begin();
        let end = symbolic.supernode_end();
        for &s in &cut.top {
            let s = s as usize;
            let (head, tail) = l_values.split_at_mut(ptr[s] as usize);
            let ls = &mut tail[..(ptr[s + 1] - ptr[s]) as usize];
            let head = &*head;
            gather(symbolic, s, ls, a_lower, &mut self.top_map);
            let s_desc = &desc[desc_ptr[s]..desc_ptr[s + 1]];
            let s_ncols = (end[s] - begin[s]) as usize;
            let s_nrows = block_rows(symbolic, s);
            let map = &self.top_map;
            ls.par_chunks_mut(TOP_PANEL * s_nrows)
                .enumerate()
                .for_each(|(p, panel)| {
                    let mut ws = worker();
                    let ws = &mut *ws;
                    let cols = p * TOP_PANEL..(p + 1) * TOP_PANEL;
                    for &d in s_desc {
                        update_panel(
                            symbolic,
                            s,
                            panel,
                            cols.clone(),
                            head,
                            d as usize,
                            map,
                            &mut ws.rows,
                            &mut ws.w,
                            &mut ws.r,
                        );
                    }
                });
            let kernel_par = if s_ncols >= TOP_PAR_MIN_COLS {
                par
            } else {
                Par::Seq
            };
            let stack = MemStack::new(&mut self.top_mem);
            regularized += dense(symbolic, s, ls, &reg, kernel_par, stack)
                .map_err(|index| LdltError::ZeroPivot { index })?;
        }
        Ok(regularized)
    }
}

/// Rows of supernode `s`'s block (its columns and its pattern).
fn block_rows(symbolic: &SymbolicSupernodalCholesky<u32>, s: usize) -> usize {
    (symbolic.supernode_end()[s] - symbolic.supernode_begin()[s]) as usize
        + symbolic.supernode(s).pattern().len()
}

/// Zeroes supernode `s`'s block, maps its pattern rows to local rows in
/// `map`, and adds `A`'s lower triangle of its columns.
fn gather(
    symbolic: &SymbolicSupernodalCholesky<u32>,
    s: usize,
    ls: &mut [f64],
    a_lower: SparseColMatRef<'_, u32, f64>,
    map: &mut [u32],
) {
    let s_start = symbolic.supernode_begin()[s] as usize;
    let s_end = symbolic.supernode_end()[s] as usize;
    let pattern = symbolic.supernode(s).pattern();
    let s_ncols = s_end - s_start;
    let s_nrows = s_ncols + pattern.len();
    ls.fill(0.0);
    for (i, &row) in pattern.iter().enumerate() {
        map[row as usize] = (i + s_ncols) as u32;
    }
    for j in s_start..s_end {
        let col = &mut ls[(j - s_start) * s_nrows..(j - s_start + 1) * s_nrows];
        for (&i, &v) in a_lower
            .row_idx_of_col_raw(j)
            .iter()
            .zip(a_lower.val_of_col(j))
        {
            let i = i as usize;
            if i < j {
                continue;
            }
            let local = if i >= s_end {
                map[i] as usize
            } else {
                i - s_start
            };
            col[local] += v;
        }
    }
}

/// Subtracts descendant `d`'s update from the columns `cols` (local to `s`)
/// of supernode `s`'s block; `panel` holds those columns (from
/// `cols.start`), `head` the values of every earlier supernode.
#[allow(clippy::too_many_arguments)]
fn update_panel(
    symbolic: &SymbolicSupernodalCholesky<u32>,
    s: usize,
    panel: &mut [f64],
    cols: std::ops::Range<usize>,
    head: &[f64],
    d: usize,
    map: &[u32],
    rows: &mut [u32],
    w: &mut [f64],
    r: &mut [f64],
) {
    let s_start = symbolic.supernode_begin()[s] as usize;
    let s_end = symbolic.supernode_end()[s] as usize;
    let s_nrows = s_end - s_start + symbolic.supernode(s).pattern().len();
    let (c_lo, c_hi) = (
        s_start + cols.start,
        s_start + cols.end.min(s_end - s_start),
    );
    if c_lo >= c_hi {
        return;
    }
    let d_pattern = symbolic.supernode(d).pattern();
    let d_ncols = (symbolic.supernode_end()[d] - symbolic.supernode_begin()[d]) as usize;
    let d_nrows = d_ncols + d_pattern.len();
    let ptr = symbolic.col_ptr_for_val();
    let ld = &head[ptr[d] as usize..ptr[d + 1] as usize];
    // d's pattern rows in columns c_lo..c_hi, then every later row.
    let first = d_pattern.partition_point(|&x| (x as usize) < c_lo);
    let mid = d_pattern[first..].partition_point(|&x| (x as usize) < c_hi);
    if mid == 0 {
        return;
    }
    let part = &d_pattern[first..];
    let m = part.len();
    let rows = &mut rows[..m];
    for (l, &row) in rows.iter_mut().zip(part) {
        let row = row as usize;
        *l = if row < s_end {
            (row - s_start) as u32
        } else {
            map[row]
        };
    }
    // In chunks of columns j0..j1 of the middle rows: Rᵀ = (D_d L_d,j0..j1ᵀ)ᵀ
    // (j1 − j0 × d_ncols, row-major), W = L_d,j0.. R (rows j0.. of the part).
    let mut j0 = 0;
    while j0 < mid {
        let m0 = m - j0;
        let kb = (mid - j0).min(w.len() / m0).min(r.len() / d_ncols).max(1);
        let j1 = j0 + kb;
        let rt = &mut r[..d_ncols * kb];
        for p in 0..d_ncols {
            let dp = ld[p * d_nrows + p];
            let src = &ld[p * d_nrows + d_ncols + first + j0..p * d_nrows + d_ncols + first + j1];
            for (x, &l) in rt[p * kb..(p + 1) * kb].iter_mut().zip(src) {
                *x = dp * l;
            }
        }
        let w = &mut w[..m0 * kb];
        let l_part = |p: usize| &ld[p * d_nrows + d_ncols + first + j0..(p + 1) * d_nrows];
        if m0 * kb * d_ncols <= SMALL_UPDATE {
            w.fill(0.0);
            for j in 0..kb {
                let wj = &mut w[j * m0..(j + 1) * m0];
                for p in 0..d_ncols {
                    let c = rt[p * kb + j];
                    for (wi, &li) in wj[j..].iter_mut().zip(&l_part(p)[j..]) {
                        *wi += li * c;
                    }
                }
            }
        } else {
            let lhs = MatRef::from_column_major_slice_with_stride(
                &ld[d_ncols + first + j0..],
                m0,
                d_ncols,
                d_nrows,
            );
            let rhs = MatRef::from_row_major_slice(rt, d_ncols, kb);
            matmul(
                MatMut::from_column_major_slice_mut(w, m0, kb),
                Accum::Replace,
                lhs,
                rhs,
                1.0,
                Par::Seq,
            );
        }
        // Scatter: column j of W goes to local column rows[j0 + j] of s,
        // rows from j on (the lower triangle).
        let rows = &rows[j0..];
        for j in 0..kb {
            let c = rows[j] as usize - cols.start;
            let dst = &mut panel[c * s_nrows..(c + 1) * s_nrows];
            for (&l, &v) in rows[j..].iter().zip(&w[j * m0 + j..(j + 1) * m0]) {
                dst[l as usize] -= v;
            }
        }
        j0 = j1;
    }
}

/// The dense part of supernode `s`: `L D Lᵀ` of its diagonal block with the
/// regularization, then the rows below it. Returns the regularized pivots,
/// or the global index of a zero pivot.
fn dense(
    symbolic: &SymbolicSupernodalCholesky<u32>,
    s: usize,
    ls: &mut [f64],
    reg: &LdltRegularization<'_, f64>,
    par: Par,
    stack: &mut MemStack,
) -> Result<usize, usize> {
    let s_start = symbolic.supernode_begin()[s] as usize;
    let s_end = symbolic.supernode_end()[s] as usize;
    let s_ncols = s_end - s_start;
    let below = symbolic.supernode(s).pattern().len();
    let block = MatMut::from_column_major_slice_mut(ls, s_ncols + below, s_ncols);
    let (mut top, mut bot) = block.split_at_row_mut(s_ncols);
    let count = match cholesky_in_place(
        top.as_mut(),
        reg_of(reg, s_start, s_end),
        par,
        stack,
        Default::default(),
    ) {
        Ok(info) => info.dynamic_regularization_count,
        Err(LdltError::ZeroPivot { index }) => return Err(index + s_start),
    };
    for j in 1..s_ncols {
        for i in 0..j {
            top[(i, j)] = 0.0;
        }
    }
    solve_unit_lower_triangular_in_place(top.as_ref(), bot.as_mut().transpose_mut(), par);
    for j in 0..s_ncols {
        let d = top[(j, j)].recip();
        for i in 0..below {
            bot[(i, j)] *= d;
        }
    }
    Ok(count)
}
