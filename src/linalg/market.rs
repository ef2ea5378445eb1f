//! Matrix Market files of the linear systems: a sparse matrix in coordinate
//! format (read and written) and a right-hand side as a one-column array.

use std::io::{BufWriter, Write};
use std::path::Path;

use super::Pattern;

/// Writes a sparse matrix in Matrix Market coordinate format (1-based,
/// values with shortest round-trip digits).
pub fn write_matrix(path: &Path, pattern: &Pattern, values: &[f64]) -> std::io::Result<()> {
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    writeln!(w, "%%MatrixMarket matrix coordinate real general")?;
    writeln!(w, "% flexmb Newton matrix")?;
    writeln!(w, "{} {} {}", pattern.dim, pattern.dim, pattern.nnz())?;
    for c in 0..pattern.dim {
        let range = pattern.col_ptr[c]..pattern.col_ptr[c + 1];
        for (r, v) in pattern.row_idx[range.clone()].iter().zip(&values[range]) {
            writeln!(w, "{} {} {v:e}", r + 1, c + 1)?;
        }
    }
    w.flush()
}

/// Writes a vector as a one-column Matrix Market array.
pub fn write_vector(path: &Path, v: &[f64]) -> std::io::Result<()> {
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    writeln!(w, "%%MatrixMarket matrix array real general")?;
    writeln!(w, "{} 1", v.len())?;
    for x in v {
        writeln!(w, "{x:e}")?;
    }
    w.flush()
}

/// Reads a real square sparse matrix (coordinate format, `general` or
/// `symmetric`; duplicates summed) as a pattern with sorted rows and its
/// values. Errors name the file and the reason.
pub fn read_matrix(path: &Path) -> Result<(Pattern, Vec<f64>), String> {
    let tri: sprs::TriMat<f64> =
        sprs::io::read_matrix_market(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if tri.rows() != tri.cols() {
        return Err(format!(
            "{}: the matrix is {}x{}, not square",
            path.display(),
            tri.rows(),
            tri.cols()
        ));
    }
    let csc: sprs::CsMat<f64> = tri.to_csc();
    let dim = csc.cols();
    let col_ptr = csc.indptr().to_proper().into_owned();
    let (row_idx, values) = (csc.indices().to_vec(), csc.data().to_vec());
    Ok((
        Pattern {
            dim,
            col_ptr,
            row_idx,
        },
        values,
    ))
}

/// Reads a vector written by [`write_vector`] (array format, one column).
pub fn read_vector(path: &Path) -> Result<Vec<f64>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('%') && !l.trim().is_empty());
    let bad = |line: usize, why: &str| format!("{}:{}: {why}", path.display(), line + 1);
    let (i, head) = lines.next().ok_or_else(|| bad(0, "empty file"))?;
    let dims: Vec<usize> = head
        .split_whitespace()
        .map(|x| x.parse().map_err(|_| bad(i, "expected the sizes 'N 1'")))
        .collect::<Result<_, _>>()?;
    if dims.len() != 2 || dims[1] != 1 {
        return Err(bad(i, "expected the sizes 'N 1' of a one-column array"));
    }
    let mut v = Vec::with_capacity(dims[0].min(1 << 24));
    for (i, l) in lines {
        v.push(
            l.trim()
                .parse::<f64>()
                .map_err(|_| bad(i, "not a number"))?,
        );
    }
    if v.len() != dims[0] {
        return Err(format!(
            "{}: {} values, the header says {}",
            path.display(),
            v.len(),
            dims[0]
        ));
    }
    Ok(v)
}
