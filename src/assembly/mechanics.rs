//! The problem object: a model with its assembled operators, as the
//! methods see it (issue #24, item 3).
//!
//! [`Mechanics`] is what every integrator, the statics and modal analyses,
//! the projections and the run loop hold. It evaluates the neutral operators
//! of the constrained equations of motion `M(u) a + P(u) + B(u)^T lambda =
//! F(t)`, `Phi(u, t) = 0` (forces and tangents in `forces.rs`, constraint
//! rows and joint terms in `constraints.rs`, composed systems in
//! `systems.rs`, measures in `measures.rs`) and answers what a method asks
//! of the problem: its sizes, its capabilities (configuration-dependent
//! inertia, dampers, loads, velocity-level or rheonomic joints), the names
//! of its unknowns and its initial configuration. A method never reads the
//! model's fields itself.
//!
//! The value-only parts of the [`Assembler`] (pattern, mass matrix, gravity
//! load, slot scatters) are reached through `Deref`: a `Mechanics` is the
//! assembler with the model it was built for.

use std::ops::Deref;

use crate::joint::ConstraintLevel;
use crate::model::Model;

use super::Assembler;

/// A model and its assembler: the problem every method solves.
#[derive(Clone, Copy)]
pub struct Mechanics<'a> {
    pub(super) model: &'a Model,
    pub(super) asm: &'a Assembler,
}

impl<'a> Mechanics<'a> {
    /// The problem of `model` with its assembler `asm`
    /// (built by [`Assembler::new`] from the same model).
    pub fn new(model: &'a Model, asm: &'a Assembler) -> Self {
        debug_assert_eq!(asm.n_dofs(), model.n_dofs());
        debug_assert_eq!(asm.n_constraints(), model.n_constraints());
        Mechanics { model, asm }
    }

    /// The model (for output and front ends; methods ask the questions below).
    pub fn model(&self) -> &'a Model {
        self.model
    }

    /// The assembler.
    pub fn assembler(&self) -> &'a Assembler {
        self.asm
    }

    /// The initial positions `u0`.
    pub fn initial_positions(&self) -> &'a [f64] {
        &self.model.u0
    }

    /// The initial velocities `v0`.
    pub fn initial_velocities(&self) -> &'a [f64] {
        &self.model.v0
    }

    /// Whether an element has configuration-dependent inertia `M(u)` (3-D
    /// bodies in Euler parameters or directors): the mass matrix is then not
    /// the constant [`Assembler::mass_matrix`] alone.
    pub fn has_configuration_inertia(&self) -> bool {
        self.model.elements.iter().any(|b| b.has_inertia())
    }

    /// Whether an element is a damper (rate-dependent dissipative force).
    pub fn has_dampers(&self) -> bool {
        self.model.elements.iter().any(|b| b.is_dissipative())
    }

    /// Whether the model has elements at all.
    pub fn has_elements(&self) -> bool {
        !self.model.elements.is_empty()
    }

    /// Whether the model has external loads other than gravity.
    pub fn has_loads(&self) -> bool {
        !self.model.loads.is_empty()
    }

    /// Whether forces other than gravity and the elastic ones do work
    /// (loads or dampers): a method then accounts for their work.
    pub fn has_nonconservative_forces(&self) -> bool {
        self.has_loads() || self.has_dampers()
    }

    /// Whether any joint depends on time explicitly (prescribed motion).
    pub fn has_rheonomic_joints(&self) -> bool {
        self.model.has_rheonomic_joints()
    }

    /// The name of the first velocity-level (nonholonomic) joint, if any.
    pub fn velocity_joint(&self) -> Option<&'a str> {
        self.model.velocity_joints().next()
    }

    /// The first velocity-level (nonholonomic) multiplier row, if any.
    pub fn first_velocity_row(&self) -> Option<usize> {
        self.model
            .constraint_levels()
            .iter()
            .position(|l| *l == ConstraintLevel::Velocity)
    }

    /// The name of DOF `i`.
    pub fn dof_name(&self, i: usize) -> &'a str {
        self.model.dofs.name(i)
    }

    /// The names of the DOFs, in order.
    pub fn dof_names(&self) -> &'a [String] {
        self.model.dofs.names()
    }

    /// The joint (name, kind, row within the joint) of multiplier row `row`.
    pub fn constraint_owner(&self, row: usize) -> Option<(&'a str, &'static str, usize)> {
        self.model.constraint_owner(row)
    }
}

impl Deref for Mechanics<'_> {
    type Target = Assembler;

    fn deref(&self) -> &Assembler {
        self.asm
    }
}
