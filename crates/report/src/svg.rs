//! Minimal SVG charts (line and grouped bar), written out by hand so plots need no plotting
//! dependency and render the same everywhere. Deterministic: the same data gives the same
//! bytes.

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
    for t in nice_ticks(ylo, yhi, 5) {
        let py = y(t);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" x2="{}" y1="{py:.1}" y2="{py:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            py + 4.0,
            fmt_num(t)
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

fn legend(out: &mut String, names: &[&str]) {
    for (i, n) in names.iter().enumerate() {
        let y = TOP + 10.0 + i as f64 * 20.0;
        let _ = writeln!(
            out,
            r#"<rect x="{}" y="{}" width="14" height="10" fill="{}"/><text x="{}" y="{}">{}</text>"#,
            W - RIGHT + 15.0,
            y - 9.0,
            COLORS[i % COLORS.len()],
            W - RIGHT + 35.0,
            y,
            esc(n)
        );
    }
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
        let pts: Vec<String> = s
            .points
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .map(|p| format!("{:.1},{:.1}", px(p.0), py(p.1)))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline fill="none" stroke="{col}" stroke-width="2" points="{}"/>"#,
            pts.join(" ")
        );
        for p in &pts {
            let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
            let _ = writeln!(out, r#"<circle cx="{x}" cy="{y}" r="3" fill="{col}"/>"#);
        }
    }
    legend(
        &mut out,
        &series.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
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
            let Some(v) = s.points.get(g).map(|p| p.1).filter(|v| v.is_finite()) else {
                continue;
            };
            let x = gx + gw * 0.1 + i as f64 * bw;
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

    #[test]
    fn ticks_are_round_numbers() {
        assert_eq!(
            nice_ticks(0.0, 10.0, 5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
    }
}
