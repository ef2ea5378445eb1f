//! Prescribed motion of one coordinate (a rheonomic constraint, Haug 1989
//! §3.5 "driving constraints"): `Phi = q - f(t)` with
//! `f(t) = value + rate t + amplitude sin(omega t + phase)`, so that
//! `Phi_t = -f'(t)`, `Phi_tt = -f''(t)`, `B = 1` and no curvature.

use super::Joint;

/// `f(t) = value + rate t + amplitude sin(omega t + phase)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Motion {
    /// Constant part.
    pub value: f64,
    /// Constant rate.
    pub rate: f64,
    /// Amplitude of the harmonic part.
    pub amplitude: f64,
    /// Angular frequency of the harmonic part.
    pub omega: f64,
    /// Phase of the harmonic part.
    pub phase: f64,
}

impl Motion {
    /// (f, f', f'') at t.
    pub fn eval(&self, t: f64) -> (f64, f64, f64) {
        let (s, c) = (self.omega * t + self.phase).sin_cos();
        let a = self.amplitude;
        (
            self.value + self.rate * t + a * s,
            self.rate + a * self.omega * c,
            -a * self.omega * self.omega * s,
        )
    }
}

/// One coordinate driven along a [`Motion`].
#[derive(Debug, Clone)]
pub struct Prescribed {
    motion: Motion,
}

impl Prescribed {
    /// Drives the joint's single local DOF along `motion`.
    pub fn new(motion: Motion) -> Self {
        Prescribed { motion }
    }
}

impl Joint for Prescribed {
    fn kind(&self) -> &'static str {
        "prescribed"
    }

    fn rows(&self) -> usize {
        1
    }

    fn ndof(&self) -> usize {
        1
    }

    fn phi(&self, u: &[f64], t: f64, phi: &mut [f64]) {
        phi[0] = u[0] - self.motion.eval(t).0;
    }

    fn jacobian(&self, _u: &[f64], _t: f64, b: &mut [f64]) {
        b[0] = 1.0;
    }

    fn add_curvature(&self, _u: &[f64], _t: f64, _w: &[f64], _scale: f64, _h: &mut [f64]) {}

    fn is_rheonomic(&self) -> bool {
        true
    }

    fn phi_t(&self, _u: &[f64], t: f64, out: &mut [f64]) {
        out[0] = -self.motion.eval(t).1;
    }

    fn phi_tt(&self, _u: &[f64], _v: &[f64], t: f64, out: &mut [f64]) {
        out[0] = -self.motion.eval(t).2;
    }
}
