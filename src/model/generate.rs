//! Generated models for benchmarks and scaling tests.

use super::builder::{
    BeamSection, Body2d, Body3dSpec, BuildError, Joint3d, ModelBuilder, PointRef, ProbeTarget,
    RotationalSpringDamper, SliderKind, TrussSection,
};
use super::Model;
use crate::kinematics::attitude::Attitude;
use crate::load::TimeFunction;

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
            &TrussSection::massless(1e4),
            None,
        )?;
    }
    b.ground_pin("pin", &PointRef::Entity("n0".into()), &[0.0, 0.0])?;
    b.build()
}

/// A generator error on field `field` of generator `name`.
fn generator_error(name: &str, field: &'static str, message: String) -> BuildError {
    BuildError {
        what: "generator",
        id: name.into(),
        field: Some(field),
        message,
    }
}

/// Rejects a zero size.
fn at_least_one(name: &str, field: &'static str, x: usize) -> Result<(), BuildError> {
    if x == 0 {
        Err(generator_error(name, field, "must be at least 1".into()))
    } else {
        Ok(())
    }
}

/// The most coordinates a generator builds (about 6 GiB for the L1 beam at
/// 1.5 KiB per DOF): larger sizes are refused before anything is allocated.
pub const MAX_GENERATED_DOFS: u128 = 4_000_000;

/// Rejects a size `x` of `field` whose model would have `dofs` coordinates,
/// more than [`MAX_GENERATED_DOFS`]; `dofs` is computed in `u128` so that no
/// size overflows it.
fn bounded(name: &str, field: &'static str, x: usize, dofs: u128) -> Result<(), BuildError> {
    at_least_one(name, field, x)?;
    if dofs > MAX_GENERATED_DOFS {
        return Err(generator_error(
            name,
            field,
            format!(
                "{field} = {x} gives {dofs} coordinates, more than the limit of {MAX_GENERATED_DOFS}"
            ),
        ));
    }
    Ok(())
}

/// A `[generator]` of a model file (`crate::input`): the deformable
/// slider-crank of Chin Ch. 5 or one of the large-mesh benchmarks L1–L4 (docs/bench.md) with its size.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Generator {
    /// [`slider_crank_flexible`].
    SliderCrankFlexible(SliderCrankParams),
    /// [`hanging_beam`] with `elements` elements.
    HangingBeam {
        /// Beam elements.
        elements: usize,
    },
    /// [`truss_lattice`] of `n` x `m` cells (`m` defaults to `n`).
    TrussLattice {
        /// Cells along x.
        n: usize,
        /// Cells along y.
        m: Option<usize>,
    },
    /// [`space_truss_lattice`] of `n` x `n` x `m` cells (`m` defaults to `n`).
    SpaceTrussLattice {
        /// Cells along x and y.
        n: usize,
        /// Cells along z.
        m: Option<usize>,
    },
    /// [`rigid_chain`] of `bodies` bodies.
    RigidChain {
        /// Rigid bodies.
        bodies: usize,
    },
}

impl Generator {
    /// The dimension of the generated model.
    pub fn dimension(&self) -> usize {
        match self {
            Generator::SliderCrankFlexible(_)
            | Generator::HangingBeam { .. }
            | Generator::TrussLattice { .. } => 2,
            Generator::SpaceTrussLattice { .. } | Generator::RigidChain { .. } => 3,
        }
    }

    /// The generator's name in the model file.
    pub fn name(&self) -> &'static str {
        match self {
            Generator::SliderCrankFlexible(_) => "slider_crank_flexible",
            Generator::HangingBeam { .. } => "hanging_beam",
            Generator::TrussLattice { .. } => "truss_lattice",
            Generator::SpaceTrussLattice { .. } => "space_truss_lattice",
            Generator::RigidChain { .. } => "rigid_chain",
        }
    }

    /// The model's builder (before `build`, so that probes can be added).
    pub fn builder(&self) -> Result<ModelBuilder, BuildError> {
        match *self {
            Generator::SliderCrankFlexible(ref p) => slider_crank_flexible_builder(p),
            Generator::HangingBeam { elements } => hanging_beam_builder(elements),
            Generator::TrussLattice { n, m } => truss_lattice_builder(n, m.unwrap_or(n)),
            Generator::SpaceTrussLattice { n, m } => space_truss_lattice_builder(n, m.unwrap_or(n)),
            Generator::RigidChain { bodies } => rigid_chain_builder(bodies),
        }
    }
}

/// Benchmark L1 (docs/bench.md), the hanging beam: a planar Euler–Bernoulli (ANCF) beam of
/// length 10 along +x made of `elements` equal `beam` elements with
/// E = 1e7, A = 1e-4, I = 1e-10, rho = 1000 (EA = 1e3, EI = 1e-3,
/// rho A = 0.1), its node at x = 0 pinned to the ground (position pinned,
/// slope free), at rest and straight at t = 0 under gravity 9.81 along -y.
///
/// With N = `elements`: `4 (N + 1)` DOFs (position and slope of each of the
/// N + 1 beam nodes), 2 constraint rows (the pin), N elements. Beam nodes
/// `b0..bN` (`b0` at the origin), elements `e1..eN`, the pin `pin`.
pub fn hanging_beam(elements: usize) -> Result<Model, BuildError> {
    hanging_beam_builder(elements)?.build()
}

/// [`hanging_beam`] before `build`.
pub fn hanging_beam_builder(elements: usize) -> Result<ModelBuilder, BuildError> {
    bounded(
        "hanging_beam",
        "elements",
        elements,
        4 * (elements as u128 + 1),
    )?;
    let (length, e, area, inertia, rho) = (10.0, 1e7, 1e-4, 1e-10, 1000.0);
    let mut b = ModelBuilder::new(2)?;
    b.gravity(&[0.0, -9.81])?;
    let n = elements;
    for k in 0..=n {
        let x = length * k as f64 / n as f64;
        b.beam_node(&format!("b{k}"), &[x, 0.0], &[1.0, 0.0], None, None, 0.0)?;
    }
    for k in 1..=n {
        b.beam(
            &format!("e{k}"),
            &format!("b{}", k - 1),
            &format!("b{k}"),
            &BeamSection {
                ea: e * area,
                ei: e * inertia,
                rho_a: rho * area,
            },
            None,
        )?;
    }
    b.ground_pin("pin", &PointRef::Entity("b0".into()), &[0.0, 0.0])?;
    Ok(b)
}

/// Benchmark L2 (docs/bench.md), the planar truss lattice: (n + 1) x (m + 1) nodes at
/// (i, j), i = 0..=n, j = 0..=m (spacing 1, mass 1 each, at rest), joined by
/// Green-strain trusses (EA = 1e5, massless) on every horizontal and vertical
/// edge and on one diagonal per cell, from (i, j) to (i + 1, j + 1); the
/// m + 1 nodes of the edge x = 0 pinned to the ground; a constant point force
/// (0, -10) on the tip node (n, 0); no gravity.
///
/// DOFs `2 (n + 1)(m + 1)`; constraint rows `2 (m + 1)`; elements
/// `n (m + 1) + m (n + 1) + n m` (horizontal, vertical, diagonal). Node ids
/// `n{i}_{j}`, trusses `h{i}_{j}` (from (i, j) along +x), `v{i}_{j}` (along
/// +y), `d{i}_{j}` (diagonal), pins `pin{j}`, the load `tip_load`.
pub fn truss_lattice(n: usize, m: usize) -> Result<Model, BuildError> {
    truss_lattice_builder(n, m)?.build()
}

/// [`truss_lattice`] before `build`.
pub fn truss_lattice_builder(n: usize, m: usize) -> Result<ModelBuilder, BuildError> {
    let dofs = 2 * (n as u128 + 1) * (m as u128 + 1);
    bounded("truss_lattice", "n", n, dofs)?;
    bounded("truss_lattice", "m", m, dofs)?;
    let ea = 1e5;
    let id = |i: usize, j: usize| format!("n{i}_{j}");
    let mut b = ModelBuilder::new(2)?;
    for i in 0..=n {
        for j in 0..=m {
            b.node(&id(i, j), &[i as f64, j as f64], None, 1.0)?;
        }
    }
    for i in 0..=n {
        for j in 0..=m {
            if i < n {
                b.truss(
                    &format!("h{i}_{j}"),
                    &id(i, j),
                    &id(i + 1, j),
                    &TrussSection::massless(ea),
                    None,
                )?;
            }
            if j < m {
                b.truss(
                    &format!("v{i}_{j}"),
                    &id(i, j),
                    &id(i, j + 1),
                    &TrussSection::massless(ea),
                    None,
                )?;
            }
            if i < n && j < m {
                b.truss(
                    &format!("d{i}_{j}"),
                    &id(i, j),
                    &id(i + 1, j + 1),
                    &TrussSection::massless(ea),
                    None,
                )?;
            }
        }
    }
    for j in 0..=m {
        b.ground_pin(
            &format!("pin{j}"),
            &PointRef::Entity(id(0, j)),
            &[0.0, j as f64],
        )?;
    }
    b.point_load(
        "tip_load",
        "point_force",
        &PointRef::Entity(id(n, 0)),
        [[0.0; 3]; 3],
        [0.0, -10.0, 0.0],
        TimeFunction::Constant,
    )?;
    Ok(b)
}

/// Benchmark L3 (docs/bench.md), the space truss lattice: (n + 1) x (n + 1) x (m + 1) nodes
/// at (i, j, k), i, j = 0..=n, k = 0..=m (spacing 1, mass 1 each, at rest),
/// joined by Green-strain trusses (EA = 1e5, massless) on every edge along
/// x, y and z and on one diagonal of every face of the cubic cells:
/// xy faces from (i, j, k) to (i + 1, j + 1, k), xz faces from (i, j, k) to
/// (i + 1, j, k + 1), yz faces from (i, j, k) to (i, j + 1, k + 1). Every
/// cell is then a cube with all six faces triangulated, infinitesimally rigid
/// (Dehn), and cells share faces, so the lattice is stiff. The (n + 1)^2
/// nodes of the face z = 0 are pinned to the ground (3-D `ground_pin`); a
/// constant point force (0, -10, 0) acts on the node (n, 0, m); no gravity.
///
/// DOFs `3 (n + 1)^2 (m + 1)`; constraint rows `3 (n + 1)^2`; elements
/// `2 n (n + 1)(m + 1) + m (n + 1)^2` edges plus
/// `n^2 (m + 1) + 2 n (n + 1) m` face diagonals. Node ids `n{i}_{j}_{k}`,
/// trusses `x{i}_{j}_{k}`, `y..`, `z..` (edges from (i, j, k)), `dxy..`,
/// `dxz..`, `dyz..` (diagonals from (i, j, k)), pins `pin{i}_{j}`, the load
/// `tip_load`.
pub fn space_truss_lattice(n: usize, m: usize) -> Result<Model, BuildError> {
    space_truss_lattice_builder(n, m)?.build()
}

/// [`space_truss_lattice`] before `build`.
pub fn space_truss_lattice_builder(n: usize, m: usize) -> Result<ModelBuilder, BuildError> {
    let dofs = 3 * (n as u128 + 1).pow(2) * (m as u128 + 1);
    bounded("space_truss_lattice", "n", n, dofs)?;
    bounded("space_truss_lattice", "m", m, dofs)?;
    let ea = 1e5;
    let id = |i: usize, j: usize, k: usize| format!("n{i}_{j}_{k}");
    let mut b = ModelBuilder::new(3)?;
    for i in 0..=n {
        for j in 0..=n {
            for k in 0..=m {
                b.node(&id(i, j, k), &[i as f64, j as f64, k as f64], None, 1.0)?;
            }
        }
    }
    for i in 0..=n {
        for j in 0..=n {
            for k in 0..=m {
                let a = id(i, j, k);
                let (x, y, z) = (i < n, j < n, k < m);
                let mut bar = |name: &str, to: String| {
                    b.truss(
                        &format!("{name}{i}_{j}_{k}"),
                        &a,
                        &to,
                        &TrussSection::massless(ea),
                        None,
                    )
                };
                if x {
                    bar("x", id(i + 1, j, k))?;
                }
                if y {
                    bar("y", id(i, j + 1, k))?;
                }
                if z {
                    bar("z", id(i, j, k + 1))?;
                }
                if x && y {
                    bar("dxy", id(i + 1, j + 1, k))?;
                }
                if x && z {
                    bar("dxz", id(i + 1, j, k + 1))?;
                }
                if y && z {
                    bar("dyz", id(i, j + 1, k + 1))?;
                }
            }
        }
    }
    for i in 0..=n {
        for j in 0..=n {
            b.ground_pin(
                &format!("pin{i}_{j}"),
                &PointRef::Entity(id(i, j, 0)),
                &[i as f64, j as f64, 0.0],
            )?;
        }
    }
    b.point_load(
        "tip_load",
        "point_force",
        &PointRef::Entity(id(n, 0, m)),
        [[0.0; 3]; 3],
        [0.0, -10.0, 0.0],
        TimeFunction::Constant,
    )?;
    Ok(b)
}

/// Benchmark L4 (docs/bench.md), the rigid chain: `bodies` 3-D rigid bodies in Euler
/// parameters, each a slender rod of length 1 along its body x axis (mass 1,
/// central inertia diag(1e-3, 1/12, 1/12)), laid along +x with centres at
/// (k + 1/2, 0, 0) and identity attitude, at rest; consecutive rods joined
/// end to end by revolute joints with axis z, the left end of the first rod
/// on a revolute joint with axis z to the ground at the origin; gravity 9.81
/// along -y.
///
/// With N = `bodies`: `7 N` DOFs; `6 N` constraint rows (one Euler-parameter
/// normalization per body plus 5 rows per revolute joint, N joints);
/// N elements (the bodies). Body ids `r0..`, joints `hinge0` (to the ground)
/// and `hinge{k}` between `r{k-1}` and `r{k}`.
pub fn rigid_chain(bodies: usize) -> Result<Model, BuildError> {
    rigid_chain_builder(bodies)?.build()
}

/// [`rigid_chain`] before `build`.
pub fn rigid_chain_builder(bodies: usize) -> Result<ModelBuilder, BuildError> {
    bounded("rigid_chain", "bodies", bodies, 7 * bodies as u128)?;
    let mut b = ModelBuilder::new(3)?;
    b.gravity(&[0.0, -9.81, 0.0])?;
    let axis = Joint3d::Revolute {
        axis: [0.0, 0.0, 1.0],
    };
    let end = |k: usize, side: f64| PointRef::Body {
        body: format!("r{k}"),
        offset: [0.5 * side, 0.0, 0.0],
    };
    for k in 0..bodies {
        let spec = Body3dSpec {
            position: [k as f64 + 0.5, 0.0, 0.0],
            orientation: [1.0, 0.0, 0.0, 0.0],
            attitude: Attitude::EulerParameters,
            kinetic: Default::default(),
            mass: 1.0,
            inertia: [
                [1e-3, 0.0, 0.0],
                [0.0, 1.0 / 12.0, 0.0],
                [0.0, 0.0, 1.0 / 12.0],
            ],
            velocity: [0.0; 3],
            angular_velocity: [0.0; 3],
        };
        b.body3d(&format!("r{k}"), &spec)?;
        let left = if k == 0 {
            PointRef::Ground([0.0; 3])
        } else {
            end(k - 1, 1.0)
        };
        b.joint3d(&format!("hinge{k}"), &left, &end(k, -1.0), axis)?;
    }
    Ok(b)
}

/// Parameters of [`slider_crank_flexible`] (Chin Ch. 5;
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
    /// Chin's values with `elements` and `omega0`.
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

/// The deformable slider-crank of Chin Ch. 5: a rigid crank
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
    b.body2d(
        "crank",
        Body2d::new(1.0, p.crank_inertia).moving(0.0, 0.0, w0),
    )?;
    b.ground_pin("pivot", &PointRef::Entity("crank".into()), &[0.0, 0.0])?;
    let damper = RotationalSpringDamper {
        damping: 1.0,
        ..RotationalSpringDamper::default()
    };
    b.rotational_spring_damper("crank_damping", None, "crank", damper)?;
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
            &BeamSection { ea, ei, rho_a },
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
        SliderKind::PointOnLine,
    )?;
    let node = |k: usize| PointRef::Entity(format!("rod{k}"));
    b.probe(
        "midpoint_deflection",
        &ProbeTarget::Deflection(node(n / 2), [node(0), node(n)]),
    )?;
    Ok(b)
}
