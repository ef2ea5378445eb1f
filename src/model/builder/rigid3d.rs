//! 3-D rigid bodies (Euler parameters or directors, [`Attitude`]) and the 3-D
//! joints between them (spherical, revolute, universal, cylindrical,
//! prismatic, fixed), and the rolling disk on a horizontal plane.
//!
//! Joint axes are given in global coordinates at the initial configuration
//! and converted here to each body's frame, `a = R(q_0)^T a_global`; the
//! joints themselves are the dot-product rows of [`crate::joint::DotJoint`].

use nalgebra::{Matrix3, Vector3};

use super::{
    err, finite, named, BuildError, Entity, ModelBuilder, NonNegative, PointRef, Positive,
};
use crate::element::{EulerKinetic, Rigid3d, RigidDirectors};
use crate::joint::{
    Coincident, DirectorConstraints, DiskContact, DiskGeometry, DiskRolling, DotJoint, DotRow,
    EulerNormalization, Point, Side, Vector,
};
use crate::kinematics::attitude::Attitude;
use crate::model::dof::DofKind;

/// Component labels and kinds of a 3-D rigid body.
const BODY3D_COMPONENTS: [(&str, DofKind); 7] = [
    ("x", DofKind::Translation(0)),
    ("y", DofKind::Translation(1)),
    ("z", DofKind::Translation(2)),
    ("p0", DofKind::EulerParameter(0)),
    ("p1", DofKind::EulerParameter(1)),
    ("p2", DofKind::EulerParameter(2)),
    ("p3", DofKind::EulerParameter(3)),
];

/// Component labels and kinds of a 3-D director body: centre of mass, then
/// the body axes d1, d2, d3 as spatial vectors.
const BODY3D_DIRECTOR_COMPONENTS: [(&str, DofKind); 12] = [
    ("x", DofKind::Translation(0)),
    ("y", DofKind::Translation(1)),
    ("z", DofKind::Translation(2)),
    ("d1x", DofKind::Director(0)),
    ("d1y", DofKind::Director(1)),
    ("d1z", DofKind::Director(2)),
    ("d2x", DofKind::Director(3)),
    ("d2y", DofKind::Director(4)),
    ("d2z", DofKind::Director(5)),
    ("d3x", DofKind::Director(6)),
    ("d3y", DofKind::Director(7)),
    ("d3z", DofKind::Director(8)),
];

/// Initial state and inertia of a 3-D rigid body.
#[derive(Debug, Clone)]
pub struct Body3dSpec {
    /// Centre of mass.
    pub position: [f64; 3],
    /// Initial attitude as Euler parameters (p0, p1, p2, p3); normalized if
    /// within 1e-6 of unit length.
    pub orientation: [f64; 4],
    /// Rotation coordinates of the body.
    pub attitude: Attitude,
    /// Kinetic-energy form of an Euler-parameter body (directors: only the
    /// default).
    pub kinetic: EulerKinetic,
    /// Mass (> 0).
    pub mass: f64,
    /// Inertia tensor about the centre of mass in body axes (symmetric, positive semidefinite).
    pub inertia: [[f64; 3]; 3],
    /// Velocity of the centre of mass.
    pub velocity: [f64; 3],
    /// Angular velocity in body axes.
    pub angular_velocity: [f64; 3],
}

impl Default for Body3dSpec {
    /// A unit mass with unit principal inertia at rest at the origin,
    /// aligned with the global axes, in Euler parameters.
    fn default() -> Self {
        Body3dSpec::new(1.0, [1.0; 3])
    }
}

impl Body3dSpec {
    /// A body of `mass` and principal moments of inertia `principal` (body
    /// axes), at rest at the origin, aligned with the global axes, in Euler
    /// parameters; set the rest with the methods below or the fields.
    ///
    /// ```
    /// use flexmb::model::{Body3dSpec, ModelBuilder};
    ///
    /// let mut b = ModelBuilder::new(3)?;
    /// let top = Body3dSpec::new(15.0, [0.234375, 0.234375, 0.46875])
    ///     .at([0.0, 0.0, 1.0])
    ///     .moving([0.0; 3], [0.0, 0.0, 150.0]);
    /// b.body3d("top", &top)?;
    /// assert_eq!(b.build()?.n_dofs(), 7);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(mass: f64, principal: [f64; 3]) -> Self {
        let [a, b, c] = principal;
        Body3dSpec {
            position: [0.0; 3],
            orientation: [1.0, 0.0, 0.0, 0.0],
            attitude: Attitude::default(),
            kinetic: EulerKinetic::default(),
            mass,
            inertia: [[a, 0.0, 0.0], [0.0, b, 0.0], [0.0, 0.0, c]],
            velocity: [0.0; 3],
            angular_velocity: [0.0; 3],
        }
    }

    /// At centre of mass `position`.
    pub fn at(mut self, position: [f64; 3]) -> Self {
        self.position = position;
        self
    }

    /// Turned by the Euler parameters `(p0, p1, p2, p3)`.
    pub fn oriented(mut self, orientation: [f64; 4]) -> Self {
        self.orientation = orientation;
        self
    }

    /// Moving with centre-of-mass `velocity` and `angular_velocity` (body axes).
    pub fn moving(mut self, velocity: [f64; 3], angular_velocity: [f64; 3]) -> Self {
        self.velocity = velocity;
        self.angular_velocity = angular_velocity;
        self
    }

    /// With rotation coordinates `attitude` (Euler parameters or directors).
    pub fn with_attitude(mut self, attitude: Attitude) -> Self {
        self.attitude = attitude;
        self
    }
}

/// A 3-D joint type with its axis data (global coordinates, initial configuration).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Joint3d {
    /// Points coincide (3 rows).
    Spherical,
    /// Points coincide, rotation only about `axis` (5 rows).
    Revolute {
        /// Hinge axis.
        axis: [f64; 3],
    },
    /// Points coincide, `axis_a` of body A stays perpendicular to `axis_b` of B (4 rows).
    Universal {
        /// Axis of A.
        axis_a: [f64; 3],
        /// Axis of B (perpendicular to `axis_a`).
        axis_b: [f64; 3],
    },
    /// Relative rotation about and translation along `axis` only (4 rows).
    Cylindrical {
        /// Axis.
        axis: [f64; 3],
    },
    /// Relative translation along `axis` only (5 rows).
    Prismatic {
        /// Sliding axis.
        axis: [f64; 3],
    },
    /// No relative motion (6 rows).
    Fixed,
}

fn unit(v: [f64; 3]) -> Option<Vector3<f64>> {
    let v = Vector3::from(v);
    let n = v.norm();
    (n > 0.0 && n.is_finite()).then(|| v / n)
}

/// Two unit vectors completing `h` to a right-handed orthonormal frame (f, g, h).
fn perpendiculars(h: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let k = h.iamin();
    let mut e = Vector3::zeros();
    e[k] = 1.0;
    let f = e.cross(h).normalize();
    (f, h.cross(&f))
}

impl ModelBuilder {
    /// Adds a 3-D rigid body and its internal constraints: in Euler parameters
    /// DOFs `id.x .. id.z, id.p0 .. id.p3` and the normalization joint
    /// `id.normalization`, Phi = (p.p - 1)/2; in directors DOFs
    /// `id.x .. id.z, id.d1x .. id.d3z` and the joint `id.orthonormality`,
    /// `d_i . d_j = delta_ij` (six rows, [`DirectorConstraints`]).
    pub fn body3d(&mut self, id: &str, b: &Body3dSpec) -> Result<(), BuildError> {
        self.need_dimension(
            3,
            "body",
            id,
            "a body with `orientation` or a 3-D inertia needs dimension = 3",
        )?;
        for (field, x) in [
            ("position", &b.position[..]),
            ("orientation", &b.orientation[..]),
            ("velocity", &b.velocity[..]),
            ("angular_velocity", &b.angular_velocity[..]),
            ("inertia", &b.inertia.concat()[..]),
        ] {
            finite("body", id, field, x)?;
        }
        if b.attitude == Attitude::Directors {
            // A beam3d node is a director body without own mass.
            named(NonNegative, "body", id, "mass", "mass", b.mass)?;
        } else {
            named(Positive, "body", id, "mass", "mass", b.mass)?;
        }
        let norm = b.orientation.iter().map(|x| x * x).sum::<f64>().sqrt();
        if (norm - 1.0).abs() > 1e-6 {
            return Err(err(
                "body",
                id,
                Some("orientation"),
                format!("Euler parameters must have unit length, |p| = {norm}"),
            ));
        }
        let j = Matrix3::from_row_slice(&b.inertia.concat());
        let eig = j.symmetric_eigenvalues();
        if (j - j.transpose()).amax() > 1e-12 * j.amax() || eig.min() < -1e-12 * eig.amax() {
            return Err(err(
                "body",
                id,
                Some("inertia"),
                format!(
                    "the inertia tensor must be symmetric positive semidefinite (eigenvalues {})",
                    crate::fmt::list(eig.as_slice())
                ),
            ));
        }
        if b.attitude == Attitude::Directors && b.kinetic != EulerKinetic::Quadratic {
            return Err(err(
                "body",
                id,
                Some("kinetic_energy"),
                "the scale-invariant kinetic energy is for Euler parameters; a director body's \
                 kinetic energy is quadratic with a constant mass matrix"
                    .into(),
            ));
        }
        self.claim_id("body", id)?;
        let p = b.orientation.map(|x| x / norm);
        let att = b.attitude;
        let nr = att.ncoords();
        let q = att.from_quaternion(&p);
        let qdot = att.rate_from_body_angular_velocity(&q[..nr], &b.angular_velocity);
        let comps: &[(&str, DofKind)] = match att {
            Attitude::EulerParameters => &BODY3D_COMPONENTS,
            Attitude::Directors => &BODY3D_DIRECTOR_COMPONENTS,
        };
        let d = self.dofs.add(id, comps);
        self.u0.extend_from_slice(&b.position);
        self.u0.extend_from_slice(&q[..nr]);
        self.v0.extend_from_slice(&b.velocity);
        self.v0.extend_from_slice(&qdot[..nr]);
        match att {
            Attitude::EulerParameters => {
                let body = Rigid3d::new(b.mass, b.inertia).with_kinetic_energy(b.kinetic);
                self.elements.push(id, body, &d);
                self.joints
                    .push(&format!("{id}.normalization"), EulerNormalization, &d[3..]);
            }
            Attitude::Directors => {
                self.elements
                    .push(id, RigidDirectors::new(b.mass, b.inertia), &d);
                self.joints.push(
                    &format!("{id}.orthonormality"),
                    DirectorConstraints,
                    &d[3..],
                );
            }
        }
        self.entities.insert(id.to_string(), Entity::Body3(d, att));
        Ok(())
    }

    /// Adds a 3-D joint between points `a` and `b` (3-D body points, nodes for
    /// the spherical joint, or the ground).
    pub fn joint3d(
        &mut self,
        id: &str,
        a: &PointRef,
        b: &PointRef,
        joint: Joint3d,
    ) -> Result<(), BuildError> {
        self.need_dimension(3, "joint", id, "this joint type needs dimension = 3")?;
        let (pair, dofs) = self.pair("joint", id, a, b, ["a", "b"])?;
        if joint == Joint3d::Spherical {
            self.claim_id("joint", id)?;
            self.joints
                .push(id, Coincident::new("spherical", 3, pair), &dofs);
            return Ok(());
        }
        // Initial attitude and rotation coordinates of each side (None: the
        // ground frame).
        let na = pair.a.ndof();
        let side_p = |pt: Point, at: usize, field: &'static str| match pt {
            Point::Body3 { attitude, .. } => Ok(Some((
                attitude,
                (3..pt.ndof())
                    .map(|k| self.u0[dofs[at + k]])
                    .collect::<Vec<f64>>(),
            ))),
            Point::Ground { .. } => Ok(None),
            _ => Err(err(
                "joint",
                id,
                Some(field),
                "this joint type connects 3-D rigid bodies or the ground".into(),
            )),
        };
        let pa = side_p(pair.a, 0, "a")?;
        let pb = side_p(pair.b, na, "b")?;
        let axis_in = |side: Side, v: &Vector3<f64>| {
            let g = [v[0], v[1], v[2]];
            let local = match if side == Side::A { &pa } else { &pb } {
                Some((att, q)) => att.rotate_back(q, &g),
                None => g,
            };
            Vector::Axis(side, local)
        };
        let axis = |field: &'static str, v: [f64; 3]| {
            finite("joint", id, field, &v)?;
            unit(v).ok_or_else(|| err("joint", id, Some(field), "the axis must be non-zero".into()))
        };
        let perp = |x: Vector, y: Vector| DotRow { x, y, c: 0.0 };
        let coincide: Vec<DotRow> = (0..3)
            .map(|k| {
                let mut e = [0.0; 3];
                e[k] = 1.0;
                perp(Vector::Separation, Vector::Constant(e))
            })
            .collect();
        // h_A stays parallel to h_B: h_A . f_B = h_A . g_B = 0.
        let parallel = |h: &Vector3<f64>| {
            let (f, g) = perpendiculars(h);
            vec![
                perp(axis_in(Side::A, h), axis_in(Side::B, &f)),
                perp(axis_in(Side::A, h), axis_in(Side::B, &g)),
            ]
        };
        // d stays along h: f_A . d = g_A . d = 0.
        let along = |h: &Vector3<f64>| {
            let (f, g) = perpendiculars(h);
            vec![
                perp(axis_in(Side::A, &f), Vector::Separation),
                perp(axis_in(Side::A, &g), Vector::Separation),
            ]
        };
        let (kind, rows) = match joint {
            Joint3d::Spherical => unreachable!("handled above"),
            Joint3d::Revolute { axis: h } => {
                let h = axis("axis", h)?;
                ("revolute", [coincide, parallel(&h)].concat())
            }
            Joint3d::Universal { axis_a, axis_b } => {
                let (ha, hb) = (axis("axis_a", axis_a)?, axis("axis_b", axis_b)?);
                if ha.dot(&hb).abs() > 1e-9 {
                    return Err(err(
                        "joint",
                        id,
                        Some("axis_b"),
                        "the two axes of a universal joint must be perpendicular".into(),
                    ));
                }
                let cross = perp(axis_in(Side::A, &ha), axis_in(Side::B, &hb));
                ("universal", [coincide, vec![cross]].concat())
            }
            Joint3d::Cylindrical { axis: h } => {
                let h = axis("axis", h)?;
                ("cylindrical", [parallel(&h), along(&h)].concat())
            }
            Joint3d::Prismatic { axis: h } => {
                let h = axis("axis", h)?;
                let (f, g) = perpendiculars(&h);
                let twist = perp(axis_in(Side::A, &f), axis_in(Side::B, &g));
                ("prismatic", [parallel(&h), along(&h), vec![twist]].concat())
            }
            Joint3d::Fixed => {
                let e = |k: usize| {
                    let mut v = Vector3::zeros();
                    v[k] = 1.0;
                    v
                };
                let lock = (0..3)
                    .map(|k| perp(axis_in(Side::A, &e(k)), axis_in(Side::B, &e((k + 1) % 3))))
                    .collect();
                ("fixed", [coincide, lock].concat())
            }
        };
        self.claim_id("joint", id)?;
        self.joints
            .push(id, DotJoint::new(kind, pair, &rows), &dofs);
        Ok(())
    }

    /// Adds a rolling disk (`crate::joint::DiskContact`,
    /// `crate::joint::DiskRolling`): the 3-D body `body`, a thin disk of
    /// radius `radius` whose symmetry axis is the body vector `axis`, rolls
    /// without slipping on the plane `z = height`. Two joints: `<id>.contact`
    /// (one position-level row, the lowest rim point on the plane) and
    /// `<id>.rolling` (two velocity-level rows, no slip in x and y).
    pub fn rolling_disk(
        &mut self,
        id: &str,
        body: &str,
        radius: f64,
        axis: [f64; 3],
        height: f64,
    ) -> Result<(), BuildError> {
        self.need_dimension(3, "joint", id, "a rolling disk needs dimension = 3")?;
        let (dofs, attitude) =
            self.body_entity("joint", id, body, "3-D rigid body", |e| match e {
                Entity::Body3(d, att) => Some((d.clone(), *att)),
                _ => None,
            })?;
        named(Positive, "joint", id, "radius", "radius", radius)?;
        finite("joint", id, "axis", &axis)?;
        finite("joint", id, "height", &[height])?;
        let axis = unit(axis).ok_or_else(|| {
            err(
                "joint",
                id,
                Some("axis"),
                "the axis must be non-zero".into(),
            )
        })?;
        let geometry = DiskGeometry {
            radius,
            axis: [axis[0], axis[1], axis[2]],
            height,
            attitude,
        };
        // The contact point is undefined when the disk lies flat (axis vertical).
        let q0: Vec<f64> = dofs[3..].iter().map(|&k| self.u0[k]).collect();
        let k = attitude.rotate(&q0, &geometry.axis)[2];
        if 1.0 - k * k < 1e-12 {
            return Err(err(
                "joint",
                id,
                Some("axis"),
                "the disk starts lying flat (its axis is vertical): the contact point is undefined"
                    .into(),
            ));
        }
        self.claim_id("joint", id)?;
        self.joints
            .push(&format!("{id}.contact"), DiskContact(geometry), &dofs);
        self.joints
            .push(&format!("{id}.rolling"), DiskRolling(geometry), &dofs);
        Ok(())
    }
}
