//! The import order of `../shared/ARCHITECTURE.md` ("a module imports only
//! modules before it"), checked on the source: every `crate::<module>` path
//! in code (comments left out, unit-test modules included) names a module on
//! the same floor or a lower one.

use std::fs;
use std::path::Path;

/// Floors, lowest first, and the top-level modules on each.
const FLOORS: &[&[&str]] = &[
    &["linalg", "fmt"],
    &["rotation", "attitude", "point"],
    &["element", "joint", "load"],
    &["model"],
    &["assembly"],
    &["integrate", "statics"],
    &["output"],
    &["run"],
    &["input"],
    &["factor", "batch", "bench", "plot"],
    &["prelude"],
];

fn floor(module: &str) -> Option<usize> {
    FLOORS.iter().position(|f| f.contains(&module))
}

/// The top-level module of a file under `src/`.
fn module_of(rel: &Path) -> String {
    let first = rel.components().next().expect("a path under src");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_string()
}

/// The code of a file, its unit tests included: comment lines dropped.
fn code(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l))
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).expect("readable source tree") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The `crate::<module>` paths of a line.
fn crate_paths(line: &str) -> Vec<&str> {
    line.match_indices("crate::")
        .filter(|(i, _)| {
            // `crate::` itself, not e.g. `flexmb_crate::`.
            line[..*i]
                .chars()
                .last()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
        })
        .map(|(i, m)| {
            let rest = &line[i + m.len()..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

#[test]
fn no_module_imports_a_higher_floor() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![];
    rust_files(&src, &mut files);
    let mut upward = vec![];
    let mut unknown = vec![];
    for path in &files {
        let rel = path.strip_prefix(&src).expect("under src");
        // lib.rs declares the modules; src/bin is a crate of its own on the
        // top floor (its `crate::` is the binary, the library is `flexmb::`).
        if rel == Path::new("lib.rs") || rel.starts_with("bin") {
            continue;
        }
        let me = module_of(rel);
        let Some(mine) = floor(&me) else {
            unknown.push(rel.display().to_string());
            continue;
        };
        let text = fs::read_to_string(path).expect("readable source file");
        for (line_no, line) in code(&text) {
            for target in crate_paths(line) {
                match floor(target) {
                    Some(f) if f > mine => {
                        upward.push(format!("{}:{line_no}: {me} -> {target}", rel.display()))
                    }
                    Some(_) => {}
                    None => unknown.push(format!("{}:{line_no}: crate::{target}", rel.display())),
                }
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "modules missing from FLOORS: {unknown:#?}"
    );
    assert!(upward.is_empty(), "imports of a higher floor: {upward:#?}");
}

#[test]
fn the_checker_sees_an_upward_import() {
    let text = "use crate::output::StepRecord;\n// use crate::run::Simulation;\n";
    let paths: Vec<&str> = code(text)
        .into_iter()
        .flat_map(|(_, l)| crate_paths(l))
        .collect();
    assert_eq!(paths, ["output"]);
    assert!(floor("output") > floor("assembly"));
}
