//! Nested-dissection ordering of the symmetric structure `A + Aᵀ` with
//! METIS (`METIS_NodeND`, the bundled C library of `metis-sys`).

use std::sync::Mutex;

use faer::sparse::SymbolicSparseColMatRef;
use metis_sys::idx_t;

use super::SolveError;

/// Held over every METIS call: GKlib's random generator (`mt` and `mti` in
/// its `random.c`), which each call reseeds and draws from, is a
/// process-wide static. Concurrent calls (a batch's cases, tests) would race
/// on it, and an ordering would depend on the other threads' draws.
static METIS: Mutex<()> = Mutex::new(());

/// Fills `fwd` (new -> old) and `inv` (old -> new) with METIS's ordering of
/// the graph of `A + Aᵀ` (diagonal dropped). Returns `false` when the graph
/// has no edges (nothing to dissect).
pub(super) fn node_nd(
    a: SymbolicSparseColMatRef<'_, usize>,
    fwd: &mut [usize],
    inv: &mut [usize],
) -> Result<bool, SolveError> {
    let n = a.ncols();
    let too_big = || SolveError::Library("matrix too large for METIS's 32-bit indices".into());
    // Adjacency of A + Aᵀ in METIS's CSR form, built in place: both
    // directions of every off-diagonal entry counted, placed, then sorted and
    // deduplicated per vertex (one array, no list per vertex).
    let mut xadj: Vec<idx_t> = vec![0; n + 1];
    let mut total = 0usize;
    for c in 0..n {
        for &r in a.row_idx_of_col_raw(c) {
            if r != c {
                xadj[c + 1] += 1;
                xadj[r + 1] += 1;
                total += 2;
            }
        }
    }
    idx_t::try_from(total).map_err(|_| too_big())?;
    for v in 0..n {
        xadj[v + 1] += xadj[v];
    }
    let mut next: Vec<idx_t> = xadj[..n].to_vec();
    let mut adjncy: Vec<idx_t> = vec![0; total];
    for c in 0..n {
        for &r in a.row_idx_of_col_raw(c) {
            if r != c {
                adjncy[next[c] as usize] = r as idx_t;
                next[c] += 1;
                adjncy[next[r] as usize] = c as idx_t;
                next[r] += 1;
            }
        }
    }
    drop(next);
    let mut w = 0usize;
    for v in 0..n {
        let (start, end) = (xadj[v] as usize, xadj[v + 1] as usize);
        adjncy[start..end].sort_unstable();
        xadj[v] = w as idx_t;
        for k in start..end {
            if k == start || adjncy[k] != adjncy[k - 1] {
                adjncy[w] = adjncy[k];
                w += 1;
            }
        }
    }
    xadj[n] = w as idx_t;
    adjncy.truncate(w);
    if adjncy.is_empty() {
        return Ok(false);
    }
    let mut nv = idx_t::try_from(n).map_err(|_| too_big())?;
    let mut perm: Vec<idx_t> = vec![0; n];
    let mut iperm: Vec<idx_t> = vec![0; n];
    // SAFETY: xadj has n + 1 entries ending at adjncy.len(), every adjncy
    // entry is a vertex < n, perm and iperm have n entries; null vertex
    // weights and options select METIS's defaults.
    let _serial = METIS.lock().unwrap_or_else(|e| e.into_inner());
    let status = unsafe {
        metis_sys::METIS_NodeND(
            &mut nv,
            xadj.as_mut_ptr(),
            adjncy.as_mut_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            perm.as_mut_ptr(),
            iperm.as_mut_ptr(),
        )
    };
    if status != metis_sys::rstatus_et_METIS_OK {
        return Err(SolveError::Library(format!(
            "METIS_NodeND failed (status {status})"
        )));
    }
    // METIS: row i of the permuted matrix is row perm[i] of A.
    for i in 0..n {
        fwd[i] = perm[i] as usize;
        inv[i] = iperm[i] as usize;
    }
    Ok(true)
}
