//! A linear combination of coordinates held constant:
//! `Phi = sum_i c_i q_i - c0` (one row; Chin Remark 4.4's
//! `theta1 + theta2 - pi = 0`). `B = (c_1, ..., c_k)`, no curvature, scleronomic.

use super::Joint;

/// `sum_i c_i q_i - c0 = 0` over the joint's local DOFs.
#[derive(Debug, Clone)]
pub struct LinearCombination {
    coefficients: Vec<f64>,
    constant: f64,
}

impl LinearCombination {
    /// `coefficients[i]` multiplies local DOF i; `constant` is c0.
    pub fn new(coefficients: Vec<f64>, constant: f64) -> Self {
        LinearCombination {
            coefficients,
            constant,
        }
    }
}

impl Joint for LinearCombination {
    fn kind(&self) -> &'static str {
        "linear"
    }

    fn rows(&self) -> usize {
        1
    }

    fn ndof(&self) -> usize {
        self.coefficients.len()
    }

    fn phi(&self, u: &[f64], _t: f64, phi: &mut [f64]) {
        phi[0] = self
            .coefficients
            .iter()
            .zip(u)
            .map(|(c, q)| c * q)
            .sum::<f64>()
            - self.constant;
    }

    fn jacobian(&self, _u: &[f64], _t: f64, b: &mut [f64]) {
        b[..self.coefficients.len()].copy_from_slice(&self.coefficients);
    }

    fn add_curvature(&self, _u: &[f64], _t: f64, _w: &[f64], _scale: f64, _h: &mut [f64]) {}
}
