//! Beams: Euler–Bernoulli beam nodes, elements and slope joints; Greenspan
//! thin-beam axial and bending springs.

use crate::element::Beam;
use crate::joint::{Slope, SlopeTarget};
use crate::kinematics::vec3::{dot, norm};
use crate::model::dof::beam_components;

use super::{
    distinct_ends, element_length, err, nonnegative, nonzero, BeamSection, BuildError, Entity,
    ModelBuilder,
};

/// Euler–Bernoulli beams (planar and spatial): beam nodes, beam elements,
/// slope joints.
impl ModelBuilder {
    /// Adds a beam node with position r, slope vector r' = dr/dx (DOFs
    /// `id.x, id.y[, id.z], id.dx, id.dy[, id.dz]`), their initial rates and an
    /// optional lumped mass on the position.
    pub fn beam_node(
        &mut self,
        id: &str,
        position: &[f64],
        slope: &[f64],
        velocity: Option<&[f64]>,
        slope_velocity: Option<&[f64]>,
        mass: f64,
    ) -> Result<(), BuildError> {
        let dim = self.dim;
        let p = self.vector("node", id, "position", position, dim)?;
        let s = self.vector("node", id, "slope", slope, dim)?;
        let zero = "the slope vector must not be zero (use the unit tangent of the beam)";
        nonzero("node", id, "slope", &s, zero)?;
        let v = match velocity {
            Some(v) => self.vector("node", id, "velocity", v, dim)?,
            None => [0.0; 3],
        };
        let sv = match slope_velocity {
            Some(v) => self.vector("node", id, "slope_velocity", v, dim)?,
            None => [0.0; 3],
        };
        nonnegative("node", id, "mass", mass)?;
        self.claim_id("node", id)?;
        let d = self.dofs.add(id, &beam_components(dim));
        self.u0.extend_from_slice(&p[..dim]);
        self.u0.extend_from_slice(&s[..dim]);
        self.v0.extend_from_slice(&v[..dim]);
        self.v0.extend_from_slice(&sv[..dim]);
        if mass > 0.0 {
            for &k in &d[..dim] {
                self.inertia.push((k, k, mass));
            }
        }
        self.entities.insert(id.to_string(), Entity::BeamNode(d));
        Ok(())
    }

    /// Global DOFs (position, then slope) of the beam node `node`.
    fn beam_node_dofs(
        &self,
        what: &'static str,
        id: &str,
        field: &'static str,
        node: &str,
    ) -> Result<&[usize], BuildError> {
        match self.entities.get(node) {
            Some(Entity::BeamNode(d)) => Ok(d),
            Some(Entity::Node(_)) => Err(err(
                what,
                id,
                Some(field),
                format!(
                    "node '{node}' has no slope: beam nodes need `slope` ({} components)",
                    self.dim
                ),
            )),
            Some(Entity::Body2(_) | Entity::Body3(..)) => Err(err(
                what,
                id,
                Some(field),
                format!("'{node}' is a rigid body, a beam node is required"),
            )),
            None => Err(err(
                what,
                id,
                Some(field),
                format!("node '{node}' is not defined"),
            )),
        }
    }

    /// Adds an Euler–Bernoulli beam element (planar, or spatial without
    /// torsion) between beam nodes `a` and `b` of cross section `section`
    /// (axial stiffness, bending stiffness, mass per unit length). The
    /// reference length defaults to the initial distance of the nodes; the
    /// element is stress free in the initial configuration.
    pub fn beam(
        &mut self,
        id: &str,
        a: &str,
        b: &str,
        section: &BeamSection,
        length: Option<f64>,
    ) -> Result<(), BuildError> {
        let mut dofs = self.beam_node_dofs("element", id, "nodes", a)?.to_vec();
        dofs.extend_from_slice(self.beam_node_dofs("element", id, "nodes", b)?);
        distinct_ends(id, a, b)?;
        section.check("element", id)?;
        let BeamSection { ea, ei, rho_a } = *section;
        let dim = self.dim;
        let e0: Vec<f64> = dofs.iter().map(|&d| self.u0[d]).collect();
        let separation = (0..dim)
            .map(|k| (e0[2 * dim + k] - e0[k]).powi(2))
            .sum::<f64>()
            .sqrt();
        let l = element_length(
            id,
            [a, b],
            separation,
            length,
            ["length", "the element length"],
        )?;
        self.claim_id("element", id)?;
        let shape = self.beam_shapes.get(l);
        if dim == 2 {
            let el = Beam::<2>::with_shape(shape, ea, ei, rho_a, Some(&e0));
            self.elements.push(id, el, &dofs);
        } else {
            let el = Beam::<3>::with_shape(shape, ea, ei, rho_a, Some(&e0));
            self.elements.push(id, el, &dofs);
        }
        Ok(())
    }

    /// Keeps the slope of beam node `node` parallel to a fixed ground
    /// direction (`body = None`; `direction` defaults to the initial slope) or
    /// to a direction fixed in the planar rigid body `body` (2-D only;
    /// `direction` given in body coordinates; default: the initial slope,
    /// carried with the body).
    pub fn slope(
        &mut self,
        id: &str,
        node: &str,
        body: Option<&str>,
        direction: Option<&[f64]>,
    ) -> Result<(), BuildError> {
        let dim = self.dim;
        let ds = match self.entities.get(node) {
            Some(Entity::BeamNode(d)) => d[dim..].to_vec(),
            Some(_) => {
                return Err(err(
                    "joint",
                    id,
                    Some("node"),
                    format!("'{node}' is not a beam node (a node with a slope)"),
                ))
            }
            None => {
                return Err(err(
                    "joint",
                    id,
                    Some("node"),
                    format!("node '{node}' is not defined"),
                ))
            }
        };
        let s0 = self.initial_point(&ds);
        let dir = match direction {
            Some(d) => {
                let v = self.vector("joint", id, "direction", d, dim)?;
                nonzero(
                    "joint",
                    id,
                    "direction",
                    &v,
                    "the direction must not be zero",
                )?;
                v
            }
            None => s0,
        };
        let (target, dofs) = match body {
            None if dim == 3 => (SlopeTarget::Ground3d(dir), ds),
            None => (SlopeTarget::Ground([dir[0], dir[1]]), ds),
            Some(bid) if matches!(self.entities.get(bid), Some(Entity::Body3(..))) && dim == 3 => {
                let Some(Entity::Body3(b, att)) = self.entities.get(bid) else {
                    unreachable!("matched above")
                };
                let q0: Vec<f64> = b[3..].iter().map(|&k| self.u0[k]).collect();
                // Default: the initial slope in body coordinates, R(q0)^T s0.
                let d0 = match direction {
                    Some(_) => dir,
                    None => att.rotate_back(&q0, &s0),
                };
                let mut dofs = ds.clone();
                dofs.extend_from_slice(&b[3..]);
                (SlopeTarget::Body3d(d0, *att), dofs)
            }
            Some(bid) => {
                let th = match self.entities.get(bid) {
                    Some(Entity::Body2(d)) if dim == 2 => d[2],
                    _ => {
                        return Err(err(
                            "joint",
                            id,
                            Some("body"),
                            format!("'{bid}' is not a rigid body of this {dim}-D model"),
                        ))
                    }
                };
                let d0 = match direction {
                    Some(_) => [dir[0], dir[1]],
                    None => {
                        // The initial slope in body coordinates: R(-theta0) s0.
                        let (s, c) = self.u0[th].sin_cos();
                        [c * s0[0] + s * s0[1], -s * s0[0] + c * s0[1]]
                    }
                };
                (SlopeTarget::Body(d0), vec![ds[0], ds[1], th])
            }
        };
        self.claim_id("joint", id)?;
        self.joints.push(id, Slope::new(target), &dofs);
        Ok(())
    }
}

/// Greenspan thin-beam elements (Hoitink §4.2.2; `crate::element::thin_beam`).
impl ModelBuilder {
    /// A finite stiffness > 0, or an error naming the `stiffness` field.
    fn positive_stiffness(id: &str, stiffness: f64) -> Result<(), BuildError> {
        if stiffness > 0.0 && stiffness.is_finite() {
            Ok(())
        } else {
            Err(err(
                "element",
                id,
                Some("stiffness"),
                format!("stiffness must be positive, got {stiffness}"),
            ))
        }
    }

    /// Initial position (dim components) of the node with local DOFs `dofs`.
    fn initial_point(&self, dofs: &[usize]) -> [f64; 3] {
        let mut x = [0.0; 3];
        for (a, &d) in dofs.iter().enumerate() {
            x[a] = self.u0[d];
        }
        x
    }

    /// Adds an axial spring `V = 1/2 kappa (l - l0)^2` (eq. 4.43) between two
    /// nodes; the rest length `l0` defaults to the initial distance.
    pub fn axial_spring(
        &mut self,
        id: &str,
        a: &str,
        b: &str,
        stiffness: f64,
        rest_length: Option<f64>,
    ) -> Result<(), BuildError> {
        let dofs = self.two_nodes(id, a, b)?;
        Self::positive_stiffness(id, stiffness)?;
        let half = dofs.len() / 2;
        let (xa, xb) = (
            self.initial_point(&dofs[..half]),
            self.initial_point(&dofs[half..]),
        );
        let separation = (0..3).map(|k| (xb[k] - xa[k]).powi(2)).sum::<f64>().sqrt();
        let rest = ["rest_length", "rest length"];
        let length = element_length(id, [a, b], separation, rest_length, rest)?;
        self.claim_id("element", id)?;
        self.elements.push(
            id,
            crate::element::AxialSpring::new(self.dim, stiffness, length),
            &dofs,
        );
        Ok(())
    }

    /// Adds a bending element `V = 1/2 Cb (nu + psi)/(nu - psi)` (eq. 4.42) on
    /// three nodes `[a, b, c]`, `b` the middle node; zero energy when the three
    /// are on a straight line.
    pub fn bending(
        &mut self,
        id: &str,
        nodes: [&str; 3],
        stiffness: f64,
    ) -> Result<(), BuildError> {
        let mut dofs = Vec::new();
        for n in nodes {
            dofs.extend(self.node_dofs("element", id, n)?);
        }
        for (i, j) in [(0, 1), (1, 2), (0, 2)] {
            if nodes[i] == nodes[j] {
                return Err(err(
                    "element",
                    id,
                    Some("nodes"),
                    format!(
                        "node '{}' appears twice: three different nodes are required",
                        nodes[i]
                    ),
                ));
            }
        }
        Self::positive_stiffness(id, stiffness)?;
        let k = dofs.len() / 3;
        let x: Vec<[f64; 3]> = (0..3)
            .map(|i| self.initial_point(&dofs[i * k..(i + 1) * k]))
            .collect();
        let r1: [f64; 3] = std::array::from_fn(|c| x[0][c] - x[1][c]);
        let r2: [f64; 3] = std::array::from_fn(|c| x[2][c] - x[1][c]);
        let (l1, l2) = (norm(&r1), norm(&r2));
        if !(l1 > 0.0 && l2 > 0.0) {
            return Err(err(
                "element",
                id,
                Some("nodes"),
                "the middle node starts on top of a neighbour: the bending angle is undefined"
                    .into(),
            ));
        }
        if l1 * l2 - dot(&r1, &r2) <= 1e-12 * l1 * l2 {
            return Err(err(
                "element",
                id,
                Some("nodes"),
                "the two arms start folded onto each other: the bending energy is infinite".into(),
            ));
        }
        self.claim_id("element", id)?;
        self.elements
            .push(id, crate::element::Bending::new(self.dim, stiffness), &dofs);
        Ok(())
    }
}
