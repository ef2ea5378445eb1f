//! Criterion benchmarks (issue #2, Speed):
//! - one step and a full run (no output) of each shipped model;
//! - assembly + factorization + solve of the consistent-initialization
//!   saddle-point system `[M B^T; B 0]` for a hanging truss chain of 1e3, 1e4
//!   and 1e5 nodes (sparse LU, symbolic factorization done once outside).
//!
//! - per-element cost of the planar Euler–Bernoulli beam (`element/beam2d`).
//!
//! Run: `cargo bench --bench engine` (one group: `cargo bench --bench engine -- chain`).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use flexmb::integrate::{Integrator, IntegratorSpec, State};
use flexmb::linalg::SaddlePointSolver;
use flexmb::model::{hanging_truss_chain, load_model_file};
use flexmb::output::NullRecorder;
use flexmb::run::Simulation;

const MODELS: [(&str, f64); 3] = [
    ("double_pendulum", 100.0),
    ("four_mass", 50.0),
    ("circle_track", 10.0),
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

fn full_runs(c: &mut Criterion) {
    let mut g = c.benchmark_group("run");
    g.sample_size(10);
    for (name, t_end) in MODELS {
        let (sim, config, output) = load(name, t_end);
        g.bench_function(format!("{name}/t_end={t_end}"), |b| {
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
        let sys = sim.system();
        let mut integ = config.build(&sys).expect("integrator");
        let mut start = State::initial(&sim.model);
        integ.start(&sys, &mut start).expect("consistent start");
        let mut state = start.clone();
        g.bench_function(name, |b| {
            b.iter(|| {
                state.clone_from(&start);
                integ
                    .step(&sys, &mut state, config.dt)
                    .expect("step converges")
            })
        });
    }
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
                sim.asm
                    .fill_initial(&sim.model, &sim.model.u0, &sim.model.v0, 0.0, &mut sys);
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

/// Per-element cost of the planar Euler–Bernoulli beam: force + tangent, and
/// the midpoint discrete-gradient EOM force with its derivative.
fn beam_element(c: &mut Criterion) {
    use flexmb::element::{Beam2d, Element, EomLevel, LevelWeights};
    let el = Beam2d::new(0.1, 2.1e7, 175.0, 0.785, None);
    let u0 = [0.0, 0.0, 1.0, 0.0, 0.1, 0.001, 0.99, 0.02];
    let u1 = [0.0, 0.0, 1.0, 0.001, 0.1, 0.002, 0.98, 0.03];
    let mut f = [0.0; 8];
    let mut k = [0.0; 64];
    let mut g = c.benchmark_group("element/beam2d");
    g.bench_function("force+tangent", |b| {
        b.iter(|| {
            el.force(std::hint::black_box(&u1), &mut f, Some(&mut k));
            k[9]
        })
    });
    let zero = [0.0; 8];
    let lvl = EomLevel {
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
            el.eom_force(std::hint::black_box(&lvl), &mut f, &mut k);
            k[9]
        })
    });
    g.finish();
}

criterion_group!(benches, full_runs, single_steps, truss_chain, beam_element);
criterion_main!(benches);
