//! Cross sections of beams and trusses as named fields ([`BeamSection`],
//! [`TrussSection`]), from the stiffness numbers or from a material and a
//! [`Shape`]; a line of beam elements between two points
//! ([`ModelBuilder::line_of_beams`]); a clamp of a beam node in one call.

use super::{err, named, BuildError, Entity, ModelBuilder, NonNegative, PointRef, Positive};

/// A solid cross section shape, for [`BeamSection::from_material`] and
/// [`TrussSection::from_material`] (bending about the axis normal to the
/// plane of `height`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// A `width x height` rectangle: A = b h, I = b h^3 / 12.
    Rectangle {
        /// Width b (out of the bending plane).
        width: f64,
        /// Height h (in the bending plane).
        height: f64,
    },
    /// A disc of diameter d: A = pi d^2 / 4, I = pi d^4 / 64.
    Circle {
        /// Diameter.
        diameter: f64,
    },
    /// A tube: A = pi (D^2 - d^2) / 4, I = pi (D^4 - d^4) / 64.
    Tube {
        /// Outer diameter D.
        outer: f64,
        /// Inner diameter d (< D; 0 is a solid circle).
        inner: f64,
    },
}

impl Shape {
    /// Area and second moment of area (A, I), checked: every size finite
    /// and positive (a tube's inner diameter may be 0 and is below the
    /// outer one).
    pub fn properties(&self) -> Result<(f64, f64), BuildError> {
        let bad = |field: &'static str, m: String| Err(err("section", "shape", Some(field), m));
        let check =
            |field: &'static str, x: f64| named(Positive, "section", "shape", field, field, x);
        use std::f64::consts::PI;
        match *self {
            Shape::Rectangle { width, height } => {
                check("width", width)?;
                check("height", height)?;
                Ok((width * height, width * height.powi(3) / 12.0))
            }
            Shape::Circle { diameter } => {
                check("diameter", diameter)?;
                Ok((PI * diameter.powi(2) / 4.0, PI * diameter.powi(4) / 64.0))
            }
            Shape::Tube { outer, inner } => {
                check("outer", outer)?;
                if !(inner >= 0.0 && inner < outer) {
                    return bad(
                        "inner",
                        format!("the inner diameter must be in [0, outer = {outer}), got {inner}"),
                    );
                }
                Ok((
                    PI * (outer.powi(2) - inner.powi(2)) / 4.0,
                    PI * (outer.powi(4) - inner.powi(4)) / 64.0,
                ))
            }
        }
    }
}

/// The section constants of a shape for a 3-D beam with torsion: area A,
/// second moments `I1 = int xi_2^2 dA` (bending about d1) and
/// `I2 = int xi_1^2 dA`, torsion constant J and Cowper's shear factor k
/// (G. R. Cowper, "The shear coefficient in Timoshenko's beam theory",
/// J. Appl. Mech. 33 (1966) 335–340) for Poisson's ratio `nu`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RodShape {
    /// Area.
    pub area: f64,
    /// Second moment about d1 (the rectangle's width along d1).
    pub i1: f64,
    /// Second moment about d2.
    pub i2: f64,
    /// Saint-Venant torsion constant.
    pub j: f64,
    /// Shear correction factor.
    pub shear_factor: f64,
}

impl Shape {
    /// [`RodShape`] of this shape (rectangle: width along d1, height along
    /// d2). Torsion constants: circle and tube the polar moment; rectangle
    /// `a b^3 (1/3 - 0.21 (b/a) (1 - (b/a)^4 / 12))` with `a >= b` (Roark's
    /// Formulas for Stress and Strain, table 10.7). Shear factors (Cowper
    /// 1966): rectangle `10 (1 + nu) / (12 + 11 nu)`, circle and tube
    /// `6 (1 + nu) (1 + m^2)^2 / ((7 + 6 nu) (1 + m^2)^2 + (20 + 12 nu) m^2)`,
    /// `m` = inner / outer diameter.
    pub fn rod(&self, nu: f64) -> Result<RodShape, BuildError> {
        let (area, i) = self.properties()?;
        let circle = |m: f64| {
            let q = (1.0 + m * m).powi(2);
            6.0 * (1.0 + nu) * q / ((7.0 + 6.0 * nu) * q + (20.0 + 12.0 * nu) * m * m)
        };
        Ok(match *self {
            Shape::Rectangle { width, height } => {
                let (a, b) = (width.max(height), width.min(height));
                let r = b / a;
                RodShape {
                    area,
                    i1: i,
                    i2: height * width.powi(3) / 12.0,
                    j: a * b.powi(3) * (1.0 / 3.0 - 0.21 * r * (1.0 - r.powi(4) / 12.0)),
                    shear_factor: 10.0 * (1.0 + nu) / (12.0 + 11.0 * nu),
                }
            }
            Shape::Circle { .. } => RodShape {
                area,
                i1: i,
                i2: i,
                j: 2.0 * i,
                shear_factor: circle(0.0),
            },
            Shape::Tube { outer, inner } => RodShape {
                area,
                i1: i,
                i2: i,
                j: 2.0 * i,
                shear_factor: circle(inner / outer),
            },
        })
    }
}

/// The section of an Euler–Bernoulli beam: axial stiffness `ea` (N),
/// bending stiffness `ei` (N m^2) and mass per unit length `rho_a` (kg/m),
/// named so that they cannot be swapped unnoticed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BeamSection {
    /// Axial stiffness EA (> 0).
    pub ea: f64,
    /// Bending stiffness EI (> 0).
    pub ei: f64,
    /// Mass per unit length rho A (>= 0).
    pub rho_a: f64,
}

impl BeamSection {
    /// The section of `shape` in a material of Young's modulus `e` (Pa) and
    /// density `rho` (kg/m^3): EA, EI and rho A.
    pub fn from_material(e: f64, rho: f64, shape: Shape) -> Result<Self, BuildError> {
        BeamSection::of_material("beam section", e, rho, shape)
    }

    /// [`Self::from_material`], the errors naming the section `what`.
    fn of_material(what: &str, e: f64, rho: f64, shape: Shape) -> Result<Self, BuildError> {
        material(what, e, rho)?;
        let (a, i) = shape.properties()?;
        Ok(BeamSection {
            ea: e * a,
            ei: e * i,
            rho_a: rho * a,
        })
    }

    /// Checks the values for element `id`.
    pub(super) fn check(&self, what: &'static str, id: &str) -> Result<(), BuildError> {
        named(Positive, what, id, "ea", "axial stiffness EA", self.ea)?;
        named(Positive, what, id, "ei", "bending stiffness EI", self.ei)?;
        named(
            NonNegative,
            what,
            id,
            "rho_a",
            "mass per unit length",
            self.rho_a,
        )
    }
}

/// The section of a truss: axial stiffness `ea` (N) and mass per unit
/// length `rho_a` (kg/m).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrussSection {
    /// Axial stiffness EA (> 0).
    pub ea: f64,
    /// Mass per unit length rho A (>= 0).
    pub rho_a: f64,
}

impl TrussSection {
    /// A massless section of axial stiffness `ea` (N): a truss that only
    /// connects (bridges, lattices whose mass sits at the nodes).
    pub fn massless(ea: f64) -> Self {
        TrussSection { ea, rho_a: 0.0 }
    }

    /// The section of `shape` in a material of Young's modulus `e` (Pa) and
    /// density `rho` (kg/m^3): EA and rho A.
    pub fn from_material(e: f64, rho: f64, shape: Shape) -> Result<Self, BuildError> {
        let BeamSection { ea, rho_a, .. } =
            BeamSection::of_material("truss section", e, rho, shape)?;
        Ok(TrussSection { ea, rho_a })
    }
}

fn material(what: &str, e: f64, rho: f64) -> Result<(), BuildError> {
    named(Positive, "section", what, "e", "Young's modulus E", e)?;
    named(NonNegative, "section", what, "rho", "density", rho)
}

/// The most elements of one line (a bound on what a model file can ask
/// the builder to allocate).
pub const MAX_LINE_ELEMENTS: usize = 100_000;

/// `Ok` for a line of `n` elements, 1 to [`MAX_LINE_ELEMENTS`], else an
/// error naming the field `elements` of the line `what` `id`.
pub(super) fn line_elements(what: &'static str, id: &str, n: usize) -> Result<(), BuildError> {
    match n == 0 || n > MAX_LINE_ELEMENTS {
        true => Err(err(
            what,
            id,
            Some("elements"),
            format!("a line has 1 to {MAX_LINE_ELEMENTS} elements, got {n}"),
        )),
        false => Ok(()),
    }
}

/// The ids of a generated line: nodes `{nodes}0 ..= {nodes}n`, elements
/// `{elements}1 ..= {elements}n` (element k between nodes k-1 and k).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineIds<'a> {
    /// Prefix of the node ids.
    pub nodes: &'a str,
    /// Prefix of the element ids.
    pub elements: &'a str,
}

impl ModelBuilder {
    /// A straight line of `n` equal beam elements of `section` from point
    /// `from` to point `to`: beam nodes `{ids.nodes}0 ..= {ids.nodes}n`
    /// (node k at `from + (to - from) k / n`, slope the unit tangent, no
    /// lumped mass), then elements `{ids.elements}1 ..= {ids.elements}n`.
    /// Returns the node ids, first to last.
    ///
    /// ```
    /// use flexmb::model::{BeamSection, LineIds, ModelBuilder, PointRef};
    ///
    /// let mut b = ModelBuilder::new(2)?;
    /// let steel = BeamSection { ea: 2.1e7, ei: 175.0, rho_a: 0.785 };
    /// let ids = LineIds { nodes: "n", elements: "e" };
    /// let nodes = b.line_of_beams(ids, &[0.0, 0.0], &[1.0, 0.0], 10, &steel)?;
    /// b.clamp("root", &nodes[0])?;
    /// assert_eq!(nodes.last().map(String::as_str), Some("n10"));
    /// let model = b.build()?;
    /// assert_eq!((model.n_dofs(), model.n_elements()), (44, 10));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn line_of_beams(
        &mut self,
        ids: LineIds<'_>,
        from: &[f64],
        to: &[f64],
        n: usize,
        section: &BeamSection,
    ) -> Result<Vec<String>, BuildError> {
        let id = ids.nodes;
        let dim = self.dim;
        let a = self.vector("line", id, "from", from, dim)?;
        let b = self.vector("line", id, "to", to, dim)?;
        line_elements("line", id, n)?;
        let d: Vec<f64> = (0..dim).map(|k| b[k] - a[k]).collect();
        let length = d.iter().map(|x| x * x).sum::<f64>().sqrt();
        if length == 0.0 {
            return Err(err(
                "line",
                id,
                Some("to"),
                format!(
                    "`to` equals `from` ({:?}): the line has no length",
                    &a[..dim]
                ),
            ));
        }
        section.check("line", id)?;
        let slope: Vec<f64> = d.iter().map(|x| x / length).collect();
        let nodes: Vec<String> = (0..=n).map(|k| format!("{}{k}", ids.nodes)).collect();
        for (k, node) in nodes.iter().enumerate() {
            let p: Vec<f64> = if k == n {
                b[..dim].to_vec()
            } else {
                (0..dim)
                    .map(|j| a[j] + d[j] * k as f64 / n as f64)
                    .collect()
            };
            self.beam_node(node, &p, &slope, None, None, 0.0)?;
        }
        for k in 1..=n {
            let e = format!("{}{k}", ids.elements);
            self.beam(&e, &nodes[k - 1], &nodes[k], section, None)?;
        }
        Ok(nodes)
    }

    /// Clamps node `node` to the ground where it is: a ground pin `id` at
    /// its initial position and, for a beam node, a slope joint
    /// `{id}_slope` holding its initial slope direction; a 3-D body (a
    /// beam3d node) gets the `fixed` joint `id` to the ground.
    pub fn clamp(&mut self, id: &str, node: &str) -> Result<(), BuildError> {
        let at = PointRef::entity(node);
        let position = self.entity_position(node, [0.0; 3]).ok_or_else(|| {
            err(
                "joint",
                id,
                Some("node"),
                format!("node '{node}' is not defined"),
            )
        })?;
        let beam = match self.entities.get(node) {
            Some(Entity::BeamNode(_)) => true,
            Some(Entity::Node(_)) => false,
            Some(Entity::Body3(..)) => {
                // A 3-D body (a beam3d node): welded to the ground where it is.
                let ground = PointRef::Ground([position[0], position[1], position[2]]);
                return self.joint3d(id, &ground, &at, super::Joint3d::Fixed);
            }
            _ => {
                return Err(err(
                    "joint",
                    id,
                    Some("node"),
                    format!("'{node}' is a rigid body: clamp a body with a fixed joint (joint3d)"),
                ))
            }
        };
        self.ground_pin(id, &at, &position[..self.dim])?;
        if beam {
            self.slope(&format!("{id}_slope"), node, None, None)?;
        }
        Ok(())
    }
}
