//! Seed 002 (Lens & Cardona 2007, SPEC.md §2): the Galerkin schemes on the
//! seed's cases a–d (`models/seed002_*.toml`), docs/theory/galerkin.md.

mod common;

use common::*;
use flexmb::assembly::Assembler;
use flexmb::assembly::Mechanics;
use flexmb::input::load_model_file;
use flexmb::integrate::galerkin::{Kappa, Scheme, Tdg, TdgSettings};
use flexmb::integrate::newton::DriverSettings;
use flexmb::integrate::{IntegratorSpec, Method, State};
use flexmb::output::MemoryRecorder;
use flexmb::run::Simulation;

/// g = 9.81 (fixed in the model files; not in the seed).
const G: f64 = 9.81;

/// Energy scale of case `c` for the relative error: m g l = 9.81 for a and b
/// (E0 = 0 there) and E0 = m2 g l = 9.81 for c and d.
fn energy_scale(_case: &str) -> f64 {
    G
}

fn method(name: &str, dt: f64, t_end: f64) -> IntegratorSpec {
    IntegratorSpec {
        method: Some(name.into()),
        dt: Some(dt),
        t_end: Some(t_end),
        ..IntegratorSpec::default()
    }
}

/// Largest |E - E0| over the run, relative to the case's energy scale.
fn energy_drift(case: &str, rec: &MemoryRecorder) -> f64 {
    max_energy_change(&rec.energy) / energy_scale(case)
}

/// Largest step-to-step rise of the total energy and the loss E_0 - E_end.
fn rise_and_loss(rec: &MemoryRecorder) -> (f64, f64) {
    let rises = rec
        .energy
        .windows(2)
        .map(|w| w[1].total - w[0].total)
        .fold(f64::NEG_INFINITY, f64::max);
    let loss = rec.energy[0].total - rec.energy.last().unwrap().total;
    (rises, loss)
}

/// TCG (eq. 14 with eqs. 18–21) conserves the energy of cases a–c to
/// round-off: relative <= 1e-12 over 1000 steps of h = 0.01 (eq. 22).
#[test]
fn tcg_conserves_energy_on_cases_a_to_c() {
    for case in ["a", "b", "c"] {
        let name = format!("seed002_{case}");
        let (s, rec) = run(&name, &method("tcg", 0.01, 10.0));
        assert!(s.failure.is_none(), "{name}: {}", s.line());
        assert_eq!(rec.time.len(), 1001, "{name}");
        let drift = energy_drift(case, &rec);
        println!("case {case}: TCG max |E - E0| / (m g l) = {drift:.2e}");
        assert!(drift <= 1e-12, "case {case}: {drift:e}");
    }
}

fn tdg(alpha: f64, dt: f64, t_end: f64, rtol: f64) -> IntegratorSpec {
    IntegratorSpec {
        alpha: Some(alpha),
        rtol: Some(rtol),
        ..method("tdg", dt, t_end)
    }
}

/// TDG with alpha = 0 (eq. 47) conserves the energy (eqs. 52–53 with
/// alpha = 0) but locks on the constrained pendulum (Figs. 14–16, §5.2.4):
/// the velocity drifts off the hidden constraint B v = 0 (the digest's
/// scratch run: the mass ends at the bottom with a purely radial |v| of
/// sqrt(2 g l) = 4.43; flexmb's B v = q.v = |v| l). The energy is conserved
/// to the Newton tolerance (rtol 1e-10), not to round-off: the jump state's
/// equations are solved to that tolerance.
#[test]
fn tdg_alpha0_conserves_energy_and_locks_on_case_b() {
    let (s, rec) = run("seed002_b", &tdg(0.0, 0.01, 10.0, 1e-10));
    assert!(s.failure.is_none(), "{}", s.line());
    let drift = energy_drift("b", &rec);
    let locked = max_constraint(&rec.constraints, |c| c.velocity);
    println!("TDG alpha = 0, case b: energy {drift:.2e}, max |B v| {locked:.3}");
    assert!(drift <= 1e-10, "{drift:e}");
    assert!(locked > 4.0 && locked < (2.0 * G).sqrt() + 1e-6, "{locked}");
}

/// TDG with alpha > 0 dissipates at every step (eqs. 41–43, 52–53:
/// E_{n+1} - E_n = -alpha (K_nj + V_nj) <= 0 for the linear gravity
/// potential) on cases a–c, up to the round-off of the energy (1e-12 m g l);
/// and on case b alpha = 1 is not the most dissipative (Fig. 17, "the
/// greatest amount of dissipation is not obtained for alpha = 1").
#[test]
fn tdg_energy_decays_monotonically() {
    let mut loss_b = Vec::new();
    for case in ["a", "b", "c"] {
        for alpha in [0.1, 0.5, 1.0] {
            let name = format!("seed002_{case}");
            let (s, rec) = run(&name, &tdg(alpha, 0.01, 10.0, 1e-10));
            assert!(s.failure.is_none(), "{name} alpha {alpha}: {}", s.line());
            let (rises, loss) = rise_and_loss(&rec);
            println!("case {case}, alpha {alpha}: largest rise {rises:.2e}, loss {loss:.4}");
            assert!(
                rises <= 1e-12 * energy_scale(case),
                "{name} alpha {alpha}: {rises:e}"
            );
            assert!(loss > 0.0, "{name} alpha {alpha}: {loss}");
            if case == "b" {
                loss_b.push(loss);
            }
        }
    }
    assert!(loss_b[0] > loss_b[2], "{loss_b:?}");
}

/// The TDG and alpha–kappa (kappa = 1.1) block Newton matrices (module doc
/// of `integrate::galerkin`) are the derivatives of their residuals, checked
/// by 4th-order central differences at a perturbed state for alpha = 0.3 on: the double pendulum (planar bodies,
/// pins with trigonometric rows: Gonzalez's correction of B* at work), case d
/// (quadratic constraints) and the 40-element hanging beam (the beams'
/// discrete gradients; their symmetry in the two states gives the
/// first-state derivatives). The element terms are the same code in both
/// schemes and are checked with TDG: alpha–kappa's matrix has no
/// 1/h^2 mass terms, and relative to its largest entry the beam's own
/// discrete-gradient tangent differs from differences by 4.6e-6 at this
/// state (the split between the two states' derivatives; their sum agrees).
#[test]
fn tdg_newton_matrix_against_finite_differences() {
    let cases = [
        ("double_pendulum", 0.01, Scheme::Tdg),
        ("seed002_d", 0.01, Scheme::Tdg),
        ("hanging_beam", 1e-3, Scheme::Tdg),
        (
            "double_pendulum",
            0.01,
            Scheme::AlphaKappa(Kappa::Fixed(1.1)),
        ),
        ("seed002_d", 0.01, Scheme::AlphaKappa(Kappa::Fixed(1.1))),
    ];
    for (name, h, scheme) in cases {
        let model = load_model_file(model_path(name)).unwrap().model;
        let asm = Assembler::new(&model);
        let sys = Mechanics::new(&model, &asm);
        let settings = TdgSettings {
            scheme,
            alpha: 0.3,
            dt: h,
            newton: DriverSettings {
                rtol: 1e-6,
                max_iter: 10,
                ..DriverSettings::default()
            },
        };
        let mut tdg = Tdg::new(&sys, settings.identity(), settings, Default::default()).unwrap();
        let (n, m) = (model.n_dofs(), model.n_constraints());
        let mut rng = fd::Rng(7);
        let qn: Vec<f64> = rng.around(&model.u0, 0.01);
        let vn: Vec<f64> = rng.around(&model.v0, 5.0);
        let blocks = if scheme == Scheme::Tdg { 2 } else { 4 };
        let mut x = Vec::with_capacity(blocks * (n + m));
        for b in 0..blocks {
            if b < 2 {
                x.extend(
                    qn.iter()
                        .zip(&vn)
                        .map(|(q, v)| q + h * v + rng.range(-1e-3, 1e-3) * h),
                );
            } else {
                x.extend(vn.iter().map(|v| v + rng.range(-0.1, 0.1)));
            }
            x.extend((0..m).map(|_| rng.range(-2.0, 2.0)));
        }
        let dim = x.len();
        let pattern = tdg.block_pattern().clone();
        let mut values = vec![0.0; pattern.nnz()];
        let mut res = vec![0.0; dim];
        tdg.eval(&sys, &qn, &vn, 0.0, h, &x, &mut res, &mut values);
        let a = pattern.to_csc(&values).to_dense();
        let mut scratch = vec![0.0; pattern.nnz()];
        let fdj = fd::fd_jacobian_h(&x, 1e-5, dim, |xp, out| {
            tdg.eval(&sys, &qn, &vn, 0.0, h, xp, out, &mut scratch)
        });
        // As tests/tangents.rs: relative to the largest entry, tolerance
        // `TOL` = 1e-6; for the models without elements also row by row
        // (constraint rows are O(1), equations of motion O(M/h^2)). The
        // beam's own discrete-gradient tangent differs from differences by
        // up to 4e-6 of its row's largest entry at this state (bending
        // entries of a row dominated by the axial stiffness; the element's
        // contract is checked block-relative in tests/tangents.rs).
        let whole = a.iter().fold(0.0_f64, |s, v| s.max(v.abs()));
        let rowwise = model.elements.is_empty();
        let mut worst = 0.0_f64;
        for r in 0..dim {
            let scale = if rowwise {
                (0..dim)
                    .fold(0.0_f64, |s, c| s.max(a[[r, c]].abs()))
                    .max(1.0)
            } else {
                whole
            };
            for c in 0..dim {
                worst = worst.max((a[[r, c]] - fdj[r * dim + c]).abs() / scale);
            }
        }
        let what = if rowwise { "row-relative" } else { "relative" };
        println!("{name} {scheme:?}: dim {dim}, max {what} |A - FD| = {worst:.2e}");
        assert!(worst <= 1e-6, "{name}: {worst:e}");
    }
}

/// The alpha–kappa Newton solve by block elimination of the velocities
/// (`galerkin/reduce.rs`, docs/theory/galerkin.md §5) equals the full block
/// system's dense LU solve to round-off, at random states of the double
/// pendulum (singular M: zero rotational inertia) and the four-mass system,
/// for several alpha and kappa; the stepper takes that path on both models.
#[test]
fn alpha_kappa_reduced_solve_equals_full_solve() {
    use flexmb::integrate::galerkin::reduce::Reduction;
    for name in ["double_pendulum", "four_mass"] {
        let model = load_model_file(model_path(name)).unwrap().model;
        let asm = Assembler::new(&model);
        let sys = Mechanics::new(&model, &asm);
        let (n, m) = (model.n_dofs(), model.n_constraints());
        let nb = n + m;
        for (alpha, kappa, seed) in [(1.0, 1.0, 3), (0.3, 1.1, 5), (0.0, 0.97, 11)] {
            let h = 0.01;
            let settings = TdgSettings {
                scheme: Scheme::AlphaKappa(Kappa::Fixed(kappa)),
                alpha,
                dt: h,
                newton: DriverSettings {
                    rtol: 1e-8,
                    max_iter: 10,
                    ..DriverSettings::default()
                },
            };
            let mut tdg =
                Tdg::new(&sys, settings.identity(), settings, Default::default()).unwrap();
            assert!(
                tdg.describe_solver().starts_with("block elimination"),
                "{name}: {}",
                tdg.describe_solver()
            );
            let mut rng = fd::Rng(seed);
            let qn: Vec<f64> = rng.around(&model.u0, 0.01);
            let vn: Vec<f64> = rng.around(&model.v0, 2.0);
            let mut x = Vec::with_capacity(4 * nb);
            for b in 0..4 {
                if b < 2 {
                    x.extend(
                        qn.iter()
                            .zip(&vn)
                            .map(|(q, v)| q + h * v + rng.range(-1e-3, 1e-3)),
                    );
                } else {
                    x.extend(vn.iter().map(|v| v + rng.range(-0.1, 0.1)));
                }
                x.extend((0..m).map(|_| rng.range(-2.0, 2.0)));
            }
            let pattern = tdg.block_pattern().clone();
            let mut values = vec![0.0; pattern.nnz()];
            let mut res = vec![0.0; 4 * nb];
            tdg.eval(&sys, &qn, &vn, 0.0, h, &x, &mut res, &mut values);
            let a = pattern.to_csc(&values).to_dense();
            let a = nalgebra::DMatrix::from_fn(4 * nb, 4 * nb, |r, c| a[[r, c]]);
            let full = a
                .lu()
                .solve(&nalgebra::DVector::from_iterator(
                    4 * nb,
                    res.iter().map(|r| -r),
                ))
                .expect("nonsingular block matrix");
            let mut red = Reduction::new(&pattern, n, nb, alpha, false)
                .unwrap()
                .expect("dense-sized reduced system");
            red.factor(&values).unwrap();
            let mut dx: Vec<f64> = res.iter().map(|r| -r).collect();
            red.solve(&mut dx).unwrap();
            let scale = full.iter().fold(0.0_f64, |s, v| s.max(v.abs()));
            let diff = dx
                .iter()
                .zip(full.iter())
                .fold(0.0_f64, |s, (a, b)| s.max((a - b).abs()));
            println!("{name} alpha {alpha} kappa {kappa}: max |reduced - full| = {diff:.2e} of {scale:.2e}");
            assert!(diff <= 1e-10 * scale, "{name}: {diff:e} of {scale:e}");
        }
    }
}

/// Alpha–kappa with kappa from eq. 71: the exact Newton matrix is the block
/// matrix (kappa held) plus the rank-one `u g^T` of
/// [`Tdg::kappa_derivative`] (the stepper solves with it by Sherman–Morrison),
/// checked by 4th-order central differences on the double pendulum and case
/// d at states where eq. 71 is not clamped (h = 0.5: kappa in [0.75, 1.25]).
/// The rank-one part is not negligible there (at least 1e-3 of the largest
/// entry), so the check fails without it.
#[test]
fn alpha_kappa_exact_newton_matrix_with_kappa_derivative() {
    for name in ["double_pendulum", "seed002_d"] {
        let model = load_model_file(model_path(name)).unwrap().model;
        let asm = Assembler::new(&model);
        let sys = Mechanics::new(&model, &asm);
        let h = 0.5;
        let settings = TdgSettings {
            scheme: Scheme::AlphaKappa(Kappa::Auto),
            alpha: 0.3,
            dt: h,
            newton: DriverSettings {
                rtol: 1e-6,
                max_iter: 10,
                ..DriverSettings::default()
            },
        };
        let mut tdg = Tdg::new(&sys, settings.identity(), settings, Default::default()).unwrap();
        let (n, m) = (model.n_dofs(), model.n_constraints());
        let nb = n + m;
        let dim = 4 * nb;
        let pattern = tdg.block_pattern().clone();
        let mut values = vec![0.0; pattern.nnz()];
        let mut res = vec![0.0; dim];
        let mut checked = 0;
        for seed in 1..200 {
            let mut rng = fd::Rng(seed);
            let qn: Vec<f64> = model
                .u0
                .iter()
                .map(|u| u + rng.range(-0.01, 0.01))
                .collect();
            let vn: Vec<f64> = model.v0.iter().map(|v| v + rng.range(-1.0, 1.0)).collect();
            let mut x = Vec::with_capacity(dim);
            for b in 0..4 {
                if b < 2 {
                    x.extend(qn.iter().zip(&vn).map(|(q, v)| q + 1e-3 * v));
                } else {
                    x.extend(vn.iter().map(|v| v + rng.range(-0.1, 0.1)));
                }
                x.extend((0..m).map(|_| rng.range(-0.5, 0.5)));
            }
            tdg.eval(&sys, &qn, &vn, 0.0, h, &x, &mut res, &mut values);
            let Some((u, g)) = tdg.kappa_derivative() else {
                continue;
            };
            let (u, g) = (u.to_vec(), g.to_vec());
            let a = pattern.to_csc(&values).to_dense();
            let mut scratch = vec![0.0; pattern.nnz()];
            let fdj = fd::fd_jacobian_h(&x, 1e-6, dim, |xp, out| {
                tdg.eval(&sys, &qn, &vn, 0.0, h, xp, out, &mut scratch)
            });
            let whole = a.iter().fold(0.0_f64, |s, v| s.max(v.abs()));
            let (mut worst, mut rank_one) = (0.0_f64, 0.0_f64);
            for r in 0..dim {
                for c in 0..dim {
                    let exact = a[[r, c]] + u[r] * g[c];
                    worst = worst.max((exact - fdj[r * dim + c]).abs() / whole);
                    rank_one = rank_one.max((u[r] * g[c]).abs() / whole);
                }
            }
            println!(
                "{name} seed {seed}: max relative |J0 + u g^T - FD| = {worst:.2e}, \
                 largest rank-one entry {rank_one:.2e}"
            );
            assert!(worst <= 1e-6, "{name} seed {seed}: {worst:e}");
            assert!(rank_one >= 1e-3, "{name} seed {seed}: {rank_one:e}");
            checked += 1;
            if checked == 3 {
                break;
            }
        }
        assert_eq!(checked, 3, "{name}: no unclamped state in 200 tries");
    }
}

/// A free truss (EA = 50, stretched by 20 % and spinning, no constraint,
/// no gravity): an unconstrained conservative system.
const FREE_TRUSS: &str = r#"
schema = 1
title = "free truss"
dimension = 2
[[node]]
id = "a"
position = [0.0, 0.0]
velocity = [0.0, -1.0]
mass = 1.0
[[node]]
id = "b"
position = [1.2, 0.0]
velocity = [0.0, 1.0]
mass = 1.0
[[element]]
id = "t"
type = "truss"
nodes = ["a", "b"]
ea = 50.0
rest_length = 1.0
[integrator]
method = "tdg"
dt = 0.01
t_end = 1.0
"#;

/// Errors at t_end of runs with steps `t_end / k` against a run 16 times
/// finer than the finest: (displacement errors, multiplier errors).
fn errors(run_h: impl Fn(f64) -> (Vec<f64>, Vec<f64>), t_end: f64) -> (Vec<f64>, Vec<f64>) {
    let (u_ref, l_ref) = run_h(t_end / 3200.0);
    let mut eu = Vec::new();
    let mut el = Vec::new();
    for k in [25.0, 50.0, 100.0, 200.0] {
        let (u, l) = run_h(t_end / k);
        eu.push(max_diff(&u, &u_ref));
        el.push(max_diff(&l, &l_ref));
    }
    (eu, el)
}

/// Convergence of TDG (alpha = 1) under refinement, T/25 .. T/200 against a
/// 16 times finer step, finest-pair orders. On the unconstrained free truss
/// the displacements converge at second order (1.9–2.2; the discrete
/// gradients are second-order quadratures of eq. 45). On case b the
/// solution converges (no locking at alpha = 1) but at first order in the
/// displacements and the multiplier (0.9–1.2): TDG has no velocity
/// constraint and drifts at velocity level (§5.2.4), which is what the
/// alpha–kappa scheme (§5.3, Fig. 24's second order) corrects.
#[test]
fn tdg_orders() {
    let t_end = 0.5;
    let last = |rec: &MemoryRecorder| {
        assert!((rec.time.last().unwrap() - t_end).abs() < 1e-12);
        (
            rec.u.last().unwrap().clone(),
            rec.lambda.last().unwrap().clone(),
        )
    };
    let (eu, _) = errors(
        |h| {
            let file = flexmb::input::load_model_with_sets(FREE_TRUSS, "free_truss", &[]).unwrap();
            let (s, rec) = run_file(file, &tdg(1.0, h, t_end, 1e-12));
            assert!(s.failure.is_none(), "h = {h}: {}", s.line());
            last(&rec)
        },
        t_end,
    );
    let ou = order(eu[2], eu[3]);
    println!("TDG free truss: u errors {eu:?}, order {ou:.3}");
    assert!(
        (1.9..=2.2).contains(&ou),
        "free truss displacement order {ou}"
    );

    let (eu, el) = errors(
        |h| {
            let (s, rec) = run("seed002_b", &tdg(1.0, h, t_end, 1e-12));
            assert!(s.failure.is_none(), "h = {h}: {}", s.line());
            last(&rec)
        },
        t_end,
    );
    let (ou, ol) = (order(eu[2], eu[3]), order(el[2], el[3]));
    println!("TDG case b: u errors {eu:?}, order {ou:.3}; lambda errors {el:?}, order {ol:.3}");
    assert!((0.9..=1.2).contains(&ou), "case b displacement order {ou}");
    assert!((0.9..=1.2).contains(&ol), "case b multiplier order {ol}");
}

/// Case d (m1 = 0.005, m2 = 1, §5.3.5), the preserving scheme on both sides
/// of the seed's limit: TCG fails at h = 0.01 (Newton, t = 5.41 s) and runs
/// the 10 s at the seed's h = 0.001 with its energy conserved to the Newton
/// tolerance (it also runs at h = 0.005 and 0.002, so the seed's
/// "h = 0.001" holds only as a bound). TDG (alpha = 1, eq. 28) damps the
/// spurious oscillations at h = 0.002 and runs the 10 s. Not reproduced: the
/// seed's h = 0.01 for the dissipative scheme. At h = 0.01 TDG's Newton
/// fails at the "snap" of the chain near t = 0.74 s, as alpha–kappa does
/// (`alpha_kappa_case_d`), recorded here so that a change shows.
#[test]
fn case_d_stiff_double_pendulum() {
    let (s, rec) = run("seed002_d", &method("tcg", 0.01, 10.0));
    let reached = *rec.time.last().unwrap();
    println!("TCG h = 0.01: {}", s.line());
    assert!(
        s.failure.is_some() && (5.3..5.5).contains(&reached),
        "TCG h = 0.01: {reached}"
    );
    let (s, rec) = run("seed002_d", &method("tcg", 0.001, 10.0));
    assert!(s.failure.is_none(), "TCG h = 0.001: {}", s.line());
    let drift = energy_drift("d", &rec);
    println!("TCG h = 0.001: 10 s, energy {drift:.2e}");
    assert!(drift <= 1e-8, "{drift:e}");
    let (s, _) = run("seed002_d", &tdg(1.0, 0.002, 10.0, 1e-6));
    assert!(s.failure.is_none(), "TDG h = 0.002: {}", s.line());
    let (s, rec) = run("seed002_d", &tdg(1.0, 0.01, 10.0, 1e-6));
    let reached = *rec.time.last().unwrap();
    println!("TDG alpha = 1, h = 0.01: {}", s.line());
    assert!(
        s.failure.is_some() && (0.7..0.8).contains(&reached),
        "{reached}"
    );
}

/// Settings: `alpha` with a method that has no such parameter is an error
/// naming the key, as is alpha outside [0, 1]; `method = "tcg"` is the
/// two-field midpoint scheme with option dg; tdg refuses a model with 3-D
/// bodies in Euler parameters (configuration-dependent inertia) and one with
/// dampers, naming the reason.
#[test]
fn settings_and_refusals() {
    let file = || load_model_file(model_path("seed002_b")).unwrap();
    let refusal = |over: IntegratorSpec| file().integrator(&over).unwrap_err().to_string();
    for m in ["tcg", "gssss", "rk4", "tdg"] {
        let e = refusal(IntegratorSpec {
            kappa: Some(flexmb::integrate::KappaChoice::Name("1".into())),
            ..method(m, 0.01, 1.0)
        });
        assert!(
            e.contains("`kappa`") && e.contains("alpha-kappa"),
            "{m}: {e}"
        );
    }
    for k in ["foo", "-1", "0"] {
        let e = refusal(alpha_kappa(1.0, k, 0.01, 1.0, 1e-6));
        assert!(e.contains("`kappa`"), "{k}: {e}");
    }
    for m in ["tcg", "gssss", "rk4"] {
        let e = refusal(IntegratorSpec {
            alpha: Some(0.5),
            ..method(m, 0.01, 1.0)
        });
        assert!(
            e.contains("`alpha`") && e.contains("alpha-kappa"),
            "{m}: {e}"
        );
    }
    for a in [-0.1, 1.5, f64::NAN] {
        let e = refusal(tdg(a, 0.01, 1.0, 1e-6));
        assert!(e.contains("`alpha` must be in [0, 1]"), "{a}: {e}");
    }
    let tcg = file().integrator(&method("tcg", 0.01, 1.0)).unwrap();
    let g = tcg.gssss_settings().expect("tcg is a GSSSS preset");
    assert!(g.is_tcg());
    assert_eq!(g.variant, flexmb::integrate::Variant::TwoField);
    assert_eq!(g.option, flexmb::integrate::ConstraintOption::Gonzalez);
    assert!(tcg
        .parameters()
        .iter()
        .any(|(k, v)| k == "method" && *v == flexmb::output::AttrValue::Str("tcg".into())));
    for (name, reason) in [
        ("heavy_top", "constant mass matrix"),
        ("cantilever", "external loads"),
    ] {
        let (s, _) = run(name, &tdg(1.0, 0.01, 0.1, 1e-6));
        let e = s.failure.expect("refused").to_string();
        assert!(e.contains(reason), "{name}: {e}");
    }
}

fn alpha_kappa(alpha: f64, kappa: &str, dt: f64, t_end: f64, rtol: f64) -> IntegratorSpec {
    IntegratorSpec {
        alpha: Some(alpha),
        kappa: Some(flexmb::integrate::KappaChoice::Name(kappa.into())),
        rtol: Some(rtol),
        ..method("alpha-kappa", dt, t_end)
    }
}

/// alpha–kappa with kappa from eq. 71 and alpha = 0 conserves the energy
/// (eq. 69 with kappa chosen so, §5.3.3) at every step where the clamp
/// [1 - h/2, 1 + h/2] is inactive: to round-off (1e-12 m g l per step) on
/// cases a–c, and over the whole run (1000 steps) on a and b, where it never
/// acts. On case c it acts (kappa reaches 1 + h/2 = 1.005 in about a tenth
/// of the steps) and the energy changes there: the printed total is the
/// clamp's. No locking on case b (Fig. 21): the velocity constraint holds to
/// round-off. kappa stays near 1 on b (Fig. 23, h = 0.02: within 1e-4 of 1).
#[test]
fn alpha_kappa_conserves_energy_with_kappa_auto() {
    let h = 0.01;
    for case in ["a", "b", "c"] {
        let name = format!("seed002_{case}");
        let (s, rec) = run(&name, &alpha_kappa(0.0, "auto", h, 10.0, 1e-10));
        assert!(s.failure.is_none(), "{name}: {}", s.line());
        let mut clamped = 0;
        let mut worst = 0.0_f64;
        for i in 1..rec.time.len() {
            let kappa = rec.stats[i][3];
            if (kappa - 1.0).abs() >= 0.5 * h - 1e-12 {
                clamped += 1;
            } else {
                worst = worst.max((rec.energy[i].total - rec.energy[i - 1].total).abs());
            }
        }
        let worst = worst / energy_scale(case);
        let drift = energy_drift(case, &rec);
        let vel = max_constraint(&rec.constraints, |c| c.velocity);
        println!(
            "case {case}: alpha-kappa auto, alpha 0: clamped steps {clamped}, worst unclamped step \
             {worst:.1e}, run {drift:.2e}, max |B v| {vel:.1e}"
        );
        assert!(worst <= 1e-12, "case {case}: {worst:e}");
        if case != "c" {
            assert_eq!(clamped, 0, "case {case}");
            assert!(drift <= 1e-12, "case {case}: {drift:e}");
        }
        assert!(vel <= 1e-12, "case {case}: {vel:e}");
    }
    let (s, rec) = run("seed002_b", &alpha_kappa(0.0, "auto", 0.02, 10.0, 1e-10));
    assert!(s.failure.is_none(), "{}", s.line());
    let k = rec.stats[1..]
        .iter()
        .map(|x| (x[3] - 1.0).abs())
        .fold(0.0, f64::max);
    println!("case b, h = 0.02: max |kappa - 1| = {k:.2e}");
    assert!(k < 1e-4, "{k}");
}

/// alpha–kappa with kappa = 1 on case b (Fig. 22): the energy never rises by
/// more than round-off, the dissipation grows monotonically with alpha, and
/// at alpha = 1 it is more than 1000 times below TDG's ("1000 times lower
/// than before").
#[test]
fn alpha_kappa_dissipation_grows_with_alpha() {
    let mut losses = Vec::new();
    for alpha in [0.0, 0.25, 0.5, 1.0] {
        let (s, rec) = run("seed002_b", &alpha_kappa(alpha, "1", 0.01, 10.0, 1e-10));
        assert!(s.failure.is_none(), "alpha {alpha}: {}", s.line());
        let (rises, loss) = rise_and_loss(&rec);
        println!("alpha {alpha}: largest rise {rises:.2e}, loss {loss:.3e}");
        assert!(
            rises <= 1e-12 * energy_scale("b"),
            "alpha {alpha}: {rises:e}"
        );
        losses.push(loss);
    }
    assert!(losses.windows(2).all(|w| w[1] > w[0]), "{losses:?}");
    let (_, rec) = run("seed002_b", &tdg(1.0, 0.01, 10.0, 1e-10));
    let (_, tdg_loss) = rise_and_loss(&rec);
    println!(
        "TDG / alpha-kappa loss at alpha = 1: {:.0}",
        tdg_loss / losses[3]
    );
    assert!(tdg_loss > 1000.0 * losses[3], "{tdg_loss} vs {}", losses[3]);
}

/// Fig. 24: alpha–kappa (alpha = 1, kappa = 1) on the pendulum of case b,
/// T = 0.5, h = T/25 .. T/200 against a 16 times finer step: second order
/// in the displacements (1.9–2.2) and, as the seed measures it, first order
/// (0.9–1.2) in the scheme's own multiplier lambda_g of the last step
/// compared with lambda(t_{n+1}) (lambda_g is a mid-step value, so it is
/// off by half a step of lambda's change). The recorded multiplier is
/// lambda_g extrapolated to t_{n+1} (`Integrator::aligned`,
/// `3/2 lambda_g,n+1 - 1/2 lambda_g,n`); it converges at second order
/// (1.9–2.2), so lambda_g is second order at t_{n+1/2}.
#[test]
fn alpha_kappa_orders() {
    let t_end = 0.5;
    let spec = |h: f64| alpha_kappa(1.0, "1", h, t_end, 1e-12);
    let (eu, el) = errors(
        |h| {
            let (s, rec) = run("seed002_b", &spec(h));
            assert!(s.failure.is_none(), "h = {h}: {}", s.line());
            assert!((rec.time.last().unwrap() - t_end).abs() < 1e-12);
            (
                rec.u.last().unwrap().clone(),
                rec.lambda.last().unwrap().clone(),
            )
        },
        t_end,
    );
    let (ou, ol) = (order(eu[2], eu[3]), order(el[2], el[3]));
    println!(
        "alpha-kappa case b: u errors {eu:?}, order {ou:.3}; recorded lambda errors {el:?}, order {ol:.3}"
    );
    assert!((1.9..=2.2).contains(&ou), "displacement order {ou}");
    assert!((1.9..=2.2).contains(&ol), "recorded multiplier order {ol}");
    // The scheme's lambda_g after the last step, read from the method's
    // state (not aligned), against the reference's lambda(t_end).
    let (_, reference) = run("seed002_b", &spec(t_end / 3200.0));
    let lambda_end = reference.lambda.last().unwrap();
    let eg: Vec<f64> = [25.0, 50.0, 100.0, 200.0]
        .iter()
        .map(|k| {
            let file = load_model_file(model_path("seed002_b")).unwrap();
            let config = file.integrator(&spec(t_end / k)).unwrap();
            let sim = Simulation::new(file.model);
            let sys = sim.mechanics();
            let mut method = config.build(&sys).unwrap();
            let mut state = State::initial(&sim.mechanics());
            method.start(&sys, &mut state).unwrap();
            while state.t < t_end {
                method.advance(&sys, &mut state, t_end).unwrap();
            }
            assert!((state.t - t_end).abs() < 1e-12);
            max_diff(&state.lambda, lambda_end)
        })
        .collect();
    let og = order(eg[2], eg[3]);
    println!("alpha-kappa case b: lambda_g errors against lambda(t_n+1) {eg:?}, order {og:.3}");
    assert!((0.9..=1.2).contains(&og), "lambda_g order {og}");
}

/// Case d, the seed's Figs. 25–26 claim (alpha = 1, kappa = 1, h = 0.01,
/// stable over 10 s) — NOT reproduced: Newton fails at the snap of the
/// chain near t = 0.74 s for h >= 0.001; h = 0.0005 runs the 10 s. The cause
/// (docs/theory/galerkin.md §4, `scripts/seed002_case_d.py`, an independent
/// transcription of eq. 66 that fails at the same step with the same
/// energy): the branch of step solutions that Newton follows folds (its
/// Jacobian singular) at h* = 0.0061 from the state at t = 0.74 (0.0017 for
/// h = 0.005, 0.00092 for h = 0.001), below the step; more iterations, a
/// smaller tolerance, a line search or a fine-substep predictor do not find
/// a root; the roots that exist at h = 0.01 elsewhere are reached only from
/// chance predictors, and the run then fails at the next snap (t = 1.14 s;
/// the exact solution has 14 snaps in 10 s). The test records both so that
/// a change shows.
#[test]
fn alpha_kappa_case_d() {
    for h in [0.01, 0.001] {
        let (s, rec) = run("seed002_d", &alpha_kappa(1.0, "1", h, 10.0, 1e-6));
        let reached = *rec.time.last().unwrap();
        println!("alpha-kappa alpha 1 kappa 1 h = {h}: {}", s.line());
        assert!(
            s.failure.is_some() && (0.73..0.75).contains(&reached),
            "h = {h}: {reached}"
        );
    }
    let (s, _) = run("seed002_d", &alpha_kappa(1.0, "1", 0.0005, 10.0, 1e-6));
    assert!(s.failure.is_none(), "h = 0.0005: {}", s.line());
}

/// Why `alpha_kappa_case_d` fails (docs/theory/galerkin.md §4): from the
/// state at t = 0.74 of the h = 0.01 run, the step equations (eq. 66,
/// alpha = kappa = 1) are solved for growing step sizes h', each from the
/// previous solution (natural continuation; the increment is halved when
/// Newton fails). The branch ends at h' = 0.006085, short of the run's
/// h = 0.01, and the Newton matrix becomes singular there (condition number
/// 1.2e7 at h' = 0.003, 1.7e9 at the end; asserted: more than 100 times): a
/// fold of the step equations (`scripts/seed002_case_d.py`'s
/// pseudo-arclength continuation turns back at the same 0.006085), not a
/// Newton weakness that a better predictor, more iterations or a line
/// search would cure.
#[test]
fn alpha_kappa_case_d_step_equations_fold() {
    let h = 0.01;
    let (s, rec) = run("seed002_d", &alpha_kappa(1.0, "1", h, 10.0, 1e-6));
    assert!(s.failure.is_some());
    let k = rec.time.len() - 1;
    assert!((rec.time[k] - 0.74).abs() < 1e-9, "{}", rec.time[k]);
    let (qn, vn, lam) = (&rec.u[k], &rec.v[k], &rec.lambda[k]);
    let model = load_model_file(model_path("seed002_d")).unwrap().model;
    let asm = Assembler::new(&model);
    let sys = Mechanics::new(&model, &asm);
    let settings = TdgSettings {
        scheme: Scheme::AlphaKappa(Kappa::Fixed(1.0)),
        alpha: 1.0,
        dt: h,
        newton: DriverSettings {
            rtol: 1e-6,
            max_iter: 30,
            ..DriverSettings::default()
        },
    };
    let mut tdg = Tdg::new(&sys, settings.identity(), settings, Default::default()).unwrap();
    let pattern = tdg.block_pattern().clone();
    let dim = pattern.dim;
    let (n, nb) = (model.n_dofs(), model.n_dofs() + model.n_constraints());
    let mut values = vec![0.0; pattern.nnz()];
    let mut res = vec![0.0; dim];
    // Newton on eq. 66 at step size `hs` from `x`; the solution and the
    // condition number (2-norm) of its Newton matrix.
    let mut solve = |hs: f64, mut x: Vec<f64>| -> Option<(Vec<f64>, f64)> {
        for _ in 0..30 {
            tdg.eval(&sys, qn, vn, rec.time[k], hs, &x, &mut res, &mut values);
            let a = pattern.to_csc(&values).to_dense();
            let a = nalgebra::DMatrix::from_fn(dim, dim, |r, c| a[[r, c]]);
            let dx = a
                .clone()
                .lu()
                .solve(&nalgebra::DVector::from_column_slice(&res))?;
            let size = x.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
            for (xi, d) in x.iter_mut().zip(dx.iter()) {
                *xi -= d;
            }
            if dx.amax() <= 1e-10 * size {
                let sv = a.singular_values();
                return Some((x, sv.max() / sv.min()));
            }
        }
        None
    };
    let mut hs = 5e-4;
    let mut x = vec![0.0; dim];
    for i in 0..n {
        x[i] = qn[i] + hs * vn[i];
        x[nb + i] = qn[i];
        x[2 * nb + i] = vn[i];
        x[3 * nb + i] = vn[i];
    }
    x[n..nb].copy_from_slice(lam);
    x[nb + n..2 * nb].copy_from_slice(lam);
    let (mut x, cond0) = solve(hs, x).expect("the first small step converges");
    let (mut cond, mut cond_half, mut dh) = (cond0, 0.0, 5e-4);
    while dh > 1e-7 && hs + dh <= h {
        match solve(hs + dh, x.clone()) {
            Some((xn, c)) => {
                hs += dh;
                x = xn;
                cond = c;
                if (hs - 0.003).abs() < 1e-12 {
                    cond_half = c;
                }
            }
            None => dh *= 0.5,
        }
    }
    println!(
        "case d from t = 0.74: step solutions up to h' = {hs:.6}; condition number of the \
         Newton matrix {cond0:.2e} at h' = 5e-4, {cond_half:.2e} at 0.003, {cond:.2e} at the last"
    );
    assert!((0.0055..0.0061).contains(&hs), "{hs}");
    assert!(
        cond_half > 0.0,
        "the continuation never stopped at h' = 0.003"
    );
    assert!(cond > 100.0 * cond_half, "{cond_half:e} -> {cond:e}");
}

/// The backtracking line search (docs/theory/gssss.md §12a) runs through the
/// Newton driver for TDG and alpha–kappa too: the hanging beam L1 (40
/// elements) at dt 0.1 diverges in step 1 under full corrections and runs
/// with the search, pinned, falling, its energy decaying; its residual
/// evaluations exceed its factorizations by the backtracks. Modified Newton
/// (`refactor = "step"`) factors fewer matrices on case b and ends at the
/// full Newton's state to the tolerance. `line_search` given to a method
/// without the driver's Newton iteration is refused, naming the method and
/// the setting.
#[test]
fn line_search_and_modified_newton_with_tdg_and_alpha_kappa() {
    for m in ["tdg", "alpha-kappa"] {
        let spec = |search: &str| IntegratorSpec {
            line_search: Some(search.into()),
            ..method(m, 0.1, 0.2)
        };
        let (plain, _) = run("hanging_beam", &spec("none"));
        let failure = plain.failure.expect("full corrections diverge").to_string();
        assert!(
            failure.contains("step 1 ") && failure.contains("divergence"),
            "{m}: {failure}"
        );
        let (searched, rec) = run("hanging_beam", &spec("backtracking"));
        println!("L1 40, dt 0.1, {m}, line search: {}", searched.line());
        assert!(searched.failure.is_none(), "{m}: {}", searched.line());
        assert_eq!(searched.steps, 2, "{m}");
        assert!(stat(&searched, "nfcn") > stat(&searched, "njac"), "{m}");
        let pin = max_constraint(&rec.constraints, |c| c.position);
        assert!(pin <= 1e-9, "{m}: pin violation {pin:e}");
        // The tip node's x, y (4 coordinates per node, 40 elements) at
        // t = 0.2: the free end still falls freely, y = -g t^2 / 2.
        let (x, y) = (160, 161);
        let (length, free_fall) = (rec.u[0][x], -0.5 * 9.81 * 0.2 * 0.2);
        assert!(length > 0.0 && rec.u[0][y] == 0.0, "{m}");
        let fall = rec.u[2][y];
        assert!((fall - free_fall).abs() <= 1e-3, "{m}: tip at y = {fall}");
        let reach = rec.u[2][x].hypot(rec.u[2][y]);
        assert!(reach <= 1.001 * length, "{m}: tip at {reach} of {length}");
        let (rise, loss) = rise_and_loss(&rec);
        assert!(
            rise <= 0.0 && loss > 0.0,
            "{m}: rise {rise:e}, loss {loss:e}"
        );
    }
    for m in ["tdg", "alpha-kappa"] {
        let base = if m == "tdg" {
            tdg(0.5, 0.01, 1.0, 1e-8)
        } else {
            alpha_kappa(0.5, "1", 0.01, 1.0, 1e-8)
        };
        let (full, a) = run("seed002_b", &base);
        let (modified, b) = run(
            "seed002_b",
            &IntegratorSpec {
                refactor: Some("step".into()),
                ..base
            },
        );
        println!("case b, {m}, modified Newton: {}", modified.line());
        assert!(modified.failure.is_none(), "{m}: {}", modified.line());
        assert!(
            stat(&modified, "njac") < stat(&full, "njac"),
            "{m}: {} vs {}",
            modified.line(),
            full.line()
        );
        let apart = max_diff(a.u.last().unwrap(), b.u.last().unwrap());
        assert!(apart <= 1e-6, "{m}: final states apart by {apart:e}");
    }
    let file = || load_model_file(model_path("seed002_b")).unwrap();
    for m in ["rk4", "dopri5", "epm", "bdf"] {
        let e = file()
            .integrator(&IntegratorSpec {
                line_search: Some("backtracking".into()),
                // The adaptive methods take no `dt`.
                dt: (m != "dopri5" && m != "bdf").then_some(0.01),
                ..method(m, 0.01, 1.0)
            })
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`line_search`") && e.contains(&format!("method \"{m}\"")),
            "{m}: {e}"
        );
    }
}
