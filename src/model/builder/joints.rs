//! Joints between points of entities: pins, revolutes, distances, sliders,
//! paths, prescribed motions and linear combinations.

use crate::joint::{
    Coincident, Curve, Distance, DistanceForm, LinearCombination, Motion, PathJoint, Point,
    Prescribed, Slider,
};

use crate::kinematics::point::PointPair;

use super::{err, finite, named, nonzero, BuildError, ModelBuilder, PointRef, Positive};

/// Which function of a distance joint's length [`ModelBuilder::distance`] constrains.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DistanceKind {
    /// |d| - L (the default).
    #[default]
    Length,
    /// (|d|^2 - L^2) / 2: no square root, the same solution.
    Quadratic,
}

/// What a planar slider ([`ModelBuilder::slider`]) leaves free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SliderKind {
    /// The point stays on the line; the bodies rotate freely (the
    /// model file's `type = "slider"`; the default).
    #[default]
    PointOnLine,
    /// The point stays on the line and the relative rotation is locked
    /// (`type = "prismatic"`).
    Prismatic,
}

impl ModelBuilder {
    /// Keeps `point` on the line through `line` (a ground point or a body
    /// point) with unit `normal` in the line body's frame;
    /// [`SliderKind::Prismatic`] also locks the relative rotation at its
    /// initial value.
    pub fn slider(
        &mut self,
        id: &str,
        point: &PointRef,
        line: &PointRef,
        normal: [f64; 2],
        kind: SliderKind,
    ) -> Result<(), BuildError> {
        let prismatic = kind == SliderKind::Prismatic;
        self.need_dimension(2, "joint", id, "sliders are planar: use dimension = 2")?;
        let (pair, dofs) = self.pair("joint", id, line, point, ["line", "point"])?;
        finite("joint", id, "normal", &normal)?;
        nonzero(
            "joint",
            id,
            "normal",
            &normal,
            "the normal must not be zero",
        )?;
        let lock = if prismatic {
            let theta = |p: &crate::kinematics::point::Point, at: usize| {
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
        self.need_dimension(2, "joint", id, "path joints are planar: use dimension = 2")?;
        let (p, dofs) = self.moving_point(
            "joint",
            id,
            point,
            "a path joint needs a node or a body point, not a ground point",
        )?;
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

    /// The pair of the fixed position `at` (the joint's field `field`) and
    /// `point`, with the point's DOFs.
    fn ground_pair(
        &self,
        id: &str,
        field: &'static str,
        at: &[f64],
        point: &PointRef,
    ) -> Result<(PointPair, Vec<usize>), BuildError> {
        let g = self.vector("joint", id, field, at, self.dim)?;
        self.pair("joint", id, &PointRef::Ground(g), point, [field, "point"])
    }

    /// Holds point `b` at the ground position `ground` (a ground pin).
    pub fn ground_pin(
        &mut self,
        id: &str,
        point: &PointRef,
        ground: &[f64],
    ) -> Result<(), BuildError> {
        let (pair, dofs) = self.ground_pair(id, "ground", ground, point)?;
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

    /// Keeps the distance between two points: [`DistanceKind::Length`]
    /// gives |d| - L, [`DistanceKind::Quadratic`] (|d|^2 - L^2)/2. L defaults
    /// to the initial distance.
    pub fn distance(
        &mut self,
        id: &str,
        a: &PointRef,
        b: &PointRef,
        length: Option<f64>,
        form: DistanceKind,
    ) -> Result<(), BuildError> {
        let (pair, dofs) = self.pair("joint", id, a, b, ["a", "b"])?;
        let l = length.unwrap_or_else(|| self.initial_separation(&pair, &dofs));
        named(Positive, "joint", id, "length", "length", l)?;
        self.claim_id("joint", id)?;
        let form = match form {
            DistanceKind::Length => DistanceForm::Length(l),
            DistanceKind::Quadratic => DistanceForm::Quadratic(l),
        };
        let j = Distance::new("distance", pair, form);
        self.joints.push(id, j, &dofs);
        Ok(())
    }

    /// Keeps a point on a circle: Phi = R^2 - |r - c|^2 (Hoitink eq. A.2).
    pub fn point_on_circle(
        &mut self,
        id: &str,
        point: &PointRef,
        center: &[f64],
        radius: Option<f64>,
    ) -> Result<(), BuildError> {
        let (pair, dofs) = self.ground_pair(id, "center", center, point)?;
        let r = radius.unwrap_or_else(|| self.initial_separation(&pair, &dofs));
        named(Positive, "joint", id, "radius", "radius", r)?;
        self.claim_id("joint", id)?;
        let j = Distance::new("point_on_circle", pair, DistanceForm::Circle(r));
        self.joints.push(id, j, &dofs);
        Ok(())
    }
}
