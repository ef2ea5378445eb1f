//! Returning the analysis's freed scratch to the operating system.
//!
//! The symbolic analyses (reverse Cuthill–McKee, AMD, METIS, the candidate
//! symbolic factorizations) allocate and free several structures the size of
//! the pattern. glibc keeps such freed memory resident: after the first large
//! block is freed it raises its `mmap` threshold, so later temporaries come
//! from the heap, and it returns the heap to the system only when the free
//! space at its top exceeds twice that threshold. On small systems the
//! retained scratch was a fifth of the solver's resident memory (L3 at 4,356
//! rows: 13.3 MiB of growth over analysis and factorization, 11.7–11.9 MiB with the
//! trim; `docs/bench.md`, "Memory of the analysis"). The analysis runs once
//! per model, so one `malloc_trim` after it costs nothing in the time loop.
//! Small patterns skip it: their scratch is a few hundred kilobytes, while
//! the trim locks every allocator arena and walks its free lists, which in a
//! batch of many small cases run in parallel is pure overhead.

/// Stored entries of the pattern below which the analysis keeps its freed
/// scratch (a few hundred kilobytes at most).
pub const TRIM_MIN_NNZ: usize = 50_000;

/// Hands the heap's free pages back to the system (glibc's `malloc_trim`;
/// nothing elsewhere) after the analysis of a pattern of `nnz` stored
/// entries, when it has at least [`TRIM_MIN_NNZ`].
pub fn release_freed_memory(nnz: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if nnz >= TRIM_MIN_NNZ {
        // SAFETY: malloc_trim takes no pointers; it only walks and trims the
        // allocator's own free lists, under the allocator's locks.
        unsafe {
            libc::malloc_trim(0);
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = nnz;
}
