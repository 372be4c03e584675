//! Minimal SVG charts (line and grouped bar), written out by hand so plots need no plotting
//! dependency and render the same everywhere. Deterministic: the same data gives the same
//! bytes.
//!
//! Readability rules: every line series has its own colour, dash
//! pattern and marker shape, so a series hidden under another still shows; a missing value
//! (NaN: a protocol that could not run that point) is written as "n/a" where it would be,
//! never drawn as a gap that reads like zero; y tick labels share one number format.
//! (Plotters was considered; these charts are small enough that fixing them here keeps the
//! output byte-stable and dependency-free.)

use std::fmt::Write;

const W: f64 = 720.0;
const H: f64 = 440.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 60.0;
const COLORS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// A named series of (x, y) points.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// How a chart is drawn.
#[derive(Clone, Debug, Default)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    /// Start the y axis at zero.
    pub y_from_zero: bool,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn nice_ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let span = (hi - lo).max(1e-12);
    let raw = span / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= n as f64)
        .unwrap_or(10.0 * mag);
    let start = (lo / step).ceil() * step;
    let mut t = Vec::new();
    let mut v = start;
    while v <= hi + step * 1e-9 {
        t.push(v);
        v += step;
    }
    t
}

/// Dash patterns per series (none for the first). Six patterns against five marker shapes:
/// no two of the first 30 series look alike even in one colour.
const DASHES: [&str; 6] = ["", "6 3", "2 3", "8 3 2 3", "12 4", "4 2 1 2"];

/// A marker of shape `k` at (x, y).
fn marker(out: &mut String, k: usize, x: f64, y: f64, col: &str) {
    let _ = match k % 5 {
        0 => writeln!(
            out,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" fill="{col}"/>"#
        ),
        1 => writeln!(
            out,
            r#"<rect x="{:.1}" y="{:.1}" width="7" height="7" fill="{col}"/>"#,
            x - 3.5,
            y - 3.5
        ),
        2 => writeln!(
            out,
            r#"<path d="M{x:.1},{:.1} L{:.1},{:.1} L{:.1},{:.1} Z" fill="{col}"/>"#,
            y - 4.5,
            x + 4.5,
            y + 3.5,
            x - 4.5,
            y + 3.5
        ),
        3 => writeln!(
            out,
            r#"<path d="M{x:.1},{:.1} L{:.1},{y:.1} L{x:.1},{:.1} L{:.1},{y:.1} Z" fill="none" stroke="{col}" stroke-width="1.5"/>"#,
            y - 5.0,
            x + 5.0,
            y + 5.0,
            x - 5.0
        ),
        _ => writeln!(
            out,
            r#"<path d="M{:.1},{:.1} L{:.1},{:.1} M{:.1},{:.1} L{:.1},{:.1}" stroke="{col}" stroke-width="2"/>"#,
            x - 4.0,
            y - 4.0,
            x + 4.0,
            y + 4.0,
            x - 4.0,
            y + 4.0,
            x + 4.0,
            y - 4.0
        ),
    };
}

/// Tick labels with one shared format: the same decimals for every tick (enough for the
/// step), and the same k/M scale.
fn tick_labels(ticks: &[f64]) -> Vec<String> {
    if ticks.is_empty() {
        return Vec::new();
    }
    let max = ticks.iter().fold(0f64, |m, t| m.max(t.abs()));
    let (scale, suffix) = if max >= 1e6 {
        (1e6, "M")
    } else if max >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let step = if ticks.len() > 1 {
        (ticks[1] - ticks[0]).abs() / scale
    } else {
        1.0
    };
    let mut decimals = 0usize;
    while decimals < 6 {
        let f = 10f64.powi(decimals as i32);
        if ticks
            .iter()
            .all(|t| ((t / scale) * f - ((t / scale) * f).round()).abs() < 1e-6 * f.max(1.0))
            && step * f >= 1.0 - 1e-9
        {
            break;
        }
        decimals += 1;
    }
    ticks
        .iter()
        .map(|t| {
            let v = t / scale;
            let v = if v.abs() < 1e-12 { 0.0 } else { v };
            format!("{v:.decimals$}{suffix}")
        })
        .collect()
}

fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 || v == v.round() {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn frame(out: &mut String, c: &Chart) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">
<rect width="{W}" height="{H}" fill="white"/>
<text x="{}" y="25" text-anchor="middle" font-size="15">{}</text>
<text x="{}" y="{}" text-anchor="middle">{}</text>
<text x="18" y="{}" text-anchor="middle" transform="rotate(-90 18 {})">{}</text>
"#,
        (LEFT + W - RIGHT) / 2.0,
        esc(&c.title),
        (LEFT + W - RIGHT) / 2.0,
        H - 15.0,
        esc(&c.x_label),
        (TOP + H - BOTTOM) / 2.0,
        (TOP + H - BOTTOM) / 2.0,
        esc(&c.y_label)
    );
}

fn y_axis(out: &mut String, ylo: f64, yhi: f64, y: &dyn Fn(f64) -> f64) {
    let ticks = nice_ticks(ylo, yhi, 5);
    for (t, label) in ticks.iter().zip(tick_labels(&ticks)) {
        let py = y(*t);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" x2="{}" y1="{py:.1}" y2="{py:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            py + 4.0,
            label
        );
    }
    let _ = writeln!(
        out,
        r##"<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{}" stroke="#333"/><line x1="{LEFT}" x2="{}" y1="{}" y2="{}" stroke="#333"/>"##,
        H - BOTTOM,
        W - RIGHT,
        H - BOTTOM,
        H - BOTTOM
    );
}

fn legend(out: &mut String, names: &[&str], lines: bool) {
    for (i, n) in names.iter().enumerate() {
        let y = TOP + 10.0 + i as f64 * 20.0;
        let col = COLORS[i % COLORS.len()];
        if lines {
            let x0 = W - RIGHT + 10.0;
            let _ = writeln!(
                out,
                r#"<line x1="{x0}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="{col}" stroke-width="2" stroke-dasharray="{}"/>"#,
                x0 + 22.0,
                y - 4.0,
                y - 4.0,
                DASHES[i % DASHES.len()]
            );
            marker(out, i, x0 + 11.0, y - 4.0, col);
        } else {
            let _ = write!(
                out,
                r#"<rect x="{}" y="{}" width="14" height="10" fill="{col}"/>"#,
                W - RIGHT + 15.0,
                y - 9.0
            );
        }
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}">{}</text>"#,
            W - RIGHT + 37.0,
            y,
            esc(n)
        );
    }
}

/// "n/a" at (x, y) in the series colour: a value that does not exist, shown as such.
fn not_available(out: &mut String, x: f64, y: f64, col: &str) {
    let _ = writeln!(
        out,
        r#"<text class="na" x="{x:.1}" y="{y:.1}" text-anchor="middle" font-size="10" fill="{col}">n/a</text>"#
    );
}

fn y_range(vals: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let v: Vec<f64> = vals.filter(|x| x.is_finite()).collect();
    let mut lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let mut hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    if hi - lo < 1e-12 {
        hi = lo + 1.0;
    }
    (lo, hi + (hi - lo) * 0.05)
}

/// A line chart of several series.
pub fn line_chart(c: &Chart, series: &[Series]) -> String {
    let mut out = String::new();
    frame(&mut out, c);
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|x| x.is_finite())
        .collect();
    let tx = |x: f64| if c.log_x { x.max(1e-12).log10() } else { x };
    let xlo = xs.iter().copied().map(tx).fold(f64::INFINITY, f64::min);
    let xhi = xs.iter().copied().map(tx).fold(f64::NEG_INFINITY, f64::max);
    let (xlo, xhi) = if xlo.is_finite() && xhi > xlo {
        (xlo, xhi)
    } else {
        (0.0, 1.0)
    };
    let (ylo, yhi) = y_range(
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        c.y_from_zero,
    );
    let px = |x: f64| LEFT + (tx(x) - xlo) / (xhi - xlo) * (W - LEFT - RIGHT);
    let py = |y: f64| H - BOTTOM - (y - ylo) / (yhi - ylo) * (H - TOP - BOTTOM);
    y_axis(&mut out, ylo, yhi, &py);
    let mut xticks: Vec<f64> = xs.clone();
    xticks.sort_by(|a, b| a.total_cmp(b));
    xticks.dedup();
    if xticks.len() > 10 {
        let k = xticks.len().div_ceil(10);
        xticks = xticks.into_iter().step_by(k).collect();
    }
    for t in xticks {
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            px(t),
            H - BOTTOM + 18.0,
            fmt_num(t)
        );
    }
    for (i, s) in series.iter().enumerate() {
        let col = COLORS[i % COLORS.len()];
        let dash = DASHES[i % DASHES.len()];
        // Segments of consecutive finite points: a missing value breaks the line and is
        // labelled "n/a" just above the x axis (stacked per series so labels do not overlap).
        let mut segs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for p in &s.points {
            if !p.0.is_finite() {
                continue;
            }
            if p.1.is_finite() {
                if let Some(last) = segs.last_mut() {
                    last.push((px(p.0), py(p.1)));
                }
            } else {
                not_available(&mut out, px(p.0), H - BOTTOM - 6.0 - 12.0 * i as f64, col);
                segs.push(Vec::new());
            }
        }
        for seg in segs.iter().filter(|s| !s.is_empty()) {
            let pts: Vec<String> = seg.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
            let _ = writeln!(
                out,
                r#"<polyline fill="none" stroke="{col}" stroke-width="2" stroke-dasharray="{dash}" points="{}"/>"#,
                pts.join(" ")
            );
            for (x, y) in seg {
                marker(&mut out, i, *x, *y, col);
            }
        }
    }
    legend(
        &mut out,
        &series.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        true,
    );
    out.push_str("</svg>\n");
    out
}

/// A grouped bar chart: one group per category, one bar per series within each group.
pub fn bar_chart(c: &Chart, categories: &[String], series: &[Series]) -> String {
    let mut out = String::new();
    frame(&mut out, c);
    let (ylo, yhi) = y_range(
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        true,
    );
    let py = |y: f64| H - BOTTOM - (y - ylo) / (yhi - ylo) * (H - TOP - BOTTOM);
    y_axis(&mut out, ylo, yhi, &py);
    let groups = categories.len().max(1) as f64;
    let gw = (W - LEFT - RIGHT) / groups;
    let bw = gw * 0.8 / series.len().max(1) as f64;
    for (g, cat) in categories.iter().enumerate() {
        let gx = LEFT + g as f64 * gw;
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            gx + gw / 2.0,
            H - BOTTOM + 18.0,
            esc(cat)
        );
        for (i, s) in series.iter().enumerate() {
            let x = gx + gw * 0.1 + i as f64 * bw;
            let Some(v) = s.points.get(g).map(|p| p.1).filter(|v| v.is_finite()) else {
                not_available(
                    &mut out,
                    x + bw * 0.475,
                    py(0.0f64.max(ylo)) - 4.0,
                    COLORS[i % COLORS.len()],
                );
                continue;
            };
            let (y0, y1) = (py(0.0f64.max(ylo)), py(v));
            let _ = writeln!(
                out,
                r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"/>"#,
                y1.min(y0),
                bw * 0.95,
                (y0 - y1).abs(),
                COLORS[i % COLORS.len()]
            );
        }
    }
    legend(
        &mut out,
        &series.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        false,
    );
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_well_formed_and_deterministic() {
        let s = vec![
            Series {
                name: "a<b".into(),
                points: vec![(1.0, 2.0), (10.0, 4.0), (100.0, 3.0)],
            },
            Series {
                name: "c".into(),
                points: vec![(1.0, 1.0), (10.0, f64::NAN), (100.0, 5.0)],
            },
        ];
        let c = Chart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: true,
            y_from_zero: true,
        };
        let a = line_chart(&c, &s);
        assert_eq!(a, line_chart(&c, &s));
        assert!(a.starts_with("<svg") && a.trim_end().ends_with("</svg>"));
        assert!(a.contains("a&lt;b"));
        assert!(!a.contains("NaN"));
        let b = bar_chart(&c, &["x".into(), "y".into(), "z".into()], &s);
        assert_eq!(
            b.matches("<rect").count(),
            1 + 5 + 2,
            "background, five finite bars, two legend swatches"
        );
    }

    /// Bpcc's line hid under scc's (same shape, no markers or dashes),
    /// unsupported points looked like gaps or zeros, and y ticks read "0, 0.50, 1".
    #[test]
    fn series_are_distinguishable_and_missing_values_say_na() {
        let same = vec![(1.0, 2.0), (2.0, 3.0), (3.0, f64::NAN), (4.0, 5.0)];
        let s: Vec<Series> = ["scc", "bpcc"]
            .iter()
            .map(|n| Series {
                name: n.to_string(),
                points: same.clone(),
            })
            .collect();
        let a = line_chart(&Chart::default(), &s);
        // Second series dashed, with its own marker (squares), in plot and legend.
        assert!(a.contains(r#"stroke-dasharray="6 3""#), "{a}");
        assert_eq!(
            a.matches("<rect x=").count(),
            3 + 1,
            "three points and a legend marker"
        );
        // One n/a per series at x = 3; the line breaks there (two segments each).
        assert_eq!(a.matches(">n/a<").count(), 2);
        assert_eq!(a.matches("<polyline").count(), 4);
        let b = bar_chart(
            &Chart::default(),
            &["x".into(), "y".into()],
            &[Series {
                name: "aw".into(),
                points: vec![(0.0, 1.0), (1.0, f64::NAN)],
            }],
        );
        assert_eq!(b.matches(">n/a<").count(), 1);
    }

    #[test]
    fn tick_labels_share_one_format() {
        assert_eq!(tick_labels(&[0.0, 0.5, 1.0]), vec!["0.0", "0.5", "1.0"]);
        assert_eq!(tick_labels(&[0.0, 0.25, 0.5]), vec!["0.00", "0.25", "0.50"]);
        assert_eq!(tick_labels(&[0.0, 2.0, 4.0]), vec!["0", "2", "4"]);
        assert_eq!(
            tick_labels(&[0.0, 5000.0, 10000.0]),
            vec!["0k", "5k", "10k"]
        );
        assert_eq!(
            tick_labels(&[0.0, 2500.0, 5000.0, 7500.0, 10000.0]),
            vec!["0.0k", "2.5k", "5.0k", "7.5k", "10.0k"]
        );
        assert_eq!(tick_labels(&[0.0, 1e6, 2e6]), vec!["0M", "1M", "2M"]);
    }

    #[test]
    fn ticks_are_round_numbers() {
        assert_eq!(
            nice_ticks(0.0, 10.0, 5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
    }
}
