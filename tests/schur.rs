//! The Schur-complement fast path of the saddle-point solver
//! (`SaddlePointSolver::with_diagonal_mass`): on `[W B^T; B 0]` with a
//! diagonal positive `W` it solves to round-off of the LU's solution; every
//! matrix not of that form (a stiffness entry, `C != B^T`, a non-positive
//! mass) and every rank-deficient `B` goes to the LU, which keeps its
//! singularity diagnosis; and runs of the index-1 methods on Andrews'
//! mechanism are unchanged by it.

mod common;

use common::fd::Rng;
use common::max_diff;
use flexmb::assembly::Mechanics;
use flexmb::assembly::{Assembler, Pattern};
use flexmb::input::load_model_file;
use flexmb::integrate::{mass_system_solver, IntegratorSpec};
use flexmb::linalg::{SaddlePointSolver, SolveError};

/// `n` DOFs coupled to their neighbours (stiffness slots), `m` constraint
/// rows each touching 3 to 6 random DOFs, with the mirrored `C` block.
fn pattern(n: usize, m: usize, rng: &mut Rng) -> Pattern {
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i.saturating_sub(2)..(i + 3).min(n) {
            pairs.push((i, j));
        }
    }
    for r in 0..m {
        let k = 3 + (rng.next_u64() % 4) as usize;
        for _ in 0..k {
            let d = (rng.next_u64() % n as u64) as usize;
            pairs.push((n + r, d));
            pairs.push((d, n + r));
        }
        // every row touches DOF r, so B has full row rank generically
        pairs.push((n + r, r));
        pairs.push((r, n + r));
    }
    Pattern::from_pairs(n + m, pairs)
}

/// Values of `[W B^T; B 0]`: diagonal W in [1, 100] (masses and inertias of
/// different size), random B, zero stiffness slots.
fn values(p: &Pattern, n: usize, rng: &mut Rng) -> Vec<f64> {
    let mut v = vec![0.0; p.nnz()];
    for (c, col) in p.col_ptr.windows(2).enumerate() {
        for (x, &r) in v[col[0]..col[1]].iter_mut().zip(&p.row_idx[col[0]..col[1]]) {
            if r == c && c < n {
                *x = rng.range(1.0, 100.0);
            } else if r >= n && c < n {
                *x = rng.range(-2.0, 2.0);
            }
        }
    }
    for c in n..p.dim {
        for s in p.col_ptr[c]..p.col_ptr[c + 1] {
            let r = p.row_idx[s];
            if r < n {
                v[s] = v[p.slot(c, r)];
            }
        }
    }
    v
}

fn solve(solver: &mut SaddlePointSolver, v: &[f64], rhs: &[f64]) -> Result<Vec<f64>, SolveError> {
    solver.factor(v)?;
    let mut x = rhs.to_vec();
    solver.solve(&mut x)?;
    Ok(x)
}

#[test]
fn schur_path_equals_the_lu_on_diagonal_mass_systems() {
    let mut rng = Rng(7);
    for &(n, m) in &[(3, 1), (10, 4), (21, 20), (60, 25)] {
        let p = pattern(n, m, &mut rng);
        let mut fast = SaddlePointSolver::with_diagonal_mass(&p, n, false).unwrap();
        let mut lu = SaddlePointSolver::new(&p, false).unwrap();
        assert!(
            fast.describe().starts_with("Schur complement"),
            "{}",
            fast.describe()
        );
        for _ in 0..5 {
            let v = values(&p, n, &mut rng);
            let rhs = rng.vec(n + m, -1.0, 1.0);
            let x_fast = solve(&mut fast, &v, &rhs).unwrap();
            assert!(
                fast.is_schur_active(),
                "n {n}, m {m}: the fast path declined"
            );
            let x_lu = solve(&mut lu, &v, &rhs).unwrap();
            let scale = x_lu.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
            let diff = max_diff(&x_fast, &x_lu);
            assert!(
                diff <= 1e-11 * scale,
                "n {n}, m {m}: Schur and LU differ by {diff:.2e} (scale {scale:.2e})"
            );
        }
    }
}

#[test]
fn matrices_not_of_the_diagonal_form_take_the_lu() {
    let mut rng = Rng(11);
    let (n, m) = (12, 5);
    let p = pattern(n, m, &mut rng);
    let base = values(&p, n, &mut rng);
    let rhs = rng.vec(n + m, -1.0, 1.0);
    let mut lu = SaddlePointSolver::new(&p, false).unwrap();
    type Change<'a> = Box<dyn Fn(&mut Vec<f64>) + 'a>;
    let cases: [(&str, Change); 4] = [
        ("stiffness entry", Box::new(|v| v[p.slot(0, 1)] = 0.5)),
        (
            "C != B^T",
            Box::new(|v| {
                let s = p.slot(0, n);
                v[s] += 1e-3;
            }),
        ),
        ("negative mass", Box::new(|v| v[p.slot(3, 3)] = -2.0)),
        ("zero mass", Box::new(|v| v[p.slot(4, 4)] = 0.0)),
    ];
    for (what, change) in cases {
        let mut v = base.clone();
        change(&mut v);
        let mut fast = SaddlePointSolver::with_diagonal_mass(&p, n, false).unwrap();
        let r_fast = solve(&mut fast, &v, &rhs);
        assert!(!fast.is_schur_active(), "{what}: the fast path was taken");
        let r_lu = solve(&mut lu, &v, &rhs);
        match (r_fast, r_lu) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{what}: the fallback is not the LU"),
            (Err(a), Err(b)) => assert_eq!(a, b, "{what}"),
            (a, b) => panic!("{what}: fast path {a:?} against LU {b:?}"),
        }
    }
}

#[test]
fn rank_deficient_constraints_get_the_lu_diagnosis() {
    let mut rng = Rng(5);
    let (n, m) = (8, 3);
    // rows 0 and 1 identical: B is rank deficient
    let mut pairs = Vec::new();
    for i in 0..n {
        pairs.push((i, i));
    }
    for (r, dofs) in [[0, 1, 2], [0, 1, 2], [3, 4, 5]].iter().enumerate() {
        for &d in dofs {
            pairs.push((n + r, d));
            pairs.push((d, n + r));
        }
    }
    let p = Pattern::from_pairs(n + m, pairs);
    let mut v = values(&p, n, &mut rng);
    for d in 0..3 {
        let b0 = v[p.slot(n, d)];
        v[p.slot(n + 1, d)] = b0;
        v[p.slot(d, n + 1)] = b0;
    }
    let rhs = rng.vec(n + m, -1.0, 1.0);
    let mut fast = SaddlePointSolver::with_diagonal_mass(&p, n, false).unwrap();
    let mut lu = SaddlePointSolver::new(&p, false).unwrap();
    let r_fast = solve(&mut fast, &v, &rhs);
    assert!(!fast.is_schur_active());
    let r_lu = solve(&mut lu, &v, &rhs);
    assert!(matches!(r_lu, Err(SolveError::Singular { .. })), "{r_lu:?}");
    assert_eq!(r_fast, r_lu);
}

/// Andrews' mechanism (diagonal mass, 21 coordinates, 20 rows): its
/// index-1 matrix takes the fast path; with DOPRI5 + PStab the run with the
/// fast path (default) and the run forced onto the sparse LU take the same
/// steps and end in the same state.
#[test]
fn andrews_runs_are_unchanged_by_the_fast_path() {
    let model = load_model_file(common::model_path("andrews"))
        .unwrap()
        .model;
    let asm = Assembler::new(&model);
    let mech = Mechanics::new(&model, &asm);
    let sys = Mechanics::new(&model, &asm);
    let mut matrix = asm.new_system();
    mech.fill_index1(&model.u0, &model.v0, 0.0, None, &mut matrix);
    let mut solver = mass_system_solver(&sys, Default::default()).unwrap();
    solver.factor(&matrix.values).unwrap();
    assert!(solver.is_schur_active(), "{}", solver.describe());

    let over = |sparse: bool| IntegratorSpec {
        method: Some("dopri5".into()),
        stabilization: Some("pstab".into()),
        rtol: Some(1e-6),
        atol: Some(1e-7),
        t_end: Some(0.03),
        sparse: Some(sparse),
        ..IntegratorSpec::default()
    };
    let (fast, rec_fast) = common::run("andrews", &over(false));
    let (lu, rec_lu) = common::run("andrews", &over(true));
    assert!(fast.failure.is_none() && lu.failure.is_none());
    assert_eq!(fast.stat("nfcn"), lu.stat("nfcn"));
    assert_eq!(fast.stat("naccept"), lu.stat("naccept"));
    let (uf, ul) = (rec_fast.u.last().unwrap(), rec_lu.u.last().unwrap());
    let d = max_diff(uf, ul);
    assert!(d < 1e-10, "final positions differ by {d:.2e}");
}
