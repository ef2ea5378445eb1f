//! Probes (`[[probe]]`): each kind's history equals the quantity recomputed
//! from the recorded state, the summaries equal the histories' extremes, the
//! slider-crank generator's `midpoint_deflection` probe, and bad probe input.

mod common;

use common::scratch::temp_dir;
use common::{model_path, shipped_with};
use flexmb::input::{apply_sets, load_model_str};
use flexmb::output::{
    AttrValue, Hdf5Reader, Hdf5Recorder, MemoryRecorder, OutputConfig, Recorder, RunSource,
};
use flexmb::run::{RunSummary, Simulation};

const PROBES: &str = r#"
[[probe]]
name = "x2"
type = "coordinate"
dof = "pendulum2.x"

[[probe]]
name = "dy2"
type = "displacement"
dof = "pendulum2.y"

[[probe]]
name = "w1"
type = "velocity"
dof = "pendulum1.theta"

[[probe]]
name = "reach"
type = "distance"
a = { ground = [0.0, 0.0] }
b = { body = "pendulum2", offset = [0.0, 0.0] }

[[probe]]
name = "bend"
type = "deflection"
point = "pendulum1"
chord = [{ ground = [0.0, 0.0] }, "pendulum2"]

[[probe]]
name = "hinge_y"
type = "multiplier"
joint = "hinge"
row = 1

[[probe]]
name = "kinetic"
type = "energy"
term = "kinetic"

[[probe]]
name = "phi"
type = "constraint"
level = "position"
"#;

fn double_pendulum_with(extra: &str) -> Result<(RunSummary, MemoryRecorder, Vec<String>), String> {
    let text = std::fs::read_to_string(model_path("double_pendulum")).unwrap() + extra;
    let text = apply_sets(&text, &["integrator.t_end=2.0".to_string()]).unwrap();
    let file = load_model_str(&text, "dp.toml").map_err(|e| e.to_string())?;
    let config = file.integrator(&Default::default()).unwrap();
    let sim = Simulation::new(file.model);
    let names = sim.model.multiplier_names();
    let mut rec = MemoryRecorder::default();
    let s = sim
        .run(&config, &text, &file.output, &mut rec, &mut |_| {})
        .unwrap();
    Ok((s, rec, names))
}

#[test]
fn probe_histories_and_summaries() {
    let (s, rec, lambda_names) = double_pendulum_with(PROBES).unwrap();
    assert!(s.failure.is_none());
    let names: Vec<&str> = s.probes.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(
        names,
        ["x2", "dy2", "w1", "reach", "bend", "hinge_y", "kinetic", "phi"]
    );
    let row = lambda_names.iter().position(|n| n == "hinge[1]").unwrap();
    // DOFs: pendulum1 (x, y, theta), pendulum2 (x, y, theta).
    let mut worst: f64 = 0.0;
    for k in 0..rec.u.len() {
        let (u, v) = (&rec.u[k], &rec.v[k]);
        let tip = [u[3], u[4]]; // pendulum2's mass
        let (ex, ey) = (u[3], u[4]);
        let len = ex.hypot(ey);
        let expected = [
            u[3],
            u[4] - rec.u[0][4],
            v[2],
            tip[0].hypot(tip[1]),
            (ex * u[1] - ey * u[0]) / len,
            rec.lambda[k][row],
            rec.energy[k].kinetic,
            rec.constraints[k].position,
        ];
        for (got, want) in rec.probes[k].iter().zip(expected) {
            worst = worst.max((got - want).abs());
        }
    }
    assert!(worst < 1e-13, "probe values differ by {worst:.2e}");
    for (i, (name, sum)) in s.probes.iter().enumerate() {
        let h: Vec<f64> = rec.probes.iter().map(|p| p[i]).collect();
        let min = h.iter().copied().fold(f64::INFINITY, f64::min);
        let max = h.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (k, max_abs) =
            h.iter().enumerate().fold(
                (0, -1.0),
                |b, (k, x)| if x.abs() > b.1 { (k, x.abs()) } else { b },
            );
        assert_eq!(
            (sum.min, sum.max, sum.max_abs),
            (min, max, max_abs),
            "{name}"
        );
        assert_eq!(sum.t_max_abs, rec.time[k], "{name}");
        assert_eq!(sum.last, *h.last().unwrap(), "{name}");
    }
    // The second mass is within two bar lengths of the pivot.
    let reach = &s.probes[3].1;
    assert!(reach.max <= 2.0 + 1e-9 && reach.min >= 0.0);
}

#[test]
fn slider_crank_generator_probe() {
    let sets = ["integrator.t_end=0.005", "output.every=1"];
    let file = shipped_with("slider_crank_flexible", &sets);
    let config = file.integrator(&Default::default()).unwrap();
    let sim = Simulation::new(file.model);
    let names = sim.model.dofs.names().to_vec();
    let col = |id: &str| names.iter().position(|s| *s == format!("{id}.x")).unwrap();
    let (c0, cm, cn) = (col("rod0"), col("rod4"), col("rod8"));
    let mut rec = MemoryRecorder::default();
    let s = sim
        .run(&config, &file.text, &file.output, &mut rec, &mut |_| {})
        .unwrap();
    assert_eq!(s.probes[0].0, "midpoint_deflection");
    for (u, p) in rec.u.iter().zip(&rec.probes) {
        let (x0, y0) = (u[c0], u[c0 + 1]);
        let (ex, ey) = (u[cn] - x0, u[cn + 1] - y0);
        let d = (ex * (u[cm + 1] - y0) - ey * (u[cm] - x0)) / ex.hypot(ey);
        assert!((p[0] - d).abs() <= 1e-15, "{} vs {d}", p[0]);
    }
    assert!(s.probes[0].1.max_abs > 0.0);
}

#[test]
fn bad_probes_are_reported() {
    let cases = [
        ("[[probe]]\nname = \"p\"\ntype = \"coordinate\"\ndof = \"nope.x\"\n", "no coordinate named 'nope.x'"),
        ("[[probe]]\nname = \"p\"\ntype = \"multiplier\"\njoint = \"nope\"\n", "joint 'nope' is not defined"),
        ("[[probe]]\nname = \"p\"\ntype = \"multiplier\"\njoint = \"pin\"\nrow = 2\n", "has 2 rows"),
        ("[[probe]]\nname = \"a/b\"\ntype = \"energy\"\nterm = \"total\"\n", "probe name"),
        ("[[probe]]\nname = \"p\"\ntype = \"energy\"\nterm = \"heat\"\n", "unknown energy term 'heat'"),
        ("[[probe]]\nname = \"p\"\ntype = \"constraint\"\nlevel = \"jerk\"\n", "unknown level 'jerk'"),
        (
            "[[probe]]\nname = \"p\"\ntype = \"energy\"\nterm = \"total\"\n[[probe]]\nname = \"p\"\ntype = \"energy\"\nterm = \"kinetic\"\n",
            "already used",
        ),
        ("[[probe]]\nname = \"p\"\ntype = \"distance\"\na = \"pendulum1\"\nb = \"ghost\"\n", "'ghost' is not defined"),
    ];
    for (extra, needle) in cases {
        let e = double_pendulum_with(extra).expect_err("rejected");
        assert!(e.contains(needle), "{extra}: {e}");
        assert!(e.contains("dp.toml:"), "names the file and line: {e}");
    }
}

/// Runs the probed double pendulum into an HDF5 file and checks `/probes/*`
/// and the `probe.<name>.<stat>` root attributes against the in-memory run.
fn check_hdf5_probes(src: &impl RunSource, s: &RunSummary, rec: &MemoryRecorder) {
    let attrs = src.root_attrs().unwrap();
    for (i, (name, sum)) in s.probes.iter().enumerate() {
        let h = src.f64s(&format!("probes/{name}")).unwrap();
        let want: Vec<f64> = rec.probes.iter().map(|p| p[i]).collect();
        assert_eq!(h.len(), want.len(), "{name}");
        assert!(
            h.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()),
            "{name}"
        );
        for (stat, x) in sum.fields() {
            let key = format!("probe.{name}.{stat}");
            let got = attrs
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.clone());
            assert_eq!(got, Some(AttrValue::F64(x)), "{key}");
        }
    }
}

fn hdf5_run(rec_for: impl FnOnce(&std::path::Path) -> Box<dyn Recorder>, tag: &str) {
    let text = std::fs::read_to_string(model_path("double_pendulum")).unwrap() + PROBES;
    let text = apply_sets(&text, &["integrator.t_end=1.0".to_string()]).unwrap();
    let file = load_model_str(&text, "dp.toml").unwrap();
    let config = file.integrator(&Default::default()).unwrap();
    let sim = Simulation::new(file.model);
    let dir = temp_dir(&format!("probes-{tag}"));
    let path = dir.join("dp.h5");
    let mut mem = MemoryRecorder::default();
    let s = sim
        .run(&config, &text, &file.output, &mut mem, &mut |_| {})
        .unwrap();
    let mut h5 = rec_for(&path);
    let s2 = sim
        .run(&config, &text, &file.output, h5.as_mut(), &mut |_| {})
        .unwrap();
    drop(h5);
    assert_eq!(s.probes, s2.probes);
    match tag {
        "c" => check_c(&path, &s, &mem),
        _ => check_hdf5_probes(&Hdf5Reader::open(&path).unwrap(), &s, &mem),
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[cfg(feature = "hdf5-c")]
fn check_c(path: &std::path::Path, s: &RunSummary, mem: &MemoryRecorder) {
    check_hdf5_probes(&flexmb::output::Hdf5CReader::open(path).unwrap(), s, mem);
}

#[cfg(not(feature = "hdf5-c"))]
fn check_c(_: &std::path::Path, _: &RunSummary, _: &MemoryRecorder) {
    unreachable!("the C backend is behind the hdf5-c feature")
}

#[test]
fn probes_in_hdf5() {
    hdf5_run(
        |p| Box::new(Hdf5Recorder::create(p, OutputConfig::default()).unwrap()),
        "rust",
    );
    #[cfg(feature = "hdf5-c")]
    hdf5_run(
        |p| Box::new(flexmb::output::Hdf5CRecorder::create(p, OutputConfig::default()).unwrap()),
        "c",
    );
}
