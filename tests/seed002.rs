//! Seed 002 (Lens & Cardona 2007, SPEC.md §2): the Galerkin schemes on the
//! seed's cases a–d (`models/seed002_*.toml`), docs/theory/galerkin.md.

mod common;

use common::*;
use flexmb::integrate::IntegratorSpec;
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
