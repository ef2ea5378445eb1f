//! The sparse LU path and the exported Newton matrices: every column
//! ordering (COLAMD, AMD and METIS on A + Aᵀ) solves the step-1 Newton
//! matrix of every L problem (small sizes) and of every shipped Newton
//! model to a backward error of 1e-12 after refinement; the automatic choice
//! is the ordering of least predicted fill; Matrix Market files round-trip
//! exactly; `run --export-matrix` and `bench --export-matrix` write the
//! Newton system of the asked step and refuse what they cannot do.

mod common;

use std::path::Path;
use std::process::Command;

use common::bench::export_case;
use common::model_path;
use common::scratch::{assert_success, temp_dir};
use flexmb::assembly::{Assembler, Pattern};
use flexmb::bench::{matrix_file, run_case, Problem};
use flexmb::factor::{factor_file, FactorPath};
use flexmb::input::load_model_file;
use flexmb::integrate::IntegratorSpec;
use flexmb::linalg::{
    read_matrix, read_vector, rhs_path, write_matrix, MatrixExport, Ordering, SaddlePointSolver,
    SparseLu,
};
use flexmb::output::MemoryRecorder;
use flexmb::run::Simulation;

/// Every sparse path on the exported system: exact after refinement, and
/// `Auto` the candidate of least predicted fill.
fn check_every_path(file: &Path) {
    let mut fills = Vec::new();
    for o in Ordering::ALL {
        let r = factor_file(file, None, 1, FactorPath::Sparse(Some(o)), faer::Par::Seq)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(
            r.backward_error <= 1e-12,
            "{} {}: backward error {:e}",
            file.display(),
            o.name(),
            r.backward_error
        );
        assert!(r.fill >= r.rows, "{r:?}");
        fills.extend(r.candidates.iter().map(|c| (c.ordering, c.fill)));
    }
    let (pattern, _) = read_matrix(file).unwrap();
    let auto = SparseLu::new(&pattern, None, faer::Par::Seq).unwrap();
    let least = fills.iter().map(|f| f.1).min().unwrap();
    assert_eq!(auto.cost().fill, least, "{}: {fills:?}", file.display());
    assert_eq!(auto.candidates().len(), fills.len());
    let r = factor_file(file, None, 2, FactorPath::Auto, faer::Par::Seq).unwrap();
    assert!(r.backward_error <= 1e-12, "{r:?}");
}

#[test]
fn every_ordering_solves_the_l_problems() {
    let dir = temp_dir("sparse-l");
    for (p, size) in [
        (Problem::HangingBeam, 12),
        (Problem::TrussLattice, 6),
        (Problem::SpaceTrussLattice, 3),
        (Problem::RigidChain, 8),
    ] {
        let case = export_case(p, size, 2, &dir, 2);
        let row = run_case(&case).unwrap_or_else(|e| panic!("{e}"));
        let file = matrix_file(&dir, p, size);
        let (pattern, _) = read_matrix(&file).unwrap();
        assert_eq!(pattern.dim, row.dofs + row.constraints);
        assert_eq!(pattern.nnz(), row.matrix_nnz);
        assert_eq!(read_vector(&rhs_path(&file)).unwrap().len(), pattern.dim);
        check_every_path(&file);
    }
    // A step the run never reaches is an error, not a stale or missing file.
    let late = export_case(Problem::TrussLattice, 2, 2, &dir, 5);
    let e = run_case(&late).unwrap_err();
    assert!(e.contains("ended before step 5"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// METIS's ordering does not depend on other threads: the same matrix
/// ordered on 4 threads at once, 25 times each, always gives the fill of a
/// lone call (GKlib's random generator is process-wide; the calls are
/// serialized).
#[test]
fn metis_ordering_is_the_same_on_concurrent_threads() {
    let dir = temp_dir("sparse-metis_threads");
    let case = export_case(Problem::TrussLattice, 12, 1, &dir, 1);
    run_case(&case).unwrap_or_else(|e| panic!("{e}"));
    let (pattern, _) = read_matrix(&matrix_file(&dir, Problem::TrussLattice, 12)).unwrap();
    let fill = |p: &Pattern| {
        SparseLu::new(p, Some(Ordering::Metis), faer::Par::Seq)
            .unwrap()
            .cost()
            .fill
    };
    let lone = fill(&pattern);
    let fills: Vec<Vec<usize>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(|| (0..25).map(|_| fill(&pattern)).collect::<Vec<_>>()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for f in fills.iter().flatten() {
        assert_eq!(*f, lone, "{fills:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The step-1 Newton matrix of every shipped model integrated by a Newton
/// method, solved by every ordering (force_sparse: the shipped models are
/// small enough for the dense path otherwise).
#[test]
fn every_ordering_solves_the_shipped_models() {
    let dir = temp_dir("sparse-models");
    let mut checked = 0;
    for entry in std::fs::read_dir(format!("{}/models", env!("CARGO_MANIFEST_DIR"))).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let file = load_model_file(&path).unwrap();
        let over = IntegratorSpec {
            sparse: Some(true),
            ..IntegratorSpec::default()
        };
        let Ok(mut config) = file.integrator(&over) else {
            continue;
        };
        if config.gssss_settings().is_none() {
            continue; // Runge–Kutta: no Newton matrix
        }
        config.t_end = config.dt;
        let out = dir.join(format!(
            "{}.mtx",
            path.file_stem().unwrap().to_string_lossy()
        ));
        config.export_matrix = Some(MatrixExport {
            step: 1,
            path: out.clone(),
        });
        let sim = Simulation::new(file.model);
        let mut rec = MemoryRecorder::default();
        let s = sim
            .run(&config, &file.text, &file.output, &mut rec, &mut |_| {})
            .unwrap();
        assert!(s.failure.is_none(), "{}: {:?}", path.display(), s.failure);
        check_every_path(&out);
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} shipped models checked");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn matrix_market_round_trip_is_exact() {
    let dir = temp_dir("sparse-mm");
    let pattern = Pattern::from_pairs(3, vec![(0, 0), (2, 0), (1, 1), (0, 2), (2, 2)]);
    let values = [1.0 / 3.0, -2.5e-300, 7.0, std::f64::consts::PI, -0.0];
    let f = dir.join("m.mtx");
    write_matrix(&f, &pattern, &values).unwrap();
    let (p, v) = read_matrix(&f).unwrap();
    assert_eq!(
        (p.dim, &p.col_ptr, &p.row_idx),
        (3, &pattern.col_ptr, &pattern.row_idx)
    );
    for (a, b) in v.iter().zip(&values) {
        assert_eq!(a.to_bits(), b.to_bits());
    }
    // Bad files: named, with the reason.
    std::fs::write(
        dir.join("bad.mtx"),
        "%%MatrixMarket matrix coordinate real general\n2 3 0\n",
    )
    .unwrap();
    let e = read_matrix(&dir.join("bad.mtx")).unwrap_err();
    assert!(e.contains("bad.mtx") && e.contains("not square"), "{e}");
    std::fs::write(
        dir.join("v.mtx"),
        "%%MatrixMarket matrix array real general\n3 1\n1\nx\n2\n",
    )
    .unwrap();
    let e = read_vector(&dir.join("v.mtx")).unwrap_err();
    assert!(e.contains("v.mtx:4") && e.contains("not a number"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `run --export-matrix 1:FILE` writes the step-1 Newton matrix: the
/// pattern of the model's saddle-point system, with stiffness entries where
/// the initial-acceleration matrix of `check --matrix-market` has zeros, and
/// the right-hand side of the first Newton solve; `flexmb factor` solves it.
#[test]
fn cli_exports_the_newton_system_and_factors_it() {
    let dir = temp_dir("sparse-cli");
    let exe = env!("CARGO_BIN_EXE_flexmb");
    let model = model_path("cantilever");
    let newton = dir.join("newton.mtx");
    let initial = dir.join("initial.mtx");
    let st = Command::new(exe)
        .args([
            "run",
            &model,
            "-q",
            "--set",
            "integrator.t_end=0.002",
            "--export-matrix",
        ])
        .arg(format!("1:{}", newton.display()))
        .status()
        .unwrap();
    assert!(st.success());
    let st = Command::new(exe)
        .args(["check", &model, "--matrix-market"])
        .arg(&initial)
        .output()
        .unwrap();
    assert!(st.status.success());
    let (pn, vn) = read_matrix(&newton).unwrap();
    let (pi, vi) = read_matrix(&initial).unwrap();
    let file = load_model_file(&model).unwrap();
    let asm = Assembler::new(&file.model);
    assert_eq!(pn.dim, asm.pattern().dim);
    assert_eq!(pn.nnz(), asm.pattern().nnz());
    // Stiffness slots: stored as zero in the initial matrix, nonzero in Newton's.
    let slots = |p: &Pattern, v: &[f64]| -> Vec<(usize, usize, f64)> {
        (0..p.dim)
            .flat_map(|c| (p.col_ptr[c]..p.col_ptr[c + 1]).map(move |k| (p.row_idx[k], c, k)))
            .map(|(r, c, k)| (r, c, v[k]))
            .collect()
    };
    let (sn, si) = (slots(&pn, &vn), slots(&pi, &vi));
    let stiffness = sn
        .iter()
        .filter(|(r, c, v)| {
            *v != 0.0
                && si
                    .iter()
                    .any(|(ri, ci, vi)| ri == r && ci == c && *vi == 0.0)
        })
        .count();
    assert!(
        stiffness > 0,
        "no stiffness entries in the exported Newton matrix"
    );
    let b = read_vector(&rhs_path(&newton)).unwrap();
    assert_eq!(b.len(), pn.dim);
    // The same solver as the engine's solves it exactly.
    let mut solver = SaddlePointSolver::new(&pn, true).unwrap();
    solver.factor(&vn).unwrap();
    let mut x = b.clone();
    solver.solve(&mut x).unwrap();
    assert!(x.iter().all(|v| v.is_finite()));

    let out = Command::new(exe)
        .arg("factor")
        .arg(&newton)
        .args(["--repeat", "2", "--json"])
        .output()
        .unwrap();
    assert_success(&out);
    let line = String::from_utf8(out.stdout).unwrap();
    for key in [
        "analysis_s",
        "factor_s",
        "solve_s",
        "fill",
        "backward_error",
        "solver",
    ] {
        assert!(
            line.contains(&format!("\"{key}\":")),
            "{key} missing: {line}"
        );
    }
    assert_eq!(line.trim().lines().count(), 1);

    // Refusals: a malformed STEP:FILE, a Runge–Kutta method, a missing file.
    let bad = Command::new(exe)
        .args(["run", &model, "-q", "--export-matrix", "x:foo.mtx"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a step number"));
    let rk = Command::new(exe)
        .args(["run", &model, "-q", "--method", "rk4", "--export-matrix"])
        .arg(format!("1:{}", dir.join("rk.mtx").display()))
        .output()
        .unwrap();
    assert!(!rk.status.success());
    assert!(String::from_utf8_lossy(&rk.stderr).contains("Newton method"));
    let missing = Command::new(exe)
        .args(["factor", "/nonexistent/m.mtx"])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/m.mtx"));
    std::fs::remove_dir_all(&dir).ok();
}
