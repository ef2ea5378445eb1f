//! Dense reduction to the constraint manifold and dense eigensolvers (faer).
//!
//! Reduction: the columns of N are an orthonormal basis of the null space of
//! B, the right singular vectors of its singular values below
//! `1e-10 sigma_max` (a full SVD, so redundant constraints are handled);
//! every admissible perturbation is `du = N x`, and the Lagrange equations
//! on the manifold are (Géradin & Cardona, *Flexible Multibody Dynamics*,
//! 2001, §11.3; Exudyn's `ComputeODE2Eigenvalues` with constraints)
//!
//! ```text
//! Mr x'' + Dr x' + Kr x = 0,   Mr = N^T M N,  Dr = N^T D N,  Kr = N^T K N.
//! ```
//!
//! Undamped modes: `Kr x = w^2 Mr x`. With `Mr = L L^T` (Cholesky; it fails
//! when M is singular on the manifold), `C = L^-1 Kr L^-T`: symmetric when
//! Kr is (conservative systems, `self_adjoint_eigen`), general otherwise
//! (faer's Hessenberg-QR `eigen`, complex pairs). The shapes are
//! `du = N L^-T y`, mass-normalized (`du^T M du = 1`).
//!
//! Damped eigenvalues: the first-order form `z' = A z`,
//! `A = [0, I; -Mr^-1 Kr, -Mr^-1 Dr]` (Tisseur & Meerbergen, "The quadratic
//! eigenvalue problem", SIAM Review 43, 2001, eq. 3.1), whose eigenvalues
//! `s = -zeta w +- i w sqrt(1 - zeta^2)` are faer's `eigenvalues`.

use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Mat, MatRef, Par, Side};
use sprs::CsMat;

use super::linearize::LinearizedSystem;
use super::{DampedEigenvalue, Mode, ModesError};

/// The linearized system reduced to the constraint manifold (dense).
#[derive(Debug, Clone)]
pub struct Reduced {
    /// Orthonormal null-space basis N of B (n x r).
    pub basis: Mat<f64>,
    /// `Mr = N^T M N` (r x r).
    pub mass: Mat<f64>,
    /// `Dr = N^T D N` (r x r).
    pub damping: Mat<f64>,
    /// `Kr = N^T K N` (r x r).
    pub stiffness: Mat<f64>,
}

/// A sprs matrix as a dense faer matrix.
fn dense(a: &CsMat<f64>) -> Mat<f64> {
    let mut out = Mat::zeros(a.rows(), a.cols());
    for (v, (r, c)) in a.iter() {
        out[(r, c)] += *v;
    }
    out
}

/// `N^T A N`.
fn project(n: MatRef<'_, f64>, a: &CsMat<f64>) -> Mat<f64> {
    let an = dense(a) * n;
    n.transpose() * an
}

/// Relative size below which a singular value of B counts as zero.
const RANK_TOL: f64 = 1e-10;

/// Reduces `sys` to the constraint manifold (module doc).
pub fn reduce(sys: &LinearizedSystem) -> Result<Reduced, ModesError> {
    let n = sys.n_dofs();
    let m = sys.n_constraints();
    let basis = if m == 0 {
        Mat::identity(n, n)
    } else {
        let b = dense(&sys.jacobian());
        let svd = b.svd().map_err(|e| ModesError::Eigen {
            what: "the SVD of the constraint Jacobian B".into(),
            reason: format!("{e:?}"),
        })?;
        let s: Vec<f64> = svd.S().column_vector().iter().copied().collect();
        let smax = s.iter().fold(0.0_f64, |a, x| a.max(*x));
        let rank = s.iter().filter(|x| **x > RANK_TOL * smax).count();
        let v = svd.V();
        Mat::from_fn(n, n - rank, |i, j| v[(i, rank + j)])
    };
    let nb = basis.as_ref();
    Ok(Reduced {
        mass: project(nb, &sys.mass()),
        damping: project(nb, &sys.damping()),
        stiffness: project(nb, &sys.stiffness()),
        basis,
    })
}

fn max_abs(a: MatRef<'_, f64>) -> f64 {
    let mut m = 0.0_f64;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            m = m.max(a[(i, j)].abs());
        }
    }
    m
}

/// The lower Cholesky factor of Mr, or the error naming the massless DOFs.
fn cholesky(sys: &LinearizedSystem, red: &Reduced) -> Result<Mat<f64>, ModesError> {
    match red.mass.llt(Side::Lower) {
        Ok(llt) => Ok(llt.L().to_owned()),
        Err(_) => Err(ModesError::SingularMass {
            reduced: red.mass.nrows(),
            massless: sys.massless_dofs(),
        }),
    }
}

/// Relative asymmetry below which Kr counts as symmetric.
const SYMMETRY_TOL: f64 = 1e-9;

/// The `count` lowest undamped modes (ascending real part of w^2).
pub fn undamped(
    sys: &LinearizedSystem,
    red: &Reduced,
    count: usize,
) -> Result<Vec<Mode>, ModesError> {
    let r = red.mass.nrows();
    let l = cholesky(sys, red)?;
    // C = L^-1 Kr L^-T: X = L^-1 Kr, then C = L^-1 X^T (= L^-1 Kr^T L^-T).
    let mut x = red.stiffness.clone();
    solve_lower_triangular_in_place(l.as_ref(), x.as_mut(), Par::Seq);
    let mut c = x.transpose().to_owned();
    solve_lower_triangular_in_place(l.as_ref(), c.as_mut(), Par::Seq);
    let k = red.stiffness.as_ref();
    let scale = max_abs(k).max(f64::MIN_POSITIVE);
    let asym = max_abs((k - k.transpose()).as_ref());
    let symmetric = asym <= SYMMETRY_TOL * scale;
    // (w^2 real part, imaginary part, y as real vectors)
    let mut pairs: Vec<(f64, f64, Vec<f64>)> = if symmetric {
        let c = Mat::from_fn(r, r, |i, j| 0.5 * (c[(i, j)] + c[(j, i)]));
        let evd = c
            .self_adjoint_eigen(Side::Lower)
            .map_err(|e| ModesError::Eigen {
                what: "the symmetric eigenproblem L^-1 Kr L^-T".into(),
                reason: format!("{e:?}"),
            })?;
        let (s, u) = (evd.S().column_vector(), evd.U());
        (0..r)
            .map(|j| (s[j], 0.0, (0..r).map(|i| u[(i, j)]).collect()))
            .collect()
    } else {
        let evd = c.eigen().map_err(|e| ModesError::Eigen {
            what: "the eigenproblem L^-1 Kr L^-T (Kr not symmetric)".into(),
            reason: format!("{e:?}"),
        })?;
        let (s, u) = (evd.S().column_vector(), evd.U());
        (0..r)
            .filter(|&j| s[j].im >= 0.0)
            .map(|j| (s[j].re, s[j].im, (0..r).map(|i| u[(i, j)].re).collect()))
            .collect()
    };
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    pairs.truncate(count);
    let mut y = Mat::from_fn(r, pairs.len(), |i, j| pairs[j].2[i]);
    // x = L^-T y.
    solve_upper_triangular_in_place(l.transpose(), y.as_mut(), Par::Seq);
    let shapes = &red.basis * &y;
    let mass = sys.mass();
    Ok(pairs
        .iter()
        .enumerate()
        .map(|(j, &(w2, im, _))| {
            let mut shape: Vec<f64> = (0..shapes.nrows()).map(|i| shapes[(i, j)]).collect();
            let norm = mass_norm(&mass, &shape);
            if norm > 0.0 {
                shape.iter_mut().for_each(|x| *x /= norm);
            }
            Mode::new(w2, im, shape)
        })
        .collect())
}

/// sqrt(x^T M x).
fn mass_norm(m: &CsMat<f64>, x: &[f64]) -> f64 {
    let mut s = 0.0;
    for (v, (r, c)) in m.iter() {
        s += x[r] * v * x[c];
    }
    s.max(0.0).sqrt()
}

/// The `count` damped eigenvalues of least modulus with nonnegative
/// imaginary part (real ones included), of the first-order form.
pub fn damped(
    sys: &LinearizedSystem,
    red: &Reduced,
    count: usize,
) -> Result<Vec<DampedEigenvalue>, ModesError> {
    let r = red.mass.nrows();
    let l = cholesky(sys, red)?;
    // Mr^-1 [Kr, Dr] by two triangular solves.
    let mut rhs = Mat::from_fn(r, 2 * r, |i, j| {
        if j < r {
            red.stiffness[(i, j)]
        } else {
            red.damping[(i, j - r)]
        }
    });
    solve_lower_triangular_in_place(l.as_ref(), rhs.as_mut(), Par::Seq);
    solve_upper_triangular_in_place(l.transpose(), rhs.as_mut(), Par::Seq);
    let a = Mat::from_fn(2 * r, 2 * r, |i, j| {
        if i < r {
            if j == i + r {
                1.0
            } else {
                0.0
            }
        } else {
            -rhs[(i - r, j)]
        }
    });
    let s = a.eigenvalues().map_err(|e| ModesError::Eigen {
        what: "the first-order (state-space) eigenproblem".into(),
        reason: format!("{e:?}"),
    })?;
    let mut out: Vec<DampedEigenvalue> = s
        .iter()
        .filter(|z| z.im >= 0.0)
        .map(|z| DampedEigenvalue { re: z.re, im: z.im })
        .collect();
    out.sort_by(|a, b| a.modulus().total_cmp(&b.modulus()));
    out.truncate(count);
    Ok(out)
}
