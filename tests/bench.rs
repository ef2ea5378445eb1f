//! `flexmb bench` (docs/bench.md): every SPEC.md §7 problem runs at two small
//! sizes; the reported sizes, time split, iteration and factorization counts
//! are consistent; the recorder is timed when writing files; the scaling fit
//! recovers a known exponent; the command line prints the table and rejects
//! bad input.

mod common;

use std::process::Command;

use common::bench::bench_case;
use flexmb::bench::{csv, fit_exponent, run_case, table, BenchCase, Problem, COLUMNS};
use flexmb::integrate::IntegratorSpec;
use flexmb::output::read_hdf5_run;

#[test]
fn every_problem_reports_consistent_rows() {
    let mut rows = Vec::new();
    for p in Problem::ALL {
        let sizes = match p {
            Problem::HangingBeam => [4, 8],
            Problem::TrussLattice | Problem::SpaceTrussLattice => [2, 3],
            Problem::RigidChain => [3, 6],
            Problem::TrussChain => [10, 20],
        };
        for size in sizes {
            let r = run_case(&bench_case(p, size, 4)).unwrap_or_else(|e| panic!("{e}"));
            println!("{r:?}");
            assert_eq!((r.problem, r.size, r.steps), (p.name(), size, 4));
            assert!(r.dofs > 0 && r.matrix_nnz >= r.dofs, "{r:?}");
            // Modified Newton by default: at least one factorization per
            // step, never more than one per iteration.
            assert!(
                r.iterations >= 1.0 && (1.0..=r.iterations).contains(&r.factorizations),
                "{r:?}"
            );
            let parts = r.assembly + r.factorization + r.solve + r.output;
            assert!(parts > 0.0 && parts <= r.total, "{r:?}");
            assert_eq!(r.output, 0.0);
            assert!(r.setup_seconds > 0.0 && r.build_seconds > 0.0);
            rows.push(r);
        }
        let (a, b) = (&rows[rows.len() - 2], &rows[rows.len() - 1]);
        assert!(b.dofs > a.dofs, "{}: DOFs grow with the size", p.name());
    }
    let text = table(&rows);
    print!("{text}");
    for p in Problem::ALL {
        assert!(
            text.contains(&format!("{}: time per step ~ DOFs^k, k = ", p.name())),
            "{text}"
        );
    }
    let c = csv(&rows);
    assert_eq!(c.lines().count(), rows.len() + 1);
    assert_eq!(c.lines().next(), Some(COLUMNS.join(",").as_str()));
}

/// With the default modified Newton one factorization per step (with
/// `refactor = "iteration"` one per iteration); with `--output` the recorder
/// is timed and each case's file holds every step.
#[test]
fn modified_newton_and_timed_output() {
    let newton = BenchCase {
        integrator: IntegratorSpec {
            refactor: Some("iteration".into()),
            ..IntegratorSpec::default()
        },
        ..bench_case(Problem::HangingBeam, 6, 5)
    };
    let r = run_case(&newton).unwrap();
    assert!(
        r.iterations > 1.0 && r.factorizations == r.iterations,
        "{r:?}"
    );
    let dir = std::env::temp_dir().join(format!("flexmb-bench-{}", std::process::id()));
    let c = BenchCase {
        output: Some(dir.clone()),
        ..bench_case(Problem::HangingBeam, 6, 5)
    };
    let r = run_case(&c).unwrap();
    println!("{r:?}");
    assert_eq!(r.factorizations, 1.0);
    assert!(r.iterations >= 1.0);
    assert!(r.output > 0.0 && r.assembly + r.factorization + r.solve + r.output <= r.total);
    let run = read_hdf5_run(flexmb::bench::case_file(&dir, Problem::HangingBeam, 6)).unwrap();
    assert_eq!(run.time.len(), 6, "the start and 5 steps");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn exponent_fit_recovers_a_power_law() {
    let pts: Vec<(f64, f64)> = [1e2, 1e3, 1e4, 1e5]
        .iter()
        .map(|&x: &f64| (x, 3.0 * x.powf(1.5)))
        .collect();
    let k = fit_exponent(&pts).unwrap();
    assert!((k - 1.5).abs() < 1e-12, "{k}");
    assert_eq!(fit_exponent(&pts[..1]), None);
    assert_eq!(fit_exponent(&[(10.0, 1.0), (10.0, 2.0)]), None);
}

#[test]
fn command_line() {
    let bin = env!("CARGO_BIN_EXE_flexmb");
    let o = Command::new(bin)
        .args([
            "bench", "chain", "l4", "--sizes", "20,10", "--steps", "3", "-q",
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    println!("{out}{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0));
    let rows = |name: &str| {
        out.lines()
            .filter(|l| l.trim_start().starts_with(&format!("{name} ")))
            .count()
    };
    assert_eq!((rows("chain"), rows("l4")), (2, 2), "one row per case");
    assert!(out.contains("chain: time per step ~ DOFs^k") && out.contains("l4: time per step"));

    let bad = Command::new(bin)
        .args(["bench", "l9", "--sizes", "10"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(err.contains("unknown problem 'l9'"), "{err}");
}
