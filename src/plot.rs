//! PNG charts for `flexmb plot`: time histories of DOFs, energies, method
//! statistics and probes from a run's HDF5 file ([`run_chart`]), and a
//! summary-table column against a parameter, one curve per value of a
//! grouping parameter ([`table_chart`]). Titles name the model and the
//! quantity, axes carry units where the file tells them, and tick labels
//! resolve their spacing ([`TickFormat`]). Drawn with plotters; text uses the
//! bundled DejaVu Sans (`assets/fonts`), so no system fonts are needed.

mod quantity;
mod ticks;

pub use quantity::Quantity;
pub use ticks::TickFormat;

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::output::{Hdf5Reader, RunSource};

/// A plotting error, with what was being read or written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// Reading the input failed or it lacks what was asked for.
    #[error("{path}: {message}")]
    Input {
        /// Input file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Drawing or writing the image failed.
    #[error("{path}: cannot draw the chart: {message}")]
    Draw {
        /// Output file.
        path: String,
        /// Library message.
        message: String,
    },
}

/// One curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend entry.
    pub label: String,
    /// (x, y) points, drawn in order.
    pub points: Vec<(f64, f64)>,
}

/// A line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Title.
    pub title: String,
    /// x-axis label (with units).
    pub x_label: String,
    /// y-axis label (with units).
    pub y_label: String,
    /// Curves.
    pub series: Vec<Series>,
}

impl Chart {
    /// The chart on logarithmic axes (`flexmb plot --logx`, `--logy`): the
    /// decimal logarithm of the x and/or y values, with the axis labels
    /// prefixed `log10 `. A value that is not positive is an error naming
    /// its curve and point (`input` names the file read).
    pub fn log10(mut self, x: bool, y: bool, input: &Path) -> Result<Chart, PlotError> {
        for s in &mut self.series {
            for (k, p) in s.points.iter_mut().enumerate() {
                for (on, v, axis) in [(x, &mut p.0, "x"), (y, &mut p.1, "y")] {
                    if !on {
                        continue;
                    }
                    if v.is_nan() || *v <= 0.0 {
                        return Err(input_err(
                            input,
                            format!(
                                "a logarithmic {axis} axis needs positive values; \
                                 curve '{}' has {axis} = {v} at its point {}",
                                s.label,
                                k + 1
                            ),
                        ));
                    }
                    *v = v.log10();
                }
            }
        }
        if x {
            self.x_label = format!("log10 {}", self.x_label);
        }
        if y {
            self.y_label = format!("log10 {}", self.y_label);
        }
        Ok(self)
    }
}

fn input_err(path: &Path, message: impl std::fmt::Display) -> PlotError {
    PlotError::Input {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

/// Time histories of the named probes (`/time`, `/probes/<name>`) of a run
/// file with the y axis labelled `y_label`: [`run_chart`] of the probes.
pub fn probe_chart(h5: &Path, probes: &[String], y_label: &str) -> Result<Chart, PlotError> {
    let q: Vec<Quantity> = probes.iter().cloned().map(Quantity::Probe).collect();
    let mut chart = run_chart(h5, &q)?;
    chart.y_label = y_label.into();
    Ok(chart)
}

/// Time histories of `quantities` (DOFs, energies, statistics, probes by
/// name) of a run file. The title is the model's `title` (or the file's
/// name) and what is drawn; the y axis says what it shows with its unit
/// when all curves share it (otherwise each legend entry carries its unit).
/// An unknown name is an error listing the names the file has.
pub fn run_chart(h5: &Path, quantities: &[Quantity]) -> Result<Chart, PlotError> {
    if quantities.is_empty() {
        return Err(input_err(
            h5,
            "nothing to plot: name a DOF, energy, statistic or probe",
        ));
    }
    let file = Hdf5Reader::open(h5).map_err(|e| input_err(h5, e))?;
    let time = file.f64s("time").map_err(|e| input_err(h5, e))?;
    let same =
        |f: &dyn Fn(&Quantity) -> String| quantities.iter().all(|q| f(q) == f(&quantities[0]));
    let with_unit = |text: String, unit: Option<&str>| match unit {
        Some(u) => format!("{text} ({u})"),
        None => text,
    };
    let shared_unit = same(&|q| format!("{:?}", q.unit()));
    let mut series = Vec::new();
    for q in quantities {
        let y = q.read(&file).map_err(|m| input_err(h5, m))?;
        let label = if shared_unit {
            q.label()
        } else {
            with_unit(q.label(), q.unit())
        };
        series.push(Series {
            label,
            points: time.iter().copied().zip(y).collect(),
        });
    }
    let y_label = if same(&|q| q.axis().to_string()) && shared_unit {
        with_unit(quantities[0].axis().to_string(), quantities[0].unit())
    } else if shared_unit {
        with_unit("value".into(), quantities[0].unit())
    } else {
        "value".into()
    };
    let model = quantity::model_title(&file).unwrap_or_else(|| {
        h5.file_stem()
            .map_or(String::new(), |f| f.to_string_lossy().into_owned())
    });
    let what: Vec<String> = quantities.iter().map(Quantity::label).collect();
    let what = if what.len() <= 3 {
        what.join(", ")
    } else {
        format!("{} and {} more", what[..2].join(", "), what.len() - 2)
    };
    Ok(Chart {
        title: format!("{model}: {what}"),
        x_label: "t (s)".into(),
        y_label,
        series,
    })
}

/// Which rows and columns of a table to plot.
#[derive(Debug, Clone, Copy)]
pub struct TableQuery<'a> {
    /// Column of the x values.
    pub x: &'a str,
    /// Column of the y values.
    pub y: &'a str,
    /// Column whose distinct values each get a curve.
    pub group: Option<&'a str>,
    /// Only rows whose column equals the value (all must hold).
    pub filters: &'a [(String, String)],
}

/// Column `y` against column `x` of a CSV table (a batch `summary.csv`), one
/// curve per distinct value of `group` (sorted by x), over the rows that pass
/// the filters. Rows whose x or y is not a number (a failed case) are left out.
pub fn table_chart(
    csv_path: &Path,
    q: &TableQuery<'_>,
    labels: (&str, &str),
) -> Result<Chart, PlotError> {
    let (x, y, group) = (q.x, q.y, q.group);
    let mut reader = csv::Reader::from_path(csv_path).map_err(|e| input_err(csv_path, e))?;
    let headers = reader
        .headers()
        .map_err(|e| input_err(csv_path, e))?
        .clone();
    let col = |name: &str| {
        headers.iter().position(|h| h == name).ok_or_else(|| {
            let known: Vec<&str> = headers.iter().collect();
            input_err(
                csv_path,
                format!("no column '{name}' (columns: {})", known.join(", ")),
            )
        })
    };
    let (cx, cy) = (col(x)?, col(y)?);
    let cg = group.map(col).transpose()?;
    let filters = q
        .filters
        .iter()
        .map(|(k, v)| Ok((col(k)?, v.as_str())))
        .collect::<Result<Vec<_>, PlotError>>()?;
    let mut curves: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for row in reader.records() {
        let row = row.map_err(|e| input_err(csv_path, e))?;
        if !filters.iter().all(|&(c, v)| row.get(c) == Some(v)) {
            continue;
        }
        let num = |c: usize| row.get(c).and_then(|s| s.trim().parse::<f64>().ok());
        if let (Some(xv), Some(yv)) = (num(cx), num(cy)) {
            let key = cg.map_or(String::new(), |c| {
                format!(
                    "{} = {}",
                    group.unwrap_or_default(),
                    row.get(c).unwrap_or_default()
                )
            });
            curves.entry(key).or_default().push((xv, yv));
        }
    }
    if curves.is_empty() {
        return Err(input_err(
            csv_path,
            format!("no row has numbers in both '{x}' and '{y}'"),
        ));
    }
    let series = curves
        .into_iter()
        .map(|(label, mut points)| {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                label: if label.is_empty() {
                    y.to_string()
                } else {
                    label
                },
                points,
            }
        })
        .collect();
    let condition: Vec<String> = q
        .filters
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    let title = if condition.is_empty() {
        format!("{y} vs {x}")
    } else {
        format!("{y} vs {x} ({})", condition.join(", "))
    };
    Ok(Chart {
        title,
        x_label: labels.0.into(),
        y_label: labels.1.into(),
        series,
    })
}

fn register_bundled_font() {
    static FONT: std::sync::Once = std::sync::Once::new();
    FONT.call_once(|| {
        let bytes: &'static [u8] = include_bytes!("../assets/fonts/DejaVuSans.ttf");
        // The bundled font is valid TrueType; registration only fails on a corrupt file.
        let _ = register_font("sans-serif", FontStyle::Normal, bytes);
    });
}

/// Range of `v` padded by 5 % (a unit range around a single value).
fn padded(v: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = v.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
        (l.min(x), h.max(x))
    });
    if !lo.is_finite() || !hi.is_finite() {
        return 0.0..1.0;
    }
    let pad = if hi > lo {
        0.05 * (hi - lo)
    } else {
        0.5 * lo.abs().max(1.0)
    };
    lo - pad..hi + pad
}

/// Most labelled ticks on the x and y axes.
const X_TICKS: usize = 10;
const Y_TICKS: usize = 10;

/// Draws `chart` into a PNG of `size` pixels.
pub fn draw_png(chart: &Chart, path: &Path, size: (u32, u32)) -> Result<(), PlotError> {
    register_bundled_font();
    let draw_err = |e: &dyn std::fmt::Display| PlotError::Draw {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let points = || chart.series.iter().flat_map(|s| s.points.iter());
    let (xr, yr) = (padded(points().map(|p| p.0)), padded(points().map(|p| p.1)));
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_err(&e))?;
    let mut ctx = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(xr.clone(), yr.clone())
        .map_err(|e| draw_err(&e))?;
    // Tick labels that differ between neighbours; an offset shown once goes
    // into the axis description.
    let (x_ticks, y_ticks) = (
        TickFormat::for_range(xr.start, xr.end, X_TICKS),
        TickFormat::for_range(yr.start, yr.end, Y_TICKS),
    );
    let desc = |label: &str, t: &TickFormat| match t.offset_text() {
        Some(o) => format!("{label}   [ticks {o}]"),
        None => label.to_string(),
    };
    let (x_desc, y_desc) = (
        desc(&chart.x_label, &x_ticks),
        desc(&chart.y_label, &y_ticks),
    );
    let (x_fmt, y_fmt) = (|v: &f64| x_ticks.label(*v), |v: &f64| y_ticks.label(*v));
    ctx.configure_mesh()
        .x_labels(X_TICKS)
        .y_labels(Y_TICKS)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| draw_err(&e))?;
    for (i, s) in chart.series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let style = ShapeStyle::from(color).stroke_width(2);
        ctx.draw_series(LineSeries::new(s.points.iter().copied(), style))
            .map_err(|e| draw_err(&e))?
            .label(&s.label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
        if s.points.len() <= 50 {
            ctx.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| draw_err(&e))?;
        }
    }
    ctx.configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|e| draw_err(&e))?;
    root.present().map_err(|e| draw_err(&e))
}
