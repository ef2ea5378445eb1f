//! Inertia, element, load and damper terms: forces with their tangents
//! (K, D) into a system, mass products, and the stiffness alone.

use sprs::{CsMat, TriMat};

use crate::element::{gather, ElementSet, RateForce, RateState, MAX_LOCAL_DOFS};
use crate::load::TimeFunction;

use super::colour::{scatter_distinct, Disjoint};
use super::{mass_mul, scatter_add, Assembler, ElementEval, Local, Mechanics, SaddleSystem};

impl Mechanics<'_> {
    /// Runs `f(block, element, force, tangent)` over every element and adds
    /// `force` into `residual[..n]` and, with `coef_k = Some(c)`, `c * tangent`
    /// into the matrix (`None`: `f` gets no tangent to fill). The elements
    /// of a block run colour by colour, in parallel within a colour
    /// (`colour.rs`: the same sums on any number of threads).
    pub fn element_pass<F>(&self, sys: &mut SaddleSystem, coef_k: Option<f64>, f: F)
    where
        F: Fn(&dyn ElementSet, usize, &mut [f64], Option<&mut [f64]>) + Sync,
    {
        let model = self.model;
        let residual = Disjoint::new(&mut sys.residual);
        let values = Disjoint::new(&mut sys.values);
        for (b, s) in model.elements.iter().zip(&self.elements) {
            let k = b.ndof();
            s.colours.run(|l, i| {
                let Local { f: fl, k: kl, .. } = l;
                f(
                    b.as_ref(),
                    i,
                    &mut fl[..k],
                    coef_k.map(|_| &mut kl[..k * k]),
                );
                // SAFETY: the elements of a colour share no DOF, so neither
                // residual rows nor (DOF, DOF) slots.
                unsafe {
                    residual.add(b.dofs(i), &fl[..k], 1.0);
                    if let Some(c) = coef_k {
                        values.add(&s.k[i * k * k..(i + 1) * k * k], &kl[..k * k], c);
                    }
                }
            });
        }
    }
}

impl Assembler {
    /// Adds `coef * M` into the matrix values.
    pub fn add_mass(&self, values: &mut [f64], coef: f64) {
        // Each entry of M has its own slot.
        scatter_distinct(values, &self.mass_slots, self.mass.data(), coef);
    }

    /// Adds `coef` to the diagonal entries (i, i), i < n, of the matrix
    /// values (the `cj I` block of the BDF-GGL matrix, Yen and Petzold eq. 1.3a).
    pub fn add_identity(&self, values: &mut [f64], coef: f64) {
        for &d in &self.diag_slots {
            values[d] += coef;
        }
    }

    /// out += M x.
    pub fn mass_mul_add(&self, x: &[f64], out: &mut [f64]) {
        match &self.mass_rows {
            Some(rows) => rows.mul_add(&self.mass, x, out),
            None => mass_mul(&self.mass, x, out),
        }
    }

    /// Subtracts `scale` times the gravity load `M g` from `residual[..n]`.
    pub fn subtract_gravity(&self, residual: &mut [f64], scale: f64) {
        for (r, fg) in residual.iter_mut().zip(&self.gravity_force) {
            *r -= scale * fg;
        }
    }
}

impl Mechanics<'_> {
    /// Adds every element's internal force, evaluated as `eval` says, into
    /// `residual[..n]` and, with `coef_k = Some(c)`, `c` times its derivative
    /// into the matrix (the tangent K(u), or for [`ElementEval::Point`] and
    /// [`ElementEval::DiscreteGradient`] the derivative with respect to
    /// u_{n+1}: K(u~) c3 or the discrete gradient's).
    pub fn add_element_forces(
        &self,
        eval: &ElementEval<'_>,
        coef_k: Option<f64>,
        sys: &mut SaddleSystem,
    ) {
        match eval {
            ElementEval::At(u) => self.element_pass(sys, coef_k, |b, i, f, k| b.force(i, u, f, k)),
            ElementEval::Point(g) => {
                self.element_pass(sys, coef_k, |b, i, f, k| b.eom_force(i, g, f, k))
            }
            ElementEval::DiscreteGradient(g) => {
                self.element_pass(sys, coef_k, |b, i, f, k| b.discrete_gradient(i, g, f, k))
            }
        }
    }

    /// Adds every rate-dependent element force at `x` into the residual:
    /// dampers `F_d(u, v)` and configuration-dependent inertia
    /// `M(u) a + g(u, v)`; with `coefs = Some([c_u, c_v, c_a])` also
    /// `c_u dF/du + c_v dF/dv + c_a dF/da` (that is c_u K + c_v D + c_a M(u))
    /// into the matrix.
    pub fn add_rate_forces(
        &self,
        x: &RateState<'_>,
        coefs: Option<[f64; 3]>,
        sys: &mut SaddleSystem,
    ) {
        let residual = Disjoint::new(&mut sys.residual);
        let values = Disjoint::new(&mut sys.values);
        for (b, s) in self.model.elements.iter().zip(&self.elements) {
            let (damper, inertia) = (b.is_dissipative(), b.has_inertia());
            if !damper && !inertia {
                continue;
            }
            let n = b.ndof();
            s.colours.run(|l, i| {
                let Local { f, k, c, m, .. } = l;
                let slots = &s.k[i * n * n..(i + 1) * n * n];
                let mut out = RateForce {
                    f: &mut f[..n],
                    k: &mut k[..n * n],
                    c: &mut c[..n * n],
                    m: &mut m[..n * n],
                };
                // The derivatives come with the force (few such elements).
                // SAFETY (the scatters): the elements of a colour share no
                // DOF, so neither residual rows nor (DOF, DOF) slots.
                if damper {
                    b.damping_force(i, x.u, x.v, out.f, out.k, out.c);
                    unsafe {
                        residual.add(b.dofs(i), out.f, 1.0);
                        if let Some(cf) = coefs {
                            values.add(slots, out.k, cf[0]);
                            values.add(slots, out.c, cf[1]);
                        }
                    }
                }
                if inertia {
                    b.inertia_force(i, x, &mut out);
                    unsafe {
                        residual.add(b.dofs(i), out.f, 1.0);
                        if let Some(cf) = coefs {
                            values.add(slots, out.k, cf[0]);
                            values.add(slots, out.c, cf[1]);
                            values.add(slots, out.m, cf[2]);
                        }
                    }
                }
            });
        }
    }

    /// Subtracts the external loads (gravity excluded) at positions `u` from
    /// `residual[..n]`, each scaled by `factor(time function)`, and with
    /// `coef_k = Some(c)` subtracts `c dF/du` from the matrix.
    pub fn add_load_terms(
        &self,
        u: &[f64],
        factor: &dyn Fn(&TimeFunction) -> f64,
        coef_k: Option<f64>,
        sys: &mut SaddleSystem,
    ) {
        let model = self.model;
        let Local {
            f: fl,
            k: kl,
            q: ql,
            ..
        } = &mut *sys.local;
        for (l, slots) in model.loads.iter().zip(&self.loads) {
            let s = factor(l.load.time());
            let k = l.dofs.len();
            gather(u, &l.dofs, &mut ql[..k]);
            let kl = &mut kl[..k * k];
            l.load.force(
                &ql[..k],
                s,
                &mut fl[..k],
                coef_k.is_some().then_some(&mut *kl),
            );
            scatter_add(&mut sys.residual, &l.dofs, &fl[..k], -1.0);
            if let Some(c) = coef_k {
                scatter_add(&mut sys.values, slots, kl, -c);
            }
        }
    }

    /// The mass matrix M(u) (constant part and configuration-dependent
    /// inertia) applied to `x`: `mass += M(u) x` and `rate += (d(M(u) x)/du) x`
    /// (with `x = v`, `rate` is `dM/dt v`), without forming the matrices.
    pub fn add_mass_product(
        &self,
        u: &[f64],
        x: &[f64],
        mass: Option<&mut [f64]>,
        rate: Option<&mut [f64]>,
        sys: &mut SaddleSystem,
    ) {
        let model = self.model;
        let mut mass = mass;
        if let Some(out) = mass.as_deref_mut() {
            self.mass_mul_add(x, out);
        }
        let mut rate = rate;
        let zeros = std::mem::take(&mut sys.zeros);
        let Local { f, k, c, m, q, .. } = &mut *sys.local;
        for b in model.elements.iter().filter(|b| b.has_inertia()) {
            let nd = b.ndof();
            for i in 0..b.len() {
                let state = RateState {
                    u,
                    v: &zeros,
                    a: x,
                    midpoint: None,
                };
                let mut out = RateForce {
                    f: &mut f[..nd],
                    k: &mut k[..nd * nd],
                    c: &mut c[..nd * nd],
                    m: &mut m[..nd * nd],
                };
                // At zero velocity the inertial force is M(u) x, its u-derivative
                // d(M(u) x)/du.
                b.inertia_force(i, &state, &mut out);
                let d = b.dofs(i);
                if let Some(o) = mass.as_deref_mut() {
                    scatter_add(o, d, out.f, 1.0);
                }
                if let Some(o) = rate.as_deref_mut() {
                    gather(x, d, &mut q[..nd]);
                    for (p, &dof) in d.iter().enumerate() {
                        o[dof] += (0..nd).map(|s| out.k[p * nd + s] * q[s]).sum::<f64>();
                    }
                }
            }
        }
        sys.zeros = zeros;
    }

    /// out += scale * (sum of the external loads at state u, time t), gravity excluded.
    pub fn add_loads(&self, u: &[f64], t: f64, out: &mut [f64], scale: f64) {
        let model = self.model;
        let mut fl = [0.0; MAX_LOCAL_DOFS];
        let mut ql = [0.0; MAX_LOCAL_DOFS];
        for l in &model.loads {
            let k = l.dofs.len();
            gather(u, &l.dofs, &mut ql[..k]);
            l.load
                .force(&ql[..k], l.load.time().value(t), &mut fl[..k], None);
            scatter_add(out, &l.dofs, &fl[..k], scale);
        }
    }

    /// Global tangent stiffness K(u) = dP/du of the elements (CSC) for export.
    pub fn stiffness(&self, u: &[f64]) -> CsMat<f64> {
        let model = self.model;
        let mut tri = TriMat::new((self.n, self.n));
        let mut fl = [0.0; MAX_LOCAL_DOFS];
        let mut kl = [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS];
        for b in &model.elements {
            let k = b.ndof();
            for i in 0..b.len() {
                b.force(i, u, &mut fl[..k], Some(&mut kl[..k * k]));
                for (p, &r) in b.dofs(i).iter().enumerate() {
                    for (q, &c) in b.dofs(i).iter().enumerate() {
                        tri.add_triplet(r, c, kl[p * k + q]);
                    }
                }
            }
        }
        tri.to_csc()
    }

    /// max |K_ij(u)| over the assembled element stiffness K = dP/du (the
    /// scale of the Newton round-off floor), summed through the element slot
    /// maps into `sys` instead of a triplet copy of K: the triplets and their
    /// CSC copy were the setup peak of the L1 beam. `sys` is left zeroed.
    pub fn stiffness_max(&self, u: &[f64], sys: &mut SaddleSystem) -> f64 {
        sys.residual.fill(0.0);
        sys.values.fill(0.0);
        self.element_pass(sys, Some(1.0), |b, i, f, k| b.force(i, u, f, k));
        let max = sys.values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        sys.residual.fill(0.0);
        sys.values.fill(0.0);
        max
    }

    /// Internal force P(u) of all elements.
    pub fn internal_force(&self, u: &[f64]) -> Vec<f64> {
        let mut sys = self.new_system();
        self.element_pass(&mut sys, None, |b, i, f, _| b.force(i, u, f, None));
        sys.residual.truncate(self.n);
        sys.residual
    }
}
