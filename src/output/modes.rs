//! Mode shapes to HDF5 in the run-file layout (`docs/output-format.md`,
//! `docs/modes.md`), so that the mesh, `/points` and the XDMF side file
//! show them in ParaView as a time series: row 0 is the state linearized
//! about, row k (time k) mode k drawn at `u_ref + s phi_k`, the scale s
//! making the largest translation of the mode `amplitude`. `/v` holds the
//! mass-normalized shape phi_k itself (zero in row 0); the frequencies are
//! root attributes `integrator.omega_k` (rad/s) and `integrator.hz_k`.

use std::path::Path;

use crate::model::{DofKind, Model};
use crate::modes::{LinearizedSystem, Modes};

use super::{
    AttrValue, ConstraintNorms, Energy, Hdf5Recorder, Mesh, NewtonStats, OutputConfig, OutputError,
    Recorder, RunInfo, RunStatus, StepRecord,
};

/// The default drawing amplitude: a tenth of the largest extent or
/// coordinate of the model's translations at the reference state (1 when
/// it has none).
pub fn default_amplitude(model: &Model, u: &[f64]) -> f64 {
    let mut largest = 0.0_f64;
    for axis in 0..model.dim {
        let x: Vec<f64> = (0..model.n_dofs())
            .filter(|&i| model.dofs.kind(i) == DofKind::Translation(axis as u8))
            .map(|i| u[i])
            .collect();
        let (lo, hi) = x
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(*v), b.max(*v))
            });
        if !x.is_empty() {
            largest = largest.max(hi - lo).max(lo.abs()).max(hi.abs());
        }
    }
    if largest > 0.0 {
        0.1 * largest
    } else {
        1.0
    }
}

/// Writes the modes of `sys` (linearized from `model`) to `path`
/// (module doc); `description` becomes the root attribute `integrator`.
pub fn write_modes(
    path: &Path,
    model: &Model,
    sys: &LinearizedSystem,
    modes: &Modes,
    amplitude: f64,
    model_text: &str,
    description: &str,
) -> Result<(), OutputError> {
    let n = sys.n_dofs();
    let mut parameters = vec![("at".to_string(), AttrValue::Str(sys.at.clone()))];
    for (k, m) in modes.modes.iter().enumerate() {
        parameters.push((format!("omega_{}", k + 1), AttrValue::F64(m.omega)));
        parameters.push((format!("hz_{}", k + 1), AttrValue::F64(m.hz())));
    }
    let info = RunInfo {
        integrator: description.to_string(),
        parameters,
        model_text: model_text.to_string(),
        dof_names: model.dofs.names().to_vec(),
        multiplier_names: model.multiplier_names(),
        mesh: Mesh::from_model(model),
        probe_names: Vec::new(),
        stat_names: Vec::new(),
    };
    let mut rec = Hdf5Recorder::create(path, OutputConfig::default())?;
    rec.begin(&info)?;
    let zeros = vec![0.0; n];
    let lambda = vec![0.0; sys.n_constraints()];
    rec.record(&record(0, &sys.u, &zeros, &zeros, &lambda))?;
    let mut u = vec![0.0; n];
    for (k, m) in modes.modes.iter().enumerate() {
        let largest = (0..n)
            .filter(|&i| matches!(model.dofs.kind(i), DofKind::Translation(_)))
            .fold(0.0_f64, |a, i| a.max(m.shape[i].abs()));
        let s = if largest > 0.0 {
            amplitude / largest
        } else {
            0.0
        };
        for ((x, r), p) in u.iter_mut().zip(&sys.u).zip(&m.shape) {
            *x = r + s * p;
        }
        rec.record(&record(k as u64 + 1, &u, &m.shape, &zeros, &lambda))?;
    }
    rec.finish(&RunStatus::Completed, modes.modes.len() as f64)
}

/// Row `step` (time `step`) of a modes file.
fn record<'a>(
    step: u64,
    u: &'a [f64],
    v: &'a [f64],
    zeros: &'a [f64],
    lambda: &'a [f64],
) -> StepRecord<'a> {
    StepRecord {
        step,
        time: step as f64,
        u,
        v,
        a: zeros,
        lambda,
        energy: Energy::default(),
        constraints: ConstraintNorms::default(),
        newton: NewtonStats::default(),
        probes: &[],
        stats: &[],
    }
}
