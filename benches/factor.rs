//! Criterion benchmarks of the sparse `LDLᵀ` (issue 23): the numeric
//! factorization (tree-parallel, `linalg::supernodal_factor`), one plain
//! solve with the factor (the tree-parallel substitution,
//! `linalg::supernodal`) and one solve refined to Newton's request
//! (`newton_refine_tol(1e-6)` = 1e-8) and to round-off (`REFINE_TOL`), on
//! rayon pools of 1 and 2 threads.
//!
//! The matrices are the first Newton matrix of step 1 of `flexmb bench`'s
//! L2 at 223 cells per side (100,800 rows, the planar truss lattice) and L3
//! at 14 cells per side (the space truss lattice), exported at the start of
//! the bench into a temporary directory (no committed matrix file).
//!
//! Run: `cargo bench --bench factor` (one problem: `cargo bench --bench
//! factor -- l2`).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

use flexmb::bench::{matrix_file, run_case, BenchCase, Problem};
use flexmb::integrate::IntegratorSpec;
use flexmb::linalg::{
    newton_refine_tol, read_matrix, read_vector, rhs_path, Ordering, Pattern, SparseLdlt,
    REFINE_TOL,
};

/// Step 1's first Newton matrix of `problem` at `size` and its right-hand
/// side, exported by `flexmb bench`'s own case runner.
fn exported(problem: Problem, size: usize) -> (Pattern, Vec<f64>, Vec<f64>) {
    let dir = std::env::temp_dir().join(format!("flexmb-bench-factor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let case = BenchCase {
        problem,
        size,
        steps: 1,
        integrator: IntegratorSpec::default(),
        output: None,
        export: Some((dir.clone(), 1)),
    };
    run_case(&case).expect("bench case runs");
    let file = matrix_file(&dir, problem, size);
    let (pattern, values) = read_matrix(&file).expect("exported matrix");
    let b = read_vector(&rhs_path(&file)).expect("exported right-hand side");
    std::fs::remove_dir_all(&dir).ok();
    (pattern, values, b)
}

fn ldlt(c: &mut Criterion) {
    for (name, problem, size) in [
        ("l2-223", Problem::TrussLattice, 223),
        ("l3-14", Problem::SpaceTrussLattice, 14),
    ] {
        let (pattern, values, b) = exported(problem, size);
        let mut group = c.benchmark_group(format!("ldlt/{name}"));
        group.sample_size(10);
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("rayon pool");
            let par = if threads == 1 {
                faer::Par::Seq
            } else {
                faer::Par::rayon(threads)
            };
            let mut f = SparseLdlt::new(&pattern, Some(Ordering::Metis), par).expect("analysis");
            pool.install(|| f.factor(&values)).expect("factorization");
            let mut x = b.clone();
            group.bench_function(BenchmarkId::new("factorization", threads), |bench| {
                bench.iter(|| pool.install(|| f.factor(&values)).expect("factorization"))
            });
            group.bench_function(BenchmarkId::new("solve_plain", threads), |bench| {
                bench.iter(|| {
                    x.copy_from_slice(&b);
                    pool.install(|| f.solve_unrefined(&mut x));
                })
            });
            for (label, tol) in [
                ("solve_newton", newton_refine_tol(1e-6)),
                ("solve_round_off", REFINE_TOL),
            ] {
                group.bench_function(BenchmarkId::new(label, threads), |bench| {
                    bench.iter(|| {
                        x.copy_from_slice(&b);
                        let r = pool.install(|| f.solve_to(&mut x, tol));
                        assert!(r.converged, "{r:?}");
                    })
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, ldlt);
criterion_main!(benches);
