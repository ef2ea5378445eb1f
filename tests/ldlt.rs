//! The symmetric path: the `LDLᵀ` of the symmetric part with refinement
//! against the true matrix gives the sparse LU's solutions on the step-1
//! Newton matrices of the rigid and flexible slider-cranks and small L2/L3
//! lattices (whose matrices are slightly unsymmetric), and the same runs;
//! strongly unsymmetric matrices (the double pendulum's Newton matrix, a 2×2
//! example) take the LU fallback; the automatic rule keeps small systems on
//! their LU.

mod common;

use std::path::{Path, PathBuf};

use common::bench::export_case;
use common::residual::backward_error;
use common::scratch::temp_dir;
use common::{model_path, run_file};
use flexmb::assembly::Pattern;
use flexmb::bench::{matrix_file, run_case, Problem};
use flexmb::input::load_model_file;
use flexmb::integrate::IntegratorSpec;
use flexmb::linalg::{
    newton_refine_tol, read_matrix, read_vector, rhs_path, Factorization, MatrixExport, Ordering,
    SaddlePointSolver, SparseLdlt, SparseLu, LDLT_MIN, REFINE_TOL,
};
use flexmb::output::MemoryRecorder;
use flexmb::run::Simulation;

fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let d = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    d / b.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// Largest relative asymmetry `|a_ij - a_ji| / max|a|`.
fn asymmetry(p: &Pattern, v: &[f64]) -> f64 {
    let at = |r: usize, c: usize| {
        let s = p.col_ptr[c];
        p.row_idx[s..p.col_ptr[c + 1]]
            .binary_search(&r)
            .map_or(0.0, |k| v[s + k])
    };
    let mut d = 0.0f64;
    for c in 0..p.dim {
        let range = p.col_ptr[c]..p.col_ptr[c + 1];
        for (&r, &x) in p.row_idx[range.clone()].iter().zip(&v[range]) {
            d = d.max((x - at(c, r)).abs());
        }
    }
    d / v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// The LDLᵀ (both orderings, and through the engine's solver) against the LU
/// on one exported system. `symmetric_enough`: the refinement converges and
/// the LDLᵀ answers; otherwise the engine's solver falls back to the LU.
/// Returns the matrix's asymmetry.
fn ldlt_equals_lu(file: &Path, symmetric_enough: bool) -> f64 {
    let (pattern, values) = read_matrix(file).unwrap();
    let b = read_vector(&rhs_path(file)).unwrap();
    let mut lu = SparseLu::new(&pattern, None, faer::Par::Seq).unwrap();
    lu.factor(&values).unwrap();
    let mut x_lu = b.clone();
    lu.solve(&mut x_lu);
    for o in [Ordering::Amd, Ordering::Metis] {
        let mut ldlt = SparseLdlt::new(&pattern, Some(o), faer::Par::Seq).unwrap();
        ldlt.factor(&values).unwrap();
        let mut x = b.clone();
        let r = ldlt.solve(&mut x);
        assert_eq!(
            r.converged,
            symmetric_enough,
            "{} {}: {r:?}",
            file.display(),
            o.name()
        );
        if r.converged {
            assert!(r.backward_error <= REFINE_TOL, "{r:?}");
            let d = rel_diff(&x, &x_lu);
            assert!(
                d < 1e-10,
                "{} {}: LDLT vs LU {d:.2e}",
                file.display(),
                o.name()
            );
        } else {
            assert_eq!(x, b, "an unconverged solve leaves the right-hand side");
        }
    }
    let mut s = SaddlePointSolver::with_factorization(&pattern, true, Factorization::Ldlt).unwrap();
    assert!(s.describe().starts_with("sparse LDLT"), "{}", s.describe());
    s.factor(&values).unwrap();
    let mut x = b.clone();
    s.solve(&mut x).unwrap();
    assert_eq!(
        s.fallbacks(),
        usize::from(!symmetric_enough),
        "{}",
        file.display()
    );
    assert_eq!(s.is_ldlt(), symmetric_enough);
    let d = rel_diff(&x, &x_lu);
    assert!(d < 1e-10, "{}: engine solver vs LU {d:.2e}", file.display());
    asymmetry(&pattern, &values)
}

/// The step-1 Newton system of a shipped model, exported on the sparse path.
fn export_model(name: &str, dir: &Path) -> PathBuf {
    let file = load_model_file(model_path(name)).unwrap();
    let over = IntegratorSpec {
        sparse: Some(true),
        ..IntegratorSpec::default()
    };
    let mut config = file.integrator(&over).unwrap();
    config.t_end = config.dt;
    let out = dir.join(format!("{name}.mtx"));
    config.export_matrix = Some(MatrixExport {
        step: 1,
        path: out.clone(),
    });
    let mut rec = MemoryRecorder::default();
    let s = Simulation::new(file.model)
        .run(&config, &file.text, &file.output, &mut rec, &mut |_| {})
        .unwrap();
    assert!(s.failure.is_none(), "{name}: {:?}", s.failure);
    out
}

#[test]
fn ldlt_solves_as_the_lu_on_models_and_lattices() {
    let dir = temp_dir("ldlt-systems");
    for name in ["slider_crank_rigid", "slider_crank_flexible"] {
        ldlt_equals_lu(&export_model(name, &dir), true);
    }
    // The double pendulum's point masses leave zero rotational inertia on the
    // diagonal and its constraint option weighs B̃ = 2 B in the rotation
    // columns (entries -2.5e-4 against -5e-4): far from symmetric, the
    // refinement stalls and the LU answers.
    let dp = export_model("double_pendulum", &dir);
    assert!(ldlt_equals_lu(&dp, false) > 1e-4);
    let mut asym = 0.0f64;
    for (p, size) in [(Problem::TrussLattice, 8), (Problem::SpaceTrussLattice, 3)] {
        let case = export_case(p, size, 2, &dir, 2);
        run_case(&case).unwrap_or_else(|e| panic!("{e}"));
        asym = asym.max(ldlt_equals_lu(&matrix_file(&dir, p, size), true));
    }
    // The lattices' matrices are not symmetric: the refinement did real work.
    assert!(asym > 1e-8, "asymmetry {asym:e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Whole runs on the sparse path: LDLᵀ and LU give the same motion and
/// the same Newton iterations.
#[test]
fn ldlt_and_lu_runs_agree() {
    for name in ["double_pendulum", "slider_crank_rigid"] {
        let run = |factorization: &str| {
            let file = load_model_file(model_path(name)).unwrap();
            let over = IntegratorSpec {
                sparse: Some(true),
                factorization: Some(factorization.into()),
                t_end: Some(0.2),
                ..IntegratorSpec::default()
            };
            let (s, rec) = run_file(file, &over);
            assert!(s.failure.is_none(), "{name} {factorization}");
            rec
        };
        let (lu, ldlt) = (run("lu"), run("ldlt"));
        assert_eq!(lu.u.len(), ldlt.u.len());
        let d = rel_diff(ldlt.u.last().unwrap(), lu.u.last().unwrap());
        assert!(d < 1e-10, "{name}: LDLT vs LU run {d:.2e}");
        assert_eq!(
            lu.newton.iter().map(|n| n.iterations).sum::<u32>(),
            ldlt.newton.iter().map(|n| n.iterations).sum::<u32>(),
            "{name}"
        );
    }
}

/// `[[1, 2], [-2, 1]]`: its symmetric part is the identity, and the
/// refinement `x += (A - I) ...` diverges (spectral radius 2), so the solve
/// must come from the LU; a mildly unsymmetric matrix stays on the LDLᵀ.
#[test]
fn unsymmetric_matrix_takes_the_lu_fallback() {
    let p = Pattern::from_pairs(2, vec![(0, 0), (1, 0), (0, 1), (1, 1)]);
    let solve = |values: &[f64], b: &[f64]| {
        let mut s = SaddlePointSolver::with_factorization(&p, true, Factorization::Ldlt).unwrap();
        s.factor(values).unwrap();
        let mut x = b.to_vec();
        s.solve(&mut x).unwrap();
        (x, s.fallbacks(), s.is_ldlt())
    };
    // Column-major values: a00, a10, a01, a11.
    let (x, fallbacks, on_ldlt) = solve(&[1.0, -2.0, 2.0, 1.0], &[3.0, -1.0]);
    assert_eq!(fallbacks, 1);
    assert!(!on_ldlt);
    assert!(
        (x[0] - 1.0).abs() < 1e-15 && (x[1] - 1.0).abs() < 1e-15,
        "{x:?}"
    );
    let (x, fallbacks, on_ldlt) = solve(&[4.0, 1.0, 1.001, 3.0], &[5.001, 4.0]);
    assert_eq!(fallbacks, 0);
    assert!(on_ldlt);
    assert!(
        (x[0] - 1.0).abs() < 1e-14 && (x[1] - 1.0).abs() < 1e-14,
        "{x:?}"
    );
}

/// `auto` keeps systems below `LDLT_MIN` on the LU and gives the large
/// symmetric-pattern ones to the LDLᵀ.
#[test]
fn auto_rule() {
    let lattice = |n: usize| {
        // A 2-D five-point grid pattern: structurally symmetric, no narrow band.
        let idx = |i: usize, j: usize| i * n + j;
        let mut pairs = Vec::new();
        for i in 0..n {
            for j in 0..n {
                pairs.push((idx(i, j), idx(i, j)));
                if i + 1 < n {
                    pairs.push((idx(i, j), idx(i + 1, j)));
                    pairs.push((idx(i + 1, j), idx(i, j)));
                }
                if j + 1 < n {
                    pairs.push((idx(i, j), idx(i, j + 1)));
                    pairs.push((idx(i, j + 1), idx(i, j)));
                }
            }
        }
        Pattern::from_pairs(n * n, pairs)
    };
    let small = lattice(20);
    assert!(small.dim < LDLT_MIN);
    let s = SaddlePointSolver::with_factorization(&small, true, Factorization::Auto).unwrap();
    assert!(s.describe().starts_with("sparse LU"), "{}", s.describe());
    let big = lattice(80);
    assert!(big.dim >= LDLT_MIN);
    let s = SaddlePointSolver::with_factorization(&big, false, Factorization::Auto).unwrap();
    assert!(s.describe().starts_with("sparse LDLT"), "{}", s.describe());
    let s = SaddlePointSolver::with_factorization(&big, false, Factorization::Lu).unwrap();
    assert!(s.describe().starts_with("sparse LU"), "{}", s.describe());
    // An unsymmetric pattern stays on the LU.
    let mut pairs: Vec<(usize, usize)> = (0..big.dim)
        .flat_map(|c| {
            big.row_idx[big.col_ptr[c]..big.col_ptr[c + 1]]
                .iter()
                .map(move |&r| (r, c))
        })
        .collect();
    pairs.push((0, big.dim - 1));
    let skew = Pattern::from_pairs(big.dim, pairs);
    let s = SaddlePointSolver::with_factorization(&skew, false, Factorization::Auto).unwrap();
    assert!(s.describe().starts_with("sparse LU"), "{}", s.describe());
}

/// A factorization name that does not exist is refused, naming the field.
#[test]
fn unknown_factorization_is_refused() {
    let spec = IntegratorSpec {
        factorization: Some("cholesky".into()),
        dt: Some(1e-3),
        t_end: Some(1.0),
        ..IntegratorSpec::default()
    };
    let e = spec.resolve().unwrap_err().to_string();
    assert!(e.contains("factorization") && e.contains("cholesky"), "{e}");
    for name in ["auto", "lu", "ldlt"] {
        let spec = IntegratorSpec {
            factorization: Some(name.into()),
            dt: Some(1e-3),
            t_end: Some(1.0),
            ..IntegratorSpec::default()
        };
        assert_eq!(
            spec.resolve().unwrap().factorization,
            Factorization::from_name(name).unwrap()
        );
    }
}

/// The step-1 Newton systems (pattern, values, right-hand side) of the L2
/// lattice with 8 cells per side and the L3 lattice with 3, exported by
/// `bench` into a temporary directory named after `what`.
fn lattice_systems(what: &str) -> Vec<(Pattern, Vec<f64>, Vec<f64>)> {
    let dir = temp_dir(what);
    let mut systems = Vec::new();
    for (p, size) in [(Problem::TrussLattice, 8), (Problem::SpaceTrussLattice, 3)] {
        let case = export_case(p, size, 1, &dir, 1);
        run_case(&case).unwrap_or_else(|e| panic!("{e}"));
        let file = matrix_file(&dir, p, size);
        let (pattern, values) = read_matrix(&file).unwrap();
        let b = read_vector(&rhs_path(&file)).unwrap();
        systems.push((pattern, values, b));
    }
    std::fs::remove_dir_all(&dir).ok();
    systems
}

/// The LDLᵀ stores only the permuted symmetric part and the differences of
/// the unsymmetric pairs: its ordering is a permutation, the analysis keeps
/// the candidate of least fill and factors with exactly that fill, `A` is
/// rebuilt bit for bit (pattern and values) for the LU fallback, and the
/// refined solution meets the backward error against the caller's matrix.
/// On a lattice's Newton matrix (unsymmetric in a few entries) and on a
/// structurally unsymmetric matrix (an entry without its mirror).
#[test]
fn ldlt_storage_is_exact() {
    let mut systems = lattice_systems("ldlt-storage");
    for (pattern, values, _) in &systems {
        assert!(asymmetry(pattern, values) > 0.0, "n {}", pattern.dim);
    }
    // (2, 0) has no mirror; (0, 1) and (1, 0) differ.
    let p = Pattern::from_pairs(3, vec![(0, 0), (1, 1), (2, 2), (1, 0), (0, 1), (2, 0)]);
    systems.push((p, vec![4.0, 1.1, 0.05, 1.0, 5.0, 6.0], vec![1.0, -2.0, 3.0]));
    for (pattern, values, b) in &systems {
        let n = pattern.dim;
        for o in [None, Some(Ordering::Amd), Some(Ordering::Metis)] {
            let mut ldlt = SparseLdlt::new(pattern, o, faer::Par::Seq).unwrap();
            let mut perm = ldlt.permutation().to_vec();
            perm.sort_unstable();
            assert!(
                perm.iter().copied().eq(0..n),
                "n {n} {o:?}: not a permutation"
            );
            let least = ldlt.candidates().iter().map(|c| c.1).min().unwrap();
            let chosen = ldlt
                .candidates()
                .iter()
                .find(|c| c.0 == ldlt.ordering())
                .unwrap()
                .1;
            assert_eq!((chosen, ldlt.fill()), (least, least), "n {n} {o:?}");
            ldlt.factor(values).unwrap();
            let (p2, v2) = ldlt.matrix();
            assert_eq!(p2.col_ptr, pattern.col_ptr, "n {n} {o:?}");
            assert_eq!(p2.row_idx, pattern.row_idx, "n {n} {o:?}");
            assert!(
                v2.iter()
                    .zip(values)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "n {n} {o:?}: values not rebuilt exactly"
            );
            let mut x = b.clone();
            let r = ldlt.solve(&mut x);
            assert!(r.converged && r.steps > 0, "n {n} {o:?}: {r:?}");
            let e = backward_error(pattern, values, &x, b);
            assert!(e <= 1e-12, "n {n} {o:?}: backward error {e:e}");
            assert!((e - r.backward_error).abs() <= 1e-15, "{e:e} vs {r:?}");
        }
    }
}

/// A solve refines to the backward error its caller asks for: Newton's
/// request at the default tolerance (`newton_refine_tol(1e-6)`) stops as soon as it is met (no step when
/// the plain solve meets it) and round-off ([`REFINE_TOL`]) takes the steps
/// it took before; a request below round-off is clamped to it; the engine's
/// solver keeps Newton's request across a solve that asks for round-off
/// (the consistent initial accelerations share Newton's solver).
#[test]
fn refinement_stops_at_the_requested_backward_error() {
    const NEWTON_REFINE_TOL: f64 = 1e-8;
    assert_eq!(newton_refine_tol(1e-6), NEWTON_REFINE_TOL);
    assert_eq!(newton_refine_tol(1e-20), REFINE_TOL);
    for (pattern, values, b) in lattice_systems("ldlt-request") {
        let n = pattern.dim;
        let mut ldlt = SparseLdlt::new(&pattern, None, faer::Par::Seq).unwrap();
        ldlt.factor(&values).unwrap();
        assert_eq!(ldlt.refine_tol(), REFINE_TOL);
        let mut fine = b.clone();
        let r_fine = ldlt.solve(&mut fine);
        assert!(
            r_fine.converged && r_fine.backward_error <= REFINE_TOL,
            "n {n}: {r_fine:?}"
        );
        let mut coarse = b.clone();
        let r = ldlt.solve_to(&mut coarse, NEWTON_REFINE_TOL);
        assert!(r.converged, "n {n}: {r:?}");
        assert!(r.backward_error <= NEWTON_REFINE_TOL, "n {n}: {r:?}");
        let e = backward_error(&pattern, &values, &coarse, &b);
        assert!(
            (e - r.backward_error).abs() <= 1e-15,
            "n {n}: {e:e} vs {r:?}"
        );
        // The fewest steps that meet the request: one fewer would not.
        assert_eq!(r.first_backward_error, r_fine.first_backward_error);
        if r.first_backward_error <= NEWTON_REFINE_TOL {
            assert_eq!(r.steps, 0, "n {n}: {r:?}");
        } else {
            assert!(r.steps >= 1 && r.steps <= r_fine.steps, "n {n}: {r:?}");
        }
        // Newton's request is met by the solution refined to round-off too,
        // and the two agree to the request's accuracy.
        assert!(rel_diff(&coarse, &fine) <= 1e-2, "n {n}");
        ldlt.set_refine_tol(0.0);
        assert_eq!(ldlt.refine_tol(), REFINE_TOL);
        ldlt.set_refine_tol(NEWTON_REFINE_TOL);
        let mut again = b.clone();
        assert_eq!(ldlt.solve(&mut again), r);
        assert_eq!(again, coarse);

        let mut solver =
            SaddlePointSolver::with_factorization(&pattern, true, Factorization::Ldlt).unwrap();
        solver.set_refine_tol(NEWTON_REFINE_TOL);
        solver.factor(&values).unwrap();
        let mut x = b.clone();
        solver.solve_to(&mut x, REFINE_TOL).unwrap();
        let e = backward_error(&pattern, &values, &x, &b);
        assert!(e <= 1e-13, "n {n}: {e:e}");
        assert_eq!(solver.refine_tol(), NEWTON_REFINE_TOL);
        let mut y = b.clone();
        solver.solve(&mut y).unwrap();
        assert_eq!(y, coarse, "n {n}");
    }
}

/// `‖b − Ā x‖∞ / (‖Ā‖∞ ‖x‖∞ + ‖b‖∞)` with `Ā = (A + Aᵀ)/2`: the backward
/// error of an unrefined solve against the matrix it factors.
fn symmetric_backward_error(p: &Pattern, v: &[f64], x: &[f64], b: &[f64]) -> f64 {
    let at = |r: usize, c: usize| {
        let s = p.col_ptr[c];
        p.row_idx[s..p.col_ptr[c + 1]]
            .binary_search(&r)
            .map_or(0.0, |k| v[s + k])
    };
    let mut r = b.to_vec();
    let mut rows = vec![0.0f64; p.dim];
    for c in 0..p.dim {
        let range = p.col_ptr[c]..p.col_ptr[c + 1];
        for (&i, &a_ic) in p.row_idx[range.clone()].iter().zip(&v[range]) {
            let a_ci = at(c, i);
            let sym = if a_ci == 0.0 && i != c {
                // (c, i) absent: Ā has half of a_ic on both sides.
                0.5 * a_ic
            } else {
                0.5 * (a_ic + a_ci)
            };
            r[i] -= sym * x[c];
            rows[i] += sym.abs();
            if a_ci == 0.0 && i != c {
                r[c] -= sym * x[i];
                rows[c] += sym.abs();
            }
        }
    }
    let norm = |u: &[f64]| u.iter().fold(0.0f64, |m, y| m.max(y.abs()));
    norm(&r) / (norm(&rows) * norm(x) + norm(b))
}

/// The tree-parallel substitution of a supernodal factor: several subtree
/// tasks, bitwise the same solution on 1, 2, 3 and 7 threads (plain and
/// refined), a backward error against the factored `Ā` as small as faer's
/// own solve's, and the refined solve to round-off against `A`. On the
/// step-1 Newton matrices of L2 with 71 cells per side and L3 with 6.
#[test]
fn tree_solve_is_thread_independent_and_matches_faer() {
    let dir = temp_dir("ldlt-tree");
    for (p, size) in [(Problem::TrussLattice, 71), (Problem::SpaceTrussLattice, 6)] {
        let case = export_case(p, size, 1, &dir, 1);
        run_case(&case).unwrap_or_else(|e| panic!("{e}"));
        let file = matrix_file(&dir, p, size);
        let (pattern, values) = read_matrix(&file).unwrap();
        let b = read_vector(&rhs_path(&file)).unwrap();
        let n = pattern.dim;
        let mut ldlt = SparseLdlt::new(&pattern, Some(Ordering::Metis), faer::Par::Seq).unwrap();
        assert_eq!(ldlt.kind(), "supernodal", "n {n}");
        assert!(
            ldlt.solve_tasks() > 1,
            "n {n}: {} tasks",
            ldlt.solve_tasks()
        );
        ldlt.factor(&values).unwrap();
        let mut reference = b.clone();
        ldlt.solve_unrefined_faer(&mut reference);
        let e_faer = symmetric_backward_error(&pattern, &values, &reference, &b);
        let mut results = Vec::new();
        for threads in [1, 2, 3, 7] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let (plain, refined, r) = pool.install(|| {
                let mut plain = b.clone();
                ldlt.solve_unrefined(&mut plain);
                let mut refined = b.clone();
                let r = ldlt.solve(&mut refined);
                (plain, refined, r)
            });
            assert!(
                r.converged && r.backward_error <= REFINE_TOL,
                "n {n}: {r:?}"
            );
            let e = backward_error(&pattern, &values, &refined, &b);
            assert!(e <= 1e-13, "n {n} threads {threads}: {e:e}");
            results.push((threads, plain, refined));
        }
        let (_, plain1, refined1) = &results[0];
        for (threads, plain, refined) in &results[1..] {
            assert!(
                plain
                    .iter()
                    .zip(plain1)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "n {n}: plain solve on {threads} threads differs from 1"
            );
            assert!(
                refined
                    .iter()
                    .zip(refined1)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "n {n}: refined solve on {threads} threads differs from 1"
            );
        }
        let e_tree = symmetric_backward_error(&pattern, &values, plain1, &b);
        assert!(
            e_tree <= 10.0 * e_faer.max(1e-16),
            "n {n}: tree {e_tree:e}, faer {e_faer:e}"
        );
        assert!(
            rel_diff(plain1, &reference) <= 1e-8,
            "n {n}: {:e}",
            rel_diff(plain1, &reference)
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Exact `Σ_j m_j (m_j + 1) / 2` of `L` for the symmetric structure of
/// `pattern` eliminated in the order `perm` (`perm[k]` = original index of the
/// `k`-th pivot), by a dense boolean elimination.
fn exact_multiply_adds(pattern: &Pattern, perm: &[usize]) -> f64 {
    let n = pattern.dim;
    let mut inv = vec![0; n];
    for (k, &p) in perm.iter().enumerate() {
        inv[p] = k;
    }
    let mut s = vec![vec![false; n]; n];
    for c in 0..n {
        for &r in &pattern.row_idx[pattern.col_ptr[c]..pattern.col_ptr[c + 1]] {
            s[inv[r]][inv[c]] = true;
            s[inv[c]][inv[r]] = true;
        }
    }
    let mut total = 0.0;
    for j in 0..n {
        let below: Vec<usize> = (j + 1..n).filter(|&i| s[i][j]).collect();
        for &a in &below {
            for &b in &below {
                s[a][b] = true;
            }
        }
        let m = below.len() as f64;
        total += m * (m + 1.0) / 2.0;
    }
    total
}

/// The LDLᵀ's work count is exact for the simplicial factor and, with the
/// zeros of merged supernodes, at least the exact count for the supernodal
/// one; the adaptive constructor keeps several threads exactly when that
/// work per stored entry reaches the threshold (a dense 2,000-row pattern,
/// one supernode of n² stored entries: n / 6 = 333 per entry) and factors
/// the lattices on one.
#[test]
fn ldlt_work_count_and_thread_choice() {
    use flexmb::linalg::PARALLEL_MIN_WORK_PER_ENTRY;
    let patterns: Vec<Pattern> = lattice_systems("ldlt-work")
        .into_iter()
        .map(|(pattern, ..)| pattern)
        .collect();
    let mut kinds = Vec::new();
    for pattern in &patterns {
        for o in [Ordering::Amd, Ordering::Metis] {
            let ldlt = SparseLdlt::new(pattern, Some(o), faer::Par::Seq).unwrap();
            let exact = exact_multiply_adds(pattern, ldlt.permutation());
            let counted = ldlt.multiply_adds();
            kinds.push(ldlt.kind());
            if ldlt.kind() == "simplicial" {
                assert_eq!(counted, exact, "n {} {o:?}", pattern.dim);
            } else {
                assert!(
                    counted >= exact,
                    "n {} {o:?}: {counted} < {exact}",
                    pattern.dim
                );
                assert!(
                    counted <= 2.0 * exact,
                    "n {} {o:?}: {counted} vs {exact}",
                    pattern.dim
                );
            }
            let adaptive = SparseLdlt::new_adaptive(pattern, Some(o), faer::Par::rayon(2)).unwrap();
            assert!(
                counted < PARALLEL_MIN_WORK_PER_ENTRY * ldlt.fill() as f64
                    && matches!(adaptive.par(), faer::Par::Seq),
                "n {} {o:?}: {counted} multiply-adds, fill {}",
                pattern.dim,
                ldlt.fill()
            );
        }
    }
    assert!(kinds.contains(&"simplicial"), "{kinds:?}");
    let n = 2000;
    let dense = Pattern::from_pairs(
        n,
        (0..n).flat_map(|c| (0..n).map(move |r| (r, c))).collect(),
    );
    let ldlt = SparseLdlt::new_adaptive(&dense, Some(Ordering::Amd), faer::Par::rayon(2)).unwrap();
    let nf = n as f64;
    assert_eq!(ldlt.multiply_adds(), (nf - 1.0) * nf * (nf + 1.0) / 6.0);
    assert!(ldlt.multiply_adds() >= PARALLEL_MIN_WORK_PER_ENTRY * ldlt.fill() as f64);
    assert!(matches!(ldlt.par(), faer::Par::Rayon(t) if t.get() == 2));
}
