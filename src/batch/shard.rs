//! `--shard I/N`: which cases one task of a job array runs.

use std::str::FromStr;

/// Shard `index` of `count` (0-based): it runs case `k` (0-based, expansion
/// order) when `k mod count == index`, so the shards of `0..count` together
/// run every case exactly once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 0-based shard number, `< count`.
    pub index: usize,
    /// Number of shards, `>= 1`.
    pub count: usize,
}

impl Shard {
    /// The whole sweep in one shard.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Whether case `k` belongs to this shard.
    pub fn contains(&self, k: usize) -> bool {
        k % self.count == self.index
    }
}

impl FromStr for Shard {
    type Err = String;

    /// Parses `I/N` with `0 <= I < N`.
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("--shard '{s}': expected I/N with 0 <= I < N (0-based shard I of N)");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}
