//! Spring-damper-actuators in motion: a mass on a translational
//! spring-damper and a body on a rotational one against the exact damped
//! oscillation x(t) = e^{-zeta w t} (A cos w_d t + B sin w_d t), second-order
//! convergence, the energy balance E(t) - E(0) - W_nc(t) = 0 of the midpoint
//! scheme (W_nc: damper work) and the static offset of an actuator.

use flexmb::input::load_model_str;
use flexmb::integrate::IntegratorSpec;
use flexmb::output::MemoryRecorder;
use flexmb::run::{RunSummary, Simulation};

/// Mass 1 at x = 1 on a spring (k = 4, free length 0.8) and damper (c = 0.4)
/// to the ground origin, and a body (J = 0.5) on a rotational spring (k = 2)
/// and damper (c = 0.1) to the ground at angle 0.3. Both: w = 2, zeta = 0.1.
const MODEL: &str = r#"
schema = 1
dimension = 2

[[node]]
id = "m"
position = [1.0, 0.0]
mass = 1.0

[[body]]
id = "wheel"
position = [5.0, 0.0]
angle = 0.3
mass = 1.0
inertia = 0.5

[[element]]
id = "tsda"
type = "spring_damper"
a = { ground = [0.0, 0.0] }
b = "m"
stiffness = 4.0
free_length = 0.8
damping = 0.4

[[element]]
id = "rsda"
type = "rotational_spring_damper"
b = "wheel"
stiffness = 2.0
rest_angle = 0.0
damping = 0.2

[integrator]
scheme = "midpoint"
dt = 0.01
t_end = 1.0
"#;

/// Exact (x, v) of x'' + 2 zeta w x' + w^2 x = 0, x(0) = x0, v(0) = 0.
fn damped(x0: f64, w: f64, zeta: f64, t: f64) -> (f64, f64) {
    let wd = w * (1.0 - zeta * zeta).sqrt();
    let (a, b) = (x0, zeta * w * x0 / wd);
    let e = (-zeta * w * t).exp();
    let (s, c) = (wd * t).sin_cos();
    let x = e * (a * c + b * s);
    let v = e * (-a * wd * s + b * wd * c) - zeta * w * x;
    (x, v)
}

fn run(model: &str, scheme: &str, dt: f64, t_end: f64) -> (RunSummary, MemoryRecorder) {
    let file = load_model_str(model, "spring_damper.toml").unwrap();
    let config = file
        .integrator(&IntegratorSpec {
            scheme: Some(scheme.into()),
            dt: Some(dt),
            t_end: Some(t_end),
            ..IntegratorSpec::default()
        })
        .unwrap();
    let sim = Simulation::new(file.model);
    let mut rec = MemoryRecorder::default();
    let s = sim
        .run(&config, model, &file.output, &mut rec, &mut |_| {})
        .unwrap();
    assert!(s.failure.is_none(), "{}", s.line());
    (s, rec)
}

/// Errors at t = 1 of (mass x, mass v, wheel angle, wheel rate).
fn errors(scheme: &str, dt: f64) -> [f64; 4] {
    let (_, r) = run(MODEL, scheme, dt, 1.0);
    let k = r.time.len() - 1;
    let (x, v) = damped(0.2, 2.0, 0.1, 1.0);
    let (th, om) = damped(0.3, 2.0, 0.1, 1.0);
    // DOFs: m.x, m.y, wheel.x, wheel.y, wheel.theta.
    [
        (r.u[k][0] - 0.8 - x).abs(),
        (r.v[k][0] - v).abs(),
        (r.u[k][4] - th).abs(),
        (r.v[k][4] - om).abs(),
    ]
}

#[test]
fn damped_oscillation_converges_at_second_order() {
    for scheme in ["midpoint", "newmark", "generalized-alpha(0.8)"] {
        let coarse = errors(scheme, 2f64.powi(-6));
        let fine = errors(scheme, 2f64.powi(-7));
        let orders: Vec<f64> = (0..4).map(|q| (coarse[q] / fine[q]).log2()).collect();
        println!(
            "{scheme}: errors {:?}, orders {orders:.3?}",
            fine.map(|e| format!("{e:.2e}"))
        );
        for p in &orders {
            assert!((1.9..=2.1).contains(p), "{scheme}: orders {orders:?}");
        }
    }
}

#[test]
fn midpoint_energy_balance_with_dampers() {
    let (s, r) = run(MODEL, "midpoint", 0.01, 20.0);
    let e0 = r.energy[0].total;
    let last = r.energy[r.energy.len() - 1];
    println!(
        "E0 {e0:.6}, E(20) {:.3e}, damper work {:.6}, balance {:.2e}",
        last.total, last.external_work, s.max_rel_energy_change
    );
    // The dampers took out nearly all of the energy ...
    assert!(last.total < 0.01 * e0 && last.external_work < -0.99 * e0);
    // ... and the books balance to round-off.
    assert!(s.max_rel_energy_change < 1e-12, "{}", s.line());
}

#[test]
fn actuator_offsets_the_equilibrium() {
    let with_actuators = MODEL
        .replace("damping = 0.4", "damping = 0.4\nactuator_force = 0.4")
        .replace("damping = 0.2", "damping = 0.2\ntorque = 0.5");
    let (_, r) = run(&with_actuators, "midpoint", 0.05, 60.0);
    let k = r.time.len() - 1;
    // Tension 0.4 pulls the mass in by 0.4 / k = 0.1; torque 0.5 turns the wheel by 0.5 / 2.
    assert!((r.u[k][0] - 0.7).abs() < 1e-4, "x = {}", r.u[k][0]);
    assert!((r.u[k][4] - 0.25).abs() < 1e-4, "theta = {}", r.u[k][4]);
}

/// A torque load drives a wheel against a rotational damper to the terminal
/// speed torque / damping; the books (torque work + damper work) balance.
#[test]
fn torque_against_damper_reaches_terminal_speed() {
    let model = r#"
schema = 1
dimension = 2

[[body]]
id = "wheel"
position = [0.0, 0.0]
angle = 0.0
mass = 1.0
inertia = 0.5

[[element]]
id = "bearing"
type = "rotational_spring_damper"
b = "wheel"
damping = 0.2

[[load]]
id = "motor"
type = "torque"
body = "wheel"
torque = 0.1
time = { type = "ramp", t0 = 0.0, t1 = 1.0 }
"#;
    let (s, r) = run(model, "midpoint", 0.01, 60.0);
    let k = r.time.len() - 1;
    let omega = r.v[k][2];
    assert!((omega - 0.5).abs() < 1e-6, "terminal speed {omega}");
    let e = r.energy[k];
    // Kinetic energy 1/2 J w^2 = 0.0625, all of it paid by the torque minus the damper.
    assert!(
        (e.total - 0.0625).abs() < 1e-6 && (e.total - e.external_work).abs() < 1e-12,
        "{e:?} {}",
        s.line()
    );
}
