//! Generated models for benchmarks and scaling tests.

use super::builder::{BuildError, ModelBuilder, PointRef, ProbeTarget};
use super::Model;

/// A planar chain of `nodes` point masses (0.01 each, 0.1 apart along x)
/// joined by Green-strain trusses (EA = 1e4), its first node pinned to the
/// ground, under gravity: `2 nodes` DOFs, 2 constraint rows, `nodes - 1`
/// elements. Node ids `n0..`, truss ids `t1..`, the pin `pin`.
pub fn hanging_truss_chain(nodes: usize) -> Result<Model, BuildError> {
    let mut b = ModelBuilder::new(2)?;
    b.gravity(&[0.0, -9.81])?;
    for i in 0..nodes {
        b.node(&format!("n{i}"), &[i as f64 * 0.1, 0.0], None, 0.01)?;
    }
    for i in 1..nodes {
        b.truss(
            &format!("t{i}"),
            &format!("n{}", i - 1),
            &format!("n{i}"),
            1e4,
            None,
            0.0,
        )?;
    }
    b.ground_pin("pin", &PointRef::Entity("n0".into()), &[0.0, 0.0])?;
    b.build()
}

/// Parameters of [`slider_crank_flexible`] (SPEC.md §3, seed 001 Ch. 5;
/// inch-pound-second units).
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SliderCrankParams {
    /// Euler–Bernoulli elements along the rod.
    pub elements: usize,
    /// Initial crank speed (rad/s).
    pub omega0: f64,
    /// Crank length r (in).
    #[serde(default = "default_crank")]
    pub crank_length: f64,
    /// Crank rotational inertia about its pivot (lb s^2 in).
    #[serde(default = "default_inertia")]
    pub crank_inertia: f64,
    /// Rod length (in).
    #[serde(default = "default_rod")]
    pub rod_length: f64,
    /// Rod diameter (in), circular section.
    #[serde(default = "default_diameter")]
    pub diameter: f64,
    /// Young's modulus (lb/in^2).
    #[serde(default = "default_modulus")]
    pub youngs_modulus: f64,
    /// Density (lb s^2/in^4).
    #[serde(default = "default_density")]
    pub density: f64,
}

fn default_crank() -> f64 {
    6.0
}
fn default_inertia() -> f64 {
    1.0
}
fn default_rod() -> f64 {
    12.0
}
fn default_diameter() -> f64 {
    0.25
}
fn default_modulus() -> f64 {
    30e6
}
fn default_density() -> f64 {
    0.0007331
}

impl SliderCrankParams {
    /// SPEC.md §3 values with `elements` and `omega0`.
    pub fn new(elements: usize, omega0: f64) -> Self {
        SliderCrankParams {
            elements,
            omega0,
            crank_length: default_crank(),
            crank_inertia: default_inertia(),
            rod_length: default_rod(),
            diameter: default_diameter(),
            youngs_modulus: default_modulus(),
            density: default_density(),
        }
    }
}

/// The deformable slider-crank of seed 001 Ch. 5 (SPEC.md §3): a rigid crank
/// `crank` (reference point at its pivot, inertia J) pinned at the origin and
/// driven by the torque `sin(t) - dphi/dt` (a `torque` load with a sine time
/// function plus a rotational damper c = 1 to the ground), an elastic rod of
/// `elements` planar Euler–Bernoulli beam elements (beam nodes `rod0`..`rodN`,
/// elements `rod_e1`..), pinned to the crank tip and ending in a massless
/// slider on y = 0; no gravity. Crank and rod start along +x at crank speed
/// `omega0`, the rod rotating rigidly about the slider (consistent velocities).
pub fn slider_crank_flexible(p: &SliderCrankParams) -> Result<Model, BuildError> {
    slider_crank_flexible_builder(p)?.build()
}

/// [`slider_crank_flexible`] before `build`, with the probe
/// `midpoint_deflection`: the transverse deflection of rod node N/2 (the rod
/// midpoint for even N) from the chord between the rod's end nodes.
pub fn slider_crank_flexible_builder(p: &SliderCrankParams) -> Result<ModelBuilder, BuildError> {
    let err = |field: &'static str, message: String| BuildError {
        what: "generator",
        id: "slider_crank_flexible".into(),
        field: Some(field),
        message,
    };
    if p.elements == 0 || p.elements > 100_000 {
        return Err(err(
            "elements",
            format!("needs 1 to 100000 rod elements, got {}", p.elements),
        ));
    }
    for (field, x) in [
        ("crank_length", p.crank_length),
        ("crank_inertia", p.crank_inertia),
        ("rod_length", p.rod_length),
        ("diameter", p.diameter),
        ("youngs_modulus", p.youngs_modulus),
        ("density", p.density),
    ] {
        if !(x.is_finite() && x > 0.0) {
            return Err(err(field, format!("must be positive, got {x}")));
        }
    }
    if !p.omega0.is_finite() {
        return Err(err("omega0", "must be finite".into()));
    }
    let (r, l, w0) = (p.crank_length, p.rod_length, p.omega0);
    let area = std::f64::consts::PI * p.diameter.powi(2) / 4.0;
    let inertia = std::f64::consts::PI * p.diameter.powi(4) / 64.0;
    let mut b = ModelBuilder::new(2)?;
    b.body2d("crank", &[0.0, 0.0], 0.0, 1.0, p.crank_inertia, None, w0)?;
    b.ground_pin("pivot", &PointRef::Entity("crank".into()), &[0.0, 0.0])?;
    b.rotational_spring_damper("crank_damping", None, "crank", [0.0, 1.0, 0.0], None)?;
    let sine = crate::load::TimeFunction::Sine {
        omega: 1.0,
        phase: 0.0,
    };
    b.torque("crank_torque", "crank", 1.0, sine)?;
    // The rod turns rigidly about the slider (at rest at dead centre): omega_rod = -r w0 / l.
    let omega_rod = -r * w0 / l;
    let n = p.elements;
    for k in 0..=n {
        let x = r + l * k as f64 / n as f64;
        let vy = -omega_rod * (r + l - x);
        b.beam_node(
            &format!("rod{k}"),
            &[x, 0.0],
            &[1.0, 0.0],
            Some(&[0.0, vy]),
            Some(&[0.0, omega_rod]),
            0.0,
        )?;
    }
    let (ea, ei, rho_a) = (
        p.youngs_modulus * area,
        p.youngs_modulus * inertia,
        p.density * area,
    );
    for k in 1..=n {
        b.beam(
            &format!("rod_e{k}"),
            &format!("rod{}", k - 1),
            &format!("rod{k}"),
            ea,
            ei,
            rho_a,
            None,
        )?;
    }
    let tip = PointRef::Body {
        body: "crank".into(),
        offset: [r, 0.0, 0.0],
    };
    b.revolute("crank_pin", &tip, &PointRef::Entity("rod0".into()))?;
    b.slider(
        "slider",
        &PointRef::Entity(format!("rod{n}")),
        &PointRef::Ground([0.0, 0.0, 0.0]),
        [0.0, 1.0],
        false,
    )?;
    let node = |k: usize| PointRef::Entity(format!("rod{k}"));
    b.probe(
        "midpoint_deflection",
        &ProbeTarget::Deflection(node(n / 2), [node(0), node(n)]),
    )?;
    Ok(b)
}
