//! `flexmb batch` through the library: sweep expansion and ids, shard
//! assignment, a smoke sweep run on 1 and 2 threads, failing cases, and the
//! summary checked against each case's HDF5 file read back.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use flexmb::batch::{merge_shards, run_batch, BatchError, BatchOptions, CaseResult, Shard, Sweep};
use flexmb::output::{
    path_component, read_hdf5_run, AttrValue, ConstraintNorms, Hdf5Reader, Hdf5Run, RunSource,
};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn sweeps() -> PathBuf {
    root().join("models/sweeps")
}

/// A fresh scratch folder.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("batch")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn parse(text: &str) -> Sweep {
    Sweep::from_str(text, "test.toml", &sweeps()).unwrap()
}

fn error(text: &str) -> String {
    Sweep::from_str(text, "test.toml", &sweeps())
        .expect_err("the sweep is rejected")
        .to_string()
}

fn ids(s: &Sweep) -> Vec<String> {
    s.cases.iter().map(|c| c.id.clone()).collect()
}

/// The shipped sweep: 5 x 3 x 2 cases, first key slowest, distinct ids that
/// depend only on the values (not on the order of keys or list entries).
#[test]
fn cartesian_expansion_and_stable_ids() {
    let s = Sweep::from_file(sweeps().join("slider_crank.toml")).unwrap();
    assert_eq!(s.cases.len(), 30);
    assert_eq!(
        s.keys,
        [
            "generator.elements",
            "generator.omega0",
            "integrator.scheme"
        ]
    );
    let show = |k: usize| {
        s.cases[k]
            .values
            .iter()
            .map(|(_, v)| v.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(show(0), "2 60.0 \"midpoint\"");
    assert_eq!(show(1), "2 60.0 \"generalized-alpha(0.8)\"");
    assert_eq!(show(2), "2 120.0 \"midpoint\"");
    assert_eq!(show(29), "32 180.0 \"generalized-alpha(0.8)\"");
    assert!(s.cases.iter().enumerate().all(|(k, c)| c.index == k));
    assert_eq!(ids(&s).into_iter().collect::<HashSet<_>>().len(), 30);
    let id = &s.cases[1].id;
    let (readable, hash) = id.rsplit_once('_').unwrap();
    assert_eq!(
        readable,
        "elements-2_omega0-60.0_scheme-generalized-alpha-0.8"
    );
    assert!(
        hash.len() == 8 && hash.chars().all(|c| c.is_ascii_hexdigit()),
        "{id}"
    );
    let again = Sweep::from_file(sweeps().join("slider_crank.toml")).unwrap();
    assert_eq!(ids(&s), ids(&again));

    // Keys and list entries reordered: the same set of (values -> id).
    let reordered = parse(
        r#"base = "../slider_crank_flexible.toml"
[parameters]
integrator.scheme = ["generalized-alpha(0.8)", "midpoint"]
generator.omega0 = [180.0, 60.0, 120.0]
generator.elements = [32, 16, 8, 4, 2]
"#,
    );
    assert_ne!(ids(&s), ids(&reordered), "expansion order differs");
    for c in &s.cases {
        let twin = reordered
            .cases
            .iter()
            .find(|r| r.id == c.id)
            .expect("same id after reordering");
        for (k, v) in &c.values {
            assert_eq!(twin.value(k), Some(v));
        }
    }
}

/// `[[case]]` tables: one case each, keys in order of first appearance, a
/// parameter a case does not set left out of its id; bad sweeps are errors
/// naming file and line.
#[test]
fn explicit_cases_and_sweep_errors() {
    let s = parse(
        r#"base = "../slider_crank_flexible.toml"
[[case]]
generator.elements = 2
[[case]]
generator.elements = 2
generator.omega0 = 120.0
[[case]]
integrator.scheme = "midpoint"
"#,
    );
    assert_eq!(s.cases.len(), 3);
    assert_eq!(
        s.keys,
        [
            "generator.elements",
            "generator.omega0",
            "integrator.scheme"
        ]
    );
    assert_eq!(s.cases[0].value("generator.omega0"), None);
    assert_eq!(ids(&s).into_iter().collect::<HashSet<_>>().len(), 3);
    assert_eq!(
        s.sets(&s.cases[1]),
        ["generator.elements=2", "generator.omega0=120.0"]
    );
    // The same values in a cartesian sweep give the same id.
    let c = parse(
        r#"base = "../slider_crank_flexible.toml"
[parameters]
generator.omega0 = [120.0]
generator.elements = [2]
"#,
    );
    assert_eq!(c.cases[0].id, s.cases[1].id);

    let e = error(
        "base = \"../slider_crank_flexible.toml\"\n[[case]]\ngenerator.elements = 2\n[[case]]\ngenerator.elements = 2\n",
    );
    assert!(e.starts_with("test.toml:4: case 2 repeats case 1"), "{e}");
    let e =
        error("base = \"../slider_crank_flexible.toml\"\n\n[parameters]\ngenerator.elements = 4\n");
    assert!(
        e.starts_with("test.toml:3: [parameters] 'generator.elements': expected a non-empty list"),
        "{e}"
    );
    let e = error("base = \"../slider_crank_flexible.toml\"\n");
    assert!(e.contains("no cases"), "{e}");
    let e = error("base = \"missing.toml\"\n[parameters]\nx = [1]\n");
    assert!(
        e.starts_with("test.toml:1: cannot read the base model"),
        "{e}"
    );
    let e = error("base = \"../slider_crank_flexible.toml\"\nbogus = 1\n");
    assert!(e.starts_with("test.toml:2: unknown field `bogus`"), "{e}");
}

/// Shard I of N runs the cases k with k mod N = I: for N = 1..7 every case
/// of the shipped sweep is in exactly one shard.
#[test]
fn shards_cover_every_case_once() {
    let s = Sweep::from_file(sweeps().join("slider_crank.toml")).unwrap();
    for n in 1..=7 {
        let mut seen = vec![0; s.cases.len()];
        for i in 0..n {
            let shard: Shard = format!("{i}/{n}").parse().unwrap();
            for c in s.cases.iter().filter(|c| shard.contains(c.index)) {
                seen[c.index] += 1;
            }
        }
        assert!(seen.iter().all(|&k| k == 1), "N = {n}: {seen:?}");
    }
    for bad in ["3/3", "-1/2", "a/2", "1/0", "1", "0/"] {
        assert!(bad.parse::<Shard>().is_err(), "{bad}");
    }
}

/// One CSV record split into fields (RFC 4180 quoting).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(String::new()),
            _ => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

/// summary.csv as (header, rows).
fn read_summary(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().map(csv_fields);
    let header = lines.next().unwrap();
    (header, lines.collect())
}

fn options(out: &Path, jobs: usize) -> BatchOptions {
    BatchOptions {
        out: out.to_path_buf(),
        jobs,
        threads: 0,
        shard: Shard::ALL,
        resume: false,
        stop: None,
        force: false,
    }
}

fn run(sweep: &Sweep, out: &Path, jobs: usize) -> Vec<CaseResult> {
    run_batch(sweep, &options(out, jobs), &|_| {}).unwrap()
}

/// Checks that `<dir>/<stem>.h5` holds the table of `<dir>/<stem>.csv`: one
/// dataset per column (`n_text` string columns first, then f64 with NaN for
/// an empty cell, compared bit for bit with the parsed cell) and the column
/// order in the `columns` attribute.
fn assert_h5_matches_csv(dir: &Path, stem: &str, n_text: usize) {
    let (header, rows) = read_summary(&dir.join(format!("{stem}.csv")));
    let h5 = Hdf5Reader::open(dir.join(format!("{stem}.h5"))).unwrap();
    let columns = h5
        .root_attrs()
        .unwrap()
        .into_iter()
        .find(|(n, _)| n == "columns")
        .map(|(_, v)| v);
    assert_eq!(columns, Some(AttrValue::Str(header.join("\n"))));
    for (j, name) in header.iter().enumerate() {
        let ds = path_component(name);
        assert_eq!(h5.shape(&ds).unwrap(), [rows.len()], "{name}");
        if j < n_text {
            let cells: Vec<String> = rows.iter().map(|r| r[j].clone()).collect();
            assert_eq!(h5.strings(&ds).unwrap(), cells, "{name}");
        } else {
            let values = h5.f64s(&ds).unwrap();
            for (r, x) in rows.iter().zip(values) {
                let want = if r[j].is_empty() {
                    f64::NAN
                } else {
                    r[j].parse::<f64>().unwrap()
                };
                assert_eq!(x.to_bits(), want.to_bits(), "{name}: {x} vs '{}'", r[j]);
            }
        }
    }
}

/// min, max, max |.|, time of max |.| (first), final of a probe history.
fn probe_stats(time: &[f64], x: &[f64]) -> [(&'static str, f64); 5] {
    let mut k_abs = 0;
    for (k, v) in x.iter().enumerate() {
        if v.abs() > x[k_abs].abs() {
            k_abs = k;
        }
    }
    [
        ("min", x.iter().copied().fold(f64::INFINITY, f64::min)),
        ("max", x.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
        ("max_abs", x[k_abs].abs()),
        ("t_max_abs", time[k_abs]),
        ("final", *x.last().unwrap()),
    ]
}

/// The summary quantities recomputed from a case's file (every step recorded):
/// steps, Newton iterations, max |E - E0 - W| / |E0|, max constraint
/// violation at position, velocity and acceleration level.
fn from_file(h: &Hdf5Run) -> (u64, u64, f64, [f64; 3]) {
    let e0 = h.energy[0].total;
    let scale = if e0.abs() > 0.0 { e0.abs() } else { 1.0 };
    let energy = h
        .energy
        .iter()
        .map(|e| ((e.total - e0 - e.external_work) / scale).abs())
        .fold(0.0, f64::max);
    let max =
        |level: fn(&ConstraintNorms) -> f64| h.constraints.iter().map(level).fold(0.0, f64::max);
    let violations = [
        max(|c| c.position),
        max(|c| c.velocity),
        max(|c| c.acceleration),
    ];
    let iterations = h.newton[1..].iter().map(|n| u64::from(n.iterations)).sum();
    (*h.step.last().unwrap(), iterations, energy, violations)
}

/// The 4-case smoke sweep completes on 1 and 2 threads with identical files
/// and summaries, and every summary value equals the one recomputed from the
/// case's HDF5 file.
#[test]
fn smoke_sweep_matches_its_files_and_is_independent_of_jobs() {
    let sweep = Sweep::from_file(sweeps().join("slider_crank_smoke.toml")).unwrap();
    assert_eq!(sweep.cases.len(), 4);
    let (out1, out2) = (scratch("smoke_j1"), scratch("smoke_j2"));
    let r1 = run(&sweep, &out1, 1);
    let r2 = run(&sweep, &out2, 2);
    let (header, rows) = read_summary(&out1.join("summary.csv"));
    assert_eq!(
        header,
        [
            "case",
            "generator.elements",
            "integrator.scheme",
            "status",
            "failure_reason",
            "steps",
            "t_end_reached",
            "newton_iterations",
            "newton_iterations_per_step",
            "wall_seconds",
            "max_rel_energy_change",
            "max_position_violation",
            "max_velocity_violation",
            "max_acceleration_violation",
            "midpoint_deflection.min",
            "midpoint_deflection.max",
            "midpoint_deflection.max_abs",
            "midpoint_deflection.t_max_abs",
            "midpoint_deflection.final",
            "stats.newton_iterations",
            "stats.factorizations",
            "stats.nreject",
            "stats.backtracks"
        ]
    );
    assert_eq!(rows.len(), 4);
    assert_h5_matches_csv(&out1, "summary", 5);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for (k, (a, b)) in r1.iter().zip(&r2).enumerate() {
        assert_eq!(a.case, sweep.cases[k]);
        assert_eq!(a.case, b.case);
        assert_eq!(a.failure, None, "{}", a.line());
        let (sa, sb) = (a.summary.as_ref().unwrap(), b.summary.as_ref().unwrap());
        assert_eq!(sa.steps, 200);
        assert_eq!(
            (
                sa.steps,
                sa.newton_iterations,
                sa.max_rel_energy_change.to_bits(),
                sa.max_position_violation.to_bits()
            ),
            (
                sb.steps,
                sb.newton_iterations,
                sb.max_rel_energy_change.to_bits(),
                sb.max_position_violation.to_bits()
            ),
            "jobs = 1 and 2 differ for {}",
            a.case.id
        );
        let (h1, h2) = (
            read_hdf5_run(a.output.as_ref().unwrap()).unwrap(),
            read_hdf5_run(b.output.as_ref().unwrap()).unwrap(),
        );
        assert_eq!(h1.u, h2.u);
        assert_eq!(h1.lambda, h2.lambda);
        assert_eq!(h1.status, "completed");
        assert_eq!(h1.time.len(), 201, "every step recorded");

        let row = &rows[k];
        assert_eq!(row[col("case")], a.case.id);
        assert_eq!(
            a.output.as_ref().unwrap(),
            &out1.join(format!("{}.h5", a.case.id))
        );
        assert_eq!(row[col("status")], h1.status);
        assert_eq!(row[col("failure_reason")], h1.failure_reason);
        let (steps, iterations, energy, violations) = from_file(&h1);
        let num = |name: &str| row[col(name)].parse::<f64>().unwrap();
        assert_eq!(row[col("steps")].parse::<u64>().unwrap(), steps);
        assert_eq!(
            row[col("newton_iterations")].parse::<u64>().unwrap(),
            iterations
        );
        assert_eq!(
            num("newton_iterations_per_step"),
            iterations as f64 / steps as f64
        );
        assert_eq!(num("t_end_reached"), h1.t_end_reached);
        assert_eq!(num("max_rel_energy_change"), energy);
        assert_eq!(num("max_position_violation"), violations[0]);
        assert_eq!(num("max_velocity_violation"), violations[1]);
        assert_eq!(num("max_acceleration_violation"), violations[2]);
        // The new levels are nonzero, so a column left empty or zero would show.
        assert!(violations[1] > 0.0 && violations[2] > 0.0, "{violations:?}");
        assert!(energy > 0.0 && energy < 1e-6, "{energy}");
        assert_eq!(num("wall_seconds"), sa.wall_seconds);
        // Probe cells: the file's attributes, and recomputed from /probes/<name>.
        let file = Hdf5Reader::open(a.output.as_ref().unwrap()).unwrap();
        let attrs = file.root_attrs().unwrap();
        let history = file.f64s("probes/midpoint_deflection").unwrap();
        assert_eq!(history.len(), 201);
        for (stat, x) in probe_stats(&h1.time, &history) {
            let name = format!("midpoint_deflection.{stat}");
            let attr = attrs
                .iter()
                .find(|(n, _)| *n == format!("probe.{name}"))
                .map(|(_, v)| v.clone());
            assert_eq!(attr, Some(AttrValue::F64(num(&name))), "{name}");
            assert_eq!(num(&name).to_bits(), x.to_bits(), "{name}");
        }
        assert!(num("midpoint_deflection.max_abs") > 1e-3);
        // The method's statistics: the file's attributes `stats.<name>`.
        for name in [
            "newton_iterations",
            "factorizations",
            "nreject",
            "backtracks",
        ] {
            let attr = attrs
                .iter()
                .find(|(n, _)| *n == format!("stats.{name}"))
                .map(|(_, v)| v.clone());
            let cell = row[col(&format!("stats.{name}"))].parse::<i64>().unwrap();
            assert_eq!(attr, Some(AttrValue::I64(cell)), "stats.{name}");
        }
        assert_eq!(num("stats.newton_iterations"), iterations as f64);
        // The parameters, and the model text in the file carries them.
        let elements = a.case.value("generator.elements").unwrap().to_string();
        assert_eq!(row[col("generator.elements")], elements);
        assert!(
            h1.model.contains(&format!("elements = {elements}")),
            "{}",
            h1.model
        );
        let scheme = a.case.value("integrator.scheme").unwrap().as_str().unwrap();
        assert_eq!(row[col("integrator.scheme")], scheme);
        assert!(h1.model.contains(&format!("scheme = \"{scheme}\"")));
    }
}

/// A case whose model does not build and one whose Newton iteration fails are
/// recorded as failed with their reasons; the other cases complete.
#[test]
fn failing_cases_do_not_stop_the_others() {
    let sweep = parse(
        r#"base = "../slider_crank_flexible.toml"
[set]
integrator.t_end = 0.001
output.every = 1
[[case]]
generator.elements = 2
[[case]]
generator.elements = -1
[[case]]
integrator.max_iter = 1
[[case]]
generator.elements = 4
"#,
    );
    let out = scratch("failing");
    let r = run(&sweep, &out, 2);
    let status: Vec<&str> = r.iter().map(|c| c.status()).collect();
    assert_eq!(status, ["completed", "failed", "failed", "completed"]);
    let build = r[1].failure.as_deref().unwrap();
    assert!(build.contains("expected usize"), "{build}");
    assert!(r[1].summary.is_none() && r[1].output.is_none());
    let newton = r[2].failure.as_deref().unwrap();
    assert!(newton.contains("Newton failed at step 1"), "{newton}");
    let h = read_hdf5_run(r[2].output.as_ref().unwrap()).unwrap();
    assert_eq!(h.status, "failed");
    assert_eq!(h.failure_reason, newton);

    let (header, rows) = read_summary(&out.join("summary.csv"));
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(rows[1][col("status")], "failed");
    assert_eq!(
        rows[1][col("failure_reason")],
        build,
        "quoted reason reads back"
    );
    assert_eq!(rows[1][col("steps")], "");
    assert_eq!(rows[1][col("generator.elements")], "-1");
    assert_eq!(rows[2][col("failure_reason")], newton);
    assert_eq!(rows[2][col("steps")], "0");
    assert_eq!(
        rows[2][col("generator.elements")],
        "",
        "not set by that case"
    );
    assert_eq!(rows[3][col("status")], "completed");
    assert_eq!(rows[3][col("steps")], "100");
    // No run: no probe summary; a run that failed at step 1 has one (of step 0).
    assert_eq!(rows[1][col("midpoint_deflection.max")], "");
    assert_eq!(rows[2][col("midpoint_deflection.max")], "0e0");
    assert_h5_matches_csv(&out, "summary", sweep.keys.len() + 3);
}

/// A sweep of 4 short cases for resume tests: two that set `t_end`
/// themselves, one that fails (one Newton iteration allowed), one that takes
/// `t_end` from `[set]`.
fn resume_sweep(t_end: &str) -> Sweep {
    parse(&format!(
        r#"base = "../slider_crank_flexible.toml"
[set]
integrator.t_end = {t_end}
output.every = 3
[[case]]
generator.elements = 2
integrator.t_end = 0.001
[[case]]
generator.elements = 4
integrator.t_end = 0.001
[[case]]
generator.elements = 2
integrator.max_iter = 1
[[case]]
generator.elements = 3
"#
    ))
}

fn mtime(p: &Path) -> std::time::SystemTime {
    std::fs::metadata(p).unwrap().modified().unwrap()
}

/// `--resume` after a `[set]` change that alters one case's model text:
/// the two unchanged completed cases are skipped (files untouched, rows
/// identical to the first run's, wall time included), the failed case and
/// the changed case run again, and the summary equals a fresh run of the
/// changed sweep in every column except the wall time of rerun cases.
#[test]
fn resume_skips_completed_cases_and_reruns_failed_and_changed_ones() {
    let (out, fresh) = (scratch("resume"), scratch("resume_fresh"));
    let first = resume_sweep("0.001");
    let r1 = run(&first, &out, 2);
    let status: Vec<&str> = r1.iter().map(|c| c.status()).collect();
    assert_eq!(status, ["completed", "completed", "failed", "completed"]);
    let (_, rows1) = read_summary(&out.join("summary.csv"));
    let files: Vec<PathBuf> = r1.iter().map(|r| r.output.clone().unwrap()).collect();
    let times: Vec<_> = files.iter().map(|f| mtime(f)).collect();
    std::thread::sleep(std::time::Duration::from_millis(20));

    let changed = resume_sweep("0.0012");
    assert_eq!(ids(&first), ids(&changed), "[set] is not part of the ids");
    let mut opts = options(&out, 2);
    opts.resume = true;
    let r2 = run_batch(&changed, &opts, &|_| {}).unwrap();
    let resumed: Vec<bool> = r2.iter().map(|r| r.resumed).collect();
    assert_eq!(resumed, [true, true, false, false]);
    for k in 0..2 {
        assert_eq!(mtime(&files[k]), times[k], "skipped case {k} untouched");
    }
    for k in 2..4 {
        assert_ne!(mtime(&files[k]), times[k], "case {k} ran again");
    }
    assert_eq!(r2[2].status(), "failed");
    assert_eq!(r2[3].summary.as_ref().unwrap().steps, 120);
    let (header, rows2) = read_summary(&out.join("summary.csv"));
    assert_eq!(rows2[..2], rows1[..2], "skipped rows as first written");
    assert_h5_matches_csv(&out, "summary", changed.keys.len() + 3);

    run(&changed, &fresh, 1);
    let (header_f, rows_f) = read_summary(&fresh.join("summary.csv"));
    assert_eq!(header, header_f);
    let wall = header.iter().position(|h| h == "wall_seconds").unwrap();
    for (a, b) in rows2.iter().zip(&rows_f) {
        for (j, (x, y)) in a.iter().zip(b).enumerate() {
            if j != wall {
                assert_eq!(x, y, "{}: column {}", a[0], header[j]);
            }
        }
    }

    // A file of a run that did not finish (killed: status "running") reruns.
    let h = Hdf5Reader::open(&files[0]).unwrap();
    assert!(h
        .root_attrs()
        .unwrap()
        .contains(&("status".to_string(), AttrValue::Str("completed".into()))));
    drop(h);
    std::fs::write(&files[0], b"not an HDF5 file").unwrap();
    let r3 = run_batch(&changed, &opts, &|_| {}).unwrap();
    let resumed: Vec<bool> = r3.iter().map(|r| r.resumed).collect();
    assert_eq!(resumed, [false, true, false, true]);
    assert_eq!(read_hdf5_run(&files[0]).unwrap().status, "completed");
}

/// Cases run largest first (DOFs x steps; equal costs in expansion order),
/// and a stop request (what Ctrl-C sets) starts no further case: the summary
/// then holds exactly the finished cases, in both files.
#[test]
fn largest_first_and_stop_leaves_a_consistent_summary() {
    let sweep = Sweep::from_file(sweeps().join("slider_crank_smoke.toml")).unwrap();
    let out = scratch("order");
    let order = Mutex::new(Vec::new());
    run_batch(&sweep, &options(&out, 1), &|r| {
        order.lock().unwrap().push(r.case.index)
    })
    .unwrap();
    assert_eq!(*order.lock().unwrap(), [2, 3, 0, 1], "4 elements first");

    let out = scratch("stop");
    let stop = Arc::new(AtomicBool::new(false));
    let mut opts = options(&out, 1);
    opts.stop = Some(Arc::clone(&stop));
    let done = run_batch(&sweep, &opts, &|_| stop.store(true, Ordering::SeqCst)).unwrap();
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].case.index, 2);
    let (_, rows) = read_summary(&out.join("summary.csv"));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][0], done[0].case.id);
    assert_eq!(rows[0][3], "completed");
    assert_h5_matches_csv(&out, "summary", 5);
    assert!(!out.join("summary.csv.tmp").exists() && !out.join("summary.h5.tmp").exists());
}

/// Three shards run separately into one folder, then merged: the merged
/// summary equals the unsharded one in every column but the wall time, and
/// a missing shard is reported with its cases.
#[test]
fn merged_shards_equal_the_unsharded_summary() {
    let sweep = Sweep::from_file(sweeps().join("slider_crank_smoke.toml")).unwrap();
    let (whole, sharded) = (scratch("merge_whole"), scratch("merge_shards"));
    run(&sweep, &whole, 2);
    for i in 0..3 {
        let mut opts = options(&sharded, 1);
        opts.shard = Shard { index: i, count: 3 };
        run_batch(&sweep, &opts, &|_| {}).unwrap();
        assert_h5_matches_csv(&sharded, &format!("summary-{i}-of-3"), 5);
    }
    assert!(!sharded.join("summary.csv").exists());
    let report = merge_shards(&sweep, &sharded, 3).unwrap();
    assert_eq!(report.cases, 4);
    assert!(report.missing_cases.is_empty() && report.missing_shards.is_empty());
    let (h1, rows1) = read_summary(&whole.join("summary.csv"));
    let (h2, rows2) = read_summary(&sharded.join("summary.csv"));
    assert_eq!(h1, h2);
    assert_eq!(rows1.len(), rows2.len());
    let wall = h1.iter().position(|h| h == "wall_seconds").unwrap();
    for (a, b) in rows1.iter().zip(&rows2) {
        for (j, (x, y)) in a.iter().zip(b).enumerate() {
            if j != wall {
                assert_eq!(x, y, "{}: column {}", a[0], h1[j]);
            }
        }
    }
    assert_h5_matches_csv(&sharded, "summary", 5);

    // Shard 1 of 3 holds case 1: without its file, case 1 is missing.
    std::fs::remove_file(sharded.join("summary-1-of-3.csv")).unwrap();
    let report = merge_shards(&sweep, &sharded, 3).unwrap();
    assert_eq!(report.cases, 3);
    assert_eq!(report.missing_shards, ["summary-1-of-3.csv"]);
    assert_eq!(report.missing_cases, [sweep.cases[1].id.clone()]);
    let (_, rows) = read_summary(&sharded.join("summary.csv"));
    assert_eq!(rows.len(), 3);

    // A shard summary of another sweep is an error naming the file.
    let other = parse(
        "base = \"../slider_crank_flexible.toml\"\n[parameters]\ngenerator.omega0 = [60.0]\n",
    );
    let e = merge_shards(&other, &sharded, 3).unwrap_err().to_string();
    assert!(
        e.contains("summary-0-of-3.csv: line 1: the header does not start"),
        "{e}"
    );
}

/// The command line: `flexmb batch --shard` twice into one folder, then
/// `flexmb batch-merge` (shard count found in the folder): exit 0 and the
/// merged files; with a shard missing, exit 6 and the missing cases named;
/// `--resume` skips every completed case.
#[test]
fn cli_shards_merge_and_resume() {
    let exe = env!("CARGO_BIN_EXE_flexmb");
    let sweep = sweeps().join("slider_crank_smoke.toml");
    let out = scratch("cli_merge");
    let flexmb = |args: &[&str]| {
        let o = std::process::Command::new(exe).args(args).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (s, o) = (sweep.to_str().unwrap(), out.to_str().unwrap());
    for shard in ["0/2", "1/2"] {
        let (code, stdout, stderr) =
            flexmb(&["batch", s, "--out", o, "--shard", shard, "--jobs", "1"]);
        assert_eq!(code, Some(0), "{stdout}{stderr}");
        assert!(stdout.contains("batch overhead"), "{stdout}");
    }
    let (code, stdout, stderr) = flexmb(&["batch-merge", s, "--out", o]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("4 of 4 cases from 2 shards"), "{stdout}");
    assert!(out.join("summary.csv").is_file() && out.join("summary.h5").is_file());

    let (code, stdout, _) = flexmb(&["batch", s, "--out", o, "--shard", "0/2", "--resume"]);
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains("2 cases: 2 completed (2 of them skipped by --resume), 0 failed"),
        "{stdout}"
    );

    std::fs::remove_file(out.join("summary-1-of-2.csv")).unwrap();
    let (code, _, stderr) = flexmb(&["batch-merge", s, "--out", o, "--shards", "2"]);
    assert_eq!(code, Some(6), "{stderr}");
    assert!(stderr.contains("missing shard summary"), "{stderr}");
    let missing = Sweep::from_file(&sweep).unwrap().cases[1].id.clone();
    assert!(
        stderr.contains(&format!("missing case: {missing}")),
        "{stderr}"
    );
    let (code, _, stderr) = flexmb(&["batch-merge", s, "--out", o, "--shards", "1"]);
    assert_eq!(code, Some(5), "{stderr}");
    assert!(stderr.contains("merging needs N >= 2 shards"), "{stderr}");
}

/// A real Ctrl-C (SIGINT) to `flexmb batch --jobs 1` after the first case
/// line: the running case finishes, no further case starts, the exit code is
/// 130 and the summary lists exactly the finished cases.
#[cfg(unix)]
#[test]
fn cli_sigint_stops_scheduling_and_keeps_the_summary() {
    use std::io::BufRead;
    let out = scratch("cli_sigint");
    std::fs::create_dir_all(&out).unwrap();
    let base = root().join("models/slider_crank_flexible.toml");
    let sweep = out.join("sweep.toml");
    std::fs::write(
        &sweep,
        format!(
            "base = {:?}\n[set]\nintegrator.t_end = 0.04\n[parameters]\ngenerator.elements = [2, 4, 6, 8]\n",
            base.to_str().unwrap()
        ),
    )
    .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_flexmb"))
        .args(["batch", sweep.to_str().unwrap(), "--jobs", "1", "--out"])
        .arg(out.join("run"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("elements-8"), "largest first: {first}");
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(130), "{rest:?}");
    let finished = 1 + rest.iter().filter(|l| l.contains(": completed |")).count();
    assert!(finished < 4, "{rest:?}");
    assert!(
        rest.iter()
            .any(|l| l.contains(&format!("interrupted: {} cases not run", 4 - finished))),
        "{rest:?}"
    );
    let (_, rows) = read_summary(&out.join("run/summary.csv"));
    assert_eq!(rows.len(), finished);
    assert_h5_matches_csv(&out.join("run"), "summary", 4);
}

/// The case count against its limits: past the soft limit (default 1e4) an
/// error naming the count and the limit, located at `max_cases` when that
/// set it; `max_cases` raises it, `force` lifts it; the hard limit holds
/// whatever is given. Checked before the cases are expanded.
#[test]
fn case_count_limits() {
    let list = |n: usize| (0..n).map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
    let text = |max: &str| {
        format!(
            "base = \"../slider_crank_flexible.toml\"\n{max}\n[parameters]\n\
             generator.elements = [{}]\nintegrator.max_iter = [{}]\n",
            list(101),
            list(100)
        )
    };
    let e = error(&text(""));
    assert!(
        e.contains("the sweep has 10100 cases, more than the limit of 10000"),
        "{e}"
    );
    let e = error(&text("max_cases = 500"));
    assert!(e.starts_with("test.toml:2:"), "{e}");
    assert!(e.contains("more than the limit of 500"), "{e}");
    let raised = parse(&text("max_cases = 20000"));
    assert_eq!(raised.cases.len(), 10100);
    let forced = Sweep::from_str_with(&text(""), "test.toml", &sweeps(), true).unwrap();
    assert_eq!(forced.cases, raised.cases);
    // Past the hard limit, even forced.
    let huge = format!(
        "base = \"../slider_crank_flexible.toml\"\n[parameters]\na = [{l}]\nb = [{l}]\nc = [{l}]\n",
        l = list(1000)
    );
    let e = Sweep::from_str_with(&huge, "test.toml", &sweeps(), true)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("1.000e9 cases, more than the limit of 1e7"),
        "{e}"
    );
}

/// A case whose estimated output exceeds its `[output] max_bytes` refuses
/// the whole batch before any case runs (no file, no summary row), naming
/// the case and the estimate; `force` lifts the limit.
#[test]
fn case_past_its_output_limit_refuses_the_batch_before_any_case_runs() {
    let text = r#"
base = "../slider_crank_flexible.toml"
[set]
integrator.dt = 1e-5
integrator.t_end = 0.002
[parameters]
generator.elements = [2, 4]
output.max_bytes = [1e9, 1e5]
"#;
    let sweep = parse(text);
    let out = scratch("output_limit");
    let e = run_batch(&sweep, &options(&out, 2), &|_| {}).expect_err("refused");
    assert!(matches!(e, BatchError::CaseOutput { .. }), "{e}");
    let m = e.to_string();
    for word in [
        "case elements-2_max_bytes-100000.0_",
        "21 recorded rows",
        "limit of 1.000e5 bytes",
        "no case ran",
    ] {
        assert!(m.contains(word), "missing '{word}': {m}");
    }
    let h5: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x == "h5" || x == "csv")
        })
        .filter(|e| !e.file_name().to_string_lossy().starts_with("summary"))
        .collect();
    assert!(h5.is_empty(), "case files written: {h5:?}");
    let forced = BatchOptions {
        force: true,
        ..options(&out, 2)
    };
    let results = run_batch(&sweep, &forced, &|_| {}).unwrap();
    assert_eq!(results.len(), 4);
    assert!(results.iter().all(|r| r.failure.is_none()));
}

/// Runs the flexmb binary in `dir`: (exit code, stdout, stderr).
fn flexmb_in(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_flexmb"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `batch --emit slurm` with a relative sweep and output folder: the three
/// files under `OUT/slurm/`, every path in them absolute (the binary that
/// emitted them, the sweep, the output folder), the array, cores and time
/// given; bad options are clear errors (exit 2) and write nothing.
#[test]
fn cli_emit_slurm_scripts_and_bad_options() {
    let dir = scratch("emit_slurm");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        sweeps().join("slider_crank_smoke.toml"),
        dir.join("smoke.toml"),
    )
    .unwrap();
    std::fs::copy(
        root().join("models/slider_crank_flexible.toml"),
        dir.parent().unwrap().join("slider_crank_flexible.toml"),
    )
    .unwrap();
    let args = [
        "batch",
        "smoke.toml",
        "--emit",
        "slurm",
        "--shards",
        "3",
        "--cpus-per-task",
        "2",
        "--time",
        "1-0:30",
        "--out",
        "res",
    ];
    let (code, stdout, stderr) = flexmb_in(&dir, &args);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let slurm = dir.join("res/slurm");
    assert!(stdout.contains("4 cases in 3 array tasks"), "{stdout}");
    assert!(stdout.contains(&format!("submit: {}", slurm.join("submit.sh").display())));
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_flexmb")).unwrap();
    let (exe, sweep, out) = (
        exe.to_str().unwrap(),
        dir.join("smoke.toml"),
        dir.join("res"),
    );
    let array = std::fs::read_to_string(slurm.join("array.sbatch")).unwrap();
    for line in [
        "#SBATCH --array=0-2\n".to_string(),
        "#SBATCH --cpus-per-task=2\n".into(),
        "#SBATCH --time=1-00:30:00\n".into(),
        "#SBATCH --job-name=flexmb-smoke\n".into(),
        format!(
            "exec '{exe}' batch '{}' --shard \"${{SLURM_ARRAY_TASK_ID}}/3\" --resume",
            sweep.display()
        ),
        format!(
            "--jobs \"${{SLURM_CPUS_PER_TASK:-2}}\" --threads 1 --out '{}' --quiet\n",
            out.display()
        ),
    ] {
        assert!(array.contains(&line), "missing {line:?} in\n{array}");
    }
    let merge = std::fs::read_to_string(slurm.join("merge.sbatch")).unwrap();
    assert!(merge.contains(&format!(
        "exec '{exe}' batch-merge '{}' --out '{}' --shards 3\n",
        sweep.display(),
        out.display()
    )));
    let submit = std::fs::read_to_string(slurm.join("submit.sh")).unwrap();
    assert!(
        submit.contains("--dependency=afterok:\"$array\""),
        "{submit}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(slurm.join("submit.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }

    let cases: [(&[&str], &str); 10] = [
        (
            &["--emit", "slurm", "--shards", "0"],
            "--shards 0: a job array needs at least 2 tasks",
        ),
        (
            &["--emit", "slurm", "--shards", "5"],
            "--shards 5: the sweep has 4 cases",
        ),
        (
            &["--emit", "slurm", "--time", "2:99"],
            "--time '2:99': seconds 99 is not below 60",
        ),
        (
            &["--emit", "slurm", "--time", "1h"],
            "expected minutes M, M:S, H:M:S",
        ),
        (
            &["--emit", "slurm", "--cpus-per-task", "0"],
            "--cpus-per-task 0",
        ),
        (&["--emit", "pbs"], "--emit 'pbs': expected slurm or k8s"),
        (
            &["--emit", "slurm", "--merge-after", "later"],
            "expected ok or any",
        ),
        (
            &["--emit", "slurm", "--flexmb", "no/such/flexmb"],
            "--flexmb no/such/flexmb: no such file",
        ),
        (
            &["--emit", "slurm", "--shard", "0/2"],
            "cannot be used with",
        ),
        (&["--shards", "2"], "--emit <slurm|k8s>"),
    ];
    for (extra, want) in cases {
        let mut a = vec!["batch", "smoke.toml", "--out", "bad"];
        a.extend_from_slice(extra);
        let (code, stdout, stderr) = flexmb_in(&dir, &a);
        assert_eq!(code, Some(2), "{extra:?}: {stdout}{stderr}");
        assert!(stderr.contains(want), "{extra:?}: {stderr}");
        assert!(!dir.join("bad").exists(), "{extra:?} wrote files");
    }
}

/// The emitted Slurm scripts run without Slurm: each array task's script
/// with its `SLURM_ARRAY_TASK_ID`, then the merge script, give the
/// unsharded run's summary (the parameter and result columns but the wall
/// times); `submit.sh` with a fake `sbatch` submits the array, then the
/// merge with `--dependency=afterany:<array id>`, or only the tasks given.
#[cfg(unix)]
#[test]
fn emitted_slurm_scripts_run_the_sweep() {
    let dir = scratch("emit_run");
    let sweep = sweeps().join("slider_crank_smoke.toml");
    let (s, out) = (sweep.to_str().unwrap(), dir.join("res"));
    let o = out.to_str().unwrap();
    let (code, stdout, stderr) = flexmb_in(
        root(),
        &[
            "batch",
            s,
            "--emit",
            "slurm",
            "--shards",
            "2",
            "--out",
            o,
            "--merge-after",
            "any",
        ],
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let script = |name: &str, env: &[(&str, &str)]| {
        let out = std::process::Command::new("bash")
            .arg(out.join("slurm").join(name))
            .envs(env.iter().copied())
            .current_dir("/")
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for task in ["0", "1"] {
        script(
            "array.sbatch",
            &[("SLURM_ARRAY_TASK_ID", task), ("SLURM_CPUS_PER_TASK", "1")],
        );
    }
    let merged = script("merge.sbatch", &[]);
    assert!(merged.contains("4 of 4 cases from 2 shards"), "{merged}");
    let whole = dir.join("whole");
    run(&Sweep::from_file(&sweep).unwrap(), &whole, 2);
    let strip = |p: &Path| {
        let (header, rows) = read_summary(p);
        let wall = header.iter().position(|h| h == "wall_seconds").unwrap();
        rows.into_iter()
            .map(|mut r| {
                r.remove(wall);
                r
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        strip(&out.join("summary.csv")),
        strip(&whole.join("summary.csv"))
    );

    // submit.sh against a stand-in sbatch that logs its arguments.
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = dir.join("sbatch.log");
    let fake = bin.join("sbatch");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nn=$(wc -l < '{}')\necho \"$((41 + n));cluster\"\n",
            log.display(),
            log.display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    assert_eq!(script("submit.sh", &[("PATH", &path)]), "42 43\n");
    let slurm = out.join("slurm");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls,
        format!(
            "--parsable {}\n--parsable --dependency=afterany:42 {}\n",
            slurm.join("array.sbatch").display(),
            slurm.join("merge.sbatch").display()
        )
    );
    let again = std::process::Command::new("bash")
        .arg(slurm.join("submit.sh"))
        .arg("1")
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&again.stdout), "44 45\n");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(
        calls.ends_with(&format!(
            "--parsable --array=1 {}\n--parsable --dependency=afterany:44 {}\n",
            slurm.join("array.sbatch").display(),
            slurm.join("merge.sbatch").display()
        )),
        "{calls}"
    );
}

/// `batch --emit k8s`: both manifests parse as YAML (serde_norway) into an
/// indexed Job of N pods, each running shard `$JOB_COMPLETION_INDEX/N` with
/// the given cores and time limit on the claimed volume mounted at the
/// output folder, and a merge Job running `batch-merge` with the same paths.
#[test]
fn cli_emit_k8s_manifests_parse() {
    use serde_norway::Value;
    let dir = scratch("emit_k8s");
    let sweep = sweeps().join("slider_crank.toml");
    let (s, o) = (sweep.to_str().unwrap(), dir.join("out \"q\""));
    let (code, stdout, stderr) = flexmb_in(
        root(),
        &[
            "batch",
            s,
            "--emit",
            "k8s",
            "--shards",
            "6",
            "--cpus-per-task",
            "4",
            "--time",
            "90",
            "--out",
            o.to_str().unwrap(),
            "--flexmb",
            env!("CARGO_BIN_EXE_flexmb"),
            "--image",
            "registry.example/flexmb:1.0",
            "--claim",
            "sweeps",
        ],
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("30 cases in 6 indexed pods"), "{stdout}");
    let load = |name: &str| -> Value {
        let text = std::fs::read_to_string(o.join("k8s").join(name)).unwrap();
        serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"))
    };
    let str_of = |v: &Value| {
        v.as_str()
            .unwrap_or_else(|| panic!("not a string: {v:?}"))
            .to_string()
    };
    let exe = std::path::absolute(env!("CARGO_BIN_EXE_flexmb")).unwrap();
    let (exe, out) = (exe.to_str().unwrap(), o.to_str().unwrap());

    let job = load("shards.yaml");
    assert_eq!(job["apiVersion"], "batch/v1");
    assert_eq!(job["kind"], "Job");
    assert_eq!(job["metadata"]["name"], "flexmb-slider-crank");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["completions"].as_u64(), Some(6));
    assert_eq!(spec["parallelism"].as_u64(), Some(6));
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    assert_eq!(pod["activeDeadlineSeconds"].as_u64(), Some(5400));
    let c = &pod["containers"][0];
    assert_eq!(c["image"], "registry.example/flexmb:1.0");
    assert_eq!(c["resources"]["requests"]["cpu"], "4");
    assert_eq!(c["resources"]["limits"]["cpu"], "4");
    let cmd: Vec<String> = c["command"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(str_of)
        .collect();
    assert_eq!(cmd[..2], ["sh", "-c"]);
    assert_eq!(
        cmd[2],
        format!(
            "exec '{exe}' batch '{s}' --shard \"${{JOB_COMPLETION_INDEX}}/6\" --resume --jobs 4 --threads 1 \
             --out '{out}' --quiet"
        )
    );
    assert_eq!(c["volumeMounts"][0]["mountPath"].as_str(), Some(out));
    assert_eq!(
        pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
        "sweeps"
    );

    let merge = load("merge.yaml");
    assert_eq!(merge["kind"], "Job");
    assert_eq!(merge["metadata"]["name"], "flexmb-slider-crank-merge");
    let pod = &merge["spec"]["template"]["spec"];
    let c = &pod["containers"][0];
    let cmd: Vec<String> = c["command"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(str_of)
        .collect();
    assert_eq!(cmd, [exe, "batch-merge", s, "--out", out, "--shards", "6"]);
    assert_eq!(c["volumeMounts"][0]["mountPath"].as_str(), Some(out));
    assert_eq!(
        pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
        "sweeps"
    );
}
