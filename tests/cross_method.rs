//! Cross-method agreement (issue #11): every integration method, run on the
//! double pendulum, the four-mass model and the rigid slider-crank to
//! t = 1 s, converges to the solution of GSSSS V0(1,1,0) (`midpoint`) at
//! dt = 1e-4.
//!
//! For each method two resolutions are run (a step and its half, or rtol and
//! rtol/100); the test asserts that the finer one is within the method's
//! accuracy bound of the reference and, where the coarse error is above the
//! reference's own error floor, that refining reduces it by at least the
//! factor its order gives less a margin (order 1: 1.6, order 2: 3, order 4:
//! 10; adaptive: 5 per 100x rtol, where the coarse error is above the fine
//! rtol). Methods a model is outside of (TDG and
//! alpha-kappa refuse loads and dampers, alpha-kappa prescribed motion) must
//! refuse it at setup, which is asserted too.
//!
//! Alpha-kappa runs with kappa = 1 and with kappa from eq. 71 (`"auto"`,
//! which stopped in Newton at step 1 on the four-mass model at dt <= 1e-3
//! until kappa ignored a W at round-off). BDF with full Newton runs at
//! rtol 1e-5 and 1e-7 (it failed at step 1 at 1e-7 on the double pendulum
//! until the Newton test weighed the stabilizing multipliers by h).

mod common;

use common::max_diff;
use flexmb::integrate::{IntegratorSpec, KappaChoice};
use flexmb::run::RunSummary;

const T_END: f64 = 1.0;

/// The reference solution's own error: midpoint at dt 1e-4 is second order,
/// so its error is a third of its distance to the dt = 2e-4 run.
const REFERENCE_DT: f64 = 1e-4;

struct Method {
    name: &'static str,
    /// Coarse and fine settings.
    specs: [IntegratorSpec; 2],
    /// Least error reduction from coarse to fine.
    reduction: f64,
    /// Bound on the fine run's error relative to the reference, beyond the
    /// reference's own error.
    bound: f64,
}

fn spec(method: &str) -> IntegratorSpec {
    IntegratorSpec {
        method: Some(method.into()),
        t_end: Some(T_END),
        ..IntegratorSpec::default()
    }
}

fn fixed(method: &str, scheme: Option<&str>, dt: f64) -> IntegratorSpec {
    IntegratorSpec {
        scheme: scheme.map(Into::into),
        dt: Some(dt),
        ..spec(method)
    }
}

fn adaptive(method: &str, rtol: f64) -> IntegratorSpec {
    IntegratorSpec {
        rtol: Some(rtol),
        ..spec(method)
    }
}

fn methods() -> Vec<Method> {
    let pstab = |mut s: IntegratorSpec| {
        s.stabilization = Some("pstab".into());
        s
    };
    let newton = |mut s: IntegratorSpec, n: &str| {
        s.newton = Some(n.into());
        s
    };
    let kappa = |mut s: IntegratorSpec, k: KappaChoice| {
        s.alpha = Some(0.5);
        s.kappa = Some(k);
        s
    };
    let one = || KappaChoice::Number(1.0);
    vec![
        Method {
            name: "gssss generalized-alpha(0.8)",
            specs: [
                fixed("gssss", Some("generalized-alpha(0.8)"), 2e-3),
                fixed("gssss", Some("generalized-alpha(0.8)"), 1e-3),
            ],
            reduction: 3.0,
            bound: 1e-3,
        },
        Method {
            name: "dopri5 + pstab",
            specs: [
                pstab(adaptive("dopri5", 1e-6)),
                pstab(adaptive("dopri5", 1e-8)),
            ],
            reduction: 5.0,
            bound: 1e-5,
        },
        Method {
            name: "rk4 + pstab",
            specs: [
                pstab(fixed("rk4", None, 1e-2)),
                pstab(fixed("rk4", None, 5e-3)),
            ],
            reduction: 10.0,
            bound: 1e-5,
        },
        Method {
            name: "epm (rk4)",
            specs: [fixed("epm", None, 1e-2), fixed("epm", None, 5e-3)],
            reduction: 10.0,
            bound: 1e-5,
        },
        Method {
            name: "tcg",
            specs: [fixed("tcg", None, 2e-3), fixed("tcg", None, 1e-3)],
            reduction: 3.0,
            bound: 1e-3,
        },
        Method {
            name: "tdg (alpha 1)",
            specs: [fixed("tdg", None, 2e-3), fixed("tdg", None, 1e-3)],
            reduction: 1.6,
            bound: 1e-1,
        },
        Method {
            name: "alpha-kappa (alpha 0.5, kappa 1)",
            specs: [
                kappa(fixed("alpha-kappa", None, 2e-3), one()),
                kappa(fixed("alpha-kappa", None, 1e-3), one()),
            ],
            reduction: 3.0,
            bound: 1e-3,
        },
        Method {
            name: "alpha-kappa (alpha 0.5, kappa auto)",
            specs: [
                kappa(
                    fixed("alpha-kappa", None, 2e-3),
                    KappaChoice::Name("auto".into()),
                ),
                kappa(
                    fixed("alpha-kappa", None, 1e-3),
                    KappaChoice::Name("auto".into()),
                ),
            ],
            reduction: 3.0,
            bound: 1e-3,
        },
        Method {
            name: "bdf full Newton",
            specs: [
                newton(adaptive("bdf", 1e-5), "full"),
                newton(adaptive("bdf", 1e-7), "full"),
            ],
            reduction: 5.0,
            bound: 1e-4,
        },
        Method {
            name: "bdf cm",
            specs: [
                newton(adaptive("bdf", 1e-5), "cm"),
                newton(adaptive("bdf", 1e-7), "cm"),
            ],
            reduction: 5.0,
            bound: 1e-4,
        },
    ]
}

fn run(model: &str, s: &IntegratorSpec) -> (RunSummary, Option<Vec<f64>>) {
    let (summary, rec) = common::run(model, s);
    let u = summary
        .failure
        .is_none()
        .then(|| rec.u.last().expect("recorded").clone());
    (summary, u)
}

/// Error of `u` against the reference, relative to the reference's size.
fn error(u: &[f64], reference: &[f64]) -> f64 {
    max_diff(u, reference) / reference.iter().fold(1.0_f64, |m, x| m.max(x.abs()))
}

/// Which methods refuse which models at setup (the refusal message must name
/// the reason).
fn refused(model: &str, method: &str) -> Option<&'static str> {
    match (model, method) {
        (
            "slider_crank_rigid",
            "alpha-kappa (alpha 0.5, kappa 1)" | "alpha-kappa (alpha 0.5, kappa auto)",
        ) => Some("prescribed motion"),
        _ => None,
    }
}

fn agreement(model: &str) {
    let reference_spec = |dt| IntegratorSpec {
        scheme: Some("midpoint".into()),
        ..fixed("gssss", None, dt)
    };
    let (s, reference) = run(model, &reference_spec(REFERENCE_DT));
    let reference =
        reference.unwrap_or_else(|| panic!("{model}: reference failed: {:?}", s.failure));
    let (_, coarse_ref) = run(model, &reference_spec(2.0 * REFERENCE_DT));
    let floor = error(&coarse_ref.expect("dt 2e-4 reference"), &reference) / 3.0;
    eprintln!("{model}: reference error floor {floor:.2e}");
    for m in methods() {
        if let Some(reason) = refused(model, m.name) {
            let (s, u) = run(model, &m.specs[0]);
            assert!(u.is_none(), "{model}, {}: expected a refusal", m.name);
            let msg = s.failure.map(|f| f.to_string()).unwrap_or_default();
            assert!(msg.contains(reason), "{model}, {}: {msg}", m.name);
            assert_eq!(s.steps, 0, "{model}, {}: refused after steps", m.name);
            eprintln!("{model}, {}: refused ({reason})", m.name);
            continue;
        }
        let errs: Vec<f64> = m
            .specs
            .iter()
            .map(|sp| {
                let (s, u) = run(model, sp);
                let u = u.unwrap_or_else(|| {
                    panic!(
                        "{model}, {} ({sp:?}) failed: {}",
                        m.name,
                        s.failure.unwrap()
                    )
                });
                error(&u, &reference)
            })
            .collect();
        eprintln!(
            "{model}, {}: error coarse {:.2e}, fine {:.2e} (reduction {:.1})",
            m.name,
            errs[0],
            errs[1],
            errs[0] / errs[1]
        );
        assert!(
            errs[1] <= m.bound + 3.0 * floor,
            "{model}, {}: fine error {:.2e} above {:.1e}",
            m.name,
            errs[1],
            m.bound
        );
        // An adaptive run's error below its finer tolerance is Newton-level,
        // not an integration error that refining must reduce (the rigid
        // slider-crank has no degree of freedom: q follows from the
        // constraints, solved to the Newton tolerance).
        let newton_level = m.specs[1].rtol.unwrap_or(0.0);
        if errs[0] > 30.0 * floor && errs[0] > newton_level {
            assert!(
                errs[0] / errs[1] >= m.reduction,
                "{model}, {}: refining reduced the error only {:.2}x (expected {})",
                m.name,
                errs[0] / errs[1],
                m.reduction
            );
        }
    }
}

#[test]
fn double_pendulum() {
    agreement("double_pendulum");
}

#[test]
fn four_mass() {
    agreement("four_mass");
}

#[test]
fn slider_crank_rigid() {
    agreement("slider_crank_rigid");
}
