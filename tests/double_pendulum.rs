//! SPEC.md §1 DP: the rigid double pendulum of seed 000 §4.1.1 with the 12
//! combinations {U0(1,1,0), U0(1,1,1), V0(1,1,0)} x {option 1..4}.

mod common;

use common::*;
use flexmb::integrate::{IntegratorSpec, StepError};

const MODEL: &str = "double_pendulum";

#[test]
fn outcome_pattern_over_10_s() {
    for (scheme, option) in combinations() {
        let (s, _) = run(MODEL, &spec(scheme, option, 0.01, 10.0));
        let what = format!("{scheme} option {option}: {}", s.line());
        println!("{what}");
        if scheme == "newmark" || option == 1 {
            // U0(1,1,0) fails near 4.75 s under every option; option 1 near 4.7–5.2 s.
            assert!(
                matches!(s.failure, Some(StepError::NewtonFailed { .. })),
                "{what}: expected a Newton failure"
            );
            let (lo, hi) = if scheme == "newmark" {
                (4.5, 5.0)
            } else {
                (4.5, 5.5)
            };
            assert!(
                (lo..hi).contains(&s.t_end_reached),
                "{what}: failed outside [{lo}, {hi})"
            );
        } else {
            assert!(s.failure.is_none(), "{what}");
            assert_eq!(s.t_end_reached, 10.0);
            let it = s.iterations_per_step();
            assert!(
                (2.5..=3.5).contains(&it),
                "{what}: {it} iterations per step"
            );
            assert!(s.max_rel_energy_change < 1e-10, "{what}");
        }
    }
}

/// Over 100 s: U0(1,1,1) grows step-to-step acceleration oscillations
/// (Table 4.3 "unstable in accelerations"); V0(1,1,0) options 2 and 3 stay
/// smooth and option 2 conserves energy; V0(1,1,0) option 4 oscillates in
/// its multipliers.
#[test]
fn long_run_accelerations_and_multipliers() {
    let first = 0..1000; // first 10 s
    let last = 9000..10001; // last 10 s
    let mut smooth_a = 0.0_f64;
    for (scheme, option) in combinations() {
        if scheme == "newmark" || option == 1 {
            continue;
        }
        let (s, r) = run(MODEL, &spec(scheme, option, 0.01, 100.0));
        assert!(
            s.failure.is_none(),
            "{scheme} option {option}: {}",
            s.line()
        );
        let (a0, a1) = (
            oscillation(&r.a, first.clone()),
            oscillation(&r.a, last.clone()),
        );
        let (l0, l1) = (
            oscillation(&r.lambda, first.clone()),
            oscillation(&r.lambda, last.clone()),
        );
        println!(
            "{scheme} option {option}: energy {:.2e}; a oscillation {a0:.2e} -> {a1:.2e}; \
             lambda oscillation {l0:.2e} -> {l1:.2e}",
            s.max_rel_energy_change
        );
        match (scheme, option) {
            ("midpoint-endpoint", _) => {
                assert!(
                    a1 > 1.0 && a1 > 10.0 * a0,
                    "{scheme} option {option}: no growing oscillation"
                );
            }
            ("midpoint", 4) => assert!(l1 > 0.2, "{scheme} option 4: multipliers do not oscillate"),
            ("midpoint", _) => {
                assert!(a1 < 0.1 && l1 < 0.1, "{scheme} option {option}: not smooth");
                smooth_a = smooth_a.max(a1);
            }
            _ => unreachable!(),
        }
        if (scheme, option) == ("midpoint", 2) {
            assert!(
                s.max_rel_energy_change < 1e-10,
                "energy change {:.2e}",
                s.max_rel_energy_change
            );
        }
    }
    assert!(smooth_a > 0.0);
}

/// V0(1,1,0) option 2 keeps the position constraints at round-off for 500 s.
#[test]
fn position_constraints_at_round_off_for_500_s() {
    let (s, r) = run(MODEL, &spec("midpoint", 2, 0.01, 500.0));
    assert!(s.failure.is_none());
    let worst = max_constraint(&r.constraints, |c| c.position);
    assert!(
        worst < 1e-13,
        "largest position-constraint violation {worst:.2e}"
    );
    assert!(
        s.max_rel_energy_change < 1e-10,
        "energy change {:.2e}",
        s.max_rel_energy_change
    );
}

/// With the seed-style Newton matrix (multiplier column without the W1
/// weights) V0(1,1,0) needs 5.3 (option 3) and 27 (option 4) iterations per
/// step over 10 s as in the seed; with the consistent matrix about 3.
#[test]
fn seed_jacobian_iteration_counts() {
    for (option, seed_count) in [(2, 3.0), (3, 5.3), (4, 27.0)] {
        let over = IntegratorSpec {
            jacobian: Some("seed".into()),
            ..spec("midpoint", option, 0.01, 10.0)
        };
        let (s, _) = run(MODEL, &over);
        assert!(s.failure.is_none(), "option {option}: {}", s.line());
        let it = s.iterations_per_step();
        println!("seed Jacobian, option {option}: {it:.3} iterations/step (seed {seed_count})");
        assert!(
            (it / seed_count - 1.0).abs() < 0.1,
            "option {option}: {it:.3} vs {seed_count}"
        );
        let (c, _) = run(MODEL, &spec("midpoint", option, 0.01, 10.0));
        assert!((2.5..=3.5).contains(&c.iterations_per_step()));
    }
}

/// Figs. 4.18–4.19: second order in u, v, a, lambda for every combination
/// (finest pair of dt = 2^-5 .. 2^-8 against 2^-10, to t = 0.25 s).
#[test]
fn second_order_convergence() {
    for (scheme, option) in combinations() {
        let (errors, orders) = convergence(MODEL, scheme, option, 0.25, 5..=8, Err(10));
        print_orders(&format!("{scheme} option {option}"), &errors, orders);
        assert_orders(&format!("{scheme} option {option}"), orders, 1.9, 2.2);
    }
}

/// The Newton test works down to dt = 2^-10 (SPEC.md §1 DP, round-off floor):
/// every combination completes 0.25 s in 2 iterations per step.
#[test]
fn newton_converges_at_small_steps() {
    for (scheme, option) in combinations() {
        let (s, _) = run(MODEL, &spec(scheme, option, 2f64.powi(-10), 0.25));
        assert!(
            s.failure.is_none(),
            "{scheme} option {option}: {}",
            s.line()
        );
        assert!(s.iterations_per_step() <= 3.0, "{}", s.line());
    }
}
