//! Global sparse operators from local physics.
//!
//! The [`Assembler`] builds, once per model, the CSC pattern of the saddle-point
//! matrix `A = [S C; B 0]` (S = c_M M + c_u (K + H - K_load), C the multiplier
//! column, B the constraint Jacobian), the constant mass matrix M, the gravity
//! load M g and, for every element, joint and load entry, the position ("slot")
//! it adds into. Each Newton iteration then only writes values.
//!
//! The element, rate-force and joint loops run on the current rayon pool
//! (`flexmb run|bench --threads N`) without serial scatter or contention:
//! each element or joint set is cut into blocks of 32 consecutive
//! entities, coloured once with the pattern so that two blocks of a colour
//! share no DOF (so neither residual rows nor matrix slots); the colours
//! run in a fixed order, the blocks of a colour in parallel, each writing
//! straight into the global arrays (`colour.rs`). Every entry's sum is then
//! taken in an order fixed by the colouring, so results are bitwise the same
//! on any number of threads (tests/threads.rs: 1, 2, 3 and 7). Energies sum
//! in a fixed binary tree; zeroing, the mass scatter and, on a pool of
//! several threads, the product `M a` (by rows, bitwise as the serial column
//! loop) run in parallel blocks. On the 2-core machine (criterion `assembly/*`, docs/bench.md
//! "Threads"): 2 threads against 1, the L1 Newton matrix of 25,000 elements
//! 9.00 → 4.86 ms (1.85×), its residual 2.66 → 1.52 ms (1.75×), the L4
//! rate forces, rows and joint terms of 14,300 bodies 79.3 → 44.9 ms
//! (1.77×); the colouring keeps 4 bytes per 32 entities, and L1 at 1e6 DOFs
//! peaks at 1.09 KiB per DOF (1.14 before). The slab and
//! gather path it replaces (`Assembler::with_parallel`) did not pay.
//!
//! The pattern, the slots and the system type are here; the operators are
//! methods of the problem object [`Mechanics`] (`mechanics.rs`: the model
//! with its assembler, what the methods hold and ask), split by kind:
//! `forces.rs` (inertia, elements, loads, dampers, with K and
//! D), `constraints.rs` (Phi, B, rate rows, joint terms and curvature),
//! `systems.rs` (the composed index-1 and projection systems), `measures.rs`
//! (energies, constraint norms, work of the non-conservative forces) and
//! `diagnose.rs` (why a matrix is singular, in the model's terms). The
//! block layouts (`layout.rs`: the saddle point's unknowns, and the grids of
//! saddle-point blocks of the multi-level methods) declare every block
//! matrix's pattern.

mod colour;
mod constraints;
mod diagnose;
mod forces;
mod layout;
mod measures;
mod mechanics;
mod systems;

pub use crate::linalg::Pattern;
pub use diagnose::diagnose_singular;
pub use layout::{BlockGrid, BlockLayout, BlockPairs, ALL, COLUMN, DIAGONAL, MASS, ROWS, STIFF};
pub use measures::{ConstraintNorms, Energy};
pub use mechanics::Mechanics;

use sprs::{CsMat, TriMat};

use colour::Colouring;

use crate::element::{EvaluationPoint, MAX_LOCAL_DOFS};
use crate::joint::MAX_ROWS;
use crate::model::{DofKind, Model};

/// How [`Mechanics::add_element_forces`] evaluates the internal forces.
#[derive(Debug, Clone, Copy)]
pub enum ElementEval<'a> {
    /// `P(u)` with the tangent `K(u) = dP/du`.
    At(&'a [f64]),
    /// The force at the evaluation point of a one-step method within its
    /// step ([`EvaluationPoint`]; [`crate::element::Element::eom_force`]:
    /// `P(u~)` or an independent strain approximation) with its derivative
    /// with respect to u_{n+1}.
    Point(EvaluationPoint<'a>),
    /// The discrete gradient `P_d(u_n, u_{n+1})` of the energy-conserving
    /// midpoint methods ([`crate::element::Element::discrete_gradient`];
    /// the point has the midpoint weights) with its derivative with respect
    /// to u_{n+1}.
    DiscreteGradient(EvaluationPoint<'a>),
}

/// What [`Mechanics::set_rate_rows`] writes besides the rows `B v + Phi_t`.
#[derive(Debug, Clone, Copy)]
pub enum RateRows<'a> {
    /// Nothing: the residual rows only.
    Residual,
    /// Their derivative with respect to u, with B(u, t) evaluated.
    Evaluate,
    /// Their derivative, with B(u, t) read from the constraint rows of the
    /// same u and t that [`Mechanics::set_constraint_rows`] wrote.
    Known(&'a SaddleSystem),
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
/// [`Mechanics::add_joint_terms`]: any of the constraint force `c B^T w`,
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

/// Further outputs of [`Mechanics::add_discrete_joint_terms`] with
/// Gonzalez's discrete Jacobian `B_d(u0, u)`, from the joint evaluations it
/// makes anyway ([`crate::joint::DiscreteExtras`]).
#[derive(Default)]
pub struct DiscreteOutputs<'a> {
    /// Adds the curvature's derivative with respect to u0, `c d(B_d^T
    /// w)/du0` (base pattern order: the swapped call's curvature).
    pub from: Option<&'a mut [f64]>,
    /// Writes the constraint rows `Phi(u)`, `B(u)` as
    /// [`Mechanics::set_constraint_rows`] with scale 1 writes them.
    pub rows: Option<&'a mut SaddleSystem>,
    /// `Phi(u0, t)` (m rows), when the caller has it.
    pub phi_from: Option<&'a [f64]>,
    /// `Phi(u0)`, `B(u0)` as [`Mechanics::set_constraint_rows`] writes
    /// them, at another time: used for the joints that are not rheonomic.
    pub from_rows: Option<&'a SaddleSystem>,
    /// Without `discrete_from`: `B(u, t)` of the same u and t as
    /// [`Mechanics::set_constraint_rows`] writes it, read instead of
    /// evaluated.
    pub known_b: Option<&'a SaddleSystem>,
}

/// Values of the saddle-point system `A x = -r` and assembly workspace.
#[derive(Debug, Clone)]
pub struct SaddleSystem {
    /// Residual r = [e1; e2] (n + m).
    pub residual: Vec<f64>,
    /// Matrix values in the order of [`Assembler::pattern`].
    pub values: Vec<f64>,
    local: Box<Local>,
    /// n zeros (an acceleration of zero for the rate forces).
    zeros: Vec<f64>,
}

impl SaddleSystem {
    /// Zeroes the residual and, with `matrix`, the matrix values (in
    /// parallel blocks on a rayon pool).
    pub fn clear(&mut self, matrix: bool) {
        colour::fill(&mut self.residual, 0.0);
        if matrix {
            colour::fill(&mut self.values, 0.0);
        }
    }
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
    const ZERO: Local = Local {
        f: [0.0; MAX_LOCAL_DOFS],
        k: [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS],
        q: [0.0; MAX_LOCAL_DOFS],
        b: [0.0; MAX_ROWS * MAX_LOCAL_DOFS],
        h: [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS],
        c: [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS],
        m: [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS],
    };

    fn new() -> Box<Self> {
        Box::new(Self::ZERO)
    }
}

struct ElementSlots {
    /// Matrix slots, ndof^2 per element, row-major.
    k: Vec<usize>,
    /// The elements grouped into DOF-disjoint colours.
    colours: Colouring,
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
    /// The joints grouped into DOF-disjoint colours.
    colours: Colouring,
}

/// Builds and fills the global sparse operators of one model.
pub struct Assembler {
    n: usize,
    m: usize,
    pattern: Pattern,
    mass: CsMat<f64>,
    /// The rows of `mass`, for its product by rows in parallel; built when
    /// the assembler is made on a pool of more than one thread.
    mass_rows: Option<MassRows>,
    mass_slots: Vec<usize>,
    /// Slots of the diagonal entries (i, i), i < n (identity metric).
    diag_slots: Vec<usize>,
    gravity_force: Vec<f64>,
    elements: Vec<ElementSlots>,
    joints: Vec<JointSlots>,
    loads: Vec<Vec<usize>>,
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

/// The mass matrix: the model's lumped inertia plus the element masses.
fn lumped_mass(model: &Model) -> CsMat<f64> {
    let n = model.n_dofs();
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
    tri.to_csc()
}

/// Gravity load `M ĝ`, `ĝ` = g on the translational DOFs, 0 on the others.
fn gravity_load(model: &Model, mass: &CsMat<f64>) -> Vec<f64> {
    let n = model.n_dofs();
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
    mass_mul(mass, &ghat, &mut gravity_force);
    gravity_force
}

/// Every (row, col) of the saddle-point matrix that can be nonzero: the
/// diagonal, the mass matrix, the element and load blocks, and the joints'
/// curvature and constraint-gradient blocks.
fn sparsity_pattern(model: &Model, mass: &CsMat<f64>) -> Pattern {
    let n = model.n_dofs();
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
    let layout = saddle_layout(model);
    let (uu, lu, ul) = ((0, 0), (1, 0), (0, 1));
    let mut pairs = layout.pairs(count);
    pairs.extend(uu, (0..n).map(|i| (i, i)));
    for (c, col) in mass.outer_iterator().enumerate() {
        pairs.extend(uu, col.iter().map(|(r, _)| (r, c)));
    }
    for b in &model.elements {
        for i in 0..b.len() {
            pairs.dense(uu, b.dofs(i), b.dofs(i));
        }
    }
    let mut row0 = 0;
    for b in &model.joints {
        for i in 0..b.len() {
            let d = b.dofs(i);
            pairs.dense(uu, d, d);
            for r in 0..b.rows() {
                let row = row0 + i * b.rows() + r;
                for &c in d {
                    pairs.add(lu, row, c);
                    pairs.add(ul, c, row);
                }
            }
        }
        row0 += b.len() * b.rows();
    }
    for l in &model.loads {
        pairs.dense(uu, &l.dofs, &l.dofs);
    }
    pairs.pattern()
}

/// The unknowns of the saddle-point system: the DOFs `u` and the
/// multipliers `lambda`.
fn saddle_layout(model: &Model) -> BlockLayout {
    BlockLayout::new(&[("u", model.n_dofs()), ("lambda", model.n_constraints())])
}

/// Stiffness slots and DOF-disjoint colouring of each element block.
fn element_slots(model: &Model, pattern: &Pattern) -> Vec<ElementSlots> {
    let n = model.n_dofs();
    model
        .elements
        .iter()
        .map(|b| {
            let mut k = Vec::with_capacity(b.len() * b.ndof() * b.ndof());
            for i in 0..b.len() {
                pattern.block_slots(b.dofs(i), b.dofs(i), &mut k);
            }
            let colours = Colouring::new(b.len(), n, |i| b.dofs(i));
            ElementSlots { k, colours }
        })
        .collect()
}

/// Constraint-gradient and curvature slots, first multiplier row and
/// colouring of each joint block.
fn joint_slots(model: &Model, pattern: &Pattern) -> Vec<JointSlots> {
    let n = model.n_dofs();
    let lambda0 = saddle_layout(model).offset(1);
    let mut row0 = 0;
    model
        .joints
        .iter()
        .map(|blk| {
            let (rows, k) = (blk.rows(), blk.ndof());
            let mut s = JointSlots {
                row0,
                b: Vec::with_capacity(blk.len() * rows * k),
                c: Vec::with_capacity(blk.len() * rows * k),
                h: Vec::with_capacity(blk.len() * k * k),
                colours: Colouring::new(blk.len(), n, |i| blk.dofs(i)),
            };
            for i in 0..blk.len() {
                let d = blk.dofs(i);
                for r in 0..rows {
                    let row = lambda0 + row0 + i * rows + r;
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
        .collect()
}

impl Assembler {
    /// Builds pattern, slots, colourings, mass matrix and gravity load of `model`.
    pub fn new(model: &Model) -> Self {
        let n = model.n_dofs();
        let m = model.n_constraints();
        let mass = lumped_mass(model);
        let gravity_force = gravity_load(model, &mass);
        let pattern = sparsity_pattern(model, &mass);

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

        let elements = element_slots(model, &pattern);
        let joints = joint_slots(model, &pattern);

        let loads = model
            .loads
            .iter()
            .map(|l| {
                let mut s = Vec::new();
                pattern.block_slots(&l.dofs, &l.dofs, &mut s);
                s
            })
            .collect();

        Assembler {
            n,
            m,
            pattern,
            mass_rows: (rayon::current_num_threads() > 1)
                .then(|| MassRows::new(&mass))
                .flatten(),
            mass,
            mass_slots,
            diag_slots,
            gravity_force,
            elements,
            joints,
            loads,
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

    /// The pattern of a `k x k` grid of copies of the saddle-point pattern,
    /// block `I k + J` holding the regions `regions[I k + J]`
    /// ([`BlockGrid`]).
    pub fn block_grid(&self, k: usize, regions: &[u8]) -> BlockGrid {
        BlockGrid::new(&self.pattern, self.n, &self.mass_slots, k, regions)
    }

    /// A zeroed system with workspace sized for this model.
    pub fn new_system(&self) -> SaddleSystem {
        SaddleSystem {
            residual: vec![0.0; self.n + self.m],
            values: vec![0.0; self.pattern.nnz()],
            local: Local::new(),
            zeros: vec![0.0; self.n],
        }
    }
}

/// The rows of a CSC matrix: for each row, the positions of its entries in
/// the matrix's values, in increasing column order (32-bit: 8 bytes per
/// entry), for [`MassRows::mul_add`].
struct MassRows {
    ptr: Vec<usize>,
    col: Vec<u32>,
    pos: Vec<u32>,
}

impl MassRows {
    /// The rows of `m`, when it has at most `u32::MAX` entries and columns.
    fn new(m: &CsMat<f64>) -> Option<Self> {
        if m.nnz() > u32::MAX as usize || m.cols() > u32::MAX as usize {
            return None;
        }
        let mut ptr = vec![0usize; m.rows() + 1];
        for col in m.outer_iterator() {
            for (r, _) in col.iter() {
                ptr[r + 1] += 1;
            }
        }
        for r in 0..m.rows() {
            ptr[r + 1] += ptr[r];
        }
        let mut next = ptr[..m.rows()].to_vec();
        let (mut col, mut pos) = (vec![0u32; m.nnz()], vec![0u32; m.nnz()]);
        let mut k = 0u32;
        for (c, column) in m.outer_iterator().enumerate() {
            for (r, _) in column.iter() {
                col[next[r]] = c as u32;
                pos[next[r]] = k;
                next[r] += 1;
                k += 1;
            }
        }
        Some(MassRows { ptr, col, pos })
    }

    /// out += M x (`m` the matrix these are the rows of), row by row, the
    /// rows in parallel blocks on a pool. Row `r`'s terms come in increasing
    /// column order, the order in which [`mass_mul`]'s column loop adds them
    /// into `out[r]` (skipping the same zero `x[c]`), so the result is bitwise
    /// the same as its and does not depend on the threads.
    fn mul_add(&self, m: &CsMat<f64>, x: &[f64], out: &mut [f64]) {
        let values = m.data();
        colour::for_each_entry(&mut out[..m.rows()], |r, o| {
            let range = self.ptr[r]..self.ptr[r + 1];
            for (&c, &k) in self.col[range.clone()].iter().zip(&self.pos[range]) {
                let xc = x[c as usize];
                if xc != 0.0 {
                    *o += values[k as usize] * xc;
                }
            }
        });
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

#[cfg(test)]
mod tests {
    use super::{mass_mul, MassRows};
    use sprs::{CsMat, TriMat};

    /// An unsymmetric banded matrix of `n` rows with values that round
    /// differently in every order, and a vector with zeros.
    fn banded(n: usize) -> (CsMat<f64>, Vec<f64>) {
        let mut t = TriMat::new((n, n));
        for c in 0..n {
            for r in c.saturating_sub(3)..(c + 4).min(n) {
                t.add_triplet(r, c, 1.0 / (1.0 + r as f64 * 0.37 + c as f64 * 0.11));
            }
        }
        let x = (0..n)
            .map(|i| if i % 5 == 0 { 0.0 } else { (i as f64).sin() })
            .collect();
        (t.to_csc(), x)
    }

    /// The row-wise product equals the column loop bit for bit on 1, 2 and 3
    /// threads.
    #[test]
    fn mass_product_by_rows_is_bitwise_the_column_loop() {
        let n = 40_000;
        let (m, x) = banded(n);
        let rows = MassRows::new(&m).unwrap();
        let mut want = vec![0.25; n + 3];
        mass_mul(&m, &x, &mut want);
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut got = vec![0.25; n + 3];
            pool.install(|| rows.mul_add(&m, &x, &mut got));
            assert!(
                got.iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{threads} threads"
            );
        }
    }
}
