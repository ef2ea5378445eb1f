//! Probes: named scalar histories of a run (issue #4), as the model
//! describes them.
//!
//! A probe is resolved against the model when it is built (DOF names, point
//! references, joint rows; [`super::ModelBuilder`]), so evaluating it needs
//! only the step record ([`crate::output`] evaluates and summarizes them).

use crate::element::DirectorBeam;
use crate::kinematics::point::{Point, PointPair};

/// An energy term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnergyTerm {
    /// Kinetic energy.
    Kinetic,
    /// Potential energy (elastic + gravity).
    Potential,
    /// Kinetic + potential.
    Total,
    /// Accumulated work of non-conservative forces.
    ExternalWork,
}

/// Level of a constraint residual norm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResidualLevel {
    /// max |Phi|.
    Position,
    /// max |B v + Phi_t|.
    Velocity,
    /// max |B a + ...|.
    Acceleration,
}

/// A point of the model with the global DOFs it depends on.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbePoint {
    /// The point.
    pub point: Point,
    /// Its owner's global DOFs.
    pub dofs: Vec<usize>,
}

impl ProbePoint {
    /// Position at the global state `u`.
    pub fn position(&self, u: &[f64]) -> [f64; 3] {
        let mut q = [0.0; crate::kinematics::point::MAX_POINT_DOFS];
        for (x, &d) in q.iter_mut().zip(&self.dofs) {
            *x = u[d];
        }
        self.point.position(&q[..self.dofs.len()])
    }
}

/// What a probe measures.
#[derive(Debug, Clone, PartialEq)]
pub enum ProbeKind {
    /// `u[dof]`.
    Coordinate(usize),
    /// `u[dof] - u0[dof]`.
    Displacement {
        /// Global DOF.
        dof: usize,
        /// Initial value.
        initial: f64,
    },
    /// `v[dof]`.
    Velocity(usize),
    /// `|r_b - r_a|`.
    Distance([ProbePoint; 2]),
    /// Signed distance of `point` from the chord through `chord[0]`,
    /// `chord[1]`: in 2-D `(e x (r - r0)) / |e|`, `e = r1 - r0` (positive to
    /// the left of the chord); in 3-D the length of the perpendicular part.
    Deflection {
        /// The deflected point.
        point: ProbePoint,
        /// The chord's ends.
        chord: [ProbePoint; 2],
        /// Spatial dimension.
        dim: usize,
    },
    /// A section force or moment of a beam3d element.
    Section(Box<SectionPoint>),
    /// A multiplier (global row).
    Multiplier(usize),
    /// An energy term.
    Energy(EnergyTerm),
    /// A constraint residual norm.
    Constraint(ResidualLevel),
}

/// A named probe.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// Name (unique; the HDF5 dataset `/probes/<name>`).
    pub name: String,
    /// What it measures.
    pub kind: ProbeKind,
}

/// A pair of probe points as a [`PointPair`] (for code that has one).
pub fn pair_points(pair: &PointPair, dofs: &[usize]) -> [ProbePoint; 2] {
    let na = pair.a.ndof();
    [
        ProbePoint {
            point: pair.a,
            dofs: dofs[..na].to_vec(),
        },
        ProbePoint {
            point: pair.b,
            dofs: dofs[na..].to_vec(),
        },
    ]
}

/// Names of the section resultants of a beam3d element, in the order of
/// [`DirectorBeam::section_resultants`]: shear forces, axial force, bending
/// moments, torque.
pub const SECTION_COMPONENTS: [&str; 6] = ["q1", "q2", "n", "m1", "m2", "t"];

/// One section resultant of one beam3d element at one Gauss point.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionPoint {
    /// The element.
    pub beam: DirectorBeam,
    /// Its global DOFs.
    pub dofs: Vec<usize>,
    /// Index into [`SECTION_COMPONENTS`].
    pub component: usize,
    /// Gauss point.
    pub point: usize,
}

impl SectionPoint {
    /// The resultant at the global state `u`.
    pub fn value(&self, u: &[f64]) -> f64 {
        let mut q = [0.0; crate::element::MAX_LOCAL_DOFS];
        crate::element::gather(u, &self.dofs, &mut q);
        self.beam.section_resultants(&q[..self.dofs.len()])[self.point][self.component]
    }
}
