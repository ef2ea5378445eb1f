//! The [`Mesh`] a run's output describes: the model's points (nodes and body
//! reference points) with their reference coordinates and the columns of `/u`
//! that move them, the elements as cells between points, the rigid bodies and
//! the joints' multiplier rows. Built from a [`Model`] by [`Mesh::from_model`];
//! written to `/mesh` and used for `/points`, `/bodies/*`, `/joints/*` and the
//! XDMF side file (`docs/output-format.md`).

use crate::kinematics::attitude::Attitude;
use crate::model::{DofKind, Model};

/// A point-like entity: a node or the reference point of a rigid body.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshPoint {
    /// Entity id.
    pub name: String,
    /// Initial position, padded with zeros to 3 components.
    pub reference: [f64; 3],
    /// Column of `/u` holding each coordinate (`None`: the coordinate is not
    /// a DOF, e.g. z in a 2-D model; it keeps its reference value).
    pub dofs: [Option<usize>; 3],
}

/// All elements (or joints) of one kind drawn as cells of the same number of points.
#[derive(Debug, Clone, PartialEq)]
pub struct CellBlock {
    /// Group name below `/mesh`: the element or joint kind (e.g. `truss`,
    /// `beam`, `revolute`).
    pub kind: String,
    /// Points per cell.
    pub points_per_cell: usize,
    /// Element or joint names, one per cell.
    pub names: Vec<String>,
    /// Point indices (into [`Mesh::points`]), `points_per_cell` per cell, row-major.
    pub connectivity: Vec<usize>,
}

impl CellBlock {
    /// Number of cells.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the block has no cells.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// A rigid body: its reference point and its rotation coordinate.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshBody {
    /// Body id.
    pub name: String,
    /// Index of its reference point in [`Mesh::points`].
    pub point: usize,
    /// Columns of `/u` holding its rotation: the angle of a planar body, the
    /// four Euler parameters or the nine director components of a 3-D body.
    pub rotation: Vec<usize>,
    /// The rotation coordinates of a 3-D body (`None`: a planar body).
    pub attitude: Option<Attitude>,
}

/// A joint and its rows of `/lambda`.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshJoint {
    /// Joint id.
    pub name: String,
    /// First column of `/lambda`.
    pub first: usize,
    /// Number of multipliers.
    pub rows: usize,
}

/// What the output knows about the model's geometry and named entities.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mesh {
    /// Spatial dimension of the model (2 or 3); 0 for an empty mesh.
    pub dim: usize,
    /// Nodes and body reference points, in the order they were defined.
    pub points: Vec<MeshPoint>,
    /// Elements, then joints, connecting two or more points, one block per kind.
    pub cells: Vec<CellBlock>,
    /// Rigid bodies.
    pub bodies: Vec<MeshBody>,
    /// Joints.
    pub joints: Vec<MeshJoint>,
}

impl Mesh {
    /// The mesh of `model`.
    ///
    /// Points are the entities with translation DOFs. An element or joint
    /// becomes a cell between the distinct points whose translation DOFs it
    /// uses, in that order (a spring or revolute joint between two body
    /// points is drawn between the two bodies' reference points); those using
    /// fewer than two points (a spring or pin to the ground, a rotational
    /// spring, a prescribed coordinate) are not drawn. An entity with a
    /// rotation DOF is a rigid body.
    pub fn from_model(model: &Model) -> Mesh {
        let mut points = Vec::new();
        let mut bodies = Vec::new();
        // Point owning each translation DOF.
        let mut owner = vec![None; model.n_dofs()];
        for (name, range) in model.dofs.entities() {
            let mut p = MeshPoint {
                name: name.to_string(),
                reference: [0.0; 3],
                dofs: [None; 3],
            };
            let mut rotation = Vec::new();
            let mut attitude = None;
            for d in range {
                match model.dofs.kind(d) {
                    DofKind::Translation(a) => {
                        p.dofs[a as usize] = Some(d);
                        p.reference[a as usize] = model.u0[d];
                        owner[d] = Some(points.len());
                    }
                    DofKind::Rotation | DofKind::EulerParameter(_) => rotation.push(d),
                    DofKind::Director(_) => {
                        rotation.push(d);
                        attitude = Some(Attitude::Directors);
                    }
                    DofKind::Slope(_) => {}
                }
            }
            if p.dofs.iter().all(Option::is_none) {
                continue;
            }
            if !rotation.is_empty() {
                bodies.push(MeshBody {
                    name: name.to_string(),
                    point: points.len(),
                    attitude: match rotation.len() {
                        1 => None,
                        _ => attitude.or(Some(Attitude::EulerParameters)),
                    },
                    rotation,
                });
            }
            points.push(p);
        }

        // Elements, then joints, as (kind, name, DOFs).
        let elements = model
            .elements
            .iter()
            .flat_map(|b| (0..b.len()).map(move |i| (b.kind(), b.name(i), b.dofs(i))));
        let joint_items = model
            .joints
            .iter()
            .flat_map(|b| (0..b.len()).map(move |i| (b.kind(i), b.name(i), b.dofs(i))));
        let mut cells: Vec<CellBlock> = Vec::new();
        // (kind, points per cell) of each cell block.
        let mut keys: Vec<(&str, usize)> = Vec::new();
        for (kind, name, dofs) in elements.chain(joint_items) {
            let mut pts: Vec<usize> = Vec::new();
            for p in dofs.iter().filter_map(|&d| owner[d]) {
                if !pts.contains(&p) {
                    pts.push(p);
                }
            }
            if pts.len() < 2 {
                continue;
            }
            let k = pts.len();
            let at = match keys.iter().position(|&key| key == (kind, k)) {
                Some(at) => at,
                None => {
                    // A second cell size of one kind gets its size in the name.
                    let taken = keys.iter().any(|key| key.0 == kind);
                    keys.push((kind, k));
                    cells.push(CellBlock {
                        kind: if taken {
                            format!("{kind}_{k}")
                        } else {
                            kind.to_string()
                        },
                        points_per_cell: k,
                        names: Vec::new(),
                        connectivity: Vec::new(),
                    });
                    cells.len() - 1
                }
            };
            cells[at].names.push(name.to_string());
            cells[at].connectivity.extend(pts);
        }

        let mut joints = Vec::new();
        let mut first = 0;
        for b in &model.joints {
            for i in 0..b.len() {
                joints.push(MeshJoint {
                    name: b.name(i).to_string(),
                    first,
                    rows: b.rows(),
                });
                first += b.rows();
            }
        }
        Mesh {
            dim: model.dim,
            points,
            cells,
            bodies,
            joints,
        }
    }

    /// Whether there is nothing to draw.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
}
