//! `flexmb factor`: one linear system read from Matrix Market files (the
//! Newton matrices `flexmb bench --export-matrix` writes) analysed once,
//! factored `repeat` times and solved, with the median times, the factor
//! size, the peak memory and the backward error, for side-by-side runs
//! against other sparse solvers (`scripts/compare_solvers.py`).

use std::path::Path;
use std::time::Instant;

use faer::Par;

use crate::linalg::{
    max_abs, read_matrix, read_vector, rhs_path, structurally_symmetric, BandLu, Ordering,
    OrderingCost, Pattern, SolveError, SparseLdlt, SparseLu, LDLT_MIN,
};

/// Iterative refinement steps at most (stops earlier at round-off).
pub const MAX_REFINE: usize = 3;

/// The factorization `flexmb factor` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactorPath {
    /// The engine's choice: band LU when the band is narrow, else the `LDLᵀ`
    /// with refinement when the pattern is structurally symmetric and has at
    /// least [`LDLT_MIN`] rows, else the
    /// sparse LU with the ordering of least predicted fill.
    Auto,
    /// Band LU after reverse Cuthill–McKee.
    Band,
    /// Sparse LU with this ordering (`None`: the least predicted fill).
    Sparse(Option<Ordering>),
    /// `LDLᵀ` of the symmetric part refined against the matrix, with this
    /// ordering (`None`: the fewer factor nonzeros of AMD and METIS).
    Ldlt(Option<Ordering>),
}

impl FactorPath {
    /// The path of a `flexmb factor --ordering` name: `auto`, `band`, `lu`,
    /// `colamd`, `amd`, `metis` (sparse LU), `ldlt`, `ldlt-amd`, `ldlt-metis`.
    pub fn from_name(name: &str) -> Option<FactorPath> {
        Some(match name {
            "auto" => FactorPath::Auto,
            "band" => FactorPath::Band,
            "lu" => FactorPath::Sparse(None),
            "ldlt" => FactorPath::Ldlt(None),
            "ldlt-amd" => FactorPath::Ldlt(Some(Ordering::Amd)),
            "ldlt-metis" => FactorPath::Ldlt(Some(Ordering::Metis)),
            o => FactorPath::Sparse(Some(Ordering::from_name(o)?)),
        })
    }
}

enum Lu {
    Band(Box<BandLu>),
    Sparse(Box<SparseLu>),
    /// With the refinement steps and the unrefined backward error of its last solve.
    Ldlt(Box<SparseLdlt>, usize, f64),
}

impl Lu {
    fn factor(&mut self, values: &[f64]) -> Result<(), SolveError> {
        match self {
            Lu::Band(b) => b.factor(values),
            Lu::Sparse(s) => s.factor(values),
            Lu::Ldlt(s, ..) => s.factor(values),
        }
    }
    /// A solve; the `LDLᵀ`'s includes its refinement against the matrix
    /// (left unrefined when the refinement does not converge).
    fn solve(&mut self, x: &mut [f64]) {
        match self {
            Lu::Band(b) => b.solve(x),
            Lu::Sparse(s) => s.solve(x),
            Lu::Ldlt(s, steps, plain) => {
                let b = x.to_vec();
                let r = s.solve(x);
                *steps = r.steps;
                *plain = r.first_backward_error;
                if !r.converged {
                    // The report shows the plain solve's backward error.
                    x.copy_from_slice(&b);
                    s.solve_unrefined(x);
                }
            }
        }
    }
}

/// What `flexmb factor` measured.
#[derive(Debug, Clone, PartialEq)]
pub struct FactorReport {
    /// Rows of the matrix.
    pub rows: usize,
    /// Stored entries of the matrix.
    pub nnz: usize,
    /// The solver and its ordering, e.g. `flexmb supernodal LU (metis)`.
    pub solver: String,
    /// Every ordering the analysis weighed, with its predicted cost.
    pub candidates: Vec<OrderingCost>,
    /// Symbolic analysis (orderings and structure), s.
    pub analysis_s: f64,
    /// Median numeric factorization, s.
    pub factor_s: f64,
    /// Median solve with one right-hand side, s.
    pub solve_s: f64,
    /// Predicted stored nonzeros of L + U of the chosen ordering.
    pub fill: usize,
    /// Normwise backward error `|b - A x|∞ / (|A|∞ |x|∞ + |b|∞)` of the plain solve.
    pub backward_error_plain: f64,
    /// The same after iterative refinement.
    pub backward_error: f64,
    /// Refinement steps taken.
    pub refinements: usize,
    /// Growth of the resident memory over analysis and factorizations, MiB (Linux).
    pub memory_mib: Option<f64>,
}

impl FactorReport {
    /// One JSON object on one line.
    pub fn json(&self) -> String {
        let cands: Vec<String> = self
            .candidates
            .iter()
            .map(|c| {
                // (The LDLᵀ's candidates carry no flop count: null.)
                let flops = if c.flops.is_finite() {
                    format!("{:e}", c.flops)
                } else {
                    "null".into()
                };
                format!(
                    "{{\"ordering\":\"{}\",\"fill\":{},\"flops\":{flops}}}",
                    c.ordering.name(),
                    c.fill,
                )
            })
            .collect();
        format!(
            "{{\"solver\":\"{}\",\"rows\":{},\"nnz\":{},\"analysis_s\":{:e},\"factor_s\":{:e},\
             \"solve_s\":{:e},\"fill\":{},\"backward_error_plain\":{:e},\"backward_error\":{:e},\
             \"refinements\":{},\"memory_mib\":{},\"candidates\":[{}]}}",
            self.solver,
            self.rows,
            self.nnz,
            self.analysis_s,
            self.factor_s,
            self.solve_s,
            self.fill,
            self.backward_error_plain,
            self.backward_error,
            self.refinements,
            self.memory_mib.map_or("null".into(), |m| format!("{m:.1}")),
            cands.join(",")
        )
    }
}

/// Resident memory now (`VmRSS`) and its peak (`VmHWM`), MiB (Linux).
fn rss_mib() -> Option<(f64, f64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<f64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        Some(line.split_whitespace().nth(1)?.parse::<f64>().ok()? / 1024.0)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `y = A x` for a CSC matrix.
fn matvec(col_ptr: &[usize], row_idx: &[usize], values: &[f64], x: &[f64], y: &mut [f64]) {
    y.fill(0.0);
    for (c, &xc) in x.iter().enumerate() {
        for k in col_ptr[c]..col_ptr[c + 1] {
            y[row_idx[k]] += values[k] * xc;
        }
    }
}

/// Factors the matrix in `matrix` (`repeat` >= 1 times) and solves with the
/// right-hand side in `rhs` (default: the `.rhs.mtx` beside the matrix when
/// it exists, else `A 1`) along `path`.
pub fn factor_file(
    matrix: &Path,
    rhs: Option<&Path>,
    repeat: usize,
    path: FactorPath,
    par: Par,
) -> Result<FactorReport, String> {
    let (pattern, values) = read_matrix(matrix)?;
    let n = pattern.dim;
    let b = right_hand_side(matrix, rhs, &pattern, &values)?;
    let before = rss_mib();
    let t = Instant::now();
    let mut lu = analyse(matrix, &pattern, path, par)?;
    let analysis_s = t.elapsed().as_secs_f64();
    let mut factor_times = Vec::new();
    let mut solve_times = Vec::new();
    let mut x = b.clone();
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        lu.factor(&values).map_err(|e| e.to_string())?;
        factor_times.push(t.elapsed().as_secs_f64());
        x.copy_from_slice(&b);
        let t = Instant::now();
        lu.solve(&mut x);
        solve_times.push(t.elapsed().as_secs_f64());
    }
    let memory_mib = match (before, rss_mib()) {
        (Some((rss0, _)), Some((_, peak))) => Some(peak - rss0),
        _ => None,
    };
    let (backward_error_plain, backward_error, refinements) =
        refine(&mut lu, &pattern, &values, &b, &mut x);
    let (solver, candidates, fill) = describe(&lu);
    Ok(FactorReport {
        rows: n,
        nnz: pattern.nnz(),
        solver,
        candidates,
        analysis_s,
        factor_s: median(factor_times),
        solve_s: median(solve_times),
        fill,
        backward_error_plain,
        backward_error,
        refinements,
        memory_mib,
    })
}

/// The right-hand side: from `rhs`, else the `.rhs.mtx` beside `matrix` when
/// it exists, else `A 1`; its length checked against the matrix.
fn right_hand_side(
    matrix: &Path,
    rhs: Option<&Path>,
    pattern: &Pattern,
    values: &[f64],
) -> Result<Vec<f64>, String> {
    let n = pattern.dim;
    let b = match rhs {
        Some(p) => read_vector(p)?,
        None if rhs_path(matrix).exists() => read_vector(&rhs_path(matrix))?,
        None => {
            let mut b = vec![0.0; n];
            matvec(
                &pattern.col_ptr,
                &pattern.row_idx,
                values,
                &vec![1.0; n],
                &mut b,
            );
            b
        }
    };
    if b.len() != n {
        return Err(format!(
            "the right-hand side has {} rows, the matrix {n}",
            b.len()
        ));
    }
    Ok(b)
}

/// The factorization `path` resolves to (`auto`: band when narrow, else the
/// LDLᵀ for large structurally symmetric matrices, else the sparse LU), with
/// its symbolic analysis done.
fn analyse(matrix: &Path, pattern: &Pattern, path: FactorPath, par: Par) -> Result<Lu, String> {
    let n = pattern.dim;
    let band = match path {
        FactorPath::Auto | FactorPath::Band => BandLu::new(pattern),
        FactorPath::Sparse(_) | FactorPath::Ldlt(_) => None,
    };
    let path = match path {
        FactorPath::Auto if n >= LDLT_MIN && structurally_symmetric(pattern) => {
            FactorPath::Ldlt(None)
        }
        FactorPath::Auto => FactorPath::Sparse(None),
        p => p,
    };
    let lu = match (band, path) {
        (Some(b), _) => Lu::Band(Box::new(b)),
        (None, FactorPath::Band) => {
            return Err(format!(
                "{}: the band after reverse Cuthill-McKee is wider than {}",
                matrix.display(),
                crate::linalg::BAND_MAX
            ))
        }
        (None, FactorPath::Sparse(o)) => Lu::Sparse(Box::new(
            SparseLu::new(pattern, o, par).map_err(|e| e.to_string())?,
        )),
        (None, FactorPath::Ldlt(o)) => Lu::Ldlt(
            Box::new(SparseLdlt::new(pattern, o, par).map_err(|e| e.to_string())?),
            0,
            f64::NAN,
        ),
        (None, FactorPath::Auto) => unreachable!("auto resolved above"),
    };
    Ok(lu)
}

/// Backward error of `x`, refined by x += A⁻¹ (b - A x) while that lowers it
/// (the LDLᵀ's solve refines itself): the unrefined and the final backward
/// error and the refinement steps.
fn refine(
    lu: &mut Lu,
    pattern: &Pattern,
    values: &[f64],
    b: &[f64],
    x: &mut Vec<f64>,
) -> (f64, f64, usize) {
    let n = pattern.dim;
    let mut row_sum = vec![0.0f64; n];
    for c in 0..n {
        for k in pattern.col_ptr[c]..pattern.col_ptr[c + 1] {
            row_sum[pattern.row_idx[k]] += values[k].abs();
        }
    }
    let a_inf = max_abs(&row_sum);
    let mut r = vec![0.0; n];
    let berr = |x: &[f64], r: &mut [f64]| {
        matvec(&pattern.col_ptr, &pattern.row_idx, values, x, r);
        for (ri, bi) in r.iter_mut().zip(b) {
            *ri = bi - *ri;
        }
        max_abs(r) / (a_inf * max_abs(x) + max_abs(b))
    };
    let mut backward_error = berr(x, &mut r);
    let (backward_error_plain, mut refinements) = match &*lu {
        Lu::Ldlt(_, steps, plain) => (*plain, *steps),
        _ => (backward_error, 0),
    };
    while !matches!(lu, Lu::Ldlt(..)) && refinements < MAX_REFINE && backward_error > f64::EPSILON {
        lu.solve(&mut r);
        let mut trial = x.clone();
        for (xi, di) in trial.iter_mut().zip(&r) {
            *xi += di;
        }
        let mut r2 = vec![0.0; n];
        let e = berr(&trial, &mut r2);
        if e.is_nan() || e >= backward_error {
            break;
        }
        refinements += 1;
        *x = trial;
        r = r2;
        backward_error = e;
    }
    (backward_error_plain, backward_error, refinements)
}

/// The solver's name, its orderings' costs and its factor's stored entries.
fn describe(lu: &Lu) -> (String, Vec<OrderingCost>, usize) {
    match lu {
        Lu::Band(b) => {
            let (kl, ku) = b.bandwidths();
            (
                format!("flexmb band LU (rcm, kl {kl}, ku {ku})"),
                Vec::new(),
                b.stored(),
            )
        }
        Lu::Sparse(s) => (
            format!("flexmb {} LU ({})", s.kind(), s.cost().ordering.name()),
            s.candidates().to_vec(),
            s.cost().fill,
        ),
        Lu::Ldlt(s, ..) => (
            format!(
                "flexmb {} LDLT ({}) + refinement",
                if s.tree_factor() {
                    "tree-parallel supernodal"
                } else {
                    s.kind()
                },
                s.ordering().name()
            ),
            s.candidates()
                .iter()
                .map(|&(ordering, fill)| OrderingCost {
                    ordering,
                    fill,
                    // Counted for the chosen ordering only.
                    flops: if ordering == s.ordering() {
                        s.multiply_adds()
                    } else {
                        f64::NAN
                    },
                })
                .collect(),
            s.fill(),
        ),
    }
}
