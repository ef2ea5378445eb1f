//! The import order of `../shared/ARCHITECTURE.md` ("a module imports only
//! modules before it"), checked on the source: every `crate::<module>` path
//! in code (comments left out, unit-test modules included) names a module on
//! the same floor or a lower one; and no two modules inside a floor import
//! each other, directly or around a circle (a module: a file or folder
//! under `src/<top>/`, or a top-level file; edges: the `crate::`, `super::`
//! and `self::` paths of its code, `use` groups expanded).

use std::fs;
use std::path::Path;

/// Floors, lowest first, and the top-level modules on each.
const FLOORS: &[&[&str]] = &[
    &["linalg", "fmt"],
    &["kinematics"],
    &["element", "joint", "load"],
    &["model"],
    &["assembly"],
    &["integrate", "statics"],
    &["modes"],
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

/// The paths of a `use` tree (`a::{b, c::{d as e}}`), `self` and renames
/// dropped, glob `*` kept.
fn expand_use(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree).trim();
        let path = path.strip_suffix("::self").unwrap_or(path);
        return vec![path.to_string()];
    };
    let close = tree.rfind('}').unwrap_or(tree.len());
    let head = &tree[..open];
    let mut parts = vec![];
    let (mut depth, mut start) = (0, open + 1);
    for (i, c) in tree.char_indices().take(close).skip(open + 1) {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&tree[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&tree[start..close]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| {
            let p = p.trim();
            if p == "self" {
                vec![head.trim_end_matches("::").to_string()]
            } else {
                expand_use(p)
                    .into_iter()
                    .map(|q| format!("{head}{q}"))
                    .collect()
            }
        })
        .collect()
}

/// The `crate::`/`super::`/`self::` paths of a file's code: its `use`
/// statements (those that begin a line) expanded, and the paths written in
/// place.
fn relative_paths(code: &str) -> Vec<String> {
    let mut paths = vec![];
    let mut offset = 0;
    for line in code.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let body = trimmed
            .strip_prefix("pub ")
            .or_else(|| {
                trimmed
                    .split_once(") ")
                    .map(|(_, r)| r)
                    .filter(|_| trimmed.starts_with("pub("))
            })
            .unwrap_or(trimmed);
        if let Some(tree) = body.strip_prefix("use ") {
            let start = offset + (line.len() - tree.len());
            if let Some(end) = code[start..].find(';') {
                paths.extend(expand_use(&code[start..start + end]));
            }
        }
        offset += line.len();
    }
    for root in ["crate::", "super::", "self::"] {
        for (i, _) in code.match_indices(root) {
            if code[..i]
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
            {
                continue;
            }
            let end = code[i..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| i + e);
            paths.push(code[i..end].trim_end_matches(':').to_string());
        }
    }
    paths
}

/// The module (its first two path segments under `src/`, or one for a
/// top-level file) of absolute path segments; `None` for a folder's root
/// (`mod.rs`: it declares and re-exports its modules).
fn node(segments: &[String]) -> Option<String> {
    match segments {
        [] => None,
        [top] => {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(top);
            (!dir.is_dir()).then(|| top.clone())
        }
        [top, sub, ..] => {
            let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(top);
            let is_module =
                src.join(format!("{sub}.rs")).is_file() || src.join(sub).join("mod.rs").is_file();
            Some(if is_module {
                format!("{top}/{sub}")
            } else {
                top.clone()
            })
            .filter(|n| n.contains('/') || !src.is_dir())
        }
    }
}

/// The module edges of the library (`from -> to`, both on one floor).
fn module_edges() -> Vec<(String, String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![];
    rust_files(&src, &mut files);
    let mut edges = vec![];
    for path in &files {
        let rel = path.strip_prefix(&src).expect("under src");
        if rel == Path::new("lib.rs") || rel.starts_with("bin") {
            continue;
        }
        // The file's own module path: folders, then the file unless mod.rs.
        let mut me: Vec<String> = rel
            .parent()
            .into_iter()
            .flat_map(|p| p.components())
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let stem = rel.file_stem().expect("a file").to_string_lossy();
        if stem != "mod" {
            me.push(stem.into_owned());
        }
        let Some(from) = node(&me) else { continue };
        let text = fs::read_to_string(path).expect("readable source file");
        let code: String = code(&text)
            .into_iter()
            .map(|(_, l)| format!("{l}\n"))
            .collect();
        for p in relative_paths(&code) {
            let mut segs: Vec<String> = vec![];
            let mut parts = p.split("::").map(str::trim).peekable();
            match parts.peek().copied() {
                Some("crate") => {
                    parts.next();
                }
                Some("self") => {
                    parts.next();
                    segs = me.clone();
                }
                Some("super") => {
                    segs = me.clone();
                    while parts.peek() == Some(&"super") {
                        parts.next();
                        segs.pop();
                    }
                }
                _ => continue,
            }
            segs.extend(parts.map(String::from));
            let Some(to) = node(&segs) else { continue };
            let top = |n: &str| n.split('/').next().map(floor);
            if to != from && top(&to) == top(&from) {
                edges.push((from.clone(), to, rel.display().to_string()));
            }
        }
    }
    edges.sort();
    edges.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    edges
}

/// The circles of a directed graph: its strongly connected components of
/// more than one node (Tarjan 1972), each sorted.
fn circles(edges: &[(String, String, String)]) -> Vec<Vec<String>> {
    let mut nodes: Vec<&str> = edges
        .iter()
        .flat_map(|(a, b, _)| [a.as_str(), b.as_str()])
        .collect();
    nodes.sort();
    nodes.dedup();
    let index = |n: &str| nodes.binary_search(&n).expect("a node");
    let mut out: Vec<Vec<usize>> = vec![vec![]; nodes.len()];
    for (a, b, _) in edges {
        out[index(a)].push(index(b));
    }
    // Reachability closure (small graphs): i and j share a circle when each
    // reaches the other.
    let reach: Vec<Vec<bool>> = (0..nodes.len())
        .map(|s| {
            let mut seen = vec![false; nodes.len()];
            let mut stack = out[s].clone();
            while let Some(v) = stack.pop() {
                if !seen[v] {
                    seen[v] = true;
                    stack.extend(&out[v]);
                }
            }
            seen
        })
        .collect();
    let mut done = vec![false; nodes.len()];
    let mut found = vec![];
    for i in 0..nodes.len() {
        if done[i] {
            continue;
        }
        let group: Vec<usize> = (0..nodes.len())
            .filter(|&j| j == i || (reach[i][j] && reach[j][i]))
            .collect();
        for &j in &group {
            done[j] = true;
        }
        if group.len() > 1 {
            found.push(group.iter().map(|&j| nodes[j].to_string()).collect());
        }
    }
    found
}

#[test]
fn no_module_cycle_inside_a_floor() {
    let edges = module_edges();
    let found = circles(&edges);
    let detail: Vec<String> = found
        .iter()
        .flat_map(|c| {
            edges
                .iter()
                .filter(|(a, b, _)| c.contains(a) && c.contains(b))
                .map(|(a, b, f)| format!("{a} -> {b} ({f})"))
        })
        .collect();
    assert!(
        found.is_empty(),
        "module circles: {found:?}; their edges: {detail:#?}"
    );
}

#[test]
fn the_checker_sees_a_circle() {
    let paths = relative_paths(
        "use super::{newton::{self, Stats}, settings::Spec as S};\nlet x = crate::a::b(1);",
    );
    assert_eq!(
        paths[..3],
        [
            "super::newton",
            "super::newton::Stats",
            "super::settings::Spec"
        ]
    );
    assert!(paths.contains(&"crate::a::b".to_string()));
    let e = |a: &str, b: &str| (a.to_string(), b.to_string(), String::new());
    let found = circles(&[
        e("x/a", "x/b"),
        e("x/b", "x/c"),
        e("x/c", "x/a"),
        e("x/c", "x/d"),
    ]);
    assert_eq!(found, [["x/a", "x/b", "x/c"]]);
    assert!(circles(&[e("x/a", "x/b"), e("x/b", "x/c")]).is_empty());
}
