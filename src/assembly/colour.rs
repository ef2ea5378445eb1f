//! Deterministic parallel loops over elements and joints: a greedy colouring
//! of blocks of consecutive entities by the DOFs they touch, disjoint writes
//! into the global arrays within a colour, and a fixed-order parallel sum.
//!
//! Two entities that share no DOF write disjoint entries: the residual rows
//! of their DOFs, the matrix slots `(r, c)` with `r, c` among their DOFs, and
//! (joints) their own multiplier rows and the B and B^T slots of those rows.
//! The entities of a set are cut into blocks of [`CHUNK`] consecutive ones,
//! and the blocks are coloured so that two blocks of one colour share no DOF.
//! The blocks of a colour then run concurrently, each in entity order on one
//! thread, and scatter directly into the global arrays, without locks,
//! atomics or a gather; the colours run one after another in a fixed order.
//! Every entry thus receives its terms in an order fixed by the colouring
//! (colour, then entity within the block), whatever the number of threads and
//! however rayon distributes the blocks: the sums are bitwise identical for
//! 1, 2 or N threads (one thread runs the same blocks in the same order).
//! Blocks rather than single entities keep the memory locality of the serial
//! loop (a block's elements, slots and DOFs are neighbours) and make one
//! rayon task of a block; a set of at most [`CHUNK`] entities is one block,
//! run in entity order as before. The colouring is the first-fit greedy
//! colouring of the blocks' conflict graph (Jones & Plassmann, SIAM J. Sci.
//! Comput. 14(3), 1993, the sequential variant), in block order: a beam chain
//! takes 2 colours (even and odd blocks), a rigid chain's joints 2, its
//! bodies 1.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::ops::Range;

use rayon::prelude::*;

use super::Local;

/// Entities per block (one rayon task): a block amortizes the task's cost
/// over cheap entities (a beam element is about a microsecond); also the
/// leaf of [`ordered_sum`].
///
/// Blocks of 256 were 10-15 % faster in the assembly on the idle 2-core
/// machine (L2 at 401,408 rows 133/75 -> 116/63 ms per step on 1/2 threads)
/// but change the summation order, and the hardest shipped Newton case
/// (`tests/large_mesh_newton.rs`, `line_search_carries_large_steps`: L1 at
/// dt 0.1 with modified Newton and the line search, 22.1 iterations per step
/// with the serial loop, 28.3 with blocks of 32) then stalls at step 8 (100
/// iterations, residual 2.5e5): that case is sensitive to round-off, and
/// 32 stays until its Newton refresh rule is made robust.
const CHUNK: usize = 32;

/// Colours that [`Colouring::new`] tries before it sends a block to the
/// serial remainder (a DOF shared by more than 64 blocks, e.g. a hub body).
const MAX_COLOURS: usize = 64;

/// The blocks of one entity set grouped into colours of DOF-disjoint blocks.
#[derive(Debug, Clone, Default)]
pub(super) struct Colouring {
    /// Entities in the set.
    count: usize,
    /// Block indices, colour by colour, increasing within a colour.
    order: Vec<u32>,
    /// Colour `c` holds `order[ptr[c]..ptr[c + 1]]`; the last group is the
    /// serial remainder (blocks that found no free colour).
    ptr: Vec<usize>,
}

impl Colouring {
    /// Colours the blocks of `count` entities over `n` DOFs, entity `e`
    /// touching `dofs(e)`: each block gets the smallest colour that none of
    /// its DOFs has yet.
    pub(super) fn new<'a>(count: usize, n: usize, dofs: impl Fn(usize) -> &'a [usize]) -> Self {
        let blocks = count.div_ceil(CHUNK);
        let mut used = vec![0u64; n];
        let mut colour = vec![0u8; blocks];
        let mut size = [0usize; MAX_COLOURS + 1];
        for (k, ck) in colour.iter_mut().enumerate() {
            let range = k * CHUNK..((k + 1) * CHUNK).min(count);
            let mask = range
                .clone()
                .flat_map(&dofs)
                .fold(0u64, |m, &i| m | used[i]);
            let c = (!mask).trailing_zeros() as usize;
            if c < MAX_COLOURS {
                for &i in range.flat_map(&dofs) {
                    used[i] |= 1 << c;
                }
            }
            *ck = c as u8;
            size[c] += 1;
        }
        let groups = size[..MAX_COLOURS]
            .iter()
            .rposition(|&s| s > 0)
            .map_or(0, |c| c + 1);
        let mut ptr = Vec::with_capacity(groups + 2);
        ptr.push(0);
        for c in (0..groups).chain([MAX_COLOURS]) {
            ptr.push(ptr.last().copied().unwrap_or(0) + size[c]);
        }
        let mut next: Vec<usize> = ptr[..groups + 1].to_vec();
        let mut order = vec![0u32; blocks];
        for (k, &c) in colour.iter().enumerate() {
            let g = if (c as usize) < MAX_COLOURS {
                c as usize
            } else {
                groups
            };
            order[next[g]] = u32::try_from(k).expect("fewer than 2^32 blocks per set");
            next[g] += 1;
        }
        Colouring { count, order, ptr }
    }

    /// Number of colours (without the serial remainder).
    #[cfg(test)]
    fn colours(&self) -> usize {
        self.ptr.len().saturating_sub(2)
    }

    /// The entities of block `k`.
    fn block(&self, k: u32) -> Range<usize> {
        let k = k as usize;
        k * CHUNK..((k + 1) * CHUNK).min(self.count)
    }

    /// Runs `f(scratch, entity)` for every entity: colour after colour, the
    /// blocks of a colour in parallel on the current rayon pool, each block's
    /// entities in order (one block, one thread, a caller outside a pool
    /// ([`in_pool`]) or the serial remainder: in order on the calling
    /// thread). `scratch` is the running thread's element-local workspace.
    /// `f` may write, through [`Disjoint`], the entries that its entity's DOFs
    /// (and own rows) own, and no others.
    pub(super) fn run<F>(&self, f: F)
    where
        F: Fn(&mut Local, usize) + Sync,
    {
        let groups = self.ptr.len().saturating_sub(1);
        let parallel = in_pool();
        for g in 0..groups {
            let blocks = &self.order[self.ptr[g]..self.ptr[g + 1]];
            let remainder = g + 1 == groups;
            if parallel && !remainder && blocks.len() > 1 {
                blocks.par_iter().for_each(|&k| each(self.block(k), &f));
            } else {
                for &k in blocks {
                    each(self.block(k), &f);
                }
            }
        }
    }
}

thread_local! {
    /// Each thread's element-local workspace (in thread-local storage, not
    /// on the heap: no allocation in the time loop, no zeroing per chunk).
    static SCRATCH: RefCell<Local> = const { RefCell::new(Local::ZERO) };
}

/// `f(scratch, e)` for the entities `ids` on this thread.
fn each<F: Fn(&mut Local, usize)>(ids: Range<usize>, f: &F) {
    SCRATCH.with_borrow_mut(|l| {
        for e in ids {
            f(l, e);
        }
    });
}

/// Sum of `f(i)` for `i` in `0..len` in a fixed order: a binary tree over
/// index ranges halved down to leaves of [`CHUNK`] terms summed in order,
/// the two halves of a node on the rayon pool. The tree does not depend on
/// the number of threads, so neither does the sum; up to [`CHUNK`] terms it
/// is the plain sum in order.
pub(super) fn ordered_sum<F: Fn(usize) -> f64 + Sync>(len: usize, f: &F) -> f64 {
    fn node<F: Fn(usize) -> f64 + Sync>(lo: usize, hi: usize, par: bool, f: &F) -> f64 {
        if hi - lo <= CHUNK {
            (lo..hi).map(f).sum()
        } else {
            let mid = lo + (hi - lo) / 2;
            if par {
                let (a, b) = rayon::join(|| node(lo, mid, par, f), || node(mid, hi, par, f));
                a + b
            } else {
                node(lo, mid, par, f) + node(mid, hi, par, f)
            }
        }
    }
    node(0, len, in_pool(), f)
}

/// Entries per rayon task of the plain array loops ([`fill`],
/// [`scatter_distinct`]): memory-bound, each task a few tens of microseconds.
const BLOCK: usize = 1 << 14;

/// `x.fill(v)`, in parallel blocks on a pool.
pub(super) fn fill(x: &mut [f64], v: f64) {
    if in_pool() && x.len() > BLOCK {
        x.par_chunks_mut(BLOCK).for_each(|c| c.fill(v));
    } else {
        x.fill(v);
    }
}

/// `f(i, &mut x[i])` for every entry, in parallel blocks on a pool; each
/// entry is computed on its own, so the result does not depend on the
/// blocks.
pub(super) fn for_each_entry<F: Fn(usize, &mut f64) + Sync>(x: &mut [f64], f: F) {
    if in_pool() && x.len() > BLOCK {
        x.par_chunks_mut(BLOCK).enumerate().for_each(|(k, c)| {
            for (i, xi) in c.iter_mut().enumerate() {
                f(k * BLOCK + i, xi);
            }
        });
    } else {
        for (i, xi) in x.iter_mut().enumerate() {
            f(i, xi);
        }
    }
}

/// `dst[slots[q]] += scale * x[q]` for pairwise distinct `slots` (each entry
/// gets one term: the order does not matter), in parallel blocks on a pool.
pub(super) fn scatter_distinct(dst: &mut [f64], slots: &[usize], x: &[f64], scale: f64) {
    let out = Disjoint::new(dst);
    let add = |q: usize| {
        let hi = (q + BLOCK).min(slots.len());
        // SAFETY: the slots are pairwise distinct (the caller), so the
        // blocks write disjoint entries.
        unsafe { out.add(&slots[q..hi], &x[q..hi], scale) };
    };
    if in_pool() && slots.len() > BLOCK {
        (0..slots.len())
            .into_par_iter()
            .step_by(BLOCK)
            .for_each(add);
    } else {
        add(0);
        let mut q = BLOCK;
        while q < slots.len() {
            add(q);
            q += BLOCK;
        }
    }
}

/// Whether the loops run in parallel: on a worker of a rayon pool of more
/// than one thread (`ThreadPool::install`; the `flexmb` binary runs its
/// commands so). A caller outside every pool runs them serially, in the same
/// order: handing each loop from an outside thread to the pool goes through
/// rayon's injector queue, which allocates a block every 63 hand-overs (the
/// time loop must not allocate, tests/no_alloc.rs) and wakes a sleeping
/// worker per loop.
fn in_pool() -> bool {
    rayon::current_thread_index().is_some() && rayon::current_num_threads() > 1
}

/// A global array that the entities of one colour write concurrently, each
/// into entries no other entity of the colour touches ([`Colouring`]).
#[derive(Clone, Copy)]
pub(super) struct Disjoint<'a> {
    ptr: *mut f64,
    len: usize,
    life: PhantomData<&'a mut [f64]>,
}

// SAFETY: a `Disjoint` is only written through `add` and `set`, whose callers
// guarantee that no two threads touch the same entry (the colouring), and
// the borrow it was made from keeps everyone else out for 'a.
unsafe impl Send for Disjoint<'_> {}
unsafe impl Sync for Disjoint<'_> {}

impl<'a> Disjoint<'a> {
    /// Takes `x` for the duration of the loop.
    pub(super) fn new(x: &'a mut [f64]) -> Self {
        Disjoint {
            ptr: x.as_mut_ptr(),
            len: x.len(),
            life: PhantomData,
        }
    }

    /// `self[idx[q]] += scale * x[q]`.
    ///
    /// # Safety
    /// No other thread reads or writes the entries `idx` during the call.
    #[inline]
    pub(super) unsafe fn add(&self, idx: &[usize], x: &[f64], scale: f64) {
        for (&i, &v) in idx.iter().zip(x) {
            assert!(i < self.len);
            // SAFETY: in bounds (checked) and unshared (the caller).
            unsafe { *self.ptr.add(i) += scale * v };
        }
    }

    /// `self[i] += v`.
    ///
    /// # Safety
    /// As [`Disjoint::add`].
    #[inline]
    pub(super) unsafe fn add_one(&self, i: usize, v: f64) {
        assert!(i < self.len);
        // SAFETY: in bounds (checked) and unshared (the caller).
        unsafe { *self.ptr.add(i) += v };
    }

    /// `self[idx[q]] = x[q]`.
    ///
    /// # Safety
    /// As [`Disjoint::add`].
    #[inline]
    pub(super) unsafe fn set(&self, idx: &[usize], x: &[f64]) {
        for (&i, &v) in idx.iter().zip(x) {
            assert!(i < self.len);
            // SAFETY: in bounds (checked) and unshared (the caller).
            unsafe { *self.ptr.add(i) = v };
        }
    }

    /// `self[lo..lo + x.len()] = x`.
    ///
    /// # Safety
    /// As [`Disjoint::add`], for those entries.
    #[inline]
    pub(super) unsafe fn set_from(&self, lo: usize, x: &[f64]) {
        assert!(lo <= self.len && x.len() <= self.len - lo);
        for (q, &v) in x.iter().enumerate() {
            // SAFETY: in bounds (checked) and unshared (the caller).
            unsafe { *self.ptr.add(lo + q) = v };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_dof_disjoint_blocks_covering_every_entity_once() {
        // A chain of 1,000 two-DOF entities (32 blocks: 2 colours); a star
        // around DOF 0 of 70 blocks (64 colours and a serial remainder of 6
        // blocks); a set of one block (one colour, entity order).
        let chain: Vec<[usize; 2]> = (0..1000).map(|i| [i, i + 1]).collect();
        let star: Vec<[usize; 2]> = (1..70 * CHUNK + 1).map(|i| [0, i]).collect();
        let small: Vec<[usize; 2]> = (0..CHUNK).map(|i| [0, i + 1]).collect();
        for (set, colours, rest) in [(&chain, 2, 0), (&star, 64, 6), (&small, 1, 0)] {
            let n = set.len() + 1;
            let c = Colouring::new(set.len(), n, |e| &set[e][..]);
            assert_eq!(c.colours(), colours);
            let last = c.ptr.len() - 1;
            assert_eq!(c.ptr[last] - c.ptr[last - 1], rest);
            let mut seen = vec![0; set.len()];
            for g in 0..last {
                let blocks = &c.order[c.ptr[g]..c.ptr[g + 1]];
                assert!(blocks.windows(2).all(|w| w[0] < w[1]));
                let mut owner = vec![u32::MAX; n];
                for &k in blocks {
                    for e in c.block(k) {
                        seen[e] += 1;
                        if g + 1 < last {
                            for &d in &set[e] {
                                assert!(
                                    owner[d] == u32::MAX || owner[d] == k,
                                    "colour {g}: blocks {} and {k} share DOF {d}",
                                    owner[d]
                                );
                                owner[d] = k;
                            }
                        }
                    }
                }
            }
            assert!(seen.iter().all(|&s| s == 1));
        }
    }

    /// `f` run inside pools of 1, 2, 3 and 7 threads, its results in that order.
    fn on_threads<T: Send>(f: impl Fn() -> T + Sync) -> Vec<T> {
        [1, 2, 3, 7]
            .iter()
            .map(|&t| {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build()
                    .expect("a test pool");
                pool.install(&f)
            })
            .collect()
    }

    #[test]
    fn ordered_sum_does_not_depend_on_the_threads() {
        let f = |i: usize| {
            1.0 / (1.0 + i as f64).powf(1.3) * if i.is_multiple_of(3) { -1e3 } else { 1.0 }
        };
        let sums = on_threads(|| ordered_sum(100_003, &f).to_bits());
        assert!(sums.windows(2).all(|w| w[0] == w[1]), "{sums:?}");
        // Up to a chunk: the plain sum in order.
        let plain: f64 = (0..CHUNK).map(f).sum();
        assert_eq!(ordered_sum(CHUNK, &f).to_bits(), plain.to_bits());
    }

    #[test]
    fn coloured_writes_do_not_depend_on_the_threads() {
        // A chain of 10,001 two-DOF entities adding e-dependent values into
        // shared DOFs: the sums are bitwise the same on 1, 2, 3 and 7 threads.
        let set: Vec<[usize; 2]> = (0..10_001).map(|i| [i, i + 1]).collect();
        let c = Colouring::new(set.len(), 10_002, |e| &set[e][..]);
        let results = on_threads(|| {
            let mut out = vec![0.1; 10_002];
            let w = Disjoint::new(&mut out);
            c.run(|l, e| {
                l.f[0] = (e as f64).sin();
                l.f[1] = 1.0 / (e as f64 + 3.0);
                // SAFETY: colours are DOF-disjoint.
                unsafe { w.add(&set[e], &l.f[..2], 1.0) };
            });
            out.iter().map(|x| x.to_bits()).collect::<Vec<u64>>()
        });
        assert!(results.windows(2).all(|w| w[0] == w[1]));
    }
}
