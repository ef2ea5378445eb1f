//! Sweep files: a base model and the `--set` values to vary, expanded into
//! cases with stable ids (format in `docs/batch.md`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::{Spanned, Table, Value};

use crate::input::{read_text, ModelError, ModelSpec};

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepSpec {
    base: Spanned<String>,
    #[serde(default)]
    set: Option<Spanned<Table>>,
    #[serde(default)]
    parameters: Option<Spanned<Table>>,
    #[serde(default)]
    case: Vec<Spanned<Table>>,
    /// Raises (or lowers) the soft limit [`DEFAULT_MAX_CASES`].
    #[serde(default)]
    max_cases: Option<Spanned<u64>>,
}

/// Default soft limit of a sweep's case count (the sweep file's `max_cases`
/// changes it, `flexmb batch --force` lifts it): every case gets its own
/// HDF5 file and its model is built before the first case runs.
pub const DEFAULT_MAX_CASES: u64 = 10_000;

/// The most cases a sweep may have even with `--force` or `max_cases`: the
/// expanded cases alone would need gigabytes of memory beyond it.
pub const HARD_MAX_CASES: u64 = 10_000_000;

/// One case of a sweep: the `--set` values it applies on top of the base model.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Position in the expansion (0-based); decides the shard.
    pub index: usize,
    /// Stable id, also the name of its HDF5 file (see [`case_id`]).
    pub id: String,
    /// `(key, value)` pairs in the sweep's key order.
    pub values: Vec<(String, Value)>,
}

impl Case {
    /// The value of `key`, if this case sets it.
    pub fn value(&self, key: &str) -> Option<&Value> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// An expanded sweep.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// The sweep file name (for messages).
    pub file: String,
    /// The base model file, resolved against the sweep file's folder.
    pub base: PathBuf,
    /// The base model's text.
    pub base_text: String,
    /// `[set]`: values applied to every case before its own (not part of the ids).
    pub fixed: Vec<(String, Value)>,
    /// Every parameter key, in order of first appearance.
    pub keys: Vec<String>,
    /// The cases, in expansion order.
    pub cases: Vec<Case>,
}

impl Sweep {
    /// Reads a sweep file and its base model; a sweep of more cases than its
    /// soft limit (`max_cases`, default 10,000) is an error.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Sweep, ModelError> {
        Sweep::from_file_with(path, false)
    }

    /// [`Sweep::from_file`]; `force` lifts the soft limit of the case count
    /// (not the hard limit of 1e7 cases).
    pub fn from_file_with(path: impl AsRef<Path>, force: bool) -> Result<Sweep, ModelError> {
        let path = path.as_ref();
        let (file, text) = read_text(path, "sweep file")?;
        Sweep::from_str_with(&text, &file, path.parent().unwrap_or(Path::new("")), force)
    }

    /// Parses sweep text; `file` names it in messages and `dir` is the folder
    /// the `base` path is relative to. The case count is checked as by
    /// [`Sweep::from_file`].
    pub fn from_str(text: &str, file: &str, dir: &Path) -> Result<Sweep, ModelError> {
        Sweep::from_str_with(text, file, dir, false)
    }

    /// [`Sweep::from_str`]; `force` lifts the soft limit of the case count.
    /// The count (the product of the `[parameters]` list lengths, or the
    /// number of `[[case]]` tables) is checked before the cases are expanded.
    pub fn from_str_with(
        text: &str,
        file: &str,
        dir: &Path,
        force: bool,
    ) -> Result<Sweep, ModelError> {
        let error = |offset: Option<usize>, message: String| ModelError {
            file: file.to_string(),
            line: offset.map(|o| text[..o.min(text.len())].matches('\n').count() + 1),
            message,
        };
        let spec: SweepSpec = toml::from_str(text)
            .map_err(|e| error(e.span().map(|s| s.start), e.message().trim().to_string()))?;
        let base = dir.join(spec.base.get_ref());
        let base_text = std::fs::read_to_string(&base).map_err(|e| {
            error(
                Some(spec.base.span().start),
                format!("cannot read the base model {}: {e}", base.display()),
            )
        })?;
        let fixed = match &spec.set {
            Some(t) => flatten(t.get_ref()),
            None => Vec::new(),
        };
        let (keys, values) = match (&spec.parameters, spec.case.is_empty()) {
            (Some(p), true) => {
                let lists = flatten(p.get_ref());
                let mut ranges = Vec::with_capacity(lists.len());
                for (key, list) in &lists {
                    match list {
                        Value::Array(a) if !a.is_empty() => ranges.push(a.as_slice()),
                        _ => {
                            return Err(error(
                                Some(p.span().start),
                                format!(
                                    "[parameters] '{key}': expected a non-empty list of values"
                                ),
                            ))
                        }
                    }
                }
                let count = ranges.iter().fold(1.0, |n: f64, r| n * r.len() as f64);
                check_count(count, spec.max_cases.as_ref(), force)
                    .map_err(|(at, m)| error(Some(at.unwrap_or(p.span().start)), m))?;
                let keys: Vec<String> = lists.iter().map(|(k, _)| k.clone()).collect();
                let values = cartesian(&ranges)
                    .into_iter()
                    .map(|row| keys.iter().cloned().zip(row).collect())
                    .collect();
                (keys, values)
            }
            (None, false) => {
                check_count(spec.case.len() as f64, spec.max_cases.as_ref(), force)
                    .map_err(|(at, m)| error(Some(at.unwrap_or(spec.case[0].span().start)), m))?;
                let values: Vec<Vec<(String, Value)>> =
                    spec.case.iter().map(|c| flatten(c.get_ref())).collect();
                let mut keys: Vec<String> = Vec::new();
                for (key, _) in values.iter().flatten() {
                    if !keys.contains(key) {
                        keys.push(key.clone());
                    }
                }
                (keys, values)
            }
            (Some(p), false) => {
                return Err(error(
                    Some(p.span().start),
                    "give either [parameters] (a cartesian product) or [[case]] tables, not both"
                        .into(),
                ))
            }
            (None, true) => {
                return Err(error(
                    None,
                    "no cases: give [parameters] (lists of values) or [[case]] tables".into(),
                ))
            }
        };
        let mut cases: Vec<Case> = Vec::with_capacity(values.len());
        let mut seen: HashMap<String, usize> = HashMap::with_capacity(values.len());
        for (index, values) in values.into_iter().enumerate() {
            let id = case_id(&values);
            if let Some(other) = seen.get(&id).map(|&k| &cases[k]) {
                let at = spec.case.get(index).map(|c| c.span().start);
                return Err(error(
                    at,
                    format!(
                        "case {} repeats case {} (id {id}): every case must differ",
                        index + 1,
                        other.index + 1
                    ),
                ));
            }
            seen.insert(id.clone(), index);
            cases.push(Case { index, id, values });
        }
        let sweep = Sweep {
            file: file.to_string(),
            base,
            base_text,
            fixed,
            keys,
            cases,
        };
        sweep.check_keys().map_err(|m| error(None, m))?;
        Ok(sweep)
    }

    /// Every key of `[set]` and of the cases must name a model-file value:
    /// the base model with a case's assignments applied must parse (unknown
    /// fields are errors there), checked once per distinct key list, before
    /// any case runs. Values are each case's own business.
    fn check_keys(&self) -> Result<(), String> {
        let mut checked: Vec<Vec<&str>> = Vec::new();
        for case in &self.cases {
            let keys: Vec<&str> = case.values.iter().map(|(k, _)| k.as_str()).collect();
            if checked.contains(&keys) {
                continue;
            }
            let sets = self.sets(case);
            crate::input::apply_sets(&self.base_text, &sets)
                .and_then(|text| {
                    toml::from_str::<ModelSpec>(&text)
                        .map(|_| ())
                        .map_err(|e| e.message().trim().to_string())
                })
                .map_err(|m| {
                    format!(
                        "case {} ({}) does not fit the base model {}: {m}",
                        case.index + 1,
                        case.id,
                        self.base.display()
                    )
                })?;
            checked.push(keys);
        }
        Ok(())
    }

    /// The `KEY=VALUE` assignments of `case` for [`crate::input::apply_sets`]:
    /// `[set]` first, then the case's own values.
    pub fn sets(&self, case: &Case) -> Vec<String> {
        self.fixed
            .iter()
            .chain(&case.values)
            .map(|(k, v)| format!("{k}={v}"))
            .collect()
    }
}

/// Refuses a case count above the soft limit (`max_cases`, default
/// [`DEFAULT_MAX_CASES`]; lifted by `force`) or above [`HARD_MAX_CASES`]:
/// the message names the count and the limit, located at `max_cases` when
/// that set the limit.
fn check_count(
    count: f64,
    max_cases: Option<&Spanned<u64>>,
    force: bool,
) -> Result<(), (Option<usize>, String)> {
    if count > HARD_MAX_CASES as f64 {
        return Err((
            None,
            format!("the sweep has {count:.3e} cases, more than the limit of {HARD_MAX_CASES:.0e}"),
        ));
    }
    let (limit, at) = match max_cases {
        Some(m) => (*m.get_ref(), Some(m.span().start)),
        None => (DEFAULT_MAX_CASES, None),
    };
    if !force && count > limit as f64 {
        return Err((
            at,
            format!(
                "the sweep has {count:.0} cases, more than the limit of {limit} \
                 (`max_cases`); raise max_cases or give --force"
            ),
        ));
    }
    Ok(())
}

/// Flattens nested tables into dotted keys (`generator.elements`), in the order written.
fn flatten(table: &Table) -> Vec<(String, Value)> {
    fn walk(table: &Table, prefix: &str, out: &mut Vec<(String, Value)>) {
        for (k, v) in table {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                Value::Table(t) => walk(t, &key, out),
                _ => out.push((key, v.clone())),
            }
        }
    }
    let mut out = Vec::new();
    walk(table, "", &mut out);
    out
}

/// Every combination of one value per list; the first list varies slowest
/// (nested loops in the order the keys are written).
fn cartesian(lists: &[&[Value]]) -> Vec<Vec<Value>> {
    let mut rows: Vec<Vec<Value>> = vec![Vec::new()];
    for list in lists {
        rows = rows
            .iter()
            .flat_map(|row| {
                list.iter().map(move |v| {
                    let mut r = row.clone();
                    r.push(v.clone());
                    r
                })
            })
            .collect();
    }
    rows
}

/// The stable id of a case: its `key-value` pairs sorted by key (last key
/// segment, value with characters outside `[A-Za-z0-9.+-]` replaced by `-`)
/// joined by `_`, then `_` and 8 hex digits of the 64-bit FNV-1a hash of the
/// exact canonical text `key=value,key=value` (keys sorted, values as TOML).
/// Sorting makes the id independent of key order and expansion order; the
/// hash keeps ids of cases whose readable parts coincide distinct.
pub fn case_id(values: &[(String, Value)]) -> String {
    let mut sorted: Vec<&(String, Value)> = values.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let canonical = sorted
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let readable = sorted
        .iter()
        .map(|(k, v)| {
            let name = k.rsplit('.').next().unwrap_or(k);
            let value = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let clean: String = value
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-') {
                        c
                    } else {
                        '-'
                    }
                })
                .collect();
            format!("{name}-{}", clean.trim_matches('-'))
        })
        .collect::<Vec<_>>()
        .join("_");
    let readable: String = readable.chars().take(120).collect();
    let hash = (fnv1a64(canonical.as_bytes()) >> 32) as u32;
    if readable.is_empty() {
        format!("case_{hash:08x}")
    } else {
        format!("{readable}_{hash:08x}")
    }
}

/// 64-bit FNV-1a (Fowler, Noll, Vo; offset basis 0xcbf29ce484222325, prime
/// 0x100000001b3): a hash fixed by its definition, so ids do not change
/// between Rust versions or machines.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
