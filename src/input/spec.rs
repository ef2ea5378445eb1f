//! The model file schema (TOML, version 1), read with serde. Documented in
//! `docs/model-format.md`; every table rejects unknown keys.

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use toml::Spanned;

use crate::integrate::IntegratorSpec;
use crate::output::Field;

/// The schema version this flexmb reads.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole model file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Schema version (default 1).
    pub schema: Option<u32>,
    /// Short title.
    pub title: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// 2 or 3.
    pub dimension: Spanned<usize>,
    /// Gravitational acceleration vector.
    pub gravity: Option<Spanned<Vec<f64>>>,
    /// Point nodes.
    #[serde(default)]
    pub node: Vec<Spanned<NodeSpec>>,
    /// Planar rigid bodies.
    #[serde(default)]
    pub body: Vec<Spanned<BodySpec>>,
    /// Elements.
    #[serde(default)]
    pub element: Vec<Spanned<ElementSpec>>,
    /// Lines of beam elements (nodes and elements generated).
    #[serde(default)]
    pub line: Vec<Spanned<LineSpec>>,
    /// Lines (straight or arcs) of geometrically exact 3-D beams.
    #[serde(default)]
    pub beam3d_line: Vec<Spanned<Beam3dLineSpec>>,
    /// Joints.
    #[serde(default)]
    pub joint: Vec<Spanned<JointSpec>>,
    /// Loads.
    #[serde(default)]
    pub load: Vec<Spanned<LoadSpec>>,
    /// Probes (named scalar histories).
    #[serde(default)]
    pub probe: Vec<Spanned<ProbeSpec>>,
    /// A generated model (instead of entity tables).
    pub generator: Option<Spanned<crate::model::Generator>>,
    /// Integrator settings.
    pub integrator: Option<Spanned<IntegratorSpec>>,
    /// Output settings.
    pub output: Option<Spanned<OutputSpec>>,
}

/// `[[node]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Unique id.
    pub id: String,
    /// Initial position.
    pub position: Vec<f64>,
    /// Initial velocity (default zero).
    pub velocity: Option<Vec<f64>>,
    /// Lumped mass (default 0).
    #[serde(default)]
    pub mass: f64,
    /// Slope vector dr/dx of a beam node (`dimension` components; makes the
    /// node a beam node with DOFs x, y[, z], dx, dy[, dz]).
    pub slope: Option<Vec<f64>>,
    /// Initial rate of the slope vector (default zero; beam nodes only).
    pub slope_velocity: Option<Vec<f64>>,
}

/// `[[body]]`: a rigid body, reference point at its centre of mass; planar
/// (x, y, angle) in 2-D models, Euler parameters in 3-D models.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// Unique id.
    pub id: String,
    /// Initial position of the centre of mass.
    pub position: Vec<f64>,
    /// Initial angle (rad; planar bodies).
    #[serde(default)]
    pub angle: f64,
    /// Initial Euler parameters (p0, p1, p2, p3) (3-D bodies; default identity).
    pub orientation: Option<Vec<f64>>,
    /// Rotation coordinates of a 3-D body: `euler` (Euler parameters, the
    /// default) or `directors` (the body axes as spatial vectors).
    pub attitude: Option<String>,
    /// Kinetic energy of an Euler-parameter body off `|p| = 1`: `quadratic`
    /// (the default) or `scale_invariant` (zero normalization reaction).
    pub kinetic_energy: Option<String>,
    /// Mass (> 0).
    pub mass: f64,
    /// Inertia about the centre of mass: a number (planar), or
    /// `[Jxx, Jyy, Jzz]` / `[Jxx, Jyy, Jzz, Jxy, Jyz, Jzx]` in body axes (3-D).
    #[serde(default)]
    pub inertia: Numbers,
    /// Initial velocity of the centre of mass.
    pub velocity: Option<Vec<f64>>,
    /// Initial angular velocity: a number (planar) or a vector in body axes (3-D).
    #[serde(default)]
    pub angular_velocity: Numbers,
}

/// A number or a list of numbers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Numbers {
    /// One number.
    One(f64),
    /// A list.
    Many(Vec<f64>),
}

impl Default for Numbers {
    fn default() -> Self {
        Numbers::One(0.0)
    }
}

/// `[[line]]`: a straight line of `elements` equal beam elements from
/// `from` to `to` ([`crate::model::ModelBuilder::line_of_beams`]): beam nodes
/// `{nodes}0 ..= {nodes}{elements}`, elements `{element_ids}1 ..=
/// {element_ids}{elements}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineSpec {
    /// Prefix of the node ids.
    pub nodes: String,
    /// Prefix of the element ids.
    pub element_ids: String,
    /// First node's position.
    pub from: Vec<f64>,
    /// Last node's position.
    pub to: Vec<f64>,
    /// Number of elements (>= 1).
    pub elements: usize,
    /// The beams' cross section.
    pub section: SectionSpec,
}

/// The section of a geometrically exact 3-D beam (`beam3d` element keys,
/// or a `beam3d_line`'s `section = { .. }`).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RodSectionSpec {
    /// Axial stiffness EA.
    pub ea: f64,
    /// Shear stiffness along d1.
    pub ga1: f64,
    /// Shear stiffness along d2.
    pub ga2: f64,
    /// Torsional stiffness GJ.
    pub gj: f64,
    /// Bending stiffness about d1.
    pub ei1: f64,
    /// Bending stiffness about d2.
    pub ei2: f64,
    /// Mass per unit length (default 0).
    #[serde(default)]
    pub rho_a: f64,
    /// Director inertia of d1, rho int xi_1^2 dA (default 0).
    #[serde(default)]
    pub rho_i1: f64,
    /// Director inertia of d2, rho int xi_2^2 dA (default 0).
    #[serde(default)]
    pub rho_i2: f64,
}

/// `[[beam3d_line]]`: a straight line (`to`) or a circular arc (`center`,
/// `axis`, `angle`) of beam3d elements
/// ([`crate::model::ModelBuilder::line_of_beam3d`]).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Beam3dLineSpec {
    /// Prefix of the node ids.
    pub nodes: String,
    /// Prefix of the element ids.
    pub element_ids: String,
    /// First node's position.
    pub from: Vec<f64>,
    /// Last node's position (straight line).
    pub to: Option<Vec<f64>>,
    /// A point of the arc's axis (arc).
    pub center: Option<Vec<f64>>,
    /// Direction of the arc's axis (arc).
    pub axis: Option<Vec<f64>>,
    /// Angle swept by the arc, rad, right-handed about `axis` (arc).
    pub angle: Option<f64>,
    /// Number of elements (>= 1).
    pub elements: usize,
    /// 1: 2-node elements (default), 2: 3-node elements.
    #[serde(default = "one")]
    pub order: usize,
    /// Reference direction of the section axis d1.
    pub orientation: Vec<f64>,
    /// The section (or `material`).
    pub section: Option<RodSectionSpec>,
    /// A material and a shape instead of `section`.
    pub material: Option<RodMaterialSpec>,
    /// `consistent` (default) or `lumped`.
    pub mass: Option<String>,
    /// Id of the last node (default `{nodes}{elements * order}`).
    pub last_node: Option<String>,
}

/// A material and a cross-section shape: `{ e, nu, rho, shape = "rectangle"
/// | "circle" | "tube", width, height | diameter | outer, inner }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RodMaterialSpec {
    /// Young's modulus.
    pub e: f64,
    /// Poisson's ratio (default 0).
    #[serde(default)]
    pub nu: f64,
    /// Density (default 0).
    #[serde(default)]
    pub rho: f64,
    /// `rectangle`, `circle` or `tube`.
    pub shape: String,
    /// Rectangle: width along d1.
    pub width: Option<f64>,
    /// Rectangle: height along d2.
    pub height: Option<f64>,
    /// Circle: diameter.
    pub diameter: Option<f64>,
    /// Tube: outer diameter.
    pub outer: Option<f64>,
    /// Tube: inner diameter.
    pub inner: Option<f64>,
}

fn one() -> usize {
    1
}

/// A beam cross section `{ ea = .., ei = .., rho_a = .. }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SectionSpec {
    /// Axial stiffness EA.
    pub ea: f64,
    /// Bending stiffness EI.
    pub ei: f64,
    /// Mass per unit length (default 0).
    #[serde(default)]
    pub rho_a: f64,
}

/// `[[element]]`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ElementSpec {
    /// Axial spring V = 1/2 kappa (l - l0)^2 (Hoitink eq. 4.43).
    AxialSpring {
        /// Unique id.
        id: String,
        /// The two end nodes.
        nodes: [String; 2],
        /// kappa.
        stiffness: f64,
        /// l0 (default: initial length).
        rest_length: Option<f64>,
    },
    /// Three-node bending element V = 1/2 Cb (nu + psi)/(nu - psi) (Hoitink eq. 4.42).
    Bending {
        /// Unique id.
        id: String,
        /// The three nodes, the middle one second.
        nodes: [String; 3],
        /// Cb.
        stiffness: f64,
    },
    /// Geometrically exact Euler–Bernoulli beam (planar, or spatial without
    /// torsion) between two beam nodes.
    Beam {
        /// Unique id.
        id: String,
        /// The two end nodes (beam nodes, with `slope`).
        nodes: [String; 2],
        /// Axial stiffness EA.
        ea: f64,
        /// Bending stiffness EI.
        ei: f64,
        /// Mass per unit length rho A (default 0).
        #[serde(default, alias = "mass_per_length")]
        rho_a: f64,
        /// Reference length (default: initial distance of the nodes).
        length: Option<f64>,
    },
    /// Geometrically exact 3-D beam (Simo–Reissner rod in directors) on 2
    /// or 3 director bodies.
    Beam3d {
        /// Unique id.
        id: String,
        /// The nodes: 3-D bodies with `attitude = "directors"`.
        nodes: Vec<String>,
        /// Axial stiffness EA.
        ea: f64,
        /// Shear stiffness along d1.
        ga1: f64,
        /// Shear stiffness along d2.
        ga2: f64,
        /// Torsional stiffness GJ.
        gj: f64,
        /// Bending stiffness about d1.
        ei1: f64,
        /// Bending stiffness about d2.
        ei2: f64,
        /// Mass per unit length (default 0).
        #[serde(default)]
        rho_a: f64,
        /// Director inertia of d1 (default 0).
        #[serde(default)]
        rho_i1: f64,
        /// Director inertia of d2 (default 0).
        #[serde(default)]
        rho_i2: f64,
        /// `consistent` (default) or `lumped`.
        mass: Option<String>,
    },
    /// Green-strain truss.
    Truss {
        /// Unique id.
        id: String,
        /// The two end nodes.
        nodes: [String; 2],
        /// Axial stiffness EA.
        ea: f64,
        /// Rest length (default: initial length).
        rest_length: Option<f64>,
        /// Mass per unit length (default 0).
        #[serde(default)]
        mass_per_length: f64,
    },
    /// Translational spring-damper-actuator between two points.
    SpringDamper {
        /// Unique id.
        id: String,
        /// First point.
        a: PointSpec,
        /// Second point.
        b: PointSpec,
        /// Spring stiffness k (default 0).
        #[serde(default)]
        stiffness: f64,
        /// Free length (default: initial length).
        free_length: Option<f64>,
        /// Damping coefficient c (default 0).
        #[serde(default)]
        damping: f64,
        /// Constant actuator force, tension positive (default 0).
        #[serde(default)]
        actuator_force: f64,
    },
    /// Rotational spring-damper-actuator between two planar bodies' angles.
    RotationalSpringDamper {
        /// Unique id.
        id: String,
        /// First body, or omitted for the ground.
        a: Option<String>,
        /// Second body.
        b: String,
        /// Stiffness (default 0).
        #[serde(default)]
        stiffness: f64,
        /// Rest value of theta_b - theta_a (default: initial value).
        rest_angle: Option<f64>,
        /// Damping coefficient (default 0).
        #[serde(default)]
        damping: f64,
        /// Constant actuator torque on b (reaction on a; default 0).
        #[serde(default)]
        torque: f64,
    },
}

/// `[[joint]]`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum JointSpec {
    /// A point held at a fixed ground position.
    GroundPin {
        /// Unique id.
        id: String,
        /// The held point.
        point: PointSpec,
        /// Ground position (default: the point's initial position).
        ground: Option<Vec<f64>>,
    },
    /// Two points held together (planar revolute joint); with `axis` (3-D
    /// bodies) the relative rotation is also restricted to that axis.
    Revolute {
        /// Unique id.
        id: String,
        /// First point.
        a: PointSpec,
        /// Second point.
        b: PointSpec,
        /// Hinge axis, global coordinates at the initial configuration (3-D).
        axis: Option<Vec<f64>>,
    },
    /// Two points held together in 3-D (ball joint).
    Spherical {
        /// Unique id.
        id: String,
        /// First point.
        a: PointSpec,
        /// Second point.
        b: PointSpec,
    },
    /// Ball joint with `axis_a` (of a) kept perpendicular to `axis_b` (of b) (3-D).
    Universal {
        /// Unique id.
        id: String,
        /// First point.
        a: PointSpec,
        /// Second point.
        b: PointSpec,
        /// Axis of a's body, global coordinates at the initial configuration.
        axis_a: Vec<f64>,
        /// Axis of b's body, global coordinates at the initial configuration.
        axis_b: Vec<f64>,
    },
    /// Relative rotation about and translation along `axis` only (3-D).
    Cylindrical {
        /// Unique id.
        id: String,
        /// Point of the guiding body (or ground).
        a: PointSpec,
        /// Point of the moving body.
        b: PointSpec,
        /// Axis, global coordinates at the initial configuration.
        axis: Vec<f64>,
    },
    /// No relative motion between two 3-D bodies (weld).
    Fixed {
        /// Unique id.
        id: String,
        /// Point of the first body (or ground).
        a: PointSpec,
        /// Point of the second body.
        b: PointSpec,
    },
    /// Fixed distance between two points.
    Distance {
        /// Unique id.
        id: String,
        /// First point.
        a: PointSpec,
        /// Second point.
        b: PointSpec,
        /// Length (default: initial distance).
        length: Option<f64>,
        /// `length` (|d| - L, default) or `quadratic` ((|d|^2 - L^2)/2).
        form: Option<String>,
    },
    /// The slope of a beam node parallel to a ground or body-fixed direction.
    Slope {
        /// Unique id.
        id: String,
        /// The beam node.
        node: String,
        /// Planar rigid body carrying the direction (default: the ground).
        body: Option<String>,
        /// Direction (ground or body coordinates; default: the initial slope).
        direction: Option<Vec<f64>>,
    },
    /// A point on a circle: Phi = R^2 - |r - c|^2.
    PointOnCircle {
        /// Unique id.
        id: String,
        /// The point.
        point: PointSpec,
        /// Centre.
        center: Vec<f64>,
        /// Radius (default: initial distance to the centre).
        radius: Option<f64>,
    },
    /// A point on a line of a body or of the ground (planar).
    Slider {
        /// Unique id.
        id: String,
        /// The sliding point.
        point: PointSpec,
        /// A point of the line: `{ ground = [x, y] }` or `{ body = "b", offset = [..] }`.
        line: PointSpec,
        /// Normal of the line, in the line body's frame (global for a ground line).
        normal: [f64; 2],
    },
    /// A slider that also locks the relative rotation (planar prismatic joint).
    Prismatic {
        /// Unique id.
        id: String,
        /// A point of the sliding body.
        point: PointSpec,
        /// A point of the line (ground or other body).
        line: PointSpec,
        /// Normal of the line, in the line body's frame (planar).
        normal: Option<[f64; 2]>,
        /// Sliding axis, global coordinates at the initial configuration (3-D).
        axis: Option<Vec<f64>>,
    },
    /// A thin disk (a 3-D body) rolling without slipping on the plane
    /// z = `height`: joints `<id>.contact` (position level, one row) and
    /// `<id>.rolling` (velocity level, two rows).
    RollingDisk {
        /// Unique id.
        id: String,
        /// The disk: a 3-D rigid body.
        body: String,
        /// Disk radius.
        radius: f64,
        /// Symmetry axis of the disk in body coordinates.
        axis: Vec<f64>,
        /// Height of the supporting plane (default 0).
        #[serde(default)]
        height: f64,
    },
    /// A point on a planar curve `y = f(x, t)`: `curve = "parabola"`
    /// (`y = a x^2 + b`) or `"sine_squared"` (`y = amplitude sin^2(omega t)`).
    Path {
        /// Unique id.
        id: String,
        /// The point on the curve (node or planar body point).
        point: PointSpec,
        /// `parabola` or `sine_squared`.
        curve: String,
        /// Parabola: coefficient of x^2 (required).
        a: Option<f64>,
        /// Parabola: constant (default: through the point's initial position).
        b: Option<f64>,
        /// Sine squared: amplitude (default 1).
        amplitude: Option<f64>,
        /// Sine squared: angular frequency (required).
        omega: Option<f64>,
    },
    /// A linear combination of coordinates held constant: `sum c_i q_i - constant = 0`.
    Linear {
        /// Unique id.
        id: String,
        /// DOF names, e.g. `["crank.theta", "rod.theta"]`.
        coordinates: Vec<String>,
        /// One coefficient per coordinate.
        coefficients: Vec<f64>,
        /// c0 (default: the initial value of the sum).
        constant: Option<f64>,
    },
    /// One coordinate driven along `value + rate t + amplitude sin(omega t + phase)`.
    Prescribed {
        /// Unique id.
        id: String,
        /// The driven DOF by name, e.g. `crank.theta` or `n3.y`.
        coordinate: String,
        /// Constant part (default: the initial value of the coordinate).
        value: Option<f64>,
        /// Rate (default 0).
        #[serde(default)]
        rate: f64,
        /// Amplitude (default 0).
        #[serde(default)]
        amplitude: f64,
        /// Angular frequency (default 0).
        #[serde(default)]
        omega: f64,
        /// Phase (default 0).
        #[serde(default)]
        phase: f64,
    },
}

/// `[[load]]`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum LoadSpec {
    /// A force of fixed direction at a point, scaled by a time function.
    PointForce {
        /// Unique id.
        id: String,
        /// Where it acts.
        point: PointSpec,
        /// Force vector.
        force: Vec<f64>,
        /// Time function (default constant).
        time: Option<crate::load::TimeFunction>,
    },
    /// A torque on a rigid body, scaled by a time function.
    Torque {
        /// Unique id.
        id: String,
        /// The body.
        body: String,
        /// Torque: a number on a planar body (counter-clockwise positive), a
        /// vector on a 3-D body.
        torque: Numbers,
        /// Frame of a 3-D torque: `spatial` (default) or `body` (body axes).
        frame: Option<String>,
        /// Time function (default constant).
        time: Option<crate::load::TimeFunction>,
    },
    /// A linear force field F = A r + b at a point (App. A.1: F = (4y, -4x)).
    LinearField {
        /// Unique id.
        id: String,
        /// Where it acts.
        point: PointSpec,
        /// A, dim x dim, row by row.
        matrix: Vec<Vec<f64>>,
        /// b (default zero).
        offset: Option<Vec<f64>>,
        /// Time function (default constant).
        time: Option<crate::load::TimeFunction>,
    },
}

/// `[output]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Dataset groups to write (default all).
    pub fields: Option<Vec<Field>>,
    /// Record every k-th step.
    pub every: Option<u64>,
    /// Record every dt_out of simulated time.
    pub dt_out: Option<f64>,
    /// Deflate level 0..=9.
    pub compression: Option<u8>,
    /// Rows per chunk.
    pub chunk_rows: Option<usize>,
    /// Seconds between flushes.
    pub flush_seconds: Option<f64>,
    /// Soft limit of the estimated output size in bytes.
    pub max_bytes: Option<f64>,
    /// Write the XDMF side file (default: when the model has elements).
    pub xdmf: Option<bool>,
}

/// A point reference: `"n1"` (a node or body reference point),
/// `{ body = "b", offset = [x, y] }`, `{ node = "n1" }` or `{ ground = [x, y] }`.
#[derive(Debug, Clone, PartialEq)]
pub enum PointSpec {
    /// Node (or body reference point) by id.
    Id(String),
    /// Body-fixed point.
    Body {
        /// Body id.
        body: String,
        /// Offset in body coordinates (default zero).
        offset: Vec<f64>,
    },
    /// Fixed point.
    Ground(Vec<f64>),
}

impl<'de> Deserialize<'de> for PointSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        const HINT: &str = "a point: a node id \"n1\", { body = \"b\", offset = [x, y] }, \
                            { node = \"n1\" } or { ground = [x, y] }";
        impl<'de> Visitor<'de> for V {
            type Value = PointSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(HINT)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<PointSpec, E> {
                Ok(PointSpec::Id(s.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PointSpec, A::Error> {
                let (mut body, mut node, mut offset, mut ground) = (None, None, None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "body" => body = Some(map.next_value::<String>()?),
                        "node" => node = Some(map.next_value::<String>()?),
                        "offset" => offset = Some(map.next_value::<Vec<f64>>()?),
                        "ground" => ground = Some(map.next_value::<Vec<f64>>()?),
                        other => {
                            return Err(de::Error::custom(format!(
                                "unknown key `{other}` in a point; expected {HINT}"
                            )))
                        }
                    }
                }
                match (body, node, offset, ground) {
                    (Some(b), None, off, None) => Ok(PointSpec::Body {
                        body: b,
                        offset: off.unwrap_or_else(|| vec![0.0, 0.0]),
                    }),
                    (None, Some(n), None, None) => Ok(PointSpec::Id(n)),
                    (None, None, None, Some(g)) => Ok(PointSpec::Ground(g)),
                    _ => Err(de::Error::custom(format!(
                        "ambiguous point; expected {HINT}"
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// `[[probe]]`: a named scalar history recorded with every step.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ProbeSpec {
    /// A coordinate `u[dof]`.
    Coordinate {
        /// Probe name.
        name: String,
        /// DOF name, e.g. `rod4.y`.
        dof: String,
    },
    /// `u[dof] - u0[dof]`.
    Displacement {
        /// Probe name.
        name: String,
        /// DOF name.
        dof: String,
    },
    /// A velocity component.
    Velocity {
        /// Probe name.
        name: String,
        /// DOF name.
        dof: String,
    },
    /// Distance between two points.
    Distance {
        /// Probe name.
        name: String,
        /// First point.
        a: PointSpec,
        /// Second point.
        b: PointSpec,
    },
    /// Transverse deflection of `point` from the chord through `chord`.
    Deflection {
        /// Probe name.
        name: String,
        /// The deflected point.
        point: PointSpec,
        /// The chord's two ends.
        chord: [PointSpec; 2],
    },
    /// A section force or moment of a beam3d element at a Gauss point.
    Section {
        /// Probe name.
        name: String,
        /// Element id (a beam3d element).
        element: String,
        /// `q1`, `q2`, `n`, `m1`, `m2` or `t`.
        component: String,
        /// Gauss point (default 0).
        #[serde(default)]
        point: usize,
    },
    /// A joint multiplier.
    Multiplier {
        /// Probe name.
        name: String,
        /// Joint id.
        joint: String,
        /// Row (default 0).
        #[serde(default)]
        row: usize,
    },
    /// An energy term: `kinetic`, `potential`, `total` or `external_work`.
    Energy {
        /// Probe name.
        name: String,
        /// Term.
        term: String,
    },
    /// A constraint residual norm: `position`, `velocity` or `acceleration`.
    Constraint {
        /// Probe name.
        name: String,
        /// Level.
        level: String,
    },
}
