//! The output-size estimate (`SizeEstimate`, `Simulation::output_estimate`)
//! against the files runs really write: the recorded row count exactly for
//! fixed steps recorded every k steps, a bound for `dt_out`, and the bytes of
//! the HDF5 file plus its XDMF side file within [0.75, 1] of the estimate
//! (within 128 KiB for a small file): an upper estimate without compression;
//! compressed files are smaller.

use std::path::{Path, PathBuf};

use flexmb::input::{load_model_with_sets, ModelFile};
use flexmb::integrate::IntegratorSpec;
use flexmb::output::{xdmf_path, MemoryRecorder, OutputInterval, SizeError, SizeEstimate};
use flexmb::run::{recorded_rows, Simulation};

fn load(name: &str, sets: &[&str]) -> ModelFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).unwrap();
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    load_model_with_sets(&text, name, &sets).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("output_size");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Bytes of the file at `p` (0 when missing).
fn size(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

/// Runs `file` into `name.h5`; returns (estimate, written bytes, recorded rows).
fn run(file: ModelFile, name: &str) -> (SizeEstimate, u64, u64) {
    let config = file.integrator(&IntegratorSpec::default()).unwrap();
    let sim = Simulation::new(file.model);
    let estimate = sim.output_estimate(&config, &file.output, &file.text);
    let path = scratch(&format!("{name}.h5"));
    let s = sim
        .run_to_file(&config, &file.text, &file.output, Some(&path), &mut |_| {})
        .unwrap();
    assert!(s.failure.is_none(), "{name}: {}", s.line());
    let rows = flexmb::output::read_hdf5_run(&path).unwrap().time.len() as u64;
    let bytes = size(&path) + xdmf_path(&path).map_or(0, |x| size(&x));
    (estimate, bytes, rows)
}

#[test]
fn estimate_bounds_the_files_written() {
    let cases: [(&str, &str, &[&str]); 6] = [
        ("dp_every_step", "double_pendulum", &["integrator.t_end=10"]),
        (
            "dp_every_10_u_only",
            "double_pendulum",
            &[
                "integrator.t_end=30",
                "output.every=10",
                "output.fields=[\"u\"]",
            ],
        ),
        ("cantilever", "cantilever", &["integrator.t_end=0.2"]),
        (
            "hanging_beam_500",
            "hanging_beam",
            &["generator.elements=500", "integrator.t_end=0.01"],
        ),
        ("slider_crank_flexible", "slider_crank_flexible", &[]),
        (
            "andrews_dt_out",
            "andrews",
            &["integrator.t_end=0.003", "output.dt_out=1e-4"],
        ),
    ];
    for (name, model, sets) in cases {
        let file = load(model, sets);
        let interval = file.output.interval;
        let (estimate, bytes, rows) = run(file, name);
        let ratio = bytes as f64 / estimate.bytes;
        println!(
            "{name}: {rows} rows, estimate {} rows {:.4e} bytes, written {bytes} bytes, ratio {ratio:.3}",
            estimate.rows, estimate.bytes
        );
        // Never below the written size; above it by at most a quarter, or
        // by the fixed metadata allowance (64 KiB) and a chunk band of each
        // dataset for a small file.
        assert!(ratio <= 1.0, "{name}: ratio {ratio}");
        assert!(
            ratio >= 0.75 || estimate.bytes - (bytes as f64) < 128.0 * 1024.0,
            "{name}: ratio {ratio}"
        );
        match interval {
            OutputInterval::Steps(_) => assert_eq!(estimate.rows, rows, "{name}"),
            OutputInterval::Time(_) => {
                assert!((rows..=rows + 1).contains(&estimate.rows), "{name}")
            }
        }
    }
    // Compressed: smaller than the estimate.
    let file = load(
        "double_pendulum",
        &["integrator.t_end=10", "output.compression=6"],
    );
    let (estimate, bytes, _) = run(file, "dp_compressed");
    assert!((bytes as f64) < estimate.bytes, "{bytes} vs {estimate:?}");
}

/// Rows recorded every k steps, exactly: the initial state, every k-th step
/// and the last one.
#[test]
fn recorded_rows_every_k_steps() {
    for (steps, k) in [(100, 1), (100, 3), (100, 7), (99, 33), (5, 10)] {
        let file = load(
            "pendulum",
            &[&format!("output.every={k}"), "integrator.t_end=1"],
        );
        let mut config = file.integrator(&IntegratorSpec::default()).unwrap();
        config.t_end = config.dt * steps as f64;
        let sim = Simulation::new(file.model);
        let mut rec = MemoryRecorder::default();
        sim.run(&config, "", &file.output, &mut rec, &mut |_| {})
            .unwrap();
        assert_eq!(
            recorded_rows(&config, file.output.interval),
            rec.time.len() as u64,
            "{steps} steps every {k}"
        );
    }
}

#[test]
fn limit_and_free_space_refusals_name_the_estimate() {
    let file = load("double_pendulum", &["integrator.t_end=10"]);
    let config = file.integrator(&IntegratorSpec::default()).unwrap();
    let sim = Simulation::new(file.model);
    let estimate = sim.output_estimate(&config, &file.output, &file.text);
    let path = scratch("never_written.h5");
    assert!(estimate.check(&path, 1e10).is_ok());
    let err = estimate.check(&path, 1e5).unwrap_err();
    assert!(matches!(err, SizeError::Limit { .. }));
    let m = err.to_string();
    for word in ["1001 recorded rows", "limit of 1.000e5 bytes", "--force"] {
        assert!(m.contains(word), "missing '{word}': {m}");
    }
    // 1e9 steps: the estimate is computed, nothing is allocated for it.
    let mut long = config.clone();
    long.t_end = 1e7;
    let e = sim.output_estimate(&long, &file.output, &file.text);
    assert_eq!(e.rows, 1_000_000_001);
    assert!(e.bytes > 1e11 && e.bytes > 400.0 * e.rows as f64, "{e:?}");
    let m = e.check(&path, 1e10).unwrap_err().to_string();
    assert!(m.contains("1000000001 recorded rows"), "{m}");
}

/// An adaptive method's rows are an upper bound (its `max_steps`): the
/// refusal says so and names the keys that bound it.
#[test]
fn adaptive_estimate_is_a_bound_named_in_the_refusal() {
    let file = load(
        "andrews",
        &["integrator.method=\"dopri5\"", "integrator.max_steps=5000"],
    );
    let config = file.integrator(&IntegratorSpec::default()).unwrap();
    let e = Simulation::new(file.model).output_estimate(&config, &file.output, &file.text);
    assert_eq!(e.max_steps, Some(5000));
    let m = e
        .check(&scratch("never_written_adaptive.h5"), 1e5)
        .unwrap_err()
        .to_string();
    for word in [
        "up to max_steps = 5000 steps",
        "[integrator] max_steps",
        "dt_out",
    ] {
        assert!(m.contains(word), "missing '{word}': {m}");
    }
    let fixed = load("double_pendulum", &[]);
    let config = fixed.integrator(&IntegratorSpec::default()).unwrap();
    let e = Simulation::new(fixed.model).output_estimate(&config, &fixed.output, &fixed.text);
    assert_eq!(e.max_steps, None);
}

/// The XDMF side file (`[output] xdmf`): by default written for a model with
/// elements (the cantilever's beams) and not for rigid bodies and joints only
/// (the double pendulum); `xdmf = true` / `false` overrides both ways, and the
/// estimate counts the side file only when it is written.
#[test]
fn xdmf_only_for_models_with_elements_or_when_asked() {
    let cases: [(&str, &str, &[&str], bool); 4] = [
        (
            "xdmf_dp_default",
            "double_pendulum",
            &["integrator.t_end=0.5"],
            false,
        ),
        (
            "xdmf_dp_asked",
            "double_pendulum",
            &["integrator.t_end=0.5", "output.xdmf=true"],
            true,
        ),
        (
            "xdmf_cantilever_default",
            "cantilever",
            &["integrator.t_end=0.02"],
            true,
        ),
        (
            "xdmf_cantilever_off",
            "cantilever",
            &["integrator.t_end=0.02", "output.xdmf=false"],
            false,
        ),
    ];
    for (name, model, sets, written) in cases {
        let path = scratch(&format!("{name}.h5"));
        let xmf = xdmf_path(&path).unwrap();
        // A side file of an earlier run into the same name must not survive.
        std::fs::write(&xmf, "stale").unwrap();
        let (estimate, bytes, _) = run(load(model, sets), name);
        assert_eq!(xmf.exists(), written, "{name}");
        let h5 = size(&path) as f64;
        if written {
            assert!(bytes as f64 > h5, "{name}");
        } else {
            assert!(
                estimate.bytes < h5 + 256.0 * 1024.0,
                "{name}: {estimate:?} vs {h5}"
            );
        }
    }
}
