//! Probe values at recorded steps and the summaries of their histories.

use crate::kinematics::vec3::{dot, norm};
use crate::model::{EnergyTerm, Probe, ProbeKind, ResidualLevel};

use super::StepRecord;

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

impl Probe {
    /// The probe's value at a recorded step.
    pub fn value(&self, rec: &StepRecord<'_>) -> f64 {
        match &self.kind {
            ProbeKind::Coordinate(d) => rec.u[*d],
            ProbeKind::Displacement { dof, initial } => rec.u[*dof] - initial,
            ProbeKind::Velocity(d) => rec.v[*d],
            ProbeKind::Distance([a, b]) => norm(&sub(b.position(rec.u), a.position(rec.u))),
            ProbeKind::Deflection { point, chord, dim } => {
                let r0 = chord[0].position(rec.u);
                let e = sub(chord[1].position(rec.u), r0);
                let d = sub(point.position(rec.u), r0);
                let len = norm(&e);
                if *dim == 2 {
                    (e[0] * d[1] - e[1] * d[0]) / len
                } else {
                    let s = dot(&d, &e) / (len * len);
                    norm(&[d[0] - s * e[0], d[1] - s * e[1], d[2] - s * e[2]])
                }
            }
            ProbeKind::Section(s) => s.value(rec.u),
            ProbeKind::Multiplier(r) => rec.lambda[*r],
            ProbeKind::Energy(t) => match t {
                EnergyTerm::Kinetic => rec.energy.kinetic,
                EnergyTerm::Potential => rec.energy.potential,
                EnergyTerm::Total => rec.energy.total,
                EnergyTerm::ExternalWork => rec.energy.external_work,
            },
            ProbeKind::Constraint(l) => match l {
                ResidualLevel::Position => rec.constraints.position,
                ResidualLevel::Velocity => rec.constraints.velocity,
                ResidualLevel::Acceleration => rec.constraints.acceleration,
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
