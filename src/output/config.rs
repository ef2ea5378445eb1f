//! The `[output]` table of a model file: which fields, how often, how compressed.

use serde::{Deserialize, Serialize};

use crate::model::Model;

/// A group of output datasets that can be switched on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Field {
    /// `/u`.
    U,
    /// `/v`.
    V,
    /// `/a`.
    A,
    /// `/lambda`.
    Lambda,
    /// `/energy/*`.
    Energy,
    /// `/constraints/*`.
    Constraints,
    /// `/newton/*`.
    Newton,
    /// `/points`: the coordinates of every mesh point per step (what the
    /// XDMF side file animates).
    Points,
    /// `/bodies/<name>/position` and `/bodies/<name>/angle` (planar) or `orientation` (3-D).
    Bodies,
    /// `/joints/<name>/lambda`.
    Joints,
}

impl Field {
    /// Every field, the default selection.
    pub const ALL: [Field; 10] = [
        Field::U,
        Field::V,
        Field::A,
        Field::Lambda,
        Field::Energy,
        Field::Constraints,
        Field::Newton,
        Field::Points,
        Field::Bodies,
        Field::Joints,
    ];
}

/// How often a step is recorded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OutputInterval {
    /// Every k-th step (k >= 1); the initial state and the last step are always recorded.
    Steps(u64),
    /// Every `dt_out` of simulated time (the first step at or after each multiple).
    Time(f64),
}

/// Output settings.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputConfig {
    /// Selected dataset groups.
    pub fields: Vec<Field>,
    /// Recording interval.
    pub interval: OutputInterval,
    /// Deflate level 0 (off) ..= 9.
    pub compression: u8,
    /// Rows per chunk of the `[steps, n]` datasets.
    pub chunk_rows: usize,
    /// Seconds between flushes to disk (a killed run stays readable up to the last flush).
    pub flush_seconds: f64,
    /// Soft limit of the output's estimated size in bytes
    /// ([`super::SizeEstimate::check`]; `flexmb run --force` lifts it).
    pub max_bytes: f64,
    /// The XDMF side file (`[output] xdmf`): `Some(true)` writes it,
    /// `Some(false)` does not; `None` leaves it to the model
    /// ([`OutputConfig::for_model`]: written when the model has elements).
    /// A recorder given `None` writes it. It needs [`Field::Points`].
    pub xdmf: Option<bool>,
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig {
            fields: Field::ALL.to_vec(),
            interval: OutputInterval::Steps(1),
            compression: 0,
            chunk_rows: 256,
            flush_seconds: 2.0,
            max_bytes: super::DEFAULT_MAX_BYTES,
            xdmf: None,
        }
    }
}

impl OutputConfig {
    /// Whether a field is selected.
    pub fn has(&self, f: Field) -> bool {
        self.fields.contains(&f)
    }

    /// This configuration with `xdmf` decided for `model` when it was left
    /// open: the side file animates a mesh, so it is written for a model with
    /// elements (beams, trusses, springs, ...) and not for one of rigid bodies,
    /// nodes and joints only, whose side file would be large (one grid per
    /// recorded step) and show little.
    pub fn for_model(&self, model: &Model) -> OutputConfig {
        let mut c = self.clone();
        c.xdmf
            .get_or_insert_with(|| model.elements.iter().any(|b| !b.is_empty()));
        c
    }
}
