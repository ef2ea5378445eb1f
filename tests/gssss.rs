//! SPEC.md §0: GSSSS coefficients (seed 000 Ch. 2, Algorithms 1 and 2,
//! Table 2.1), spectral radii at w dt -> infinity, non-dissipation of the
//! three seed algorithms and second-order accuracy of every preset on the
//! linear oscillator a + w^2 u = 0.

use flexmb::integrate::{Family, Gssss, IntegratorSpec, LinearScheme, SolveForm, State};
use flexmb::load::TimeFunction;
use flexmb::model::{Model, ModelBuilder, PointRef};
use flexmb::output::{MemoryRecorder, OutputConfig};
use flexmb::run::Simulation;
use nalgebra::{Matrix3, Vector3};

/// Every named preset with its (family, rho1, rho2, rho3) from SPEC.md §0.
fn presets() -> Vec<(&'static str, Family, [f64; 3])> {
    let hht3 = (1.0 - 0.8) / (2.0 * 0.8);
    vec![
        ("newmark", Family::U0, [1.0, 1.0, 0.0]),
        ("midpoint-endpoint", Family::U0, [1.0, 1.0, 1.0]),
        ("midpoint", Family::V0, [1.0, 1.0, 0.0]),
        ("generalized-alpha(0.8)", Family::U0, [0.8, 0.8, 0.8]),
        ("generalized-alpha(0.5)", Family::U0, [0.5, 0.5, 0.5]),
        ("wbz(0.8)", Family::U0, [0.8, 0.8, 0.0]),
        ("hht(0.8)", Family::U0, [0.8, 0.8, hht3]),
        ("u0v0-optimal(0.6)", Family::U0, [0.6, 1.0, 0.6]),
    ]
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 1e-14, "{what}: {a} != {b}");
}

#[test]
fn presets_resolve_to_their_parameters() {
    for (name, family, rho) in presets() {
        let (f, r) = flexmb::integrate::gssss::preset(name).unwrap();
        assert_eq!(f, family, "{name}");
        for k in 0..3 {
            close(r[k], rho[k], name);
        }
    }
    assert!(flexmb::integrate::gssss::preset("generalized-alpha").is_err());
    assert!(flexmb::integrate::gssss::preset("no-such-scheme").is_err());
    assert!(
        Gssss::new(Family::U0, [0.5, 0.4, 0.0]).is_err(),
        "rho1 > rho2 must be refused"
    );
}

#[test]
fn coefficients_of_the_seed_algorithms() {
    // U0: W1 = 1/(1 + rho3).
    for rho3 in [0.0, 0.25, 0.5, 1.0] {
        let g = Gssss::new(Family::U0, [1.0, 1.0, rho3]).unwrap();
        close(g.w[0], 1.0 / (1.0 + rho3), "U0 W1");
    }
    // U0(1,1,0) = Newmark average acceleration: EOM at t_{n+1},
    // u_{n+1} = u + dt v + dt^2 (a/2 + da/4), v_{n+1} = v + dt (a + da/2).
    let nm = Gssss::new(Family::U0, [1.0, 1.0, 0.0]).unwrap();
    for (k, x) in [1.0, 0.5, 0.25, 1.0, 0.5].iter().enumerate() {
        close(nm.lam[k], *x, "Newmark lambda");
    }
    for (k, x) in [1.0, 0.5, 0.25, 1.0, 0.5, 1.0].iter().enumerate() {
        close(nm.wl[k], *x, "Newmark W Lambda");
    }
    // U0(1,1,1) and V0(1,1,1) coincide, W1 = 1/2.
    let u111 = Gssss::new(Family::U0, [1.0, 1.0, 1.0]).unwrap();
    let v111 = Gssss::new(Family::V0, [1.0, 1.0, 1.0]).unwrap();
    close(u111.w[0], 0.5, "U0(1,1,1) W1");
    for k in 0..6 {
        close(u111.wl[k], v111.wl[k], "U0/V0(1,1,1) W Lambda");
    }
    for k in 0..5 {
        close(u111.lam[k], v111.lam[k], "U0/V0(1,1,1) lambda");
    }
    // V0(1,1,0), eqs. 3.34–3.39.
    let v110 = Gssss::new(Family::V0, [1.0, 1.0, 0.0]).unwrap();
    for k in 0..3 {
        close(v110.w[k], 0.5, "V0(1,1,0) W");
    }
    for (k, x) in [1.0, 0.5, 0.5, 1.0, 1.0, 2.0].iter().enumerate() {
        close(v110.big_lambda()[k], *x, "V0(1,1,0) Lambda");
    }
    for (k, x) in [1.0, 0.5, 0.5, 1.0, 1.0].iter().enumerate() {
        close(v110.lam[k], *x, "V0(1,1,0) lambda");
    }
}

/// The step map x_{n+1} = A x_n, x = (u, v, a), of `s` on a + w^2 u = 0 with
/// the equation of motion at the scheme's time level: a~ + w^2 u~ = 0.
fn amplification(s: &LinearScheme, w2: f64) -> Matrix3<f64> {
    let mut a = Matrix3::zeros();
    for j in 0..3 {
        let x = Vector3::from_fn(|i, _| if i == j { 1.0 } else { 0.0 });
        let lin = |f: &[f64; 4]| f[0] * x[0] + f[1] * x[1] + f[2] * x[2];
        let da = -(lin(&s.a_tilde) + w2 * lin(&s.u_tilde)) / (s.a_tilde[3] + w2 * s.u_tilde[3]);
        a[(0, j)] = lin(&s.u_next) + s.u_next[3] * da;
        a[(1, j)] = lin(&s.v_next) + s.v_next[3] * da;
        a[(2, j)] = x[2] + da;
    }
    a
}

fn moduli(a: &Matrix3<f64>) -> Vec<f64> {
    let mut m: Vec<f64> = a.complex_eigenvalues().iter().map(|z| z.norm()).collect();
    m.sort_by(f64::total_cmp);
    m
}

#[test]
fn spectral_radius_at_infinity_is_the_design_value() {
    for (name, family, rho) in presets() {
        let s = Gssss::new(family, rho).unwrap().scheme(SolveForm::A, 1.0);
        let got = moduli(&amplification(&s, 1e12));
        let mut want = rho.to_vec();
        want.sort_by(f64::total_cmp);
        println!("{name}: |roots| at w dt = 1e6: {got:.5?}, designed {want:.5?}");
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 2e-3, "{name}: roots {got:?} vs {want:?}");
        }
    }
}

#[test]
fn seed_algorithms_do_not_dissipate() {
    for name in ["newmark", "midpoint-endpoint", "midpoint"] {
        let (family, rho) = flexmb::integrate::gssss::preset(name).unwrap();
        let s = Gssss::new(family, rho).unwrap().scheme(SolveForm::A, 1.0);
        for wdt in [0.01, 0.1, 1.0, 3.0, 10.0, 100.0, 1e3] {
            let m = moduli(&amplification(&s, wdt * wdt));
            // The two principal roots lie on the unit circle.
            assert!(
                (m[1] - 1.0).abs() < 1e-9 && (m[2] - 1.0).abs() < 1e-9,
                "{name} w dt {wdt}: {m:?}"
            );
        }
    }
    // A dissipative preset as control: its principal roots leave the unit circle.
    let s = Gssss::new(Family::U0, [0.8, 0.8, 0.8])
        .unwrap()
        .scheme(SolveForm::A, 1.0);
    assert!(moduli(&amplification(&s, 100.0))[2] < 0.99);
}

/// A unit mass on a linear spring F = -w^2 u (a linear-field load) in the plane.
fn oscillator(w: f64) -> Model {
    let mut b = ModelBuilder::new(2).unwrap();
    b.node("m", &[1.0, 0.0], Some(&[0.0, 0.0]), 1.0).unwrap();
    let k = w * w;
    let matrix = [[-k, 0.0, 0.0], [0.0, -k, 0.0], [0.0, 0.0, 0.0]];
    b.point_load(
        "spring",
        "linear_field",
        &PointRef::Entity("m".into()),
        matrix,
        [0.0; 3],
        TimeFunction::Constant,
    )
    .unwrap();
    b.build().unwrap()
}

fn integrator_spec(name: &str, form: &str, dt: f64, t_end: f64) -> IntegratorSpec {
    IntegratorSpec {
        scheme: Some(name.into()),
        form: Some(form.into()),
        dt: Some(dt),
        t_end: Some(t_end),
        tol: Some(1e-12),
        ..IntegratorSpec::default()
    }
}

/// The Newton integrator takes exactly the step of the amplification matrix
/// (so the spectral properties above are those of the code that runs), in
/// the a-, v- and d-forms.
#[test]
fn integrator_step_equals_amplification_matrix() {
    let w = 3.0;
    let sim = Simulation::new(oscillator(w));
    let sys = sim.mechanics();
    for (name, family, rho) in presets() {
        for (form, sf) in [
            ("a", SolveForm::A),
            ("v", SolveForm::V),
            ("d", SolveForm::D),
        ] {
            let dt = 0.7;
            let config = integrator_spec(name, form, dt, 1.0).resolve().unwrap();
            let mut integ = config.build(&sys).unwrap();
            let mut state = State::initial(&sim.mechanics());
            integ.start(&sys, &mut state).unwrap();
            let x0 = Vector3::new(0.3, -1.1, 0.4);
            state.u = vec![x0[0], 0.0];
            state.v = vec![x0[1], 0.0];
            state.a = vec![x0[2], 0.0];
            {
                let t = state.t + dt;
                integ.advance(&sys, &mut state, t)
            }
            .unwrap();
            let s = Gssss::new(family, rho).unwrap().scheme(sf, dt);
            let want = amplification(&s, w * w) * x0;
            let got = Vector3::new(state.u[0], state.v[0], state.a[0]);
            assert!(
                (got - want).amax() < 1e-10,
                "{name} {form}-form: {got:?} vs {want:?}"
            );
        }
    }
}

/// Second order in u, v and (aligned) a for every preset: w = 1, u(0) = 1,
/// exact u = cos t, to t = 1 with dt = 1/8 .. 1/64.
#[test]
fn second_order_on_the_oscillator() {
    let sim = Simulation::new(oscillator(1.0));
    for (name, _, _) in presets() {
        let errors: Vec<[f64; 3]> = (3..=6)
            .map(|k| {
                let config = integrator_spec(name, "a", 2f64.powi(-k), 1.0)
                    .resolve()
                    .unwrap();
                let mut rec = MemoryRecorder::default();
                let s = sim
                    .run(&config, "", &OutputConfig::default(), &mut rec, &mut |_| {})
                    .unwrap();
                assert!(s.failure.is_none());
                let last = rec.time.len() - 1;
                let t = rec.time[last];
                [
                    (rec.u[last][0] - t.cos()).abs(),
                    (rec.v[last][0] + t.sin()).abs(),
                    (rec.a[last][0] + t.cos()).abs(),
                ]
            })
            .collect();
        let orders: Vec<f64> = (0..3)
            .map(|q| (errors[2][q] / errors[3][q]).log2())
            .collect();
        println!("{name}: orders (u, v, a) {orders:.3?}");
        for (q, p) in orders.iter().enumerate() {
            assert!(
                (1.9..=2.1).contains(p),
                "{name}: order {p:.3} in variable {q}"
            );
        }
    }
}

/// Command-line settings replace the file's: a preset replaces a family and a
/// family replaces a preset; one table giving both is refused.
#[test]
fn integrator_overrides_replace_scheme_or_family() {
    let family = IntegratorSpec {
        family: Some("v0".into()),
        rho1: Some(0.5),
        rho2: Some(0.8),
        rho3: Some(0.2),
        dt: Some(0.1),
        t_end: Some(1.0),
        ..IntegratorSpec::default()
    };
    let preset = IntegratorSpec {
        scheme: Some("newmark".into()),
        ..IntegratorSpec::default()
    };
    let label = |s: &IntegratorSpec| s.resolve().unwrap().label();
    assert!(
        label(&family).contains("V0(0.5,0.8,0.2)"),
        "{}",
        label(&family)
    );
    let a = family.overridden_by(&preset);
    assert!(label(&a).contains("U0(1,1,0) [newmark]"), "{}", label(&a));
    let b = a.overridden_by(&IntegratorSpec {
        family: Some("u0".into()),
        rho1: Some(0.9),
        rho2: Some(0.9),
        rho3: Some(0.9),
        ..IntegratorSpec::default()
    });
    assert!(label(&b).contains("U0(0.9,0.9,0.9)"), "{}", label(&b));
    let both = IntegratorSpec {
        scheme: Some("midpoint".into()),
        ..family.clone()
    };
    assert_eq!(both.resolve().unwrap_err().field, "family");
}

/// The schemes that ask the elements for their discrete gradients
/// (`Variant::midpoint_level`, an exact test of the parameters) are those
/// whose EOM level is the step's midpoint, `u~ = (u_n + u_{n+1})/2`, in every
/// form: V0(1,1,rho3) for any rho3, U0(1,1,1) and the two-field form; no
/// other member on a grid of the admissible (rho1, rho2, rho3).
#[test]
fn discrete_gradient_schemes_are_the_midpoint_ones() {
    use flexmb::integrate::gssss::{two_field_scheme, Variant};
    let grid = [0.0, 0.3, 0.5, 0.8, 0.99, 1.0];
    let mut midpoints = vec![];
    for family in [Family::U0, Family::V0] {
        for &r2 in &grid {
            for &r1 in grid.iter().filter(|&&r| r <= r2) {
                for &r3 in grid.iter().filter(|&&r| r <= r1) {
                    let coefficients = Gssss::new(family, [r1, r2, r3]).expect("admissible");
                    for form in [SolveForm::A, SolveForm::V, SolveForm::D] {
                        let variant = Variant::Single { coefficients, form };
                        let w = variant.scheme(0.01).level_weights();
                        assert_eq!(
                            variant.midpoint_level(),
                            w.is_midpoint(),
                            "{} {form:?}: {w:?}",
                            coefficients.label()
                        );
                    }
                    if coefficients.midpoint_level() {
                        midpoints.push(coefficients.label());
                    }
                }
            }
        }
    }
    assert_eq!(
        midpoints,
        [
            "U0(1,1,1)",
            "V0(1,1,0)",
            "V0(1,1,0.3)",
            "V0(1,1,0.5)",
            "V0(1,1,0.8)",
            "V0(1,1,0.99)",
            "V0(1,1,1)"
        ]
    );
    assert!(Variant::TwoField.midpoint_level());
    assert!(two_field_scheme(0.01).level_weights().is_midpoint());
}
