//! Building a [`Model`] in code: entities (nodes, planar rigid bodies), elements,
//! joints and loads referenced by id, validated as they are added.

mod beams;
mod elements;
mod joints;
mod loads;
mod probe;
mod rigid3d;
mod rods;
mod sections;

pub use joints::{DistanceKind, SliderKind};
pub use probe::ProbeTarget;
pub use rigid3d::{Body3dSpec, Joint3d};
pub use rods::{RodLine, RodPath};
pub use sections::{BeamSection, LineIds, RodShape, Shape, TrussSection};

use std::any::TypeId;
use std::collections::HashMap;

use Bound::{NonNegative, Positive};

use super::dof::{point_components, DofMap, BODY2D_COMPONENTS};
use super::{LoadEntry, Model};
use crate::element::{BeamShapes, Element, ElementBlock, ElementSet};
use crate::joint::{Joint, JointBlock, JointSet};
use crate::kinematics::attitude::Attitude;
use crate::kinematics::point::{Point, PointPair};

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

/// The error of a two-node element `id` whose ends are both node `a`.
fn distinct_ends(id: &str, a: &str, b: &str) -> Result<(), BuildError> {
    match a == b {
        true => Err(err(
            "element",
            id,
            Some("nodes"),
            format!("both ends are node '{a}'"),
        )),
        false => Ok(()),
    }
}

/// `Ok` for a finite `x` with `in_range`, or the error "`name` must be
/// `range`, got `x`" naming `field` of entity `what` `id`.
fn finite_in(
    [what, field]: [&'static str; 2],
    id: &str,
    name: &str,
    x: f64,
    (in_range, range): (bool, &str),
) -> Result<(), BuildError> {
    match in_range && x.is_finite() {
        true => Ok(()),
        false => Err(err(
            what,
            id,
            Some(field),
            format!("{name} must be {range}, got {x}"),
        )),
    }
}

/// The sign a quantity must have ([`named`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// `x > 0`.
    Positive,
    /// `x >= 0`.
    NonNegative,
}

/// A finite value within `bound`, or an error naming `field` and the
/// quantity `name`.
fn named(
    bound: Bound,
    what: &'static str,
    id: &str,
    field: &'static str,
    name: &str,
    x: f64,
) -> Result<(), BuildError> {
    let range = match bound {
        Bound::Positive => (x > 0.0, "positive"),
        Bound::NonNegative => (x >= 0.0, "zero or positive"),
    };
    finite_in([what, field], id, name, x, range)
}

/// A finite value >= 0, or an error naming `field`.
fn nonnegative(
    what: &'static str,
    id: &str,
    field: &'static str,
    x: f64,
) -> Result<(), BuildError> {
    named(NonNegative, what, id, field, field, x)
}

/// `Ok` unless every component of `v` is zero, else the error `message`
/// naming `field` of entity `what` `id`.
fn nonzero(
    what: &'static str,
    id: &str,
    field: &'static str,
    v: &[f64],
    message: &str,
) -> Result<(), BuildError> {
    match v.iter().all(|x| *x == 0.0) {
        true => Err(err(what, id, Some(field), message.into())),
        false => Ok(()),
    }
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

    /// A fixed point: `[x, y]` in a planar model, `[x, y, z]` in a 3-D one.
    ///
    /// ```
    /// use flexmb::model::PointRef;
    /// assert_eq!(PointRef::ground([1.0, 2.0]), PointRef::Ground([1.0, 2.0, 0.0]));
    /// assert_eq!(PointRef::ground([1.0, 2.0, 3.0]), PointRef::Ground([1.0, 2.0, 3.0]));
    /// ```
    pub fn ground<const N: usize>(position: [f64; N]) -> Self {
        const { assert!(N == 2 || N == 3, "a ground point has 2 or 3 coordinates") };
        let mut p = [0.0; 3];
        p[..N].copy_from_slice(&position);
        PointRef::Ground(p)
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

impl Default for Body2d {
    /// A unit mass with unit rotational inertia at rest at the origin (as
    /// `Body3dSpec::default()`).
    fn default() -> Self {
        Body2d::new(1.0, 1.0)
    }
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
    fn push<J: Joint + Clone>(&mut self, name: &str, j: J, dofs: &[usize]) {
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
    /// The beam3d elements with their global DOFs (for section probes).
    rods: HashMap<String, (crate::element::DirectorBeam, Vec<usize>)>,
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
            rods: HashMap::new(),
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
        self.need_dimension(
            2,
            "body",
            id,
            "planar rigid bodies need a model with dimension = 2",
        )?;
        finite("body", id, "position", &p)?;
        finite("body", id, "velocity", &v)?;
        finite("body", id, "angle", &[angle, angular_velocity])?;
        named(Positive, "body", id, "mass", "mass", mass)?;
        named(
            NonNegative,
            "body",
            id,
            "inertia",
            "rotational inertia",
            inertia,
        )?;
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
        distinct_ends(id, a, b)?;
        Ok(dofs)
    }

    /// [`Self::point`] for a point that must move (a node or a body point):
    /// its [`Point`] and global DOFs, or the error `ground` for a ground point.
    fn moving_point(
        &self,
        what: &'static str,
        id: &str,
        p: &PointRef,
        ground: &str,
    ) -> Result<(Point, Vec<usize>), BuildError> {
        let (p, _, dofs) = self.point(what, id, "point", p)?;
        match dofs.is_empty() {
            true => Err(err(what, id, Some("point"), ground.into())),
            false => Ok((p, dofs)),
        }
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
    /// `Ok` in a model of dimension `dim`, else the error `why` on the
    /// entity `what` `id`.
    fn need_dimension(
        &self,
        dim: usize,
        what: &'static str,
        id: &str,
        why: &str,
    ) -> Result<(), BuildError> {
        match self.dim == dim {
            true => Ok(()),
            false => Err(err(what, id, None, why.into())),
        }
    }

    /// What `pick` reads of the body `body` that entity `what` `id` names
    /// (field `body`), or an error: `body` is not defined, or is not a `kind`
    /// (`pick` gives `None`).
    fn body_entity<T>(
        &self,
        what: &'static str,
        id: &str,
        body: &str,
        kind: &str,
        pick: impl FnOnce(&Entity) -> Option<T>,
    ) -> Result<T, BuildError> {
        let Some(e) = self.entities.get(body) else {
            let why = format!("body '{body}' is not defined");
            return Err(err(what, id, Some("body"), why));
        };
        pick(e).ok_or_else(|| err(what, id, Some("body"), format!("'{body}' is not a {kind}")))
    }

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

/// The length of two-node element `id` whose nodes `a`, `b` are initially
/// `separation` apart: `given` (its field `field`, the quantity `name`) or
/// else the separation; an error when the nodes coincide ([`separated`]) or
/// the length is not positive.
fn element_length(
    id: &str,
    [a, b]: [&str; 2],
    separation: f64,
    given: Option<f64>,
    [field, name]: [&'static str; 2],
) -> Result<f64, BuildError> {
    separated(id, a, b, separation)?;
    let length = given.unwrap_or(separation);
    named(Positive, "element", id, field, name, length)?;
    Ok(length)
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
