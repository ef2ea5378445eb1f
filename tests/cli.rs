//! End to end through the `flexmb` binary: runs, exit codes, the HDF5 file
//! read back, and clear errors for bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::max_constraint;
use common::scratch::{output_text as text, scratch_file, write_scratch};
use flexmb::output::read_hdf5_run;

fn flexmb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flexmb"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("flexmb runs")
}

fn scratch(name: &str) -> PathBuf {
    scratch_file("cli", name)
}

/// Writes `body` as a model file and returns its path.
fn model_file(name: &str, body: &str) -> PathBuf {
    write_scratch("cli", name, body)
}

#[test]
fn midpoint_runs_100_s_and_the_file_reads_back() {
    let out = scratch("dp_midpoint.h5");
    let o = flexmb(&[
        "run",
        "models/double_pendulum.toml",
        "--scheme",
        "midpoint",
        "--option",
        "2",
        "--t-end",
        "100",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("completed | steps 10000"),
        "{}",
        text(&o)
    );
    let run = read_hdf5_run(&out).unwrap();
    assert_eq!(run.status, "completed");
    assert_eq!(run.len(), 10001);
    assert_eq!(run.t_end_reached, 100.0);
    let e0 = run.energy[0].total;
    let drift = run
        .energy
        .iter()
        .map(|e| ((e.total - e0) / e0).abs())
        .fold(0.0, f64::max);
    assert!(drift < 1e-10, "relative energy change {drift:.2e}");
    let its: Vec<f64> = run.newton[1..]
        .iter()
        .map(|n| n.iterations as f64)
        .collect();
    let mean = its.iter().sum::<f64>() / its.len() as f64;
    assert!((2.5..=3.5).contains(&mean), "{mean} iterations per step");
    assert_eq!(
        run.dof_names,
        [
            "pendulum1.x",
            "pendulum1.y",
            "pendulum1.theta",
            "pendulum2.x",
            "pendulum2.y",
            "pendulum2.theta"
        ]
    );
    assert_eq!(run.multiplier_names.len(), 4);
    assert!(run.model.contains("double pendulum"), "model text stored");
}

/// The Runge–Kutta methods from the command line: Andrews with DOPRI5 and
/// PStab, the statistics in the summary line and the file's parameters;
/// the rolling disk (nonholonomic) with DOPRI5 and PStab; the pendulum with
/// the embedded projection method.
#[test]
fn runge_kutta_methods_run_from_the_command_line() {
    let out = scratch("andrews_dopri5.h5");
    let o = flexmb(&[
        "run",
        "models/andrews.toml",
        "--method",
        "dopri5",
        "--stabilization",
        "pstab",
        "--rtol",
        "1e-5",
        "--atol",
        "1e-6",
        "--t-end",
        "0.03",
        "--set",
        "output.dt_out=0.001",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let line = String::from_utf8_lossy(&o.stdout);
    assert!(line.contains("nfcn ") && line.contains("nstab "), "{line}");
    let run = read_hdf5_run(&out).unwrap();
    assert_eq!(run.status, "completed");
    assert_eq!(run.len(), 31, "dense output at every 1 ms");
    for (k, t) in run.time.iter().enumerate() {
        assert!((t - k as f64 * 1e-3).abs() < 1e-15, "record {k} at {t}");
    }
    let param = |name: &str| {
        run.parameters
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(
        param("method"),
        Some(flexmb::output::AttrValue::Str("dopri5".into()))
    );
    assert_eq!(
        param("stabilization"),
        Some(flexmb::output::AttrValue::Str("pstab".into()))
    );
    let drift = max_constraint(&run.constraints, |c| c.position);
    assert!(drift < 1e-14, "position drift {drift:.1e}");

    let o = flexmb(&["run", "models/rolling_disk.toml", "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = flexmb(&[
        "run",
        "models/pendulum.toml",
        "--method",
        "epm",
        "--dt",
        "0.01",
        "--t-end",
        "1",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("completed | steps 100"),
        "{}",
        text(&o)
    );
}

/// A closed stdout (`flexmb ... | head`) ends the program quietly with the
/// exit code of SIGPIPE, not with a panic.
#[test]
fn closed_stdout_is_not_a_panic() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_flexmb"))
        .args(["check", "models/andrews.toml"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        matches!(o.status.code(), Some(141) | Some(0)),
        "{:?}",
        o.status
    );
}

/// Every shipped model passes `flexmb check` (it builds, its integrator
/// settings resolve, its initial matrix is described).
#[test]
fn every_shipped_model_passes_check() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let o = flexmb(&["check", path.to_str().unwrap()]);
            assert!(o.status.success(), "{}: {}", path.display(), text(&o));
            assert!(text(&o).contains("integrator:"), "{}", text(&o));
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked} models");
}

#[test]
fn newmark_fails_with_the_newton_code_and_a_readable_file() {
    let out = scratch("dp_newmark.h5");
    let o = flexmb(&[
        "run",
        "models/double_pendulum.toml",
        "--scheme",
        "newmark",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let msg = text(&o);
    assert!(msg.contains("Newton failed at step"), "{msg}");
    assert!(
        msg.contains("residual history") && msg.contains("largest residual entries"),
        "{msg}"
    );
    let run = read_hdf5_run(&out).unwrap();
    assert_eq!(run.status, "failed");
    assert!(
        run.failure_reason.contains("Newton failed"),
        "{}",
        run.failure_reason
    );
    assert!(
        run.t_end_reached > 2.0 && run.t_end_reached < 10.0,
        "{}",
        run.t_end_reached
    );
    assert_eq!(*run.time.last().unwrap(), run.t_end_reached);
}

#[test]
fn check_prints_sizes_and_exports_the_matrix() {
    let mtx = scratch("fm.mtx");
    let o = flexmb(&[
        "check",
        "models/four_mass.toml",
        "--matrix-market",
        mtx.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let s = text(&o);
    assert!(
        s.contains("12 DOFs, 2 constraint rows, 2 elements, 2 joints"),
        "{s}"
    );
    assert!(s.contains("saddle-point matrix: 14 x 14"), "{s}");
    let m: sprs::CsMat<f64> = sprs::io::read_matrix_market(&mtx).unwrap().to_csc();
    assert_eq!(m.shape(), (14, 14));
    // Mass of particle 2 on the diagonal, Jacobian of bar 1-2 in the last rows.
    assert_eq!(m.get(3, 3), Some(&3.0));
}

#[test]
fn command_line_errors_exit_with_code_2() {
    for args in [
        vec!["run", "models/no_such_model.toml"],
        vec!["run", "models/double_pendulum.toml", "--option", "7"],
        vec![
            "run",
            "models/double_pendulum.toml",
            "--option",
            "dg",
            "--scheme",
            "generalized-alpha(0.8)",
        ],
        vec!["run", "models/double_pendulum.toml", "--scheme", "hht"],
        vec!["run", "models/double_pendulum.toml", "--dt", "-0.1"],
        vec![
            "run",
            "models/double_pendulum.toml",
            "--scheme",
            "newmark",
            "--form",
            "two-field",
        ],
        vec!["run", "models/double_pendulum.toml", "--method", "rk45"],
        vec![
            "run",
            "models/double_pendulum.toml",
            "--method",
            "rk4",
            "--step-control",
            "adaptive",
        ],
        vec![
            "run",
            "models/double_pendulum.toml",
            "--method",
            "dopri5",
            "--baumgarte",
            "20",
        ],
        vec![
            "run",
            "models/double_pendulum.toml",
            "--method",
            "epm",
            "--tableau",
            "rk45",
        ],
        // GSSSS cannot integrate velocity-level rows: the run names the joint.
        vec![
            "run",
            "models/rolling_disk.toml",
            "--method",
            "gssss",
            "--dt",
            "1e-3",
        ],
    ] {
        let o = flexmb(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains("error"), "{args:?}: {}", text(&o));
    }
}

const PENDULUM: &str = r#"
schema = 1
dimension = 2
gravity = [0.0, -10.0]

[[node]]
id = "bob"
position = [1.0, 0.0]
mass = 1.0

[[joint]]
id = "rod"
type = "distance"
a = "bob"
b = { ground = [0.0, 0.0] }
length = 1.0

[integrator]
dt = 0.01
t_end = 0.1
"#;

/// Each bad model gives exit code 2 and a message naming file, line and what is wrong.
#[test]
fn bad_models_name_file_line_and_reason() {
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "syntax.toml",
            PENDULUM.replace("mass = 1.0", "mass = = 1.0"),
            ":9:",
        ),
        (
            "unknown_ref.toml",
            PENDULUM.replace("a = \"bob\"", "a = \"bobby\""),
            ":14: joint 'rod' (field `a`): node or body 'bobby' is not defined",
        ),
        (
            "negative_mass.toml",
            PENDULUM.replace("mass = 1.0", "mass = -1.0"),
            ":9: node 'bob' (field `mass`): mass must be zero or positive",
        ),
        (
            "self_joint.toml",
            PENDULUM.replace("b = { ground = [0.0, 0.0] }", "b = \"bob\""),
            ":15: joint 'rod' (field `b`): both points belong to 'bob'",
        ),
        (
            "unknown_field.toml",
            PENDULUM.replace("mass = 1.0", "mass = 1.0\ncolour = 3"),
            "colour",
        ),
        (
            "violated.toml",
            PENDULUM.replace("length = 1.0", "length = 2.0"),
            "rod",
        ),
        (
            "ground3d.toml",
            PENDULUM.replace(
                "b = { ground = [0.0, 0.0] }",
                "b = { ground = [0.0, 0.0, 0.5] }",
            ),
            "(field `b`): a ground point of a 2-D model has 2 coordinates",
        ),
        (
            "nan.toml",
            PENDULUM.replace("position = [1.0, 0.0]", "position = [nan, 0.0]"),
            "finite",
        ),
        (
            "bad_schema.toml",
            PENDULUM.replace("schema = 1", "schema = 99"),
            "schema",
        ),
        (
            "bad_option.toml",
            PENDULUM.replace("dt = 0.01", "dt = 0.01\noption = \"dgx\""),
            "`option` must be 1, 2, 3, 4 or \"dg\", got \"dgx\"",
        ),
        (
            "huge_generator.toml",
            "dimension = 2\n[generator]\ntype = \"hanging_beam\"\nelements = 5000000\n\
             [integrator]\ndt = 1e-3\nt_end = 0.01\n"
                .to_string(),
            "elements = 5000000 gives 20000004 coordinates, more than the limit of 4000000",
        ),
        (
            "bad_convergence.toml",
            PENDULUM.replace("dt = 0.01", "dt = 0.01\nconvergence = \"fast\""),
            "`convergence` must be \"scaled\", \"increment\" or \"rate\", got \"fast\"",
        ),
        (
            "bad_refactor.toml",
            PENDULUM.replace("dt = 0.01", "dt = 0.01\nrefactor = \"never\""),
            "`refactor` must be \"iteration\" or \"step\", got \"never\"",
        ),
        (
            "bad_line_search.toml",
            PENDULUM.replace("dt = 0.01", "dt = 0.01\nline_search = \"armijo\""),
            "`line_search` must be \"none\" or \"backtracking\", got \"armijo\"",
        ),
        (
            "line_search_increment.toml",
            PENDULUM.replace(
                "dt = 0.01",
                "dt = 0.01\nline_search = \"backtracking\"\nconvergence = \"increment\"",
            ),
            "needs `convergence` = \"scaled\", not \"increment\"",
        ),
        (
            "dg_newmark.toml",
            PENDULUM.replace(
                "dt = 0.01",
                "dt = 0.01\noption = \"dg\"\nscheme = \"newmark\"",
            ),
            "option \"dg\" (Gonzalez's discrete derivative) needs a midpoint scheme",
        ),
    ];
    for (name, body, needle) in cases {
        let path = model_file(name, &body);
        let o = flexmb(&["run", path.to_str().unwrap()]);
        let msg = text(&o);
        println!("{name}: {msg}");
        assert_eq!(o.status.code(), Some(2), "{name}: {msg}");
        assert!(msg.contains(name), "{name}: file not named: {msg}");
        assert!(msg.contains(needle), "{name}: '{needle}' not in: {msg}");
    }
    // The unmodified model runs: the cases above fail for their own reason.
    let path = model_file("good.toml", PENDULUM);
    assert!(flexmb(&["run", path.to_str().unwrap()]).status.success());
    // Option dg, from the file and from the command line, with a midpoint scheme.
    let path = model_file(
        "dg.toml",
        &PENDULUM.replace("dt = 0.01", "dt = 0.01\noption = \"dg\""),
    );
    let o = flexmb(&["run", path.to_str().unwrap()]);
    assert!(
        o.status.success() && text(&o).contains("option dg"),
        "{}",
        text(&o)
    );
    let path = model_file("good.toml", PENDULUM);
    let o = flexmb(&["run", path.to_str().unwrap(), "--option", "dg"]);
    assert!(
        o.status.success() && text(&o).contains("option dg"),
        "{}",
        text(&o)
    );
}

/// A redundant joint makes the Newton matrix singular: exit code 4 and a
/// diagnosis naming the joints involved; the output file stays readable.
#[test]
fn redundant_joint_is_diagnosed() {
    let body = PENDULUM.to_string()
        + r#"
[[joint]]
id = "rod_again"
type = "distance"
a = "bob"
b = { ground = [0.0, 0.0] }
length = 1.0
"#;
    let path = model_file("redundant.toml", &body);
    let out = scratch("redundant.h5");
    let o = flexmb(&["run", path.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let msg = text(&o);
    assert_eq!(o.status.code(), Some(4), "{msg}");
    println!("{msg}");
    assert!(msg.contains("rod") && msg.contains("rod_again"), "{msg}");
    let run = read_hdf5_run(&out).unwrap();
    assert_eq!(run.status, "failed");
}

/// The example model in README.md runs as shown.
#[test]
fn readme_example_model_runs() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme.find("```toml\n").expect("README has a toml block") + 8;
    let len = readme[start..].find("```").unwrap();
    let path = model_file("readme.toml", &readme[start..start + len]);
    let o = flexmb(&["run", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("completed | steps 1000 to t = 10"),
        "{}",
        text(&o)
    );
}

/// `--set KEY=VALUE` changes a model before it is read; a malformed one is a usage error.
#[test]
fn set_overrides_model_values() {
    let o = flexmb(&[
        "check",
        "models/slider_crank_flexible.toml",
        "--set",
        "generator.elements=4",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    // Crank (3) + 5 beam nodes (4 each); 4 beams + the crank damper; pivot (2) + crank pin (2) + slider (1).
    assert!(
        text(&o).contains("23 DOFs, 5 constraint rows, 5 elements, 3 joints"),
        "{}",
        text(&o)
    );
    for bad in ["generator.elements", "generator.elements=-3", "title.x=1"] {
        let o = flexmb(&["check", "models/slider_crank_flexible.toml", "--set", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(text(&o).contains("error"), "{bad}: {}", text(&o));
    }
}

/// `flexmb batch` on the smoke sweep: one line per case, the summary and one
/// HDF5 file per case; a shard writes its own summary; bad input exits 2.
#[test]
fn batch_runs_the_smoke_sweep() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli/batch_smoke");
    let _ = std::fs::remove_dir_all(&out);
    let sweep = "models/sweeps/slider_crank_smoke.toml";
    let o = flexmb(&[
        "batch",
        sweep,
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        "2",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        stdout.matches(": completed | steps 200").count(),
        4,
        "{stdout}"
    );
    assert!(
        stdout.contains("4 cases: 4 completed, 0 failed"),
        "{stdout}"
    );
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let rows: Vec<&str> = summary.lines().skip(1).collect();
    assert_eq!(rows.len(), 4, "{summary}");
    for row in rows {
        let id = row.split(',').next().unwrap();
        let h = read_hdf5_run(out.join(format!("{id}.h5"))).unwrap();
        assert_eq!(h.status, "completed");
        assert!(row.contains(",completed,,200,"), "{row}");
    }

    let o = flexmb(&[
        "batch",
        sweep,
        "--out",
        out.to_str().unwrap(),
        "--shard",
        "1/3",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let shard = std::fs::read_to_string(out.join("summary-1-of-3.csv")).unwrap();
    assert_eq!(shard.lines().count(), 2, "case 1 only: {shard}");

    for bad in [
        vec!["--shard", "3/3"],
        vec!["--jobs", "x"],
        // jobs x threads above the cores.
        vec!["--jobs", "2", "--threads", "100000"],
    ] {
        let mut args = vec!["batch", sweep];
        args.extend(&bad);
        let o = flexmb(&args);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", text(&o));
    }
    let o = flexmb(&["batch", sweep, "--jobs", "2", "--threads", "100000"]);
    assert!(text(&o).contains("threads per case"), "{}", text(&o));
    // --threads 0 is refused; --threads 1 runs the sweep's model.
    let o = flexmb(&["run", "models/pendulum.toml", "--threads", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--threads must be at least 1"),
        "{}",
        text(&o)
    );
    let failing = model_file(
        "failing_sweep.toml",
        &format!(
            "base = \"{}/models/slider_crank_flexible.toml\"\n[set]\nintegrator.t_end = 1e-4\n\
             [parameters]\ngenerator.elements = [2, -1]\n",
            env!("CARGO_MANIFEST_DIR")
        ),
    );
    let fail_out = out.join("failing");
    let o = flexmb(&[
        "batch",
        failing.to_str().unwrap(),
        "--out",
        fail_out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(6), "{}", text(&o));
    assert!(
        text(&o).contains("2 cases: 1 completed, 1 failed"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains(": FAILED: "), "{}", text(&o));
    let bad = model_file("bad_sweep.toml", "base = \"nowhere.toml\"\n");
    let o = flexmb(&["batch", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("bad_sweep.toml:1: cannot read the base model"),
        "{}",
        text(&o)
    );
}
