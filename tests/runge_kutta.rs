//! Explicit Runge–Kutta methods on the index-1 form (seed 001, SPEC.md §3):
//! orders of DOPRI5, RK4 and Heun and of DOPRI5's dense output on an
//! unconstrained oscillator, error control against the circular track's
//! exact solution, Andrews' mechanism against seed 001 Tables 4.1 and 4.2,
//! and the statistics each run reports.

mod common;

use common::*;
use flexmb::input::load_model_str;
use flexmb::integrate::IntegratorSpec;
use flexmb::output::MemoryRecorder;
use flexmb::run::RunSummary;

/// The integrator table of the [`common::oscillator`] runs.
const OSCILLATOR: &str = "method = \"rk4\"\ndt = 0.1\nt_end = 1.0";

fn rk(method: &str, over: IntegratorSpec) -> IntegratorSpec {
    IntegratorSpec {
        method: Some(method.into()),
        ..over
    }
}

fn oscillator(over: &IntegratorSpec) -> (RunSummary, MemoryRecorder) {
    run_file(
        load_model_str(&common::oscillator(OSCILLATOR), "oscillator").unwrap(),
        over,
    )
}

/// A nonlinear unconstrained problem: a unit mass on a spring (stiffness 10,
/// free length 0.5) to the origin, launched sideways from (1, 0) with
/// velocity (0.3, 1.5) under gravity.
const ORBIT: &str = r#"
schema = 1
dimension = 2
gravity = [0.0, -1.0]
[[node]]
id = "mass"
position = [1.0, 0.0]
velocity = [0.3, 1.5]
mass = 1.0
[[element]]
id = "spring"
type = "spring_damper"
a = "mass"
b = { ground = [0.0, 0.0] }
stiffness = 10.0
free_length = 0.5
[integrator]
method = "dopri5"
dt = 0.1
t_end = 1.0
"#;

/// Fixed-step order of each tableau on the oscillator at t = 1: errors at
/// dt = 0.1 / 2^k; the finest pair's order within 0.2 of the nominal one.
#[test]
fn fixed_step_orders() {
    for (method, nominal) in [("dopri5", 5.0), ("rk4", 4.0), ("heun", 2.0)] {
        let errors: Vec<f64> = (0..4)
            .map(|k| {
                let dt = 0.1 / f64::from(1 << k);
                let over = rk(
                    method,
                    IntegratorSpec {
                        step_control: Some("fixed".into()),
                        dt: Some(dt),
                        ..IntegratorSpec::default()
                    },
                );
                let (s, r) = oscillator(&over);
                assert!(s.failure.is_none(), "{}", s.line());
                let u = r.u.last().unwrap();
                let v = r.v.last().unwrap();
                let t: f64 = 1.0;
                (u[0] - (2.0 * t).cos())
                    .abs()
                    .max((v[0] + 2.0 * (2.0 * t).sin()).abs())
            })
            .collect();
        let p = order(errors[2], errors[3]);
        println!(
            "{method}: errors {:?}, finest order {p:.3}",
            errors
                .iter()
                .map(|e| format!("{e:.2e}"))
                .collect::<Vec<_>>()
        );
        assert!((p - nominal).abs() <= 0.2, "{method}: order {p}");
    }
}

/// DOPRI5's dense output is of order 4: over one step of size h from the
/// initial state of [`ORBIT`] (a nonlinear problem: on linear ones the
/// extension is more accurate), the interpolant's error at a quarter
/// of the step falls as h^5 (a continuous extension of order 4; at
/// mid-step Shampine's coefficients are of order 5) and the step's end as
/// h^6 (order 5). The reference is the same method with steps of h / 64.
#[test]
fn dense_output_order() {
    let one_step = |h: f64, dt: f64| {
        let over = IntegratorSpec {
            method: Some("dopri5".into()),
            step_control: Some("fixed".into()),
            dt: Some(dt),
            t_end: Some(h),
            ..IntegratorSpec::default()
        };
        let text = format!("{ORBIT}\n[output]\ndt_out = {}\n", h / 4.0);
        let file = load_model_str(&text, "orbit").unwrap();
        let (s, r) = run_file(file, &over);
        assert!(s.failure.is_none(), "{}", s.line());
        assert_eq!(r.time.len(), 5, "records at 0, h/4, .., h: {:?}", r.time);
        (r.u[1].clone(), r.u[4].clone())
    };
    let mut mid = Vec::new();
    let mut end = Vec::new();
    for k in 0..4 {
        let h = 0.2 / f64::from(1 << k);
        let (m, e) = one_step(h, h);
        let (m_ref, e_ref) = one_step(h, h / 64.0);
        mid.push(max_diff(&m, &m_ref));
        end.push(max_diff(&e, &e_ref));
    }
    let (pm, pe) = (order(mid[2], mid[3]), order(end[2], end[3]));
    println!(
        "one step: quarter-step errors {mid:?} (slope {pm:.3}), end errors {end:?} (slope {pe:.3})"
    );
    assert!(
        (4.7..=5.4).contains(&pm),
        "dense output: local error slope {pm}"
    );
    assert!(
        (5.6..=6.5).contains(&pe),
        "step end: local error slope {pe}"
    );
}

/// Adaptive DOPRI5 on the circular track (exact solution x = sin t^2,
/// y = cos t^2): the error at t = 1 is at most a small multiple of rtol and
/// falls with it, and more right-hand sides are spent on tighter tolerances.
#[test]
fn error_control_meets_rtol_on_circular_track() {
    let mut last_nfcn = 0.0;
    for rtol in [1e-4, 1e-6, 1e-8] {
        let over = IntegratorSpec {
            method: Some("dopri5".into()),
            rtol: Some(rtol),
            atol: Some(rtol),
            t_end: Some(1.0),
            ..IntegratorSpec::default()
        };
        let (s, r) = run("circle_track", &over);
        assert!(s.failure.is_none(), "{}", s.line());
        let u = r.u.last().unwrap();
        let err = (u[0] - 1f64.sin()).abs().max((u[1] - 1f64.cos()).abs());
        let nfcn = s.stat("nfcn").unwrap();
        println!("rtol {rtol:e}: error {err:.2e}, nfcn {nfcn}");
        assert!(err <= 10.0 * rtol, "rtol {rtol}: error {err}");
        assert!(nfcn > last_nfcn);
        last_nfcn = nfcn;
    }
}

/// The seed's counter identities: NFCN = 6 NSTEP + 2 for DOPRI5 (FSAL, f(t0)
/// and the initial-step evaluation), NSTEP = NACCP + NREJCT, NACCP = steps;
/// PStab with datol = 0 stabilizes every attempted step (NSTAB = NSTEP).
fn check_counters(s: &RunSummary, pstab: bool) {
    let st = |n: &str| s.stat(n).unwrap();
    assert_eq!(st("nfcn"), 6.0 * st("nstep") + 2.0, "{}", s.line());
    assert_eq!(st("nstep"), st("naccept") + st("nreject"), "{}", s.line());
    assert_eq!(st("naccept"), s.steps as f64, "{}", s.line());
    if pstab {
        assert_eq!(st("nstab"), st("nstep"), "{}", s.line());
    } else {
        assert_eq!(st("nstab"), 0.0, "{}", s.line());
    }
}

fn andrews(rtol: f64, stabilization: &str, datol: Option<f64>) -> RunSummary {
    let over = IntegratorSpec {
        method: Some("dopri5".into()),
        rtol: Some(rtol),
        atol: Some(rtol / 10.0),
        t_end: Some(0.3),
        stabilization: Some(stabilization.into()),
        baumgarte: (stabilization == "baumgarte").then_some([20.0, 100.0]),
        datol,
        ..IntegratorSpec::default()
    };
    let file = flexmb::input::load_model_with_sets(
        &std::fs::read_to_string(model_path("andrews")).unwrap(),
        "andrews.toml",
        &["output.dt_out = 0.003".to_string()],
    )
    .unwrap();
    let (s, _) = run_file(file, &over);
    assert!(s.failure.is_none(), "{}", s.line());
    s
}

/// Seed 001 Table 4.1 (Andrews on [0, 0.3], atol = rtol/10): NFCN and NSTEP
/// within 25 % of the seed for B(20, 100) and PStab at rtol 1e-4 .. 1e-7;
/// PStab never needs more NFCN than Baumgarte; PStab's position drift is
/// at least 100 times smaller.
#[test]
fn andrews_table_4_1() {
    // (rtol, [B NFCN, PStab NFCN, B NSTEP, PStab NSTEP]) of Table 4.1.
    let table = [
        (1e-4, [11150.0, 10784.0, 1858.0, 1791.0]),
        (1e-5, [17132.0, 17024.0, 2855.0, 2837.0]),
        (1e-6, [25625.0, 25592.0, 4275.0, 4265.0]),
        (1e-7, [38828.0, 38780.0, 6471.0, 6463.0]),
    ];
    for (rtol, seed) in table {
        let b = andrews(rtol, "baumgarte", None);
        let p = andrews(rtol, "pstab", None);
        check_counters(&b, false);
        check_counters(&p, true);
        let got = [
            b.stat("nfcn").unwrap(),
            p.stat("nfcn").unwrap(),
            b.stat("nstep").unwrap(),
            p.stat("nstep").unwrap(),
        ];
        let (db, dp) = (
            b.stat("drift_position").unwrap(),
            p.stat("drift_position").unwrap(),
        );
        println!(
            "rtol {rtol:e}: {}, \
             position drift B {db:.2e} PStab {dp:.2e}, velocity drift B {:.2e} PStab {:.2e}",
            counts_vs_seed(got, seed),
            b.stat("drift_velocity").unwrap(),
            p.stat("drift_velocity").unwrap()
        );
        for (g, s) in got.iter().zip(seed) {
            assert!((g / s - 1.0).abs() <= 0.25, "rtol {rtol}: {g} vs seed {s}");
        }
        assert!(
            got[1] <= got[0],
            "rtol {rtol}: PStab NFCN {} > Baumgarte {}",
            got[1],
            got[0]
        );
        assert!(
            dp * 100.0 <= db,
            "rtol {rtol}: drifts PStab {dp} Baumgarte {db}"
        );
    }
}

/// Seed 001 Table 4.2 (rtol 1e-5): NSTAB grows as datol shrinks, and datol = 0
/// stabilizes every step; NFCN stays within a few per cent.
#[test]
fn andrews_table_4_2_datol_sweep() {
    let mut last = -1.0;
    let mut nfcn = Vec::new();
    for datol in [1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 0.0] {
        let s = andrews(1e-5, "pstab", Some(datol));
        let nstab = s.stat("nstab").unwrap();
        println!(
            "datol {datol:e}: NFCN {} NSTEP {} NACCP {} NSTAB {nstab} (stabilization {:.1} % of the run)",
            s.stat("nfcn").unwrap(),
            s.stat("nstep").unwrap(),
            s.stat("naccept").unwrap(),
            100.0 * s.stat("stab_seconds").unwrap() / s.wall_seconds
        );
        assert!(nstab >= last, "datol {datol}: NSTAB {nstab} < {last}");
        last = nstab;
        nfcn.push(s.stat("nfcn").unwrap());
        if datol == 0.0 {
            assert_eq!(nstab, s.stat("nstep").unwrap());
        }
    }
    assert!(last > 0.0);
    let (lo, hi) = nfcn
        .iter()
        .fold((f64::MAX, 0.0_f64), |(a, b), x| (a.min(*x), b.max(*x)));
    assert!(hi / lo < 1.1, "NFCN {nfcn:?}");
}

/// Settings errors name the field.
#[test]
fn settings_errors_name_the_field() {
    let bad = |over: IntegratorSpec, field: &str| {
        let e = IntegratorSpec {
            t_end: Some(1.0),
            dt: Some(0.1),
            ..IntegratorSpec::default()
        }
        .overridden_by(&over)
        .resolve()
        .unwrap_err();
        assert_eq!(e.field, field, "{e}");
    };
    bad(rk("rk45", IntegratorSpec::default()), "method");
    bad(
        rk(
            "dopri5",
            IntegratorSpec {
                stabilization: Some("pstab".into()),
                pstab_passes: Some("three".into()),
                ..IntegratorSpec::default()
            },
        ),
        "pstab_passes",
    );
    bad(
        rk(
            "rk4",
            IntegratorSpec {
                step_control: Some("adaptive".into()),
                ..IntegratorSpec::default()
            },
        ),
        "step_control",
    );
    bad(
        rk(
            "dopri5",
            IntegratorSpec {
                stabilization: Some("baumgarte".into()),
                ..IntegratorSpec::default()
            },
        ),
        "baumgarte",
    );
    bad(
        rk(
            "dopri5",
            IntegratorSpec {
                stabilization: Some("pstab".into()),
                datol: Some(-1e-6),
                ..IntegratorSpec::default()
            },
        ),
        "datol",
    );
    bad(
        rk(
            "dopri5",
            IntegratorSpec {
                rtol: Some(-1.0),
                ..IntegratorSpec::default()
            },
        ),
        "rtol",
    );
    bad(
        rk(
            "dopri5",
            IntegratorSpec {
                rtol: Some(1e-16),
                ..IntegratorSpec::default()
            },
        ),
        "rtol",
    );
    // More than 1e9 fixed steps, for either family; roots without a family.
    bad(
        rk(
            "rk4",
            IntegratorSpec {
                t_end: Some(1e300),
                ..IntegratorSpec::default()
            },
        ),
        "dt",
    );
    bad(
        IntegratorSpec {
            dt: Some(1e-12),
            ..IntegratorSpec::default()
        },
        "dt",
    );
    bad(
        IntegratorSpec {
            scheme: Some("midpoint".into()),
            rho1: Some(0.5),
            ..IntegratorSpec::default()
        },
        "rho1",
    );
}
