//! The file layout both backends write (`docs/output-format.md`): dataset
//! paths, root attribute names, the columns streamed per step, the datasets
//! written once, chunk shapes, and the root attributes at begin and finish.

use std::path::Path;

use crate::kinematics::attitude::Attitude;
use crate::output::{
    AttrValue, Field, OutputConfig, OutputError, ProbeSummary, RunInfo, RunStatus, RunTotals,
    StepRecord,
};

/// Largest chunk of a `[steps, n]` dataset, in bytes (libhdf5's default chunk cache).
pub(in crate::output) const CHUNK_MAX_BYTES: usize = 1 << 20;
/// Largest chunk-row band (`chunk_rows` full rows) buffered per `[steps, n]` dataset.
pub(in crate::output) const BAND_MAX_BYTES: usize = 16 << 20;
/// Path of the step-number dataset.
pub(in crate::output) const STEP_PATH: &str = "step";
/// Path of the DOF label dataset.
pub(in crate::output) const DOF_NAMES: &str = "dofs/names";
/// Path of the multiplier label dataset.
pub(in crate::output) const MULT_NAMES: &str = "multipliers/names";
/// Path of the point coordinates over time.
pub(in crate::output) const POINTS: &str = "points";
/// Path of the reference coordinates of the mesh points.
pub(in crate::output) const MESH_NODES: &str = "mesh/nodes";
/// Group below `/mesh` of the rigid bodies' point cells.
pub(in crate::output) const MESH_BODIES: &str = "bodies";

/// Root attribute names.
pub(in crate::output) mod attr {
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
pub(in crate::output) enum Dtype {
    /// IEEE f64, little endian.
    F64,
    /// u64, little endian.
    U64,
    /// u32, little endian.
    U32,
}

impl Dtype {
    /// Bytes per element.
    pub(in crate::output) fn size(self) -> usize {
        match self {
            Dtype::F64 | Dtype::U64 => 8,
            Dtype::U32 => 4,
        }
    }
}

/// Where a streamed dataset takes its values from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::output) enum Source {
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
pub(in crate::output) enum Pick {
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
pub(in crate::output) struct ColumnSpec {
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
pub(in crate::output) const COLUMNS: [ColumnSpec; 15] = [
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
    pub(in crate::output) fn row<'a>(self, rec: &StepRecord<'a>) -> Option<&'a [f64]> {
        match self {
            Source::U => Some(rec.u),
            Source::V => Some(rec.v),
            Source::A => Some(rec.a),
            Source::Lambda => Some(rec.lambda),
            _ => None,
        }
    }

    /// The vector a gathered dataset picks from.
    pub(in crate::output) fn gathered<'a>(self, rec: &StepRecord<'a>) -> Option<&'a [f64]> {
        match self {
            Source::GatherU => Some(rec.u),
            Source::GatherLambda => Some(rec.lambda),
            Source::GatherProbes => Some(rec.probes),
            Source::GatherStats => Some(rec.stats),
            _ => None,
        }
    }

    pub(in crate::output) fn scalar(self, rec: &StepRecord<'_>) -> f64 {
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
pub(in crate::output) struct Column {
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
    pub(in crate::output) fn dtype(&self) -> Dtype {
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
    pub(in crate::output) fn dims(&self, rows: u64) -> Vec<u64> {
        let mut d = vec![rows];
        if let Some(n) = self.width {
            d.extend(self.trailing(n));
        }
        d
    }

    /// Maximum dimensions (`None` = unlimited). A zero-width `[steps, 0]`
    /// dataset has two unlimited dimensions (chunk dimensions must be >= 1);
    /// it never holds a chunk.
    pub(in crate::output) fn max_dims(&self) -> Vec<Option<u64>> {
        let mut d = vec![None];
        match self.width {
            Some(0) => d.push(None),
            Some(n) => d.extend(self.trailing(n).into_iter().map(Some)),
            None => {}
        }
        d
    }

    /// Chunk dimensions.
    pub(in crate::output) fn chunk(&self) -> Vec<u64> {
        let mut d = vec![self.chunk_rows as u64];
        if self.width.is_some() {
            d.extend(self.trailing(self.chunk_cols));
        }
        d
    }

    /// Chunk grid coordinates of the chunk holding row band `band`, values
    /// from `tile * chunk_cols` on.
    pub(in crate::output) fn chunk_coords(&self, band: u64, tile: usize) -> Vec<u64> {
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
    pub(in crate::output) fn row_len(&self) -> usize {
        self.width.unwrap_or(1)
    }
}

/// A dataset written once at `begin` (names, the mesh).
#[derive(Debug, Clone, PartialEq)]
pub(in crate::output) struct FixedDataset {
    /// Path below the root.
    pub path: String,
    /// Dimensions (strings: one dimension).
    pub shape: Vec<usize>,
    /// Values, row-major.
    pub data: FixedData,
}

/// Values of a [`FixedDataset`].
#[derive(Debug, Clone, PartialEq)]
pub(in crate::output) enum FixedData {
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
pub(in crate::output) fn chunk_shape(
    chunk_rows: usize,
    width: Option<usize>,
    inner: usize,
) -> (usize, usize) {
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
pub(in crate::output) fn plan_columns(
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
pub(in crate::output) fn plan_fixed(info: &RunInfo) -> Vec<FixedDataset> {
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
pub(in crate::output) fn plan_groups(columns: &[Column], fixed: &[FixedDataset]) -> Vec<String> {
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
pub(in crate::output) fn initial_attributes(info: &RunInfo) -> Vec<(String, AttrValue)> {
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
pub(in crate::output) fn final_attributes(
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
pub(in crate::output) fn h5_error(path: &Path, message: impl std::fmt::Display) -> OutputError {
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
