//! A self-contained HTML report (`REPORT.html`): claims table with verdicts, notes, every
//! figure inline as SVG, links to the data files, and the configuration of each experiment.
//! One file, no scripts, no external resources: it reads the same offline as online.
//!
//! It takes plain data (`HtmlReport`), not the reproduce crate's types, so the reproduce
//! crate can change its claims and verdicts without touching this writer.

/// One claim row.
#[derive(Clone, Debug, Default)]
pub struct HtmlClaim {
    pub paper: String,
    pub id: String,
    pub claim: String,
    pub paper_value: String,
    pub measured: String,
    /// The direction axis in words ("agrees", "disagrees", "not modelled").
    pub direction: String,
    /// The magnitude axis in words, with its ratio ("within 2× (×0.90)", "off (×55.2)").
    pub magnitude: String,
    /// The row's colour: one word ("agrees", "off", "disagrees", "not-modelled"); known
    /// words get colours.
    pub class: String,
    pub note: String,
    /// Why the claim disagrees and the ablation run that supports it, if one is attached;
    /// `unexplained` (true) marks a disagreement without one.
    pub explanation: Option<String>,
    pub unexplained: bool,
}

/// A plain table (header and rows of plain text).
#[derive(Clone, Debug, Default)]
pub struct HtmlTable {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// One paper's (or experiment group's) section.
#[derive(Clone, Debug, Default)]
pub struct HtmlSection {
    pub title: String,
    /// Paragraphs (plain text).
    pub notes: Vec<String>,
    /// (file name, SVG markup), shown inline.
    pub figures: Vec<(String, String)>,
    /// Data file names (relative links).
    pub data_files: Vec<String>,
    /// (runs using it, configuration as TOML).
    pub configs: Vec<(String, String)>,
}

#[derive(Clone, Debug, Default)]
pub struct HtmlReport {
    pub title: String,
    /// One paragraph under the title (plain text).
    pub summary: String,
    /// The per-paper summary shown first, before the claims, and paragraphs under it.
    pub summary_table: Option<HtmlTable>,
    pub summary_notes: Vec<String>,
    pub claims: Vec<HtmlClaim>,
    pub sections: Vec<HtmlSection>,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Keeps a class name to `[a-z0-9-]`.
fn class(s: &str) -> String {
    s.to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// SVG markup ready to inline: without an XML declaration or doctype.
fn inline_svg(svg: &str) -> &str {
    let mut s = svg.trim_start();
    while s.starts_with("<?") || s.starts_with("<!") {
        match s.find('>') {
            Some(i) => s = s[i + 1..].trim_start(),
            None => break,
        }
    }
    s
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;width:100%;font-size:14px}th,td{border:1px solid #ccc;padding:4px 6px;text-align:left;vertical-align:top}\
th{background:#f0f0f0}tr.agrees td.v{background:#d9f2d9}tr.off td.v{background:#fff2cc}tr.disagrees td.v{background:#f8d0d0}tr.not-modelled td.v{background:#eee}\
figure{margin:1.5em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:13px;color:#555}\
pre{background:#f7f7f7;padding:8px;overflow-x:auto;font-size:12px}details{margin:.5em 0}";

/// The report as one HTML document.
pub fn render(r: &HtmlReport) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str(&format!("<title>{}</title>\n", esc(&r.title)));
    h.push_str(&format!("<style>{STYLE}</style>\n</head>\n<body>\n"));
    h.push_str(&format!(
        "<h1>{}</h1>\n<p>{}</p>\n",
        esc(&r.title),
        esc(&r.summary)
    ));
    if let Some(t) = &r.summary_table {
        h.push_str("<h2>Summary per paper</h2>\n<table id=\"summary\">\n<thead><tr>");
        for c in &t.header {
            h.push_str(&format!("<th>{}</th>", esc(c)));
        }
        h.push_str("</tr></thead>\n<tbody>\n");
        for row in &t.rows {
            h.push_str("<tr>");
            for c in row {
                h.push_str(&format!("<td>{}</td>", esc(c)));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody>\n</table>\n");
    }
    for n in &r.summary_notes {
        h.push_str(&format!("<p>{}</p>\n", esc(n)));
    }
    h.push_str("<h2>Claims</h2>\n<table id=\"claims\">\n<thead><tr><th>paper</th><th>id</th><th>claim</th><th>paper says</th><th>measured</th><th>direction</th><th>magnitude</th><th>explanation</th></tr></thead>\n<tbody>\n");
    for c in &r.claims {
        let expl = match (&c.explanation, c.unexplained) {
            (Some(e), _) => esc(e),
            (None, true) => "<b>unexplained</b>".into(),
            (None, false) => String::new(),
        };
        h.push_str(&format!(
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"v\">{}</td><td class=\"v\">{}</td><td>{}</td></tr>\n",
            class(&c.class),
            esc(&c.paper),
            esc(&c.id),
            esc(&c.claim),
            esc(&c.paper_value),
            esc(&c.measured),
            esc(&c.direction),
            esc(&c.magnitude),
            expl
        ));
    }
    h.push_str("</tbody>\n</table>\n<h2>Notes on each claim</h2>\n<ul>\n");
    for c in &r.claims {
        h.push_str(&format!(
            "<li><b>{}</b> (direction {}, magnitude {}): {}</li>\n",
            esc(&c.id),
            esc(&c.direction),
            esc(&c.magnitude),
            esc(&c.note)
        ));
    }
    h.push_str("</ul>\n");
    for s in &r.sections {
        h.push_str(&format!("<h2>{}</h2>\n", esc(&s.title)));
        for n in &s.notes {
            h.push_str(&format!("<p>{}</p>\n", esc(n)));
        }
        for (name, svg) in &s.figures {
            h.push_str(&format!(
                "<figure class=\"figure\" id=\"fig-{}\">\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
                class(name),
                inline_svg(svg),
                esc(name)
            ));
        }
        if !s.data_files.is_empty() {
            let links: Vec<String> = s
                .data_files
                .iter()
                .map(|f| format!("<a href=\"{}\">{}</a>", esc(f), esc(f)))
                .collect();
            h.push_str(&format!("<p>Data: {}</p>\n", links.join(", ")));
        }
        if !s.configs.is_empty() {
            h.push_str("<h3>Configurations</h3>\n");
            for (runs, toml) in &s.configs {
                h.push_str(&format!(
                    "<details><summary>{}</summary>\n<pre>{}</pre>\n</details>\n",
                    esc(runs),
                    esc(toml)
                ));
            }
        }
    }
    h.push_str("</body>\n</html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::{line_chart, Chart, Series};

    pub(crate) fn sample() -> HtmlReport {
        let chart = Chart {
            title: "t <1>".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            ..Default::default()
        };
        let svg = line_chart(
            &chart,
            &[Series {
                name: "a".into(),
                points: vec![(1.0, 2.0), (2.0, 3.0)],
            }],
        );
        HtmlReport {
            title: "commitlab reproduction report".into(),
            summary: "Scale: quick.".into(),
            summary_table: Some(HtmlTable {
                header: vec!["paper".into(), "claims".into()],
                rows: vec![vec!["txflash".into(), "1".into()]],
            }),
            summary_notes: vec![],
            claims: vec![HtmlClaim {
                paper: "txflash".into(),
                id: "T1".into(),
                claim: "a < b & c".into(),
                paper_value: "1".into(),
                measured: "2".into(),
                direction: "agrees".into(),
                magnitude: "within 2× (×2.00)".into(),
                class: "agrees".into(),
                note: "n".into(),
                explanation: None,
                unexplained: false,
            }],
            sections: vec![HtmlSection {
                title: "txflash".into(),
                notes: vec!["setup".into()],
                figures: vec![("fig6.svg".into(), format!("<?xml version=\"1.0\"?>\n{svg}"))],
                data_files: vec!["fig6.csv".into()],
                configs: vec![("fig6: tc, scc".into(), "[nand]\nchannels = 2\n".into())],
            }],
        }
    }

    #[test]
    fn self_contained_escaped_and_every_figure_inline() {
        let h = render(&sample());
        assert!(h.starts_with("<!DOCTYPE html>"));
        assert!(h.contains("a &lt; b &amp; c"));
        assert!(!h.contains("<?xml"), "XML declarations cannot be inlined");
        assert_eq!(h.matches("<figure").count(), 1);
        assert!(h.contains("<svg"));
        assert!(h.contains("<tr class=\"agrees\">"));
        // The summary comes before the claims.
        assert!(h.find("id=\"summary\"").unwrap() < h.find("id=\"claims\"").unwrap());
        assert!(h.contains("channels = 2"));
        for external in ["<script", "<link", "http://", "https://", "src="] {
            // The SVG namespace URI is an identifier, not a fetched resource.
            let n = h.matches(external).count();
            let ns = h.matches("http://www.w3.org/2000/svg").count();
            let allowed = if external == "http://" { ns } else { 0 };
            assert_eq!(n, allowed, "external reference {external}");
        }
    }
}
