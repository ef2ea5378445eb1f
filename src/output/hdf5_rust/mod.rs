//! The pure-Rust HDF5 recorder ([`Hdf5Recorder`], on `rust-hdf5`'s SWMR writer)
//! and the reader both backends share ([`read_hdf5`]).
//!
//! The layout, the chunking and the row buffering are backend independent and
//! live here too (`pub(super)`): [`Streamer`] turns [`Recorder`] calls into
//! chunk-band writes and periodic flushes on a [`Backend`]. The layout is
//! documented in `docs/output-format.md`.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rust_hdf5::format::checksum::checksum_metadata;
use rust_hdf5::format::dense_attr::read_dense_attributes;
use rust_hdf5::format::messages::attr_info::AttributeInfoMessage;
use rust_hdf5::format::messages::attribute::AttributeMessage;
use rust_hdf5::format::messages::continuation::ContinuationMessage;
use rust_hdf5::format::object_header::ObjectHeader;
use rust_hdf5::format::superblock::{
    detect_superblock_version, SuperblockV0V1, SuperblockV2V3, SUPERBLOCK_V2,
};
use rust_hdf5::format::{BlockReader, FormatContext, FormatError, FormatResult};
use rust_hdf5::swmr::SwmrFileWriter;
use rust_hdf5::{DatatypeMessage, FilterPipeline, H5File, H5Type};

use super::{
    AttrValue, ConstraintNorms, Energy, Field, Mesh, NewtonStats, OutputConfig, OutputError,
    Recorder, RunInfo, RunStatus, RunTotals, StepRecord,
};
use crate::attitude::Attitude;
use crate::output::ProbeSummary;

// ---------------------------------------------------------------------------
// Layout shared by both backends
// ---------------------------------------------------------------------------

/// Largest chunk of a `[steps, n]` dataset, in bytes (libhdf5's default chunk cache).
pub(super) const CHUNK_MAX_BYTES: usize = 1 << 20;
/// Largest chunk-row band (`chunk_rows` full rows) buffered per `[steps, n]` dataset.
pub(super) const BAND_MAX_BYTES: usize = 16 << 20;
/// Path of the step-number dataset.
pub(super) const STEP_PATH: &str = "step";
/// Path of the DOF label dataset.
pub(super) const DOF_NAMES: &str = "dofs/names";
/// Path of the multiplier label dataset.
pub(super) const MULT_NAMES: &str = "multipliers/names";
/// Path of the point coordinates over time.
pub(super) const POINTS: &str = "points";
/// Path of the reference coordinates of the mesh points.
pub(super) const MESH_NODES: &str = "mesh/nodes";
/// Group below `/mesh` of the rigid bodies' point cells.
pub(super) const MESH_BODIES: &str = "bodies";

/// Root attribute names.
pub(super) mod attr {
    /// `running`, `completed` or `failed`.
    pub const STATUS: &str = "status";
    /// Why a run failed, empty otherwise.
    pub const FAILURE_REASON: &str = "failure_reason";
    /// Last time reached (NaN until `finish`).
    pub const T_END_REACHED: &str = "t_end_reached";
    /// Integrator name.
    pub const INTEGRATOR: &str = "integrator";
    /// Prefix of the integrator parameter attributes.
    pub const PARAM_PREFIX: &str = "integrator.";
    /// Model file text.
    pub const MODEL: &str = "model";
    /// flexmb version that wrote the file.
    pub const VERSION: &str = "flexmb_version";
    /// Steps completed ([`super::RunTotals`]).
    pub const STEPS: &str = "steps";
    /// Newton iterations of all completed steps.
    pub const NEWTON_ITERATIONS: &str = "newton_iterations";
    /// Wall time of the time loop (s).
    pub const WALL_SECONDS: &str = "wall_seconds";
    /// Max over the recorded steps of the position-, velocity- and
    /// acceleration-level constraint residuals ([`super::RunTotals`]).
    pub const MAX_VIOLATIONS: [&str; 3] = [
        "max_position_violation",
        "max_velocity_violation",
        "max_acceleration_violation",
    ];
}

/// Element type of a streamed dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dtype {
    /// IEEE f64, little endian.
    F64,
    /// u64, little endian.
    U64,
    /// u32, little endian.
    U32,
}

impl Dtype {
    /// Bytes per element.
    pub(super) fn size(self) -> usize {
        match self {
            Dtype::F64 | Dtype::U64 => 8,
            Dtype::U32 => 4,
        }
    }
}

/// Where a streamed dataset takes its values from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    Time,
    Step,
    U,
    V,
    A,
    Lambda,
    Kinetic,
    Potential,
    Total,
    ExternalWork,
    CPosition,
    CVelocity,
    CAcceleration,
    Iterations,
    Residual,
    /// Values picked from `/u` ([`Column::picks`]).
    GatherU,
    /// Values picked from `/lambda` ([`Column::picks`]).
    GatherLambda,
    /// Values picked from the probe values ([`Column::picks`]).
    GatherProbes,
    /// A method statistic (`/stats/<name>`).
    GatherStats,
}

/// One value of a gathered row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Pick {
    /// This column of the source vector.
    Column(usize),
    /// A constant (a coordinate that is not a DOF).
    Fixed(f64),
    /// Component `k` of the unit quaternion of the director body whose nine
    /// director components are these columns (`Attitude::quaternion`).
    Quaternion([usize; 9], usize),
}

/// One streamed dataset of the layout.
#[derive(Debug)]
pub(super) struct ColumnSpec {
    /// Path below the root, e.g. `energy/kinetic`.
    pub path: &'static str,
    /// Selecting field; `None` = always written.
    pub field: Option<Field>,
    /// Value source.
    pub source: Source,
}

const fn spec(path: &'static str, field: Option<Field>, source: Source) -> ColumnSpec {
    ColumnSpec {
        path,
        field,
        source,
    }
}

/// Every streamed dataset, in creation order.
pub(super) const COLUMNS: [ColumnSpec; 15] = [
    spec("time", None, Source::Time),
    spec(STEP_PATH, None, Source::Step),
    spec("u", Some(Field::U), Source::U),
    spec("v", Some(Field::V), Source::V),
    spec("a", Some(Field::A), Source::A),
    spec("lambda", Some(Field::Lambda), Source::Lambda),
    spec("energy/kinetic", Some(Field::Energy), Source::Kinetic),
    spec("energy/potential", Some(Field::Energy), Source::Potential),
    spec("energy/total", Some(Field::Energy), Source::Total),
    spec(
        "energy/external_work",
        Some(Field::Energy),
        Source::ExternalWork,
    ),
    spec(
        "constraints/position",
        Some(Field::Constraints),
        Source::CPosition,
    ),
    spec(
        "constraints/velocity",
        Some(Field::Constraints),
        Source::CVelocity,
    ),
    spec(
        "constraints/acceleration",
        Some(Field::Constraints),
        Source::CAcceleration,
    ),
    spec("newton/iterations", Some(Field::Newton), Source::Iterations),
    spec("newton/residual", Some(Field::Newton), Source::Residual),
];

impl Source {
    fn dtype(self) -> Dtype {
        match self {
            Source::Step => Dtype::U64,
            Source::Iterations => Dtype::U32,
            _ => Dtype::F64,
        }
    }

    /// Row vector of a `[steps, n]` dataset, `None` for `[steps]` ones.
    fn row<'a>(self, rec: &StepRecord<'a>) -> Option<&'a [f64]> {
        match self {
            Source::U => Some(rec.u),
            Source::V => Some(rec.v),
            Source::A => Some(rec.a),
            Source::Lambda => Some(rec.lambda),
            _ => None,
        }
    }

    /// The vector a gathered dataset picks from.
    fn gathered<'a>(self, rec: &StepRecord<'a>) -> Option<&'a [f64]> {
        match self {
            Source::GatherU => Some(rec.u),
            Source::GatherLambda => Some(rec.lambda),
            Source::GatherProbes => Some(rec.probes),
            Source::GatherStats => Some(rec.stats),
            _ => None,
        }
    }

    fn scalar(self, rec: &StepRecord<'_>) -> f64 {
        match self {
            Source::Time => rec.time,
            Source::Kinetic => rec.energy.kinetic,
            Source::Potential => rec.energy.potential,
            Source::Total => rec.energy.total,
            Source::ExternalWork => rec.energy.external_work,
            Source::CPosition => rec.constraints.position,
            Source::CVelocity => rec.constraints.velocity,
            Source::CAcceleration => rec.constraints.acceleration,
            Source::Residual => rec.newton.residual,
            Source::Step | Source::Iterations | Source::U | Source::V | Source::A => 0.0,
            Source::Lambda
            | Source::GatherU
            | Source::GatherLambda
            | Source::GatherProbes
            | Source::GatherStats => 0.0,
        }
    }
}

/// A streamed dataset with its shape and chunk geometry fixed for one run.
#[derive(Debug, Clone)]
pub(super) struct Column {
    /// Path below the root, e.g. `energy/kinetic`.
    pub path: String,
    /// Value source.
    pub source: Source,
    /// What a gathered source picks, one per value of a row.
    pub picks: Vec<Pick>,
    /// Values per row of a `[steps, n]` (or `[steps, n / inner, inner]`)
    /// dataset; `None` for `[steps]`.
    pub width: Option<usize>,
    /// Length of the last dimension of a 3-D `[steps, n / inner, inner]`
    /// dataset (`/points`: 3); 1 for `[steps]` and `[steps, n]`.
    pub inner: usize,
    /// Chunk rows (the band height).
    pub chunk_rows: usize,
    /// Values of a row per chunk (1 for `[steps]` datasets and for `n = 0`;
    /// a multiple of `inner`).
    pub chunk_cols: usize,
}

impl Column {
    /// Element type.
    pub(super) fn dtype(&self) -> Dtype {
        self.source.dtype()
    }

    /// Trailing dimensions of `n` values per row.
    fn trailing(&self, n: usize) -> Vec<u64> {
        if self.inner > 1 {
            vec![(n / self.inner) as u64, self.inner as u64]
        } else {
            vec![n as u64]
        }
    }

    /// Dataset dimensions after `rows` steps.
    pub(super) fn dims(&self, rows: u64) -> Vec<u64> {
        let mut d = vec![rows];
        if let Some(n) = self.width {
            d.extend(self.trailing(n));
        }
        d
    }

    /// Maximum dimensions (`None` = unlimited). A zero-width `[steps, 0]`
    /// dataset has two unlimited dimensions (chunk dimensions must be >= 1);
    /// it never holds a chunk.
    pub(super) fn max_dims(&self) -> Vec<Option<u64>> {
        let mut d = vec![None];
        match self.width {
            Some(0) => d.push(None),
            Some(n) => d.extend(self.trailing(n).into_iter().map(Some)),
            None => {}
        }
        d
    }

    /// Chunk dimensions.
    pub(super) fn chunk(&self) -> Vec<u64> {
        let mut d = vec![self.chunk_rows as u64];
        if self.width.is_some() {
            d.extend(self.trailing(self.chunk_cols));
        }
        d
    }

    /// Chunk grid coordinates of the chunk holding row band `band`, values
    /// from `tile * chunk_cols` on.
    pub(super) fn chunk_coords(&self, band: u64, tile: usize) -> Vec<u64> {
        let mut c = vec![band];
        if self.width.is_some() {
            c.push(tile as u64);
            if self.inner > 1 {
                c.push(0);
            }
        }
        c
    }

    /// Values per row (0 for a `[steps, 0]` dataset).
    pub(super) fn row_len(&self) -> usize {
        self.width.unwrap_or(1)
    }
}

/// A dataset written once at `begin` (names, the mesh).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FixedDataset {
    /// Path below the root.
    pub path: String,
    /// Dimensions (strings: one dimension).
    pub shape: Vec<usize>,
    /// Values, row-major.
    pub data: FixedData,
}

/// Values of a [`FixedDataset`].
#[derive(Debug, Clone, PartialEq)]
pub(super) enum FixedData {
    F64(Vec<f64>),
    I64(Vec<i64>),
    /// Variable-length UTF-8 strings.
    Str(Vec<String>),
}

/// A name as one HDF5 path component: `%` and `/` are percent-encoded, and
/// so is a name that is all dots (`.` and `..` are not link names).
pub fn path_component(name: &str) -> String {
    if !name.is_empty() && name.chars().all(|c| c == '.') {
        return name.replace('.', "%2E");
    }
    name.replace('%', "%25").replace('/', "%2F")
}

/// Chunk shape `(rows, cols)` of a dataset of `width` values per row
/// (`None` = `[steps]`) whose last dimension has length `inner`.
///
/// `[steps]`: `chunk_rows`. `[steps, n]`: rows are capped so that one band
/// (`rows x n`) stays within [`BAND_MAX_BYTES`], columns so that a chunk stays
/// within [`CHUNK_MAX_BYTES`], split into equal tiles of whole `inner`
/// groups. `n = 0` gets `(rows, 1)`.
pub(super) fn chunk_shape(chunk_rows: usize, width: Option<usize>, inner: usize) -> (usize, usize) {
    let rows = chunk_rows.max(1);
    match width {
        None | Some(0) => (rows, 1),
        Some(n) => {
            let rows = rows.min((BAND_MAX_BYTES / (8 * n)).max(1));
            let groups = n / inner;
            let group_cap = (CHUNK_MAX_BYTES / (8 * rows * inner)).max(1);
            let tiles = groups.div_ceil(group_cap);
            (rows, groups.div_ceil(tiles) * inner)
        }
    }
}

/// The streamed datasets of a run: the always-written ones plus the selected
/// fields (`/points`, `/bodies/*`, `/joints/*` from `info.mesh`).
pub(super) fn plan_columns(
    path: &Path,
    config: &OutputConfig,
    info: &RunInfo,
) -> Result<Vec<Column>, OutputError> {
    let (n_dof, n_mult) = (info.dof_names.len(), info.multiplier_names.len());
    let column = |path: String, source: Source, picks: Vec<Pick>, width, inner| {
        let (chunk_rows, chunk_cols) = chunk_shape(config.chunk_rows, width, inner);
        Column {
            path,
            source,
            picks,
            width,
            inner,
            chunk_rows,
            chunk_cols,
        }
    };
    let mut columns: Vec<Column> = COLUMNS
        .iter()
        .filter(|s| s.field.is_none_or(|f| config.has(f)))
        .map(|s| {
            let width = match s.source {
                Source::U | Source::V | Source::A => Some(n_dof),
                Source::Lambda => Some(n_mult),
                _ => None,
            };
            column(s.path.to_string(), s.source, Vec::new(), width, 1)
        })
        .collect();
    let mesh = &info.mesh;
    if config.has(Field::Points) && !mesh.is_empty() {
        let picks = mesh
            .points
            .iter()
            .flat_map(|p| {
                (0..3).map(|a| match p.dofs[a] {
                    Some(d) => Pick::Column(d),
                    None => Pick::Fixed(p.reference[a]),
                })
            })
            .collect::<Vec<_>>();
        let n = picks.len();
        columns.push(column(POINTS.into(), Source::GatherU, picks, Some(n), 3));
    }
    if config.has(Field::Bodies) {
        for b in &mesh.bodies {
            let p = mesh
                .points
                .get(b.point)
                .map_or(&[][..], |p| &p.dofs[..mesh.dim]);
            let g = format!("bodies/{}", path_component(&b.name));
            let picks: Vec<Pick> = p.iter().flatten().copied().map(Pick::Column).collect();
            let n = picks.len();
            columns.push(column(
                format!("{g}/position"),
                Source::GatherU,
                picks,
                Some(n),
                1,
            ));
            // A director body's orientation is written as its quaternion.
            let rot: Vec<Pick> = match (b.attitude, <[usize; 9]>::try_from(&b.rotation[..])) {
                (Some(Attitude::Directors), Ok(d)) => {
                    (0..4).map(|k| Pick::Quaternion(d, k)).collect()
                }
                _ => b.rotation.iter().copied().map(Pick::Column).collect(),
            };
            let (name, width) = match rot.len() {
                1 => ("angle", None),
                k => ("orientation", Some(k)),
            };
            columns.push(column(
                format!("{g}/{name}"),
                Source::GatherU,
                rot,
                width,
                1,
            ));
        }
    }
    if config.has(Field::Joints) {
        for j in &mesh.joints {
            let picks = (j.first..j.first + j.rows).map(Pick::Column).collect();
            let g = format!("joints/{}/lambda", path_component(&j.name));
            columns.push(column(g, Source::GatherLambda, picks, Some(j.rows), 1));
        }
    }
    for (i, name) in info.probe_names.iter().enumerate() {
        let g = format!("probes/{}", path_component(name));
        columns.push(column(
            g,
            Source::GatherProbes,
            vec![Pick::Column(i)],
            None,
            1,
        ));
    }
    for (i, name) in info.stat_names.iter().enumerate() {
        columns.push(column(
            format!("stats/{}", path_component(name)),
            Source::GatherStats,
            vec![Pick::Column(i)],
            None,
            1,
        ));
    }
    for c in &columns {
        let len = match c.source {
            Source::GatherU => n_dof,
            Source::GatherLambda => n_mult,
            _ => continue,
        };
        if c.picks.iter().any(|p| match p {
            Pick::Column(i) => *i >= len,
            Pick::Quaternion(d, _) => d.iter().any(|i| *i >= len),
            Pick::Fixed(_) => false,
        }) {
            return Err(h5_error(
                path,
                format!(
                    "/{}: the mesh names a column beyond the {len} of its source",
                    c.path
                ),
            ));
        }
    }
    Ok(columns)
}

/// The datasets written once at `begin`: the DOF and multiplier names and,
/// for a non-empty mesh, `/mesh`.
pub(super) fn plan_fixed(info: &RunInfo) -> Vec<FixedDataset> {
    let strings = |path: &str, v: Vec<String>| FixedDataset {
        path: path.to_string(),
        shape: vec![v.len()],
        data: FixedData::Str(v),
    };
    let index = |i: usize| i64::try_from(i).unwrap_or(i64::MAX);
    let mut out = vec![
        strings(DOF_NAMES, info.dof_names.clone()),
        strings(MULT_NAMES, info.multiplier_names.clone()),
    ];
    let mesh = &info.mesh;
    if mesh.is_empty() {
        return out;
    }
    let np = mesh.points.len();
    out.push(FixedDataset {
        path: MESH_NODES.into(),
        shape: vec![np, 3],
        data: FixedData::F64(mesh.points.iter().flat_map(|p| p.reference).collect()),
    });
    out.push(strings(
        "mesh/point_names",
        mesh.points.iter().map(|p| p.name.clone()).collect(),
    ));
    out.push(FixedDataset {
        path: "mesh/point_dofs".into(),
        shape: vec![np, 3],
        data: FixedData::I64(
            mesh.points
                .iter()
                .flat_map(|p| p.dofs.map(|d| d.map_or(-1, index)))
                .collect(),
        ),
    });
    let mut cells = |group: &str, k: usize, names: Vec<String>, conn: &[usize]| {
        let group = path_component(group);
        out.push(FixedDataset {
            path: format!("mesh/{group}/connectivity"),
            shape: vec![names.len(), k],
            data: FixedData::I64(conn.iter().map(|&i| index(i)).collect()),
        });
        out.push(strings(&format!("mesh/{group}/names"), names));
    };
    for c in &mesh.cells {
        cells(&c.kind, c.points_per_cell, c.names.clone(), &c.connectivity);
    }
    if !mesh.bodies.is_empty() {
        let conn: Vec<usize> = mesh.bodies.iter().map(|b| b.point).collect();
        let names = mesh.bodies.iter().map(|b| b.name.clone()).collect();
        cells(MESH_BODIES, 1, names, &conn);
    }
    out
}

/// Groups to create before the datasets, parents first: every group on the
/// path of a planned dataset.
pub(super) fn plan_groups(columns: &[Column], fixed: &[FixedDataset]) -> Vec<String> {
    let mut groups: Vec<String> = Vec::new();
    let paths = columns.iter().map(|c| c.path.as_str());
    for p in paths.chain(fixed.iter().map(|f| f.path.as_str())) {
        for (i, _) in p.match_indices('/') {
            let g = &p[..i];
            if !groups.iter().any(|x| x == g) {
                groups.push(g.to_string());
            }
        }
    }
    groups
}

/// The root attributes written at `begin`, in order (`status` = `running`).
pub(super) fn initial_attributes(info: &RunInfo) -> Vec<(String, AttrValue)> {
    let mut attrs = vec![
        (attr::STATUS.to_string(), AttrValue::Str("running".into())),
        (
            attr::FAILURE_REASON.to_string(),
            AttrValue::Str(String::new()),
        ),
        (attr::T_END_REACHED.to_string(), AttrValue::F64(f64::NAN)),
        (
            attr::INTEGRATOR.to_string(),
            AttrValue::Str(info.integrator.clone()),
        ),
    ];
    for (name, value) in &info.parameters {
        attrs.push((format!("{}{name}", attr::PARAM_PREFIX), value.clone()));
    }
    attrs.push((
        attr::MODEL.to_string(),
        AttrValue::Str(info.model_text.clone()),
    ));
    attrs.push((
        attr::VERSION.to_string(),
        AttrValue::Str(env!("CARGO_PKG_VERSION").to_string()),
    ));
    attrs
}

/// The root attributes written at `finish`: status, failure reason, time
/// reached, the run's totals when given (`steps`, `newton_iterations`,
/// `wall_seconds`) and `probe.<name>.<min|max|max_abs|t_max_abs|final>` of
/// each probe over the recorded steps.
pub(super) fn final_attributes(
    status: &RunStatus,
    t_end_reached: f64,
    totals: Option<&RunTotals>,
    probes: &[(String, ProbeSummary)],
) -> Vec<(String, AttrValue)> {
    let (status, reason) = match status {
        RunStatus::Completed => ("completed", String::new()),
        RunStatus::Failed { reason } => ("failed", reason.clone()),
        RunStatus::Interrupted { reason } => ("interrupted", reason.clone()),
    };
    let mut attrs = vec![
        (attr::STATUS.to_string(), AttrValue::Str(status.into())),
        (attr::FAILURE_REASON.to_string(), AttrValue::Str(reason)),
        (
            attr::T_END_REACHED.to_string(),
            AttrValue::F64(t_end_reached),
        ),
    ];
    if let Some(t) = totals {
        let int = |n: u64| AttrValue::I64(i64::try_from(n).unwrap_or(i64::MAX));
        attrs.push((attr::STEPS.to_string(), int(t.steps)));
        attrs.push((
            attr::NEWTON_ITERATIONS.to_string(),
            int(t.newton_iterations),
        ));
        attrs.push((
            attr::WALL_SECONDS.to_string(),
            AttrValue::F64(t.wall_seconds),
        ));
        for (name, x) in attr::MAX_VIOLATIONS.iter().zip(t.max_constraint_violation) {
            attrs.push((name.to_string(), AttrValue::F64(x)));
        }
        for (name, x) in &t.stats {
            attrs.push((format!("stats.{name}"), x.clone()));
        }
    }
    for (name, s) in probes {
        for (stat, x) in s.fields() {
            attrs.push((format!("probe.{name}.{stat}"), AttrValue::F64(x)));
        }
    }
    attrs
}

/// An [`OutputError::Hdf5`] for `path`.
pub(super) fn h5_error(path: &Path, message: impl std::fmt::Display) -> OutputError {
    OutputError::Hdf5 {
        path: path.display().to_string(),
        message: plain_cause(&message.to_string()),
    }
}

/// An I/O failure as the operating system names it ("No space left on
/// device"), without the library's error chain ("hdf5-io error: I/O error:
/// ... (os error 28)"); other messages unchanged.
fn plain_cause(message: &str) -> String {
    match message.rsplit_once("I/O error: ") {
        Some((_, cause)) => {
            let cause = match cause.rfind(" (os error ") {
                Some(k) => &cause[..k],
                None => cause,
            };
            cause.to_string()
        }
        None => message.to_string(),
    }
}

/// Rows of one column buffered in memory, row-major.
#[derive(Debug, Clone)]
pub(super) enum ColumnBuf {
    F64(Vec<f64>),
    U64(Vec<u64>),
    U32(Vec<u32>),
}

impl ColumnBuf {
    fn new(dtype: Dtype) -> Self {
        match dtype {
            Dtype::F64 => ColumnBuf::F64(Vec::new()),
            Dtype::U64 => ColumnBuf::U64(Vec::new()),
            Dtype::U32 => ColumnBuf::U32(Vec::new()),
        }
    }

    /// Number of buffered values.
    pub(super) fn len(&self) -> usize {
        match self {
            ColumnBuf::F64(v) => v.len(),
            ColumnBuf::U64(v) => v.len(),
            ColumnBuf::U32(v) => v.len(),
        }
    }

    fn clear(&mut self) {
        match self {
            ColumnBuf::F64(v) => v.clear(),
            ColumnBuf::U64(v) => v.clear(),
            ColumnBuf::U32(v) => v.clear(),
        }
    }

    fn push(&mut self, c: &Column, rec: &StepRecord<'_>) {
        match self {
            ColumnBuf::F64(v) => match (c.source.row(rec), c.source.gathered(rec)) {
                (Some(row), _) => v.extend_from_slice(row),
                (None, Some(from)) => v.extend(c.picks.iter().map(|p| match *p {
                    Pick::Column(i) => from[i],
                    Pick::Fixed(x) => x,
                    Pick::Quaternion(d, k) => {
                        Attitude::Directors.quaternion(&d.map(|i| from[i]))[k]
                    }
                })),
                (None, None) => v.push(c.source.scalar(rec)),
            },
            ColumnBuf::U64(v) => v.push(rec.step),
            ColumnBuf::U32(v) => v.push(rec.newton.iterations),
        }
    }

    /// Writes values `range` as little-endian bytes to the start of `out`.
    pub(super) fn write_le(&self, range: std::ops::Range<usize>, out: &mut [u8]) {
        fn put<const N: usize, T: Copy>(src: &[T], out: &mut [u8], le: impl Fn(T) -> [u8; N]) {
            for (dst, &x) in out.chunks_exact_mut(N).zip(src) {
                dst.copy_from_slice(&le(x));
            }
        }
        match self {
            ColumnBuf::F64(v) => put(&v[range], out, f64::to_le_bytes),
            ColumnBuf::U64(v) => put(&v[range], out, u64::to_le_bytes),
            ColumnBuf::U32(v) => put(&v[range], out, u32::to_le_bytes),
        }
    }
}

/// What a file format library must do for [`Streamer`].
pub(super) trait Backend {
    /// Creates groups, the streamed datasets (0 rows, chunked, extendible,
    /// `compression` = deflate level), the fixed datasets and the initial root
    /// attributes, then makes the empty file durable.
    fn create_layout(
        &mut self,
        columns: &[Column],
        fixed: &[FixedDataset],
        info: &RunInfo,
        compression: u8,
    ) -> Result<(), OutputError>;
    /// Writes the rows of chunk band `first_row / chunk_rows` of column `col`
    /// (`data` holds whole rows, at most one band). `last` = the band will not
    /// be written again (it is complete, or the run ends).
    fn write_band(
        &mut self,
        col: usize,
        first_row: u64,
        data: &ColumnBuf,
        last: bool,
    ) -> Result<(), OutputError>;
    /// Sets every streamed dataset to `rows` rows and makes the file durable.
    fn flush(&mut self, rows: u64) -> Result<(), OutputError>;
    /// Sets the extents, writes the final attributes and closes the file.
    fn finish(&mut self, rows: u64, attrs: &[(String, AttrValue)]) -> Result<(), OutputError>;
}

/// The backend-independent [`Recorder`] logic: per-column buffers of the
/// current chunk band, band writes when a band fills, flushes every
/// `flush_seconds`.
pub(super) struct Streamer<B: Backend> {
    path: PathBuf,
    config: OutputConfig,
    flush_every: Duration,
    backend: B,
    columns: Vec<Column>,
    /// Rows of each column's current band.
    bufs: Vec<ColumnBuf>,
    /// First row of each column's current band.
    band_start: Vec<u64>,
    rows: u64,
    /// Lengths of `/u` and `/lambda` rows given at `begin`.
    n_dof: usize,
    n_mult: usize,
    /// Recorded times, for the XDMF side file (empty when none is written).
    times: Vec<f64>,
    /// The run's mesh, for the XDMF side file.
    mesh: Mesh,
    /// Summaries of the probes over the recorded rows (root attributes at `finish`).
    probes: Vec<(String, ProbeSummary)>,
    /// The run's totals, if given ([`Recorder::totals`]).
    totals: Option<RunTotals>,
    /// Rows were recorded since the last flush.
    dirty: bool,
    last_flush: Instant,
    begun: bool,
    finished: bool,
    /// A band write or flush failed: columns may hold different row counts,
    /// so no further step is accepted (`finish` still closes the file).
    poisoned: bool,
}

impl<B: Backend> Streamer<B> {
    /// Wraps an opened backend; nothing is written before `begin`.
    pub(super) fn new(path: &Path, config: OutputConfig, backend: B) -> Self {
        let flush_every =
            Duration::try_from_secs_f64(config.flush_seconds.max(0.0)).unwrap_or(Duration::MAX);
        Streamer {
            path: path.to_path_buf(),
            config,
            flush_every,
            backend,
            columns: Vec::new(),
            bufs: Vec::new(),
            band_start: Vec::new(),
            rows: 0,
            n_dof: 0,
            n_mult: 0,
            times: Vec::new(),
            probes: Vec::new(),
            totals: None,
            mesh: Mesh::default(),
            dirty: false,
            last_flush: Instant::now(),
            begun: false,
            finished: false,
            poisoned: false,
        }
    }

    fn check_open(&self, what: &str) -> Result<(), OutputError> {
        if self.finished {
            return Err(h5_error(&self.path, format!("{what} after finish")));
        }
        Ok(())
    }

    /// Writes every partial band with rows not yet on disk.
    fn write_partial_bands(&mut self, last: bool) -> Result<(), OutputError> {
        for (i, buf) in self.bufs.iter().enumerate() {
            if buf.len() > 0 {
                self.backend.write_band(i, self.band_start[i], buf, last)?;
            }
        }
        Ok(())
    }

    fn flush_now(&mut self) -> Result<(), OutputError> {
        if self.dirty {
            self.write_partial_bands(false)?;
            self.backend.flush(self.rows)?;
            self.dirty = false;
        }
        self.last_flush = Instant::now();
        Ok(())
    }

    /// Appends one row to every column, writing the bands it completes.
    fn push_row(&mut self, rec: &StepRecord<'_>) -> Result<(), OutputError> {
        for (i, c) in self.columns.iter().enumerate() {
            let buf = &mut self.bufs[i];
            buf.push(c, rec);
            if c.row_len() > 0 && buf.len() == c.chunk_rows * c.row_len() {
                self.backend.write_band(i, self.band_start[i], buf, true)?;
                self.band_start[i] += c.chunk_rows as u64;
                buf.clear();
            }
        }
        self.rows += 1;
        if self.writes_xdmf() {
            self.times.push(rec.time);
        }
        for ((_, s), &x) in self.probes.iter_mut().zip(rec.probes) {
            s.add(rec.time, x);
        }
        self.dirty = true;
        Ok(())
    }

    /// Whether the run gets an XDMF side file: it needs `/points`.
    fn writes_xdmf(&self) -> bool {
        self.columns.iter().any(|c| c.path == POINTS)
    }

    /// Best effort flush for `Drop`: data recorded so far stays readable.
    pub(super) fn flush_on_drop(&mut self) {
        if self.begun && !self.finished && !self.poisoned {
            // Errors cannot be reported from drop; the file keeps the last flush.
            let _ = self.flush_now();
        }
    }
}

/// Rejects settings no file can be written with, before the file is created.
pub(super) fn validate_config(path: &Path, config: &OutputConfig) -> Result<(), OutputError> {
    if config.compression > 9 {
        return Err(h5_error(
            path,
            format!("deflate level {} out of range 0..=9", config.compression),
        ));
    }
    Ok(())
}

impl<B: Backend> Recorder for Streamer<B> {
    fn begin(&mut self, info: &RunInfo) -> Result<(), OutputError> {
        self.check_open("begin")?;
        if self.begun {
            return Err(h5_error(&self.path, "begin called twice"));
        }
        self.columns = plan_columns(&self.path, &self.config, info)?;
        super::xdmf::remove_stale(&self.path)?;
        let fixed = plan_fixed(info);
        (self.n_dof, self.n_mult) = (info.dof_names.len(), info.multiplier_names.len());
        self.backend
            .create_layout(&self.columns, &fixed, info, self.config.compression)?;
        if self.writes_xdmf() {
            self.mesh = info.mesh.clone();
        }
        self.probes = info
            .probe_names
            .iter()
            .map(|n| (n.clone(), ProbeSummary::default()))
            .collect();
        self.bufs = self
            .columns
            .iter()
            .map(|c| ColumnBuf::new(c.dtype()))
            .collect();
        self.band_start = vec![0; self.columns.len()];
        self.begun = true;
        self.last_flush = Instant::now();
        Ok(())
    }

    fn record(&mut self, rec: &StepRecord<'_>) -> Result<(), OutputError> {
        self.check_open("record")?;
        if !self.begun {
            return Err(h5_error(&self.path, "record before begin"));
        }
        if self.poisoned {
            return Err(h5_error(&self.path, "record after a failed write"));
        }
        for c in &self.columns {
            if let (Some(n), Some(row)) = (c.width, c.source.row(rec)) {
                if row.len() != n {
                    return Err(h5_error(
                        &self.path,
                        format!(
                            "step {}: /{} row has {} values, expected {n}",
                            rec.step,
                            c.path,
                            row.len()
                        ),
                    ));
                }
            }
        }
        // Gathered datasets pick from /u and /lambda of the sizes `begin` saw.
        for (name, row, n) in [
            ("u", rec.u, self.n_dof),
            ("lambda", rec.lambda, self.n_mult),
        ] {
            if row.len() != n {
                return Err(h5_error(
                    &self.path,
                    format!(
                        "step {}: /{name} row has {} values, expected {n}",
                        rec.step,
                        row.len()
                    ),
                ));
            }
        }
        let written = self.push_row(rec).and_then(|()| {
            if self.last_flush.elapsed() >= self.flush_every {
                self.flush_now()
            } else {
                Ok(())
            }
        });
        self.poisoned = written.is_err();
        written
    }

    fn finish(&mut self, status: &RunStatus, t_end_reached: f64) -> Result<(), OutputError> {
        self.check_open("finish")?;
        if !self.begun {
            self.begin(&RunInfo::default())?;
        }
        self.finished = true;
        if !self.poisoned {
            self.write_partial_bands(true)?;
        }
        let attrs = final_attributes(status, t_end_reached, self.totals.as_ref(), &self.probes);
        self.backend.finish(self.rows, &attrs)?;
        if self.writes_xdmf() {
            let rows = self.times.len().min(self.rows as usize);
            super::xdmf::write_beside(&self.path, &self.mesh, &self.times[..rows])?;
        }
        Ok(())
    }

    fn totals(&mut self, totals: &RunTotals) {
        self.totals = Some(totals.clone());
    }
}

// ---------------------------------------------------------------------------
// rust-hdf5 backend
// ---------------------------------------------------------------------------

/// Streams a run into an HDF5 file with the pure-Rust `rust-hdf5` crate.
///
/// The file is written with the SWMR protocol: every `flush_seconds` the
/// chunk data, chunk indices, dataset headers and superblock are written in
/// that order and synced, so a killed run leaves a readable file with every
/// step up to the last flush (see `docs/output-format.md`).
pub struct Hdf5Recorder {
    inner: Streamer<RustBackend>,
}

impl Hdf5Recorder {
    /// Creates (truncates) the file at `path`; the layout is written by `begin`.
    pub fn create(path: impl AsRef<Path>, config: OutputConfig) -> Result<Self, OutputError> {
        let path = path.as_ref();
        validate_config(path, &config)?;
        let writer = SwmrFileWriter::create(path).map_err(|e| h5_error(path, e))?;
        let superblock = File::options()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|source| OutputError::Io {
                path: path.display().to_string(),
                source,
            })?;
        let backend = RustBackend {
            path: path.to_path_buf(),
            writer: Some(writer),
            superblock,
            datasets: Vec::new(),
            columns: Vec::new(),
            raw_mask: None,
            scratch: Vec::new(),
        };
        Ok(Hdf5Recorder {
            inner: Streamer::new(path, config, backend),
        })
    }
}

impl Recorder for Hdf5Recorder {
    fn begin(&mut self, info: &RunInfo) -> Result<(), OutputError> {
        self.inner.begin(info)
    }

    fn record(&mut self, rec: &StepRecord<'_>) -> Result<(), OutputError> {
        self.inner.record(rec)
    }

    fn finish(&mut self, status: &RunStatus, t_end_reached: f64) -> Result<(), OutputError> {
        self.inner.finish(status, t_end_reached)
    }

    fn totals(&mut self, totals: &RunTotals) {
        self.inner.totals(totals);
    }
}

impl Drop for Hdf5Recorder {
    fn drop(&mut self) {
        self.inner.flush_on_drop();
    }
}

impl Drop for RustBackend {
    /// A writer still open here belongs to a run that stopped on an error:
    /// closed quietly (the error was reported; the library would print its
    /// own message on drop).
    fn drop(&mut self) {
        if let Some(w) = self.writer.take() {
            let _ = w.close();
        }
    }
}

/// One streamed dataset as the rust-hdf5 backend needs it.
struct RustColumn {
    /// Shape and chunk geometry.
    geom: Column,
    elem: usize,
    /// The current band is on disk unfiltered (a flush wrote it partial).
    band_raw: bool,
}

struct RustBackend {
    path: PathBuf,
    /// `None` once closed.
    writer: Option<SwmrFileWriter>,
    /// A second handle on the file, for its superblock ([`RustBackend::settle_superblock`]).
    superblock: File,
    datasets: Vec<usize>,
    columns: Vec<RustColumn>,
    /// Filter mask that stores a chunk unfiltered, for compressed datasets.
    raw_mask: Option<u32>,
    scratch: Vec<u8>,
}

/// Writes a [`FixedDataset`] (contiguous, whole) into the file at `path`.
fn write_fixed(w: &mut SwmrFileWriter, path: &Path, f: &FixedDataset) -> Result<(), OutputError> {
    let full = f.path.as_str();
    let err = |e: rust_hdf5::Hdf5Error| h5_error(path, format!("/{full}: {e}"));
    let dims: Vec<u64> = f.shape.iter().map(|&d| d as u64).collect();
    match &f.data {
        // A zero-length contiguous dataset, as h5py writes one.
        FixedData::F64(v) if v.is_empty() => w
            .create_dataset_typed(full, f64::hdf5_type(), &dims)
            .map(drop),
        FixedData::I64(v) if v.is_empty() => w
            .create_dataset_typed(full, i64::hdf5_type(), &dims)
            .map(drop),
        FixedData::Str(names) if names.is_empty() => {
            let vlen = DatatypeMessage::VarLenString {
                padding: 0,
                charset: 1,
            };
            w.create_dataset_typed(full, vlen, &dims).map(drop)
        }
        FixedData::F64(v) => w.write_dataset(full, &dims, v).map(drop),
        FixedData::I64(v) => w.write_dataset(full, &dims, v).map(drop),
        FixedData::Str(names) => {
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            w.write_string_dataset(full, &refs).map(drop)
        }
    }
    .map_err(err)
}

/// One column of a table file ([`write_table`]).
#[derive(Debug, Clone, PartialEq)]
pub enum TableColumn {
    /// Variable-length UTF-8 strings.
    Str(Vec<String>),
    /// f64 values (NaN where missing).
    F64(Vec<f64>),
}

/// Writes a table as a new HDF5 file at `path` (truncating it): one
/// one-dimensional dataset per column, named by [`path_component`] of the
/// column name, and the root attribute `columns` with the column names in
/// order, one per line (`flexmb batch`'s `summary.h5`).
pub fn write_table(path: &Path, columns: &[(String, TableColumn)]) -> Result<(), OutputError> {
    let mut w = SwmrFileWriter::create(path).map_err(|e| h5_error(path, e))?;
    for (name, column) in columns {
        let (len, data) = match column {
            TableColumn::Str(v) => (v.len(), FixedData::Str(v.clone())),
            TableColumn::F64(v) => (v.len(), FixedData::F64(v.clone())),
        };
        let f = FixedDataset {
            path: path_component(name),
            shape: vec![len],
            data,
        };
        write_fixed(&mut w, path, &f)?;
    }
    let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
    w.set_group_attr_string("/", "columns", &names.join("\n"))
        .map_err(|e| h5_error(path, format!("attribute columns: {e}")))?;
    w.close().map_err(|e| h5_error(path, format!("close: {e}")))
}

fn hdf5_type(dtype: Dtype) -> DatatypeMessage {
    match dtype {
        Dtype::F64 => f64::hdf5_type(),
        Dtype::U64 => u64::hdf5_type(),
        Dtype::U32 => u32::hdf5_type(),
    }
}

impl RustBackend {
    fn writer(&mut self) -> Result<&mut SwmrFileWriter, OutputError> {
        match self.writer.as_mut() {
            Some(w) => Ok(w),
            None => Err(h5_error(&self.path, "file already closed")),
        }
    }

    fn set_root_attr(&mut self, name: &str, value: &AttrValue) -> Result<(), OutputError> {
        let path = self.path.clone();
        let w = self.writer()?;
        match value {
            AttrValue::F64(x) => w.set_group_attr_numeric("/", name, x),
            AttrValue::I64(x) => w.set_group_attr_numeric("/", name, x),
            AttrValue::Str(s) => w.set_group_attr_string("/", name, s),
        }
        .map_err(|e| h5_error(&path, format!("attribute {name}: {e}")))
    }

    fn write_fixed(&mut self, f: &FixedDataset) -> Result<(), OutputError> {
        let path = self.path.clone();
        write_fixed(self.writer()?, &path, f)
    }

    /// Puts the superblock rust-hdf5 just wrote (at `start_swmr` and at the
    /// end of each flush, with the SWMR flags set) in the state every
    /// libhdf5 reader must find: consistency flags clear ("closed cleanly",
    /// what `h5clear -s` does, so that h5py and h5dump open the file without
    /// SWMR), and the file at least as long as the end of allocation
    /// (libhdf5 calls a shorter file truncated). Durably.
    fn settle_superblock(&mut self) -> Result<(), OutputError> {
        let io = |source| OutputError::Io {
            path: self.path.display().to_string(),
            source,
        };
        let file = &mut self.superblock;
        let mut buf = [0u8; 48];
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.read_exact(&mut buf).map_err(io)?;
        let Ok(mut sb) = SuperblockV2V3::decode(&buf) else {
            return Err(h5_error(&self.path, "superblock not readable after flush"));
        };
        if file.metadata().map_err(io)?.len() < sb.end_of_file_address {
            file.set_len(sb.end_of_file_address).map_err(io)?;
        }
        if sb.file_consistency_flags != 0 {
            sb.file_consistency_flags = 0;
            file.seek(SeekFrom::Start(0)).map_err(io)?;
            file.write_all(&sb.encode()).map_err(io)?;
        }
        file.sync_data().map_err(io)
    }

    /// rust-hdf5's SWMR flush (chunk index, dataset headers, superblock with
    /// the end of allocation, each synced), then the superblock settled.
    fn swmr_flush(&mut self) -> Result<(), OutputError> {
        let path = self.path.clone();
        self.writer()?
            .flush()
            .map_err(|e| h5_error(&path, format!("flush: {e}")))?;
        self.settle_superblock()
    }

    /// [`Backend::flush`], calling `around` with the file's path before and
    /// after each SWMR flush (`flush_window_tests` rebuilds the file of a
    /// writer killed inside each).
    fn flush_observed(
        &mut self,
        rows: u64,
        around: &mut dyn FnMut(&Path),
    ) -> Result<(), OutputError> {
        for extents in [None, Some(rows)] {
            if let Some(rows) = extents {
                self.set_extents(rows)?;
            }
            around(&self.path);
            self.swmr_flush()?;
            around(&self.path);
        }
        Ok(())
    }

    fn set_extents(&mut self, rows: u64) -> Result<(), OutputError> {
        let path = self.path.clone();
        let Some(w) = self.writer.as_mut() else {
            return Err(h5_error(&path, "file already closed"));
        };
        for (c, &ds) in self.columns.iter().zip(&self.datasets) {
            w.set_extent(ds, &c.geom.dims(rows))
                .map_err(|e| h5_error(&path, format!("set extent: {e}")))?;
        }
        Ok(())
    }
}

impl Backend for RustBackend {
    fn create_layout(
        &mut self,
        columns: &[Column],
        fixed: &[FixedDataset],
        info: &RunInfo,
        compression: u8,
    ) -> Result<(), OutputError> {
        let path = self.path.clone();
        let err = |what: &str, e: rust_hdf5::Hdf5Error| h5_error(&path, format!("{what}: {e}"));
        for g in plan_groups(columns, fixed) {
            self.writer()?
                .create_group("/", &g)
                .map_err(|e| err(&g, e))?;
        }
        for c in columns {
            let pipeline = (compression > 0).then(|| {
                FilterPipeline::shuffle_deflate(c.dtype().size() as u32, compression.into())
            });
            if let Some(p) = &pipeline {
                // Every filter of the pipeline skipped: the chunk is stored raw.
                self.raw_mask = Some((1u32 << p.filters.len()) - 1);
            }
            // A name with a group component is created inside that group.
            let ds = self
                .writer()?
                .create_grid_dataset_with_max(
                    &c.path,
                    hdf5_type(c.dtype()),
                    &c.dims(0),
                    &c.max_dims(),
                    &c.chunk(),
                    pipeline,
                )
                .map_err(|e| err(&c.path, e))?;
            self.datasets.push(ds);
            self.columns.push(RustColumn {
                geom: c.clone(),
                elem: c.dtype().size(),
                band_raw: false,
            });
        }
        for f in fixed {
            self.write_fixed(f)?;
        }
        for (name, value) in initial_attributes(info) {
            self.set_root_attr(&name, &value)?;
        }
        self.writer()?
            .start_swmr()
            .map_err(|e| err("start SWMR", e))?;
        self.settle_superblock()
    }

    fn write_band(
        &mut self,
        col: usize,
        first_row: u64,
        data: &ColumnBuf,
        last: bool,
    ) -> Result<(), OutputError> {
        let c = &mut self.columns[col];
        let n = c.geom.row_len();
        if n == 0 {
            return Ok(());
        }
        let ds = self.datasets[col];
        let nrows = data.len() / n;
        let band = first_row / c.geom.chunk_rows as u64;
        // A compressed dataset's band that a flush wrote partial is stored
        // unfiltered, and stays so when it completes: its chunks keep their
        // size and address, so the index a reader got at that flush stays
        // valid (a moved chunk could lie past the end of file that flush
        // recorded) and no file space is abandoned.
        let raw_mask = self.raw_mask.filter(|_| !last || c.band_raw);
        c.band_raw = raw_mask.is_some() && !last;
        let Some(w) = self.writer.as_mut() else {
            return Err(h5_error(&self.path, "file already closed"));
        };
        let (rows, cols, elem) = (c.geom.chunk_rows, c.geom.chunk_cols, c.elem);
        for (tile, c0) in (0..n).step_by(cols).enumerate() {
            let c1 = (c0 + cols).min(n);
            self.scratch.clear();
            self.scratch.resize(rows * cols * elem, 0);
            for r in 0..nrows {
                let out = &mut self.scratch[r * cols * elem..];
                data.write_le(r * n + c0..r * n + c1, out);
            }
            let coords = c.geom.chunk_coords(band, tile);
            match raw_mask {
                Some(mask) => w.write_chunk_raw_at(ds, &coords, &self.scratch, mask),
                None => w.write_chunk_at(ds, &coords, &self.scratch),
            }
            .map_err(|e| {
                h5_error(
                    &self.path,
                    format!("/{} rows from {first_row}: {e}", c.geom.path),
                )
            })?;
        }
        Ok(())
    }

    /// Two SWMR flushes, so that no moment's file points a reader past the
    /// end of allocation its superblock names. A flush writes the chunk
    /// index, then the dataset headers with their extents, and only then
    /// the superblock with the end of allocation: in a single flush that
    /// grows the extents, the headers name rows whose chunks (the bands
    /// written since the last flush) lie past the end the superblock on
    /// disk still names until its rewrite, and libhdf5 refuses a file
    /// killed in between ("addr overflow"; h5py failed so on a CI run). The
    /// first flush keeps the extents, under which no index entry a reader
    /// can reach has changed (a band a flush wrote partial keeps its place,
    /// see `write_band`), and moves the end of allocation past every block;
    /// the second publishes the extents and allocates nothing.
    fn flush(&mut self, rows: u64) -> Result<(), OutputError> {
        self.flush_observed(rows, &mut |_| {})
    }

    /// The last bands first reach the end of allocation as in
    /// [`flush`](Backend::flush): closing writes the headers with the final
    /// extents before the superblock.
    fn finish(&mut self, rows: u64, attrs: &[(String, AttrValue)]) -> Result<(), OutputError> {
        self.swmr_flush()?;
        self.set_extents(rows)?;
        for (name, value) in attrs {
            self.set_root_attr(name, value)?;
        }
        let Some(w) = self.writer.take() else {
            return Err(h5_error(&self.path, "file already closed"));
        };
        w.close()
            .map_err(|e| h5_error(&self.path, format!("close: {e}")))
    }
}

// ---------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------

/// A run read back from an HDF5 file written by either backend.
///
/// Datasets of fields that were not recorded are empty vectors; `fields`
/// lists the recorded ones. A file of a killed run has `status == "running"`
/// and every step up to the last flush.
#[derive(Debug, Clone, Default)]
pub struct Hdf5Run {
    /// `/time`.
    pub time: Vec<f64>,
    /// `/step`.
    pub step: Vec<u64>,
    /// `/u` rows.
    pub u: Vec<Vec<f64>>,
    /// `/v` rows.
    pub v: Vec<Vec<f64>>,
    /// `/a` rows.
    pub a: Vec<Vec<f64>>,
    /// `/lambda` rows.
    pub lambda: Vec<Vec<f64>>,
    /// `/energy/*`.
    pub energy: Vec<Energy>,
    /// `/constraints/*`.
    pub constraints: Vec<ConstraintNorms>,
    /// `/newton/*`.
    pub newton: Vec<NewtonStats>,
    /// Fields present in the file (`points`, `bodies`, `joints`: when the
    /// file has `/points`, a `/bodies` or a `/joints` group).
    pub fields: Vec<Field>,
    /// `/dofs/names`.
    pub dof_names: Vec<String>,
    /// `/multipliers/names`.
    pub multiplier_names: Vec<String>,
    /// `running`, `completed` or `failed`.
    pub status: String,
    /// Why the run failed (empty otherwise).
    pub failure_reason: String,
    /// Last time reached (NaN if the run did not finish).
    pub t_end_reached: f64,
    /// Integrator name.
    pub integrator: String,
    /// The `integrator.<name>` attributes, prefix stripped, sorted by name.
    pub parameters: Vec<(String, AttrValue)>,
    /// Model file text.
    pub model: String,
    /// flexmb version that wrote the file.
    pub flexmb_version: String,
}

impl Hdf5Run {
    /// The final status, `None` while `running` (e.g. a killed run).
    pub fn run_status(&self) -> Option<RunStatus> {
        match self.status.as_str() {
            "completed" => Some(RunStatus::Completed),
            "failed" => Some(RunStatus::Failed {
                reason: self.failure_reason.clone(),
            }),
            "interrupted" => Some(RunStatus::Interrupted {
                reason: self.failure_reason.clone(),
            }),
            _ => None,
        }
    }

    /// Number of steps.
    pub fn len(&self) -> usize {
        self.time.len()
    }

    /// Whether no step was recorded.
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }
}

/// Read access to a run file, implemented on each backend's library
/// ([`Hdf5Reader`], and `Hdf5CReader` with feature `hdf5-c`): whole datasets
/// by path, e.g. `/mesh/nodes` or `/points`, which [`read_hdf5`] does not cover.
pub trait RunSource {
    /// File path, for errors.
    fn path(&self) -> &Path;
    /// Whether the dataset (or a group holding a dataset) exists.
    fn has(&self, ds: &str) -> bool;
    /// Dataset dimensions.
    fn shape(&self, ds: &str) -> Result<Vec<usize>, OutputError>;
    /// All values of a non-empty f64 dataset, row-major.
    fn f64s(&self, ds: &str) -> Result<Vec<f64>, OutputError>;
    /// All values of a non-empty unsigned integer dataset.
    fn u64s(&self, ds: &str) -> Result<Vec<u64>, OutputError>;
    /// All values of a non-empty signed integer dataset.
    fn i64s(&self, ds: &str) -> Result<Vec<i64>, OutputError>;
    /// All values of a non-empty string dataset.
    fn strings(&self, ds: &str) -> Result<Vec<String>, OutputError>;
    /// Every root attribute.
    fn root_attrs(&self) -> Result<Vec<(String, AttrValue)>, OutputError>;
}

/// A dataset read with its shape.
struct Raw<T> {
    shape: Vec<usize>,
    data: Vec<T>,
}

impl<T: Clone> Raw<T> {
    fn read(
        src: &impl RunSource,
        ds: &str,
        get: impl Fn(&str) -> Result<Vec<T>, OutputError>,
    ) -> Result<Self, OutputError> {
        let shape = src.shape(ds)?;
        let data = if shape.iter().product::<usize>() == 0 {
            Vec::new()
        } else {
            get(ds)?
        };
        Ok(Raw { shape, data })
    }

    fn rows(&self) -> usize {
        self.shape.first().copied().unwrap_or(0)
    }

    /// The first `steps` values of a `[steps]` dataset.
    fn column(&self, steps: usize) -> Vec<T> {
        self.data.iter().take(steps).cloned().collect()
    }

    /// The first `steps` rows of a `[steps, n]` dataset.
    fn matrix(&self, steps: usize) -> Vec<Vec<T>> {
        match self.shape.get(1).copied() {
            Some(0) => vec![Vec::new(); steps],
            n => self
                .data
                .chunks(n.unwrap_or(1))
                .take(steps)
                .map(<[T]>::to_vec)
                .collect(),
        }
    }
}

/// Reads a run written by [`Hdf5Recorder`] or the `hdf5-c` backend.
///
/// A file whose writer was killed is read up to its last flush; datasets of
/// different lengths (a kill during a flush) are cut to the shortest.
pub fn read_hdf5(path: impl AsRef<Path>) -> Result<Hdf5Run, OutputError> {
    let path = path.as_ref();
    assemble_run(&Hdf5Reader::open(path)?)
}

/// Builds an [`Hdf5Run`] from any backend's reader.
pub(super) fn assemble_run(src: &impl RunSource) -> Result<Hdf5Run, OutputError> {
    let path = src.path();
    let time = Raw::read(src, "time", |d| src.f64s(d))?;
    let step = Raw::read(src, STEP_PATH, |d| src.u64s(d))?;
    let mut f64s: Vec<(Source, Raw<f64>)> = Vec::new();
    let mut iterations = None;
    let mut fields = Vec::new();
    for s in COLUMNS
        .iter()
        .filter(|s| s.field.is_some() && src.has(s.path))
    {
        if let Some(f) = s.field.filter(|f| !fields.contains(f)) {
            fields.push(f);
        }
        if s.source == Source::Iterations {
            iterations = Some(Raw::read(src, s.path, |d| src.u64s(d))?);
        } else {
            f64s.push((s.source, Raw::read(src, s.path, |d| src.f64s(d))?));
        }
    }
    for (group, f) in [
        (POINTS, Field::Points),
        ("bodies", Field::Bodies),
        ("joints", Field::Joints),
    ] {
        if src.has(group) {
            fields.push(f);
        }
    }
    // A kill during a flush can leave some datasets longer than others.
    let steps = f64s
        .iter()
        .map(|(_, r)| r.rows())
        .chain(iterations.iter().map(Raw::rows))
        .fold(time.rows().min(step.rows()), usize::min);

    let mut run = Hdf5Run {
        time: time.column(steps),
        step: step.column(steps),
        fields,
        ..Hdf5Run::default()
    };
    let col = |src: Source| -> Vec<f64> {
        f64s.iter()
            .find(|(s, _)| *s == src)
            .map(|(_, r)| r.column(steps))
            .unwrap_or_else(|| vec![0.0; steps])
    };
    for (source, raw) in &f64s {
        match source {
            Source::U => run.u = raw.matrix(steps),
            Source::V => run.v = raw.matrix(steps),
            Source::A => run.a = raw.matrix(steps),
            Source::Lambda => run.lambda = raw.matrix(steps),
            _ => {}
        }
    }
    if run.fields.contains(&Field::Energy) {
        let (k, p, t, w) = (
            col(Source::Kinetic),
            col(Source::Potential),
            col(Source::Total),
            col(Source::ExternalWork),
        );
        run.energy = (0..steps)
            .map(|i| Energy {
                kinetic: k[i],
                potential: p[i],
                total: t[i],
                external_work: w[i],
            })
            .collect();
    }
    if run.fields.contains(&Field::Constraints) {
        let (p, v, a) = (
            col(Source::CPosition),
            col(Source::CVelocity),
            col(Source::CAcceleration),
        );
        run.constraints = (0..steps)
            .map(|i| ConstraintNorms {
                position: p[i],
                velocity: v[i],
                acceleration: a[i],
            })
            .collect();
    }
    if let Some(it) = &iterations {
        let r = col(Source::Residual);
        run.newton = it
            .column(steps)
            .into_iter()
            .zip(r)
            .map(|(i, residual)| {
                let iterations = u32::try_from(i)
                    .map_err(|e| h5_error(path, format!("/newton/iterations: {e}")))?;
                Ok(NewtonStats {
                    iterations,
                    residual,
                })
            })
            .collect::<Result<_, OutputError>>()?;
    }
    for (ds, out) in [
        (DOF_NAMES, &mut run.dof_names),
        (MULT_NAMES, &mut run.multiplier_names),
    ] {
        if src.shape(ds)?.iter().product::<usize>() > 0 {
            *out = src.strings(ds)?;
        }
    }

    let mut params = Vec::new();
    for (name, value) in src.root_attrs()? {
        match (name.as_str(), value) {
            (attr::STATUS, AttrValue::Str(s)) => run.status = s,
            (attr::FAILURE_REASON, AttrValue::Str(s)) => run.failure_reason = s,
            (attr::T_END_REACHED, AttrValue::F64(x)) => run.t_end_reached = x,
            (attr::INTEGRATOR, AttrValue::Str(s)) => run.integrator = s,
            (attr::MODEL, AttrValue::Str(s)) => run.model = s,
            (attr::VERSION, AttrValue::Str(s)) => run.flexmb_version = s,
            (n, v) => {
                if let Some(p) = n.strip_prefix(attr::PARAM_PREFIX) {
                    params.push((p.to_string(), v));
                }
            }
        }
    }
    params.sort_by(|a, b| a.0.cmp(&b.0));
    run.parameters = params;
    Ok(run)
}

/// [`RunSource`] on `rust-hdf5`: reads files of either backend.
pub struct Hdf5Reader {
    path: PathBuf,
    file: H5File,
    names: Vec<String>,
}

impl Hdf5Reader {
    /// Opens a file for reading.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, OutputError> {
        let path = path.as_ref();
        let file = H5File::open(path).map_err(|e| h5_error(path, e))?;
        let names = file
            .dataset_names()
            .into_iter()
            .map(|n| n.trim_start_matches('/').to_string())
            .collect();
        Ok(Hdf5Reader {
            path: path.to_path_buf(),
            file,
            names,
        })
    }

    fn dataset(&self, ds: &str) -> Result<rust_hdf5::H5Dataset, OutputError> {
        self.file
            .dataset(ds)
            .map_err(|e| h5_error(&self.path, format!("/{ds}: {e}")))
    }

    fn err(&self, ds: &str) -> impl Fn(rust_hdf5::Hdf5Error) -> OutputError + '_ {
        let ds = ds.to_string();
        move |e| h5_error(&self.path, format!("/{ds}: {e}"))
    }
}

impl RunSource for Hdf5Reader {
    fn path(&self) -> &Path {
        &self.path
    }

    fn has(&self, ds: &str) -> bool {
        // A group exists when a dataset lies below it.
        self.names.iter().any(|n| {
            n.strip_prefix(ds)
                .is_some_and(|r| r.is_empty() || r.starts_with('/'))
        })
    }

    fn shape(&self, ds: &str) -> Result<Vec<usize>, OutputError> {
        Ok(self.dataset(ds)?.shape())
    }

    fn f64s(&self, ds: &str) -> Result<Vec<f64>, OutputError> {
        self.dataset(ds)?.read_raw::<f64>().map_err(self.err(ds))
    }

    fn u64s(&self, ds: &str) -> Result<Vec<u64>, OutputError> {
        self.dataset(ds)?
            .read_numeric_as::<u64>()
            .map_err(self.err(ds))
    }

    fn i64s(&self, ds: &str) -> Result<Vec<i64>, OutputError> {
        self.dataset(ds)?
            .read_numeric_as::<i64>()
            .map_err(self.err(ds))
    }

    fn strings(&self, ds: &str) -> Result<Vec<String>, OutputError> {
        self.dataset(ds)?.read_strings().map_err(self.err(ds))
    }

    fn root_attrs(&self) -> Result<Vec<(String, AttrValue)>, OutputError> {
        // rust-hdf5 reads root attributes only as strings: numbers come from
        // the raw attribute messages.
        let numeric = read_root_attribute_messages(&self.path)?;
        let names = self
            .file
            .attr_names()
            .map_err(|e| h5_error(&self.path, e))?;
        names
            .into_iter()
            .map(|name| {
                let err = |e: &dyn std::fmt::Display| {
                    h5_error(&self.path, format!("attribute {name}: {e}"))
                };
                let value = match numeric.iter().find(|m| m.name == name) {
                    Some(msg) => numeric_attr(msg)
                        .ok_or_else(|| err(&format!("unsupported type {}", msg.datatype)))?,
                    None => AttrValue::Str(self.file.attr_string(&name).map_err(|e| err(&e))?),
                };
                Ok((name, value))
            })
            .collect()
    }
}

/// The value of a numeric scalar attribute (f64 or a signed/unsigned integer).
fn numeric_attr(msg: &AttributeMessage) -> Option<AttrValue> {
    let bytes = |n: usize| -> Option<[u8; 8]> {
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(msg.data.get(..n)?);
        Some(b)
    };
    match &msg.datatype {
        DatatypeMessage::FloatingPoint {
            size: 8,
            byte_order,
            ..
        } if *byte_order == rust_hdf5::ByteOrder::LittleEndian => {
            Some(AttrValue::F64(f64::from_le_bytes(bytes(8)?)))
        }
        DatatypeMessage::FixedPoint {
            size,
            byte_order,
            signed,
            ..
        } if *byte_order == rust_hdf5::ByteOrder::LittleEndian && (1..=8).contains(size) => {
            let n = *size as usize;
            let mut b = bytes(n)?;
            if *signed && b[n - 1] & 0x80 != 0 {
                b[n..].fill(0xff);
            }
            Some(AttrValue::I64(i64::from_le_bytes(b)))
        }
        _ => None,
    }
}

/// Reads blocks of a file for the `rust-hdf5` format decoders.
struct FileBlocks(File);

impl BlockReader for FileBlocks {
    fn read_block(&mut self, offset: u64, len: usize) -> FormatResult<Vec<u8>> {
        let io = |e: std::io::Error| FormatError::InvalidData(e.to_string());
        self.0.seek(SeekFrom::Start(offset)).map_err(io)?;
        // `len` comes from the file: do not trust it for the allocation.
        let mut buf = Vec::with_capacity(len.min(1 << 20));
        (&mut self.0)
            .take(len as u64)
            .read_to_end(&mut buf)
            .map_err(io)?;
        Ok(buf)
    }
}

/// The numeric root attribute messages of a file.
///
/// `rust-hdf5` 0.7.9 reads root attributes only as strings, so this walks
/// the root object header (v1 or v2, continuation chunks, compact or dense
/// attribute storage) with the crate's public format decoders.
fn read_root_attribute_messages(path: &Path) -> Result<Vec<AttributeMessage>, OutputError> {
    let err = |e: &dyn std::fmt::Display| h5_error(path, format!("root attributes: {e}"));
    let file = File::open(path).map_err(|source| OutputError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let mut blocks = FileBlocks(file);
    let head = blocks.read_block(0, 256).map_err(|e| err(&e))?;
    let version = detect_superblock_version(&head).map_err(|e| err(&e))?;
    let (offsets, lengths, base, root) = if version >= SUPERBLOCK_V2 {
        let sb = SuperblockV2V3::decode(&head).map_err(|e| err(&e))?;
        let root = sb.root_group_object_header_address;
        (sb.sizeof_offsets, sb.sizeof_lengths, sb.base_address, root)
    } else {
        let sb = SuperblockV0V1::decode(&head).map_err(|e| err(&e))?;
        let root = sb.root_symbol_table_entry.obj_header_addr;
        (sb.sizeof_offsets, sb.sizeof_lengths, sb.base_address, root)
    };
    if base != 0 {
        return Err(err(&"files with a userblock are not supported"));
    }
    let ctx = FormatContext {
        sizeof_addr: offsets,
        sizeof_size: lengths,
    };

    // Chunk 0: read generously, the decoder stops at the recorded size.
    let buf = blocks.read_block(root, 1 << 16).map_err(|e| err(&e))?;
    let (header, _) = ObjectHeader::decode_any(&buf).map_err(|e| err(&e))?;
    let v1 = buf.first() == Some(&1);
    let creation_order = header.flags & 0x04 != 0;
    let mut messages: Vec<(u8, Vec<u8>)> = header
        .messages
        .into_iter()
        .map(|m| (m.msg_type, m.data))
        .collect();
    let mut i = 0;
    while i < messages.len() {
        if messages[i].0 == 0x10 {
            let (cont, _) =
                ContinuationMessage::decode(&messages[i].1, &ctx).map_err(|e| err(&e))?;
            let chunk = blocks
                .read_block(cont.offset, cont.length as usize)
                .map_err(|e| err(&e))?;
            messages.extend(parse_continuation(&chunk, v1, creation_order).map_err(|e| err(&e))?);
        }
        i += 1;
    }
    let mut attrs = Vec::new();
    for (ty, data) in &messages {
        match ty {
            0x0C => attrs.push(AttributeMessage::decode(data, &ctx).map_err(|e| err(&e))?.0),
            0x15 => {
                let (info, _) = AttributeInfoMessage::decode(data, &ctx).map_err(|e| err(&e))?;
                for entry in read_dense_attributes(&info, &ctx, &mut blocks).map_err(|e| err(&e))? {
                    if let Some(a) = entry.readable() {
                        attrs.push(a.clone());
                    }
                }
            }
            _ => {}
        }
    }
    attrs.retain(|a| {
        !matches!(
            a.datatype,
            DatatypeMessage::VarLenString { .. } | DatatypeMessage::FixedString { .. }
        )
    });
    Ok(attrs)
}

/// The `(type, data)` messages of an object header continuation chunk.
fn parse_continuation(
    chunk: &[u8],
    v1: bool,
    creation_order: bool,
) -> Result<Vec<(u8, Vec<u8>)>, String> {
    let mut out = Vec::new();
    if v1 {
        // type u16, size u16, flags u8, 3 reserved; data padded to 8 bytes.
        let mut pos = 0;
        while pos + 8 <= chunk.len() {
            let ty = u16::from_le_bytes([chunk[pos], chunk[pos + 1]]);
            let size = u16::from_le_bytes([chunk[pos + 2], chunk[pos + 3]]) as usize;
            let start = pos + 8;
            let data = chunk
                .get(start..start + size)
                .ok_or("v1 continuation overrun")?;
            if ty != 0 {
                out.push((ty as u8, data.to_vec()));
            }
            pos = start + size.next_multiple_of(8);
        }
    } else {
        // "OCHK", messages (type u8, size u16, flags u8 [, order u16]), checksum.
        if chunk.len() < 8 || &chunk[..4] != b"OCHK" {
            return Err("continuation chunk without OCHK signature".into());
        }
        let end = chunk.len() - 4;
        let stored =
            u32::from_le_bytes([chunk[end], chunk[end + 1], chunk[end + 2], chunk[end + 3]]);
        if stored != checksum_metadata(&chunk[..end]) {
            return Err("continuation chunk checksum mismatch".into());
        }
        let head = if creation_order { 6 } else { 4 };
        let mut pos = 4;
        while pos + head <= end {
            let ty = chunk[pos];
            let size = u16::from_le_bytes([chunk[pos + 1], chunk[pos + 2]]) as usize;
            let start = pos + head;
            let data = chunk
                .get(start..start + size)
                .ok_or("OCHK message overrun")?;
            out.push((ty, data.to_vec()));
            pos = start + size;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod flush_window_tests;
