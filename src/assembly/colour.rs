//! Deterministic parallel loops over elements and joints: a greedy colouring
//! of the entities by the DOFs they touch, disjoint writes into the global
//! arrays within a colour, and a fixed-order parallel sum.
//!
//! Two entities that share no DOF write disjoint entries: the residual rows
//! of their DOFs, the matrix slots `(r, c)` with `r, c` among their DOFs, and
//! (joints) their own multiplier rows and the B and B^T slots of those rows.
//! The entities of one colour therefore run concurrently and scatter directly
//! into the global arrays, without locks, atomics or a gather; the colours run
//! one after another in a fixed order. Each entry then receives its terms in
//! the order of the colours, whatever the number of threads and however rayon
//! splits a colour, so the sums are bitwise identical for 1, 2 or N threads
//! (one thread runs the same colours in the same order, serially). The
//! colouring is the first-fit greedy colouring of the entities' conflict
//! graph (Jones & Plassmann, SIAM J. Sci. Comput. 14(3), 1993, the sequential
//! variant), in entity order: a beam chain takes 2 colours, a 2-D truss
//! lattice about 8.

use std::cell::RefCell;
use std::marker::PhantomData;

use rayon::prelude::*;

use super::Local;

/// Entities per rayon task: a chunk amortizes the task's cost over cheap
/// entities (a beam element is about a microsecond). A colour with at most
/// this many entities runs serially on the calling thread.
const CHUNK: usize = 32;

/// Colours that [`Colouring::new`] tries before it sends an entity to the
/// serial remainder (a DOF shared by more than 64 entities, e.g. a hub body).
const MAX_COLOURS: usize = 64;

/// The entities of one set grouped into colours of DOF-disjoint entities.
#[derive(Debug, Clone, Default)]
pub(super) struct Colouring {
    /// Entity indices, colour by colour, increasing within a colour.
    order: Vec<u32>,
    /// Colour `c` holds `order[ptr[c]..ptr[c + 1]]`; the last group is the
    /// serial remainder (entities that found no free colour).
    ptr: Vec<usize>,
}

impl Colouring {
    /// Colours `count` entities over `n` DOFs, entity `e` touching
    /// `dofs(e)`: each entity gets the smallest colour that none of its DOFs
    /// has yet.
    pub(super) fn new<'a>(count: usize, n: usize, dofs: impl Fn(usize) -> &'a [usize]) -> Self {
        let mut used = vec![0u64; n];
        let mut colour = vec![0u8; count];
        let mut size = [0usize; MAX_COLOURS + 1];
        for (e, ce) in colour.iter_mut().enumerate() {
            let d = dofs(e);
            let mask = d.iter().fold(0u64, |m, &i| m | used[i]);
            let c = (!mask).trailing_zeros() as usize;
            if c < MAX_COLOURS {
                for &i in d {
                    used[i] |= 1 << c;
                }
            }
            *ce = c as u8;
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
        let mut order = vec![0u32; count];
        for (e, &c) in colour.iter().enumerate() {
            let g = if (c as usize) < MAX_COLOURS {
                c as usize
            } else {
                groups
            };
            order[next[g]] = u32::try_from(e).expect("fewer than 2^32 entities per set");
            next[g] += 1;
        }
        Colouring { order, ptr }
    }

    /// Number of colours (without the serial remainder).
    #[cfg(test)]
    fn colours(&self) -> usize {
        self.ptr.len().saturating_sub(2)
    }

    /// Runs `f(scratch, entity)` for every entity: colour after colour, the
    /// entities of a colour in parallel chunks on the current rayon pool (a
    /// small colour, one thread, a caller outside a pool ([`in_pool`]) or the
    /// serial remainder: in order on the calling thread). `scratch` is the running thread's element-local
    /// workspace. `f` may write, through [`Disjoint`], the entries that its
    /// entity's DOFs (and own rows) own, and no others.
    pub(super) fn run<F>(&self, f: F)
    where
        F: Fn(&mut Local, usize) + Sync,
    {
        let groups = self.ptr.len().saturating_sub(1);
        let parallel = in_pool();
        for g in 0..groups {
            let ids = &self.order[self.ptr[g]..self.ptr[g + 1]];
            let remainder = g + 1 == groups;
            if parallel && !remainder && ids.len() > CHUNK {
                ids.par_chunks(CHUNK).for_each(|chunk| each(chunk, &f));
            } else {
                each(ids, &f);
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
fn each<F: Fn(&mut Local, usize)>(ids: &[u32], f: &F) {
    SCRATCH.with_borrow_mut(|l| {
        for &e in ids {
            f(l, e as usize);
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
    fn colours_are_dof_disjoint_and_cover_every_entity_once() {
        // A chain (2 colours), a star around DOF 0 (70 entities: 64 colours
        // and a serial remainder of 6) and a ring.
        let chain: Vec<[usize; 2]> = (0..10).map(|i| [i, i + 1]).collect();
        let star: Vec<[usize; 2]> = (1..71).map(|i| [0, i]).collect();
        for (set, n, colours) in [(&chain, 11, 2), (&star, 71, 64)] {
            let c = Colouring::new(set.len(), n, |e| &set[e][..]);
            assert_eq!(c.colours(), colours);
            let mut seen = vec![0; set.len()];
            for g in 0..c.ptr.len() - 1 {
                let ids = &c.order[c.ptr[g]..c.ptr[g + 1]];
                assert!(ids.windows(2).all(|w| w[0] < w[1]));
                let mut touched = vec![false; n];
                for &e in ids {
                    seen[e as usize] += 1;
                    if g + 2 < c.ptr.len() {
                        for &d in &set[e as usize] {
                            assert!(!touched[d], "colour {g} shares DOF {d}");
                            touched[d] = true;
                        }
                    }
                }
            }
            assert!(seen.iter().all(|&s| s == 1));
        }
        let star_c = Colouring::new(star.len(), 71, |e| &star[e][..]);
        assert_eq!(
            star_c.ptr[star_c.ptr.len() - 1] - star_c.ptr[star_c.ptr.len() - 2],
            6
        );
    }

    #[test]
    fn ordered_sum_does_not_depend_on_the_threads() {
        let f = |i: usize| {
            1.0 / (1.0 + i as f64).powf(1.3) * if i.is_multiple_of(3) { -1e3 } else { 1.0 }
        };
        let sums: Vec<u64> = [1, 2, 3, 7]
            .iter()
            .map(|&t| {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build()
                    .unwrap();
                pool.install(|| ordered_sum(100_003, &f)).to_bits()
            })
            .collect();
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
        let results: Vec<Vec<u64>> = [1, 2, 3, 7]
            .iter()
            .map(|&t| {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build()
                    .unwrap();
                let mut out = vec![0.1; 10_002];
                let w = Disjoint::new(&mut out);
                pool.install(|| {
                    c.run(|l, e| {
                        l.f[0] = (e as f64).sin();
                        l.f[1] = 1.0 / (e as f64 + 3.0);
                        // SAFETY: colours are DOF-disjoint.
                        unsafe { w.add(&set[e], &l.f[..2], 1.0) };
                    })
                });
                out.iter().map(|x| x.to_bits()).collect()
            })
            .collect();
        assert!(results.windows(2).all(|w| w[0] == w[1]));
    }
}
