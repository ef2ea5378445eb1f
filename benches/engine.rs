//! Criterion benchmarks (issue #2, Speed):
//! - one step and a full run (no output) of each shipped model;
//! - assembly + factorization + solve of the consistent-initialization
//!   saddle-point system `[M B^T; B 0]` for a hanging truss chain of 1e3, 1e4
//!   and 1e5 nodes (sparse LU, symbolic factorization done once outside).
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

criterion_group!(benches, full_runs, single_steps, truss_chain);
criterion_main!(benches);
