//! The SPEC.md §7 large-mesh generators at small sizes: documented DOF,
//! constraint and element counts, consistent initial configurations, short
//! runs that complete, and one physical check per problem.

mod common;

use common::max_constraint;
use flexmb::integrate::IntegratorSpec;
use flexmb::model::{hanging_beam, rigid_chain, space_truss_lattice, truss_lattice, Model};
use flexmb::output::{MemoryRecorder, OutputConfig};
use flexmb::run::{RunSummary, Simulation};

/// Runs `model` for `steps` steps of `dt` with `scheme`, recording every step.
fn run(model: Model, scheme: &str, dt: f64, steps: usize) -> (RunSummary, MemoryRecorder) {
    let config = IntegratorSpec {
        scheme: Some(scheme.into()),
        dt: Some(dt),
        t_end: Some(dt * steps as f64),
        ..IntegratorSpec::default()
    }
    .resolve()
    .expect("valid integrator settings");
    let mut rec = MemoryRecorder::default();
    let summary = Simulation::new(model)
        .run(&config, "", &OutputConfig::default(), &mut rec, &mut |_| {})
        .expect("in-memory recording cannot fail");
    assert!(summary.failure.is_none(), "{scheme}: {:?}", summary.failure);
    assert_eq!(summary.steps as usize, steps, "{scheme}: steps");
    (summary, rec)
}

/// Checks the counts and the initial constraint residual of the recording.
fn check_counts(model: &Model, dofs: usize, rows: usize, elements: usize) {
    assert_eq!(model.n_dofs(), dofs, "DOFs");
    assert_eq!(model.n_constraints(), rows, "constraint rows");
    assert_eq!(model.n_elements(), elements, "elements");
    assert_eq!(model.u0.len(), dofs);
}

/// Initial constraints hold (the recording starts at t = 0) and stay satisfied.
fn check_constraints(rec: &MemoryRecorder, tol: f64) {
    assert_eq!(rec.time[0], 0.0);
    assert!(
        rec.constraints[0].position < 1e-12,
        "initial violation {}",
        rec.constraints[0].position
    );
    let worst = max_constraint(&rec.constraints, |c| c.position);
    assert!(worst < tol, "position violation {worst}");
}

/// max |E(t) - E(0) - W(t)| over the recording, relative to the largest
/// kinetic energy reached (E(0) is zero for the models released at rest at
/// the gravity datum).
fn energy_drift(rec: &MemoryRecorder) -> f64 {
    let e0 = rec.energy[0].total;
    let scale = rec.energy.iter().map(|e| e.kinetic).fold(0.0, f64::max);
    assert!(scale > 0.0, "the model moves");
    rec.energy
        .iter()
        .map(|e| (e.total - e0 - e.external_work).abs() / scale)
        .fold(0.0, f64::max)
}

/// 20 steps of 1e-2 of the truss lattice `build` gives, with
/// generalized-alpha(0.8) (the first moves the tip DOF `tip_y` down) and with
/// the midpoint scheme, each keeping the constraints to 1e-10.
fn check_lattice_fall(what: &str, build: impl Fn() -> Model, tip_y: usize) {
    let (_, rec) = run(build(), "generalized-alpha(0.8)", 1e-2, 20);
    check_constraints(&rec, 1e-10);
    assert!(rec.u[1][tip_y] < 0.0, "the first step moves the tip down");
    println!(
        "{what}: tip y after 1 step {:.3e}, after 20 {:.3e}",
        rec.u[1][tip_y], rec.u[20][tip_y]
    );
    let (_, rec) = run(build(), "midpoint", 1e-2, 20);
    check_constraints(&rec, 1e-10);
}

#[test]
fn hanging_beam_l1() {
    for n in [1, 4, 16] {
        let model = hanging_beam(n).unwrap();
        check_counts(&model, 4 * (n + 1), 2, n);
        let (_, rec) = run(hanging_beam(n).unwrap(), "generalized-alpha(0.8)", 1e-3, 20);
        check_constraints(&rec, 1e-10);

        let (_, rec) = run(model, "midpoint", 1e-3, 20);
        check_constraints(&rec, 1e-10);
        // DOFs 0, 1: position of the pinned node b0.
        for u in &rec.u {
            assert!(
                u[0].abs() < 1e-12 && u[1].abs() < 1e-12,
                "pin moved: {:?}",
                &u[..2]
            );
        }
        // The free end falls.
        let k = rec.u.len() - 1;
        assert!(rec.u[k][4 * n + 1] < 0.0, "the tip falls");
        let drift = energy_drift(&rec);
        println!("L1 N = {n}: midpoint energy drift {drift:.2e} (relative to max kinetic)");
        assert!(drift < 1e-8, "L1 N = {n}: energy drift {drift:.2e}");
    }
}

#[test]
fn truss_lattice_l2() {
    for (n, m) in [(1, 1), (4, 2), (10, 3)] {
        let model = truss_lattice(n, m).unwrap();
        let nodes = (n + 1) * (m + 1);
        check_counts(
            &model,
            2 * nodes,
            2 * (m + 1),
            n * (m + 1) + m * (n + 1) + n * m,
        );
        // Nodes are numbered i-major: node (i, j) is the (i (m + 1) + j)-th.
        let tip_y = 2 * (n * (m + 1)) + 1;
        assert_eq!(model.u0[tip_y - 1], n as f64);
        assert_eq!(model.u0[tip_y], 0.0);
        check_lattice_fall(
            &format!("L2 {n} x {m}"),
            || truss_lattice(n, m).unwrap(),
            tip_y,
        );
    }
}

#[test]
fn space_truss_lattice_l3() {
    for (n, m) in [(1, 1), (2, 3), (3, 2)] {
        let model = space_truss_lattice(n, m).unwrap();
        let nodes = (n + 1) * (n + 1) * (m + 1);
        let edges = 2 * n * (n + 1) * (m + 1) + m * (n + 1) * (n + 1);
        let diagonals = n * n * (m + 1) + 2 * n * (n + 1) * m;
        check_counts(&model, 3 * nodes, 3 * (n + 1) * (n + 1), edges + diagonals);
        // Node (i, j, k) is the ((i (n + 1) + j)(m + 1) + k)-th.
        let tip = (n * (n + 1)) * (m + 1) + m;
        assert_eq!(&model.u0[3 * tip..3 * tip + 3], &[n as f64, 0.0, m as f64]);
        let tip_y = 3 * tip + 1;
        let build = || space_truss_lattice(n, m).unwrap();
        check_lattice_fall(&format!("L3 {n} x {n} x {m}"), build, tip_y);
    }
}

#[test]
fn rigid_chain_l4() {
    for n in [1, 3, 10] {
        let model = rigid_chain(n).unwrap();
        check_counts(&model, 7 * n, 6 * n, n);
        let (_, rec) = run(rigid_chain(n).unwrap(), "generalized-alpha(0.8)", 1e-3, 20);
        check_constraints(&rec, 1e-10);

        let (_, rec) = run(model, "midpoint", 1e-3, 20);
        check_constraints(&rec, 1e-10);
        // The free end of the last rod falls.
        let k = rec.u.len() - 1;
        assert!(rec.u[k][7 * (n - 1) + 1] < 0.0, "the chain falls");
        let drift = energy_drift(&rec);
        println!("L4 N = {n}: midpoint energy drift {drift:.2e} (relative to max kinetic)");
        assert!(drift < 1e-8, "L4 N = {n}: energy drift {drift:.2e}");
    }
}

#[test]
fn generators_reject_empty_sizes() {
    assert!(hanging_beam(0).is_err());
    assert!(truss_lattice(0, 1).is_err());
    assert!(truss_lattice(1, 0).is_err());
    assert!(space_truss_lattice(0, 1).is_err());
    assert!(space_truss_lattice(1, 0).is_err());
    assert!(rigid_chain(0).is_err());
}

/// The generators at the largest SPEC.md §7 sizes build in reasonable time
/// (`cargo test --release --test generators -- --ignored --nocapture`).
#[test]
#[ignore = "large models: about 7 s and 0.8 GB peak"]
fn generators_at_benchmark_scale() {
    let time = |name: &str, build: &dyn Fn() -> Model| {
        let t = std::time::Instant::now();
        let m = build();
        println!(
            "{name}: {} DOFs, {} constraint rows, {} elements, built in {:.2?}",
            m.n_dofs(),
            m.n_constraints(),
            m.n_elements(),
            t.elapsed()
        );
    };
    time("L1 N = 250000", &|| hanging_beam(250_000).unwrap());
    time("L2 700 x 700", &|| truss_lattice(700, 700).unwrap());
    time("L3 25 x 25 x 100", &|| {
        space_truss_lattice(25, 100).unwrap()
    });
    time("L4 N = 10000", &|| rigid_chain(10_000).unwrap());
}
