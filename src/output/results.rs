//! [`Results`]: a run's histories as column arrays with lookups by name, the
//! one type a run recorded in memory ([`Recorder`] on a `Simulation::run`, or
//! a recording `Stepper`) and a run read back from its HDF5 file
//! ([`super::read_hdf5`]) both give. Names and layout follow
//! `docs/output-format.md`: the energies are `kinetic`, `potential`, `total`
//! and `external_work`, the constraint residuals `position`, `velocity` and
//! `acceleration`, the probes and statistics those of the model and method.

use super::hdf5::{Hdf5Reader, Hdf5Run, RunSource};
use super::{
    AttrValue, CellBlock, Mesh, MeshBody, MeshJoint, MeshPoint, OutputError, Recorder, RunInfo,
    RunStatus, RunTotals, StepRecord,
};
use crate::kinematics::attitude::Attitude;

/// Names of the energy columns ([`Results::energy`]), as in `/energy/*`.
pub const ENERGY_NAMES: [&str; 4] = ["kinetic", "potential", "total", "external_work"];
/// Names of the constraint residual columns ([`Results::constraint`]), as in `/constraints/*`.
pub const CONSTRAINT_NAMES: [&str; 3] = ["position", "velocity", "acceleration"];

/// Which histories a recording keeps (time, step numbers, names and the mesh
/// are always kept). `Recording::default()` keeps none of them; name the
/// ones wanted, e.g. `Recording { u: true, probes: true, ..Default::default() }`,
/// or take [`Recording::all`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recording {
    /// Positions (`/u`).
    pub u: bool,
    /// Velocities (`/v`).
    pub v: bool,
    /// Accelerations (`/a`).
    pub a: bool,
    /// Lagrange multipliers (`/lambda`).
    pub lambda: bool,
    /// Energies (`/energy/*`).
    pub energy: bool,
    /// Constraint residual norms (`/constraints/*`).
    pub constraints: bool,
    /// Newton iterations and residual per step (`/newton/*`).
    pub newton: bool,
    /// Probe values (`/probes/*`).
    pub probes: bool,
    /// The method's statistics per recorded step (`/stats/*`).
    pub stats: bool,
}

impl Recording {
    /// With the positions.
    pub const fn with_u(mut self) -> Self {
        self.u = true;
        self
    }

    /// With the energies.
    pub const fn with_energy(mut self) -> Self {
        self.energy = true;
        self
    }

    /// With the probes.
    pub const fn with_probes(mut self) -> Self {
        self.probes = true;
        self
    }

    /// Every history.
    pub const fn all() -> Self {
        Recording {
            u: true,
            v: true,
            a: true,
            lambda: true,
            energy: true,
            constraints: true,
            newton: true,
            probes: true,
            stats: true,
        }
    }
}

/// A `rows x cols` array of f64, row-major: row `i` belongs to
/// [`Results::time`]`[i]`, column `j` to a DOF or multiplier name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Matrix {
    cols: usize,
    data: Vec<f64>,
}

impl Matrix {
    /// An empty matrix of `cols` columns.
    pub fn new(cols: usize) -> Self {
        Matrix {
            cols,
            data: Vec::new(),
        }
    }

    /// A matrix from row-major `data` of `cols` columns (`None` when the
    /// length is not a multiple of `cols`).
    pub fn from_rows(cols: usize, data: Vec<f64>) -> Option<Self> {
        let whole = if cols == 0 {
            data.is_empty()
        } else {
            data.len().is_multiple_of(cols)
        };
        whole.then_some(Matrix { cols, data })
    }

    /// Number of rows (recorded steps); 0 for a history not recorded.
    pub fn rows(&self) -> usize {
        self.data.len().checked_div(self.cols).unwrap_or(0)
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// Column `j`, one value per row.
    pub fn column(&self, j: usize) -> Vec<f64> {
        self.data
            .iter()
            .skip(j)
            .step_by(self.cols.max(1))
            .copied()
            .collect()
    }

    /// All values, row-major.
    pub fn as_slice(&self) -> &[f64] {
        &self.data
    }

    /// All values, row-major, without a copy (the Python package hands
    /// them to NumPy as they are).
    pub fn into_vec(self) -> Vec<f64> {
        self.data
    }

    /// Appends a row of [`Matrix::cols`] values (amortized growth only).
    fn push(&mut self, row: &[f64]) {
        debug_assert_eq!(row.len(), self.cols);
        self.data.extend_from_slice(row);
    }
}

/// A named history: one value per recorded step.
#[derive(Debug, Clone, PartialEq)]
pub struct Series<T> {
    /// Name (probe, energy, residual).
    pub name: String,
    /// One value per row.
    pub values: Vec<T>,
}

/// The per-row values of a method statistic: counters as integers, measures
/// as floats (`docs/output-format.md`, Method statistics).
#[derive(Debug, Clone, PartialEq)]
pub enum StatValues {
    /// A counter (e.g. `newton_iterations`, `nreject`).
    Count(Vec<u64>),
    /// A measure (e.g. `drift_position`, `stab_seconds`).
    Measure(Vec<f64>),
}

impl StatValues {
    /// The counts, `None` for a measure.
    pub fn counts(&self) -> Option<&[u64]> {
        match self {
            StatValues::Count(c) => Some(c),
            StatValues::Measure(_) => None,
        }
    }

    /// The values as floats (counts converted).
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            StatValues::Count(c) => c.iter().map(|&x| x as f64).collect(),
            StatValues::Measure(m) => m.clone(),
        }
    }

    fn push(&mut self, x: f64) {
        match self {
            // Counters are whole numbers: the f64 of the record is exact.
            StatValues::Count(c) => c.push(x as u64),
            StatValues::Measure(m) => m.push(x),
        }
    }
}

/// A method statistic's history.
#[derive(Debug, Clone, PartialEq)]
pub struct Stat {
    /// Name (`/stats/<name>`).
    pub name: String,
    /// Per-row values since the previous recorded row.
    pub values: StatValues,
}

/// Why a lookup in [`Results`] failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResultsError {
    /// No column of that kind has the name.
    #[error("no {what} named '{name}'; the {what} names are: {}", list(.available))]
    UnknownName {
        /// `DOF`, `multiplier`, `probe`, `energy`, `constraint` or `statistic`.
        what: &'static str,
        /// The name asked for.
        name: String,
        /// The names there are.
        available: Vec<String>,
    },
    /// The history exists in the model but was not recorded.
    #[error("{what} was not recorded (select it in the Recording or the [output] fields)")]
    NotRecorded {
        /// Which history.
        what: &'static str,
    },
    /// `count` was asked for a measure.
    #[error("statistic '{name}' is a measure, not a count: use `stat`")]
    NotACount {
        /// Its name.
        name: String,
    },
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".into()
    } else {
        names.join(", ")
    }
}

/// A run's histories in memory: what [`super::read_hdf5`] reads from a file
/// and what a recording `Stepper` or a `Simulation::run` into a `Results`
/// keeps, the same for the same run, bit for bit.
///
/// Row `i` of every history belongs to `time[i]`; a history not recorded is
/// empty ([`Matrix::rows`] 0, a name lookup answers
/// [`ResultsError::NotRecorded`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Results {
    /// Recorded times.
    pub time: Vec<f64>,
    /// Step numbers (0 = initial state).
    pub step: Vec<u64>,
    /// Positions, one column per DOF ([`Results::dof_names`]).
    pub u: Matrix,
    /// Velocities.
    pub v: Matrix,
    /// Accelerations.
    pub a: Matrix,
    /// Lagrange multipliers, one column per multiplier name.
    pub lambda: Matrix,
    /// Energies ([`ENERGY_NAMES`]).
    pub energies: Vec<Series<f64>>,
    /// Constraint residual max-norms ([`CONSTRAINT_NAMES`]).
    pub constraints: Vec<Series<f64>>,
    /// Newton iterations of each recorded step.
    pub newton_iterations: Vec<u32>,
    /// Newton residual of each recorded step.
    pub newton_residual: Vec<f64>,
    /// Probe values, in the model's order.
    pub probes: Vec<Series<f64>>,
    /// The method's statistics, in its order.
    pub stats: Vec<Stat>,
    /// DOF names, e.g. `bob.x`.
    pub dof_names: Vec<String>,
    /// Multiplier names, e.g. `pin[0]`.
    pub multiplier_names: Vec<String>,
    /// How the run ended (`None` while it runs, or for a killed run's file).
    pub status: Option<RunStatus>,
    /// Last time reached (NaN until the run finished).
    pub t_end_reached: f64,
    /// Integrator name.
    pub integrator: String,
    /// The model file text (empty for models built in code).
    pub model_text: String,
    /// Points, cells, bodies and joints, when the model has points.
    pub mesh: Option<Mesh>,
    /// What is recorded.
    recording: Recording,
    /// Which statistics are counters (their names), until the statistics'
    /// columns are made (then empty).
    counters: Vec<String>,
}

impl Default for Results {
    /// An empty recorder keeping every history.
    fn default() -> Self {
        Results::new(Recording::all())
    }
}

impl Results {
    /// An empty recorder keeping the histories of `recording`.
    pub fn new(recording: Recording) -> Self {
        Results {
            time: Vec::new(),
            step: Vec::new(),
            u: Matrix::default(),
            v: Matrix::default(),
            a: Matrix::default(),
            lambda: Matrix::default(),
            energies: Vec::new(),
            constraints: Vec::new(),
            newton_iterations: Vec::new(),
            newton_residual: Vec::new(),
            probes: Vec::new(),
            stats: Vec::new(),
            dof_names: Vec::new(),
            multiplier_names: Vec::new(),
            status: None,
            t_end_reached: f64::NAN,
            integrator: String::new(),
            model_text: String::new(),
            mesh: None,
            recording,
            counters: Vec::new(),
        }
    }

    /// Marks the statistics named in `counters` as counts (before
    /// [`Recorder::begin`]; [`Recorder::totals`] does it from the totals'
    /// integer type otherwise).
    pub fn with_counters<'n>(mut self, counters: impl IntoIterator<Item = &'n str>) -> Self {
        self.counters = counters.into_iter().map(str::to_string).collect();
        self
    }

    /// What is recorded.
    pub fn recording(&self) -> Recording {
        self.recording
    }

    /// Number of recorded rows.
    pub fn len(&self) -> usize {
        self.time.len()
    }

    /// Whether no row was recorded.
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// The position history of DOF `name` (e.g. `node3.x`).
    pub fn dof(&self, name: &str) -> Result<Vec<f64>, ResultsError> {
        self.column(&self.u, self.recording.u, "u", name)
    }

    /// The velocity history of DOF `name`.
    pub fn velocity(&self, name: &str) -> Result<Vec<f64>, ResultsError> {
        self.column(&self.v, self.recording.v, "v", name)
    }

    /// The acceleration history of DOF `name`.
    pub fn acceleration(&self, name: &str) -> Result<Vec<f64>, ResultsError> {
        self.column(&self.a, self.recording.a, "a", name)
    }

    /// The history of multiplier `name` (e.g. `pin[0]`).
    pub fn multiplier(&self, name: &str) -> Result<Vec<f64>, ResultsError> {
        let j = position("multiplier", &self.multiplier_names, name)?;
        if !self.recording.lambda {
            return Err(ResultsError::NotRecorded { what: "lambda" });
        }
        Ok(self.lambda.column(j))
    }

    fn column(
        &self,
        m: &Matrix,
        recorded: bool,
        what: &'static str,
        name: &str,
    ) -> Result<Vec<f64>, ResultsError> {
        let j = position("DOF", &self.dof_names, name)?;
        if !recorded {
            return Err(ResultsError::NotRecorded { what });
        }
        Ok(m.column(j))
    }

    /// The history of probe `name`.
    pub fn probe(&self, name: &str) -> Result<&[f64], ResultsError> {
        series(&self.probes, self.recording.probes, "probe", "probes", name)
    }

    /// The history of energy `name` ([`ENERGY_NAMES`]: `kinetic`,
    /// `potential`, `total`, `external_work`).
    pub fn energy(&self, name: &str) -> Result<&[f64], ResultsError> {
        let names = ENERGY_NAMES.map(String::from);
        let j = position("energy", &names, name)?;
        if !self.recording.energy {
            return Err(ResultsError::NotRecorded { what: "energy" });
        }
        Ok(&self.energies[j].values)
    }

    /// The history of constraint residual `name` ([`CONSTRAINT_NAMES`]).
    pub fn constraint(&self, name: &str) -> Result<&[f64], ResultsError> {
        let names = CONSTRAINT_NAMES.map(String::from);
        let j = position("constraint", &names, name)?;
        if !self.recording.constraints {
            return Err(ResultsError::NotRecorded {
                what: "constraints",
            });
        }
        Ok(&self.constraints[j].values)
    }

    /// The per-row history of the method's statistic `name`.
    pub fn stat(&self, name: &str) -> Result<&StatValues, ResultsError> {
        if !self.recording.stats {
            return Err(ResultsError::NotRecorded { what: "stats" });
        }
        let names: Vec<String> = self.stats.iter().map(|s| s.name.clone()).collect();
        let j = position("statistic", &names, name)?;
        Ok(&self.stats[j].values)
    }

    /// The per-row counts of the method's counter `name` (e.g.
    /// `newton_iterations`); a measure is [`ResultsError::NotACount`].
    pub fn count(&self, name: &str) -> Result<&[u64], ResultsError> {
        self.stat(name)?
            .counts()
            .ok_or_else(|| ResultsError::NotACount {
                name: name.to_string(),
            })
    }

    /// Reads a run from any backend's file ([`RunSource`]).
    pub fn from_source(src: &impl RunSource) -> Result<Results, OutputError> {
        let run = super::hdf5::assemble_run(src)?;
        let steps = run.time.len();
        let attrs = src.root_attrs()?;
        let counters = attrs
            .iter()
            .filter_map(|(n, v)| match v {
                AttrValue::I64(_) => n.strip_prefix("stats.").map(str::to_string),
                _ => None,
            })
            .collect();
        let mut r = Results::new(Recording::default());
        r.counters = counters;
        r.fill_from_run(run);
        // Probes and statistics, in the order the file lists them.
        for name in src_names(src, "probes") {
            let values = src.f64s(&format!("probes/{}", super::path_component(&name)))?;
            r.probes.push(Series {
                name,
                values: values.into_iter().take(steps).collect(),
            });
        }
        for name in src_names(src, "stats") {
            let values = src.f64s(&format!("stats/{}", super::path_component(&name)))?;
            let mut s = r.empty_stat(&name);
            for x in values.into_iter().take(steps) {
                s.values.push(x);
            }
            r.stats.push(s);
        }
        r.recording.probes = true;
        r.recording.stats = true;
        r.mesh = read_mesh(src, &r.dof_names, &r.multiplier_names)?;
        r.counters.clear();
        Ok(r)
    }

    fn fill_from_run(&mut self, run: Hdf5Run) {
        use super::Field;
        let matrix = |cols: usize, rows: Vec<Vec<f64>>| {
            Matrix::from_rows(cols, rows.concat()).unwrap_or_else(|| Matrix::new(cols))
        };
        let has = |f: Field| run.fields.contains(&f);
        self.recording = Recording {
            u: has(Field::U),
            v: has(Field::V),
            a: has(Field::A),
            lambda: has(Field::Lambda),
            energy: has(Field::Energy),
            constraints: has(Field::Constraints),
            newton: has(Field::Newton),
            probes: false,
            stats: false,
        };
        let (nd, nm) = (run.dof_names.len(), run.multiplier_names.len());
        self.status = run.run_status();
        self.u = matrix(nd, run.u);
        self.v = matrix(nd, run.v);
        self.a = matrix(nd, run.a);
        self.lambda = matrix(nm, run.lambda);
        self.start_series();
        if self.recording.energy {
            for e in &run.energy {
                let row = [e.kinetic, e.potential, e.total, e.external_work];
                for (s, x) in self.energies.iter_mut().zip(row) {
                    s.values.push(x);
                }
            }
        }
        if self.recording.constraints {
            for c in &run.constraints {
                let row = [c.position, c.velocity, c.acceleration];
                for (s, x) in self.constraints.iter_mut().zip(row) {
                    s.values.push(x);
                }
            }
        }
        for n in &run.newton {
            self.newton_iterations.push(n.iterations);
            self.newton_residual.push(n.residual);
        }
        self.t_end_reached = run.t_end_reached;
        self.integrator = run.integrator;
        self.model_text = run.model;
        self.time = run.time;
        self.step = run.step;
        self.dof_names = run.dof_names;
        self.multiplier_names = run.multiplier_names;
    }

    /// The energy and constraint series, empty, when recorded.
    fn start_series(&mut self) {
        let named = |names: &[&str]| {
            names
                .iter()
                .map(|n| Series {
                    name: n.to_string(),
                    values: Vec::new(),
                })
                .collect()
        };
        self.energies = if self.recording.energy {
            named(&ENERGY_NAMES)
        } else {
            Vec::new()
        };
        self.constraints = if self.recording.constraints {
            named(&CONSTRAINT_NAMES)
        } else {
            Vec::new()
        };
    }

    fn empty_stat(&self, name: &str) -> Stat {
        Stat {
            name: name.to_string(),
            values: if self.counters.iter().any(|c| c == name) {
                StatValues::Count(Vec::new())
            } else {
                StatValues::Measure(Vec::new())
            },
        }
    }
}

fn position(what: &'static str, names: &[String], name: &str) -> Result<usize, ResultsError> {
    names
        .iter()
        .position(|n| n == name)
        .ok_or_else(|| ResultsError::UnknownName {
            what,
            name: name.to_string(),
            available: names.to_vec(),
        })
}

fn series<'r>(
    all: &'r [Series<f64>],
    recorded: bool,
    what: &'static str,
    field: &'static str,
    name: &str,
) -> Result<&'r [f64], ResultsError> {
    if !recorded {
        return Err(ResultsError::NotRecorded { what: field });
    }
    all.iter()
        .find(|s| s.name == name)
        .map(|s| &s.values[..])
        .ok_or_else(|| ResultsError::UnknownName {
            what,
            name: name.to_string(),
            available: all.iter().map(|s| s.name.clone()).collect(),
        })
}

impl Recorder for Results {
    fn begin(&mut self, info: &RunInfo) -> Result<(), OutputError> {
        let r = self.recording;
        let (nd, nm) = (info.dof_names.len(), info.multiplier_names.len());
        // A history not recorded keeps its column count (0 rows).
        self.u = Matrix::new(nd);
        self.v = Matrix::new(nd);
        self.a = Matrix::new(nd);
        self.lambda = Matrix::new(nm);
        self.start_series();
        self.probes = if r.probes {
            info.probe_names
                .iter()
                .map(|n| Series {
                    name: n.clone(),
                    values: Vec::new(),
                })
                .collect()
        } else {
            Vec::new()
        };
        self.stats = if r.stats {
            info.stat_names.iter().map(|n| self.empty_stat(n)).collect()
        } else {
            Vec::new()
        };
        self.dof_names = info.dof_names.clone();
        self.multiplier_names = info.multiplier_names.clone();
        self.integrator = info.integrator.clone();
        self.model_text = info.model_text.clone();
        self.mesh = (!info.mesh.is_empty()).then(|| info.mesh.clone());
        // The kinds now live in the statistics' columns.
        self.counters.clear();
        Ok(())
    }

    fn record(&mut self, rec: &StepRecord<'_>) -> Result<(), OutputError> {
        let r = self.recording;
        self.time.push(rec.time);
        self.step.push(rec.step);
        for (on, m, row) in [
            (r.u, &mut self.u, rec.u),
            (r.v, &mut self.v, rec.v),
            (r.a, &mut self.a, rec.a),
            (r.lambda, &mut self.lambda, rec.lambda),
        ] {
            if on {
                m.push(row);
            }
        }
        let e = &rec.energy;
        for (s, x) in
            self.energies
                .iter_mut()
                .zip([e.kinetic, e.potential, e.total, e.external_work])
        {
            s.values.push(x);
        }
        let c = &rec.constraints;
        for (s, x) in self
            .constraints
            .iter_mut()
            .zip([c.position, c.velocity, c.acceleration])
        {
            s.values.push(x);
        }
        if r.newton {
            self.newton_iterations.push(rec.newton.iterations);
            self.newton_residual.push(rec.newton.residual);
        }
        for (s, &x) in self.probes.iter_mut().zip(rec.probes) {
            s.values.push(x);
        }
        for (s, &x) in self.stats.iter_mut().zip(rec.stats) {
            s.values.push(x);
        }
        Ok(())
    }

    fn totals(&mut self, totals: &RunTotals) {
        // Counters have integer totals: their rows become counts.
        for (name, v) in &totals.stats {
            if let (AttrValue::I64(_), Some(s)) =
                (v, self.stats.iter_mut().find(|s| &s.name == name))
            {
                if let StatValues::Measure(m) = &s.values {
                    s.values = StatValues::Count(m.iter().map(|&x| x as u64).collect());
                }
            }
        }
    }

    fn finish(&mut self, status: &RunStatus, t_end_reached: f64) -> Result<(), OutputError> {
        self.status = Some(status.clone());
        self.t_end_reached = t_end_reached;
        Ok(())
    }
}

/// The names below `group` of a file (`/probes/<name>`, `/stats/<name>`),
/// decoded from their path components.
fn src_names(src: &impl RunSource, group: &str) -> Vec<String> {
    src.datasets()
        .iter()
        .filter_map(|d| d.strip_prefix(group)?.strip_prefix('/'))
        .filter(|rest| !rest.contains('/'))
        .map(decode_component)
        .collect()
}

/// The inverse of [`super::path_component`]: `%XX` back to its byte.
fn decode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 3);
        match code.and_then(|c| u8::from_str_radix(c, 16).ok()) {
            Some(b) => {
                out.push(b as char);
                rest = &rest[i + 3..];
            }
            None => {
                out.push('%');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The mesh of a file's `/mesh` datasets (`None` when it has none), with
/// each body's rotation columns from the DOF names (`<body>.<label>` other
/// than the point's own) and each joint's multiplier rows from the
/// multiplier names (`<joint>[<row>]`).
fn read_mesh(
    src: &impl RunSource,
    dof_names: &[String],
    multiplier_names: &[String],
) -> Result<Option<Mesh>, OutputError> {
    if !src.has("mesh/nodes") {
        return Ok(None);
    }
    let nodes = src.f64s("mesh/nodes")?;
    let names = src.strings("mesh/point_names")?;
    let dofs = src.i64s("mesh/point_dofs")?;
    let col = |d: i64| usize::try_from(d).ok();
    let points: Vec<MeshPoint> = names
        .into_iter()
        .enumerate()
        .map(|(i, name)| MeshPoint {
            name,
            reference: [nodes[3 * i], nodes[3 * i + 1], nodes[3 * i + 2]],
            dofs: [col(dofs[3 * i]), col(dofs[3 * i + 1]), col(dofs[3 * i + 2])],
        })
        .collect();
    let dim = if points.iter().any(|p| p.dofs[2].is_some()) {
        3
    } else {
        2
    };
    let mut cells = Vec::new();
    let mut bodies = Vec::new();
    let groups: Vec<String> = src
        .datasets()
        .iter()
        .filter_map(|d| d.strip_prefix("mesh/")?.strip_suffix("/connectivity"))
        .map(str::to_string)
        .collect();
    for group in groups {
        let conn: Vec<usize> = src
            .i64s(&format!("mesh/{group}/connectivity"))?
            .into_iter()
            .filter_map(col)
            .collect();
        let shape = src.shape(&format!("mesh/{group}/connectivity"))?;
        let names = src.strings(&format!("mesh/{group}/names"))?;
        if group == super::hdf5::MESH_BODIES {
            for (name, point) in names.into_iter().zip(conn) {
                let own = |j: &usize| points[point].dofs.contains(&Some(*j));
                let rotation: Vec<usize> = (0..dof_names.len())
                    .filter(|j| {
                        dof_names[*j]
                            .strip_prefix(&name)
                            .is_some_and(|l| l.starts_with('.'))
                            && !own(j)
                    })
                    .collect();
                let attitude = match rotation.len() {
                    1 => None,
                    9 => Some(Attitude::Directors),
                    _ => Some(Attitude::EulerParameters),
                };
                bodies.push(MeshBody {
                    name,
                    point,
                    rotation,
                    attitude,
                });
            }
        } else {
            cells.push(CellBlock {
                kind: decode_component(&group),
                points_per_cell: shape.get(1).copied().unwrap_or(0),
                names,
                connectivity: conn,
            });
        }
    }
    let mut joints: Vec<MeshJoint> = Vec::new();
    for (i, m) in multiplier_names.iter().enumerate() {
        let name = m.rsplit_once('[').map_or(m.as_str(), |(n, _)| n);
        match joints.last_mut() {
            Some(j) if j.name == name && j.first + j.rows == i => j.rows += 1,
            _ => joints.push(MeshJoint {
                name: name.to_string(),
                first: i,
                rows: 1,
            }),
        }
    }
    Ok(Some(Mesh {
        dim,
        points,
        cells,
        bodies,
        joints,
    }))
}

impl Hdf5Reader {
    /// Reads the whole run into [`Results`].
    pub fn results(&self) -> Result<Results, OutputError> {
        Results::from_source(self)
    }
}
