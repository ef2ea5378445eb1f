//! The tree-parallel numeric `LDLᵀ` (src/linalg/supernodal_factor.rs): the
//! same `L` and `D` as faer's own supernodal factorization to rounding, the
//! same regularized pivots, bitwise the same factor and solutions on 1, 2, 3
//! and 7 threads, and the refined solve's backward error as with faer's
//! factor. On the step-1 Newton matrices of L2 (71 cells per side) and L3
//! (6 and 10 cells), and on a saddle-point matrix whose constraint block is
//! rank-deficient (zero Schur pivots, regularized).

mod common;

use std::collections::BTreeMap;

use common::bench::export_case;
use common::residual::backward_error;
use common::scratch::temp_dir;
use flexmb::assembly::Pattern;
use flexmb::bench::{matrix_file, run_case, Problem};
use flexmb::linalg::{
    read_matrix, read_vector, rhs_path, Factorization, Ordering, SaddlePointSolver, SolveError,
    SparseLdlt, REFINE_TOL,
};

/// `max |a − b| / max |b|`.
fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let d = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    d / b.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

fn bits_equal(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// `[K Bᵀ; B 0]`: `K` the 7-point Laplacian of a `g³` grid plus the identity,
/// `B` one row per grid line in x (the sum of its nodes), each given twice,
/// so the constraint block is rank-deficient and half of its Schur pivots
/// vanish (regularized by the static pivoting).
fn saddle_point(g: usize) -> (Pattern, Vec<f64>, Vec<f64>) {
    let nk = g * g * g;
    let id = |i: usize, j: usize, k: usize| i + g * (j + g * k);
    let mut a: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    for k in 0..g {
        for j in 0..g {
            for i in 0..g {
                let c = id(i, j, k);
                *a.entry((c, c)).or_default() += 7.0;
                for (di, dj, dk) in [(1, 0, 0), (0, 1, 0), (0, 0, 1)] {
                    let (ii, jj, kk) = (i + di, j + dj, k + dk);
                    if ii < g && jj < g && kk < g {
                        let r = id(ii, jj, kk);
                        *a.entry((r, c)).or_default() -= 1.0;
                        *a.entry((c, r)).or_default() -= 1.0;
                    }
                }
            }
        }
    }
    let mut row = nk;
    for k in 0..g {
        for j in 0..g {
            for _twice in 0..2 {
                for i in 0..g {
                    let c = id(i, j, k);
                    a.insert((row, c), 1.0);
                    a.insert((c, row), 1.0);
                }
                a.insert((row, row), 0.0);
                row += 1;
            }
        }
    }
    let n = row;
    let pattern = Pattern::from_pairs(n, a.keys().copied().collect());
    let mut values = Vec::with_capacity(pattern.nnz());
    for c in 0..n {
        for &r in &pattern.row_idx[pattern.col_ptr[c]..pattern.col_ptr[c + 1]] {
            values.push(a[&(r, c)]);
        }
    }
    // A consistent right-hand side: A times a known vector.
    let x: Vec<f64> = (0..n).map(|i| ((i % 7) as f64) - 3.0).collect();
    let mut b = vec![0.0; n];
    for (c, &xc) in x.iter().enumerate() {
        for k in pattern.col_ptr[c]..pattern.col_ptr[c + 1] {
            b[pattern.row_idx[k]] += values[k] * xc;
        }
    }
    (pattern, values, b)
}

fn lattice(p: Problem, size: usize) -> (Pattern, Vec<f64>, Vec<f64>) {
    let dir = temp_dir(&format!("ldlt-tree-{p:?}-{size}"));
    let case = export_case(p, size, 1, &dir, 1);
    run_case(&case).unwrap_or_else(|e| panic!("{e}"));
    let file = matrix_file(&dir, p, size);
    let (pattern, values) = read_matrix(&file).unwrap();
    let b = read_vector(&rhs_path(&file)).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    (pattern, values, b)
}

/// One system: faer's factor as the reference, then the tree's on each
/// thread count, with the top's dense kernels on `par`.
fn check(name: &str, pattern: &Pattern, values: &[f64], b: &[f64], par: faer::Par) -> usize {
    let mut ldlt = SparseLdlt::new(pattern, Some(Ordering::Metis), par).unwrap();
    assert_eq!(ldlt.kind(), "supernodal", "{name}");
    ldlt.set_tree_factor(false);
    assert!(!ldlt.tree_factor(), "{name}");
    ldlt.factor(values).unwrap();
    let faer_values = ldlt.factor_values().to_vec();
    let faer_regularized = ldlt.regularized_pivots();
    let mut x_faer = b.to_vec();
    let r_faer = ldlt.solve(&mut x_faer);
    ldlt.set_tree_factor(true);
    assert!(ldlt.tree_factor(), "{name}");
    let (tasks, top) = ldlt.factor_tasks();
    assert!(
        tasks > 1 && top > 0,
        "{name}: {tasks} tasks, {top} top supernodes"
    );
    let mut first: Option<(Vec<f64>, Vec<f64>)> = None;
    for threads in [1, 2, 3, 7] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let (l, x, r) = pool.install(|| {
            ldlt.factor(values).unwrap();
            let mut x = b.to_vec();
            let r = ldlt.solve(&mut x);
            (ldlt.factor_values().to_vec(), x, r)
        });
        assert_eq!(
            ldlt.regularized_pivots(),
            faer_regularized,
            "{name}, {threads} threads"
        );
        let d = rel_diff(&l, &faer_values);
        assert!(
            d <= 1e-12,
            "{name}, {threads} threads: factor vs faer's {d:e}"
        );
        assert_eq!(r.converged, r_faer.converged, "{name}: {r:?} vs {r_faer:?}");
        assert!(
            r.converged && r.backward_error <= REFINE_TOL,
            "{name}, {threads} threads: {r:?}"
        );
        let e = backward_error(pattern, values, &x, b);
        assert!(
            e <= 1e-13,
            "{name}, {threads} threads: backward error {e:e}"
        );
        match &first {
            None => first = Some((l, x)),
            Some((l1, x1)) => {
                assert!(
                    bits_equal(&l, l1),
                    "{name}: factor on {threads} threads differs from 1"
                );
                assert!(
                    bits_equal(&x, x1),
                    "{name}: solution on {threads} threads differs from 1"
                );
            }
        }
    }
    faer_regularized
}

#[test]
fn tree_factor_matches_faer_on_lattices() {
    for (p, size, par) in [
        (Problem::TrussLattice, 71, faer::Par::Seq),
        (Problem::SpaceTrussLattice, 6, faer::Par::Seq),
        (Problem::SpaceTrussLattice, 10, faer::Par::rayon(2)),
    ] {
        let (pattern, values, b) = lattice(p, size);
        check(&format!("{p:?} {size}"), &pattern, &values, &b, par);
    }
}

#[test]
fn tree_factor_regularizes_as_faer() {
    let (pattern, values, b) = saddle_point(12);
    check("saddle point", &pattern, &values, &b, faer::Par::rayon(2));
    // The duplicated constraints' pivots are `−δ ‖A‖_max` (δ = 1e-8, the
    // constraint rows' sign; faer counts only the `+` side's).
    let mut ldlt = SparseLdlt::new(&pattern, Some(Ordering::Metis), faer::Par::Seq).unwrap();
    assert!(ldlt.tree_factor());
    ldlt.factor(&values).unwrap();
    let pivot = -(1e-8 * 7.0f64);
    let regularized = ldlt
        .factor_values()
        .iter()
        .filter(|v| v.to_bits() == pivot.to_bits())
        .count();
    assert!(regularized >= 12 * 12, "{regularized} regularized pivots");
}

/// L1's Newton matrix at 25,000 elements (100,006 rows) is too
/// ill-conditioned for the `LDLᵀ` without pivoting (`κ(Ā)` about 3e10): its
/// factor overflows under either ordering. The factorization says so (it
/// used to report non-finite values), and the engine's solver falls back to
/// the LU and solves it.
#[test]
fn ill_conditioned_l1_matrix_is_a_clear_breakdown() {
    let (pattern, values, b) = lattice(Problem::HangingBeam, 25_000);
    for o in [Ordering::Amd, Ordering::Metis] {
        let mut ldlt = SparseLdlt::new(&pattern, Some(o), faer::Par::Seq).unwrap();
        let e = ldlt.factor(&values).unwrap_err();
        assert!(
            matches!(e, SolveError::LdltBreakdown { .. }),
            "{o:?}: {e:?}"
        );
        assert!(e.to_string().contains("use the LU"), "{e}");
    }
    let mut s = SaddlePointSolver::with_factorization(&pattern, true, Factorization::Ldlt).unwrap();
    s.factor(&values).unwrap();
    let mut x = b.clone();
    s.solve(&mut x).unwrap();
    assert!(!s.is_ldlt());
    let e = backward_error(&pattern, &values, &x, &b);
    assert!(e <= 1e-12, "{e:e}");
}
