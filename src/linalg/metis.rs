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
    // Adjacency lists of A + Aᵀ: both directions of every off-diagonal entry,
    // then sorted and deduplicated per vertex.
    let mut adj: Vec<Vec<idx_t>> = vec![Vec::new(); n];
    for c in 0..n {
        for &r in a.row_idx_of_col_raw(c) {
            if r != c {
                adj[c].push(idx_t::try_from(r).map_err(|_| too_big())?);
                adj[r].push(idx_t::try_from(c).map_err(|_| too_big())?);
            }
        }
    }
    let mut xadj: Vec<idx_t> = Vec::with_capacity(n + 1);
    let mut adjncy: Vec<idx_t> = Vec::new();
    xadj.push(0);
    for list in &mut adj {
        list.sort_unstable();
        list.dedup();
        adjncy.extend_from_slice(list);
        xadj.push(idx_t::try_from(adjncy.len()).map_err(|_| too_big())?);
    }
    drop(adj);
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
