//! Finite-difference helpers shared by the derivative tests: a deterministic
//! random generator and 4th-order central differences.

/// A small deterministic generator (splitmix64).
pub struct Rng(pub u64);

impl Rng {
    /// Next raw 64-bit value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }

    /// `x` with each entry moved by a value uniform in [-amp, amp).
    pub fn around(&mut self, x: &[f64], amp: f64) -> Vec<f64> {
        x.iter().map(|v| v + self.range(-amp, amp)).collect()
    }

    /// `n` values uniform in [lo, hi).
    pub fn vec(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        (0..n).map(|_| self.range(lo, hi)).collect()
    }
}

/// `LevelWeights { c1dt, c2dt2, c3 }`.
pub fn level(c1dt: f64, c2dt2: f64, c3: f64) -> flexmb::element::LevelWeights {
    flexmb::element::LevelWeights { c1dt, c2dt2, c3 }
}

/// The state at t_n of a step; u_{n+1} is the variable of the checks.
pub struct Step {
    pub u_n: Vec<f64>,
    pub v_n: Vec<f64>,
    pub a_n: Vec<f64>,
}

impl Step {
    /// `u_n` with random v_n in [-2, 2) and a_n in [-5, 5).
    pub fn new(u_n: Vec<f64>, rng: &mut Rng) -> Self {
        let n = u_n.len();
        Step {
            u_n,
            v_n: rng.vec(n, -2.0, 2.0),
            a_n: rng.vec(n, -5.0, 5.0),
        }
    }

    /// u~ = u_n + c1dt v_n + c2dt2 a_n + c3 (u_{n+1} - u_n).
    pub fn u_tilde(&self, w: flexmb::element::LevelWeights, u_next: &[f64]) -> Vec<f64> {
        (0..u_next.len())
            .map(|i| {
                self.u_n[i]
                    + w.c1dt * self.v_n[i]
                    + w.c2dt2 * self.a_n[i]
                    + w.c3 * (u_next[i] - self.u_n[i])
            })
            .collect()
    }

    /// EOM-level force and its derivative with respect to u_{n+1}, with u~
    /// from the weights, evaluated as a method with these weights asks: the
    /// discrete gradient for the midpoint weights (the energy-conserving
    /// midpoint schemes), the force at the level otherwise.
    pub fn eom<E: flexmb::element::Element>(
        &self,
        e: &E,
        w: flexmb::element::LevelWeights,
        u_next: &[f64],
    ) -> (Vec<f64>, Vec<f64>) {
        self.eom_at(e, w, u_next, &self.u_tilde(w, u_next))
    }

    /// [`Step::eom`] at a given u~.
    pub fn eom_at<E: flexmb::element::Element>(
        &self,
        e: &E,
        w: flexmb::element::LevelWeights,
        u_next: &[f64],
        u_tilde: &[f64],
    ) -> (Vec<f64>, Vec<f64>) {
        let n = e.ndof();
        let (mut f, mut k) = (vec![0.0; n], vec![0.0; n * n]);
        let lvl = flexmb::element::EvaluationPoint {
            u_n: &self.u_n,
            v_n: &self.v_n,
            a_n: &self.a_n,
            u_next,
            u_tilde,
            w,
        };
        if w.is_midpoint() {
            e.discrete_gradient(&lvl, &mut f, Some(&mut k));
        } else {
            e.eom_force(&lvl, &mut f, Some(&mut k));
        }
        (f, k)
    }
}

/// 4th-order central stencil: `sum (c g(x + s h)) / (12 h)` approximates g'(x).
const STENCIL: [(f64, f64); 4] = [(-2.0, 1.0), (-1.0, -8.0), (1.0, 8.0), (2.0, -1.0)];

/// Row-major `m x x.len()` Jacobian of `f: R^n -> R^m` at `x`, 4th-order
/// central differences with step `steps[j]` for variable j.
pub fn fd_jacobian(
    x: &[f64],
    steps: &[f64],
    m: usize,
    mut f: impl FnMut(&[f64], &mut [f64]),
) -> Vec<f64> {
    let n = x.len();
    let mut jac = vec![0.0; m * n];
    let mut xp = x.to_vec();
    let mut out = vec![0.0; m];
    for j in 0..n {
        for &(s, c) in &STENCIL {
            xp[j] = x[j] + s * steps[j];
            f(&xp, &mut out);
            for r in 0..m {
                jac[r * n + j] += c * out[r] / (12.0 * steps[j]);
            }
        }
        xp[j] = x[j];
    }
    jac
}

/// [`fd_jacobian`] with the same step `h` for every variable.
pub fn fd_jacobian_h(x: &[f64], h: f64, m: usize, f: impl FnMut(&[f64], &mut [f64])) -> Vec<f64> {
    fd_jacobian(x, &vec![h; x.len()], m, f)
}

/// Gradient of a scalar function.
pub fn fd_gradient(x: &[f64], h: f64, mut f: impl FnMut(&[f64]) -> f64) -> Vec<f64> {
    fd_jacobian_h(x, h, 1, |y, out| out[0] = f(y))
}

/// Second derivative at 0 of a scalar function of one variable (5-point stencil).
pub fn fd_second(h: f64, f: impl Fn(f64) -> f64) -> f64 {
    (-f(2.0 * h) + 16.0 * f(h) - 30.0 * f(0.0) + 16.0 * f(-h) - f(-2.0 * h)) / (12.0 * h * h)
}

/// An element's force P and tangent K at `u`.
pub fn force_and_tangent<E: flexmb::element::Element>(e: &E, u: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let n = e.ndof();
    let (mut f, mut k) = (vec![0.0; n], vec![0.0; n * n]);
    e.force(u, &mut f, Some(&mut k));
    (f, k)
}

/// The finite-difference references of an element's force and tangent at
/// `u` with step `h`: dV/du and dP/du.
pub fn fd_force_and_tangent<E: flexmb::element::Element>(
    e: &E,
    u: &[f64],
    h: f64,
) -> (Vec<f64>, Vec<f64>) {
    let grad = fd_jacobian_h(u, h, 1, |x, out| out[0] = e.potential(x));
    let jac = fd_jacobian_h(u, h, e.ndof(), |x, out| e.force(x, out, None));
    (grad, jac)
}

/// Checks an element's force against dV/du and its tangent against dP/du
/// at `u` (step 1e-4, relative 1e-7) and the tangent's symmetry (1e-10 of
/// its largest entry), printing the three as `{name} #{trial}`.
pub fn check_force_and_tangent<E: flexmb::element::Element>(
    name: &str,
    trial: usize,
    el: &E,
    u: &[f64],
) {
    use super::{max_abs, rel_err};
    let n = u.len();
    let (f, k) = force_and_tangent(el, u);
    let (grad, kfd) = fd_force_and_tangent(el, u, 1e-4);
    let ef = rel_err(&f, &grad);
    let ek = rel_err(&k, &kfd);
    let mut asym = 0.0_f64;
    for i in 0..n {
        for j in 0..n {
            asym = asym.max((k[i * n + j] - k[j * n + i]).abs());
        }
    }
    println!("{name} #{trial}: force {ef:.2e}, tangent {ek:.2e}, asymmetry {asym:.1e}");
    assert!(ef < 1e-7, "{name}: force vs dV/du {ef:.3e}");
    assert!(ek < 1e-7, "{name}: tangent vs dP/du {ek:.3e}");
    assert!(asym < 1e-10 * max_abs(&k));
}

/// Checks an element's EOM-level forces: its discrete gradient (midpoint
/// weights c3 = 1/2) and its force at a general level: the derivative with
/// respect to u_{n+1} against finite differences (relative 1e-7), and for the
/// discrete gradient the identity `(u1 - u_n) . P = V(u1) - V(u_n)` (1e-12);
/// the force without the tangent (`k = None`) is the same.
pub fn check_eom_force<E: flexmb::element::Element>(
    name: &str,
    el: &E,
    [u_n, v_n, a_n, u1]: [&[f64]; 4],
) {
    use flexmb::element::{EvaluationPoint, LevelWeights};
    let n = u_n.len();
    for (w, dg) in [
        (
            LevelWeights {
                c1dt: 0.0,
                c2dt2: 0.0,
                c3: 0.5,
            },
            true,
        ),
        (
            LevelWeights {
                c1dt: 0.01,
                c2dt2: 2e-4,
                c3: 0.55,
            },
            false,
        ),
    ] {
        let eval = |un1: &[f64], f: &mut [f64], k: Option<&mut [f64]>| {
            let ut: Vec<f64> = (0..n)
                .map(|i| u_n[i] + w.c1dt * v_n[i] + w.c2dt2 * a_n[i] + w.c3 * (un1[i] - u_n[i]))
                .collect();
            let lvl = EvaluationPoint {
                u_n,
                v_n,
                a_n,
                u_next: un1,
                u_tilde: &ut,
                w,
            };
            match dg {
                true => el.discrete_gradient(&lvl, f, k),
                false => el.eom_force(&lvl, f, k),
            }
        };
        let (mut f, mut k) = (vec![0.0; n], vec![0.0; n * n]);
        eval(u1, &mut f, Some(&mut k));
        // The residual-only evaluation (modified Newton) gives the same force.
        let mut f_only = vec![0.0; n];
        eval(u1, &mut f_only, None);
        assert_eq!(f, f_only, "{name}: force without the tangent");
        let kfd = fd_jacobian_h(u1, 1e-4, n, |x, out| {
            let mut kk = vec![0.0; n * n];
            eval(x, out, Some(&mut kk))
        });
        let scale = kfd.iter().fold(0.0_f64, |m, x| m.max(x.abs())).max(1e-300);
        let ek = k
            .iter()
            .zip(&kfd)
            .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()))
            / scale;
        println!("{name} c3 = {}: d P~/d u_n+1 {ek:.2e}", w.c3);
        assert!(ek < 1e-7, "{name}: EOM derivative {ek:.3e}");
        if dg {
            let dv = el.potential(u1) - el.potential(u_n);
            let work: f64 = (0..n).map(|i| f[i] * (u1[i] - u_n[i])).sum();
            let gap = (work - dv).abs() / dv.abs().max(1e-300);
            println!("{name}: discrete gradient identity {gap:.2e} (dV = {dv:.3e})");
            assert!(gap < 1e-12, "{name}: du.P_d - dV = {gap:.3e} relative");
        }
    }
}
