//! The banded LU path of the saddle-point solver: chosen for narrow-band
//! patterns, equal to the dense LU on random banded saddle-point matrices
//! (zero constraint block: row interchanges are needed), singular pivots
//! reported, and the same run results as the sparse LU.

mod common;

use common::fd::Rng;
use common::{max_abs, max_diff, run_file, shipped_with};
use flexmb::assembly::Pattern;
use flexmb::integrate::IntegratorSpec;
use flexmb::linalg::{BandLu, SaddlePointSolver, SolveError, BAND_MAX};
use flexmb::model::hanging_truss_chain;
use flexmb::run::Simulation;

/// A saddle-point pattern: a chain of `n` 2x2 blocks coupled to neighbours,
/// with one constraint row every `every` DOFs (zero diagonal), in a
/// scrambled numbering so the ordering has work to do.
fn chain_pattern(n: usize, every: usize, rng: &mut Rng) -> (Pattern, Vec<usize>) {
    let m = n / every;
    let dim = n + m;
    let mut label: Vec<usize> = (0..dim).collect();
    for i in (1..dim).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        label.swap(i, j);
    }
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i.saturating_sub(3)..(i + 4).min(n) {
            pairs.push((label[i], label[j]));
        }
    }
    for k in 0..m {
        let (row, dof) = (label[n + k], label[k * every]);
        pairs.push((row, dof));
        pairs.push((dof, row));
        pairs.push((row, label[k * every + 1]));
        pairs.push((label[k * every + 1], row));
    }
    (Pattern::from_pairs(dim, pairs), label)
}

fn dense(p: &Pattern, values: &[f64]) -> Vec<f64> {
    let mut a = vec![0.0; p.dim * p.dim];
    for c in 0..p.dim {
        for (k, &r) in p.row_idx[p.col_ptr[c]..p.col_ptr[c + 1]].iter().enumerate() {
            a[r * p.dim + c] = values[p.col_ptr[c] + k];
        }
    }
    a
}

fn mat_vec(a: &[f64], x: &[f64]) -> Vec<f64> {
    let n = x.len();
    (0..n)
        .map(|r| (0..n).map(|c| a[r * n + c] * x[c]).sum())
        .collect()
}

#[test]
fn band_lu_solves_scrambled_saddle_systems() {
    let mut rng = Rng(0xBA2D);
    for (n, every) in [(50, 5), (120, 3), (300, 7)] {
        let (p, label) = chain_pattern(n, every, &mut rng);
        let mut band = BandLu::new(&p).expect("a chain has a narrow band");
        let (kl, ku) = band.bandwidths();
        assert!(kl + ku <= 16, "RCM band of a chain: kl {kl}, ku {ku}");
        for _ in 0..3 {
            let mut values = rng.vec(p.nnz(), -1.0, 1.0);
            // A diagonally heavy DOF block; the constraint rows have no
            // diagonal entry, so their pivots come from row interchanges.
            for i in 0..n {
                values[p.slot(label[i], label[i])] += 4.0;
            }
            let a = dense(&p, &values);
            let x: Vec<f64> = rng.vec(p.dim, -1.0, 1.0);
            let mut b = mat_vec(&a, &x);
            band.factor(&values).unwrap();
            band.solve(&mut b);
            let err = max_diff(&b, &x) / max_abs(&x);
            assert!(err < 1e-10, "n {n}: solution error {err:.2e}");
        }
    }
}

#[test]
fn band_lu_reports_a_zero_pivot() {
    let mut rng = Rng(7);
    let (p, label) = chain_pattern(40, 4, &mut rng);
    let mut values = rng.vec(p.nnz(), -1.0, 1.0);
    // A DOF whose column is all zero makes the matrix singular.
    let dof = label[17];
    for c in 0..p.dim {
        let range = p.col_ptr[c]..p.col_ptr[c + 1];
        for (v, &r) in values[range.clone()].iter_mut().zip(&p.row_idx[range]) {
            if c == dof || r == dof {
                *v = 0.0;
            }
        }
    }
    let mut band = BandLu::new(&p).unwrap();
    assert!(matches!(
        band.factor(&values),
        Err(SolveError::Singular { index: Some(_) })
    ));
}

#[test]
fn wide_patterns_use_the_sparse_lu() {
    // A dense block wider than BAND_MAX cannot be banded.
    let n = BAND_MAX + 10;
    let pairs = (0..n).flat_map(|r| (0..n).map(move |c| (r, c))).collect();
    let p = Pattern::from_pairs(n, pairs);
    assert!(BandLu::new(&p).is_none());
    let s = SaddlePointSolver::new(&p, false).unwrap();
    assert!(s.describe().starts_with("sparse"), "{}", s.describe());
    let chain = Simulation::new(hanging_truss_chain(100).unwrap());
    let s = SaddlePointSolver::new(chain.asm.pattern(), false).unwrap();
    assert!(s.describe().starts_with("band"), "{}", s.describe());
}

#[test]
fn band_and_sparse_runs_agree() {
    let sets = ["integrator.t_end=0.003", "generator.elements=16"];
    let run = |sparse: bool| {
        let file = shipped_with("slider_crank_flexible", &sets);
        let over = IntegratorSpec {
            sparse: Some(sparse),
            ..IntegratorSpec::default()
        };
        let (s, rec) = run_file(file, &over);
        assert!(s.failure.is_none());
        rec
    };
    let (band, sparse) = (run(false), run(true));
    let (ub, us) = (band.u.last().unwrap(), sparse.u.last().unwrap());
    let d = max_diff(ub, us) / max_abs(us);
    assert!(d < 1e-12, "band vs sparse LU: {d:.2e}");
    assert_eq!(
        band.newton.iter().map(|n| n.iterations).sum::<u32>(),
        sparse.newton.iter().map(|n| n.iterations).sum::<u32>()
    );
}
