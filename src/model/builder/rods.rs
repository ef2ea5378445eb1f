//! Geometrically exact 3-D beams ([`DirectorBeam`]): beam nodes as director
//! bodies without own mass, elements on 2 or 3 of them, and lines (straight
//! or circular arcs) of such elements.

use nalgebra::{Matrix3, Rotation3, UnitQuaternion, Vector3};

use super::sections::line_elements;
use super::{err, finite, named, BuildError, Entity, ModelBuilder, Positive};
use super::{Body3dSpec, NonNegative};
use crate::element::{DirectorBeam, RodSection};
use crate::kinematics::attitude::Attitude;

/// The centre line of a generated line of beam3d elements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RodPath {
    /// The straight segment from `from` to `to`.
    Straight {
        /// First node.
        from: [f64; 3],
        /// Last node.
        to: [f64; 3],
    },
    /// The circular arc that starts at `from` and turns by `angle` (rad,
    /// right-handed) about the line through `center` along `axis`.
    Arc {
        /// First node.
        from: [f64; 3],
        /// A point of the rotation axis.
        center: [f64; 3],
        /// Direction of the rotation axis.
        axis: [f64; 3],
        /// Angle swept.
        angle: f64,
    },
}

/// A generated line of beam3d elements ([`ModelBuilder::line_of_beam3d`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RodLine<'a> {
    /// Prefix of the node ids (`{nodes}0 ..= {nodes}{elements * order}`).
    pub nodes: &'a str,
    /// Prefix of the element ids (`{element_ids}1 ..= {element_ids}{elements}`).
    pub element_ids: &'a str,
    /// The centre line.
    pub path: RodPath,
    /// Number of elements (>= 1).
    pub elements: usize,
    /// 1 (2-node elements) or 2 (3-node elements).
    pub order: usize,
    /// Reference direction of the section axis d1 (projected normal to the
    /// tangent at each node; must not be parallel to it).
    pub orientation: [f64; 3],
    /// The section.
    pub section: RodSection,
    /// Lumped (row-sum) instead of consistent mass.
    pub lumped: bool,
    /// Id of the last node instead of `{nodes}{elements * order}`.
    pub last_node: Option<&'a str>,
}

impl RodSection {
    /// Checks every stiffness (> 0) and inertia (>= 0) for entity `id`.
    pub(super) fn check(&self, what: &'static str, id: &str) -> Result<(), BuildError> {
        for (field, name, x) in [
            ("ea", "axial stiffness EA", self.ea),
            ("ga1", "shear stiffness GA1", self.ga1),
            ("ga2", "shear stiffness GA2", self.ga2),
            ("gj", "torsional stiffness GJ", self.gj),
            ("ei1", "bending stiffness EI1", self.ei1),
            ("ei2", "bending stiffness EI2", self.ei2),
        ] {
            named(Positive, what, id, field, name, x)?;
        }
        for (field, name, x) in [
            ("rho_a", "mass per unit length", self.rho_a),
            ("rho_i1", "director inertia rho_i1", self.rho_i1),
            ("rho_i2", "director inertia rho_i2", self.rho_i2),
        ] {
            named(NonNegative, what, id, field, name, x)?;
        }
        Ok(())
    }
}

impl RodSection {
    /// The section of `shape` (see [`super::Shape::rod`]) in a material of
    /// Young's modulus `e`, Poisson's ratio `nu` (G = E / (2 (1 + nu))) and
    /// density `rho`: EA, kGA (both directions), GJ, EI1, EI2, rho A and the
    /// director inertias `rho_i1 = rho I2`, `rho_i2 = rho I1`.
    ///
    /// ```
    /// use flexmb::element::RodSection;
    /// use flexmb::model::Shape;
    ///
    /// let s = RodSection::from_material(1e7, 0.0, 0.0, Shape::Rectangle { width: 1.0, height: 1.0 })?;
    /// assert_eq!(s.ea, 1e7);
    /// assert!((s.ei1 - 1e7 / 12.0).abs() < 1e-9 && s.ei2 == s.ei1);
    /// assert!((s.ga1 - 5.0 / 6.0 * 5e6).abs() < 1e-6 && (s.gj / 5e6 - 0.1406).abs() < 1e-3);
    /// # Ok::<(), flexmb::model::BuildError>(())
    /// ```
    pub fn from_material(
        e: f64,
        nu: f64,
        rho: f64,
        shape: super::Shape,
    ) -> Result<RodSection, BuildError> {
        named(Positive, "section", "material", "e", "Young's modulus E", e)?;
        named(NonNegative, "section", "material", "rho", "density", rho)?;
        if !(nu > -1.0 && nu < 0.5) {
            return Err(err(
                "section",
                "material",
                Some("nu"),
                format!("Poisson's ratio must be in (-1, 0.5), got {nu}"),
            ));
        }
        let r = shape.rod(nu)?;
        let g = e / (2.0 * (1.0 + nu));
        Ok(RodSection {
            ea: e * r.area,
            ga1: r.shear_factor * g * r.area,
            ga2: r.shear_factor * g * r.area,
            gj: g * r.j,
            ei1: e * r.i1,
            ei2: e * r.i2,
            rho_a: rho * r.area,
            rho_i1: rho * r.i2,
            rho_i2: rho * r.i1,
        })
    }
}

/// `v` without its component along the unit `t`, normalized; `None` when
/// (nearly) parallel.
fn normal_part(v: &Vector3<f64>, t: &Vector3<f64>) -> Option<Vector3<f64>> {
    let p = v - v.dot(t) * t;
    (p.norm() > 1e-8 * v.norm()).then(|| p.normalize())
}

impl ModelBuilder {
    /// Adds a beam3d node: a director body (`Attitude::Directors`) of zero
    /// own mass at `position` with d3 = `tangent` (normalized) and d1 the part
    /// of `d1` normal to it, d2 = d3 x d1. `field` names the orientation
    /// input in errors.
    pub fn beam3d_node(
        &mut self,
        id: &str,
        position: [f64; 3],
        tangent: [f64; 3],
        d1: [f64; 3],
        field: &'static str,
    ) -> Result<(), BuildError> {
        finite("node", id, "position", &position)?;
        finite("node", id, field, &d1)?;
        let t = Vector3::from(tangent);
        if !(t.norm() > 0.0 && t.norm().is_finite()) {
            return Err(err("node", id, Some(field), "the tangent is zero".into()));
        }
        let t = t.normalize();
        let e1 = normal_part(&Vector3::from(d1), &t).ok_or_else(|| {
            err(
                "node",
                id,
                Some(field),
                format!(
                    "the orientation vector {d1:?} is parallel to the beam axis {:?} (or zero): \
                     it must give the section axis d1",
                    [t[0], t[1], t[2]]
                ),
            )
        })?;
        let e2 = t.cross(&e1);
        let r = Rotation3::from_matrix_unchecked(Matrix3::from_columns(&[e1, e2, t]));
        let q = UnitQuaternion::from_rotation_matrix(&r);
        let spec = Body3dSpec {
            orientation: [q.w, q.i, q.j, q.k],
            attitude: Attitude::Directors,
            ..Body3dSpec::new(0.0, [0.0; 3]).at(position)
        };
        self.body3d(id, &spec)
    }

    /// Adds a geometrically exact beam element on the director nodes
    /// `nodes` (2, or 3 with the middle one second) of section `section`,
    /// stress free in the initial configuration; `lumped` selects the
    /// row-sum mass.
    pub fn beam3d(
        &mut self,
        id: &str,
        nodes: &[&str],
        section: &RodSection,
        lumped: bool,
    ) -> Result<(), BuildError> {
        if self.dim != 3 {
            return Err(err(
                "element",
                id,
                None,
                "a beam3d element needs dimension = 3".into(),
            ));
        }
        if nodes.len() != 2 && nodes.len() != 3 {
            return Err(err(
                "element",
                id,
                Some("nodes"),
                format!("a beam3d element has 2 or 3 nodes, got {}", nodes.len()),
            ));
        }
        let mut dofs = Vec::with_capacity(12 * nodes.len());
        for (k, node) in nodes.iter().enumerate() {
            if nodes[..k].contains(node) {
                return Err(err(
                    "element",
                    id,
                    Some("nodes"),
                    format!("node '{node}' is listed twice"),
                ));
            }
            match self.entities.get(*node) {
                Some(Entity::Body3(d, Attitude::Directors)) => dofs.extend_from_slice(d),
                Some(_) => {
                    return Err(err(
                        "element",
                        id,
                        Some("nodes"),
                        format!(
                            "'{node}' is not a director body: beam3d nodes are 3-D bodies with \
                             attitude = \"directors\" (the node's rotation)"
                        ),
                    ))
                }
                None => {
                    return Err(err(
                        "element",
                        id,
                        Some("nodes"),
                        format!("node or body '{node}' is not defined"),
                    ))
                }
            }
        }
        section.check("element", id)?;
        let q0: Vec<f64> = dofs.iter().map(|&d| self.u0[d]).collect();
        let beam = DirectorBeam::new(section, &q0, lumped);
        beam.check()
            .map_err(|m| err("element", id, Some("nodes"), m))?;
        self.claim_id("element", id)?;
        self.rods
            .insert(id.to_string(), (beam.clone(), dofs.clone()));
        self.elements.push(id, beam, &dofs);
        Ok(())
    }

    /// A line of `line.elements` beam3d elements along `line.path`: nodes
    /// `{nodes}0 ..= {nodes}{elements * order}` equally spaced in arc
    /// length (d3 the tangent, d1 from `orientation`), elements
    /// `{element_ids}1 ..`, element k on nodes `order (k-1) ..= order k`;
    /// `last_node` renames the last node.
    /// Returns the node ids, first to last.
    pub fn line_of_beam3d(&mut self, line: &RodLine<'_>) -> Result<Vec<String>, BuildError> {
        let id = line.nodes;
        let n = line.elements;
        line_elements("beam3d_line", id, n)?;
        let bad =
            |field: &'static str, message: String| err("beam3d_line", id, Some(field), message);
        if line.order != 1 && line.order != 2 {
            return Err(bad(
                "order",
                format!(
                    "order is 1 (2-node elements) or 2 (3-node), got {}",
                    line.order
                ),
            ));
        }
        line.section.check("beam3d_line", id)?;
        finite("beam3d_line", id, "orientation", &line.orientation)?;
        let count = n * line.order;
        // Position and unit tangent of node k.
        let nodes_at: Vec<(Vector3<f64>, Vector3<f64>)> = match line.path {
            RodPath::Straight { from, to } => {
                finite("beam3d_line", id, "from", &from)?;
                finite("beam3d_line", id, "to", &to)?;
                let (a, b) = (Vector3::from(from), Vector3::from(to));
                let d = b - a;
                if d.norm() == 0.0 {
                    return Err(bad(
                        "to",
                        "`to` equals `from`: the line has no length".into(),
                    ));
                }
                (0..=count)
                    .map(|k| (a + d * (k as f64 / count as f64), d.normalize()))
                    .collect()
            }
            RodPath::Arc {
                from,
                center,
                axis,
                angle,
            } => {
                finite("beam3d_line", id, "from", &from)?;
                finite("beam3d_line", id, "center", &center)?;
                finite("beam3d_line", id, "axis", &axis)?;
                finite("beam3d_line", id, "angle", &[angle])?;
                let h = Vector3::from(axis);
                if h.norm() == 0.0 {
                    return Err(bad("axis", "the arc axis must be non-zero".into()));
                }
                let h = h.normalize();
                let c = Vector3::from(center);
                let r0 = Vector3::from(from) - c;
                let radial = r0 - r0.dot(&h) * h;
                if radial.norm() <= 1e-12 * r0.norm().max(1.0) || angle == 0.0 {
                    return Err(bad(
                        "center",
                        "the arc has no length: `from` is on the axis or `angle` is 0".into(),
                    ));
                }
                (0..=count)
                    .map(|k| {
                        let rot = Rotation3::from_axis_angle(
                            &nalgebra::Unit::new_unchecked(h),
                            angle * k as f64 / count as f64,
                        );
                        let r = rot * r0;
                        let t = (h.cross(&r) * angle.signum()).normalize();
                        (c + r, t)
                    })
                    .collect()
            }
        };
        let mut ids: Vec<String> = (0..=count).map(|k| format!("{id}{k}")).collect();
        if let Some(last) = line.last_node {
            ids[count] = last.to_string();
        }
        for (node, (p, t)) in ids.iter().zip(&nodes_at) {
            self.beam3d_node(
                node,
                [p[0], p[1], p[2]],
                [t[0], t[1], t[2]],
                line.orientation,
                "orientation",
            )
            .map_err(|mut e| {
                if e.field == Some("orientation") {
                    e.what = "beam3d_line";
                    e.id = id.to_string();
                    e.message = format!("at node '{node}': {}", e.message);
                }
                e
            })?;
        }
        for k in 1..=n {
            let e = format!("{}{k}", line.element_ids);
            let o = line.order;
            let on: Vec<&str> = ids[o * (k - 1)..=o * k]
                .iter()
                .map(String::as_str)
                .collect();
            self.beam3d(&e, &on, &line.section, line.lumped)?;
        }
        Ok(ids)
    }
}
