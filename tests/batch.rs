//! `flexmb batch` through the library: sweep expansion and ids, shard
//! assignment, a smoke sweep run on 1 and 2 threads, failing cases, and the
//! summary checked against each case's HDF5 file read back.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use flexmb::batch::{run_batch, BatchOptions, CaseResult, Shard, Sweep};
use flexmb::output::{read_hdf5, Hdf5Run};

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

fn run(sweep: &Sweep, out: &Path, jobs: usize) -> Vec<CaseResult> {
    let opts = BatchOptions {
        out: out.to_path_buf(),
        jobs,
        shard: Shard::ALL,
    };
    run_batch(sweep, &opts, &|_| {}).unwrap()
}

/// The summary quantities recomputed from a case's file (every step recorded):
/// steps, Newton iterations, max |E - E0 - W| / |E0|, max position violation.
fn from_file(h: &Hdf5Run) -> (u64, u64, f64, f64) {
    let e0 = h.energy[0].total;
    let scale = if e0.abs() > 0.0 { e0.abs() } else { 1.0 };
    let energy = h
        .energy
        .iter()
        .map(|e| ((e.total - e0 - e.external_work) / scale).abs())
        .fold(0.0, f64::max);
    let position = h.constraints.iter().map(|c| c.position).fold(0.0, f64::max);
    let iterations = h.newton[1..].iter().map(|n| u64::from(n.iterations)).sum();
    (*h.step.last().unwrap(), iterations, energy, position)
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
            "max_position_violation"
        ]
    );
    assert_eq!(rows.len(), 4);
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
            read_hdf5(a.output.as_ref().unwrap()).unwrap(),
            read_hdf5(b.output.as_ref().unwrap()).unwrap(),
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
        let (steps, iterations, energy, position) = from_file(&h1);
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
        assert_eq!(num("max_position_violation"), position);
        assert!(energy > 0.0 && energy < 1e-6, "{energy}");
        assert_eq!(num("wall_seconds"), sa.wall_seconds);
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
    let h = read_hdf5(r[2].output.as_ref().unwrap()).unwrap();
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
}
