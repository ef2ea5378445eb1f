//! The two-field v-form midpoint scheme (Hoitink §3.8, eqs. 3.49–3.60;
//! Gonzalez's energy-conserving scheme with midpoint evaluation).
//!
//! Unknown v_{n+1} (increment from the predictor v_n, eq. 3.51);
//! `u_{n+1/2} = u_n + dt/4 (v_n + v_{n+1})` (eq. 3.53),
//! `u_{n+1} = u_n + dt/2 (v_n + v_{n+1})` (eq. 3.60),
//! `M (v_{n+1} - v_n)/dt + grad V(u_{n+1/2}) + B~^T lambda~ = F~` (eq. 3.49) with
//! any constraint option at W1 = 1/2, and the constraint row scaled by 2/dt
//! (eq. 3.50). The acceleration it reports is (v_{n+1} - v_n)/dt, which sits at
//! t_{n+1/2}.
//!
//! Written in the linear forms of [`LinearScheme`] with `a_{n+1}` standing for
//! `(v_{n+1} - v_n)/dt`, so it runs on the same Newton code as GSSSS; no form
//! depends on a_n except through `a_n + da = a_{n+1}`, so the history of the
//! acceleration never enters.

use super::scheme::LinearScheme;

/// Linear forms of one two-field midpoint step of size `dt`.
pub fn two_field_scheme(dt: f64) -> LinearScheme {
    let h2 = dt * dt;
    LinearScheme {
        // u_{n+1} = u_n + dt v_n + dt^2/2 a_{n+1}
        u_next: [1.0, dt, 0.5 * h2, 0.5 * h2],
        // u_{n+1/2} = u_n + dt/2 v_n + dt^2/4 a_{n+1}
        u_tilde: [1.0, 0.5 * dt, 0.25 * h2, 0.25 * h2],
        // v_{n+1/2} = v_n + dt/2 a_{n+1}
        v_tilde: [0.0, 1.0, 0.5 * dt, 0.5 * dt],
        // (v_{n+1} - v_n)/dt = a_{n+1}
        a_tilde: [0.0, 0.0, 1.0, 1.0],
        v_next: [0.0, 1.0, dt, dt],
        // unknown: v_{n+1} - v_n = dt a_{n+1}
        unknown: [0.0, 0.0, dt, dt],
        w1: 0.5,
        accel_shift: -0.5,
    }
}
