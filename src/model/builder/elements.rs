//! Elements between entities: trusses and spring-damper-actuators
//! (translational and rotational).

use crate::element::{
    RotationalSpringDamper as RotationalSpringElement, SpringDamper as SpringElement, Truss,
};
use crate::kinematics::point::{Point, PointPair};

use super::{
    element_length, err, finite, named, nonnegative, BuildError, Entity, ModelBuilder, PointRef,
    Positive, RotationalSpringDamper, SpringDamper, TrussSection,
};

impl ModelBuilder {
    /// Adds a Green-strain truss of `section` (EA and mass per unit length)
    /// between two nodes; the rest length defaults to the initial distance.
    pub fn truss(
        &mut self,
        id: &str,
        a: &str,
        b: &str,
        section: &TrussSection,
        rest_length: Option<f64>,
    ) -> Result<(), BuildError> {
        let dofs = self.two_nodes(id, a, b)?;
        let TrussSection {
            ea,
            rho_a: mass_per_length,
        } = *section;
        named(Positive, "element", id, "ea", "axial stiffness EA", ea)?;
        nonnegative("element", id, "mass_per_length", mass_per_length)?;
        let pair = PointPair {
            a: Point::Node { dim: self.dim },
            b: Point::Node { dim: self.dim },
        };
        let separation = self.initial_separation(&pair, &dofs);
        let rest = ["rest_length", "rest length"];
        let length = element_length(id, [a, b], separation, rest_length, rest)?;
        self.claim_id("element", id)?;
        self.elements
            .push(id, Truss::new(self.dim, ea, length, mass_per_length), &dofs);
        Ok(())
    }

    /// Adds a translational spring-damper-actuator between points `a` and `b`.
    pub fn spring_damper(
        &mut self,
        id: &str,
        a: &PointRef,
        b: &PointRef,
        spring: SpringDamper,
    ) -> Result<(), BuildError> {
        let SpringDamper {
            stiffness,
            damping,
            force: actuator,
            free_length,
        } = spring;
        let (pair, dofs) = self.pair("element", id, a, b, ["a", "b"])?;
        nonnegative("element", id, "stiffness", stiffness)?;
        nonnegative("element", id, "damping", damping)?;
        finite("element", id, "actuator_force", &[actuator])?;
        let length = self.initial_separation(&pair, &dofs);
        if length.is_nan() || length <= 0.0 {
            return Err(err(
                "element",
                id,
                Some("b"),
                "the two points coincide initially: the spring has no direction".into(),
            ));
        }
        let free = free_length.unwrap_or(length);
        nonnegative("element", id, "free_length", free)?;
        self.claim_id("element", id)?;
        self.elements.push(
            id,
            SpringElement::new(pair, stiffness, free, damping, actuator),
            &dofs,
        );
        Ok(())
    }

    /// Adds a rotational spring-damper-actuator on `theta_b - theta_a` of
    /// planar bodies `a` (None: the ground) and `b`.
    pub fn rotational_spring_damper(
        &mut self,
        id: &str,
        a: Option<&str>,
        b: &str,
        spring: RotationalSpringDamper,
    ) -> Result<(), BuildError> {
        let RotationalSpringDamper {
            stiffness,
            damping,
            torque,
            rest_angle,
        } = spring;
        let angle_dof = |this: &Self, body: &str, field: &'static str| match this.entities.get(body)
        {
            Some(Entity::Body2(d)) => Ok(d[2]),
            Some(_) => Err(err(
                "element",
                id,
                Some(field),
                format!("'{body}' is not a planar rigid body"),
            )),
            None => Err(err(
                "element",
                id,
                Some(field),
                format!("body '{body}' is not defined"),
            )),
        };
        let mut dofs = Vec::new();
        if let Some(a) = a {
            if a == b {
                return Err(err(
                    "element",
                    id,
                    Some("b"),
                    format!("both ends are body '{b}'"),
                ));
            }
            dofs.push(angle_dof(self, a, "a")?);
        }
        dofs.push(angle_dof(self, b, "b")?);
        nonnegative("element", id, "stiffness", stiffness)?;
        nonnegative("element", id, "damping", damping)?;
        finite("element", id, "torque", &[torque])?;
        let phi0 = self.u0[dofs[dofs.len() - 1]]
            - if dofs.len() == 2 {
                self.u0[dofs[0]]
            } else {
                0.0
            };
        let rest = rest_angle.unwrap_or(phi0);
        finite("element", id, "rest_angle", &[rest])?;
        self.claim_id("element", id)?;
        let e = RotationalSpringElement::new(a.is_none(), stiffness, rest, damping, torque);
        self.elements.push(id, e, &dofs);
        Ok(())
    }
}
