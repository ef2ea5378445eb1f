//! Explicit Runge–Kutta tableaux as data (Butcher arrays), with the
//! embedded error estimate and the dense output where a method has them.

/// An explicit Runge–Kutta method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tableau {
    /// Name in the model file (`dopri5`, `rk4`, `heun`).
    pub name: &'static str,
    /// Order of the propagated solution.
    pub order: u32,
    /// Stages of one step (without the FSAL stage).
    pub stages: usize,
    /// Nodes c_i.
    pub c: &'static [f64],
    /// Coefficients a_ij, row i has i entries (strictly lower triangular).
    pub a: &'static [&'static [f64]],
    /// Weights b_i.
    pub b: &'static [f64],
    /// Embedded error weights `e = b - b^` over the stages and the stage at
    /// the end of the step (FSAL), if the method has an embedded pair.
    pub error: Option<&'static [f64]>,
    /// Order of the error estimate's lower-order solution.
    pub embedded_order: u32,
    /// Dense-output coefficients d_i of Dormand–Prince's continuous
    /// extension (Hairer, Nørsett & Wanner I, §II.6, `contd5`), over the
    /// stages and the end stage; `None`: cubic Hermite interpolation.
    pub dense: Option<&'static [f64]>,
}

impl Tableau {
    /// The tableau called `name`.
    pub fn by_name(name: &str) -> Option<Tableau> {
        [DOPRI5, RK4, HEUN].into_iter().find(|t| t.name == name)
    }

    /// Whether the method estimates its local error.
    pub fn is_embedded(&self) -> bool {
        self.error.is_some()
    }
}

/// Dormand–Prince 5(4) (Hairer, Nørsett & Wanner I, Table II.5.2; Chin eq. 4.9).
pub const DOPRI5: Tableau = Tableau {
    name: "dopri5",
    order: 5,
    stages: 6,
    c: &[0.0, 0.2, 0.3, 0.8, 8.0 / 9.0, 1.0],
    a: &[
        &[],
        &[0.2],
        &[3.0 / 40.0, 9.0 / 40.0],
        &[44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0],
        &[
            19372.0 / 6561.0,
            -25360.0 / 2187.0,
            64448.0 / 6561.0,
            -212.0 / 729.0,
        ],
        &[
            9017.0 / 3168.0,
            -355.0 / 33.0,
            46732.0 / 5247.0,
            49.0 / 176.0,
            -5103.0 / 18656.0,
        ],
    ],
    b: &[
        35.0 / 384.0,
        0.0,
        500.0 / 1113.0,
        125.0 / 192.0,
        -2187.0 / 6784.0,
        11.0 / 84.0,
    ],
    error: Some(&[
        71.0 / 57600.0,
        0.0,
        -71.0 / 16695.0,
        71.0 / 1920.0,
        -17253.0 / 339200.0,
        22.0 / 525.0,
        -1.0 / 40.0,
    ]),
    embedded_order: 4,
    dense: Some(&[
        -12715105075.0 / 11282082432.0,
        0.0,
        87487479700.0 / 32700410799.0,
        -10690763975.0 / 1880347072.0,
        701980252875.0 / 199316789632.0,
        -1453857185.0 / 822651844.0,
        69997945.0 / 29380423.0,
    ]),
};

/// The classical fourth-order method.
pub const RK4: Tableau = Tableau {
    name: "rk4",
    order: 4,
    stages: 4,
    c: &[0.0, 0.5, 0.5, 1.0],
    a: &[&[], &[0.5], &[0.0, 0.5], &[0.0, 0.0, 1.0]],
    b: &[1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0],
    error: None,
    embedded_order: 0,
    dense: None,
};

/// Heun's second-order method (explicit trapezoidal rule; Chin Table 3.1).
pub const HEUN: Tableau = Tableau {
    name: "heun",
    order: 2,
    stages: 2,
    c: &[0.0, 1.0],
    a: &[&[], &[1.0]],
    b: &[0.5, 0.5],
    error: None,
    embedded_order: 0,
    dense: None,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Row sums equal the nodes and the weights sum to one; the error
    /// weights sum to zero.
    #[test]
    fn consistency() {
        for t in [DOPRI5, RK4, HEUN] {
            for (i, row) in t.a.iter().enumerate() {
                let s: f64 = row.iter().sum();
                assert!((s - t.c[i]).abs() < 1e-15, "{} row {i}", t.name);
            }
            assert!((t.b.iter().sum::<f64>() - 1.0).abs() < 1e-15, "{}", t.name);
            if let Some(e) = t.error {
                assert!(e.iter().sum::<f64>().abs() < 1e-15, "{}", t.name);
            }
        }
    }
}
