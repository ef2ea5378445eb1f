//! Global sparse operators from local physics.
//!
//! The [`Assembler`] builds, once per model, the CSC pattern of the saddle-point
//! matrix `A = [S C; B 0]` (S = c_M M + c_u (K + H - K_load), C the multiplier
//! column, B the constraint Jacobian), the constant mass matrix M, the gravity
//! load M g and, for every element, joint and load entry, the position ("slot")
//! it adds into. Each Newton iteration then only writes values.
//!
//! Element loops run serially with direct scatter. On request
//! ([`Assembler::with_parallel`]) elements write into a per-element slab in
//! parallel (rayon) and a parallel gather sums the slab into the global
//! arrays in a fixed order, so results do not depend on the number of
//! threads; it is not the default because on the 2-core machine it did not
//! pay off (L1 beam, 100,000 elements: 33 % more wall time in the assembly,
//! 14 % more CPU time and 150 MiB more memory for the slab and the gather
//! map than the serial path, docs/bench.md).

pub use crate::linalg::Pattern;

use rayon::prelude::*;
use sprs::{CsMat, TriMat};

use crate::element::{gather, ElementSet, GlobalLevel, RateForce, RateState, MAX_LOCAL_DOFS};
use crate::joint::{ConstraintLevel, JointSet, MAX_ROWS};
use crate::load::TimeFunction;
use crate::model::{DofKind, Model};
use crate::output::{ConstraintNorms, Energy};

/// How [`Assembler::add_element_forces`] evaluates the internal forces.
#[derive(Debug, Clone, Copy)]
pub enum ElementEval<'a> {
    /// `P(u)` with the tangent `K(u) = dP/du`.
    At(&'a [f64]),
    /// The force at an interpolated time level of a one-step scheme
    /// ([`crate::element::Element::eom_force`]: `P(u~)`, an independent strain
    /// approximation, or the discrete gradient `P(u_n, u_{n+1})` for midpoint
    /// weights) with its derivative with respect to u_{n+1}.
    Level(GlobalLevel<'a>),
}

/// A multiplier vector formed from two: `(1 - w) first + w second`.
#[derive(Debug, Clone, Copy)]
pub struct MultiplierMix<'a> {
    /// The first vector.
    pub first: &'a [f64],
    /// The second vector.
    pub second: &'a [f64],
    /// The weight of `second`.
    pub w: f64,
}

impl<'a> MultiplierMix<'a> {
    /// One vector as it is.
    pub fn of(x: &'a [f64]) -> Self {
        MultiplierMix {
            first: x,
            second: x,
            w: 0.0,
        }
    }

    /// Entry `r` of the mix.
    #[inline]
    pub fn at(&self, r: usize) -> f64 {
        if self.w == 0.0 {
            self.first[r]
        } else {
            (1.0 - self.w) * self.first[r] + self.w * self.second[r]
        }
    }
}

/// The joint terms of one configuration `u` that a method adds with
/// [`Assembler::add_joint_terms`]: any of the constraint force `c B^T w`,
/// the multiplier column `c B^T` of the matrix and the curvature
/// `c d(B^T w)/du`.
#[derive(Debug, Clone, Copy)]
pub struct JointTerms<'a> {
    /// Configuration.
    pub u: &'a [f64],
    /// Time.
    pub t: f64,
    /// Gonzalez's discrete Jacobian `B_d(u0, u)` in place of B(u): its start `u0`.
    pub discrete_from: Option<&'a [f64]>,
    /// Constraint force `c B^T w` into the residual.
    pub force: Option<(f64, MultiplierMix<'a>)>,
    /// Coefficient of the multiplier column `B^T` of the matrix (0: none).
    pub column: f64,
    /// Curvature `c d(B^T w)/du` into the matrix.
    pub curvature: Option<(f64, MultiplierMix<'a>)>,
}

/// Values of the saddle-point system `A x = -r` and assembly workspace.
#[derive(Debug, Clone)]
pub struct SaddleSystem {
    /// Residual r = [e1; e2] (n + m).
    pub residual: Vec<f64>,
    /// Matrix values in the order of [`Assembler::pattern`].
    pub values: Vec<f64>,
    slab: Vec<f64>,
    local: Box<Local>,
    /// n zeros (an acceleration of zero for the rate forces).
    zeros: Vec<f64>,
}

/// Element-, load- and joint-local arrays of the Newton fill, kept with the
/// system: zeroing fresh 4.6 KB stack arrays in every call took half the
/// time of a double-pendulum step.
#[derive(Debug, Clone)]
struct Local {
    f: [f64; MAX_LOCAL_DOFS],
    k: [f64; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS],
    q: [f64; MAX_LOCAL_DOFS],
    b: [f64; MAX_ROWS * MAX_LOCAL_DOFS],
    h: [f64; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS],
    c: [f64; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS],
    m: [f64; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS],
}

impl Local {
    fn new() -> Box<Self> {
        Box::new(Local {
            f: [0.0; MAX_LOCAL_DOFS],
            k: [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS],
            q: [0.0; MAX_LOCAL_DOFS],
            b: [0.0; MAX_ROWS * MAX_LOCAL_DOFS],
            h: [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS],
            c: [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS],
            m: [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS],
        })
    }
}

struct ElementSlots {
    /// Matrix slots, ndof^2 per element, row-major.
    k: Vec<usize>,
    /// Offset of the block in the slab.
    slab_offset: usize,
}

struct JointSlots {
    /// First multiplier row of the block.
    row0: usize,
    /// Row-block slots (n + row, dof), rows x ndof per joint.
    b: Vec<usize>,
    /// Column-block slots (dof, n + row), rows x ndof per joint (row-major in (row, dof)).
    c: Vec<usize>,
    /// Curvature slots (dof, dof), ndof^2 per joint.
    h: Vec<usize>,
}

/// Gather map for the parallel element path: for each target, its slab sources.
struct Gather {
    res_ptr: Vec<usize>,
    res_src: Vec<usize>,
    val_ptr: Vec<usize>,
    val_src: Vec<usize>,
}

/// Builds and fills the global sparse operators of one model.
pub struct Assembler {
    n: usize,
    m: usize,
    pattern: Pattern,
    mass: CsMat<f64>,
    mass_slots: Vec<usize>,
    /// Slots of the diagonal entries (i, i), i < n (identity metric).
    diag_slots: Vec<usize>,
    gravity_force: Vec<f64>,
    elements: Vec<ElementSlots>,
    joints: Vec<JointSlots>,
    loads: Vec<Vec<usize>>,
    slab_len: usize,
    gather: Option<Gather>,
}

/// sum_q f[q] x[idx[q]].
#[inline]
fn gathered_dot(f: &[f64], idx: &[usize], x: &[f64]) -> f64 {
    f.iter().zip(idx).map(|(f, &i)| f * x[i]).sum()
}

/// values[slots[q]] = x[q].
#[inline]
fn scatter_set(values: &mut [f64], slots: &[usize], x: &[f64]) {
    for (&s, &v) in slots.iter().zip(x) {
        values[s] = v;
    }
}

/// Adds `x` into `dst[idx]`.
#[inline]
fn scatter_add(dst: &mut [f64], idx: &[usize], x: &[f64], scale: f64) {
    for (&i, &v) in idx.iter().zip(x) {
        dst[i] += scale * v;
    }
}

impl Assembler {
    /// Builds pattern, slots, mass matrix and gravity load of `model`.
    pub fn new(model: &Model) -> Self {
        Self::with_parallel(model, false)
    }

    /// Like [`Assembler::new`], with the parallel element path when
    /// `parallel` is true (module docs).
    pub fn with_parallel(model: &Model, parallel: bool) -> Self {
        let n = model.n_dofs();
        let m = model.n_constraints();
        let dim = n + m;

        // Mass matrix: lumped inertia + element masses.
        let mut tri = TriMat::new((n, n));
        for &(r, c, v) in &model.inertia {
            tri.add_triplet(r, c, v);
        }
        let mut mloc = [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS];
        for b in &model.elements {
            let k = b.ndof();
            for i in 0..b.len() {
                if b.mass(i, &mut mloc[..k * k]) {
                    let d = b.dofs(i);
                    for (p, &r) in d.iter().enumerate() {
                        for (q, &c) in d.iter().enumerate() {
                            if mloc[p * k + q] != 0.0 {
                                tri.add_triplet(r, c, mloc[p * k + q]);
                            }
                        }
                    }
                }
            }
        }
        let mass: CsMat<f64> = tri.to_csc();

        // Gravity load M g_hat, g_hat = g on translational DOFs.
        let ghat: Vec<f64> = (0..n)
            .map(|i| match model.dofs.kind(i) {
                DofKind::Translation(a) => model.gravity[a as usize],
                DofKind::Rotation
                | DofKind::Slope(_)
                | DofKind::EulerParameter(_)
                | DofKind::Director(_) => 0.0,
            })
            .collect();
        let mut gravity_force = vec![0.0; n];
        mass_mul(&mass, &ghat, &mut gravity_force);

        // Every (row, col) pair that can be nonzero, in a vector sized up
        // front: growing it by doubling kept up to twice its size (and a
        // copy) resident, the peak of the L1 beam's setup.
        let count = n
            + mass.nnz()
            + model
                .elements
                .iter()
                .map(|b| b.len() * b.ndof() * b.ndof())
                .sum::<usize>()
            + model
                .joints
                .iter()
                .map(|b| b.len() * b.ndof() * (b.ndof() + 2 * b.rows()))
                .sum::<usize>()
            + model
                .loads
                .iter()
                .map(|l| l.dofs.len().pow(2))
                .sum::<usize>();
        let mut pairs: Vec<(usize, usize)> = Vec::with_capacity(count);
        pairs.extend((0..n).map(|i| (i, i)));
        for (c, col) in mass.outer_iterator().enumerate() {
            for (r, _) in col.iter() {
                pairs.push((r, c));
            }
        }
        for b in &model.elements {
            for i in 0..b.len() {
                let d = b.dofs(i);
                pairs.extend(d.iter().flat_map(|&r| d.iter().map(move |&c| (r, c))));
            }
        }
        let mut row0 = n;
        for b in &model.joints {
            for i in 0..b.len() {
                let d = b.dofs(i);
                pairs.extend(d.iter().flat_map(|&r| d.iter().map(move |&c| (r, c))));
                for r in 0..b.rows() {
                    let row = row0 + i * b.rows() + r;
                    for &c in d {
                        pairs.push((row, c));
                        pairs.push((c, row));
                    }
                }
            }
            row0 += b.len() * b.rows();
        }
        for l in &model.loads {
            let d = &l.dofs;
            pairs.extend(d.iter().flat_map(|&r| d.iter().map(move |&c| (r, c))));
        }
        let pattern = Pattern::from_pairs(dim, pairs);

        let diag_slots = (0..n).map(|i| pattern.slot(i, i)).collect();
        let mass_slots = mass
            .outer_iterator()
            .enumerate()
            .flat_map(|(c, col)| {
                col.iter()
                    .map(|(r, _)| pattern.slot(r, c))
                    .collect::<Vec<_>>()
            })
            .collect();

        let mut slab_len = 0;
        let elements: Vec<ElementSlots> = model
            .elements
            .iter()
            .map(|b| {
                let mut k = Vec::with_capacity(b.len() * b.ndof() * b.ndof());
                for i in 0..b.len() {
                    pattern.block_slots(b.dofs(i), b.dofs(i), &mut k);
                }
                let slab_offset = slab_len;
                slab_len += b.len() * (b.ndof() + b.ndof() * b.ndof());
                ElementSlots { k, slab_offset }
            })
            .collect();

        let mut row0 = 0;
        let joints = model
            .joints
            .iter()
            .map(|blk| {
                let (rows, k) = (blk.rows(), blk.ndof());
                let mut s = JointSlots {
                    row0,
                    b: Vec::with_capacity(blk.len() * rows * k),
                    c: Vec::with_capacity(blk.len() * rows * k),
                    h: Vec::with_capacity(blk.len() * k * k),
                };
                for i in 0..blk.len() {
                    let d = blk.dofs(i);
                    for r in 0..rows {
                        let row = n + row0 + i * rows + r;
                        for &c in d {
                            s.b.push(pattern.slot(row, c));
                            s.c.push(pattern.slot(c, row));
                        }
                    }
                    pattern.block_slots(d, d, &mut s.h);
                }
                row0 += blk.len() * rows;
                s
            })
            .collect();

        let loads = model
            .loads
            .iter()
            .map(|l| {
                let mut s = Vec::new();
                pattern.block_slots(&l.dofs, &l.dofs, &mut s);
                s
            })
            .collect();

        let mut asm = Assembler {
            n,
            m,
            pattern,
            mass,
            mass_slots,
            diag_slots,
            gravity_force,
            elements,
            joints,
            loads,
            slab_len,
            gather: None,
        };
        if parallel {
            asm.gather = Some(asm.build_gather(model));
        }
        asm
    }

    /// Inverse scatter maps from slab entries to residual entries and matrix slots.
    fn build_gather(&self, model: &Model) -> Gather {
        let mut res: Vec<(usize, usize)> = Vec::new();
        let mut val: Vec<(usize, usize)> = Vec::new();
        for (b, s) in model.elements.iter().zip(&self.elements) {
            let k = b.ndof();
            for i in 0..b.len() {
                let base = s.slab_offset + i * (k + k * k);
                for (p, &d) in b.dofs(i).iter().enumerate() {
                    res.push((d, base + p));
                }
                for q in 0..k * k {
                    val.push((s.k[i * k * k + q], base + k + q));
                }
            }
        }
        let csr = |mut v: Vec<(usize, usize)>, len: usize| {
            v.sort_unstable();
            let mut ptr = vec![0; len + 1];
            for &(t, _) in &v {
                ptr[t + 1] += 1;
            }
            for t in 0..len {
                ptr[t + 1] += ptr[t];
            }
            (ptr, v.into_iter().map(|(_, s)| s).collect::<Vec<_>>())
        };
        let (res_ptr, res_src) = csr(res, self.n);
        let (val_ptr, val_src) = csr(val, self.pattern.nnz());
        Gather {
            res_ptr,
            res_src,
            val_ptr,
            val_src,
        }
    }

    /// Number of DOFs.
    pub fn n_dofs(&self) -> usize {
        self.n
    }

    /// Number of multipliers.
    pub fn n_constraints(&self) -> usize {
        self.m
    }

    /// The saddle-point pattern.
    pub fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    /// The constant mass matrix (CSC).
    pub fn mass_matrix(&self) -> &CsMat<f64> {
        &self.mass
    }

    /// The gravity load M g.
    pub fn gravity_force(&self) -> &[f64] {
        &self.gravity_force
    }

    /// Whether element loops run in parallel.
    pub fn is_parallel(&self) -> bool {
        self.gather.is_some()
    }

    /// A zeroed system with workspace sized for this model.
    pub fn new_system(&self) -> SaddleSystem {
        SaddleSystem {
            residual: vec![0.0; self.n + self.m],
            values: vec![0.0; self.pattern.nnz()],
            slab: vec![
                0.0;
                if self.gather.is_some() {
                    self.slab_len
                } else {
                    0
                }
            ],
            local: Local::new(),
            zeros: vec![0.0; self.n],
        }
    }

    /// Runs `f(block, element, force, tangent)` over every element and adds
    /// `force` into `residual[..n]` and, with `coef_k = Some(c)`, `c * tangent`
    /// into the matrix (`None`: `f` gets no tangent to fill).
    pub fn element_pass<F>(&self, model: &Model, sys: &mut SaddleSystem, coef_k: Option<f64>, f: F)
    where
        F: Fn(&dyn ElementSet, usize, &mut [f64], Option<&mut [f64]>) + Sync,
    {
        let SaddleSystem {
            residual,
            values,
            slab,
            local,
            ..
        } = sys;
        match &self.gather {
            None => {
                let Local { f: fl, k: kl, .. } = &mut **local;
                for (b, s) in model.elements.iter().zip(&self.elements) {
                    let k = b.ndof();
                    for i in 0..b.len() {
                        f(
                            b.as_ref(),
                            i,
                            &mut fl[..k],
                            coef_k.map(|_| &mut kl[..k * k]),
                        );
                        scatter_add(residual, b.dofs(i), &fl[..k], 1.0);
                        if let Some(c) = coef_k {
                            let slots = &s.k[i * k * k..(i + 1) * k * k];
                            scatter_add(values, slots, &kl[..k * k], c);
                        }
                    }
                }
            }
            Some(g) => {
                for (b, s) in model.elements.iter().zip(&self.elements) {
                    let k = b.ndof();
                    let len = b.len() * (k + k * k);
                    slab[s.slab_offset..s.slab_offset + len]
                        .par_chunks_mut(k + k * k)
                        .enumerate()
                        .for_each(|(i, chunk)| {
                            let (fl, kl) = chunk.split_at_mut(k);
                            f(b.as_ref(), i, fl, coef_k.map(|_| kl));
                        });
                }
                let slab = &*slab;
                residual[..self.n]
                    .par_iter_mut()
                    .enumerate()
                    .for_each(|(t, r)| {
                        *r += g.res_src[g.res_ptr[t]..g.res_ptr[t + 1]]
                            .iter()
                            .map(|&s| slab[s])
                            .sum::<f64>();
                    });
                if let Some(c) = coef_k {
                    values.par_iter_mut().enumerate().for_each(|(t, v)| {
                        let sum: f64 = g.val_src[g.val_ptr[t]..g.val_ptr[t + 1]]
                            .iter()
                            .map(|&s| slab[s])
                            .sum();
                        *v += c * sum;
                    });
                }
            }
        }
    }

    /// Adds `coef * M` into the matrix values.
    pub fn add_mass(&self, values: &mut [f64], coef: f64) {
        scatter_add(values, &self.mass_slots, self.mass.data(), coef);
    }

    /// Adds `coef` to the diagonal entries (i, i), i < n, of the matrix
    /// values (the `cj I` block of the BDF-GGL matrix, seed 003 eq. 1.3a).
    pub fn add_identity(&self, values: &mut [f64], coef: f64) {
        for &d in &self.diag_slots {
            values[d] += coef;
        }
    }

    /// out += M x.
    pub fn mass_mul_add(&self, x: &[f64], out: &mut [f64]) {
        mass_mul(&self.mass, x, out);
    }

    /// Subtracts `scale` times the gravity load `M g` from `residual[..n]`.
    pub fn subtract_gravity(&self, residual: &mut [f64], scale: f64) {
        for (r, fg) in residual.iter_mut().zip(&self.gravity_force) {
            *r -= scale * fg;
        }
    }

    /// Adds every element's internal force, evaluated as `eval` says, into
    /// `residual[..n]` and, with `coef_k = Some(c)`, `c` times its derivative
    /// into the matrix (the tangent K(u), or for [`ElementEval::Level`] the
    /// derivative with respect to u_{n+1}: K(u~) c3 or the discrete gradient's).
    pub fn add_element_forces(
        &self,
        model: &Model,
        eval: &ElementEval<'_>,
        coef_k: Option<f64>,
        sys: &mut SaddleSystem,
    ) {
        match eval {
            ElementEval::At(u) => {
                self.element_pass(model, sys, coef_k, |b, i, f, k| b.force(i, u, f, k))
            }
            ElementEval::Level(g) => {
                self.element_pass(model, sys, coef_k, |b, i, f, k| b.eom_force(i, g, f, k))
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
        model: &Model,
        x: &RateState<'_>,
        coefs: Option<[f64; 3]>,
        sys: &mut SaddleSystem,
    ) {
        let Local { f, k, c, m, .. } = &mut *sys.local;
        for (b, s) in model.elements.iter().zip(&self.elements) {
            let (damper, inertia) = (b.is_dissipative(), b.has_inertia());
            if !damper && !inertia {
                continue;
            }
            let n = b.ndof();
            for i in 0..b.len() {
                let slots = &s.k[i * n * n..(i + 1) * n * n];
                let mut out = RateForce {
                    f: &mut f[..n],
                    k: &mut k[..n * n],
                    c: &mut c[..n * n],
                    m: &mut m[..n * n],
                };
                // The derivatives come with the force (few such elements).
                if damper {
                    b.damping_force(i, x.u, x.v, out.f, out.k, out.c);
                    scatter_add(&mut sys.residual, b.dofs(i), out.f, 1.0);
                    if let Some(cf) = coefs {
                        scatter_add(&mut sys.values, slots, out.k, cf[0]);
                        scatter_add(&mut sys.values, slots, out.c, cf[1]);
                    }
                }
                if inertia {
                    b.inertia_force(i, x, &mut out);
                    scatter_add(&mut sys.residual, b.dofs(i), out.f, 1.0);
                    if let Some(cf) = coefs {
                        scatter_add(&mut sys.values, slots, out.k, cf[0]);
                        scatter_add(&mut sys.values, slots, out.c, cf[1]);
                        scatter_add(&mut sys.values, slots, out.m, cf[2]);
                    }
                }
            }
        }
    }

    /// Subtracts the external loads (gravity excluded) at positions `u` from
    /// `residual[..n]`, each scaled by `factor(time function)`, and with
    /// `coef_k = Some(c)` subtracts `c dF/du` from the matrix.
    pub fn add_load_terms(
        &self,
        model: &Model,
        u: &[f64],
        factor: &dyn Fn(&TimeFunction) -> f64,
        coef_k: Option<f64>,
        sys: &mut SaddleSystem,
    ) {
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

    /// Writes the constraint rows: `residual[n..] = Phi(u, t) / scale` and,
    /// with `matrix`, the row block B(u, t) of the matrix.
    pub fn set_constraint_rows(
        &self,
        model: &Model,
        u: &[f64],
        t: f64,
        scale: f64,
        matrix: bool,
        sys: &mut SaddleSystem,
    ) {
        let n = self.n;
        let Local { b: bl, .. } = &mut *sys.local;
        let mut phi = [0.0; MAX_ROWS];
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let r0 = s.row0 + i * rows;
                blk.phi(i, u, t, &mut phi[..rows]);
                for (e, p) in sys.residual[n + r0..n + r0 + rows]
                    .iter_mut()
                    .zip(&phi[..rows])
                {
                    *e = p / scale;
                }
                if matrix {
                    blk.jacobian(i, u, t, &mut bl[..rows * k]);
                    let slots = &s.b[i * rows * k..(i + 1) * rows * k];
                    scatter_set(&mut sys.values, slots, &bl[..rows * k]);
                }
            }
        }
    }

    /// Writes the velocity constraints `residual[n..] = B(u, t) v + Phi_t(u, t)`
    /// and, with `matrix`, their derivative with respect to u into the row
    /// block of B: row r is `v^T d^2 Phi_r/du^2 + d(Phi_t)_r/du` (GGL's
    /// `(G v)_q`, seed 003 eq. 1.3c). `d(Phi_t)/du` of a rheonomic joint is
    /// recovered from `Phi_tt + 2 Phi_tu v` at unit velocities. Position-level
    /// joints only (a velocity-level joint's curvature is not symmetric).
    pub fn set_rate_rows(
        &self,
        model: &Model,
        u: &[f64],
        v: &[f64],
        t: f64,
        matrix: bool,
        sys: &mut SaddleSystem,
    ) {
        let n = self.n;
        let mut zeros = std::mem::take(&mut sys.zeros);
        let Local {
            b: bl,
            h: hl,
            q: vl,
            c: dl,
            ..
        } = &mut *sys.local;
        let mut w = [0.0; MAX_ROWS];
        let (mut p0, mut p1) = ([0.0; MAX_ROWS], [0.0; MAX_ROWS]);
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let r0 = s.row0 + i * rows;
                let d = blk.dofs(i);
                blk.jacobian(i, u, t, &mut bl[..rows * k]);
                gather(v, d, &mut vl[..k]);
                let out = &mut sys.residual[n + r0..n + r0 + rows];
                blk.phi_t(i, u, t, out);
                for (r, o) in out.iter_mut().enumerate() {
                    *o += (0..k).map(|p| bl[r * k + p] * vl[p]).sum::<f64>();
                }
                if !matrix {
                    continue;
                }
                // dl: rows x k, row r = H_r v (H_r symmetric).
                for r in 0..rows {
                    w[..rows].fill(0.0);
                    w[r] = 1.0;
                    hl[..k * k].fill(0.0);
                    blk.add_curvature(i, u, t, &w[..rows], 1.0, &mut hl[..k * k]);
                    for p in 0..k {
                        dl[r * k + p] = (0..k).map(|q| hl[q * k + p] * vl[q]).sum::<f64>();
                    }
                }
                if blk.is_rheonomic(i) {
                    blk.phi_tt(i, u, &zeros, t, &mut p0[..rows]);
                    for (p, &dof) in d.iter().enumerate() {
                        zeros[dof] = 1.0;
                        blk.phi_tt(i, u, &zeros, t, &mut p1[..rows]);
                        zeros[dof] = 0.0;
                        for r in 0..rows {
                            dl[r * k + p] += 0.5 * (p1[r] - p0[r]);
                        }
                    }
                }
                let slots = &s.b[i * rows * k..(i + 1) * rows * k];
                scatter_set(&mut sys.values, slots, &dl[..rows * k]);
            }
        }
        sys.zeros = zeros;
    }

    /// Writes the constraint Jacobian B(u, t) densely, row-major m x n, into
    /// `out` (every other entry zero).
    pub fn constraint_jacobian_dense(&self, model: &Model, u: &[f64], t: f64, out: &mut [f64]) {
        let n = self.n;
        out.fill(0.0);
        let mut bl = [0.0; MAX_ROWS * MAX_LOCAL_DOFS];
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let r0 = s.row0 + i * rows;
                blk.jacobian(i, u, t, &mut bl[..rows * k]);
                for r in 0..rows {
                    for (p, &dof) in blk.dofs(i).iter().enumerate() {
                        out[(r0 + r) * n + dof] += bl[r * k + p];
                    }
                }
            }
        }
    }

    /// Adds the joint terms of one configuration ([`JointTerms`]): the
    /// constraint force `c B^T w` into `residual[..n]`, the multiplier
    /// column `c B^T` and the curvature `c d(B^T w)/du` into the matrix, with
    /// B = B(u, t), or Gonzalez's discrete Jacobian `B_d(u0, u)` when
    /// `terms.discrete_from = Some(u0)`
    /// ([`crate::joint::JointSet::discrete_jacobian`]).
    pub fn add_joint_terms(&self, model: &Model, terms: &JointTerms<'_>, sys: &mut SaddleSystem) {
        let Local { b: bl, h: hl, .. } = &mut *sys.local;
        let mut w = [0.0; MAX_ROWS];
        let mut wc = [0.0; MAX_ROWS];
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let d = blk.dofs(i);
                let r0 = s.row0 + i * rows;
                let curvature = terms.curvature.map(|(c, mix)| {
                    for (r, x) in wc.iter_mut().enumerate().take(rows) {
                        *x = mix.at(r0 + r);
                    }
                    c
                });
                match terms.discrete_from {
                    Some(u0) => {
                        hl[..k * k].fill(0.0);
                        blk.discrete_jacobian(
                            i,
                            u0,
                            terms.u,
                            terms.t,
                            &mut bl[..rows * k],
                            curvature.map(|_| (&wc[..rows], &mut hl[..k * k])),
                        );
                    }
                    None => blk.jacobian(i, terms.u, terms.t, &mut bl[..rows * k]),
                }
                if let Some((c, mix)) = terms.force {
                    for (r, x) in w.iter_mut().enumerate().take(rows) {
                        *x = c * mix.at(r0 + r);
                    }
                    for r in 0..rows {
                        for (p, &dof) in d.iter().enumerate() {
                            sys.residual[dof] += bl[r * k + p] * w[r];
                        }
                    }
                }
                let blk_slots = i * rows * k..(i + 1) * rows * k;
                if terms.column != 0.0 {
                    scatter_add(
                        &mut sys.values,
                        &s.c[blk_slots],
                        &bl[..rows * k],
                        terms.column,
                    );
                }
                if let Some(c) = curvature {
                    if terms.discrete_from.is_none() {
                        hl[..k * k].fill(0.0);
                        blk.add_curvature(i, terms.u, terms.t, &wc[..rows], 1.0, &mut hl[..k * k]);
                    }
                    scatter_add(
                        &mut sys.values,
                        &s.h[i * k * k..(i + 1) * k * k],
                        &hl[..k * k],
                        c,
                    );
                }
            }
        }
    }

    /// Fills the index-1 system of the accelerations and multipliers at
    /// (u, v, t) (seed 001 eq. 3.4; seed 000 eq. 3.5):
    /// `[M(u) B^T; B 0] [a; lambda] = [f(u, v, t); gamma]` with
    /// `f = F + M g - P(u) - F_d(u, v) - g(u, v)` and
    /// `gamma = -(B v)_u v - 2 Phi_tu v - Phi_tt`; with Baumgarte's
    /// stabilization `Some([g1, g2])` (seed 001 eq. 2.14b, B(g1, g2):
    /// `Phi'' + g1 Phi' + g2 Phi = 0`) the constraint rows are
    /// `gamma - g1 (B v + Phi_t) - g2 Phi`. The residual
    /// holds the negated right-hand side, so that the solve of `A x = -r`
    /// gives (a, lambda).
    pub fn fill_index1(
        &self,
        model: &Model,
        u: &[f64],
        v: &[f64],
        t: f64,
        baumgarte: Option<[f64; 2]>,
        sys: &mut SaddleSystem,
    ) {
        sys.residual.fill(0.0);
        sys.values.fill(0.0);
        let n = self.n;
        self.add_mass(&mut sys.values, 1.0);
        self.subtract_gravity(&mut sys.residual[..n], 1.0);
        self.element_pass(model, sys, None, |b, i, f, _| b.force(i, u, f, None));
        self.add_load_terms(model, u, &|f| f.value(t), None, sys);
        // Dampers and configuration-dependent inertia at a = 0: the residual
        // gets F_d(u, v) + g(u, v), the matrix M(u).
        let zeros = std::mem::take(&mut sys.zeros);
        let x = RateState {
            u,
            v,
            a: &zeros,
            midpoint: None,
        };
        self.add_rate_forces(model, &x, Some([0.0, 0.0, 1.0]), sys);
        sys.zeros = zeros;
        let mut bl = [0.0; MAX_ROWS * MAX_LOCAL_DOFS];
        let mut extra = [0.0; MAX_ROWS];
        let mut phi = [0.0; MAX_ROWS];
        let mut phi_t = [0.0; MAX_ROWS];
        let mut vl = [0.0; MAX_LOCAL_DOFS];
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let r0 = s.row0 + i * rows;
                blk.jacobian(i, u, t, &mut bl[..rows * k]);
                let blk_slots = i * rows * k..(i + 1) * rows * k;
                scatter_set(&mut sys.values, &s.b[blk_slots.clone()], &bl[..rows * k]);
                scatter_set(&mut sys.values, &s.c[blk_slots], &bl[..rows * k]);
                let mut gamma = [0.0; MAX_ROWS];
                blk.velocity_curvature(i, u, v, t, &mut gamma[..rows]);
                blk.phi_tt(i, u, v, t, &mut extra[..rows]);
                for r in 0..rows {
                    sys.residual[n + r0 + r] = gamma[r] + extra[r];
                }
                if let Some([g1, g2]) = baumgarte {
                    blk.phi(i, u, t, &mut phi[..rows]);
                    blk.phi_t(i, u, t, &mut phi_t[..rows]);
                    gather(v, blk.dofs(i), &mut vl[..k]);
                    for r in 0..rows {
                        let bv: f64 = (0..k).map(|p| bl[r * k + p] * vl[p]).sum();
                        sys.residual[n + r0 + r] += g1 * (bv + phi_t[r]) + g2 * phi[r];
                    }
                }
            }
        }
    }

    /// Fills the matrix `[W B^T; B 0]` of a projection onto the constraints
    /// at (u, t), with the metric `W = M(u)` (`mass`, seed 001 eq. 3.68 /
    /// 4.15) or `W = I` (eq. 3.69, for badly scaled or singular masses); the
    /// residual is left zero.
    pub fn fill_projection(
        &self,
        model: &Model,
        u: &[f64],
        t: f64,
        mass: bool,
        sys: &mut SaddleSystem,
    ) {
        self.fill_projection_with_residuals(model, u, t, mass, sys, None);
    }

    /// [`Assembler::fill_projection`] that, with `residuals = Some((v, phi,
    /// rate))`, also writes `Phi(u, t)` into `phi` and `B(u, t) v + Phi_t(u, t)`
    /// into `rate` (as [`Assembler::constraint_values`] and
    /// [`Assembler::constraint_rates`] do) from the same Jacobian blocks:
    /// PStab's drift test and its matrix at the unstabilized point
    /// (seed 001 Algorithm 3.3, steps 2–3) with one Jacobian evaluation.
    pub fn fill_projection_with_residuals(
        &self,
        model: &Model,
        u: &[f64],
        t: f64,
        mass: bool,
        sys: &mut SaddleSystem,
        residuals: Option<(&[f64], &mut [f64], &mut [f64])>,
    ) {
        sys.residual.fill(0.0);
        sys.values.fill(0.0);
        if mass {
            self.add_mass(&mut sys.values, 1.0);
            if model.elements.iter().any(|b| b.has_inertia()) {
                let zeros = std::mem::take(&mut sys.zeros);
                let x = RateState {
                    u,
                    v: &zeros,
                    a: &zeros,
                    midpoint: None,
                };
                self.add_rate_forces(model, &x, Some([0.0, 0.0, 1.0]), sys);
                sys.zeros = zeros;
                sys.residual.fill(0.0);
            }
        } else {
            for &d in &self.diag_slots {
                sys.values[d] = 1.0;
            }
        }
        let mut bl = [0.0; MAX_ROWS * MAX_LOCAL_DOFS];
        let mut vl = [0.0; MAX_LOCAL_DOFS];
        let mut residuals = residuals;
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                blk.jacobian(i, u, t, &mut bl[..rows * k]);
                let blk_slots = i * rows * k..(i + 1) * rows * k;
                scatter_set(&mut sys.values, &s.b[blk_slots.clone()], &bl[..rows * k]);
                scatter_set(&mut sys.values, &s.c[blk_slots], &bl[..rows * k]);
                if let Some((v, phi, rate)) = residuals.as_mut() {
                    let r0 = s.row0 + i * rows;
                    blk.phi(i, u, t, &mut phi[r0..r0 + rows]);
                    blk.phi_t(i, u, t, &mut rate[r0..r0 + rows]);
                    gather(v, blk.dofs(i), &mut vl[..k]);
                    for r in 0..rows {
                        rate[r0 + r] += (0..k).map(|p| bl[r * k + p] * vl[p]).sum::<f64>();
                    }
                }
            }
        }
    }

    /// The mass matrix M(u) (constant part and configuration-dependent
    /// inertia) applied to `x`: `mass += M(u) x` and `rate += (d(M(u) x)/du) x`
    /// (with `x = v`, `rate` is `dM/dt v`), without forming the matrices.
    pub fn add_mass_product(
        &self,
        model: &Model,
        u: &[f64],
        x: &[f64],
        mass: Option<&mut [f64]>,
        rate: Option<&mut [f64]>,
        sys: &mut SaddleSystem,
    ) {
        let mut mass = mass;
        if let Some(out) = mass.as_deref_mut() {
            mass_mul(&self.mass, x, out);
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

    /// `out += (d(B(u, t)^T w)/du) x`: the curvature of the constraint force
    /// `B^T w` applied to a vector, without forming the matrix.
    #[allow(clippy::too_many_arguments)]
    pub fn add_curvature_product(
        &self,
        model: &Model,
        u: &[f64],
        t: f64,
        w: &[f64],
        x: &[f64],
        out: &mut [f64],
        sys: &mut SaddleSystem,
    ) {
        let Local { h: hl, q: xl, .. } = &mut *sys.local;
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let r0 = s.row0 + i * rows;
                let wl = &w[r0..r0 + rows];
                if wl.iter().all(|x| *x == 0.0) {
                    continue;
                }
                hl[..k * k].fill(0.0);
                blk.add_curvature(i, u, t, wl, 1.0, &mut hl[..k * k]);
                let d = blk.dofs(i);
                gather(x, d, &mut xl[..k]);
                for (p, &dof) in d.iter().enumerate() {
                    out[dof] += (0..k).map(|q| hl[p * k + q] * xl[q]).sum::<f64>();
                }
            }
        }
    }

    /// Power of the constraint forces `-B^T lambda` of the rheonomic joints:
    /// `-lambda . B v = lambda . Phi_t(u, t)` on a state with `B v + Phi_t = 0`
    /// (scleronomic joints do no work).
    pub fn constraint_power(&self, model: &Model, u: &[f64], lambda: &[f64], t: f64) -> f64 {
        let mut pt = [0.0; MAX_ROWS];
        let mut power = 0.0;
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let rows = blk.rows();
            for i in (0..blk.len()).filter(|&i| blk.is_rheonomic(i)) {
                let r0 = s.row0 + i * rows;
                blk.phi_t(i, u, t, &mut pt[..rows]);
                power += (0..rows).map(|r| lambda[r0 + r] * pt[r]).sum::<f64>();
            }
        }
        power
    }

    /// Writes `Phi(u, t)` (m rows) into `out`. The rows of velocity-level
    /// joints are zero (their `phi` writes zeros: they have no position-level
    /// residual; [`Model::constraint_levels`]).
    pub fn constraint_values(&self, model: &Model, u: &[f64], t: f64, out: &mut [f64]) {
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let rows = blk.rows();
            for i in 0..blk.len() {
                let r0 = s.row0 + i * rows;
                blk.phi(i, u, t, &mut out[r0..r0 + rows]);
            }
        }
    }

    /// Writes the velocity constraints `B(u, t) v + Phi_t(u, t)` (m rows) into `out`.
    pub fn constraint_rates(&self, model: &Model, u: &[f64], v: &[f64], t: f64, out: &mut [f64]) {
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let rows = blk.rows();
            for i in 0..blk.len() {
                let r0 = s.row0 + i * rows;
                rate_rows(blk.as_ref(), i, u, v, t, &mut out[r0..r0 + rows]);
            }
        }
    }

    /// Writes `Phi(u, t)` into `phi` and `B(u, t) v + Phi_t(u, t)` into
    /// `rate` (m rows each) in one pass over the joints.
    pub fn constraint_residuals(
        &self,
        model: &Model,
        u: &[f64],
        v: &[f64],
        t: f64,
        phi: &mut [f64],
        rate: &mut [f64],
    ) {
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let rows = blk.rows();
            for i in 0..blk.len() {
                let r = s.row0 + i * rows..s.row0 + (i + 1) * rows;
                blk.phi(i, u, t, &mut phi[r.clone()]);
                rate_rows(blk.as_ref(), i, u, v, t, &mut rate[r]);
            }
        }
    }

    /// The matrix `[M B^T; B 0]` of the consistent-initialization solve at the model's initial state.
    pub fn initial_saddle_matrix(&self, model: &Model) -> CsMat<f64> {
        let mut sys = self.new_system();
        self.fill_index1(model, &model.u0, &model.v0, 0.0, None, &mut sys);
        self.pattern.to_csc(&sys.values)
    }

    /// out += scale * (sum of the external loads at state u, time t), gravity excluded.
    pub fn add_loads(&self, model: &Model, u: &[f64], t: f64, out: &mut [f64], scale: f64) {
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

    /// Work over a step of the non-conservative forces: external loads
    /// (gravity excluded) at positions `u`, each scaled by `factor(time
    /// function)`, `F . du`, and dampers, `-F_d(u, v) . du`. With the state
    /// and time factors of a midpoint step this is the exact energy
    /// bookkeeping of the midpoint schemes.
    pub fn nonconservative_work(
        &self,
        model: &Model,
        u: &[f64],
        v: &[f64],
        du: &[f64],
        factor: &dyn Fn(&TimeFunction) -> f64,
    ) -> f64 {
        let mut fl = [0.0; MAX_LOCAL_DOFS];
        let mut ql = [0.0; MAX_LOCAL_DOFS];
        let mut work = 0.0;
        for l in &model.loads {
            let k = l.dofs.len();
            gather(u, &l.dofs, &mut ql[..k]);
            l.load
                .force(&ql[..k], factor(l.load.time()), &mut fl[..k], None);
            work += gathered_dot(&fl[..k], &l.dofs, du);
        }
        if model.elements.iter().any(|b| b.is_dissipative()) {
            work -= self.damper_work(model, u, v, du);
        }
        work
    }

    /// `F_d(u~, v~) . du` summed over the dampers.
    fn damper_work(&self, model: &Model, u_tilde: &[f64], v_tilde: &[f64], du: &[f64]) -> f64 {
        let mut fl = [0.0; MAX_LOCAL_DOFS];
        let mut kl = [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS];
        let mut cl = [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS];
        let mut work = 0.0;
        for b in model.elements.iter().filter(|b| b.is_dissipative()) {
            let n = b.ndof();
            for i in 0..b.len() {
                b.damping_force(
                    i,
                    u_tilde,
                    v_tilde,
                    &mut fl[..n],
                    &mut kl[..n * n],
                    &mut cl[..n * n],
                );
                work += gathered_dot(&fl[..n], b.dofs(i), du);
            }
        }
        work
    }

    /// Kinetic and potential energy (elastic + gravity) at (u, v); external work is 0.
    pub fn energy(&self, model: &Model, u: &[f64], v: &[f64]) -> Energy {
        let kinetic = 0.5
            * self
                .mass
                .outer_iterator()
                .enumerate()
                .map(|(c, col)| v[c] * col.iter().map(|(r, m)| m * v[r]).sum::<f64>())
                .sum::<f64>()
            + model
                .elements
                .iter()
                .filter(|b| b.has_inertia())
                .map(|b| (0..b.len()).map(|i| b.kinetic_energy(i, u, v)).sum::<f64>())
                .sum::<f64>();
        let elastic: f64 = model
            .elements
            .iter()
            .map(|b| {
                if self.gather.is_some() {
                    (0..b.len())
                        .into_par_iter()
                        .map(|i| b.potential(i, u))
                        .sum::<f64>()
                } else {
                    (0..b.len()).map(|i| b.potential(i, u)).sum::<f64>()
                }
            })
            .sum();
        let potential = elastic - dot(&self.gravity_force, u);
        Energy {
            kinetic,
            potential,
            total: kinetic + potential,
            external_work: 0.0,
        }
    }

    /// Max-norms of Phi, B v + Phi_t and B a + (B v)_u v + Phi_tt + 2 Phi_tu v.
    /// The position norm takes the position-level rows only; the rows of
    /// velocity-level joints (`A v + a_t`, `A a + (A v)_u v + a_t,u v + a_t,t`)
    /// enter the velocity and acceleration norms.
    pub fn constraint_norms(
        &self,
        model: &Model,
        u: &[f64],
        v: &[f64],
        a: &[f64],
        t: f64,
    ) -> ConstraintNorms {
        let mut out = ConstraintNorms::default();
        let mut phi = [0.0; MAX_ROWS];
        let mut pt = [0.0; MAX_ROWS];
        let mut ptt = [0.0; MAX_ROWS];
        let mut bl = [0.0; MAX_ROWS * MAX_LOCAL_DOFS];
        let mut vl = [0.0; MAX_LOCAL_DOFS];
        let mut al = [0.0; MAX_LOCAL_DOFS];
        for blk in &model.joints {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let position = blk.level(i) == ConstraintLevel::Position;
                blk.phi(i, u, t, &mut phi[..rows]);
                blk.phi_t(i, u, t, &mut pt[..rows]);
                blk.phi_tt(i, u, v, t, &mut ptt[..rows]);
                blk.jacobian(i, u, t, &mut bl[..rows * k]);
                gather(v, blk.dofs(i), &mut vl[..k]);
                gather(a, blk.dofs(i), &mut al[..k]);
                let mut gamma = [0.0; MAX_ROWS];
                blk.velocity_curvature(i, u, v, t, &mut gamma[..rows]);
                for r in 0..rows {
                    let row = &bl[r * k..(r + 1) * k];
                    let bv: f64 = row.iter().zip(&vl[..k]).map(|(b, x)| b * x).sum();
                    let ba: f64 = row.iter().zip(&al[..k]).map(|(b, x)| b * x).sum();
                    if position {
                        out.position = out.position.max(phi[r].abs());
                    }
                    out.velocity = out.velocity.max((bv + pt[r]).abs());
                    out.acceleration = out.acceleration.max((ba + gamma[r] + ptt[r]).abs());
                }
            }
        }
        out
    }

    /// Global constraint Jacobian B(u, t) (m x n, CSR) for export and diagnostics.
    pub fn constraint_jacobian(&self, model: &Model, u: &[f64], t: f64) -> CsMat<f64> {
        let mut tri = TriMat::new((self.m, self.n));
        let mut bl = [0.0; MAX_ROWS * MAX_LOCAL_DOFS];
        for (blk, s) in model.joints.iter().zip(&self.joints) {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                blk.jacobian(i, u, t, &mut bl[..rows * k]);
                for r in 0..rows {
                    for (p, &c) in blk.dofs(i).iter().enumerate() {
                        tri.add_triplet(s.row0 + i * rows + r, c, bl[r * k + p]);
                    }
                }
            }
        }
        tri.to_csr()
    }

    /// Global tangent stiffness K(u) = dP/du of the elements (CSC) for export.
    pub fn stiffness(&self, model: &Model, u: &[f64]) -> CsMat<f64> {
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
    pub fn stiffness_max(&self, model: &Model, u: &[f64], sys: &mut SaddleSystem) -> f64 {
        sys.residual.fill(0.0);
        sys.values.fill(0.0);
        self.element_pass(model, sys, Some(1.0), |b, i, f, k| b.force(i, u, f, k));
        let max = sys.values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        sys.residual.fill(0.0);
        sys.values.fill(0.0);
        max
    }

    /// Internal force P(u) of all elements.
    pub fn internal_force(&self, model: &Model, u: &[f64]) -> Vec<f64> {
        let mut sys = self.new_system();
        self.element_pass(model, &mut sys, None, |b, i, f, _| b.force(i, u, f, None));
        sys.residual.truncate(self.n);
        sys.residual
    }
}

/// out += M x for a CSC matrix M.
fn mass_mul(m: &CsMat<f64>, x: &[f64], out: &mut [f64]) {
    for (c, col) in m.outer_iterator().enumerate() {
        let xc = x[c];
        if xc != 0.0 {
            for (r, v) in col.iter() {
                out[r] += v * xc;
            }
        }
    }
}

/// Dot product.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `B v + Phi_t` of row block `i` of the joint set `blk` at (u, v, t) into
/// `out` (its rows).
fn rate_rows(blk: &dyn JointSet, i: usize, u: &[f64], v: &[f64], t: f64, out: &mut [f64]) {
    let (rows, k) = (blk.rows(), blk.ndof());
    let mut bl = [0.0; MAX_ROWS * MAX_LOCAL_DOFS];
    let mut vl = [0.0; MAX_LOCAL_DOFS];
    blk.jacobian(i, u, t, &mut bl[..rows * k]);
    blk.phi_t(i, u, t, out);
    gather(v, blk.dofs(i), &mut vl[..k]);
    for (r, o) in out.iter_mut().enumerate() {
        *o += (0..k).map(|p| bl[r * k + p] * vl[p]).sum::<f64>();
    }
}
