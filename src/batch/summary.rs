//! The summary table of a batch: rows built from case results or read back
//! from shard summaries, written as `summary.csv` and `summary.h5` through a
//! temporary file and a rename, so a reader (or an interrupted batch) never
//! sees a half-written summary.

use std::path::{Path, PathBuf};

use super::case::{BatchError, CaseResult};
use super::shard::Shard;
use super::sweep::Sweep;
use crate::output::{write_table, TableColumn};

/// The summary columns after the case id and the parameters.
pub(super) const COLUMNS: [&str; 11] = [
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
];

/// The file stem of a shard's summary: `summary` for the whole sweep,
/// `summary-I-of-N` for shard I of N > 1 (so shards can share a folder).
pub fn summary_stem(shard: Shard) -> String {
    if shard.count == 1 {
        "summary".into()
    } else {
        format!("summary-{}-of-{}", shard.index, shard.count)
    }
}

/// The CSV summary file of a shard ([`summary_stem`] + `.csv`); its HDF5
/// twin is the same stem + `.h5`.
pub fn summary_file_name(shard: Shard) -> String {
    format!("{}.csv", summary_stem(shard))
}

/// One row of the summary: the case's position in the sweep, the cells of
/// the fixed columns (`case`, the parameters, [`COLUMNS`]), its probe cells
/// `(<probe>.<stat>, value)` and its method's statistics `(stats.<name>, value)`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Row {
    /// Position of the case in the expansion (rows are sorted by it).
    pub index: usize,
    /// `case`, one cell per parameter key, then one per [`COLUMNS`] entry.
    pub fixed: Vec<String>,
    /// Probe summary cells, in the model's probe order, then the method's
    /// statistics in its order.
    pub probes: Vec<(String, String)>,
}

impl Row {
    /// The row of a finished case; numbers in Rust's shortest round-trip
    /// form (`{}` or `{:e}`), empty cells where a case has no run or does not
    /// set a parameter.
    pub fn from_result(sweep: &Sweep, r: &CaseResult) -> Row {
        let params = sweep.keys.iter().map(|k| match r.case.value(k) {
            Some(toml::Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => String::new(),
        });
        let run: Vec<String> = match &r.summary {
            Some(s) => vec![
                s.steps.to_string(),
                s.t_end_reached.to_string(),
                s.newton_iterations.to_string(),
                s.iterations_per_step().to_string(),
                s.wall_seconds.to_string(),
                format!("{:e}", s.max_rel_energy_change),
                format!("{:e}", s.max_position_violation),
                format!("{:e}", s.max_velocity_violation),
                format!("{:e}", s.max_acceleration_violation),
            ],
            None => vec![String::new(); COLUMNS.len() - 2],
        };
        let fixed = std::iter::once(r.case.id.clone())
            .chain(params)
            .chain([
                r.status().to_string(),
                r.failure.clone().unwrap_or_default(),
            ])
            .chain(run)
            .collect();
        // Probe summaries, then the method's statistics (`stats.<name>`).
        let probes = r
            .summary
            .iter()
            .flat_map(|s| &s.probes)
            .flat_map(|(name, p)| {
                p.fields()
                    .map(|(stat, x)| (format!("{name}.{stat}"), format!("{x:e}")))
            })
            .chain(r.summary.iter().flat_map(|s| &s.stats).map(|(name, x)| {
                let v = if x.fract() == 0.0 && x.abs() < 1e15 {
                    format!("{x}")
                } else {
                    format!("{x:e}")
                };
                (format!("stats.{name}"), v)
            }))
            .collect();
        Row {
            index: r.case.index,
            fixed,
            probes,
        }
    }
}

/// The header of the fixed columns.
pub(super) fn fixed_header(sweep: &Sweep) -> Vec<String> {
    std::iter::once("case")
        .chain(sweep.keys.iter().map(String::as_str))
        .chain(COLUMNS)
        .map(str::to_string)
        .collect()
}

/// Number of text columns at the start of the header (`case`, the
/// parameters, `status`, `failure_reason`); the others are numbers.
fn text_columns(sweep: &Sweep) -> usize {
    sweep.keys.len() + 3
}

/// The table of `rows` (sorted by case order): the header (fixed columns,
/// then every probe column, the union over the rows in order of first
/// appearance) and one line of cells per row (empty where a row lacks a
/// probe column).
pub(super) fn table(sweep: &Sweep, rows: &[&Row]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut rows: Vec<&Row> = rows.to_vec();
    rows.sort_by_key(|r| r.index);
    let mut probe_columns: Vec<&str> = Vec::new();
    for (name, _) in rows.iter().flat_map(|r| &r.probes) {
        if !probe_columns.contains(&name.as_str()) {
            probe_columns.push(name);
        }
    }
    let mut header = fixed_header(sweep);
    header.extend(probe_columns.iter().map(|s| s.to_string()));
    let cells = rows
        .iter()
        .map(|r| {
            let mut line = r.fixed.clone();
            line.extend(probe_columns.iter().map(|c| {
                r.probes
                    .iter()
                    .find(|(n, _)| n == c)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            }));
            line
        })
        .collect();
    (header, cells)
}

/// `summary.csv` text (RFC 4180): the header, then one line per row.
fn csv_text(header: &[String], cells: &[Vec<String>]) -> String {
    let mut out = String::new();
    for line in std::iter::once(header).chain(cells.iter().map(Vec::as_slice)) {
        push_row(&mut out, line);
    }
    out
}

/// Appends one CSV record, quoting fields that contain `,`, `"` or a line break.
fn push_row(out: &mut String, fields: &[String]) {
    let fields: Vec<String> = fields
        .iter()
        .map(|f| {
            if f.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f.clone()
            }
        })
        .collect();
    out.push_str(&fields.join(","));
    out.push('\n');
}

/// The `summary.h5` columns: the text columns as strings, the others as
/// f64 (an empty cell is NaN). A cell that is not a number is an error
/// naming the file (`source`), the case and the column.
fn h5_columns(
    sweep: &Sweep,
    header: &[String],
    cells: &[Vec<String>],
    source: &Path,
) -> Result<Vec<(String, TableColumn)>, BatchError> {
    header
        .iter()
        .enumerate()
        .map(|(j, name)| {
            let column = if j < text_columns(sweep) {
                TableColumn::Str(cells.iter().map(|l| l[j].clone()).collect())
            } else {
                let numbers = cells
                    .iter()
                    .map(|l| {
                        if l[j].is_empty() {
                            Ok(f64::NAN)
                        } else {
                            l[j].parse::<f64>().map_err(|_| BatchError::Summary {
                                path: source.to_path_buf(),
                                message: format!(
                                    "case {}, column {name}: '{}' is not a number",
                                    l[0], l[j]
                                ),
                            })
                        }
                    })
                    .collect::<Result<Vec<f64>, BatchError>>()?;
                TableColumn::F64(numbers)
            };
            Ok((name.clone(), column))
        })
        .collect()
}

/// Writes `<dir>/<stem>.csv` and `<dir>/<stem>.h5` with the table of `rows`,
/// each to a temporary file first and then renamed over the old one (a
/// rename within one folder is atomic on POSIX file systems).
pub(super) fn write_summary(
    sweep: &Sweep,
    rows: &[&Row],
    dir: &Path,
    stem: &str,
) -> Result<(), BatchError> {
    let (header, cells) = table(sweep, rows);
    let csv = dir.join(format!("{stem}.csv"));
    let h5 = dir.join(format!("{stem}.h5"));
    let columns = h5_columns(sweep, &header, &cells, &csv)?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BatchError::Io { path, source }
    };
    let tmp = |p: &Path| -> PathBuf {
        let mut name = p.file_name().unwrap_or_default().to_os_string();
        name.push(".tmp");
        p.with_file_name(name)
    };
    let (csv_tmp, h5_tmp) = (tmp(&csv), tmp(&h5));
    std::fs::write(&csv_tmp, csv_text(&header, &cells)).map_err(io(&csv_tmp))?;
    write_table(&h5_tmp, &columns).map_err(|e| BatchError::Summary {
        path: h5.clone(),
        message: e.to_string(),
    })?;
    std::fs::rename(&csv_tmp, &csv).map_err(io(&csv))?;
    std::fs::rename(&h5_tmp, &h5).map_err(io(&h5))
}

/// Reads a summary CSV written by [`write_summary`] for `sweep` into rows.
/// Errors name the file and line: a header that does not start with the
/// sweep's fixed columns, a row of the wrong length, a case id that is not
/// in the sweep.
pub(super) fn read_summary(sweep: &Sweep, path: &Path) -> Result<Vec<Row>, BatchError> {
    let err = |line: Option<u64>, message: String| BatchError::Summary {
        path: path.to_path_buf(),
        message: match line {
            Some(l) => format!("line {l}: {message}"),
            None => message,
        },
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .map_err(|e| err(None, e.to_string()))?;
    let mut records = reader.records();
    let header: Vec<String> = match records.next() {
        Some(h) => h
            .map_err(|e| err(Some(1), e.to_string()))?
            .iter()
            .map(str::to_string)
            .collect(),
        None => return Err(err(None, "empty file".into())),
    };
    let fixed = fixed_header(sweep);
    if header.len() < fixed.len() || header[..fixed.len()] != fixed[..] {
        return Err(err(
            Some(1),
            format!(
                "the header does not start with this sweep's columns {}",
                fixed.join(",")
            ),
        ));
    }
    let mut rows = Vec::new();
    for (k, record) in records.enumerate() {
        let line = k as u64 + 2;
        let record = record.map_err(|e| err(Some(line), e.to_string()))?;
        let cells: Vec<String> = record.iter().map(str::to_string).collect();
        let index = sweep
            .cases
            .iter()
            .find(|c| c.id == cells[0])
            .map(|c| c.index)
            .ok_or_else(|| err(Some(line), format!("case {} is not in the sweep", cells[0])))?;
        let probes = header[fixed.len()..]
            .iter()
            .zip(&cells[fixed.len()..])
            .filter(|(_, v)| !v.is_empty())
            .map(|(n, v)| (n.clone(), v.clone()))
            .collect();
        rows.push(Row {
            index,
            fixed: cells[..fixed.len()].to_vec(),
            probes,
        });
    }
    Ok(rows)
}
