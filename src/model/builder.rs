//! Building a [`Model`] in code: entities (nodes, planar rigid bodies), elements,
//! joints and loads referenced by id, validated as they are added.

mod probe;
mod rigid3d;

pub use probe::ProbeTarget;
pub use rigid3d::{Body3dSpec, Joint3d};

use std::any::TypeId;
use std::collections::HashMap;

use super::dof::{beam_components, point_components, DofMap, BODY2D_COMPONENTS};
use super::{LoadEntry, Model};
use crate::attitude::Attitude;
use crate::element::{
    Beam, BeamShapes, Element, ElementBlock, ElementSet,
    RotationalSpringDamper as RotationalSpringElement, SpringDamper as SpringElement, Truss,
};
use crate::joint::{
    Coincident, Curve, Distance, DistanceForm, Joint, JointBlock, JointSet, LinearCombination,
    Motion, PathJoint, Point, PointPair, Prescribed, Slider, Slope, SlopeTarget,
};
use crate::load::{BodyTorque, Load, PointLoad, TimeFunction, TorqueFrame};

/// A model-building error: which entity, which field, what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{what} '{id}': {message}")]
pub struct BuildError {
    /// Entity kind (`node`, `body`, `element`, `joint`, `load`, `model`).
    pub what: &'static str,
    /// Entity id.
    pub id: String,
    /// Offending field, when one field is at fault.
    pub field: Option<&'static str>,
    /// What is wrong.
    pub message: String,
}

/// A finite value > 0, or an error naming `field` and the quantity `name`.
fn positive_named(
    what: &'static str,
    id: &str,
    field: &'static str,
    name: &str,
    x: f64,
) -> Result<(), BuildError> {
    if x > 0.0 && x.is_finite() {
        Ok(())
    } else {
        Err(err(
            what,
            id,
            Some(field),
            format!("{name} must be positive, got {x}"),
        ))
    }
}

/// A finite value >= 0, or an error naming `field` and the quantity `name`.
fn nonnegative_named(
    what: &'static str,
    id: &str,
    field: &'static str,
    name: &str,
    x: f64,
) -> Result<(), BuildError> {
    if x >= 0.0 && x.is_finite() {
        Ok(())
    } else {
        Err(err(
            what,
            id,
            Some(field),
            format!("{name} must be zero or positive, got {x}"),
        ))
    }
}

/// A finite value >= 0, or an error naming `field`.
fn nonnegative(
    what: &'static str,
    id: &str,
    field: &'static str,
    x: f64,
) -> Result<(), BuildError> {
    nonnegative_named(what, id, field, field, x)
}

fn err(what: &'static str, id: &str, field: Option<&'static str>, message: String) -> BuildError {
    BuildError {
        what,
        id: id.to_string(),
        field,
        message,
    }
}

/// A reference to a material point.
#[derive(Debug, Clone, PartialEq)]
pub enum PointRef {
    /// A node, or the reference point (centre of mass) of a body, by id.
    Entity(String),
    /// A body-fixed point of a rigid body.
    Body {
        /// Body id.
        body: String,
        /// Offset in body coordinates (z = 0 for planar bodies).
        offset: [f64; 3],
    },
    /// A fixed point in space.
    Ground([f64; 3]),
}

impl PointRef {
    /// A node, or a body's reference point (its centre of mass), by id.
    pub fn entity(id: &str) -> Self {
        PointRef::Entity(id.to_string())
    }

    /// A point of planar body `body` at `offset` in body coordinates.
    pub fn on(body: &str, offset: [f64; 2]) -> Self {
        PointRef::Body {
            body: body.to_string(),
            offset: [offset[0], offset[1], 0.0],
        }
    }

    /// A point of 3-D body `body` at `offset` in body coordinates.
    pub fn on3(body: &str, offset: [f64; 3]) -> Self {
        PointRef::Body {
            body: body.to_string(),
            offset,
        }
    }

    /// A fixed point of a planar model.
    pub fn ground(position: [f64; 2]) -> Self {
        PointRef::Ground([position[0], position[1], 0.0])
    }
}

/// A planar rigid body with its reference point at the centre of mass.
///
/// ```
/// use flexmb::model::{Body2d, ModelBuilder};
///
/// let mut b = ModelBuilder::new(2)?;
/// b.body2d("bar", Body2d::new(2.0, 0.1).at(0.5, 0.0, 0.0).moving(0.0, 1.0, -2.0))?;
/// assert_eq!(b.build()?.u0, [0.5, 0.0, 0.0]);
/// # Ok::<(), flexmb::model::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Body2d {
    /// Mass (> 0).
    pub mass: f64,
    /// Rotational inertia about the centre of mass (>= 0).
    pub inertia: f64,
    /// Initial position of the centre of mass.
    pub position: [f64; 2],
    /// Initial angle (rad).
    pub angle: f64,
    /// Initial velocity of the centre of mass.
    pub velocity: [f64; 2],
    /// Initial angular velocity (rad/s).
    pub angular_velocity: f64,
}

impl Body2d {
    /// A body of `mass` and rotational `inertia` at rest at the origin.
    pub fn new(mass: f64, inertia: f64) -> Self {
        Body2d {
            mass,
            inertia,
            position: [0.0; 2],
            angle: 0.0,
            velocity: [0.0; 2],
            angular_velocity: 0.0,
        }
    }

    /// Placed at (x, y) with angle `theta`.
    pub fn at(self, x: f64, y: f64, theta: f64) -> Self {
        Body2d {
            position: [x, y],
            angle: theta,
            ..self
        }
    }

    /// Moving with velocity (vx, vy) and angular velocity `omega`.
    pub fn moving(self, vx: f64, vy: f64, omega: f64) -> Self {
        Body2d {
            velocity: [vx, vy],
            angular_velocity: omega,
            ..self
        }
    }
}

/// A translational spring-damper-actuator between two points (its law:
/// [`crate::element::SpringDamper`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SpringDamper {
    /// Stiffness (>= 0).
    pub stiffness: f64,
    /// Damping coefficient (>= 0).
    pub damping: f64,
    /// Actuator force.
    pub force: f64,
    /// Free length; `None`: the initial distance.
    pub free_length: Option<f64>,
}

/// A rotational spring-damper-actuator on the relative angle of two planar
/// bodies (see [`crate::element::RotationalSpringDamper`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RotationalSpringDamper {
    /// Stiffness (>= 0).
    pub stiffness: f64,
    /// Damping coefficient (>= 0).
    pub damping: f64,
    /// Actuator torque.
    pub torque: f64,
    /// Rest angle; `None`: the initial relative angle.
    pub rest_angle: Option<f64>,
}

#[derive(Debug, Clone)]
enum Entity {
    Node(Vec<usize>),
    Body2([usize; 3]),
    /// A 3-D rigid body: centre of mass and rotation coordinates.
    Body3(Vec<usize>, Attitude),
    /// A beam node: position (dim DOFs), then slope vector (dim DOFs).
    BeamNode(Vec<usize>),
}

impl Entity {
    fn dofs(&self) -> &[usize] {
        match self {
            Entity::Node(d) => d,
            Entity::Body2(d) => d,
            Entity::Body3(d, _) => d,
            Entity::BeamNode(d) => d,
        }
    }
}

/// Homogeneous blocks in order of first appearance, one per (type, rows, local DOFs):
/// every element or joint type is grouped by the same code.
struct Blocks<S: ?Sized> {
    list: Vec<Box<S>>,
    index: HashMap<(TypeId, usize, usize), usize>,
}

impl<S: ?Sized> Default for Blocks<S> {
    fn default() -> Self {
        Blocks {
            list: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<S: ?Sized> Blocks<S> {
    /// The block for `key`, created by `new` on first use.
    fn block(&mut self, key: (TypeId, usize, usize), new: impl FnOnce() -> Box<S>) -> &mut S {
        let k = *self.index.entry(key).or_insert_with(|| {
            self.list.push(new());
            self.list.len() - 1
        });
        &mut self.list[k]
    }
}

impl Blocks<dyn ElementSet> {
    fn push<E: Element>(&mut self, name: &str, e: E, dofs: &[usize]) {
        let k = dofs.len();
        self.block((TypeId::of::<E>(), 0, k), || {
            Box::new(ElementBlock::<E>::new(k))
        })
        .as_any_mut()
        .downcast_mut::<ElementBlock<E>>()
        .expect("block of this element type")
        .push(name.to_string(), e, dofs);
    }
}

impl Blocks<dyn JointSet> {
    fn push<J: Joint>(&mut self, name: &str, j: J, dofs: &[usize]) {
        let (rows, k) = (j.rows(), dofs.len());
        self.block((TypeId::of::<J>(), rows, k), || {
            Box::new(JointBlock::<J>::new(rows, k))
        })
        .as_any_mut()
        .downcast_mut::<JointBlock<J>>()
        .expect("block of this joint type")
        .push(name.to_string(), j, dofs);
    }
}

/// Builds a [`Model`] entity by entity; every call checks its values and
/// references and names the entity and field at fault.
///
/// ```
/// use flexmb::model::{Body2d, ModelBuilder, PointRef};
///
/// let mut b = ModelBuilder::new(2)?;
/// b.body2d("crank", Body2d::new(1.0, 0.1).at(0.5, 0.0, 0.0))?;
/// b.ground_pin("pivot", &PointRef::on("crank", [-0.5, 0.0]), &[0.0, 0.0])?;
/// let e = b.ground_pin("pivot", &PointRef::entity("crank"), &[0.5, 0.0]).unwrap_err();
/// assert_eq!((e.id.as_str(), e.field), ("pivot", Some("id"))); // ids are unique
/// let model = b.build()?;
/// assert_eq!(model.dofs.names(), ["crank.x", "crank.y", "crank.theta"]);
/// # Ok::<(), flexmb::model::BuildError>(())
/// ```
pub struct ModelBuilder {
    dim: usize,
    dofs: DofMap,
    u0: Vec<f64>,
    v0: Vec<f64>,
    inertia: Vec<(usize, usize, f64)>,
    entities: HashMap<String, Entity>,
    ids: HashMap<String, &'static str>,
    elements: Blocks<dyn ElementSet>,
    joints: Blocks<dyn JointSet>,
    loads: Vec<LoadEntry>,
    gravity: [f64; 3],
    /// The beams' quadrature tables, one per distinct length.
    beam_shapes: BeamShapes,
    /// Probes, with a multiplier reference (joint id, row) resolved at `build`.
    probes: Vec<(super::Probe, Option<(String, usize)>)>,
}

fn finite(what: &'static str, id: &str, field: &'static str, xs: &[f64]) -> Result<(), BuildError> {
    if xs.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(err(
            what,
            id,
            Some(field),
            "values must be finite numbers".into(),
        ))
    }
}

impl ModelBuilder {
    /// A new empty model in `dim` = 2 or 3 dimensions.
    pub fn new(dim: usize) -> Result<Self, BuildError> {
        if dim != 2 && dim != 3 {
            return Err(err(
                "model",
                "",
                Some("dimension"),
                format!("dimension must be 2 or 3, got {dim}"),
            ));
        }
        Ok(ModelBuilder {
            dim,
            dofs: DofMap::default(),
            u0: Vec::new(),
            v0: Vec::new(),
            inertia: Vec::new(),
            entities: HashMap::new(),
            ids: HashMap::new(),
            elements: Blocks::default(),
            joints: Blocks::default(),
            loads: Vec::new(),
            gravity: [0.0; 3],
            beam_shapes: BeamShapes::default(),
            probes: Vec::new(),
        })
    }

    /// Spatial dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    fn claim_id(&mut self, what: &'static str, id: &str) -> Result<(), BuildError> {
        if id.is_empty() {
            return Err(err(what, id, Some("id"), "id must not be empty".into()));
        }
        if let Some(prev) = self.ids.get(id) {
            return Err(err(
                what,
                id,
                Some("id"),
                format!("id is already used by a {prev}"),
            ));
        }
        self.ids.insert(id.to_string(), what);
        Ok(())
    }

    fn vector(
        &self,
        what: &'static str,
        id: &str,
        field: &'static str,
        x: &[f64],
        len: usize,
    ) -> Result<[f64; 3], BuildError> {
        if x.len() != len {
            return Err(err(
                what,
                id,
                Some(field),
                format!("expected {len} components, got {}", x.len()),
            ));
        }
        finite(what, id, field, x)?;
        let mut v = [0.0; 3];
        v[..len].copy_from_slice(x);
        Ok(v)
    }

    /// Adds a point node with an optional lumped mass.
    pub fn node(
        &mut self,
        id: &str,
        position: &[f64],
        velocity: Option<&[f64]>,
        mass: f64,
    ) -> Result<(), BuildError> {
        let p = self.vector("node", id, "position", position, self.dim)?;
        let v = match velocity {
            Some(v) => self.vector("node", id, "velocity", v, self.dim)?,
            None => [0.0; 3],
        };
        nonnegative("node", id, "mass", mass)?;
        self.claim_id("node", id)?;
        let dofs = self.dofs.add(id, &point_components(self.dim));
        for (a, &d) in dofs.iter().enumerate() {
            self.u0.push(p[a]);
            self.v0.push(v[a]);
            if mass > 0.0 {
                self.inertia.push((d, d, mass));
            }
        }
        self.entities.insert(id.to_string(), Entity::Node(dofs));
        Ok(())
    }

    /// Adds a planar rigid body.
    pub fn body2d(&mut self, id: &str, body: Body2d) -> Result<(), BuildError> {
        let Body2d {
            mass,
            inertia,
            position: p,
            angle,
            velocity: v,
            angular_velocity,
        } = body;
        if self.dim != 2 {
            return Err(err(
                "body",
                id,
                None,
                "planar rigid bodies need a model with dimension = 2".into(),
            ));
        }
        finite("body", id, "position", &p)?;
        finite("body", id, "velocity", &v)?;
        finite("body", id, "angle", &[angle, angular_velocity])?;
        positive_named("body", id, "mass", "mass", mass)?;
        nonnegative_named("body", id, "inertia", "rotational inertia", inertia)?;
        self.claim_id("body", id)?;
        let d = self.dofs.add(id, &BODY2D_COMPONENTS);
        self.u0.extend_from_slice(&[p[0], p[1], angle]);
        self.v0.extend_from_slice(&[v[0], v[1], angular_velocity]);
        self.inertia.push((d[0], d[0], mass));
        self.inertia.push((d[1], d[1], mass));
        if inertia > 0.0 {
            self.inertia.push((d[2], d[2], inertia));
        }
        self.entities
            .insert(id.to_string(), Entity::Body2([d[0], d[1], d[2]]));
        Ok(())
    }

    fn node_dofs(
        &self,
        what: &'static str,
        id: &str,
        node: &str,
    ) -> Result<Vec<usize>, BuildError> {
        match self.entities.get(node) {
            Some(Entity::Node(d)) => Ok(d.clone()),
            Some(Entity::BeamNode(d)) => Ok(d[..self.dim].to_vec()),
            Some(Entity::Body2(_) | Entity::Body3(..)) => Err(err(
                what,
                id,
                Some("nodes"),
                format!("'{node}' is a rigid body, a node is required"),
            )),
            None => Err(err(
                what,
                id,
                Some("nodes"),
                format!("node '{node}' is not defined"),
            )),
        }
    }

    /// DOFs of the two distinct end nodes `a`, `b` of two-node element `id`.
    fn two_nodes(&self, id: &str, a: &str, b: &str) -> Result<Vec<usize>, BuildError> {
        let mut dofs = self.node_dofs("element", id, a)?;
        dofs.extend(self.node_dofs("element", id, b)?);
        if a == b {
            return Err(err(
                "element",
                id,
                Some("nodes"),
                format!("both ends are node '{a}'"),
            ));
        }
        Ok(dofs)
    }

    /// Resolves a point reference to its [`Point`], owner id and global DOFs.
    fn point(
        &self,
        what: &'static str,
        id: &str,
        field: &'static str,
        p: &PointRef,
    ) -> Result<(Point, Option<String>, Vec<usize>), BuildError> {
        match p {
            PointRef::Entity(n) => match self.entities.get(n) {
                Some(Entity::Node(d)) => {
                    Ok((Point::Node { dim: self.dim }, Some(n.clone()), d.clone()))
                }
                // A point on a beam node is its position (the first dim DOFs).
                Some(Entity::BeamNode(d)) => Ok((
                    Point::Node { dim: self.dim },
                    Some(n.clone()),
                    d[..self.dim].to_vec(),
                )),
                Some(Entity::Body2(d)) => Ok((
                    Point::Body2 { offset: [0.0; 2] },
                    Some(n.clone()),
                    d.to_vec(),
                )),
                Some(Entity::Body3(d, attitude)) => Ok((
                    Point::Body3 {
                        offset: [0.0; 3],
                        attitude: *attitude,
                    },
                    Some(n.clone()),
                    d.to_vec(),
                )),
                None => Err(err(
                    what,
                    id,
                    Some(field),
                    format!("node or body '{n}' is not defined"),
                )),
            },
            PointRef::Body { body, offset } => match self.entities.get(body) {
                Some(Entity::Body2(d)) => {
                    finite(what, id, field, offset)?;
                    Ok((
                        Point::Body2 {
                            offset: [offset[0], offset[1]],
                        },
                        Some(body.clone()),
                        d.to_vec(),
                    ))
                }
                Some(Entity::Body3(d, attitude)) => {
                    finite(what, id, field, offset)?;
                    Ok((
                        Point::Body3 {
                            offset: *offset,
                            attitude: *attitude,
                        },
                        Some(body.clone()),
                        d.to_vec(),
                    ))
                }
                Some(Entity::Node(_) | Entity::BeamNode(_)) => Err(err(
                    what,
                    id,
                    Some(field),
                    format!("'{body}' is a node: an offset needs a rigid body"),
                )),
                None => Err(err(
                    what,
                    id,
                    Some(field),
                    format!("body '{body}' is not defined"),
                )),
            },
            PointRef::Ground(x) => {
                finite(what, id, field, x)?;
                if x[self.dim..].iter().any(|c| *c != 0.0) {
                    return Err(err(
                        what,
                        id,
                        Some(field),
                        format!(
                            "a ground point of a {}-D model has {} coordinates, got {}",
                            self.dim,
                            self.dim,
                            crate::fmt::list(x)
                        ),
                    ));
                }
                Ok((Point::Ground { position: *x }, None, Vec::new()))
            }
        }
    }

    fn pair(
        &self,
        what: &'static str,
        id: &str,
        a: &PointRef,
        b: &PointRef,
        fields: [&'static str; 2],
    ) -> Result<(PointPair, Vec<usize>), BuildError> {
        let (pa, oa, mut da) = self.point(what, id, fields[0], a)?;
        let (pb, ob, db) = self.point(what, id, fields[1], b)?;
        if oa.is_some() && oa == ob {
            return Err(err(
                what,
                id,
                Some(fields[1]),
                format!(
                    "both points belong to '{}': it must connect two different entities",
                    oa.unwrap_or_default()
                ),
            ));
        }
        if oa.is_none() && ob.is_none() {
            return Err(err(
                what,
                id,
                Some(fields[1]),
                "both points are on the ground: nothing connects them".into(),
            ));
        }
        da.extend(db);
        Ok((PointPair { a: pa, b: pb }, da))
    }

    fn initial_separation(&self, pair: &PointPair, dofs: &[usize]) -> f64 {
        let q: Vec<f64> = dofs.iter().map(|&d| self.u0[d]).collect();
        let d = pair.separation(&q);
        (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
    }

    /// Adds a Green-strain truss between two nodes; the rest length defaults to
    /// the initial distance.
    pub fn truss(
        &mut self,
        id: &str,
        a: &str,
        b: &str,
        ea: f64,
        rest_length: Option<f64>,
        mass_per_length: f64,
    ) -> Result<(), BuildError> {
        let dofs = self.two_nodes(id, a, b)?;
        positive_named("element", id, "ea", "axial stiffness EA", ea)?;
        nonnegative("element", id, "mass_per_length", mass_per_length)?;
        let pair = PointPair {
            a: Point::Node { dim: self.dim },
            b: Point::Node { dim: self.dim },
        };
        let separation = self.initial_separation(&pair, &dofs);
        separated(id, a, b, separation)?;
        let length = rest_length.unwrap_or(separation);
        positive_named("element", id, "rest_length", "rest length", length)?;
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

    /// Keeps `point` on the line through `line` (a ground point or a body
    /// point) with unit `normal` in the line body's frame; `prismatic` also
    /// locks the relative rotation at its initial value.
    pub fn slider(
        &mut self,
        id: &str,
        point: &PointRef,
        line: &PointRef,
        normal: [f64; 2],
        prismatic: bool,
    ) -> Result<(), BuildError> {
        if self.dim != 2 {
            return Err(err(
                "joint",
                id,
                None,
                "sliders are planar: use dimension = 2".into(),
            ));
        }
        let (pair, dofs) = self.pair("joint", id, line, point, ["line", "point"])?;
        finite("joint", id, "normal", &normal)?;
        if normal[0].hypot(normal[1]) == 0.0 {
            return Err(err(
                "joint",
                id,
                Some("normal"),
                "the normal must not be zero".into(),
            ));
        }
        let lock = if prismatic {
            let theta = |p: &crate::joint::Point, at: usize| {
                matches!(p, Point::Body2 { .. }).then(|| self.u0[dofs[at + 2]])
            };
            let tb = theta(&pair.b, pair.a.ndof()).ok_or_else(|| {
                err(
                    "joint",
                    id,
                    Some("point"),
                    "a prismatic joint needs a point on a rigid body".into(),
                )
            })?;
            if matches!(pair.a, Point::Node { .. }) {
                return Err(err(
                    "joint",
                    id,
                    Some("line"),
                    "the line must be on a rigid body or the ground".into(),
                ));
            }
            Some(tb - theta(&pair.a, 0).unwrap_or(0.0))
        } else {
            None
        };
        self.claim_id("joint", id)?;
        let kind = if prismatic { "prismatic" } else { "slider" };
        self.joints
            .push(id, Slider::new(kind, pair, normal, lock), &dofs);
        Ok(())
    }

    /// Drives DOF `coordinate` (by name, e.g. `crank.theta`) along
    /// `value + rate t + amplitude sin(omega t + phase)`, `value` defaulting to
    /// the initial coordinate; `[rate, amplitude, omega, phase]`.
    pub fn prescribed(
        &mut self,
        id: &str,
        coordinate: &str,
        value: Option<f64>,
        [rate, amplitude, omega, phase]: [f64; 4],
    ) -> Result<(), BuildError> {
        let dof = self.dofs.names().iter().position(|n| n == coordinate).ok_or_else(|| {
            err("joint", id, Some("coordinate"), format!("no coordinate named '{coordinate}' (names are like 'body.theta', 'node.x')"))
        })?;
        let value = value.unwrap_or(self.u0[dof] - amplitude * phase.sin());
        finite(
            "joint",
            id,
            "value",
            &[value, rate, amplitude, omega, phase],
        )?;
        self.claim_id("joint", id)?;
        let motion = Motion {
            value,
            rate,
            amplitude,
            omega,
            phase,
        };
        self.joints.push(id, Prescribed::new(motion), &[dof]);
        Ok(())
    }

    /// Keeps planar `point` (a node or a body point) on the curve
    /// `y = f(x, t)` of `curve` (the `path` joint).
    pub fn path(&mut self, id: &str, point: &PointRef, curve: Curve) -> Result<(), BuildError> {
        if self.dim != 2 {
            return Err(err(
                "joint",
                id,
                None,
                "path joints are planar: use dimension = 2".into(),
            ));
        }
        let (p, _, dofs) = self.point("joint", id, "point", point)?;
        if dofs.is_empty() {
            return Err(err(
                "joint",
                id,
                Some("point"),
                "a path joint needs a node or a body point, not a ground point".into(),
            ));
        }
        match curve {
            Curve::Parabola { a, b } => {
                finite("joint", id, "a", &[a])?;
                finite("joint", id, "b", &[b])?;
            }
            Curve::SineSquared { amplitude, omega } => {
                finite("joint", id, "amplitude", &[amplitude])?;
                finite("joint", id, "omega", &[omega])?;
            }
        }
        self.claim_id("joint", id)?;
        self.joints.push(id, PathJoint::new(p, curve), &dofs);
        Ok(())
    }

    /// Holds `sum_i coefficients[i] * coordinates[i] = constant` (the `linear`
    /// joint; coordinates by DOF name, e.g. `crank.theta`, `n3.y`), `constant`
    /// defaulting to the initial value of the sum.
    pub fn linear(
        &mut self,
        id: &str,
        coordinates: &[String],
        coefficients: &[f64],
        constant: Option<f64>,
    ) -> Result<(), BuildError> {
        let fail = |field: &'static str, message: String| err("joint", id, Some(field), message);
        if coordinates.is_empty() {
            return Err(fail(
                "coordinates",
                "a linear joint needs at least one coordinate".into(),
            ));
        }
        if coordinates.len() > crate::joint::MAX_JOINT_DOFS {
            return Err(fail(
                "coordinates",
                format!(
                    "at most {} coordinates, got {}",
                    crate::joint::MAX_JOINT_DOFS,
                    coordinates.len()
                ),
            ));
        }
        if coefficients.len() != coordinates.len() {
            return Err(fail(
                "coefficients",
                format!(
                    "one coefficient per coordinate: {} coordinates, {} coefficients",
                    coordinates.len(),
                    coefficients.len()
                ),
            ));
        }
        finite("joint", id, "coefficients", coefficients)?;
        if coefficients.iter().all(|c| *c == 0.0) {
            return Err(fail(
                "coefficients",
                "the coefficients must not all be zero".into(),
            ));
        }
        let mut dofs = Vec::with_capacity(coordinates.len());
        for name in coordinates {
            let dof =
                self.dofs
                    .names()
                    .iter()
                    .position(|n| n == name)
                    .ok_or_else(|| {
                        fail(
                    "coordinates",
                    format!("no coordinate named '{name}' (names are like 'body.theta', 'node.x')"),
                )
                    })?;
            if dofs.contains(&dof) {
                return Err(fail(
                    "coordinates",
                    format!("coordinate '{name}' appears twice"),
                ));
            }
            dofs.push(dof);
        }
        let initial: f64 = dofs
            .iter()
            .zip(coefficients)
            .map(|(&d, c)| c * self.u0[d])
            .sum();
        let constant = constant.unwrap_or(initial);
        finite("joint", id, "constant", &[constant])?;
        self.claim_id("joint", id)?;
        self.joints.push(
            id,
            LinearCombination::new(coefficients.to_vec(), constant),
            &dofs,
        );
        Ok(())
    }

    /// Applies `torque * time(t)` to the angle of planar body `body`. It is a
    /// [`PointLoad`] on the one-coordinate "point" theta (a generalized force
    /// on theta), so it shares the load code and the work bookkeeping.
    pub fn torque(
        &mut self,
        id: &str,
        body: &str,
        torque: f64,
        time: TimeFunction,
    ) -> Result<(), BuildError> {
        let theta = match self.entities.get(body) {
            Some(Entity::Body2(d)) => d[2],
            Some(_) => {
                return Err(err(
                    "load",
                    id,
                    Some("body"),
                    format!("'{body}' is not a planar rigid body"),
                ))
            }
            None => {
                return Err(err(
                    "load",
                    id,
                    Some("body"),
                    format!("body '{body}' is not defined"),
                ))
            }
        };
        finite("load", id, "torque", &[torque])?;
        self.claim_id("load", id)?;
        self.loads.push(LoadEntry {
            name: id.to_string(),
            load: PointLoad {
                kind: "torque",
                point: Point::Node { dim: 1 },
                matrix: [[0.0; 3]; 3],
                offset: [torque, 0.0, 0.0],
                time,
            }
            .into(),
            dofs: vec![theta],
        });
        Ok(())
    }

    /// Applies the torque vector `torque * time(t)` to 3-D body `body`,
    /// constant in space or in body axes (`frame`): a [`BodyTorque`] on the
    /// body's rotation coordinates.
    pub fn torque3d(
        &mut self,
        id: &str,
        body: &str,
        torque: [f64; 3],
        frame: TorqueFrame,
        time: TimeFunction,
    ) -> Result<(), BuildError> {
        let (dofs, attitude) = match self.entities.get(body) {
            Some(Entity::Body3(d, att)) => (d[3..].to_vec(), *att),
            Some(_) => {
                return Err(err(
                    "load",
                    id,
                    Some("body"),
                    format!("'{body}' is not a 3-D rigid body"),
                ))
            }
            None => {
                return Err(err(
                    "load",
                    id,
                    Some("body"),
                    format!("body '{body}' is not defined"),
                ))
            }
        };
        finite("load", id, "torque", &torque)?;
        self.claim_id("load", id)?;
        self.loads.push(LoadEntry {
            name: id.to_string(),
            load: Load::Torque(BodyTorque {
                torque,
                frame,
                attitude,
                time,
            }),
            dofs,
        });
        Ok(())
    }

    /// Holds point `b` at the ground position `ground` (a ground pin).
    pub fn ground_pin(
        &mut self,
        id: &str,
        point: &PointRef,
        ground: &[f64],
    ) -> Result<(), BuildError> {
        let g = self.vector("joint", id, "ground", ground, self.dim)?;
        let (pair, dofs) = self.pair(
            "joint",
            id,
            &PointRef::Ground(g),
            point,
            ["ground", "point"],
        )?;
        self.claim_id("joint", id)?;
        let j = Coincident::new("ground_pin", self.dim, pair);
        self.joints.push(id, j, &dofs);
        Ok(())
    }

    /// Makes two points coincide: Phi = r_b - r_a (a revolute joint between planar bodies).
    pub fn revolute(&mut self, id: &str, a: &PointRef, b: &PointRef) -> Result<(), BuildError> {
        let (pair, dofs) = self.pair("joint", id, a, b, ["a", "b"])?;
        self.claim_id("joint", id)?;
        let j = Coincident::new("revolute", self.dim, pair);
        self.joints.push(id, j, &dofs);
        Ok(())
    }

    /// Keeps the distance between two points: `quadratic = false` gives |d| - L,
    /// `true` gives (|d|^2 - L^2)/2. L defaults to the initial distance.
    pub fn distance(
        &mut self,
        id: &str,
        a: &PointRef,
        b: &PointRef,
        length: Option<f64>,
        quadratic: bool,
    ) -> Result<(), BuildError> {
        let (pair, dofs) = self.pair("joint", id, a, b, ["a", "b"])?;
        let l = length.unwrap_or_else(|| self.initial_separation(&pair, &dofs));
        positive_named("joint", id, "length", "length", l)?;
        self.claim_id("joint", id)?;
        let form = if quadratic {
            DistanceForm::Quadratic(l)
        } else {
            DistanceForm::Length(l)
        };
        let j = Distance::new("distance", pair, form);
        self.joints.push(id, j, &dofs);
        Ok(())
    }

    /// Keeps a point on a circle: Phi = R^2 - |r - c|^2 (seed 000 eq. A.2).
    pub fn point_on_circle(
        &mut self,
        id: &str,
        point: &PointRef,
        center: &[f64],
        radius: Option<f64>,
    ) -> Result<(), BuildError> {
        let c = self.vector("joint", id, "center", center, self.dim)?;
        let (pair, dofs) = self.pair(
            "joint",
            id,
            &PointRef::Ground(c),
            point,
            ["center", "point"],
        )?;
        let r = radius.unwrap_or_else(|| self.initial_separation(&pair, &dofs));
        positive_named("joint", id, "radius", "radius", r)?;
        self.claim_id("joint", id)?;
        let j = Distance::new("point_on_circle", pair, DistanceForm::Circle(r));
        self.joints.push(id, j, &dofs);
        Ok(())
    }

    /// Applies the force `(A r + b) s(t)` at a point (A = 0 for a plain force).
    pub fn point_load(
        &mut self,
        id: &str,
        kind: &'static str,
        point: &PointRef,
        matrix: [[f64; 3]; 3],
        offset: [f64; 3],
        time: TimeFunction,
    ) -> Result<(), BuildError> {
        let (p, _, dofs) = self.point("load", id, "point", point)?;
        if dofs.is_empty() {
            return Err(err(
                "load",
                id,
                Some("point"),
                "a load on a ground point does nothing".into(),
            ));
        }
        finite("load", id, "matrix", matrix.as_flattened())?;
        finite("load", id, "force", &offset)?;
        self.claim_id("load", id)?;
        self.loads.push(LoadEntry {
            name: id.to_string(),
            load: PointLoad {
                kind,
                point: p,
                matrix,
                offset,
                time,
            }
            .into(),
            dofs,
        });
        Ok(())
    }

    /// Sets the gravitational acceleration vector.
    pub fn gravity(&mut self, g: &[f64]) -> Result<(), BuildError> {
        self.gravity = self.vector("model", "gravity", "g", g, self.dim)?;
        Ok(())
    }

    /// Finishes the model (elements and joints are already grouped into
    /// homogeneous blocks in order of first appearance) and checks that the
    /// initial positions satisfy the constraints.
    pub fn build(mut self) -> Result<Model, BuildError> {
        let probes = self.resolve_probes()?;
        let model = Model {
            probes,
            dim: self.dim,
            dofs: self.dofs,
            inertia: self.inertia,
            elements: self.elements.list,
            joints: self.joints.list,
            loads: self.loads,
            gravity: self.gravity,
            u0: self.u0,
            v0: self.v0,
        };
        check_initial_constraints(&model)?;
        Ok(model)
    }
}

/// Rejects initial positions that violate a joint by more than round-off of
/// the coordinates' size.
fn check_initial_constraints(model: &Model) -> Result<(), BuildError> {
    let scale = model.u0.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
    let tol = 1e-8 * scale;
    let mut phi = [0.0; crate::joint::MAX_ROWS];
    for b in &model.joints {
        for i in 0..b.len() {
            b.phi(i, &model.u0, 0.0, &mut phi);
            let worst = phi[..b.rows()].iter().fold(0.0_f64, |m, x| m.max(x.abs()));
            if worst.is_nan() || worst > tol {
                return Err(err(
                    "joint",
                    b.name(i),
                    None,
                    format!(
                        "the initial positions violate this {} joint by {worst:.3e} \
                         (allowed {tol:.1e}); make the initial positions consistent",
                        b.kind(i)
                    ),
                ));
            }
        }
    }
    Ok(())
}

impl ModelBuilder {
    /// Global DOFs of an entity (node or body), for code that builds models programmatically.
    pub fn entity_dofs(&self, id: &str) -> Option<&[usize]> {
        self.entities.get(id).map(Entity::dofs)
    }

    /// Initial position (dim components) of a node, or of the body-fixed point
    /// `offset` of a body.
    pub fn entity_position(&self, id: &str, offset: [f64; 3]) -> Option<Vec<f64>> {
        let q: Vec<f64> = self
            .entities
            .get(id)?
            .dofs()
            .iter()
            .map(|&d| self.u0[d])
            .collect();
        let p = match self.entities.get(id)? {
            Entity::Node(_) | Entity::BeamNode(_) => Point::Node { dim: self.dim },
            Entity::Body2(_) => Point::Body2 {
                offset: [offset[0], offset[1]],
            },
            Entity::Body3(_, attitude) => Point::Body3 {
                offset,
                attitude: *attitude,
            },
        };
        Some(p.position(&q)[..self.dim].to_vec())
    }
}

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
        if s.iter().all(|x| *x == 0.0) {
            return Err(err(
                "node",
                id,
                Some("slope"),
                "the slope vector must not be zero (use the unit tangent of the beam)".into(),
            ));
        }
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
    /// torsion) between beam nodes `a` and `b` with axial stiffness `ea`,
    /// bending stiffness `ei` and mass per unit length `rho_a`. The reference
    /// length defaults to the initial distance of the nodes; the element is
    /// stress free in the initial configuration.
    #[allow(clippy::too_many_arguments)]
    pub fn beam(
        &mut self,
        id: &str,
        a: &str,
        b: &str,
        ea: f64,
        ei: f64,
        rho_a: f64,
        length: Option<f64>,
    ) -> Result<(), BuildError> {
        let mut dofs = self.beam_node_dofs("element", id, "nodes", a)?.to_vec();
        dofs.extend_from_slice(self.beam_node_dofs("element", id, "nodes", b)?);
        if a == b {
            return Err(err(
                "element",
                id,
                Some("nodes"),
                format!("both ends are node '{a}'"),
            ));
        }
        for (field, x, what) in [
            ("ea", ea, "axial stiffness EA"),
            ("ei", ei, "bending stiffness EI"),
        ] {
            positive_named("element", id, field, what, x)?;
        }
        nonnegative_named("element", id, "rho_a", "mass per unit length", rho_a)?;
        let dim = self.dim;
        let e0: Vec<f64> = dofs.iter().map(|&d| self.u0[d]).collect();
        let separation = (0..dim)
            .map(|k| (e0[2 * dim + k] - e0[k]).powi(2))
            .sum::<f64>()
            .sqrt();
        separated(id, a, b, separation)?;
        let l = length.unwrap_or(separation);
        positive_named("element", id, "length", "the element length", l)?;
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
                if v.iter().all(|x| *x == 0.0) {
                    return Err(err(
                        "joint",
                        id,
                        Some("direction"),
                        "the direction must not be zero".into(),
                    ));
                }
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

/// Greenspan thin-beam elements (seed 000 §4.2.2; `crate::element::thin_beam`).
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
        separated(id, a, b, separation)?;
        let length = rest_length.unwrap_or(separation);
        positive_named("element", id, "rest_length", "rest length", length)?;
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
        let r1: Vec<f64> = (0..3).map(|c| x[0][c] - x[1][c]).collect();
        let r2: Vec<f64> = (0..3).map(|c| x[2][c] - x[1][c]).collect();
        let dot = |p: &[f64], q: &[f64]| p.iter().zip(q).map(|(s, t)| s * t).sum::<f64>();
        let (l1, l2) = (dot(&r1, &r1).sqrt(), dot(&r2, &r2).sqrt());
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

/// Refuses a two-node element whose nodes coincide initially: it has no
/// direction, and an explicit length would not place its nodes.
fn separated(id: &str, a: &str, b: &str, separation: f64) -> Result<(), BuildError> {
    if separation > 0.0 {
        return Ok(());
    }
    Err(err(
        "element",
        id,
        Some("nodes"),
        format!(
            "nodes '{a}' and '{b}' coincide initially (distance {}): the element has no direction",
            crate::fmt::num(separation)
        ),
    ))
}
