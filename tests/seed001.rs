//! Seed 001 (H. S. Chin, "Stabilization methods for simulations of
//! constrained multibody dynamics", UBC 1995; digest
//! /work/notes/seeds_001_004.md) reproduced with flexmb's model files and its
//! explicit Runge–Kutta methods on the index-1 form (Baumgarte B(g1, g2),
//! `Phi'' + g1 Phi' + g2 Phi = 0`, or post-stabilization PStab = S-both2):
//!
//! * Table 3.1: two-link manipulator, case I, Heun at fixed h = 0.01, 0.001;
//! * Table 4.6: case I, DOPRI5, B(12, 70) vs PStab at rtol 1e-4 .. 1e-8;
//! * Table 4.7: case II (tip on y = sin^2(omega t)), rtol 1e-5, five
//!   Baumgarte pairs and PStab, at omega = 1 (the table's) and 0.5;
//! * Table 4.8: slider-crank with a TSDA, DOPRI5 + PStab, TOL 1e-3 .. 1e-6;
//! * Sec. 4.6: the rolling disk (nonholonomic), PStab vs Baumgarte gamma = 20;
//! * Sec. 4.5: the singular slider-crank in both formulations on [0, 3];
//! * Ch. 5: the deformable slider-crank at 180 rad/s (8 beam elements).
//!
//! Every test prints its measured numbers next to the seed's ("(seed ...)");
//! run with `cargo test --release --test seed001 -- --nocapture`.
//!
//! Drift is flexmb's: the largest `|Phi|` (position) and `|B v + Phi_t|`
//! (velocity) over all constraint rows at the accepted step points (RK
//! statistics `drift_position`, `drift_velocity`). flexmb's models are in
//! absolute coordinates (the manipulator: two planar bodies, 5 rows; the
//! seed: two angles, one row), so Baumgarte's drifts differ from the seed's
//! by a small factor; the seed's PStab drifts are upper bounds (digest §2.4).

mod common;

use common::{counts_vs_seed, model_path, run_file_into, stat};
use flexmb::input::{load_model_with_sets, ModelFile};
use flexmb::integrate::IntegratorSpec;
use flexmb::output::{MemoryRecorder, NullRecorder, OutputConfig};
use flexmb::run::{RunSummary, Simulation};

/// Drift control of a Runge–Kutta run.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Control {
    /// None (the seed's B(0, 0)).
    None,
    /// Baumgarte B(g1, g2).
    B(f64, f64),
    /// PStab (S-both2), every step (datol = 0).
    PStab,
}

impl std::fmt::Display for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Control::None => write!(f, "none"),
            Control::B(g1, g2) => write!(f, "B({g1}, {g2})"),
            Control::PStab => write!(f, "PStab"),
        }
    }
}

/// Shipped model `name` with `--set` assignments, recording every step.
fn load(name: &str, sets: &[&str]) -> ModelFile {
    let text = std::fs::read_to_string(model_path(name)).unwrap();
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let mut file =
        load_model_with_sets(&text, name, &sets).unwrap_or_else(|e| panic!("{name}: {e}"));
    file.output = OutputConfig::default();
    file
}

fn method(name: &str, stab: Control) -> IntegratorSpec {
    let (stabilization, baumgarte) = match stab {
        Control::None => ("none", None),
        Control::B(g1, g2) => ("baumgarte", Some([g1, g2])),
        Control::PStab => ("pstab", None),
    };
    IntegratorSpec {
        method: Some(name.into()),
        stabilization: Some(stabilization.into()),
        baumgarte,
        ..IntegratorSpec::default()
    }
}

/// Adaptive DOPRI5 on [0, t_end].
fn dopri5(rtol: f64, atol: f64, t_end: f64, stab: Control) -> IntegratorSpec {
    IntegratorSpec {
        rtol: Some(rtol),
        atol: Some(atol),
        t_end: Some(t_end),
        ..method("dopri5", stab)
    }
}

/// Heun's method (explicit trapezoid, RK2) at fixed step h on [0, t_end].
fn heun(h: f64, t_end: f64, stab: Control) -> IntegratorSpec {
    IntegratorSpec {
        step_control: Some("fixed".into()),
        dt: Some(h),
        t_end: Some(t_end),
        ..method("heun", stab)
    }
}

/// Runs `file` with `over`; the run must reach its end time.
fn run(file: ModelFile, over: &IntegratorSpec) -> RunSummary {
    let s = try_run(file, over);
    assert!(s.failure.is_none(), "run failed: {}", s.line());
    s
}

/// Runs `file` with `over` (keeping only the summary); it may fail.
fn try_run(file: ModelFile, over: &IntegratorSpec) -> RunSummary {
    run_file_into(file, over, &mut NullRecorder).0
}

/// Runs `file` with `over` recording every step in memory.
fn run_recorded(
    file: ModelFile,
    over: &IntegratorSpec,
) -> (RunSummary, Simulation, MemoryRecorder) {
    let mut rec = MemoryRecorder::default();
    let (s, sim) = run_file_into(file, over, &mut rec);
    assert!(s.failure.is_none(), "run failed: {}", s.line());
    (s, sim, rec)
}

/// (position drift, velocity drift) of a run.
fn drifts(s: &RunSummary) -> (f64, f64) {
    (stat(s, "drift_position"), stat(s, "drift_velocity"))
}

fn probe(s: &RunSummary, name: &str) -> flexmb::output::ProbeSummary {
    s.probes
        .iter()
        .find(|p| p.0 == name)
        .unwrap_or_else(|| panic!("no probe {name}"))
        .1
}

/// DOPRI5's count: NFCN = 6 NSTEP + 2 (FSAL; f(t0) and the initial-step evaluation).
fn check_dopri5_counters(s: &RunSummary) {
    assert_eq!(
        stat(s, "nfcn"),
        6.0 * stat(s, "nstep") + 2.0,
        "{}",
        s.line()
    );
}

/// Seed 001 Table 3.1 (Example 3.3, "maximum drifts of a two-arm robot"):
/// the manipulator of case I (`models/manipulator_parabola.toml`) integrated
/// by Heun's method at fixed h = 0.01 and 0.001 on [0, 10] (the digest
/// identifies the seed's explicit RK2 as Heun's, §9), with B(12, 70) and
/// with Algorithm 3.3 (= PStab).
///
/// * Baumgarte: both drifts within a factor 3 of the table.
/// * PStab: velocity drifts and the h = 0.001 position drift at most the
///   table's values (upper bounds, digest §2.4). The position drift at
///   h = 0.01 (table .15e-13) is S-both2's remainder, not round-off (it
///   falls about 20 times when h halves), and the digest's exact
///   reproduction in the seed's two angles also exceeds the table
///   (1.6e-14): asserted within a factor 2 of the table.
/// * The table's Algorithm 3.2 rows (S-full) have no counterpart in flexmb.
#[test]
fn table_3_1_heun_fixed_steps() {
    // (h, B(12,70) velocity, position, Alg. 3.3 velocity, position) of Table 3.1.
    let table = [
        (0.01, 0.72e-2, 0.14e-2, 0.67e-8, 0.15e-13),
        (0.001, 0.70e-4, 0.14e-4, 0.18e-13, 0.31e-14),
    ];
    println!(
        "Table 3.1, manipulator case I, Heun fixed h on [0, 10]: max drift, velocity / position"
    );
    for (h, bv, bp, pv, pp) in table {
        let b = run(
            load("manipulator_parabola", &[]),
            &heun(h, 10.0, Control::B(12.0, 70.0)),
        );
        let p = run(
            load("manipulator_parabola", &[]),
            &heun(h, 10.0, Control::PStab),
        );
        let (b_pos, b_vel) = drifts(&b);
        let (p_pos, p_vel) = drifts(&p);
        println!(
            "  h {h}: B(12, 70) {b_vel:.2e} / {b_pos:.2e} (seed {bv:.2e} / {bp:.2e}); \
             PStab {p_vel:.2e} / {p_pos:.2e} (seed Alg. 3.3 {pv:.2e} / {pp:.2e}); NFCN {}",
            stat(&p, "nfcn")
        );
        for (got, seed, what) in [(b_vel, bv, "velocity"), (b_pos, bp, "position")] {
            assert!(
                got <= 3.0 * seed && got >= seed / 3.0,
                "h {h}: Baumgarte {what} drift {got:.3e} vs seed {seed:.3e}"
            );
        }
        assert!(
            p_vel <= pv,
            "h {h}: PStab velocity drift {p_vel:.3e} > seed {pv:.3e}"
        );
        let factor = if h == 0.01 { 2.0 } else { 1.0 };
        assert!(
            p_pos <= factor * pp,
            "h {h}: PStab position drift {p_pos:.3e} > {factor} x seed {pp:.3e}"
        );
    }
}

/// Seed 001 Table 4.6: the manipulator of case I, DOPRI5 at rtol 1e-4 .. 1e-8,
/// atol = rtol/10, T = 10, B(12, 70) vs PStab.
///
/// * NFCN and NSTEP within 20 % of the table for both methods (measured:
///   B(12, 70) within 3 %, except NSTEP at rtol 1e-5, 6 % below the table's
///   253, which contradicts the table's own NFCN 1412 = 6 x 235 + 2; PStab
///   5–14 % below);
/// * PStab needs fewer NFCN than B(12, 70) at every tolerance (the seed:
///   "one third fewer"; its ratios 0.68–0.78);
/// * B(12, 70)'s position drift (the table's "max-drift") within a factor 5
///   of the table (flexmb's absolute coordinates give 1.6–4.4 times less;
///   the digest's two-angle reproduction 1.5–1.9 times more);
/// * PStab's drift (the larger of position and velocity) at most the
///   table's value at every tolerance, <= 1e-7 at rtol 1e-4 and <= 1e-12 at
///   rtol 1e-8.
#[test]
fn table_4_6_manipulator_case_i_dopri5() {
    // (rtol, [B NFCN, PStab NFCN, B NSTEP, PStab NSTEP], B max-drift, PStab max-drift).
    let table = [
        (1e-4, [920.0, 716.0, 153.0, 119.0], 1.3e-4, 5.8e-8),
        (1e-5, [1412.0, 1052.0, 253.0, 175.0], 9.0e-6, 9.5e-10),
        (1e-6, [2180.0, 1580.0, 363.0, 263.0], 5.3e-7, 5.8e-12),
        (1e-7, [3344.0, 2288.0, 557.0, 381.0], 2.3e-8, 1.5e-14),
        (1e-8, [5156.0, 3578.0, 859.0, 596.0], 2.3e-9, 3.3e-15),
    ];
    println!("Table 4.6, manipulator case I, DOPRI5, atol = rtol/10, T = 10");
    for (rtol, seed, seed_bd, seed_pd) in table {
        let b = run(
            load("manipulator_parabola", &[]),
            &dopri5(rtol, rtol / 10.0, 10.0, Control::B(12.0, 70.0)),
        );
        let p = run(
            load("manipulator_parabola", &[]),
            &dopri5(rtol, rtol / 10.0, 10.0, Control::PStab),
        );
        check_dopri5_counters(&b);
        check_dopri5_counters(&p);
        let got = [
            stat(&b, "nfcn"),
            stat(&p, "nfcn"),
            stat(&b, "nstep"),
            stat(&p, "nstep"),
        ];
        let (b_pos, b_vel) = drifts(&b);
        let p_drift = drifts(&p).0.max(drifts(&p).1);
        println!(
            "  rtol {rtol:.0e}: {}, \
             PStab/B NFCN {:.2} (seed {:.2}); max-drift B {b_pos:.2e} (seed {seed_bd:.1e}; \
             velocity {b_vel:.2e}), PStab {p_drift:.2e} (seed {seed_pd:.1e}; position {:.2e}, \
             velocity {:.2e})",
            counts_vs_seed(got, seed),
            got[1] / got[0],
            seed[1] / seed[0],
            drifts(&p).0,
            drifts(&p).1,
        );
        for (g, s) in got.iter().zip(seed) {
            assert!(
                (g / s - 1.0).abs() <= 0.2,
                "rtol {rtol}: {g} vs seed {s} (NFCN B, PStab, NSTEP B, PStab: {got:?})"
            );
        }
        assert!(
            got[1] < got[0],
            "rtol {rtol}: PStab NFCN {} >= B's {}",
            got[1],
            got[0]
        );
        assert!(
            b_pos <= 5.0 * seed_bd && b_pos >= seed_bd / 5.0,
            "rtol {rtol}: B(12, 70) drift {b_pos:.3e} vs seed {seed_bd:.1e}"
        );
        assert!(
            p_drift <= seed_pd,
            "rtol {rtol}: PStab drift {p_drift:.3e} > seed {seed_pd:.1e}"
        );
        if rtol == 1e-4 {
            assert!(p_drift <= 1e-7, "PStab drift {p_drift:.3e} at rtol 1e-4");
        }
        if rtol == 1e-8 {
            assert!(p_drift <= 1e-12, "PStab drift {p_drift:.3e} at rtol 1e-8");
        }
    }
}

/// Seed 001 Table 4.7: the manipulator of case II
/// (`models/manipulator_sine.toml`, tip on y = sin^2(omega t)), DOPRI5 at
/// rtol 1e-5, atol 1e-6, on [0, 10], with B(0, 0) (no stabilization),
/// B(8, 16), B(12, 70), B(20, 100), B(50, 400) and PStab.
///
/// The seed states neither omega nor T for the table; the digest reproduces
/// it with omega = 1 on [0, 10] (`--set joint.tip_path.omega=1.0`), while the
/// seed's figures (and the shipped model) use omega = 0.5. With omega = 1
/// the motion passes close to the kinematic singularity of the path row near
/// t = 3.15 (the multiplier peaks at about 5e7 N, against 2e4 N with
/// omega = 0.5), and what follows depends on the method and the tolerance:
/// at rtol 1e-5 the final theta1 ranges from -0.76 to -0.14 rad over PStab
/// and the Baumgarte pairs (scratch runs at rtol 1e-9: -0.1928 with PStab
/// and with B(12, 70)), and is -3.99 rad without stabilization, whose
/// multiplier peaks at 2e9 N. That is why B(0, 0)'s NFCN is not compared
/// with the table (measured 8684 against 5416; the table's own B(0, 0)
/// entry is inconsistent, 5416 != 6 x 883 + 2).
///
/// Asserted, omega = 1: NFCN within 15 % of the table for PStab and the four
/// Baumgarte pairs; PStab needs the fewest NFCN and B(0, 0) the most (the
/// table's order); the Baumgarte and B(0, 0) drifts within a factor 5 of
/// the table; PStab's drifts at most the table's and at least 1000 times
/// below every Baumgarte pair and B(0, 0), at both levels (the table's
/// ordering). omega = 0.5: the same ordering of the drifts.
#[test]
fn table_4_7_manipulator_case_ii_baumgarte_parameters() {
    let methods = [
        Control::None,
        Control::B(8.0, 16.0),
        Control::B(12.0, 70.0),
        Control::B(20.0, 100.0),
        Control::B(50.0, 400.0),
        Control::PStab,
    ];
    // Table 4.7 per method: NFCN, NSTEP, NREJCT, max-driftp, max-driftv.
    let table = [
        [5416.0, 883.0, 186.0, 9.3e-3, 2.7e-3],
        [4034.0, 672.0, 115.0, 3.9e-5, 1.0e-4],
        [4058.0, 676.0, 109.0, 1.3e-5, 1.0e-4],
        [4226.0, 704.0, 96.0, 9.5e-6, 8.8e-5],
        [5258.0, 876.0, 68.0, 3.8e-6, 1.5e-4],
        [3980.0, 663.0, 117.0, 1.3e-10, 2.4e-7],
    ];
    for omega in [1.0, 0.5] {
        let set = format!("joint.tip_path.omega={omega}");
        println!(
            "Table 4.7, manipulator case II, omega = {omega}, DOPRI5 rtol 1e-5, atol 1e-6, T = 10"
        );
        let runs: Vec<RunSummary> = methods
            .iter()
            .map(|&m| {
                run(
                    load("manipulator_sine", &[&set]),
                    &dopri5(1e-5, 1e-6, 10.0, m),
                )
            })
            .collect();
        for ((m, s), seed) in methods.iter().zip(&runs).zip(&table) {
            check_dopri5_counters(s);
            let (pos, vel) = drifts(s);
            let (nfcn, nstep, nrej) = (stat(s, "nfcn"), stat(s, "nstep"), stat(s, "nreject"));
            let lambda = probe(s, "path_multiplier");
            let seed_text = if omega == 1.0 {
                format!(
                    " (seed {} / {} / {} / {:.1e} / {:.1e})",
                    seed[0], seed[1], seed[2], seed[3], seed[4]
                )
            } else {
                String::new()
            };
            println!(
                "  {m:>12}: NFCN / NSTEP / NREJCT / max-driftp / max-driftv {nfcn} / {nstep} / \
                 {nrej} / {pos:.2e} / {vel:.2e}{seed_text}; theta1(10) {:.4}, \
                 max |lambda| {:.2e} at t = {:.3}",
                probe(s, "theta1").last,
                lambda.max_abs,
                lambda.t_max_abs
            );
        }
        let pstab = drifts(&runs[5]);
        for (m, s) in methods.iter().zip(&runs).take(5) {
            let (pos, vel) = drifts(s);
            assert!(
                pstab.0 * 1e3 <= pos && pstab.1 * 1e3 <= vel,
                "omega {omega}: PStab drifts ({:.2e}, {:.2e}) not 1000 x below {m}'s ({pos:.2e}, {vel:.2e})",
                pstab.0,
                pstab.1
            );
        }
        if omega != 1.0 {
            continue;
        }
        let nfcn: Vec<f64> = runs.iter().map(|s| stat(s, "nfcn")).collect();
        for (k, (m, seed)) in methods.iter().zip(&table).enumerate() {
            if k > 0 {
                assert!(
                    (nfcn[k] / seed[0] - 1.0).abs() <= 0.15,
                    "{m}: NFCN {} vs seed {}",
                    nfcn[k],
                    seed[0]
                );
            }
            let (pos, vel) = drifts(&runs[k]);
            if *m == Control::PStab {
                assert!(
                    pos <= seed[3] && vel <= seed[4],
                    "PStab drifts {pos:.2e}, {vel:.2e} above the seed's {:.1e}, {:.1e}",
                    seed[3],
                    seed[4]
                );
            } else {
                for (got, s, what) in [(pos, seed[3], "position"), (vel, seed[4], "velocity")] {
                    assert!(
                        got <= 5.0 * s && got >= s / 5.0,
                        "{m}: {what} drift {got:.2e} vs seed {s:.1e}"
                    );
                }
            }
        }
        let (min, max) = nfcn
            .iter()
            .fold((f64::MAX, 0.0_f64), |(a, b), x| (a.min(*x), b.max(*x)));
        assert_eq!(
            min, nfcn[5],
            "PStab does not need the fewest NFCN: {nfcn:?}"
        );
        assert_eq!(
            max, nfcn[0],
            "B(0, 0) does not need the most NFCN: {nfcn:?}"
        );
    }
}

/// Seed 001 Table 4.8: the slider-crank with a TSDA
/// (`models/slider_crank_tsda.toml`), DOPRI5 + PStab with ATOL = RTOL = TOL
/// = 1e-3 .. 1e-6 over 0.5 s, for k = 1000 and k = 10000
/// (`--set element.tsda.stiffness=10000`).
///
/// The seed gives neither masses, gravity nor the initial state (SPEC.md
/// fixes unit masses; the model starts with the crank vertical and all
/// velocities zero, the spring compressed by 4, i.e. 4000 N on a unit-mass
/// slider). With that state PStab needs 2.4–2.7 times the table's NFCN
/// (62 / 86 / 134 / 200), so "within 50 % of the table" cannot hold; the
/// growth with the tolerance is the table's. With the spring relaxed at
/// t = 0 (`--set element.tsda.free_length=6.0`, a diagnostic variant, not the
/// seed's data) the counts are within 10 % of the table: the difference is
/// the unknown initial state, not the method. Asserted instead:
///
/// * both stiffnesses complete at every TOL, NFCN = 6 NSTEP + 2, NFCN grows
///   as TOL falls, the stiffer spring needs more NFCN;
/// * k = 1000: NFCN at most 3 times the table's PStab row and below the
///   table's DASSL runs (LM and CM) at every TOL (the seed's conclusion);
///   the NFCN ratio between successive TOL within 20 % of the table's;
/// * relaxed-spring variant: NFCN within 15 % of the table.
#[test]
fn table_4_8_tsda_slider_crank() {
    let tols = [1e-3, 1e-4, 1e-5, 1e-6];
    // Table 4.8 NFCN: PStab, DASSL LM, DASSL CM; PStab NSTEP.
    let pstab = [62.0, 86.0, 134.0, 200.0];
    let lm: [f64; 4] = [251.0, 328.0, 462.0, 641.0];
    let cm = [242.0, 327.0, 456.0, 622.0];
    let seed_nstep = [10.0, 14.0, 22.0, 33.0];
    let counts = |sets: &[&str]| -> Vec<RunSummary> {
        tols.iter()
            .map(|&tol| {
                run(
                    load("slider_crank_tsda", sets),
                    &dopri5(tol, tol, 0.5, Control::PStab),
                )
            })
            .collect()
    };
    let mut previous: Option<Vec<f64>> = None;
    for k in [1000.0, 10000.0] {
        let set = format!("element.tsda.stiffness={k}");
        let runs = counts(&[&set]);
        println!("Table 4.8, TSDA slider-crank k = {k}, DOPRI5 + PStab, ATOL = RTOL = TOL, 0.5 s");
        let nfcn: Vec<f64> = runs.iter().map(|s| stat(s, "nfcn")).collect();
        for (i, s) in runs.iter().enumerate() {
            check_dopri5_counters(s);
            let (pos, vel) = drifts(s);
            println!(
                "  TOL {:.0e}: NFCN {} NSTEP {} NREJCT {} (seed PStab {} / {}; DASSL LM {}, CM {}); \
                 drift {pos:.1e} / {vel:.1e}; slider x(0.5) {:.4}",
                tols[i],
                nfcn[i],
                stat(s, "nstep"),
                stat(s, "nreject"),
                pstab[i],
                seed_nstep[i],
                lm[i],
                cm[i],
                probe(s, "slider_x").last
            );
            if i > 0 {
                assert!(nfcn[i] > nfcn[i - 1], "k {k}: NFCN {nfcn:?}");
            }
        }
        if k == 1000.0 {
            for i in 0..4 {
                assert!(
                    nfcn[i] <= 3.0 * pstab[i],
                    "TOL {}: NFCN {}",
                    tols[i],
                    nfcn[i]
                );
                assert!(
                    nfcn[i] < lm[i].min(cm[i]),
                    "TOL {}: NFCN {} not below DASSL's",
                    tols[i],
                    nfcn[i]
                );
                if i > 0 {
                    let (ours, seed) = (nfcn[i] / nfcn[i - 1], pstab[i] / pstab[i - 1]);
                    println!(
                        "  NFCN ratio TOL {:.0e}/{:.0e}: {ours:.2} (seed {seed:.2})",
                        tols[i],
                        tols[i - 1]
                    );
                    assert!(
                        (ours / seed - 1.0).abs() <= 0.2,
                        "ratio {ours} vs seed {seed}"
                    );
                }
            }
        }
        if let Some(soft) = &previous {
            for i in 0..4 {
                assert!(
                    nfcn[i] > soft[i],
                    "k = 10000 needs fewer NFCN than k = 1000: {nfcn:?} {soft:?}"
                );
            }
        }
        previous = Some(nfcn);
    }
    let relaxed = counts(&["element.tsda.free_length=6.0"]);
    let nfcn: Vec<f64> = relaxed.iter().map(|s| stat(s, "nfcn")).collect();
    println!("  spring relaxed at t = 0 (free length 6), k = 1000: NFCN {nfcn:?} (seed {pstab:?})");
    for i in 0..4 {
        assert!(
            (nfcn[i] / pstab[i] - 1.0).abs() <= 0.15,
            "relaxed spring, TOL {}: NFCN {} vs seed {}",
            tols[i],
            nfcn[i],
            pstab[i]
        );
    }
}

/// Largest |Phi| and |B v + Phi_t| per constraint row over the recorded steps.
fn row_drifts(sim: &Simulation, rec: &MemoryRecorder) -> (Vec<f64>, Vec<f64>) {
    let m = sim.asm.n_constraints();
    let (mut phi, mut rate) = (vec![0.0; m], vec![0.0; m]);
    let (mut pos, mut vel) = (vec![0.0_f64; m], vec![0.0_f64; m]);
    for ((u, v), &t) in rec.u.iter().zip(&rec.v).zip(&rec.time) {
        sim.mechanics().constraint_values(u, t, &mut phi);
        sim.mechanics().constraint_rates(u, v, t, &mut rate);
        for r in 0..m {
            pos[r] = pos[r].max(phi[r].abs());
            vel[r] = vel[r].max(rate[r].abs());
        }
    }
    (pos, vel)
}

/// Seed 001 Sec. 4.6: the rolling disk (`models/rolling_disk.toml`, two
/// nonholonomic rows), DOPRI5 on [0, 1.5] at the seed's tolerance
/// rtol = 1e-3 (atol = rtol/10, the thesis's rule "unless otherwise
/// stated") and at rtol = 1e-6, with PStab and with Baumgarte's single
/// parameter gamma = 20 (Fig. 4.37; `baumgarte = [20, 0]`).
///
/// flexmb's disk is a 3-D body in Euler parameters: besides the seed's two
/// rolling rows it has two holonomic rows (the contact height and the
/// parameters' normalization), which the seed's Euler angles satisfy
/// identically. PStab therefore corrects positions too, and since every
/// row's Jacobian (the rolling rows' included) depends on the attitude, the
/// velocity residual it leaves is S-both2's second-order remainder (as in
/// Table 3.1's h = 0.01 row), not the exact single linear projection (3.75)
/// of the seed's purely nonholonomic system. At rtol = 1e-3 (7 accepted
/// steps over 1.5 s) it is 4.4e-9 (contact row; rolling rows 1.6e-9),
/// above the 1e-12 asked for; it falls to 5e-10 at rtol 1e-4 and 1e-14 at
/// rtol 1e-6. `pstab_passes = "converged"` repeats the S-both pass with the
/// same factorization while the residual falls and brings it to round-off.
/// Asserted:
///
/// * PStab (the seed's two passes): position drift <= 1e-12 at both
///   tolerances; velocity drift <= 1e-12 at rtol 1e-6, and <= 1e-8 at
///   rtol 1e-3 (the remainder above);
/// * PStab with converged passes: position and velocity drift <= 1e-12 at
///   both tolerances, on the steps and on every recorded row, with more
///   passes than the seed's two per stabilized step at rtol 1e-3 (the
///   `npass` counter);
/// * Baumgarte's drifts at least 1000 times PStab's (both variants) at both
///   levels;
/// * rolling does no work: the largest relative energy change of the PStab
///   runs is at most rtol.
///
/// With atol = rtol = 1e-3 the run fails: see
/// [`rolling_disk_with_atol_equal_to_rtol`].
#[test]
fn rolling_disk_post_stabilization() {
    for rtol in [1e-3, 1e-6] {
        let over = |stab| dopri5(rtol, rtol / 10.0, 1.5, stab);
        let (p, sim, rec) = run_recorded(load("rolling_disk", &[]), &over(Control::PStab));
        let b = run(load("rolling_disk", &[]), &over(Control::B(20.0, 0.0)));
        let none = run(load("rolling_disk", &[]), &over(Control::None));
        let (_, vel_rows) = row_drifts(&sim, &rec);
        let names = sim.model.multiplier_names();
        let rolling = names
            .iter()
            .zip(&vel_rows)
            .filter(|(n, _)| n.contains("rolling"))
            .fold(0.0_f64, |m, (_, v)| m.max(*v));
        let zc = rec.u.last().unwrap()[2];
        println!(
            "rolling disk, DOPRI5 rtol {rtol:.0e}, atol {:.0e}, [0, 1.5]: centre height {zc:.3} at t = 1.5",
            rtol / 10.0
        );
        let (pp, pv) = drifts(&p);
        println!(
            "  PStab: NFCN {} NSTEP {}, drift {pp:.2e} / {pv:.2e} (rolling rows' velocity {rolling:.2e}; \
             per row {:?}), max relative energy change {:.2e}",
            stat(&p, "nfcn"),
            stat(&p, "nstep"),
            names
                .iter()
                .zip(&vel_rows)
                .map(|(n, v)| format!("{n} {v:.1e}"))
                .collect::<Vec<_>>(),
            p.max_rel_energy_change
        );
        for (what, s) in [("B(20, 0)", &b), ("none", &none)] {
            let (pos, vel) = drifts(s);
            println!(
                "  {what}: NFCN {} NSTEP {}, drift {pos:.2e} / {vel:.2e}, max relative energy change {:.2e}",
                stat(s, "nfcn"),
                stat(s, "nstep"),
                s.max_rel_energy_change
            );
        }
        assert!(pp <= 1e-12, "rtol {rtol}: PStab position drift {pp:.2e}");
        let bound = if rtol == 1e-3 { 1e-8 } else { 1e-12 };
        assert!(
            pv <= bound,
            "rtol {rtol}: PStab velocity drift {pv:.2e} > {bound:.0e}"
        );
        let (bp, bv) = drifts(&b);
        assert!(
            bp >= 1e3 * pp && bv >= 1e3 * pv,
            "rtol {rtol}: Baumgarte drifts {bp:.2e}, {bv:.2e} vs PStab {pp:.2e}, {pv:.2e}"
        );
        assert!(
            p.max_rel_energy_change <= rtol,
            "rtol {rtol}: energy changes by {:.2e}",
            p.max_rel_energy_change
        );
        assert_eq!(stat(&p, "npass"), 2.0 * stat(&p, "nstab"));
        // Converged passes: the drift at round-off.
        let converged = IntegratorSpec {
            pstab_passes: Some("converged".into()),
            ..over(Control::PStab)
        };
        let (c, sim, rec) = run_recorded(load("rolling_disk", &[]), &converged);
        let (pos_rows, vel_rows) = row_drifts(&sim, &rec);
        let rows = pos_rows
            .iter()
            .chain(&vel_rows)
            .fold(0.0_f64, |m, x| m.max(*x));
        let (cp, cv) = drifts(&c);
        println!(
            "  PStab, converged passes: NFCN {} NSTEP {} NSTAB {} passes {}, drift {cp:.2e} / {cv:.2e} \
             (largest recorded row {rows:.2e}), max relative energy change {:.2e}",
            stat(&c, "nfcn"),
            stat(&c, "nstep"),
            stat(&c, "nstab"),
            stat(&c, "npass"),
            c.max_rel_energy_change
        );
        assert!(
            cp <= 1e-12 && cv <= 1e-12 && rows <= 1e-12,
            "rtol {rtol}: converged PStab drifts {cp:.2e} / {cv:.2e}, recorded rows {rows:.2e}"
        );
        if rtol == 1e-3 {
            assert!(
                stat(&c, "npass") > 2.0 * stat(&c, "nstab"),
                "rtol {rtol}: no extra pass"
            );
        }
        assert!(
            bp >= 1e3 * cp && bv >= 1e3 * cv,
            "rtol {rtol}: Baumgarte drifts {bp:.2e}, {bv:.2e} vs converged PStab {cp:.2e}, {cv:.2e}"
        );
        assert!(
            c.max_rel_energy_change <= rtol,
            "rtol {rtol}: converged PStab: energy changes by {:.2e}",
            c.max_rel_energy_change
        );
    }
}

/// The rolling disk at atol = rtol = 1e-3 (the digest's reading of the
/// seed's "error tolerance equal to 1.d-3"), DOPRI5 with PStab and without
/// stabilization: the attempt of h = 0.471 straight to t_end leaves the
/// region where the model is regular (the projection or index-1 matrix is
/// singular there: the disk would lie flat); the engine rejects such an
/// attempt like a failed error test and completes with smaller steps.
#[test]
fn rolling_disk_with_atol_equal_to_rtol() {
    for stab in [Control::PStab, Control::None] {
        let s = try_run(load("rolling_disk", &[]), &dopri5(1e-3, 1e-3, 1.5, stab));
        println!("rolling disk, atol = rtol = 1e-3, {stab}: {}", s.line());
        assert!(s.failure.is_none(), "{stab}: {}", s.line());
    }
}

/// Seed 001 Sec. 4.5: the singular slider-crank on [0, 3] with absolute
/// tolerance 1e-5 (as in the seed), rtol 1e-5, in the Cartesian formulation
/// (`models/singular_slider_crank.toml`, the seed's (4.27), Jacobian rank
/// deficient when the mechanism folds) and with the linear closure
/// (`singular_slider_crank_linear.toml`, Remark 4.4's (4.28)).
///
/// * DOPRI5 + PStab completes in both formulations through both singular
///   passages (the slider goes from x = 2 through the pivot to x = -2 and
///   back: t = 0.86 and 2.59), PStab drift <= 1e-10;
/// * the two formulations agree at t = 3 within 1e-4, and each is within
///   1e-4 of the midpoint rule (GSSSS V0(1,1,0)) at dt = 2.5e-4;
/// * B(20, 100) and no stabilization: reported (both complete at this
///   tolerance, as in the seed's Fig. 4.27); Baumgarte's drift is at least
///   1000 times PStab's.
#[test]
fn singular_slider_crank_both_formulations() {
    let reference = run(
        load("singular_slider_crank_linear", &[]),
        &IntegratorSpec {
            dt: Some(2.5e-4),
            ..IntegratorSpec::default()
        },
    );
    let x_ref = probe(&reference, "slider_x").last;
    println!("singular slider-crank, [0, 3], DOPRI5 rtol 1e-5, atol 1e-5; midpoint rule dt 2.5e-4: slider x(3) = {x_ref:.7}");
    let mut finals = Vec::new();
    for name in ["singular_slider_crank", "singular_slider_crank_linear"] {
        let mut pstab_drift = 0.0;
        for stab in [Control::PStab, Control::B(20.0, 100.0), Control::None] {
            let s = run(load(name, &[]), &dopri5(1e-5, 1e-5, 3.0, stab));
            check_dopri5_counters(&s);
            let x = probe(&s, "slider_x");
            let (pos, vel) = drifts(&s);
            println!(
                "  {name}, {stab}: NFCN {} NSTEP {} NREJCT {}, drift {pos:.2e} / {vel:.2e}, \
                 slider x in [{:.4}, {:.4}], x(3) {:.7} (error {:.1e})",
                stat(&s, "nfcn"),
                stat(&s, "nstep"),
                stat(&s, "nreject"),
                x.min,
                x.max,
                x.last,
                x.last - x_ref
            );
            match stab {
                Control::PStab => {
                    assert!(x.min < -1.99 && x.last > 1.4, "{name}: slider x {x:?}");
                    assert!(
                        pos.max(vel) <= 1e-10,
                        "{name}: PStab drift {pos:.2e}, {vel:.2e}"
                    );
                    assert!(
                        (x.last - x_ref).abs() <= 1e-4,
                        "{name}: x(3) {} vs {x_ref}",
                        x.last
                    );
                    pstab_drift = pos.max(vel);
                    finals.push(x.last);
                }
                Control::B(..) => {
                    assert!(
                        pos.max(vel) >= 1e3 * pstab_drift,
                        "{name}: B(20, 100) drift {pos:.2e}, {vel:.2e}"
                    );
                }
                Control::None => {}
            }
        }
    }
    let diff = (finals[0] - finals[1]).abs();
    println!("  PStab: Cartesian - linear formulation at t = 3: {diff:.2e}");
    assert!(diff <= 1e-4, "formulations differ by {diff:.2e}");
}

/// Seed 001 Ch. 5: the deformable slider-crank
/// (`models/slider_crank_flexible.toml` with 8 beam elements and
/// omega0 = 180 rad/s, `--set generator.elements=8 --set generator.omega0=180`)
/// over 0.07 s with DOPRI5 + PStab and + B(30, 100) (the seed's pair for the
/// deformable model at 180 rad/s, Fig. 5.8). Reference: the maximum midpoint
/// deflection (probe `midpoint_deflection`) of the shipped integrator
/// settings (GSSSS midpoint rule, dt = 1e-5).
///
/// At the seed's tolerances (rtol 1e-3, atol 1e-4) DOPRI5 is stability
/// limited on the 8-element rod (about 94,000 steps of 7e-7 s, 20 %
/// rejected) and the loose tolerance lets the stiff beam modes gain energy:
/// the energy balance is off by 0.6 and the deflection grows to about 4.4 in
/// (reference 0.278 in); B(30, 100) does the same. This part cannot be met
/// with 8 elements; it is reported, not asserted. With the seed's own 2
/// elements the seed's tolerances are enough (asserted below), and with 8
/// elements rtol 1e-4, atol 1e-5 is. Asserted:
///
/// * N = 8, rtol 1e-4, atol 1e-5: PStab and B(30, 100) within 0.5 % of the
///   reference; PStab drift <= 1e-10; Baumgarte's drift larger (at least
///   1000 times PStab's, or 1e-13);
/// * N = 8, rtol 1e-3, atol 1e-4, PStab: completes, drift <= 1e-10;
/// * N = 2, rtol 1e-3, atol 1e-4, PStab: within 0.5 % of the N = 2 reference.
///
/// Each N = 8 DOPRI5 run takes 3.5–5 s (570,000–710,000 right-hand sides;
/// GSSSS: 0.2 s).
#[test]
fn deformable_slider_crank_midpoint_deflection() {
    let deflection = |s: &RunSummary| probe(s, "midpoint_deflection").max_abs;
    for (elements, cases) in [
        (
            8,
            vec![
                (1e-4, 1e-5, Control::PStab, true),
                (1e-4, 1e-5, Control::B(30.0, 100.0), true),
                (1e-3, 1e-4, Control::PStab, false),
            ],
        ),
        (2, vec![(1e-3, 1e-4, Control::PStab, true)]),
    ] {
        let e = format!("generator.elements={elements}");
        let sets = [e.as_str(), "generator.omega0=180"];
        let g = run(
            load("slider_crank_flexible", &sets),
            &IntegratorSpec::default(),
        );
        let reference = deflection(&g);
        println!(
            "deformable slider-crank, N = {elements}, 180 rad/s, 0.07 s: GSSSS (shipped settings) \
             max midpoint deflection {reference:.6} in, {} steps, {:.2} s",
            g.steps, g.wall_seconds
        );
        let mut pstab_drift = f64::NAN;
        for (rtol, atol, stab, accurate) in cases {
            let s = run(
                load("slider_crank_flexible", &sets),
                &dopri5(rtol, atol, 0.07, stab),
            );
            let d = deflection(&s);
            let (pos, vel) = drifts(&s);
            let rel = d / reference - 1.0;
            println!(
                "  DOPRI5 rtol {rtol:.0e} atol {atol:.0e} {stab}: max deflection {d:.6} in ({:+.3} %), \
                 drift {pos:.2e} / {vel:.2e}, energy balance {:.1e}, NFCN {} NSTEP {} NREJCT {}, {:.1} s",
                100.0 * rel,
                s.max_rel_energy_change,
                stat(&s, "nfcn"),
                stat(&s, "nstep"),
                stat(&s, "nreject"),
                s.wall_seconds
            );
            if accurate {
                assert!(
                    rel.abs() <= 5e-3,
                    "{stab} rtol {rtol}: deflection {d} vs {reference}"
                );
            }
            match stab {
                Control::PStab => {
                    assert!(pos.max(vel) <= 1e-10, "PStab drift {pos:.2e}, {vel:.2e}");
                    if rtol == 1e-4 {
                        pstab_drift = pos.max(vel);
                    }
                }
                _ => assert!(
                    pos.max(vel) >= (1e3 * pstab_drift).max(1e-13),
                    "{stab}: drift {pos:.2e}, {vel:.2e} vs PStab's {pstab_drift:.2e}"
                ),
            }
        }
    }
}
