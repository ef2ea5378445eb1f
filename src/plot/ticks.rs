//! Tick labels that differ between neighbours.
//!
//! A chart library's default label (a fixed number of significant digits)
//! repeats itself when the axis range is small against the values: an energy
//! conserved to 1e-13 around 5435.6968 J gets ten ticks all reading
//! "5435.6968". [`TickFormat`] picks the digits from the tick spacing instead,
//! and when the spacing is below the values' last few digits it writes the
//! ticks as offsets from a round value shown once beside the axis
//! (the "offset notation" of matplotlib's `ScalarFormatter`), or in
//! scientific notation for very large or small values.

/// Significant digits beyond which an axis switches to offset notation: the
/// labels would need more than this many digits to tell neighbours apart.
const MAX_DIGITS: i32 = 6;

/// How the tick labels of one axis are written.
#[derive(Debug, Clone, PartialEq)]
pub struct TickFormat {
    /// Subtracted from every value before it is written (0 for none).
    offset: f64,
    /// The offset as shown beside the axis, e.g. `+5435.6968`; empty for none.
    offset_text: String,
    /// How a (shifted) value is written.
    style: Style,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Style {
    /// Fixed point with this many decimals.
    Fixed(usize),
    /// Scientific with this many significant digits.
    Scientific(usize),
}

/// The smallest of 1, 2, 5 times a power of ten that is at least `x > 0`:
/// the spacing of at most `n` ticks over a span `n x`.
fn nice_step(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|s| *s >= x * (1.0 - 1e-12))
        .unwrap_or(10.0 * p)
}

/// Decimal exponent of `x > 0`: `floor(log10(x))`.
fn exponent(x: f64) -> i32 {
    x.log10().floor() as i32
}

/// `x` in scientific notation with `sig` significant digits, `e` without `+`
/// and leading zeros (`1.25e-4`, `-3.0e6`).
fn scientific(x: f64, sig: usize) -> String {
    format!("{:.*e}", sig.saturating_sub(1), x)
}

impl TickFormat {
    /// The format for an axis from `lo` to `hi` with at most `max_ticks`
    /// labelled ticks (the spacing is taken as the finest a chart library
    /// would choose, so that the labels resolve it).
    pub fn for_range(lo: f64, hi: f64, max_ticks: usize) -> TickFormat {
        let plain = |style| TickFormat {
            offset: 0.0,
            offset_text: String::new(),
            style,
        };
        let span = hi - lo;
        let mag = lo.abs().max(hi.abs());
        if !(span.is_finite() && span > 0.0 && mag.is_finite()) {
            return plain(Style::Scientific(6));
        }
        let step = nice_step(span / max_ticks.max(1) as f64);
        let (e_step, e_mag) = (exponent(step), exponent(mag));
        let style = |e_max: i32| {
            // Digits from the largest shown value's leading digit down to the step's.
            let digits = (e_max - e_step + 1).max(1) as usize;
            if e_max >= 6 || e_max <= -4 {
                Style::Scientific(digits.max(2))
            } else {
                Style::Fixed((-e_step).max(0) as usize)
            }
        };
        if e_mag - e_step < MAX_DIGITS {
            return plain(style(e_mag));
        }
        // Offset: the middle of the range rounded to the span's power of
        // ten, so the shifted values stay within about a span of zero.
        let unit = 10f64.powi(exponent(span));
        let mid = 0.5 * (lo + hi);
        let offset = (mid / unit).round() * unit;
        let shifted = (lo - offset).abs().max((hi - offset).abs());
        let e_off = exponent(offset.abs().max(unit));
        let e_unit = exponent(unit);
        let offset_text = if e_off >= 15 || e_unit <= -15 || (e_unit > 0 && e_off >= 6) {
            let sig = (e_off - e_unit + 1).max(1) as usize;
            format!(
                "{}{}",
                if offset < 0.0 { "-" } else { "+" },
                scientific(offset.abs(), sig)
            )
        } else {
            format!(
                "{}{:.*}",
                if offset < 0.0 { "-" } else { "+" },
                (-e_unit).max(0) as usize,
                offset.abs()
            )
        };
        TickFormat {
            offset,
            offset_text,
            style: style(exponent(shifted.max(step))),
        }
    }

    /// The label of the tick at `v`.
    pub fn label(&self, v: f64) -> String {
        let x = v - self.offset;
        match self.style {
            Style::Fixed(d) => {
                let s = format!("{x:.d$}");
                // "-0.00" reads as a different value from "0.00".
                if s.trim_start_matches('-')
                    .chars()
                    .all(|c| c == '0' || c == '.')
                {
                    s.trim_start_matches('-').to_string()
                } else {
                    s
                }
            }
            Style::Scientific(_) if x == 0.0 => "0".into(),
            Style::Scientific(sig) => scientific(x, sig),
        }
    }

    /// The offset added to every label, as shown beside the axis
    /// (`+5435.6968`), or `None` when labels are the values themselves.
    pub fn offset_text(&self) -> Option<&str> {
        (!self.offset_text.is_empty()).then_some(self.offset_text.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ticks a chart library places on `[lo, hi]`: multiples of `step`.
    fn ticks(lo: f64, hi: f64, step: f64) -> Vec<f64> {
        let first = (lo / step).ceil() as i64;
        let last = (hi / step).floor() as i64;
        (first..=last).map(|k| k as f64 * step).collect()
    }

    /// Labels of `ticks` with `f`, checked distinct from their neighbours.
    fn distinct_labels(f: &TickFormat, ticks: &[f64]) -> Vec<String> {
        let labels: Vec<String> = ticks.iter().map(|&v| f.label(v)).collect();
        for w in labels.windows(2) {
            assert_ne!(w[0], w[1], "repeated tick label in {labels:?} ({f:?})");
        }
        labels
    }

    /// The heavy top's total energy: conserved to about 1e-13 relative
    /// around 5435.6968 J. A plain 8-digit format gives ten identical
    /// "5435.6968" ticks; here each tick reads differently, as an offset
    /// from a value shown once.
    #[test]
    fn energy_conserved_to_round_off() {
        let (lo, hi) = (5435.6968000002, 5435.6968000011);
        let step = nice_step((hi - lo) / 10.0);
        let t = ticks(lo, hi, step);
        assert!(t.len() >= 4, "{t:?}");
        let plain: Vec<String> = t.iter().map(|v| format!("{v:.4}")).collect();
        assert!(plain.windows(2).all(|w| w[0] == w[1]), "{plain:?}");
        let f = TickFormat::for_range(lo, hi, 10);
        let labels = distinct_labels(&f, &t);
        let offset = f.offset_text().expect("an offset");
        assert!(offset.starts_with("+5435.6968"), "{offset}");
        // Offset plus label gives the tick back.
        for (v, l) in t.iter().zip(&labels) {
            let back = offset[1..].parse::<f64>().unwrap() + l.parse::<f64>().unwrap();
            assert!((back - v).abs() <= 0.1 * step, "{v} vs {offset} + {l}");
        }
    }

    /// A sweep summary: deflections 0.023596 .. 0.023655 (what repeated
    /// "0.02365" twice on the slider-crank chart); fixed decimals resolve
    /// the spacing, no offset.
    #[test]
    fn sweep_summary_small_range() {
        let (lo, hi) = (0.023593, 0.023658);
        let f = TickFormat::for_range(lo, hi, 10);
        assert_eq!(f.offset_text(), None);
        let labels = distinct_labels(&f, &ticks(lo, hi, nice_step((hi - lo) / 10.0)));
        assert_eq!(labels[..3], ["0.02360", "0.02361", "0.02362"]);
    }

    #[test]
    fn ordinary_ranges_read_plainly() {
        let f = TickFormat::for_range(0.0, 32.0, 10);
        assert_eq!(distinct_labels(&f, &[0.0, 5.0, 10.0]), ["0", "5", "10"]);
        let f = TickFormat::for_range(-0.3, 0.25, 10);
        assert_eq!(
            distinct_labels(&f, &[-0.2, -0.1, 0.0, 0.1]),
            ["-0.2", "-0.1", "0.0", "0.1"]
        );
        // Large and small magnitudes go scientific.
        let f = TickFormat::for_range(0.0, 3.0e7, 10);
        assert_eq!(
            distinct_labels(&f, &[0.0, 5.0e6, 1.0e7]),
            ["0", "5.0e6", "1.0e7"]
        );
        let f = TickFormat::for_range(1.0e-6, 9.0e-6, 10);
        assert_eq!(distinct_labels(&f, &[1.0e-6, 2.0e-6]), ["1.0e-6", "2.0e-6"]);
        // A negative value far from zero with a small spread: offset below zero.
        let f = TickFormat::for_range(-1000.00002, -1000.00001, 10);
        assert_eq!(f.offset_text(), Some("-1000.000015"));
        distinct_labels(&f, &ticks(-1000.00002, -1000.00001, 1e-6));
        // A degenerate range still labels.
        assert_eq!(TickFormat::for_range(1.0, 1.0, 10).label(1.0), "1.00000e0");
    }
}
