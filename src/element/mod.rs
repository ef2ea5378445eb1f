//! Finite elements: local physics only (internal force, tangent, potential, mass).
//!
//! An element sees local vectors ordered as its DOF list. The assembler
//! (`crate::assembly`) gathers them from the global vectors and scatters the
//! results into the global operators; integrators never see elements.
//!
//! The equation-of-motion (EOM) time level of Hoitink (§2.1.3–2.1.5) enters
//! through [`EvaluationPoint`]: an integrator evaluates the internal force at
//! `t_{n+W1}`. The default is "parameters inside", `P(u~)` (eq. 3.7);
//! elements with an independent strain approximation (Green-strain truss,
//! eqs. 2.7–2.9) override [`Element::eom_force`]. A method whose EOM level is
//! the midpoint of the step and that conserves energy asks instead for the
//! discrete gradient between the ends of the step,
//! [`Element::discrete_gradient`] (Gonzalez 1996; Greenspan's discrete
//! derivative for the thin-beam elements, eqs. 4.44–4.45): the method chooses
//! it explicitly (`assembly::ElementEval::DiscreteGradient`), never an
//! element from the weights.

mod beam;
mod beam3d;
pub mod gonzalez;
mod rigid3d;
mod spring;
mod thin_beam;
mod truss;

pub use beam::{Beam, Beam2d, Beam3d, BeamShape, BeamShapes};
pub use beam3d::{DirectorBeam, RodSection, SectionResultants};
pub use rigid3d::{EulerKinetic, Rigid3d, RigidDirectors};
pub use spring::{RotationalSpringDamper, SpringDamper};
pub use thin_beam::{AxialSpring, Bending};
pub use truss::Truss;

/// Largest number of local DOFs of any element or joint (sizes stack buffers).
pub const MAX_LOCAL_DOFS: usize = 36;

/// Weights that place a displacement-level quantity q at the EOM time level:
/// `q~ = q_n + c1dt * qdot_n + c2dt2 * qddot_n + c3 * (q_{n+1} - q_n)`
/// (Hoitink eq. 2.9 written for any form; the same identity holds for u~).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelWeights {
    /// Coefficient of the rate at t_n (already multiplied by dt).
    pub c1dt: f64,
    /// Coefficient of the second rate at t_n (already multiplied by dt^2).
    pub c2dt2: f64,
    /// Coefficient of the increment q_{n+1} - q_n; also d u~ / d u_{n+1}.
    pub c3: f64,
}

impl LevelWeights {
    /// Whether these are the weights of the energy-conserving midpoint
    /// schemes (U0(1,1,1), V0(1,1,0), the two-field scheme), `u~ = (u_n + u_{n+1})/2`:
    /// `c1dt = c2dt2 = 0`, `c3 = 1/2` up to the round-off of their computation.
    /// A cross-check for tests (the methods decide by their parameters,
    /// `gssss::Variant::midpoint_level`): what an element evaluates is the method's
    /// explicit choice ([`Element::discrete_gradient`] or [`Element::eom_force`]).
    pub fn is_midpoint(&self) -> bool {
        self.c1dt.abs() <= 1e-14 && self.c2dt2.abs() <= 1e-14 && (self.c3 - 0.5).abs() <= 1e-14
    }
}

/// Where a one-step method evaluates the internal forces within a step
/// (the assembler's contract, its `ElementEval`): the start of
/// the step `(u_n, v_n, a_n)`, the current iterate of its end `u_{n+1}` and
/// the point `u~ = u_n + c1dt v_n + c2dt2 a_n + c3 (u_{n+1} - u_n)` between
/// them with its weights ([`LevelWeights`]). Any one-step scheme states its
/// evaluation point this way (the generalized-alpha family places u~ at its
/// equation-of-motion time level, the midpoint schemes at the midpoint);
/// an element evaluates `P(u~)`, an independent strain approximation, or
/// the discrete gradient between `u_n` and `u_{n+1}`
/// ([`Element::eom_force`], [`Element::discrete_gradient`]). Holds the
/// global vectors, or one element's part of them (gathered by
/// [`ElementSet::eom_force`]).
#[derive(Debug, Clone, Copy)]
pub struct EvaluationPoint<'a> {
    /// Positions at t_n.
    pub u_n: &'a [f64],
    /// Velocities at t_n.
    pub v_n: &'a [f64],
    /// Acceleration variable of the scheme at step n.
    pub a_n: &'a [f64],
    /// Current iterate of u_{n+1}.
    pub u_next: &'a [f64],
    /// Current iterate of u~ (positions at the EOM time level).
    pub u_tilde: &'a [f64],
    /// Time-level weights of the integrator.
    pub w: LevelWeights,
}

/// The local physics of one element type.
pub trait Element: Clone + Send + Sync + 'static {
    /// Type name used in messages and output (e.g. `truss`).
    const KIND: &'static str;

    /// Number of local DOFs.
    fn ndof(&self) -> usize;

    /// Writes the constant local mass matrix (row-major, ndof x ndof) and
    /// returns true, or returns false when the element carries no mass.
    fn mass(&self, _m: &mut [f64]) -> bool {
        false
    }

    /// Potential (strain) energy V(u). Default: none (rigid bodies).
    fn potential(&self, _u: &[f64]) -> f64 {
        0.0
    }

    /// Internal force P(u) = dV/du and, when asked, the tangent dP/du (row-major).
    fn force(&self, _u: &[f64], f: &mut [f64], k: Option<&mut [f64]>) {
        let n = self.ndof();
        f[..n].fill(0.0);
        if let Some(k) = k {
            k[..n * n].fill(0.0);
        }
    }

    /// Internal force at the EOM time level and, when asked, its derivative
    /// with respect to u_{n+1} (`None`: a residual-only evaluation, for Newton
    /// iterations that reuse the last factorization). Default: parameters
    /// inside, P(u~) with dP/du_{n+1} = K(u~) c3.
    fn eom_force(&self, lvl: &EvaluationPoint<'_>, f: &mut [f64], k: Option<&mut [f64]>) {
        force_at_level(self, lvl, f, k);
    }

    /// The discrete gradient of the potential between the ends of a step,
    /// `u0 = lvl.u_n` and `u1 = lvl.u_next`, with its derivative with
    /// respect to u1 (`None`: the force only), asked for by the methods that
    /// conserve energy at the midpoint level (`lvl.w`: `c3 = 1/2`, `u~` the
    /// midpoint as the method computes it). Gonzalez (J. Nonlinear Sci. 6
    /// (1996) 449–467, eq. 3.9):
    /// `P_d(u0, u1) = P(u_m) + [(V(u1) - V(u0) - P(u_m).du) / |du|^2] du`,
    /// `u_m = (u0 + u1)/2`, `du = u1 - u0`, so that `du . P_d = V(u1) - V(u0)`
    /// ([`gonzalez::discrete_gradient`]); the thin-beam elements use
    /// Greenspan's discrete derivative of their scalar strain measures
    /// (Hoitink eqs. 4.44–4.45), the director body Betsch & Steinmann's
    /// quadratic constraints (CMAME 191 (2001) 467–488), which need none.
    /// Default: [`Element::eom_force`] at the midpoint level, a discrete
    /// gradient already for potentials at most quadratic in u and for the
    /// Green-strain truss (its strain is quadratic, eq. 2.9).
    fn discrete_gradient(&self, lvl: &EvaluationPoint<'_>, f: &mut [f64], k: Option<&mut [f64]>) {
        self.eom_force(lvl, f, k);
    }

    /// Whether the element has a velocity-dependent force (a damper).
    const DISSIPATIVE: bool = false;

    /// Velocity-dependent internal force `F_d(u, v)` (added to `P`), with
    /// `k = dF_d/du` and `c = dF_d/dv` (row-major). Evaluated by the
    /// integrators at the EOM level (u~, v~). Only called when `DISSIPATIVE`.
    fn damping_force(
        &self,
        _u: &[f64],
        _v: &[f64],
        _f: &mut [f64],
        _k: &mut [f64],
        _c: &mut [f64],
    ) {
    }

    /// Whether the element has a configuration-dependent inertia (a 3-D rigid
    /// body in Euler parameters).
    const NONLINEAR_INERTIA: bool = false;

    /// Configuration-dependent inertial force `f = M(u) a + g(u, v)` (added to
    /// the constant-mass term of [`Element::mass`]) with `k = df/du`,
    /// `c = df/dv` and `m = df/da = M(u)` (row-major). Evaluated by the
    /// integrators at the EOM level (u~, v~, a~). Only called when
    /// `NONLINEAR_INERTIA`.
    fn inertia_force(&self, _x: &RateState<'_>, _out: &mut RateForce<'_>) {}

    /// Kinetic energy `1/2 v^T M(u) v` of the configuration-dependent inertia.
    fn kinetic_energy(&self, _u: &[f64], _v: &[f64]) -> f64 {
        0.0
    }
}

/// Parameters inside (Hoitink eq. 3.7): the force `P(u~)` with its derivative
/// with respect to u_{n+1}, `c3 K(u~)`. The default [`Element::eom_force`],
/// and the one of elements with a discrete gradient for weights other than
/// the midpoint ones.
pub fn force_at_level<E: Element>(
    e: &E,
    lvl: &EvaluationPoint<'_>,
    f: &mut [f64],
    k: Option<&mut [f64]>,
) {
    let n = e.ndof();
    match k {
        Some(k) => {
            e.force(lvl.u_tilde, f, Some(&mut *k));
            for x in k[..n * n].iter_mut() {
                *x *= lvl.w.c3;
            }
        }
        None => e.force(lvl.u_tilde, f, None),
    }
}

/// Local (u, v, a) of a rate-dependent force evaluation.
#[derive(Debug, Clone, Copy)]
pub struct RateState<'a> {
    /// Positions.
    pub u: &'a [f64],
    /// Velocities.
    pub v: &'a [f64],
    /// Accelerations.
    pub a: &'a [f64],
    /// Set by a method that asks for the energy-consistent (discrete
    /// gradient) inertia of a midpoint step (u = (u_n + u_{n+1})/2,
    /// v = (u_{n+1} - u_n)/dt, a = (v_{n+1} - v_n)/dt): where the step
    /// started, from which the element can recover both ends.
    pub midpoint: Option<StepStart<'a>>,
}

/// The start of the step whose midpoint a [`RateState`] is: with the
/// state's (u, v, a) the ends of the step are `u_{n+1} = 2 u - u_n` and
/// `v_{n,n+1} = v -+ dt a / 2` (an element's energy-consistent inertia,
/// [`Element::inertia_force`], evaluates both ends).
#[derive(Debug, Clone, Copy)]
pub struct StepStart<'a> {
    /// Positions at t_n.
    pub u_n: &'a [f64],
    /// Time step.
    pub dt: f64,
}

/// Outputs of a rate-dependent force: the force and its derivatives with
/// respect to u, v and a (row-major ndof x ndof).
#[derive(Debug)]
pub struct RateForce<'a> {
    /// Force.
    pub f: &'a mut [f64],
    /// d f / d u.
    pub k: &'a mut [f64],
    /// d f / d v.
    pub c: &'a mut [f64],
    /// d f / d a.
    pub m: &'a mut [f64],
}

/// A homogeneous block of elements of one type with the same number of DOFs.
#[derive(Clone)]
pub struct ElementBlock<E: Element> {
    elems: Vec<E>,
    names: Vec<String>,
    ndof: usize,
    dofs: Vec<usize>,
}

impl<E: Element> ElementBlock<E> {
    /// An empty block of elements with `ndof` local DOFs each.
    pub fn new(ndof: usize) -> Self {
        assert!(ndof <= MAX_LOCAL_DOFS);
        ElementBlock {
            elems: Vec::new(),
            names: Vec::new(),
            ndof,
            dofs: Vec::new(),
        }
    }

    /// Adds an element with its global DOF indices.
    pub fn push(&mut self, name: String, elem: E, dofs: &[usize]) {
        assert_eq!(dofs.len(), self.ndof);
        assert_eq!(elem.ndof(), self.ndof);
        self.elems.push(elem);
        self.names.push(name);
        self.dofs.extend_from_slice(dofs);
    }
}

/// Object-safe view of an element block, used by the assembler.
pub trait ElementSet: Send + Sync {
    /// Element type name.
    fn kind(&self) -> &'static str;
    /// Number of elements.
    fn len(&self) -> usize;
    /// Whether the block is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Local DOFs per element.
    fn ndof(&self) -> usize;
    /// Global DOFs of element `i`.
    fn dofs(&self, i: usize) -> &[usize];
    /// Name of element `i`.
    fn name(&self, i: usize) -> &str;
    /// Local mass matrix of element `i` (see [`Element::mass`]).
    fn mass(&self, i: usize, m: &mut [f64]) -> bool;
    /// Potential energy of element `i` at the global state `u`.
    fn potential(&self, i: usize, u: &[f64]) -> f64;
    /// Internal force (and tangent) of element `i` at the global state `u`.
    fn force(&self, i: usize, u: &[f64], f: &mut [f64], k: Option<&mut [f64]>);
    /// EOM-level force and derivative of element `i` (global vectors in `g`).
    fn eom_force(&self, i: usize, g: &EvaluationPoint<'_>, f: &mut [f64], k: Option<&mut [f64]>);
    /// Discrete gradient between `g.u_n` and `g.u_next` and its derivative
    /// of element `i` (see [`Element::discrete_gradient`]).
    fn discrete_gradient(
        &self,
        i: usize,
        g: &EvaluationPoint<'_>,
        f: &mut [f64],
        k: Option<&mut [f64]>,
    );
    /// Whether the elements have a velocity-dependent force.
    fn is_dissipative(&self) -> bool;
    /// Velocity-dependent force of element `i` at global (u, v) with
    /// derivatives `k = dF/du`, `c = dF/dv` (see [`Element::damping_force`]).
    fn damping_force(
        &self,
        i: usize,
        u: &[f64],
        v: &[f64],
        f: &mut [f64],
        k: &mut [f64],
        c: &mut [f64],
    );
    /// Whether the elements have a configuration-dependent inertia.
    fn has_inertia(&self) -> bool;
    /// Inertial force of element `i` at global (u, v, a) with its derivatives
    /// (see [`Element::inertia_force`]).
    fn inertia_force(&self, i: usize, x: &RateState<'_>, out: &mut RateForce<'_>);
    /// Kinetic energy of the configuration-dependent inertia of element `i`.
    fn kinetic_energy(&self, i: usize, u: &[f64], v: &[f64]) -> f64;
    /// The block as `Any`, for the model builder's grouping.
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
    /// A copy of the block (what makes [`crate::model::Model`] `Clone`).
    fn clone_box(&self) -> Box<dyn ElementSet>;
}

impl Clone for Box<dyn ElementSet> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// Copies the entries `idx` of `src` into the front of `dst`.
#[inline]
pub fn gather(src: &[f64], idx: &[usize], dst: &mut [f64]) {
    for (d, &i) in dst.iter_mut().zip(idx) {
        *d = src[i];
    }
}

impl<E: Element> ElementBlock<E> {
    /// Calls `eval` with element `i` and its part of the global level `g`.
    #[inline]
    fn at_level(
        &self,
        i: usize,
        g: &EvaluationPoint<'_>,
        eval: impl FnOnce(&E, &EvaluationPoint<'_>),
    ) {
        let n = self.ndof;
        let d = self.dofs(i);
        // One pass over the element's DOFs gathers all five vectors.
        let mut buf = [[0.0; MAX_LOCAL_DOFS]; 5];
        for (p, &i) in d.iter().enumerate() {
            buf[0][p] = g.u_n[i];
            buf[1][p] = g.v_n[i];
            buf[2][p] = g.a_n[i];
            buf[3][p] = g.u_next[i];
            buf[4][p] = g.u_tilde[i];
        }
        let lvl = EvaluationPoint {
            u_n: &buf[0][..n],
            v_n: &buf[1][..n],
            a_n: &buf[2][..n],
            u_next: &buf[3][..n],
            u_tilde: &buf[4][..n],
            w: g.w,
        };
        eval(&self.elems[i], &lvl);
    }
}

impl<E: Element> ElementSet for ElementBlock<E> {
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
    fn clone_box(&self) -> Box<dyn ElementSet> {
        Box::new(self.clone())
    }
    fn is_dissipative(&self) -> bool {
        E::DISSIPATIVE
    }
    fn damping_force(
        &self,
        i: usize,
        u: &[f64],
        v: &[f64],
        f: &mut [f64],
        k: &mut [f64],
        c: &mut [f64],
    ) {
        let n = self.ndof;
        let (mut ul, mut vl) = ([0.0; MAX_LOCAL_DOFS], [0.0; MAX_LOCAL_DOFS]);
        gather(u, self.dofs(i), &mut ul[..n]);
        gather(v, self.dofs(i), &mut vl[..n]);
        self.elems[i].damping_force(&ul[..n], &vl[..n], f, k, c);
    }
    fn has_inertia(&self) -> bool {
        E::NONLINEAR_INERTIA
    }
    fn inertia_force(&self, i: usize, x: &RateState<'_>, out: &mut RateForce<'_>) {
        let n = self.ndof;
        let mut l = [[0.0; MAX_LOCAL_DOFS]; 4];
        for (b, src) in l.iter_mut().zip([x.u, x.v, x.a]) {
            gather(src, self.dofs(i), &mut b[..n]);
        }
        if let Some(m) = x.midpoint {
            gather(m.u_n, self.dofs(i), &mut l[3][..n]);
        }
        let local = RateState {
            u: &l[0][..n],
            v: &l[1][..n],
            a: &l[2][..n],
            midpoint: x.midpoint.map(|m| StepStart {
                u_n: &l[3][..n],
                dt: m.dt,
            }),
        };
        self.elems[i].inertia_force(&local, out);
    }
    fn kinetic_energy(&self, i: usize, u: &[f64], v: &[f64]) -> f64 {
        let n = self.ndof;
        let (mut ul, mut vl) = ([0.0; MAX_LOCAL_DOFS], [0.0; MAX_LOCAL_DOFS]);
        gather(u, self.dofs(i), &mut ul[..n]);
        gather(v, self.dofs(i), &mut vl[..n]);
        self.elems[i].kinetic_energy(&ul[..n], &vl[..n])
    }
    fn kind(&self) -> &'static str {
        E::KIND
    }
    fn len(&self) -> usize {
        self.elems.len()
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
    fn mass(&self, i: usize, m: &mut [f64]) -> bool {
        self.elems[i].mass(m)
    }
    fn potential(&self, i: usize, u: &[f64]) -> f64 {
        let mut ul = [0.0; MAX_LOCAL_DOFS];
        let n = self.ndof;
        gather(u, self.dofs(i), &mut ul[..n]);
        self.elems[i].potential(&ul[..n])
    }
    fn force(&self, i: usize, u: &[f64], f: &mut [f64], k: Option<&mut [f64]>) {
        let mut ul = [0.0; MAX_LOCAL_DOFS];
        let n = self.ndof;
        gather(u, self.dofs(i), &mut ul[..n]);
        self.elems[i].force(&ul[..n], f, k);
    }
    fn eom_force(&self, i: usize, g: &EvaluationPoint<'_>, f: &mut [f64], k: Option<&mut [f64]>) {
        self.at_level(i, g, |e, lvl| e.eom_force(lvl, f, k));
    }
    fn discrete_gradient(
        &self,
        i: usize,
        g: &EvaluationPoint<'_>,
        f: &mut [f64],
        k: Option<&mut [f64]>,
    ) {
        self.at_level(i, g, |e, lvl| e.discrete_gradient(lvl, f, k));
    }
}
