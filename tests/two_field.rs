//! The two-field v-form midpoint scheme (seed 000 eqs. 3.49–3.60) is the
//! single-field V0(1,1,0) scheme written with other unknowns: from the same
//! state, one step of each must give the same (u, v, a, lambda) to round-off,
//! on all three SPEC.md §1 problems and for every constraint option.
//!
//! "Round-off" here is the accuracy to which Newton solves each step: with
//! tol = 1e-12 the increment test stops at its round-off floor (about 1e-9 in
//! acceleration units at dt = 0.01), and the two solutions agree to about
//! 1e-11 relative. A genuinely different scheme, U0(1,1,1), differs by more
//! than 1e-6 per step from the same state: the control that shows the
//! comparison can fail.

mod common;

use common::{max_abs, max_diff, model_path};
use flexmb::input::load_model_file;
use flexmb::integrate::{IntegratorSpec, State};
use flexmb::run::Simulation;

fn relative_step_difference(model: &str, scheme: &str, option: u8) -> f64 {
    let file = load_model_file(model_path(model)).unwrap();
    let over = |scheme: &str, form: &str| IntegratorSpec {
        scheme: Some(scheme.into()),
        option: Some(option.into()),
        form: Some(form.into()),
        dt: Some(0.01),
        tol: Some(1e-12),
        ..IntegratorSpec::default()
    };
    let single = file.integrator(&over(scheme, "a")).unwrap();
    let two = file.integrator(&over("midpoint", "two-field")).unwrap();
    let sim = Simulation::new(file.model);
    let sys = sim.mechanics();
    let mut a_form = single.build(&sys).unwrap();
    let mut v_form = two.build(&sys).unwrap();
    let mut state = State::initial(&sim.mechanics());
    a_form.start(&sys, &mut state).unwrap();
    let mut worst: f64 = 0.0;
    for _ in 0..200 {
        let mut by_v = state.clone();
        {
            let t = state.t + 0.01;
            a_form.advance(&sys, &mut state, t)
        }
        .unwrap();
        {
            let t = by_v.t + 0.01;
            v_form.advance(&sys, &mut by_v, t)
        }
        .unwrap();
        for (x, y) in [
            (&state.u, &by_v.u),
            (&state.v, &by_v.v),
            (&state.a, &by_v.a),
            (&state.lambda, &by_v.lambda),
        ] {
            worst = worst.max(max_diff(x, y) / max_abs(x).max(1.0));
        }
    }
    worst
}

#[test]
fn two_field_equals_v0_110_step_by_step() {
    for model in ["double_pendulum", "four_mass", "circle_track"] {
        for option in 1..=4 {
            let d = relative_step_difference(model, "midpoint", option);
            println!("{model} option {option}: largest relative one-step difference {d:.2e}");
            assert!(
                d < 1e-10,
                "{model} option {option}: two-field differs from V0(1,1,0) by {d:.2e}"
            );
            let control = relative_step_difference(model, "midpoint-endpoint", option);
            assert!(
                control > 1e-6,
                "{model} option {option}: U0(1,1,1) too close ({control:.2e})"
            );
        }
    }
}
