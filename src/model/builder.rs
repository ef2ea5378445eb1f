//! Building a [`Model`] in code: entities (nodes, planar rigid bodies), elements,
//! joints and loads referenced by id, validated as they are added.

use std::any::TypeId;
use std::collections::HashMap;

use super::dof::{point_components, DofMap, BODY2D_COMPONENTS};
use super::{LoadEntry, Model};
use crate::element::{Element, ElementBlock, ElementSet, Truss};
use crate::joint::{
    Coincident, Distance, DistanceForm, Joint, JointBlock, JointSet, Point, PointPair,
};
use crate::load::{PointLoad, TimeFunction};

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
    /// A body-fixed point of a planar rigid body.
    Body {
        /// Body id.
        body: String,
        /// Offset in body coordinates.
        offset: [f64; 2],
    },
    /// A fixed point in space.
    Ground([f64; 3]),
}

#[derive(Debug, Clone)]
enum Entity {
    Node(Vec<usize>),
    Body2([usize; 3]),
}

impl Entity {
    fn dofs(&self) -> &[usize] {
        match self {
            Entity::Node(d) => d,
            Entity::Body2(d) => d,
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

/// Builds a [`Model`] entity by entity.
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
        if !(mass >= 0.0 && mass.is_finite()) {
            return Err(err(
                "node",
                id,
                Some("mass"),
                format!("mass must be zero or positive, got {mass}"),
            ));
        }
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

    /// Adds a planar rigid body with its reference point at the centre of mass.
    #[allow(clippy::too_many_arguments)]
    pub fn body2d(
        &mut self,
        id: &str,
        position: &[f64],
        angle: f64,
        mass: f64,
        inertia: f64,
        velocity: Option<&[f64]>,
        angular_velocity: f64,
    ) -> Result<(), BuildError> {
        if self.dim != 2 {
            return Err(err(
                "body",
                id,
                None,
                "planar rigid bodies need a model with dimension = 2".into(),
            ));
        }
        let p = self.vector("body", id, "position", position, 2)?;
        let v = match velocity {
            Some(v) => self.vector("body", id, "velocity", v, 2)?,
            None => [0.0; 3],
        };
        finite("body", id, "angle", &[angle, angular_velocity])?;
        if !(mass > 0.0 && mass.is_finite()) {
            return Err(err(
                "body",
                id,
                Some("mass"),
                format!("a rigid body needs a positive mass, got {mass}"),
            ));
        }
        if !(inertia >= 0.0 && inertia.is_finite()) {
            return Err(err(
                "body",
                id,
                Some("inertia"),
                format!("rotational inertia must be zero or positive, got {inertia}"),
            ));
        }
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
            Some(Entity::Body2(_)) => Err(err(
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
                Some(Entity::Body2(d)) => Ok((
                    Point::Body2 { offset: [0.0; 2] },
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
                        Point::Body2 { offset: *offset },
                        Some(body.clone()),
                        d.to_vec(),
                    ))
                }
                Some(Entity::Node(_)) => Err(err(
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
                Ok((Point::Ground { position: *x }, None, Vec::new()))
            }
        }
    }

    fn pair(
        &self,
        id: &str,
        a: &PointRef,
        b: &PointRef,
        fields: [&'static str; 2],
    ) -> Result<(PointPair, Vec<usize>), BuildError> {
        let (pa, oa, mut da) = self.point("joint", id, fields[0], a)?;
        let (pb, ob, db) = self.point("joint", id, fields[1], b)?;
        if oa.is_some() && oa == ob {
            return Err(err(
                "joint",
                id,
                Some(fields[1]),
                format!(
                    "both points belong to '{}': a joint must connect two different entities",
                    oa.unwrap_or_default()
                ),
            ));
        }
        if oa.is_none() && ob.is_none() {
            return Err(err(
                "joint",
                id,
                Some(fields[1]),
                "both points are on the ground: the joint constrains nothing".into(),
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
        if !(ea > 0.0 && ea.is_finite()) {
            return Err(err(
                "element",
                id,
                Some("ea"),
                format!("axial stiffness EA must be positive, got {ea}"),
            ));
        }
        if !(mass_per_length >= 0.0 && mass_per_length.is_finite()) {
            return Err(err(
                "element",
                id,
                Some("mass_per_length"),
                format!("must be zero or positive, got {mass_per_length}"),
            ));
        }
        let pair = PointPair {
            a: Point::Node { dim: self.dim },
            b: Point::Node { dim: self.dim },
        };
        let length = match rest_length {
            Some(l) => l,
            None => self.initial_separation(&pair, &dofs),
        };
        if !(length > 0.0 && length.is_finite()) {
            return Err(err(
                "element",
                id,
                Some("rest_length"),
                format!("rest length must be positive, got {length}"),
            ));
        }
        self.claim_id("element", id)?;
        self.elements
            .push(id, Truss::new(self.dim, ea, length, mass_per_length), &dofs);
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
        let (pair, dofs) = self.pair(id, &PointRef::Ground(g), point, ["ground", "point"])?;
        self.claim_id("joint", id)?;
        let j = Coincident::new("ground_pin", self.dim, pair);
        self.joints.push(id, j, &dofs);
        Ok(())
    }

    /// Makes two points coincide: Phi = r_b - r_a (a revolute joint between planar bodies).
    pub fn revolute(&mut self, id: &str, a: &PointRef, b: &PointRef) -> Result<(), BuildError> {
        let (pair, dofs) = self.pair(id, a, b, ["a", "b"])?;
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
        let (pair, dofs) = self.pair(id, a, b, ["a", "b"])?;
        let l = length.unwrap_or_else(|| self.initial_separation(&pair, &dofs));
        if !(l > 0.0 && l.is_finite()) {
            return Err(err(
                "joint",
                id,
                Some("length"),
                format!("length must be positive, got {l}"),
            ));
        }
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
        let (pair, dofs) = self.pair(id, &PointRef::Ground(c), point, ["center", "point"])?;
        let r = radius.unwrap_or_else(|| self.initial_separation(&pair, &dofs));
        if !(r > 0.0 && r.is_finite()) {
            return Err(err(
                "joint",
                id,
                Some("radius"),
                format!("radius must be positive, got {r}"),
            ));
        }
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
            },
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
    pub fn build(self) -> Result<Model, BuildError> {
        let model = Model {
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
    pub fn entity_position(&self, id: &str, offset: [f64; 2]) -> Option<Vec<f64>> {
        let q: Vec<f64> = self
            .entities
            .get(id)?
            .dofs()
            .iter()
            .map(|&d| self.u0[d])
            .collect();
        let p = match self.entities.get(id)? {
            Entity::Node(_) => Point::Node { dim: self.dim },
            Entity::Body2(_) => Point::Body2 { offset },
        };
        Some(p.position(&q)[..self.dim].to_vec())
    }
}
