//! Helpers shared by the integration tests: run a shipped model with
//! integrator overrides, the 12 seed combinations, error norms and orders.
#![allow(dead_code)] // each test binary uses a subset

#[cfg(feature = "cli")]
pub mod bench;
pub mod cantilever;
pub mod disk;
pub mod fd;
pub mod residual;
pub mod scratch;

use flexmb::input::{load_model_file, ModelFile};
use flexmb::integrate::IntegratorSpec;
use flexmb::output::{MemoryRecorder, Recorder};
use flexmb::run::{RunSummary, Simulation};

/// The seed's three algorithms (SPEC.md §1): Newmark U0(1,1,0), U0(1,1,1), V0(1,1,0).
pub const ALGORITHMS: [&str; 3] = ["newmark", "midpoint-endpoint", "midpoint"];

/// The 12 combinations {algorithm} x {option 1..4}.
pub fn combinations() -> Vec<(&'static str, u8)> {
    ALGORITHMS
        .iter()
        .flat_map(|&s| (1..=4).map(move |o| (s, o)))
        .collect()
}

/// Path of a shipped model.
pub fn model_path(name: &str) -> String {
    format!("{}/models/{name}.toml", env!("CARGO_MANIFEST_DIR"))
}

/// A unit mass on a linear spring of stiffness 4 (omega = 2), x(0) = 1, at
/// rest: x = cos 2t, v = -2 sin 2t; `integrator` is the body of its
/// `[integrator]` table.
pub fn oscillator(integrator: &str) -> String {
    format!(
        r#"
schema = 1
dimension = 2
[[node]]
id = "mass"
position = [1.0, 0.0]
mass = 1.0
[[load]]
id = "spring"
type = "linear_field"
point = "mass"
matrix = [[-4.0, 0.0], [0.0, -4.0]]
[integrator]
{integrator}
"#
    )
}

/// Each model text `base + extra` of `cases` fails to load with an error
/// that contains the case's message.
pub fn assert_load_errors(base: &str, cases: &[(&str, &str)]) {
    for (extra, msg) in cases {
        let text = format!("{base}{extra}");
        let e = flexmb::input::load_model_str(&text, "bad.toml")
            .err()
            .expect("must fail");
        assert!(e.to_string().contains(msg), "{e} should mention '{msg}'");
    }
}

/// Integrator overrides: scheme, option, dt, t_end.
pub fn spec(scheme: &str, option: u8, dt: f64, t_end: f64) -> IntegratorSpec {
    IntegratorSpec {
        scheme: Some(scheme.into()),
        option: Some(option.into()),
        dt: Some(dt),
        t_end: Some(t_end),
        ..IntegratorSpec::default()
    }
}

/// Shipped model `name` with the `--set` assignments `sets` applied.
pub fn shipped_with(name: &str, sets: &[&str]) -> ModelFile {
    let text = std::fs::read_to_string(model_path(name)).unwrap();
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    flexmb::input::load_model_with_sets(&text, name, &sets)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Runs shipped model `name` with `over` applied to its `[integrator]` table,
/// recording every step in memory.
pub fn run(name: &str, over: &IntegratorSpec) -> (RunSummary, MemoryRecorder) {
    run_file(
        load_model_file(model_path(name)).expect("shipped model loads"),
        over,
    )
}

/// Runs a loaded model file with `over` applied, recording every step in memory.
pub fn run_file(file: ModelFile, over: &IntegratorSpec) -> (RunSummary, MemoryRecorder) {
    let mut rec = MemoryRecorder::default();
    let (summary, _) = run_file_into(file, over, &mut rec);
    (summary, rec)
}

/// Runs a loaded model file with `over` applied into `rec`; returns the
/// summary and the simulation (its model and assembler). The recorder must
/// not fail.
pub fn run_file_into(
    file: ModelFile,
    over: &IntegratorSpec,
    rec: &mut dyn Recorder,
) -> (RunSummary, Simulation) {
    let config = file.integrator(over).expect("valid integrator settings");
    let sim = Simulation::new(file.model);
    let summary = sim
        .run(&config, &file.text, &file.output, rec, &mut |_| {})
        .expect("recording cannot fail");
    (summary, sim)
}

/// The run statistic `name` (`RunSummary::stat`); panics when the method
/// does not report it.
pub fn stat(s: &RunSummary, name: &str) -> f64 {
    s.stat(name)
        .unwrap_or_else(|| panic!("no statistic {name}"))
}

/// "NFCN B .. PStab .. (seed .. ..), NSTEP B .. PStab .. (seed .. ..)": the
/// function evaluations and steps of a Baumgarte and a PStab run, `got`
/// against `seed` in the order (NFCN B, PStab, NSTEP B, PStab).
pub fn counts_vs_seed(got: [f64; 4], seed: [f64; 4]) -> String {
    format!(
        "NFCN B {} PStab {} (seed {} {}), NSTEP B {} PStab {} (seed {} {})",
        got[0], got[1], seed[0], seed[1], got[2], got[3], seed[2], seed[3]
    )
}

/// Max-norm of a - b.
pub fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Max-norm of a - b relative to the max-norm of b.
pub fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    max_diff(a, b) / max_abs(b).max(1e-300)
}

/// Largest |E - E_0| over an energy history, E_0 its first entry.
pub fn max_energy_change(energy: &[flexmb::output::Energy]) -> f64 {
    let e0 = energy[0].total;
    energy
        .iter()
        .map(|e| (e.total - e0).abs())
        .fold(0.0, f64::max)
}

/// Largest value of one constraint norm (`level`: position, velocity or
/// acceleration) over a recorded run.
pub fn max_constraint(
    norms: &[flexmb::output::ConstraintNorms],
    level: impl Fn(&flexmb::output::ConstraintNorms) -> f64,
) -> f64 {
    norms.iter().map(level).fold(0.0, f64::max)
}

/// Max-norm.
pub fn max_abs(a: &[f64]) -> f64 {
    a.iter().fold(0.0_f64, |m, x| m.max(x.abs()))
}

/// Observed order of two errors at step sizes differing by a factor 2.
pub fn order(e_coarse: f64, e_fine: f64) -> f64 {
    (e_coarse / e_fine).log2()
}

/// Final-time errors in (u, v, a, lambda) of a recorded run against a
/// reference run or an exact state.
pub fn final_errors(rec: &MemoryRecorder, exact: [&[f64]; 4]) -> [f64; 4] {
    let k = rec.time.len() - 1;
    [
        max_diff(&rec.u[k], exact[0]),
        max_diff(&rec.v[k], exact[1]),
        max_diff(&rec.a[k], exact[2]),
        max_diff(&rec.lambda[k], exact[3]),
    ]
}

/// Convergence study to `t_end` with dt = 2^-k for k in `levels` against a
/// reference (run at 2^-`reference_level`, or the exact final state when
/// given): returns the errors per level and the finest-pair orders in
/// (u, v, a, lambda).
pub fn convergence(
    name: &str,
    scheme: &str,
    option: u8,
    t_end: f64,
    levels: std::ops::RangeInclusive<i32>,
    reference: Result<[Vec<f64>; 4], i32>,
) -> (Vec<[f64; 4]>, [f64; 4]) {
    let exact = match reference {
        Ok(x) => x,
        Err(level) => {
            let (s, r) = run(name, &spec(scheme, option, 2f64.powi(-level), t_end));
            assert!(
                s.failure.is_none(),
                "{scheme} option {option}: reference run failed"
            );
            let k = r.time.len() - 1;
            [
                r.u[k].clone(),
                r.v[k].clone(),
                r.a[k].clone(),
                r.lambda[k].clone(),
            ]
        }
    };
    let errors: Vec<[f64; 4]> = levels
        .map(|level| {
            let (s, r) = run(name, &spec(scheme, option, 2f64.powi(-level), t_end));
            assert!(
                s.failure.is_none(),
                "{scheme} option {option} dt 2^-{level} failed"
            );
            assert!((r.time[r.time.len() - 1] - t_end).abs() < 1e-12);
            final_errors(&r, [&exact[0], &exact[1], &exact[2], &exact[3]])
        })
        .collect();
    let (c, f) = (errors[errors.len() - 2], errors[errors.len() - 1]);
    (errors, [0, 1, 2, 3].map(|q| order(c[q], f[q])))
}

/// Prints the finest-pair orders and the errors of every level (u, v, a, lambda).
pub fn print_orders(what: &str, errors: &[[f64; 4]], orders: [f64; 4]) {
    let errors: Vec<[String; 4]> = errors
        .iter()
        .map(|e| e.map(|x| format!("{x:.1e}")))
        .collect();
    println!("{what}: orders {orders:.3?}, errors {errors:?}");
}

/// Asserts every finest-pair order is in [lo, hi], naming the variable.
pub fn assert_orders(what: &str, orders: [f64; 4], lo: f64, hi: f64) {
    for (name, p) in ["u", "v", "a", "lambda"].iter().zip(orders) {
        assert!(
            (lo..=hi).contains(&p),
            "{what}: order in {name} is {p:.3}, expected in [{lo}, {hi}] (orders u, v, a, lambda: {orders:.3?})"
        );
    }
}

/// Largest fourth difference |x_{k+2} - 4 x_{k+1} + 6 x_k - 4 x_{k-1} + x_{k-2}|
/// over recorded steps `range`, relative to the largest |x| there: about
/// (w dt)^4 for a smooth history, 16 times the relative amplitude of a
/// step-to-step (-1)^k oscillation.
pub fn oscillation(series: &[Vec<f64>], range: std::ops::Range<usize>) -> f64 {
    let mut d4: f64 = 0.0;
    let mut scale: f64 = 0.0;
    for k in range.start.max(2)..range.end.min(series.len() - 2) {
        let w = &series[k - 2..=k + 2];
        let columns = w[0].iter().zip(&w[1]).zip(&w[2]).zip(&w[3]).zip(&w[4]);
        for ((((x0, x1), x2), x3), x4) in columns {
            d4 = d4.max((x4 - 4.0 * x3 + 6.0 * x2 - 4.0 * x1 + x0).abs());
            scale = scale.max(x2.abs());
        }
    }
    d4 / scale
}

/// Euler parameters at time `t` of the torque-free axisymmetric body of
/// models/axisymmetric_body.toml (J = diag(1, 1, 2), w(0) = (1, 0, 2),
/// R(0) = I, h = (1, 0, 4); its header): the analytic precession
/// p(t) = (cos(mu t/2), sin(mu t/2) h/|h|) (cos(n t/2), -sin(n t/2) e_z),
/// mu = |h| = sqrt(17), n = 2.
pub fn axisymmetric_attitude(t: f64) -> [f64; 4] {
    let h = 17f64.sqrt();
    let (mu, n) = (h, 2.0);
    let (sp, cp) = (0.5 * mu * t).sin_cos();
    let (ss, cs) = (0.5 * n * t).sin_cos();
    qmul([cp, sp / h, 0.0, 4.0 * sp / h], [cs, 0.0, 0.0, -ss])
}

/// The quaternion (Hamilton) product a b, scalar first: the rotation R(a) R(b).
pub fn qmul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}
