//! The mechanism: DOFs, inertia, elements, joints, loads and initial state.
//!
//! A [`Model`] is built either from a model file ([`crate::input::load_model_file`], schema
//! in `docs/model-format.md`) or in Rust code with [`ModelBuilder`]. Both paths
//! validate references and values and report errors naming the entity.

mod builder;
mod dof;
mod generate;
mod probe;

pub use builder::{BeamSection, DistanceKind, LineIds, Shape, SliderKind, TrussSection};
pub use builder::{
    Body2d, Body3dSpec, BuildError, Joint3d, ModelBuilder, PointRef, ProbeTarget,
    RotationalSpringDamper, SpringDamper,
};
pub use builder::{RodLine, RodPath, RodShape};
pub use dof::{DofKind, DofMap};
pub use generate::{
    hanging_beam, hanging_truss_chain, rigid_chain, slider_crank_flexible,
    slider_crank_flexible_builder, space_truss_lattice, truss_lattice, Generator,
    SliderCrankParams, MAX_GENERATED_DOFS,
};
pub use probe::{pair_points, EnergyTerm, Probe, ProbeKind, ProbePoint, ResidualLevel};
pub use probe::{SectionPoint, SECTION_COMPONENTS};

use crate::element::ElementSet;
use crate::joint::{ConstraintLevel, JointSet};
use crate::load::Load;

/// A load with its name and global DOFs.
#[derive(Clone)]
pub struct LoadEntry {
    /// Load name.
    pub name: String,
    /// The load.
    pub load: Load,
    /// Global DOFs of the load (its point's owner, or a body's rotation coordinates).
    pub dofs: Vec<usize>,
}

/// An assembled mechanism description, ready for the assembler.
#[derive(Clone)]
pub struct Model {
    /// Spatial dimension (2 or 3).
    pub dim: usize,
    /// Global DOF numbering and labels.
    pub dofs: DofMap,
    /// Lumped inertia of nodes and rigid bodies as (row, col, value) triplets.
    pub inertia: Vec<(usize, usize, f64)>,
    /// Element blocks.
    pub elements: Vec<Box<dyn ElementSet>>,
    /// Joint blocks; multiplier rows are numbered block by block.
    pub joints: Vec<Box<dyn JointSet>>,
    /// External loads other than gravity.
    pub loads: Vec<LoadEntry>,
    /// Gravitational acceleration vector.
    pub gravity: [f64; 3],
    /// Initial positions.
    pub u0: Vec<f64>,
    /// Initial velocities.
    pub v0: Vec<f64>,
    /// Probes recorded with every step.
    pub probes: Vec<Probe>,
}

impl Model {
    /// Number of DOFs.
    pub fn n_dofs(&self) -> usize {
        self.dofs.len()
    }

    /// Number of constraint rows (multipliers).
    pub fn n_constraints(&self) -> usize {
        self.joints.iter().map(|b| b.len() * b.rows()).sum()
    }

    /// Number of elements.
    pub fn n_elements(&self) -> usize {
        self.elements.iter().map(|b| b.len()).sum()
    }

    /// Number of joints.
    pub fn n_joints(&self) -> usize {
        self.joints.iter().map(|b| b.len()).sum()
    }

    /// One label per multiplier: `<joint>[<row>]`.
    pub fn multiplier_names(&self) -> Vec<String> {
        let mut names = Vec::with_capacity(self.n_constraints());
        for b in &self.joints {
            for i in 0..b.len() {
                for r in 0..b.rows() {
                    names.push(format!("{}[{r}]", b.name(i)));
                }
            }
        }
        names
    }

    /// The level of every multiplier row, numbered as the multipliers
    /// ([`ConstraintLevel::Velocity`] for the rows of velocity-level joints,
    /// whose `Phi` is zero): a post-stabilization projects positions with
    /// the position rows only.
    pub fn constraint_levels(&self) -> Vec<ConstraintLevel> {
        let mut levels = Vec::with_capacity(self.n_constraints());
        for b in &self.joints {
            for i in 0..b.len() {
                levels.extend(std::iter::repeat_n(b.level(i), b.rows()));
            }
        }
        levels
    }

    /// Whether any joint depends on time explicitly (its constraint force
    /// does work, [`crate::assembly::Mechanics::constraint_power`]).
    pub fn has_rheonomic_joints(&self) -> bool {
        self.joints
            .iter()
            .any(|b| (0..b.len()).any(|i| b.is_rheonomic(i)))
    }

    /// Whether any joint has velocity-level (nonholonomic) rows.
    pub fn has_velocity_constraints(&self) -> bool {
        self.velocity_joints().next().is_some()
    }

    /// Names of the velocity-level joints, in multiplier order.
    pub fn velocity_joints(&self) -> impl Iterator<Item = &str> + '_ {
        self.joints.iter().flat_map(|b| {
            (0..b.len())
                .filter(move |&i| b.level(i) == ConstraintLevel::Velocity)
                .map(move |i| b.name(i))
        })
    }

    /// The joint (name, kind, row within the joint) of multiplier row `row`.
    pub fn constraint_owner(&self, row: usize) -> Option<(&str, &'static str, usize)> {
        let mut first = 0;
        for b in &self.joints {
            let size = b.len() * b.rows();
            if row < first + size {
                let k = row - first;
                let i = k / b.rows();
                return Some((b.name(i), b.kind(i), k % b.rows()));
            }
            first += size;
        }
        None
    }
}
