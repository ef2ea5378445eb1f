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
//! substitution (Davis 2006, §4.9; Ng and Peyton 1993). A large top
//! supernode (at least [`PAR_MIN_ENTRIES`] entries below its diagonal block)
//! first solves with its diagonal block, then splits the product of the rows
//! below it by row ranges (forward), or their dot products by column ranges
//! (backward), over the rayon pool, four columns per pass. Neither the
//! splits nor the blocking change the order in which any entry's products
//! are added, and the cut depends on the structure only, so the result is
//! bitwise the same for every thread count (tests/ldlt.rs,
//! tests/ldlt_tree.rs) and as the column-at-a-time substitution (the unit
//! test below); it agrees with faer's own solve to rounding.

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
    /// Each task's buffer of a pattern's values and a supernode's dot
    /// products (`pat_max` per task), and the top's.
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
        // A pattern's values and a supernode's dot products (backward).
        let pat_max = (0..ns)
            .map(|s| symbolic.supernode(s).pattern().len() + (end[s] - begin[s]) as usize)
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
            // SAFETY: the subtree tasks have finished; `x` is not otherwise
            // borrowed here.
            unsafe { forward_top(&nd, shared, top_tmp) };
        }
        // Backward: the top, then the subtrees (which read only the top).
        for &s in self.top.iter().rev() {
            let nd = node(symbolic, values, s as usize);
            // SAFETY: as above.
            unsafe { backward(&nd, shared, top_tmp, true) };
        }
        task_tmp
            .par_chunks_mut(pat_max)
            .enumerate()
            .for_each(|(k, tmp)| {
                for &s in order[task_ptr[k]..task_ptr[k + 1]].iter().rev() {
                    let nd = node(symbolic, values, s as usize);
                    // SAFETY: task k writes only its own supernodes' unknowns
                    // and reads those and the top's, which no task writes.
                    unsafe { backward(&nd, shared, tmp, false) };
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

impl Shared {
    /// The pointer to unknown `i` (a method, so that closures capture the
    /// whole `Shared`, which is `Sync`).
    ///
    /// # Safety
    /// `i` is within the unknowns.
    unsafe fn at(self, i: usize) -> *mut f64 {
        // SAFETY: as the caller's.
        unsafe { self.0.add(i) }
    }
}

/// Entries of a supernode's rows below its diagonal block (`pattern rows ×
/// columns`) from which a top supernode's products run on the rayon pool.
pub const PAR_MIN_ENTRIES: usize = 1 << 15;

/// Pattern rows per task of a top supernode's forward product, and columns
/// (a multiple of 4) per task of its backward dot products.
const PAR_ROWS: usize = 512;
const PAR_COLS: usize = 32;

/// `L₁₁ y = b` on a supernode's own unknowns (the unit lower triangle of its
/// diagonal block, column by column).
fn forward_diagonal(nd: &Node<'_>, own: &mut [f64]) {
    let (ncols, nrows) = (nd.ncols, nd.ncols + nd.pattern.len());
    for j in 0..ncols {
        let col = &nd.block[j * nrows + j + 1..j * nrows + ncols];
        let xj = own[j];
        for (xi, &l) in own[j + 1..].iter_mut().zip(col) {
            *xi -= l * xj;
        }
    }
}

/// `t = L₂₁[rows, :] y` (pattern rows `rows` of the supernode's block below
/// its diagonal block), four columns per pass over `t`. Each entry adds its
/// columns' products in column order, `((t + l₀y₀) + l₁y₁) + …` from
/// `t = 0`, exactly the order of one `axpy` per column (Rust does not fuse
/// or reassociate floating-point operations), so the blocking changes no
/// bit; it reads `t` a quarter as often (the classical register blocking of
/// the supernodal substitution, Ng and Peyton 1993).
fn below_product(nd: &Node<'_>, rows: std::ops::Range<usize>, y: &[f64], t: &mut [f64]) {
    let (ncols, nrows) = (nd.ncols, nd.ncols + nd.pattern.len());
    let col = |j: usize| &nd.block[j * nrows + ncols + rows.start..j * nrows + ncols + rows.end];
    t.fill(0.0);
    let mut j = 0;
    while j + 4 <= ncols {
        let (y0, y1, y2, y3) = (y[j], y[j + 1], y[j + 2], y[j + 3]);
        let cols = col(j)
            .iter()
            .zip(col(j + 1))
            .zip(col(j + 2))
            .zip(col(j + 3));
        for (ti, (((&a, &b), &c), &d)) in t.iter_mut().zip(cols) {
            *ti = (((*ti + a * y0) + b * y1) + c * y2) + d * y3;
        }
        j += 4;
    }
    for (j, &yj) in y.iter().enumerate().skip(j) {
        for (ti, &a) in t.iter_mut().zip(col(j)) {
            *ti += a * yj;
        }
    }
}

/// `s[k] = L₂₁[:, cols.start + k] · t` (the pattern rows' values `t`), four
/// columns per pass over `t`; each dot product adds in the order of [`dot`],
/// so the blocking changes no bit.
fn below_dots(nd: &Node<'_>, cols: std::ops::Range<usize>, t: &[f64], s: &mut [f64]) {
    let (ncols, nrows) = (nd.ncols, nd.ncols + nd.pattern.len());
    let col = |j: usize| &nd.block[j * nrows + ncols..(j + 1) * nrows];
    let mut j = cols.start;
    let mut out = s.chunks_exact_mut(4);
    for s4 in &mut out {
        s4.copy_from_slice(&dot4([col(j), col(j + 1), col(j + 2), col(j + 3)], t));
        j += 4;
    }
    for (sk, j) in out.into_remainder().iter_mut().zip(j..cols.end) {
        *sk = dot(col(j), t);
    }
}

/// `Lᵀ₁₁ x = z − s` on a supernode's own unknowns, `s` the dot products of
/// its columns below the diagonal block with the pattern's unknowns.
fn backward_diagonal(nd: &Node<'_>, own: &mut [f64], s: &[f64]) {
    let (ncols, nrows) = (nd.ncols, nd.ncols + nd.pattern.len());
    for j in (0..ncols).rev() {
        let col = &nd.block[j * nrows + j + 1..j * nrows + ncols];
        let mut sum = s[j];
        for (&l, &xi) in col.iter().zip(&own[j + 1..]) {
            sum += l * xi;
        }
        own[j] -= sum;
    }
}

/// Whether a supernode's products are split over the rayon pool.
fn split(nd: &Node<'_>) -> bool {
    nd.pattern.len() * nd.ncols >= PAR_MIN_ENTRIES && rayon::current_num_threads() > 1
}

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
    // A column at a time, each read once front to back: the whole pass
    // reads the factor as one ascending stream.
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

/// [`forward`] of a top supernode, its product below the diagonal block by
/// row ranges on the rayon pool when it is large ([`PAR_MIN_ENTRIES`]); the
/// updates go straight into `x`. Bitwise the same for any split.
///
/// # Safety
/// `x` points to the unknowns; no other thread accesses them meanwhile.
unsafe fn forward_top(nd: &Node<'_>, x: Shared, tmp: &mut [f64]) {
    if !split(nd) {
        // SAFETY: as the caller's.
        unsafe { forward(nd, x, tmp, |r, t| *x.0.add(r) -= t) };
        return;
    }
    let (start, ncols) = (nd.start, nd.ncols);
    let nrows = ncols + nd.pattern.len();
    // SAFETY: the supernode's own unknowns; its pattern rows are later
    // unknowns, disjoint from them.
    let own = unsafe { std::slice::from_raw_parts_mut(x.0.add(start), ncols) };
    forward_diagonal(nd, own);
    let own: &[f64] = own;
    tmp[..nd.pattern.len()]
        .par_chunks_mut(PAR_ROWS)
        .zip(nd.pattern.par_chunks(PAR_ROWS))
        .enumerate()
        .for_each(|(k, (t, rows))| {
            let r0 = k * PAR_ROWS;
            below_product(nd, r0..r0 + rows.len(), own, t);
            for (&r, &ti) in rows.iter().zip(t.iter()) {
                // SAFETY: each pattern row is in one chunk only.
                unsafe { *x.at(r as usize) -= ti };
            }
        });
    // SAFETY: as above; the tasks have finished.
    let own = unsafe { std::slice::from_raw_parts_mut(x.0.add(start), ncols) };
    for (j, xj) in own.iter_mut().enumerate() {
        *xj /= nd.block[j * nrows + j];
    }
}

/// One supernode of `Lᵀ x = z`: its own unknowns from its pattern's, the
/// dot products with the pattern's unknowns split by columns over the rayon
/// pool when `parallel` and the supernode is large ([`PAR_MIN_ENTRIES`]).
/// `tmp` holds at least the pattern's length plus the supernode's columns.
///
/// # Safety
/// `x` points to the unknowns; no other thread writes this supernode's own
/// unknowns or its pattern's meanwhile.
unsafe fn backward(nd: &Node<'_>, x: Shared, tmp: &mut [f64], parallel: bool) {
    let (start, ncols, npat) = (nd.start, nd.ncols, nd.pattern.len());
    let nrows = ncols + npat;
    let (t, s) = tmp.split_at_mut(npat);
    for (ti, &r) in t.iter_mut().zip(nd.pattern) {
        // SAFETY: a pattern row is a later unknown, not written meanwhile.
        *ti = unsafe { *x.0.add(r as usize) };
    }
    let t: &[f64] = t;
    // SAFETY: the supernode's own unknowns, exclusive to this call.
    let own = unsafe { std::slice::from_raw_parts_mut(x.0.add(start), ncols) };
    if parallel && split(nd) {
        let s = &mut s[..ncols];
        s.par_chunks_mut(PAR_COLS)
            .enumerate()
            .for_each(|(k, sk)| below_dots(nd, k * PAR_COLS..k * PAR_COLS + sk.len(), t, sk));
        backward_diagonal(nd, own, s);
        return;
    }
    for j in (0..ncols).rev() {
        let col = &nd.block[j * nrows..(j + 1) * nrows];
        let mut sum = dot(&col[ncols..], t);
        for (&l, &xi) in col[j + 1..ncols].iter().zip(&own[j + 1..]) {
            sum += l * xi;
        }
        own[j] -= sum;
    }
}

/// Four dot products with `b` at once, each adding in the order of [`dot`].
fn dot4(a: [&[f64]; 4], b: &[f64]) -> [f64; 4] {
    let mut acc = [[0.0; 4]; 4];
    let b4 = b.chunks_exact(4);
    let rb = b4.remainder();
    let rows = a[0]
        .chunks_exact(4)
        .zip(a[1].chunks_exact(4))
        .zip(a[2].chunks_exact(4))
        .zip(a[3].chunks_exact(4));
    for ((((x0, x1), x2), x3), y) in rows.zip(b4) {
        for k in 0..4 {
            acc[0][k] += x0[k] * y[k];
            acc[1][k] += x1[k] * y[k];
            acc[2][k] += x2[k] * y[k];
            acc[3][k] += x3[k] * y[k];
        }
    }
    let tail = b.len() - rb.len();
    let mut out = [0.0; 4];
    for c in 0..4 {
        let mut sum = (acc[c][0] + acc[c][1]) + (acc[c][2] + acc[c][3]);
        for (x, y) in a[c][tail..].iter().zip(rb) {
            sum += x * y;
        }
        out[c] = sum;
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The column-at-a-time substitution of one supernode (before the
    /// blocking): forward with its updates returned, and backward.
    fn reference(nd: &Node<'_>, x: &mut [f64]) -> Vec<f64> {
        let (start, ncols) = (nd.start, nd.ncols);
        let nrows = ncols + nd.pattern.len();
        let mut tmp = vec![0.0; nd.pattern.len()];
        for j in 0..ncols {
            let col = &nd.block[j * nrows..(j + 1) * nrows];
            let xj = x[start + j];
            for (i, &l) in col.iter().enumerate().take(ncols).skip(j + 1) {
                x[start + i] -= l * xj;
            }
            for (t, &l) in tmp.iter_mut().zip(&col[ncols..]) {
                *t += l * xj;
            }
        }
        for (&r, &t) in nd.pattern.iter().zip(&tmp) {
            x[r as usize] -= t;
        }
        for j in 0..ncols {
            x[start + j] /= nd.block[j * nrows + j];
        }
        let t: Vec<f64> = nd.pattern.iter().map(|&r| x[r as usize]).collect();
        for j in (0..ncols).rev() {
            let col = &nd.block[j * nrows..(j + 1) * nrows];
            let mut sum = dot(&col[ncols..], &t);
            for i in j + 1..ncols {
                sum += col[i] * x[start + i];
            }
            x[start + j] -= sum;
        }
        tmp
    }

    /// Values in [-1, 1) from a linear congruential sequence.
    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
            })
            .collect()
    }

    /// The blocked kernels, and the split ones of the top on several
    /// threads, give the column-at-a-time substitution's bits.
    #[test]
    fn blocked_and_split_kernels_match_column_at_a_time() {
        for (ncols, npat) in [
            (1, 0),
            (3, 1),
            (4, 4),
            (5, 7),
            (8, 3),
            (13, 100),
            (37, 1000),
            (64, 1500),
        ] {
            let nrows = ncols + npat;
            let mut block = values(ncols * nrows, (ncols * 1000 + npat) as u64);
            for j in 0..ncols {
                block[j * nrows + j] += 2.0;
            }
            let pattern: Vec<u32> = (0..npat as u32).map(|k| (ncols as u32) + 2 * k).collect();
            let nd = Node {
                start: 0,
                ncols,
                pattern: &pattern,
                block: &block,
            };
            let n = ncols + 2 * npat;
            let b = values(n, 7 + n as u64);
            let mut want = b.clone();
            let updates = reference(&nd, &mut want);
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let mut tmp = vec![0.0; npat + ncols];
                // Forward as in a subtree (updates handed back), then as in
                // the top (updates into x); backward serial and split.
                let mut x = b.clone();
                let mut got = vec![0.0; npat];
                unsafe {
                    forward(&nd, Shared(x.as_mut_ptr()), &mut tmp, |r, t| {
                        got[(r - ncols) / 2] = t
                    })
                };
                assert!(got
                    .iter()
                    .zip(&updates)
                    .all(|(a, b)| a.to_bits() == b.to_bits()));
                for parallel in [false, true] {
                    let mut x = b.clone();
                    pool.install(|| unsafe {
                        let sh = Shared(x.as_mut_ptr());
                        forward_top(&nd, sh, &mut tmp);
                        backward(&nd, sh, &mut tmp, parallel);
                    });
                    let same = x.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(
                        same,
                        "{ncols} x {npat}, {threads} threads, parallel {parallel}"
                    );
                }
            }
        }
    }
}
