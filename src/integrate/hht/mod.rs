//! The Hilber–Hughes–Taylor alpha method (HHT-α; Hilber, Hughes and Taylor,
//! "Improved numerical dissipation for time integration algorithms in
//! structural dynamics", Earthquake Eng. Struct. Dyn. 5, 1977) in its own
//! parameter: `alpha` in [-1/3, 0], the equations of motion balanced at
//! `t_n + (1 + alpha) dt`, the spectral radius at infinity
//! `rho_inf = (1 + alpha) / (1 - alpha)` (1 at alpha = 0: the trapezoidal
//! rule, Newmark's average acceleration; 1/2 at alpha = -1/3). Second order
//! for every alpha.
//!
//! It is the GSSSS member U0(rho, rho, (1 - rho^2) / (2 rho + 2 rho^2))
//! with `rho = rho_inf` (Hoitink Table 2.1, the preset `hht(rho)`), stepped
//! by the GSSSS stepper on the one Newton driver with constraint option 2
//! in the a-form; the method adds the parameterization that Chrono's and
//! ADAMS's HHT users set (`alpha`), and the scaled Newton test with its
//! options ([`DriverSettings`](crate::integrate::newton::DriverSettings)).
//! Statistics: those of the GSSSS stepper.

mod settings;

pub use settings::HhtSettings;
