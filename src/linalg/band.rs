//! Banded LU with partial pivoting (LAPACK `dgbtf2`/`dgbtrs`, Golub & Van
//! Loan §4.3.5) for saddle-point matrices whose reverse Cuthill–McKee
//! ordering has a narrow band (beam chains, trusses along a line, the
//! flexible slider-crank): `P A P^T` is factored in band storage, where
//! row interchanges widen the upper band from `ku` to `kl + ku`. For such
//! matrices it costs `n kl (kl + ku)` flops, without the per-column
//! symbolic work of a general sparse LU.

use sprs::CsMatI;

use super::Pattern;
use super::SolveError;

/// Widest `kl + ku` for which the band path is chosen.
pub const BAND_MAX: usize = 64;

/// The factorization workspace of one pattern.
pub struct BandLu {
    n: usize,
    kl: usize,
    ku: usize,
    ld: usize,
    /// `ab[kv + r - c + c ld]` holds entry (r, c) of `P A P^T` (kv = kl + ku).
    ab: Vec<f64>,
    /// Band-storage index of each stored entry of the pattern (`u32`:
    /// half the memory of `usize`; the band path is not taken when the band
    /// storage has more than `u32::MAX` entries).
    slot: Vec<u32>,
    /// `perm[new] = old`.
    perm: Vec<usize>,
    piv: Vec<usize>,
    work: Vec<f64>,
}

impl BandLu {
    /// The band workspace for `pattern` under reverse Cuthill–McKee, or
    /// `None` when the band is wider than [`BAND_MAX`] (or its storage has
    /// more than `u32::MAX` entries).
    pub fn new(pattern: &Pattern) -> Option<Self> {
        let n = pattern.dim;
        let sym = symmetric_structure(pattern)?;
        let ordering = sprs::linalg::reverse_cuthill_mckee(sym.view());
        drop(sym);
        let widen = |p: Vec<u32>| p.into_iter().map(|i| i as usize).collect::<Vec<usize>>();
        // Use whichever reading of the permutation gives the narrower band.
        let cand = [widen(ordering.perm.vec()), widen(ordering.perm.inv_vec())];
        let (perm, kl, ku) = cand
            .into_iter()
            .map(|perm| {
                let mut inv = vec![0; n];
                for (new, &old) in perm.iter().enumerate() {
                    inv[old] = new;
                }
                let (mut kl, mut ku) = (0, 0);
                for c in 0..n {
                    for &r in &pattern.row_idx[pattern.col_ptr[c]..pattern.col_ptr[c + 1]] {
                        let (i, j) = (inv[r], inv[c]);
                        kl = kl.max(i.saturating_sub(j));
                        ku = ku.max(j.saturating_sub(i));
                    }
                }
                (perm, kl, ku)
            })
            .min_by_key(|(_, kl, ku)| kl + ku)?;
        if kl + ku > BAND_MAX {
            return None;
        }
        let mut inv = vec![0; n];
        for (new, &old) in perm.iter().enumerate() {
            inv[old] = new;
        }
        let ld = 2 * kl + ku + 1;
        let kv = kl + ku;
        u32::try_from(ld * n).ok()?;
        let mut slot = Vec::with_capacity(pattern.nnz());
        for c in 0..n {
            for &r in &pattern.row_idx[pattern.col_ptr[c]..pattern.col_ptr[c + 1]] {
                let (i, j) = (inv[r], inv[c]);
                slot.push((kv + i - j + j * ld) as u32);
            }
        }
        super::heap::release_freed_memory(pattern.nnz());
        Some(BandLu {
            n,
            kl,
            ku,
            ld,
            ab: vec![0.0; ld * n],
            slot,
            perm,
            piv: vec![0; n],
            work: vec![0.0; n],
        })
    }

    /// Stored entries of the factors (band storage, `(2 kl + ku + 1) n`).
    pub fn stored(&self) -> usize {
        self.ab.len()
    }

    /// Lower and upper bandwidth of the ordered matrix.
    pub fn bandwidths(&self) -> (usize, usize) {
        (self.kl, self.ku)
    }

    #[inline]
    fn at(&self, r: usize, c: usize) -> usize {
        self.kl + self.ku + r - c + c * self.ld
    }

    /// Factors the matrix with `values` (pattern order). A zero or NaN pivot
    /// is reported as singular with its index in the original numbering.
    pub fn factor(&mut self, values: &[f64]) -> Result<(), SolveError> {
        self.ab.fill(0.0);
        for (&s, &v) in self.slot.iter().zip(values) {
            self.ab[s as usize] = v;
        }
        let (n, kl, kv) = (self.n, self.kl, self.kl + self.ku);
        let mut ju = 0;
        for j in 0..n {
            let km = kl.min(n - 1 - j);
            let diag = j * self.ld + kv;
            let (mut jp, mut big) = (0, 0.0);
            for (r, a) in self.ab[diag..=diag + km].iter().enumerate() {
                if a.abs() > big || r == 0 {
                    big = a.abs();
                    jp = r;
                }
            }
            self.piv[j] = j + jp;
            if big == 0.0 || big.is_nan() {
                return Err(SolveError::Singular {
                    index: Some(self.perm[j]),
                });
            }
            ju = ju.max((j + kv).min(n - 1).min(j + self.ku + jp));
            if jp != 0 {
                for c in j..=ju {
                    let (a, b) = (self.at(j, c), self.at(j + jp, c));
                    self.ab.swap(a, b);
                }
            }
            let inv_pivot = 1.0 / self.ab[self.at(j, j)];
            // Column j's multipliers (rows j+1..=j+km) are contiguous, and so
            // are the rows j+1..=j+km of every later column c.
            let (head, tail) = self.ab.split_at_mut((j + 1) * self.ld);
            let l = &mut head[j * self.ld + kv + 1..j * self.ld + kv + 1 + km];
            for x in l.iter_mut() {
                *x *= inv_pivot;
            }
            // Entry (j, c) of column c sits at `first + (c - j - 1) (ld - 1)`.
            let first = kv - 1;
            let cols = ju - j;
            let stride = self.ld - 1;
            macro_rules! fixed {
                ($($k:literal)*) => {
                    match km {
                        $($k => eliminate::<$k>(tail, l, first, stride, cols),)*
                        _ => eliminate_any(tail, l, first, stride, cols),
                    }
                };
            }
            fixed!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
        }
        Ok(())
    }

    /// Solves `A x = rhs` in place with the last factorization.
    pub fn solve(&mut self, rhs: &mut [f64]) {
        let (n, kl, kv) = (self.n, self.kl, self.kl + self.ku);
        for (w, &p) in self.work.iter_mut().zip(&self.perm) {
            *w = rhs[p];
        }
        // Column j of L (rows j+1..=j+km) and of U (rows j-len..j) are
        // contiguous in band storage, next to the diagonal at `j ld + kv`.
        let ld = self.ld;
        for j in 0..n {
            self.work.swap(j, self.piv[j]);
            let b = self.work[j];
            let km = kl.min(n - 1 - j);
            if b != 0.0 && km > 0 {
                let col = &self.ab[j * ld + kv + 1..j * ld + kv + 1 + km];
                for (w, &l) in self.work[j + 1..j + 1 + km].iter_mut().zip(col) {
                    *w -= l * b;
                }
            }
        }
        for j in (0..n).rev() {
            let d = j * ld + kv;
            let b = self.work[j] / self.ab[d];
            self.work[j] = b;
            let len = kv.min(j);
            if b != 0.0 {
                let col = &self.ab[d - len..d];
                for (w, &u) in self.work[j - len..j].iter_mut().zip(col) {
                    *w -= u * b;
                }
            }
        }
        for (&p, &w) in self.perm.iter().zip(&self.work) {
            rhs[p] = w;
        }
    }
}

/// The structure of `A + A^T` for the ordering, in `u32` indices with
/// one-byte values (the ordering reads only the structure): built by
/// counting, its peak is about 10 bytes per entry of `A + A^T` where a
/// triplet matrix took 24 bytes per entry and a copy while it grew. `None`
/// when the rows do not fit in `u32` (the band path is then not taken).
fn symmetric_structure(pattern: &Pattern) -> Option<CsMatI<u8, u32, usize>> {
    let n = pattern.dim;
    u32::try_from(n).ok()?;
    let (ptr, idx) = (&pattern.col_ptr, &pattern.row_idx);
    // Column c of A + A^T: the rows of column c of A and the columns of row c.
    let mut count = vec![0usize; n + 1];
    for c in 0..n {
        for &r in &idx[ptr[c]..ptr[c + 1]] {
            count[c + 1] += 1;
            count[r + 1] += 1;
        }
    }
    for c in 0..n {
        count[c + 1] += count[c];
    }
    let mut rows = vec![0u32; count[n]];
    let mut next = count.clone();
    for c in 0..n {
        for &r in &idx[ptr[c]..ptr[c + 1]] {
            rows[next[c]] = r as u32;
            next[c] += 1;
            rows[next[r]] = c as u32;
            next[r] += 1;
        }
    }
    drop(next);
    // Sort and deduplicate each column in place, compacting to the front.
    let mut indptr = vec![0usize; n + 1];
    let mut len = 0;
    for c in 0..n {
        let (a, b) = (count[c], count[c + 1]);
        rows[a..b].sort_unstable();
        let start = len;
        for k in a..b {
            if len == start || rows[len - 1] != rows[k] {
                rows[len] = rows[k];
                len += 1;
            }
        }
        indptr[c + 1] = len;
    }
    drop(count);
    rows.truncate(len);
    rows.shrink_to_fit();
    let ones = vec![1u8; len];
    CsMatI::try_new((n, n), indptr, rows, ones).ok()
}

/// The rank-one update of one elimination step: for each of the `cols`
/// columns right of the pivot, whose pivot-row entry `t` is at
/// `first + c stride` of `tail`, subtract `t l` from the `K` entries below it.
/// `K` known at compile time lets the short inner loop unroll; it is the
/// lower bandwidth for all but the last columns.
#[inline]
fn eliminate<const K: usize>(
    tail: &mut [f64],
    l: &[f64],
    first: usize,
    stride: usize,
    cols: usize,
) {
    let l: &[f64; K] = l.try_into().expect("multiplier column of length K");
    for c in 0..cols {
        let at = first + c * stride;
        let t = tail[at];
        if t != 0.0 {
            let a: &mut [f64; K] = (&mut tail[at + 1..at + 1 + K])
                .try_into()
                .expect("band column of length K");
            for r in 0..K {
                a[r] -= l[r] * t;
            }
        }
    }
}

/// [`eliminate`] for a run-time length.
fn eliminate_any(tail: &mut [f64], l: &[f64], first: usize, stride: usize, cols: usize) {
    let k = l.len();
    for c in 0..cols {
        let at = first + c * stride;
        let t = tail[at];
        if t != 0.0 {
            for (a, &m) in tail[at + 1..at + 1 + k].iter_mut().zip(l) {
                *a -= m * t;
            }
        }
    }
}
