//! `flexmb plot` and the plot module: probe histories from a run file and a
//! summary-table chart, written as PNG images that decode with the size
//! asked for and are not blank; bad requests give clear errors.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::scratch::{assert_success, temp_dir};
use common::{run_file_into, shipped_with};
use flexmb::output::{Hdf5Recorder, OutputConfig};
use flexmb::plot::{draw_png, probe_chart, run_chart, table_chart, Quantity, TableQuery};

fn scratch(tag: &str) -> PathBuf {
    temp_dir(&format!("plot-{tag}"))
}

/// Decodes a PNG: (width, height, number of distinct RGB colours).
fn decode(path: &Path) -> (u32, u32, usize) {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let mut colours: Vec<[u8; 3]> = buf[..info.buffer_size()]
        .chunks(px)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    colours.sort_unstable();
    colours.dedup();
    (info.width, info.height, colours.len())
}

/// A short slider-crank run (probe `midpoint_deflection`) into `dir/sc.h5`.
fn slider_crank_run(dir: &Path) -> PathBuf {
    let sets = ["integrator.t_end=0.004", "output.every=1"];
    let file = shipped_with("slider_crank_flexible", &sets);
    let path = dir.join("sc.h5");
    let mut rec = Hdf5Recorder::create(&path, OutputConfig::default()).unwrap();
    let (s, _) = run_file_into(file, &Default::default(), &mut rec);
    assert!(s.failure.is_none());
    path
}

#[test]
fn probe_history_chart() {
    let dir = scratch("probe");
    let h5 = slider_crank_run(&dir);
    let chart = probe_chart(&h5, &["midpoint_deflection".into()], "deflection (in)").unwrap();
    assert_eq!(chart.series.len(), 1);
    assert_eq!(chart.series[0].points.len(), 401);
    assert_eq!(chart.x_label, "t (s)");
    let png = dir.join("p.png");
    draw_png(&chart, &png, (640, 400)).unwrap();
    let (w, h, colours) = decode(&png);
    assert_eq!((w, h), (640, 400));
    assert!(colours > 10, "the image has {colours} colours");
    let e = probe_chart(&h5, &["nope".into()], "x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no probe named 'nope'"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A short heavy-top run (no probes; DOFs `top.x .. top.p3`) into `dir/top.h5`.
fn heavy_top_run(dir: &Path) -> PathBuf {
    let file = shipped_with("heavy_top", &["integrator.t_end=0.05"]);
    let path = dir.join("top.h5");
    let mut rec = Hdf5Recorder::create(&path, OutputConfig::default()).unwrap();
    let (s, _) = run_file_into(file, &Default::default(), &mut rec);
    assert!(s.failure.is_none());
    path
}

/// DOFs, energies and statistics by name: the model's title and the
/// quantity in the title, units on the axis (or in the legend when the
/// curves differ), and an unknown name listing what the file has.
#[test]
fn dof_energy_and_stat_charts() {
    let dir = scratch("quantities");
    let h5 = heavy_top_run(&dir);
    let energy = run_chart(&h5, &[Quantity::Energy("total".into())]).unwrap();
    assert_eq!(energy.title, "Heavy top (Euler parameters): total energy");
    assert_eq!(
        (energy.x_label.as_str(), energy.y_label.as_str()),
        ("t (s)", "energy (J)")
    );
    assert_eq!(energy.series[0].points.len(), 51);
    let x = run_chart(
        &h5,
        &[Quantity::Dof("top.x".into()), Quantity::Dof("top.y".into())],
    )
    .unwrap();
    assert_eq!(x.y_label, "position (m)");
    assert_eq!(x.title, "Heavy top (Euler parameters): top.x, top.y");
    let mixed = run_chart(
        &h5,
        &[
            Quantity::Dof("top.p0".into()),
            Quantity::Energy("kinetic".into()),
            Quantity::Stat("factorizations".into()),
        ],
    )
    .unwrap();
    assert_eq!(mixed.y_label, "value");
    let labels: Vec<&str> = mixed.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["top.p0", "kinetic energy (J)", "factorizations"]);
    // p0 starts at 1 (identity attitude); 3 factorizations per step.
    assert_eq!(mixed.series[0].points[0], (0.0, 1.0));
    assert_eq!(mixed.series[2].points[1].1, 3.0);
    let png = dir.join("q.png");
    draw_png(&mixed, &png, (640, 400)).unwrap();
    assert!(decode(&png).2 > 10);
    for (q, listed) in [
        (
            Quantity::Energy("totl".into()),
            "available: kinetic, potential, total, external_work",
        ),
        (
            Quantity::Dof("top.q".into()),
            "available: top.x, top.y, top.z, top.p0, top.p1, top.p2, top.p3",
        ),
        (Quantity::Stat("nfcn".into()), "factorizations"),
        (Quantity::Probe("tip".into()), "available: none"),
    ] {
        let e = run_chart(&h5, std::slice::from_ref(&q))
            .unwrap_err()
            .to_string();
        assert!(e.contains("named '") && e.contains(listed), "{q:?}: {e}");
    }
    // The command line: --energy, --dof, --stat; an unknown name exits 2 with the list.
    let flexmb = env!("CARGO_BIN_EXE_flexmb");
    let out = Command::new(flexmb)
        .args([
            "plot",
            h5.to_str().unwrap(),
            "--energy",
            "total",
            "--dof",
            "top.p1",
        ])
        .args(["--stat", "factorizations", "--size", "400x300", "-o"])
        .arg(&png)
        .output()
        .unwrap();
    assert_success(&out);
    assert_eq!(decode(&png).0, 400);
    let out = Command::new(flexmb)
        .args(["plot", h5.to_str().unwrap(), "--energy", "totl", "-o"])
        .arg(&png)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no energy named 'totl' (available: kinetic"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

const TABLE: &str = "case,generator.elements,generator.omega0,status,midpoint_deflection.max_abs
a,4,60.0,completed,0.0236
b,2,60.0,completed,0.0230
c,8,60.0,completed,0.0237
d,4,180.0,completed,0.2784
e,2,180.0,failed,
f,8,180.0,completed,0.2790
";

#[test]
fn summary_table_chart() {
    let dir = scratch("table");
    let csv = dir.join("summary.csv");
    std::fs::write(&csv, TABLE).unwrap();
    let labels = ("elements per rod", "max |deflection| (in)");
    let q = |x, y, group, filters| TableQuery {
        x,
        y,
        group,
        filters,
    };
    let chart = table_chart(
        &csv,
        &q(
            "generator.elements",
            "midpoint_deflection.max_abs",
            Some("generator.omega0"),
            &[],
        ),
        labels,
    )
    .unwrap();
    let curves: Vec<(&str, Vec<(f64, f64)>)> = chart
        .series
        .iter()
        .map(|s| (s.label.as_str(), s.points.clone()))
        .collect();
    assert_eq!(
        curves,
        [
            (
                "generator.omega0 = 180.0",
                vec![(4.0, 0.2784), (8.0, 0.2790)]
            ),
            (
                "generator.omega0 = 60.0",
                vec![(2.0, 0.0230), (4.0, 0.0236), (8.0, 0.0237)]
            ),
        ]
    );
    let png = dir.join("t.png");
    draw_png(&chart, &png, (800, 500)).unwrap();
    assert_eq!(decode(&png).0, 800);
    // Logarithmic axes: log10 of the values, labels prefixed; a value that
    // is not positive is refused with its curve and point.
    let log = chart.clone().log10(true, true, &csv).unwrap();
    assert_eq!(log.x_label, "log10 elements per rod");
    assert_eq!(log.y_label, "log10 max |deflection| (in)");
    let p = log.series[1].points[0];
    assert_eq!(p, (2f64.log10(), 0.0230f64.log10()));
    draw_png(&log, &png, (800, 500)).unwrap();
    let mut bad = chart.clone();
    bad.series[1].points[2].1 = 0.0;
    let e = bad.log10(false, true, &csv).unwrap_err().to_string();
    assert!(
        e.contains("logarithmic y axis needs positive values")
            && e.contains("'generator.omega0 = 60.0'")
            && e.contains("point 3"),
        "{e}"
    );
    assert_eq!(chart.clone().log10(false, false, &csv).unwrap(), chart);
    // A filter keeps the 60 rad/s rows only.
    let only60 = [("generator.omega0".to_string(), "60.0".to_string())];
    let chart = table_chart(
        &csv,
        &q(
            "generator.elements",
            "midpoint_deflection.max_abs",
            None,
            &only60,
        ),
        labels,
    )
    .unwrap();
    assert_eq!(chart.series.len(), 1);
    assert_eq!(chart.series[0].points.len(), 3);
    let e = table_chart(&csv, &q("elements", "x", None, &[]), labels)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no column 'elements'"), "{e}");
    let e = table_chart(&csv, &q("case", "status", None, &[]), labels)
        .unwrap_err()
        .to_string();
    assert!(e.contains("row has numbers"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn plot_command() {
    let dir = scratch("cli");
    let h5 = slider_crank_run(&dir);
    let flexmb = env!("CARGO_BIN_EXE_flexmb");
    let png = dir.join("cli.png");
    let out = Command::new(flexmb)
        .args([
            "plot",
            h5.to_str().unwrap(),
            "--probe",
            "midpoint_deflection",
        ])
        .args(["--ylabel", "deflection (in)", "--size", "500x300", "-o"])
        .arg(&png)
        .output()
        .unwrap();
    assert_success(&out);
    assert_eq!(decode(&png).0, 500);
    // Usage errors: no probe, a CSV without columns, a bad size.
    for args in [
        vec!["plot", h5.to_str().unwrap(), "-o", "x.png"],
        vec!["plot", "summary.csv", "-o", "x.png"],
        vec![
            "plot",
            h5.to_str().unwrap(),
            "--probe",
            "p",
            "--size",
            "9x9",
            "-o",
            "x.png",
        ],
    ] {
        let out = Command::new(flexmb).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("error:"));
    }
    std::fs::remove_dir_all(&dir).ok();
}
