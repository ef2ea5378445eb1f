//! Tree-parallel triangular solves with a supernodal `L D Lᵀ` factor in
//! faer's storage (`SymbolicSupernodalCholesky`: each supernode a dense
//! column-major block of its columns, the diagonal block with the unit lower
//! `L` below `D` on its diagonal, then the rows of its pattern).
//!
//! The supernodal elimination tree (the parent of a supernode is the one
//! holding the first row of its pattern) is cut once, from the structure
//! alone, into independent subtrees of at most [`TASK_SHARE`] of the factor's
//! entries each and the supernodes above them (the top); consecutive
//! subtrees are grouped into tasks of up to that share. The forward
//! substitution `L y = b` runs the subtrees as rayon tasks: a subtree writes
//! its own unknowns, and its updates of top unknowns go to a buffer of its
//! own, subtracted in subtree order once all have finished; then the top
//! supernodes run in order. The backward substitution `Lᵀ x = z` runs the top
//! first, then the subtrees, which only read the top. Each supernode applies
//! a column at a time, an `axpy` into a contiguous buffer of its pattern
//! (forward) or a dot product with it (backward), the classical supernodal
//! substitution (Davis 2006, §4.9; Ng and Peyton 1993). The cut and every
//! order of additions depend on the structure only, so the result is bitwise
//! the same for every thread count; it agrees with faer's own solve to
//! rounding (tests/ldlt.rs).

use faer::sparse::linalg::cholesky::supernodal::SymbolicSupernodalCholesky;
use rayon::prelude::*;

/// The largest share of the factor's entries in one subtree task.
pub const TASK_SHARE: f64 = 1.0 / 8.0;

/// Not in the top part.
const NONE: u32 = u32::MAX;

/// The cut of the supernodal tree and the solves' buffers (allocated once).
pub struct TreeSolve {
    /// Supernodes of each task in increasing order: `order[task_ptr[k]..task_ptr[k + 1]]`.
    order: Vec<u32>,
    task_ptr: Vec<usize>,
    /// The top supernodes in increasing order.
    top: Vec<u32>,
    /// The top's unknowns, and each unknown's index among them (or [`NONE`]).
    top_cols: Vec<u32>,
    top_index: Vec<u32>,
    /// Each task's buffer of top updates (`top_cols.len()` per task).
    acc: Vec<f64>,
    /// Each task's pattern buffer (`pat_max` per task), and the top's.
    tmp: Vec<f64>,
    pat_max: usize,
}

/// A supernode's columns, pattern and block.
struct Node<'a> {
    start: usize,
    ncols: usize,
    pattern: &'a [u32],
    block: &'a [f64],
}

fn node<'a>(
    symbolic: &'a SymbolicSupernodalCholesky<u32>,
    values: &'a [f64],
    s: usize,
) -> Node<'a> {
    let begin = symbolic.supernode_begin()[s] as usize;
    let end = symbolic.supernode_end()[s] as usize;
    let ptr = symbolic.col_ptr_for_val();
    Node {
        start: begin,
        ncols: end - begin,
        pattern: symbolic.supernode(s).pattern(),
        block: &values[ptr[s] as usize..ptr[s + 1] as usize],
    }
}

/// A cut of the supernodal elimination tree into subtree tasks and the
/// supernodes above them (the top), from the structure alone.
pub(crate) struct Cut {
    /// Supernodes of each task in increasing order: `order[task_ptr[k]..task_ptr[k + 1]]`.
    order: Vec<u32>,
    task_ptr: Vec<usize>,
    /// The top supernodes in increasing order.
    pub(crate) top: Vec<u32>,
}

impl Cut {
    /// Subtree tasks.
    pub(crate) fn tasks(&self) -> usize {
        self.task_ptr.len() - 1
    }

    /// Supernodes of task `k`, in increasing order.
    pub(crate) fn task(&self, k: usize) -> &[u32] {
        &self.order[self.task_ptr[k]..self.task_ptr[k + 1]]
    }
}

/// Cuts `symbolic`'s supernodal tree: every subtree heavier than `share`
/// of the total `weight` (one per supernode) has its root moved to the top,
/// and the remaining subtrees are grouped, consecutively, into tasks of up
/// to that share.
pub(crate) fn cut(
    symbolic: &SymbolicSupernodalCholesky<u32>,
    mut weight: Vec<f64>,
    share: f64,
) -> Cut {
    let ns = symbolic.n_supernodes();
    let super_of = supernode_of_columns(symbolic);
    // Parents (after their children: a pattern holds later columns only)
    // and subtree weights.
    let mut parent = vec![NONE; ns];
    for s in 0..ns {
        if let Some(&r) = symbolic.supernode(s).pattern().first() {
            let p = super_of[r as usize];
            parent[s] = p;
            weight[p as usize] += weight[s];
        }
    }
    let total = weight
        .iter()
        .zip(&parent)
        .filter(|(_, &p)| p == NONE)
        .map(|(w, _)| w)
        .sum::<f64>();
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); ns];
    let mut roots = Vec::new();
    for (s, &p) in parent.iter().enumerate() {
        match p {
            NONE => roots.push(s as u32),
            p => children[p as usize].push(s as u32),
        }
    }
    // Split every subtree heavier than the share: its root goes to the top.
    let limit = share * total;
    let mut in_top = vec![false; ns];
    let mut task_roots = Vec::new();
    let mut stack = roots;
    while let Some(s) = stack.pop() {
        if weight[s as usize] > limit && !children[s as usize].is_empty() {
            in_top[s as usize] = true;
            stack.extend(children[s as usize].iter().copied());
        } else {
            task_roots.push(s);
        }
    }
    task_roots.sort_unstable();
    // Tasks: consecutive subtrees grouped up to the share (so that a top
    // with many small children does not make as many tasks). A task's
    // supernodes: its subtrees' roots and their descendants.
    let mut task_of = vec![NONE; ns];
    let (mut tasks, mut filled) = (0usize, 0.0);
    for &r in &task_roots {
        let w = weight[r as usize];
        if tasks == 0 || filled + w > limit {
            tasks += 1;
            filled = 0.0;
        }
        filled += w;
        task_of[r as usize] = (tasks - 1) as u32;
    }
    for s in (0..ns).rev() {
        if !in_top[s] && task_of[s] == NONE {
            task_of[s] = task_of[parent[s] as usize];
        }
    }
    let mut task_ptr = vec![0usize; tasks + 1];
    for s in 0..ns {
        if !in_top[s] {
            task_ptr[task_of[s] as usize + 1] += 1;
        }
    }
    for k in 0..tasks {
        task_ptr[k + 1] += task_ptr[k];
    }
    let mut next = task_ptr[..tasks].to_vec();
    let mut order = vec![0u32; task_ptr[tasks]];
    let mut top = Vec::new();
    for s in 0..ns {
        if in_top[s] {
            top.push(s as u32);
        } else {
            let k = task_of[s] as usize;
            order[next[k]] = s as u32;
            next[k] += 1;
        }
    }
    Cut {
        order,
        task_ptr,
        top,
    }
}

impl TreeSolve {
    /// The cut of `symbolic`'s supernodal tree.
    pub fn new(symbolic: &SymbolicSupernodalCholesky<u32>) -> Self {
        let ns = symbolic.n_supernodes();
        let n = symbolic.nrows();
        let begin = symbolic.supernode_begin();
        let end = symbolic.supernode_end();
        let ptr = symbolic.col_ptr_for_val();
        // Weights in stored entries.
        let weight: Vec<f64> = (0..ns).map(|s| (ptr[s + 1] - ptr[s]) as f64).collect();
        let Cut {
            order,
            task_ptr,
            top,
        } = cut(symbolic, weight, TASK_SHARE);
        let tasks = task_ptr.len() - 1;
        let mut top_cols = Vec::new();
        let mut top_index = vec![NONE; n];
        for &s in &top {
            let s = s as usize;
            for (c, t) in top_index
                .iter_mut()
                .enumerate()
                .take(end[s] as usize)
                .skip(begin[s] as usize)
            {
                *t = top_cols.len() as u32;
                top_cols.push(c as u32);
            }
        }
        let pat_max = (0..ns)
            .map(|s| symbolic.supernode(s).pattern().len())
            .max()
            .unwrap_or(0)
            .max(1);
        TreeSolve {
            acc: vec![0.0; tasks * top_cols.len()],
            tmp: vec![0.0; (tasks + 1) * pat_max],
            order,
            task_ptr,
            top,
            top_cols,
            top_index,
            pat_max,
        }
    }

    /// Subtree tasks of the cut.
    pub fn tasks(&self) -> usize {
        self.task_ptr.len() - 1
    }

    /// `x ← (L D Lᵀ)⁻¹ x` with the supernodal factor `values` of `symbolic`
    /// (the one this cut was made for), on the current rayon pool.
    pub fn solve_in_place(
        &mut self,
        symbolic: &SymbolicSupernodalCholesky<u32>,
        values: &[f64],
        x: &mut [f64],
    ) {
        let top_n = self.top_cols.len();
        let pat_max = self.pat_max;
        let tasks = self.tasks();
        let (task_tmp, top_tmp) = self.tmp.split_at_mut(tasks * pat_max);
        let shared = Shared(x.as_mut_ptr());
        let (order, task_ptr, top_index) = (&self.order, &self.task_ptr, &self.top_index);
        // Forward and diagonal over the subtrees.
        let work = |k: usize, acc: &mut [f64], tmp: &mut [f64]| {
            acc.fill(0.0);
            for &s in &order[task_ptr[k]..task_ptr[k + 1]] {
                let nd = node(symbolic, values, s as usize);
                // SAFETY: task k writes only the unknowns of its own
                // supernodes (a pattern row outside the top belongs to an
                // ancestor in the same subtree), disjoint from every other
                // task's, and no top unknown is touched.
                unsafe {
                    forward(&nd, shared, tmp, |r, t| match top_index[r] {
                        NONE => *shared.0.add(r) -= t,
                        i => acc[i as usize] += t,
                    });
                }
            }
        };
        let acc_len = top_n.max(1);
        if self.acc.is_empty() {
            task_tmp
                .par_chunks_mut(pat_max)
                .enumerate()
                .for_each(|(k, tmp)| work(k, &mut [], tmp));
        } else {
            self.acc
                .par_chunks_mut(acc_len)
                .zip(task_tmp.par_chunks_mut(pat_max))
                .enumerate()
                .for_each(|(k, (acc, tmp))| work(k, acc, tmp));
        }
        for acc in self.acc.chunks(acc_len) {
            for (&c, &a) in self.top_cols.iter().zip(acc) {
                // SAFETY: one thread; every access to `x` is through `shared`.
                unsafe { *shared.0.add(c as usize) -= a };
            }
        }
        for &s in &self.top {
            let nd = node(symbolic, values, s as usize);
            // SAFETY: one thread; `x` is not otherwise borrowed here.
            unsafe { forward(&nd, shared, top_tmp, |r, t| *shared.0.add(r) -= t) };
        }
        // Backward: the top, then the subtrees (which read only the top).
        for &s in self.top.iter().rev() {
            let nd = node(symbolic, values, s as usize);
            // SAFETY: as above.
            unsafe { backward(&nd, shared, top_tmp) };
        }
        task_tmp
            .par_chunks_mut(pat_max)
            .enumerate()
            .for_each(|(k, tmp)| {
                for &s in order[task_ptr[k]..task_ptr[k + 1]].iter().rev() {
                    let nd = node(symbolic, values, s as usize);
                    // SAFETY: task k writes only its own supernodes' unknowns
                    // and reads those and the top's, which no task writes.
                    unsafe { backward(&nd, shared, tmp) };
                }
            });
    }
}

/// `x`'s data, shared by tasks that write disjoint parts of it.
#[derive(Clone, Copy)]
struct Shared(*mut f64);
// SAFETY: the tasks' accesses are disjoint (see `solve_in_place`).
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

/// One supernode of `L y = b` then `D z = y` on its own unknowns; each
/// pattern row's update `t` is handed to `sub` (which subtracts it).
///
/// # Safety
/// `x` points to the unknowns, and no other thread accesses this
/// supernode's own unknowns meanwhile.
unsafe fn forward(nd: &Node<'_>, x: Shared, tmp: &mut [f64], mut sub: impl FnMut(usize, f64)) {
    let (start, ncols) = (nd.start, nd.ncols);
    let nrows = ncols + nd.pattern.len();
    // SAFETY: the supernode's own unknowns, exclusive to this call.
    let own = unsafe { std::slice::from_raw_parts_mut(x.0.add(start), ncols) };
    let tmp = &mut tmp[..nd.pattern.len()];
    tmp.fill(0.0);
    for j in 0..ncols {
        let col = &nd.block[j * nrows..(j + 1) * nrows];
        let xj = own[j];
        for (xi, &l) in own[j + 1..].iter_mut().zip(&col[j + 1..ncols]) {
            *xi -= l * xj;
        }
        for (t, &l) in tmp.iter_mut().zip(&col[ncols..]) {
            *t += l * xj;
        }
    }
    for (&r, &t) in nd.pattern.iter().zip(tmp.iter()) {
        sub(r as usize, t);
    }
    for (j, xj) in own.iter_mut().enumerate() {
        *xj /= nd.block[j * nrows + j];
    }
}

/// One supernode of `Lᵀ x = z`: its own unknowns from its pattern's.
///
/// # Safety
/// `x` points to the unknowns; no other thread writes this supernode's own
/// unknowns or its pattern's meanwhile.
unsafe fn backward(nd: &Node<'_>, x: Shared, tmp: &mut [f64]) {
    let (start, ncols) = (nd.start, nd.ncols);
    let nrows = ncols + nd.pattern.len();
    let tmp = &mut tmp[..nd.pattern.len()];
    for (t, &r) in tmp.iter_mut().zip(nd.pattern) {
        // SAFETY: a pattern row is a later unknown, not written meanwhile.
        *t = unsafe { *x.0.add(r as usize) };
    }
    // SAFETY: the supernode's own unknowns, exclusive to this call.
    let own = unsafe { std::slice::from_raw_parts_mut(x.0.add(start), ncols) };
    for j in (0..ncols).rev() {
        let col = &nd.block[j * nrows..(j + 1) * nrows];
        let mut sum = dot(&col[ncols..], tmp);
        for (&l, &xi) in col[j + 1..ncols].iter().zip(&own[j + 1..]) {
            sum += l * xi;
        }
        own[j] -= sum;
    }
}

/// `Σ a_i b_i` with four partial sums (so that it vectorizes), added in a
/// fixed order.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (a4, b4) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (a4.remainder(), b4.remainder());
    for (x, y) in a4.zip(b4) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    let mut sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (x, y) in ra.iter().zip(rb) {
        sum += x * y;
    }
    sum
}

/// The supernode of each column of `symbolic`'s factor.
pub(crate) fn supernode_of_columns(symbolic: &SymbolicSupernodalCholesky<u32>) -> Vec<u32> {
    let (begin, end) = (symbolic.supernode_begin(), symbolic.supernode_end());
    let mut super_of = vec![0u32; symbolic.nrows()];
    for s in 0..symbolic.n_supernodes() {
        super_of[begin[s] as usize..end[s] as usize].fill(s as u32);
    }
    super_of
}
