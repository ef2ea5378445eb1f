//! The clamped cantilever of `models/cantilever.toml` built in 2-D or 3-D,
//! its analytic clamped-free mode shapes and a midpoint run, shared by the
//! planar and spatial beam tests (tests/beam.rs, tests/beam3d.rs).

use flexmb::integrate::IntegratorSpec;
use flexmb::model::{Model, ModelBuilder, PointRef};
use flexmb::output::{MemoryRecorder, OutputConfig};
use flexmb::run::Simulation;
use flexmb::statics::{solve_static, StaticOptions, StaticSolution};

/// Properties of models/cantilever.toml.
pub const L: f64 = 1.0;
pub const EA: f64 = 2.1e7;
pub const EI: f64 = 175.0;
pub const RHO_A: f64 = 0.785;

/// Initial (velocity, slope velocity) at abscissa x.
pub type Velocity<'a> = &'a dyn Fn(f64) -> ([f64; 3], [f64; 3]);

/// A clamped cantilever along +x with `n` elements in `dim` dimensions
/// (2: the first two components of every vector are used); a tip force
/// when `tip` is not zero.
pub fn cantilever(
    dim: usize,
    n: usize,
    ea: f64,
    tip: [f64; 3],
    gravity: [f64; 3],
    vel: Velocity<'_>,
) -> Model {
    let mut b = ModelBuilder::new(dim).unwrap();
    b.gravity(&gravity[..dim]).unwrap();
    add_beam_line(&mut b, dim, n, ea, vel);
    b.ground_pin("root", &PointRef::Entity("n0".into()), &[0.0; 3][..dim])
        .unwrap();
    b.slope("root_slope", "n0", None, Some(&[1.0, 0.0, 0.0][..dim]))
        .unwrap();
    if tip != [0.0; 3] {
        add_tip_load(&mut b, n, tip);
    }
    b.build().unwrap()
}

/// Beam nodes `n0`..`n{n}` along +x over [0, L] with slope (1, 0, 0) and
/// the initial velocities `vel`, and the beams `e{i}` between them (axial
/// stiffness `ea`, EI, RHO_A); `dim` as in [`cantilever`].
pub fn add_beam_line(b: &mut ModelBuilder, dim: usize, n: usize, ea: f64, vel: Velocity<'_>) {
    for i in 0..=n {
        let x = L * i as f64 / n as f64;
        let (v, sv) = vel(x);
        b.beam_node(
            &format!("n{i}"),
            &[x, 0.0, 0.0][..dim],
            &[1.0, 0.0, 0.0][..dim],
            Some(&v[..dim]),
            Some(&sv[..dim]),
            0.0,
        )
        .unwrap();
    }
    for i in 0..n {
        let (a, c) = (format!("n{i}"), format!("n{}", i + 1));
        let section = flexmb::model::BeamSection {
            ea,
            ei: EI,
            rho_a: RHO_A,
        };
        b.beam(&format!("e{i}"), &a, &c, &section, None).unwrap();
    }
}

/// A constant force `tip` on node `n{n}`.
pub fn add_tip_load(b: &mut ModelBuilder, n: usize, tip: [f64; 3]) {
    b.point_load(
        "tip",
        "point_force",
        &PointRef::Entity(format!("n{n}")),
        [[0.0; 3]; 3],
        tip,
        flexmb::load::TimeFunction::Constant,
    )
    .unwrap();
}

/// No initial velocity.
pub fn at_rest(_: f64) -> ([f64; 3], [f64; 3]) {
    ([0.0; 3], [0.0; 3])
}

/// Index of the DOF called `name`.
pub fn dof(m: &Model, name: &str) -> usize {
    m.dofs.names().iter().position(|x| x == name).unwrap()
}

/// Static solution in `steps` load steps.
pub fn solve(m: &Model, steps: u32) -> StaticSolution {
    solve_static(
        m,
        &StaticOptions {
            steps,
            ..StaticOptions::default()
        },
    )
    .expect("static solve converges")
}

/// Analytic clamped-free mode shape (phi, phi') at x.
pub fn mode_shape(beta_l: f64, x: f64) -> [f64; 2] {
    let b = beta_l / L;
    let sigma = (beta_l.cosh() + beta_l.cos()) / (beta_l.sinh() + beta_l.sin());
    let z = b * x;
    [
        z.cosh() - z.cos() - sigma * (z.sinh() - z.sin()),
        b * (z.sinh() + z.sin() - sigma * (z.cosh() - z.cos())),
    ]
}

/// Runs `model` with the midpoint scheme; the Newton tolerance is 1e-6
/// (absolute, acceleration and multiplier units): with EA = 2.1e7 the
/// multiplier increments stagnate at round-off near 5e-8, above the
/// integrator's default 1e-8.
pub fn run_model(model: Model, dt: f64, t_end: f64) -> MemoryRecorder {
    let config = IntegratorSpec {
        scheme: Some("midpoint".into()),
        dt: Some(dt),
        t_end: Some(t_end),
        tol: Some(1e-6),
        ..IntegratorSpec::default()
    }
    .resolve()
    .expect("valid integrator");
    let sim = Simulation::new(model);
    let mut rec = MemoryRecorder::default();
    let summary = sim
        .run(&config, "", &OutputConfig::default(), &mut rec, &mut |_| {})
        .unwrap();
    assert!(
        summary.failure.is_none(),
        "run failed: {:?}",
        summary.failure
    );
    rec
}
