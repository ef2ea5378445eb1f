//! The Newton stop tests (docs/theory/gssss.md §12): `increment` (seed 000
//! eq. 2.14, the default) and `rate` (Hairer & Wanner §IV.8: also stop when
//! the error of the current iterate, estimated from the contraction rate, is
//! below the tolerance). The rate test saves the confirming iteration and
//! must give the same motion to the tolerance.

mod common;

use common::{max_diff, run, spec};
use flexmb::integrate::{IntegratorSpec, NewtonStop};

/// The acceptance rule itself, on scaled increments `r` (1 = the tolerance).
#[test]
fn acceptance_rule() {
    use NewtonStop::{Increment, Rate};
    for stop in [Increment, Rate] {
        assert!(stop.accepts(1.0, None));
        assert!(stop.accepts(0.3, Some(1e6)));
        assert!(
            !stop.accepts(1.5, None),
            "{stop:?}: no rate on the first iteration"
        );
    }
    // theta = 0.1, estimated error 0.1 / 0.9 * 5 = 0.56 <= 1.
    assert!(Rate.accepts(5.0, Some(50.0)));
    assert!(!Increment.accepts(5.0, Some(50.0)));
    // theta = 0.5: 0.5 / 0.5 * 1.5 = 1.5 > 1.
    assert!(!Rate.accepts(1.5, Some(3.0)));
    // A growing or stalled increment is never accepted.
    assert!(!Rate.accepts(2.0, Some(2.0)));
    assert!(!Rate.accepts(3.0, Some(2.0)));
}

fn with_stop(over: IntegratorSpec, stop: &str) -> IntegratorSpec {
    IntegratorSpec {
        convergence: Some(stop.into()),
        ..over
    }
}

/// Double pendulum, V0(1,1,0) option 2, dt 0.01, 10 s: the rate test takes
/// fewer iterations, conserves energy as well, and moves the solution by no
/// more than the tolerance allows.
#[test]
fn rate_stop_on_the_double_pendulum() {
    let over = spec("midpoint", 2, 0.01, 10.0);
    let (si, ri) = run("double_pendulum", &with_stop(over.clone(), "increment"));
    let (sr, rr) = run("double_pendulum", &with_stop(over, "rate"));
    assert!(si.failure.is_none() && sr.failure.is_none());
    let (it_i, it_r) = (si.iterations_per_step(), sr.iterations_per_step());
    let du =
        ri.u.iter()
            .zip(&rr.u)
            .map(|(a, b)| max_diff(a, b))
            .fold(0.0, f64::max);
    println!(
        "DP: {it_i:.3} -> {it_r:.3} iterations/step; energy {:.2e} -> {:.2e}; max |u_increment - u_rate| {du:.2e}",
        si.max_rel_energy_change, sr.max_rel_energy_change
    );
    assert!(it_i > 2.9 && it_r < it_i - 0.5, "{it_i} vs {it_r}");
    assert!(sr.max_rel_energy_change < 1e-12, "{}", sr.line());
    // tol = 1e-8 in acceleration units is 1e-8 dt^2 / 4 = 2.5e-13 in u per step.
    assert!(du < 1e-9, "{du:e}");
}

/// Deformable slider-crank, 8 elements, 0.07 s at dt = 1e-5: Newton sits on
/// the round-off floor and the rate test stops after 2 iterations instead of 3
/// with the same midpoint deflection.
#[test]
fn rate_stop_on_the_flexible_slider_crank() {
    let over = IntegratorSpec::default();
    let (si, _) = run(
        "slider_crank_flexible",
        &with_stop(over.clone(), "increment"),
    );
    let (sr, _) = run("slider_crank_flexible", &with_stop(over, "rate"));
    assert!(si.failure.is_none() && sr.failure.is_none());
    let probe = |s: &flexmb::run::RunSummary| s.probes[0].1;
    let (pi, pr) = (probe(&si), probe(&sr));
    let rel = ((pi.max_abs - pr.max_abs) / pi.max_abs).abs();
    println!(
        "slider-crank N=8: {:.3} -> {:.3} iterations/step; max deflection {:.9e} vs {:.9e} (relative {rel:.1e}); energy {:.2e} -> {:.2e}",
        si.iterations_per_step(),
        sr.iterations_per_step(),
        pi.max_abs,
        pr.max_abs,
        si.max_rel_energy_change,
        sr.max_rel_energy_change
    );
    assert!(si.iterations_per_step() > 2.9);
    assert!(sr.iterations_per_step() < 2.1);
    assert!(rel < 1e-9, "{rel:e}");
    assert!(sr.max_rel_energy_change < 1e-8, "{}", sr.line());
}
