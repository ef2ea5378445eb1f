//! Joints: holonomic constraints Phi(u, t) = 0 with their Jacobian B = dPhi/du
//! and the curvature terms that the Newton matrix (d(B^T lambda)/du, Hoitink
//! eq. 4.19) and the acceleration-level residual need; and velocity-level
//! (nonholonomic) constraints `A(u) v + a_t(u, t) = 0` ([`ConstraintLevel`]).
//!
//! Like elements, joints see local vectors ordered as their DOF list; the
//! assembler scatters their rows into the global B and the saddle-point matrix.
//!
//! **Constraint levels.** The rows of every joint share one multiplier vector
//! and one Jacobian B (row block of the saddle-point matrix), whatever their
//! level. A position-level joint's rows are `Phi(u, t) = 0`, B = dPhi/du. A
//! velocity-level joint's rows are `A(u) v + a_t(u, t) = 0` with no
//! position-level residual; its trait methods mean:
//!
//! * [`Joint::phi`] writes zeros (so `Phi` of the assembled vector is zero on
//!   those rows);
//! * [`Joint::jacobian`] is `A(u)` (it multiplies v in the velocity rows and a
//!   in the acceleration rows, and `A^T lambda` is the constraint force);
//! * [`Joint::add_curvature`] adds `scale * d(A(u)^T w)/du`, i.e.
//!   `H[p][q] = sum_r w_r dA_rp/du_q` (row p, column q; not symmetric in
//!   general). `v^T H_r v = sum_pq v_p (dA_rp/du_q) v_q = (d(A_r v)/du) v`,
//!   so the assembler's velocity curvature (`v^T H_r v`, the term
//!   `(B v)_u v` of the acceleration rows) is the right term for both levels;
//!   and `d(B^T lambda)/du` in a Newton matrix is the derivative of the
//!   constraint force for both;
//! * [`Joint::phi_t`] is `a_t(u, t)`;
//! * [`Joint::phi_tt`] is the extra acceleration-level term
//!   `d(a_t)/du v + d(a_t)/dt` (for a position-level joint it is
//!   `Phi_tt + 2 Phi_tu v`), so the acceleration rows of both levels read
//!   `B a + v^T H v + phi_tt = 0` (`docs/theory/nonholonomic.md`).

mod coincident;
mod distance;
mod linear;
mod orient;
mod path;
mod prescribed;
mod rolling;
mod slider;
mod slope;

pub use crate::kinematics::point::{Point, PointPair};
pub use coincident::Coincident;
pub use distance::{Distance, DistanceForm};
pub use linear::LinearCombination;
pub use orient::{DirectorConstraints, DotJoint, DotRow, EulerNormalization, Side, Vector};
pub use path::{Curve, CurveValue, PathJoint};
pub use prescribed::{Motion, Prescribed};
pub use rolling::{DiskContact, DiskGeometry, DiskRolling};
pub use slider::Slider;
pub use slope::{Slope, SlopeTarget};

use crate::element::gonzalez::{add_tangent, coefficient, significant_norm2};
use crate::element::{gather, MAX_LOCAL_DOFS};

/// Largest number of constraint rows of one joint.
pub const MAX_ROWS: usize = 8;

/// Further outputs of [`JointSet::discrete_jacobian_with`] from the
/// evaluations it makes anyway, and end values the caller already has (the
/// Galerkin schemes' fused joint passes, docs/theory/galerkin.md §5).
#[derive(Default)]
pub struct DiscreteExtras<'a> {
    /// `d(B_d^T w)/du0` (ndof x ndof, with the tangent's w): the tangent of
    /// the swapped call `(u1, u0)`, whose `B_d` is the same.
    pub tangent_from: Option<&'a mut [f64]>,
    /// `Phi(u1)` (rows) and `B(u1)` (rows x ndof) at time t.
    pub end: Option<(&'a mut [f64], &'a mut [f64])>,
    /// `Phi(u0)` (rows) at time t when the caller has it (not evaluated again).
    pub start_phi: Option<&'a [f64]>,
    /// `B(u0)` (rows x ndof) at time t when the caller has it.
    pub start_b: Option<&'a [f64]>,
}

/// Largest number of local DOFs of one joint (two points).
pub const MAX_JOINT_DOFS: usize = crate::kinematics::point::MAX_PAIR_DOFS;

/// Level of a joint's constraint rows (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConstraintLevel {
    /// Holonomic rows `Phi(u, t) = 0`, `B = dPhi/du`.
    #[default]
    Position,
    /// Nonholonomic rows `A(u) v + a_t(u, t) = 0`; `Phi` is zero, `B = A`.
    Velocity,
}

/// The local constraint equations of one joint type.
pub trait Joint: Send + Sync + 'static {
    /// Type name used in messages (e.g. `revolute`).
    fn kind(&self) -> &'static str;

    /// Level of the rows (default: position level). For a velocity-level
    /// joint the other methods change meaning as the module doc describes.
    fn level(&self) -> ConstraintLevel {
        ConstraintLevel::Position
    }

    /// Number of constraint rows.
    fn rows(&self) -> usize;

    /// Number of local DOFs.
    fn ndof(&self) -> usize;

    /// Phi(u, t) (zeros for a velocity-level joint).
    fn phi(&self, u: &[f64], t: f64, phi: &mut [f64]);

    /// B = dPhi/du (velocity level: A(u)), row-major rows x ndof.
    fn jacobian(&self, u: &[f64], t: f64, b: &mut [f64]);

    /// Adds `scale * sum_i w_i d^2 Phi_i / du^2` (velocity level:
    /// `scale * d(A^T w)/du`, row p = component of `A^T w`, column q = u_q)
    /// to the row-major ndof x ndof `h`.
    fn add_curvature(&self, u: &[f64], t: f64, w: &[f64], scale: f64, h: &mut [f64]);

    /// The velocity curvature `(B v)_u v` of each row at (u, v, t) (the
    /// acceleration-level right side is `gamma = -(B v)_u v - ...`, Chin
    /// eq. 2.9). The default contracts [`Joint::add_curvature`] row by row;
    /// joints override it with a closed form.
    fn velocity_curvature(&self, u: &[f64], v: &[f64], t: f64, out: &mut [f64]) {
        let (rows, k) = (self.rows(), self.ndof());
        let mut h = [0.0; MAX_JOINT_DOFS * MAX_JOINT_DOFS];
        for (r, o) in out.iter_mut().enumerate().take(rows) {
            let mut w = [0.0; MAX_ROWS];
            w[r] = 1.0;
            h[..k * k].fill(0.0);
            self.add_curvature(u, t, &w[..rows], 1.0, &mut h[..k * k]);
            *o = (0..k)
                .map(|p| v[p] * (0..k).map(|q| h[p * k + q] * v[q]).sum::<f64>())
                .sum();
        }
    }

    /// Whether the joint depends on time explicitly (rheonomic: `Phi_t`
    /// may be nonzero, so its constraint force does work).
    fn is_rheonomic(&self) -> bool {
        false
    }

    /// Phi_t (velocity level: a_t; zero for scleronomic joints).
    fn phi_t(&self, _u: &[f64], _t: f64, out: &mut [f64]) {
        out.fill(0.0);
    }

    /// Phi_tt + 2 Phi_tu v (velocity level: `d(a_t)/du v + d(a_t)/dt`; zero
    /// for scleronomic joints).
    fn phi_tt(&self, _u: &[f64], _v: &[f64], _t: f64, out: &mut [f64]) {
        out.fill(0.0);
    }
}

/// A homogeneous block of joints of one Rust type with equal row and DOF counts.
#[derive(Clone)]
pub struct JointBlock<J: Joint> {
    joints: Vec<J>,
    names: Vec<String>,
    rows: usize,
    ndof: usize,
    dofs: Vec<usize>,
}

impl<J: Joint> JointBlock<J> {
    /// An empty block of joints with `rows` rows and `ndof` local DOFs each.
    pub fn new(rows: usize, ndof: usize) -> Self {
        assert!(rows <= MAX_ROWS && ndof <= MAX_JOINT_DOFS);
        JointBlock {
            joints: Vec::new(),
            names: Vec::new(),
            rows,
            ndof,
            dofs: Vec::new(),
        }
    }

    /// Adds a joint with its global DOF indices.
    pub fn push(&mut self, name: String, joint: J, dofs: &[usize]) {
        assert_eq!(dofs.len(), self.ndof);
        assert_eq!(joint.ndof(), self.ndof);
        assert_eq!(joint.rows(), self.rows);
        self.joints.push(joint);
        self.names.push(name);
        self.dofs.extend_from_slice(dofs);
    }
}

/// Object-safe view of a joint block working on global vectors.
pub trait JointSet: Send + Sync {
    /// Number of joints.
    fn len(&self) -> usize;
    /// Whether the block is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Rows per joint.
    fn rows(&self) -> usize;
    /// Local DOFs per joint.
    fn ndof(&self) -> usize;
    /// Global DOFs of joint `i`.
    fn dofs(&self, i: usize) -> &[usize];
    /// Name of joint `i`.
    fn name(&self, i: usize) -> &str;
    /// Type name of joint `i`.
    fn kind(&self, i: usize) -> &'static str;
    /// Level of the rows of joint `i` ([`Joint::level`]).
    fn level(&self, i: usize) -> ConstraintLevel;
    /// Whether joint `i` is rheonomic ([`Joint::is_rheonomic`]).
    fn is_rheonomic(&self, i: usize) -> bool;
    /// Phi of joint `i` at the global state `u`.
    fn phi(&self, i: usize, u: &[f64], t: f64, out: &mut [f64]);
    /// Local Jacobian of joint `i` at the global state `u`.
    fn jacobian(&self, i: usize, u: &[f64], t: f64, b: &mut [f64]);
    /// Adds `scale * sum w_r d^2 Phi_r/du^2` of joint `i` (local ndof x ndof).
    fn add_curvature(&self, i: usize, u: &[f64], t: f64, w: &[f64], scale: f64, h: &mut [f64]);
    /// The velocity curvature `(B v)_u v` of the rows of joint `i` at the
    /// global (u, v) ([`Joint::velocity_curvature`]).
    fn velocity_curvature(&self, i: usize, u: &[f64], v: &[f64], t: f64, out: &mut [f64]);
    /// Gonzalez's discrete derivative of the rows of joint `i` between the
    /// global states `u0` and `u1` at time `t` into `b` (rows x ndof):
    /// `B_d,r = B_r(u_m) + c_r du^T`, `c_r = (Phi_r(u1) - Phi_r(u0) - B_r(u_m).du) / |du|^2`
    /// (Gonzalez 1999, Physica D 132; `u_m` the midpoint; `B_r(u_m)` at a
    /// negligible du), so that `B_d du = Phi(u1) - Phi(u0)`. With
    /// `tangent = Some((w, h))` it also writes `h = d(B_d^T w)/du1` (ndof x ndof):
    /// the discrete gradient's derivative (`crate::element::gonzalez`) of the
    /// scalar `w . Phi`, whose discrete gradient is `B_d^T w`. A
    /// velocity-level joint has no `Phi`: its `B_d` is `A(u_m)` (no correction).
    fn discrete_jacobian(
        &self,
        i: usize,
        u0: &[f64],
        u1: &[f64],
        t: f64,
        b: &mut [f64],
        tangent: Option<(&[f64], &mut [f64])>,
    ) {
        self.discrete_jacobian_with(i, u0, u1, t, b, tangent, DiscreteExtras::default());
    }
    /// [`Self::discrete_jacobian`] with the further outputs and known inputs
    /// of `extras` ([`DiscreteExtras`]), from the same evaluations.
    #[allow(clippy::too_many_arguments)]
    fn discrete_jacobian_with(
        &self,
        i: usize,
        u0: &[f64],
        u1: &[f64],
        t: f64,
        b: &mut [f64],
        tangent: Option<(&[f64], &mut [f64])>,
        extras: DiscreteExtras<'_>,
    );
    /// Phi_t of joint `i`.
    fn phi_t(&self, i: usize, u: &[f64], t: f64, out: &mut [f64]);
    /// Phi_tt + 2 Phi_tu v of joint `i`.
    fn phi_tt(&self, i: usize, u: &[f64], v: &[f64], t: f64, out: &mut [f64]);
    /// The block as `Any`, for the model builder's grouping.
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
    /// A copy of the block (what makes [`crate::model::Model`] `Clone`).
    fn clone_box(&self) -> Box<dyn JointSet>;
}

impl Clone for Box<dyn JointSet> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

impl<J: Joint + Clone> JointBlock<J> {
    fn local(&self, i: usize, u: &[f64]) -> [f64; MAX_LOCAL_DOFS] {
        let mut ul = [0.0; MAX_LOCAL_DOFS];
        gather(u, self.dofs(i), &mut ul[..self.ndof]);
        ul
    }
}

impl<J: Joint + Clone> JointSet for JointBlock<J> {
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
    fn clone_box(&self) -> Box<dyn JointSet> {
        Box::new(self.clone())
    }
    fn len(&self) -> usize {
        self.joints.len()
    }
    fn rows(&self) -> usize {
        self.rows
    }
    fn ndof(&self) -> usize {
        self.ndof
    }
    fn dofs(&self, i: usize) -> &[usize] {
        &self.dofs[i * self.ndof..(i + 1) * self.ndof]
    }
    fn name(&self, i: usize) -> &str {
        &self.names[i]
    }
    fn kind(&self, i: usize) -> &'static str {
        self.joints[i].kind()
    }
    fn is_rheonomic(&self, i: usize) -> bool {
        self.joints[i].is_rheonomic()
    }
    fn level(&self, i: usize) -> ConstraintLevel {
        self.joints[i].level()
    }
    fn phi(&self, i: usize, u: &[f64], t: f64, out: &mut [f64]) {
        let ul = self.local(i, u);
        self.joints[i].phi(&ul[..self.ndof], t, out);
    }
    fn jacobian(&self, i: usize, u: &[f64], t: f64, b: &mut [f64]) {
        let ul = self.local(i, u);
        self.joints[i].jacobian(&ul[..self.ndof], t, b);
    }
    fn add_curvature(&self, i: usize, u: &[f64], t: f64, w: &[f64], scale: f64, h: &mut [f64]) {
        let ul = self.local(i, u);
        self.joints[i].add_curvature(&ul[..self.ndof], t, w, scale, h);
    }
    fn velocity_curvature(&self, i: usize, u: &[f64], v: &[f64], t: f64, out: &mut [f64]) {
        let (ul, vl) = (self.local(i, u), self.local(i, v));
        self.joints[i].velocity_curvature(&ul[..self.ndof], &vl[..self.ndof], t, out);
    }
    fn discrete_jacobian_with(
        &self,
        i: usize,
        u0: &[f64],
        u1: &[f64],
        t: f64,
        b: &mut [f64],
        tangent: Option<(&[f64], &mut [f64])>,
        extras: DiscreteExtras<'_>,
    ) {
        let (rows, n) = (self.rows, self.ndof);
        let joint = &self.joints[i];
        let (u0, u1) = (self.local(i, u0), self.local(i, u1));
        let (u0, u1) = (&u0[..n], &u1[..n]);
        let DiscreteExtras {
            mut tangent_from,
            end,
            start_phi,
            start_b,
        } = extras;
        let mut um = [0.0; MAX_LOCAL_DOFS];
        let mut du = [0.0; MAX_LOCAL_DOFS];
        for p in 0..n {
            um[p] = 0.5 * (u0[p] + u1[p]);
            du[p] = u1[p] - u0[p];
        }
        let (um, du) = (&um[..n], &du[..n]);
        joint.jacobian(um, t, &mut b[..rows * n]);
        let mut tangent = tangent.map(|(w, h)| {
            // d B(u_m)^T w / du1 = (sum_r w_r d^2 Phi_r(u_m)) / 2, and the
            // same with respect to u0.
            h[..n * n].fill(0.0);
            joint.add_curvature(um, t, w, 0.5, h);
            if let Some(h0) = tangent_from.as_deref_mut() {
                h0[..n * n].copy_from_slice(&h[..n * n]);
            }
            (w, h)
        });
        let scale = um.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
        let significant = match joint.level() {
            ConstraintLevel::Velocity => None,
            _ => significant_norm2(du, scale),
        };
        let Some(n2) = significant else {
            if let Some((phi, b1)) = end {
                joint.phi(u1, t, &mut phi[..rows]);
                joint.jacobian(u1, t, &mut b1[..rows * n]);
            }
            return;
        };
        let (mut phi0, mut phi1) = ([0.0; MAX_ROWS], [0.0; MAX_ROWS]);
        let mut b1 = [0.0; MAX_ROWS * MAX_JOINT_DOFS];
        match start_phi {
            Some(p) => phi0[..rows].copy_from_slice(&p[..rows]),
            None => joint.phi(u0, t, &mut phi0[..rows]),
        }
        joint.phi(u1, t, &mut phi1[..rows]);
        let mut c = [0.0; MAX_ROWS];
        for r in 0..rows {
            c[r] = coefficient(du, n2, phi0[r], phi1[r], &b[r * n..(r + 1) * n]);
        }
        if tangent.is_some() || end.is_some() {
            joint.jacobian(u1, t, &mut b1[..rows * n]);
        }
        if let Some((w, h)) = tangent.as_mut() {
            let (mut g_m, mut g1) = ([0.0; MAX_LOCAL_DOFS], [0.0; MAX_LOCAL_DOFS]);
            for p in 0..n {
                g_m[p] = (0..rows).map(|r| w[r] * b[r * n + p]).sum();
                g1[p] = (0..rows).map(|r| w[r] * b1[r * n + p]).sum();
            }
            let s: f64 = (0..rows).map(|r| w[r] * c[r]).sum();
            add_tangent(du, n2, s, &g_m[..n], &g1[..n], h);
            if let Some(h0) = tangent_from {
                // The swapped call (u1, u0): increment -du, the ends' roles
                // exchanged, the same B(u_m) and curvature.
                let mut dn = [0.0; MAX_LOCAL_DOFS];
                for p in 0..n {
                    dn[p] = u0[p] - u1[p];
                }
                let dn = &dn[..n];
                let mut b0 = [0.0; MAX_ROWS * MAX_JOINT_DOFS];
                match start_b {
                    Some(b) => b0[..rows * n].copy_from_slice(&b[..rows * n]),
                    None => joint.jacobian(u0, t, &mut b0[..rows * n]),
                }
                let mut g0 = [0.0; MAX_LOCAL_DOFS];
                for p in 0..n {
                    g0[p] = (0..rows).map(|r| w[r] * b0[r * n + p]).sum();
                }
                let s0: f64 = (0..rows)
                    .map(|r| w[r] * coefficient(dn, n2, phi1[r], phi0[r], &b[r * n..(r + 1) * n]))
                    .sum();
                add_tangent(dn, n2, s0, &g_m[..n], &g0[..n], h0);
            }
        }
        if let Some((phi, bend)) = end {
            phi[..rows].copy_from_slice(&phi1[..rows]);
            bend[..rows * n].copy_from_slice(&b1[..rows * n]);
        }
        for r in 0..rows {
            for p in 0..n {
                b[r * n + p] += c[r] * du[p];
            }
        }
    }
    fn phi_t(&self, i: usize, u: &[f64], t: f64, out: &mut [f64]) {
        let ul = self.local(i, u);
        self.joints[i].phi_t(&ul[..self.ndof], t, out);
    }
    fn phi_tt(&self, i: usize, u: &[f64], v: &[f64], t: f64, out: &mut [f64]) {
        let ul = self.local(i, u);
        let vl = self.local(i, v);
        self.joints[i].phi_tt(&ul[..self.ndof], &vl[..self.ndof], t, out);
    }
}
