//! Structured fuzzing of the model-file front end on stable Rust (issue #13
//! item 6): shipped models mutated field by field, numbers at the extremes,
//! truncated and random TOML, fed through parse, build, the linear solver's
//! analysis, the integrator's construction and a few steps of `run`,
//! in-process.
//!
//! Property: no panic, no hang (every case ends within [`CASE_LIMIT`]), and
//! every failure is a typed error naming the file, with no Rust debug
//! formatting in the message. The default run executes
//! [`DEFAULT_CASES`] cases per strategy; `cargo test --release --test fuzz --
//! --ignored` runs [`LONG_CASES`] (or `FLEXMB_FUZZ_CASES`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Duration;

use flexmb::input::load_model_str;
use flexmb::integrate::IntegratorSpec;
use flexmb::linalg::SaddlePointSolver;
use flexmb::output::NullRecorder;
use flexmb::run::Simulation;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Cases per strategy in the default test run.
const DEFAULT_CASES: u32 = 2400;
/// Cases per strategy in the `#[ignore]` long run.
const LONG_CASES: u32 = 800_000;
/// Wall-clock bound of one case (parse, build, a few steps).
const CASE_LIMIT: Duration = Duration::from_secs(5);
/// Fixed steps run per case (adaptive methods run to the same end time).
const STEPS: f64 = 3.0;
/// Most steps of an adaptive method per case (`max_steps`).
const MAX_ADAPTIVE_STEPS: u64 = 20_000;
/// End time of adaptive methods' runs.
const ADAPTIVE_END: f64 = 0.01;
/// Name under which the mutated text is loaded; every error must name it.
const FILE: &str = "fuzzed.toml";

/// The shipped models, the seeds of the mutations.
fn shipped() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/models");
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// Values at the extremes (and of the wrong type) substituted for numbers.
const EXTREMES: &[&str] = &[
    "0",
    "-0.0",
    "-1",
    "1",
    "2",
    "1e-300",
    "-1e-300",
    "1e300",
    "-1e300",
    "1e20",
    "nan",
    "inf",
    "-inf",
    "4294967297",
    "18446744073709551615",
    "-9223372036854775808",
    "0.5",
    "1e-13",
    "\"x\"",
    "true",
    "[]",
    "[1, 2]",
    "{}",
];

/// Byte ranges of the number literals of `text` outside comments and strings.
fn number_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let code = line.split('#').next().unwrap_or("");
        let bytes = code.as_bytes();
        let mut i = 0;
        let mut in_string = false;
        while i < bytes.len() {
            let c = bytes[i];
            if c == b'"' {
                in_string = !in_string;
                i += 1;
                continue;
            }
            let starts = !in_string
                && (c.is_ascii_digit()
                    || (c == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)))
                && (i == 0
                    || !(bytes[i - 1].is_ascii_alphanumeric()
                        || bytes[i - 1] == b'_'
                        || bytes[i - 1] == b'.'));
            if starts {
                let mut j = i + 1;
                while j < bytes.len()
                    && (bytes[j].is_ascii_digit() || b".eE+-_".contains(&bytes[j]))
                {
                    j += 1;
                }
                spans.push((offset + i, offset + j));
                i = j;
            } else {
                i += 1;
            }
        }
        offset += line.len();
    }
    spans
}

/// One mutation of a shipped model.
#[derive(Debug, Clone)]
enum Mutation {
    /// Replace the `k`-th number (modulo their count) with an extreme value.
    Number { k: usize, value: &'static str },
    /// Replace the `k`-th number with a random finite value.
    Random { k: usize, value: f64 },
    /// Delete line `k`.
    DeleteLine(usize),
    /// Duplicate line `k`.
    DuplicateLine(usize),
    /// Cut the text after `k` bytes.
    Truncate(usize),
    /// Rename the key of line `k` (an unknown field).
    RenameKey(usize),
}

fn apply(text: &str, m: &Mutation) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    if lines.is_empty() && !matches!(m, Mutation::Number { .. } | Mutation::Random { .. }) {
        // An empty text (truncated to nothing) has no line to change.
        return String::new();
    }
    let replace = |k: usize, value: &str| {
        let spans = number_spans(text);
        if spans.is_empty() {
            return text.to_string();
        }
        let (a, b) = spans[k % spans.len()];
        format!("{}{value}{}", &text[..a], &text[b..])
    };
    match *m {
        Mutation::Number { k, value } => replace(k, value),
        Mutation::Random { k, value } => replace(k, &format!("{value:e}")),
        Mutation::DeleteLine(k) => {
            let k = k % lines.len();
            lines
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != k)
                .map(|(_, l)| *l)
                .collect()
        }
        Mutation::DuplicateLine(k) => {
            let k = k % lines.len();
            let mut out = String::new();
            for (i, l) in lines.iter().enumerate() {
                out.push_str(l);
                if i == k {
                    out.push_str(l);
                }
            }
            out
        }
        Mutation::Truncate(k) => {
            let mut k = k % (text.len() + 1);
            while !text.is_char_boundary(k) {
                k -= 1;
            }
            text[..k].to_string()
        }
        Mutation::RenameKey(k) => {
            let k = k % lines.len();
            let mut out = String::new();
            for (i, l) in lines.iter().enumerate() {
                if i == k && l.contains('=') {
                    out.push_str(&l.replacen('=', "_typo =", 1));
                } else {
                    out.push_str(l);
                }
            }
            out
        }
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), prop::sample::select(EXTREMES))
            .prop_map(|(k, value)| Mutation::Number { k, value }),
        2 => (any::<usize>(), prop_oneof![any::<f64>(), -1e3..1e3f64])
            .prop_map(|(k, value)| Mutation::Random { k, value }),
        1 => any::<usize>().prop_map(Mutation::DeleteLine),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => any::<usize>().prop_map(Mutation::RenameKey),
    ]
}

/// Random TOML built from the schema's vocabulary.
fn random_toml() -> impl Strategy<Value = String> {
    let section = prop::sample::select(vec![
        "[integrator]",
        "[output]",
        "[[nodes]]",
        "[[elements]]",
        "[[joints]]",
        "[[loads]]",
        "[[bodies]]",
        "[[probes]]",
        "[generator]",
        "[gravity]",
        "[model]",
        "[[points]]",
    ]);
    let key = prop::sample::select(vec![
        "id",
        "type",
        "nodes",
        "node",
        "x",
        "y",
        "z",
        "mass",
        "ea",
        "ei",
        "length",
        "dt",
        "t_end",
        "scheme",
        "option",
        "method",
        "rtol",
        "stiffness",
        "damping",
        "g",
        "value",
        "time",
        "amplitude",
        "frequency",
        "interval",
        "elements",
        "size",
        "schema",
        "title",
        "body",
        "inertia",
        "position",
        "n",
    ]);
    let value = prop_oneof![
        prop::sample::select(EXTREMES).prop_map(str::to_string),
        any::<f64>().prop_map(|v| format!("{v:e}")),
        (0u32..20).prop_map(|v| v.to_string()),
        "[a-z0-9]{0,6}".prop_map(|s| format!("\"{s}\"")),
        prop::collection::vec(-10.0..10.0f64, 0..4).prop_map(|v| format!("{v:?}")),
    ];
    let line = prop_oneof![
        1 => section.prop_map(str::to_string),
        4 => (key, value).prop_map(|(k, v)| format!("{k} = {v}")),
        1 => ".{0,20}",
    ];
    prop::collection::vec(line, 0..30).prop_map(|l| l.join("\n"))
}

/// How one case ended.
#[derive(Debug)]
enum Outcome {
    /// Parsed, built and ran its few steps.
    Ran,
    /// Refused with a message.
    Refused(String),
}

/// Parse, build, analyse and run a few steps of `text`.
fn exercise(text: &str) -> Outcome {
    let file = match load_model_str(text, FILE) {
        Ok(f) => f,
        Err(e) => {
            assert_eq!(e.file, FILE, "the error names the file");
            return Outcome::Refused(e.to_string());
        }
    };
    let config = match file.integrator(&IntegratorSpec::default()) {
        Ok(c) => c,
        Err(e) => return Outcome::Refused(e.to_string()),
    };
    // Fixed-step methods run STEPS steps; adaptive ones (whose `dt` is their
    // largest step, possibly infinite) to the same end or 0.01 s.
    let t_stop = config.t_end.min(STEPS * config.dt).min(ADAPTIVE_END);
    let short = IntegratorSpec {
        t_end: Some(t_stop),
        max_steps: Some(MAX_ADAPTIVE_STEPS),
        ..IntegratorSpec::default()
    };
    let config = match file.integrator(&short) {
        Ok(c) => c,
        Err(e) => return Outcome::Refused(e.to_string()),
    };
    let sim = Simulation::new(file.model);
    if let Err(e) = SaddlePointSolver::new(sim.asm.pattern(), false) {
        return Outcome::Refused(e.to_string());
    }
    // Nothing is kept per step: memory stays bounded however many steps a
    // case takes.
    let mut rec = NullRecorder;
    match sim.run(&config, &file.text, &file.output, &mut rec, &mut |_| {}) {
        Ok(summary) => match summary.failure {
            Some(f) => Outcome::Refused(f.to_string()),
            None => Outcome::Ran,
        },
        Err(e) => Outcome::Refused(e.to_string()),
    }
}

/// Runs one case on a worker thread with a time bound; panics and hangs
/// become test failures naming the input.
fn check_case(text: String) -> Result<(), TestCaseError> {
    // A case that kills the process (out of memory) cannot report itself:
    // with FLEXMB_FUZZ_LOG set, each input is written there before it runs.
    if let Ok(path) = std::env::var("FLEXMB_FUZZ_LOG") {
        let _ = std::fs::write(path, &text);
    }
    let (tx, rx) = mpsc::channel();
    let input = text.clone();
    std::thread::spawn(move || {
        let r = catch_unwind(AssertUnwindSafe(|| exercise(&input)));
        let _ = tx.send(r.map_err(|p| {
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        }));
    });
    match rx.recv_timeout(CASE_LIMIT) {
        Ok(Ok(Outcome::Ran)) => Ok(()),
        Ok(Ok(Outcome::Refused(message))) => {
            prop_assert!(!message.is_empty(), "empty error message");
            for debug in ["Some(", "None", "Err(", "Ok("] {
                prop_assert!(
                    !message.contains(debug),
                    "debug formatting `{debug}` in the message: {message}\n--- input ---\n{text}"
                );
            }
            Ok(())
        }
        Ok(Err(panic)) => Err(TestCaseError::fail(format!(
            "panic: {panic}\n--- input ---\n{text}"
        ))),
        Err(_) => Err(TestCaseError::fail(format!(
            "no result within {CASE_LIMIT:?}\n--- input ---\n{text}"
        ))),
    }
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

fn fuzz(cases: u32) {
    // Panics are caught and reported with their input; keep the log quiet
    // while the cases run, and restore the hook before reporting.
    let models = shipped();
    let n = models.len();
    std::panic::set_hook(Box::new(|_| {}));
    let mutated = runner(cases).run(&((0..n), mutation(), mutation()), |(i, m1, m2)| {
        check_case(apply(&apply(&models[i], &m1), &m2))
    });
    let random = runner(cases / 4).run(&random_toml(), check_case);
    let _ = std::panic::take_hook();
    mutated.unwrap();
    random.unwrap();
}

fn cases_from_env(default: u32) -> u32 {
    std::env::var("FLEXMB_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

#[test]
fn mutated_models_fail_cleanly() {
    fuzz(cases_from_env(DEFAULT_CASES));
}

#[test]
#[ignore = "long: about a million cases"]
fn mutated_models_fail_cleanly_long() {
    fuzz(cases_from_env(LONG_CASES));
}

/// Found by the long run (a 1/100 slice passed; the whole run, case
/// (8, Truncate(6659510365927282598), RenameKey(0))): a line mutation of a
/// text truncated to nothing divided by its zero line count. The empty text
/// stays empty, and the model front end refuses it cleanly.
#[test]
fn line_mutations_of_an_empty_text() {
    for m in [
        Mutation::DeleteLine(3),
        Mutation::DuplicateLine(3),
        Mutation::RenameKey(0),
        Mutation::Truncate(6659510365927282598),
    ] {
        assert_eq!(apply("", &m), "");
    }
    let models = shipped();
    let truncated = apply(&models[0], &Mutation::Truncate(0));
    assert_eq!(truncated, "");
    check_case(apply(&truncated, &Mutation::RenameKey(0))).unwrap();
}

#[test]
fn number_spans_find_values_not_names() {
    let t = "a1 = 2.5e-3 # 7\nb = [-1, 3]\nc = \"9\"\n";
    let spans: Vec<&str> = number_spans(t).iter().map(|&(a, b)| &t[a..b]).collect();
    assert_eq!(spans, ["2.5e-3", "-1", "3"]);
}

/// Every number of every shipped model replaced, one at a time, by every
/// value of [`EXTREMES`]: the exhaustive single mutations, all failures
/// collected.
#[test]
fn every_number_at_every_extreme() {
    let models = shipped();
    let mut failures = Vec::new();
    let mut cases = 0;
    for text in &models {
        for k in 0..number_spans(text).len() {
            for &value in EXTREMES {
                cases += 1;
                let input = apply(text, &Mutation::Number { k, value });
                if let Err(e) = check_case(input) {
                    let (a, b) = number_spans(text)[k];
                    let line = text[..a].lines().count();
                    let first = text.lines().next().unwrap_or("");
                    let reason = e.to_string();
                    let reason = reason.lines().next().unwrap_or("");
                    failures.push(format!(
                        "{first} | line {line}: {} -> {value}: {reason}",
                        &text[a..b]
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} cases failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
