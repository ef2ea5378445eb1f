//! Measures of a state that the assembler evaluates and the recorders
//! store: energies and constraint residual norms.

/// Kinetic, potential and total energy and the work of external loads.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Energy {
    /// 1/2 v^T M v.
    pub kinetic: f64,
    /// Elastic plus gravity potential.
    pub potential: f64,
    /// kinetic + potential.
    pub total: f64,
    /// Accumulated work of the non-conservative forces (loads other than gravity, dampers) since t = 0.
    pub external_work: f64,
}

/// Max-norms of the constraint residuals at position, velocity and acceleration level.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ConstraintNorms {
    /// max |Phi(u, t)|.
    pub position: f64,
    /// max |B v + Phi_t|.
    pub velocity: f64,
    /// max |B a + (B v)_u v + 2 Phi_tu v + Phi_tt|.
    pub acceleration: f64,
}
