//! Newton options (docs/theory/gssss.md §12). Stop rule: `increment` (seed
//! 000 eq. 2.14, the default) and `rate` (Hairer & Wanner §IV.8: also stop
//! when the error of the current iterate, estimated from the contraction
//! rate, is below the tolerance), which saves the confirming iteration.
//! Matrix refresh: `iteration` (Newton, the default) and `step` (modified
//! Newton: factor at the first iteration of a step, residual-only
//! iterations after it). Both must give the same motion to the tolerance.

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

fn with_refactor(over: IntegratorSpec, refactor: &str) -> IntegratorSpec {
    IntegratorSpec {
        refactor: Some(refactor.into()),
        ..over
    }
}

/// Largest difference of the recorded positions of two runs.
fn max_u_diff(a: &flexmb::output::MemoryRecorder, b: &flexmb::output::MemoryRecorder) -> f64 {
    assert_eq!(a.u.len(), b.u.len());
    a.u.iter()
        .zip(&b.u)
        .map(|(x, y)| max_diff(x, y))
        .fold(0.0, f64::max)
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

/// Modified Newton on the double pendulum (dt 0.01 and 0.05, 10 s, V0(1,1,0)
/// option 2): the residual-only iterations converge linearly, so it takes
/// more iterations than Newton, with the same motion to the tolerance.
#[test]
fn modified_newton_on_the_double_pendulum() {
    for dt in [0.01, 0.05] {
        let over = spec("midpoint", 2, dt, 10.0);
        let (sn, rn) = run("double_pendulum", &over);
        let (sm, rm) = run("double_pendulum", &with_refactor(over, "step"));
        assert!(sn.failure.is_none(), "{}", sn.line());
        assert!(sm.failure.is_none(), "{}", sm.line());
        let du = max_u_diff(&rn, &rm);
        println!(
            "DP dt {dt}: Newton {:.3}, modified Newton {:.3} iterations/step; energy {:.2e} / {:.2e}; max |du| {du:.2e}",
            sn.iterations_per_step(),
            sm.iterations_per_step(),
            sn.max_rel_energy_change,
            sm.max_rel_energy_change
        );
        assert!(sm.iterations_per_step() >= sn.iterations_per_step());
        // Linear convergence leaves the accepted iterate less converged than
        // Newton's (still within tol): the energy balance holds to the
        // tolerance, not to round-off (dt 0.05: 4.8e-11 against 5e-15).
        assert!(sm.max_rel_energy_change < 1e-9, "{}", sm.line());
        assert!(du < 1e-8, "dt {dt}: {du:e}");
    }
}

/// Modified Newton with the rate stop on the deformable slider-crank (the
/// shipped settings): 2 iterations per step, one factorization, the same
/// deflection as Newton with the increment test.
#[test]
fn modified_newton_on_the_flexible_slider_crank() {
    let newton = with_refactor(
        with_stop(IntegratorSpec::default(), "increment"),
        "iteration",
    );
    let (sn, _) = run("slider_crank_flexible", &newton);
    let (sm, _) = run("slider_crank_flexible", &IntegratorSpec::default());
    assert!(sn.failure.is_none() && sm.failure.is_none());
    let (dn, dm) = (sn.probes[0].1.max_abs, sm.probes[0].1.max_abs);
    let rel = ((dn - dm) / dn).abs();
    println!(
        "slider-crank N=8: Newton + increment {:.3}, modified Newton + rate {:.3} iterations/step; deflection relative difference {rel:.1e}",
        sn.iterations_per_step(),
        sm.iterations_per_step()
    );
    assert!(sm.iterations_per_step() < 2.1);
    assert!(rel < 1e-9, "{rel:e}");
    assert!(sm.max_rel_energy_change < 1e-8, "{}", sm.line());
}

/// Modified Newton reuses the factorization on every solver path: the band LU
/// and the sparse LU (faer) on a hanging truss chain of 60 nodes
/// (generalized-alpha(0.8), dt 1e-3, 500 steps), and the dense LU on the
/// double pendulum (V0(1,1,0), dt 0.01): one factorization per step, the same
/// motion as Newton to the tolerance.
#[test]
fn modified_newton_factors_once_per_step_on_every_solver_path() {
    use flexmb::input::load_model_file;
    use flexmb::integrate::State;
    use flexmb::model::hanging_truss_chain;
    use flexmb::run::Simulation;
    let dp = load_model_file(common::model_path("double_pendulum")).unwrap();
    let cases = [
        ("dense", Simulation::new(dp.model), "midpoint", 0.01, false),
        (
            "band",
            Simulation::new(hanging_truss_chain(60).unwrap()),
            "generalized-alpha(0.8)",
            1e-3,
            false,
        ),
        (
            "sparse",
            Simulation::new(hanging_truss_chain(60).unwrap()),
            "generalized-alpha(0.8)",
            1e-3,
            true,
        ),
    ];
    for (label, sim, scheme, dt, sparse) in cases {
        // (iterations, factorizations, final u) over 500 steps.
        let run = |refactor: &str| {
            let config = IntegratorSpec {
                scheme: Some(scheme.into()),
                dt: Some(dt),
                t_end: Some(500.0 * dt),
                sparse: Some(sparse),
                refactor: Some(refactor.into()),
                // The absolute test at tol 1e-8 bounds both runs' Newton error.
                convergence: Some("increment".into()),
                ..IntegratorSpec::default()
            }
            .resolve()
            .unwrap();
            let sys = sim.mechanics();
            let mut integ = config.build(&sys).unwrap();
            let mut state = State::initial(&sim.mechanics());
            integ.start(&sys, &mut state).unwrap();
            let (mut it, mut fa) = (0, 0);
            for _ in 0..500 {
                let s = {
                    let t = state.t + dt;
                    integ.advance(&sys, &mut state, t)
                }
                .unwrap();
                it += s.newton_iterations;
                fa += s.stats[1] as u32;
            }
            (it, fa, state.u)
        };
        let (it_n, fa_n, un) = run("iteration");
        let (it_m, fa_m, um) = run("step");
        let du = max_diff(&un, &um);
        println!(
            "{label} LU: Newton {it_n} iterations / {fa_n} factorizations, modified Newton {it_m} / {fa_m}; max |du| {du:.2e}"
        );
        assert_eq!(fa_n, it_n, "{label}: Newton factors every iteration");
        assert_eq!(fa_m, 500, "{label}: modified Newton factors once per step");
        assert!(du < 1e-9, "{label}: {du:e}");
    }
}

/// `step_control = "cutback"` (GSSSS): the double pendulum at dt = 0.3 with
/// at most 6 Newton iterations fails at t = 1.2 on the fixed grid; with
/// cutback the stepper halves the step where Newton fails, regrows it after
/// 4 successes, and reaches 10 s; the midpoint rule still conserves the
/// energy, and the run reports its rejected attempts (`nreject`).
#[test]
fn cutback_rescues_a_newton_failure() {
    let over = |control: &str| IntegratorSpec {
        dt: Some(0.3),
        t_end: Some(10.0),
        max_iter: Some(6),
        step_control: Some(control.into()),
        ..IntegratorSpec::default()
    };
    let (fixed, _) = run("double_pendulum", &over("fixed"));
    assert!(fixed.failure.is_some(), "{}", fixed.line());
    assert!(
        (fixed.t_end_reached - 0.9).abs() < 1e-12,
        "{}",
        fixed.line()
    );
    let (cut, rec) = run("double_pendulum", &over("cutback"));
    println!("{}", cut.line());
    assert!(cut.failure.is_none(), "{}", cut.line());
    assert_eq!(cut.t_end_reached, 10.0);
    let nreject = cut.stat("nreject").unwrap();
    assert!(nreject > 0.0 && cut.steps > 34, "{}", cut.line());
    assert!(cut.max_rel_energy_change < 1e-10, "{}", cut.line());
    // Every step is at most dt and a power-of-two fraction of it.
    for w in rec.time.windows(2) {
        let h = w[1] - w[0];
        let ratio = 0.3 / h;
        assert!(h <= 0.3 + 1e-12, "step {h}");
        assert!(
            (ratio.log2() - ratio.log2().round()).abs() < 1e-9 || w[1] == 10.0,
            "step {h} at t = {}",
            w[1]
        );
    }
}
