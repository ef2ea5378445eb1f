//! Probes: resolving names and point references into [`Probe`]s.

use super::{err, BuildError, ModelBuilder, PointRef};
use crate::model::{pair_points, EnergyTerm, Probe, ProbeKind, ProbePoint, ResidualLevel};

/// What a probe measures, with references still by name.
#[derive(Debug, Clone, PartialEq)]
pub enum ProbeTarget {
    /// A coordinate by DOF name (`rod4.y`).
    Coordinate(String),
    /// A coordinate minus its initial value.
    Displacement(String),
    /// A velocity component by DOF name.
    Velocity(String),
    /// Distance between two points.
    Distance(PointRef, PointRef),
    /// Transverse deflection of a point from the chord through two others.
    Deflection(PointRef, [PointRef; 2]),
    /// A section resultant of a beam3d element.
    Section {
        /// Element id.
        element: String,
        /// Index into [`crate::model::SECTION_COMPONENTS`].
        component: usize,
        /// Gauss point.
        point: usize,
    },
    /// Multiplier `row` of joint `joint`.
    Multiplier {
        /// Joint id.
        joint: String,
        /// Row (0-based).
        row: usize,
    },
    /// An energy term.
    Energy(EnergyTerm),
    /// A constraint residual norm.
    Constraint(ResidualLevel),
}

impl ModelBuilder {
    fn dof_by_name(&self, name: &str, dof: &str) -> Result<usize, BuildError> {
        self.dofs
            .names()
            .iter()
            .position(|n| n == dof)
            .ok_or_else(|| {
                err(
                    "probe",
                    name,
                    Some("dof"),
                    format!("no coordinate named '{dof}' (names are like 'body.theta', 'node.x')"),
                )
            })
    }

    fn probe_point(
        &self,
        name: &str,
        field: &'static str,
        p: &PointRef,
    ) -> Result<ProbePoint, BuildError> {
        let (point, _, dofs) = self.point("probe", name, field, p)?;
        Ok(ProbePoint { point, dofs })
    }

    /// Adds a probe; its name is also the HDF5 dataset `/probes/<name>`.
    pub fn probe(&mut self, name: &str, target: &ProbeTarget) -> Result<(), BuildError> {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        {
            return Err(err(
                "probe",
                name,
                Some("name"),
                "a probe name is non-empty and uses letters, digits, '_', '-' and '.'".into(),
            ));
        }
        if self.probes.iter().any(|p| p.0.name == name) {
            return Err(err(
                "probe",
                name,
                Some("name"),
                "probe name is already used".into(),
            ));
        }
        let mut pending = None;
        let kind = match target {
            ProbeTarget::Coordinate(d) => ProbeKind::Coordinate(self.dof_by_name(name, d)?),
            ProbeTarget::Displacement(d) => {
                let dof = self.dof_by_name(name, d)?;
                ProbeKind::Displacement {
                    dof,
                    initial: self.u0[dof],
                }
            }
            ProbeTarget::Velocity(d) => ProbeKind::Velocity(self.dof_by_name(name, d)?),
            ProbeTarget::Distance(a, b) => {
                let (pair, dofs) = self.pair("probe", name, a, b, ["a", "b"])?;
                ProbeKind::Distance(pair_points(&pair, &dofs))
            }
            ProbeTarget::Deflection(p, [c0, c1]) => {
                let chord = [
                    self.probe_point(name, "chord", c0)?,
                    self.probe_point(name, "chord", c1)?,
                ];
                let r = [chord[0].position(&self.u0), chord[1].position(&self.u0)];
                if r[0] == r[1] {
                    return Err(err(
                        "probe",
                        name,
                        Some("chord"),
                        "the chord's two points start at the same position".into(),
                    ));
                }
                ProbeKind::Deflection {
                    point: self.probe_point(name, "point", p)?,
                    chord,
                    dim: self.dim,
                }
            }
            ProbeTarget::Section {
                element,
                component,
                point,
            } => {
                let (beam, dofs) = self.rods.get(element).ok_or_else(|| {
                    err(
                        "probe",
                        name,
                        Some("element"),
                        format!("'{element}' is not a beam3d element"),
                    )
                })?;
                if *point >= beam.gauss_points() || *component >= 6 {
                    return Err(err(
                        "probe",
                        name,
                        Some("point"),
                        format!(
                            "element '{element}' has {} Gauss point(s) and 6 components",
                            beam.gauss_points()
                        ),
                    ));
                }
                ProbeKind::Section(Box::new(crate::model::SectionPoint {
                    beam: beam.clone(),
                    dofs: dofs.clone(),
                    component: *component,
                    point: *point,
                }))
            }
            ProbeTarget::Multiplier { joint, row } => {
                pending = Some((joint.clone(), *row));
                ProbeKind::Multiplier(usize::MAX)
            }
            ProbeTarget::Energy(t) => ProbeKind::Energy(*t),
            ProbeTarget::Constraint(l) => ProbeKind::Constraint(*l),
        };
        let probe = Probe {
            name: name.to_string(),
            kind,
        };
        self.probes.push((probe, pending));
        Ok(())
    }

    /// The probes with multiplier rows resolved against the joint blocks.
    pub(super) fn resolve_probes(&mut self) -> Result<Vec<Probe>, BuildError> {
        let mut out = Vec::with_capacity(self.probes.len());
        for (mut probe, pending) in std::mem::take(&mut self.probes) {
            if let Some((joint, row)) = pending {
                let mut r0 = 0;
                let mut found = None;
                for blk in &self.joints.list {
                    for i in 0..blk.len() {
                        if blk.name(i) == joint {
                            found = Some((r0 + i * blk.rows(), blk.rows()));
                        }
                    }
                    r0 += blk.len() * blk.rows();
                }
                let (start, rows) = found.ok_or_else(|| {
                    err(
                        "probe",
                        &probe.name,
                        Some("joint"),
                        format!("joint '{joint}' is not defined"),
                    )
                })?;
                if row >= rows {
                    return Err(err(
                        "probe",
                        &probe.name,
                        Some("row"),
                        format!("joint '{joint}' has {rows} rows, row {row} does not exist"),
                    ));
                }
                probe.kind = ProbeKind::Multiplier(start + row);
            }
            out.push(probe);
        }
        Ok(out)
    }
}
