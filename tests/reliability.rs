//! Issue 13's reproductions through the `flexmb` binary: bounded resources
//! checked before allocating, no silent nonsense in the initial state or the
//! model, `check` telling what `run` would reject, graceful interruption, and
//! sweep keys checked before any case. Each refusal is timed and its peak
//! memory measured with GNU time (`/usr/bin/time -f`): under a second and
//! under 100 MB.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::scratch::{output_text, scratch_file, write_scratch};
use flexmb::output::{read_hdf5_run, RunSource};

fn scratch(name: &str) -> PathBuf {
    scratch_file("reliability", name)
}

fn write(name: &str, body: &str) -> PathBuf {
    write_scratch("reliability", name, body)
}

/// What one `flexmb` command did: its output, wall time and peak memory.
struct Measured {
    out: Output,
    seconds: f64,
    peak_kb: u64,
}

impl Measured {
    fn text(&self) -> String {
        output_text(&self.out)
    }

    fn code(&self) -> Option<i32> {
        self.out.status.code()
    }

    /// A refusal: exit `code`, a message containing each of `words`, under
    /// a second and 100 MB.
    fn refused(&self, code: i32, words: &[&str]) {
        let t = self.text();
        assert_eq!(self.code(), Some(code), "{t}");
        for w in words {
            assert!(t.contains(w), "missing '{w}' in: {t}");
        }
        assert!(!t.contains("panicked"), "{t}");
        assert!(self.seconds < 1.0, "{} s: {t}", self.seconds);
        assert!(self.peak_kb < 100_000, "{} kB: {t}", self.peak_kb);
    }
}

/// Runs `flexmb args` under GNU time, which writes "seconds peak_kB".
fn flexmb(args: &[&str]) -> Measured {
    let stats = scratch(&format!("time-{}.txt", args.join("_").replace('/', "_")));
    let out = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%e %M")
        .arg("-o")
        .arg(&stats)
        .arg(env!("CARGO_BIN_EXE_flexmb"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("/usr/bin/time (GNU time) runs flexmb");
    let s = std::fs::read_to_string(&stats).unwrap();
    let line = s.lines().last().unwrap();
    let (sec, kb) = line.split_once(' ').unwrap();
    Measured {
        out,
        seconds: sec.parse().unwrap(),
        peak_kb: kb.trim().parse().unwrap(),
    }
}

const PENDULUM: &str = r#"schema = 1
dimension = 2
gravity = [0.0, -9.81]

[[node]]
id = "bob"
position = [1.0, 0.0]
VELOCITY
mass = 1.0

[[joint]]
id = "rod"
type = "distance"
a = "bob"
b = { ground = [0.0, 0.0] }
length = 1.0
EXTRA
[integrator]
scheme = "midpoint"
dt = 0.01
t_end = 1.0
"#;

fn pendulum(velocity: &str, extra: &str) -> String {
    PENDULUM
        .replace("VELOCITY", velocity)
        .replace("EXTRA", extra)
}

// ---- 1. bounded resources ----------------------------------------------

#[test]
fn t_end_1e300_is_refused() {
    flexmb(&["run", "models/double_pendulum.toml", "--t-end", "1e300"])
        .refused(2, &["1e300", "steps", "limit of 1e9"]);
}

#[test]
fn bench_size_past_the_machine_memory_is_refused() {
    flexmb(&["bench", "l1", "--sizes", "1000000000", "-q"]).refused(
        2,
        &[
            "l1 size 1000000000",
            "4.000e9 DOFs",
            "bytes",
            "machine's memory",
        ],
    );
}

#[test]
fn memory_estimate_grows_with_the_dofs() {
    use flexmb::bench::{check_memory, Problem};
    for p in Problem::ALL {
        // Each problem's DOF formula against the built model.
        let model = p.model(3).unwrap();
        assert_eq!(p.dofs(3), model.n_dofs() as f64, "{}", p.name());
        assert!(p.estimated_bytes(30) > p.estimated_bytes(3));
        assert!(check_memory(p, 3, 1e9).is_ok());
        let err = check_memory(p, 1_000_000_000, 1e9).unwrap_err();
        assert!(
            err.contains("more than the machine's memory of 1.000e9"),
            "{err}"
        );
    }
}

/// A point force `push` on the pendulum's bob, scaled by the time function
/// `time` (a TOML inline table).
fn push_load(time: &str) -> String {
    format!(
        r#"
[[load]]
id = "push"
type = "point_force"
point = "bob"
force = [1.0, 0.0]
time = {time}
"#
    )
}

#[test]
fn nan_in_a_sine_load_is_an_error() {
    let load = push_load(r#"{ type = "sine", omega = nan, phase = 0.0 }"#);
    let m = write("nan_sine.toml", &pendulum("", &load));
    for cmd in ["check", "run"] {
        flexmb(&[cmd, m.to_str().unwrap()])
            .refused(2, &["load 'push'", "`omega` must be finite, got NaN"]);
    }
    let inf = write(
        "inf_phase.toml",
        &pendulum(
            "",
            &push_load(r#"{ type = "sine", omega = 1.0, phase = inf }"#),
        ),
    );
    flexmb(&["check", inf.to_str().unwrap()]).refused(2, &["`phase` must be finite, got inf"]);
}

#[test]
fn ramp_and_pulse_out_of_order_are_errors_in_files_and_in_code() {
    let load = push_load(r#"{ type = "ramp", t0 = 0.5, t1 = 0.5 }"#);
    let m = write("flat_ramp.toml", &pendulum("", &load));
    // The error names the load's `time` line.
    let line = pendulum("", &load)
        .lines()
        .position(|l| l.starts_with("time = "))
        .unwrap()
        + 1;
    flexmb(&["check", m.to_str().unwrap()]).refused(
        2,
        &[
            &format!("flat_ramp.toml:{line}"),
            "load 'push' (field `time`)",
            "ramp needs t1 > t0, got t0 = 0.5, t1 = 0.5",
        ],
    );
    let pulse = push_load(r#"{ type = "triangular", t0 = 0.0, t_peak = 2.0, t1 = 1.0 }"#);
    let m = write("late_peak.toml", &pendulum("", &pulse));
    flexmb(&["run", m.to_str().unwrap()])
        .refused(2, &["triangular pulse needs t0 < t_peak < t1, got 0, 2, 1"]);
    // The same checks guard the builder of the Rust API.
    use flexmb::load::TimeFunction;
    use flexmb::model::{ModelBuilder, PointRef};
    let mut b = ModelBuilder::new(2).unwrap();
    b.node("bob", &[1.0, 0.0], None, 1.0).unwrap();
    let point = PointRef::Entity("bob".into());
    let ramp = TimeFunction::Ramp { t0: 1.0, t1: 0.0 };
    let e = b
        .point_load(
            "push",
            "point_force",
            &point,
            [[0.0; 3]; 3],
            [1.0, 0.0, 0.0],
            ramp,
        )
        .unwrap_err();
    assert_eq!(e.field, Some("time"), "{e}");
    assert!(e.to_string().contains("ramp needs t1 > t0"), "{e}");
    let ok = TimeFunction::Ramp { t0: 0.0, t1: 1.0 };
    b.point_load(
        "push",
        "point_force",
        &point,
        [[0.0; 3]; 3],
        [1.0, 0.0, 0.0],
        ok,
    )
    .unwrap();
}

// ---- 2. no silent nonsense ------------------------------------------------

#[test]
fn inconsistent_initial_velocity_is_refused_or_projected() {
    // The velocity points along the rod: B v = 1, not 0.
    let m = write("bad_velocity.toml", &pendulum("velocity = [1.0, 0.0]", ""));
    let m = m.to_str().unwrap();
    for cmd in ["check", "run"] {
        flexmb(&[cmd, m]).refused(
            2,
            &[
                "violates the velocity constraint of distance 'rod'",
                "by 1.000e0",
                "initialize = \"project\"",
            ],
        );
    }
    let out = scratch("projected.h5");
    let o = flexmb(&[
        "run",
        m,
        "--initialize",
        "project",
        "-o",
        out.to_str().unwrap(),
    ]);
    let t = o.text();
    assert_eq!(o.code(), Some(0), "{t}");
    assert!(t.contains("velocity 1.000e0; projected"), "{t}");
    assert!(t.contains("velocities by up to 1.000e0"), "{t}");
    // The run starts on the constraints: the radial velocity is gone.
    let run = read_hdf5_run(&out).unwrap();
    assert!(
        run.constraints[0].velocity < 1e-12,
        "{:?}",
        run.constraints[0]
    );
    let ix = run.dof_names.iter().position(|n| n == "bob.x").unwrap();
    assert!(run.v[0][ix].abs() < 1e-12);
}

#[test]
fn coincident_beam_nodes_with_a_length_are_refused() {
    let m = write(
        "coincident.toml",
        r#"schema = 1
dimension = 2

[[node]]
id = "a"
position = [0.0, 0.0]
slope = [1.0, 0.0]
mass = 1.0

[[node]]
id = "b"
position = [0.0, 0.0]
slope = [1.0, 0.0]
mass = 1.0

[[element]]
id = "e1"
type = "beam"
nodes = ["a", "b"]
ea = 1e6
ei = 1e3
length = 1.0

[integrator]
scheme = "midpoint"
dt = 0.01
t_end = 0.1
"#,
    );
    flexmb(&["check", m.to_str().unwrap()])
        .refused(2, &["element 'e1'", "nodes 'a' and 'b' coincide initially"]);
}

// ---- 3. check tells the truth ---------------------------------------------

#[test]
fn redundant_joint_fails_check_as_run_does() {
    let rod2 = r#"
[[joint]]
id = "rod2"
type = "distance"
a = "bob"
b = { ground = [0.0, 0.0] }
length = 1.0
"#;
    let m = write("redundant.toml", &pendulum("", rod2));
    let m = m.to_str().unwrap();
    let diagnosis =
        "distance joint 'rod2' row 0 is redundant: it equals +1.000 x distance joint 'rod' row 0";
    let check = flexmb(&["check", m]);
    check.refused(4, &[diagnosis]);
    let run = flexmb(&["run", m, "-q"]);
    run.refused(4, &[diagnosis, "FAILED before the first step"]);
    assert!(!run.text().contains("NaN"), "{}", run.text());
    flexmb(&["static", m]).refused(4, &[diagnosis]);
    // No debug formatting of the pivot.
    assert!(!check.text().contains("Some("), "{}", check.text());
}

#[test]
fn shipped_models_pass_check() {
    for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("models")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "toml") {
            let o = flexmb(&["check", p.to_str().unwrap()]);
            assert_eq!(o.code(), Some(0), "{}: {}", p.display(), o.text());
            assert!(o.text().contains("initial state: constraint residuals"));
        }
    }
}

// ---- 4. graceful interruption ---------------------------------------------

fn interrupt(signal: &str, code: i32) {
    let out = scratch(&format!("interrupted-{signal}.h5"));
    let child = Command::new(env!("CARGO_BIN_EXE_flexmb"))
        .args([
            "run",
            "models/double_pendulum.toml",
            "--t-end",
            "1e6",
            "-q",
            // Its output would pass the 1e10-byte soft limit: stopped long before.
            "--force",
            // Rigid bodies get the XDMF side file only when asked.
            "--set",
            "output.xdmf=true",
            "-o",
        ])
        .arg(&out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Mid-run: the file exists once the run has begun.
    for _ in 0..200 {
        if out.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    let killed = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    let t = output_text(&o);
    assert_eq!(o.status.code(), Some(code), "{t}");
    assert!(t.contains("interrupted | steps"), "{t}");
    let run = read_hdf5_run(&out).unwrap();
    assert_eq!(run.status, "interrupted");
    assert!(
        run.failure_reason.starts_with("stopped by signal"),
        "{}",
        run.failure_reason
    );
    // The last step is in the file, and the run stopped well before t_end.
    let last = *run.time.last().unwrap();
    assert!(last > 0.0 && last < 1e6 && last == run.t_end_reached);
    assert!(flexmb::output::xdmf_path(&out).unwrap().exists());
}

#[test]
fn sigint_mid_run_closes_the_file_as_interrupted() {
    interrupt("INT", 130);
}

#[test]
fn sigterm_mid_run_closes_the_file_as_interrupted() {
    interrupt("TERM", 143);
}

#[test]
fn unwritable_output_is_a_plain_message() {
    let o = flexmb(&[
        "run",
        "models/pendulum.toml",
        "-q",
        "-o",
        "/nonexistent-dir/x.h5",
    ]);
    o.refused(
        5,
        &["cannot create the output file /nonexistent-dir/x.h5: No such file or directory"],
    );
    assert!(!o.text().contains("os error"), "{}", o.text());
    assert!(!o.text().contains("hdf5"), "{}", o.text());
}

/// Runs `flexmb args` in a private mount namespace with a tmpfs of `size`
/// mounted on `dir` (root only: `None` where the mount is not allowed), and
/// copies what the run left in `dir` to `keep`.
fn flexmb_on_tmpfs(size: &str, dir: &Path, keep: &Path, args: &[&str]) -> Option<Output> {
    std::fs::create_dir_all(dir).unwrap();
    let _ = std::fs::remove_dir_all(keep);
    std::fs::create_dir_all(keep).unwrap();
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let script = format!(
        "mount -t tmpfs -o size={size} tmpfs '{d}' || exit 99; '{exe}' {args}; c=$?; \
         cp -r '{d}'/. '{k}'/; exit $c",
        d = dir.display(),
        k = keep.display(),
        exe = env!("CARGO_BIN_EXE_flexmb"),
        args = quoted.join(" ")
    );
    let out = Command::new("unshare")
        .args(["--mount", "sh", "-c", &script])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    if matches!(out.status.code(), Some(99) | Some(1)) && !keep.join("x.h5").exists() {
        let why = String::from_utf8_lossy(&out.stderr);
        if why.contains("mount") || why.contains("unshare") || why.contains("ermission") {
            eprintln!("skipped: no private tmpfs here (needs root): {why}");
            return None;
        }
    }
    Some(out)
}

#[test]
fn output_past_the_soft_limit_is_refused_and_force_lifts_it() {
    let out = scratch("too_big.h5");
    // `--t-end 1e6`: 1e8 rows of the double pendulum (rigid bodies: no
    // XDMF side file unless asked, so 420 bytes a row, 4.265e10 in all).
    flexmb(&[
        "run",
        "models/double_pendulum.toml",
        "--t-end",
        "1e6",
        "-o",
        out.to_str().unwrap(),
    ])
    .refused(
        2,
        &[
            "too_big.h5",
            "an estimated 4.265e10 bytes",
            "100000001 recorded rows",
            "limit of 1.000e10 bytes",
            "--force",
        ],
    );
    assert!(!out.exists());
    // `[output] max_bytes` lowers the limit; --force lifts it.
    let small = [
        "run",
        "models/double_pendulum.toml",
        "--t-end",
        "1",
        "-q",
        "--set",
        "output.max_bytes=1e5",
        "-o",
        out.to_str().unwrap(),
    ];
    flexmb(&small).refused(2, &["101 recorded rows", "limit of 1.000e5 bytes"]);
    assert!(!out.exists());
    let forced = flexmb(&[&small[..], &["--force"]].concat());
    assert_eq!(forced.code(), Some(0), "{}", forced.text());
    assert_eq!(read_hdf5_run(&out).unwrap().time.len(), 101);
}

/// A file system with less free space than the estimate: refused before
/// the run; with --force the run fills it, stops with exit 5 and a plain
/// message naming the cause and what the file keeps (readable, the steps up
/// to its last flush).
#[test]
fn full_disk_is_refused_before_and_reported_plainly_mid_run() {
    let dir = scratch("tmpfs");
    let keep = scratch("tmpfs_kept");
    let args = [
        "run",
        "models/double_pendulum.toml",
        "--t-end",
        "50",
        "-q",
        "--set",
        "output.flush_seconds=1e-3",
        "-o",
    ];
    let file = dir.join("x.h5");
    let run = [&args[..], &[file.to_str().unwrap()]].concat();
    let Some(before) = flexmb_on_tmpfs("1m", &dir, &keep, &run) else {
        return;
    };
    let t = output_text(&before);
    assert_eq!(before.status.code(), Some(2), "{t}");
    assert!(t.contains("bytes free on the file system of"), "{t}");
    assert!(!keep.join("x.h5").exists(), "{t}");

    let forced = [&run[..], &["--force"]].concat();
    let mid = flexmb_on_tmpfs("1m", &dir, &keep, &forced).unwrap();
    write_failure_reported_plainly(
        &mid,
        "x.h5: No space left on device; the file keeps",
        &keep.join("x.h5"),
    );
}

/// An adaptive method's estimate is a bound (`max_steps`, a million steps by
/// default): past the free space it is a warning, not a refusal, and the run
/// (the rolling disk, 7 steps, 0.16 MB) completes on a 1 MiB file system.
#[test]
fn adaptive_bound_past_the_free_space_warns_and_runs() {
    let dir = scratch("tmpfs_adaptive");
    let keep = scratch("tmpfs_adaptive_kept");
    let file = dir.join("x.h5");
    let run = [
        "run",
        "models/rolling_disk.toml",
        "-q",
        "-o",
        file.to_str().unwrap(),
    ];
    let Some(o) = flexmb_on_tmpfs("1m", &dir, &keep, &run) else {
        return;
    };
    let t = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for word in [
        "warning:",
        "up to max_steps = 1000000 steps",
        "bytes free on the file system of",
        "the run goes on",
    ] {
        assert!(t.contains(word), "missing '{word}': {t}");
    }
    let kept = read_hdf5_run(keep.join("x.h5")).unwrap();
    assert_eq!(kept.status, "completed");
    assert_eq!(kept.time.len(), 8);
}

/// A batch whose cases each fit the free space but together do not is
/// refused before any case runs (exit 2, no case file), naming the total and
/// the free space; with --force the cases run until the disk is full.
#[test]
fn batch_outputs_together_past_the_free_space_are_refused() {
    let dir = scratch("tmpfs_batch");
    let keep = scratch("tmpfs_batch_kept");
    // Four cases of about 3.3e5 bytes each on a 1 MiB file system.
    let sweep = write(
        "free_space_sweep.toml",
        &format!(
            "base = \"{}/models/slider_crank_flexible.toml\"\n\
             [set]\nintegrator.dt = 1e-5\nintegrator.t_end = 0.002\n\
             [parameters]\ngenerator.elements = [2, 4]\n\
             integrator.scheme = [\"midpoint\", \"generalized-alpha(0.8)\"]\n",
            env!("CARGO_MANIFEST_DIR")
        ),
    );
    let args = [
        "batch",
        sweep.to_str().unwrap(),
        "-q",
        "--jobs",
        "1",
        "--out",
        dir.to_str().unwrap(),
    ];
    let Some(o) = flexmb_on_tmpfs("1m", &dir, &keep, &args) else {
        return;
    };
    let t = output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    for word in [
        "the 4 cases to run need an estimated",
        "bytes free on the file system of",
        "no case ran",
    ] {
        assert!(t.contains(word), "missing '{word}': {t}");
    }
    let cases: Vec<_> = std::fs::read_dir(&keep)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with("summary"))
        .collect();
    assert!(cases.is_empty(), "{cases:?}");
}

/// The file a failed write left: readable, with the rows and status the
/// message names; `failed` with a plain reason where it could be closed.
fn kept_file_matches_message(path: &Path, message: &str) {
    let run = read_hdf5_run(path).unwrap();
    assert!(!run.time.is_empty() && run.time.len() < 5001);
    assert!(
        message.contains(&format!(
            "the file keeps {} recorded steps with status \"{}\"",
            run.time.len(),
            run.status
        )),
        "{message}"
    );
    match run.status.as_str() {
        "running" => {}
        "failed" => assert!(!run.failure_reason.contains("os error")),
        other => panic!("status {other}"),
    }
}

/// A write that failed mid-run: exit 5, a message containing `what` and no
/// internal words (os error, HDF5 or chunk details), and the file at `kept`
/// as the message describes it.
fn write_failure_reported_plainly(o: &Output, what: &str, kept: &Path) {
    let t = output_text(o);
    assert_eq!(o.status.code(), Some(5), "{t}");
    assert!(t.contains(what), "{t}");
    for internal in ["os error", "hdf5", "chunk", "Hdf5", "Io {"] {
        assert!(!t.contains(internal), "'{internal}' in: {t}");
    }
    kept_file_matches_message(kept, &t);
}

/// A file size limit (RLIMIT_FSIZE, no root needed): the write past it
/// fails mid-run with "File too large"; exit 5, a plain message, the file
/// readable up to its last flush.
#[test]
fn file_size_limit_mid_run_is_reported_plainly() {
    let out = scratch("fsize.h5");
    let script = format!(
        "trap '' XFSZ; ulimit -f 1000; exec '{}' run models/double_pendulum.toml --t-end 50 -q \
         --set output.flush_seconds=1e-3 -o '{}'",
        env!("CARGO_BIN_EXE_flexmb"),
        out.display()
    );
    let o = Command::new("sh")
        .args(["-c", &script])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    write_failure_reported_plainly(&o, "fsize.h5: File too large; the file keeps", &out);
}

/// Writes the sweep file `<name>.toml` over shipped model `model` (`base`)
/// with `body` after the base line; returns it and its output folder
/// `<name>_out`, removed.
fn sweep_over(name: &str, model: &str, body: &str) -> (PathBuf, PathBuf) {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(format!("{model}.toml"));
    let sweep = write(
        &format!("{name}.toml"),
        &format!("base = \"{}\"\n{body}", base.display()),
    );
    let out = scratch(&format!("{name}_out"));
    let _ = std::fs::remove_dir_all(&out);
    (sweep, out)
}

/// `flexmb batch SWEEP --out OUT -q` with `more` arguments.
fn batch_quiet(sweep: &Path, out: &Path, more: &[&str]) -> Measured {
    let args = [
        "batch",
        sweep.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ];
    flexmb(&[&args[..], more].concat())
}

/// A product sweep of 1e9 cases is refused before any expansion: under a
/// second and 100 MB.
#[test]
fn sweep_of_a_billion_cases_is_refused_before_expanding() {
    let list = (1..=1000)
        .map(|k| format!("{}e-5", k))
        .collect::<Vec<_>>()
        .join(", ");
    let (sweep, out) = sweep_over(
        "billion_sweep",
        "double_pendulum",
        &format!(
            "[parameters]\nintegrator.dt = [{list}]\nintegrator.t_end = [{list}]\n\
             integrator.rho1 = [{list}]\n"
        ),
    );
    batch_quiet(&sweep, &out, &[])
        .refused(2, &["billion_sweep.toml", "1.000e9 cases", "limit of 1e7"]);
    // --force lifts only the soft limit.
    batch_quiet(&sweep, &out, &["--force"]).refused(2, &["1.000e9 cases", "limit of 1e7"]);
    assert!(!out.exists(), "no case ran");
}

// ---- 5. --set into an element and sweeps ----------------------------------

#[test]
fn set_into_an_element_and_a_sweep_over_it() {
    // The spring-damper's stiffness by id changes the result.
    let base = flexmb(&[
        "run",
        "models/slider_crank_tsda.toml",
        "--t-end",
        "0.05",
        "-q",
    ]);
    let stiff = flexmb(&[
        "run",
        "models/slider_crank_tsda.toml",
        "--t-end",
        "0.05",
        "-q",
        "--set",
        "element.tsda.stiffness=1e6",
    ]);
    assert_eq!(base.code(), Some(0), "{}", base.text());
    assert_eq!(stiff.code(), Some(0), "{}", stiff.text());
    assert_ne!(base.text(), stiff.text());
    let (sweep, out) = sweep_over(
        "tsda_sweep",
        "slider_crank_tsda",
        "[set]\nintegrator.t_end = 0.02\n[parameters]\nelement.tsda.stiffness = [1e4, 1e6]\n",
    );
    let o = batch_quiet(&sweep, &out, &[]);
    assert_eq!(o.code(), Some(0), "{}", o.text());
    assert!(o.text().contains("2 cases: 2 completed"), "{}", o.text());
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(csv.contains("element.tsda.stiffness"), "{csv}");
}

#[test]
fn sweep_key_typo_is_a_sweep_file_error_before_any_case() {
    let (sweep, out) = sweep_over(
        "typo_sweep",
        "slider_crank_tsda",
        "[parameters]\nelement.tsda.stifness = [1e4, 2e4]\n",
    );
    batch_quiet(&sweep, &out, &[]).refused(
        2,
        &["typo_sweep.toml", "case 1", "unknown field `stifness`"],
    );
    assert!(!out.exists(), "no case ran");
}

// ---- 2. energy balance with prescribed motion -------------------------------

fn max_energy_change(args: &[&str]) -> f64 {
    let o = flexmb(args);
    assert_eq!(o.code(), Some(0), "{}", o.text());
    let t = o.text();
    let tail = t
        .split("max relative energy change ")
        .nth(1)
        .expect("summary line");
    tail.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn rheonomic_joint_work_balances_the_slider_crank() {
    // The driven crank's prescribed rotation does work; counted by the
    // trapezoidal rule on lambda . Phi_t, the balance closes at second order.
    let e1 = max_energy_change(&[
        "run",
        "models/slider_crank_rigid.toml",
        "-q",
        "--dt",
        "1e-3",
    ]);
    let e2 = max_energy_change(&[
        "run",
        "models/slider_crank_rigid.toml",
        "-q",
        "--dt",
        "5e-4",
    ]);
    assert!(e1 < 2e-4, "{e1}");
    let order = (e1 / e2).log2();
    assert!((order - 2.0).abs() < 0.2, "{e1} {e2}: order {order}");
    // Scleronomic models are unchanged: the double pendulum at round-off.
    let dp = max_energy_change(&["run", "models/double_pendulum.toml", "-q"]);
    assert!(dp < 1e-13, "{dp}");
}

#[test]
fn energy_scale_is_never_zero() {
    use flexmb::output::Energy;
    use flexmb::run::EnergyBalance;
    let energy = |kinetic: f64, total: f64, work: f64| Energy {
        kinetic,
        potential: total - kinetic,
        total,
        external_work: work,
    };
    // At rest with no energy: change 0, not 0/0.
    let mut b = EnergyBalance::new(0.0);
    b.add(&energy(0.0, 0.0, 0.0));
    assert_eq!(b.max_relative(), 0.0);
    // E0 = 0 (a pendulum released at zero total energy): the scale is the
    // motion's kinetic energy, not |E0|.
    let mut b = EnergyBalance::new(0.0);
    b.add(&energy(0.0, 0.0, 0.0));
    b.add(&energy(4.0, 1e-3, 0.0));
    b.add(&energy(8.0, -1e-3, 0.0));
    assert_eq!(b.max_relative(), 1e-3 / 8.0);
    assert_eq!(b.final_relative(), -1e-3 / 8.0);
    // The work counts in the scale, and a blow-up stays visible.
    let mut b = EnergyBalance::new(1.0);
    b.add(&energy(0.5, 11.0, 20.0));
    assert_eq!(b.max_relative(), 10.0 / 20.0);
    b.add(&energy(1e4, 1e4, 20.0));
    assert!(b.max_relative() > 1e2);
}

// ---- 2. constraint residuals at three levels ---------------------------------

/// The summary line and the root attributes `max_{position,velocity,
/// acceleration}_violation` report the largest recorded residual of each
/// level (docs/output-format.md): equal to the maxima of the per-step
/// `/constraints` datasets read back.
#[test]
fn three_constraint_levels_in_summary_and_attributes() {
    let out = scratch("levels.h5");
    let o = flexmb(&[
        "run",
        "models/slider_crank_rigid.toml",
        "--t-end",
        "0.2",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.code(), Some(0), "{}", o.text());
    let text = o.text();
    let levels = text
        .split("max constraint violation: ")
        .nth(1)
        .expect("summary line names the residuals");
    for level in ["position ", "velocity ", "acceleration "] {
        assert!(levels.contains(level), "{levels}");
    }
    let run = read_hdf5_run(&out).unwrap();
    let max = |f: fn(&flexmb::output::ConstraintNorms) -> f64| {
        run.constraints.iter().map(f).fold(0.0, f64::max)
    };
    let expected = [
        ("max_position_violation", max(|c| c.position)),
        ("max_velocity_violation", max(|c| c.velocity)),
        ("max_acceleration_violation", max(|c| c.acceleration)),
    ];
    let attrs = flexmb::output::Hdf5Reader::open(&out)
        .unwrap()
        .root_attrs()
        .unwrap();
    for (name, want) in expected {
        let got = attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("no root attribute {name}"));
        assert_eq!(got, flexmb::output::AttrValue::F64(want), "{name}");
        assert!(want.is_finite(), "{name} = {want}");
    }
}
