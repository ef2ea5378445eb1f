//! `flexmb batch-merge`: the shard summaries of a sweep combined into one.

use std::path::Path;

use super::case::BatchError;
use super::shard::Shard;
use super::summary::{read_summary, summary_file_name, summary_stem, write_summary, Row};
use super::sweep::Sweep;

/// What [`merge_shards`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeReport {
    /// Cases in the merged summary.
    pub cases: usize,
    /// Shard summary files that do not exist (file names).
    pub missing_shards: Vec<String>,
    /// Ids of the sweep's cases that no shard summary holds, in sweep order.
    pub missing_cases: Vec<String>,
}

/// Reads `<dir>/summary-I-of-N.csv` for `I` in `0..shards` and writes their
/// rows, in sweep order, as `<dir>/summary.csv` and `<dir>/summary.h5` (the
/// same table `flexmb batch` writes for the whole sweep). A missing shard
/// file is reported, not an error; a case in two shard files, a file whose
/// header is not this sweep's or a row naming a case outside the sweep is
/// an error.
pub fn merge_shards(sweep: &Sweep, dir: &Path, shards: usize) -> Result<MergeReport, BatchError> {
    let whole = dir.join(summary_file_name(Shard::ALL));
    if shards < 2 {
        return Err(BatchError::Summary {
            path: whole,
            message: format!("--shards {shards}: merging needs N >= 2 shards"),
        });
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut missing_shards = Vec::new();
    for index in 0..shards {
        let name = summary_file_name(Shard {
            index,
            count: shards,
        });
        let path = dir.join(&name);
        if !path.is_file() {
            missing_shards.push(name);
            continue;
        }
        for row in read_summary(sweep, &path)? {
            if rows.iter().any(|r| r.index == row.index) {
                return Err(BatchError::Summary {
                    path,
                    message: format!("case {} is also in another shard's summary", row.fixed[0]),
                });
            }
            rows.push(row);
        }
    }
    let refs: Vec<&Row> = rows.iter().collect();
    write_summary(sweep, &refs, dir, &summary_stem(Shard::ALL))?;
    let missing_cases = sweep
        .cases
        .iter()
        .filter(|c| !rows.iter().any(|r| r.index == c.index))
        .map(|c| c.id.clone())
        .collect();
    Ok(MergeReport {
        cases: rows.len(),
        missing_shards,
        missing_cases,
    })
}
