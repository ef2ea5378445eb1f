//! Criterion benchmarks (issue #2, Speed):
//! - one step and a full run (no output) of the shipped models, and the
//!   issue #3 target: the deformable slider-crank with 32 rod elements for
//!   0.07 s at dt = 1e-5 (`run/slider_crank_flexible/N=32`);
//! - assembly + factorization + solve of the consistent-initialization
//!   saddle-point system `[M B^T; B 0]` for a hanging truss chain of 1e3, 1e4
//!   and 1e5 nodes (sparse LU, symbolic factorization done once outside).
//!
//! - per-element cost of the planar and spatial Euler–Bernoulli beam
//!   (`element/beam2d`, `element/beam3d`) and of the other element types
//!   (`element/*`: truss, thin-beam axial spring and bending, spring-damper,
//!   Euler-parameter rigid body, director orthonormality rows, torque loads).
//!
//! - seed 001's Runge–Kutta path (issue #10, Speed): one right-hand-side
//!   evaluation of the index-1 form (assemble, factor, solve) and one PStab
//!   projection (factorization at the unstabilized point, two S-both passes)
//!   on Andrews' mechanism and on the 32-element slider-crank, and the full
//!   Andrews run on [0, 0.3] with DOPRI5 + PStab at rtol 1e-5
//!   (`rk/run/andrews_dopri5_pstab_rtol1e-5`).
//!
//! - seed 003's BDF on the GGL form (issue #11, Speed): the start and the
//!   first 10 steps (full Newton, rtol 1e-6) on the double pendulum and the
//!   32-element slider-crank, per step (`bdf/10_steps/*`).
//! - seed 002's Galerkin schemes (issue #11, Speed): one step of TCG, TDG
//!   and alpha–kappa (alpha = 1, kappa auto) against one step of the shipped GSSSS scheme at the same dt
//!   on the double pendulum, and TCG against GSSSS on the 32-element
//!   slider-crank (TDG and alpha–kappa refuse its damper) (`galerkin/*`).
//!
//! - the parallel assembly (issue 23): the Newton matrix and residual of
//!   the elements of L1 at 25,000 elements (zeroing, mass, element forces
//!   and tangents; and the residual alone), and the rate forces, constraint rows
//!   and joint terms (force, B^T column, curvature) of L4 at 14,300 bodies,
//!   on rayon pools of 1 and 2 threads (`assembly/*/threads=T`).
//!
//! Run: `cargo bench --bench engine` (one group: `cargo bench --bench engine -- chain`).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use flexmb::input::{apply_sets, load_model_file, load_model_str};
use flexmb::integrate::{IntegratorSpec, State};
use flexmb::linalg::SaddlePointSolver;
use flexmb::model::hanging_truss_chain;
use flexmb::output::NullRecorder;
use flexmb::run::Simulation;

const MODELS: [(&str, f64); 6] = [
    ("double_pendulum", 100.0),
    ("four_mass", 50.0),
    ("circle_track", 10.0),
    ("heavy_top", 2.0),
    ("andrews", 0.03),
    ("thin_beam_fourbar", 1.0),
];

fn load(
    name: &str,
    t_end: f64,
) -> (
    Simulation,
    flexmb::integrate::IntegratorConfig,
    flexmb::output::OutputConfig,
) {
    let file = load_model_file(format!("{}/models/{name}.toml", env!("CARGO_MANIFEST_DIR")))
        .expect("shipped model");
    let config = file
        .integrator(&IntegratorSpec {
            t_end: Some(t_end),
            ..IntegratorSpec::default()
        })
        .expect("shipped integrator");
    (Simulation::new(file.model), config, file.output)
}

/// The shipped slider-crank generator with `elements` rod elements, as shipped
/// otherwise (0.07 s at dt = 1e-5).
fn slider_crank(
    elements: usize,
) -> (
    Simulation,
    flexmb::integrate::IntegratorConfig,
    flexmb::output::OutputConfig,
) {
    let path = format!(
        "{}/models/slider_crank_flexible.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("shipped model");
    let text = apply_sets(&text, &[format!("generator.elements={elements}")]).expect("valid set");
    let file = load_model_str(&text, &path).expect("shipped model");
    let config = file
        .integrator(&IntegratorSpec::default())
        .expect("shipped integrator");
    (Simulation::new(file.model), config, file.output)
}

fn full_runs(c: &mut Criterion) {
    let mut g = c.benchmark_group("run");
    g.sample_size(10);
    let runs = MODELS
        .iter()
        .map(|&(name, t_end)| (format!("{name}/t_end={t_end}"), load(name, t_end)))
        .chain([("slider_crank_flexible/N=32".to_string(), slider_crank(32))]);
    for (label, (sim, config, output)) in runs {
        g.bench_function(label, |b| {
            b.iter(|| {
                let s = sim
                    .run(&config, "", &output, &mut NullRecorder, &mut |_| {})
                    .expect("no output errors");
                assert!(s.failure.is_none());
                s.newton_iterations
            })
        });
    }
    g.finish();
}

fn single_steps(c: &mut Criterion) {
    let mut g = c.benchmark_group("step");
    for (name, _) in MODELS {
        let (sim, config, _) = load(name, 1.0);
        let sys = sim.mechanics();
        let mut integ = config.build(&sys).expect("integrator");
        let mut start = State::initial(&sim.mechanics());
        integ.start(&sys, &mut start).expect("consistent start");
        let mut state = start.clone();
        g.bench_function(name, |b| {
            b.iter(|| {
                state.clone_from(&start);
                {
                    let t = state.t + config.dt;
                    integ.advance(&sys, &mut state, t)
                }
                .expect("step converges")
            })
        });
    }
    g.finish();
}

/// One step from the initial state of `config` on `sim`, measured as `label`.
fn one_step(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    label: String,
    sim: &Simulation,
    config: &flexmb::integrate::IntegratorConfig,
) {
    let sys = sim.mechanics();
    let mut integ = config.build(&sys).expect("integrator");
    let mut start = State::initial(&sim.mechanics());
    integ.start(&sys, &mut start).expect("consistent start");
    let mut state = start.clone();
    g.bench_function(label, |b| {
        b.iter(|| {
            state.clone_from(&start);
            {
                let t = state.t + config.dt;
                integ.advance(&sys, &mut state, t)
            }
            .expect("step converges")
        })
    });
}

fn galerkin(c: &mut Criterion) {
    let mut g = c.benchmark_group("galerkin");
    let (sim, gssss, _) = load("double_pendulum", 1.0);
    let (sc, sc_gssss, _) = slider_crank(32);
    let with = |method: &str, alpha: Option<f64>, dt: f64| IntegratorSpec {
        method: Some(method.into()),
        alpha,
        dt: Some(dt),
        t_end: Some(1.0),
        ..IntegratorSpec::default()
    };
    let resolve = |spec: IntegratorSpec| spec.resolve().expect("valid settings");
    one_step(&mut g, "double_pendulum/gssss".into(), &sim, &gssss);
    for (name, alpha) in [
        ("tcg", None),
        ("tdg", Some(1.0)),
        ("alpha-kappa", Some(1.0)),
    ] {
        let config = resolve(with(name, alpha, gssss.dt));
        one_step(&mut g, format!("double_pendulum/{name}"), &sim, &config);
    }
    one_step(
        &mut g,
        "slider_crank_flexible/N=32/gssss".into(),
        &sc,
        &sc_gssss,
    );
    let config = resolve(with("tcg", None, sc_gssss.dt));
    one_step(
        &mut g,
        "slider_crank_flexible/N=32/tcg".into(),
        &sc,
        &config,
    );
    g.finish();
}

fn runge_kutta(c: &mut Criterion) {
    use flexmb::integrate::index1::Index1;
    use flexmb::integrate::projector::{Metric, Projector};
    let mut g = c.benchmark_group("rk");
    let models = [
        ("andrews", load("andrews", 0.3).0),
        ("slider_crank_flexible/N=32", slider_crank(32).0),
    ];
    for (name, sim) in &models {
        let sys = sim.mechanics();
        let (u, v) = (sim.model.u0.clone(), sim.model.v0.clone());
        let mut a = vec![0.0; u.len()];
        let mut lambda = vec![0.0; sim.model.n_constraints()];
        let mut rhs = Index1::new(&sys, None, Default::default()).expect("index-1 solver");
        g.bench_function(format!("rhs/{name}"), |b| {
            b.iter(|| {
                rhs.eval(&sys, 0.0, &u, &v, &mut a, &mut lambda)
                    .expect("nonsingular")
            })
        });
        let mut projector =
            Projector::new(&sys, Metric::Mass, Default::default()).expect("projector");
        // A drifted state: positions and velocities perturbed off the manifold.
        let (mut u1, mut v1) = (u.clone(), v.clone());
        g.bench_function(format!("pstab/{name}"), |b| {
            b.iter(|| {
                for (i, (x, y)) in u1.iter_mut().zip(v1.iter_mut()).enumerate() {
                    *x = u[i] + 1e-6 * ((i % 7) as f64 - 3.0);
                    *y = v[i] + 1e-5 * ((i % 5) as f64 - 2.0);
                }
                projector.prepare(&sys, &u1, &v1, 0.0);
                projector
                    .stabilize(&sys, &mut u1, &mut v1, 0.0)
                    .expect("nonsingular")
            })
        });
    }
    let (sim, _, output) = load("andrews", 0.3);
    let config = IntegratorSpec {
        method: Some("dopri5".into()),
        stabilization: Some("pstab".into()),
        rtol: Some(1e-5),
        atol: Some(1e-6),
        t_end: Some(0.3),
        ..IntegratorSpec::default()
    }
    .resolve()
    .expect("settings");
    g.sample_size(20);
    g.bench_function("run/andrews_dopri5_pstab_rtol1e-5", |b| {
        b.iter(|| {
            let s = sim
                .run(&config, "", &output, &mut NullRecorder, &mut |_| {})
                .expect("no output errors");
            assert!(s.failure.is_none());
            s.stat("nfcn")
        })
    });
    g.finish();
}

fn truss_chain(c: &mut Criterion) {
    let mut g = c.benchmark_group("chain/assemble+factor+solve");
    g.sample_size(10);
    for nodes in [1_000usize, 10_000, 100_000] {
        let model = hanging_truss_chain(nodes).expect("chain");
        let sim = Simulation::new(model);
        let mut sys = sim.asm.new_system();
        let mut solver = SaddlePointSolver::new(sim.asm.pattern(), true).expect("symbolic LU");
        let mut rhs = vec![0.0; sys.residual.len()];
        g.throughput(Throughput::Elements(nodes as u64));
        g.bench_with_input(BenchmarkId::from_parameter(nodes), &nodes, |b, _| {
            b.iter(|| {
                sim.mechanics()
                    .fill_index1(&sim.model.u0, &sim.model.v0, 0.0, None, &mut sys);
                solver.factor(&sys.values).expect("nonsingular");
                for (r, e) in rhs.iter_mut().zip(&sys.residual) {
                    *r = -e;
                }
                solver.solve(&mut rhs).expect("solve");
                rhs[0]
            })
        });
    }
    g.finish();
}

/// Per-element cost of the Euler–Bernoulli beam in `D` dimensions: force +
/// tangent, and the midpoint discrete-gradient EOM force with its derivative.
/// The configurations bend the element in y (and, in 3-D, also in z).
fn beam_element_in<const D: usize>(c: &mut Criterion, name: &str) {
    use flexmb::element::{Beam, Element, EvaluationPoint, LevelWeights};
    let el = Beam::<D>::new(0.1, 2.1e7, 175.0, 0.785, None);
    // Per node vector (x, y, z): r1, r1', r2, r2'.
    let v0 = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.01],
        [0.1, 0.001, 0.0005],
        [0.99, 0.02, 0.015],
    ];
    let v1 = [
        [0.0, 0.0, 0.0],
        [1.0, 0.001, 0.012],
        [0.1, 0.002, 0.001],
        [0.98, 0.03, 0.02],
    ];
    let flat = |v: &[[f64; 3]; 4]| -> Vec<f64> { v.iter().flat_map(|p| p[..D].to_vec()).collect() };
    let (u0, u1) = (flat(&v0), flat(&v1));
    let n = el.ndof();
    let mut f = vec![0.0; n];
    let mut k = vec![0.0; n * n];
    let mut g = c.benchmark_group(name);
    g.bench_function("force+tangent", |b| {
        b.iter(|| {
            el.force(std::hint::black_box(&u1), &mut f, Some(&mut k));
            k[9]
        })
    });
    let zero = vec![0.0; n];
    let lvl = EvaluationPoint {
        u_n: &u0,
        v_n: &zero,
        a_n: &zero,
        u_next: &u1,
        u_tilde: &u1,
        w: LevelWeights {
            c1dt: 0.0,
            c2dt2: 0.0,
            c3: 0.5,
        },
    };
    g.bench_function("midpoint discrete gradient", |b| {
        b.iter(|| {
            el.discrete_gradient(std::hint::black_box(&lvl), &mut f, Some(&mut k));
            k[9]
        })
    });
    g.finish();
}

/// Per-element cost of the planar and the spatial beam.
fn beam_element(c: &mut Criterion) {
    beam_element_in::<2>(c, "element/beam2d");
    beam_element_in::<3>(c, "element/beam3d");
}

/// Per-element cost of the other element types: force + tangent (trusses,
/// thin-beam elements, springs), the damper force with its u and v
/// derivatives, the Euler-parameter body's inertial force with its u, v and
/// a derivatives (plain, and with the energy-consistent midpoint correction),
/// the director body's orthonormality rows (Jacobian + curvature; the body
/// itself has a constant mass) and the torque loads on 3-D bodies.
fn other_elements(c: &mut Criterion) {
    use flexmb::element::{
        AxialSpring, Bending, Element, EulerKinetic, RateForce, RateState, Rigid3d, SpringDamper,
        StepStart, Truss,
    };
    use flexmb::joint::{DirectorConstraints, Joint, Point, PointPair};
    use flexmb::kinematics::attitude::Attitude;
    use flexmb::load::{BodyTorque, TimeFunction, TorqueFrame};
    let mut g = c.benchmark_group("element");
    let mut buf = vec![0.0; 10 + 3 * 100];
    let (f, rest) = buf.split_at_mut(10);
    let (k, rest) = rest.split_at_mut(100);
    let (cc, m) = rest.split_at_mut(100);
    let truss = Truss::new(3, 1e4, 1.0, 0.1);
    let u6 = [0.0, 0.1, 0.0, 1.02, 0.05, 0.03];
    g.bench_function("truss3d/force+tangent", |b| {
        b.iter(|| truss.force(std::hint::black_box(&u6), &mut f[..6], Some(&mut k[..36])))
    });
    let axial = AxialSpring::new(2, 50.0, 1.0);
    let u4 = [0.0, 0.1, 1.02, 0.05];
    g.bench_function("axial_spring/force+tangent", |b| {
        b.iter(|| axial.force(std::hint::black_box(&u4), &mut f[..4], Some(&mut k[..16])))
    });
    let bending = Bending::new(2, 0.7);
    let u6b = [0.0, 0.0, 1.0, 0.05, 2.0, 0.02];
    g.bench_function("bending/force+tangent", |b| {
        b.iter(|| bending.force(std::hint::black_box(&u6b), &mut f[..6], Some(&mut k[..36])))
    });
    let pair = PointPair {
        a: Point::Body3 {
            offset: [0.1, 0.2, 0.0],
            attitude: flexmb::kinematics::attitude::Attitude::EulerParameters,
        },
        b: Point::Node { dim: 3 },
    };
    let sd = SpringDamper::new(pair, 30.0, 0.7, 2.0, 1.5);
    let (us, vs) = (
        [0.0, 0.0, 0.0, 0.9, 0.3, -0.2, 0.2449, 1.0, 0.2, 0.1],
        [0.1, 0.0, 0.2, 0.0, 0.1, 0.3, -0.2, 0.5, 0.1, 0.0],
    );
    g.bench_function(
        "spring_damper body3d-node/damping force+u,v derivatives",
        |b| {
            b.iter(|| {
                sd.damping_force(
                    std::hint::black_box(&us),
                    &vs,
                    &mut f[..10],
                    &mut k[..100],
                    &mut cc[..100],
                )
            })
        },
    );
    let body = Rigid3d::new(2.5, [[0.3, 0.02, 0.0], [0.02, 0.5, 0.01], [0.0, 0.01, 0.4]]);
    let (u, v, a) = (
        [0.1, 0.2, 0.3, 0.9, 0.3, -0.2, 0.2449],
        [0.1, 0.0, 0.2, 0.01, 0.3, -0.2, 0.1],
        [0.0, 1.0, 0.0, 0.2, -0.1, 0.3, 0.05],
    );
    let u0 = [0.1, 0.2, 0.3, 0.9, 0.3, -0.2, 0.2449].map(|x| x - 1e-3);
    let invariant = body
        .clone()
        .with_kinetic_energy(EulerKinetic::ScaleInvariant);
    let start = Some(StepStart { u_n: &u0, dt: 1e-2 });
    for (name, body, midpoint) in [
        ("rigid_body3d/inertial force+u,v,a derivatives", &body, None),
        (
            "rigid_body3d/energy-consistent midpoint force+u,v,a derivatives",
            &body,
            start,
        ),
        (
            "rigid_body3d/scale-invariant inertial force+u,v,a derivatives",
            &invariant,
            None,
        ),
        (
            "rigid_body3d/scale-invariant midpoint force+u,v,a derivatives",
            &invariant,
            start,
        ),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let x = RateState {
                    u: std::hint::black_box(&u),
                    v: &v,
                    a: &a,
                    midpoint,
                };
                body.inertia_force(
                    &x,
                    &mut RateForce {
                        f: &mut f[..7],
                        k: &mut k[..49],
                        c: &mut cc[..49],
                        m: &mut m[..49],
                    },
                )
            })
        });
    }
    let dirs = [0.9, 0.1, 0.0, -0.1, 0.95, 0.05, 0.0, -0.05, 1.02];
    let w = [0.3, -0.2, 0.1, 0.5, 0.7, -0.4];
    g.bench_function("director_orthonormality/B+curvature", |b| {
        b.iter(|| {
            let d = std::hint::black_box(&dirs);
            DirectorConstraints.jacobian(d, 0.0, &mut k[..54]);
            m[..81].fill(0.0);
            DirectorConstraints.add_curvature(d, 0.0, &w, 1.0, &mut m[..81]);
        })
    });
    for (attitude, q) in [
        (Attitude::EulerParameters, &u[3..7]),
        (Attitude::Directors, &dirs[..]),
    ] {
        for frame in [TorqueFrame::Spatial, TorqueFrame::Body] {
            let load = BodyTorque {
                torque: [0.3, -1.0, 0.5],
                frame,
                attitude,
                time: TimeFunction::Constant,
            };
            let n = load.ndof();
            let name = format!("torque {}/{frame:?}/force+tangent", attitude.name());
            g.bench_function(name, |b| {
                b.iter(|| {
                    load.force(
                        std::hint::black_box(q),
                        1.0,
                        &mut f[..n],
                        Some(&mut k[..n * n]),
                    )
                })
            });
        }
    }
    g.finish();
}

/// BDF-GGL (seed 003): the start and the first 10 steps, per step.
fn bdf(c: &mut Criterion) {
    let mut g = c.benchmark_group("bdf");
    let over = IntegratorSpec {
        method: Some("bdf".into()),
        rtol: Some(1e-6),
        atol: Some(1e-6),
        t_end: Some(1.0),
        ..IntegratorSpec::default()
    };
    let double_pendulum = {
        let file = load_model_file(format!(
            "{}/models/double_pendulum.toml",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("shipped model");
        let config = file.integrator(&over).expect("bdf settings");
        (Simulation::new(file.model), config)
    };
    let crank = {
        let (sim, config, _) = slider_crank(32);
        let spec = IntegratorSpec {
            t_end: Some(config.t_end),
            ..over.clone()
        };
        let config = spec.resolve().expect("bdf settings");
        (sim, config)
    };
    const STEPS: u64 = 10;
    g.throughput(Throughput::Elements(STEPS));
    for (name, (sim, config)) in [
        ("double_pendulum", double_pendulum),
        ("slider_crank_flexible/N=32", crank),
    ] {
        let sys = sim.mechanics();
        let mut integ = config.build(&sys).expect("integrator");
        let start = State::initial(&sim.mechanics());
        let mut state = start.clone();
        g.bench_function(format!("10_steps/{name}"), |b| {
            b.iter(|| {
                state.clone_from(&start);
                integ.start(&sys, &mut state).expect("consistent start");
                for _ in 0..STEPS {
                    integ
                        .advance(&sys, &mut state, config.t_end)
                        .expect("step converges");
                }
            })
        });
    }
    g.finish();
}

/// The assembly passes of L1 (25,000 beam elements) and L4 (14,300 rigid
/// bodies) on 1 and 2 threads.
fn assembly(c: &mut Criterion) {
    use flexmb::assembly::{Assembler, ElementEval, JointTerms, Mechanics, MultiplierMix};
    use flexmb::element::RateState;
    use flexmb::model::{hanging_beam, rigid_chain};
    let mut g = c.benchmark_group("assembly");
    g.sample_size(20);
    let l1 = hanging_beam(25_000).expect("L1 builds");
    let l4 = rigid_chain(14_300).expect("L4 builds");
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        let asm = Assembler::new(&l1);
        let mech = Mechanics::new(&l1, &asm);
        let mut sys = asm.new_system();
        let u = l1.u0.clone();
        g.bench_function(format!("l1_25000_elements/threads={threads}"), |b| {
            b.iter(|| {
                pool.install(|| {
                    sys.clear(true);
                    asm.add_mass(&mut sys.values, 1.0);
                    mech.add_element_forces(&ElementEval::At(&u), Some(1.0), &mut sys)
                })
            })
        });
        g.bench_function(
            format!("l1_25000_elements_residual/threads={threads}"),
            |b| {
                b.iter(|| {
                    pool.install(|| {
                        sys.clear(false);
                        mech.add_element_forces(&ElementEval::At(&u), None, &mut sys)
                    })
                })
            },
        );
        let asm = Assembler::new(&l4);
        let mech = Mechanics::new(&l4, &asm);
        let mut sys = asm.new_system();
        let (u, v) = (l4.u0.clone(), vec![0.1; asm.n_dofs()]);
        let lambda = vec![1.0; asm.n_constraints()];
        g.bench_function(format!("l4_14300_bodies/threads={threads}"), |b| {
            b.iter(|| {
                pool.install(|| {
                    let x = RateState {
                        u: &u,
                        v: &v,
                        a: &v,
                        midpoint: None,
                    };
                    mech.add_rate_forces(&x, Some([1.0, 0.5, 0.25]), &mut sys);
                    mech.set_constraint_rows(&u, 0.0, 1.0, true, &mut sys);
                    mech.add_joint_terms(
                        &JointTerms {
                            u: &u,
                            t: 0.0,
                            discrete_from: None,
                            force: Some((1.0, MultiplierMix::of(&lambda))),
                            column: 1.0,
                            curvature: Some((1.0, MultiplierMix::of(&lambda))),
                        },
                        &mut sys,
                    );
                })
            })
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    assembly,
    full_runs,
    single_steps,
    runge_kutta,
    bdf,
    galerkin,
    truss_chain,
    beam_element,
    other_elements
);
criterion_main!(benches);
