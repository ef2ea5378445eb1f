//! Criterion benchmarks: whole runs of the shipped models (assembly, Newton,
//! LU, no output).

use criterion::{criterion_group, criterion_main, Criterion};

use flexmb::integrate::IntegratorSpec;
use flexmb::model::load_model_file;
use flexmb::output::NullRecorder;
use flexmb::run::Simulation;

fn shipped_models(c: &mut Criterion) {
    for (name, t_end) in [
        ("double_pendulum", 100.0),
        ("four_mass", 50.0),
        ("circle_track", 10.0),
    ] {
        let file = load_model_file(format!("models/{name}.toml")).expect("shipped model");
        let config = file
            .integrator(&IntegratorSpec {
                t_end: Some(t_end),
                ..IntegratorSpec::default()
            })
            .expect("shipped integrator");
        let sim = Simulation::new(file.model);
        c.bench_function(&format!("run/{name}/t_end={t_end}"), |b| {
            b.iter(|| {
                let s = sim
                    .run(&config, "", &file.output, &mut NullRecorder, &mut |_| {})
                    .expect("no output errors");
                assert!(s.failure.is_none());
                s.steps
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = shipped_models
}
criterion_main!(benches);
