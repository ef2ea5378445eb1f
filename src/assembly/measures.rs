//! Measures of a state that the assembler evaluates and the recorders
//! store: energies and constraint residual norms, and the work of the
//! non-conservative forces.

use crate::element::{gather, MAX_LOCAL_DOFS};
use crate::joint::{ConstraintLevel, MAX_ROWS};
use crate::load::TimeFunction;

use super::colour::ordered_sum;
use super::{gathered_dot, Mechanics};
use crate::linalg::dot;

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

impl Mechanics<'_> {
    /// Work over a step of the non-conservative forces: external loads
    /// (gravity excluded) at positions `u`, each scaled by `factor(time
    /// function)`, `F . du`, and dampers, `-F_d(u, v) . du`. With the state
    /// and time factors of a midpoint step this is the exact energy
    /// bookkeeping of the midpoint schemes.
    pub fn nonconservative_work(
        &self,
        u: &[f64],
        v: &[f64],
        du: &[f64],
        factor: &dyn Fn(&TimeFunction) -> f64,
    ) -> f64 {
        let model = self.model;
        let mut fl = [0.0; MAX_LOCAL_DOFS];
        let mut ql = [0.0; MAX_LOCAL_DOFS];
        let mut work = 0.0;
        for l in &model.loads {
            let k = l.dofs.len();
            gather(u, &l.dofs, &mut ql[..k]);
            l.load
                .force(&ql[..k], factor(l.load.time()), &mut fl[..k], None);
            work += gathered_dot(&fl[..k], &l.dofs, du);
        }
        if model.elements.iter().any(|b| b.is_dissipative()) {
            work -= self.damper_work(u, v, du);
        }
        work
    }

    /// `F_d(u~, v~) . du` summed over the dampers.
    fn damper_work(&self, u_tilde: &[f64], v_tilde: &[f64], du: &[f64]) -> f64 {
        let model = self.model;
        let mut fl = [0.0; MAX_LOCAL_DOFS];
        let mut kl = [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS];
        let mut cl = [0.0; MAX_LOCAL_DOFS * MAX_LOCAL_DOFS];
        let mut work = 0.0;
        for b in model.elements.iter().filter(|b| b.is_dissipative()) {
            let n = b.ndof();
            for i in 0..b.len() {
                b.damping_force(
                    i,
                    u_tilde,
                    v_tilde,
                    &mut fl[..n],
                    &mut kl[..n * n],
                    &mut cl[..n * n],
                );
                work += gathered_dot(&fl[..n], b.dofs(i), du);
            }
        }
        work
    }

    /// Kinetic and potential energy (elastic + gravity) at (u, v); external work is 0.
    pub fn energy(&self, u: &[f64], v: &[f64]) -> Energy {
        let model = self.model;
        let kinetic = 0.5
            * self
                .mass
                .outer_iterator()
                .enumerate()
                .map(|(c, col)| v[c] * col.iter().map(|(r, m)| m * v[r]).sum::<f64>())
                .sum::<f64>()
            + model
                .elements
                .iter()
                .filter(|b| b.has_inertia())
                .map(|b| ordered_sum(b.len(), &|i| b.kinetic_energy(i, u, v)))
                .sum::<f64>();
        // Fixed-order sums over each block (the same on any number of threads).
        let elastic: f64 = model
            .elements
            .iter()
            .map(|b| ordered_sum(b.len(), &|i| b.potential(i, u)))
            .sum();
        let potential = elastic - dot(&self.gravity_force, u);
        Energy {
            kinetic,
            potential,
            total: kinetic + potential,
            external_work: 0.0,
        }
    }

    /// Max-norms of Phi, B v + Phi_t and B a + (B v)_u v + Phi_tt + 2 Phi_tu v.
    /// The position norm takes the position-level rows only; the rows of
    /// velocity-level joints (`A v + a_t`, `A a + (A v)_u v + a_t,u v + a_t,t`)
    /// enter the velocity and acceleration norms.
    pub fn constraint_norms(&self, u: &[f64], v: &[f64], a: &[f64], t: f64) -> ConstraintNorms {
        let model = self.model;
        let mut out = ConstraintNorms::default();
        let mut phi = [0.0; MAX_ROWS];
        let mut pt = [0.0; MAX_ROWS];
        let mut ptt = [0.0; MAX_ROWS];
        let mut bl = [0.0; MAX_ROWS * MAX_LOCAL_DOFS];
        let mut vl = [0.0; MAX_LOCAL_DOFS];
        let mut al = [0.0; MAX_LOCAL_DOFS];
        for blk in &model.joints {
            let (rows, k) = (blk.rows(), blk.ndof());
            for i in 0..blk.len() {
                let position = blk.level(i) == ConstraintLevel::Position;
                blk.phi(i, u, t, &mut phi[..rows]);
                blk.phi_t(i, u, t, &mut pt[..rows]);
                blk.phi_tt(i, u, v, t, &mut ptt[..rows]);
                blk.jacobian(i, u, t, &mut bl[..rows * k]);
                gather(v, blk.dofs(i), &mut vl[..k]);
                gather(a, blk.dofs(i), &mut al[..k]);
                let mut gamma = [0.0; MAX_ROWS];
                blk.velocity_curvature(i, u, v, t, &mut gamma[..rows]);
                for r in 0..rows {
                    let row = &bl[r * k..(r + 1) * k];
                    let bv: f64 = row.iter().zip(&vl[..k]).map(|(b, x)| b * x).sum();
                    let ba: f64 = row.iter().zip(&al[..k]).map(|(b, x)| b * x).sum();
                    if position {
                        out.position = out.position.max(phi[r].abs());
                    }
                    out.velocity = out.velocity.max((bv + pt[r]).abs());
                    out.acceleration = out.acceleration.max((ba + gamma[r] + ptt[r]).abs());
                }
            }
        }
        out
    }
}
