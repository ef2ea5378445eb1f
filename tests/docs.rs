//! The user documentation (README.md and docs/**/*.md) speaks of the
//! published methods by author and title: no internal names of the project's
//! source documents ("seed 00x", "SPEC.md") and no paths outside the
//! repository; every `docs/...` file the README names exists.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file below docs/.
fn user_docs() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let mut files = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut files);
    files
}

/// The lines of `text` holding any of `needles` (case-insensitive), as
/// `file:line: text`.
fn offending(file: &Path, text: &str, needles: &[&str]) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let l = l.to_lowercase();
            needles.iter().any(|n| l.contains(n))
        })
        .map(|(i, l)| format!("{}:{}: {}", file.display(), i + 1, l.trim()))
        .collect()
}

#[test]
fn offending_lines_are_found() {
    let text = "ok\nas in Seed 001 §4\nsee SPEC.md §7\nthe seed002 model file\n";
    let hits = offending(Path::new("x.md"), text, &["seed 00", "spec.md"]);
    assert_eq!(
        hits,
        ["x.md:2: as in Seed 001 §4", "x.md:3: see SPEC.md §7"]
    );
}

#[test]
fn docs_cite_published_sources_not_internal_names() {
    let files = user_docs();
    assert!(files.len() > 10, "found only {files:?}");
    let mut hits = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        hits.extend(offending(
            f,
            &text,
            &["seed 00", "spec.md", "../shared/", "/work/", "notes/seeds"],
        ));
    }
    assert!(
        hits.is_empty(),
        "cite the published method (author, title; README.md \"References\") instead of:\n{}",
        hits.join("\n")
    );
}

#[test]
fn readme_names_existing_docs() {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut missing = Vec::new();
    for (i, _) in text.match_indices("docs/") {
        let name: String = text[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "/._-".contains(*c))
            .collect();
        let name = name.trim_end_matches('.');
        let file = [".md", ".png", ".csv"].iter().any(|e| name.ends_with(e));
        if file && !root().join(name).exists() {
            missing.push(name.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "README.md names missing files: {missing:?}"
    );
}
