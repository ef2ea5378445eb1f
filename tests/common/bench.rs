//! `flexmb bench` cases of the tests (the `cli` feature's bench module).

use std::path::Path;

use flexmb::bench::{BenchCase, Problem};
use flexmb::integrate::IntegratorSpec;

/// A `flexmb bench` case: `problem` at `size` for `steps` steps with the
/// problem's default integrator, no output, no matrix export.
pub fn bench_case(problem: Problem, size: usize, steps: u64) -> BenchCase {
    BenchCase {
        problem,
        size,
        steps,
        integrator: IntegratorSpec::default(),
        output: None,
        export: None,
    }
}

/// [`bench_case`] writing the first Newton matrix of step `step` (and its
/// right-hand side) into `dir` (`flexmb::bench::matrix_file`).
pub fn export_case(problem: Problem, size: usize, steps: u64, dir: &Path, step: u64) -> BenchCase {
    BenchCase {
        export: Some((dir.to_path_buf(), step)),
        ..bench_case(problem, size, steps)
    }
}
