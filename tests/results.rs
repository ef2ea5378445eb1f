//! `Results`: a run recorded in memory by a recording `Stepper`, recorded
//! by `Simulation::run` into a `Results`, and read back from the run's HDF5
//! file by `read_hdf5` are the same, bit for bit (histories, probes,
//! statistics with counters as integers, mesh); lookups by name answer
//! errors that list the names there are.

mod common;

use common::model_path;
use flexmb::input::load_model_file;
use flexmb::integrate::IntegratorSpec;
use flexmb::output::{read_hdf5, OutputConfig, Recording, Results, ResultsError, StatValues};
use flexmb::run::{Simulation, Stepper};

/// The three ways of one run of `model` to `t_end`: stepped and recorded,
/// run into a `Results`, run into a file and read back.
fn three_ways(model: &str, t_end: f64) -> [Results; 3] {
    let file = load_model_file(model_path(model)).unwrap();
    let spec = IntegratorSpec {
        t_end: Some(t_end),
        ..Default::default()
    };
    let config = file.integrator(&spec).unwrap();
    let mut stepper = Stepper::new(file.model.clone(), &config)
        .unwrap()
        .record(Recording::all());
    stepper.advance_to(t_end).unwrap();
    let stepped = stepper.into_results().unwrap();

    let sim = Simulation::new(file.model);
    let output = OutputConfig::default();
    let mut ran = Results::default();
    sim.run(&config, "", &output, &mut ran, &mut |_| {})
        .unwrap();

    // One file per (model, t_end): the tests of this binary run in parallel.
    let path = common::scratch::scratch_file("results", &format!("{model}-{t_end}.h5"));
    sim.run_to_file(&config, "", &output, Some(&path), &mut |_| {})
        .unwrap();
    [stepped, ran, read_hdf5(&path).unwrap()]
}

/// The fields in which `a` and `b` differ.
fn differ(a: &Results, b: &Results) -> Vec<String> {
    let mut out = vec![];
    let mut check = |name: &str, same: bool| {
        if !same {
            out.push(name.to_string());
        }
    };
    check("time", a.time == b.time);
    check("step", a.step == b.step);
    check("u", a.u == b.u);
    check("v", a.v == b.v);
    check("a", a.a == b.a);
    check("lambda", a.lambda == b.lambda);
    check("energies", a.energies == b.energies);
    check("constraints", a.constraints == b.constraints);
    check(
        "newton",
        a.newton_iterations == b.newton_iterations && a.newton_residual == b.newton_residual,
    );
    check("probes", a.probes == b.probes);
    check("stats", a.stats == b.stats);
    check(
        "names",
        a.dof_names == b.dof_names && a.multiplier_names == b.multiplier_names,
    );
    check(
        "status",
        a.status == b.status && a.t_end_reached == b.t_end_reached,
    );
    check(
        "integrator",
        a.integrator == b.integrator && a.model_text == b.model_text,
    );
    check("mesh", a.mesh == b.mesh);
    check("recording", a.recording() == b.recording());
    if a.mesh != b.mesh {
        out.push(format!("{:?}\n{:?}", a.mesh, b.mesh));
    }
    out
}

fn bits(x: &[f64]) -> Vec<u64> {
    x.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn recorded_in_memory_equals_the_file_bitwise() {
    // Planar bodies with probes, a beam with a probe, 3-D bodies on Euler
    // parameters and on directors.
    for (model, t_end) in [
        ("dumbbell", 0.05),
        ("hanging_beam", 0.005),
        ("heavy_top", 0.02),
        ("heavy_top_directors", 0.02),
        ("slider_crank_tsda", 0.02),
    ] {
        let [stepped, ran, read] = three_ways(model, t_end);
        assert!(stepped.len() > 3, "{model}: {} rows", stepped.len());
        assert!(read.mesh.is_some(), "{model}: the mesh");
        assert_eq!(
            differ(&stepped, &read),
            Vec::<String>::new(),
            "{model}: stepped vs read"
        );
        assert_eq!(
            differ(&ran, &read),
            Vec::<String>::new(),
            "{model}: run vs read"
        );
        assert!(stepped == read && ran == read);
        for r in [&stepped, &ran] {
            assert_eq!(bits(r.u.as_slice()), bits(read.u.as_slice()), "{model}");
            assert_eq!(bits(r.lambda.as_slice()), bits(read.lambda.as_slice()));
            assert_eq!(
                bits(r.energy("total").unwrap()),
                bits(read.energy("total").unwrap())
            );
            for p in &read.probes {
                assert_eq!(bits(r.probe(&p.name).unwrap()), bits(&p.values), "{model}");
            }
        }
        // Counters come back as integers, one per row, summing to the total.
        let it = read.count("newton_iterations").unwrap();
        assert_eq!(it.len(), read.len());
        assert_eq!(
            it.iter().sum::<u64>(),
            read.newton_iterations
                .iter()
                .map(|&i| u64::from(i))
                .sum::<u64>()
        );
    }
}

#[test]
fn probes_and_stats_are_in_model_and_method_order() {
    let [stepped, _, read] = three_ways("dumbbell", 0.01);
    let names: Vec<&str> = read.probes.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names.len(), 2);
    assert_eq!(names, ["rod_tension", "energy"]);
    let stats: Vec<&str> = stepped.stats.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        stats,
        read.stats
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
    );
    // The rod's tension is 6 exactly (the model's comment), 6 - 1e-5 at dt = 1e-3.
    let t = read.probe("rod_tension").unwrap();
    assert!(t.iter().all(|t| (t - 6.0).abs() < 2e-5), "{t:?}");
}

#[test]
fn lookups_name_what_there_is() {
    let [r, _, _] = three_ways("hanging_beam", 0.002);
    let e = r.dof("b99.x").unwrap_err();
    assert!(matches!(e, ResultsError::UnknownName { what: "DOF", .. }));
    assert!(e.to_string().contains("b40.y"), "{e}");
    let e = r.probe("tip").unwrap_err().to_string();
    assert!(
        e.contains("no probe named 'tip'") && e.contains("tip_y"),
        "{e}"
    );
    let e = r.energy("elastic").unwrap_err().to_string();
    assert!(
        e.contains("kinetic, potential, total, external_work"),
        "{e}"
    );
    assert!(r
        .stat("no_such")
        .unwrap_err()
        .to_string()
        .contains("newton_iterations"));
    assert!(r.multiplier("nothing[0]").is_err());
    assert_eq!(r.dof("b40.y").unwrap().len(), r.len());
    assert_eq!(r.velocity("b40.y").unwrap().len(), r.len());
    assert_eq!(r.acceleration("b40.y").unwrap().len(), r.len());
    assert_eq!(r.constraint("position").unwrap().len(), r.len());
    assert_eq!(r.u.rows(), r.len());
    assert_eq!(r.u.cols(), r.dof_names.len());
    assert_eq!(r.u.row(1).len(), r.u.cols());
}

#[test]
fn a_selection_keeps_only_what_it_names() {
    let file = load_model_file(model_path("dumbbell")).unwrap();
    let config = file
        .integrator(&IntegratorSpec {
            t_end: Some(0.01),
            ..Default::default()
        })
        .unwrap();
    let mut s = Stepper::new(file.model, &config)
        .unwrap()
        .record(Recording {
            probes: true,
            stats: true,
            ..Default::default()
        });
    s.advance_to(0.01).unwrap();
    let r = s.results().unwrap();
    assert_eq!(r.len(), 11);
    assert_eq!(r.probe("energy").unwrap().len(), 11);
    assert_eq!(r.u.rows(), 0);
    assert!(matches!(
        r.dof("bar1.x"),
        Err(ResultsError::UnknownName { .. }) | Err(ResultsError::NotRecorded { what: "u" })
    ));
    let name = r.dof_names[0].clone();
    assert_eq!(r.dof(&name), Err(ResultsError::NotRecorded { what: "u" }));
    assert!(r
        .energy("total")
        .unwrap_err()
        .to_string()
        .contains("not recorded"));
    assert!(matches!(r.stat("newton_iterations").unwrap(), StatValues::Count(c) if c.len() == 11));
    // A stepper that does not record has no results.
    let plain = Stepper::new(
        load_model_file(model_path("dumbbell")).unwrap().model,
        &config,
    )
    .unwrap();
    assert!(plain.results().is_none());
}

#[test]
fn counts_are_integers_in_the_summary_and_the_stepper() {
    let file = load_model_file(model_path("dumbbell")).unwrap();
    let spec = IntegratorSpec {
        t_end: Some(0.05),
        ..Default::default()
    };
    let config = file.integrator(&spec).unwrap();
    let mut s = Stepper::new(file.model.clone(), &config).unwrap();
    s.advance_to(0.05).unwrap();
    let it: u64 = s.count("newton_iterations").unwrap();
    assert_eq!(it, s.newton_iterations());
    assert!(it >= 50);
    assert_eq!(s.count("no_such"), None);
    assert!(s.counts().all(|(n, _)| n != "no_such"));
    let summary = Simulation::new(file.model)
        .run(
            &config,
            "",
            &OutputConfig::default(),
            &mut Results::default(),
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(
        summary.count("newton_iterations"),
        Some(summary.newton_iterations)
    );
    assert_eq!(summary.count("newton_iterations"), Some(it));
    assert_eq!(summary.counts.len(), summary.stats.len()); // GSSSS: counters only
    assert_eq!(summary.count("drift_position"), None);
}
