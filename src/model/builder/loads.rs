//! Loads: point forces, body torques (planar and spatial) and gravity.

use crate::kinematics::point::Point;
use crate::load::{BodyTorque, Load, PointLoad, TimeFunction, TorqueFrame};
use crate::model::LoadEntry;

use super::{err, finite, BuildError, Entity, ModelBuilder, PointRef};

impl ModelBuilder {
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
        let theta = self.body_entity("load", id, body, "planar rigid body", |e| match e {
            Entity::Body2(d) => Some(d[2]),
            _ => None,
        })?;
        finite("load", id, "torque", &[torque])?;
        check_time(id, &time)?;
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
        let (dofs, attitude) =
            self.body_entity("load", id, body, "3-D rigid body", |e| match e {
                Entity::Body3(d, att) => Some((d[3..].to_vec(), *att)),
                _ => None,
            })?;
        finite("load", id, "torque", &torque)?;
        check_time(id, &time)?;
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

    /// Applies the constant force `force` (`dim` components) at `point`:
    /// what a model file's `point_force` load without `time` does.
    pub fn point_force(
        &mut self,
        id: &str,
        point: &PointRef,
        force: &[f64],
    ) -> Result<(), BuildError> {
        let f = self.vector("load", id, "force", force, self.dim)?;
        self.point_load(
            id,
            "point_force",
            point,
            [[0.0; 3]; 3],
            f,
            TimeFunction::default(),
        )
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
        let (p, dofs) =
            self.moving_point("load", id, point, "a load on a ground point does nothing")?;
        finite("load", id, "matrix", matrix.as_flattened())?;
        finite("load", id, "force", &offset)?;
        check_time(id, &time)?;
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
}

/// [`TimeFunction::check`] as an error of load `id`, field `time`.
fn check_time(id: &str, time: &TimeFunction) -> Result<(), BuildError> {
    time.check().map_err(|m| err("load", id, Some("time"), m))
}
