//! HHT-α (`method = "hht"`, src/integrate/hht/): second order on the
//! pendulum against a DOPRI5 reference at three step sizes, the trapezoidal
//! rule at alpha = 0 (bitwise the GSSSS preset "newmark"), its statistics
//! and metadata, and its checks from the file and from code.

mod common;

use common::*;
use flexmb::input::load_model_file;
use flexmb::integrate::hht::HhtSettings;
use flexmb::integrate::{IntegratorConfig, IntegratorSpec};

fn hht(alpha: f64, dt: f64, t_end: f64) -> IntegratorSpec {
    IntegratorSpec {
        method: Some("hht".into()),
        alpha: Some(alpha),
        dt: Some(dt),
        t_end: Some(t_end),
        ..IntegratorSpec::default()
    }
}

/// The pendulum (models/pendulum.toml, released horizontal) to t = 1 at dt
/// = 2^-6, 2^-7, 2^-8 with alpha = -0.1 and -0.3: the errors of the
/// positions and velocities against DOPRI5 at rtol 1e-12 fall by 4 per
/// halving, order 2 +- 0.1 for both pairs. Every step converges by
/// Newton's method (a factorization per iteration, no rejection, no
/// backtrack).
#[test]
fn second_order_on_the_pendulum() {
    let t_end = 1.0;
    let (s, reference) = run(
        "pendulum",
        &IntegratorSpec {
            method: Some("dopri5".into()),
            rtol: Some(1e-12),
            atol: Some(1e-13),
            stabilization: Some("pstab".into()),
            t_end: Some(t_end),
            ..IntegratorSpec::default()
        },
    );
    assert!(s.failure.is_none(), "reference: {}", s.line());
    let (u_ref, v_ref) = (
        reference.u.last().unwrap().clone(),
        reference.v.last().unwrap().clone(),
    );
    for alpha in [-0.1, -0.3] {
        let errors: Vec<[f64; 2]> = (6..=8)
            .map(|k| {
                let dt = 2f64.powi(-k);
                let (s, rec) = run("pendulum", &hht(alpha, dt, t_end));
                assert!(s.failure.is_none(), "alpha {alpha} dt 2^-{k}: {}", s.line());
                assert_eq!(*rec.time.last().unwrap(), t_end);
                let steps = 2f64.powi(k);
                let iterations = stat(&s, "newton_iterations");
                assert!(
                    iterations >= steps && iterations <= 6.0 * steps,
                    "{}",
                    s.line()
                );
                assert_eq!(stat(&s, "factorizations"), iterations, "{}", s.line());
                assert_eq!(stat(&s, "nreject"), 0.0, "{}", s.line());
                assert_eq!(stat(&s, "backtracks"), 0.0, "{}", s.line());
                [
                    max_diff(rec.u.last().unwrap(), &u_ref),
                    max_diff(rec.v.last().unwrap(), &v_ref),
                ]
            })
            .collect();
        for q in 0..2 {
            let orders = [
                order(errors[0][q], errors[1][q]),
                order(errors[1][q], errors[2][q]),
            ];
            println!(
                "HHT alpha {alpha}, {}: errors {:.3e} {:.3e} {:.3e}, orders {:.3} {:.3}",
                ["u", "v"][q],
                errors[0][q],
                errors[1][q],
                errors[2][q],
                orders[0],
                orders[1]
            );
            for p in orders {
                assert!((p - 2.0).abs() <= 0.1, "alpha {alpha}: order {p}");
            }
        }
    }
}

/// alpha = 0 is the trapezoidal rule, U0(1, 1, 0): the same steps as the
/// GSSSS preset "newmark" with option 2, bit for bit.
#[test]
fn alpha_zero_is_newmark() {
    let (a, ra) = run("pendulum", &hht(0.0, 0.01, 0.5));
    let (b, rb) = run("pendulum", &spec("newmark", 2, 0.01, 0.5));
    assert!(a.failure.is_none() && b.failure.is_none());
    assert_eq!(ra.u, rb.u);
    assert_eq!(ra.v, rb.v);
    assert_eq!(ra.lambda, rb.lambda);
}

/// The file's keys: alpha outside [-1/3, 0] is refused naming `alpha`;
/// GSSSS's scheme keys are foreign to HHT and `alpha` is foreign to GSSSS
/// (whose message names "hht" among the methods taking it). From code the
/// typed settings build, a foreign builder call is an error, and the
/// metadata names the method and its alpha.
#[test]
fn settings_and_checks() {
    let file = || load_model_file(model_path("pendulum")).unwrap();
    let e = file()
        .integrator(&hht(0.2, 0.01, 1.0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("`alpha`") && e.contains("[-1/3, 0]"), "{e}");
    let e = file()
        .integrator(&IntegratorSpec {
            scheme: Some("newmark".into()),
            ..hht(-0.1, 0.01, 1.0)
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("method \"hht\" has no setting `scheme`"), "{e}");
    let e = file()
        .integrator(&IntegratorSpec {
            alpha: Some(-0.1),
            ..IntegratorSpec::default()
        })
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("method \"gssss\" has no setting `alpha`") && e.contains("\"hht\""),
        "{e}"
    );
    let config = file().integrator(&hht(-0.2, 0.01, 1.0)).unwrap();
    assert_eq!(config.method_name(), "hht");
    assert_eq!(config.nominal_steps(), Some(100));
    let p = config.parameters();
    assert!(p
        .iter()
        .any(|(k, v)| k == "method" && *v == flexmb::integrate::AttrValue::Str("hht".into())));
    assert!(p
        .iter()
        .any(|(k, v)| k == "alpha" && *v == flexmb::integrate::AttrValue::F64(-0.2)));
    let code = IntegratorConfig::from(HhtSettings {
        alpha: -0.2,
        dt: 0.01,
        ..HhtSettings::default()
    })
    .t_end(1.0);
    code.check().unwrap();
    assert_eq!(code.label(), config.label());
    assert_eq!(code.method.method().statistics(), config.statistics());
    let e = IntegratorConfig::from(HhtSettings::default())
        .max_step(0.1)
        .check()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("method \"hht\" has no setting `max_step`"),
        "{e}"
    );
    let e = IntegratorConfig::from(HhtSettings {
        alpha: -0.5,
        ..HhtSettings::default()
    })
    .check()
    .unwrap_err();
    assert_eq!(e.field, "alpha");
}

/// The Newton driver's options work for HHT as for GSSSS: the hanging
/// beam L1 (40 elements) at dt 0.1 diverges in step 1 under full
/// corrections and runs its 2 steps with `line_search = "backtracking"`,
/// shortening some corrections (`backtracks`), the pin held.
#[test]
fn line_search_with_hht() {
    let spec = |search: &str| IntegratorSpec {
        line_search: Some(search.into()),
        ..hht(-0.1, 0.1, 0.2)
    };
    let (plain, _) = run("hanging_beam", &spec("none"));
    let failure = plain.failure.expect("full corrections diverge").to_string();
    assert!(failure.contains("step 1 "), "{failure}");
    let (searched, rec) = run("hanging_beam", &spec("backtracking"));
    println!("L1 40, dt 0.1, hht, line search: {}", searched.line());
    assert!(searched.failure.is_none(), "{}", searched.line());
    assert_eq!(searched.steps, 2);
    assert!(stat(&searched, "backtracks") > 0.0, "{}", searched.line());
    let pin = max_constraint(&rec.constraints, |c| c.position);
    assert!(pin <= 1e-9, "pin violation {pin:e}");
}
