//! Probes: named scalar histories of a run (issue #4), evaluated from each
//! recorded step, and their summaries.
//!
//! A probe is resolved against the model when it is built (DOF names, point
//! references, joint rows), so evaluating it needs only the step record.

use crate::joint::{Point, PointPair};
use crate::output::StepRecord;

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

/// Level of a constraint residual.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConstraintLevel {
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
        let mut q = [0.0; crate::joint::point::MAX_POINT_DOFS];
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
    /// A multiplier (global row).
    Multiplier(usize),
    /// An energy term.
    Energy(EnergyTerm),
    /// A constraint residual norm.
    Constraint(ConstraintLevel),
}

/// A named probe.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// Name (unique; the HDF5 dataset `/probes/<name>`).
    pub name: String,
    /// What it measures.
    pub kind: ProbeKind,
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn norm(a: [f64; 3]) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

impl Probe {
    /// The probe's value at a recorded step.
    pub fn value(&self, rec: &StepRecord<'_>) -> f64 {
        match &self.kind {
            ProbeKind::Coordinate(d) => rec.u[*d],
            ProbeKind::Displacement { dof, initial } => rec.u[*dof] - initial,
            ProbeKind::Velocity(d) => rec.v[*d],
            ProbeKind::Distance([a, b]) => norm(sub(b.position(rec.u), a.position(rec.u))),
            ProbeKind::Deflection { point, chord, dim } => {
                let r0 = chord[0].position(rec.u);
                let e = sub(chord[1].position(rec.u), r0);
                let d = sub(point.position(rec.u), r0);
                let len = norm(e);
                if *dim == 2 {
                    (e[0] * d[1] - e[1] * d[0]) / len
                } else {
                    let s = (d[0] * e[0] + d[1] * e[1] + d[2] * e[2]) / (len * len);
                    norm([d[0] - s * e[0], d[1] - s * e[1], d[2] - s * e[2]])
                }
            }
            ProbeKind::Multiplier(r) => rec.lambda[*r],
            ProbeKind::Energy(t) => match t {
                EnergyTerm::Kinetic => rec.energy.kinetic,
                EnergyTerm::Potential => rec.energy.potential,
                EnergyTerm::Total => rec.energy.total,
                EnergyTerm::ExternalWork => rec.energy.external_work,
            },
            ProbeKind::Constraint(l) => match l {
                ConstraintLevel::Position => rec.constraints.position,
                ConstraintLevel::Velocity => rec.constraints.velocity,
                ConstraintLevel::Acceleration => rec.constraints.acceleration,
            },
        }
    }
}

/// Min, max, max |.|, its time and the final value of a probe's history.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeSummary {
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Largest magnitude.
    pub max_abs: f64,
    /// Time of the largest magnitude.
    pub t_max_abs: f64,
    /// Last value.
    pub last: f64,
}

impl Default for ProbeSummary {
    fn default() -> Self {
        ProbeSummary {
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            max_abs: 0.0,
            t_max_abs: f64::NAN,
            last: f64::NAN,
        }
    }
}

impl ProbeSummary {
    /// Adds the value `x` at time `t`.
    pub fn add(&mut self, t: f64, x: f64) {
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        if x.abs() > self.max_abs || self.t_max_abs.is_nan() {
            self.max_abs = x.abs();
            self.t_max_abs = t;
        }
        self.last = x;
    }

    /// The summary's fields as (suffix, value), in the order of summary tables.
    pub fn fields(&self) -> [(&'static str, f64); 5] {
        [
            ("min", self.min),
            ("max", self.max),
            ("max_abs", self.max_abs),
            ("t_max_abs", self.t_max_abs),
            ("final", self.last),
        ]
    }
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
