//! `--resume`: a case's run summary read back from its HDF5 file.
//!
//! A case is skipped when its file says `status = "completed"` and its
//! `model` attribute equals the case's model text (the base text with
//! `[set]` and the case's values applied: the whole input of the run, so a
//! changed parameter, base model or `[set]` value reruns it). Every other
//! case (no file, unreadable, `running` after a kill, `failed`, a different
//! model text) runs again.

use std::path::Path;

use crate::input::ModelFile;
use crate::output::ProbeSummary;
use crate::output::{read_hdf5_run, AttrValue, Hdf5Reader, RunSource};
use crate::run::RunSummary;

/// The summary of the completed run of `file`'s model in `path`, or `None`
/// when the case must run (see the module documentation).
///
/// Steps, Newton iterations and wall time are the root attributes `steps`,
/// `newton_iterations`, `wall_seconds` (the totals over every step, which a
/// file recorded every k steps does not hold in `/newton/iterations`); the
/// energy change is recomputed from the recorded rows exactly as the time
/// loop computes it (`crate::run`); the constraint residuals at the three
/// levels are the attributes `max_{position,velocity,acceleration}_violation`
/// (the run's own maxima, also when `/constraints` was not recorded); the
/// probe summaries are the attributes `probe.<name>.<stat>`, the method's
/// statistics the attributes `stats.<name>`. A file without one of these
/// attributes runs again.
pub(super) fn resumed_summary(path: &Path, file: &ModelFile) -> Option<RunSummary> {
    if !path.is_file() {
        return None;
    }
    let attrs = Hdf5Reader::open(path).ok()?.root_attrs().ok()?;
    let get = |name: &str| attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    let text = |name: &str| match get(name) {
        Some(AttrValue::Str(s)) => Some(s.as_str()),
        _ => None,
    };
    let number = |name: &str| match get(name) {
        Some(AttrValue::F64(x)) => Some(*x),
        Some(AttrValue::I64(x)) => Some(*x as f64),
        _ => None,
    };
    let count = |name: &str| match get(name) {
        Some(AttrValue::I64(x)) => u64::try_from(*x).ok(),
        _ => None,
    };
    if text("status") != Some("completed") || text("model") != Some(file.text.as_str()) {
        return None;
    }
    let run = read_hdf5_run(path).ok()?;
    let mut probes = Vec::with_capacity(file.model.probes.len());
    for p in &file.model.probes {
        let stat = |s: &str| number(&format!("probe.{}.{s}", p.name));
        probes.push((
            p.name.clone(),
            ProbeSummary {
                min: stat("min")?,
                max: stat("max")?,
                max_abs: stat("max_abs")?,
                t_max_abs: stat("t_max_abs")?,
                last: stat("final")?,
            },
        ));
    }
    // As in `Simulation::run`.
    let e0 = run.energy.first()?.total;
    let mut balance = crate::run::EnergyBalance::new(e0);
    for e in &run.energy {
        balance.add(e);
    }
    Some(RunSummary {
        integrator: run.integrator.clone(),
        steps: count("steps")?,
        newton_iterations: count("newton_iterations")?,
        t_end_reached: run.t_end_reached,
        energy_initial: e0,
        max_rel_energy_change: balance.max_relative(),
        final_rel_energy_change: balance.final_relative(),
        max_position_violation: number("max_position_violation")?,
        wall_seconds: number("wall_seconds")?,
        failure: None,
        probes,
        timings: None,
        // The method's statistics: the attributes `stats.<name>`, in the
        // method's order.
        stats: file
            .integrator(&crate::integrate::IntegratorSpec::default())
            .ok()?
            .statistics()
            .iter()
            .map(|s| Some((s.name.to_string(), number(&format!("stats.{}", s.name))?)))
            .collect::<Option<Vec<_>>>()?,
        counts: file
            .integrator(&crate::integrate::IntegratorSpec::default())
            .ok()?
            .statistics()
            .iter()
            .filter(|s| s.integer)
            .map(|s| Some((s.name.to_string(), count(&format!("stats.{}", s.name))?)))
            .collect::<Option<Vec<_>>>()?,
        max_velocity_violation: number("max_velocity_violation")?,
        max_acceleration_violation: number("max_acceleration_violation")?,
        initial: Default::default(),
        interrupted: None,
    })
}
