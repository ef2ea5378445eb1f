//! SPEC.md §3: the deformable slider-crank of seed 001 Ch. 5
//! (`models/slider_crank_flexible.toml`, built by the `slider_crank_flexible`
//! generator): the rod midpoint's transverse deflection (relative to the chord
//! between the rod ends) grows with the crank speed (more than 10x from 60 to
//! 180 rad/s, more than 3x from 60 to 120 rad/s), converges under mesh
//! refinement and time-step halving, over 0.07 s at dt = 1e-5.

mod common;

use common::{run_file_into, shipped_with};
use flexmb::output::MemoryRecorder;

/// Max over the run of |midpoint deflection| (in) with `sets` applied to the shipped model.
fn max_deflection(sets: &[&str]) -> f64 {
    let file = shipped_with("slider_crank_flexible", sets);
    let mut rec = MemoryRecorder::default();
    let (s, sim) = run_file_into(file, &Default::default(), &mut rec);
    let names = sim.model.dofs.names().to_vec();
    let n = names
        .iter()
        .filter(|s| s.starts_with("rod") && s.ends_with(".dx"))
        .count()
        - 1;
    let col = |k: usize| {
        names
            .iter()
            .position(|s| *s == format!("rod{k}.x"))
            .unwrap()
    };
    let (c0, cm, cn) = (col(0), col(n / 2), col(n));
    assert!(s.failure.is_none(), "{sets:?}: {}", s.line());
    assert!(s.max_rel_energy_change < 1e-7, "{sets:?}: {}", s.line());
    rec.u
        .iter()
        .map(|u| {
            let (x0, y0) = (u[c0], u[c0 + 1]);
            let (ex, ey) = (u[cn] - x0, u[cn + 1] - y0);
            let len = ex.hypot(ey);
            ((ex * (u[cm + 1] - y0) - ey * (u[cm] - x0)) / len).abs()
        })
        .fold(0.0, f64::max)
}

#[test]
fn deflection_grows_with_crank_speed() {
    let d: Vec<f64> = [60, 120, 180]
        .iter()
        .map(|w| max_deflection(&[&format!("generator.omega0={w}")]))
        .collect();
    println!("max midpoint deflection at 60, 120, 180 rad/s (8 elements): {d:?}");
    assert!(d[2] > 10.0 * d[0], "180 vs 60 rad/s: {:.2}x", d[2] / d[0]);
    assert!(d[1] > 3.0 * d[0], "120 vs 60 rad/s: {:.2}x", d[1] / d[0]);
}

#[test]
fn deflection_converges_in_mesh_and_step() {
    let meshes: Vec<f64> = [2, 4, 8, 16, 32]
        .iter()
        .map(|n| max_deflection(&["generator.omega0=180", &format!("generator.elements={n}")]))
        .collect();
    let coarse_step = max_deflection(&[
        "generator.omega0=180",
        "integrator.dt=2e-5",
        "output.every=5",
    ]);
    println!("180 rad/s, N = 2, 4, 8, 16, 32: {meshes:?}; N = 8 at dt = 2e-5: {coarse_step:.5e}");
    let change = |a: f64, b: f64| ((a - b) / b).abs();
    // Successive refinements change the result less and less, and N = 8 -> 16
    // and 16 -> 32 by < 0.5 %.
    assert!(change(meshes[1], meshes[2]) < change(meshes[0], meshes[1]));
    assert!(change(meshes[2], meshes[3]) < 5e-3, "{meshes:?}");
    assert!(change(meshes[3], meshes[4]) < 5e-3, "{meshes:?}");
    assert!(
        change(coarse_step, meshes[2]) < 5e-3,
        "dt halving: {coarse_step} vs {}",
        meshes[2]
    );
}

/// Seed 001 Ch. 5 runs to 4 s (400,000 steps at dt = 1e-5): about a minute.
#[test]
#[ignore]
fn four_seconds_at_60_rad_s() {
    let d = max_deflection(&[
        "generator.omega0=60",
        "integrator.t_end=4.0",
        "output.every=100",
    ]);
    println!("max midpoint deflection over 4 s at 60 rad/s: {d:.4e}");
    assert!(d > 0.0 && d.is_finite());
}
