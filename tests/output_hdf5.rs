//! HDF5 output backends: bit-exact round trips against `MemoryRecorder`,
//! field selection, compression, unconstrained models, failed runs, zero
//! steps, wide models, a writer killed with SIGKILL, and the mesh datasets
//! (`/mesh`, `/points`, `/bodies`, `/joints`) with their XDMF side file for
//! a truss model and the double pendulum.
//!
//! With `FLEXMB_H5CHECK_DIR` set, every file is also copied there with a
//! `<name>.expected.json` sidecar for `scripts/h5check.py`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{RwLock, RwLockReadGuard};
use std::time::{Duration, Instant};

use flexmb::output::{
    path_component, read_hdf5_run, AttrValue, ConstraintNorms, Energy, Field, Hdf5Reader,
    Hdf5Recorder, Hdf5Run, MemoryRecorder, Mesh, NewtonStats, OutputConfig, Recorder, RunInfo,
    RunSource, RunStatus, StepRecord,
};

// ---------------------------------------------------------------------------
// Synthetic runs
// ---------------------------------------------------------------------------

/// Special finite values every synthetic run contains.
const SPECIAL: [f64; 10] = [
    -0.0,
    0.0,
    5e-324,                    // smallest subnormal
    -2.225_073_858_507_2e-308, // subnormal
    f64::MIN_POSITIVE,
    f64::MAX,
    f64::MIN,
    -1.0e300,
    1.0e-300,
    std::f64::consts::PI,
];

/// A finite f64 with arbitrary bits, deterministic in `(step, k)`.
fn value(step: u64, k: u64) -> f64 {
    let mut x = step
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(k.wrapping_mul(0xD1B5_4A32_D192_ED03))
        ^ 0x5851_F42D_4C95_7F2D;
    x ^= x >> 33;
    x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x ^= x >> 29;
    if x.is_multiple_of(7) {
        return SPECIAL[((x >> 8) % SPECIAL.len() as u64) as usize];
    }
    let v = f64::from_bits(x);
    if v.is_finite() {
        v
    } else {
        // Exponent all ones (inf/NaN): clear its top bit.
        f64::from_bits(x & !(1u64 << 62))
    }
}

/// The owned data of one synthetic step.
struct Step {
    step: u64,
    time: f64,
    u: Vec<f64>,
    v: Vec<f64>,
    a: Vec<f64>,
    lambda: Vec<f64>,
    energy: Energy,
    constraints: ConstraintNorms,
    newton: NewtonStats,
    stats: Vec<f64>,
}

impl Step {
    fn new(step: u64, n_dof: usize, n_mult: usize) -> Step {
        let vec = |base: u64, n: usize| -> Vec<f64> {
            (0..n as u64).map(|i| value(step, base + i)).collect()
        };
        Step {
            step,
            time: step as f64 * 1e-3,
            u: vec(1 << 20, n_dof),
            v: vec(2 << 20, n_dof),
            a: vec(3 << 20, n_dof),
            lambda: vec(4 << 20, n_mult),
            stats: vec(5 << 20, 2),
            energy: Energy {
                kinetic: value(step, 1),
                potential: value(step, 2),
                total: value(step, 3),
                external_work: value(step, 4),
            },
            constraints: ConstraintNorms {
                position: value(step, 5),
                velocity: value(step, 6),
                acceleration: value(step, 7),
            },
            newton: NewtonStats {
                iterations: (value(step, 8).to_bits() % 50) as u32
                    + u32::from(step % 97 == 3) * (u32::MAX - 60),
                residual: value(step, 9),
            },
        }
    }

    fn record(&self) -> StepRecord<'_> {
        StepRecord {
            step: self.step,
            time: self.time,
            u: &self.u,
            v: &self.v,
            a: &self.a,
            lambda: &self.lambda,
            energy: self.energy,
            constraints: self.constraints,
            newton: self.newton,
            probes: &[],
            stats: &self.stats,
        }
    }
}

fn run_info(n_dof: usize, n_mult: usize) -> RunInfo {
    RunInfo {
        integrator: "GSSSS V0(1,1,0) option 2, a-form".into(),
        parameters: vec![
            ("dt".into(), AttrValue::F64(1e-3)),
            ("rho_inf".into(), AttrValue::F64(-0.0)),
            ("tiny".into(), AttrValue::F64(5e-324)),
            ("option".into(), AttrValue::I64(2)),
            ("max_iter".into(), AttrValue::I64(-7)),
            ("big".into(), AttrValue::I64(i64::MIN)),
            ("family".into(), AttrValue::Str("V0".into())),
            ("form".into(), AttrValue::Str("a-form".into())),
            ("jacobian".into(), AttrValue::Str("exact".into())),
            ("empty".into(), AttrValue::Str(String::new())),
        ],
        model_text:
            "[model]\nname = \"pendulum θ\"\n# a \"quoted\" line\\\n\tgravity = [0, -9.81, 0]\n"
                .into(),
        dof_names: (0..n_dof)
            .map(|i| format!("body{}.q{}", i / 3, i % 3))
            .collect(),
        multiplier_names: (0..n_mult)
            .map(|i| format!("pin{}[{}]", i / 2, i % 2))
            .collect(),
        mesh: Mesh::default(),
        probe_names: Vec::new(),
        stat_names: vec!["nfcn".into(), "drift".into()],
    }
}

// ---------------------------------------------------------------------------
// Backends
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum Backend {
    Rust,
    #[cfg(feature = "hdf5-c")]
    C,
}

impl Backend {
    fn all() -> Vec<Backend> {
        vec![
            Backend::Rust,
            #[cfg(feature = "hdf5-c")]
            Backend::C,
        ]
    }

    /// Whether a file stays readable whatever moment the writer is killed
    /// (rust-hdf5's SWMR protocol; by libhdf5 without SWMR only outside a
    /// flush's superblock write, see `killed_inside_flush`), or only between
    /// flushes (libhdf5).
    fn survives_any_kill(self) -> bool {
        match self {
            Backend::Rust => true,
            #[cfg(feature = "hdf5-c")]
            Backend::C => false,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Backend::Rust => "rust",
            #[cfg(feature = "hdf5-c")]
            Backend::C => "c",
        }
    }

    fn create(self, path: &Path, config: OutputConfig) -> Box<dyn Recorder> {
        match self {
            Backend::Rust => Box::new(Hdf5Recorder::create(path, config).expect("create")),
            #[cfg(feature = "hdf5-c")]
            Backend::C => {
                Box::new(flexmb::output::Hdf5CRecorder::create(path, config).expect("create"))
            }
        }
    }

    /// Reads with `read_hdf5_run` and, for the C backend's files, also with
    /// `read_hdf5_c` (libhdf5 < 2.0 cannot convert the variable-length
    /// strings rust-hdf5 writes, see docs/output-format.md).
    fn read(self, path: &Path) -> Hdf5Run {
        let run = read_hdf5_run(path).expect("read_hdf5_run");
        #[cfg(feature = "hdf5-c")]
        if let Backend::C = self {
            let c = flexmb::output::read_hdf5_c(path).expect("read_hdf5_c");
            assert_runs_equal(&run, &c);
        }
        run
    }
}

/// Held (shared) while a test has HDF5 files open, and exclusively while the
/// killed-writer test forks: libhdf5 opens files without `O_CLOEXEC`, so a
/// child forked meanwhile would inherit the descriptor and its file lock.
static FILES_OPEN: RwLock<()> = RwLock::new(());

fn files_open() -> RwLockReadGuard<'static, ()> {
    FILES_OPEN.read().unwrap_or_else(|e| e.into_inner())
}

fn scratch_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flexmb-h5test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Records `steps` synthetic steps into `backend` and a `MemoryRecorder`.
fn write_run(
    backend: Backend,
    name: &str,
    config: &OutputConfig,
    steps: u64,
    n_dof: usize,
    n_mult: usize,
    status: &RunStatus,
) -> (PathBuf, MemoryRecorder) {
    let path = scratch_dir().join(format!("{}_{name}.h5", backend.name()));
    let mem = record_run(
        backend,
        &path,
        config,
        &run_info(n_dof, n_mult),
        steps,
        status,
    );
    (path, mem)
}

/// Records `steps` synthetic steps of the run `info` (t_end = steps * 1 ms)
/// into `backend` at `path` and a `MemoryRecorder`.
fn record_run(
    backend: Backend,
    path: &Path,
    config: &OutputConfig,
    info: &RunInfo,
    steps: u64,
    status: &RunStatus,
) -> MemoryRecorder {
    let (n_dof, n_mult) = (info.dof_names.len(), info.multiplier_names.len());
    let mut rec = backend.create(path, config.clone());
    let mut mem = MemoryRecorder::default();
    rec.begin(info).expect("begin");
    mem.begin(info).expect("begin");
    for s in 0..steps {
        let step = Step::new(s, n_dof, n_mult);
        rec.record(&step.record()).expect("record");
        mem.record(&step.record()).expect("record");
    }
    let t_end = steps as f64 * 1e-3;
    rec.finish(status, t_end).expect("finish");
    mem.finish(status, t_end).expect("finish");
    mem
}

// ---------------------------------------------------------------------------
// Comparisons
// ---------------------------------------------------------------------------

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn bits2(v: &[Vec<f64>]) -> Vec<Vec<u64>> {
    v.iter().map(|r| bits(r)).collect()
}

fn energy_bits(e: &[Energy]) -> Vec<[u64; 4]> {
    e.iter()
        .map(|e| [e.kinetic, e.potential, e.total, e.external_work].map(f64::to_bits))
        .collect()
}

fn constraint_bits(c: &[ConstraintNorms]) -> Vec<[u64; 3]> {
    c.iter()
        .map(|c| [c.position, c.velocity, c.acceleration].map(f64::to_bits))
        .collect()
}

fn newton_bits(n: &[NewtonStats]) -> Vec<(u32, u64)> {
    n.iter()
        .map(|n| (n.iterations, n.residual.to_bits()))
        .collect()
}

fn attr_bits(a: &AttrValue) -> String {
    match a {
        AttrValue::F64(x) => format!("f64:{:016x}", x.to_bits()),
        AttrValue::I64(x) => format!("i64:{x}"),
        AttrValue::Str(s) => format!("str:{s}"),
    }
}

fn sorted_params(p: &[(String, AttrValue)]) -> Vec<(String, String)> {
    let mut v: Vec<_> = p.iter().map(|(n, a)| (n.clone(), attr_bits(a))).collect();
    v.sort();
    v
}

/// The run read back equals what `MemoryRecorder` got, bit for bit.
fn assert_matches_memory(run: &Hdf5Run, mem: &MemoryRecorder, config: &OutputConfig) {
    let sel = |f: Field| config.has(f);
    assert_eq!(run.len(), mem.time.len());
    assert_eq!(bits(&run.time), bits(&mem.time));
    assert_eq!(run.step, mem.step);
    let empty = Vec::new();
    let pick = |f: Field, v: &Vec<Vec<f64>>| if sel(f) { bits2(v) } else { bits2(&empty) };
    assert_eq!(bits2(&run.u), pick(Field::U, &mem.u), "u");
    assert_eq!(bits2(&run.v), pick(Field::V, &mem.v), "v");
    assert_eq!(bits2(&run.a), pick(Field::A, &mem.a), "a");
    assert_eq!(
        bits2(&run.lambda),
        pick(Field::Lambda, &mem.lambda),
        "lambda"
    );
    let or_empty = |f: Field, n: usize| if sel(f) { n } else { 0 };
    assert_eq!(run.energy.len(), or_empty(Field::Energy, mem.energy.len()));
    if sel(Field::Energy) {
        assert_eq!(energy_bits(&run.energy), energy_bits(&mem.energy));
    }
    assert_eq!(
        run.constraints.len(),
        or_empty(Field::Constraints, mem.constraints.len())
    );
    if sel(Field::Constraints) {
        assert_eq!(
            constraint_bits(&run.constraints),
            constraint_bits(&mem.constraints)
        );
    }
    assert_eq!(run.newton.len(), or_empty(Field::Newton, mem.newton.len()));
    if sel(Field::Newton) {
        assert_eq!(newton_bits(&run.newton), newton_bits(&mem.newton));
    }
    let mut fields = run.fields.clone();
    fields.sort_by_key(|f| Field::ALL.iter().position(|g| g == f));
    let mesh = &mem.info.mesh;
    let expected: Vec<Field> = Field::ALL
        .into_iter()
        .filter(|f| sel(*f))
        .filter(|f| match f {
            Field::Points => !mesh.is_empty(),
            Field::Bodies => !mesh.bodies.is_empty(),
            Field::Joints => !mesh.joints.is_empty(),
            _ => true,
        })
        .collect();
    assert_eq!(fields, expected);

    assert_eq!(run.dof_names, mem.info.dof_names);
    assert_eq!(run.multiplier_names, mem.info.multiplier_names);
    assert_eq!(run.integrator, mem.info.integrator);
    assert_eq!(run.model, mem.info.model_text);
    assert_eq!(run.flexmb_version, env!("CARGO_PKG_VERSION"));
    assert_eq!(
        sorted_params(&run.parameters),
        sorted_params(&mem.info.parameters)
    );
    assert_eq!(run.run_status(), mem.status);
    match &mem.status {
        Some(RunStatus::Completed) => {
            assert_eq!(run.status, "completed");
            assert_eq!(run.failure_reason, "");
        }
        Some(RunStatus::Failed { reason }) => {
            assert_eq!(run.status, "failed");
            assert_eq!(&run.failure_reason, reason);
        }
        Some(RunStatus::Interrupted { reason }) => {
            assert_eq!(run.status, "interrupted");
            assert_eq!(&run.failure_reason, reason);
        }
        None => assert_eq!(run.status, "running"),
    }
    if mem.status.is_some() {
        assert_eq!(run.t_end_reached.to_bits(), mem.t_end_reached.to_bits());
    } else {
        assert!(
            run.t_end_reached.is_nan(),
            "unfinished run: t_end_reached is NaN"
        );
    }
}

#[cfg(feature = "hdf5-c")]
fn assert_runs_equal(a: &Hdf5Run, b: &Hdf5Run) {
    assert_eq!(bits(&a.time), bits(&b.time));
    assert_eq!(a.step, b.step);
    for (x, y) in [
        (&a.u, &b.u),
        (&a.v, &b.v),
        (&a.a, &b.a),
        (&a.lambda, &b.lambda),
    ] {
        assert_eq!(bits2(x), bits2(y));
    }
    assert_eq!(energy_bits(&a.energy), energy_bits(&b.energy));
    assert_eq!(
        constraint_bits(&a.constraints),
        constraint_bits(&b.constraints)
    );
    assert_eq!(newton_bits(&a.newton), newton_bits(&b.newton));
    let mut fa = a.fields.clone();
    let mut fb = b.fields.clone();
    fa.sort_by_key(|f| Field::ALL.iter().position(|g| g == f));
    fb.sort_by_key(|f| Field::ALL.iter().position(|g| g == f));
    assert_eq!(fa, fb);
    assert_eq!(a.dof_names, b.dof_names);
    assert_eq!(a.multiplier_names, b.multiplier_names);
    assert_eq!(
        (
            &a.status,
            &a.failure_reason,
            &a.integrator,
            &a.model,
            &a.flexmb_version
        ),
        (
            &b.status,
            &b.failure_reason,
            &b.integrator,
            &b.model,
            &b.flexmb_version
        )
    );
    assert_eq!(a.t_end_reached.to_bits(), b.t_end_reached.to_bits());
    assert_eq!(sorted_params(&a.parameters), sorted_params(&b.parameters));
}

// ---------------------------------------------------------------------------
// Sidecars for scripts/h5check.py
// ---------------------------------------------------------------------------

/// A minimal JSON value.
#[derive(Clone)]
enum Json {
    Int(i128),
    Str(String),
    List(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    fn write(&self, out: &mut String) {
        match self {
            Json::Int(i) => out.push_str(&i.to_string()),
            Json::Str(s) => {
                out.push('"');
                for c in s.chars() {
                    match c {
                        '"' => out.push_str("\\\""),
                        '\\' => out.push_str("\\\\"),
                        c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                        c => out.push(c),
                    }
                }
                out.push('"');
            }
            Json::List(v) => {
                out.push('[');
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    x.write(out);
                }
                out.push(']');
            }
            Json::Obj(v) => {
                out.push('{');
                for (i, (k, x)) in v.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    Json::Str(k.clone()).write(out);
                    out.push(':');
                    x.write(out);
                }
                out.push('}');
            }
        }
    }
}

fn obj(items: Vec<(&str, Json)>) -> Json {
    Json::Obj(items.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn ints<T: Copy + Into<i128>>(v: impl IntoIterator<Item = T>) -> Json {
    Json::List(v.into_iter().map(|x| Json::Int(x.into())).collect())
}

fn f64_dataset(shape: Vec<usize>, values: impl IntoIterator<Item = f64>) -> Json {
    obj(vec![
        ("dtype", Json::Str("f64".into())),
        ("shape", ints(shape.into_iter().map(|x| x as u64))),
        ("bits", ints(values.into_iter().map(f64::to_bits))),
    ])
}

fn int_dataset<T: Copy + Into<i128>>(kind: &str, shape: Vec<usize>, values: Vec<T>) -> Json {
    obj(vec![
        ("dtype", Json::Str(kind.into())),
        ("shape", ints(shape.into_iter().map(|x| x as u64))),
        ("values", ints(values)),
    ])
}

fn str_dataset(values: &[String]) -> Json {
    obj(vec![
        ("dtype", Json::Str("str".into())),
        ("shape", ints([values.len() as u64])),
        (
            "values",
            Json::List(values.iter().map(|s| Json::Str(s.clone())).collect()),
        ),
    ])
}

fn attr_json(v: &AttrValue) -> Json {
    match v {
        AttrValue::F64(x) => obj(vec![
            ("type", Json::Str("f64".into())),
            ("bits", Json::Int(x.to_bits().into())),
        ]),
        AttrValue::I64(x) => obj(vec![
            ("type", Json::Str("i64".into())),
            ("value", Json::Int((*x).into())),
        ]),
        AttrValue::Str(s) => obj(vec![
            ("type", Json::Str("str".into())),
            ("value", Json::Str(s.clone())),
        ]),
    }
}

/// The expected file content of a run recorded into `mem` with `config`.
fn expected_json(mem: &MemoryRecorder, config: &OutputConfig, status: &str) -> Json {
    let steps = mem.time.len();
    let n_dof = mem.info.dof_names.len();
    let n_mult = mem.info.multiplier_names.len();
    let mut ds: Vec<(String, Json)> = vec![
        (
            "time".into(),
            f64_dataset(vec![steps], mem.time.iter().copied()),
        ),
        (
            "step".into(),
            int_dataset("uint", vec![steps], mem.step.clone()),
        ),
        ("dofs/names".into(), str_dataset(&mem.info.dof_names)),
        (
            "multipliers/names".into(),
            str_dataset(&mem.info.multiplier_names),
        ),
    ];
    let mut absent = Vec::new();
    let mut matrix = |name: &str, f: Field, rows: &[Vec<f64>], n: usize| {
        if config.has(f) {
            ds.push((
                name.into(),
                f64_dataset(vec![steps, n], rows.iter().flatten().copied()),
            ));
        } else {
            absent.push(Json::Str(name.into()));
        }
    };
    matrix("u", Field::U, &mem.u, n_dof);
    matrix("v", Field::V, &mem.v, n_dof);
    matrix("a", Field::A, &mem.a, n_dof);
    matrix("lambda", Field::Lambda, &mem.lambda, n_mult);
    let mut scalars = |f: Field, items: Vec<(&str, Vec<f64>)>| {
        for (name, v) in items {
            if config.has(f) {
                ds.push((name.into(), f64_dataset(vec![steps], v)));
            } else {
                absent.push(Json::Str(name.into()));
            }
        }
    };
    let e = &mem.energy;
    scalars(
        Field::Energy,
        vec![
            ("energy/kinetic", e.iter().map(|e| e.kinetic).collect()),
            ("energy/potential", e.iter().map(|e| e.potential).collect()),
            ("energy/total", e.iter().map(|e| e.total).collect()),
            (
                "energy/external_work",
                e.iter().map(|e| e.external_work).collect(),
            ),
        ],
    );
    let c = &mem.constraints;
    scalars(
        Field::Constraints,
        vec![
            (
                "constraints/position",
                c.iter().map(|c| c.position).collect(),
            ),
            (
                "constraints/velocity",
                c.iter().map(|c| c.velocity).collect(),
            ),
            (
                "constraints/acceleration",
                c.iter().map(|c| c.acceleration).collect(),
            ),
        ],
    );
    scalars(
        Field::Newton,
        vec![(
            "newton/residual",
            mem.newton.iter().map(|n| n.residual).collect(),
        )],
    );
    if config.has(Field::Newton) {
        let it = mem.newton.iter().map(|n| u64::from(n.iterations)).collect();
        ds.push((
            "newton/iterations".into(),
            int_dataset("uint", vec![steps], it),
        ));
    } else {
        absent.push(Json::Str("newton/iterations".into()));
    }
    for (i, name) in mem.info.stat_names.iter().enumerate() {
        ds.push((
            format!("stats/{name}"),
            f64_dataset(vec![steps], mem.stats.iter().map(|s| s[i])),
        ));
    }
    let expected = expected_mesh(mem, config);
    ds.extend(expected.iter().map(|(path, shape, v)| {
        let json = match v {
            Values::F64(v) => f64_dataset(shape.clone(), v.iter().copied()),
            Values::I64(v) => int_dataset("int", shape.clone(), v.clone()),
            Values::Str(v) => str_dataset(v),
        };
        (path.clone(), json)
    }));
    if !config.has(Field::Points) {
        absent.push(Json::Str("points".into()));
    }

    let reason = match &mem.status {
        Some(RunStatus::Failed { reason } | RunStatus::Interrupted { reason }) => reason.clone(),
        _ => String::new(),
    };
    let t_end = if mem.status.is_some() {
        mem.t_end_reached
    } else {
        f64::NAN
    };
    let mut attrs: Vec<(String, Json)> = vec![
        ("status".into(), attr_json(&AttrValue::Str(status.into()))),
        ("failure_reason".into(), attr_json(&AttrValue::Str(reason))),
        ("t_end_reached".into(), attr_json(&AttrValue::F64(t_end))),
        (
            "integrator".into(),
            attr_json(&AttrValue::Str(mem.info.integrator.clone())),
        ),
        (
            "model".into(),
            attr_json(&AttrValue::Str(mem.info.model_text.clone())),
        ),
        (
            "flexmb_version".into(),
            attr_json(&AttrValue::Str(env!("CARGO_PKG_VERSION").into())),
        ),
    ];
    for (name, v) in &mem.info.parameters {
        attrs.push((format!("integrator.{name}"), attr_json(v)));
    }
    if let Some(t) = &mem.totals {
        attrs.push(("steps".into(), attr_json(&AttrValue::I64(t.steps as i64))));
        attrs.push((
            "newton_iterations".into(),
            attr_json(&AttrValue::I64(t.newton_iterations as i64)),
        ));
        attrs.push((
            "wall_seconds".into(),
            attr_json(&AttrValue::F64(t.wall_seconds)),
        ));
        let levels = ["position", "velocity", "acceleration"];
        for (level, x) in levels.iter().zip(t.max_constraint_violation) {
            attrs.push((
                format!("max_{level}_violation"),
                attr_json(&AttrValue::F64(x)),
            ));
        }
        for (name, v) in &t.stats {
            attrs.push((format!("stats.{name}"), attr_json(v)));
        }
    }
    obj(vec![
        ("datasets", Json::Obj(ds)),
        ("absent", Json::List(absent)),
        ("attrs", Json::Obj(attrs)),
        ("compression", Json::Int(config.compression.into())),
    ])
}

/// Copies `path` and its sidecar into `$FLEXMB_H5CHECK_DIR`, if set.
fn export(path: &Path, expected: Option<Json>) {
    let Some(dir) = std::env::var_os("FLEXMB_H5CHECK_DIR") else {
        return;
    };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).expect("create FLEXMB_H5CHECK_DIR");
    let name = path.file_name().expect("file name");
    std::fs::copy(path, dir.join(name)).expect("copy h5 file");
    let xmf = path.with_extension("xmf");
    if xmf.exists() {
        let name = xmf.file_name().expect("file name");
        std::fs::copy(&xmf, dir.join(name)).expect("copy xmf file");
    }
    if let Some(json) = expected {
        let mut s = String::new();
        json.write(&mut s);
        let stem = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        std::fs::write(dir.join(format!("{stem}.expected.json")), s).expect("write sidecar");
    }
}

/// Writes, reads back, compares and exports one synthetic run per backend.
fn round_trip(
    name: &str,
    config: OutputConfig,
    steps: u64,
    n_dof: usize,
    n_mult: usize,
    status: RunStatus,
) {
    let _open = files_open();
    for backend in Backend::all() {
        let (path, mem) = write_run(backend, name, &config, steps, n_dof, n_mult, &status);
        let run = backend.read(&path);
        assert_matches_memory(&run, &mem, &config);
        let label = match status {
            RunStatus::Completed => "completed",
            RunStatus::Failed { .. } => "failed",
            RunStatus::Interrupted { .. } => "interrupted",
        };
        export(&path, Some(expected_json(&mem, &config, label)));
        let _ = std::fs::remove_file(&path);
    }
}

fn config(chunk_rows: usize, flush_seconds: f64, compression: u8) -> OutputConfig {
    OutputConfig {
        chunk_rows,
        flush_seconds,
        compression,
        ..OutputConfig::default()
    }
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[test]
fn round_trip_odd_sizes_flush_every_step() {
    round_trip(
        "odd_flush_every",
        config(16, 0.0, 0),
        333,
        7,
        3,
        RunStatus::Completed,
    );
}

#[test]
fn round_trip_odd_sizes_flush_at_finish() {
    round_trip(
        "odd_flush_end",
        config(37, 1e9, 0),
        301,
        5,
        2,
        RunStatus::Completed,
    );
}

#[test]
fn round_trip_compressed() {
    round_trip(
        "compressed",
        config(32, 0.0, 4),
        257,
        11,
        4,
        RunStatus::Completed,
    );
    round_trip(
        "compressed_end",
        config(64, 1e9, 9),
        200,
        3,
        1,
        RunStatus::Completed,
    );
}

#[test]
fn field_selection() {
    let mut c = config(16, 0.0, 0);
    c.fields = vec![Field::U, Field::Energy, Field::Newton];
    round_trip(
        "fields_u_energy_newton",
        c.clone(),
        99,
        4,
        2,
        RunStatus::Completed,
    );
    c.fields = vec![];
    round_trip("fields_none", c, 40, 4, 2, RunStatus::Completed);
}

#[test]
fn unconstrained_model() {
    round_trip(
        "unconstrained",
        config(8, 0.0, 0),
        50,
        6,
        0,
        RunStatus::Completed,
    );
    round_trip(
        "unconstrained_gz",
        config(8, 0.0, 1),
        20,
        2,
        0,
        RunStatus::Completed,
    );
}

#[test]
fn failed_run_with_reason() {
    let reason =
        "Newton did not converge at t = 0.0421 (step 42): residual 3.1e+02 > 1e-08".to_string();
    round_trip(
        "failed",
        config(16, 0.0, 0),
        42,
        3,
        1,
        RunStatus::Failed { reason },
    );
}

#[test]
fn interrupted_run_with_reason() {
    round_trip(
        "interrupted",
        config(16, 0.0, 0),
        17,
        3,
        1,
        RunStatus::Interrupted {
            reason: "stopped by signal 2 after step 17 (t = 0.17)".into(),
        },
    );
}

#[test]
fn zero_steps() {
    round_trip(
        "zero_steps",
        config(16, 0.0, 0),
        0,
        3,
        1,
        RunStatus::Completed,
    );
    round_trip(
        "zero_steps_gz",
        config(16, 0.0, 3),
        0,
        3,
        0,
        RunStatus::Failed {
            reason: "diverged before the first step".into(),
        },
    );
}

#[test]
fn finish_without_begin_gives_valid_file() {
    let _open = files_open();
    for backend in Backend::all() {
        let path = scratch_dir().join(format!("{}_no_begin.h5", backend.name()));
        let mut rec = backend.create(&path, OutputConfig::default());
        rec.finish(&RunStatus::Completed, 0.0).expect("finish");
        drop(rec);
        let run = backend.read(&path);
        assert!(run.is_empty());
        assert_eq!(run.status, "completed");
        let _ = std::fs::remove_file(&path);
    }
}

#[test]
fn drop_without_finish_keeps_recorded_steps() {
    let _open = files_open();
    let c = config(8, 1e9, 2);
    for backend in Backend::all() {
        let path = scratch_dir().join(format!("{}_dropped.h5", backend.name()));
        let mut rec = backend.create(&path, c.clone());
        let mut mem = MemoryRecorder::default();
        rec.begin(&run_info(3, 1)).expect("begin");
        mem.begin(&run_info(3, 1)).expect("begin");
        for s in 0..21 {
            rec.record(&Step::new(s, 3, 1).record()).expect("record");
            mem.record(&Step::new(s, 3, 1).record()).expect("record");
        }
        drop(rec);
        let run = backend.read(&path);
        assert_eq!(run.status, "running");
        assert_matches_memory(&run, &mem, &c);
        export(&path, Some(expected_json(&mem, &c, "running")));
        let _ = std::fs::remove_file(&path);
    }
}

#[test]
fn wide_model_tiles_columns() {
    // 3000 columns: 6 column tiles of 500 at 256 rows per chunk.
    round_trip(
        "wide",
        config(256, 0.0, 0),
        30,
        3000,
        5,
        RunStatus::Completed,
    );
    round_trip(
        "wide_gz",
        config(300, 1e9, 2),
        310,
        1200,
        0,
        RunStatus::Completed,
    );
}

#[test]
fn usage_errors_are_reported() {
    let _open = files_open();
    for backend in Backend::all() {
        // Unwritable path: an error naming the path, no panic.
        let bad = Path::new("/nonexistent-dir/flexmb/out.h5");
        let err = match backend {
            Backend::Rust => Hdf5Recorder::create(bad, OutputConfig::default()).err(),
            #[cfg(feature = "hdf5-c")]
            Backend::C => flexmb::output::Hdf5CRecorder::create(bad, OutputConfig::default()).err(),
        };
        let msg = err.expect("create must fail").to_string();
        assert!(msg.contains("/nonexistent-dir/flexmb/out.h5"), "{msg}");

        // Rows of the wrong length.
        let path = scratch_dir().join(format!("{}_bad_row.h5", backend.name()));
        let mut rec = backend.create(&path, OutputConfig::default());
        rec.begin(&run_info(4, 1)).expect("begin");
        let step = Step::new(0, 3, 1);
        let msg = rec
            .record(&step.record())
            .expect_err("short row")
            .to_string();
        assert!(msg.contains("/u"), "{msg}");
        rec.finish(&RunStatus::Completed, 0.0).expect("finish");
        assert!(rec.finish(&RunStatus::Completed, 0.0).is_err());
        let _ = std::fs::remove_file(&path);
    }
    assert!(read_hdf5_run("/nonexistent-dir/x.h5").is_err());
}

// ---------------------------------------------------------------------------
// Killed writer
// ---------------------------------------------------------------------------

const CHILD_ENV: &str = "FLEXMB_H5_WRITER_CHILD";

/// In the child: records steps forever, flushing every 20 ms.
fn child_writer(spec: &str) -> ! {
    let mut parts = spec.split('|');
    let (backend, path, compression) = (parts.next(), parts.next(), parts.next());
    let path = PathBuf::from(path.expect("path"));
    let compression: u8 = compression.and_then(|c| c.parse().ok()).unwrap_or(0);
    let backend = Backend::all()
        .into_iter()
        .find(|b| Some(b.name()) == backend)
        .expect("backend");
    let mut rec = backend.create(&path, config(16, 0.02, compression));
    rec.begin(&run_info(5, 2)).expect("begin");
    let start = Instant::now();
    for s in 0.. {
        let step = Step::new(s, 5, 2);
        rec.record(&step.record()).expect("record");
        if s % 50 == 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
        // The C backend promises a readable file when killed between
        // flushes (a kill inside H5Fflush may not be, docs/output-format.md):
        // it dies by abort() right after a record returned, no destructor,
        // atexit handler or library close running.
        if !backend.survives_any_kill() && start.elapsed() > kill_after() {
            std::process::abort();
        }
    }
    unreachable!()
}

/// How long the killed writer runs (`FLEXMB_H5_KILL_AFTER_MS`, default 1500 ms).
fn kill_after() -> Duration {
    let ms = std::env::var("FLEXMB_H5_KILL_AFTER_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    Duration::from_millis(ms)
}

fn kill_writer(backend: Backend, compression: u8) {
    let path = scratch_dir().join(format!("{}_killed_gz{compression}.h5", backend.name()));
    let _ = std::fs::remove_file(&path);
    let exe = std::env::current_exe().expect("current_exe");
    let forking = FILES_OPEN.write().unwrap_or_else(|e| e.into_inner());
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "killed_writer_leaves_readable_file",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(
            CHILD_ENV,
            format!("{}|{}|{compression}", backend.name(), path.display()),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn writer");
    drop(forking);
    if backend.survives_any_kill() {
        // Wait until a few flushes happened, then SIGKILL at a random point.
        let start = Instant::now();
        while start.elapsed() < kill_after() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("writer exited early: {status}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        child.kill().expect("kill writer");
    }
    let status = child.wait().expect("wait writer");
    assert!(!status.success(), "the writer must die, not finish");

    let run = backend.read(&path);
    let steps = run.len();
    assert!(steps >= 1, "no step survived the kill");
    assert_eq!(run.status, "running");
    assert!(run.t_end_reached.is_nan());
    // Every surviving step is exactly what was recorded.
    let mut mem = MemoryRecorder::default();
    mem.begin(&run_info(5, 2)).expect("begin");
    for s in 0..steps as u64 {
        mem.record(&Step::new(s, 5, 2).record()).expect("record");
    }
    let c = config(16, 0.02, compression);
    for v in [&run.u, &run.v, &run.a, &run.lambda] {
        assert_eq!(v.len(), steps);
    }
    assert_eq!(run.energy.len(), steps);
    assert_eq!(run.newton.len(), steps);
    assert_matches_memory(&run, &mem, &c);
    eprintln!(
        "{}: killed writer left {steps} readable steps",
        backend.name()
    );
    let expected = expected_json(&mem, &c, "running");
    if backend.survives_any_kill() {
        killed_inside_flush(&path, &run, &expected);
    }
    export(&path, Some(expected));
    let _ = std::fs::remove_file(&path);
}

/// The file as a kill inside a flush's superblock write leaves it: the
/// superblock still carrying rust-hdf5's SWMR consistency flags, which the
/// recorder clears right after the flush. `read_hdf5_run` reads it unchanged;
/// `scripts/h5check.py` checks that h5py opens it with `swmr=True` and
/// h5dump after `h5clear -s` (docs/output-format.md, "A killed run's file").
fn killed_inside_flush(killed: &Path, run: &Hdf5Run, expected: &Json) {
    use rust_hdf5::format::superblock::{SuperblockV2V3, FLAG_SWMR_WRITE, FLAG_WRITE_ACCESS};
    use std::io::{Read, Seek, SeekFrom, Write};
    let name = killed.file_name().expect("file name").to_string_lossy();
    let path = killed.with_file_name(name.replace("killed", "killed_in_flush"));
    std::fs::copy(killed, &path).expect("copy killed file");
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .expect("open copy");
    let mut buf = [0u8; 48];
    file.read_exact(&mut buf).expect("read superblock");
    let mut sb = SuperblockV2V3::decode(&buf).expect("a version-3 superblock");
    sb.file_consistency_flags = FLAG_WRITE_ACCESS | FLAG_SWMR_WRITE;
    file.seek(SeekFrom::Start(0)).expect("seek");
    file.write_all(&sb.encode()).expect("write superblock");
    drop(file);
    let flagged = read_hdf5_run(&path).expect("read_hdf5_run ignores the consistency flags");
    assert_eq!(flagged.len(), run.len());
    assert_eq!(flagged.u, run.u);
    assert_eq!(flagged.status, "running");
    export(&path, Some(expected.clone()));
    let _ = std::fs::remove_file(&path);
}

#[test]
fn killed_writer_leaves_readable_file() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        child_writer(&spec);
    }
    for backend in Backend::all() {
        kill_writer(backend, 0);
    }
    kill_writer(Backend::Rust, 3);
}

// ---------------------------------------------------------------------------
// Throughput (run with `cargo test --release -- --ignored --nocapture throughput`)
// ---------------------------------------------------------------------------

/// Records `steps` smooth steps of `n_dof` DOFs; returns MB/s of f64 payload.
fn throughput_of(backend: Backend, steps: u64, n_dof: usize, compression: u8) -> (f64, u64) {
    let path = scratch_dir().join(format!("{}_throughput_gz{compression}.h5", backend.name()));
    let n_mult = 10;
    let mut rec = backend.create(&path, config(256, 2.0, compression));
    rec.begin(&run_info(n_dof, n_mult)).expect("begin");
    let mut step = Step::new(0, n_dof, n_mult);
    let start = Instant::now();
    for s in 0..steps {
        let t = s as f64 * 1e-4;
        step.step = s;
        step.time = t;
        for (i, x) in step.u.iter_mut().enumerate() {
            *x = (t + i as f64 * 0.01).sin();
        }
        for (i, x) in step.v.iter_mut().enumerate() {
            *x = (t + i as f64 * 0.01).cos();
        }
        for (i, x) in step.a.iter_mut().enumerate() {
            *x = -(t + i as f64 * 0.01).sin();
        }
        rec.record(&step.record()).expect("record");
    }
    rec.finish(&RunStatus::Completed, steps as f64 * 1e-4)
        .expect("finish");
    let secs = start.elapsed().as_secs_f64();
    let bytes = steps as f64 * ((3 * n_dof + n_mult + 11) * 8 + 4) as f64;
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let run = read_hdf5_run(&path).expect("read");
    assert_eq!(run.len() as u64, steps);
    let _ = std::fs::remove_file(&path);
    (bytes / secs / 1e6, size)
}

#[test]
#[ignore]
fn throughput() {
    let _open = files_open();
    for backend in Backend::all() {
        for compression in [0, 4] {
            let (mbs, size) = throughput_of(backend, 10_000, 1_000, compression);
            eprintln!(
                "{:>4} backend, deflate {compression}: 10,000 steps x 1,000 dofs: {mbs:.0} MB/s, file {:.0} MB",
                backend.name(),
                size as f64 / 1e6
            );
        }
        let (mbs, size) = throughput_of(backend, 20, 1_000_000, 0);
        eprintln!(
            "{:>4} backend, deflate 0: 20 steps x 1,000,000 dofs: {mbs:.0} MB/s, file {:.0} MB",
            backend.name(),
            size as f64 / 1e6
        );
    }
}

// ---------------------------------------------------------------------------
// Mesh, points, bodies, joints and the XDMF side file
// ---------------------------------------------------------------------------

/// Values of an expected dataset.
enum Values {
    F64(Vec<f64>),
    I64(Vec<i64>),
    Str(Vec<String>),
}

/// The `/mesh`, `/points`, `/bodies` and `/joints` datasets a run recorded
/// into `mem` with `config` must have, from the layout in
/// docs/output-format.md: `(path, shape, values)`.
fn expected_mesh(mem: &MemoryRecorder, config: &OutputConfig) -> Vec<(String, Vec<usize>, Values)> {
    let mesh = &mem.info.mesh;
    let steps = mem.time.len();
    let mut out = Vec::new();
    if mesh.is_empty() {
        return out;
    }
    let np = mesh.points.len();
    let idx = |i: usize| i as i64;
    out.push((
        "mesh/nodes".into(),
        vec![np, 3],
        Values::F64(mesh.points.iter().flat_map(|p| p.reference).collect()),
    ));
    out.push((
        "mesh/point_names".into(),
        vec![np],
        Values::Str(mesh.points.iter().map(|p| p.name.clone()).collect()),
    ));
    out.push((
        "mesh/point_dofs".into(),
        vec![np, 3],
        Values::I64(
            mesh.points
                .iter()
                .flat_map(|p| p.dofs.map(|d| d.map_or(-1, idx)))
                .collect(),
        ),
    ));
    for c in &mesh.cells {
        let g = format!("mesh/{}", path_component(&c.kind));
        out.push((
            format!("{g}/connectivity"),
            vec![c.len(), c.points_per_cell],
            Values::I64(c.connectivity.iter().map(|&i| idx(i)).collect()),
        ));
        out.push((
            format!("{g}/names"),
            vec![c.len()],
            Values::Str(c.names.clone()),
        ));
    }
    if !mesh.bodies.is_empty() {
        let nb = mesh.bodies.len();
        out.push((
            "mesh/bodies/connectivity".into(),
            vec![nb, 1],
            Values::I64(mesh.bodies.iter().map(|b| idx(b.point)).collect()),
        ));
        out.push((
            "mesh/bodies/names".into(),
            vec![nb],
            Values::Str(mesh.bodies.iter().map(|b| b.name.clone()).collect()),
        ));
    }
    if config.has(Field::Points) {
        let mut v = Vec::new();
        for u in &mem.u {
            for p in &mesh.points {
                for a in 0..3 {
                    v.push(p.dofs[a].map_or(p.reference[a], |d| u[d]));
                }
            }
        }
        out.push(("points".into(), vec![steps, np, 3], Values::F64(v)));
    }
    if config.has(Field::Bodies) {
        for b in &mesh.bodies {
            let g = format!("bodies/{}", path_component(&b.name));
            let dofs: Vec<usize> = mesh.points[b.point].dofs[..mesh.dim]
                .iter()
                .map(|d| d.expect("body coordinate"))
                .collect();
            let pos = mem.u.iter().flat_map(|u| dofs.iter().map(|&d| u[d]));
            out.push((
                format!("{g}/position"),
                vec![steps, mesh.dim],
                Values::F64(pos.collect()),
            ));
            let rot = mem.u.iter().flat_map(|u| b.rotation.iter().map(|&d| u[d]));
            let (name, shape) = match b.rotation.len() {
                1 => ("angle", vec![steps]),
                k => ("orientation", vec![steps, k]),
            };
            out.push((format!("{g}/{name}"), shape, Values::F64(rot.collect())));
        }
    }
    if config.has(Field::Joints) {
        for j in &mesh.joints {
            let l = mem
                .lambda
                .iter()
                .flat_map(|l| l[j.first..j.first + j.rows].iter().copied());
            out.push((
                format!("joints/{}/lambda", path_component(&j.name)),
                vec![steps, j.rows],
                Values::F64(l.collect()),
            ));
        }
    }
    out
}

/// Every expected dataset is in the file with its shape and bits.
fn assert_mesh_datasets(src: &impl RunSource, mem: &MemoryRecorder, config: &OutputConfig) {
    let expected = expected_mesh(mem, config);
    assert!(!expected.is_empty());
    for (path, shape, values) in expected {
        assert!(src.has(&path), "/{path} missing");
        assert_eq!(src.shape(&path).unwrap(), shape, "/{path} shape");
        match values {
            Values::F64(v) => assert_eq!(bits(&src.f64s(&path).unwrap()), bits(&v), "/{path}"),
            Values::I64(v) => assert_eq!(src.i64s(&path).unwrap(), v, "/{path}"),
            Values::Str(v) => assert_eq!(src.strings(&path).unwrap(), v, "/{path}"),
        }
    }
}

/// The XDMF file beside `h5` parses as XML, has one spatial collection per
/// recorded step at the recorded times, and every HDF5 data item names a
/// dataset of that file with the dimensions it claims (hyperslabs: inside
/// the dataset, their count equal to their dimensions, step grid i's
/// starting at row i; topologies: their cell counts equal to their data
/// items').
fn assert_xdmf_consistent(h5: &Path, src: &impl RunSource, steps: usize) {
    let text = std::fs::read_to_string(h5.with_extension("xmf")).expect("xmf beside the h5 file");
    let doc = roxmltree::Document::parse(&text).expect("XDMF parses as XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "Xdmf");
    let dims = |n: roxmltree::Node| -> Vec<usize> {
        n.attribute("Dimensions")
            .expect("Dimensions")
            .split_whitespace()
            .map(|d| d.parse().expect("dimension"))
            .collect()
    };
    let h5_name = h5.file_name().unwrap().to_string_lossy().into_owned();
    let mut hdf_items = 0;
    for item in root.descendants().filter(|n| n.has_tag_name("DataItem")) {
        if item.attribute("Format") == Some("HDF") {
            let (file, ds) = item
                .text()
                .unwrap()
                .trim()
                .split_once(":/")
                .expect("file:/path");
            assert_eq!(file, h5_name);
            assert!(src.has(ds), "XDMF names /{ds}, not in the file");
            assert_eq!(src.shape(ds).unwrap(), dims(item), "/{ds} dimensions");
            hdf_items += 1;
        }
        if item.attribute("ItemType") == Some("HyperSlab") {
            let kids: Vec<_> = item.children().filter(|n| n.is_element()).collect();
            assert_eq!(kids.len(), 2);
            let sel: Vec<usize> = kids[0]
                .text()
                .unwrap()
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            let shape = dims(kids[1]);
            let r = shape.len();
            assert_eq!(dims(kids[0]), vec![3, r]);
            let (start, stride, count) = (&sel[..r], &sel[r..2 * r], &sel[2 * r..]);
            assert_eq!(
                count,
                dims(item).as_slice(),
                "hyperslab count = its dimensions"
            );
            for a in 0..r {
                assert!(
                    start[a] + stride[a] * (count[a] - 1) < shape[a],
                    "hyperslab inside"
                );
            }
        }
    }
    assert!(hdf_items > 0);
    for topo in root.descendants().filter(|n| n.has_tag_name("Topology")) {
        let item = topo.children().find(|n| n.is_element()).unwrap();
        let n: usize = topo.attribute("NumberOfElements").unwrap().parse().unwrap();
        let k: usize = topo.attribute("NodesPerElement").unwrap().parse().unwrap();
        assert_eq!(dims(item), vec![n, k]);
    }
    let temporal = root
        .descendants()
        .find(|n| n.attribute("CollectionType") == Some("Temporal"))
        .expect("temporal collection");
    let mut times = Vec::new();
    for (i, g) in temporal
        .children()
        .filter(|n| n.has_tag_name("Grid"))
        .enumerate()
    {
        let t = g.children().find(|n| n.has_tag_name("Time")).expect("Time");
        times.push(t.attribute("Value").unwrap().parse::<f64>().unwrap());
        // Every geometry of step grid i is row i of /points.
        let slabs = g
            .descendants()
            .filter(|n| n.attribute("ItemType") == Some("HyperSlab"));
        let mut n = 0;
        for slab in slabs {
            let sel = slab.children().find(|n| n.is_element()).unwrap();
            let start: Vec<&str> = sel.text().unwrap().split_whitespace().take(3).collect();
            assert_eq!(start, [i.to_string().as_str(), "0", "0"]);
            n += 1;
        }
        assert!(n > 0, "step grid {i} has a geometry");
    }
    assert_eq!(times.len(), steps);
    assert_eq!(bits(&times), bits(&src.f64s("time").unwrap_or_default()));
}

fn truss_model() -> flexmb::model::Model {
    use flexmb::model::{ModelBuilder, PointRef, TrussSection};
    let mut b = ModelBuilder::new(3).unwrap();
    b.node("a", &[0.0, 0.0, 0.0], None, 1.0).unwrap();
    b.node("b", &[1.0, 0.0, 0.0], None, 1.0).unwrap();
    b.node("c/d", &[2.0, 0.0, 0.5], Some(&[0.0, 0.3, 0.0]), 1.0)
        .unwrap();
    b.truss("ab", "a", "b", &TrussSection::massless(1e4), None)
        .unwrap();
    b.truss("bc", "b", "c/d", &TrussSection::massless(1e4), None)
        .unwrap();
    b.ground_pin("fix", &PointRef::Entity("a".into()), &[0.0, 0.0, 0.0])
        .unwrap();
    b.gravity(&[0.0, 0.0, -9.81]).unwrap();
    b.build().unwrap()
}

fn double_pendulum() -> (flexmb::model::Model, String) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/models/double_pendulum.toml");
    let file = flexmb::input::load_model_file(path).unwrap();
    (file.model, std::fs::read_to_string(path).unwrap())
}

/// Runs `model` 20 steps into `backend` and into memory.
fn run_model(
    backend: Backend,
    name: &str,
    model: flexmb::model::Model,
    text: &str,
    config: &OutputConfig,
) -> (PathBuf, MemoryRecorder) {
    let spec = flexmb::integrate::IntegratorSpec {
        scheme: Some("generalized-alpha(0.8)".into()),
        dt: Some(1e-3),
        t_end: Some(0.02),
        ..Default::default()
    };
    let ic = spec.resolve().unwrap();
    let sim = flexmb::run::Simulation::new(model);
    let path = scratch_dir().join(format!("{}_{name}.h5", backend.name()));
    let mut rec = backend.create(&path, config.clone());
    let s = sim
        .run(&ic, text, config, rec.as_mut(), &mut |_| {})
        .unwrap();
    assert!(s.failure.is_none());
    drop(rec);
    let mut mem = MemoryRecorder::default();
    sim.run(&ic, text, config, &mut mem, &mut |_| {}).unwrap();
    // The file holds the totals of its own run (wall time differs between runs).
    let totals = mem.totals.expect("the run gives its totals");
    assert_eq!(
        (totals.steps, totals.newton_iterations),
        (s.steps, s.newton_iterations)
    );
    mem.totals = Some(flexmb::output::RunTotals {
        wall_seconds: s.wall_seconds,
        ..totals
    });
    (path, mem)
}

/// Checks a model run's file in every backend: the run itself, the mesh
/// datasets, the XDMF file; returns the mesh for model-specific checks.
fn check_model_run(name: &str, model: fn() -> (flexmb::model::Model, String)) -> Mesh {
    let _open = files_open();
    let config = config(8, 0.0, 0);
    let mut mesh = None;
    for backend in Backend::all() {
        let (m, text) = model();
        let (path, mem) = run_model(backend, name, m, &text, &config);
        assert_eq!(mem.time.len(), 21);
        let run = backend.read(&path);
        assert_matches_memory(&run, &mem, &config);
        let src = Hdf5Reader::open(&path).unwrap();
        assert_mesh_datasets(&src, &mem, &config);
        assert_xdmf_consistent(&path, &src, mem.time.len());
        #[cfg(feature = "hdf5-c")]
        if let Backend::C = backend {
            let c = flexmb::output::Hdf5CReader::open(&path).unwrap();
            assert_mesh_datasets(&c, &mem, &config);
            assert_xdmf_consistent(&path, &c, mem.time.len());
        }
        export(&path, Some(expected_json(&mem, &config, "completed")));
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(path.with_extension("xmf"));
        mesh = Some(mem.info.mesh.clone());
    }
    mesh.unwrap()
}

#[test]
fn truss_model_mesh_points_and_xdmf() {
    let mesh = check_model_run("mesh_truss", || (truss_model(), String::new()));
    // The model as written above: 3-D nodes, two trusses, the pin to the
    // ground draws nothing (one point), no bodies.
    assert_eq!(mesh.dim, 3);
    let names: Vec<&str> = mesh.points.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c/d"]);
    let refs: Vec<[f64; 3]> = mesh.points.iter().map(|p| p.reference).collect();
    assert_eq!(refs, [[0.0; 3], [1.0, 0.0, 0.0], [2.0, 0.0, 0.5]]);
    let dofs: Vec<[Option<usize>; 3]> = mesh.points.iter().map(|p| p.dofs).collect();
    assert_eq!(
        dofs,
        [
            [Some(0), Some(1), Some(2)],
            [Some(3), Some(4), Some(5)],
            [Some(6), Some(7), Some(8)]
        ]
    );
    assert_eq!(mesh.cells.len(), 1);
    assert_eq!(mesh.cells[0].kind, "truss");
    assert_eq!(mesh.cells[0].names, ["ab", "bc"]);
    assert_eq!(mesh.cells[0].connectivity, [0, 1, 1, 2]);
    assert!(mesh.bodies.is_empty());
    assert_eq!(mesh.joints.len(), 1);
    assert_eq!((mesh.joints[0].first, mesh.joints[0].rows), (0, 3));
}

#[test]
fn double_pendulum_mesh_bodies_joints_and_xdmf() {
    let mesh = check_model_run("mesh_double_pendulum", double_pendulum);
    // models/double_pendulum.toml: two planar bodies (x, y, theta each),
    // a ground pin on pendulum1 (not drawn) and a hinge between the bodies.
    assert_eq!(mesh.dim, 2);
    let names: Vec<&str> = mesh.points.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["pendulum1", "pendulum2"]);
    let refs: Vec<[f64; 3]> = mesh.points.iter().map(|p| p.reference).collect();
    assert_eq!(refs, [[1.0, 0.0, 0.0], [1.0, -1.0, 0.0]]);
    let dofs: Vec<[Option<usize>; 3]> = mesh.points.iter().map(|p| p.dofs).collect();
    assert_eq!(dofs, [[Some(0), Some(1), None], [Some(3), Some(4), None]]);
    let bodies: Vec<(&str, usize, &[usize])> = mesh
        .bodies
        .iter()
        .map(|b| (b.name.as_str(), b.point, &b.rotation[..]))
        .collect();
    assert_eq!(
        bodies,
        [("pendulum1", 0, &[2][..]), ("pendulum2", 1, &[5][..])]
    );
    assert_eq!(mesh.cells.len(), 1);
    assert_eq!(mesh.cells[0].kind, "revolute");
    assert_eq!(mesh.cells[0].names, ["hinge"]);
    assert_eq!(mesh.cells[0].connectivity, [0, 1]);
    let joints: Vec<(&str, usize, usize)> = mesh
        .joints
        .iter()
        .map(|j| (j.name.as_str(), j.first, j.rows))
        .collect();
    assert_eq!(joints, [("pin", 0, 2), ("hinge", 2, 2)]);
}

/// A failed run still gets its XDMF file, for the steps it recorded; with
/// `points` off there is none (XDMF cannot gather coordinates from `/u`),
/// not even a stale one of an earlier run.
#[test]
fn xdmf_of_failed_run_and_points_off() {
    let _open = files_open();
    let model = truss_model();
    let mesh = Mesh::from_model(&model);
    let info = RunInfo {
        dof_names: model.dofs.names().to_vec(),
        multiplier_names: model.multiplier_names(),
        mesh,
        ..run_info(0, 0)
    };
    for backend in Backend::all() {
        for points in [true, false] {
            let mut c = config(4, 0.0, 0);
            if !points {
                c.fields.retain(|f| *f != Field::Points);
            }
            let path = scratch_dir().join(format!("{}_mesh_failed_{points}.h5", backend.name()));
            // A side file of an earlier run into the same name must go.
            std::fs::write(path.with_extension("xmf"), "stale").unwrap();
            let failed = RunStatus::Failed {
                reason: "Newton did not converge".into(),
            };
            let mem = record_run(backend, &path, &c, &info, 7, &failed);
            let src = Hdf5Reader::open(&path).unwrap();
            assert_mesh_datasets(&src, &mem, &c);
            assert_eq!(path.with_extension("xmf").exists(), points);
            if points {
                assert_xdmf_consistent(&path, &src, 7);
            } else {
                assert!(!src.has("points"));
            }
            export(&path, Some(expected_json(&mem, &c, "failed")));
            let _ = std::fs::remove_file(&path);
            let _ = std::fs::remove_file(path.with_extension("xmf"));
        }
    }
}

#[test]
fn names_become_single_path_components() {
    assert_eq!(path_component("crank"), "crank");
    assert_eq!(path_component("c/d"), "c%2Fd");
    assert_eq!(path_component("50%/x"), "50%25%2Fx");
    assert_eq!(path_component(".."), "%2E%2E");
    assert_eq!(path_component("a.b"), "a.b");
}

/// A mesh wider than one chunk: `/points` is split into column tiles of
/// whole points (400 points, chunk rows 256: at most 170 points per 1 MiB
/// chunk, so 3 tiles of 134 points), written
/// and read back bit-exactly, with a partial last band.
#[test]
fn wide_mesh_tiles_points() {
    let _open = files_open();
    let model = flexmb::model::hanging_truss_chain(400).unwrap();
    let info = RunInfo {
        dof_names: model.dofs.names().to_vec(),
        multiplier_names: model.multiplier_names(),
        mesh: Mesh::from_model(&model),
        ..run_info(0, 0)
    };
    assert_eq!(info.mesh.points.len(), 400);
    // Flushed at finish only: per-step fsyncs make this slow on a busy disk.
    let c = config(256, 3600.0, 0);
    for backend in Backend::all() {
        let path = scratch_dir().join(format!("{}_mesh_wide.h5", backend.name()));
        let mem = record_run(backend, &path, &c, &info, 300, &RunStatus::Completed);
        let src = Hdf5Reader::open(&path).unwrap();
        assert_mesh_datasets(&src, &mem, &c);
        assert_xdmf_consistent(&path, &src, 300);
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(path.with_extension("xmf"));
    }
}

/// libhdf5 reads the Rust backend's file at every moment between two
/// records (between flushes, and between a flush and the bands that complete
/// what it wrote partial), not only after a flush; the moments inside a
/// flush are `flush_window_tests` in `src/output/hdf5/rust_backend/`. The file is
/// copied after every record, with flushes every fifth record, and every
/// numeric dataset of every copy read by libhdf5.
#[cfg(feature = "hdf5-c")]
#[test]
fn rust_file_readable_by_libhdf5_between_any_two_records() {
    let _open = files_open();
    for compression in [0u8, 3] {
        let path = scratch_dir().join(format!("between_records_gz{compression}.h5"));
        let copy = path.with_extension("copy.h5");
        let flush = Duration::from_millis(40);
        let mut rec = Backend::Rust.create(&path, config(16, flush.as_secs_f64(), compression));
        rec.begin(&run_info(5, 2)).expect("begin");
        let mut mem = MemoryRecorder::default();
        mem.begin(&run_info(5, 2)).expect("begin");
        for s in 0..200u64 {
            let step = Step::new(s, 5, 2);
            rec.record(&step.record()).expect("record");
            mem.record(&step.record()).expect("record");
            if s % 5 == 3 {
                std::thread::sleep(flush + Duration::from_millis(5));
            }
            std::fs::copy(&path, &copy).expect("copy");
            // Numeric datasets only: libhdf5 < 2.0 cannot convert the
            // variable-length strings rust-hdf5 writes (docs/output-format.md).
            let c = flexmb::output::Hdf5CReader::open(&copy)
                .unwrap_or_else(|e| panic!("gz{compression}, after record {s}: {e}"));
            let read = |ds: &str| {
                c.f64s(ds)
                    .unwrap_or_else(|e| panic!("gz{compression}, after record {s}: {e}"))
            };
            let datasets = read_numeric_with_libhdf5(&copy)
                .unwrap_or_else(|e| panic!("gz{compression}, after record {s}: {e}"));
            assert!(datasets >= 10, "{datasets} datasets");
            let time = read("time");
            let rows = time.len();
            assert!(rows as u64 <= s + 1);
            assert_eq!(time[..], mem.time[..rows], "after record {s}");
            for (ds, want) in [
                ("u", &mem.u),
                ("v", &mem.v),
                ("a", &mem.a),
                ("lambda", &mem.lambda),
            ] {
                assert_eq!(read(ds), want[..rows].concat(), "/{ds} after record {s}");
            }
        }
        rec.finish(&RunStatus::Completed, 1.0).expect("finish");
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(&copy);
    }
}

/// Reads every numeric dataset of a file through libhdf5 (strings are left
/// out, see above); returns how many it read.
#[cfg(feature = "hdf5-c")]
fn read_numeric_with_libhdf5(path: &Path) -> hdf5::Result<usize> {
    fn walk(group: &hdf5::Group, read: &mut usize) -> hdf5::Result<()> {
        use hdf5::types::TypeDescriptor;
        for ds in group.datasets()? {
            match ds.dtype()?.to_descriptor()? {
                TypeDescriptor::Float(_) => drop(ds.read_raw::<f64>()?),
                TypeDescriptor::Integer(_) => drop(ds.read_raw::<i64>()?),
                TypeDescriptor::Unsigned(_) => drop(ds.read_raw::<u64>()?),
                _ => continue,
            }
            *read += 1;
        }
        for sub in group.groups()? {
            walk(&sub, read)?;
        }
        Ok(())
    }
    let file = hdf5::File::open(path)?;
    let mut read = 0;
    walk(&file, &mut read)?;
    Ok(read)
}
