//! SPEC.md §1 FM: the four-mass system of seed 000 §4.2.1 (two rigid bars,
//! two Green-strain trusses, 3-D) with the 12 combinations.

mod common;

use common::*;
use flexmb::input::load_model_file;
use flexmb::output::MemoryRecorder;

const MODEL: &str = "four_mass";

/// Node masses from the assembled (diagonal) mass matrix, one per DOF.
fn dof_masses() -> Vec<f64> {
    let file = load_model_file(model_path(MODEL)).unwrap();
    let sim = flexmb::run::Simulation::new(file.model);
    let m = sim.asm.mass_matrix();
    (0..m.rows())
        .map(|i| *m.get(i, i).unwrap_or(&0.0))
        .collect()
}

/// Linear momentum sum m v and angular momentum sum m r x v about the origin.
fn momenta(m: &[f64], u: &[f64], v: &[f64]) -> [f64; 6] {
    let mut p = [0.0; 6];
    for k in 0..u.len() / 3 {
        let (r, w, mk) = (&u[3 * k..3 * k + 3], &v[3 * k..3 * k + 3], m[3 * k]);
        for c in 0..3 {
            p[c] += mk * w[c];
        }
        p[3] += mk * (r[1] * w[2] - r[2] * w[1]);
        p[4] += mk * (r[2] * w[0] - r[0] * w[2]);
        p[5] += mk * (r[0] * w[1] - r[1] * w[0]);
    }
    p
}

/// Largest change of any momentum component over the run, relative to the
/// largest initial component.
fn momentum_drift(m: &[f64], rec: &MemoryRecorder) -> f64 {
    let p0 = momenta(m, &rec.u[0], &rec.v[0]);
    let scale = max_abs(&p0);
    rec.u
        .iter()
        .zip(&rec.v)
        .map(|(u, v)| max_diff(&momenta(m, u, v), &p0) / scale)
        .fold(0.0, f64::max)
}

/// At dt = 0.01 over 50 s: U0(1,1,0) (every option) and U0(1,1,1) option 1
/// blow up near 31 s; V0(1,1,0) option 1 reaches 50 s with its energy grown by
/// orders of magnitude; the other six conserve energy and momenta to round-off
/// with about 3 iterations per step.
#[test]
fn outcome_pattern_over_50_s() {
    let m = dof_masses();
    for (scheme, option) in combinations() {
        let (s, rec) = run(MODEL, &spec(scheme, option, 0.01, 50.0));
        let what = format!("{scheme} option {option}: {}", s.line());
        println!("{what}");
        match (scheme, option) {
            ("newmark", _) | ("midpoint-endpoint", 1) => {
                assert!(s.failure.is_some(), "{what}: expected a blow-up");
                assert!(
                    (29.0..33.0).contains(&s.t_end_reached),
                    "{what}: blow-up not near 31 s"
                );
                assert!(s.max_rel_energy_change > 1e3, "{what}");
            }
            ("midpoint", 1) => {
                assert!(s.failure.is_none(), "{what}");
                assert!(
                    s.max_rel_energy_change > 10.0,
                    "{what}: energy did not grow"
                );
            }
            _ => {
                assert!(s.failure.is_none(), "{what}");
                assert!(s.max_rel_energy_change < 1e-12, "{what}");
                let drift = momentum_drift(&m, &rec);
                assert!(drift < 1e-12, "{what}: momentum drift {drift:.2e}");
                let it = s.iterations_per_step();
                assert!((2.5..=3.5).contains(&it), "{what}");
            }
        }
    }
}

/// V0(1,1,0) option 2 conserves energy and linear and angular momentum to
/// 1e-10 over 50 s at dt = 0.01 and 0.05.
#[test]
fn midpoint_conserves_energy_and_momenta() {
    let m = dof_masses();
    for dt in [0.01, 0.05] {
        let (s, rec) = run(MODEL, &spec("midpoint", 2, dt, 50.0));
        assert!(s.failure.is_none(), "dt {dt}: {}", s.line());
        let drift = momentum_drift(&m, &rec);
        println!(
            "dt {dt}: energy {:.2e}, momenta {drift:.2e}",
            s.max_rel_energy_change
        );
        assert!(s.max_rel_energy_change < 1e-10, "dt {dt}: {}", s.line());
        assert!(drift < 1e-10, "dt {dt}: momentum drift {drift:.2e}");
        // The initial angular momentum is not zero: the check has something to conserve.
        assert!(max_abs(&momenta(&m, &rec.u[0], &rec.v[0])[3..]) > 0.1);
    }
}

/// Figs. 4.37–4.38: second order in u, v, a, lambda (finest pair of
/// dt = 2^-5 .. 2^-8 against 2^-10, to t = 0.25 s).
#[test]
fn second_order_convergence() {
    for (scheme, option) in combinations() {
        let (_, orders) = convergence(MODEL, scheme, option, 0.25, 5..=8, Err(10));
        println!("{scheme} option {option}: orders {orders:.3?}");
        assert_orders(&format!("{scheme} option {option}"), orders, 1.9, 2.2);
    }
}
