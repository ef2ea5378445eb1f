//! Reading a model file: TOML -> [`ModelSpec`] -> [`Model`], with every error
//! located by file, line and field.

use std::path::Path;

use super::spec::{
    Beam3dLineSpec, BodySpec, ElementSpec, JointSpec, LineSpec, LoadSpec, ModelSpec, NodeSpec,
    Numbers, OutputSpec, PointSpec, ProbeSpec, SCHEMA_VERSION,
};
use crate::element::{EulerKinetic, RodSection};
use crate::integrate::{is_key, takes, IntegratorConfig, IntegratorSpec};
use crate::joint::Curve;
use crate::kinematics::attitude::Attitude;
use crate::load::{TimeFunction, TorqueFrame};
use crate::model::{
    BeamSection, Body2d, Body3dSpec, BuildError, DistanceKind, EnergyTerm, Generator, Joint3d,
    LineIds, Model, ModelBuilder, PointRef, ProbeTarget, ResidualLevel, RodLine, RodPath,
    RotationalSpringDamper, Shape, SliderKind, SpringDamper, TrussSection,
};
use crate::output::{OutputConfig, OutputInterval};

/// A model file error: `file:line: message`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}{}: {message}", .line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ModelError {
    /// File name (or `<string>`).
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// A loaded model file: the model plus its integrator and output settings.
pub struct ModelFile {
    /// The mechanism.
    pub model: Model,
    /// `[integrator]` as written (resolve with [`ModelFile::integrator`]).
    pub integrator: IntegratorSpec,
    /// `[output]`, resolved.
    pub output: OutputConfig,
    /// Title, if given.
    pub title: Option<String>,
    /// The file text.
    pub text: String,
    /// The file name.
    pub file: String,
    integrator_line: Option<usize>,
}

/// Reads and builds a model file.
pub fn load_model_file(path: impl AsRef<Path>) -> Result<ModelFile, ModelError> {
    let (file, text) = read_text(path.as_ref(), "model file")?;
    load_model_str(&text, &file)
}

/// Reads the `what` (e.g. `model file`) at `path`: its name for messages
/// and its text, or the error `cannot read the {what}: ...` naming it.
pub fn read_text(path: &Path, what: &str) -> Result<(String, String), ModelError> {
    let file = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => Ok((file, text)),
        Err(e) => Err(ModelError {
            file,
            line: None,
            message: format!("cannot read the {what}: {e}"),
        }),
    }
}

struct Locator<'a> {
    file: &'a str,
    text: &'a str,
}

impl Locator<'_> {
    fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    /// The line of `field = ...` in the table that starts at `span`
    /// (searched up to the next table header), or the table's first line.
    fn field_line(&self, span: std::ops::Range<usize>, field: Option<&str>) -> usize {
        let start = self.line_of(span.start);
        if let Some(f) = field {
            let line_start = self.text[..span.start.min(self.text.len())]
                .rfind('\n')
                .map_or(0, |i| i + 1);
            for (k, line) in self.text[line_start..].lines().enumerate() {
                let t = line.trim_start();
                if k > 0 && t.starts_with('[') {
                    break;
                }
                if let Some(rest) = t.strip_prefix(f) {
                    if rest.trim_start().starts_with('=') {
                        return start + k;
                    }
                }
            }
        }
        start
    }

    fn error(&self, line: Option<usize>, message: String) -> ModelError {
        ModelError {
            file: self.file.to_string(),
            line,
            message,
        }
    }

    /// `add` on each entry of an entity table in order; the first error,
    /// located at its entry ([`Self::build_error`]).
    fn each<T>(
        &self,
        table: &[toml::Spanned<T>],
        mut add: impl FnMut(&T) -> Result<(), BuildError>,
    ) -> Result<(), ModelError> {
        for entry in table {
            add(entry.get_ref()).map_err(|e| self.build_error(entry.span(), e))?;
        }
        Ok(())
    }

    fn build_error(&self, span: std::ops::Range<usize>, e: BuildError) -> ModelError {
        let line = self.field_line(span, e.field);
        let field = e
            .field
            .map(|f| format!(" (field `{f}`)"))
            .unwrap_or_default();
        self.error(
            Some(line),
            format!("{} '{}'{field}: {}", e.what, e.id, e.message),
        )
    }
}

/// A point reference of a `dim`-D model; a body offset with a wrong number
/// of components gets NaN entries, which the builder reports.
fn point_ref(p: &PointSpec, dim: usize) -> PointRef {
    match p {
        PointSpec::Id(id) => PointRef::Entity(id.clone()),
        PointSpec::Body { body, offset } => PointRef::Body {
            body: body.clone(),
            offset: if offset.len() == dim {
                [offset[0], offset[1], offset.get(2).copied().unwrap_or(0.0)]
            } else {
                [f64::NAN; 3]
            },
        },
        PointSpec::Ground(g) => {
            let mut x = [0.0; 3];
            for (k, v) in g.iter().take(3).enumerate() {
                x[k] = *v;
            }
            PointRef::Ground(x)
        }
    }
}

fn vec3(x: &[f64]) -> [f64; 3] {
    let mut v = [0.0; 3];
    for (k, a) in x.iter().take(3).enumerate() {
        v[k] = *a;
    }
    v
}

/// Builds a model from TOML text; `file` names it in messages.
pub fn load_model_str(text: &str, file: &str) -> Result<ModelFile, ModelError> {
    let loc = Locator { file, text };
    let spec: ModelSpec = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| loc.line_of(s.start));
        loc.error(line, e.message().trim().to_string())
    })?;
    if let Some(v) = spec.schema {
        if v != SCHEMA_VERSION {
            return Err(loc.error(
                loc.text.find("schema").map(|o| loc.line_of(o)),
                format!(
                    "unsupported schema version {v} (this flexmb reads schema {SCHEMA_VERSION})"
                ),
            ));
        }
    }
    let mut b = match &spec.generator {
        Some(g) => build_generated(&spec, g, &loc)?,
        None => build_entities(&spec, &loc)?,
    };
    let dim = b.dim();
    for p in &spec.probe {
        let (name, target) = probe_target(p.get_ref(), dim);
        target
            .and_then(|t| b.probe(name, &t))
            .map_err(|e| loc.build_error(p.span(), e))?;
    }
    let model = b.build().map_err(|e| {
        let line = text.find(&format!("\"{}\"", e.id)).map(|o| loc.line_of(o));
        let field = e
            .field
            .map(|f| format!(" (field `{f}`)"))
            .unwrap_or_default();
        loc.error(line, format!("{} '{}'{field}: {}", e.what, e.id, e.message))
    })?;

    let output = match &spec.output {
        Some(o) => output_config(o.get_ref())
            .map_err(|(f, m)| loc.error(Some(loc.field_line(o.span(), Some(f))), m))?,
        None => OutputConfig::default(),
    };
    let (integrator, integrator_line) = match spec.integrator {
        Some(i) => {
            let line = loc.line_of(i.span().start);
            (i.into_inner(), Some(line))
        }
        None => (IntegratorSpec::default(), None),
    };
    Ok(ModelFile {
        model,
        integrator,
        output,
        title: spec.title,
        text: text.to_string(),
        file: file.to_string(),
        integrator_line,
    })
}

/// The name and target of a `[[probe]]`.
fn probe_target(p: &ProbeSpec, dim: usize) -> (&str, Result<ProbeTarget, BuildError>) {
    let bad = |name: &str, field: &'static str, message: String| BuildError {
        what: "probe",
        id: name.to_string(),
        field: Some(field),
        message,
    };
    match p {
        ProbeSpec::Coordinate { name, dof } => (name, Ok(ProbeTarget::Coordinate(dof.clone()))),
        ProbeSpec::Displacement { name, dof } => (name, Ok(ProbeTarget::Displacement(dof.clone()))),
        ProbeSpec::Velocity { name, dof } => (name, Ok(ProbeTarget::Velocity(dof.clone()))),
        ProbeSpec::Distance { name, a, b } => (
            name,
            Ok(ProbeTarget::Distance(point_ref(a, dim), point_ref(b, dim))),
        ),
        ProbeSpec::Deflection { name, point, chord } => (
            name,
            Ok(ProbeTarget::Deflection(
                point_ref(point, dim),
                [point_ref(&chord[0], dim), point_ref(&chord[1], dim)],
            )),
        ),
        ProbeSpec::Section {
            name,
            element,
            component,
            point,
        } => (
            name,
            match crate::model::SECTION_COMPONENTS
                .iter()
                .position(|c| c == component)
            {
                Some(c) => Ok(ProbeTarget::Section {
                    element: element.clone(),
                    component: c,
                    point: *point,
                }),
                None => Err(bad(
                    name,
                    "component",
                    format!("unknown section component '{component}' (q1, q2, n, m1, m2, t)"),
                )),
            },
        ),
        ProbeSpec::Multiplier { name, joint, row } => (
            name,
            Ok(ProbeTarget::Multiplier {
                joint: joint.clone(),
                row: *row,
            }),
        ),
        ProbeSpec::Energy { name, term } => (
            name,
            match term.as_str() {
                "kinetic" => Ok(EnergyTerm::Kinetic),
                "potential" => Ok(EnergyTerm::Potential),
                "total" => Ok(EnergyTerm::Total),
                "external_work" => Ok(EnergyTerm::ExternalWork),
                t => Err(bad(
                    name,
                    "term",
                    format!("unknown energy term '{t}' (kinetic, potential, total, external_work)"),
                )),
            }
            .map(ProbeTarget::Energy),
        ),
        ProbeSpec::Constraint { name, level } => (
            name,
            match level.as_str() {
                "position" => Ok(ResidualLevel::Position),
                "velocity" => Ok(ResidualLevel::Velocity),
                "acceleration" => Ok(ResidualLevel::Acceleration),
                l => Err(bad(
                    name,
                    "level",
                    format!("unknown level '{l}' (position, velocity, acceleration)"),
                )),
            }
            .map(ProbeTarget::Constraint),
        ),
    }
}

/// Builds the model from the entity tables of `spec` (probes and `build` follow).
fn build_entities(spec: &ModelSpec, loc: &Locator<'_>) -> Result<ModelBuilder, ModelError> {
    let dim_span = spec.dimension.span();
    let mut b = ModelBuilder::new(*spec.dimension.get_ref())
        .map_err(|e| loc.build_error(dim_span.clone(), e))?;
    let dim = b.dim();
    if let Some(g) = &spec.gravity {
        b.gravity(g.get_ref())
            .map_err(|e| loc.build_error(g.span(), e))?;
    }
    loc.each(&spec.node, |n| add_node(&mut b, n))?;
    loc.each(&spec.body, |bd| body(&mut b, bd))?;
    loc.each(&spec.element, |el| add_element(&mut b, dim, el))?;
    loc.each(&spec.line, |l| add_line(&mut b, l))?;
    loc.each(&spec.beam3d_line, |l| add_beam3d_line(&mut b, l))?;
    loc.each(&spec.joint, |j| add_joint(&mut b, dim, j))?;
    loc.each(&spec.load, |l| add_load(&mut b, dim, l))?;
    Ok(b)
}

/// Adds a `[[node]]`: a beam node when it has a `slope`, else a point node.
fn add_node(b: &mut ModelBuilder, n: &NodeSpec) -> Result<(), BuildError> {
    let NodeSpec {
        id,
        position,
        velocity,
        mass,
        slope,
        slope_velocity,
    } = n;
    match slope {
        Some(s) => b.beam_node(
            id,
            position,
            s,
            velocity.as_deref(),
            slope_velocity.as_deref(),
            *mass,
        ),
        None if slope_velocity.is_some() => Err(BuildError {
            what: "node",
            id: id.clone(),
            field: Some("slope_velocity"),
            message: "`slope_velocity` needs `slope` (a beam node)".into(),
        }),
        None => b.node(id, position, velocity.as_deref(), *mass),
    }
}

/// Adds an `[[element]]` (springs, beams, trusses, spring-dampers).
fn add_element(b: &mut ModelBuilder, dim: usize, el: &ElementSpec) -> Result<(), BuildError> {
    match el {
        ElementSpec::AxialSpring {
            id,
            nodes,
            stiffness,
            rest_length,
        } => b.axial_spring(id, &nodes[0], &nodes[1], *stiffness, *rest_length),
        ElementSpec::Bending {
            id,
            nodes,
            stiffness,
        } => b.bending(id, [&nodes[0], &nodes[1], &nodes[2]], *stiffness),
        ElementSpec::Beam {
            id,
            nodes,
            ea,
            ei,
            rho_a,
            length,
        } => {
            let section = BeamSection {
                ea: *ea,
                ei: *ei,
                rho_a: *rho_a,
            };
            b.beam(id, &nodes[0], &nodes[1], &section, *length)
        }
        ElementSpec::Beam3d {
            id,
            nodes,
            ea,
            ga1,
            ga2,
            gj,
            ei1,
            ei2,
            rho_a,
            rho_i1,
            rho_i2,
            mass,
        } => {
            let section = RodSection {
                ea: *ea,
                ga1: *ga1,
                ga2: *ga2,
                gj: *gj,
                ei1: *ei1,
                ei2: *ei2,
                rho_a: *rho_a,
                rho_i1: *rho_i1,
                rho_i2: *rho_i2,
            };
            let lumped = lumped_mass("element", id, mass.as_deref())?;
            let nodes: Vec<&str> = nodes.iter().map(String::as_str).collect();
            b.beam3d(id, &nodes, &section, lumped)
        }
        ElementSpec::Truss {
            id,
            nodes,
            ea,
            rest_length,
            mass_per_length,
        } => b.truss(
            id,
            &nodes[0],
            &nodes[1],
            &TrussSection {
                ea: *ea,
                rho_a: *mass_per_length,
            },
            *rest_length,
        ),
        ElementSpec::SpringDamper {
            id,
            a,
            b: pb,
            stiffness,
            free_length,
            damping,
            actuator_force,
        } => b.spring_damper(
            id,
            &point_ref(a, dim),
            &point_ref(pb, dim),
            SpringDamper {
                stiffness: *stiffness,
                damping: *damping,
                force: *actuator_force,
                free_length: *free_length,
            },
        ),
        ElementSpec::RotationalSpringDamper {
            id,
            a,
            b: body,
            stiffness,
            rest_angle,
            damping,
            torque,
        } => b.rotational_spring_damper(
            id,
            a.as_deref(),
            body,
            RotationalSpringDamper {
                stiffness: *stiffness,
                damping: *damping,
                torque: *torque,
                rest_angle: *rest_angle,
            },
        ),
    }
}

/// Adds a `[[line]]` of beams; errors on the section's numbers name `section`.
fn add_line(b: &mut ModelBuilder, l: &LineSpec) -> Result<(), BuildError> {
    let LineSpec {
        nodes,
        element_ids,
        from,
        to,
        elements,
        section,
    } = l;
    let ids = LineIds {
        nodes,
        elements: element_ids,
    };
    let section = BeamSection {
        ea: section.ea,
        ei: section.ei,
        rho_a: section.rho_a,
    };
    b.line_of_beams(ids, from, to, *elements, &section)
        .map_err(|mut e| {
            // The section's numbers sit on the `section = { .. }` line.
            if let Some(f @ ("ea" | "ei" | "rho_a")) = e.field {
                e.message = format!("section `{f}`: {}", e.message);
                e.field = Some("section");
            }
            e
        })?;
    Ok(())
}

/// `mass = "consistent" | "lumped"` of a beam3d element or line: whether lumped.
fn lumped_mass(what: &'static str, id: &str, mass: Option<&str>) -> Result<bool, BuildError> {
    match mass {
        None | Some("consistent") => Ok(false),
        Some("lumped") => Ok(true),
        Some(m) => Err(BuildError {
            what,
            id: id.to_string(),
            field: Some("mass"),
            message: format!("unknown mass '{m}' (consistent, lumped)"),
        }),
    }
}

/// Adds a `[[beam3d_line]]`: a straight line (`to`) or an arc (`center`,
/// `axis`, `angle`) of beam3d elements.
fn add_beam3d_line(b: &mut ModelBuilder, l: &Beam3dLineSpec) -> Result<(), BuildError> {
    let id = l.nodes.as_str();
    let bad = |field: &'static str, message: String| BuildError {
        what: "beam3d_line",
        id: id.to_string(),
        field: Some(field),
        message,
    };
    let v3 = |field: &'static str, x: &[f64]| -> Result<[f64; 3], BuildError> {
        if x.len() == 3 {
            Ok([x[0], x[1], x[2]])
        } else {
            Err(bad(
                field,
                format!("expected 3 components, got {}", x.len()),
            ))
        }
    };
    let from = v3("from", &l.from)?;
    let path =
        match (&l.to, &l.center, &l.axis, l.angle) {
            (Some(to), None, None, None) => RodPath::Straight {
                from,
                to: v3("to", to)?,
            },
            (None, Some(c), Some(a), Some(angle)) => RodPath::Arc {
                from,
                center: v3("center", c)?,
                axis: v3("axis", a)?,
                angle,
            },
            _ => return Err(bad(
                "to",
                "give `to` (a straight line) or `center`, `axis` and `angle` (an arc), not both"
                    .into(),
            )),
        };
    let section = match (&l.section, &l.material) {
        (Some(s), None) => RodSection {
            ea: s.ea,
            ga1: s.ga1,
            ga2: s.ga2,
            gj: s.gj,
            ei1: s.ei1,
            ei2: s.ei2,
            rho_a: s.rho_a,
            rho_i1: s.rho_i1,
            rho_i2: s.rho_i2,
        },
        (None, Some(m)) => {
            let size = |f: &'static str, x: Option<f64>| {
                x.ok_or_else(|| bad("material", format!("shape '{}' needs `{f}`", m.shape)))
            };
            let shape = match m.shape.as_str() {
                "rectangle" => Shape::Rectangle {
                    width: size("width", m.width)?,
                    height: size("height", m.height)?,
                },
                "circle" => Shape::Circle {
                    diameter: size("diameter", m.diameter)?,
                },
                "tube" => Shape::Tube {
                    outer: size("outer", m.outer)?,
                    inner: size("inner", m.inner)?,
                },
                other => {
                    return Err(bad(
                        "material",
                        format!("unknown shape '{other}' (rectangle, circle, tube)"),
                    ))
                }
            };
            RodSection::from_material(m.e, m.nu, m.rho, shape).map_err(|e| {
                bad(
                    "material",
                    format!("`{}`: {}", e.field.unwrap_or("material"), e.message),
                )
            })?
        }
        _ => {
            return Err(bad(
                "section",
                "give `section = { ea, ga1, ga2, gj, ei1, ei2, .. }` or `material = { e, nu, \
                 rho, shape, .. }`, one of the two"
                    .into(),
            ))
        }
    };
    let line = RodLine {
        nodes: id,
        element_ids: &l.element_ids,
        path,
        elements: l.elements,
        order: l.order,
        orientation: v3("orientation", &l.orientation)?,
        section,
        lumped: lumped_mass("beam3d_line", id, l.mass.as_deref())?,
        last_node: l.last_node.as_deref(),
    };
    b.line_of_beam3d(&line).map_err(|mut e| {
        // The section's numbers sit on the `section = { .. }` line.
        if let Some(
            f @ ("ea" | "ga1" | "ga2" | "gj" | "ei1" | "ei2" | "rho_a" | "rho_i1" | "rho_i2"),
        ) = e.field
        {
            if e.what == "beam3d_line" {
                e.message = format!("section `{f}`: {}", e.message);
                e.field = Some("section");
            }
        }
        e
    })?;
    Ok(())
}

/// Adds a `[[joint]]`; distance and prismatic joints have their own helpers.
fn add_joint(b: &mut ModelBuilder, dim: usize, j: &JointSpec) -> Result<(), BuildError> {
    match j {
        JointSpec::GroundPin { id, point, ground } => {
            let g = match ground {
                Some(g) => g.clone(),
                None => initial_position(b, point).unwrap_or_default(),
            };
            b.ground_pin(id, &point_ref(point, dim), &g)
        }
        JointSpec::Revolute {
            id,
            a,
            b: pb,
            axis: None,
        } => b.revolute(id, &point_ref(a, dim), &point_ref(pb, dim)),
        JointSpec::Revolute {
            id,
            a,
            b: pb,
            axis: Some(h),
        } => exact3("joint", id, "axis", h).and_then(|axis| {
            b.joint3d(
                id,
                &point_ref(a, dim),
                &point_ref(pb, dim),
                Joint3d::Revolute { axis },
            )
        }),
        JointSpec::Spherical { id, a, b: pb } => b.joint3d(
            id,
            &point_ref(a, dim),
            &point_ref(pb, dim),
            Joint3d::Spherical,
        ),
        JointSpec::Fixed { id, a, b: pb } => {
            b.joint3d(id, &point_ref(a, dim), &point_ref(pb, dim), Joint3d::Fixed)
        }
        JointSpec::Universal {
            id,
            a,
            b: pb,
            axis_a,
            axis_b,
        } => exact3("joint", id, "axis_a", axis_a)
            .and_then(|axis_a| Ok((axis_a, exact3("joint", id, "axis_b", axis_b)?)))
            .and_then(|(axis_a, axis_b)| {
                b.joint3d(
                    id,
                    &point_ref(a, dim),
                    &point_ref(pb, dim),
                    Joint3d::Universal { axis_a, axis_b },
                )
            }),
        JointSpec::Cylindrical { id, a, b: pb, axis } => exact3("joint", id, "axis", axis)
            .and_then(|axis| {
                b.joint3d(
                    id,
                    &point_ref(a, dim),
                    &point_ref(pb, dim),
                    Joint3d::Cylindrical { axis },
                )
            }),
        JointSpec::Distance {
            id,
            a,
            b: pb,
            length,
            form,
        } => distance_joint(b, dim, id, [a, pb], *length, form.as_deref()),
        JointSpec::PointOnCircle {
            id,
            point,
            center,
            radius,
        } => b.point_on_circle(id, &point_ref(point, dim), center, *radius),
        JointSpec::Slope {
            id,
            node,
            body,
            direction,
        } => b.slope(id, node, body.as_deref(), direction.as_deref()),
        JointSpec::Slider {
            id,
            point,
            line,
            normal,
        } => b.slider(
            id,
            &point_ref(point, dim),
            &point_ref(line, dim),
            *normal,
            SliderKind::PointOnLine,
        ),
        JointSpec::Prismatic {
            id,
            point,
            line,
            normal,
            axis,
        } => prismatic_joint(b, dim, id, [point, line], *normal, axis.as_deref()),
        JointSpec::RollingDisk {
            id,
            body,
            radius,
            axis,
            height,
        } => exact3("joint", id, "axis", axis)
            .and_then(|axis| b.rolling_disk(id, body, *radius, axis, *height)),
        JointSpec::Path {
            id,
            point,
            curve,
            a,
            b: cb,
            amplitude,
            omega,
        } => path_curve(b, id, point, curve, [*a, *cb, *amplitude, *omega])
            .and_then(|c| b.path(id, &point_ref(point, dim), c)),
        JointSpec::Linear {
            id,
            coordinates,
            coefficients,
            constant,
        } => b.linear(id, coordinates, coefficients, *constant),
        JointSpec::Prescribed {
            id,
            coordinate,
            value,
            rate,
            amplitude,
            omega,
            phase,
        } => b.prescribed(id, coordinate, *value, [*rate, *amplitude, *omega, *phase]),
    }
}

/// A `[[joint]] type = "distance"`: `form` picks the length or the quadratic
/// constraint.
fn distance_joint(
    b: &mut ModelBuilder,
    dim: usize,
    id: &str,
    [a, pb]: [&PointSpec; 2],
    length: Option<f64>,
    form: Option<&str>,
) -> Result<(), BuildError> {
    let kind = match form {
        None | Some("length") => DistanceKind::Length,
        Some("quadratic") => DistanceKind::Quadratic,
        Some(other) => {
            return Err(BuildError {
                what: "joint",
                id: id.to_string(),
                field: Some("form"),
                message: format!("form must be \"length\" or \"quadratic\", got \"{other}\""),
            })
        }
    };
    b.distance(id, &point_ref(a, dim), &point_ref(pb, dim), length, kind)
}

/// A `[[joint]] type = "prismatic"`: planar with `normal`, 3-D with `axis`.
fn prismatic_joint(
    b: &mut ModelBuilder,
    dim: usize,
    id: &str,
    [point, line]: [&PointSpec; 2],
    normal: Option<[f64; 2]>,
    axis: Option<&[f64]>,
) -> Result<(), BuildError> {
    match (normal, axis) {
        (Some(normal), None) => b.slider(
            id,
            &point_ref(point, dim),
            &point_ref(line, dim),
            normal,
            SliderKind::Prismatic,
        ),
        (None, Some(axis)) => exact3("joint", id, "axis", axis).and_then(|axis| {
            b.joint3d(
                id,
                &point_ref(line, dim),
                &point_ref(point, dim),
                Joint3d::Prismatic { axis },
            )
        }),
        _ => Err(BuildError {
            what: "joint",
            id: id.to_string(),
            field: Some("normal"),
            message: "a prismatic joint needs `normal = [nx, ny]` (planar) or \
                      `axis = [x, y, z]` (3-D), not both"
                .into(),
        }),
    }
}

/// Adds a `[[load]]`: a point force, a torque or a linear force field.
fn add_load(b: &mut ModelBuilder, dim: usize, l: &LoadSpec) -> Result<(), BuildError> {
    match l {
        LoadSpec::PointForce {
            id,
            point,
            force,
            time,
        } => check_len(force, dim, "force")
            .map_err(|m| load_err(id, m))
            .and_then(|_| {
                b.point_load(
                    id,
                    "point_force",
                    &point_ref(point, dim),
                    [[0.0; 3]; 3],
                    vec3(force),
                    time.unwrap_or_default(),
                )
            }),
        LoadSpec::Torque {
            id,
            body,
            torque,
            frame,
            time,
        } => torque_load(b, dim, id, body, torque, frame.as_deref(), time),
        LoadSpec::LinearField {
            id,
            point,
            matrix,
            offset,
            time,
        } => {
            let mut a = [[0.0; 3]; 3];
            let shape_ok = matrix.len() == dim && matrix.iter().all(|r| r.len() == dim);
            let off = offset.clone().unwrap_or_else(|| vec![0.0; dim]);
            (if shape_ok {
                Ok(())
            } else {
                Err(format!("matrix must be {dim} x {dim} (field `matrix`)"))
            })
            .and_then(|_| check_len(&off, dim, "offset"))
            .map_err(|m| load_err(id, m))
            .and_then(|_| {
                for (r, row) in matrix.iter().enumerate() {
                    for (c, v) in row.iter().enumerate() {
                        a[r][c] = *v;
                    }
                }
                b.point_load(
                    id,
                    "linear_field",
                    &point_ref(point, dim),
                    a,
                    vec3(&off),
                    time.unwrap_or_default(),
                )
            })
        }
    }
}

/// Builds the model with the generator named in `[generator]`; entity tables
/// are refused next to it.
fn build_generated(
    spec: &ModelSpec,
    g: &toml::Spanned<Generator>,
    loc: &Locator<'_>,
) -> Result<ModelBuilder, ModelError> {
    let line = Some(loc.line_of(g.span().start));
    if !(spec.node.is_empty()
        && spec.body.is_empty()
        && spec.element.is_empty()
        && spec.line.is_empty()
        && spec.joint.is_empty()
        && spec.load.is_empty())
    {
        return Err(loc.error(
            line,
            "a model with a [generator] cannot also list nodes, bodies, elements, joints or loads"
                .into(),
        ));
    }
    let generator = g.get_ref();
    let dim = generator.dimension();
    if *spec.dimension.get_ref() != dim {
        return Err(loc.error(
            line,
            format!(
                "the {} generator builds a {dim}-D model: dimension = {dim}",
                generator.name()
            ),
        ));
    }
    generator
        .builder()
        .map_err(|e| loc.build_error(g.span(), e))
}

/// A `torque` load: a number on a planar body, a vector (spatial or in body
/// axes) on a 3-D body.
fn torque_load(
    b: &mut ModelBuilder,
    dim: usize,
    id: &str,
    body: &str,
    torque: &Numbers,
    frame: Option<&str>,
    time: &Option<TimeFunction>,
) -> Result<(), BuildError> {
    let time = time.unwrap_or_default();
    match (torque, frame) {
        (Numbers::One(t), None) if dim == 2 => b.torque(id, body, *t, time),
        (Numbers::Many(t), frame) if dim == 3 => {
            let t = exact3("load", id, "torque", t)?;
            let frame = match frame {
                None | Some("spatial") => TorqueFrame::Spatial,
                Some("body") => TorqueFrame::Body,
                Some(f) => {
                    return Err(load_field_err(
                        id,
                        "frame",
                        format!("unknown frame '{f}' (expected \"spatial\" or \"body\")"),
                    ))
                }
            };
            b.torque3d(id, body, t, frame, time)
        }
        _ if dim == 2 => Err(load_field_err(
            id,
            "torque",
            "a planar torque is a number (and takes no `frame`)".into(),
        )),
        _ => Err(load_field_err(
            id,
            "torque",
            "a 3-D torque is a vector [nx, ny, nz]".into(),
        )),
    }
}

fn load_err(id: &str, message: String) -> BuildError {
    BuildError {
        what: "load",
        id: id.to_string(),
        field: None,
        message,
    }
}

fn load_field_err(id: &str, field: &'static str, message: String) -> BuildError {
    BuildError {
        field: Some(field),
        ..load_err(id, message)
    }
}

/// A 3-vector from a model-file list, or an error naming `field`.
fn exact3(
    what: &'static str,
    id: &str,
    field: &'static str,
    x: &[f64],
) -> Result<[f64; 3], BuildError> {
    <[f64; 3]>::try_from(x).map_err(|_| BuildError {
        what,
        id: id.to_string(),
        field: Some(field),
        message: format!("expected 3 components, got {}", x.len()),
    })
}

/// Adds a `[[body]]`: planar in 2-D models, Euler parameters in 3-D models.
fn body(b: &mut ModelBuilder, s: &BodySpec) -> Result<(), BuildError> {
    let id = &s.id;
    let fail = |field: &'static str, message: String| BuildError {
        what: "body",
        id: id.clone(),
        field: Some(field),
        message,
    };
    if b.dim() == 2 {
        let (Numbers::One(inertia), Numbers::One(omega)) = (&s.inertia, &s.angular_velocity) else {
            return Err(fail(
                "inertia",
                "a planar body has a number for `inertia` and `angular_velocity`".into(),
            ));
        };
        if s.orientation.is_some() {
            return Err(fail(
                "orientation",
                "`orientation` is for 3-D bodies; use `angle`".into(),
            ));
        }
        if s.attitude.is_some() {
            return Err(fail("attitude", "`attitude` is for 3-D bodies".into()));
        }
        if s.kinetic_energy.is_some() {
            return Err(fail(
                "kinetic_energy",
                "`kinetic_energy` is for 3-D bodies in Euler parameters".into(),
            ));
        }
        let [x, y] = planar(&s.position, "position", &fail)?;
        let [vx, vy] = match &s.velocity {
            Some(v) => planar(v, "velocity", &fail)?,
            None => [0.0; 2],
        };
        let body = Body2d::new(s.mass, *inertia)
            .at(x, y, s.angle)
            .moving(vx, vy, *omega);
        return b.body2d(id, body);
    }
    if s.angle != 0.0 {
        return Err(fail(
            "angle",
            "a 3-D body takes `orientation` (Euler parameters), not `angle`".into(),
        ));
    }
    let inertia = match &s.inertia {
        Numbers::Many(j) if j.len() == 3 => [[j[0], 0.0, 0.0], [0.0, j[1], 0.0], [0.0, 0.0, j[2]]],
        Numbers::Many(j) if j.len() == 6 => {
            [[j[0], j[3], j[5]], [j[3], j[1], j[4]], [j[5], j[4], j[2]]]
        }
        _ => {
            return Err(fail(
                "inertia",
                "a 3-D body needs `inertia = [Jxx, Jyy, Jzz]` or `[Jxx, Jyy, Jzz, Jxy, Jyz, Jzx]`"
                    .into(),
            ))
        }
    };
    let angular_velocity = match &s.angular_velocity {
        Numbers::One(w) if *w == 0.0 => [0.0; 3],
        Numbers::Many(w) => exact3("body", id, "angular_velocity", w)?,
        Numbers::One(_) => {
            return Err(fail(
                "angular_velocity",
                "a 3-D body's angular velocity is a vector in body axes".into(),
            ))
        }
    };
    let orientation = match &s.orientation {
        None => [1.0, 0.0, 0.0, 0.0],
        Some(p) => <[f64; 4]>::try_from(&p[..]).map_err(|_| {
            fail(
                "orientation",
                format!("expected 4 Euler parameters, got {}", p.len()),
            )
        })?,
    };
    let attitude = match s.attitude.as_deref() {
        None => Attitude::EulerParameters,
        Some(name) => Attitude::from_name(name).ok_or_else(|| {
            fail(
                "attitude",
                format!("unknown attitude '{name}' (expected \"euler\" or \"directors\")"),
            )
        })?,
    };
    let kinetic = match s.kinetic_energy.as_deref() {
        None => EulerKinetic::default(),
        Some(name) => EulerKinetic::from_name(name).ok_or_else(|| {
            fail(
                "kinetic_energy",
                format!(
                    "unknown kinetic energy '{name}' (expected \"quadratic\" or \"scale_invariant\")"
                ),
            )
        })?,
    };
    let spec = Body3dSpec {
        position: exact3("body", id, "position", &s.position)?,
        orientation,
        attitude,
        kinetic,
        mass: s.mass,
        inertia,
        velocity: match &s.velocity {
            Some(v) => exact3("body", id, "velocity", v)?,
            None => [0.0; 3],
        },
        angular_velocity,
    };
    b.body3d(id, &spec)
}

/// The curve of a `path` joint from its keys `[a, b, amplitude, omega]`;
/// the parabola's `b` defaults to the value through the point's initial
/// position, the amplitude to 1.
fn path_curve(
    b: &ModelBuilder,
    id: &str,
    point: &PointSpec,
    curve: &str,
    [pa, pb, amplitude, omega]: [Option<f64>; 4],
) -> Result<Curve, BuildError> {
    let fail = |field: &'static str, message: String| BuildError {
        what: "joint",
        id: id.to_string(),
        field: Some(field),
        message,
    };
    let reject = |field: &'static str, given: Option<f64>, other: &str| match given {
        Some(_) => Err(fail(
            field,
            format!("`{field}` is a key of curve = \"{other}\", not of curve = \"{curve}\""),
        )),
        None => Ok(()),
    };
    match curve {
        "parabola" => {
            reject("amplitude", amplitude, "sine_squared")?;
            reject("omega", omega, "sine_squared")?;
            let a = pa.ok_or_else(|| {
                fail("a", "curve = \"parabola\" needs `a` (y = a x^2 + b)".into())
            })?;
            let cb = match pb {
                Some(v) => v,
                // A bad point is reported by the builder; any b does then.
                None => initial_position(b, point).map_or(0.0, |r| r[1] - a * r[0] * r[0]),
            };
            for (name, x) in [("a", a), ("b", cb)] {
                if !x.is_finite() {
                    return Err(fail(name, format!("`{name}` must be finite, got {x}")));
                }
            }
            Ok(Curve::Parabola { a, b: cb })
        }
        "sine_squared" => {
            reject("a", pa, "parabola")?;
            reject("b", pb, "parabola")?;
            let omega = omega.ok_or_else(|| {
                fail(
                    "omega",
                    "curve = \"sine_squared\" needs `omega` (y = amplitude sin^2(omega t))".into(),
                )
            })?;
            let amplitude = amplitude.unwrap_or(1.0);
            for (name, x) in [("amplitude", amplitude), ("omega", omega)] {
                if !x.is_finite() {
                    return Err(fail(name, format!("`{name}` must be finite, got {x}")));
                }
            }
            Ok(Curve::SineSquared { amplitude, omega })
        }
        other => Err(fail(
            "curve",
            format!("unknown curve '{other}' (expected \"parabola\" or \"sine_squared\")"),
        )),
    }
}

fn check_len(x: &[f64], dim: usize, field: &str) -> Result<(), String> {
    if x.len() == dim {
        Ok(())
    } else {
        Err(format!("`{field}` needs {dim} components, got {}", x.len()))
    }
}

fn initial_position(b: &ModelBuilder, p: &PointSpec) -> Option<Vec<f64>> {
    // The default ground point of a pin is where the point starts.
    match p {
        PointSpec::Id(id) => b.entity_position(id, [0.0; 3]),
        PointSpec::Body { body, offset } if offset.len() == b.dim() => b.entity_position(
            body,
            [offset[0], offset[1], offset.get(2).copied().unwrap_or(0.0)],
        ),
        _ => None,
    }
}

fn output_config(o: &OutputSpec) -> Result<OutputConfig, (&'static str, String)> {
    let mut c = OutputConfig::default();
    if let Some(f) = &o.fields {
        c.fields = f.clone();
    }
    c.interval = match (o.every, o.dt_out) {
        (Some(_), Some(_)) => {
            return Err(("every", "give either `every` or `dt_out`, not both".into()))
        }
        (Some(0), None) => return Err(("every", "`every` must be at least 1".into())),
        (Some(k), None) => OutputInterval::Steps(k),
        (None, Some(t)) if t > 0.0 && t.is_finite() => OutputInterval::Time(t),
        (None, Some(t)) => return Err(("dt_out", format!("`dt_out` must be positive, got {t}"))),
        (None, None) => OutputInterval::Steps(1),
    };
    if let Some(z) = o.compression {
        if z > 9 {
            return Err((
                "compression",
                format!("`compression` is a deflate level 0..=9, got {z}"),
            ));
        }
        c.compression = z;
    }
    if let Some(r) = o.chunk_rows {
        if r == 0 {
            return Err(("chunk_rows", "`chunk_rows` must be at least 1".into()));
        }
        c.chunk_rows = r;
    }
    if let Some(s) = o.flush_seconds {
        if s.is_nan() || s <= 0.0 {
            return Err((
                "flush_seconds",
                format!("`flush_seconds` must be positive, got {s}"),
            ));
        }
        c.flush_seconds = s;
    }
    if let Some(b) = o.max_bytes {
        if !(b > 0.0 && b.is_finite()) {
            return Err((
                "max_bytes",
                format!("`max_bytes` must be positive and finite, got {b}"),
            ));
        }
        c.max_bytes = b;
    }
    c.xdmf = o.xdmf;
    Ok(c)
}

impl ModelFile {
    /// The integrator configuration of the file with `overrides` (e.g. from the
    /// command line) applied; errors point at the `[integrator]` table.
    pub fn integrator(&self, overrides: &IntegratorSpec) -> Result<IntegratorConfig, ModelError> {
        let loc = Locator {
            file: &self.file,
            text: &self.text,
        };
        self.integrator
            .overridden_by(overrides)
            .resolve()
            .map_err(|e| {
                let (field, m) = (e.field, e.message);
                let line = self.integrator_line.map(|start| {
                    let from = self
                        .text
                        .lines()
                        .take(start - 1)
                        .map(|l| l.len() + 1)
                        .sum::<usize>();
                    loc.field_line(from..self.text.len(), Some(field))
                });
                loc.error(line, format!("[integrator] {m}"))
            })
    }
}

/// Builds a model from TOML `text` after applying the `--set` assignments
/// `sets` ([`apply_sets`]); `file` names it in messages (suffixed
/// ` (with --set)` when `sets` is not empty).
pub fn load_model_with_sets(
    text: &str,
    file: &str,
    sets: &[String],
) -> Result<ModelFile, ModelError> {
    if sets.is_empty() {
        return load_model_str(text, file);
    }
    let text = apply_sets(text, sets).map_err(|message| ModelError {
        file: file.to_string(),
        line: None,
        message,
    })?;
    load_model_str(&text, &format!("{file} (with --set)"))
}

/// Applies `KEY.PATH=VALUE` assignments (the CLI's `--set`) to a model file's
/// TOML text and returns the new text: `VALUE` is read as a TOML value
/// (`16`, `1e-5`, `"midpoint"`, `[0.0, 1.0]`), else as a string; missing
/// tables on the path are created. In an array of tables the key after the
/// array's name picks one entry by its `id` (or else by its index from 0).
/// Examples: `generator.elements=16`, `element.tsda.stiffness=10000`.
/// An `integrator.method` other than the file's replaces the file's method
/// with its settings: the file's `[integrator]` keys that the new method
/// does not take are dropped ([`IntegratorSpec::overridden_by`] for the
/// command line's flags); those set here stay and are refused.
pub fn apply_sets(text: &str, sets: &[String]) -> Result<String, String> {
    if sets.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc: toml::Table = toml::from_str(text).map_err(|e| e.message().trim().to_string())?;
    let method = |doc: &toml::Table| {
        let m = doc.get("integrator").and_then(|i| i.get("method"));
        m.and_then(toml::Value::as_str)
            .unwrap_or("gssss")
            .to_string()
    };
    let file_method = method(&doc);
    let mut set_keys = Vec::new();
    for set in sets {
        let (path, value) = set
            .split_once('=')
            .ok_or_else(|| format!("--set '{set}': expected KEY=VALUE"))?;
        let value: toml::Value = match toml::from_str::<toml::Table>(&format!("v = {value}")) {
            Ok(mut t) => t.remove("v").expect("parsed key"),
            Err(_) => toml::Value::String(value.to_string()),
        };
        let keys: Vec<&str> = path.trim().split('.').collect();
        if keys.iter().any(|k| k.is_empty()) {
            return Err(format!("--set '{set}': empty key in '{path}'"));
        }
        let last = keys.len() - 1;
        let mut table = &mut doc;
        let mut i = 0;
        while i < last {
            let k = keys[i];
            let entry = table
                .entry(k.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            table = match entry {
                // An array of tables (`[[element]]`, ...): the next key names
                // one entry by its `id`, or else by its index from 0.
                toml::Value::Array(items) => {
                    i += 1;
                    if i == last {
                        return Err(format!(
                            "--set '{set}': '{k}' is a list; name an entry by its id or index \
                             and then a field, e.g. '{k}.ID.FIELD=VALUE'"
                        ));
                    }
                    let sel = keys[i];
                    let by_id = items
                        .iter()
                        .position(|v| v.get("id").and_then(toml::Value::as_str) == Some(sel));
                    let at = by_id
                        .or_else(|| sel.parse::<usize>().ok().filter(|&n| n < items.len()))
                        .ok_or_else(|| {
                            format!(
                                "--set '{set}': '{k}' has no entry with the id '{sel}' \
                                 (entries are named by id, or by index from 0; it has {})",
                                items.len()
                            )
                        })?;
                    items[at]
                        .as_table_mut()
                        .ok_or_else(|| format!("--set '{set}': '{k}.{sel}' is not a table"))?
                }
                other => other
                    .as_table_mut()
                    .ok_or_else(|| format!("--set '{set}': '{k}' is not a table"))?,
            };
            i += 1;
        }
        table.insert(keys[last].to_string(), value);
        if let ["integrator", key] = keys[..] {
            set_keys.push(key.to_string());
        }
    }
    let new_method = method(&doc);
    if set_keys.iter().any(|k| k == "method") && new_method != file_method {
        if let Some(toml::Value::Table(table)) = doc.get_mut("integrator") {
            let text_of = |k: &str| table.get(k).and_then(toml::Value::as_str).map(String::from);
            let (control, tableau) = (text_of("step_control"), text_of("tableau"));
            let dropped: Vec<String> = table
                .keys()
                .filter(|k| {
                    is_key(k)
                        && !set_keys.contains(k)
                        && !takes(&new_method, control.as_deref(), tableau.as_deref(), k)
                })
                .cloned()
                .collect();
            for k in dropped {
                table.remove(&k);
            }
        }
    }
    toml::to_string(&doc).map_err(|e| e.to_string())
}

/// A planar body's 2-vector `field`.
fn planar(
    x: &[f64],
    field: &'static str,
    fail: &dyn Fn(&'static str, String) -> BuildError,
) -> Result<[f64; 2], BuildError> {
    match x {
        [a, b] => Ok([*a, *b]),
        _ => Err(fail(
            field,
            format!("expected 2 components, got {}", x.len()),
        )),
    }
}
