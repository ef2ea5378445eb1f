//! The rigid slider-crank of `models/slider_crank_rigid.toml`: a driven crank
//! (prescribed motion), revolute joints between bodies and a prismatic guide.
//! The slider must follow the exact kinematics
//! x = r cos(theta) + sqrt(l^2 - r^2 sin^2(theta)) with theta = 10 t, the
//! constraints must hold at round-off, and the error must be second order.

use flexmb::input::load_model_file;
use flexmb::integrate::IntegratorSpec;
use flexmb::output::MemoryRecorder;
use flexmb::run::Simulation;

fn run(scheme: &str, dt: f64) -> MemoryRecorder {
    let file = load_model_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/slider_crank_rigid.toml"
    ))
    .unwrap();
    let config = file
        .integrator(&IntegratorSpec {
            scheme: Some(scheme.into()),
            dt: Some(dt),
            ..IntegratorSpec::default()
        })
        .unwrap();
    let sim = Simulation::new(file.model);
    let slider_x = sim
        .model
        .dofs
        .names()
        .iter()
        .position(|n| n == "slider.x")
        .unwrap();
    assert_eq!(slider_x, 6);
    let mut rec = MemoryRecorder::default();
    let s = sim
        .run(&config, "", &file.output, &mut rec, &mut |_| {})
        .unwrap();
    assert!(s.failure.is_none(), "{}", s.line());
    assert!(s.max_position_violation < 1e-12, "{}", s.line());
    rec
}

fn exact_slider(t: f64) -> (f64, f64) {
    let (r, l, w) = (0.1, 0.3, 10.0);
    let (s, c) = (w * t).sin_cos();
    let root = (l * l - r * r * s * s).sqrt();
    (r * c + root, -r * w * s - r * r * w * s * c / root)
}

#[test]
fn slider_follows_the_exact_kinematics() {
    for scheme in ["midpoint", "generalized-alpha(0.8)"] {
        let errors: Vec<[f64; 2]> = [0.004, 0.002]
            .iter()
            .map(|&dt| {
                let rec = run(scheme, dt);
                let mut worst = [0.0_f64; 2];
                for (k, &t) in rec.time.iter().enumerate() {
                    let (x, v) = exact_slider(t);
                    // The crank angle is driven exactly.
                    assert!((rec.u[k][2] - 10.0 * t).abs() < 1e-12);
                    worst[0] = worst[0].max((rec.u[k][6] - x).abs());
                    worst[1] = worst[1].max((rec.v[k][6] - v).abs());
                }
                worst
            })
            .collect();
        let orders = [0, 1].map(|q| (errors[0][q] / errors[1][q]).log2());
        println!(
            "{scheme}: max errors {:?} at dt 0.002, orders {orders:.3?}",
            errors[1]
        );
        // Positions: constraints at round-off make x exact up to Newton's tolerance.
        assert!(
            errors[1][0] < 1e-10,
            "{scheme}: slider position error {:.2e}",
            errors[1][0]
        );
        // Velocities come from the integrator: second order.
        assert!(
            (1.9..=2.1).contains(&orders[1]),
            "{scheme}: velocity order {:.3}",
            orders[1]
        );
    }
}
