//! Export of one linear system the solver is given: the matrix of the first
//! factorization in a chosen step and the right-hand side of the solve that
//! follows it, written in Matrix Market for side-by-side solver benchmarks
//! (`scripts/compare_solvers.py`, `flexmb factor`).

use std::path::{Path, PathBuf};

use super::market::{write_matrix, write_vector};
use super::Pattern;

/// Which system to write and where.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixExport {
    /// The step whose first Newton matrix is written (1 = the first step; 0 =
    /// the consistent initial-acceleration system solved at the start).
    pub step: u64,
    /// The matrix file; the right-hand side goes to [`rhs_path`] of it.
    pub path: PathBuf,
}

/// `DIR/NAME.mtx` -> `DIR/NAME.rhs.mtx`: the file of the right-hand side.
pub fn rhs_path(matrix: &Path) -> PathBuf {
    let stem = matrix
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    matrix.with_file_name(format!("{stem}.rhs.mtx"))
}

/// State of an armed export inside the solver.
#[derive(Debug)]
pub(super) struct Capture {
    request: MatrixExport,
    pattern: Pattern,
    /// The step the integrator is in (set by `SaddlePointSolver::at_step`).
    pub(super) step: u64,
    /// Values of the captured factorization, waiting for its right-hand side.
    values: Option<Vec<f64>>,
    done: bool,
}

impl Capture {
    pub(super) fn new(request: MatrixExport, pattern: &Pattern) -> Self {
        Capture {
            request,
            pattern: pattern.clone(),
            step: 0,
            values: None,
            done: false,
        }
    }

    /// Called at every factorization: keeps the values of the first one of
    /// the requested step.
    pub(super) fn on_factor(&mut self, values: &[f64]) {
        if !self.done && self.values.is_none() && self.step == self.request.step {
            self.values = Some(values.to_vec());
        }
    }

    /// Called before every solve: writes the captured matrix and `rhs`.
    pub(super) fn on_solve(&mut self, rhs: &[f64]) -> std::io::Result<()> {
        if let Some(values) = self.values.take() {
            self.done = true;
            write_matrix(&self.request.path, &self.pattern, &values)?;
            write_vector(&rhs_path(&self.request.path), rhs)?;
        }
        Ok(())
    }

    /// The path of the matrix file, for error messages.
    pub(super) fn path(&self) -> &Path {
        &self.request.path
    }
}
