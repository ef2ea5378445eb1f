//! Gonzalez's discrete gradient of a scalar function between two states
//! (O. Gonzalez, "Time integration and discrete Hamiltonian systems",
//! J. Nonlinear Sci. 6 (1996) 449–467, eq. (3.9); for holonomic constraints
//! "Mechanical systems subject to holonomic constraints: differential–algebraic
//! formulations and conservative integration", Physica D 132 (1999) 165–174):
//!
//! ```text
//! D V(u0, u1) = grad V(u_m) + s du,   s = (V(u1) - V(u0) - grad V(u_m).du) / |du|^2,
//! ```
//!
//! with `u_m = (u0 + u1)/2` and `du = u1 - u0`, so that
//! `D V . du = V(u1) - V(u0)` exactly. Its derivative with respect to u1 is
//!
//! ```text
//! d D V / d u1 = H(u_m)/2 + du (de - 2 s du)^T / |du|^2 + s I,
//! de = d (V(u1) - V(u0) - grad V(u_m).du) / d u1 = grad V(u1) - grad V(u_m) - H(u_m) du / 2.
//! ```
//!
//! At a negligible increment (below [`significant_norm2`]'s floor) the
//! correction is dropped: `D V = grad V(u_m)` (Gonzalez's limit), whose
//! derivative is `H(u_m)/2`. Used by the beam elements, the translational
//! spring-damper-actuator and the `dg` constraint-force option.

/// Relative size `|du| / scale` of an increment below which the correction
/// is dropped. The numerator `V(u1) - V(u0) - grad V(u_m).du` is O(|du|^3)
/// but carries the round-off `eps |V|`, so the correction `s du` carries
/// `eps |V| / |du|`, about `eps / FLOOR` = 2e-11 of the force at the floor
/// (with a floor of 1e-12 Newton stalls on Andrews' mechanism, Hoitink
/// App. A.2, whose first step moves the spring's body by 4e-12); the work
/// the dropped correction would balance, `V'''[du, du, du] / 24`, is about
/// `FLOOR^3 / 24` = 4e-17 of `|V|`-sized energies per step.
const FLOOR: f64 = 1e-5;

/// `|du|^2`, or `None` when `|du| <= FLOOR * scale` (`scale`: the size of the
/// coordinates, so that the floor is relative).
pub fn significant_norm2(du: &[f64], scale: f64) -> Option<f64> {
    let n2: f64 = du.iter().map(|x| x * x).sum();
    (n2 > (FLOOR * scale).powi(2)).then_some(n2)
}

/// The correction coefficient `s = (v1 - v0 - g_m.du) / n2` for
/// `v0 = V(u0)`, `v1 = V(u1)`, `g_m = grad V(u_m)` and `n2 = |du|^2`.
pub fn coefficient(du: &[f64], n2: f64, v0: f64, v1: f64, g_m: &[f64]) -> f64 {
    let gdu: f64 = g_m.iter().zip(du).map(|(g, d)| g * d).sum();
    (v1 - v0 - gdu) / n2
}

/// Adds the derivative of the correction `s du` with respect to u1 to `k`
/// (n x n row-major), which holds `H(u_m)/2` (the derivative of `grad V(u_m)`)
/// on entry: `k += du (de - 2 s du)^T / n2 + s I` with
/// `de = g1 - g_m - k du`, `g1 = grad V(u1)`.
pub fn add_tangent(du: &[f64], n2: f64, s: f64, g_m: &[f64], g1: &[f64], k: &mut [f64]) {
    let n = du.len();
    let mut de = [0.0; super::MAX_LOCAL_DOFS];
    for (i, row) in k[..n * n].chunks_exact(n).enumerate() {
        let kdu: f64 = row.iter().zip(du).map(|(a, b)| a * b).sum();
        de[i] = g1[i] - g_m[i] - kdu;
    }
    // k += du w^T + s I with w = (de - 2 s du) / n2.
    let inv = 1.0 / n2;
    for (d, &x) in de[..n].iter_mut().zip(du) {
        *d = (*d - 2.0 * s * x) * inv;
    }
    for (i, row) in k[..n * n].chunks_exact_mut(n).enumerate() {
        for (kij, &wj) in row.iter_mut().zip(&de[..n]) {
            *kij += du[i] * wj;
        }
        row[i] += s;
    }
}

/// The discrete gradient of an element's potential between `u0` and `u1`
/// ([`super::Element::discrete_gradient`]) and, when `k` is given, its
/// derivative with respect to u1: `grad(u_m, f, k)` writes `grad V(u_m)` and
/// `H(u_m)`, which is halved, `at_ends` is [`discrete_gradient`]'s, and
/// the floor's scale is the largest of `length` and `|u_m|_inf`.
pub fn between<G, F>(
    [u0, u1]: [&[f64]; 2],
    length: f64,
    f: &mut [f64],
    mut k: Option<&mut [f64]>,
    grad: G,
    at_ends: F,
) where
    G: FnOnce(&[f64], &mut [f64], Option<&mut [f64]>),
    F: FnOnce(Option<&mut [f64]>) -> (f64, f64),
{
    let n = u0.len();
    let mut um = [0.0; super::MAX_LOCAL_DOFS];
    let mut du = [0.0; super::MAX_LOCAL_DOFS];
    for i in 0..n {
        um[i] = 0.5 * (u0[i] + u1[i]);
        du[i] = u1[i] - u0[i];
    }
    grad(&um[..n], f, k.as_deref_mut());
    if let Some(k) = k.as_deref_mut() {
        for x in k[..n * n].iter_mut() {
            *x *= 0.5;
        }
    }
    let scale = um[..n].iter().fold(length, |m, x| m.max(x.abs()));
    discrete_gradient(&du[..n], scale, f, k, at_ends);
}

/// The discrete gradient of a scalar V and, when `k` is given, its derivative
/// with respect to u1: on entry `f = grad V(u_m)` and `k = H(u_m)/2`; on exit
/// `f = D V(u0, u1)` and `k = d D V / d u1`. `v0`, `v1`, `g1` are needed only
/// when the increment is significant, so they are computed by `at_ends` on
/// demand, which returns `(V(u0), V(u1))` and writes `grad V(u1)` into its
/// argument when there is one (only the tangent needs it).
pub fn discrete_gradient<F>(
    du: &[f64],
    scale: f64,
    f: &mut [f64],
    k: Option<&mut [f64]>,
    at_ends: F,
) where
    F: FnOnce(Option<&mut [f64]>) -> (f64, f64),
{
    let n = du.len();
    let Some(n2) = significant_norm2(du, scale) else {
        return;
    };
    let mut g1 = [0.0; super::MAX_LOCAL_DOFS];
    let (v0, v1) = at_ends(k.is_some().then_some(&mut g1[..n]));
    let s = coefficient(du, n2, v0, v1, &f[..n]);
    if let Some(k) = k {
        add_tangent(du, n2, s, &f[..n], &g1[..n], k);
    }
    for (fi, di) in f[..n].iter_mut().zip(du) {
        *fi += s * di;
    }
}
