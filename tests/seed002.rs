//! Seed 002 (Lens & Cardona 2007, SPEC.md §2): the Galerkin schemes on the
//! seed's cases a–d (`models/seed002_*.toml`), docs/theory/galerkin.md.

mod common;

use common::*;
use flexmb::assembly::Assembler;
use flexmb::integrate::galerkin::{Tdg, TdgSettings};
use flexmb::integrate::{system, IntegratorSpec};
use flexmb::model::load_model_file;
use flexmb::output::MemoryRecorder;

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
    let e0 = rec.energy[0].total;
    rec.energy
        .iter()
        .map(|e| (e.total - e0).abs())
        .fold(0.0, f64::max)
        / energy_scale(case)
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
    let locked = rec
        .constraints
        .iter()
        .map(|c| c.velocity)
        .fold(0.0, f64::max);
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
            let rises = rec
                .energy
                .windows(2)
                .map(|w| w[1].total - w[0].total)
                .fold(f64::NEG_INFINITY, f64::max);
            let loss = rec.energy[0].total - rec.energy.last().unwrap().total;
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

/// The TDG block Newton matrix (module doc of `integrate::galerkin`) is the
/// derivative of its residual, checked by 4th-order central differences at a
/// perturbed state for alpha = 0.3 on: the double pendulum (planar bodies,
/// pins with trigonometric rows: Gonzalez's correction of B* at work), case d
/// (quadratic constraints) and the 40-element hanging beam (the beams'
/// discrete gradients; their symmetry in the two states gives the
/// first-state derivatives).
#[test]
fn tdg_newton_matrix_against_finite_differences() {
    for (name, h) in [
        ("double_pendulum", 0.01),
        ("seed002_d", 0.01),
        ("hanging_beam", 1e-3),
    ] {
        let model = load_model_file(model_path(name)).unwrap().model;
        let asm = Assembler::new(&model);
        let sys = system(&model, &asm);
        let settings = TdgSettings {
            alpha: 0.3,
            dt: h,
            rtol: 1e-6,
            atol: None,
            max_iter: 10,
        };
        let mut tdg = Tdg::new(&sys, "tdg".into(), vec![], settings, false).unwrap();
        let (n, m) = (model.n_dofs(), model.n_constraints());
        let mut rng = fd::Rng(7);
        let qn: Vec<f64> = model
            .u0
            .iter()
            .map(|u| u + rng.range(-0.01, 0.01))
            .collect();
        let vn: Vec<f64> = model.v0.iter().map(|v| v + rng.range(-5.0, 5.0)).collect();
        let mut x = Vec::with_capacity(2 * (n + m));
        for _ in 0..2 {
            x.extend(
                qn.iter()
                    .zip(&vn)
                    .map(|(q, v)| q + h * v + rng.range(-1e-3, 1e-3) * h),
            );
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
        println!("{name}: dim {dim}, max {what} |A - FD| = {worst:.2e}");
        assert!(worst <= 1e-6, "{name}: {worst:e}");
    }
}
